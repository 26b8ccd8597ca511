"""The in-memory knowledge graph of one scope: pure data, indexes, and op application.

The graph keeps entities, observations and relations as dictionaries in the
on-disk ``graph.json`` shape. Every change arrives as a list of *ops* (the same
records the journal stores), applied by :meth:`Graph.apply`, so replaying the
journal on load and applying a fresh change go through one code path.

A graph opened from a saved checkpoint (:meth:`Graph.from_saved`) is lazy: an
entity or relation is parsed from the checkpoint's bytes the first time it is
read, and the keyword and name indexes start from the arrays saved with the
checkpoint (see :mod:`memgraph.graph.snapshot`). Its behaviour is the same as a graph
built from the whole document; only the cost of opening differs.

Op records::

    {"op": "entity",     "entity": {id, name, type, source, createdAt}}
    {"op": "obs",        "entity": entity_id, "obs": {id, content, validFrom, validTo, ...}}
    {"op": "expire_obs", "id": obs_id, "validTo": t, "retiredAt": t, "supersededBy": id?,
     "forgotten": true?}
    {"op": "rel",        "rel": {id, from, to, type, source, validFrom, validTo, ...}}
    {"op": "expire_rel", "id": rel_id, "validTo": t, "retiredAt": t, "forgotten": true?}
    {"op": "episode",    "episode": {id, text, at, recordedAt, source, metadata}}
    {"op": "purge",      "ids": [...]}    (hard delete of entities/observations/relations/episodes)

Ops of other kinds (key/value, progress, rules) are kept by :attr:`Graph.records`
hooks registered in :data:`EXTRA_OPS`.
"""

from __future__ import annotations

import functools
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from memgraph.attributes import attribute_of
from memgraph.errors import StoreCorrupt
from memgraph.graph.lazy import LazyDocs, NameMap, PostingIndex
from memgraph.graph.records import CRC_KEY, RecordDamaged, read_record
from memgraph.graph.saved import BUFFERS, SavedGraph
from memgraph.id_column import IdColumn
from memgraph.text import content_key, index_terms, index_terms_many, name_key, terms, words

__all__ = ["EXTRA_OPS", "Doc", "Graph", "SavedDocumentError"]

Doc = dict[str, Any]
T = TypeVar("T")
V = TypeVar("V")

LEAN_FACTS = "recordedAt-defaults-to-validFrom"
"""``factFormat`` of a graph.json whose facts leave out ``recordedAt`` when it equals
``validFrom`` and write it as null when a fact has none (see ``snapshot.stored``)."""

# What a record costs in memory once parsed, with its share of the indexes (measured
# with tracemalloc on the benchmark's facts workload), and an id of a saved checkpoint.
ENTITY_BYTES, OBSERVATION_BYTES, RELATION_BYTES, SAVED_ID_BYTES = 920, 1030, 720, 250

FRESH_TERMS = 100_000
"""Most facts whose index terms a graph keeps for its next checkpoint (:attr:`Graph.fresh_terms`;
the contents are the facts' own strings, so an entry costs a tuple of terms)."""

RELATION_BATCH = 64
"""Relations of one entity parsed together when a checkpoint is read from a database."""

EXTRA_OPS: dict[str, Callable[[Graph, Doc], None]] = {}
"""Handlers for op kinds owned by other modules (key/value memory, progress, rules)."""


class SavedDocumentError(StoreCorrupt):
    """A saved entity or relation could not be parsed from the checkpoint's bytes."""


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


@functools.lru_cache(maxsize=4096)
def type_key(type_: str | None) -> str:
    """The normalized key of an entity or relation type."""
    return name_key(type_ or "thing")


def _inverted(observations: list[Doc]) -> dict[str, set[str]]:
    index: dict[str, set[str]] = defaultdict(set)
    contents = [obs["content"] for obs in observations]
    for obs, found in zip(observations, index_terms_many(contents), strict=True):
        for term in set(found):
            index[term].add(obs["id"])
    return index


def _doc_current(doc: Doc) -> bool:
    return doc.get("validTo") is None


def _pair_current(pair: tuple[Doc, Doc]) -> bool:
    return pair[1].get("validTo") is None


def _saved_obs_current(saved: SavedGraph, ordinal: int) -> bool:
    return bool(saved.obs_current[ordinal])


def _saved_rel_current(saved: SavedGraph, ordinal: int) -> bool:
    return bool(saved.rel_current[ordinal])


