"""Recall: one function per tier, the query's analysis, and the fusion rule.

Tier 1 (structured, from indexes): the entities the query names, entity
types, observation keywords (IDF-weighted) and the episode tier's BM25 over
the remembered texts (:mod:`memgraph.retrieval.episode_index`).
Tier 2 (semantic): one matrix-vector product over the scope's vectors, which
hold observations and episodes alike.
Tier 3 (re-rank): the LLM keeps the relevant candidates, in its order.

Candidates are facts (observations) and episodes (remembered texts). Fusion
rule: the query's words are split into the names it mentions and the rest,
its *content*. A candidate's evidence is ``content`` (the share of the
content's IDF weight it holds: keyword share for a fact, BM25 share for an
episode) and ``semantic`` (cosine rescaled so the 0.3 threshold maps to 0),
combined as a noisy-or ``1 - Π(1 - w·signal)`` with weights 0.8 and 0.9. A
name is not evidence on its own, it is a focus: a candidate about an entity
the query names (the fact's entity, the episode's speaker or a name in its
text) gains half of its remaining headroom in proportion to its evidence,
and one about none of the named entities keeps only three quarters of its
score. So "When did Maria join a gym?" ranks Maria's facts about a gym first,
then others' facts about a gym, and never Maria's unrelated small talk. A
query with no content words ("Who is Bob?") is an identity query: the named
entities' facts are the candidates. Hits under :data:`RELEVANCE_FLOOR` are
dropped: an off-topic query returns nothing. Ties break by recency.
"""

from __future__ import annotations

import dataclasses
import functools
import heapq
import itertools
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from memgraph.answer_kinds import answer_cues, asks_name
from memgraph.attributes import asked_attributes
from memgraph.chatter import asks_what_was_asked
from memgraph.dates import asks_about_now, asks_when, mentions_time
from memgraph.graph.graph import Doc, Graph
from memgraph.graph.lazy import PostingIndex
from memgraph.llm_calls.ask import ask_json
from memgraph.llm_calls.prompts import RERANK_SYSTEM, rerank_message, rerank_schema
from memgraph.llm_calls.provider import ChatModel
from memgraph.retrieval.episode_index import FEW_WORDS_MAX
from memgraph.retrieval.names import id_number, mention_groups, named_entities
from memgraph.retrieval.vectors import VectorIndex
from memgraph.sums import asks_amount
from memgraph.text import KIN_WORDS, WORD_FORMS, index_terms, name_key, terms, words

__all__ = [
    "CURRENT",
    "RELEVANCE_FLOOR",
    "SEARCH_FLOOR",
    "SEMANTIC_THRESHOLD",
    "Candidate",
    "EpisodeSignals",
    "Lens",
    "Query",
    "analyze",
    "answers_something",
    "format_entities",
    "fuse",
    "keyword_matches",
    "name_matches",
    "named_facts",
    "relation_lines",
    "rerank",
    "semantic_matches",
    "type_matches",
]

SEMANTIC_THRESHOLD = 0.3
RELEVANCE_FLOOR = 0.12
SEARCH_FLOOR = 0.1
"""search() ranks down to this score (recall's text keeps to RELEVANCE_FLOOR): a ranked
list is read best first, so weak hits at its end cost nothing and may be what was asked."""
WEIGHTS = {"semantic": 0.9, "keyword": 0.8, "content": 0.8, "name": 0.7, "type": 0.1}
"""A type match alone (0.1) stays under the floor: it only boosts other evidence."""
NAME_BOOST = 0.8  # share of the remaining headroom a named candidate gains, times its evidence
OFF_NAME = 0.75  # what a candidate about none of the named entities keeps of its score
KEYWORD_BUDGET = 3_000  # candidates the keyword tier may generate per query
MAX_KEYWORD_HITS = 200  # keyword candidates kept per query (the best by score)
RECALL_PROBE_ROWS = 4_000  # rows of the approximate vector index one recall scores
READ_FACTS = 60  # facts found by words or meaning that are read (the best on a first look)
MIN_KEYWORD_SHARE = 0.15  # below this share of the query's weight a keyword hit is noise
MAX_POSTINGS = 5_000  # terms this common only re-score, they do not generate candidates
ENTITY_FACTS = 20  # facts an identity query brings in per named entity (the newest)
NAMED_FACTS = 256  # a named entity's newest facts the keyword tier scores whatever the postings
MAX_TYPED = 50  # entities a type match brings in (the newest)
RERANK_LIMIT = 40  # candidates the re-ranker sees
FUSED_KEPT = 3  # the best of tiers 1+2 kept after the re-ranker's picks, whatever it picked
PARTIAL_NAMES = 8  # a query word names the entities whose names hold it when at most this many do
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "im", "ive", "id"})
FIRST_PERSON_WORDS = FIRST_PERSON | {"we", "us", "our", "ours", "ourselves"}
"""The words (as :func:`memgraph.text.words` gives them) by which a speaker speaks
of themselves or theirs ("I", "my", "we")."""
ATTRIBUTE_EVIDENCE = 0.75  # a fact stating the attribute asked about (its words aside)
IDENTITY_TEXTS = 0.7  # what a remembered text keeps of its score for an identity query
TIMELESS = 0.65  # what an episode that names no time keeps of its score for a "when" question
TIMELESS_FACT = 0.8  # and a fact that names none (its day said is shown; its text may say more)
RECENCY = 0.3  # how much a "now" question prefers what was said last
ASKING = 0.8  # what a text that only asks keeps of its score (unless what was asked is asked)
ASSISTANT_TEXT = 0.8  # what an assistant's message keeps: its words are no one's facts
UPDATE_BOOST = 1.1  # a text that says something changed ("moved to", "now", "not the 14th")


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
    """A recall candidate: an observation, an episode, or a whole entity.

    ``obs`` is set for a fact; ``episode`` (an episode id) for a remembered
    text, whose ``entity`` is its speaker's entity when there is one; neither
    for an entity that stands for itself. ``label`` is the text the re-ranker
    sees for an episode (the engine fills it in).
    """

    entity: Doc | None
    obs: Doc | None
    signals: dict[str, float] = field(default_factory=dict)
    score: float = 0.0
    episode: str | None = None
    label: str | None = None
    topical: float | None = None
    """For a text that is about a named entity only by naming it: its share of the
    query's words other than names (its content signal also counted a named topic
    such as "Christmas"); what :func:`answers_something` reads instead."""

    @property
    def id(self) -> str:
        if self.obs is not None:
            return str(self.obs["id"])
        if self.episode is not None:
            return self.episode
        assert self.entity is not None
        return str(self.entity["id"])

    def text(self) -> str:
        if self.episode is not None:
            return self.label or self.episode
        assert self.entity is not None
        head = f"{self.entity['name']} ({self.entity.get('type') or 'thing'})"
        return f"{head}: {self.obs['content']}" if self.obs is not None else head


