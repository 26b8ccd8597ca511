"""An app server for the multi-process test: writes and recalls through PostgreSQL.

Usage::

    python tests/postgres_worker.py DSN WORKER COUNT MARKERS SCOPE [SCOPE ...]

It opens one ``Memory`` per scope on ``DSN`` (offline mock provider), prints
``ready`` and waits for a line on stdin (the start signal, so every worker
writes at once). Then for ``i`` in ``range(COUNT)`` it remembers
``"Worker{WORKER}Item{i} works at Firm{WORKER}x{i}."`` in scope ``i mod
len(SCOPES)``, and once ``remember`` returned appends ``scope name`` to its
file in ``MARKERS`` (an acknowledged write). Before its next recall it reads
every worker's markers and checks that each acknowledged write is visible:
all of them in ``entities()``, and the newest one of every other worker in
``recall()``. Worker 0 forces a checkpoint every 7 writes, so readers also
cross checkpoints. Misses are printed as ``miss ...`` lines; the exit status
is the number of misses (capped at 100).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memgraph import Memory


def acknowledged(markers: Path) -> dict[str, list[tuple[str, str]]]:
    """Every worker's acknowledged writes, by marker file: (scope, entity name)."""
    found: dict[str, list[tuple[str, str]]] = {}
    for path in sorted(markers.glob("worker-*")):
        lines = path.read_text().split("\n")[:-1]  # a line is complete once it has its newline
        found[path.name] = [(line.split(" ")[0], line.split(" ")[1]) for line in lines]
    return found


def main() -> int:
    dsn, worker, count, markers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    scopes = sys.argv[5:]
    mine = Path(markers) / f"worker-{worker}"

    from memgraph import Memory
    from memgraph.llm_calls.provider import resolve_provider

    provider = resolve_provider("mock")
    config = {"lockTimeout": 60}
    memories = {s: Memory(scope=s, provider=provider, store=dsn, config=config) for s in scopes}
    misses: list[str] = []
    try:
        for memory in memories.values():
            memory.stats()  # connect and load before the start signal
        print("ready", flush=True)
        sys.stdin.readline()
        with open(mine, "a", encoding="utf-8") as marker:
            for i in range(count):
                scope = scopes[i % len(scopes)]
                name = f"Worker{worker}Item{i}"
                changes = memories[scope].remember(f"{name} works at Firm{worker}x{i}.")
                if not changes.added_observations:
                    misses.append(f"miss write {scope} {name}: nothing was stored")
                marker.write(f"{scope} {name}\n")
                marker.flush()
                if worker == 0 and i % 7 == 6:
                    memories[scope].checkpoint()
                misses += check(memories, acknowledged(Path(markers)), f"worker-{worker}")
    finally:
        for memory in memories.values():
            memory.close()
    for miss in misses:
        print(miss, flush=True)
    return min(len(misses), 100)


def check(
    memories: dict[str, Memory], acked: dict[str, list[tuple[str, str]]], me: str
) -> list[str]:
    """Misses: acknowledged writes this process's next reads do not see."""
    misses = []
    for scope, memory in memories.items():
        names = {entity.name for entity in memory.entities()}
        for marker, writes in acked.items():
            wanted = [name for s, name in writes if s == scope]
            misses += [f"miss entities {scope} {name}" for name in wanted if name not in names]
            if marker != me and wanted:
                latest = wanted[-1]
                text = memory.recall(f"where does {latest} work?", rerank=False)
                if latest not in text:
                    misses.append(f"miss recall {scope} {latest}")
    return misses


if __name__ == "__main__":
    os.environ.setdefault("MEMGRAPH_PROVIDER", "mock")
    sys.exit(main())
