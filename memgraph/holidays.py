"""The days of the holidays people date things by ("he went out last Easter", "over
Memorial Day weekend", "since Christmas").

Fixed days (Christmas, Halloween, the Fourth of July, St Patrick's Day), the days
that move (Easter by the Gregorian computus; US Thanksgiving, Memorial Day and
Labor Day by their weekday rules). Which year's is meant follows the words before
it ("last", "next", "this") or the tense of its clause, as for a weekday.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta

__all__ = ["HOLIDAY", "HOLIDAY_WORDS", "easter", "far_past", "holiday_on", "resolve_holiday"]

FAR_PAST_DAYS = 240
FAR_PAST_AHEAD = 90
"""A day of the year in a clause of the past that fell more than ``FAR_PAST_DAYS``
ago but comes again within ``FAR_PAST_AHEAD`` days is the coming one: the past verb
is of something else ("I wrote you 20 May, but the ticket says the 21st")."""


def far_past(gone: date, coming: date, said: date) -> bool:
    """Whether a past clause's day is the ``coming`` one rather than the one ``gone``
    (:data:`FAR_PAST_DAYS`)."""
    return (said - gone).days > FAR_PAST_DAYS and (coming - said).days <= FAR_PAST_AHEAD


RECENT_DAYS = 14
"""A holiday said without a tense is the one just gone when it was this recent."""


def easter(year: int) -> date:
    """Easter Sunday of ``year`` (Gregorian calendar, the anonymous computus)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    f = (b + 8) // 25
    g = (b - f + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    weekday = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * weekday) // 451
    month, day = divmod(h + weekday - 7 * m + 114, 31)
    return date(year, month, day + 1)


def _nth_weekday(year: int, month: int, weekday: int, nth: int) -> date:
    """The ``nth`` (1-based; -1 the last) ``weekday`` (Monday 0) of a month."""
    if nth > 0:
        first = date(year, month, 1)
        return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (nth - 1))
    following = date(year + month // 12, month % 12 + 1, 1)
    last = following - timedelta(days=1)
    return last - timedelta(days=(last.weekday() - weekday) % 7)


def _fixed(month: int, day: int) -> Callable[[int], date]:
    return lambda year: date(year, month, day)


_DAYS: dict[str, Callable[[int], date]] = {
    "easter": easter,
    "good friday": lambda year: easter(year) - timedelta(days=2),
    "easter monday": lambda year: easter(year) + timedelta(days=1),
    "christmas eve": _fixed(12, 24),
    "christmas": _fixed(12, 25),
    "boxing day": _fixed(12, 26),
    "new year's eve": _fixed(12, 31),
    "new year's": _fixed(1, 1),
    "valentine's day": _fixed(2, 14),
    "st patrick's day": _fixed(3, 17),
    "fourth of july": _fixed(7, 4),
    "halloween": _fixed(10, 31),
    "thanksgiving": lambda year: _nth_weekday(year, 11, 3, 4),
    "memorial day": lambda year: _nth_weekday(year, 5, 0, -1),
    "labor day": lambda year: _nth_weekday(year, 9, 0, 1),
}
_SPELLINGS = {
    "xmas": "christmas",
    "christmas day": "christmas",
    "xmas eve": "christmas eve",
    "new years eve": "new year's eve",
    "nye": "new year's eve",
    "new year's day": "new year's",
    "new years day": "new year's",
    "new year": "new year's",
    "new years": "new year's",
    "valentines day": "valentine's day",
    "valentine's": "valentine's day",
    "valentines": "valentine's day",
    "st. patrick's day": "st patrick's day",
    "saint patrick's day": "st patrick's day",
    "paddy's day": "st patrick's day",
    "patrick's day": "st patrick's day",
    "the fourth of july": "fourth of july",
    "4th of july": "fourth of july",
    "independence day": "fourth of july",
    "labour day": "labor day",
    "easter sunday": "easter",
}

HOLIDAY_WORDS = frozenset(
    [
        "christmas",
        "xmas",
        "easter",
        "halloween",
        "thanksgiving",
        "valentine",
        "valentines",
        "diwali",
        "eid",
        "hanukkah",
        "ramadan",
    ]
)
"""Single words that name a holiday (some of which have no fixed day here)."""

HOLIDAY = (
    r"(?P<hol>easter (?:sunday|monday)|easter|good friday|christmas (?:eve|day)|xmas eve|"
    r"christmas|xmas|boxing day|nye|(?<!lunar )(?<!chinese )"
    r"(?:new year'?s (?:eve|day)|new years? eve|new year'?s|new year)|"
    r"valentine'?s(?: day)?|(?:st\.? |saint )?patrick'?s day|paddy'?s day|"
    r"(?:the )?(?:fourth|4th) of july|independence day|halloween|thanksgiving|"
    r"memorial day|labou?r day)"
)
"""A holiday's name, as the group ``hol`` (its day is :func:`holiday_on`); the Lunar
New Year is no January 1st."""
_NOT_THE_DAY = (
    r"(?! (?:tree|trees|present|presents|gift|gifts|card|cards|music|song|songs|movie|movies|"
    r"film|films|light|lights|jumper|jumpers|sweater|sweaters|decoration|decorations|market|"
    r"markets|shopping|list|spirit|break|holidays?|vacation|candy|costume|costumes|egg|eggs|"
    r"bunny|hunt|sale|sales|season|menu|special|specials|themed|vibes?|playlist)\b)"
)
"""A holiday's name used for a thing ("the Christmas tree", "Halloween costumes"), not a day."""
HOLIDAY_PATTERN = re.compile(
    r"\b(?:(?P<rel>last|this|next|this past|this coming) )?" + HOLIDAY + r"\b" + _NOT_THE_DAY,
    re.IGNORECASE,
)


def holiday_on(name: str, year: int) -> date | None:
    """The day of the holiday ``name`` (any common spelling) in ``year``."""
    key = " ".join(name.lower().replace("’", "'").split())
    key = _SPELLINGS.get(key, key)
    day = _DAYS.get(key)
    return None if day is None else day(year)


def resolve_holiday(name: str, rel: str | None, said: date, tense: int) -> date | None:
    """Which year's holiday ``name`` a text said on ``said`` means: ``rel`` ("last",
    "next", "this") or, without one, the clause's ``tense`` (-1 past, 1 future, 0
    unknown: the one just gone if within :data:`RECENT_DAYS`, else the coming one)."""
    days = [d for y in (said.year - 1, said.year, said.year + 1) if (d := holiday_on(name, y))]
    if not days:
        return None
    before = [d for d in days if d < said]
    after = [d for d in days if d > said]
    on_the_day = [d for d in days if d == said]
    rel = (rel or "").lower()
    if rel in ("last", "this past"):
        return max(before) if before else None
    if rel in ("next", "this coming"):
        return min(after) if after else None
    if rel == "this":
        same_year = [d for d in days if d.year == said.year]
        return same_year[0] if same_year else None
    if on_the_day:
        return on_the_day[0]
    if tense < 0:
        if before and after and far_past(max(before), min(after), said):
            return min(after)  # "told you I'd beat Christmas", said in mid-December
        return max(before) if before else None
    if tense > 0:
        return min(after) if after else None
    if before and (said - max(before)).days <= RECENT_DAYS:
        return max(before)
    return min(after) if after else None