class Graph:
    """Entities, observations and relations of one scope, with lookup indexes."""

    def __init__(self) -> None:
        self.entities: MutableMapping[str, Doc] = {}
        self.relations: MutableMapping[str, Doc] = {}
        self.next_id = 1
        self._next_id_checked = True
        self.seq = 0
        self.extra: dict[str, Any] = {}
        self.episodes: dict[str, Doc] = {}  # episodes not yet checkpointed (the rest are on disk)
        self.saved: SavedGraph | None = None  # the checkpoint a lazy graph reads from
        # Saved records that ops changed since that checkpoint (the next one re-serializes them).
        self.changed_entities: set[str] = set()
        self.changed_relations: set[str] = set()
        # Numbers of the facts ops added, expired or purged since loading (whose saved
        # flags may be stale); None when an op of unknown effect ran (all may be).
        self._facts_changed: set[int] | None = set()
        self._by_name: MutableMapping[str, str] = {}
        self._obs: MutableMapping[str, tuple[Doc, Doc]] = {}
        self.noted: dict[str, None] = {}  # ids of observations with a category or tags, in order
        self._facts: dict[str, Facts] = {}  # entity id -> current facts, indexed lazily
        self._name_words: dict[str, tuple[str, ...]] = {}
        # Derived indexes, built on first use and maintained from then on.
        self._by_type: dict[str, set[str]] | None = None
        self._known_types: set[str] | None = None
        self._rels_of: dict[str, list[str]] | None = None  # every relation id by end
        # A lazy graph lists an entity's relations without _rels_of: its saved ones
        # from the saved ends (entity ordinal -> relation ordinals, sorted arrays
        # built with numpy on first use), plus the ones added since, by end.
        self._saved_rels_of: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None = None
        self._added_rels_of: dict[str, list[str]] | None = None
        self._current_rel_keys: dict[tuple[str, str, str], str] | None = None
        self._terms: PostingIndex | None = None  # term -> current obs ids
        self._all_terms: dict[str, set[str]] | None = None  # term -> every obs id (time travel)
        self._name_terms: PostingIndex | None = None  # term -> entity ids
        # While replaying a journal, new facts and names wait here to be indexed
        # in one batch (see defer_indexing); None when indexing as they come.
        self._unindexed: dict[str, Doc] | None = None  # obs id -> observation
        self._unindexed_names: list[Doc] | None = None
        # The index terms of facts added since the checkpoint, by content, as found
        # when indexing them: the next checkpoint's term postings need them again.
        self.fresh_terms: dict[str, tuple[str, ...]] = {}

    # ----------------------------------------------------------------- loading
    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> Graph:
        """Build a graph from a ``graph.json`` document (Agency's or memgraph's)."""
        graph = cls()
        entities = graph.entities
        by_name = graph._by_name
        observations = graph._obs
        lean = document.get("factFormat") == LEAN_FACTS
        for entity in document.get("entities") or ():
            entity.pop(CRC_KEY, None)  # a record's checksum, when read with json.load
            entity.setdefault("observations", [])
            if lean:
                _restore_recorded(entity["observations"])
            entities[entity["id"]] = entity
            by_name.setdefault(name_key(entity["name"]), entity["id"])
            for obs in entity["observations"]:
                observations[obs["id"]] = (entity, obs)
                if obs.get("category") or obs.get("tags"):
                    graph.noted[obs["id"]] = None
        names = {e["name"]: e["id"] for e in entities.values()}
        relations = graph.relations
        for rel in document.get("relations") or ():
            # Agency files may link by name; memgraph links by entity id.
            for end in ("from", "to"):
                if rel[end] not in entities and rel[end] in names:
                    rel[end] = names[rel[end]]
            rel.pop(CRC_KEY, None)
            if lean:
                _restore_recorded((rel,))
            relations[rel["id"]] = rel
        graph.next_id = int(document.get("nextId") or 1)
        graph.seq = int(document.get("checkpointSeq") or 0)
        graph.extra = dict(document.get("memgraph") or {})
        graph._next_id_checked = "nextId" not in document  # else checked before the first write
        if graph._next_id_checked:
            graph.next_id = max(graph.next_id, graph._highest_id() + 1)
        return graph

    @classmethod
    def from_saved(cls, saved: SavedGraph) -> Graph:
        """A lazy graph over a saved checkpoint (its bytes and its index arrays)."""
        graph = cls()
        graph.saved = saved
        graph.entities = LazyDocs(saved.entity_ids, _weak(graph._decode_entity))
        graph._obs = LazyDocs(saved.obs_ids, _weak(graph._decode_observation))
        graph.relations = LazyDocs(saved.rel_ids, _weak(graph._decode_relation))
        graph._by_name = NameMap(saved.name_keys, saved.entity_ids)
        graph.noted = dict.fromkeys(saved.noted)
        graph._terms = PostingIndex(saved.terms, saved.obs_ids)
        graph._name_terms = PostingIndex(saved.name_terms, saved.entity_ids)
        graph.next_id = saved.next_id
        graph.seq = saved.seq
        graph.extra = dict(saved.extra)
        graph._next_id_checked = True  # checked before the checkpoint was written
        return graph

    def _saved_bytes(
        self, kind: str, ordinal: int, span: tuple[int, int], raw: bytes | None = None
    ) -> Doc:
        saved = self.saved
        assert saved is not None
        try:
            doc = read_record(
                saved.data[span[0] : span[1]] if raw is None else raw,
                required=saved.checksummed,
            )
        except RecordDamaged as exc:
            position = f"bytes {span[0]}-{span[1]}"
            raise SavedDocumentError(
                f"{saved.path!r} is damaged at {position}: {kind} {ordinal} cannot be read "
                f"({exc}). It was left untouched; run `memgraph doctor` on the scope",
                path=saved.path,
                position=position,
            ) from exc
        return doc

    def _decode_entity(self, ordinal: int, raw: bytes | None = None) -> Doc:
        saved = self.saved
        assert saved is not None
        entity = self._saved_bytes("entity", ordinal, saved.entity_span(ordinal), raw)
        found = entity.setdefault("observations", [])
        _restore_recorded(found)
        observations = self._obs
        assert isinstance(observations, LazyDocs)
        observations.put_decoded_many({obs["id"]: (entity, obs) for obs in found})
        return entity

    def _decode_observation(self, ordinal: int) -> tuple[Doc, Doc]:
        saved = self.saved
        assert saved is not None
        obs_id = saved.obs_ids[ordinal]
        self.entities[saved.entity_ids[saved.obs_owner[ordinal]]]  # registers its observations
        observations = self._obs
        assert isinstance(observations, LazyDocs)
        pair: tuple[Doc, Doc] | None = observations.loaded(obs_id)
        if pair is None:
            raise SavedDocumentError(
                f"{saved.path!r}: observation {obs_id!r} is not in its entity's record. "
                "It was left untouched; run `memgraph doctor` on the scope",
                path=saved.path,
                position=f"observation {obs_id}",
            )
        return pair

    def _decode_relation(self, ordinal: int, raw: bytes | None = None) -> Doc:
        saved = self.saved
        assert saved is not None
        rel = self._saved_bytes("relation", ordinal, saved.rel_span(ordinal), raw)
        _restore_recorded((rel,))
        return rel

    def parse_many(
        self,
        *,
        entity_ids: Iterable[str] = (),
        observation_ids: Iterable[str] = (),
        relation_ids: Iterable[str] = (),
    ) -> None:
        """Parse the saved records of these entities, these observations' entities and
        these relations at once, before a loop reads them: a checkpoint kept elsewhere
        (a database) reads their bytes in one round trip instead of one per record.
        Nothing to do for a checkpoint in memory or on local disk, or for records
        already parsed."""
        saved, entities, observations = self.saved, self.entities, self._obs
        relations = self.relations
        if saved is None or isinstance(saved.data, BUFFERS):
            return
        assert isinstance(entities, LazyDocs) and isinstance(observations, LazyDocs)
        assert isinstance(relations, LazyDocs)
        owners: set[int] = set()
        for entity_id in entity_ids:
            ordinal = entities.ordinal(entity_id)
            if ordinal is not None and entities.loaded(entity_id) is None:
                owners.add(ordinal)
        for obs_id in observation_ids:
            ordinal = observations.ordinal(obs_id)
            if ordinal is not None and observations.loaded(obs_id) is None:
                owners.add(int(saved.obs_owner[ordinal]))
        # Records deleted since the checkpoint are not read.
        wanted = [o for o in sorted(owners) if saved.entity_ids[o] in entities]
        rels: set[int] = set()
        for rel_id in relation_ids:
            ordinal = relations.ordinal(rel_id)
            if ordinal is not None and relations.loaded(rel_id) is None:
                rels.add(ordinal)
        wanted_rels = [o for o in sorted(rels) if saved.rel_ids[o] in relations]
        if len(wanted) + len(wanted_rels) < 2:
            return  # one record: the lazy read costs the same
        spans = [saved.entity_span(o) for o in wanted] + [saved.rel_span(o) for o in wanted_rels]
        found = saved.data.read_many(spans)
        entities.put_decoded_many(
            {
                saved.entity_ids[o]: self._decode_entity(o, raw)
                for o, raw in zip(wanted, found, strict=False)
            }
        )
        relations.put_decoded_many(
            {
                saved.rel_ids[o]: self._decode_relation(o, raw)
                for o, raw in zip(wanted_rels, found[len(wanted) :], strict=True)
            }
        )

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

    def stated_fact(self, number: int) -> Doc | None:
        """The fact a text's record lists by ``number``: the observation ``obs-<n>``,
        else the relation ``rel-<n>`` (``None`` when purged)."""
        pair = self._obs.get(f"obs-{number}")
        return pair[1] if pair is not None else self.relations.get(f"rel-{number}")

    def entity_name(self, entity_id: str) -> str | None:
        """An entity's name (a lazy graph answers from its saved names, without parsing)."""
        return self._peek(
            self.entities,
            entity_id,
            lambda entity: str(entity["name"]),
            lambda saved, ordinal: saved.names[ordinal],
        )

    def entity_type_key(self, entity_id: str) -> str | None:
        """The type key of an entity (a lazy graph answers from its saved types)."""
        return self._peek(
            self.entities,
            entity_id,
            lambda entity: type_key(entity.get("type")),
            lambda saved, ordinal: saved.type_keys[ordinal],
        )

    def owner_of(self, obs_id: str) -> str | None:
        """The id of the entity holding an observation (a lazy graph answers from
        its saved arrays, without parsing the entity)."""
        return self._peek(
            self._obs,
            obs_id,
            lambda pair: str(pair[0]["id"]),
            lambda saved, ordinal: saved.entity_ids[int(saved.obs_owner[ordinal])],
        )

    def is_current(self, item_id: str) -> bool | None:
        """Whether an observation or relation is current (None: no such record). A lazy
        graph answers from its saved flags when the record was not read since."""
        if item_id.startswith("obs-"):
            return self._peek(self._obs, item_id, _pair_current, _saved_obs_current)
        return self._peek(self.relations, item_id, _doc_current, _saved_rel_current)

    def facts_current(self, numbers: Sequence[int]) -> list[bool]:
        """For each fact number, whether ``obs-<n>``, else ``rel-<n>``, is current
        (``False`` when neither exists): :meth:`is_current` for many at once. A
        lazy graph reads its saved flags in one pass, and one by one only the facts
        ops added, expired or purged since loading."""
        saved = self.saved
        obs, rels = self._obs, self.relations
        if (
            saved is None
            or not numbers
            or not isinstance(obs, LazyDocs)
            or not isinstance(rels, LazyDocs)
            or not isinstance(saved.obs_ids, IdColumn)
            or not isinstance(saved.rel_ids, IdColumn)
        ):
            return [bool(self._is_fact_current(n)) for n in numbers]
        wanted = np.asarray(numbers, dtype=np.int64)
        at_obs = saved.obs_ids.positions_of(IdColumn(("obs-",), wanted))
        at_rel = saved.rel_ids.positions_of(IdColumn(("rel-",), wanted))
        current = np.zeros(len(wanted), dtype=bool)
        is_obs = at_obs >= 0
        current[is_obs] = saved.obs_current[at_obs[is_obs]]
        is_rel = ~is_obs & (at_rel >= 0)
        current[is_rel] = saved.rel_current[at_rel[is_rel]]
        found: list[bool] = current.tolist()
        changed = self._facts_changed
        for at, number in enumerate(numbers):  # added, expired or purged since loading
            if changed is None or number in changed:
                found[at] = bool(self._is_fact_current(number))
        return found

    def _is_fact_current(self, number: int) -> bool | None:
        state = self.is_current(f"obs-{number}")
        return self.is_current(f"rel-{number}") if state is None else state

    def _peek(
        self,
        docs: MutableMapping[str, V],
        key: str,
        read: Callable[[V], T],
        from_saved: Callable[[SavedGraph, int], T],
    ) -> T | None:
        """``read`` the record of ``key`` if it is in memory, else ``from_saved`` its
        saved position (no parsing); None when there is no such record."""
        saved = self.saved
        if saved is not None and isinstance(docs, LazyDocs):
            value = docs.loaded(key)
            if value is None:
                ordinal = docs.saved_ordinal(key)
                return None if ordinal is None else from_saved(saved, ordinal)
            return read(value)
        found = docs.get(key)
        return None if found is None else read(found)

    def entities_of_type(self, type_: str) -> set[str]:
        key = name_key(type_)
        if self._by_type is None and key not in self._type_keys():
            return set()  # not a type at all: no need to index every entity by type
        return self._type_index().get(key, set())

    def _type_keys(self) -> set[str]:
        """Every entity type key in use (cheap: a set of the saved type keys)."""
        if self._known_types is None:
            entities = self.entities
            saved = self.saved
            if saved is not None and isinstance(entities, LazyDocs):
                known = set(saved.type_keys)
                known.update(type_key(entities[i].get("type")) for i in entities.added())
            else:
                known = {type_key(e.get("type")) for e in entities.values()}
            self._known_types = known
        return self._known_types

    def relations_of(self, entity_id: str) -> Iterator[Doc]:
        """Every relation (current or expired) touching ``entity_id``.

        A lazy graph answers from the saved relation ends without indexing every
        relation of the scope: the first call costs a sort of two integer arrays.
        """
        relations = self.relations
        ids = self._relation_ids_of(entity_id)
        for start in range(0, len(ids), RELATION_BATCH):
            batch = ids[start : start + RELATION_BATCH]
            self.parse_many(relation_ids=batch)  # a hub's relations: a batch at a time
            for rel_id in batch:
                rel = relations.get(rel_id)
                if rel is not None:
                    yield rel

    def parse_relations_of(self, entity_ids: Iterable[str], *, limit: int = RELATION_BATCH) -> None:
        """:meth:`parse_many` of the first ``limit`` relations of each of these entities
        (by default as many as :meth:`relations_of` parses at a time)."""
        if self.saved is None or isinstance(self.saved.data, BUFFERS):
            return
        ids = [r for e in entity_ids for r in self._relation_ids_of(e)[:limit]]
        self.parse_many(relation_ids=ids)

    def _relation_ids_of(self, entity_id: str) -> list[str]:
        relations, entities, saved = self.relations, self.entities, self.saved
        if (
            self._rels_of is not None
            or saved is None
            or not isinstance(relations, LazyDocs)
            or not isinstance(entities, LazyDocs)
        ):
            return self._relation_index().get(entity_id, [])
        if self._saved_rels_of is None:
            self._saved_rels_of = _ends_table(saved)
        order, starts = self._saved_rels_of
        found: list[str] = []
        ordinal = entities.ordinal(entity_id)
        if ordinal is not None and ordinal + 1 < len(starts):
            ids = saved.rel_ids
            found = [ids[o] for o in order[starts[ordinal] : starts[ordinal + 1]].tolist()]
        elif ordinal is None and saved.dangling:  # an end that names no entity
            for rel_ordinal, ends in saved.dangling.items():
                if entity_id in ends:
                    found.append(saved.rel_ids[int(rel_ordinal)])
        if self._added_rels_of is None:
            added: dict[str, list[str]] = defaultdict(list)
            for rel_id in relations.added():
                rel = relations[rel_id]
                added[rel["from"]].append(rel_id)
                if rel["to"] != rel["from"]:
                    added[rel["to"]].append(rel_id)
            self._added_rels_of = added
        return found + self._added_rels_of.get(entity_id, [])

    def current_relation(self, from_id: str, type_: str, to_id: str) -> Doc | None:
        rel_id = self._current_relations().get((from_id, type_key(type_), to_id))
        return self.relations.get(rel_id) if rel_id else None

    def current_observations(self) -> Iterator[tuple[Doc, Doc]]:
        for entity, obs in self._obs.values():
            if obs.get("validTo") is None:
                yield entity, obs

    def current_observation_ids(self) -> Sequence[str]:
        """Ids of the current observations (a lazy graph answers from its saved flags,
        corrected by the entities ops changed since, without parsing the rest; as an
        :class:`~memgraph.id_column.IdColumn` when the saved ids are one)."""
        observations = self._obs
        saved = self.saved
        if saved is None or not isinstance(observations, LazyDocs):
            return [i for i, (_e, obs) in observations.items() if obs.get("validTo") is None]
        entities = self.entities
        assert isinstance(entities, LazyDocs)
        current = saved.obs_current.copy()
        for entity_id in self.changed_entities:
            entity = entities.loaded(entity_id)
            for obs in entity["observations"] if entity is not None else ():
                ordinal = observations.ordinal(obs["id"])
                if ordinal is not None:
                    current[ordinal] = obs.get("validTo") is None
        loaded = observations.loaded
        added = []
        for obs_id in observations.added():
            pair = loaded(obs_id)
            if pair is not None and pair[1].get("validTo") is None:
                added.append(obs_id)
        ids, rows = saved.obs_ids, np.flatnonzero(current)
        if isinstance(ids, IdColumn):
            return ids.take(rows).extended(added)
        return [*(ids[i] for i in rows.tolist()), *added]

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

    def resident_bytes(self) -> int:
        """A rough estimate of the memory the graph holds (for a cache's budget): its
        parsed records with their indexes, and a lazy graph's saved arrays."""

        def held(docs: Mapping[str, Any]) -> int:
            return docs.loaded_count() if isinstance(docs, LazyDocs) else len(docs)

        total = (
            held(self.entities) * ENTITY_BYTES
            + held(self._obs) * OBSERVATION_BYTES
            + held(self.relations) * RELATION_BYTES
        )
        saved = self.saved
        if saved is not None:
            ids = len(saved.entity_ids) + len(saved.obs_ids) + len(saved.rel_ids)
            total += ids * SAVED_ID_BYTES
            data = saved.data  # the checkpoint's bytes, in memory or mapped, or read so far
            total += len(data) if isinstance(data, BUFFERS) else data.resident_bytes
        return total

    @property
    def observations_by_id(self) -> MutableMapping[str, tuple[Doc, Doc]]:
        """observation id -> ``(entity, observation)``, as kept (lazy for a saved graph)."""
        return self._obs

    @property
    def built_term_index(self) -> PostingIndex | None:
        """The keyword index if it has been built (None: it would be built on first use)."""
        return self._terms

    def term_index(self) -> PostingIndex:
        """term -> ids of current observations containing it (built on first use)."""
        if self._unindexed is not None:
            self.flush_indexing()
        if self._terms is None:
            current = [obs for _entity, obs in self.current_observations()]
            self._terms = PostingIndex.from_sets(_inverted(current))
        return self._terms

    def all_term_index(self) -> dict[str, set[str]]:
        """term -> ids of every observation, current or expired (built on first use)."""
        if self._all_terms is None:
            self._all_terms = _inverted([obs for _entity, obs in self._obs.values()])
        return self._all_terms

    def name_term_index(self) -> PostingIndex:
        """term -> ids of entities whose name contains it (built on first use)."""
        if self._unindexed is not None:
            self.flush_indexing()
        if self._name_terms is None:
            index: dict[str, set[str]] = defaultdict(set)
            for entity in self.entities.values():
                for term in set(terms(entity["name"])):
                    index[term].add(entity["id"])
            self._name_terms = PostingIndex.from_sets(index)
        return self._name_terms

    def entity_types(self) -> Iterator[tuple[str, str]]:
        """``(entity id, type key)`` of every entity (a lazy graph answers without parsing)."""
        entities = self.entities
        saved = self.saved
        if saved is not None and isinstance(entities, LazyDocs):
            gone = entities.removed()
            for entity_id, key in zip(saved.entity_ids, saved.type_keys, strict=True):
                if entity_id not in gone:
                    yield entity_id, key
            for entity_id in entities.added():
                yield entity_id, type_key(entities[entity_id].get("type"))
            return
        for entity_id, entity in entities.items():
            yield entity_id, type_key(entity.get("type"))

    def relation_ends(self) -> Iterator[tuple[str, str, str, str, bool]]:
        """``(id, from, type key, to, current)`` of every relation, without parsing saved ones."""
        relations = self.relations
        saved = self.saved
        if saved is not None and isinstance(relations, LazyDocs):
            gone = relations.removed()
            columns = (saved.rel_ids, saved.rel_from, saved.rel_type_keys, saved.rel_to)
            ids, sources, types, targets = map(list, columns)  # each read in one pass
            current = saved.rel_current.tolist()
            for ordinal, rel_id in enumerate(ids):
                rel = relations.loaded(rel_id)
                if rel is None:
                    if rel_id not in gone:
                        yield (
                            rel_id,
                            sources[ordinal],
                            types[ordinal],
                            targets[ordinal],
                            bool(current[ordinal]),
                        )
                else:
                    yield rel_id, rel["from"], type_key(rel["type"]), rel["to"], _is_current(rel)
            for rel_id in relations.added():
                rel = relations[rel_id]
                yield rel_id, rel["from"], type_key(rel["type"]), rel["to"], _is_current(rel)
            return
        for rel_id, rel in relations.items():
            yield rel_id, rel["from"], type_key(rel["type"]), rel["to"], _is_current(rel)

    def _type_index(self) -> dict[str, set[str]]:
        if self._by_type is None:
            by_type: dict[str, set[str]] = defaultdict(set)
            for entity_id, key in self.entity_types():
                by_type[key].add(entity_id)
            self._by_type = by_type
        return self._by_type

    def _relation_index(self) -> dict[str, list[str]]:
        if self._rels_of is None:
            rels_of: dict[str, list[str]] = defaultdict(list)
            for rel_id, source, _type, target, _current in self.relation_ends():
                rels_of[source].append(rel_id)
                if target != source:
                    rels_of[target].append(rel_id)
            self._rels_of = rels_of
        return self._rels_of

    def _current_relations(self) -> dict[tuple[str, str, str], str]:
        if self._current_rel_keys is None:
            self._current_rel_keys = {
                (source, key, target): rel_id
                for rel_id, source, key, target, current in self.relation_ends()
                if current
            }
        return self._current_rel_keys

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
            self._note_fact_change(kind, op)
            if kind == "entity":
                self._add_entity({**op["entity"], "observations": []})
            elif kind == "obs":
                self._mark_entity(op["entity"])
                self._add_observation(self.entities[op["entity"]], dict(op["obs"]))
            elif kind == "expire_obs":
                self._expire_observation(op)
            elif kind == "rel":
                self._add_relation(dict(op["rel"]))
            elif kind == "expire_rel":
                self._mark_relation(op["id"])
                rel = self.relations[op["id"]]
                rel["validTo"] = op["validTo"]
                rel["retiredAt"] = op.get("retiredAt")
                if op.get("forgotten"):
                    rel["forgotten"] = True
                self._uncurrent(rel)
            elif kind == "episode":
                self.episodes[op["episode"]["id"]] = dict(op["episode"])
            elif kind == "extracted":
                self._extracted(op)
            elif kind == "purge":
                self._purge(op["ids"])
            elif kind in EXTRA_OPS:
                EXTRA_OPS[kind](self, op)
            else:
                raise ValueError(f"unknown op {kind!r}")

    def _note_fact_change(self, kind: str, op: Doc) -> None:
        changed = self._facts_changed
        if changed is None or kind in ("entity", "episode", "extracted"):
            return
        if kind in ("obs", "rel"):
            ids = [op[kind]["id"]]
        elif kind in ("expire_obs", "expire_rel"):
            ids = [op["id"]]
        elif kind == "purge":
            ids = list(op["ids"])
        else:  # an extension's op: its effect on facts is unknown
            self._facts_changed = None
            return
        for item_id in ids:
            _, _, number = str(item_id).rpartition("-")
            if number.isdigit():
                changed.add(int(number))

    def _extracted(self, op: Doc) -> None:
        """A stored episode's facts were extracted after all (a retried reply)."""
        pending = self.episodes.get(op["episode"])
        if pending is not None:
            pending.pop("unextracted", None)
            pending["facts"] = list(op.get("facts") or [])
        done = self.extra.setdefault("extracted", {})
        done[op["episode"]] = list(op.get("facts") or [])

    def extracted_later(self) -> dict[str, list[str]]:
        """Episodes whose facts were extracted after they were stored, with those facts."""
        found = self.extra.get("extracted", {})
        return found if isinstance(found, dict) else {}

    def _mark_entity(self, entity_id: str) -> None:
        """Note that a saved entity changed (only a graph read from a checkpoint cares)."""
        if self.saved is not None:
            self.changed_entities.add(entity_id)

    def _mark_relation(self, rel_id: str) -> None:
        if self.saved is not None:
            self.changed_relations.add(rel_id)

    def _add_entity(self, entity: Doc) -> None:
        self._mark_entity(entity["id"])  # matters only if it replaces a saved one
        self.entities[entity["id"]] = entity
        self._by_name.setdefault(name_key(entity["name"]), entity["id"])
        if self._by_type is not None:
            self._by_type[type_key(entity.get("type"))].add(entity["id"])
        if self._known_types is not None:
            self._known_types.add(type_key(entity.get("type")))
        if self._name_terms is not None:
            if self._unindexed_names is not None:
                self._unindexed_names.append(entity)
            else:
                for term in set(terms(entity["name"])):
                    self._name_terms.add(term, entity["id"])

    def _add_observation(self, entity: Doc, obs: Doc) -> None:
        entity["observations"].append(obs)
        self._obs[obs["id"]] = (entity, obs)
        current = obs.get("validTo") is None
        if current and entity["id"] in self._facts:
            self._facts[entity["id"]].add(obs)
        if obs.get("category") or obs.get("tags"):
            self.noted[obs["id"]] = None
        if self._unindexed is not None and self._all_terms is None:
            if current and self._terms is not None:
                self._unindexed[obs["id"]] = obs
        elif self._all_terms is not None or (self._terms is not None and current):
            found = set(index_terms(obs["content"]))
            if current and len(self.fresh_terms) < FRESH_TERMS:
                self.fresh_terms[obs["content"]] = tuple(found)
            if self._all_terms is not None:
                for term in found:
                    self._all_terms[term].add(obs["id"])
            if self._terms is not None and current:
                for term in found:
                    self._terms.add(term, obs["id"])

    def _add_relation(self, rel: Doc) -> None:
        self._mark_relation(rel["id"])  # matters only if it replaces a saved one
        relations = self.relations
        replaces = isinstance(relations, LazyDocs) and relations.ordinal(rel["id"]) is not None
        relations[rel["id"]] = rel
        if self._rels_of is not None:
            self._rels_of[rel["from"]].append(rel["id"])
            if rel["to"] != rel["from"]:
                self._rels_of[rel["to"]].append(rel["id"])
        elif replaces:  # its saved ends may differ: index every relation by its ends now
            self._relation_index()
        elif self._added_rels_of is not None:
            self._added_rels_of[rel["from"]].append(rel["id"])
            if rel["to"] != rel["from"]:
                self._added_rels_of[rel["to"]].append(rel["id"])
        if self._current_rel_keys is not None and _is_current(rel):
            self._current_rel_keys[self._rel_key(rel)] = rel["id"]

    @staticmethod
    def _rel_key(rel: Doc) -> tuple[str, str, str]:
        return (rel["from"], type_key(rel["type"]), rel["to"])

    def _uncurrent(self, rel: Doc) -> None:
        """Drop ``rel`` from the current-relation index (not a newer one with its key)."""
        if self._current_rel_keys is None:
            return
        key = self._rel_key(rel)
        if self._current_rel_keys.get(key) == rel["id"]:
            del self._current_rel_keys[key]
            # Another current relation with the same ends and type (an imported file
            # may hold duplicates) takes its place, the latest one as on a rebuild.
            for other in self.relations_of(rel["from"]):
                if _is_current(other) and self._rel_key(other) == key:
                    self._current_rel_keys[key] = other["id"]

    def _expire_observation(self, op: Doc) -> None:
        entity, obs = self._obs[op["id"]]
        self._mark_entity(entity["id"])
        if obs.get("validTo") is None and entity["id"] in self._facts:
            self._facts[entity["id"]].remove(obs)
        obs["validTo"] = op["validTo"]
        obs["retiredAt"] = op.get("retiredAt")
        if op.get("supersededBy"):
            obs["supersededBy"] = op["supersededBy"]
        if op.get("forgotten"):
            obs["forgotten"] = True
        if self._unindexed is not None and self._unindexed.pop(obs["id"], None) is not None:
            return  # never indexed: nothing to take out
        if self._terms is not None:
            for term in set(index_terms(obs["content"])):
                self._terms.discard(term, obs["id"])

    def defer_indexing(self) -> None:
        """Index facts and names added from now on in one batch, at :meth:`flush_indexing`
        (a journal replay: batched term extraction is about twice as fast)."""
        if self._unindexed is None:
            self._unindexed, self._unindexed_names = {}, []

    def flush_indexing(self) -> None:
        """Index what :meth:`defer_indexing` held back and index as facts come again."""
        pending, names = self._unindexed, self._unindexed_names
        self._unindexed = self._unindexed_names = None
        if pending and self._terms is not None:
            by_term: dict[str, list[str]] = defaultdict(list)
            contents = [obs["content"] for obs in pending.values()]
            found = index_terms_many(contents)
            for obs_id, content, obs_terms in zip(pending, contents, found, strict=True):
                unique = set(obs_terms)
                if len(self.fresh_terms) < FRESH_TERMS:
                    self.fresh_terms[content] = tuple(unique)
                for term in unique:
                    by_term[term].append(obs_id)
            for term, ids in by_term.items():
                self._terms.add_many(term, ids)
        if names and self._name_terms is not None:
            by_name: dict[str, list[str]] = defaultdict(list)
            for entity in names:
                if entity["id"] in self.entities:
                    for term in set(terms(entity["name"])):
                        by_name[term].append(entity["id"])
            for term, ids in by_name.items():
                self._name_terms.add_many(term, ids)

    def rebase(self, saved: SavedGraph) -> None:
        """Read from ``saved`` from now on: a checkpoint just written from this graph.

        Records already parsed stay (they equal what was written); everything
        else is read from the new checkpoint, and no record counts as changed.
        """
        entities, observations, relations = self.entities, self._obs, self.relations
        if isinstance(entities, LazyDocs):
            assert isinstance(observations, LazyDocs) and isinstance(relations, LazyDocs)
            # The checkpoint kept every saved record's position and appended the new
            # ones in order, so the maps only learn the positions of the new keys.
            entities.rebase(saved.entity_ids)
            observations.rebase(saved.obs_ids)
            relations.rebase(saved.rel_ids)
        else:
            lazy_entities = LazyDocs(saved.entity_ids, _weak(self._decode_entity))
            lazy_observations: LazyDocs[tuple[Doc, Doc]] = LazyDocs(
                saved.obs_ids, _weak(self._decode_observation)
            )
            lazy_relations = LazyDocs(saved.rel_ids, _weak(self._decode_relation))
            for key, entity in entities.items():
                lazy_entities.put_decoded(key, entity)
            for key, pair in observations.items():
                lazy_observations.put_decoded(key, pair)
            for key, rel in relations.items():
                lazy_relations.put_decoded(key, rel)
            self.entities, self._obs, self.relations = (
                lazy_entities,
                lazy_observations,
                lazy_relations,
            )
        terms, names = self._terms, self._name_terms
        self._terms = (terms or PostingIndex()).rebased(saved.terms, saved.obs_ids)
        self._name_terms = (names or PostingIndex()).rebased(saved.name_terms, saved.entity_ids)
        self._saved_rels_of = self._added_rels_of = None  # the saved ends changed
        self.saved = saved
        self.changed_entities.clear()
        self.changed_relations.clear()
        self.fresh_terms.clear()
        self._facts_changed = set()  # the new checkpoint's flags say every fact's state

    def _make_eager(self) -> None:
        """Parse everything a lazy graph has not read yet and drop the saved checkpoint."""
        if self.saved is None:
            return
        self.entities = dict(self.entities.items())
        self._obs = dict(self._obs.items())
        self.relations = dict(self.relations.items())
        self.saved = None
        self.changed_entities.clear()
        self.changed_relations.clear()

    def _purge(self, ids: Iterable[str]) -> None:
        self.flush_indexing()  # the indexes are rebuilt after a purge anyway
        self._make_eager()
        doomed = set(ids)
        relations_of = self._relation_index()
        self._facts.clear()
        self._name_words.clear()
        for entity_id in [i for i in doomed if i in self.entities]:
            entity = self.entities.pop(entity_id)
            doomed.update(o["id"] for o in entity["observations"])
            doomed.update(relations_of.get(entity_id, ()))
            if self._by_name.get(name_key(entity["name"])) == entity_id:
                del self._by_name[name_key(entity["name"])]
        for obs_id in [i for i in doomed if i in self._obs]:
            entity, _obs = self._obs.pop(obs_id)
            self.noted.pop(obs_id, None)
            entity["observations"] = [o for o in entity["observations"] if o["id"] != obs_id]
        for rel_id in [i for i in doomed if i in self.relations]:
            del self.relations[rel_id]
        for episode_id in [i for i in doomed if i in self.episodes]:
            del self.episodes[episode_id]
        self._by_type = None
        self._known_types = None
        self._rels_of = None
        self._saved_rels_of = self._added_rels_of = None
        self._current_rel_keys = None
        self._terms = None
        self._all_terms = None
        self._name_terms = None
        self.fresh_terms.clear()


