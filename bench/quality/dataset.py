"""The conversations of ``data/*.json`` (format: ``FORMAT.md``): loading and validation."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bench.quality.metrics import normalize

__all__ = [
    "ANSWERABLE",
    "CATEGORIES",
    "DATA_DIR",
    "MIN_QUESTIONS",
    "Conversation",
    "Problems",
    "Question",
    "Turn",
    "check",
    "load",
    "parse_time",
    "pick",
]

DATA_DIR = Path(__file__).resolve().parent / "data"
CATEGORIES = ("single-fact", "multi-hop", "temporal", "knowledge-update", "abstention")
ANSWERABLE = CATEGORIES[:-1]
MIN_QUESTIONS = 60
SESSIONS_RANGE = (10, 25)
TURNS_RANGE = (250, 400)


@dataclass(frozen=True)
class Turn:
    """One chat message: its id, the first name of who said it, the text, and when."""

    id: str
    speaker: str
    text: str
    session: str
    index: int  # position in its session, from 0
    at: datetime  # the session's time + ``index`` minutes

    @property
    def line(self) -> str:
        """The turn as a transcript line, ``"Speaker: text"``."""
        return f"{self.speaker}: {self.text}"


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answers: tuple[str, ...]
    evidence: tuple[str, ...]
    category: str


@dataclass(frozen=True)
class Conversation:
    id: str
    title: str
    speakers: tuple[str, ...]
    sessions: tuple[tuple[str, datetime], ...]  # (session id, at), in file order
    turns: tuple[Turn, ...]  # every turn, in order
    questions: tuple[Question, ...]
    path: Path

    def turn(self, turn_id: str) -> Turn | None:
        for turn in self.turns:
            if turn.id == turn_id:
                return turn
        return None


def parse_time(value: str) -> datetime:
    """An ISO-8601 time (``Z`` accepted), as an aware datetime."""
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        raise ValueError(f"time without a zone: {value!r}")
    return parsed


def _conversation(doc: dict[str, Any], path: Path) -> Conversation:
    """Build a conversation from a parsed file; KeyError/ValueError/TypeError when malformed."""
    sessions: list[tuple[str, datetime]] = []
    turns: list[Turn] = []
    for session in doc["sessions"]:
        at = parse_time(session["at"])
        sessions.append((str(session["id"]), at))
        for index, turn in enumerate(session["turns"]):
            turns.append(
                Turn(
                    id=str(turn["id"]),
                    speaker=str(turn["speaker"]),
                    text=str(turn["text"]),
                    session=str(session["id"]),
                    index=index,
                    at=at + timedelta(minutes=index),
                )
            )
    questions = tuple(
        Question(
            id=str(q["id"]),
            question=str(q["question"]),
            answers=tuple(str(a) for a in q["answers"]),
            evidence=tuple(str(e) for e in q["evidence"]),
            category=str(q["category"]),
        )
        for q in doc["questions"]
    )
    return Conversation(
        id=str(doc["id"]),
        title=str(doc.get("title", "")),
        speakers=tuple(str(s) for s in doc["speakers"]),
        sessions=tuple(sessions),
        turns=tuple(turns),
        questions=questions,
        path=path,
    )


def load(data: Path = DATA_DIR, only: list[str] | None = None) -> list[Conversation]:
    """Every ``*.json`` conversation in ``data``, by id; ``only`` keeps those ids in that order.

    Raises:
        ValueError: a file cannot be parsed, or an id in ``only`` is missing.
    """
    conversations = []
    for path in sorted(data.glob("*.json")):
        try:
            conversations.append(_conversation(json.loads(path.read_text("utf-8")), path))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path.name}: cannot read the conversation ({exc!r})") from exc
    conversations.sort(key=lambda conv: _natural(conv.id))
    return pick(conversations, only, data)


def pick(
    conversations: list[Conversation], only: list[str] | None, where: Path
) -> list[Conversation]:
    """``only`` those ids, in that order (all when ``None``).

    Raises:
        ValueError: an id in ``only`` is not among them.
    """
    if not only:
        return conversations
    by_id = {conv.id: conv for conv in conversations}
    missing = [cid for cid in only if cid not in by_id]
    if missing:
        raise ValueError(f"no conversation {', '.join(missing)} in {where}")
    return [by_id[cid] for cid in only]


def _natural(text: str) -> list[Any]:
    """Sort key that puts c2 before c10."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


@dataclass
class Problems:
    errors: list[str]
    warnings: list[str]


# --- validation ----------------------------------------------------------------------------

_MONTHS = [
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
]  # fmt: skip
_RELATIVE = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|ago|last|next|this|weekend|week|month|year|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|\d{1,2}(st|nd|rd|th)?)\b"
)
_DAY = re.compile(r"\b(\d{1,2}) (" + "|".join(_MONTHS) + r") (\d{4})\b")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_YEAR = re.compile(r"^(" + "|".join(_MONTHS) + r") (\d{4})$")
_YEAR = re.compile(r"^(\d{4})$")


