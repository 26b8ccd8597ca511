"""Relative dates: "yesterday", "last week", "on Saturday", "May 19" resolved against
when a text was said.

A fact keeps its speaker's words and gains the date they meant:
``resolve_relative_dates("went camping last week", said)`` →
``"went camping last week (the week before 9 June 2023)"``. Days print as
``7 May 2023``: unambiguous in every locale and what people write in answers.

Whether a weekday or a month lies before or after the moment of speaking is
read from the clause around it: past-tense verbs point back ("we got rained
out Saturday"), plans point forward ("starting in August", "I'll go on
Friday"); without either, a weekday is the coming one and a month the
nearest. A day of the month without a month ("the 13th") is the nearest such
day in that direction; a month and day without a year ("May 19") takes the
year that puts it within half a year of the moment, nudged by tense.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from memgraph.clock import epoch_ms
from memgraph.holidays import HOLIDAY, HOLIDAY_PATTERN, HOLIDAY_WORDS, far_past, resolve_holiday

__all__ = [
    "CALENDAR_WORDS",
    "DAY_NAMES",
    "MONTHS",
    "WEEKDAYS",
    "Period",
    "asked_period",
    "asks_about_now",
    "asks_about_past",
    "asks_how_things_stood",
    "days_line",
    "days_named",
    "format_day",
    "format_month",
    "mentions_time",
    "mentions_update",
    "names_a_bare_day",
    "read_days",
    "resolve_relative_dates",
    "resolved_day",
]

MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a couple": 2,
    "couple of": 2,
    "a few": 3,
    "few": 3,
    "several": 3,
}
_MONTH_INDEX = {name.lower(): i + 1 for i, name in enumerate(MONTHS)}
_MONTH_INDEX |= {name[:3].lower(): i + 1 for i, name in enumerate(MONTHS)} | {"sept": 9}
_WEEKDAY_INDEX = {name.lower(): i for i, name in enumerate(WEEKDAYS)}
_WEEKDAY_INDEX |= {"mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3}
_WEEKDAY_INDEX |= {"fri": 4, "sat": 5, "sun": 6}
CALENDAR_WORDS = frozenset(_MONTH_INDEX) | frozenset(_WEEKDAY_INDEX)
"""The names of the months and days, whole and cut short ("march", "dec", "thurs")."""
DAY_NAMES = CALENDAR_WORDS | HOLIDAY_WORDS
"""Capitalised words that name a day, not someone or something: months, weekdays and
holidays ("He'd asked my dad the week before Christmas")."""

_IRREGULAR_PAST = (
    "was were did had went got came saw met made took gave told said bought brought caught "
    "thought found ran won lost felt sat slept spent sent wrote heard began flew drove "
    "ate drank fell broke chose forgot knew paid put read rode rose sang sold shot shut sold "
    "spoke stood stole struck swam threw understood woke wore became held kept led meant "
    "built burnt dealt fed fought hid hit hurt let lit quit set shook taught tore born "
    "rang sank dug hung lent spun swung blew drew grew wept crept slid fled bled "
    "bent shone sought swore froze forgave shrank sprang withdrew overslept mistook "
    "sped knelt leapt laid arose awoke dove flung stung strode left cut"
)
_PAST = re.compile(
    r"\b(?:" + "|".join(_IRREGULAR_PAST.split()) + r"|"
    r"(?<!getting )(?<!get )(?<!be )\w{2,}(?<!ne)(?<!ee)ed|"  # not "getting married"
    r"used to|ago|yesterday|since|been(?! \w+ing\b)|not over|recovering from|recovered from)\b",
    re.IGNORECASE,
)
_FUTURE = re.compile(
    r"\b(?:will|'ll|shall|going to|gonna|plan|plans|planning|planned|next|upcoming|coming|"
    r"starting|starts|scheduled|due|until|till|hope|hoping|want to|wants to|would like|"
    r"can't wait|cannot wait|looking forward|soon|tomorrow|is on|are on|is set for|"
    r"moved to|pushed to|rescheduled|booked|book|leave|leaving|flying|heading|deadlines?|"
    r"moves in|arrives|arriving|lands|landing|flies|"
    r"(?:moved|pushed|postponed|rescheduled|bumped|delayed|changed|shifted|put off|put back|"
    r"brought forward)(?: [\w'’-]+){0,4}? (?:to|until|till)|"
    r"supposed to|expected to|slated to|set to)\b",
    re.IGNORECASE,
)
_SET_FOR = re.compile(
    r"\b(?:by|(?:fixed|booked|scheduled|set|arranged|confirmed|planned|pencilled|penciled|"
    r"moved|pushed|postponed|rescheduled)(?: (?:it|that|this|us|me|him|her|them|one|in))? "
    r"(?:for|to))\s+$",
    re.IGNORECASE,
)
"""Words right before a date that put it ahead, whatever tense the verb is in: "by
Friday", "he has fixed it for 9 August", "it's been moved to the 14th" ("bitten
by a tiger snake on Tuesday" is no deadline)."""
_WHAT_IF = re.compile(
    r"\b(?:what if|how about|if (?:i|we|you|they|she|he) (?:came|went|did|moved))\b", re.I
)
"""A plan put as a question or a condition: the past verb after it is of no past."""
_SIGNED_UP = re.compile(r"\b(?:signed up|sign up|registered for|enrolled)\b", re.IGNORECASE)
"""What someone signed up for is ahead ("signed up for the challenge on the 25th of
April"); a weekday beside it is more often the day of signing ("I signed up on
Thursday"), so it is read only for a day with its month."""
_UNTIL_NOW = re.compile(
    r"(?:'ve|\bhave|\bhas|'s|\bhaven't|\bhasn't)(?: \w+)?(?: not| never)? "
    r"(?:been|had|known|lived|worked|owned|played|done|used|taught|run|studied|practiced|"
    r"practised|volunteered|loved|kept|stayed|trained|dated|collected|followed)\b",
    re.IGNORECASE,
)
"""A present perfect ("I've had them", "she has lived"): a duration in its clause runs
until the moment of speaking."""
_HAVE_GOT = re.compile(r"(?:'ve|\bhave|\bhas|'s) got\b", re.IGNORECASE)
"""``I've got an interview on Tuesday``: a present, not a past."""
_SCHEDULED = re.compile(r"\b(?:is|are|'s|’s)\s+$", re.IGNORECASE)
"""A month right after "is" ("the trip is in November") says when something is set for."""
_CLAUSE = re.compile(
    r"[.!?;]|[,:]\s|\s(?:and|but|so)\s|[\U0001F300-\U0001FAFF\u2600-\u27BF]", re.IGNORECASE
)
"""Where a clause ends: a stop, a comma, "and", "but", "so", or an emoji ("Submitted on
Tuesday 🎉 Now the waiting game")."""

