"""The ``<known>`` block of an extraction prompt: a bounded context whose cost and
size do not depend on how big the scope is.

The model extracting facts from a text needs two things from memory: the exact
names of the existing entities the text talks about, so it reuses them instead
of inventing near-duplicates, and their current facts, so it can tell what is
new, what repeats and what the text contradicts (expirations). The context is
built from three sources, in this order:

1. **Entities the text names**, and the speaker's own when it speaks in the
   first person. Every run of up to :data:`MAX_NAME_WORDS` words
   of the text is looked up in the graph's exact normalized-name index
   (:meth:`Graph.entity_by_name`), longest run first. A run holding a word that
   no entity name contains (checked in the name-term index) is not looked up,
   so a text costs a few dictionary lookups per word, whatever the scope.
   The speaker's entity comes right after the named ones: "I'm no longer
   vegetarian" ends a fact of theirs, which must be in view to be expired.
2. **Entities a distinctive word of the text partly names** ("Mira" for "Mira
   Tovan"): a word left over from step 1 that at most :data:`PARTIAL_NAMES`
   entity names contain. A common first name in a large scope names nobody.
3. **The observations nearest the text by meaning**: the :data:`NEIGHBOURS`
   nearest vectors with cosine at least 0.3, grouped by entity in rank order.
   The vector search visits at most :data:`PROBE_ROWS` rows of the approximate
   index, a fixed cost. Without vectors (a provider with no embedder) the
   keyword tier stands in.

At most :data:`MAX_ENTITIES` entities are shown, the named ones first, then
the neighbours fill the remaining places, so the context has about the same
size in a scope of a thousand facts and of a million. A named entity shows
its :data:`FACTS_PER_ENTITY` current facts closest to the text (its matched
facts first, then by cosine with the text, newest on ties) and up to
:data:`RELATIONS_PER_ENTITY` current relations; a neighbour shows the facts
that matched. The text is Agency's recall format (``Name (type):`` headers,
``  - `` lines), capped at ``budget`` tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from memgraph.graph.graph import Doc, Graph
from memgraph.retrieval import ranking as tiers
from memgraph.retrieval.names import MAX_NAME_WORDS, PARTIAL_NAMES, NameLookups, named_entities
from memgraph.retrieval.vectors import VectorIndex
from memgraph.text import words

__all__ = [
    "FACTS_PER_ENTITY",
    "MAX_ENTITIES",
    "MAX_NAME_WORDS",
    "NEIGHBOURS",
    "PARTIAL_NAMES",
    "PROBE_ROWS",
    "RELATIONS_PER_ENTITY",
    "NameLookups",
    "Selection",
    "extraction_context",
    "format_selection",
    "named_entities",
    "neighbours",
    "select",
]

NEIGHBOURS = 12
"""Nearest observations by meaning the context considers."""
PROBE_ROWS = 1_000
"""Rows of the approximate vector index one context search scores (whole lists, at least one)."""
MAX_ENTITIES = 8
FACTS_PER_ENTITY = 4
RELATIONS_PER_ENTITY = 4
SCORED_FACTS = 256
"""A named entity's newest facts ranked by closeness to the text (older ones rarely matter)."""


Hits = Sequence[tuple[str, float]]


@dataclass
class Selection:
    """What the context shows: entity ids in order, the facts each matched, and
    which of them the text names (those also show their best facts and relations)."""

    order: list[str] = field(default_factory=list)
    matched: dict[str, list[Doc]] = field(default_factory=dict)
    named: set[str] = field(default_factory=set)


# -------------------------------------------------------------- neighbours
def neighbours(
    graph: Graph,
    text: str,
    vectors: VectorIndex | None,
    query_vector: npt.ArrayLike | None,
    *,
    k: int = NEIGHBOURS,
) -> list[tuple[str, float]]:
    """The ``k`` current observations nearest ``text``: by vector when there are
    vectors, else by keywords (IDF share)."""
    if vectors is not None and len(vectors) and query_vector is not None:
        return vectors.search(
            query_vector, k, tiers.SEMANTIC_THRESHOLD, max_rows=PROBE_ROWS, kind="facts"
        )
    scores = tiers.keyword_matches(graph, text)
    best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return best[:k]


# ---------------------------------------------------------------- selecting
def select(
    graph: Graph,
    text: str,
    hits: Hits,
    *,
    max_entities: int = MAX_ENTITIES,
    lookups: NameLookups | None = None,
    speaker: str | None = None,
) -> Selection:
    """The entities the context shows: named ones, the speaker's when the text speaks
    in the first person ("I'm no longer lactose intolerant" may end a fact of theirs),
    partly named ones, then the entities of ``hits`` (nearest observations), at most
    ``max_entities``. ``lookups``: name lookups shared with other texts over this
    unchanged graph."""
    exact, partly = named_entities(graph, text, lookups=lookups)
    own: list[str] = []
    if speaker is not None and tiers.FIRST_PERSON.intersection(words(text)):
        entity = graph.entity_by_name(speaker)
        if entity is not None:
            own.append(str(entity["id"]))
    chosen = Selection()
    for entity_id in dict.fromkeys((*exact, *own, *partly)):
        if len(chosen.order) >= max_entities:
            break
        if entity_id in graph.entities:
            chosen.order.append(entity_id)
            chosen.named.add(entity_id)
    graph.parse_many(observation_ids=[obs_id for obs_id, _score in hits])
    for obs_id, _score in hits:
        owner = graph.owner_of(obs_id)
        shown = owner is not None and (owner in chosen.named or owner in chosen.matched)
        if owner is None or (not shown and len(chosen.order) >= max_entities):
            continue  # no room for another entity: its facts need not be read
        pair = graph.observation(obs_id)
        if pair is None or pair[1].get("validTo") is not None:
            continue
        entity_id = str(pair[0]["id"])
        if entity_id not in chosen.named and entity_id not in chosen.matched:
            chosen.order.append(entity_id)
        chosen.matched.setdefault(entity_id, []).append(pair[1])
    return chosen


