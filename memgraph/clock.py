"""Timestamps: ISO-8601 UTC strings with millisecond precision (``2026-01-02T03:04:05.678Z``)."""

from __future__ import annotations

from datetime import datetime, timezone

__all__ = ["iso", "now_iso", "parse_iso"]


def iso(moment: datetime) -> str:
    """``moment`` as an ISO-8601 UTC string; a naive datetime is taken as UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def now_iso() -> str:
    """The current time as an ISO-8601 UTC string."""
    return iso(datetime.now(timezone.utc))


def parse_iso(value: str | datetime) -> datetime:
    """Parse an ISO-8601 timestamp (``Z`` or an offset; naive means UTC).

    Raises:
        ValueError: ``value`` is not an ISO-8601 timestamp.
    """
    if isinstance(value, datetime):
        moment = value
    else:
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            moment = datetime.fromisoformat(text)
        except ValueError as exc:
            raise ValueError(
                f"{value!r} is not an ISO-8601 timestamp such as '2026-01-02T03:04:05Z'"
            ) from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)