_NUMBER = (
    r"(?P<n>\d{1,3}|a couple(?: of)?|couple of|a few|few|several|an?|one|two|three|four|"
    r"five|six|seven|eight|nine|ten|eleven|twelve)"
)
_WEEKDAY = r"(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_SHORT_WEEKDAY = r"(?P<wd>mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)(?![\w'’])"
"""A weekday cut short, read only after "last", "this" or "next" ("last Fri"): alone,
"sun", "sat" and "wed" are other words."""
_MONTH = (
    r"(?P<mon>january|february|march|april|may|june|july|august|september|october|november|"
    r"december|(?:jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?)"
)
_SEASON = r"(?P<season>spring|summer|autumn|fall|winter)"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?(?![.,]\d)"
"""A day of the month, not the whole of a decimal ("1.9 km")."""
_NO_REL_YEAR = r"(?!,? (?:last|this|next) year\b)"
"""Not a day and month said with its year ("the 14th of August next year")."""
_NOT_A_DAY = (
    r"(?! (?:of )?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)"
    r"(?! (?:of )?(?:centur|floor|grade|time|place|row|anniversar|birthday|percentile|"
    r"street|st\b|avenue|ave\b|round|lap|mile|minute|hour|day|week|year|month|inning|"
    r"hole|pick|seed|edition|amendment|generation|person|people|one|try|attempt|of us|of them|"
    r"guys|kids|friends|times|more|others)[a-z]*)"
)
"""What may not follow ``the 15th`` for it to be a day of the month."""
_NO_DATE_AFTER = (
    r"(?!,? (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? [0-3]?\d)"
    r"(?!,? (?:the )?[0-3]?\d(?:st|nd|rd|th)? (?:of )?"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)"
)
"""What may not follow a weekday for it to name a day of its own ("Saturday, October
21st", "Wednesday, 21st August" are the 21st's day, resolved by the date)."""
_NOT_OWNED = r"(?<!\bhis )(?<!\bher )(?<!\bmy )(?<!\btheir )(?<!\bour )(?<!\bits )(?<!\byour )"

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in [
        ("day_before_yesterday", r"\bthe day before yesterday\b"),
        ("day_after_tomorrow", r"\bthe day after tomorrow\b"),
        ("yesterday", r"\b(?:yesterday|yday)(?: (?:morning|afternoon|arvo|evening|night))?\b"),
        (
            "tomorrow",
            r"(?<!from )\b(?:tomorrow|tmrw|tmr|tmw|tomoz|2morrow|2moro)"
            r"(?: (?:morning|afternoon|arvo|evening|night))?\b",
        ),
        ("last_night", r"\blast (?:night|arvo)\b"),
        (
            "before_last",
            r"\b(?:the )?(?:(?P<unit>week|weekend|month|year)|" + _WEEKDAY + r") before last\b",
        ),
        (
            "from_now",
            _NUMBER
            + r" (?P<unit>day|week|month|year)s? from (?:now|today|"
            + r"(?P<tomorrow>tomorrow|tmrw|tmr|tmw|2morrow|2moro))\b",
        ),
        ("ago", _NUMBER + r" (?P<unit>day|week|fortnight|month|year|weekend)s? ago\b"),
        (
            "lasting",
            # "for 3 years", or a sentence that starts with one ("Seven years now.")
            r"(?:\b(?:for|over) |(?:^|(?<=[.!?] ))\W*)"
            r"(?:(?P<about>about|around|roughly|almost|nearly|over|more than) |"
            r"the (?:past|last) )?(?P<n>\d{1,2}|an?|one|two|three|four|five|six|seven|eight|nine|"
            r"ten|eleven|twelve) (?P<unit>day|week|month|year)s?\b",
        ),
        ("in_n", r"\bin " + _NUMBER + r" (?P<unit>day|week|fortnight|month|year)s?\b"),
        (
            "weekday_near_holiday",
            r"\b" + _WEEKDAY + r" (?P<side>after|before) (?:(?P<rel>last|this|next) )?" + HOLIDAY,
        ),
        (
            "month_day_range",
            r"\b"
            + _MONTH
            + r" "
            + _DAY
            + r"\s*(?:-|–|to|through|thru|until|till)\s*(?P<last>[0-3]?\d)(?:st|nd|rd|th)?\b"
            + r"(?!,? \d{4})(?!:)(?! (?:am|pm|days|weeks|months|years|hours|people)\b)",
        ),
        (  # "the 14th of August next year"
            "day_of_rel_year",
            r"\b(?:the )?" + _DAY + r" (?:of )?" + _MONTH + r",? (?P<rel>last|this|next) year\b",
        ),
        (  # "June 3 last year"
            "day_of_rel_year",
            r"\b" + _MONTH + r" " + _DAY + r",? (?P<rel>last|this|next) year\b",
        ),
        ("month_day_year", r"\b" + _MONTH + r" " + _DAY + r",? (?P<year>\d{4})\b"),
        ("day_month_year", r"\b" + _DAY + r" (?:of )?" + _MONTH + r",? (?P<year>\d{4})\b"),
        ("month_day", r"\b" + _MONTH + r" " + _DAY + r"\b(?!:)(?!,? \d{4})" + _NO_REL_YEAR),
        (  # "July the 1st"
            "month_day",
            r"\b(?P<mon>january|february|march|april|may|june|july|august|september|october|"
            r"november|december) the " + _DAY + r"\b(?!:)(?!,? \d{4})" + _NO_REL_YEAR,
        ),
        (
            "day_month",
            r"\b(?:the )?" + _DAY + r" (?:of )?" + _MONTH + r"\b(?!,? \d{4})" + _NO_REL_YEAR,
        ),
        (
            "weekday_day",
            r"\b"
            + _WEEKDAY
            + r"(?: (?:morning|afternoon|arvo|evening|night))?"
            # "Monday, 4 stitches": a count, not "Monday the 4th" or "Monday 4th"
            + r"(?!, [0-3]?\d(?![\d:]|st|nd|rd|th))"
            + r",? (?:the )?"
            + _DAY
            + r"\b"
            + _NOT_A_DAY,
        ),
        (  # "sun 30th": cut short, a day with its ending ("sat 3 hours" is no day)
            "weekday_day",
            r"\b" + _SHORT_WEEKDAY + r",? (?:the )?(?P<day>[0-3]?\d)(?:st|nd|rd|th)\b" + _NOT_A_DAY,
        ),
        ("weekday_of_week", r"\b" + _WEEKDAY + r",? (?:of )?(?P<rel>last|this|next) week\b"),
        ("weekday_week", r"\b" + _WEEKDAY + r" week\b(?! ago)"),  # "Sunday week": a week on
        ("week_weekday", r"\b(?P<rel>last|this|next) week(?:'s)?,? (?:on )?" + _WEEKDAY + r"\b"),
        ("month_of_rel_year", r"\b" + _MONTH + r" (?:of )?(?P<rel>last|this|next) year\b"),
        ("day_only", r"\b(?:on |by |until |for |from )?the " + _DAY + r"\b" + _NOT_A_DAY),
        ("holiday", HOLIDAY_PATTERN.pattern),
        ("today", r"\b(?:today|tonight|this (?:morning|afternoon|arvo|evening))\b"),
        ("rel_weekend", r"\bthe (?P<rel>weekend after next)\b"),
        ("rel_weekend", r"\b(?P<rel>last|this|next|this past|this coming) weekend\b"),
        ("same_day", r"\b(?:this|on this|the same) day (?P<rel>last|next) year\b"),
        (
            "rel_unit",
            _NOT_OWNED + r"\b(?P<rel>last|this|next|this past) (?P<unit>week|month|year)\b",
        ),
        (
            "rel_weekday",
            r"\b(?P<rel>last|this|next|this past|this coming|on) "
            + _WEEKDAY
            + r"\b"
            + _NO_DATE_AFTER,
        ),
        ("rel_weekday", r"\b(?P<rel>last|this|next|this past|this coming) " + _SHORT_WEEKDAY),
        (  # "on thurs"; not "on sat", "on sun", "on wed", which are other words too
            "rel_weekday",
            r"\b(?P<rel>on) (?P<wd>mon|tues?|thu(?:rs?)?|fri)(?![\w'’])",
        ),
        ("rel_season", r"\b(?P<rel>last|this|next) " + _SEASON + r"\b"),
        (
            "in_month",
            r"\b(?P<rel>in|last|this|next|since|until|by|early|late|mid|to) "
            + _MONTH
            + r"\b(?! \d)",
        ),
        ("weekday", r"\b" + _WEEKDAY + r"\b(?! (?:the )?\d)" + _NO_DATE_AFTER),
    ]
]


_MAY_HOLD_A_DATE = re.compile(
    r"\d|\b(?:yesterday|tomorrow|today|tonight|morning|afternoon|arvo|evening|night|day|week|"
    r"fortnight|"
    r"month|year|ago|monday|tuesday|wednesday|thursday|friday|saturday|sunday|spring|summer|"
    r"autumn|fall|winter|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|"
    r"(?:last|this|next|past|coming|on) (?:mon|tue|wed|thu|fri|sat|sun)|"
    r"tmrw|tmr|tmw|tomoz|2morrow|2moro|yday)|\b" + HOLIDAY,
    re.IGNORECASE,
)
"""A word every pattern above holds (a unit, a day, month or holiday name, a digit):
a text without any is returned as it is, unread by the patterns."""


def _coming_saturday(said: date) -> date:
    """The Saturday of this weekend: the coming one, or the day before a Sunday."""
    return said - timedelta(days=1) if said.weekday() == 6 else _weekday(said, 5, 1, strictly=False)


def format_day(day: date) -> str:
    """``7 May 2023``."""
    return f"{day.day} {MONTHS[day.month - 1]} {day.year}"


def format_month(year: int, month: int) -> str:
    """``May 2023``."""
    return f"{MONTHS[month - 1]} {year}"


def _add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def _number(text: str | None) -> int | None:
    text = " ".join((text or "").lower().split())
    if text.isdigit():
        return int(text)
    return _NUMBERS.get(text)


def _clause_around(text: str, start: int, end: int) -> tuple[int, int]:
    """Where the clause holding ``text[start:end]`` begins and ends."""
    bounds = [0, *(m.end() for m in _CLAUSE.finditer(text)), len(text)]
    left = max(b for b in bounds if b <= start)
    return left, min((b for b in bounds if b >= end), default=len(text))


def _tense(text: str, start: int, end: int, *, near_day: bool = False) -> int:
    """-1 when the clause around ``text[start:end]`` speaks of the past, 1 of the
    future, 0 when it does not say (:func:`_nearest_tense`); ``near_day``: the date is
    a day a few days either way ("on Thursday"), not one with its month."""
    left, right = _clause_around(text, start, end)
    return _nearest_tense(text[left:start], text[end:right], signed_up=not near_day)


_PLANNED = re.compile(
    r"(?:'s|’s|\bis|\bare|'re|’re) on\b|(?:'s|’s|\bis|\bare|'re|’re)\s+$|\bturns\b|\bstarts?\b|\bbegins?\b|"
    r"(?:'ve|’ve|\bhave|\bhas|'s|’s) got\b|\b(?:was|were) (?:thinking|planning|hoping)\b|"
    r"\b(?:am|is|are|im|i['’]m|we['’]re|they['’]re|you['’]re|it['’]s|now)\b",
    re.IGNORECASE,
)
"""A day said in the present, of a plan or what is coming: "It's on Thursday", "He
turns 65 on Saturday", "I've got an interview on Tuesday", "I'm nervous about
friday", "I was thinking Thursday the 2nd"."""