_YEAR = re.compile(r"(?:19|20)\d\d")


def without_years(terms: Sequence[str]) -> tuple[str, ...]:
    """``terms`` without years, unless nothing else is left: a year beside other
    words ("Christmas 2022", "early May 2024") says when, not what."""
    topical = tuple(t for t in terms if not _YEAR.fullmatch(t))
    return topical or tuple(terms)


@dataclass(frozen=True)
class Query:
    """A query split into the entities it names and the rest (its content).

    Attributes:
        text: the query as asked.
        terms: its index terms (stemmed, no stop words), in order, once each.
        named: ids of the entities it names (by name, or the user's entity
            for first-person words).
        name_terms: the terms that only name those entities.
        mentions: how a text mentions a named entity: it holds every term of
            one group (see :func:`memgraph.retrieval.names.mention_groups`).
        unheard: content terms set aside because nothing remembered holds them
            (see :meth:`set_aside`).
    """

    text: str
    terms: tuple[str, ...]
    named: frozenset[str]
    name_terms: frozenset[str]
    mentions: tuple[frozenset[str], ...] = ()
    unheard: tuple[str, ...] = ()

    def set_aside(self) -> Query:
        """This query about its named entities alone, its content set aside as
        unheard: "What did Jess injure?" when no text says "injure" (she said she
        sprained her wrist) asks about Jess, and recall says nothing said it."""
        content = set(self.content_terms)
        kept = tuple(t for t in self.terms if t not in content)
        return dataclasses.replace(self, terms=kept, unheard=tuple(self.content_terms))

    @functools.cached_property
    def asked_text(self) -> str:
        """The query as the texts would say what it asks (:func:`asked_words`)."""
        return asked_words(self.text)

    @functools.cached_property
    def attributes(self) -> set[str]:
        """The single-valued attributes asked about (residence, employer, ...)."""
        return asked_attributes(words(self.text))

    @functools.cached_property
    def asks_when(self) -> bool:
        """A question about time ("When did ...", "What day ...")."""
        return asks_when(self.text)

    @functools.cached_property
    def asks_amount(self) -> bool:
        """A question asking a sum of money ("How much did the ring cost?")."""
        return asks_amount(self.text)

    @functools.cached_property
    def asks_asked(self) -> bool:
        """A question about what was asked ("What did Rosa ask Evelyn about?"): a
        text that only asks answers it."""
        return asks_what_was_asked(self.text)

    @functools.cached_property
    def answer_cues(self) -> list[str]:
        """The words answers of the kind asked for are said in
        (:func:`memgraph.answer_kinds.answer_cues`)."""
        return answer_cues(self.text)

    @functools.cached_property
    def asks_assistant(self) -> bool:
        """A question about what the assistant said ("What did you recommend?", "What
        hotel did the assistant mention?"): its messages answer it."""
        return _TO_ASSISTANT.search(self.text) is not None

    @functools.cached_property
    def asks_a_name(self) -> bool:
        """A question asking what someone or something is called."""
        return asks_name(self.text)

    @functools.cached_property
    def asks_now(self) -> bool:
        """A question about the present or latest state ("... now?", "currently")."""
        return asks_about_now(self.text)

    @property
    def content_terms(self) -> tuple[str, ...]:
        """The terms that say what is asked about the named entities.

        Without a year beside other words (:func:`without_years`): facts carry the
        dates they resolved ("flies Monday (28 November 2022)"), and every fact of
        that year would match it as well as the answer.
        """
        return without_years([t for t in self.terms if t not in self.name_terms])

    @property
    def identity(self) -> bool:
        """True when the query only names entities ("Who is Bob?")."""
        return bool(self.named) and not self.content_terms


