"""The scenarios: one function per measurement, each taking the shared :class:`Context`.

Every time is reported as wall time and as engine time (wall time minus the
time spent inside the bench provider); see ``bench/README.md``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from bench.agency import agency_sizes
from bench.measure import REPO, Samples, file_sizes, summarize, timed, token_count
from bench.names import KINDS as NAME_KINDS
from bench.names import NamesWorkload
from bench.options import Context
from memgraph.llm_calls.prompts import EXTRACT_SCHEMA, read_tag

__all__ = ["SCENARIOS", "cold_runs", "content_bytes"]


# ------------------------------------------------------------------------ disk
def content_bytes(scope_dir: Path) -> dict[str, int]:
    """UTF-8 bytes of the scope's text: episodes, observation contents, names, types."""
    document = orjson.loads((scope_dir / "graph.json").read_bytes())
    text = 0
    for entity in document.get("entities") or []:
        text += len(entity["name"].encode()) + len((entity.get("type") or "").encode())
        text += sum(len(o["content"].encode()) for o in entity["observations"])
    text += sum(len(r["type"].encode()) for r in document.get("relations") or [])
    episodes = 0
    path = scope_dir / "episodes.jsonl"
    if path.exists():
        for line in path.read_bytes().splitlines():
            if line.strip():
                episodes += len(orjson.loads(line)["text"].encode())
    header = orjson.loads((scope_dir / "vectors.json").read_bytes())
    vectors = int(header["count"]) * int(header["dim"]) * 4
    return {"graph_text": text, "episode_text": episodes, "raw_vectors": vectors}


def scenario_disk(ctx: Context) -> dict[str, Any]:
    sizes = file_sizes(ctx.scope_dir)
    raw = content_bytes(ctx.scope_dir)
    graph_files = sum(sizes.get(n, 0) for n in ("graph.json", "graph.idx", "journal.jsonl"))
    with_episodes = graph_files + sizes.get("episodes.jsonl", 0)
    agency = agency_sizes(ctx.scope_dir)
    vectors = sizes.get("vectors.npy", 0)
    return {
        "files": sizes,
        **raw,
        "vectors_npy": vectors,
        "vectors_ratio_to_raw": round(vectors / raw["raw_vectors"], 4)
        if raw["raw_vectors"]
        else None,
        "vectors_with_ids_ratio": round(
            (vectors + sizes.get("vectors.json", 0)) / raw["raw_vectors"], 4
        )
        if raw["raw_vectors"]
        else None,
        "graph_files": graph_files,
        "graph_files_with_episodes": with_episodes,
        "graph_json": sizes.get("graph.json", 0),
        "graph_idx": sizes.get("graph.idx", 0),
        "total": sum(sizes.values()),
        **agency,
        "graph_files_ratio_to_agency": round(graph_files / agency["agency_graph_json"], 4),
        "with_episodes_ratio_to_agency": round(with_episodes / agency["agency_graph_json"], 4),
        "total_ratio_to_agency": round(sum(sizes.values()) / agency["agency_total"], 4),
    }


# ---------------------------------------------------------------------- recall
def _budgeted(count: int, budget: float, minimum: int) -> Callable[[], bool]:
    """A predicate telling a loop to go on: below ``minimum`` calls, or within the budget."""
    started = time.perf_counter()
    calls = 0

    def more() -> bool:
        nonlocal calls
        calls += 1
        if calls > count:
            return False
        return calls <= minimum or time.perf_counter() - started < budget

    return more


