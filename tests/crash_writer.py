"""A writer for the crash tests: remembers one fact after another until it is killed.

Usage::

    python tests/crash_writer.py DIR SCOPE FIRST [LIMIT]

It opens ``memgraph.Memory(DIR, SCOPE)`` on the offline mock provider, prints
``ready``, then for ``i = FIRST, FIRST + 1, ...`` remembers ``"Person{i} works
at Company{i}."`` and prints ``i`` (flushed) only after ``remember`` returned,
so every printed ``i`` is a write the memory promised to keep.

Environment:

``MEMGRAPH_CRASH_JOURNAL_BYTES``
    Checkpoint once the journal exceeds this many bytes (patches
    ``memgraph.store.directory.MIN_JOURNAL_BYTES``) so that kills also land
    inside checkpoints.
``MEMGRAPH_CRASH_JOURNAL_RATIO``
    Likewise for ``JOURNAL_RATIO`` (the journal size relative to the checkpoint).

The writer stops by itself after ``LIMIT`` facts or when its parent dies, so a
crashed test run leaves no process behind.
"""

from __future__ import annotations

import os
import sys


def main() -> int:
    root, scope, first = sys.argv[1], sys.argv[2], int(sys.argv[3])
    limit = int(sys.argv[4]) if len(sys.argv) > 4 else 100_000
    parent = os.getppid()

    from memgraph.store import directory

    if os.environ.get("MEMGRAPH_CRASH_JOURNAL_BYTES"):
        directory.MIN_JOURNAL_BYTES = int(os.environ["MEMGRAPH_CRASH_JOURNAL_BYTES"])
    if os.environ.get("MEMGRAPH_CRASH_JOURNAL_RATIO"):
        directory.JOURNAL_RATIO = float(os.environ["MEMGRAPH_CRASH_JOURNAL_RATIO"])

    from memgraph import Memory
    from memgraph.provider import resolve_provider

    with Memory(root, scope, provider=resolve_provider("mock")) as memory:
        print("ready", flush=True)
        for i in range(first, first + limit):
            if os.getppid() != parent:
                return 1
            memory.remember(f"Person{i} works at Company{i}.")
            print(i, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
