"""The LoCoMo benchmark's conversations (``locomo10.json``) as bench.quality conversations.

LoCoMo is a public set of ten long conversations between two people with
labelled questions; it is not shipped here. ``python -m bench.quality --locomo
PATH`` reads a downloaded copy: each session becomes a dated session, each turn
keeps its speaker and ``dia_id`` (a shared photo's caption is added as
``[shared image: …]``), and the question categories map as 4 → single-fact, 1
and 3 → multi-hop, 2 → temporal, 5 (adversarial: asked about the other
speaker, or never said) → abstention. A question whose evidence names no turn
of the conversation is left out. A gold answer that is a date ("July 28, 2023")
also accepts its other spellings ("28 July 2023", "2023-07-28").
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from pathlib import Path
from typing import Any

from bench.quality.dataset import Conversation, _conversation, pick

__all__ = ["CATEGORIES", "load_locomo", "locomo_documents"]

CATEGORIES = {4: "single-fact", 1: "multi-hop", 2: "temporal", 3: "multi-hop", 5: "abstention"}
"""LoCoMo's question categories -> bench.quality's."""

_MONTHS = {
    name: number
    for number, name in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ],
        start=1,
    )
}
_MONTH = r"(?P<mon>[A-Za-z]+)"
_DAY_FIRST = re.compile(
    r"^(?:on |in )?(?P<day>\d{1,2}) " + _MONTH + r",? (?P<year>\d{4})\.?$", re.I
)
_MONTH_FIRST = re.compile(
    r"^(?:on |in )?" + _MONTH + r" (?P<day>\d{1,2}),? (?P<year>\d{4})\.?$", re.I
)
_EVIDENCE = re.compile(r"^D\d+:\d+$")


def _date_spellings(answer: str) -> list[str]:
    """``answer`` and, when it is a single day, that day's other spellings."""
    match = _DAY_FIRST.match(answer.strip()) or _MONTH_FIRST.match(answer.strip())
    month = _MONTHS.get(match["mon"].lower()) if match else None
    if match is None or month is None:
        return [answer]
    try:
        day = date(int(match["year"]), month, int(match["day"]))
    except ValueError:
        return [answer]
    name = day.strftime("%B")
    spellings = [answer, f"{day.day} {name} {day.year}", f"{name} {day.day}, {day.year}"]
    return list(dict.fromkeys([*spellings, day.isoformat()]))


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
