"""Retrieval and answer metrics: R@k, reciprocal rank, gold-answer containment, percentiles."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence

from memgraph.retrieval.recall_text import NOTHING_SAID

__all__ = [
    "FIRST_LINES",
    "contains_gold",
    "dedupe",
    "first_lines",
    "normalize",
    "percentile",
    "recall_at_k",
    "reciprocal_rank",
    "says_nothing",
]

_NON_WORD = re.compile(r"[^0-9a-z]+")


def normalize(text: str) -> str:
    """Lowercase, accents folded, punctuation to spaces, whitespace collapsed."""
    folded = unicodedata.normalize("NFKD", text)
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch)).lower()
    return _NON_WORD.sub(" ", folded).strip()


def contains_gold(text: str, answers: Iterable[str]) -> bool:
    """True when any normalized gold alternative is a substring of the normalized text."""
    haystack = normalize(text)
    for answer in answers:
        needle = normalize(answer)
        if needle and needle in haystack:
            return True
    return False


FIRST_LINES = 3
"""How many of recall's listed lines (facts and messages, not headings) count as
its first answer."""


def first_lines(text: str, count: int = FIRST_LINES) -> str:
    """The first ``count`` listed lines of a recall text (``  - …``: its facts and
    messages, in the order shown; headings and the note are left out)."""
    listed = [line for line in text.splitlines() if line.startswith("  - ")]
    return "\n".join(listed[:count])


def says_nothing(text: str) -> bool:
    """True for an empty recall, or one that says nothing relevant is remembered
    (memgraph's recall opens with "(Nothing remembered says this about Dana; ...)"
    when what it found is someone else's)."""
    return (
        not text.strip()
        or "nothing relevant" in text.lower()
        or text.lstrip().startswith(NOTHING_SAID)
    )


def dedupe(turns: Iterable[str | None]) -> list[str]:
    """Turn ids in first-seen order; ``None`` (a hit with no turn) is skipped."""
    seen: set[str] = set()
    ordered: list[str] = []
    for turn in turns:
        if turn is not None and turn not in seen:
            seen.add(turn)
            ordered.append(turn)
    return ordered


def recall_at_k(ranked: Sequence[str], evidence: Iterable[str], k: int) -> float:
    """The share of the evidence turns among the first ``k`` distinct ranked turns."""
    wanted = set(evidence)
    if not wanted:
        raise ValueError("recall_at_k needs at least one evidence turn")
    return len(wanted.intersection(dedupe(ranked)[:k])) / len(wanted)


def reciprocal_rank(ranked: Sequence[str], evidence: Iterable[str], k: int = 10) -> float:
    """1 / rank of the first evidence turn within the first ``k`` distinct turns, else 0."""
    wanted = set(evidence)
    for rank, turn in enumerate(dedupe(ranked)[:k], start=1):
        if turn in wanted:
            return 1.0 / rank
    return 0.0


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by linear interpolation; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
