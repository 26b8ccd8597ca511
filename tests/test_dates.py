"""Relative dates in a message are resolved against when it was said."""

from __future__ import annotations

import re
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memgraph.dates import (
    _TIME_WORDS,
    _UPDATE_WORDS,
    Period,
    asked_period,
    asks_about_now,
    asks_about_past,
    asks_how_things_stood,
    asks_when,
    asks_when_alone,
    days_named,
    mentions,
    mentions_time,
    mentions_update,
    periods_spoken_of,
    resolve_relative_dates,
    tells_past,
)
from memgraph.holidays import easter

MONDAY = date(2024, 2, 26)


def test_a_short_weekday_alone_is_another_word() -> None:
    assert resolve_relative_dates("I sat in the sun on wed", MONDAY) == "I sat in the sun on wed"


@pytest.mark.parametrize(
    ("text", "said", "expected"),
    [
        ("I went there yesterday", MONDAY, "yesterday (25 February 2024)"),
        ("see you tomorrow", MONDAY, "tomorrow (27 February 2024)"),
        # chat spellings, and a stretch counted from tomorrow
        ("see u tmrw!", MONDAY, "tmrw (27 February 2024)!"),
        ("interview is a week from tmrw", MONDAY, "a week from tmrw (5 March 2024)"),
        # a weekday told by a holiday, and a stretch of days in one month
        (
            "starting the Tuesday after Labor Day",
            date(2024, 8, 18),
            "Tuesday after Labor Day (3 September 2024)",
        ),
        ("we fly july 12 to 19", MONDAY, "july 12 to 19 (12-19 July 2024)"),
        # "already" with a present is no past: the Christmas to come
        (
            "My head is already full of Christmas.",
            date(2025, 12, 9),
            "Christmas (25 December 2025)",
        ),
        ("the conference is June 3-5", MONDAY, "June 3-5 (3-5 June 2024)"),
        ("we met 3 days ago", MONDAY, "3 days ago (23 February 2024)"),
        ("camping two weekends ago", MONDAY, "two weekends ago (the weekend of 17 February 2024)"),
        ("we moved last Saturday", MONDAY, "last Saturday (24 February 2024)"),
        # a weekday cut short, after last / this / next only
        ("last Fri I took the kids out", MONDAY, "last Fri (23 February 2024)"),
        ("joined a new group last Tues.", MONDAY, "last Tues (20 February 2024)."),
        ("we went out this past Fri", MONDAY, "this past Fri (23 February 2024)"),
        ("the party is on Saturday", MONDAY, "Saturday (2 March 2024)"),
        ("a panel thursday of next week", MONDAY, "thursday of next week (7 March 2024)"),
        ("it was Monday of last week", MONDAY, "Monday of last week (19 February 2024)"),
        ("next week on Friday we fly", MONDAY, "next week on Friday (8 March 2024)"),
        # "since" and "has been" speak of the past
        (
            "my shin has been killing me since my long run Saturday",
            MONDAY,
            "Saturday (24 February 2024)",
        ),
        # "I've got" is a present: the coming Tuesday
        (
            "I've got a first interview on tuesday",
            date(2024, 1, 26),
            "tuesday (30 January 2024)",
        ),
        ("I got the job on tuesday", date(2024, 1, 26), "tuesday (23 January 2024)"),
        # a weekday with the day names one date, whatever the tense says
        (
            "they moved my start to Monday the 26th",
            date(2024, 2, 24),
            "Monday the 26th (26 February 2024)",
        ),
        (
            "she didn't start till Tuesday the 30th",
            date(2023, 6, 4),
            "Tuesday the 30th (30 May 2023)",
        ),
        # ... though it lies months away: the 3rd that is a Tuesday
        (
            "we land Friday, August 30, and fly out Tuesday the 3rd",
            date(2024, 7, 21),
            "Tuesday the 3rd (3 September 2024)",
        ),
        (
            "the bowling one? yeah, the 15th right?",
            date(2023, 12, 4),
            "the 15th (15 December 2023)",
        ),
        ("I signed up for the race. It's May 19", date(2024, 1, 8), "May 19 (19 May 2024)"),
        # a month with "last year" is that month of the year before, not this one
        (
            "since February last year. I was employee number four",
            date(2023, 9, 12),
            "February last year (February 2022)",
        ),
        ("we're going in March of next year", date(2023, 9, 12), "March of next year (March 2024)"),
        # a weekday with the month and day is that date's, not a day of its own
        (
            "It's now Saturday October 21st, not the 14th",
            date(2023, 5, 14),
            "It's now Saturday October 21st (21 October 2023), not the 14th (14 October 2023)",
        ),
        ("on Friday, Oct. 20 at Mom's", date(2023, 5, 14), "on Friday, Oct. 20 (20 October 2023)"),
        # "supposed to" speaks of a plan
        (
            "Radiation's supposed to start around May 22",
            date(2023, 4, 29),
            "May 22 (22 May 2023)",
        ),
        # "I've been training" goes on now: the month it is for is the coming one
        (
            "I've been training for the Brooklyn Half in May, my longest run is 10 miles",
            date(2023, 3, 4),
            "in May (May 2023)",
        ),
        ("I've been to Paris in May", date(2023, 3, 4), "in May (May 2022)"),
        # a month something "is in" is when it is set for; a colon starts a new clause
        (
            "Actually we changed plans: the trip is in November now",
            date(2026, 12, 2),
            "in November (November 2027)",
        ),
        # a duration lasting until now says since when
        ("I've had them for 3 years now", date(2022, 1, 23), "for 3 years (since 2019) now"),
        (
            "I've been doing yoga for about 3 years now",
            date(2023, 6, 6),
            "for about 3 years (since about 2020)",
        ),
        ("we've been married for ten years", MONDAY, "for ten years (since 2014)"),
        ("I've been vegan for the past 6 months", MONDAY, "6 months (since August 2023)"),
        ("she's been sick for 3 days", MONDAY, "for 3 days (since 23 February 2024)"),
        ("been at it for two years now", MONDAY, "for two years (since 2022) now"),
        # an answer that is a duration alone ("How long have you been painting?")
        ("Seven years now, and I love it", MONDAY, "Seven years (since 2017) now"),
        # "before last": one more step back than "last"
        (
            "last day on the tools was the thursday before last",
            date(2022, 7, 10),
            "the thursday before last (30 June 2022)",
        ),
        (
            "moved everything over the week before last",
            date(2023, 1, 18),
            "the week before last (the week of 2 January 2023)",
        ),
        (
            "we went camping the weekend before last",
            date(2023, 1, 18),
            "the weekend before last (the weekend of 7 January 2023)",
        ),
        ("we moved the month before last", date(2023, 1, 18), "(November 2022)"),
        ("we met the year before last", MONDAY, "the year before last (2022)"),
        # a fortnight is two weeks; an arvo an afternoon
        ("I started a fortnight ago", MONDAY, "a fortnight ago (the week of 12 February 2024)"),
        ("came round last arvo with his dad", MONDAY, "last arvo (25 February 2024)"),
        ("I'll pop round this arvo", MONDAY, "this arvo (26 February 2024)"),
        # an irregular past is a past ("rang", "dug", "hung")
        # "a bit" is no past
        ("I'm a bit nervous about friday", MONDAY, "friday (1 March 2024)"),
        (
            "they rang wednesday and I signed up the same day",
            date(2022, 7, 24),
            "wednesday (20 July 2022)",
        ),
    ],
)
def test_a_relative_date_is_followed_by_the_date_it_means(
    text: str, said: date, expected: str
) -> None:
    assert expected in resolve_relative_dates(text, said)


