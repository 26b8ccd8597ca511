"""The texts a question about a stretch of days points to: those that speak of a day
in it ("yesterday", said the day after), and what the named people said in it."""

from __future__ import annotations

from datetime import date, datetime, timezone

from memgraph.dates import Period
from memgraph.retrieval.episode_index import EpisodeIndex
from memgraph.retrieval.periods import SAID_IN_SHARE, SPOKEN_OF_SHARE, period_shares

DAY_MS = 86_400_000


def at(day: date, hour: int = 20) -> int:
    return int(datetime(day.year, day.month, day.day, hour, tzinfo=timezone.utc).timestamp() * 1000)


TEXTS = [
    ("e-1", date(2023, 11, 28), "Sam", "Work has been hectic, three deadlines."),
    ("e-2", date(2023, 12, 4), "Sam", "Quiet evening in, watched a film."),
    ("e-3", date(2023, 12, 4), "Evan", "Long day at the shop."),
    ("e-4", date(2023, 12, 5), "Sam", "I went to a Weight Watchers meeting yesterday!"),
    ("e-5", date(2023, 12, 12), None, "The dentist yesterday was fine."),
    ("e-6", date(2023, 12, 12), "Sam", "Last month was a blur."),
]


def index() -> EpisodeIndex:
    found = EpisodeIndex()
    for episode_id, day, speaker, text in TEXTS:
        found.add(episode_id, text, at_ms=at(day), speaker=speaker, conversation="c")
    return found


def shares(
    period: Period, speakers: list[str | None] | None, lexical: dict[str, float]
) -> dict[str, float]:
    words = {episode_id: text for episode_id, _, _, text in TEXTS}
    return period_shares(
        index(), period, lexical, speakers=speakers, texts=lambda ids: {i: words[i] for i in ids}
    )


def test_a_text_that_speaks_of_the_day_asked_about_is_pointed_to() -> None:
    day = Period(date(2023, 12, 4), date(2023, 12, 5))
    found = shares(day, ["Sam"], {})
    assert found["e-4"] == SPOKEN_OF_SHARE  # "yesterday", said on 5 December
    assert found["e-2"] == SAID_IN_SHARE  # what Sam said that day
    assert "e-3" not in found  # Evan is not asked about
    assert "e-6" not in found  # "last month" is no day


def test_texts_remembered_without_a_speaker_count_for_none_among_the_speakers() -> None:
    day = Period(date(2023, 12, 11), date(2023, 12, 12))
    assert shares(day, [None], {}) == {"e-5": SPOKEN_OF_SHARE}
    assert shares(day, ["Sam"], {}) == {}


def test_when_some_of_their_texts_of_that_day_hold_the_words_the_others_count_less() -> None:
    day = Period(date(2023, 12, 4), date(2023, 12, 5))
    worded = shares(day, ["Sam", "Evan"], {"e-2": 0.5})
    assert "e-2" not in worded  # it holds the words: the tier's own share stands
    assert worded["e-3"] < SAID_IN_SHARE


def test_a_long_stretch_adds_only_to_texts_holding_the_question_s_words() -> None:
    # five weeks, ending the day "yesterday" in e-4 means: said the day after it
    weeks = Period(date(2023, 11, 1), date(2023, 12, 5))
    assert shares(weeks, None, {}) == {}
    assert shares(weeks, None, {"e-4": 0.2}) == {"e-4": 0.5}