_OWNED_THING = re.compile(
    r"(\b(?:got|had|passed|did|took|won|made|bought|sold|finished|\w+ed)\s+"
    r"(?:his|her|my|our|your|their)\s+\w+)['’]s\b",
    re.IGNORECASE,
)
"""A thing of someone's done, said by its owner's word alone ("got his learner's"):
its "'s" is no "is" ("her birthday's the 22nd" is)."""


_SCHEDULED = re.compile(
    r"\b(?:i|we|they|you)\s+(?:meet|see|fly|go|leave|play|visit|arrive|start|finish|move|"
    r"race|drive|head|sign|close|open|host|travel|return|collect)\b|"
    r"\b(?:he|she|it)\s+(?:meets|sees|goes|leaves|plays|visits|returns|travels)\b",
    re.IGNORECASE,
)
"""An event said in the simple present, which a chat uses for what is scheduled:
"we meet her for the first time Saturday", "I fly Tuesday"."""


def _nearest_tense(before: str, after: str, *, signed_up: bool = True) -> int:
    """The tense of the clause ``before`` + date + ``after``: when it holds words of
    both the past and the future ("friday was my last day, freelance life starts
    now"), the one nearest the date. ``signed_up``: what someone signed up for is
    ahead (:data:`_SIGNED_UP`)."""
    if _SET_FOR.search(before) or _WHAT_IF.search(before):
        return 1  # "by Friday", "he has fixed it for 9 August", "what if I came in August"
    # "got his learner's on Friday": a thing of his, not "it's on Friday"
    before, after = _OWNED_THING.sub(r"\1  ", before), _OWNED_THING.sub(r"\1  ", after)
    patterns: list[tuple[int, re.Pattern[str]]] = [
        (1, _PLANNED),
        (-1, _PAST),
        (1, _FUTURE),
        (1, _SCHEDULED),
    ]
    if signed_up:
        patterns.append((1, _SIGNED_UP))
    return _nearest_of(before, after, patterns, (_PLANNED,))  # the "got" of "I've got"


def _nearest_of(
    before: str,
    after: str,
    patterns: Sequence[tuple[int, re.Pattern[str]]],
    not_past: Sequence[re.Pattern[str]],
) -> int:
    """The tense (-1, 1; 0 when none or a tie) of the word of ``patterns`` nearest a
    date said between ``before`` and ``after``; a past word inside a match of
    ``not_past`` is none."""
    nearest: dict[int, int] = {}
    for part, is_before in ((before, True), (after, False)):
        masked = [m.span() for mask in not_past for m in mask.finditer(part)]
        for tense, pattern in patterns:
            for found in pattern.finditer(part):
                if tense < 0 and any(a <= found.start() < b for a, b in masked):
                    continue
                distance = len(part) - found.end() if is_before else found.start()
                nearest[tense] = min(nearest.get(tense, distance), distance)
    if len(nearest) < 2:
        return next(iter(nearest), 0)
    return -1 if nearest[-1] < nearest[1] else 1 if nearest[1] < nearest[-1] else 0


_DONE = re.compile(
    r"(?:\b(?:is|are|am|was|were|im)|['’](?:s|re|m))\s+(?:all |finally |officially |now )?"
    r"(?:done|finished|complete|completed|sorted|fixed)\b",
    re.IGNORECASE,
)
"""A thing said to be done, which happened before: "THE KITCHEN IS DONE. Tuesday."."""


def _tense_of(clause: str) -> int:
    """-1 when ``clause`` speaks of the past, 1 of the future, 0 when it does not say."""
    clause = _HAVE_GOT.sub(" ", clause)
    ahead = _FUTURE.search(clause) is not None
    if not ahead and _DONE.search(clause):
        return -1  # "THE KITCHEN IS DONE": its "is" plans nothing
    past = bool(_PAST.search(clause))
    future = ahead or bool(_PLANNED.search(clause))  # "they're getting married"
    return -1 if past and not future else 1 if future and not past else 0


_NOT_IN = re.compile(
    r"\b(?:haven['’]?t|hasn['’]?t|hadn['’]?t|have not|has not|had not|never|first time|"
    r"(?:first|longest|best|worst|most|least) \w+)\b[^.!?]*$",
    re.IGNORECASE,
)
"""What makes "in two years" a stretch of time, not a day ahead: "haven't seen her in
two years", "the first time in months"."""
_NEAR_DAYS = frozenset({"weekday", "rel_weekday", "day_only", "weekday_day"})
"""Dates a day or two either way of being past ("on Sunday", "the 23rd"): said as a
fragment, they go with the clause before."""
_FRAGMENT_KINDS = _NEAR_DAYS | {"holiday", "in_month"}
"""Dates that, said as a fragment of their own ("Tunde proposed! On Christmas Eve!",
"they're getting married! In June."), take the tense of the clause before."""
_FILLER_WORDS = (
    "on at in the around about maybe like yeah yes oh just only actually back since from "
    "morning afternoon arvo evening night "
    "of sometime early late it that was were think i um uh and or so no wait sorry mean meant rather "
    "after before right"
)
_FILLER = frozenset(_FILLER_WORDS.split())
"""Words a date said as a fragment ("on Sunday.", "oh, on the 23rd") comes with."""


def _fragment_tense(text: str, start: int, end: int) -> int:
    """The tense of the clause before a date said as a fragment of its own ("Declan
    and I broke up. on Sunday."): the date goes with it; 0 when the date's clause
    says more than filler words. A correction ("last Saturday, no wait, Sunday") goes
    with the clause the filler follows."""
    left, right = _clause_around(text, start, end)
    rest = re.findall(r"[a-z']+", (text[left:start] + " " + text[end:right]).lower())
    if left == 0 or not set(rest) <= _FILLER:
        return 0
    before = text[:left].rstrip(" .!?;,:")
    while before:
        begins = max([0, *(m.end() for m in _CLAUSE.finditer(before))])
        clause = before[begins:]
        if not set(re.findall(r"[a-z']+", clause.lower())) <= _FILLER:
            return _tense_of(clause)
        shorter = before[:begins].rstrip(" .!?;,:")
        before = shorter if len(shorter) < len(before) else before[:-1]  # an emoji's end
    return 0


_TO_A_DAY_OF = re.compile(
    r"\s*(?:-|–|to|until|till|through|thru)\s*(?:the\s+)?[0-3]?\d(?:st|nd|rd|th)?\s+(?:of\s+)?"
    + _MONTH,
    re.IGNORECASE,
)


def _range_to_month(match: re.Match[str], said: date, tense: int) -> str | None:
    """ "the 8th to the 12th of March": a bare day that opens a stretch ending on a day
    with its month is in that month."""
    found = _TO_A_DAY_OF.match(match.string, match.end())
    month = _MONTH_INDEX.get(found["mon"].lower().rstrip(".")) if found else None
    if month is None:
        return None
    day = _nearest_year(month, int(match.group("day")), said, tense)
    return format_day(day) if day else None


_SOON = re.compile(
    r"\b(?:will|'ll|’ll|shall|going to|gonna|now|tomorrow|next|soon)\b", re.IGNORECASE
)
"""What says a sentence speaks of what is ahead (its deadlines and plans may be
past ones: "thursday, like 2 hours before the deadline")."""
_PASSIVE_NOW = re.compile(r"(?:\b(?:is|are|am)|['’](?:s|re))\s+\w+ed\b", re.IGNORECASE)
"""A passive in the present ("the test is booked for the 8th")."""
_SENTENCE_END = re.compile(r"[.!?]+(?:\s|$)")


def _sentence_tense(text: str, start: int, end: int) -> int:
    """The tense of the sentence around a day whose own clause says none ("Mateo sent
    in his UT and A&M applications on Tuesday", "Emergency vet Wednesday night,
    they had to go in"): the nearest of its words that say one."""
    left = max([0, *(m.end() for m in _SENTENCE_END.finditer(text, 0, start))])
    ends = _SENTENCE_END.search(text, end)
    right = ends.start() if ends else len(text)
    # "booked", "planned" and "is booked" are no past
    return _nearest_of(
        text[left:start], text[end:right], ((-1, _PAST), (1, _SOON)), (_FUTURE, _PASSIVE_NOW)
    )


def _until_now(text: str, start: int, end: int) -> bool:
    """Whether the duration ``text[start:end]`` lasts until the moment of speaking: its
    clause is in the present perfect ("I've had them for 3 years") or it is
    followed by "now" ("for two years now")."""
    if re.match(r"\s*now\b", text[end:], re.IGNORECASE):
        return True
    before = text[_clause_around(text, start, end)[0] : start]
    return bool(_UNTIL_NOW.search(before)) and not _FUTURE.search(before)


