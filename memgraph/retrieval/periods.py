"""The texts a question about a stretch of days points to.

"What was Sam doing on December 4, 2023?" is answered by "I went to a Weight
Watchers meeting yesterday", said on 5 December: a text that speaks of that day,
though it holds none of the question's words. "What was Dave doing in the first
weekend of October 2023?" is answered by what Dave said that weekend. The
episode tier finds texts by their words; this module adds the texts the named
people said in that stretch (or in the days after it, speaking of it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta, timezone

from memgraph.dates import Period, asked_period, asks_how_things_stood, periods_spoken_of
from memgraph.graph.graph import Doc
from memgraph.retrieval.episode_index import SAID_WITHIN_BONUS, EpisodeIndex
from memgraph.retrieval.ranking import Candidate
from memgraph.retrieval.support import MOSTLY_THEIRS, OWN_SHARE, Support

__all__ = [
    "JUDGED_DAYS_AFTER",
    "PERIOD_TEXTS",
    "REACH_DAYS",
    "SAID_IN_SHARE",
    "SHORT_DAYS",
    "SPOKEN_OF_BONUS",
    "SPOKEN_OF_SHARE",
    "WORDED_FACTOR",
    "period_shares",
    "someone_else_s_then",
]

REACH_DAYS = 14
"""How long before or after a stretch a text may still speak of it ("next
weekend", "last week")."""
SHORT_DAYS = 8
"""A stretch this long or shorter (a day, a weekend, a week) is asked about as a
whole: everything the named people said in it is a candidate."""
SAID_IN_SHARE = 0.45
"""The share of a text said in a short stretch by a person the question names,
when it holds none of the question's words."""
SPOKEN_OF_BONUS = SAID_WITHIN_BONUS
"""What a text gains for speaking of a day inside the stretch."""
WORDED_FACTOR = 0.5
"""How much of :data:`SAID_IN_SHARE` a wordless text keeps when other texts of
theirs said in the stretch hold the question's words."""
SPOKEN_OF_SHARE = 0.6
"""The least share of a text that speaks of a day inside a short stretch."""
PERIOD_TEXTS = 40
"""At most this many texts around the stretch are read for the days they speak of
(reading a text's dates the first time takes about half a millisecond)."""


def period_shares(
    index: EpisodeIndex,
    period: Period,
    lexical: Mapping[str, float],
    *,
    speakers: Iterable[str | None] | None,
    texts: Callable[[list[str]], Mapping[str, str]],
    at_ms: int | None = None,
    source: str | None = None,
) -> dict[str, float]:
    """New lexical shares for the texts ``period`` points to.

    A text that speaks of a day inside it gains :data:`SPOKEN_OF_BONUS` over its
    share without the episode tier's said-within bonus, and holds at least
    :data:`SPOKEN_OF_SHARE` when the stretch is short and the text speaks of
    that stretch itself; over a long stretch, only a text holding some of the
    question's words gains. For a short stretch, the texts the ``speakers``
    said in it that hold none of the question's words get :data:`SAID_IN_SHARE`
    (times :data:`WORDED_FACTOR` when others of theirs hold some).
    ``speakers``: the names of the people the question names (``None`` among
    them: texts remembered without a speaker), or ``None`` for anyone's texts;
    ``texts`` reads episodes' words by id; ``lexical`` is the tier's shares so
    far (with the said-within bonus)."""
    start_ms, end_ms = period.epoch_ms()
    reach_ms = REACH_DAYS * 86_400_000
    names = list(speakers) if speakers is not None else None
    if names is not None and not names:
        return {}
    # what was said in it and after it ("yesterday"), then the nearest said before it
    # ("on Sunday"), at most PERIOD_TEXTS in all: reading a text's dates is not cheap
    timed = index.said_between(
        start_ms,
        end_ms + reach_ms,
        speakers=names,
        at_ms=at_ms,
        source=source,
        timed=True,
        limit=PERIOD_TEXTS,
    )
    if len(timed) < PERIOD_TEXTS:
        timed += index.said_between(
            start_ms - reach_ms,
            start_ms,
            speakers=names,
            at_ms=at_ms,
            source=source,
            timed=True,
            limit=PERIOD_TEXTS - len(timed),
            last=True,
        )
    shares: dict[str, float] = {}
    short = (period.end - period.start).days <= SHORT_DAYS
    if short and names is not None:
        inside = index.said_between(
            start_ms, end_ms, speakers=names, at_ms=at_ms, source=source, limit=PERIOD_TEXTS
        )
        # when some of their texts of that day hold the question's words, those answer it
        worded = any(lexical.get(e, 0.0) > 0.0 for e in inside)
        share = SAID_IN_SHARE * (WORDED_FACTOR if worded else 1.0)
        telling = index.said_between(
            start_ms,
            end_ms,
            speakers=names,
            at_ms=at_ms,
            source=source,
            telling=True,
            limit=PERIOD_TEXTS,
        )
        for episode_id in telling:
            if lexical.get(episode_id, 0.0) <= 0.0:
                shares[episode_id] = share
    widest = max(period.end - period.start, timedelta(days=7))
    closest = max(period.end - period.start, timedelta(days=2))  # "this week" is no day
    words = texts(timed) if timed else {}
    for episode_id in timed:
        said = index.at_of(episode_id)
        text = words.get(episode_id)
        if said is None or not text:
            continue
        day = datetime.fromtimestamp(said / 1000, tz=timezone.utc).date()
        spoken = [
            p.end - p.start
            for p in periods_spoken_of(text, day)
            if p.start < period.end and period.start < p.end and p.end - p.start <= widest
        ]
        if not spoken:
            continue
        before = lexical.get(episode_id, 0.0)
        if before > 0.0 and start_ms <= said < end_ms:
            before -= SAID_WITHIN_BONUS  # said in it and holding the question's words
        share = before + SPOKEN_OF_BONUS
        if short and min(spoken) <= closest:  # that very stretch is what is asked about
            share = max(share, SPOKEN_OF_SHARE)
        elif before <= 0.0:
            continue
        shares[episode_id] = min(1.0, max(share, shares.get(episode_id, 0.0)))
    return shares


JUDGED_DAYS_AFTER = 7
"""How many days after the stretch a question names a text may still speak of it
("last Saturday"), when judging whose the topic was then."""


def _said_on(candidate: Candidate, docs: Mapping[str, Doc]) -> str:
    """The day a candidate was said (``YYYY-MM-DD``; "" when unknown): a text's, or
    the day a fact holds from."""
    if candidate.obs is not None:
        return str(candidate.obs.get("validFrom") or "")[:10]
    doc = docs.get(candidate.episode) if candidate.episode is not None else None
    return str(doc.get("at") or "")[:10] if doc is not None else ""


def someone_else_s_then(
    query: str,
    found: Sequence[Candidate],
    docs: Mapping[str, Doc],
    judge: Callable[[Sequence[Candidate]], Support | None],
) -> bool:
    """Whether, of what was said in the stretch of days ``query`` names ("on 9 April
    2023", "in August 2022") or in the :data:`JUDGED_DAYS_AFTER` days after it,
    someone else's texts and facts hold most of the topic and theirs little ("Which
    show did Jolene go to with a friend on 9 April 2023?" when that day only
    Deborah speaks of an art show, and Jolene's shows were other days'). ``found``
    are the candidates recall found, ``docs`` their texts, and ``judge`` weighs a
    set of them (see :func:`memgraph.retrieval.support.support`)."""
    period = asked_period(query)
    if period is None or asks_how_things_stood(query):
        return False
    start = period.start.isoformat()
    end = (period.end + timedelta(days=JUDGED_DAYS_AFTER)).isoformat()
    then = [c for c in found if start <= _said_on(c, docs) < end]
    held = judge(then) if then else None
    return (
        held is not None
        and held.about_someone_else
        and held.own < OWN_SHARE
        and held.anyone >= MOSTLY_THEIRS
    )
