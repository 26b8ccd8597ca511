"""The days a conversation named before a turn, for the turn's bare "the 28th".

"Landing at Taoyuan on 28 November!" … three weeks later "China Airlines
cancelled the 28th": the 28th is the 28 November said before, not 28 October.
A turn is read with the days of the month its conversation named with their
month in the turns before it (the nearest naming of a day winning), within
:data:`DAYS_SAID_TURNS` turns and :data:`DAYS_SAID_DAYS` days; see
:func:`memgraph.dates.resolve_relative_dates` for how they are used.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, timedelta

from memgraph.clock import parse_iso
from memgraph.dates import days_named
from memgraph.graph.graph import Doc
from memgraph.retrieval.episode_index import conversation_key

__all__ = ["DAYS_SAID_DAYS", "DAYS_SAID_TURNS", "days_said_before"]

DAYS_SAID_TURNS = 80
"""How many turns back the days a conversation named are looked for."""
DAYS_SAID_DAYS = 90
"""How many days back the days a conversation named are looked for."""


def days_said_before(doc: Doc, earlier: Iterable[Doc]) -> dict[int, date]:
    """The days of the month ``doc``'s conversation named before it, by day of the
    month: from ``earlier`` (the turns before it, nearest first), those of its
    conversation said within :data:`DAYS_SAID_DAYS` days, the nearest naming of a
    day winning."""
    said = _day_of(doc)
    if said is None:
        return {}
    conversation = conversation_key(doc)
    found: dict[int, date] = {}
    for turn in earlier:
        when = _day_of(turn)
        if when is None or when > said:
            continue
        if said - when > timedelta(days=DAYS_SAID_DAYS):
            break
        if conversation_key(turn) != conversation:
            continue
        for day, named in days_named(str(turn.get("text") or ""), when).items():
            found.setdefault(day, named)
    return found


def _day_of(doc: Doc) -> date | None:
    at = doc.get("at")
    if not at:
        return None
    try:
        return parse_iso(str(at)).date()
    except ValueError:
        return None