def _day_in(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


LIKELY_PAST = -2
"""Tense of a clause that says none but answers a question about the past."""
PAST_REACH_DAYS = 62
"""How far back a month and day without a year is read as past for such a clause."""


def _nearest_year(
    month: int, day: int, said: date, tense: int, weekday: int | None = None
) -> date | None:
    """The date ``month``/``day`` within half a year of ``said``, nudged by tense; said
    with a ``weekday`` ("Thursday 9th April"), the nearest year it falls on that day."""
    options = [
        d for y in (said.year - 1, said.year, said.year + 1) if (d := _day_in(y, month, day))
    ]
    if weekday is not None and any(d.weekday() == weekday for d in options):
        return min(
            (d for d in options if d.weekday() == weekday), key=lambda d: abs((d - said).days)
        )
    if not options:
        return None
    best = min(options, key=lambda d: abs((d - said).days))
    if tense == LIKELY_PAST:
        # an answer about the past ("the dinner was on May 3"): the date just
        # gone, unless that is months back and a plan reads better ("Closing got
        # pushed to January 8", said in November)
        earlier = [d for d in options if d <= said]
        if earlier and max(earlier) >= said - timedelta(days=PAST_REACH_DAYS):
            return max(earlier)
        tense = 0
    if tense == 0 and best < said - timedelta(days=30):
        # Said without a tense ("It's May 19", "a trip for November 14"): a plan,
        # unless it was only days ago.
        later = [d for d in options if d >= said]
        best = min(later) if later else best
    if tense < 0 and best > said + timedelta(days=7):
        earlier = [d for d in options if d <= said]
        if earlier and not far_past(max(earlier), best, said):
            best = max(earlier)
    elif tense > 0 and best < said - timedelta(days=7):
        later = [d for d in options if d >= said]
        best = min(later) if later else best
    return best


def _weekday(said: date, weekday: int, direction: int, *, strictly: bool = True) -> date:
    if direction < 0:
        delta = (said.weekday() - weekday) % 7 or (7 if strictly else 0)
        return said - timedelta(days=delta)
    delta = (weekday - said.weekday()) % 7 or (7 if strictly else 0)
    return said + timedelta(days=delta)


WEEKDAY_DAY_MONTHS = 3
"""How many months either way "Tuesday the 3rd" is looked for (the nearest 3rd that
is a Tuesday)."""


def _day_of_month(said: date, day: int, direction: int, weekday: int | None) -> date | None:
    candidates = []
    # a weekday with the day ("Tuesday the 3rd") may be months off: the 3rd that is a Tuesday
    reach = WEEKDAY_DAY_MONTHS if weekday is not None else 1
    for offset in range(-reach, reach + 1):
        year, month = _add_months(said.year, said.month, offset)
        found = _day_in(year, month, day)
        if found is not None and (weekday is None or found.weekday() == weekday):
            candidates.append(found)
    if not candidates:
        return None
    nearest = min(candidates, key=lambda d: abs((d - said).days))
    # A weekday with the day ("Monday the 26th") names one date whatever the tense says.
    fallback = nearest if weekday is not None else None
    if direction < 0:
        before = [d for d in candidates if d <= said]
        return max(before) if before else fallback
    after = [d for d in candidates if d >= said]
    if direction > 0 or after:
        return min(after) if after else fallback
    return nearest


def _resolve(
    kind: str, match: re.Match[str], said: date, tense: int, weekday: int | None = None
) -> str | None:
    """The date ``match`` (of pattern ``kind``) means, said on ``said``; ``weekday``:
    the day of the week said just before it ("Thursday 9th April")."""
    groups = {k: (v.lower() if isinstance(v, str) else v) for k, v in match.groupdict().items()}
    if kind in ("yesterday", "last_night"):
        return format_day(said - timedelta(days=1))
    if kind == "day_before_yesterday":
        return format_day(said - timedelta(days=2))
    if kind == "tomorrow":
        return format_day(said + timedelta(days=1))
    if kind == "day_after_tomorrow":
        return format_day(said + timedelta(days=2))
    if kind == "today":
        return format_day(said)
    if kind == "before_last":  # "the Thursday before last", "the week before last"
        unit = groups.get("unit")
        if unit is None:
            return format_day(_weekday(said, _WEEKDAY_INDEX[groups["wd"]], -1) - timedelta(weeks=1))
        if unit == "week":
            return f"the week of {format_day(said - timedelta(days=said.weekday(), weeks=2))}"
        if unit == "weekend":
            saturday = _coming_saturday(said) - timedelta(weeks=2)
            return f"the weekend of {format_day(saturday)}"
        if unit == "month":
            return format_month(*_add_months(said.year, said.month, -2))
        return str(said.year - 2)
    if kind in ("ago", "in_n", "from_now"):
        count = _number(groups.get("n"))
        if count is None:
            return None
        sign = -1 if kind == "ago" else 1
        unit = groups["unit"]
        if unit == "fortnight":  # two weeks
            unit, count = "week", 2 * count
        if groups.get("tomorrow"):  # "a week from tomorrow"
            said += timedelta(days=1)
        if unit == "day":
            return format_day(said + timedelta(days=sign * count))
        if unit == "weekend" and kind == "ago":  # "two weekends ago": that weekend's Saturday
            saturday = _coming_saturday(said) - timedelta(weeks=count)
            return f"the weekend of {format_day(saturday)}"
        if unit in ("week", "weekend"):
            moment = said + timedelta(weeks=sign * count)
            return format_day(moment) if kind == "from_now" else f"the week of {format_day(moment)}"
        if unit == "month":
            return format_month(*_add_months(said.year, said.month, sign * count))
        return str(said.year + sign * count)
    if kind == "lasting":  # "for 3 years" until now: since when
        count = _number(groups.get("n"))
        if count is None:
            return None
        since = "since about" if groups.get("about") else "since"
        unit = groups["unit"]
        if unit == "day":
            return f"{since} {format_day(said - timedelta(days=count))}"
        if unit == "week":
            return f"{since} the week of {format_day(said - timedelta(weeks=count))}"
        if unit == "month":
            return f"{since} {format_month(*_add_months(said.year, said.month, -count))}"
        return f"{since} {said.year - count}"
    if kind in ("month_day_year", "day_month_year"):
        return None  # already absolute
    if kind == "weekday_week":  # "Sunday week": a week after the coming Sunday
        return format_day(_weekday(said, _WEEKDAY_INDEX[groups["wd"]], 1) + timedelta(days=7))
    if kind == "weekday_near_holiday":  # "the Tuesday after Labor Day"
        holiday = resolve_holiday(groups["hol"], groups.get("rel"), said, tense)
        if holiday is None:
            return None
        step = 1 if groups["side"] == "after" else -1
        return format_day(_weekday(holiday, _WEEKDAY_INDEX[groups["wd"]], step))
    if kind == "month_day_range":  # "july 12 to 19": one stretch of days
        month, day, last = (
            _MONTH_INDEX.get(groups["mon"].rstrip(".")),
            int(groups["day"]),
            int(groups["last"]),
        )
        if month is None or not 1 <= day < last <= 31:
            return None
        found = _nearest_year(month, day, said, tense, weekday)
        end = _day_in(found.year, month, last) if found else None
        return f"{day}-{format_day(end)}" if end else None
    if kind in ("month_day", "day_month"):
        month, day = _MONTH_INDEX.get(groups["mon"].rstrip(".")), int(groups["day"])
        if month is None or not 1 <= day <= 31:
            return None
        found = _nearest_year(month, day, said, tense, weekday)
        return format_day(found) if found else None
    if kind == "day_of_rel_year":  # "the 14th of August next year"
        month = _MONTH_INDEX.get(groups["mon"].rstrip("."))
        step = {"last": -1, "this": 0, "next": 1}[groups["rel"].lower()]
        found = _day_in(said.year + step, month, int(groups["day"])) if month else None
        return format_day(found) if found else None
    if kind == "month_of_rel_year":  # "February last year"
        month = _MONTH_INDEX.get(groups["mon"].rstrip("."))
        step = {"last": -1, "this": 0, "next": 1}[groups["rel"].lower()]
        return format_month(said.year + step, month) if month else None
    if kind in ("weekday_day", "day_only"):
        day = int(groups["day"])
        if not 1 <= day <= 31:
            return None
        weekday = _WEEKDAY_INDEX.get(groups.get("wd") or "")
        found = _day_of_month(said, day, tense, weekday)
        return format_day(found) if found else None
    if kind == "rel_weekend":
        rel = groups["rel"]
        this_saturday = _coming_saturday(said)
        if rel in ("last", "this past"):
            saturday = this_saturday - timedelta(days=7)
            if rel == "this past" and said.weekday() >= 5:
                saturday = this_saturday
        elif rel == "next":
            saturday = this_saturday + timedelta(days=7)
        elif rel == "weekend after next":
            saturday = this_saturday + timedelta(days=14)
        else:
            saturday = this_saturday
        return f"the weekend of {format_day(saturday)}"
    if kind == "same_day":  # "this day last year": that day of the year, a year off
        year = said.year + (1 if groups["rel"] == "next" else -1)
        found = _day_in(year, said.month, said.day) or _day_in(year, said.month, said.day - 1)
        return format_day(found) if found else None
    if kind == "rel_unit":
        rel, unit = groups["rel"], groups["unit"]
        step = {"last": -1, "this past": -1, "this": 0, "next": 1}[rel]
        if unit == "week":
            kind_word = "before" if step < 0 else "after" if step > 0 else "of"
            return f"the week {kind_word} {format_day(said)}"
        if unit == "month":
            return format_month(*_add_months(said.year, said.month, step))
        return str(said.year + step)
    if kind in ("weekday_of_week", "week_weekday"):  # "thursday of next week"
        monday = said - timedelta(days=said.weekday())
        weeks = {"last": -1, "this": 0, "next": 1}[groups["rel"].lower()]
        return format_day(monday + timedelta(days=7 * weeks + _WEEKDAY_INDEX[groups["wd"]]))
    if kind in ("rel_weekday", "weekday"):
        rel = groups.get("rel") or ""
        weekday = _WEEKDAY_INDEX[groups["wd"]]
        if rel in ("last", "this past") or (rel in ("on", "") and tense < 0):
            return format_day(_weekday(said, weekday, -1))
        if rel == "next":
            return format_day(_weekday(said, weekday, 1))
        ahead = _weekday(said, weekday, 1, strictly=False)
        if rel in ("on", "") and tense == 0:  # "sunday. on facetime which was grim"
            back = _weekday(said, weekday, -1)  # the nearer of the two, the coming one if as near
            return format_day(back if (said - back).days < (ahead - said).days else ahead)
        return format_day(ahead)  # a plan ("this Friday"): the coming one
    if kind == "rel_season":
        rel, season = groups["rel"], groups["season"]
        month = _SEASONS[season]
        year = said.year
        if rel == "last":
            year = year - 1 if said.month < month + 3 or season == "winter" else year
        elif rel == "next":
            year = year + 1 if said.month >= month else year
        return f"{season} {year}"
    if kind == "holiday":  # "last Easter", "over Memorial Day weekend"
        holiday = resolve_holiday(groups["hol"], groups.get("rel"), said, tense)
        return None if holiday is None else format_day(holiday)
    if kind == "in_month":
        rel, month = groups["rel"], _MONTH_INDEX.get(groups["mon"].rstrip("."))
        if month is None:
            return None
        if tense == 0 and _SCHEDULED.search(match.string, 0, match.start()):
            tense = 1  # "the trip is in November": when it is set for, the coming one
        if rel in ("last", "since") or (rel not in ("next", "until", "by", "to") and tense < 0):
            year = said.year if month <= said.month else said.year - 1
            if rel == "last" and month == said.month:
                year -= 1
        elif rel in ("next", "until", "by", "to") or tense > 0:
            year = said.year if month >= said.month else said.year + 1
            if rel == "next" and month == said.month:
                year += 1
        else:
            year = (
                said.year
                if abs(month - said.month) <= 6
                else (said.year + 1 if month < said.month else said.year - 1)
            )
        return format_month(year, month)
    return None


NEAR_DAY_BEFORE = 7
"""How many days before a day said in an earlier sentence a bare day may be to be in
its month ("it is the 21st. the 20th was the first option")."""


def _same_month_as_before(
    text: str, start: int, match: re.Match[str], spans: list[tuple[int, int, str]]
) -> str | None:
    """ "November 21, not the 14th": a bare day after a dated day in the same sentence
    is in that month; after one in an earlier sentence of the message, when it comes
    later in the month or within :data:`NEAR_DAY_BEFORE` days before it ("stay till
    13 March. so I start on the 16th now")."""
    day = int(match.group("day"))
    before = _day_said_before(text, start, spans)
    if before is None:
        before = _day_said_before(text, start, spans, whole=True)
        if before is not None and day < before.day - NEAR_DAY_BEFORE:
            return None
    found = before and _day_in(before.year, before.month, day)
    return format_day(found) if found else None


_RESOLVED_MONTH = re.compile(r"(?P<mon>[A-Z][a-z]+) (?P<year>\d{4})")
"""A month as :func:`format_month` writes it."""


def _in_the_month_said_before(
    spans: list[tuple[int, int, str]],
    kinds: Mapping[int, str],
    bare: Sequence[tuple[int, re.Match[str], int]],
) -> tuple[list[tuple[int, int, str]], set[int]]:
    """``spans`` with each bare day that comes right after a month said in the message
    ("what if I came in August instead? like the 23rd") in that month; and where the
    days so placed start."""
    starts = sorted(span[0] for span in spans)
    read = {start: resolved for start, _end, resolved in spans}
    moved: dict[int, str] = {}
    for start, match, _tense in bare:
        earlier = [at for at in starts if at < start]
        if not earlier or kinds.get(earlier[-1]) != "in_month":
            continue
        month = _RESOLVED_MONTH.fullmatch(read[earlier[-1]])
        number = _MONTH_INDEX.get(month["mon"].lower()) if month else None
        found = _day_in(int(month["year"]), number, int(match["day"])) if month and number else None
        if found is not None:
            moved[start] = format_day(found)
    return [(a, b, moved.get(a, r)) for a, b, r in spans], set(moved)


_RESOLVED_DAY = re.compile(r"(?P<day>\d{1,2}) (?P<mon>[A-Z][a-z]+) (?P<year>\d{4})")
"""A day as :func:`format_day` writes it, inside what a date before was resolved to."""


def _day_said_before(
    text: str, start: int, spans: list[tuple[int, int, str]], *, whole: bool = False
) -> date | None:
    """The day the last date resolved before ``start`` in its sentence (``whole``: in
    the text) says, if it says one ("November 21 (21 November 2023)", "Memorial Day
    (26 May 2025)")."""
    sentence_start = (
        0 if whole else max(text.rfind(".", 0, start), text.rfind("!", 0, start), -1) + 1
    )
    earlier = [(end, resolved) for begin, end, resolved in spans if sentence_start <= begin < start]
    return resolved_day(max(earlier)[1]) if earlier else None


def resolved_day(resolved: str) -> date | None:
    """The day a resolved date's text says, if it says one ("21 November 2023")."""
    found = _RESOLVED_DAY.search(resolved)
    month = _MONTH_INDEX.get(found["mon"].lower()) if found else None
    return _day_in(int(found["year"]), month, int(found["day"])) if found and month else None


NEAR_DAYS = 3
"""How far from a day said before "the Sunday" may be to be that day's Sunday."""
_AFTER_IT = re.compile(
    r"\s+after\b(?!\s+(?:the|that|this|my|your|his|her|our|their|\w+['’]s)\b)", re.IGNORECASE
)
"""A weekday followed by "after" and nothing it is after: after the day said before."""
_THE_BEFORE = re.compile(r"\bthe\s+$", re.IGNORECASE)


def _that_weekday_near_before(
    text: str, start: int, match: re.Match[str], spans: list[tuple[int, int, str]]
) -> str | None:
    """ "over Memorial Day weekend, on the Sunday": "the" weekday after a dated day in
    the same sentence is that day's, within :data:`NEAR_DAYS`; one said right after
    it ("it is the 21st, Thursday") is that day, when it falls on it."""
    right_before = [
        r for _, end, r in spans if end <= start and text[end:start] in (" ", ",", ", ")
    ]
    day = resolved_day(right_before[-1]) if right_before else None
    if day is not None and day.weekday() == _WEEKDAY_INDEX[match.group("wd").lower()]:
        return format_day(day)
    if not _THE_BEFORE.search(text, max(0, start - 5), start):
        return None
    weekday = _WEEKDAY_INDEX[match.group("wd").lower()]
    if _AFTER_IT.match(text, match.end()):  # "they rang me the monday after"
        day = _day_said_before(text, start, spans, whole=True)
        return (
            None
            if day is None
            else format_day(day + timedelta(days=(weekday - day.weekday()) % 7 or 7))
        )
    day = _day_said_before(text, start, spans)
    if day is None:
        # "The operation went well on the 23rd. I came home on the Saturday": the
        # first of that weekday after a day an earlier sentence dates
        day = _day_said_before(text, start, spans, whole=True)
        if day is None:
            return None
        return format_day(day + timedelta(days=(weekday - day.weekday()) % 7 or 7))
    for offset in sorted(range(-NEAR_DAYS, NEAR_DAYS + 1), key=abs):
        near = day + timedelta(days=offset)
        if near.weekday() == weekday:
            return format_day(near)
    return None


def resolve_relative_dates(
    text: str,
    said_at: datetime | date,
    *,
    past: bool = False,
    days_said: Mapping[int, date] | None = None,
) -> str:
    """``text`` with each relative or partial date followed by the date it means,
    in parentheses.

    Expressions already followed by a parenthesis are left alone, so resolving
    twice changes nothing. Unknown or absolute expressions are kept as they are.
    ``past``: the text answers a question about the past ("did you have a good
    birthday?"), so a clause that says nothing of its tense speaks of the past
    ("the best. dinner at Fet-Fisk on friday" is the Friday before).
    ``days_said``: the days the conversation named with their month before this
    text (see :func:`days_named`), by day of the month: a bare "the 28th" is the
    28 November said before ("Landing on 28 November" … "they cancelled the
    28th"), when that day lies within :data:`DAY_SAID_BEFORE` days before the
    moment of speaking or a year after it; and a bare day beside it in the same
    text ("it's the 15th not the 8th", after "the 8th of August") is in its month.
    """
    if _MAY_HOLD_A_DATE.search(text) is None:  # most messages: no pattern can match
        return text
    said = said_at.date() if isinstance(said_at, datetime) else said_at
    spans: list[tuple[int, int, str]] = []
    taken: list[tuple[int, int]] = []
    kinds: dict[int, str] = {}  # where a date starts -> its kind
    bare: list[tuple[int, re.Match[str], int]] = []  # bare days ("the 28th")
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(start < b and a < end for a, b in taken):
                continue
            if text[end : end + 2].lstrip().startswith("("):
                continue
            if kind in ("month_day_year", "day_month_year"):
                taken.append((start, end))
                continue
            tense = (
                _tense(text, start, end, near_day=kind in _NEAR_DAYS)
                or (_fragment_tense(text, start, end) if kind in _FRAGMENT_KINDS else 0)
                or (_sentence_tense(text, start, end) if kind in _NEAR_DAYS else 0)
                or ((LIKELY_PAST if kind in ("month_day", "day_month") else -1) if past else 0)
            )
            resolved = None
            if kind == "lasting" and not _until_now(text, start, end):
                continue  # "for two weeks in July": not since when
            if kind == "in_n" and _NOT_IN.search(text, max(0, start - 60), start):
                continue  # "haven't seen her in two years": for how long, not when
            if kind == "day_only":
                resolved = _same_month_as_before(text, start, match, spans) or _range_to_month(
                    match, said, tense
                )
                earlier = [begin for begin, _end, _r in spans if begin < start]
                if resolved is None or max(earlier, default=-1) in {at for at, _m, _t in bare}:
                    # unless a day the message dates says its month ("13 March ... the 16th")
                    bare.append((start, match, tense))
            elif kind == "weekday":
                resolved = _that_weekday_near_before(text, start, match, spans)
            if resolved is None:
                weekday = _weekday_before(text, start) if kind in _WITH_WEEKDAY else None
                resolved = _resolve(kind, match, said, tense, weekday)
            if resolved is None:
                continue
            taken.append((start, end))
            spans.append((start, end, resolved))
            kinds[start] = kind
    spans = _weekday_said_with_its_day(text, spans, kinds)
    if bare:
        spans, placed = _in_the_month_said_before(spans, kinds, bare)
        bare = [item for item in bare if item[0] not in placed]
    if bare:
        spans = _bare_days_known(text, said, spans, kinds, bare, days_said)
    for _start, end, resolved in sorted(spans, reverse=True):
        text = f"{text[:end]} ({resolved}){text[end:]}"
    return text


DAY_SAID_BEFORE = 31
"""How many days before the moment of speaking a day named before may lie to be what
a bare "the 28th" means (a day said to be coming may have just passed)."""
_EXPLICIT_DAY_KINDS = ("month_day_year", "day_month_year", "month_day", "day_month")


def days_named(text: str, said_at: datetime | date) -> dict[int, date]:
    """The days ``text`` names with their month ("28 November", "March 10th", "the
    8th of August 2026"), by day of the month, the last named winning; the year,
    when not said, is read as :func:`resolve_relative_dates` reads it."""
    if not _NAMES_A_MONTH.search(text):
        return {}
    said = said_at.date() if isinstance(said_at, datetime) else said_at
    found: list[tuple[int, date]] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _PATTERNS:
        if kind not in _EXPLICIT_DAY_KINDS:
            continue
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(start < b and a < end for a, b in taken):
                continue
            taken.append((start, end))
            if kind in ("month_day_year", "day_month_year"):
                month = _MONTH_INDEX.get(match["mon"].lower().rstrip("."))
                day = _day_in(int(match["year"]), month, int(match["day"])) if month else None
            else:
                tense = _tense(text, start, end)
                day = resolved_day(_resolve(kind, match, said, tense) or "")
            if day is not None:
                found.append((start, day))
    return {day.day: day for _start, day in sorted(found, key=lambda item: item[0])}


def days_line(days: Mapping[int, date]) -> str | None:
    """``days`` as a list an extraction prompt shows ("28 November 2025; 8 August
    2026"), read back by :func:`read_days`; ``None`` for none."""
    return "; ".join(format_day(day) for _number, day in sorted(days.items())) or None


def read_days(line: str | None) -> dict[int, date]:
    """The days a list of days (:func:`days_line`) names, by day of the month: what
    :func:`resolve_relative_dates` takes as ``days_said``."""
    found: dict[int, date] = {}
    for part in (line or "").split(";"):
        day = resolved_day(part.strip())
        if day is not None:
            found[day.day] = day
    return found


def names_a_bare_day(text: str) -> bool:
    """Whether ``text`` may speak of a day of the month without its month ("the
    28th"), which the days named before it may say."""
    return _BARE_DAY.search(text) is not None


_NAMES_A_MONTH = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b", re.IGNORECASE
)
_BARE_DAY = re.compile(r"\bthe [0-3]?\d(?:st|nd|rd|th)?\b", re.IGNORECASE)