@pytest.mark.parametrize(
    "text",
    [
        "the 21st century",
        "we live on the 3rd floor",
        "her 40th birthday",
        "for the 2nd time",
        "it happened on 12 March 2024",
        # a weekly habit names no one day
        "you still go in on Tuesdays and Thursdays right?",
        # a duration that does not last until now
        "we're going to Spain for two weeks",
        "I lived there for 5 years",
        "I've booked the cabin for two weeks",
        "I'll have been there for a year",
    ],
)
def test_an_ordinal_that_is_not_a_day_or_an_absolute_date_is_left_alone(text: str) -> None:
    assert resolve_relative_dates(text, MONDAY) == text


def test_resolving_twice_changes_nothing() -> None:
    once = resolve_relative_dates("we moved last Saturday and leave next week", MONDAY)
    assert resolve_relative_dates(once, MONDAY) == once


@given(
    st.text(alphabet=st.characters(blacklist_characters="()"), max_size=200)
    | st.lists(
        st.sampled_from(
            ["last", "next", "Saturday", "the", "15th", "May", "3", "days", "ago", "we", "met", "."]
        )
    ).map(" ".join),
    st.dates(min_value=date(1990, 1, 1), max_value=date(2090, 1, 1)),
)
def test_resolving_only_adds_dates_in_parentheses(text: str, said: date) -> None:
    resolved = resolve_relative_dates(text, said)
    assert re.sub(r" \([^()]*\)", "", resolved) == text


def test_a_text_that_says_when_is_marked_timed() -> None:
    assert mentions_time("Launch is Saturday the 22nd")
    assert mentions_time("moved everything over the week before last")
    assert mentions_time("came round last arvo")
    assert not mentions_time("the canoe is lovely")
    assert not mentions_time("a week of rain, a month of sun")


_DATE_WORDS = [
    "yesterday",
    "tomorrow",
    "today",
    "tonight",
    "last",
    "next",
    "this",
    "past",
    "coming",
    "on",
    "in",
    "since",
    "by",
    "early",
    "Saturday",
    "Tuesdays",
    "May",
    "March",
    "the",
    "15th",
    "3",
    "two",
    "weeks",
    "days",
    "ago",
    "from",
    "now",
    "weekend",
    "before",
    "fortnight",
    "arvo",
    "night",
    "winter",
    "2023",
    "morning",
    "a",
    "couple",
    "of",
    "month",
    "year",
]
_FILLER = ["we", "met", "her", "at", "the", "cafe", "and", "it", "was", "great", "lol", "ok"]


@given(st.lists(st.sampled_from(_DATE_WORDS + _FILLER), min_size=1, max_size=12))
def test_the_quick_check_never_skips_a_text_a_pattern_would_resolve(
    tokens: list[str],
) -> None:
    import memgraph.dates as dates

    text = " ".join(tokens)
    quick = resolve_relative_dates(text, MONDAY)
    saved = dates._MAY_HOLD_A_DATE
    dates._MAY_HOLD_A_DATE = re.compile("")  # every text read by every pattern
    try:
        assert resolve_relative_dates(text, MONDAY) == quick
    finally:
        dates._MAY_HOLD_A_DATE = saved