def _ends_table(saved: SavedGraph) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Relation ordinals grouped by the entity ordinal of their ends: ``order[starts[e]:
    starts[e + 1]]`` are entity ``e``'s relations in saved order (a loop once)."""
    count = len(saved.rel_ids)
    sources = np.asarray(saved.rel_from_ordinals, dtype=np.int64)
    targets = np.asarray(saved.rel_to_ordinals, dtype=np.int64)
    numbers = np.arange(count, dtype=np.int64)
    ends = np.concatenate([sources, targets])
    rels = np.concatenate([numbers, numbers])
    keep = ends >= 0
    keep[count:] &= targets != sources
    ends, rels = ends[keep], rels[keep]
    # One sort of (end, relation) pairs, each unique, as one number: end * count + rel.
    keys = np.sort(ends * max(count, 1) + rels)
    ends = keys // max(count, 1)
    starts = np.searchsorted(ends, np.arange(len(saved.entity_ids) + 1, dtype=np.int64))
    return keys - ends * max(count, 1), starts.astype(np.int64)


def _weak(method: Callable[[int], T]) -> Callable[[int], T]:
    """``method`` without a strong reference to its graph: the lazy maps a graph
    owns must not form a reference cycle with it, so that a replaced graph is
    freed at once, even after ``gc.freeze()``."""
    ref = weakref.WeakMethod(method)

    def call(ordinal: int) -> T:
        bound = ref()
        if bound is None:
            raise ReferenceError("the graph of this lazy map is gone")
        return bound(ordinal)

    return call


def _restore_recorded(facts: Iterable[Doc]) -> None:
    """Undo :func:`memgraph.graph.snapshot.stored`: put back the ``recordedAt`` a checkpoint
    leaves out when it equals ``validFrom``, and drop the null it writes for none."""
    for fact in facts:
        if "recordedAt" not in fact:
            value = fact.get("validFrom")
            if "validTo" not in fact:
                fact["recordedAt"] = value
                continue
            after: list[tuple[str, Any]] = []  # back in its place, right after validTo
            seen = False
            for key in list(fact):
                if seen:
                    after.append((key, fact.pop(key)))
                elif key == "validTo":
                    seen = True
            fact["recordedAt"] = value
            fact.update(after)
        elif fact["recordedAt"] is None:
            del fact["recordedAt"]


def _is_current(doc: Doc) -> bool:
    return doc.get("validTo") is None
