"""memgraph's own tools for MCP clients, without the SDK: typed results and their text.

Each function takes a :class:`memgraph.Memory` and plain arguments and returns
a frozen dataclass (the tool's structured output); :func:`render` turns any of
them into the text a model reads. :mod:`memgraph.mcp.server` publishes them.
Reads are bounded: search answers at most :data:`MAX_HITS` hits, ``entity`` the
newest :data:`MAX_FACTS` facts and relations, ``notes`` at most
:data:`MAX_NOTES`.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from memgraph import ChangeSet, Hit, Memory, Observation, Relation

__all__ = [
    "MAX_FACTS",
    "MAX_HITS",
    "MAX_NOTES",
    "EntityResult",
    "Fact",
    "ForgetResult",
    "KeyValue",
    "Link",
    "NoteResult",
    "NotesResult",
    "RecallResult",
    "RememberResult",
    "SearchHit",
    "SearchResult",
    "entity",
    "forget",
    "kv_get",
    "kv_set",
    "note",
    "notes",
    "recall",
    "remember",
    "render",
    "search",
]

MAX_HITS = 50
MAX_FACTS = 100
MAX_NOTES = 100


@dataclass(frozen=True)
class Fact:
    """One observation: what is (or was) true about an entity, when, and where it came from."""

    entity: str
    fact: str
    valid_from: str
    valid_to: str | None = None
    source: str | None = None
    episode: str | None = None


@dataclass(frozen=True)
class Link:
    """One relation: ``source --type--> target``, with its validity."""

    source: str
    type: str
    target: str
    valid_from: str
    valid_to: str | None = None


@dataclass(frozen=True)
class RememberResult:
    """What ``remember`` learned: new facts and links, and the ones it retired."""

    added: tuple[Fact, ...]
    added_links: tuple[Link, ...]
    expired: tuple[Fact, ...]
    expired_links: tuple[Link, ...]
    episode: str | None
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class ForgetResult:
    """The facts and links ``forget`` expired (history keeps them)."""

    expired: tuple[Fact, ...]
    expired_links: tuple[Link, ...]
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class RecallResult:
    """The facts relevant to ``query``, grouped by entity ("" when none)."""

    query: str
    text: str
    as_of: str | None = None


@dataclass(frozen=True)
class SearchHit:
    """One ranked fact (or a whole entity when ``fact`` is None), with its provenance."""

    score: float
    entity: str
    entity_type: str
    fact: str | None
    valid_from: str | None
    valid_to: str | None
    source: str | None
    matched: tuple[str, ...]
    episode: str | None = None
    episode_text: str | None = None
    episode_at: str | None = None


@dataclass(frozen=True)
class SearchResult:
    """Ranked hits for ``query``, best first."""

    query: str
    hits: tuple[SearchHit, ...]
    as_of: str | None = None


@dataclass(frozen=True)
class EntityResult:
    """An entity with its history: current and expired facts and links, newest first."""

    name: str
    type: str
    facts: tuple[Fact, ...]
    links: tuple[Link, ...]
    facts_total: int
    links_total: int


@dataclass(frozen=True)
class NoteResult:
    """A stored note."""

    id: str
    entity: str
    content: str
    category: str | None
    tags: tuple[str, ...]


@dataclass(frozen=True)
class NotesResult:
    """Current notes, newest first."""

    notes: tuple[NoteResult, ...]


@dataclass(frozen=True)
class KeyValue:
    """A key's value (``None`` when unset or forgotten) and its version number."""

    key: str
    value: Any
    version: int


def _fact(name: str, obs: Observation) -> Fact:
    return Fact(name, obs.content, obs.valid_from, obs.valid_to, obs.source, obs.episode_id)


def _link(relation: Relation) -> Link:
    return Link(
        relation.from_name, relation.type, relation.to_name, relation.valid_from, relation.valid_to
    )


_NAMES: weakref.WeakKeyDictionary[Memory, dict[str, str]] = weakref.WeakKeyDictionary()
_NAMES_LOCK = threading.Lock()  # tools run on worker threads


def _known(memory: Memory, names: dict[str, str]) -> None:
    with _NAMES_LOCK:
        _NAMES.setdefault(memory, {}).update(names)