_PIECES = [
    "last",
    "Last",
    "week",
    "this",
    "THIS",
    "month",
    "no",
    "longer",
    "moved",
    "to",
    "we",
    "met",
    "the",
    "canoe",
    "Sept",
    "sept.",
    "may",
    "_today",
    "today_",
    "o'today",
    "Friday's",
    "any",
    "more",
    "anymore",
    "new",
    "job",
    "5",
    "12:30",
    "3pm",
    "x3",
    "2019",
    "21st",
    "ended",
    "up",
    ",",
    "not",
    ", not ",
    "Cancelled",
    "canceled",
    "ſunday",
    "K",
    "café",
    "naïve",
    "ﬁnally",
    "ago.",
    "(tomorrow)",
    "Turns",
    "out",
    "-",
    "/",
    "",
]


@settings(max_examples=500)
@given(st.lists(st.sampled_from(_PIECES), max_size=12), st.sampled_from([" ", "", "  ", "\n"]))
def test_the_quick_word_check_answers_as_the_patterns_do(pieces: list[str], glue: str) -> None:
    """Whether a text is timed or says something changed: the words checked first
    never decide otherwise than the patterns themselves (ASCII or not)."""
    text = glue.join(pieces)
    timed = _TIME_WORDS.search(text) is not None
    updates = _UPDATE_WORDS.search(text) is not None
    assert mentions_time(text) == timed
    assert mentions_update(text) == updates
    assert mentions(text) == (timed, updates)


def test_an_answer_to_a_question_about_the_past_reads_a_bare_weekday_as_past() -> None:
    wednesday = date(2023, 11, 8)
    reply = "the best. dinner at Fet-Fisk on friday and then drinks with everyone"
    assert "friday (3 November 2023)" in resolve_relative_dates(reply, wednesday, past=True)
    assert "friday (10 November 2023)" in resolve_relative_dates(reply, wednesday)  # nearer
    # a clause that says its tense keeps it
    plan = "yes! and I will see them again on friday"
    assert "friday (10 November 2023)" in resolve_relative_dates(plan, wednesday, past=True)


@pytest.mark.parametrize(
    ("text", "said", "meant"),
    [
        # a clause that says nothing of its tense: the nearer day
        ("sunday. on facetime which was grim", date(2026, 3, 4), "sunday (1 March 2026)"),
        ("ate a hair tie. emergency vet on tuesday, €310", date(2026, 6, 5), "(2 June 2026)"),
        # words of both tenses: the one nearest the day
        ("friday was my last day 🫠 freelance life starts now", date(2025, 1, 12), "(10 January"),
        # the present of a plan is ahead
        ("they want a biopsy. It's on Thursday", date(2023, 3, 12), "(16 March 2023)"),
        ("He turns 65 on Saturday and is pretending", date(2023, 8, 6), "(12 August 2023)"),
        ("I've got an interview on tuesday", date(2024, 1, 26), "(30 January 2024)"),
        ("we start on monday", date(2026, 6, 10), "(15 June 2026)"),
        # "were" and "its" are no present
        (
            "She tripped on the back step Sunday while we were up north",
            date(2025, 7, 23),
            "(20 July",
        ),
        ("The Astra failed its MOT on Thursday.", date(2025, 3, 8), "(6 March 2025)"),
        # "I was thinking ..." is a plan: the coming Thursday the 2nd
        ("I was thinking Thursday 2nd, for a week", date(2026, 1, 18), "(2 April 2026)"),
        # the day a deadline or a date was moved to is ahead
        (
            "Ros moved my full draft deadline to the 28th of February",
            date(2025, 11, 12),
            "(28 February 2026)",
        ),
        ("they pushed the closing back to March 3", date(2025, 12, 1), "(3 March 2026)"),
        # a past verb of something else: a day that comes soon is not one of last year
        ("I wrote you 20 May but the ticket says otherwise", date(2026, 5, 3), "(20 May 2026)"),
        ("we met on 20 May, remember", date(2026, 6, 3), "(20 May 2026)"),
        # a weekday beside "signed up" is the day of signing
        ("I signed up for the Surf Coast Century on Thursday", date(2025, 3, 8), "(6 March 2025)"),
        # "still not over Sunday": the one gone
        (
            "ok I'm still not over Sunday. SOPHIE IS GETTING MARRIED",
            date(2025, 4, 2),
            "(30 March 2025)",
        ),
    ],
)
def test_a_day_is_read_by_the_tense_nearest_it(text: str, said: date, meant: str) -> None:
    assert meant in resolve_relative_dates(text, said)
    # one that says both ("declared" ... "until") is no answer about the past alone
    ban = "Dev has declared a ban on takeaways until Easter."
    said = date(2025, 11, 30)
    assert "Easter (5 April 2026)" in resolve_relative_dates(ban, said, past=True)


def test_an_answer_about_the_past_reads_a_month_and_day_as_past_only_when_recent() -> None:
    sunday = date(2023, 11, 5)
    reply = "the best. dinner at Fet-Fisk on October 3"
    assert "October 3 (3 October 2023)" in resolve_relative_dates(reply, sunday, past=True)
    # months back would be odd: the date ahead is meant
    plan = "the sellers need more time. Closing is now January 8"
    assert "January 8 (8 January 2024)" in resolve_relative_dates(plan, sunday, past=True)