_TO_ASSISTANT = re.compile(r"\b(?:assistant|you|your|yours)\b", re.IGNORECASE)
_WHICH_OF_SEVERAL = re.compile(r"\b(?:finally|eventually|ultimately)\b", re.IGNORECASE)
"""Words that ask which of several values ("Where was the party finally held?"), not
about something final: a text's "finally got someone out" says nothing of it
("originally" stays, as "originally from Hamburg" says it)."""
_AGAINST_A_PLAN = re.compile(
    r"\bthan\s+(?:(?:first|originally|initially|previously)\s+)?"
    r"(?:planned|scheduled|expected|projected|intended)\b|"
    r"\b(?:from|than|compared\s+(?:with|to))\s+(?:its|the|their|his|her|our)\s+"
    r"(?:(?:first|original|initial)\s+)?(?:(?:scheduled|planned)\s+)?"
    r"(?:date|plan|schedule)\b",
    re.IGNORECASE,
)
"""Words that say what a change is measured against ("later than first planned",
"pushed back from its original date"): no text says them of the change itself ("the
wedding's moved to the 12th")."""
_COUNTED_IN = re.compile(
    r"\bhow\s+many\s+(?:days|weeks|months|years)\b(?=.*\b(?:later|earlier|sooner|"
    r"pushed\s+back|brought\s+forward|delayed|postponed)\b)",
    re.IGNORECASE,
)
"""The unit a change of date is counted in ("How many weeks later ..."): the texts
give the dates, not the count."""
_CAME_TO = re.compile(r"\bend(?:ed|s)?\s+up\b", re.IGNORECASE)
"""In a question about a change against a plan, words that say it came to be ("How
many weeks later than first planned did the wedding end up taking place?")."""
_IDIOMS = re.compile(r"\bfor a living\b", re.IGNORECASE)
"""Words that only say what kind of answer is asked ("What does Jordan do for a
living?" asks a job, not where anyone lives): not terms of the fact tier's query."""

_CALLED = re.compile(r"\bcalled(?=[\s?.!]*$)", re.IGNORECASE)
"""A question ending "... called?" asks a name ("What is Sam's food truck called?" is
answered by "I have a NAME. Breaded & Buttered"), not who phoned whom."""

_ASKS_NEWS = re.compile(
    r"\bwhat(?:'s|\u2019s| is| has)? (?:been )?(?:happen(?:ed|ing)|going on) (?:to|with)\b|"
    r"\b(?:what(?:'s|\u2019s| is)|anything|something) new (?:with|for|about)\b|"
    r"\b(?:the )?latest (?:on|with|about)\b|\bany news (?:on|from|about|of)\b|"
    r"\b(?:give me|any) (?:an )?updates? (?:on|about)\b|\b(?:update|catch) me up (?:on|about)\b|"
    r"\bupdate me (?:on|about)\b",
    re.IGNORECASE,
)
"""Words that ask for the named one's news ("What happened to Biscuit?", "What's new
with Omar?", "Any news about Biscuit?"), which no text says in those words: not terms
of the query (with nothing else asked, it is an identity query: the named entities'
newest facts, and the texts that name them)."""


def without_news_words(text: str) -> str:
    """``text`` without the words that ask for someone's news (:data:`_ASKS_NEWS`)."""
    return _ASKS_NEWS.sub(" ", text)


def asked_words(text: str) -> str:
    """A question as the texts would say what it asks: without the words that ask
    for someone's news ("What happened to"), which no text holds, nor those that ask
    which of several values ("finally"), nor what a change is measured against
    ("later than first planned", counted in weeks); "... called?" asks a name."""
    against = _AGAINST_A_PLAN.sub(" ", text)
    if against != text:
        text = _CAME_TO.sub(" ", against)
    text = _COUNTED_IN.sub("how many", text)
    return _CALLED.sub(" name", _WHICH_OF_SEVERAL.sub(" ", without_news_words(text)))


_RELATIONS_BESIDE_KIN = """
    partner wife son daughter baby girlfriend boyfriend fiance fiancé fiancee fiancée ex
    gran nan grandson granddaughter nephew niece cousin aunt auntie uncle twin stepmother
    stepfather stepson stepdaughter stepbrother stepsister godson goddaughter godmother
    godfather sister-in-law brother-in-law mother-in-law father-in-law daughter-in-law
    son-in-law friend bestie flatmate roommate housemate neighbour neighbor boss manager
    supervisor coworker co-worker colleague workmate teammate crewmate classmate teacher
    coach tutor mentor student doctor therapist landlord landlady tenant dog cat puppy
    kitten pet horse parrot rabbit hamster
"""
_RELATION_NOUNS = frozenset(
    [*KIN_WORDS, *" ".join(KIN_WORDS.values()).split(), *_RELATIONS_BESIDE_KIN.split()]
)
"""Who someone is to another, or what pet, as a question says it ("Mercy's daughter"):
the family words of :data:`memgraph.text.KIN_WORDS` and the others."""
_OWNER_OF_NAMED = re.compile(r"\b([A-Z][\w-]*['’]s\s+)(?:[a-z-]+\s+)?([a-z-]+)\s+(?=[A-Z][\w-]*\b)")
"""Someone named through another: "Mercy's daughter Liza", "Tom's cat Pierogi"."""


