"""The in-memory knowledge graph of one scope: pure data, indexes, and op application.

The graph keeps entities, observations and relations as dictionaries in the
on-disk ``graph.json`` shape. Every change arrives as a list of *ops* (the same
records the journal stores), applied by :meth:`Graph.apply`, so replaying the
journal on load and applying a fresh change go through one code path.

Op records::

    {"op": "entity",     "entity": {id, name, type, source, createdAt}}
    {"op": "obs",        "entity": entity_id, "obs": {id, content, validFrom, validTo, ...}}
    {"op": "expire_obs", "id": obs_id, "validTo": t, "retiredAt": t, "supersededBy": id?}
    {"op": "rel",        "rel": {id, from, to, type, source, validFrom, validTo, ...}}
    {"op": "expire_rel", "id": rel_id, "validTo": t, "retiredAt": t}
    {"op": "episode",    "episode": {id, text, at, recordedAt, source, metadata}}
    {"op": "purge",      "ids": [...]}    (hard delete of entities/observations/relations/episodes)

Ops of other kinds (key/value, progress, rules) are kept by :attr:`Graph.records`
hooks registered in :data:`EXTRA_OPS`.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from memgraph.attributes import attribute_of
from memgraph.text import content_key, index_terms, index_terms_many, name_key, terms, words

__all__ = ["EXTRA_OPS", "Doc", "Graph"]

Doc = dict[str, Any]

EXTRA_OPS: dict[str, Callable[[Graph, Doc], None]] = {}


@dataclass
class Facts:
    """An entity's current facts by content key and by single-valued attribute."""

    keys: dict[str, str] = field(default_factory=dict)  # content key -> obs id
    attributes: dict[str, set[str]] = field(default_factory=dict)  # attribute -> obs ids

    def add(self, obs: Doc) -> None:
        self.keys[content_key(obs["content"])] = obs["id"]
        attribute = attribute_of(obs["content"])
        if attribute is not None:
            self.attributes.setdefault(attribute, set()).add(obs["id"])

    def remove(self, obs: Doc) -> None:
        key = content_key(obs["content"])
        if self.keys.get(key) == obs["id"]:
            del self.keys[key]
        attribute = attribute_of(obs["content"])
        if attribute is not None:
            self.attributes.get(attribute, set()).discard(obs["id"])


"""Handlers for op kinds owned by other modules (key/value memory, progress, rules)."""


@functools.lru_cache(maxsize=4096)
def _type_key(type_: str) -> str:
    return name_key(type_)


def _inverted(observations: list[Doc]) -> dict[str, set[str]]:
    index: dict[str, set[str]] = defaultdict(set)
    contents = [obs["content"] for obs in observations]
    for obs, found in zip(observations, index_terms_many(contents), strict=True):
        for term in set(found):
            index[term].add(obs["id"])
    return index


