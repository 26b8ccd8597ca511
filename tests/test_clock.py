"""Timestamps sort as strings, and moments memgraph cannot store are refused clearly."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memgraph import InvalidTime, MemgraphError, Memory
from memgraph.clock import iso, parse_iso


@pytest.mark.parametrize(
    ("moment", "text"),
    [
        (datetime(999, 6, 1, tzinfo=timezone.utc), "0999-06-01T00:00:00.000Z"),
        (datetime(1, 1, 1, tzinfo=timezone.utc), "0001-01-01T00:00:00.000Z"),
        (datetime(42, 3, 4, 5, 6, 7, 890_000), "0042-03-04T05:06:07.890Z"),
        (
            datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=timezone.utc),
            "9999-12-31T23:59:59.999Z",
        ),
    ],
)
def test_years_are_written_with_four_digits(moment: datetime, text: str) -> None:
    assert iso(moment) == text
    assert iso(parse_iso(text)) == text


def test_stored_timestamps_sort_in_time_order_across_every_year() -> None:
    moments = [datetime(year, 1, 1, tzinfo=timezone.utc) for year in (1, 9, 99, 999, 1000, 2026)]
    moments.append(datetime(999, 12, 31, 23, 59, tzinfo=timezone(timedelta(hours=-5))))
    texts = [iso(moment) for moment in moments]
    assert sorted(texts) == [iso(moment) for moment in sorted(moments)]


@pytest.mark.parametrize(
    "value",
    [
        "9999-12-31T23:59:59-05:00",
        "0001-01-01T00:00:00+05:00",
        datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1))),
        "not a time",
        "2026-13-01",
        17,
    ],
)
def test_moments_outside_the_stored_range_or_not_iso_raise_invalid_time(value: object) -> None:
    with pytest.raises(InvalidTime) as raised:
        parse_iso(value)  # type: ignore[arg-type]
    assert isinstance(raised.value, ValueError)  # callers catching ValueError keep working
    assert isinstance(raised.value, MemgraphError)


def test_a_fact_valid_since_before_year_1000_is_seen_and_superseded_in_order(
    tmp_path: Path,
) -> None:
    with Memory(tmp_path / "mem", scope="d", provider="mock") as memory:
        changes = memory.remember("Ancient works at Guild.", at="0999-06-01T00:00:00Z")
        assert changes.added_observations[0].valid_from == "0999-06-01T00:00:00.000Z"
        for year in ("1500", "2020"):
            seen = memory.as_of(f"{year}-01-01T00:00:00Z").recall("where does Ancient work")
            assert "Guild" in seen
        assert "Guild" not in memory.as_of("0998-01-01T00:00:00Z").recall("Ancient works")
        memory.remember("Ancient works at Mill.", at="1200-01-01T00:00:00Z")
        history = {o.content: o for o in memory.history("Ancient").observations}
    assert history["works at Guild"].valid_to == "1200-01-01T00:00:00.000Z"
    assert history["works at Mill"].valid_to is None


@pytest.mark.parametrize("at", ["9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+05:00"])
def test_remember_and_as_of_at_an_unstorable_moment_raise_invalid_time_and_store_nothing(
    tmp_path: Path, at: str
) -> None:
    with Memory(tmp_path / "mem", scope="d", provider="mock") as memory:
        memory.remember("Keep works at Keepco.")
        before = memory.stats()
        with pytest.raises(InvalidTime, match="0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z"):
            memory.remember("Edge works at Edgeco.", at=at)
        with pytest.raises(InvalidTime):
            memory.as_of(at)
        assert memory.stats() == before