def _asked_about(graph: Graph, text: str, named: set[str]) -> tuple[str, set[str]]:
    """Who ``text`` asks about: the text to take its terms from, and those named.

    A named relative or pet is asked about, not the person they are told through
    ("What line of work did Mercy's daughter Liza end up in?" asks about Liza:
    Mercy's own texts are no nearer to it than anyone's). Kept as it is when the
    one named after the relation is not remembered."""
    if "'" not in text and "’" not in text:
        return text, named
    kept = text
    for found in reversed(list(_OWNER_OF_NAMED.finditer(text))):
        if found.group(2).lower() in _RELATION_NOUNS:
            kept = kept[: found.start(1)] + kept[found.end(1) :]
    if kept == text:
        return text, named
    remaining = set(name_matches(graph, kept))
    if remaining and remaining != named and remaining <= named:
        return kept, remaining
    return text, named


_NAME_AS_MODIFIER = re.compile(r"\b[Tt]he ((?:[A-Z][\w-]*\s)+)(?=[a-z])")
"""A name that says which of something is meant ("the Kottayam house", "the Lisbon
trip"): what is asked about is the house or the trip, which its texts often call by
that word alone ("House update. The Philips agreed to 96 lakhs")."""


def _modifiers(graph: Graph, text: str, named: set[str]) -> set[str]:
    """The entities ``text`` names only to say which thing it asks about."""
    found: set[str] = set()
    for match in _NAME_AS_MODIFIER.finditer(text):
        found |= set(name_matches(graph, match.group(1))) & named
    if not found:
        return found
    rest = _NAME_AS_MODIFIER.sub(" ", text)
    return found - set(name_matches(graph, rest))


def analyze(graph: Graph, text: str, *, user: str | None = None) -> Query:
    """Split ``text`` into named entities and content terms.

    ``user`` is the entity first-person words ("I", "my") stand for.
    """
    named = set(name_matches(graph, text))
    terms_text, named = _asked_about(graph, text, named)
    named -= _modifiers(graph, text, named)
    if user is not None and user in graph.entities and FIRST_PERSON & set(words(text)):
        named.add(user)
    query_terms = tuple(dict.fromkeys(index_terms(asked_words(_IDIOMS.sub(" ", terms_text)))))
    query = Query(
        text,
        query_terms,
        frozenset(named),
        frozenset(_name_terms(graph, named, query_terms)),
        mention_groups(graph, sorted(named), partial=PARTIAL_NAMES),
    )
    if not query.identity:
        return query
    # Naming is all it does: a place or thing named beside a person is what is asked
    # about them ("When was Jon in Rome?"), a word of the question's content.
    people = {e for e in named if e == user or graph.entity_type_key(e) == "person"}
    if not people or people == named:
        return query
    return dataclasses.replace(query, name_terms=frozenset(_name_terms(graph, people, query_terms)))


def _name_terms(graph: Graph, entity_ids: Iterable[str], query_terms: Sequence[str]) -> set[str]:
    """The query's terms that name these entities."""
    found: set[str] = set()
    for entity_id in entity_ids:
        found.update(index_terms(graph.entity_name(entity_id) or ""))
    return found & set(query_terms)


# --------------------------------------------------------------------- tier 1
def name_matches(graph: Graph, query: str) -> set[str]:
    """Entities the query names: exactly (a run of its words is the name) or by a
    distinctive word of their name (one at most :data:`PARTIAL_NAMES` names hold).

    Names shorter than 3 characters are skipped. The cost follows the query's
    words, not the number of entities, even when thousands share a surname.
    """
    exact, partly = named_entities(graph, query, partial=PARTIAL_NAMES, as_written=True)
    return {*exact, *partly}


def type_matches(graph: Graph, query: str, *, among: Iterable[str] | None = None) -> set[str]:
    """Entities whose type is a word of the query (``"people"`` also finds ``person``).

    With ``among`` (the entities the query names, all that :func:`fuse` uses a type
    match for), only those: "Who is Person_17?" does not copy the ids of every person.
    """
    variants = {
        variant
        for word in set(terms(query))
        for variant in (word, word.rstrip("s"), "person" if word == "people" else word)
    }
    if among is not None:  # each named entity's own type: no index of every entity by type
        keys = {name_key(variant) for variant in variants}
        return {entity_id for entity_id in among if graph.entity_type_key(entity_id) in keys}
    found: set[str] = set()
    for variant in variants:
        found |= graph.entities_of_type(variant)
    return found