_NOT_RELATIVE = frozenset({"day_only", "weekday", "weekday_day", *_EXPLICIT_DAY_KINDS})
NEAR_OTHER_DATE = 10
"""How near a bare day read alone may be to another date the text says ("next week!!
well, the 18th", "tomorrow's the 6th") for that reading to stand."""
_SINCE = re.compile(r"\b(?:since|from)\s+$", re.IGNORECASE)
_ON = re.compile(r"\bon\s+$", re.IGNORECASE)


def _bare_days_known(
    text: str,
    said: date,
    spans: list[tuple[int, int, str]],
    kinds: Mapping[int, str],
    bare: Sequence[tuple[int, re.Match[str], int]],
    days_said: Mapping[int, date] | None,
) -> list[tuple[int, int, str]]:
    """``spans`` with the bare days of ``text`` (``bare``: where each starts, its
    match and its tense) read as the days the conversation named before it or the
    text names itself ("the 3rd not the 30th. 3rd of March"), and each other bare
    day beside one so read in the month that puts it nearest ("it's the 15th not
    the 8th" of August, "moved on the 30th, started on the 1st" of June)."""
    earliest = said - timedelta(days=DAY_SAID_BEFORE)
    latest = said + timedelta(days=366)
    known = {d: day for d, day in (days_said or {}).items() if earliest <= day <= latest}
    known.update(days_named(text, said))
    read = {start: resolved for start, _end, resolved in spans}
    others = [  # what "tomorrow", "next week" say, not a weekday or a day named
        day
        for start, _end, resolved in spans
        if kinds.get(start) not in _NOT_RELATIVE and (day := resolved_day(resolved)) is not None
    ]
    anchored: dict[int, date] = {}
    for start, match, tense in bare:
        day = known.get(int(match.group("day")))
        if day is None:
            continue
        alone = resolved_day(read.get(start, ""))
        if day != alone and alone is not None:
            if any(abs((alone - other).days) <= NEAR_OTHER_DATE for other in others):
                continue  # "tomorrow's the 6th": the day the text says it is
            if (tense > 0 and day < said) or (day > said and _SINCE.search(text, 0, start)):
                continue  # "from the 18th" is still to come, "since the 17th" has been
            on = _ON.search(text, 0, start) or text[start : start + 3].lower() == "on "
            if tense < 0 and day > said and on:
                continue  # "finished on the 5th" has been ("cancelled the 28th" may not)
        anchored[start] = day
    if not anchored:
        return spans
    numbers = {start: int(match.group("day")) for start, match, _tense in bare}
    kept: list[tuple[int, int, str]] = []
    for start, end, resolved in spans:
        if start in anchored:
            resolved = format_day(anchored[start])
        elif start in numbers:
            nearest = anchored[min(anchored, key=lambda at: abs(at - start))]
            moved = _day_nearest(nearest, numbers[start])
            if moved is not None:  # "it's the 15th not the 8th": the 8th's month
                resolved = format_day(moved)
        kept.append((start, end, resolved))
    return kept


