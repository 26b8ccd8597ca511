"""The offline demo behind ``memgraph demo``: remember a few facts, reopen, recall.

The demo never writes into your memory: by default it runs in a new temporary
directory that is deleted when it ends; with ``--dir`` it writes the scope
``demo`` there (or the ``--scope`` given on the command line) and refuses a
scope that already holds data.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from memgraph.engine.memory import Memory
from memgraph.errors import ConfigError

__all__ = ["DEMO_FACTS", "DEMO_QUERIES", "DEMO_SCOPE", "NOTHING_RELEVANT", "run_demo"]

DEMO_SCOPE = "demo"
"""The scope the demo writes when none is named on the command line."""

NOTHING_RELEVANT = "(nothing relevant remembered)"
"""What a read prints when no fact is relevant (the demo and the CLI alike)."""

DEMO_FACTS = (
    "Alice is a senior engineer. She prefers TypeScript and mentors Bob.",
    "Alice works at Acme.",
    "Bob is a junior developer. He lives in Berlin.",
    "Alice no longer works at Acme. She works at Globex now.",
)
DEMO_QUERIES = (
    "What does Alice prefer?",
    "Where does Alice work?",
    "Who is Bob?",
    "What is the weather like on Mars?",
)


def run_demo(
    directory: Path | str | None = None,
    *,
    scope: str = DEMO_SCOPE,
    provider: str | None = None,
    echo: Callable[[str], None] = print,
    on_offline: Callable[[], None] | None = None,
) -> Path:
    """Remember :data:`DEMO_FACTS`, reopen the store as a new process would, recall.

    Runs offline on the mock provider unless a provider is given or configured.

    Args:
        directory: where to keep the demo's scope; ``None`` means a new
            temporary directory, deleted when the demo ends.
        scope: the scope to write (``demo``).
        provider: a provider spec; the configured one (or the mock) otherwise.
        echo: prints one line of the demo's output.
        on_offline: called once when the demo runs on the offline mock.

    Returns:
        The scope's directory (already deleted when ``directory`` was ``None``).

    Raises:
        ConfigError: ``scope`` in ``directory`` already holds data; the demo
            never changes existing memory.
    """
    temporary = directory is None
    root = (
        Path(directory)
        if directory is not None
        else Path(tempfile.mkdtemp(prefix="memgraph-demo-"))
    )
    try:
        _run(root, scope, provider, temporary, echo, on_offline)
    finally:
        if temporary:
            shutil.rmtree(root, ignore_errors=True)
    return root / scope


def _run(
    root: Path,
    scope: str,
    provider: str | None,
    temporary: bool,
    echo: Callable[[str], None],
    on_offline: Callable[[], None] | None,
) -> None:
    with Memory(root, scope=scope, provider=provider) as memory:
        if memory.store.exists():
            raise ConfigError(
                f"the scope {scope!r} in {str(root)!r} already holds data and the demo never "
                "changes existing memory; run it without --dir, or name a new scope with --scope"
            )
        if memory.offline and on_offline is not None:
            on_offline()
        kept = (
            "a temporary directory, deleted when the demo ends; pass --dir DIR to keep it"
            if temporary
            else "kept after the demo"
        )
        echo(f"memory: {root / scope}  ({kept}; provider: {memory.provider.name})")
        for text in DEMO_FACTS:
            changes = memory.remember(text)
            learned = [f"{o.content!r}" for o in changes.added_observations]
            expired = [f"{o.content!r}" for o in changes.expired_observations]
            line = f"remember: {text}\n  + " + (", ".join(learned) or "nothing new")
            if expired:
                line += "\n  - expired: " + ", ".join(expired)
            echo(line)
    with Memory(root, scope=scope, provider=provider) as memory:  # a fresh load from disk
        for query in DEMO_QUERIES:
            answer = memory.recall(query)
            echo(f"\nrecall: {query}\n{answer or NOTHING_RELEVANT}")
        history = memory.history("Alice")
        echo("\nhistory of Alice:")
        for obs in history.observations:
            echo(f"  {obs.valid_from} → {obs.valid_to or 'current'}  {obs.content}")
    if temporary:
        echo(f"\nThe demo memory in {root} is deleted now; your own memory was not touched.")
    else:
        echo(f"\nTry: memgraph --dir {root} --scope {scope} recall 'where does Alice work?'")