def keyword_matches(
    graph: Graph,
    query: str | Sequence[str],
    *,
    history: bool = False,
    facts: Sequence[str] = (),
) -> dict[str, float]:
    """Observations containing query terms, scored by their share of IDF weight.

    ``query`` is a text or its index terms. Only current observations, unless
    ``history`` (time travel) asks for all. ``facts`` (the named entities' facts,
    :func:`named_facts`) are scored and kept even when every query term is too
    common to find them through its postings: "Where does Maria Smith work?"
    among 20,000 Smiths who all work somewhere.
    """
    source = index_terms(query) if isinstance(query, str) else query
    query_terms = list(dict.fromkeys(source))
    if not query_terms:
        return {}
    saved = graph.all_term_index() if history else graph.term_index()
    # A word in any of the words said for it: "What did she make?" finds "made a bowl".
    index = {term: _in_any_form(saved, term) for term in query_terms}
    total = max(graph.observation_count, 1)
    rarest = min((len(index.get(t, ())) for t in query_terms if index.get(t)), default=1)
    # A term no fact holds weighs as much as the rarest one that some fact holds:
    # an unknown word in the query still counts as unanswered.
    idf = {t: math.log(1.0 + total / (1 + (len(index.get(t, ())) or rarest))) for t in query_terms}
    weight = sum(idf.values())
    scores: dict[str, float] = dict.fromkeys(facts, 0.0)
    seeded = len(scores)
    # Rarest terms first: they carry the most weight. Once the candidate budget is
    # spent, commoner terms only add to the scores of candidates already found.
    for term in sorted(query_terms, key=lambda t: len(index.get(t, ()))):
        postings = index.get(term)
        if not postings:
            continue
        value = idf[term]
        fits = len(scores) == seeded or len(scores) + len(postings) <= KEYWORD_BUDGET + seeded
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
        # The named entities' facts are not lost among thousands of equal scores.
        kept += [(scores[i], i) for i in facts if scores[i] >= cutoff]
    return {obs_id: score / weight for score, obs_id in kept}


def facts_hold_any(graph: Graph, terms: Iterable[str]) -> bool:
    """Whether some current fact holds one of ``terms`` (or another word said for it)."""
    saved = graph.term_index()
    return any(_in_any_form(saved, term) for term in terms)


def _in_any_form(index: Mapping[str, set[str]] | PostingIndex, term: str) -> set[str]:
    """The ids of facts holding ``term`` or another word said for it (``WORD_FORMS``)."""
    own: set[str] = index.get(term) or set()
    forms = [found for form in WORD_FORMS.get(term, ()) if (found := index.get(form))]
    return own.union(*forms) if forms else own


def named_facts(graph: Graph, entity_ids: Iterable[str], *, history: bool = False) -> list[str]:
    """Ids of the newest :data:`NAMED_FACTS` facts of each of these entities (the ones
    a query names; current facts only, unless ``history``). The keyword and semantic
    tiers score them whatever else matches, so a named entity's facts are never lost
    among thousands of facts that match as well, nor missed by the approximate
    vector index."""
    found: list[str] = []
    for entity_id in sorted(entity_ids):  # the same order in every process (a set's is not)
        entity = graph.entities.get(entity_id)
        taken = 0
        for obs in reversed(entity["observations"]) if entity is not None else ():
            if history or obs.get("validTo") is None:
                found.append(str(obs["id"]))
                taken += 1
                if taken >= NAMED_FACTS:
                    break
    return found


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
    kind: str | None = None,
    facts: Sequence[str] = (),
) -> dict[str, float]:
    """Observations (and episodes) whose vectors are closest to the query's
    (cosine >= threshold); ``kind`` keeps only ``"facts"`` or ``"episodes"``.

    ``mask`` (one boolean per row) replaces the index's own liveness, for
    reads of the past. ``facts`` (the named entities' facts) are scored exactly
    too, beside the ``k`` nearest.
    """
    if index is None or len(index) == 0:
        return {}
    if query_vector is None:
        if embed is None:
            return {}
        query_vector = embed([query])[0]
    rows = RECALL_PROBE_ROWS if mask is None else None
    found = dict(index.search(query_vector, k, threshold, mask=mask, kind=kind, max_rows=rows))
    for obs_id, score in index.similarities(query_vector, facts).items():
        if score >= threshold:
            found.setdefault(obs_id, score)
    return found


# ---------------------------------------------------------------------- fusion
def _noisy_or(signals: Mapping[str, float]) -> float:
    miss = 1.0
    for name, value in signals.items():
        miss *= 1.0 - WEIGHTS.get(name, 0.5) * max(0.0, min(1.0, value))
    return 1.0 - miss


def _rescale(cosine: float) -> float:
    return max(0.0, (cosine - SEMANTIC_THRESHOLD) / (1.0 - SEMANTIC_THRESHOLD))


