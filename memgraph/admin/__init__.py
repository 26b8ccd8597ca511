"""Maintenance of stored scopes: ``doctor`` (check and repair) and ``migrate`` (copy between stores).

May import: the engine and everything below it. Never the conversation layer,
the CLI or the other faces at the top. The CLI runs these as ``memgraph doctor``
and ``memgraph migrate``.
"""
