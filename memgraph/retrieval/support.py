"""Whether what recall found is about the person a question asks about, or about
someone else.

"What did Dana name her dog?" when only Marcus ever spoke of a dog: the best
texts hold what is asked, but none of them is Dana's. Recall then says that
nothing remembered says it of Dana before it lists what it found, so a reader
does not hand Marcus's dog to Dana. A question whose words no text holds at all
(an answer in other words: "peds ER nurse" for "What does she do for a living?")
is not flagged: it is not a question about someone else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from memgraph.graph.graph import Doc, Graph
from memgraph.retrieval.ranking import Candidate, Query
from memgraph.text import index_terms

__all__ = ["ANSWER_WORDS", "LOOKED_AT", "OWN_SHARE", "SWAP_MARGIN", "Support", "support"]

ANSWER_WORDS = frozenset(
    index_terms(
        "name names named called call time times old age much many long kind type sort "
        "way thing things day date year first last new now currently still ever go going "
        "went do does did doing get got take took make made have has had"
    )
)
"""Words that say what kind of answer is wanted ("the name of", "what time"), not
what it is about: a text need not hold them to be about the topic."""
OWN_SHARE = 0.3
"""Below this share of the topic's words, no text of the named person holds it."""
SWAP_MARGIN = 0.5
"""How much more of the topic someone else's text must hold for the question to be
about someone else's."""
LOOKED_AT = 60
"""How many of the best candidates are read."""


@dataclass(frozen=True)
class Support:
    """How much of a question's topic the best texts hold.

    Attributes:
        own: the best share held by a text of (or naming) a named entity, or one
            of its facts.
        anyone: the best share held by any text or fact.
    """

    own: float
    anyone: float

    @property
    def about_someone_else(self) -> bool:
        """The topic is held, but not by anything of the named entities."""
        return self.own < OWN_SHARE and self.anyone - self.own >= SWAP_MARGIN


def support(
    graph: Graph,
    ranked: Sequence[Candidate],
    query: Query,
    *,
    episode_docs: Mapping[str, Doc],
    frequency: Callable[[str], float],
) -> Support | None:
    """How much of ``query``'s topic the best of ``ranked`` hold, and whose they are.

    ``frequency`` weighs a term (an inverse document frequency); ``None`` when the
    query does not name exactly one entity ("Dana's brother Chidi" names two: whose
    is the topic is then no single person's) or asks nothing but an answer's kind.
    """
    if len(query.named) != 1:
        return None
    topic = [t for t in query.content_terms if t not in ANSWER_WORDS]
    weights = {t: frequency(t) for t in topic}
    total = sum(weights.values())
    if total <= 0:
        return None
    named = set(query.named)
    own = anyone = 0.0
    for item in ranked[:LOOKED_AT]:
        if item.obs is not None:
            text = str(item.obs.get("content") or "")
            theirs = item.entity is not None and item.entity["id"] in named
        elif item.episode is not None and item.episode in episode_docs:
            doc = episode_docs[item.episode]
            text = str(doc.get("text") or "")
            # a question asks about the topic; it does not say it is theirs
            theirs = item.entity is not None and item.entity["id"] in named and "?" not in text
        else:
            continue
        said = set(index_terms(text))
        share = sum(weights[t] for t in topic if t in said) / total
        if not theirs and query.mentions and "?" not in text:
            theirs = any(group <= said for group in query.mentions)
        anyone = max(anyone, share)
        if theirs:
            own = max(own, share)
    return Support(own, anyone)