@dataclass(frozen=True)
class EpisodeSignals:
    """What the episode tier found for a query, and how to judge each episode.

    Attributes:
        content: episode id -> BM25 share of the query's content (a named place or
            thing counts; a named person does not).
        semantic: episode id -> cosine with the query.
        topical: episode id -> BM25 share of the query's words other than any
            name, when it differs from ``content`` (None: it does not).
        speaker: episode id -> the entity id of its speaker, when known.
        mentions: whether an episode's text names one of the query's entities.
        retired: whether every fact an episode stated has since expired.
        timed: whether an episode says when something happened.
        updates: whether an episode says something changed.
        recency: how late an episode was said, 0 (first) to 1 (last).
        names_telling: whether an episode names one of the query's entities that
            speaks in none of the conversations (a speaker's name is near every
            turn of theirs, as the turn before's speaker or called by name);
            ``None``: every name is.
        asks_only: whether every sentence of an episode is a question.
        assistant: whether an episode is the assistant's message.
    """

    content: Mapping[str, float] = field(default_factory=dict)
    semantic: Mapping[str, float] = field(default_factory=dict)
    topical: Mapping[str, float] | None = None
    speaker: Callable[[str], str | None] = lambda _episode: None
    mentions: Callable[[str], bool] = lambda _episode: False
    retired: Callable[[str], bool] = lambda _episode: False
    timed: Callable[[str], bool] = lambda _episode: True
    updates: Callable[[str], bool] = lambda _episode: False
    recency: Callable[[str], float] = lambda _episode: 1.0
    names_telling: Callable[[str], bool] | None = None
    asks_only: Callable[[str], bool] = lambda _episode: False
    assistant: Callable[[str], bool] = lambda _episode: False
    names_something: Callable[[str], bool] = lambda _episode: True


def _focus(score: float, evidence: float, named: bool, any_named: bool) -> float:
    if named:
        return score + (1.0 - score) * NAME_BOOST * min(1.0, evidence)
    return score * OFF_NAME if any_named else score


def fuse(
    graph: Graph,
    query: Query | None = None,
    *,
    names: Iterable[str] = (),
    types: Iterable[str] = (),
    keywords: Mapping[str, float] | None = None,
    semantic: Mapping[str, float] | None = None,
    episodes: EpisodeSignals | None = None,
    floor: float = RELEVANCE_FLOOR,
    limit: int = 200,
    lens: Lens = CURRENT,
) -> list[Candidate]:
    """Merge tier signals into one ranked list of fact and episode candidates.

    ``query`` gives the named entities (``names`` adds more, for callers that
    found them elsewhere); ``keywords`` and ``semantic`` score observations,
    ``episodes`` scores remembered texts.
    """
    is_current = lens.visible
    named = set(names) | (set(query.named) if query is not None else set())
    identity = query.identity if query is not None else not (keywords or semantic or episodes)
    typed = types if isinstance(types, (set, frozenset)) else set(types)
    candidates: dict[str, Candidate] = {}

    def candidate(entity: Doc | None, obs: Doc | None, episode: str | None = None) -> Candidate:
        key = obs["id"] if obs is not None else episode or (entity or {}).get("id", "")
        found = candidates.get(key)
        if found is None:
            found = candidates[key] = Candidate(entity, obs, episode=episode)
        return found

    # Facts found by words or meaning: scored first from the saved arrays (whose fact,
    # owned by whom), and only the best are read, so a common word costs no parsing.
    found: dict[str, dict[str, float]] = {}
    for signal, values in (("content", keywords or {}), ("semantic", semantic or {})):
        for obs_id, value in values.items():
            found.setdefault(obs_id, {})[signal] = (
                _rescale(value) if signal == "semantic" else value
            )
    if len(found) > READ_FACTS:
        found = dict(heapq.nlargest(READ_FACTS, found.items(), key=_first_look(graph, named)))
    graph.parse_many(observation_ids=found, entity_ids=named)
    for obs_id, signals in found.items():
        pair = graph.observation(obs_id)
        if pair is None or not is_current(pair[1]):
            continue
        if "content" not in signals and _says_few_words(pair[1], query):
            continue  # "approves", "is ready": its vector is mostly its owner's name
        candidate(*pair).signals.update(signals)
    asked = query.attributes if query is not None else set()
    if asked and named and lens.at is None:
        # "Where does Ana live now?": the named entities' facts stating that attribute
        # answer it, whatever their words ("moved to Berlin").
        for entity_id in sorted(named):
            if entity_id not in graph.entities:
                continue
            held = graph.facts_of(entity_id)
            for attribute in asked:
                for obs_id in held.attributes.get(attribute, ()):
                    pair = graph.observation(obs_id)
                    if pair is not None and is_current(pair[1]):
                        item = candidate(*pair)
                        item.signals["content"] = max(
                            item.signals.get("content", 0.0), ATTRIBUTE_EVIDENCE
                        )
    if identity:
        # No content words: the named entities' newest visible facts stand for them.
        for entity_id in sorted(named):
            entity = graph.entities.get(entity_id)
            if entity is None:
                continue
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
                candidate(entity, fact).signals["name"] = 1.0
    if episodes is not None:
        for signal, values in (("content", episodes.content), ("semantic", episodes.semantic)):
            for episode_id, value in values.items():
                if episodes.retired(episode_id):
                    continue
                speaker = episodes.speaker(episode_id)
                entity = graph.entities.get(speaker) if speaker else None
                item = candidate(entity, None, episode_id)
                item.signals[signal] = _rescale(value) if signal == "semantic" else value
                if episodes.topical is not None and (entity is None or entity["id"] not in named):
                    # About a named entity only by naming it: that name is no evidence.
                    item.topical = episodes.topical.get(episode_id, 0.0)
    newest_typed = set(heapq.nlargest(MAX_TYPED, typed & named, key=id_number)) if typed else set()
    # A fact of another entity is about a named one when it mentions it in the
    # query's own words ("Maria" for "Maria Smith"; not "Smith" alone among many).
    asked = set(query.terms) if query is not None else set()
    mentioned = [g for g in query.mentions if g <= asked] if query is not None else []
    for item in candidates.values():
        if "name" in item.signals:
            item.score = _noisy_or(item.signals)
            continue
        evidence = max(item.signals.get("content", 0.0), item.signals.get("semantic", 0.0))
        score = _noisy_or(item.signals)
        if item.episode is not None:
            own = item.entity is not None and item.entity["id"] in named
            about = bool(named) and (
                own or (episodes is not None and episodes.mentions(item.episode))
            )
            telling = episodes.names_telling if episodes is not None else None
            if about and not own and telling is not None and not telling(item.episode):
                # Naming a speaker keeps a text on the topic, but only their own
                # words (or a name of someone who does not speak) gain.
                evidence = 0.0
        else:
            about = item.entity is not None and item.entity["id"] in named
            if not about and mentioned and item.obs is not None:
                said = set(index_terms(item.obs["content"]))
                about = any(group <= said for group in mentioned)
            if item.entity is not None and item.entity["id"] in newest_typed:
                item.signals["type"] = 1.0
                score = _noisy_or(item.signals)
        if about:
            item.signals["name"] = 1.0
        item.score = _focus(score, evidence, about, bool(named))
        if query is not None and episodes is not None:
            item.score *= _prior(item, query, episodes)
        if identity and item.episode is not None:
            item.score *= IDENTITY_TEXTS  # "Who is Bob?": Bob's facts first, then texts
    ranked = [c for c in candidates.values() if c.score >= floor]
    ranked.sort(key=_rank_key, reverse=True)
    return ranked[:limit]