def _name_of(memory: Memory, entity_id: str) -> str:
    """The name of the entity with this id (ids never change name; a miss reloads the list)."""
    with _NAMES_LOCK:
        found = _NAMES.get(memory, {}).get(entity_id)
    if found is None:
        everything = {e.id: e.name for e in memory.entities()}
        _known(memory, everything)
        found = everything.get(entity_id, entity_id)
    return found


def _names(changes: ChangeSet, memory: Memory) -> dict[str, str]:
    names = {e.id: e.name for e in changes.added_entities}
    for relation in (*changes.added_relations, *changes.expired_relations):
        names[relation.from_id], names[relation.to_id] = relation.from_name, relation.to_name
    _known(memory, names)
    for obs in (*changes.added_observations, *changes.expired_observations):
        if obs.entity_id not in names:
            names[obs.entity_id] = _name_of(memory, obs.entity_id)
    return names


def remember(
    memory: Memory, text: str, *, at: str | None = None, source: str | None = None
) -> RememberResult:
    """Learn the facts in ``text`` (one LLM call); the text is kept as their episode."""
    changes = memory.remember(text, at=at, source=source)
    names = _names(changes, memory)
    return RememberResult(
        tuple(_fact(names.get(o.entity_id, o.entity_id), o) for o in changes.added_observations),
        tuple(_link(r) for r in changes.added_relations),
        tuple(_fact(names.get(o.entity_id, o.entity_id), o) for o in changes.expired_observations),
        tuple(_link(r) for r in changes.expired_relations),
        changes.episode.id if changes.episode else None,
        changes.warnings,
    )


def forget(memory: Memory, request: str) -> ForgetResult:
    """Expire the facts ``request`` describes (the model chooses them; history keeps them)."""
    changes = memory.forget(request)
    names = _names(changes, memory)
    return ForgetResult(
        tuple(_fact(names.get(o.entity_id, o.entity_id), o) for o in changes.expired_observations),
        tuple(_link(r) for r in changes.expired_relations),
        changes.warnings,
    )


def recall(memory: Memory, query: str, *, as_of: str | None = None) -> RecallResult:
    """The relevant facts as text; ``as_of`` reads the memory as it was then."""
    if not isinstance(query, str) or not query.strip():
        raise ValueError("recall needs a non-empty query")
    if as_of is None:
        return RecallResult(query, memory.recall(query))
    view = memory.as_of(as_of)
    return RecallResult(query, view.recall(query), view.at)


def search(memory: Memory, query: str, *, k: int = 10, as_of: str | None = None) -> SearchResult:
    """Ranked facts for ``query`` with the text each came from."""
    if not isinstance(query, str) or not query.strip():
        raise ValueError("search needs a non-empty query")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_HITS:
        raise ValueError(f"k must be between 1 and {MAX_HITS}, got {k!r}")
    at = None
    if as_of is None:
        hits: list[Hit] = memory.search(query, k=k, episodes=True)
    else:
        view = memory.as_of(as_of)
        hits, at = view.search(query, k=k, episodes=True), view.at
    found = []
    for hit in hits:
        obs, episode, owner = hit.observation, hit.episode, hit.entity
        speaker = episode.speaker if episode and episode.speaker else ""
        found.append(
            SearchHit(
                score=hit.score,
                entity=owner.name if owner else speaker,  # a text's speaker
                entity_type=owner.type if owner else "text",
                fact=obs.content if obs else None,
                valid_from=obs.valid_from if obs else None,
                valid_to=obs.valid_to if obs else None,
                source=obs.source if obs else (owner.source if owner else None),
                matched=tuple(sorted(hit.tiers)),
                episode=episode.id if episode else None,
                episode_text=episode.text if episode else None,
                episode_at=episode.at if episode else None,
            )
        )
    return SearchResult(query, tuple(found), at)


def entity(memory: Memory, name: str) -> EntityResult:
    """An entity's facts and links, current and expired, newest first (bounded).

    Raises:
        NotFound: no entity has that name.
    """
    history = memory.history(name)
    known = history.entity.name
    facts = sorted(history.observations, key=lambda o: (o.valid_from, o.id), reverse=True)
    links = sorted(history.relations, key=lambda r: (r.valid_from, r.id), reverse=True)
    return EntityResult(
        known,
        history.entity.type,
        tuple(_fact(known, o) for o in facts[:MAX_FACTS]),
        tuple(_link(r) for r in links[:MAX_FACTS]),
        len(facts),
        len(links),
    )