class Graph:
    """Entities, observations and relations of one scope, with lookup indexes."""

    def __init__(self) -> None:
        self.entities: dict[str, Doc] = {}
        self.relations: dict[str, Doc] = {}
        self.next_id = 1
        self._next_id_checked = True
        self.seq = 0
        self.extra: dict[str, Any] = {}
        self.episodes: dict[str, Doc] = {}  # episodes not yet checkpointed (the rest are on disk)
        self._by_name: dict[str, str] = {}
        self._obs: dict[str, tuple[Doc, Doc]] = {}
        self.noted: dict[str, None] = {}  # ids of facts with a category or tags, in order
        self._facts: dict[str, Facts] = {}  # entity id -> current facts, indexed lazily
        self._name_words: dict[
            str, tuple[str, ...]
        ] = {}  # ids of observations with a category or tags, in order
        self._by_type: dict[str, set[str]] = defaultdict(set)
        self._rels_of: dict[str, list[str]] = defaultdict(list)
        self._current_rel_keys: dict[tuple[str, str, str], str] = {}
        self._terms: dict[str, set[str]] | None = None  # term -> current obs ids, built lazily
        self._all_terms: dict[str, set[str]] | None = None  # term -> every obs id (time travel)
        self._name_terms: dict[str, set[str]] | None = None  # term -> entity ids, built lazily

    # ----------------------------------------------------------------- loading
    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> Graph:
        """Build a graph from a ``graph.json`` document (Agency's or memgraph's)."""
        graph = cls()
        for entity in document.get("entities") or ():
            entity.setdefault("observations", [])
            graph._add_entity(entity)
            for obs in entity["observations"]:
                graph._obs[obs["id"]] = (entity, obs)
                if obs.get("category") or obs.get("tags"):
                    graph.noted[obs["id"]] = None
        names = {e["name"]: e["id"] for e in graph.entities.values()}
        for rel in document.get("relations") or ():
            # Agency files may link by name; memgraph links by entity id.
            for end in ("from", "to"):
                if rel[end] not in graph.entities and rel[end] in names:
                    rel[end] = names[rel[end]]
            graph._add_relation(rel)
        graph.next_id = int(document.get("nextId") or 1)
        graph.seq = int(document.get("checkpointSeq") or 0)
        graph.extra = dict(document.get("memgraph") or {})
        graph._next_id_checked = "nextId" not in document  # else checked before the first write
        if graph._next_id_checked:
            graph.next_id = max(graph.next_id, graph._highest_id() + 1)
        return graph

    def to_document(self) -> Doc:
        """The ``graph.json`` document (Agency's shape plus memgraph's extra fields)."""
        document: Doc = {
            "entities": list(self.entities.values()),
            "relations": list(self.relations.values()),
            "nextId": self.next_id,
            "checkpointSeq": self.seq,
        }
        if self.extra:
            document["memgraph"] = self.extra
        return document

    def check_next_id(self) -> None:
        """Move ``next_id`` past every id in use (a stale ``nextId`` in an imported
        file must not reuse ids); done once, before the first write."""
        if not self._next_id_checked:
            self.next_id = max(self.next_id, self._highest_id() + 1)
            self._next_id_checked = True

    def _highest_id(self) -> int:
        highest = 0
        for key in (*self.entities, *self._obs, *self.relations):
            _, _, number = key.rpartition("-")
            if number.isdigit():
                highest = max(highest, int(number))
        return highest

    # ------------------------------------------------------------------ lookups
    def entity_by_name(self, name: str) -> Doc | None:
        """The entity whose normalized name equals ``name``'s, if any."""
        entity_id = self._by_name.get(name_key(name))
        return self.entities.get(entity_id) if entity_id else None

    def observation(self, obs_id: str) -> tuple[Doc, Doc] | None:
        """``(entity, observation)`` for an observation id, if it exists."""
        return self._obs.get(obs_id)

    def entities_of_type(self, type_: str) -> set[str]:
        return self._by_type.get(name_key(type_), set())

    def relations_of(self, entity_id: str) -> Iterator[Doc]:
        """Every relation (current or expired) touching ``entity_id``."""
        for rel_id in self._rels_of.get(entity_id, ()):
            rel = self.relations.get(rel_id)
            if rel is not None:
                yield rel

    def current_relation(self, from_id: str, type_: str, to_id: str) -> Doc | None:
        rel_id = self._current_rel_keys.get((from_id, name_key(type_), to_id))
        return self.relations.get(rel_id) if rel_id else None

    def current_observations(self) -> Iterator[tuple[Doc, Doc]]:
        for entity, obs in self._obs.values():
            if obs.get("validTo") is None:
                yield entity, obs

    def name_words(self, entity_id: str) -> tuple[str, ...]:
        """The word tokens of an entity's name (memoized; names never change)."""
        found = self._name_words.get(entity_id)
        if found is None:
            found = self._name_words[entity_id] = tuple(words(self.entities[entity_id]["name"]))
        return found

    def facts_of(self, entity_id: str) -> Facts:
        """The current facts of an entity, indexed (built on first use, then maintained)."""
        facts = self._facts.get(entity_id)
        if facts is None:
            facts = Facts()
            for obs in self.entities[entity_id]["observations"]:
                if obs.get("validTo") is None:
                    facts.add(obs)
            self._facts[entity_id] = facts
        return facts

    def all_observations(self) -> Iterator[tuple[Doc, Doc]]:
        """Every ``(entity, observation)`` pair, current and expired."""
        return iter(self._obs.values())

    @property
    def observation_count(self) -> int:
        return len(self._obs)

    def term_index(self) -> dict[str, set[str]]:
        """term -> ids of current observations containing it (built on first use)."""
        if self._terms is None:
            current = [obs for _entity, obs in self._obs.values() if obs.get("validTo") is None]
            self._terms = _inverted(current)
        return self._terms

    def all_term_index(self) -> dict[str, set[str]]:
        """term -> ids of every observation, current or expired (built on first use)."""
        if self._all_terms is None:
            self._all_terms = _inverted([obs for _entity, obs in self._obs.values()])
        return self._all_terms

    def name_term_index(self) -> dict[str, set[str]]:
        """term -> ids of entities whose name contains it (built on first use)."""
        if self._name_terms is None:
            index: dict[str, set[str]] = defaultdict(set)
            for entity in self.entities.values():
                for term in set(terms(entity["name"])):
                    index[term].add(entity["id"])
            self._name_terms = index
        return self._name_terms

    # ------------------------------------------------------------------ changes
    def take_id(self, prefix: str) -> str:
        """Allocate the next ``prefix-N`` id from the shared counter."""
        self.check_next_id()
        value = f"{prefix}-{self.next_id}"
        self.next_id += 1
        return value

    def apply(self, ops: Iterable[Doc]) -> None:
        """Apply op records in order (see the module docstring for their shapes)."""
        for op in ops:
            kind = op["op"]
            if kind == "entity":
                self._add_entity({**op["entity"], "observations": []})
            elif kind == "obs":
                entity = self.entities[op["entity"]]
                obs = dict(op["obs"])
                entity["observations"].append(obs)
                self._obs[obs["id"]] = (entity, obs)
                if obs.get("validTo") is None and entity["id"] in self._facts:
                    self._facts[entity["id"]].add(obs)
                if obs.get("category") or obs.get("tags"):
                    self.noted[obs["id"]] = None
                if self._all_terms is not None:
                    for term in set(index_terms(obs["content"])):
                        self._all_terms[term].add(obs["id"])
                if self._terms is not None and obs.get("validTo") is None:
                    for term in set(index_terms(obs["content"])):
                        self._terms[term].add(obs["id"])
            elif kind == "expire_obs":
                self._expire_observation(op)
            elif kind == "rel":
                self._add_relation(dict(op["rel"]))
            elif kind == "expire_rel":
                rel = self.relations[op["id"]]
                rel["validTo"] = op["validTo"]
                rel["retiredAt"] = op.get("retiredAt")
                self._uncurrent(rel)
            elif kind == "episode":
                self.episodes[op["episode"]["id"]] = dict(op["episode"])
            elif kind == "purge":
                self._purge(op["ids"])
            elif kind in EXTRA_OPS:
                EXTRA_OPS[kind](self, op)
            else:
                raise ValueError(f"unknown op {kind!r}")

    def _add_entity(self, entity: Doc) -> None:
        self.entities[entity["id"]] = entity
        self._by_name.setdefault(name_key(entity["name"]), entity["id"])
        self._by_type[name_key(entity.get("type") or "thing")].add(entity["id"])
        if self._name_terms is not None:
            for term in set(terms(entity["name"])):
                self._name_terms[term].add(entity["id"])

    def _add_relation(self, rel: Doc) -> None:
        self.relations[rel["id"]] = rel
        self._rels_of[rel["from"]].append(rel["id"])
        if rel["to"] != rel["from"]:
            self._rels_of[rel["to"]].append(rel["id"])
        if rel.get("validTo") is None:
            self._current_rel_keys[self._rel_key(rel)] = rel["id"]

    @staticmethod
    def _rel_key(rel: Doc) -> tuple[str, str, str]:
        return (rel["from"], _type_key(rel["type"]), rel["to"])

    def _uncurrent(self, rel: Doc) -> None:
        """Drop ``rel`` from the current-relation index (not a newer one with its key)."""
        key = self._rel_key(rel)
        if self._current_rel_keys.get(key) == rel["id"]:
            del self._current_rel_keys[key]

    def _expire_observation(self, op: Doc) -> None:
        entity, obs = self._obs[op["id"]]
        if obs.get("validTo") is None and entity["id"] in self._facts:
            self._facts[entity["id"]].remove(obs)
        obs["validTo"] = op["validTo"]
        obs["retiredAt"] = op.get("retiredAt")
        if op.get("supersededBy"):
            obs["supersededBy"] = op["supersededBy"]
        if self._terms is not None:
            for term in set(index_terms(obs["content"])):
                self._terms.get(term, set()).discard(obs["id"])

    def _purge(self, ids: Iterable[str]) -> None:
        doomed = set(ids)
        self._facts.clear()
        self._name_words.clear()
        for entity_id in [i for i in doomed if i in self.entities]:
            entity = self.entities.pop(entity_id)
            doomed.update(o["id"] for o in entity["observations"])
            doomed.update(self._rels_of.pop(entity_id, ()))
            if self._by_name.get(name_key(entity["name"])) == entity_id:
                del self._by_name[name_key(entity["name"])]
            self._by_type[name_key(entity.get("type") or "thing")].discard(entity_id)
        for obs_id in [i for i in doomed if i in self._obs]:
            entity, _obs = self._obs.pop(obs_id)
            self.noted.pop(obs_id, None)
            entity["observations"] = [o for o in entity["observations"] if o["id"] != obs_id]
        for rel_id in [i for i in doomed if i in self.relations]:
            rel = self.relations.pop(rel_id)
            self._uncurrent(rel)
            for end in (rel["from"], rel["to"]):
                if end in self._rels_of:
                    self._rels_of[end] = [r for r in self._rels_of[end] if r != rel_id]
        for episode_id in [i for i in doomed if i in self.episodes]:
            del self.episodes[episode_id]
        self._terms = None
        self._all_terms = None
        self._name_terms = None
