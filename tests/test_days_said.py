"""The days a conversation named before a turn, for the turn's bare "the 28th"."""

from __future__ import annotations

from datetime import date

from memgraph.dates import days_line, names_a_bare_day, read_days
from memgraph.retrieval.days_said import days_said_before


def turn(text: str, at: str, **fields: str) -> dict[str, object]:
    return {"text": text, "at": at, **fields}


def test_the_nearest_naming_of_a_day_wins_within_its_conversation_and_reach() -> None:
    doc = turn("they cancelled the 28th", "2025-11-16T10:00:00Z")
    earlier = [
        turn("the other chat: 28 March", "2025-11-15T10:00:00Z", source="elsewhere"),
        turn("Landing at Taoyuan on 28 November", "2025-10-26T09:00:00Z"),
        turn("my birthday is 28 October", "2025-10-01T09:00:00Z"),
        turn("long ago: 3 January", "2025-01-02T09:00:00Z"),  # beyond 90 days
    ]
    found = days_said_before(doc, earlier)
    assert found[28] == date(2025, 11, 28) and 3 not in found
    assert days_line(found) == "28 November 2025" and read_days(days_line(found)) == found
    assert not names_a_bare_day("see you soon") and days_line({}) is None
