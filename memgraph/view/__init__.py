"""The graph view face: one scope as a self-contained, interactive HTML page.

``Memory.view()`` and ``memgraph view`` both come here. :mod:`.data` reads the
scope through the public API into a compact JSON payload, :mod:`.html` writes
it with the page's own script and style (``assets/``) into one file that
needs no network, and :mod:`.cli` is the command.
"""

from __future__ import annotations

from memgraph.view.data import MAX_ENTITIES, build_payload
from memgraph.view.html import GraphView, render_html, view_of

__all__ = ["MAX_ENTITIES", "GraphView", "build_payload", "render_html", "view_of"]
