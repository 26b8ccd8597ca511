"""What a turn corrects: "wait no, it's the 27th not the 20th" puts right an earlier
turn that said "the 20th".

A correction seldom repeats what it is about ("the party", "the exam"): the turn it
puts right does. The episode index reads that turn's words as the correction's
context, so a question about the party finds the date that holds.
"""

from __future__ import annotations

import re

from memgraph.dates import CALENDAR_WORDS
from memgraph.text import index_terms

_CORRECTED = re.compile(
    r"\b(?:(?P<new>[\w]+),?\s+)?not\s+(?:the\s+|on\s+|in\s+)?(?P<old>[\w]+)\b", re.IGNORECASE
)
"""A value said "not" ("the 27th not the 20th", "not Tuesday"), and the one said
right before it, if any."""
_DAY_OF_MONTH = re.compile(r"\d{1,2}(?:st|nd|rd|th)?")
_MARKER = re.compile(
    r"\b(?:wait|actually|sorry|oops|my bad|i mean|i meant|correction|scratch that|wrong|"
    r"typo|mixed up|misread|no no)\b",
    re.IGNORECASE,
)
"""Words that say a turn puts something right, for a bare "not the 20th"."""


def _is_day(word: str | None) -> bool:
    """Whether ``word`` is a day of the month, a weekday or a month ("20th", "tues")."""
    return word is not None and (
        _DAY_OF_MONTH.fullmatch(word) is not None or word.casefold() in CALENDAR_WORDS
    )


def corrected_terms(text: str) -> list[str]:
    """The index terms of the value ``text`` puts right ("the 27th not the 20th" →
    ``["20"]``), or none: it corrects nothing said in a date, a weekday or a month."""
    if "not" not in text.casefold():  # most turns: nothing is said "not"
        return []
    marked: bool | None = None
    for found in _CORRECTED.finditer(text):
        if not _is_day(found["old"]):
            continue
        if not _is_day(found["new"]):
            if marked is None:
                marked = _MARKER.search(text) is not None
            if not marked:
                continue
        return index_terms(found["old"])
    return []
