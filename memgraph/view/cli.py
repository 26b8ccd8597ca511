"""``memgraph view``: write the scope's graph view to an HTML file, and open it if asked.

The command is built by :func:`view_command` from the main command line's
global options and scope opener, so it behaves like every other command
(``--dir``, ``--scope``, ``--json``, the same exit codes) without this
package importing the CLI module.
"""

from __future__ import annotations

import webbrowser
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import orjson

from memgraph.view.data import MAX_ENTITIES

if TYPE_CHECKING:
    from memgraph import Memory

__all__ = ["default_output", "view_command"]

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def default_output(scope: str) -> Path:
    """``memgraph-<scope>.html`` in the working directory."""
    return Path(f"memgraph-{scope}.html")


def view_command(
    global_options: Decorator,
    open_memory: Callable[[], AbstractContextManager[Memory]],
    option: Callable[[str], Any],
) -> click.Command:
    """The ``view`` command, given the CLI's option decorator, scope opener and option reader."""

    @click.command("view")
    @click.option(
        "--output",
        "-o",
        type=click.Path(path_type=Path, dir_okay=False),
        help="HTML file to write (default: memgraph-<scope>.html here).",
    )
    @click.option("--open", "open_", is_flag=True, help="Open the page in a web browser.")
    @click.option(
        "--max-entities",
        type=click.IntRange(min=1),
        default=MAX_ENTITIES,
        show_default=True,
        help="Entities shown at most; beyond it the most connected are kept.",
    )
    @global_options
    def view(output: Path | None, open_: bool, max_entities: int) -> None:
        """Write the scope's graph as one interactive HTML page.

        The page needs no network: pan, zoom, search, filter by entity type and
        source, see an entity's facts with their dates and the text each came
        from, and slide through time to see the graph as it was.
        """
        with open_memory() as memory:
            page = memory.view(max_entities=max_entities)
        target = (output or default_output(page.scope)).resolve()
        page.save(target)
        if option("json"):
            summary = {
                "path": str(target),
                "entities": page.entities,
                "total_entities": page.total_entities,
                "relations": page.relations,
            }
            click.echo(orjson.dumps(summary, option=orjson.OPT_INDENT_2).decode())
        else:
            capped = (
                f" (the most connected of {page.total_entities:,})"
                if page.total_entities > page.entities
                else ""
            )
            click.echo(
                f"wrote {target} — {_count(page.entities, 'entity', 'entities')}{capped}, "
                f"{_count(page.relations, 'relation', 'relations')}"
            )
        if open_ and not webbrowser.open(target.as_uri()):
            click.echo(f"no web browser found; open {target.as_uri()} yourself", err=True)

    return view