def _day_nearest(anchor: date, number: int) -> date | None:
    """The day ``number`` of the month nearest ``anchor``: its own month ("the 15th
    not the 8th" of August), or the one before or after when that is nearer
    ("moved on the 30th, started on the 1st" of June is 30 May)."""
    months = [(anchor.year, anchor.month)]
    before = anchor.replace(day=1) - timedelta(days=1)
    after = anchor.replace(day=28) + timedelta(days=4)
    months += [(before.year, before.month), (after.year, after.month)]
    days = [day for y, m in months if (day := _day_in(y, m, number)) is not None]
    return min(days, key=lambda day: abs((day - anchor).days), default=None)


_APPOSITION = re.compile(
    r"\s*(?:(?:btw|by the way|i mean|sorry|actually)\s*)?,?\s*(?:the\s+)?", re.IGNORECASE
)
"""What may stand between a weekday and the day of the month it is ("last Saturday
btw, the 8th")."""
SAME_WEEKDAY_REACH = 14
"""How far apart a weekday's reading and the day said after it may be to be one day."""


def _weekday_said_with_its_day(
    text: str, spans: list[tuple[int, int, str]], kinds: dict[int, str]
) -> list[tuple[int, int, str]]:
    """``spans`` with a weekday followed by the day of the month it is ("our party was
    last Saturday btw, the 8th", said on the 16th) read as that day, when the day
    falls on that weekday within :data:`SAME_WEEKDAY_REACH` days of its reading."""
    ordered = sorted(spans)
    for at in range(len(ordered) - 1):
        (a0, a1, first), (b0, _b1, second) = ordered[at], ordered[at + 1]
        if kinds.get(a0) not in ("weekday", "rel_weekday") or kinds.get(b0) != "day_only":
            continue
        if not _APPOSITION.fullmatch(text, a1, b0):
            continue
        weekday_day, day = resolved_day(first), resolved_day(second)
        if (
            weekday_day is not None
            and day is not None
            and weekday_day.weekday() == day.weekday()
            and abs((weekday_day - day).days) <= SAME_WEEKDAY_REACH
        ):
            ordered[at] = (a0, a1, second)
    return ordered