def note(memory: Memory, content: str, *, category: str, tags: Sequence[str] = ()) -> NoteResult:
    """Store ``content`` verbatim as a categorized note (no LLM)."""
    stored = memory.note(content, category=category, tags=list(tags))
    owner = _name_of(memory, stored.entity_id)
    return NoteResult(stored.id, owner, stored.content, stored.category, stored.tags)


def notes(
    memory: Memory,
    *,
    category: str | None = None,
    tags: Sequence[str] = (),
    search: str | None = None,
    limit: int = 20,
) -> NotesResult:
    """Current notes, newest first, filtered by category, tags and a substring."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_NOTES:
        raise ValueError(f"limit must be between 1 and {MAX_NOTES}, got {limit!r}")
    found = memory.notes(category, list(tags) or None, search=search, limit=limit)
    return NotesResult(
        tuple(NoteResult(n.id, n.entity, n.content, n.category, n.tags) for n in found)
    )


def kv_get(memory: Memory, key: str) -> KeyValue:
    """The latest value of ``key`` (``None`` if unset or forgotten)."""
    return KeyValue(key, memory.kv.recall(key), len(memory.kv.history(key)))


def kv_set(memory: Memory, key: str, value: Any) -> KeyValue:
    """Store ``value`` as the newest version of ``key`` (older versions are kept)."""
    version = memory.kv.remember(key, value)
    return KeyValue(key, memory.kv.recall(key), version)


# ------------------------------------------------------------------------ text
def _span(valid_from: str | None, valid_to: str | None) -> str:
    return f"{valid_from or '?'} → {valid_to or 'current'}"


def _link_text(link: Link) -> str:
    return f"{link.source} {link.type} → {link.target}"


def render(result: object) -> str:
    """The text a model reads for a tool's result."""
    if isinstance(result, RememberResult):
        lines = [f"+ {f.entity}: {f.fact}" for f in result.added]
        lines += [f"+ {_link_text(link)}" for link in result.added_links]
        lines += [f"- expired: {f.entity}: {f.fact}" for f in result.expired]
        lines += [f"- expired: {_link_text(link)}" for link in result.expired_links]
        return "\n".join(lines) or "Nothing new to remember."
    if isinstance(result, ForgetResult):
        lines = [f"- expired: {f.entity}: {f.fact}" for f in result.expired]
        lines += [f"- expired: {_link_text(link)}" for link in result.expired_links]
        return "\n".join(lines) or "Nothing matched; nothing was forgotten."
    if isinstance(result, RecallResult):
        return result.text or f"Nothing in memory is relevant to {result.query!r}."
    if isinstance(result, SearchResult):
        lines = []
        for hit in result.hits:
            what = f": {hit.fact}" if hit.fact else ""
            lines.append(f"{hit.score:.2f} {hit.entity} ({hit.entity_type}){what}")
            if hit.episode_text:
                lines.append(f"    from {hit.episode_at}: {hit.episode_text}")
        return "\n".join(lines) or f"Nothing in memory matches {result.query!r}."
    if isinstance(result, EntityResult):
        lines = [f"{result.name} ({result.type})"]
        lines += [f"  {_span(f.valid_from, f.valid_to)}  {f.fact}" for f in result.facts]
        lines += [
            f"  {_span(link.valid_from, link.valid_to)}  {_link_text(link)}"
            for link in result.links
        ]
        if result.facts_total > len(result.facts) or result.links_total > len(result.links):
            lines.append(
                f"  (newest {len(result.facts)} of {result.facts_total} facts and "
                f"{len(result.links)} of {result.links_total} links)"
            )
        return "\n".join(lines)
    if isinstance(result, NoteResult):
        return f"Noted ({result.category}) about {result.entity}: {result.content}"
    if isinstance(result, NotesResult):
        return (
            "\n".join(
                f"[{n.category}] {n.content}" + (f" #{' #'.join(n.tags)}" if n.tags else "")
                for n in result.notes
            )
            or "No notes."
        )
    if isinstance(result, KeyValue):
        if result.value is None:
            return f"{result.key} is not set."
        return f"{result.key} = {orjson.dumps(result.value).decode()} (version {result.version})"
    raise TypeError(f"no text for {type(result).__name__}")