def scenario_recall(ctx: Context) -> dict[str, Any]:
    opts, memory, clock = ctx.options, ctx.memory, ctx.clock
    queries = ctx.workload.queries(opts.queries)
    for _, query in queries[: opts.warmup]:
        memory.recall(query, rerank=False)
        memory.search(query, rerank=False)
    recall, search = Samples(), Samples()
    by_kind: dict[str, Samples] = {}
    found = chars = hits = 0
    more = _budgeted(len(queries), opts.recall_budget_s, opts.min_samples)
    for kind, query in queries:
        if not more():
            break
        text = timed(clock, recall, partial(memory.recall, query, rerank=False))
        kind_samples = by_kind.setdefault(kind, Samples())
        kind_samples.wall.append(recall.wall[-1])
        kind_samples.engine.append(recall.engine[-1])
        kind_samples.cpu.append(recall.cpu[-1])
        found += bool(text)
        chars += len(text)
    more = _budgeted(len(queries), opts.recall_budget_s, opts.min_samples)
    for _, query in queries:
        if not more():
            break
        hits += len(timed(clock, search, partial(memory.search, query, rerank=False)))
    done = max(len(recall.engine), 1)
    return {
        "queries": len(recall.engine),
        "search_queries": len(search.engine),
        "recall_engine_ms": summarize(recall.engine),
        "recall_wall_ms": summarize(recall.wall),
        "recall_cpu_ms": summarize(recall.cpu),
        "search_engine_ms": summarize(search.engine),
        "search_wall_ms": summarize(search.wall),
        "search_cpu_ms": summarize(search.cpu),
        "recall_engine_ms_by_kind": {k: summarize(v.engine) for k, v in sorted(by_kind.items())},
        "recall_nonempty_share": round(found / done, 3),
        "recall_mean_chars": round(chars / done),
        "search_mean_hits": round(hits / max(len(search.engine), 1), 2),
    }


# --------------------------------------------------------------------- coldopen
def cold_runs(ctx: Context, queries: list[str]) -> list[dict[str, Any]]:
    """``cold_runs`` fresh child processes (:mod:`bench.coldopen`) that open the scope,
    recall ``queries[0]`` (timed) and then the rest; their JSON reports."""
    opts = ctx.options
    command = [
        sys.executable,
        "-m",
        "bench.coldopen",
        "--dir",
        str(ctx.root),
        "--scope",
        ctx.scope,
        "--dim",
        str(ctx.dim),
    ]
    for query in queries:
        command += ["--query", query]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    env.pop("MEMGRAPH_STORE", None)
    runs: list[dict[str, Any]] = []
    for _ in range(max(opts.cold_runs, 1)):
        started = time.perf_counter()
        done = subprocess.run(
            command, cwd=REPO, env=env, capture_output=True, text=True, timeout=900, check=False
        )
        process = time.perf_counter() - started
        if done.returncode != 0:
            raise RuntimeError(f"cold-open child failed ({done.returncode}): {done.stderr[-2000:]}")
        report = json.loads(done.stdout)
        report["process_s"] = process
        runs.append(report)
        if process > 60:  # a slow open is measured once: the suite must stay bounded
            break
    return runs


