"""The LoCoMo benchmark's conversations (``locomo10.json``) as bench.quality conversations.

LoCoMo is a public set of ten long conversations between two people with
labelled questions; it is not shipped here. ``python -m bench.quality --locomo
PATH`` reads a downloaded copy: each session becomes a dated session, each turn
keeps its speaker and ``dia_id`` (a shared photo's caption is added as
``[shared image: …]``), and the question categories map as 4 → single-fact, 1
and 3 → multi-hop, 2 → temporal, 5 (adversarial: asked about the other
speaker, or never said) → abstention. A question whose evidence names no turn
of the conversation is left out. A gold answer that is a date ("July 28, 2023")
also accepts its other spellings ("28 July 2023", "2023-07-28"). One that names a
day or weekend by another day ("The Friday before 15 July 2023", "The weekend
before 17 July 2023", as LoCoMo's annotators wrote "last Friday" said on the 15th)
also accepts that day ("14 July 2023") or weekend ("the weekend of 15 July 2023");
any other, its days spelled one way ("The week before October 13th, 2023." as "The
week before 13 October 2023").
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.quality.dataset import _MONTHS as MONTH_NAMES
from bench.quality.dataset import Conversation, _conversation, pick

__all__ = ["CATEGORIES", "load_locomo", "locomo_documents"]

CATEGORIES = {4: "single-fact", 1: "multi-hop", 2: "temporal", 3: "multi-hop", 5: "abstention"}
"""LoCoMo's question categories -> bench.quality's."""

_MONTHS = {name: number for number, name in enumerate(MONTH_NAMES, start=1)}
_DAY_IN = re.compile(
    r"\b(?:(?P<day>\d{1,2})(?:st|nd|rd|th)? ?(?P<mon>[A-Za-z]+)|(?P<mon2>[A-Za-z]+) "
    r"(?P<day2>\d{1,2})(?:st|nd|rd|th)?),? (?P<year>\d{4})\b"
)
"""A day written with its month and year, either way round ("28 July, 2023", "July
28th, 2023", "3June, 2022")."""
_ONE_DAY = re.compile(r"(?:on |in )?" + _DAY_IN.pattern + r"\.?", re.I)
_EVIDENCE = re.compile(r"^D\d+:\d+$")


_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_BY_ANOTHER_DAY = re.compile(
    r"^(?:on )?(?:a |the )?(?:(?P<count>two) )?(?P<what>"
    + "|".join(_WEEKDAYS)
    + r"|weekends?) (?P<side>before|after|of) (?P<date>.+?)\.?$",
    re.I,
)


def _date_of(match: re.Match[str]) -> date | None:
    """The day a match of :data:`_DAY_IN` spells, if it is one."""
    month = _MONTHS.get((match["mon"] or match["mon2"]).lower())
    try:
        return (
            date(int(match["year"]), month, int(match["day"] or match["day2"])) if month else None
        )
    except ValueError:
        return None


def _day(text: str) -> date | None:
    """The day ``text`` is, when it is one and nothing else ("on July 28, 2023")."""
    match = _ONE_DAY.fullmatch(text.strip())
    return _date_of(match) if match else None


def _spelled(day: date) -> list[str]:
    name = day.strftime("%B")
    return [f"{day.day} {name} {day.year}", f"{name} {day.day}, {day.year}", day.isoformat()]


def _by_another_day(answer: str) -> list[str]:
    """The day or weekend ``answer`` names by another day, in the words a date is
    resolved in: "The Friday before 15 July 2023" -> "14 July 2023"; "The weekend
    before 17 July 2023" -> "the weekend of 15 July 2023" (its Saturday)."""
    match = _BY_ANOTHER_DAY.match(answer.strip())
    anchor = _day(match["date"]) if match else None
    if match is None or anchor is None:
        return []
    what, side = match["what"].lower(), match["side"].lower()
    if what.startswith("weekend"):
        if side == "of":  # the weekend a day is in, or the one coming
            ahead = -1 if anchor.weekday() == 6 else 5 - anchor.weekday()
            saturday = anchor + timedelta(days=ahead)
        elif side == "before":  # the last one over before the day
            saturday = anchor - timedelta(days=(anchor.weekday() - 5) % 7 or 7)
            if saturday + timedelta(days=1) >= anchor:
                saturday -= timedelta(days=7)
            if match["count"]:
                saturday -= timedelta(days=7)
        else:
            saturday = anchor + timedelta(days=(5 - anchor.weekday()) % 7 or 7)
        return [f"weekend of {day}" for day in _spelled(saturday)[:2]]
    if match["count"] or side == "of":
        return []
    weekday = _WEEKDAYS.index(what)
    if side == "before":
        return _spelled(anchor - timedelta(days=(anchor.weekday() - weekday) % 7 or 7))
    return _spelled(anchor + timedelta(days=(weekday - anchor.weekday()) % 7 or 7))


def _days_respelled(answer: str) -> str:
    """``answer`` with each day in it spelled "13 October 2023" ("The week before
    October 13th, 2023." -> "The week before 13 October 2023.")."""

    def respell(match: re.Match[str]) -> str:
        day = _date_of(match)
        return match[0] if day is None else _spelled(day)[0]

    return _DAY_IN.sub(respell, answer)


def _date_spellings(answer: str) -> list[str]:
    """``answer`` and, when it is a single day, that day's other spellings; when it
    names a day or weekend by another, that day's or weekend's (:func:`_by_another_day`);
    else itself with its days spelled one way (:func:`_days_respelled`)."""
    day = _day(answer)
    if day is not None:
        return list(dict.fromkeys([answer, *_spelled(day)]))
    return list(dict.fromkeys([answer, *_by_another_day(answer), _days_respelled(answer)]))


def _session_time(text: str) -> str:
    """``1:56 pm on 8 May, 2023`` as ISO-8601 UTC."""
    parsed = datetime.strptime(" ".join(text.split()), "%I:%M %p on %d %B, %Y")
    return parsed.strftime("%Y-%m-%dT%H:%M:00Z")


def locomo_documents(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """LoCoMo's samples as bench.quality documents (format: ``FORMAT.md``), ids ``l1``…"""
    documents = []
    for number, sample in enumerate(samples, start=1):
        cid = f"l{number}"
        talk = sample["conversation"]
        sessions = []
        index = 1
        while f"session_{index}" in talk:
            turns = []
            for turn in talk[f"session_{index}"]:
                text = str(turn["text"])
                if turn.get("blip_caption"):
                    text += f" [shared image: {turn['blip_caption']}]"
                turn_id = f"{cid}-{str(turn['dia_id']).replace(':', '-')}"
                turns.append({"id": turn_id, "speaker": turn["speaker"], "text": text})
            at = _session_time(talk[f"session_{index}_date_time"])
            sessions.append({"id": f"{cid}-s{index}", "at": at, "turns": turns})
            index += 1
        known = {turn["id"] for session in sessions for turn in session["turns"]}
        questions = []
        for n, qa in enumerate(sample["qa"], start=1):
            category = CATEGORIES.get(int(qa["category"]))
            if category is None:
                continue
            answers: list[str] = []
            evidence: list[str] = []
            if category != "abstention":
                evidence = [
                    f"{cid}-{e.replace(':', '-')}"
                    for e in qa.get("evidence", [])
                    if _EVIDENCE.match(str(e))
                ]
                evidence = [e for e in evidence if e in known]
                answer = str(qa.get("answer", "")).strip()
                if not evidence or not answer:
                    continue
                answers = _date_spellings(answer)
            questions.append(
                {
                    "id": f"{cid}-q{n}",
                    "question": qa["question"],
                    "answers": answers,
                    "evidence": evidence,
                    "category": category,
                }
            )
        speakers = [talk["speaker_a"], talk["speaker_b"]]
        documents.append(
            {
                "id": cid,
                "title": f"LoCoMo {number}: {speakers[0]} and {speakers[1]}",
                "speakers": speakers,
                "sessions": sessions,
                "questions": questions,
            }
        )
    return documents


def load_locomo(path: Path, only: list[str] | None = None) -> list[Conversation]:
    """The conversations of a ``locomo10.json`` file; ``only`` keeps those ids in that order.

    Raises:
        ValueError: the file cannot be read as LoCoMo, or an id in ``only`` is missing.
    """
    try:
        documents = locomo_documents(json.loads(path.read_text("utf-8")))
        conversations = [_conversation(doc, path) for doc in documents]
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read it as LoCoMo ({exc!r})") from exc
    return pick(conversations, only, path)
