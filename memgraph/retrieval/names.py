"""Which entities a text names: exact names (runs of words) and distinctive partial names.

Shared by recall's name tier and the extraction context. Costs follow the
words of the text, never the number of entities: a run of words is looked up
in the normalized-name index, and a word that many names share (a common
surname) is only used together with the other words of the run.

The rule for a word that many names share ("Smith" of 20,000 Smiths,
"person" of ``Person_1`` … ``Person_N``): it names an entity only as part of
that entity's whole name (or of a run of words equal to it). On its own it
names an entity only when at most ``partial`` names hold it, and then all of
them, newest first; a word more names share names none of them, and is
never expanded into its entities. The same rule says when a text *mentions*
an entity it was asked about (:func:`mention_groups`): by a distinctive word
of its name, or by all of its words when none is distinctive.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from memgraph.graph.graph import Doc, Graph
from memgraph.graph.lazy import PostingIndex
from memgraph.text import STOP_WORDS, index_terms, words
from memgraph.text import terms as name_terms

__all__ = [
    "MAX_NAME_WORDS",
    "PARTIAL_NAMES",
    "NameLookups",
    "id_number",
    "mention_groups",
    "named_entities",
]

MAX_NAME_WORDS = 6
"""Longest entity name (in words) found by exact lookup in a text."""
PARTIAL_NAMES = 3
"""A word of the text names the entities whose names contain it when at most this many do."""

_OPENERS = "\"'([{<«“‘¿¡*_"
_CLOSERS = "\"')]}>»”’.,;:!?*_"
_POSSESSIVES = ("'s", "’s")


def _core(token: str, *, first: bool, last: bool) -> str:
    """``token`` without the punctuation that surrounds a name in running text."""
    if first:
        token = token.lstrip(_OPENERS)
    if last:
        token = token.rstrip(_CLOSERS)
        for ending in _POSSESSIVES:
            if token.endswith(ending):
                token = token[: -len(ending)]
    return token


def _usable(entity: Doc | None) -> bool:
    # As recall's name tier: names under 3 characters match too much.
    return entity is not None and len(str(entity["name"]).strip()) >= 3


def _name_terms_of(token: str) -> tuple[str, ...]:
    """The words of ``token`` a name index holds (no stop words or one-letter words)."""
    found = _TERMS_OF.get(token)
    if found is None:
        found = tuple(w for w in words(token) if len(w) > 1 and w not in STOP_WORDS)
        if len(_TERMS_OF) >= 200_000:
            _TERMS_OF.clear()
        _TERMS_OF[token] = found
    return found


_TERMS_OF: dict[str, tuple[str, ...]] = {}  # token -> its name terms (a pure function, memoized)


class NameLookups:
    """What :func:`named_entities` learnt of one unchanged graph, shared by the texts
    looked up against it (the bulk path finds a window's contexts together): term
    counts and id sets, and span lookups.

    Valid only while the graph does not change: make one per batch of lookups.
    """

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.counts: dict[str, int] = {}
        self.sets: dict[str, set[str]] = {}
        self.spans: dict[tuple[str, ...], Doc | None] = {}


def named_entities(
    graph: Graph,
    text: str,
    *,
    max_words: int = MAX_NAME_WORDS,
    partial: int = PARTIAL_NAMES,
    lookups: NameLookups | None = None,
    as_written: bool = False,
) -> tuple[list[str], list[str]]:
    """Ids of the entities ``text`` names exactly, and of those it names partly.

    Both in order of first mention. Exact: a run of words equal to an entity's
    normalized name (the longest run from each word; runs do not overlap).
    Partly: a word outside those runs that at most ``partial`` entity names
    contain. Names under 3 characters are skipped, as in recall's name tier.
    ``lookups``: what earlier texts learnt of this same, unchanged graph.
    ``as_written``: in a text that writes names with a capital, a word written
    in lower case names nothing partly ("a game" is not "Game of Thrones").
    """
    # An ASCII text is already NFKC and casefolds as it lowers.
    tokens = (
        text.lower() if text.isascii() else unicodedata.normalize("NFKC", text).casefold()
    ).split()
    count = len(tokens)
    index = graph.name_term_index()
    if lookups is None or lookups.graph is not graph:
        lookups = NameLookups(graph)
    # Per token, the name terms it holds, or None when it holds a word that no
    # entity name contains (no name can span it). Stop words and marks hold none.
    # Counts come from the index without building the id set of a common term.
    counts = lookups.counts  # name term -> how many entity names hold it
    held: list[tuple[str, ...] | None] = []
    for token in tokens:
        found = _name_terms_of(token)
        for term in found:
            holders = counts.get(term)
            if holders is None:
                holders = counts[term] = index.count(term)
            if not holders:
                held.append(None)
                break
        else:
            held.append(found)
    postings = _Postings(index, lookups)
    # next_name[i]: the first token at or after i holding a name term.
    next_name = [count] * (count + 1)
    for i in range(count - 1, -1, -1):
        next_name[i] = i if held[i] else next_name[i + 1]
    exact: dict[str, None] = {}
    covered = [False] * count
    position = 0
    while position < count:
        if held[position] is None:
            position += 1
            continue
        end = position
        while end < count and end - position < max_words and held[end] is not None:
            end += 1
        stop = end
        while stop > next_name[position]:  # a run must hold a name term
            span = tuple(tokens[position:stop])
            if span in lookups.spans:
                entity = lookups.spans[span]
            else:
                entity = lookups.spans[span] = _lookup(graph, span)
            if entity is not None:
                exact.setdefault(str(entity["id"]), None)
                covered[position:stop] = [True] * (stop - position)
                break
            stop -= 1
        position = stop if stop > next_name[position] else position + 1
    partly: dict[str, None] = {}
    graph.parse_many(
        entity_ids=[
            entity_id
            for position, terms in enumerate(held)
            if terms and not covered[position]
            for term in terms
            if 0 < counts[term] <= partial
            for entity_id in postings[term]
        ]
    )
    lower = _lower_case_words(text, count) if as_written else [False] * count
    for position, terms in enumerate(held):
        if not terms or covered[position] or lower[position]:
            continue
        for term in terms:
            if not counts[term] or counts[term] > partial:
                continue
            ids = postings[term]
            for entity_id in sorted(ids, key=id_number, reverse=True):  # newest first
                if entity_id not in exact and _usable(graph.entities.get(entity_id)):
                    partly.setdefault(entity_id, None)
    return list(exact), list(partly)


def _lower_case_words(text: str, count: int) -> list[bool]:
    """Per word of ``text``: whether it is written in lower case in a text that
    writes some other word, past its first, with a capital (all ``False`` for a
    text typed in lower case, where a name may be too)."""
    words = text.split()
    if len(words) != count:
        return [False] * count
    starts = [w.lstrip("\"'(“‘[")[:1] for w in words]
    if not any(c.isupper() for c in starts[1:]):
        return [False] * count
    return [c.islower() for c in starts]


class _Postings:
    """The entity ids of name terms, built only for the terms that need them."""

    def __init__(self, index: PostingIndex, lookups: NameLookups) -> None:
        self.index = index
        self.counts = lookups.counts
        self.sets = lookups.sets

    def __getitem__(self, term: str) -> set[str]:
        found = self.sets.get(term)
        if found is None:
            found = self.sets[term] = self.index.get(term) or set()
        return found


def _lookup(graph: Graph, span: tuple[str, ...]) -> Doc | None:
    """The entity named exactly by ``span``: without the punctuation around it
    (``(Acme``, ``Vorn.``, ``Mira's``), else as written (``Acme Inc.``). Two lookups in
    the normalized-name index, whatever the number of names sharing its words."""
    last = len(span) - 1
    core = " ".join(_core(t, first=i == 0, last=i == last) for i, t in enumerate(span))
    entity = graph.entity_by_name(core) if core else None
    if entity is None:
        raw = " ".join(span)
        if raw != core:
            entity = graph.entity_by_name(raw)
    return entity if _usable(entity) else None


def mention_groups(
    graph: Graph, entity_ids: Iterable[str], *, partial: int = PARTIAL_NAMES
) -> tuple[frozenset[str], ...]:
    """How a text mentions these entities, as groups of index terms (stemmed): a text
    mentions one of them when it holds every term of one group.

    Each distinctive word of a name (one at most ``partial`` names hold, "Maria" of
    "Maria Smith") is a group of its own; a name with no distinctive word ("John
    Smith" among many Johns and Smiths) is one group of all its words. A word that
    many names share is never a group alone, so "Smith" in a text does not make it
    about every Smith. Costs a count lookup per word of the names.
    """
    index = graph.name_term_index()
    groups: dict[frozenset[str], None] = {}
    for entity_id in entity_ids:
        name_words = name_terms(graph.entity_name(entity_id) or "")
        rare = [w for w in name_words if index.count(w) <= partial]
        for chosen in [[w] for w in rare] if rare else [name_words]:
            group = frozenset(t for w in chosen for t in index_terms(w))
            if group:
                groups.setdefault(group, None)
    return tuple(groups)


def id_number(item_id: str) -> int:
    _, _, number = item_id.rpartition("-")
    return int(number) if number.isdigit() else 0
