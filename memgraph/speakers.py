"""Who said a text: the ``Name: words`` label of a transcript line.

``remember("Maria: I joined a gym!")`` is Maria speaking when no ``speaker``
is given. A label is one to three capitalised words (or ``user`` /
``assistant``) before a colon at the start of a single-line text; labels that
are ordinary words at the head of a note ("Correction:", "Note:", "Update:")
are not speakers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "ASSISTANT",
    "NOT_SPEAKERS",
    "SHORTEST_NAME",
    "short_for",
    "speaker_name",
    "split_speaker",
    "spoken_words",
    "transcript_turns",
]

_LABEL = re.compile(
    r"^\s*([A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,2}|user|assistant)\s*:\s+(\S.*)$", re.S
)

ASSISTANT = "assistant"
"""How an assistant speaker is stored (its own words make no facts)."""

NOT_SPEAKERS = frozenset(
    [
        "note",
        "notes",
        "update",
        "updates",
        "correction",
        "corrections",
        "reminder",
        "reminders",
        "summary",
        "todo",
        "to-do",
        "re",
        "subject",
        "question",
        "answer",
        "q",
        "a",
        "tip",
        "tips",
        "warning",
        "error",
        "errors",
        "ps",
        "p.s",
        "fyi",
        "important",
        "edit",
        "edited",
        "result",
        "results",
        "step",
        "steps",
        "example",
        "examples",
        "source",
        "sources",
        "quote",
        "title",
        "date",
        "time",
        "location",
        "address",
        "status",
        "priority",
        "agenda",
        "action",
        "actions",
        "decision",
        "decisions",
        "remember",
        "recap",
        "context",
        "background",
        "goal",
        "goals",
        "task",
        "tasks",
        "issue",
        "issues",
        "problem",
        "problems",
        "fix",
        "solution",
        "idea",
        "ideas",
        "news",
        "headline",
        "caption",
        "image",
        "photo",
        "link",
        "http",
        "https",
        "www",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "today",
        "yesterday",
        "tomorrow",
        "breakfast",
        "lunch",
        "dinner",
        "morning",
        "evening",
        "afternoon",
        "night",
        "chapter",
        "part",
        "section",
        "try",
        "option",
        "options",
        "draft",
        "plan",
        "bonus",
        "then",
        "first",
        "second",
        "third",
        "finally",
        "also",
        "or",
    ]
)
_TITLES = frozenset({"dr.", "mr.", "mrs.", "ms.", "mx.", "st.", "prof.", "jr.", "sr.", "rev."})
"""Abbreviations that go before or after a name ("Dr. Okafor"); any other word ending
with a period ends a sentence ("Fair. Try: ...")."""


def split_speaker(text: str) -> tuple[str | None, str]:
    """``(speaker, words)`` of a labelled single-line text, else ``(None, text)``."""
    if "\n" in text.strip():
        return None, text
    match = _LABEL.match(text)
    if match is None:
        return None, text
    label = match.group(1).strip()
    if label.lower().rstrip(".") in NOT_SPEAKERS or any(ch.isdigit() for ch in label):
        return None, text
    if any(_ends_sentence(word) for word in label.split()[:-1]):
        return None, text
    return speaker_name(label), match.group(2).strip()


def transcript_turns(text: str) -> list[tuple[str, str]] | None:
    """``(speaker, words)`` of each turn of a transcript: two or more turns, each
    starting on a line with its ``Name:`` label ("Dana: how was the race?" /
    "Marcus: 2:06!"); a line without one goes on with the turn before it (a
    message of several paragraphs). ``None`` for any other text."""
    turns: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        speaker, words = split_speaker(line)
        if speaker is not None:
            turns.append((speaker, [words]))
        elif turns:
            turns[-1][1].append(line.strip())
        else:
            return None  # it does not start as a transcript does
    if len(turns) < 2:
        return None
    return [(speaker, "\n".join(lines)) for speaker, lines in turns]


def spoken_words(episode: Mapping[str, Any]) -> str:
    """An episode's words as its speaker said them: without the ``Name:`` label the
    speaker was read from ("Melanie: Wow, that's cool!" is Melanie saying "Wow,
    that's cool!"), so a labelled line reads like one remembered with ``speaker=``.
    The stored text keeps its label."""
    text = str(episode.get("text") or "")
    speaker = episode.get("speaker")
    if not speaker or ":" not in text[: len(str(speaker)) + 8]:
        return text
    label, words = split_speaker(text)
    return words if label == speaker else text


def _ends_sentence(word: str) -> bool:
    """Whether a word of a label ends a sentence: a period that is not a title's or
    an initial's ("J.")."""
    return word.endswith(".") and word.lower() not in _TITLES and len(word) > 2


def speaker_name(label: str) -> str:
    """A speaker's name as stored: whitespace collapsed, the chat roles spelled one
    way (``user`` is the default user, ``User``; ``assistant`` stays lower-case)."""
    name = " ".join(label.split())
    role = name.lower()
    return "User" if role == "user" else ASSISTANT if role == ASSISTANT else name


SHORTEST_NAME = 3
"""A short form of a name ("Pri", "Mel") has at least this many letters: a shorter
word ("Jo", "Al") starts too many names to stand for one."""


def short_for(word: str, first_name: str) -> bool:
    """Whether ``word`` may be ``first_name``'s short form (both lower case): "pri"
    of "priyanka", not "pr" (too short) nor "priyanka" itself."""
    return len(word) >= SHORTEST_NAME and word != first_name and first_name.startswith(word)