def _date_hint(answer: str) -> tuple[str, ...] | None:
    """For a date-like gold answer, words whose presence in the evidence makes it derivable."""
    text = answer.strip().lower().replace(",", "")
    iso = _ISO.search(text)
    if iso:
        month = _MONTHS[int(iso.group(2)) - 1]
        return (month, str(int(iso.group(3))), iso.group(1))
    day = _DAY.search(text) or re.search(
        r"\b(" + "|".join(_MONTHS) + r") (\d{1,2}) (\d{4})\b", text
    )
    if day:
        return tuple(part for part in day.groups() if part)
    month_year = _MONTH_YEAR.match(text)
    if month_year:
        return (month_year.group(1), month_year.group(2))
    year = _YEAR.match(text)
    if year:
        return (year.group(1),)
    if any(month in text for month in _MONTHS) and re.search(r"\d{4}", text):
        return tuple(word for word in text.split() if word in _MONTHS)
    return None


def _derivable(question: Question, conv: Conversation) -> bool:
    """Heuristic: a gold answer (or its date) can be read off the evidence turns."""
    texts = [t.text for t in conv.turns if t.id in set(question.evidence)]
    joined = normalize(" ".join(texts))
    words = set(joined.split())
    lowered = " ".join(texts).lower()
    for answer in question.answers:
        needle = normalize(answer)
        if needle and needle in joined:
            return True
        hint = _date_hint(answer)
        if hint is not None:
            if any(part in words for part in hint) or _RELATIVE.search(lowered):
                return True
            continue
        tokens = needle.split()
        if tokens and all(any(w.startswith(tok[:5]) for w in words) for tok in tokens):
            return True  # every word of the answer is in the evidence, give or take an ending
    return False


def check(conversations: list[Conversation]) -> Problems:
    """Validate conversations against FORMAT.md: errors break the benchmark, warnings may not."""
    problems = Problems([], [])
    err, warn = problems.errors.append, problems.warnings.append
    ids = Counter(conv.id for conv in conversations)
    for cid, count in ids.items():
        if count > 1:
            err(f"conversation id {cid!r} is used by {count} files")
    all_turns: Counter[str] = Counter()
    all_questions: Counter[str] = Counter()
    for conv in conversations:
        where = conv.path.name
        if len(conv.speakers) < 2 or any(not s.strip() for s in conv.speakers):
            err(f"{where}: speakers must be two or more full names, got {list(conv.speakers)}")
        first_names = {s.split()[0] for s in conv.speakers if s.split()}
        session_ids = Counter(sid for sid, _ in conv.sessions)
        for sid, count in session_ids.items():
            if count > 1:
                err(f"{where}: session id {sid!r} appears {count} times")
        for (prev_id, prev_at), (sid, at) in zip(conv.sessions, conv.sessions[1:], strict=False):
            if at <= prev_at:
                err(f"{where}: session {sid} ({at.isoformat()}) is not after {prev_id}")
        if not SESSIONS_RANGE[0] <= len(conv.sessions) <= SESSIONS_RANGE[1]:
            warn(f"{where}: {len(conv.sessions)} sessions (format: {SESSIONS_RANGE})")
        if not TURNS_RANGE[0] <= len(conv.turns) <= TURNS_RANGE[1]:
            warn(f"{where}: {len(conv.turns)} turns (format: {TURNS_RANGE})")
        turn_ids = set()
        for turn in conv.turns:
            all_turns[turn.id] += 1
            turn_ids.add(turn.id)
            if turn.speaker not in first_names:
                err(f"{where}: turn {turn.id} speaker {turn.speaker!r} is not in {first_names}")
            if not turn.text.strip():
                err(f"{where}: turn {turn.id} has no text")
        if len(conv.questions) < MIN_QUESTIONS:
            err(f"{where}: {len(conv.questions)} questions, at least {MIN_QUESTIONS} needed")
        for q in conv.questions:
            all_questions[q.id] += 1
            label = f"{where}: question {q.id}"
            if q.category not in CATEGORIES:
                err(f"{label}: category {q.category!r} is not one of {CATEGORIES}")
            if not q.question.strip():
                err(f"{label}: empty question")
            for evidence in q.evidence:
                if evidence not in turn_ids:
                    err(f"{label}: evidence {evidence!r} is not a turn of this conversation")
            if q.category == "abstention":
                if q.answers or q.evidence:
                    err(f"{label}: an abstention question has no answers and no evidence")
                continue
            if not q.answers or not q.evidence:
                err(f"{label}: an answerable question needs answers and evidence")
                continue
            if any(not normalize(a) for a in q.answers):
                err(f"{label}: a gold answer is empty once normalized")
            if all(e in turn_ids for e in q.evidence) and not _derivable(q, conv):
                warn(f"{label}: no gold answer appears derivable from its evidence turns")
    for tid, count in all_turns.items():
        if count > 1:
            err(f"turn id {tid!r} is used {count} times")
    for qid, count in all_questions.items():
        if count > 1:
            err(f"question id {qid!r} is used {count} times")
    return problems
