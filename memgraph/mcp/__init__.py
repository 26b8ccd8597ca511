"""memgraph over the Model Context Protocol, and the reference memory server's file format.

* :mod:`memgraph.mcp.server` builds the ``memgraph mcp`` server on the official
  SDK (``pip install 'memgraph-kg[mcp]'``): the native tools
  (:mod:`memgraph.mcp.tools`) or, with ``--compat reference``, the nine tools of
  ``@modelcontextprotocol/server-memory`` (:mod:`memgraph.mcp.compat`).
* :mod:`memgraph.mcp.reference_file` imports and exports that server's
  ``memory.jsonl``.

Only :mod:`memgraph.mcp.server` imports the SDK: ``import memgraph`` and the
command line work without it.
"""