def scenario_coldopen(ctx: Context) -> dict[str, Any]:
    opts = ctx.options
    queries = [q for _, q in ctx.workload.queries(max(opts.cold_queries, 1))]
    runs = cold_runs(ctx, queries)
    raw = ctx.result.get("disk") or content_bytes(ctx.scope_dir)
    raw_total = raw["raw_vectors"] + raw["graph_text"] + raw["episode_text"]

    def median(key: str) -> float:
        values = sorted(float(r[key]) for r in runs)
        return values[len(values) // 2]

    delta = median_of([r["rss_after"] - r["rss_before"] for r in runs])
    return {
        "runs": len(runs),
        "open_to_first_recall_engine_ms": round(median("open_to_first_recall_engine_s") * 1000, 2),
        "open_to_first_recall_wall_ms": round(median("open_to_first_recall_wall_s") * 1000, 2),
        "open_to_first_recall_cpu_ms": round(median("open_to_first_recall_cpu_s") * 1000, 2),
        "import_ms": round(median("import_s") * 1000, 1),
        "process_ms": round(median("process_s") * 1000, 1),
        "first_recall_chars": runs[0]["first_recall_chars"],
        "rss_before": median_of([r["rss_before"] for r in runs]),
        "rss_after": median_of([r["rss_after"] for r in runs]),
        "rss_delta": delta,
        "hwm_after": median_of([r["hwm_after"] for r in runs]),
        "raw_vectors_plus_text": raw_total,
        "rss_delta_ratio_to_raw": round(delta / raw_total, 3) if raw_total else None,
        "rss_total_ratio_to_raw": round(median_of([r["rss_after"] for r in runs]) / raw_total, 3)
        if raw_total
        else None,
        "stats": runs[0]["stats"],
    }


def median_of(values: list[int]) -> int:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


# --------------------------------------------------------------------- remember
def _journal_state(scope_dir: Path) -> tuple[int, int]:
    try:
        graph = os.stat(scope_dir / "graph.json").st_ino
    except FileNotFoundError:
        graph = 0
    try:
        journal = os.stat(scope_dir / "journal.jsonl").st_size
    except FileNotFoundError:
        journal = 0
    return graph, journal


REFERENCE_SIZE = 1_000


class _Reference:
    """A 1k-observation scope of the same workload whose ``remember`` calls take
    turns with the measured scope's, call by call: their ratio compares the two
    sizes under the same load, which the runs of the sizes one after the other
    (minutes apart on a shared machine) do not."""

    def __init__(self, memory: Any, chat: Any, clock: Any, items: list[Any], root: Path) -> None:
        self.memory, self.chat, self.clock, self.root = memory, chat, clock, root
        self.items = iter(items)
        self.samples = Samples()

    @classmethod
    def open(cls, ctx: Context) -> _Reference:
        from bench.build import build_scope, open_memory
        from bench.scripted import bench_provider
        from bench.workload import make_workload

        opts = ctx.options
        root = ctx.root / "reference"
        scope = f"reference-{ctx.workload.name}-{ctx.dim}"
        shutil.rmtree(root / scope, ignore_errors=True)
        workload = make_workload(ctx.workload.name, opts.seed)
        build_scope(root, scope, workload, REFERENCE_SIZE, ctx.dim, "auto")
        provider, chat, _embedder, clock = bench_provider(ctx.dim)
        memory = open_memory(root, scope, provider)
        memory.wait_for_index()
        items = workload.take(opts.warmup + opts.remembers)
        chat.script(items)
        for item in items[: opts.warmup]:
            memory.remember(item.text)
        return cls(memory, chat, clock, items[opts.warmup :], root / scope)

    def remember_one(self) -> None:
        item = next(self.items, None)
        if item is not None:
            timed(self.clock, self.samples, partial(self.memory.remember, item.text))

    def close(self, measured: Samples) -> dict[str, Any]:
        self.memory.close()
        shutil.rmtree(self.root, ignore_errors=True)
        engine = summarize(self.samples.engine)
        mine = summarize(measured.engine)
        ratio = mine["p50"] / engine["p50"] if engine.get("p50") else None
        return {
            "size": REFERENCE_SIZE,
            "engine_ms": engine,
            "ratio_p50": round(ratio, 3) if ratio is not None else None,
        }


def _vector_share(journal: Path) -> float:
    """The share of the journal's bytes that are base64 vectors."""
    try:
        data = journal.read_bytes()
    except FileNotFoundError:
        return 0.0
    payload = 0
    for line in data.splitlines():
        vectors = orjson.loads(line).get("vectors") if line.strip() else None
        payload += len(vectors.get("b64", "")) if isinstance(vectors, dict) else 0
    return payload / len(data) if data else 0.0


def scenario_remember(ctx: Context) -> dict[str, Any]:
    opts, memory, chat, clock = ctx.options, ctx.memory, ctx.chat, ctx.clock
    items = ctx.workload.take(opts.warmup + opts.remembers)
    chat.script(items)
    misses = chat.misses
    for item in items[: opts.warmup]:
        memory.remember(item.text)
    samples = Samples()
    reference = _Reference.open(ctx) if ctx.size > REFERENCE_SIZE else None
    chat.prompts = []
    checkpoints: list[float] = []
    journal_growth = 0
    state = _journal_state(ctx.scope_dir)
    more = _budgeted(opts.remembers, opts.remember_budget_s, opts.min_samples)
    for item in items[opts.warmup :]:
        if not more():
            break
        timed(clock, samples, partial(memory.remember, item.text))
        if reference is not None:  # its turn right after, so load on the machine hits both
            reference.remember_one()
        after = _journal_state(ctx.scope_dir)
        if after[0] != state[0]:
            checkpoints.append(samples.engine[-1])
        elif after[1] > state[1]:
            journal_growth += after[1] - state[1]
        state = after
    prompts, chat.prompts = chat.prompts, None
    system_tokens = token_count(prompts[0][0]) if prompts else 0
    prompt_tokens = [system_tokens + token_count(user) for _, user in prompts]
    known_tokens = [token_count(read_tag(user, "known") or "") for _, user in prompts]

    one = ctx.workload.one_sentence(ctx.size)
    chat.script([one])
    chat.prompts = []
    single = Samples()
    timed(clock, single, lambda: memory.remember(one.text))
    one_prompts, chat.prompts = chat.prompts, None
    one_tokens = sum(token_count(part) for part in one_prompts[0]) if one_prompts else None

    vector_share = _vector_share(ctx.scope_dir / "journal.jsonl")
    checkpoint = Samples()
    timed(clock, checkpoint, memory.checkpoint)
    graph_json = os.stat(ctx.scope_dir / "graph.json").st_size
    amortized = None
    per_write = journal_growth / max(len(samples.engine) - len(checkpoints), 1)
    try:
        from memgraph.store import directory

        # The store checkpoints when the journal's ops (bytes minus base64 vectors)
        # pass OPS_RATIO of graph.json, or the whole journal JOURNAL_RATIO of
        # graph.json + vectors.npy: writes per checkpoint is the smaller quotient.
        vectors = os.stat(ctx.scope_dir / "vectors.npy").st_size
        ops_per_write = per_write * (1.0 - vector_share)
        minimum = directory.MIN_JOURNAL_BYTES
        if per_write > 0 and ops_per_write > 0:
            writes = min(
                max(minimum, directory.OPS_RATIO * graph_json) / ops_per_write,
                max(minimum, directory.JOURNAL_RATIO * (graph_json + vectors)) / per_write,
            )
            amortized = checkpoint.engine[0] * 1000 / writes
    except (AttributeError, FileNotFoundError):  # another checkpoint policy: no estimate
        pass
    paired: dict[str, Any] | None = None
    if reference is not None:
        paired = reference.close(samples)
    return {
        "remembers": len(samples.engine),
        "engine_ms": summarize(samples.engine),
        "paired_reference": paired,
        "wall_ms": summarize(samples.wall),
        "cpu_ms": summarize(samples.cpu),
        "provider_ms_mean": round(
            (sum(samples.wall) - sum(samples.engine)) * 1000 / max(len(samples.wall), 1), 3
        ),
        "checkpoints_during_timed": len(checkpoints),
        "checkpoint_engine_ms_in_timed": [round(c * 1000, 2) for c in checkpoints],
        "journal_bytes_per_remember": round(per_write),
        "forced_checkpoint_ms": round(checkpoint.engine[0] * 1000, 2),
        "forced_checkpoint_cpu_ms": round(checkpoint.cpu[0] * 1000, 2),
        "amortized_checkpoint_ms_per_remember": round(amortized, 3)
        if amortized is not None
        else None,
        "one_sentence_engine_ms": round(single.engine[0] * 1000, 3),
        "tokens": {
            "prompt_p50": summarize(prompt_tokens, 1)["p50"] if prompt_tokens else None,
            "prompt_max": max(prompt_tokens) if prompt_tokens else None,
            "system": system_tokens,
            "known_p50": summarize(known_tokens, 1)["p50"] if known_tokens else None,
            "one_sentence": one_tokens,
            "one_sentence_text": one.text,
            "schema_not_counted": token_count(json.dumps(EXTRACT_SCHEMA.schema)),
        },
        "script_misses": chat.misses - misses,
    }


# ------------------------------------------------------------------------- bulk
def scenario_bulk(ctx: Context) -> dict[str, Any]:
    """Remembers per second through ``remember_many`` (a first batch of 50 texts, then
    ``bulk_batch`` per call) until ``bulk_texts`` or the time budget is used up."""
    opts, memory, chat, clock = ctx.options, ctx.memory, ctx.chat, ctx.clock
    bulk = getattr(memory, "remember_many", None)
    items = ctx.workload.take(opts.bulk_texts)
    chat.script(items)
    done = 0
    batches: list[int] = []
    before = clock.seconds
    started = time.perf_counter()
    while done < len(items):
        elapsed = time.perf_counter() - started
        if done and elapsed > opts.bulk_budget_s:
            break
        size = min(opts.bulk_batch, 50) if not done else opts.bulk_batch
        if done:  # keep the next batch within the budget at the rate seen so far
            rate = done / max(elapsed, 1e-9)
            size = max(50, min(size, int(rate * (opts.bulk_budget_s - elapsed)) + 1))
        chunk = items[done : done + size]
        if bulk is not None:
            bulk([item.text for item in chunk])
        else:
            for item in chunk:
                memory.remember(item.text)
        done += len(chunk)
        batches.append(len(chunk))
    wall = time.perf_counter() - started
    provider = clock.seconds - before
    chat.forget_script()
    return {
        "api": "remember_many" if bulk is not None else "remember (loop)",
        "batches": batches,
        "texts": done,
        "start_observations": ctx.size,
        "wall_s": round(wall, 3),
        "provider_s": round(provider, 3),
        "per_second_wall": round(done / wall, 1) if wall else None,
        "per_second_engine": round(done / max(wall - provider, 1e-9), 1),
    }


# ------------------------------------------------------------------------ names
def scenario_names(ctx: Context) -> dict[str, Any]:
    """Queries naming one entity fully, naming only the shared word, and topical ones
    (:mod:`bench.names`): recall and search p50 / p95 per kind, whether a full name's
    entity leads the recall text, and open + first query of each kind in a fresh process."""
    opts, memory, clock = ctx.options, ctx.memory, ctx.clock
    workload = ctx.workload
    if not isinstance(workload, NamesWorkload):
        raise TypeError(f"the names scenario needs a names workload, not {workload.name!r}")
    per_kind = max(opts.queries // len(NAME_KINDS), opts.min_samples)
    result: dict[str, Any] = {}
    for kind in NAME_KINDS:
        queries = workload.named_queries(kind, per_kind)
        for query, _name in queries[: opts.warmup]:
            memory.recall(query, rerank=False)
            memory.search(query, rerank=False)
        recall, search = Samples(), Samples()
        leads = found = hits = 0
        more = _budgeted(len(queries), opts.recall_budget_s, opts.min_samples)
        for query, name in queries:
            if not more():
                break
            text = timed(clock, recall, partial(memory.recall, query, rerank=False))
            found += bool(text)
            leads += bool(name) and text.startswith(f"{name} (")
        more = _budgeted(len(queries), opts.recall_budget_s, opts.min_samples)
        for query, _name in queries:
            if not more():
                break
            hits += len(timed(clock, search, partial(memory.search, query, rerank=False)))
        done = max(len(recall.engine), 1)
        runs = cold_runs(ctx, [query for query, _name in queries[:3]])
        colds = sorted(float(r["open_to_first_recall_engine_s"]) for r in runs)
        cpus = sorted(float(r["open_to_first_recall_cpu_s"]) for r in runs)
        result[kind] = {
            "example": queries[0][0],
            "queries": len(recall.engine),
            "recall_engine_ms": summarize(recall.engine),
            "recall_cpu_ms": summarize(recall.cpu),
            "search_engine_ms": summarize(search.engine),
            "search_cpu_ms": summarize(search.cpu),
            "recall_nonempty_share": round(found / done, 3),
            "entity_leads_share": round(leads / done, 3) if kind == "full" else None,
            "search_mean_hits": round(hits / max(len(search.engine), 1), 2),
            "cold_runs": len(runs),
            "open_to_first_query_engine_ms": round(colds[len(colds) // 2] * 1000, 2),
            "open_to_first_query_cpu_ms": round(cpus[len(cpus) // 2] * 1000, 2),
        }
    full = _get_p50(result, "full")
    for kind in NAME_KINDS:
        p50 = _get_p50(result, kind)
        result[kind]["recall_p50_over_full"] = round(p50 / full, 2) if full and p50 else None
    return result


def _get_p50(result: dict[str, Any], kind: str) -> float | None:
    value = result.get(kind, {}).get("recall_engine_ms", {}).get("p50")
    return float(value) if value is not None else None


SCENARIOS: dict[str, Callable[[Context], dict[str, Any]]] = {
    "disk": scenario_disk,
    "recall": scenario_recall,
    "coldopen": scenario_coldopen,
    "remember": scenario_remember,
    "bulk": scenario_bulk,
    "names": scenario_names,
}