@pytest.mark.parametrize(
    ("text", "past"),
    [
        ("lol did you have a good birthday though?", True),
        ("how was the race?", True),
        ("are you coming on friday?", False),
        ("plans for the weekend?", False),
        ("I went there yesterday.", False),  # not a question
        # a question tag to the other, its "?" left off
        ("how's the new job? you started Monday right", True),
        ("you went to the show, yeah", True),
        ("we're going friday, right", False),
        ("I did it right", False),
    ],
)
def test_a_question_about_the_past_is_told_apart(text: str, past: bool) -> None:
    assert asks_about_past(text) is past


@pytest.mark.parametrize(
    ("question", "now"),
    [
        ("Where does Wren work now?", True),
        ("What did Eli's science fair project end up being about?", True),
        ("Is Chidi still at Halden & Price?", True),
        ("When did Wren start at Brightpath?", False),
        ("Where did Dana know him from?", False),  # "know" is not "now"
        ("What's new with Omar?", True),
        ("Any news about Biscuit?", True),
        ("What new hobby did Omar pick up?", False),
        # the last word on something changed: what it came to
        ("Where was Owen's wedding held in the end?", True),
        ("When did Carol's appointment get rescheduled to?", True),
        ("After the last change, what time does the dinner start?", True),
        ("When did the demolition actually take place?", False),
    ],
)
def test_a_question_about_the_present_is_told_apart(question: str, now: bool) -> None:
    assert asks_about_now(question) is now


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        ("What did Mel paint on October 13, 2023?", date(2023, 10, 13), date(2023, 10, 14)),
        ("What did they buy on 16 August, 2023?", date(2023, 8, 16), date(2023, 8, 17)),
        ("What did Tim start learning in August 2023?", date(2023, 8, 1), date(2023, 9, 1)),
        ("Where was Jon in December 2023?", date(2023, 12, 1), date(2024, 1, 1)),
    ],
)
def test_a_question_s_day_or_month_is_the_period_asked_about(
    question: str, start: date, end: date
) -> None:
    period = asked_period(question)
    assert period is not None and (period.start, period.end) == (start, end)


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        # October 2023 begins on a Sunday: its first weekend is the 7th and 8th
        (
            "What was Dave doing in the first weekend of October 2023?",
            date(2023, 10, 7),
            date(2023, 10, 9),
        ),
        ("Where was Jolene in the last week of August 2023?", date(2023, 8, 25), date(2023, 9, 1)),
        (
            "Where was Dave in the last two weeks of August 2023?",
            date(2023, 8, 18),
            date(2023, 9, 1),
        ),
        (
            "Was the first half of September 2022 good for Nate?",
            date(2022, 9, 1),
            date(2022, 9, 16),
        ),
        ("What did Tim do in the second week of March 2024?", date(2024, 3, 8), date(2024, 3, 15)),
        ("What did Ana do in late May 2023?", date(2023, 5, 21), date(2023, 6, 1)),
        ("What happened at the beginning of March 2024?", date(2024, 3, 1), date(2024, 3, 11)),
        (
            "Where was Tim in the week before 16 November 2023?",
            date(2023, 11, 9),
            date(2023, 11, 16),
        ),
        (
            "Where was Sam the weekend before October 17, 2023?",
            date(2023, 10, 14),
            date(2023, 10, 16),
        ),
        ("What did Mel do the day after May 3, 2023?", date(2023, 5, 4), date(2023, 5, 5)),
        (
            "Where was John between August 11 and August 15 2023?",
            date(2023, 8, 11),
            date(2023, 8, 16),
        ),
    ],
)
def test_a_question_s_part_of_a_month_is_the_period_asked_about(
    question: str, start: date, end: date
) -> None:
    period = asked_period(question)
    assert period is not None and (period.start, period.end) == (start, end)


def test_a_text_s_days_are_read_with_its_relative_dates_resolved() -> None:
    said = date(2023, 12, 5)  # a Tuesday
    assert periods_spoken_of("I went to a Weight Watchers meeting yesterday", said) == [
        Period(date(2023, 12, 4), date(2023, 12, 5))
    ]
    assert periods_spoken_of("the hike on sunday is off", date(2026, 4, 16)) == [
        Period(date(2026, 4, 19), date(2026, 4, 20))
    ]
    week, month = periods_spoken_of("Last week was wild, and March 2023 was worse", said)
    assert week == Period(date(2023, 11, 28), date(2023, 12, 5))
    assert month == Period(date(2023, 3, 1), date(2023, 4, 1))
    assert periods_spoken_of("Ten years ago I was in Lisbon", said) == []  # a year: too long
    assert periods_spoken_of("Great to hear from you!", said) == []


@pytest.mark.parametrize(
    ("question", "when"),
    [
        ("When did Jon go to Rome?", True),
        ("On what date was Maggie's last day of teaching?", True),
        ("What day is the party?", True),
        ("In which month did Ada move?", True),
        ("How long ago did Tim start?", True),
        ("What did Jon eat in Rome?", False),
        ("Where was the wedding on that day?", False),
        ("What is Bea's start date at her Berlin job?", True),
        ("What's the new completion date for the flat?", True),
        ("What was Sam's date like?", False),  # a date out, not a day
    ],
)
def test_a_question_about_time_is_told_apart(question: str, when: bool) -> None:
    assert asks_when(question) is when


