"""Child process of the cold-open and memory scenarios: open a scope, recall, report JSON.

Run by :mod:`bench.suite` as ``python -m bench.coldopen --dir D --scope S --dim N
--query Q [--query Q2 ...]``. It prints one JSON object: the import time,
the engine time from ``Memory(...)`` to the first ``recall`` returning (query
embedding excluded), resident memory before opening (interpreter, numpy,
memgraph imported) and after the scope is loaded and has served the queries.
"""

from __future__ import annotations

import time

_STARTED = time.perf_counter()

import argparse  # noqa: E402  (the clock starts before the imports it measures)
import json  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.coldopen")
    parser.add_argument("--dir", required=True, type=Path)
    parser.add_argument("--scope", required=True)
    parser.add_argument("--dim", required=True, type=int)
    parser.add_argument("--query", action="append", default=[])
    args = parser.parse_args(argv)

    from bench.build import open_memory
    from bench.measure import rss_bytes
    from bench.scripted import bench_provider
    from memgraph.llm_calls.tokens import token_counter

    provider, _chat, _embedder, clock = bench_provider(args.dim)
    token_counter(provider.chat.model)  # the tokenizer loads once per process, not per scope
    imported = time.perf_counter()
    rss_before = rss_bytes()

    queries = args.query or ["what do we know"]
    before, before_cpu = clock.seconds, clock.cpu
    started, cpu = time.perf_counter(), time.process_time()
    memory = open_memory(args.dir, args.scope, provider)
    first = memory.recall(queries[0], rerank=False)
    wall, used = time.perf_counter() - started, time.process_time() - cpu
    provider_s, provider_cpu = clock.seconds - before, clock.cpu - before_cpu
    for query in queries[1:]:
        memory.recall(query, rerank=False)
    stats = memory.stats()
    rss_after = rss_bytes()
    memory.close()
    json.dump(
        {
            "import_s": imported - _STARTED,
            "open_to_first_recall_wall_s": wall,
            "open_to_first_recall_engine_s": wall - provider_s,
            "open_to_first_recall_cpu_s": used - provider_cpu,
            "first_recall_chars": len(first),
            "rss_before": rss_before.get("VmRSS", 0),
            "rss_after": rss_after.get("VmRSS", 0),
            "hwm_after": rss_after.get("VmHWM", 0),
            "stats": stats,
        },
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