_WITH_WEEKDAY = frozenset({"month_day", "day_month", "month_day_range"})
_WEEKDAY_BEFORE = re.compile(r"\b" + _WEEKDAY + r",?\s+(?:the\s+)?$", re.IGNORECASE)


def _weekday_before(text: str, start: int) -> int | None:
    """The day of the week said right before a date ("Thursday 9th April",
    "Saturday, October 21st"), if any."""
    found = _WEEKDAY_BEFORE.search(text[max(0, start - 16) : start])
    return _WEEKDAY_INDEX[found["wd"].lower()] if found else None


_QUESTION = re.compile(r"[^.!?]*\?")
_TAG_QUESTION = re.compile(
    r"[^.!?]*\b(?:you|u|ya|your)\b[^.!?]*(?:,\s*|\s)(?:right|yeah|yea|innit|correct)\s*$",
    re.IGNORECASE,
)
"""A message ending in a question tag to the other without its "?" ("you started
Monday right")."""


_DATED_DAYS = [p for kind, p in _PATTERNS if kind in ("month_day_year", "day_month_year")]
"""The patterns of a day with its month and year ("October 13, 2023", "13 October 2023")."""
_ASKED_MONTH = re.compile(r"\b" + _MONTH + r",? (?P<year>\d{4})\b", re.IGNORECASE)


@dataclass(frozen=True)
class Period:
    """A stretch of days a question names ("on October 13, 2023": that day; "in
    August 2023": that month), ``start`` included, ``end`` not."""

    start: date
    end: date

    def epoch_ms(self) -> tuple[int, int]:
        """``start`` and ``end`` in milliseconds since the epoch (their UTC midnights)."""
        return (
            epoch_ms(datetime.combine(self.start, datetime.min.time())),
            epoch_ms(datetime.combine(self.end, datetime.min.time())),
        )


_ORDINAL_WEEK = re.compile(
    r"\b(?P<which>first|second|third|fourth|last) (?P<unit>weekend|week|two weeks|half) of "
    + _MONTH
    + r",? (?P<year>\d{4})\b",
    re.IGNORECASE,
)
_PART_OF_MONTH = re.compile(
    r"\b(?P<part>early|mid|late|(?:the )?(?:beginning|start|middle|end) of) "
    + _MONTH
    + r",? (?P<year>\d{4})\b",
    re.IGNORECASE,
)
_AROUND_DAY = re.compile(
    r"\bthe (?P<unit>week|weekend|day) (?P<side>before|after|of) (?:(?P<date>"
    + _MONTH
    + " "
    + _DAY
    + r",? (?P<year>\d{4}))|(?P<date2>"
    + _DAY.replace("day>", "day2>")
    + " (?:of )?"
    + _MONTH.replace("mon>", "mon2>")
    + r",? (?P<year2>\d{4})))",
    re.IGNORECASE,
)
_BETWEEN_DAYS = re.compile(
    r"\bbetween "
    + _MONTH
    + " "
    + _DAY
    + r" and (?:"
    + _MONTH.replace("mon>", "mon2>")
    + " )?"
    + _DAY.replace("day>", "day2>")
    + r",? (?P<year>\d{4})\b",
    re.IGNORECASE,
)
_ORDINALS = {"first": 0, "second": 1, "third": 2, "fourth": 3}


def _month_bounds(year: int, month: int) -> tuple[date, date]:
    following_year, following = _add_months(year, month, 1)
    return date(year, month, 1), date(following_year, following, 1)


def _part_of_month(text: str) -> Period | None:
    """A stretch of a month a question names: "the first weekend of October 2023",
    "the last week of August 2023", "the last two weeks of", "the first half of",
    "early", "mid", "late", "the end of"."""
    found = _ORDINAL_WEEK.search(text)
    if found is not None:
        month = _MONTH_INDEX.get(found["mon"].lower().rstrip("."))
        if month is None:
            return None
        first, end = _month_bounds(int(found["year"]), month)
        which, unit = found["which"].lower(), found["unit"].lower()
        if unit == "weekend":
            saturdays = [first + timedelta(days=(5 - first.weekday()) % 7)]
            while saturdays[-1] + timedelta(weeks=1) < end:
                saturdays.append(saturdays[-1] + timedelta(weeks=1))
            pick = len(saturdays) - 1 if which == "last" else _ORDINALS[which]
            if pick >= len(saturdays):
                return None
            return Period(saturdays[pick], saturdays[pick] + timedelta(days=2))
        days = {"week": 7, "two weeks": 14}.get(unit, (end - first).days // 2)
        if which == "last":
            return Period(end - timedelta(days=days), end)
        start = first + timedelta(days=days * _ORDINALS[which])
        return Period(start, min(start + timedelta(days=days), end)) if start < end else None
    found = _PART_OF_MONTH.search(text)
    if found is not None:
        month = _MONTH_INDEX.get(found["mon"].lower().rstrip("."))
        if month is None:
            return None
        first, end = _month_bounds(int(found["year"]), month)
        part = found["part"].lower().split()[-2 if " of" in found["part"].lower() else -1]
        if part in ("early", "beginning", "start"):
            return Period(first, first + timedelta(days=10))
        if part in ("mid", "middle"):
            return Period(first + timedelta(days=9), first + timedelta(days=20))
        return Period(end - timedelta(days=11), end)
    found = _AROUND_DAY.search(text)
    if found is not None:
        mon = found["mon"] or found["mon2"]
        day_text, year = found["day"] or found["day2"], found["year"] or found["year2"]
        month = _MONTH_INDEX.get(mon.lower().rstrip("."))
        day = _day_in(int(year), month, int(day_text)) if month else None
        if day is None:
            return None
        unit, side = found["unit"].lower(), found["side"].lower()
        if side == "of":  # "the week of 2 June 2023": the week that starts that day
            return Period(day, day + timedelta(days={"day": 1, "weekend": 2}.get(unit, 7)))
        if unit == "day":
            near = day + timedelta(days=-1 if side == "before" else 1)
            return Period(near, near + timedelta(days=1))
        if unit == "weekend":  # the Saturday before (or after) and its Sunday
            step = -1 if side == "before" else 1
            saturday = day + timedelta(days=step)
            while saturday.weekday() != 5:
                saturday += timedelta(days=step)
            return Period(saturday, saturday + timedelta(days=2))
        if side == "before":
            return Period(day - timedelta(days=7), day)
        return Period(day + timedelta(days=1), day + timedelta(days=8))
    found = _BETWEEN_DAYS.search(text)
    if found is not None:
        month = _MONTH_INDEX.get(found["mon"].lower().rstrip("."))
        other = _MONTH_INDEX.get((found["mon2"] or found["mon"]).lower().rstrip("."))
        year = int(found["year"])
        first_day = _day_in(year, month, int(found["day"])) if month else None
        last = _day_in(year, other, int(found["day2"])) if other else None
        if first_day is None or last is None or last < first_day:
            return None
        return Period(first_day, last + timedelta(days=1))
    return None


@functools.lru_cache(maxsize=1024)
def asked_period(text: str) -> Period | None:
    """The stretch of days a question names, if any: a day ("on 9 November 2022"),
    a part of a month ("the first weekend of October 2023", "late May 2023",
    "between August 11 and August 15 2023") or a month ("in August 2023"), each
    with its year."""
    part = _part_of_month(text)
    if part is not None:
        return part
    for pattern in _DATED_DAYS:
        found = pattern.search(text)
        month = _MONTH_INDEX.get(found["mon"].lower().rstrip(".")) if found else None
        day = _day_in(int(found["year"]), month, int(found["day"])) if found and month else None
        if day is not None:
            return Period(day, day + timedelta(days=1))
    found = _ASKED_MONTH.search(text)
    month = _MONTH_INDEX.get(found["mon"].lower().rstrip(".")) if found else None
    if found is None or month is None:
        return None
    year, following = _add_months(int(found["year"]), month, 1)
    return Period(date(int(found["year"]), month, 1), date(year, following, 1))


_HOW_THINGS_STOOD = re.compile(
    r"\b(?:as of|as at|by|since|from|until|till|before|after|during|throughout|over)\s+"
    r"(?:(?:early|mid|late)[\s-]+|the (?:first|last|start|end|beginning|middle) (?:\w+ ){0,2}of\s+)?"
    r"(?:\d{1,2}\s+)?" + _MONTH + r"(?![\w'’])",
    re.IGNORECASE,
)


def asks_how_things_stood(text: str) -> bool:
    """Whether a question asks how things stood by or over a stretch of days ("as
    of October 2024", "by February 2025", "during April 2022"), not what happened
    in it: what was said before the stretch tells it too."""
    return _HOW_THINGS_STOOD.search(text) is not None


_NOW = re.compile(
    r"\b(?:now|current|currently|these days|nowadays|at the moment|still|anymore|any more|"
    r"latest|most recent|most recently|right now|so far|final|finally|ended up|end up|"
    r"in the end|after all|rescheduled|postponed|revised|last change|"
    r"what(?:'s|\u2019s| is) new|anything new|any news|updates? (?:on|about)|catch me up)\b",
    re.IGNORECASE,
)


_WHEN = re.compile(
    r"^\W*(?:when\b|since when\b|how long ago\b|"
    r"(?:on |in |at )?(?:what|which) (?:date|day|year|month|time|week)\b|"
    r"(?:what|which)(?:['’]s| is| was| are| were)\b[^?]*\b(?:start|starting|end|due|closing|"
    r"release|move|moving|wedding|exam|court|launch|completion|expected|new|final) dates?\b)",
    re.IGNORECASE,
)


def asks_when(text: str) -> bool:
    """Whether a question asks about time ("When did ...", "On what date ...",
    "What day ...")."""
    return _WHEN.search(text) is not None


def asks_about_now(text: str) -> bool:
    """Whether a question asks about the present or latest state ("Where does Wren
    work now?", "What did the project end up being about?")."""
    return _NOW.search(text) is not None


_WHEN_ALONE = frozenset(
    {"when", "wait", "so", "and", "oh", "omg", "ok", "okay", "but", "wow", "wat"}
)


def asks_when_alone(text: str) -> bool:
    """Whether a message's last question is a bare "when?" ("omg congrats!! when??"):
    it asks when the news just told happened."""
    if "when" not in text.lower():  # most messages, on every remember
        return False
    questions = [q for q in _QUESTION.findall(text) if q.strip(" ?")]
    if not questions:
        return False
    said = re.findall(r"[a-z]+", questions[-1].lower())
    return "when" in said and set(said) <= _WHEN_ALONE


_NEWS_STATE = re.compile(
    r"\b(?:i'm|i am|we're|we are|i['’]m|we['’]re) (?:an? |officially |finally |now )*"
    r"(?:auntie|aunt|uncle|mom|mum|mama|dad|papa|parents|grandma|grandpa|grandparents|"
    r"homeowners?|engaged|married|graduates?|retired)\b|"
    r"\b(?:she|he|they|baby|the baby)(?:'s|['’]s| is| are|['’]re|'re) here\b|"
    r"\bit(?:'s|['’]s| is) an? (?:boy|girl)\b",
    re.IGNORECASE,
)
"""News of a state something past brought about ("I'm an auntie!!!!", "we're engaged",
"she's here"): asking "when?" about it asks when that happened."""


def tells_past(text: str) -> bool:
    """Whether a message tells of something past ("we got engaged!!", "I'm an
    auntie!!!!") and of nothing to come."""
    cleaned = _HAVE_GOT.sub(" ", text)
    told = bool(_PAST.search(cleaned)) or bool(_NEWS_STATE.search(cleaned))
    return told and not _FUTURE.search(cleaned)


def asks_about_past(text: str) -> bool:
    """Whether a message asks about something past ("lol did you have a good
    birthday though?", "how was the race?"): its last question says so."""
    tagged = _TAG_QUESTION.search(text.rstrip())  # "you started Monday right"
    questions = [tagged.group()] if tagged else _QUESTION.findall(text)
    if not questions:
        return False
    last = _HAVE_GOT.sub(" ", questions[-1])
    return bool(_PAST.search(last)) and not _FUTURE.search(last)


_TIME_WORDS = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|ago|weekend|morning|evening|afternoon|arvo|"
    r"fortnight|(?:week|month|year) before last|"
    r"(?:last|next|this|past|coming) (?:week|month|year|night|time)|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|"
    r"spring|summer|autumn|fall|winter|christmas|thanksgiving|easter|birthday|anniversary|"
    r"\d{1,2}(?:st|nd|rd|th)|\d{4}|\d{1,2}[:/.]\d{1,2}|\d{1,2} ?(?:am|pm))\b",
    re.IGNORECASE,
)