def test_a_question_without_a_dated_day_or_month_asks_no_period() -> None:
    assert asked_period("When did Jon go to Rome?") is None
    assert asked_period("What did Jon do in 2023?") is None


def test_a_bare_when_asks_when_the_news_before_it_happened() -> None:
    assert asks_when_alone("ELLIE!!! when??")
    assert asks_when_alone("omg congrats!! wait when?")
    assert not asks_when_alone("when is the wedding?")
    assert not asks_when_alone("when did you get back?")  # asks_about_past reads this one
    assert tells_past("we got engaged!!")
    assert tells_past("I'm an auntie!!!! 🥹")
    assert tells_past("she's here!! 3.2kg")
    assert not tells_past("I'm an accountant")
    assert not tells_past("we're getting married next June")
    assert not tells_past("I'm going to Lisbon")
    assert not tells_past("I've got an interview")


@pytest.mark.parametrize(
    ("text", "said", "expected"),
    [
        ("he went out last Easter", date(2024, 10, 8), "last Easter (31 March 2024)"),
        ("cookout over Memorial Day weekend", date(2025, 5, 9), "Memorial Day (26 May 2025)"),
        ("see you at Thanksgiving!", date(2024, 10, 20), "Thanksgiving (28 November 2024)"),
        ("we had a lovely Christmas", date(2025, 1, 5), "Christmas (25 December 2024)"),
        ("not a drink since New Years", date(2025, 2, 10), "New Years (1 January 2025)"),
        ("back for Paddy's Day", date(2025, 2, 10), "Paddy's Day (17 March 2025)"),
        ("next Halloween I'm going all out", date(2024, 11, 2), "Halloween (31 October 2025)"),
        # a holiday weeks ahead is not last year's for a past verb of something else
        ("paid in full! told you I'd beat Christmas", date(2024, 12, 15), "(25 December 2024)"),
    ],
)
def test_a_holiday_is_its_day_of_the_year_meant(text: str, said: date, expected: str) -> None:
    assert expected in resolve_relative_dates(text, said)


def test_the_weekday_after_a_dated_day_is_that_day_s() -> None:
    text = "a cookout over Memorial Day weekend, on the Sunday. kids can bring bikes"
    assert "the Sunday (25 May 2025)" in resolve_relative_dates(text, date(2025, 5, 9))
    text = "we're away the weekend of the 14th, back on the Sunday"
    assert "the Sunday (15 June 2025)" in resolve_relative_dates(text, date(2025, 6, 2))


def test_the_lunar_new_year_is_no_first_of_january() -> None:
    text = "Lunar New Year is the 29th and we have 1,800 pineapple tarts on order"
    found = resolve_relative_dates(text, date(2025, 1, 19))
    assert "Year (" not in found and "the 29th (29 January 2025)" in found
    assert "(1 January 2025)" in resolve_relative_dates("Happy New Year!", date(2025, 1, 1))


def test_a_holiday_s_name_on_a_thing_is_no_date() -> None:
    text = "got the Christmas tree up and bought Halloween costumes"
    assert resolve_relative_dates(text, date(2024, 12, 3)) == text


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=1900, max_value=2199))
def test_easter_is_a_sunday_between_march_22_and_april_25(year: int) -> None:
    day = easter(year)
    assert day.weekday() == 6 and date(year, 3, 22) <= day <= date(year, 4, 25)


@pytest.mark.parametrize(
    ("text", "said", "expected"),
    [
        # a day said as a fragment goes with the clause before it
        ("Declan and I broke up. on Sunday. I was home", date(2024, 12, 10), "(8 December 2024)"),
        ("Mintline finally replied. on the 23rd.", date(2024, 12, 28), "(23 December 2024)"),
        ("I'll ring them. on Sunday.", date(2024, 12, 10), "(15 December 2024)"),
        # with its time of day, too
        ("Hannah and I broke up. Tuesday night", date(2024, 6, 16), "(11 June 2024)"),
        # a month and day keeps its own reading ("signed up. October 13": the race)
        ("I signed up for the marathon. October 13", date(2024, 6, 27), "(13 October 2024)"),
        # a correction goes with the clause it corrects, past or ahead
        (
            "I did 12 miles last Saturday, no wait, Sunday",
            date(2024, 5, 2),
            "Sunday (28 April 2024)",
        ),
        ("we are meeting next Tuesday, sorry, Wednesday", date(2024, 5, 2), "(8 May 2024)"),
        # "just after" is filler too: the holiday goes with the clause before
        ("Rachel and I separated. Just after New Year", date(2024, 3, 10), "(1 January 2024)"),
    ],
)
def test_a_day_said_as_a_fragment_goes_with_the_clause_before(
    text: str, said: date, expected: str
) -> None:
    assert expected in resolve_relative_dates(text, said)


@pytest.mark.parametrize(
    ("text", "meant"),
    [
        ("They've set a date! The 14th of August next year, on the Gower.", "14 August 2027"),
        ("we got married on the 3rd of June last year", "3 June 2025"),
        ("the wedding is on August 14 next year", "14 August 2027"),
    ],
)
def test_a_day_and_month_said_with_next_or_last_year_is_that_year_s(text: str, meant: str) -> None:
    said = date(2026, 5, 24)
    once = resolve_relative_dates(text, said)
    assert f"year ({meant})" in once, once
    assert resolve_relative_dates(once, said) == once  # read once, not twice


