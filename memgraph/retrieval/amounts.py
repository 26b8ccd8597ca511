"""The texts that answer a question asking a sum of money.

"How much rent does Meera pay in Bengaluru?" is answered only by a text that
states an amount (:func:`memgraph.sums.states_amount`) and speaks of the rent,
or follows a turn that does ("the deck oven died", "what happened", "£1,800 to
fix"). The episode tier follows the texts best holding what the sum was for to
the sums said after them; when none of what recall found states one, what it
found is only the nearest, and recall says so instead of handing over another
price.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from memgraph.retrieval.episode_index import EpisodeIndex
from memgraph.retrieval.possession import ANSWER_WORDS
from memgraph.sums import AMOUNT_WORDS, paid_as, states_amount
from memgraph.text import index_terms

__all__ = [
    "AMOUNT_REACH",
    "AMOUNT_READ",
    "AMOUNT_SHARE",
    "amount_shares",
    "sums_of_it",
    "topic_of_amount",
]

AMOUNT_READ = 16
"""How many of the texts best holding what a sum was for are followed."""
AMOUNT_REACH = 2
"""How many turns after such a text a sum may be stated ("the deck oven died",
"what happened", "£1,800 to fix")."""
AMOUNT_SHARE = 0.8
"""A text stating a sum after one that speaks of what it was for: this share of
that text's."""


def topic_of_amount(content_terms: Iterable[str]) -> frozenset[str]:
    """What the amount is for: the question's content terms without the words
    that ask for an amount or for any answer ("rent", "ring", "flights"; not
    "much", "pay", "get")."""
    return frozenset(t for t in content_terms if t not in AMOUNT_WORDS and t not in ANSWER_WORDS)


def amount_shares(
    index: EpisodeIndex,
    topic: Iterable[str],
    *,
    texts: Callable[[list[str]], Mapping[str, str]],
    at_ms: int | None = None,
    source: str | None = None,
) -> dict[str, float]:
    """The texts that state a sum within :data:`AMOUNT_REACH` turns after one of
    the texts best holding ``topic`` (what the sum was for), each at
    :data:`AMOUNT_SHARE` of that text's share; ``texts`` reads episodes' words."""
    found = index.search(list(topic), k=AMOUNT_READ, at_ms=at_ms, source=source)
    following: dict[str, float] = {}
    for episode_id, share in found:
        for step in index.turns_after(episode_id, AMOUNT_REACH):
            following[step] = max(following.get(step, 0.0), AMOUNT_SHARE * share)
    if not following:
        return {}
    said = texts(sorted(following))
    return {e: share for e, share in following.items() if e in said and states_amount(said[e])}


def sums_of_it(
    texts: Mapping[str, str],
    topic: Iterable[str],
    before: Callable[[str], Sequence[tuple[str, str]]],
    *,
    of_kind: Iterable[str] = (),
) -> dict[str, str]:
    """The ``texts`` (episode id -> words) that state a sum and speak of
    ``topic``, what the sum was for: in their own words, in the turns ``before``
    them ("the deck oven died" ... "what happened" ... "£1,800 to fix"), or by
    stating it the way that kind of sum is paid ("950 a month" for rent).
    ``of_kind``: the kind of payment asked (:func:`memgraph.sums.payment_asked`);
    a sum said of the topic must then be said with it ("the HOA fee", not the
    condo's price). With no topic, any sum answers."""
    wanted = set(topic)
    kinds = set(of_kind)

    def of_it(episode_id: str, words: str) -> bool:
        if not states_amount(words):
            return False
        if not wanted or paid_as(wanted, words):
            return True
        said = set(index_terms(words))
        for _previous, earlier in before(episode_id):
            said.update(index_terms(earlier))
        return bool(wanted & said) and (not kinds or bool(kinds & said))

    return {e: words for e, words in texts.items() if of_it(e, words)}
