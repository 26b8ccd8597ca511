"""Whether a colour a question asks for was ever said.

"What colour is Chloe's Yaris?" is answered only by a text that names a colour
("a silver one", "sage green") and speaks of the Yaris, or follows a turn that
does ("we got the lehenga!" ... "a deep maroon one"). When none of what recall
found does, what it found is only the nearest, and recall says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from memgraph.answer_kinds import kind_named
from memgraph.retrieval.possession import ANSWER_WORDS
from memgraph.text import index_terms

__all__ = [
    "COLOUR_REACH",
    "asks_colour",
    "colours_of_it",
    "names_a_colour",
    "topic_of_colour",
]

_COLOUR = kind_named("colour")
COLOURS = _COLOUR.cues | frozenset(
    index_terms(
        "golden olive khaki tan ivory charcoal coral peach blush champagne plum ruby scarlet "
        "crimson indigo magenta cyan aqua burgundy wine mustard rust amber mauve taupe slate "
        "cobalt emerald jade bronze copper ginger tabby brindle tortoiseshell tortie sand "
        "sandy chestnut blonde blond auburn terracotta ochre lime cherry rose fuchsia sage"
    )
)
"""The index terms of colours' names: the everyday ones and more ("sage", "wine",
"brindle")."""
_ASKING_WORDS = frozenset(index_terms("colour color colours colors shade"))
COLOUR_REACH = 3
"""How many turns before a text naming a colour may say what has it ("we got the
lehenga!" ... "a deep maroon one")."""


def asks_colour(question: str) -> bool:
    """Whether ``question`` asks what colour something is ("What colour is
    Chloe's Yaris?", "Which colour did Ren paint the nursery?")."""
    return _COLOUR.asks.search(question.lower().replace("’", "'")) is not None


def topic_of_colour(content_terms: Iterable[str]) -> frozenset[str]:
    """What has the colour: the question's content terms without the words that
    ask for a colour or for any answer ("yaris", "nurseri"; not "colour", "paint")."""
    return frozenset(t for t in content_terms if t not in _ASKING_WORDS and t not in ANSWER_WORDS)


def names_a_colour(text: str) -> bool:
    """Whether ``text`` names a colour ("a bright green cast")."""
    return not COLOURS.isdisjoint(index_terms(text))


def colours_of_it(
    texts: Mapping[str, str],
    topic: Iterable[str],
    before: Callable[[str], Sequence[tuple[str, str]]],
) -> dict[str, str]:
    """The ``texts`` (episode id -> words) that name a colour and speak of
    ``topic``, what has it: in their own words or in the :data:`COLOUR_REACH`
    turns ``before`` them. With no topic, any colour answers."""
    wanted = set(topic)

    def of_it(episode_id: str, words: str) -> bool:
        said = set(index_terms(words))
        if not said & COLOURS:
            return False
        return (
            not wanted
            or bool(said & wanted)
            or any(
                wanted & set(index_terms(earlier))
                for _previous, earlier in before(episode_id)[:COLOUR_REACH]
            )
        )

    return {e: words for e, words in texts.items() if of_it(e, words)}