def test_what_someone_signed_up_for_is_ahead() -> None:
    said = date(2025, 11, 12)
    text = "Sian and I have signed up for the Taff Trail challenge on the 25th of April"
    assert "(25 April 2026)" in resolve_relative_dates(text, said)


@pytest.mark.parametrize(
    ("text", "said", "expected"),
    [
        # a weekday said with the day and month picks the year it falls on
        ("I was thinking Thursday 9th April, one week", date(2026, 1, 18), "(9 April 2026)"),
        ("it was Wednesday 9th April, remember", date(2026, 1, 18), "(9 April 2025)"),
        # a weekday and its day with the time of day between them are one date
        ("she lands Thursday evening the 7th", date(2024, 10, 9), "evening the 7th (7 November 2024)"),
        # "Sunday week": a week on from the coming Sunday
        ("Sunday week, Lina says it's a gentle 25", date(2025, 5, 6), "Sunday week (18 May 2025)"),
    ],
)  # fmt: skip
def test_a_weekday_said_with_a_day_names_the_day_it_falls_on(
    text: str, said: date, expected: str
) -> None:
    assert expected in resolve_relative_dates(text, said)


def test_a_bare_day_goes_with_the_month_said_before_it_in_the_message() -> None:
    text = "Paybridge asked me to stay till 13 March to finish. so I start on the 16th now"
    assert "the 16th (16 March 2026)" in resolve_relative_dates(text, date(2026, 2, 1))
    text = "it is the 21st of May, Thursday. the 20th was the first option"
    found = resolve_relative_dates(text, date(2026, 5, 3))
    assert "Thursday (21 May 2026)" in found and "the 20th (20 May 2026)" in found
    # far before the day said earlier, a bare day is not read into its month
    text = "the party was on the 28th of June. the 2nd was my last day"
    assert "the 2nd (2 June" not in resolve_relative_dates(text, date(2026, 7, 5))


def test_a_weekday_followed_by_its_day_of_the_month_is_that_day() -> None:
    # said on Sunday 16 March: "last Saturday" could be the 15th; "the 8th" says which
    text = "Our engagement party was last Saturday btw, the 8th. Her parents drove in"
    found = resolve_relative_dates(text, date(2025, 3, 16))
    assert "last Saturday (8 March 2025)" in found and "the 8th (8 March 2025)" in found
    # a day of another weekday is another day
    found = resolve_relative_dates("we went last Saturday btw, the 4th was busy", date(2025, 3, 16))
    assert "last Saturday (15 March 2025)" in found and "the 4th (4 March 2025)" in found


def test_in_some_years_after_a_negation_is_how_long_not_when() -> None:
    text = "haven't seen her in two years and she keeps sending me photos"
    assert resolve_relative_dates(text, date(2025, 8, 2)) == text
    assert "(2027)" in resolve_relative_dates("I'll see her in two years", date(2025, 8, 2))


def test_the_days_a_text_names_with_their_month_are_read_with_their_year() -> None:
    named = days_named("the 8th of August 2026, then March 10th and 3 May", date(2026, 1, 1))
    assert named == {8: date(2026, 8, 8), 10: date(2026, 3, 10), 3: date(2026, 5, 3)}
    assert days_named("see you on the 8th!", date(2026, 1, 1)) == {}


def test_a_bare_day_is_the_day_the_conversation_named_before() -> None:
    before = days_named("Booked! Landing at Taoyuan on 28 November", date(2025, 10, 26))
    text = "China Airlines cancelled the 28th so now I land on 30 November instead"
    said = date(2025, 11, 16)
    assert "the 28th (28 November 2025)" in resolve_relative_dates(text, said, days_said=before)
    # a bare day beside it is in its month: "the 15th not the 8th" after the 8th of August
    before = days_named("reunion gig on Saturday the 8th of August", date(2026, 3, 20))
    found = resolve_relative_dates("it's the 15th not the 8th", date(2026, 4, 2), days_said=before)
    assert "the 15th (15 August 2026)" in found and "the 8th (8 August 2026)" in found
    # a day named too long before is not what the bare day means
    old = {8: date(2025, 3, 8)}
    assert "(8 December 2025)" in resolve_relative_dates(
        "I land on the 8th", date(2025, 12, 1), days_said=old
    )


def test_a_bare_day_the_text_itself_dates_keeps_its_own_reading() -> None:
    said = date(2025, 1, 5)
    before = {6: date(2025, 3, 6)}  # "March 6 in Minneapolis", said before
    found = resolve_relative_dates("tomorrow's the 6th. back the 13th", said, days_said=before)
    assert "the 6th (6 January 2025)" in found
    before = {18: date(2025, 8, 18)}
    found = resolve_relative_dates(
        "it's next week!! well, the 18th", date(2025, 7, 10), days_said=before
    )
    assert "the 18th (18 July 2025)" in found
    # "since" has been, "from" is still to come
    found = resolve_relative_dates(
        "since the 17th", date(2024, 7, 28), days_said={17: date(2024, 8, 17)}
    )
    assert "(17 July 2024)" in found
    found = resolve_relative_dates(
        "I'm staying with Bethan from the 18th",
        date(2026, 5, 24),
        days_said={18: date(2026, 5, 18)},
    )
    assert "(18 June 2026)" in found


