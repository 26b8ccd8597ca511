"""Timestamps: ISO-8601 UTC strings with millisecond precision (``2026-01-02T03:04:05.678Z``).

The strings sort in time order: the year is always written with four digits
(``0999-06-01T...``), so comparing two stored timestamps as strings compares the
moments. Moments outside the years 0001-9999 in UTC cannot be stored and are
refused with :class:`~memgraph.errors.InvalidTime`.
"""

from __future__ import annotations

from datetime import datetime, timezone

from memgraph.errors import InvalidTime

__all__ = ["epoch_ms", "iso", "now_iso", "parse_iso"]

_RANGE = "0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z"


def _utc(moment: datetime, shown: object) -> datetime:
    """``moment`` in UTC (a naive one is taken as UTC).

    Raises:
        InvalidTime: in UTC the moment falls outside the years 1-9999.
    """
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    try:
        return moment.astimezone(timezone.utc)
    except OverflowError as exc:
        raise InvalidTime(
            f"{shown!r} is outside the range of timestamps memgraph stores ({_RANGE} in UTC)"
        ) from exc


def iso(moment: datetime) -> str:
    """``moment`` as an ISO-8601 UTC string; a naive datetime is taken as UTC.

    Raises:
        InvalidTime: in UTC the moment falls outside the years 1-9999.
    """
    moment = _utc(moment, moment)
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:"
        f"{moment.minute:02d}:{moment.second:02d}.{moment.microsecond // 1000:03d}Z"
    )


def now_iso() -> str:
    """The current time as an ISO-8601 UTC string."""
    return iso(datetime.now(timezone.utc))


def parse_iso(value: str | datetime) -> datetime:
    """Parse an ISO-8601 timestamp (``Z`` or an offset; naive means UTC).

    Raises:
        InvalidTime: ``value`` is not an ISO-8601 timestamp, or falls outside
            the years 1-9999 in UTC (``InvalidTime`` is also a ``ValueError``).
    """
    if isinstance(value, datetime):
        moment = value
    else:
        if not isinstance(value, str):
            raise InvalidTime(f"a timestamp must be a string or a datetime, got {value!r}")
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            moment = datetime.fromisoformat(text)
        except ValueError as exc:
            raise InvalidTime(
                f"{value!r} is not an ISO-8601 timestamp such as '2026-01-02T03:04:05Z'"
            ) from exc
    return _utc(moment, value)


def epoch_ms(value: str | datetime) -> int:
    """Milliseconds since the epoch of an ISO-8601 timestamp or a datetime (naive
    means UTC), as the episode index keeps times.

    Raises:
        InvalidTime: as :func:`parse_iso`.
    """
    return int(parse_iso(value).timestamp() * 1000)
