"""One benchmark run: feed each conversation, ask its questions, aggregate the metrics."""

from __future__ import annotations

import dataclasses
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.measure import environment
from bench.quality.baseline import BM25Turns, stemmer_name
from bench.quality.dataset import ANSWERABLE, Conversation
from bench.quality.engine import Capabilities, detect, feed, hit_turns
from bench.quality.metrics import (
    contains_gold,
    dedupe,
    first_lines,
    percentile,
    recall_at_k,
    reciprocal_rank,
    says_nothing,
)
from memgraph import Memory

__all__ = ["K", "Settings", "aggregate", "evaluate", "first_sessions"]

K = 10  # hits asked of search() and of the baseline
FEEDS = ("turns", "lines", "sessions")
"""How a conversation is fed: each turn with ``speaker=``, each turn as a
``Speaker: text`` line, or each session as one transcript text."""


@dataclass
class Settings:
    search: bool = True
    recall: bool = True
    bulk: bool = False
    feed: str = "turns"  # one of FEEDS
    questions: int | None = None  # the first N questions of each conversation (--quick)
    config: Path | None = None  # a memgraph config file (a real provider); None: the mock


@dataclass
class ConversationRun:
    id: str
    turns: int
    remember_ms: list[float]
    records: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    bulk_used: bool = False
    provider: str = "mock"


def _scores(ranked: list[str], evidence: tuple[str, ...]) -> dict[str, float]:
    return {
        "r5": recall_at_k(ranked, evidence, 5),
        "r10": recall_at_k(ranked, evidence, 10),
        "mrr": reciprocal_rank(ranked, evidence, 10),
    }


def evaluate_conversation(
    conv: Conversation, settings: Settings, caps: Capabilities
) -> ConversationRun:
    """Feed ``conv`` into a fresh memory and answer its questions."""
    questions = conv.questions[: settings.questions] if settings.questions else conv.questions
    baseline = BM25Turns([t.id for t in conv.turns], [t.line for t in conv.turns])
    records: list[dict[str, Any]] = []
    with (
        tempfile.TemporaryDirectory(prefix="mg-quality-") as tmp,
        (
            Memory(tmp, scope=conv.id, config=settings.config)
            if settings.config is not None
            else Memory(tmp, scope=conv.id, provider="mock")
        ) as memory,
    ):
        fed = feed(memory, conv, caps, bulk=settings.bulk, sessions=settings.feed == "sessions")
        for q in questions:
            record: dict[str, Any] = {
                "id": q.id,
                "conversation": conv.id,
                "category": q.category,
                "question": q.question,
                "answers": list(q.answers),
                "evidence": list(q.evidence),
            }
            if settings.search and fed.turns:
                start = time.perf_counter()
                hits = memory.search(q.question, k=K, episodes=True)
                record["search_ms"] = (time.perf_counter() - start) * 1000.0
                ranked = dedupe(hit_turns(memory, hits, fed.episode_turn))
                record["search_turns"] = ranked
                record["search_hits"] = len(hits)
                record["bm25_turns"] = baseline.top(q.question, K)
                if q.evidence:
                    record["search"] = _scores(ranked, q.evidence)
                    record["bm25"] = _scores(record["bm25_turns"], q.evidence)
            if settings.recall:
                start = time.perf_counter()
                text = memory.recall(q.question)
                record["recall_ms"] = (time.perf_counter() - start) * 1000.0
                record["recall_text"] = text
                if q.category == "abstention":
                    record["abstained"] = says_nothing(text)
                else:
                    record["contains"] = contains_gold(text, q.answers)
                    record["contains_first"] = contains_gold(first_lines(text), q.answers)
                    record["said_nothing"] = says_nothing(text)
            records.append(record)
        provider = _provider(memory)
    return ConversationRun(
        conv.id, len(conv.turns), fed.remember_ms, records, fed.notes, fed.bulk_used, provider
    )


def _provider(memory: Memory) -> str:
    """What answers the engine's model calls: ``mock``, or the configured provider
    and its model."""
    name = memory.provider.name
    return name if name == "mock" else f"{name} {memory.provider.chat.model or ''}".strip()