def test_a_bare_day_a_dated_day_of_the_message_puts_in_its_month_stays_there() -> None:
    text = "Paybridge asked me to stay till 13 March. so I start on the 16th now"
    found = resolve_relative_dates(text, date(2026, 2, 1), days_said={16: date(2026, 2, 16)})
    assert "the 16th (16 March 2026)" in found
    text = "It's now 21 December, not the 14th. the 14th clashed with her exams"
    found = resolve_relative_dates(text, date(2024, 4, 6), days_said={14: date(2024, 3, 14)})
    assert "March" not in found


def test_a_bare_day_goes_with_the_month_the_message_names_after_it() -> None:
    found = resolve_relative_dates("the 3rd not the 30th. 3rd of march", date(2023, 1, 18))
    assert "the 3rd (3 March 2023)" in found and "the 30th (30 March 2023)" in found
    found = resolve_relative_dates("It is the 21st, not the 20th. 21st August.", date(2024, 7, 15))
    assert "the 21st (21 August 2024)" in found and "the 20th (20 August 2024)" in found
    assert "(1 July 2026)" in resolve_relative_dates(
        "July the 1st, is that special?", date(2026, 3, 22)
    )


def test_a_weekday_before_a_date_with_its_month_is_that_date_s_day() -> None:
    found = resolve_relative_dates("Wednesday, 21st August. see you", date(2024, 7, 15))
    assert "Wednesday (" not in found and "21st August (21 August 2024)" in found
    # a count after a weekday is no day of the month
    found = resolve_relative_dates("we met on Wednesday, 3 people came", date(2024, 7, 15))
    assert "Wednesday (10 July 2024)" in found and "3 (" not in found


def test_a_weekday_followed_by_a_count_is_no_day_of_the_month() -> None:
    for text in ("first steps on Thursday, 3 whole steps", "Born on Tuesday, 3.2 kilos"):
        assert ", 3 (" not in resolve_relative_dates(text, date(2025, 7, 6))
    assert "Monday (" in resolve_relative_dates("cut my thumb Monday, 4 stitches", date(2025, 7, 6))
    assert "(9 April 2026)" in resolve_relative_dates("Thursday 9th April", date(2026, 3, 15))


def test_a_clause_s_tense_is_read_from_the_words_that_say_it() -> None:
    said = date(2025, 10, 12)  # a Sunday
    # "bitten by" is no deadline: the Tuesday gone
    found = resolve_relative_dates("Banjo got bitten by a tiger snake on Tuesday", said)
    assert "(7 October 2025)" in found
    assert "(17 October 2025)" in resolve_relative_dates("I need it done by Friday", said)
    assert "(5 October 2025)" in resolve_relative_dates("She left on Sunday. We did Whistler", said)
    # a date set for, whatever tense the setting is in
    found = resolve_relative_dates("He has fixed it for 9 August.", date(2024, 6, 8))
    assert "(9 August 2024)" in found
    # a fragment goes with the clause before it: a holiday, a month
    found = resolve_relative_dates("Tunde proposed! On Christmas Eve!", date(2024, 2, 11))
    assert "(24 December 2023)" in found
    found = resolve_relative_dates("They are getting married! In June.", date(2024, 12, 2))
    assert "(June 2025)" in found
    assert "(June 2024)" in resolve_relative_dates("we got married in June", date(2024, 12, 2))


def test_short_weekdays_the_weekend_after_next_and_this_day_last_year() -> None:
    said = date(2025, 3, 22)  # a Saturday
    assert "on thurs (20 March 2025)" in resolve_relative_dates("van died on thurs", said)
    assert "sun 30th (30 March 2025)" in resolve_relative_dates("the shed sun 30th?", said)
    assert "sat 3" not in resolve_relative_dates("sat 3 hours in traffic", said).replace(
        "sat 3 hours", "x"
    )
    found = resolve_relative_dates("home the weekend after next", said)
    assert "(the weekend of 5 April 2025)" in found
    found = resolve_relative_dates("this day last year they got engaged", said)
    assert "(22 March 2024)" in found


def test_a_weekday_after_a_dated_day_is_the_first_such_day_after_it() -> None:
    found = resolve_relative_dates(
        "interview was thurs 10th and they rang me the monday after", date(2025, 7, 26)
    )
    assert "the monday (14 July 2025) after" in found
    found = resolve_relative_dates(
        "The operation went well on the 23rd. I came home on the Saturday.", date(2025, 10, 5)
    )
    assert "the Saturday (27 September 2025)" in found


def test_a_day_s_tense_comes_from_its_sentence_when_its_clause_says_none() -> None:
    said = date(2026, 10, 18)  # a Sunday
    text = "Mateo sent in his UT and A&M applications on Tuesday. The essay is in both."
    assert "(13 October 2026)" in resolve_relative_dates(text, said)
    text = "Emergency vet Wednesday night, they had to go in and get it out"
    assert "(3 April 2024)" in resolve_relative_dates(text, date(2024, 4, 8))
    # a move ahead, in the present
    found = resolve_relative_dates("She moves in Thursday", date(2024, 1, 28))
    assert "(1 February 2024)" in found


