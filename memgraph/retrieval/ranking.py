"""Recall: one function per tier, the fusion rule, and the text format.

Tier 1 (structured, from indexes): entity names matched both ways on word
boundaries, entity types, and observation keywords (IDF-weighted).
Tier 2 (semantic): one matrix-vector product over the scope's vectors.
Tier 3 (re-rank): the LLM keeps the relevant candidates, in its order.

Fusion rule. Each current observation gets four signals in [0, 1]:
``semantic`` (cosine rescaled so the 0.3 threshold maps to 0), ``keyword``
(share of the query's IDF weight it contains), ``name`` (its entity's name
matched) and ``type`` (its entity's type matched). They combine as a noisy-or,
``1 - Π(1 - w·signal)`` with weights 0.9, 0.8, 0.7 and 0.3, so any one strong
signal ranks a fact, agreeing signals rank it higher, and nothing exceeds 1.
Hits under :data:`RELEVANCE_FLOOR` are dropped: an off-topic query returns
nothing rather than the least-bad match. Ties break by recency.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from memgraph.graph.graph import Doc, Graph
from memgraph.llm_calls.ask import ask_json
from memgraph.llm_calls.prompts import RERANK_SCHEMA, RERANK_SYSTEM, rerank_message
from memgraph.llm_calls.provider import ChatModel
from memgraph.retrieval.vectors import VectorIndex
from memgraph.text import STOP_WORDS, index_terms, terms, words

__all__ = [
    "CURRENT",
    "RELEVANCE_FLOOR",
    "SEMANTIC_THRESHOLD",
    "Candidate",
    "Lens",
    "format_entities",
    "fuse",
    "keyword_matches",
    "name_matches",
    "relation_lines",
    "rerank",
    "semantic_matches",
    "type_matches",
]

SEMANTIC_THRESHOLD = 0.3
RELEVANCE_FLOOR = 0.25
WEIGHTS = {"semantic": 0.9, "keyword": 0.8, "name": 0.7, "type": 0.2}
"""A type match alone (0.2) stays under the floor: it only boosts other evidence."""
KEYWORD_BUDGET = 3_000  # candidates the keyword tier may generate per query
MAX_KEYWORD_HITS = 500  # keyword candidates kept per query (the best by score)
MIN_KEYWORD_SHARE = 0.15  # below this share of the query's weight a keyword hit is noise
MAX_POSTINGS = 5_000  # terms this common only re-score, they do not generate candidates
ENTITY_FACTS = 20  # facts a name or type match brings in per entity (the newest)
MAX_TYPED = 50  # entities a type match brings in (the newest)


@dataclass(frozen=True)
class Lens:
    """What a read can see: by default the current facts of every source.

    Attributes:
        at: a past moment (ISO-8601 UTC) for time travel, ``None`` for now.
        source: only facts written by this source namespace, ``None`` for all.
    """

    at: str | None = None
    source: str | None = None

    def visible(self, doc: Doc) -> bool:
        """Whether an observation or relation is visible through this lens."""
        if self.source is not None and doc.get("source") != self.source:
            return False
        if self.at is None:
            return doc.get("validTo") is None
        valid_to = doc.get("validTo")
        return (doc.get("validFrom") or "") <= self.at and (valid_to is None or valid_to > self.at)

    def entity_visible(self, entity: Doc) -> bool:
        """Whether an entity with no visible facts still shows (by itself)."""
        if self.source is not None and entity.get("source") != self.source:
            return False
        return self.at is None or (entity.get("createdAt") or "") <= self.at


CURRENT = Lens()


@dataclass
class Candidate:
    """A recall candidate: an observation, or a whole entity when ``obs`` is None."""

    entity: Doc
    obs: Doc | None
    signals: dict[str, float] = field(default_factory=dict)
    score: float = 0.0

    @property
    def id(self) -> str:
        return str(self.obs["id"] if self.obs is not None else self.entity["id"])

    def text(self) -> str:
        head = f"{self.entity['name']} ({self.entity.get('type') or 'thing'})"
        return f"{head}: {self.obs['content']}" if self.obs is not None else head


# --------------------------------------------------------------------- tier 1
def _contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    size = len(needle)
    if size == 0 or size > len(haystack):
        return False
    if size == 1:
        return needle[0] in haystack
    hay, pin = tuple(haystack), tuple(needle)
    return any(hay[i : i + size] == pin for i in range(len(hay) - size + 1))


def name_matches(graph: Graph, query: str) -> set[str]:
    """Entities whose name the query mentions, or whose name contains the query.

    Both on word boundaries; names shorter than 3 characters and names made
    only of stop words are skipped.
    """
    query_words = words(query)
    query_terms = [w for w in query_words if w not in STOP_WORDS]
    index = graph.name_term_index()
    found: set[str] = set()
    holders = {e for t in set(query_terms) for e in index.get(t, ())}
    graph.parse_many(entity_ids=holders)
    for entity_id in holders:
        entity = graph.entities.get(entity_id)
        if entity is None:
            continue
        name_words = graph.name_words(entity_id)
        if len(entity["name"].strip()) < 3 or all(w in STOP_WORDS for w in name_words):
            continue
        if _contains(query_words, name_words) or _contains(name_words, query_terms):
            found.add(entity_id)
    return found


def type_matches(graph: Graph, query: str) -> set[str]:
    """Entities whose type is a word of the query (``"people"`` also finds ``person``)."""
    found: set[str] = set()
    for word in set(terms(query)):
        for variant in {word, word.rstrip("s"), "person" if word == "people" else word}:
            found |= graph.entities_of_type(variant)
    return found


def keyword_matches(graph: Graph, query: str, *, history: bool = False) -> dict[str, float]:
    """Observations containing query terms, scored by their share of IDF weight.

    Only current observations, unless ``history`` (time travel) asks for all.
    """
    query_terms = list(dict.fromkeys(index_terms(query)))
    if not query_terms:
        return {}
    index = graph.all_term_index() if history else graph.term_index()
    total = max(graph.observation_count, 1)
    idf = {t: math.log(1.0 + total / (1 + len(index.get(t, ())))) for t in query_terms}
    weight = sum(idf.values())
    scores: dict[str, float] = {}
    # Rarest terms first: they carry the most weight. Once the candidate budget is
    # spent, commoner terms only add to the scores of candidates already found.
    for term in sorted(query_terms, key=lambda t: len(index.get(t, ()))):
        postings = index.get(term)
        if not postings:
            continue
        value = idf[term]
        fits = not scores or len(scores) + len(postings) <= KEYWORD_BUDGET
        if len(postings) <= MAX_POSTINGS and fits:
            get = scores.get
            for obs_id in postings:
                scores[obs_id] = get(obs_id, 0.0) + value
        elif len(scores) < len(postings):
            for obs_id in scores:
                if obs_id in postings:
                    scores[obs_id] += value
        else:
            for obs_id in postings:
                if obs_id in scores:
                    scores[obs_id] += value
    cutoff = MIN_KEYWORD_SHARE * weight
    kept = [(score, obs_id) for obs_id, score in scores.items() if score >= cutoff]
    if len(kept) > MAX_KEYWORD_HITS:
        kept = heapq.nlargest(MAX_KEYWORD_HITS, kept)
    return {obs_id: score / weight for score, obs_id in kept}


# --------------------------------------------------------------------- tier 2
def semantic_matches(
    index: VectorIndex | None,
    embed: Callable[[Sequence[str]], np.ndarray] | None,
    query: str,
    *,
    k: int = 50,
    threshold: float = SEMANTIC_THRESHOLD,
    query_vector: np.ndarray | None = None,
    mask: np.ndarray | None = None,
) -> dict[str, float]:
    """Observations whose vectors are closest to the query's (cosine >= threshold).

    ``mask`` (one boolean per row) replaces the index's own liveness, for
    reads of the past.
    """
    if index is None or len(index) == 0:
        return {}
    if query_vector is None:
        if embed is None:
            return {}
        query_vector = embed([query])[0]
    return dict(index.search(query_vector, k, threshold, mask=mask))


# ---------------------------------------------------------------------- fusion
def _noisy_or(signals: dict[str, float]) -> float:
    miss = 1.0
    for name, value in signals.items():
        miss *= 1.0 - WEIGHTS.get(name, 0.5) * max(0.0, min(1.0, value))
    return 1.0 - miss


def fuse(
    graph: Graph,
    *,
    names: Iterable[str] = (),
    types: Iterable[str] = (),
    keywords: dict[str, float] | None = None,
    semantic: dict[str, float] | None = None,
    floor: float = RELEVANCE_FLOOR,
    limit: int = 200,
    lens: Lens = CURRENT,
) -> list[Candidate]:
    """Merge tier signals into one ranked list of observation (or entity) candidates."""
    is_current = lens.visible
    named = set(names)
    typed = types if isinstance(types, (set, frozenset)) else set(types)
    candidates: dict[str, Candidate] = {}

    def candidate(entity: Doc, obs: Doc | None) -> Candidate:
        key = obs["id"] if obs is not None else entity["id"]
        found = candidates.get(key)
        if found is None:
            found = candidates[key] = Candidate(entity, obs)
        return found

    graph.parse_many(observation_ids=[*(keywords or ()), *(semantic or ())], entity_ids=named)
    for signal, values in (("keyword", keywords or {}), ("semantic", semantic or {})):
        for obs_id, value in values.items():
            pair = graph.observation(obs_id)
            if pair is None or not is_current(pair[1]):
                continue
            if signal == "semantic":
                value = (value - SEMANTIC_THRESHOLD) / (1.0 - SEMANTIC_THRESHOLD)
            candidate(*pair).signals[signal] = value
    if WEIGHTS["type"] >= floor:
        newest_typed = heapq.nlargest(MAX_TYPED, typed, key=_id_number)
    else:
        # A type match alone stays under the floor, so of the typed entities' facts
        # only those already named can be kept: skip ranking thousands of typed
        # entities ("people" types every person) unless some are also named.
        both = named & typed
        ranked_typed = heapq.nlargest(MAX_TYPED, typed, key=_id_number) if both else []
        newest_typed = [entity_id for entity_id in ranked_typed if entity_id in both]
    for signal, entity_ids in (("name", sorted(named)), ("type", newest_typed)):
        for entity_id in entity_ids:
            entity = graph.entities.get(entity_id)
            if entity is None:
                continue
            # The newest visible facts stand for the entity; older facts that match
            # the query by keyword or meaning are already candidates.
            newest: list[Doc] = []
            for obs in reversed(entity["observations"]):
                if is_current(obs):
                    newest.append(obs)
                    if len(newest) >= ENTITY_FACTS:
                        break
            if not newest and not lens.entity_visible(entity):
                continue
            facts: list[Doc | None] = list(newest) or [None]
            for fact in facts:
                candidate(entity, fact).signals[signal] = 1.0
    for item in candidates.values():
        entity_signals = {"name", "type"} & set(item.signals)
        if item.obs is not None and not entity_signals:
            for signal in ("name", "type"):
                if item.entity["id"] in (named if signal == "name" else typed):
                    item.signals[signal] = 1.0
        item.score = _noisy_or(item.signals)
    ranked = [c for c in candidates.values() if c.score >= floor]
    ranked.sort(
        key=lambda c: (c.score, (c.obs or c.entity).get("validFrom") or "", c.id), reverse=True
    )
    return ranked[:limit]


def _id_number(item_id: str) -> int:
    _, _, number = item_id.rpartition("-")
    return int(number) if number.isdigit() else 0


def every_entity(graph: Graph, lens: Lens = CURRENT) -> list[Candidate]:
    """All entities as low-score candidates (for small scopes when nothing matched)."""
    result = []
    for entity in graph.entities.values():
        current_obs = [o for o in entity["observations"] if lens.visible(o)]
        if not current_obs and not lens.entity_visible(entity):
            continue
        for obs in current_obs or [None]:
            result.append(Candidate(entity, obs, {}, 0.0))
    return result


# --------------------------------------------------------------------- tier 3
def rerank(
    chat: ChatModel, query: str, candidates: list[Candidate], *, limit: int = 40
) -> list[Candidate] | None:
    """Keep the candidates the model calls relevant, in its order; ``None`` if it failed."""
    shown = candidates[:limit]
    by_id = {c.id: c for c in shown}

    def validate(document: dict[str, object]) -> list[str]:
        ids = document.get("ids")
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise TypeError("'ids' must be a list of strings")
        return [str(i) for i in ids]

    answer = ask_json(
        chat,
        RERANK_SYSTEM,
        rerank_message(query, [(c.id, c.text()) for c in shown]),
        RERANK_SCHEMA,
        validate,
    )
    if answer.value is None:
        return None
    kept: list[Candidate] = []
    for rank, candidate_id in enumerate(dict.fromkeys(answer.value)):
        found = by_id.get(candidate_id)
        if found is not None:
            found.signals["rerank"] = 1.0 - rank / max(len(answer.value), 1)
            kept.append(found)
    return kept


# ---------------------------------------------------------------------- format
def relation_lines(
    graph: Graph, entity: Doc, current: Callable[[Doc], bool], *, limit: int | None = None
) -> list[str]:
    """``  - type → Other`` / ``  - Other type → Name`` lines of the entity's
    relations that ``current`` accepts (the first ``limit`` of them)."""
    return list(itertools.islice(_relation_lines(graph, entity, current), limit))


def _relation_lines(graph: Graph, entity: Doc, current: Callable[[Doc], bool]) -> Iterator[str]:
    for rel in graph.relations_of(entity["id"]):
        if not current(rel):
            continue
        other_id = rel["to"] if rel["from"] == entity["id"] else rel["from"]
        other = graph.entity_name(other_id)
        if other is None:
            continue
        if rel["from"] == entity["id"]:
            yield f"  - {rel['type']} → {other}"
        else:
            yield f"  - {other} {rel['type']} → {entity['name']}"


def format_entities(
    graph: Graph,
    ranked: Sequence[Candidate],
    *,
    count_tokens: Callable[[str], int],
    budget: int = 2000,
    max_entities: int = 10,
    extra_facts: int = 5,
    lens: Lens = CURRENT,
) -> str:
    """Agency's recall text: an ``Name (type):`` header per entity, then ``  - `` lines.

    Entities come in the order of their best candidate; each lists its
    matching facts first, then its relations, then a few other current facts,
    and the whole text stops at ``budget`` tokens.
    """
    is_current = lens.visible
    order: dict[str, list[Doc]] = {}
    for item in ranked:
        facts = order.setdefault(item.entity["id"], [])
        if item.obs is not None:
            facts.append(item.obs)
        if len(order) > max_entities:
            del order[item.entity["id"]]
            break
    out: list[str] = []
    used = 0
    graph.parse_relations_of(order)
    for entity_id, facts in order.items():
        entity = graph.entities[entity_id]
        shown = {o["id"] for o in facts}
        need = max(0, extra_facts - len(facts))
        others: list[Doc] = []
        for obs in reversed(entity["observations"]) if need else ():  # newest first
            if is_current(obs) and obs["id"] not in shown:
                others.append(obs)
                if len(others) >= need:
                    break
        # Lines are made as they are used: a hub entity's thousands of relations
        # stop at the budget instead of all being formatted first.
        lines = itertools.chain(
            [f"{entity['name']} ({entity.get('type') or 'thing'}):"],
            (f"  - {o['content']}" for o in facts),
            _relation_lines(graph, entity, is_current),
            (f"  - {o['content']}" for o in others),
        )
        for index, line in enumerate(lines):
            cost = count_tokens(line) + 1
            if used + cost > budget:
                if index > 1:  # keep what fitted of this entity
                    break
                return "\n".join(out)
            out.append(line)
            used += cost
        if used >= budget:
            break
    return "\n".join(out)