def first_sessions(conv: Conversation, count: int) -> Conversation:
    """``conv`` cut to its first ``count`` sessions: their turns, and the questions
    all of whose evidence they hold (an abstention question stays unanswerable)."""
    kept = {session for session, _at in conv.sessions[:count]}
    turns = tuple(t for t in conv.turns if t.session in kept)
    ids = {t.id for t in turns}
    questions = tuple(
        q
        for q in conv.questions
        if (q.evidence and set(q.evidence) <= ids) or q.category == "abstention"
    )
    return dataclasses.replace(
        conv, sessions=conv.sessions[:count], turns=turns, questions=questions
    )


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _latency(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p95": None, "n": 0}
    return {"p50": percentile(values, 50), "p95": percentile(values, 95), "n": len(values)}


def _category_row(records: list[dict[str, Any]]) -> dict[str, Any]:
    row: dict[str, Any] = {"n": len(records)}
    for system in ("search", "bm25"):
        scored = [r[system] for r in records if system in r]
        for metric in ("r5", "r10", "mrr"):
            row[f"{system}_{metric}"] = _mean([s[metric] for s in scored])
    if row["search_r10"] is not None and row["bm25_r10"] is not None:
        row["delta_r10"] = row["search_r10"] - row["bm25_r10"]
    else:
        row["delta_r10"] = None
    contained = [1.0 if r["contains"] else 0.0 for r in records if "contains" in r]
    row["recall_contains"] = _mean(contained)
    first = [1.0 if r["contains_first"] else 0.0 for r in records if "contains_first" in r]
    row["recall_contains_first"] = _mean(first)
    return row


def aggregate(runs: list[ConversationRun]) -> dict[str, Any]:
    """Per category, overall and per conversation metrics, and latencies."""
    records = [r for run in runs for r in run.records]
    answerable = [r for r in records if r["category"] != "abstention"]
    abstention = [r for r in records if r["category"] == "abstention"]
    categories = {
        cat: _category_row([r for r in answerable if r["category"] == cat])
        for cat in ANSWERABLE
        if any(r["category"] == cat for r in answerable)
    }
    abstained = [1.0 if r["abstained"] else 0.0 for r in abstention if "abstained" in r]
    with_hits = [1.0 if r["search_hits"] else 0.0 for r in abstention if "search_hits" in r]
    per_conversation = {}
    for run in runs:
        rows = [r for r in run.records if r["category"] != "abstention"]
        per_conversation[run.id] = {
            "turns": run.turns,
            "questions": len(run.records),
            **_category_row(rows),
        }
    return {
        "categories": categories,
        "overall": _category_row(answerable),
        "abstention": {
            "n": len(abstention),
            "recall_empty": _mean(abstained),
            "search_any_hit": _mean(with_hits),
            # the same "nothing" on questions that have an answer: abstaining wrongly
            "answerable_said_nothing": _mean(
                [1.0 if r["said_nothing"] else 0.0 for r in answerable if "said_nothing" in r]
            ),
        },
        "per_conversation": per_conversation,
        "latency_ms": {
            "remember": _latency([ms for run in runs for ms in run.remember_ms]),
            "search": _latency([r["search_ms"] for r in records if "search_ms" in r]),
            "recall": _latency([r["recall_ms"] for r in records if "recall_ms" in r]),
        },
    }


def evaluate(conversations: list[Conversation], settings: Settings) -> dict[str, Any]:
    """Run the benchmark; the document the report and the JSON are made from."""
    caps = detect()
    if settings.feed == "lines":  # as an engine without speaker= is fed
        caps = Capabilities(speaker=False, bulk=None)
    runs = [evaluate_conversation(conv, settings, caps) for conv in conversations]
    notes = sorted({note for run in runs for note in run.notes})
    return {
        "environment": environment(),
        "detected": {
            **caps.describe(),
            "bulk_used": any(run.bulk_used for run in runs),
            "stemmer": stemmer_name(),
            "notes": notes,
        },
        "settings": {
            "search": settings.search,
            "recall": settings.recall,
            "bulk": settings.bulk,
            "feed": settings.feed,
            "questions_per_conversation": settings.questions,
            "k": K,
            "provider": runs[0].provider if runs else "mock",
        },
        "conversations": [run.id for run in runs],
        "summary": aggregate(runs),
        "questions": [r for run in runs for r in run.records],
    }
