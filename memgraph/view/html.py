"""The graph view's one self-contained HTML page, and :class:`GraphView`, which holds it.

The page is the template ``assets/view.html`` with the stylesheet, the
script and the data written into it; nothing is fetched when it opens. The
data is untrusted (entity names, facts and texts come from conversations), so:

* it travels as JSON in a ``<script type="application/json">`` block with
  ``<``, ``>`` and ``&`` written as ``\\u003c``, ``\\u003e`` and ``\\u0026``,
  so no text can close the block or open a tag; the script parses it and puts
  every string on the page through ``textContent``, never as markup;
* a Content-Security-Policy allows only the page's own script and style (by
  SHA-256), no network and no other script, as a second line of defence.
"""

from __future__ import annotations

import base64
import hashlib
import html
import os
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from memgraph.view.data import MAX_ENTITIES, ViewSource, build_payload

__all__ = ["GraphView", "render_html", "view_of"]

_SLOT = re.compile(r"\{\{(title|csp|style|script|data)\}\}")
_JSON_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026"}
# An HTML parser would end the data block at "</script", and "<!--" changes how
# it reads the rest of a script block; with these three escaped neither can occur.


@cache
def _asset(name: str) -> str:
    return (resources.files("memgraph.view") / "assets" / name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def json_for_html(payload: Any) -> str:
    """``payload`` as JSON that is safe inside a ``<script type="application/json">`` block."""
    return orjson.dumps(payload).decode().translate(_JSON_ESCAPES)


def render_html(payload: dict[str, Any]) -> str:
    """The page for ``payload`` (from :func:`memgraph.view.data.build_payload`)."""
    style, script = _asset("view.css"), _asset("view.js")
    policy = (
        "default-src 'none'; "
        f"script-src {_sha256(script)}; style-src {_sha256(style)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    values = {
        "title": html.escape(f"memgraph · {payload.get('scope') or 'memory'}"),
        "csp": html.escape(policy),
        "style": style,
        "script": script,
        "data": json_for_html(payload),
    }
    # One pass: text written into a slot is never scanned for slots again.
    return _SLOT.sub(lambda match: values[match.group(1)], _asset("view.html"))


@dataclass(frozen=True)
class GraphView:
    """A scope's graph view: ``html`` is the whole page; notebooks display it inline.

    Attributes:
        html: the self-contained page.
        scope: the scope it shows.
        entities: entities on the page.
        total_entities: entities in the scope (more than ``entities`` when capped).
        relations: relation versions on the page, current and expired.
    """

    html: str
    scope: str
    entities: int
    total_entities: int
    relations: int

    def __str__(self) -> str:
        return self.html

    def _repr_html_(self) -> str:
        # A sandboxed frame keeps the page's script and style out of the notebook's.
        document = html.escape(self.html, quote=True)
        return (
            f'<iframe srcdoc="{document}" sandbox="allow-scripts" '
            'style="width:100%;height:640px;border:1px solid #ccc" '
            f'title="memgraph view of {html.escape(self.scope)}"></iframe>'
        )

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the page to ``path`` (owner-only, like everything memgraph writes).

        Raises:
            OSError: the file cannot be written.
        """
        target = Path(path)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), 0o600)
            handle.write(self.html)
        return target


def view_of(
    memory: ViewSource, *, max_entities: int = MAX_ENTITIES, generated_at: str | None = None
) -> GraphView:
    """Build the graph view of ``memory``'s scope.

    Raises:
        ValueError: ``max_entities`` is less than 1.
    """
    payload = build_payload(memory, max_entities=max_entities, generated_at=generated_at)
    return GraphView(
        html=render_html(payload),
        scope=memory.scope,
        entities=len(payload["entities"]),
        total_entities=payload["total"]["entities"],
        relations=len(payload["relations"]),
    )
