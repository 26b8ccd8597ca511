"""What a turn corrects: "wait no, it's the 27th not the 20th" puts right an earlier
turn that said "the 20th".

A correction seldom repeats what it is about ("the party", "the exam"): the turn it
puts right does. The episode index reads that turn's words as the correction's
context, so a question about the party finds the date that holds.
"""

from __future__ import annotations

import re

from memgraph.text import index_terms

_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_WEEKDAY = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?"
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|march|april|may|june|july|aug(?:ust)?|sept?(?:ember)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_VALUE = rf"(?:{_DAY}|{_WEEKDAY}|{_MONTH})"
_CORRECTED = re.compile(
    rf"\b(?P<new>{_VALUE}),?\s+not\s+(?:the\s+|on\s+|in\s+)?(?P<old>{_VALUE})\b|"
    rf"\bnot\s+(?:the\s+|on\s+|in\s+)?(?P<only>{_VALUE})\b",
    re.IGNORECASE,
)
_MARKER = re.compile(
    r"\b(?:wait|actually|sorry|oops|my bad|i mean|i meant|correction|scratch that|wrong|"
    r"typo|mixed up|misread|no no)\b",
    re.IGNORECASE,
)
"""Words that say a turn puts something right, for a bare "not the 20th"."""


def corrected_terms(text: str) -> list[str]:
    """The index terms of the value ``text`` puts right ("the 27th not the 20th" →
    ``["20"]``), or none: it corrects nothing said in a date, a weekday or a month."""
    for found in _CORRECTED.finditer(text):
        old = found["old"] or (found["only"] if _MARKER.search(text) else None)
        if old is not None:
            return index_terms(old)
    return []