def _best_facts(
    entity: Doc,
    matched: list[Doc],
    vectors: VectorIndex | None,
    query_vector: npt.ArrayLike | None,
    count: int,
) -> list[Doc]:
    """``matched`` then the entity's other current facts closest to the text."""
    facts = matched[:count]
    room = count - len(facts)
    if room <= 0:
        return facts
    shown = {o["id"] for o in facts}
    others: list[Doc] = []
    for obs in reversed(entity["observations"]):  # newest first
        if obs.get("validTo") is None and obs["id"] not in shown:
            others.append(obs)
            if len(others) >= SCORED_FACTS:
                break
    if len(others) > room and vectors is not None and query_vector is not None:
        closeness = vectors.similarities(query_vector, [o["id"] for o in others])
        rank = {o["id"]: i for i, o in enumerate(others)}
        others.sort(key=lambda o: (-closeness.get(o["id"], -1.0), rank[o["id"]]))
    return facts + others[:room]


def format_selection(
    graph: Graph,
    chosen: Selection,
    *,
    count_tokens: Callable[[str], int],
    budget: int,
    vectors: VectorIndex | None = None,
    query_vector: npt.ArrayLike | None = None,
) -> str:
    """The selection in Agency's recall text format, at most ``budget`` tokens."""
    blocks: list[list[str]] = []
    graph.parse_relations_of(chosen.named, limit=4 * RELATIONS_PER_ENTITY)
    for entity_id in chosen.order:
        entity = graph.entities[entity_id]
        matched = chosen.matched.get(entity_id, [])
        lines = [f"{entity['name']} ({entity.get('type') or 'thing'}):"]
        if entity_id in chosen.named:
            facts = _best_facts(entity, matched, vectors, query_vector, FACTS_PER_ENTITY)
            lines += [f"  - {o['content']}" for o in facts]
            lines += tiers.relation_lines(
                graph, entity, tiers.CURRENT.visible, limit=RELATIONS_PER_ENTITY
            )
        else:
            lines += [f"  - {o['content']}" for o in matched[:FACTS_PER_ENTITY]]
        blocks.append(lines)
    return _fit(blocks, count_tokens, budget)


def _fit(blocks: list[list[str]], count_tokens: Callable[[str], int], budget: int) -> str:
    """The blocks' lines joined, cut at ``budget`` tokens (whole lines; an entity is
    kept only with at least one line under its header)."""
    whole = "\n".join(line for block in blocks for line in block)
    # A token is at least one byte, so a short text needs no counting, and a
    # text that fits needs one count.
    if len(whole.encode()) <= budget or count_tokens(whole) <= budget:
        return whole
    out: list[str] = []
    used = 0
    for lines in blocks:
        for number, line in enumerate(lines):
            cost = count_tokens(line) + 1
            if used + cost > budget:
                if number > 1:  # keep what fitted of this entity
                    break
                if number == 1:  # a header without any line says nothing
                    out.pop()
                return "\n".join(out)
            out.append(line)
            used += cost
    return "\n".join(out)


def extraction_context(
    graph: Graph,
    text: str,
    *,
    count_tokens: Callable[[str], int],
    budget: int,
    vectors: VectorIndex | None = None,
    query_vector: npt.ArrayLike | None = None,
    hits: Hits | None = None,
    max_entities: int = MAX_ENTITIES,
    lookups: NameLookups | None = None,
    speaker: str | None = None,
) -> str:
    """The ``<known>`` context for extracting from ``text`` (see the module docstring).

    ``hits`` are the nearest observations when already searched (the bulk path
    searches for every text at once); otherwise they are searched here.
    ``lookups``: name lookups shared by texts whose contexts use this same graph.
    ``speaker``: who said the text (their entity is shown for first-person words).
    """
    if not graph.entities:
        return ""
    if hits is None:
        hits = neighbours(graph, text, vectors, query_vector)
    chosen = select(graph, text, hits, max_entities=max_entities, lookups=lookups, speaker=speaker)
    vector = None if query_vector is None else np.asarray(query_vector, dtype=np.float32)
    return format_selection(
        graph,
        chosen,
        count_tokens=count_tokens,
        budget=budget,
        vectors=vectors,
        query_vector=vector,
    )