NAMELESS = 0.85
"""A text that calls nothing by a name, for a question asking a name."""
LONG_QUESTION = 6
"""From this many content terms on, a question ("By how much did Kwame's final
Ledgerline salary exceed Dominic's counteroffer?") is not judged by how much of it
one text holds: its answer is put together from several."""
ANSWER_EVIDENCE = 0.2
STRONG_MEANING = 0.3
TEXT_EVIDENCE = 0.2
"""How much of a question's content the best candidate about a named entity must hold
for recall to answer at all."""


def answers_something(ranked: Sequence[Candidate], query: Query, *, quiet: bool = False) -> bool:
    """Whether ``ranked`` holds an answer to ``query`` worth handing out: when the query
    names entities, some candidate about one of them must hold enough of what is asked
    ("What is the name of Chidi's cat?" is not answered by Dana's cat, nor by Chidi's
    unrelated lines). Identity queries and queries naming nobody always pass.
    ``quiet``: those named never speak and are told of as "Mom" or "she" ("Which
    blood thinner was Carol prescribed?"), so any candidate may be about them."""
    if not query.named or query.identity or len(query.content_terms) >= LONG_QUESTION:
        return True
    for item in ranked:
        if "name" not in item.signals and not quiet:
            continue
        # A vector close to a question that names someone is often close for the name
        # alone: meaning counts here only when it is strong.
        meaning = item.signals.get("semantic", 0.0) - STRONG_MEANING
        # A text's share counts the turns before it at half weight: it must hold more.
        needed = ANSWER_EVIDENCE if item.episode is None else TEXT_EVIDENCE
        content = item.signals.get("content", 0.0) if item.topical is None else item.topical
        if max(content, meaning) >= needed:
            return True
    return False


def _prior(item: Candidate, query: Query, episodes: EpisodeSignals) -> float:
    """What the kind of question says about a candidate: a "when" question wants a
    text that says when; a "now" question wants what was said last."""
    source = item.episode or (item.obs or {}).get("episode")
    factor = 1.0
    if query.asks_when and item.episode is not None and not episodes.timed(item.episode):
        factor *= TIMELESS
    elif query.asks_when and item.obs is not None and not mentions_time(item.obs["content"]):
        factor *= TIMELESS_FACT  # "signed up for a pottery class": its message says when
    if query.asks_now and source:
        factor *= 1.0 - RECENCY + RECENCY * episodes.recency(str(source))
    if item.episode is not None and episodes.updates(item.episode):
        factor *= UPDATE_BOOST  # "it got moved to the 21st": the latest word on something
    if item.episode is not None and not query.asks_asked and episodes.asks_only(item.episode):
        factor *= ASKING  # "Is work far from there?" asks about work, it says nothing of it
    if (
        query.asks_a_name
        and item.episode is not None
        and not episodes.names_something(item.episode)
    ):
        factor *= NAMELESS  # "What is the choir called?": "Côr Seren started up again"
    if item.episode is not None and not query.asks_assistant and episodes.assistant(item.episode):
        # "Noted: you work at Acme", "I don't know that": the user's own words first
        factor *= ASSISTANT_TEXT
    return factor


def _says_few_words(obs: Doc, query: Query | None) -> bool:
    """Whether a fact says at most ``FEW_WORDS_MAX`` words ("is texting"), none of
    them a name the query names ("works at Acme" for "Does Alice work at Acme?")."""
    said = set(index_terms(str(obs.get("content") or "")))
    if len(said) > FEW_WORDS_MAX:
        return False
    return query is None or not any(group <= said for group in query.mentions)