def test_a_day_of_the_year_in_a_past_clause_is_the_coming_one_when_the_gone_one_is_far() -> None:
    text = "they moved my exam, not april 22 anymore, now may 12"
    found = resolve_relative_dates(text, date(2026, 3, 7))
    assert "(22 April 2026)" in found and "(12 May 2026)" in found


def test_a_bare_day_opening_a_stretch_is_in_the_month_the_stretch_ends_in() -> None:
    found = resolve_relative_dates(
        "the new dates are the 8th to the 12th of March", date(2026, 12, 5)
    )
    assert "the 8th (8 March 2027)" in found


@settings(max_examples=300, deadline=2000)
@given(st.text(alphabet="ab 😩🎉.,!?;:", max_size=20), st.sampled_from(["on Sunday", "in March"]))
def test_any_text_around_a_date_is_read_in_time(around: str, day: str) -> None:
    # an emoji ends a clause: a fragment's clause before it is found, never looked for forever
    resolve_relative_dates(f"{around} {day}. {around}", date(2026, 3, 19))


def test_a_bare_day_after_a_month_the_message_names_is_in_that_month() -> None:
    text = "what if I came in August instead, before she gets here? like the 23rd"
    found = resolve_relative_dates(text, date(2024, 5, 3))
    assert "in August (August 2024)" in found and "the 23rd (23 August 2024)" in found


def test_a_decimal_after_a_month_is_no_day_of_it() -> None:
    found = resolve_relative_dates("Sunday 19 October. 1.9 km swim", date(2025, 2, 23))
    assert "1 (" not in found and "(19 October 2025)" in found
    assert "Oct. 1 (1 October 2025)" in resolve_relative_dates("Oct. 1 works", date(2025, 2, 23))


def test_a_move_to_a_month_is_to_the_coming_one() -> None:
    found = resolve_relative_dates("I'll move the booking to December", date(2026, 8, 16))
    assert "to December (December 2026)" in found
    found = resolve_relative_dates("they moved it to March", date(2026, 8, 16))
    assert "(March 2027)" in found


def test_a_day_on_which_something_was_done_is_no_day_to_come() -> None:
    found = resolve_relative_dates(
        "Finished on the 5th!", date(2025, 12, 14), days_said={5: date(2026, 1, 5)}
    )
    assert "(5 December 2025)" in found


def test_a_bare_day_beside_one_said_before_is_in_the_month_nearest_it() -> None:
    # "1 June" was named before: the 30th just before the 1st is 30 May
    found = resolve_relative_dates(
        "Moved on the 30th like planned, started at Pwani on the 1st",
        date(2026, 6, 24),
        days_said={1: date(2026, 6, 1)},
    )
    assert "the 30th (30 May 2026)" in found and "the 1st (1 June 2026)" in found


def test_a_weekday_after_news_that_something_is_done_is_the_one_just_past() -> None:
    # said on Saturday 10 January 2026
    said = date(2026, 1, 10)
    found = resolve_relative_dates("THE KITCHEN IS DONE. Tuesday. A real kitchen", said)
    assert "Tuesday (6 January 2026)" in found
    assert "(13 January" in resolve_relative_dates("it will be done Tuesday", said)


def test_a_thing_done_said_by_its_owner_s_word_alone_is_no_plan() -> None:
    # "got his learner's on Friday": the licence he got, not "it's on Friday"
    said = date(2024, 5, 5)  # a Sunday
    assert "(3 May 2024)" in resolve_relative_dates("Jesse got his learner's on Friday!", said)
    assert "(10 May 2024)" in resolve_relative_dates("the party's on Friday!", said)
    birthday = resolve_relative_dates(
        "Her birthday's the 22nd so I've got a week", date(2025, 3, 15)
    )
    assert "(22 March 2025)" in birthday


@pytest.mark.parametrize(
    ("text", "said", "expected"),
    [
        # an event said in the simple present is scheduled: the day ahead
        ("we meet her for the first time Saturday", date(2025, 2, 2), "(8 February 2025)"),
        ("Chloe, I see the doctor on Friday. Dr Tsai", date(2025, 2, 16), "(21 February 2025)"),
        ("We sign Monday morning and then we're moving", date(2024, 1, 3), "(8 January 2024)"),
        ("I finish my postdoc on the 12th", date(2026, 6, 4), "(12 June 2026)"),
        # the past still reads as the past
        ("we met her for the first time Saturday", date(2025, 2, 2), "(1 February 2025)"),
    ],
)
def test_an_event_in_the_simple_present_is_ahead(text: str, said: date, expected: str) -> None:
    assert expected in resolve_relative_dates(text, said)


def test_a_question_asking_how_things_stood_by_a_stretch_is_told_from_what_happens_in_one() -> None:
    assert asks_how_things_stood("Where is Tunde's mum as of mid-September 2024?")
    assert asks_how_things_stood("How many dogs does Ingrid have by Oct. 2026?")
    assert asks_how_things_stood("Did James have a girlfriend during April 2022?")
    assert not asks_how_things_stood("What injury did Dan get in May 2024?")
    assert not asks_how_things_stood("Which show did Jolene go to on 9 April 2023?")
    # a month's first letters inside another word are no month
    assert not asks_how_things_stood("What has Dana done since marrying in June 2023?")
