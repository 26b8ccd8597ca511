"""The offline demo behind ``memgraph demo``: remember a few facts, reopen, recall."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from memgraph.engine.memory import Memory

__all__ = ["DEMO_FACTS", "DEMO_QUERIES", "run_demo"]

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
    scope: str = "demo",
    provider: str | None = None,
    echo: Callable[[str], None] = print,
    on_offline: Callable[[], None] | None = None,
) -> None:
    """Remember :data:`DEMO_FACTS`, reopen the store as a new process would, recall.

    Runs offline on the mock provider unless a provider is given or configured.
    """
    root = Path(directory or os.environ.get("MEMGRAPH_DIR") or ".memgraph")
    with Memory(root, scope=scope, provider=provider) as memory:
        if memory.offline and on_offline is not None:
            on_offline()
        echo(f"memory: {root / scope}  (provider: {memory.provider.name})")
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
            echo(f"\nrecall: {query}\n{answer or '(nothing relevant remembered)'}")
        history = memory.history("Alice")
        echo("\nhistory of Alice:")
        for obs in history.observations:
            echo(f"  {obs.valid_from} → {obs.valid_to or 'current'}  {obs.content}")