# Every match of _TIME_WORDS holds a digit or starts with one of these words (a match
# starts and ends at word boundaries, so in ASCII text its first word is a whole word).
_TIME_STARTS = frozenset(
    b"""yesterday today tonight tomorrow ago weekend morning evening afternoon arvo fortnight
    week month year last next this
    past coming monday tuesday wednesday thursday friday saturday sunday january february
    march april may june july august september october november december jan feb mar apr
    jun jul aug sep sept oct nov dec spring summer autumn fall winter christmas thanksgiving
    easter birthday anniversary""".split()
)
_NOT_ALNUM = bytes(code for code in range(128) if not chr(code).isalnum())
_ASCII_WORDS = bytes.maketrans(_NOT_ALNUM, b" " * len(_NOT_ALNUM))
_DIGIT = re.compile(r"[0-9]")


def _ascii_words(text: str) -> list[bytes] | None:
    """The lower-case alphanumeric runs of an ASCII text (None for other text)."""
    if not text.isascii():
        return None
    return text.lower().encode("ascii").translate(_ASCII_WORDS).split()


def mentions_time(text: str, words: list[bytes] | None = None) -> bool:
    """Whether ``text`` says when something happened (a date, a day, "last week", ...).

    ``words`` are the text's :func:`_ascii_words` when the caller has them.
    """
    found = words if words is not None else _ascii_words(text)
    if found is not None and _TIME_STARTS.isdisjoint(found) and not _DIGIT.search(text):
        return False  # no match can start anywhere: skip the scan of every position
    return _TIME_WORDS.search(text) is not None


_UPDATE_WORDS = re.compile(
    r"\b(?:now|anymore|any more|no longer|not anymore|actually|instead|switched|changed|"
    r"moved (?:to|up|back|out|in)|pushed (?:to|back)|postponed|rescheduled|cancell?ed|"
    r"officially|finally|ended up|turns out|update|new (?:job|place|apartment|house|role)|"
    r"started (?:at|a new)|quit|left|, not )\b",
    re.IGNORECASE,
)


_UPDATE_STARTS = frozenset(
    b"""now anymore any no not actually instead switched changed moved pushed postponed
    rescheduled canceled cancelled officially finally ended turns update new started quit
    left""".split()
)
"""The first words of every match of _UPDATE_WORDS but ", not "."""


def mentions_update(text: str, words: list[bytes] | None = None) -> bool:
    """Whether ``text`` says that something changed ("it got moved to the 21st",
    "I'm not at Deloitte anymore", "we finally closed").

    ``words`` are the text's :func:`_ascii_words` when the caller has them.
    """
    found = words if words is not None else _ascii_words(text)
    if found is not None and _UPDATE_STARTS.isdisjoint(found) and ", not " not in text.lower():
        return False  # no match can start anywhere: skip the scan of every position
    return _UPDATE_WORDS.search(text) is not None


def mentions(text: str) -> tuple[bool, bool]:
    """:func:`mentions_time` and :func:`mentions_update` of ``text``, its words split once."""
    found = _ascii_words(text)
    return mentions_time(text, found), mentions_update(text, found)


_SPOKEN_DAY = re.compile(
    r"(?:\b(?P<kind>the weekend of|the week of|the week before|the week after) )?"
    r"\b(?P<day>\d{1,2}) (?P<mon>" + "|".join(MONTHS) + r") (?P<year>\d{4})\b"
)
_SPOKEN_MONTH = re.compile(r"\b(?P<mon>" + "|".join(MONTHS) + r") (?P<year>\d{4})\b")


@functools.lru_cache(maxsize=4096)
def _spoken_of(text: str, said: date) -> tuple[Period, ...]:
    return tuple(_read_periods(text, said))


def periods_spoken_of(text: str, said_at: datetime | date) -> list[Period]:
    """The days, weeks and months a text speaks of, its relative dates resolved
    against when it was said ("I went yesterday", said on 5 December 2023: 4 December
    2023). Years and seasons are left out: they name too long a stretch to tell
    which of its days a question means. (Remembered per text: reading one takes
    about half a millisecond.)"""
    said = said_at.date() if isinstance(said_at, datetime) else said_at
    return list(_spoken_of(text, said))


def _read_periods(text: str, said_at: date) -> list[Period]:
    resolved = resolve_relative_dates(text, said_at)
    found: list[Period] = []
    taken: list[tuple[int, int]] = []
    for match in _SPOKEN_DAY.finditer(resolved):
        month = _MONTH_INDEX[match["mon"].lower()]
        day = _day_in(int(match["year"]), month, int(match["day"]))
        if day is None:
            continue
        taken.append(match.span())
        kind = match["kind"] or ""
        if kind == "the weekend of":
            found.append(Period(day, day + timedelta(days=2)))
        elif kind == "the week of":
            found.append(Period(day, day + timedelta(days=7)))
        elif kind == "the week before":
            found.append(Period(day - timedelta(days=7), day))
        elif kind == "the week after":
            found.append(Period(day + timedelta(days=1), day + timedelta(days=8)))
        else:
            found.append(Period(day, day + timedelta(days=1)))
    for match in _SPOKEN_MONTH.finditer(resolved):
        if any(a <= match.start() < b for a, b in taken):
            continue
        found.append(Period(*_month_bounds(int(match["year"]), _MONTH_INDEX[match["mon"].lower()])))
    return found
