"""The loop that runs the scenarios over workloads, dimensions and sizes.

For every (workload, dimension, size) the suite builds a fresh scope
(:mod:`bench.build`), then runs, in this order so that the measured state is
the built one: ``disk``, ``recall``, ``coldopen`` (+ ``rss``, in the same child
process), ``remember`` (+ ``tokens``, from the same calls, then a forced
checkpoint) and ``bulk`` (:mod:`bench.scenarios`).
"""

from __future__ import annotations

import gc
import os
import re
import shutil
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import orjson

from bench.build import build_scope, open_memory
from bench.measure import Samples, environment, timed
from bench.options import ALL_SCENARIOS, NAME_WORKLOADS, WRITE_LIMIT, Context, Options
from bench.scenarios import SCENARIOS
from bench.scripted import bench_provider
from bench.workload import make_workload
from memgraph.graph.graph import Graph

__all__ = ["ALL_SCENARIOS", "Options", "plan", "run"]


def _say(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _label(size: int) -> str:
    if size >= 1_000_000 and size % 1_000_000 == 0:
        return f"{size // 1_000_000}M"
    if size >= 1_000 and size % 1_000 == 0:
        return f"{size // 1_000}k"
    return str(size)


# ------------------------------------------------------------------------- plan
def _steps(opts: Options, workload: str, dim: int, size: int) -> list[str]:
    wanted = set(opts.only)
    if "rss" in wanted:
        wanted.add("coldopen")
    if "tokens" in wanted:
        wanted.add("remember")
    steps: list[str] = [
        s for s in ("disk", "recall", "coldopen", "names", "remember", "bulk") if s in wanted
    ]
    if workload not in NAME_WORKLOADS:
        steps = [s for s in steps if s != "names"]
    if size > WRITE_LIMIT:
        steps = [s for s in steps if s not in ("remember", "bulk")]
    writable = [s for s in opts.sizes if s <= WRITE_LIMIT]
    bulk_size = max(writable) if writable else None
    if workload != "facts" or dim != opts.dims[0] or size != bulk_size:
        steps = [s for s in steps if s != "bulk"]
    return steps


def plan(opts: Options) -> list[tuple[str, int, int]]:
    """(workload, dim, size) configurations in run order."""
    configs: list[tuple[str, int, int]] = []
    for workload in opts.workloads:
        dims = opts.dims if workload == "facts" else opts.dims[:1]
        sizes = (
            sorted(opts.sizes)
            if workload == "facts" or workload in NAME_WORKLOADS
            else [s for s in sorted(opts.sizes) if s <= WRITE_LIMIT]
        )
        configs += [(workload, dim, size) for dim in dims for size in sizes]
    return configs


def run_config(opts: Options, workload_name: str, dim: int, size: int) -> dict[str, Any]:
    root = opts.out / "scopes"
    scope = f"{workload_name}-{dim}-{_label(size)}".lower()
    shutil.rmtree(root / scope, ignore_errors=True)
    workload = make_workload(workload_name, opts.seed)
    result: dict[str, Any] = {
        "workload": workload_name,
        "dim": dim,
        "size": size,
        "label": _label(size),
    }
    tag = f"{workload_name} {dim}d {_label(size)}"
    info = build_scope(root, scope, workload, size, dim, opts.build)
    result["build"] = info.as_dict()
    _say(
        f"{tag}: built by {info.method} in {info.seconds:.1f} s ({info.observations} observations)"
    )
    provider, chat, _embedder, clock = bench_provider(dim)
    memory = open_memory(root, scope, provider)
    try:
        warm = Samples()
        timed(clock, warm, lambda: memory.recall("warm open", rerank=False))
        result["warm_open_ms"] = round(warm.engine[0] * 1000, 2)
        # A scope seeded below the API has no saved vector index yet: let the
        # background build finish (once, as a real writer's checkpoint would
        # persist it) so the timings below measure the steady state.
        started = time.perf_counter()
        memory.wait_for_index(600)
        memory.checkpoint()
        result["index_build_s"] = round(time.perf_counter() - started, 2)
        ctx = Context(opts, workload, dim, size, root, scope, memory, chat, clock, result)
        for step in _steps(opts, workload_name, dim, size):
            started = time.perf_counter()
            result[step] = SCENARIOS[step](ctx)
            _say(f"{tag}: {step} done in {time.perf_counter() - started:.1f} s")
    finally:
        memory.close()
        gc.collect()
        if not opts.keep_scopes:
            shutil.rmtree(root / scope, ignore_errors=True)
    return result


# --------------------------------------------------------------------- verify
_TIMESTAMP = re.compile(rb"\d{4}-\d\d-\d\dT[\d:.]+Z")


def verify_seed(opts: Options, size: int) -> dict[str, Any]:
    """Build the same scope through the API and by seeding; compare graph.json and counts."""
    root = opts.out / "scopes"
    documents = {}
    for method in ("api", "seed"):
        scope = f"verify-{method}"
        shutil.rmtree(root / scope, ignore_errors=True)
        build_scope(root, scope, make_workload("facts", opts.seed), size, opts.dims[0], method)
        # As read back (graph.json leaves out a recordedAt equal to validFrom,
        # which depends on the timestamps), then with every timestamp blanked.
        read = Graph.from_document(orjson.loads((root / scope / "graph.json").read_bytes()))
        documents[method] = orjson.loads(_TIMESTAMP.sub(b"T", orjson.dumps(read.to_document())))
        if not opts.keep_scopes:
            shutil.rmtree(root / scope, ignore_errors=True)
    same = documents["api"] == documents["seed"]
    return {"size": size, "graph_json_equal_modulo_timestamps": same}


def run(opts: Options) -> dict[str, Any]:
    """Run the suite; returns the results document (see :mod:`bench.report`)."""
    started = time.perf_counter()
    env = environment()
    _say(f"commit {env['commit']}{' (engine files modified)' if env['engine_dirty'] else ''}")
    runs = []
    for workload, dim, size in plan(opts):
        runs.append(run_config(opts, workload, dim, size))
    document: dict[str, Any] = {
        "environment": env,
        "options": {
            k: (sorted(v) if isinstance(v, set) else str(v) if isinstance(v, Path) else v)
            for k, v in asdict(opts).items()
        },
        "runs": runs,
    }
    if opts.quick:
        document["verify_seed"] = verify_seed(opts, max(opts.sizes))
    document["elapsed_s"] = round(time.perf_counter() - started, 1)
    document["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    return document
