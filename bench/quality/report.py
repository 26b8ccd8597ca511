"""The markdown report, the failure listing, and the JSON file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.quality.dataset import Conversation
from bench.quality.metrics import FIRST_LINES

__all__ = ["failures", "markdown", "write_json"]

_LABELS = {
    "single-fact": "single-fact",
    "multi-hop": "multi-hop",
    "temporal": "temporal",
    "knowledge-update": "knowledge-update",
}


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100.0 * value:.1f}"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _delta(value: float | None) -> str:
    return "–" if value is None else f"{100.0 * value:+.1f}"


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _row(label: str, row: dict[str, Any]) -> str:
    cells = [
        label,
        str(row["n"]),
        _pct(row["search_r5"]),
        _pct(row["search_r10"]),
        _num(row["search_mrr"]),
        _pct(row["bm25_r5"]),
        _pct(row["bm25_r10"]),
        _num(row["bm25_mrr"]),
        _delta(row["delta_r10"]),
        _pct(row["recall_contains"]),
        _pct(row.get("recall_contains_first")),
    ]
    return "| " + " | ".join(cells) + " |"


def markdown(document: dict[str, Any]) -> str:
    """The run as markdown: the per-category table, abstention, latency, what was detected."""
    summary = document["summary"]
    detected = document["detected"]
    settings = document["settings"]
    lines = [
        f"## bench.quality: {', '.join(document['conversations'])} "
        f"({len(document['questions'])} questions, provider {settings.get('provider', 'mock')}, "
        f"k={settings['k']})",
        "",
        "R@k in % of a question's evidence turns among the first k distinct turns; MRR of the "
        "first evidence turn within 10; ΔR@10 in points (search − BM25); recall ∋ gold = % of "
        "questions whose recall() text contains a gold answer; in first "
        f"{FIRST_LINES} lines = within its first {FIRST_LINES} facts or messages.",
        "",
        "| category | n | search R@5 | search R@10 | search MRR | BM25 R@5 | BM25 R@10 | BM25 MRR "
        f"| ΔR@10 | recall ∋ gold | ∋ in first {FIRST_LINES} lines |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for category, row in summary["categories"].items():
        lines.append(_row(_LABELS.get(category, category), row))
    lines.append(_row("**all answerable**", summary["overall"]))
    lines.append("")
    abst = summary["abstention"]
    lines.append(
        f"**abstention** (n={abst['n']}): recall() empty or saying nothing relevant is "
        f"remembered for {_pct(abst['recall_empty'])}% (and for "
        f"{_pct(abst.get('answerable_said_nothing'))}% of the answerable questions); "
        f"search() returned at least one hit for {_pct(abst['search_any_hit'])}%."
    )
    lat = summary["latency_ms"]
    lines.append(
        f"**latency** (ms): remember p50 {_ms(lat['remember']['p50'])} per turn "
        f"(n={lat['remember']['n']}); search p50 {_ms(lat['search']['p50'])} / p95 "
        f"{_ms(lat['search']['p95'])}; recall p50 {_ms(lat['recall']['p50'])} / p95 "
        f"{_ms(lat['recall']['p95'])}."
    )
    lines.append("")
    lines.append("| conversation | turns | questions | search R@10 | BM25 R@10 | recall ∋ gold |")
    lines.append("|---|---:|---:|---:|---:|---:|")
    for cid, row in summary["per_conversation"].items():
        lines.append(
            f"| {cid} | {row['turns']} | {row['questions']} | {_pct(row['search_r10'])} | "
            f"{_pct(row['bm25_r10'])} | {_pct(row['recall_contains'])} |"
        )
    lines.append("")
    lines.append(
        f"Detected: speaker: {detected['speaker']}; bulk: {detected['bulk']}"
        f"{' (used)' if detected['bulk_used'] else ''}; BM25 stemmer: {detected['stemmer']}."
    )
    for note in detected["notes"]:
        lines.append(f"Note: {note}")
    return "\n".join(lines) + "\n"


def _badness(record: dict[str, Any]) -> tuple[float, ...]:
    """Sort key, worst first: recall misses, then search R@10, then MRR."""
    if record["category"] == "abstention":
        return (1.0 if record.get("abstained", True) else 0.0,)
    search = record.get("search", {"r10": 1.0, "mrr": 1.0})
    return (
        1.0 if record.get("contains", True) else 0.0,
        search["r10"],
        search["mrr"],
    )


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def failures(document: dict[str, Any], conversations: list[Conversation], count: int) -> str:
    """The ``count`` worst questions of each category, with what the engine returned."""
    turns = {t.id: t for conv in conversations for t in conv.turns}
    lines = ["", f"## The {count} worst questions per category", ""]
    categories: dict[str, list[dict[str, Any]]] = {}
    for record in document["questions"]:
        categories.setdefault(record["category"], []).append(record)
    for category, records in categories.items():
        worst = sorted(records, key=_badness)[:count]  # stable: file order among equals
        lines.append(f"### {category}")
        lines.append("")
        for r in worst:
            lines.append(f"- **{r['id']}** {r['question']}")
            if r["answers"]:
                lines.append(f"  - gold: {' | '.join(r['answers'])}")
            for tid in r["evidence"]:
                turn = turns.get(tid)
                text = _clip(turn.line, 160) if turn else "?"
                ranks = []
                for system in ("search_turns", "bm25_turns"):
                    if system in r:
                        found = r[system]
                        ranks.append(
                            f"{system.split('_')[0]} #{found.index(tid) + 1}"
                            if tid in found
                            else f"{system.split('_')[0]} –"
                        )
                lines.append(f"  - evidence {tid} ({', '.join(ranks)}): {text}")
            if "search" in r:
                s, b = r["search"], r["bm25"]
                lines.append(
                    f"  - search R@10 {s['r10']:.2f} MRR {s['mrr']:.2f} · "
                    f"BM25 R@10 {b['r10']:.2f} MRR {b['mrr']:.2f}"
                )
            if "search_turns" in r:
                lines.append(f"  - search top turns ({r['search_hits']} hits):")
                for tid in r["search_turns"][:5]:
                    turn = turns.get(tid)
                    mark = "✓" if tid in r["evidence"] else " "
                    lines.append(f"    - {mark} {tid}: {_clip(turn.line, 120) if turn else '?'}")
            if "recall_text" in r:
                verdict = (
                    ("abstained" if r.get("abstained") else "answered")
                    if r["category"] == "abstention"
                    else ("contains gold" if r.get("contains") else "no gold")
                )
                lines.append(f"  - recall ({verdict}): {_clip(r['recall_text'], 400) or '(empty)'}")
        lines.append("")
    return "\n".join(lines)


def write_json(document: dict[str, Any], out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=1, ensure_ascii=False, sort_keys=False) + "\n")
    return out
