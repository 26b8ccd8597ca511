"""An app server of a fleet sharing many scopes through PostgreSQL, for tests/test_postgres_fleet.py.

Usage::

    python tests/fleet_server.py DSN NAME MARKERS CACHE_MB

It keeps the scopes it serves in a :class:`memgraph.MemoryCache` of
``CACHE_MB`` (small, so scopes are closed and reopened as it goes), prints
``ready``, then reads one operation per line on stdin, ``SCOPE TEXT``: it
remembers TEXT in SCOPE, appends ``SCOPE ENTITY`` to its file in MARKERS once
``remember`` returned (an acknowledged write) and prints ``acked``, and checks that a recall of
SCOPE now sees every write any server acknowledged there. Misses are printed
as ``miss ...`` lines; the exit status is the number of misses (capped at 100).
"""

from __future__ import annotations

import sys
from pathlib import Path


def acknowledged(markers: Path) -> list[tuple[str, str]]:
    """(scope, entity) of every write any server acknowledged (complete lines only)."""
    found = []
    for path in sorted(markers.glob("server-*")):
        for line in path.read_text().split("\n")[:-1]:
            scope, name = line.split(" ")
            found.append((scope, name))
    return found


def main() -> int:
    dsn, name, markers, budget = sys.argv[1], sys.argv[2], Path(sys.argv[3]), float(sys.argv[4])

    from memgraph import Memory, MemoryCache
    from memgraph.llm_calls.provider import resolve_provider

    provider = resolve_provider("mock")
    cache: MemoryCache[str] = MemoryCache(budget_mb=budget)
    misses: list[str] = []
    print("ready", flush=True)
    with open(markers / f"server-{name}", "a", encoding="utf-8") as mine:
        for line in sys.stdin:
            scope, text = line.rstrip("\n").split(" ", 1)
            memory = cache.get(
                scope,
                lambda scope=scope: Memory(
                    scope=scope, provider=provider, store=dsn, config={"lockTimeout": 60}
                ),
            )
            memory.remember(text)
            mine.write(f"{scope} {text.split(' ')[0]}\n")
            mine.flush()
            print("acked", flush=True)
            known = {entity.name for entity in memory.entities()}
            for where, entity in acknowledged(markers):
                if where == scope and entity not in known:
                    misses.append(f"miss {scope} {entity} (server {name})")
    cache.close_all()
    for miss in misses:
        print(miss, flush=True)
    print(f"opened {cache.opened} closed {cache.closed}", flush=True)
    return min(len(misses), 100)


if __name__ == "__main__":
    sys.exit(main())
