"""Targets (issue 5), PASS/FAIL, and the markdown + JSON report."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["TARGETS", "evaluate", "markdown", "write"]

Run = dict[str, Any]


def _get(run: Run | None, *path: str) -> Any:
    value: Any = run
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _find(runs: list[Run], workload: str, dim: int, size: int) -> Run | None:
    for run in runs:
        if (run["workload"], run["dim"], run["size"]) == (workload, dim, size):
            return run
    return None


def _smallest(runs: list[Run], workload: str, dim: int) -> Run | None:
    same = [r for r in runs if r["workload"] == workload and r["dim"] == dim]
    return min(same, key=lambda r: r["size"]) if same else None


@dataclass(frozen=True)
class Target:
    id: str
    text: str
    size: int
    limit: float
    unit: str
    measure: Callable[[list[Run]], float | None]
    lower_is_better: bool = True


def _at(size: int, *path: str, dim: int = 384) -> Callable[[list[Run]], float | None]:
    def measure(runs: list[Run]) -> float | None:
        value = _get(_find(runs, "facts", dim, size), *path)
        return float(value) if value is not None else None

    return measure


def _ratio(size: int, *path: str, dim: int = 384) -> Callable[[list[Run]], float | None]:
    def measure(runs: list[Run]) -> float | None:
        big = _get(_find(runs, "facts", dim, size), *path)
        base_run = _smallest(runs, "facts", dim)
        if base_run is None or base_run["size"] == size:
            return None
        small = _get(base_run, *path)
        return float(big) / float(small) if big is not None and small else None

    return measure


def _paired_ratio(size: int, dim: int = 384) -> Callable[[list[Run]], float | None]:
    """``remember`` p50 at ``size`` over a 1k scope's measured in the same window
    (calls alternating); the ratio of the size runs when there is no such pair."""
    by_sizes = _ratio(size, "remember", "engine_ms", "p50", dim=dim)

    def measure(runs: list[Run]) -> float | None:
        paired = _get(_find(runs, "facts", dim, size), "remember", "paired_reference", "ratio_p50")
        return float(paired) if paired is not None else by_sizes(runs)

    return measure


def _max_one_sentence(runs: list[Run]) -> float | None:
    values = [_get(r, "remember", "tokens", "one_sentence") for r in runs]
    found = [v for v in values if v is not None]
    return float(max(found)) if found else None


TARGETS: tuple[Target, ...] = (
    Target("remember-100k", "`remember` engine p50 at 100k obs", 100_000, 5.0, "ms",
           _at(100_000, "remember", "engine_ms", "p50")),
    Target("remember-flat", "`remember` engine p50, 100k / 1k (a 1k scope's calls alternating)", 100_000, 1.5, "x",
           _paired_ratio(100_000)),
    Target("tokens-flat", "extraction prompt tokens p50, 100k / 1k", 100_000, 1.2, "x",
           _ratio(100_000, "remember", "tokens", "prompt_p50")),
    Target("tokens-one-sentence", "prompt tokens for a one-sentence input (max over runs)", 0, 2000,
           "tokens", _max_one_sentence),
    Target("recall-p50-100k", "recall tiers 1+2 engine p50 at 100k (384-d)", 100_000, 10.0, "ms",
           _at(100_000, "recall", "recall_engine_ms", "p50")),
    Target("recall-p95-100k", "recall tiers 1+2 engine p95 at 100k (384-d)", 100_000, 25.0, "ms",
           _at(100_000, "recall", "recall_engine_ms", "p95")),
    Target("recall-p50-1m", "recall tiers 1+2 engine p50 at 1M (384-d)", 1_000_000, 100.0, "ms",
           _at(1_000_000, "recall", "recall_engine_ms", "p50")),
    Target("cold-open-100k", "cold open to first recall at 100k (engine, median)", 100_000, 300.0,
           "ms", _at(100_000, "coldopen", "open_to_first_recall_engine_ms")),
    Target("vectors-disk", "vectors.npy / raw float32 at 100k", 100_000, 1.1, "x",
           _at(100_000, "disk", "vectors_ratio_to_raw")),
    Target("graph-disk", "graph.json + graph.idx + journal / Agency pretty graph.json at 100k", 100_000, 1.0, "x",
           _at(100_000, "disk", "graph_files_ratio_to_agency")),
    Target("bulk-100k", "bulk import at 100k (wall, with the bench provider)", 100_000, 2000.0,
           "remembers/s", _at(100_000, "bulk", "per_second_wall"), lower_is_better=False),
    Target("rss-100k", "RSS growth of a process holding 100k / raw vectors+text", 100_000, 2.0,
           "x", _at(100_000, "coldopen", "rss_delta_ratio_to_raw")),
)  # fmt: skip


NAME_WORKLOADS = ("numbered", "surname", "prefix")


def _names_worst(size: int, kind: str, key: str) -> Callable[[list[Run]], float | None]:
    """The largest ``names`` value of ``kind`` over the shared-name workloads at ``size``."""

    def measure(runs: list[Run]) -> float | None:
        values = []
        for run in runs:
            if run["workload"] in NAME_WORKLOADS and run["size"] == size:
                value = _get(run, "names", kind, *key.split("."))
                if value is not None:
                    values.append(float(value))
        return max(values) if values else None

    return measure


def _names_cold(size: int) -> Callable[[list[Run]], float | None]:
    kinds = [_names_worst(size, kind, "open_to_first_query_engine_ms") for kind in
             ("full", "shared", "topical")]  # fmt: skip

    def measure(runs: list[Run]) -> float | None:
        values = [v for v in (k(runs) for k in kinds) if v is not None]
        return max(values) if values else None

    return measure


NAME_TARGETS: tuple[Target, ...] = (
    Target("names-full-100k", "query naming one of N people fully, recall p50 at 100k (worst workload)",
           100_000, 10.0, "ms", _names_worst(100_000, "full", "recall_engine_ms.p50")),
    Target("names-shared-100k", "query naming only the shared word, recall p50 at 100k (worst workload)",
           100_000, 10.0, "ms", _names_worst(100_000, "shared", "recall_engine_ms.p50")),
    Target("names-shared-ratio", "shared-word / full-name recall p50 at 100k (worst workload)",
           100_000, 3.0, "x", _names_worst(100_000, "shared", "recall_p50_over_full")),
    Target("names-cold-100k", "open + first query at 100k, fresh process (worst workload and kind)",
           100_000, 300.0, "ms", _names_cold(100_000)),
)  # fmt: skip


def evaluate(runs: list[Run]) -> list[dict[str, Any]]:
    """Every target with its measured value and PASS / FAIL / not run."""
    rows = []
    named = any(run["workload"] in NAME_WORKLOADS for run in runs)
    for target in (*TARGETS, *(NAME_TARGETS if named else ())):
        value = target.measure(runs)
        if value is None:
            verdict = "not run"
        elif target.lower_is_better:
            verdict = "PASS" if value <= target.limit else "FAIL"
        else:
            verdict = "PASS" if value >= target.limit else "FAIL"
        comparison = "<=" if target.lower_is_better else ">="
        rows.append(
            {
                "id": target.id,
                "target": target.text,
                "limit": f"{comparison} {target.limit:g} {target.unit}",
                "value": None if value is None else round(value, 3),
                "unit": target.unit,
                "result": verdict,
            }
        )
    return rows


# ------------------------------------------------------------------- markdown
def _mb(value: Any) -> str:
    return "" if value is None else f"{value / 1e6:.1f}"


def _num(value: Any, digits: int = 2) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


ROWS: tuple[tuple[str, tuple[str, ...], Callable[[Any], str]], ...] = (
    ("remembers timed", ("remember", "remembers"), _num),
    ("remember engine p50 (ms)", ("remember", "engine_ms", "p50"), _num),
    ("remember engine p95 (ms)", ("remember", "engine_ms", "p95"), _num),
    ("remember engine mean (ms)", ("remember", "engine_ms", "mean"), _num),
    ("remember wall p50 (ms)", ("remember", "wall_ms", "p50"), _num),
    ("paired 1k scope: remember p50, calls alternating (ms)", ("remember", "paired_reference", "engine_ms", "p50"), _num),
    ("remember p50 / paired 1k scope's", ("remember", "paired_reference", "ratio_p50"), _num),
    ("checkpoints in the timed calls", ("remember", "checkpoints_during_timed"), _num),
    ("forced checkpoint (ms)", ("remember", "forced_checkpoint_ms"), _num),
    ("amortized checkpoint per remember (ms, est.)", ("remember", "amortized_checkpoint_ms_per_remember"), _num),
    ("extraction prompt tokens p50", ("remember", "tokens", "prompt_p50"), _num),
    ("  of which <known> context p50", ("remember", "tokens", "known_p50"), _num),
    ("one-sentence prompt tokens", ("remember", "tokens", "one_sentence"), _num),
    ("recall queries timed", ("recall", "queries"), _num),
    ("recall engine p50 (ms)", ("recall", "recall_engine_ms", "p50"), _num),
    ("recall engine p95 (ms)", ("recall", "recall_engine_ms", "p95"), _num),
    ("search engine p50 (ms)", ("recall", "search_engine_ms", "p50"), _num),
    ("search engine p95 (ms)", ("recall", "search_engine_ms", "p95"), _num),
    ("recall non-empty share", ("recall", "recall_nonempty_share"), _num),
    ("cold open → first recall, engine (ms)", ("coldopen", "open_to_first_recall_engine_ms"), _num),
    ("cold child process total (ms)", ("coldopen", "process_ms"), _num),
    ("RSS growth holding the scope (MB)", ("coldopen", "rss_delta"), _mb),
    ("RSS total (MB)", ("coldopen", "rss_after"), _mb),
    ("raw vectors + text (MB)", ("coldopen", "raw_vectors_plus_text"), _mb),
    ("RSS growth / raw", ("coldopen", "rss_delta_ratio_to_raw"), _num),
    ("vectors.npy (MB)", ("disk", "vectors_npy"), _mb),
    ("vectors.npy / raw float32", ("disk", "vectors_ratio_to_raw"), _num),
    ("graph files: graph.json + graph.idx + journal (MB)", ("disk", "graph_files"), _mb),
    ("  of which graph.idx (MB)", ("disk", "graph_idx"), _mb),
    ("episodes.jsonl (MB)", ("disk", "files", "episodes.jsonl"), _mb),
    ("Agency graph.json, pretty (MB)", ("disk", "agency_graph_json"), _mb),
    ("Agency embeddings.json, pretty (MB)", ("disk", "agency_embeddings_json"), _mb),
    ("graph files / Agency graph.json", ("disk", "graph_files_ratio_to_agency"), _num),
    ("graph files + episodes / Agency graph.json", ("disk", "with_episodes_ratio_to_agency"), _num),
    ("all files / all Agency files", ("disk", "total_ratio_to_agency"), _num),
    ("bulk import texts", ("bulk", "texts"), _num),
    ("bulk import (remembers/s, wall)", ("bulk", "per_second_wall"), _num),
    ("bulk import (remembers/s, engine only)", ("bulk", "per_second_engine"), _num),
    ("scope build (s)", ("build", "seconds"), _num),
)  # fmt: skip


def _ratio_cell(first: Any, last: Any) -> str:
    try:
        if first and last is not None:
            return f"{float(last) / float(first):.2f}x"
    except (TypeError, ValueError):
        pass
    return ""


def _table(runs: list[Run]) -> list[str]:
    runs = sorted(runs, key=lambda r: r["size"])
    labels = [r["label"] for r in runs]
    ratio = f"{labels[-1]}/{labels[0]}" if len(runs) > 1 else ""
    head = ["metric", *labels] + ([ratio] if ratio else [])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines.append(
        "| built by | "
        + " | ".join(_get(r, "build", "method") or "" for r in runs)
        + (" | |" if ratio else " |")
    )
    for name, path, fmt in ROWS:
        values = [_get(r, *path) for r in runs]
        if all(v is None for v in values):
            continue
        cells = [fmt(v) for v in values]
        if ratio:
            present = [v for v in values if v is not None]
            cells.append(_ratio_cell(values[0], values[-1]) if len(present) > 1 else "")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def _names_table(runs: list[Run]) -> list[str]:
    """One row per (workload, size, kind): recall and search p50 / p95, open + first query."""
    rows = [r for r in runs if r.get("names")]
    if not rows:
        return []
    lines = [
        "| workload | size | query kind | example | recall p50 / p95 (ms) | search p50 / p95 (ms)"
        " | recall CPU p50 (ms) | / full | entity first | open + first query (ms) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in sorted(rows, key=lambda r: (NAME_WORKLOADS.index(r["workload"]), r["size"])):
        for kind, found in run["names"].items():
            recall, search = found["recall_engine_ms"], found["search_engine_ms"]
            leads = found.get("entity_leads_share")
            lines.append(
                f"| {run['workload']} | {run['label']} | {kind} | {found['example']} "
                f"| {recall['p50']:.2f} / {recall['p95']:.2f} "
                f"| {search['p50']:.2f} / {search['p95']:.2f} "
                f"| {found['recall_cpu_ms']['p50']:.2f} "
                f"| {_num(found.get('recall_p50_over_full'))} "
                f"| {'' if leads is None else f'{leads:.0%}'} "
                f"| {found['open_to_first_query_engine_ms']:.0f} |"
            )
    return lines


def markdown(document: dict[str, Any]) -> str:
    env = document["environment"]
    runs: list[Run] = document["runs"]
    dirty = " (engine files modified, uncommitted)" if env.get("engine_dirty") else ""
    load = (env.get("loadavg") or [0.0])[0]
    busy = (
        " — other work was running: expect noisy times"
        if load > 0.5 * (env.get("nproc") or 1)
        else ""
    )
    out = [
        "# memgraph engine benchmark",
        "",
        f"- commit: `{env['commit']}`{dirty}; date: {env['date']}",
        f"- machine: {env['uname']}; {env['cpu']}; {env['nproc']} cores; {env['memory']}",
        f"- python {env['python']}, numpy {env['numpy']}; suite time {document.get('elapsed_s')} s",
        "- times are engine-only (wall time minus time inside the bench provider) unless marked wall",
        f"- load average at start {env.get('loadavg')}, at end {document.get('loadavg_end')}{busy}",
        "",
        "## Targets",
        "",
        "| target | limit | measured | result |",
        "|---|---|---|---|",
    ]
    for row in document.get("targets", []):
        value = "" if row["value"] is None else f"{row['value']:g} {row['unit']}"
        out.append(f"| {row['target']} | {row['limit']} | {value} | {row['result']} |")
    groups: dict[tuple[str, int], list[Run]] = {}
    for run in runs:
        groups.setdefault((run["workload"], run["dim"]), []).append(run)
    for (workload, dim), group in groups.items():
        out += ["", f"## {workload} workload, {dim}-d embeddings", "", *_table(group)]
        kinds = [
            (r["label"], _get(r, "recall", "recall_engine_ms_by_kind"))
            for r in sorted(group, key=lambda r: r["size"])
        ]
        kinds = [(label, k) for label, k in kinds if k]
        if kinds:
            out += ["", "recall engine p50 / p95 (ms) by query kind:", ""]
            for label, by_kind in kinds:
                parts = [f"{kind} {v['p50']:.2f} / {v['p95']:.2f}" for kind, v in by_kind.items()]
                out.append(f"- {label}: " + "; ".join(parts))
    names = _names_table(runs)
    if names:
        out += ["", "## Names that share a word (bench.names)", "", *names]
    verify = document.get("verify_seed")
    if verify:
        out += [
            "",
            f"Seed build check at {verify['size']} observations: graph.json through the API and "
            f"seeded equal (modulo timestamps): {verify['graph_json_equal_modulo_timestamps']}",
        ]
    return "\n".join(out) + "\n"


def write(document: dict[str, Any], out: Path) -> tuple[Path, Path]:
    """Evaluate targets, then write ``results.json`` and ``results.md`` into ``out``."""
    document["targets"] = evaluate(document["runs"])
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / "results.json", out / "results.md"
    json_path.write_text(json.dumps(document, indent=2, default=str) + "\n")
    md_path.write_text(markdown(document))
    return json_path, md_path