def _first_look(
    graph: Graph, named: set[str]
) -> Callable[[tuple[str, dict[str, float]]], tuple[float, int, str]]:
    """A fact's score before it is read: its signals and whether a named entity owns
    it; at equal scores the newer fact (so the cut does not follow the order the
    tiers happened to list them in)."""

    owner_of = graph.owner_of

    def score(item: tuple[str, dict[str, float]]) -> tuple[float, int, str]:
        obs_id, signals = item
        best = max(signals.values(), default=0.0)
        if named:  # only a named entity's facts gain
            best *= 2.0 if owner_of(obs_id) in named else OFF_NAME
        return best, id_number(obs_id), obs_id

    return score


def _rank_key(candidate: Candidate) -> tuple[float, int, str, str]:
    # Facts before episodes at equal scores (the distilled form reads better),
    # then the most recent.
    doc = candidate.obs or candidate.entity or {}
    return (
        candidate.score,
        0 if candidate.episode is not None else 1,
        doc.get("validFrom") or "",
        candidate.id,
    )


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
    chat: ChatModel, query: str, candidates: list[Candidate], *, limit: int = RERANK_LIMIT
) -> list[Candidate] | None:
    """Keep the candidates the model calls relevant, in its order; ``None`` if it failed.

    The reply's ids are limited to the candidates' (an ``enum`` in the schema,
    which servers with structured output enforce); an id the model decorated
    (``"[obs-3]"``) is read as the candidate's. A reply that names no candidate
    at all (``{"ids": []}``, or only ids that are not candidates) is a failure
    too, so the caller keeps the tier 1+2 order instead of returning nothing.
    """
    shown = candidates[:limit]
    by_id = {c.id: c for c in shown}

    def validate(document: dict[str, object]) -> list[str]:
        ids = document.get("ids")
        if isinstance(ids, str):
            ids = [ids]
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise TypeError("'ids' must be a list of strings")
        return [str(i) for i in ids]

    answer = ask_json(
        chat,
        RERANK_SYSTEM,
        rerank_message(query, [(c.id, c.text()) for c in shown]),
        rerank_schema(list(by_id)),
        validate,
    )
    if answer.value is None:
        return None
    named = [i for i in dict.fromkeys(answer.value) if i in by_id]
    kept: list[Candidate] = []
    for rank, candidate_id in enumerate(named):
        found = by_id[candidate_id]
        found.signals["rerank"] = 1.0 - rank / max(len(named), 1)
        kept.append(found)
    return kept or None


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
        if item.entity is None:
            continue
        facts = order.setdefault(item.entity["id"], [])
        if item.obs is not None:
            facts.append(item.obs)
        if len(order) > max_entities:
            del order[item.entity["id"]]
            break
    graph.parse_relations_of(order)

    def entity_lines(entity_id: str, facts: list[Doc]) -> Iterator[str]:
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
        yield f"{entity['name']} ({entity.get('type') or 'thing'}):"
        yield from (f"  - {o['content']}" for o in facts)
        yield from _relation_lines(graph, entity, is_current)
        yield from (f"  - {o['content']}" for o in others)

    blocks = (entity_lines(entity_id, facts) for entity_id, facts in order.items())
    return budgeted_text(blocks, count_tokens=count_tokens, budget=budget)


WHOLE_TEXT_BYTES = 4
"""A text of at most this many bytes per token of budget is first counted whole."""


def budgeted_text(
    blocks: Iterable[Iterable[str]], *, count_tokens: Callable[[str], int], budget: int
) -> str:
    """The lines of ``blocks`` in order, up to ``budget`` tokens: a block that does not
    fit keeps its lines that do when more than its header fitted, else the text
    stops before it. Lines are taken lazily, so a long block is never made whole.

    A short text (at most :data:`WHOLE_TEXT_BYTES` bytes per token of budget) is
    counted once, whole: when it fits with two tokens to spare per line (what
    counting the lines one by one may add at their joins) it is the answer, and
    no line is counted alone."""
    taken: list[Iterable[str]] = []
    left = WHOLE_TEXT_BYTES * budget
    remaining = iter(blocks)
    whole = True
    for lines in remaining:
        block: list[str] = []
        unread = iter(lines)
        for line in unread:
            block.append(line)
            left -= len(line) + 1
            if left < 0:
                whole = False
                break
        taken.append(block if whole else itertools.chain(block, unread))
        if not whole:
            break
    if whole:
        flat = [line for block in taken for line in block]
        text = "\n".join(flat)
        if count_tokens(text) + 2 * len(flat) <= budget:
            return text
    return _line_by_line(itertools.chain(taken, remaining), count_tokens, budget)


def _line_by_line(
    blocks: Iterable[Iterable[str]], count_tokens: Callable[[str], int], budget: int
) -> str:
    out: list[str] = []
    used = 0
    for lines in blocks:
        for index, line in enumerate(lines):
            cost = count_tokens(line) + 1
            if used + cost > budget:
                if index > 1:  # keep what fitted of this block
                    break
                return "\n".join(out)
            out.append(line)
            used += cost
        if used >= budget:
            break
    return "\n".join(out)
