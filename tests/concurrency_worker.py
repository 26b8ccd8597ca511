"""Writer and reader processes for ``tests/test_concurrency.py``.

``python tests/concurrency_worker.py write DIR SCOPE K M``
    Opens ``Memory(DIR, SCOPE)`` on the mock provider, prints ``ready``, waits
    for a line on stdin (the start signal, so all writers start together), then
    makes ``M`` calls through the public API, by ``j % 4``:

    0. ``remember("W{K}P{j} works at C{K}x{j}.")``
    1. ``kv.remember("w{K}-{j}", {"k": K, "j": j})``
    2. ``remember_many(["W{K}Q{j} lives in T{K}x{j}.", "W{K}R{j} likes tea{K}x{j}."])``
    3. ``kv.remember("w{K}-{j}", {"k": K, "j": j})``

    and prints ``ack j`` after each one returned, then ``done``.

``python tests/concurrency_worker.py read DIR SCOPE STOPFILE``
    Polls the scope through a long-lived ``Memory`` until ``STOPFILE`` exists.
    Each poll takes one snapshot (``export("json")``) and checks it is
    consistent: ids are unique, every observation's episode and every
    relation's endpoints exist, every key holds the value its writer wrote, and
    no count (entities, observations, relations, episodes, keys) ever
    decreases. Prints ``polls N`` and exits 0, or prints the problem on stderr
    and exits 1.

Both stop by themselves after two minutes or when the test process is gone.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

DEADLINE = 120.0


def write(root: str, scope: str, k: int, m: int) -> int:
    from memgraph import Memory
    from memgraph.llm_calls.provider import resolve_provider

    parent = os.getppid()
    with Memory(root, scope, provider=resolve_provider("mock")) as memory:
        memory.stats()
        print("ready", flush=True)
        sys.stdin.readline()
        deadline = time.monotonic() + DEADLINE
        for j in range(m):
            if os.getppid() != parent or time.monotonic() > deadline:
                return 1
            kind = j % 4
            if kind == 0:
                memory.remember(f"W{k}P{j} works at C{k}x{j}.")
            elif kind == 2:
                memory.remember_many(
                    [f"W{k}Q{j} lives in T{k}x{j}.", f"W{k}R{j} likes tea{k}x{j}."]
                )
            else:
                memory.kv.remember(f"w{k}-{j}", {"k": k, "j": j})
            print(f"ack {j}", flush=True)
    print("done", flush=True)
    return 0


def read(root: str, scope: str, stop: str) -> int:
    import orjson

    from memgraph import Memory
    from memgraph.llm_calls.provider import resolve_provider

    parent = os.getppid()
    deadline = time.monotonic() + DEADLINE
    polls = 0
    high: dict[str, int] = {}
    with Memory(root, scope, provider=resolve_provider("mock")) as memory:
        print("ready", flush=True)
        while not os.path.exists(stop):
            if os.getppid() != parent or time.monotonic() > deadline:
                return 1
            problems = check_snapshot(orjson.loads(memory.export("json")), high)
            if problems:
                print(f"poll {polls}: " + "; ".join(problems[:10]), file=sys.stderr)
                return 1
            polls += 1
    print(f"polls {polls}", flush=True)
    return 0


def check_snapshot(document: dict[str, Any], high: dict[str, int]) -> list[str]:
    """What is inconsistent in one exported snapshot (and counts that fell since the last)."""
    problems: list[str] = []
    entities = {e["id"]: e for e in document["entities"]}
    observations = [o for e in entities.values() for o in e["observations"]]
    episodes = {e["id"] for e in document["episodes"]}
    relations = document["relations"]
    kv = (document.get("memgraph") or {}).get("kv", {})
    ids = [*entities, *(o["id"] for o in observations), *(r["id"] for r in relations), *episodes]
    if len(ids) != len(set(ids)):
        problems.append("duplicate ids")
    for obs in observations:
        if obs.get("episode") and obs["episode"] not in episodes:
            problems.append(f"{obs['id']} names a missing episode {obs['episode']}")
    for rel in relations:
        if rel["from"] not in entities or rel["to"] not in entities:
            problems.append(f"{rel['id']} points at a missing entity")
    for key, versions in kv.items():
        k, _, j = key[1:].partition("-")
        if any(v["value"] != {"k": int(k), "j": int(j)} for v in versions):
            problems.append(f"key {key} holds {versions!r}")
    counts = {
        "entities": len(entities),
        "observations": len(observations),
        "relations": len(relations),
        "episodes": len(episodes),
        "keys": len(kv),
    }
    for name, count in counts.items():
        if count < high.get(name, 0):
            problems.append(f"{name} fell from {high[name]} to {count}")
        high[name] = max(count, high.get(name, 0))
    return problems


def main() -> int:
    mode = sys.argv[1]
    if mode == "write":
        return write(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    if mode == "read":
        return read(sys.argv[2], sys.argv[3], sys.argv[4])
    raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    sys.exit(main())
