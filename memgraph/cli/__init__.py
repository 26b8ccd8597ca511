"""The ``memgraph`` command line: ``commands`` (the click group) and ``demo``.

A face at the top, beside the MCP server, the integrations, the view and the
importers: it may import the public API (``memgraph``) and every layer below,
and nothing imports it except ``memgraph/__main__.py`` (and the console script,
``memgraph.cli:main``).
"""

from __future__ import annotations

from memgraph.cli.commands import cli, main

__all__ = ["cli", "main"]
