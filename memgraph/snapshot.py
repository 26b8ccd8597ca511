"""Checkpoint images: ``graph.json`` written entity by entity, plus its index file.

A checkpoint writes two files. ``graph.json`` is the whole graph in Agency's
shape; memgraph writes it one entity and one relation at a time so that it
knows where each record starts and ends. ``graph.idx`` records those byte
spans together with everything a lazy :class:`~memgraph.graph.Graph` needs
before parsing any record: ids, normalized names and types, which entity owns
each observation, which facts are current, the relation ends, and the keyword
and name indexes as compressed-sparse-row arrays.

Opening a scope then reads ``graph.idx`` (a few flat arrays) and memory-maps
``graph.json``; an entity is parsed the first time it is read. The index is
derived data: it names the size and modification time of the ``graph.json``
it describes, and a missing, stale or unreadable index only means the
checkpoint is parsed in full, as before.

``graph.idx`` layout: ``MGIDX01\\n``, the byte length of a JSON header as an
8-byte little-endian integer, the header (``seq``, ``nextId``, ``memgraph``
extra state, the ``graph.json`` stamp, and ``blobs``: name -> ``[offset,
length, kind]``), then the blobs. Kinds: ``str`` (NUL-separated UTF-8),
``i64``, ``i32`` and ``u8`` (little-endian arrays).
"""

from __future__ import annotations

import logging
import mmap
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from memgraph.graph import Doc, Graph, type_key
from memgraph.lazy import LazyDocs, Postings
from memgraph.text import index_terms_many, name_key, terms

__all__ = ["INDEX_MAGIC", "GraphImage", "SavedGraph", "encode", "read_index"]

log = logging.getLogger("memgraph")

Buffer = bytes | bytearray | memoryview | mmap.mmap

INDEX_MAGIC = b"MGIDX01\n"
INDEX_VERSION = 1


@dataclass
class SavedGraph:
    """A checkpoint's bytes and the index arrays that describe them."""

    data: Buffer
    seq: int
    next_id: int
    extra: dict[str, Any]
    entity_ids: list[str]
    entity_spans: npt.NDArray[np.int64]  # (n, 2) byte offsets into data
    name_keys: list[str]
    type_keys: list[str]
    obs_ids: list[str]
    obs_owner: npt.NDArray[np.int32]  # entity ordinal of each observation
    obs_current: npt.NDArray[np.bool_]
    noted: list[str]
    rel_ids: list[str]
    rel_spans: npt.NDArray[np.int64]
    rel_from: list[str]
    rel_to: list[str]
    rel_type_keys: list[str]
    rel_current: npt.NDArray[np.bool_]
    terms: Postings  # index term -> ordinals of current observations
    name_terms: Postings  # name term -> entity ordinals
    path: str = "graph.json"

    def entity_span(self, ordinal: int) -> tuple[int, int]:
        start, stop = self.entity_spans[ordinal].tolist()
        return start, stop

    def rel_span(self, ordinal: int) -> tuple[int, int]:
        start, stop = self.rel_spans[ordinal].tolist()
        return start, stop


@dataclass
class GraphImage:
    """A checkpoint ready to write: ``graph.json`` bytes and its index blobs."""

    graph_json: bytes
    seq: int
    next_id: int
    extra: dict[str, Any]
    blobs: dict[str, tuple[str, bytes]]
    dangling: dict[str, list[str]]

    def index_bytes(self, stamp: tuple[int, int]) -> bytes:
        """``graph.idx`` for the written ``graph.json`` with ``(size, mtime_ns)``."""
        layout: dict[str, list[Any]] = {}
        offset = 0
        for name, (kind, blob) in self.blobs.items():
            layout[name] = [offset, len(blob), kind]
            offset += len(blob)
        header = orjson.dumps(
            {
                "version": INDEX_VERSION,
                "graph": {"size": stamp[0], "mtimeNs": stamp[1]},
                "seq": self.seq,
                "nextId": self.next_id,
                "memgraph": self.extra,
                "dangling": self.dangling,
                "blobs": layout,
            }
        )
        body = b"".join(blob for _kind, blob in self.blobs.values())
        return INDEX_MAGIC + len(header).to_bytes(8, "little") + header + body


# ----------------------------------------------------------------- encoding
_ID = re.compile(r"(\D*?)([1-9][0-9]{0,17}|0)")


def _strings(values: Sequence[str]) -> tuple[str, bytes]:
    """NUL-separated UTF-8; ids like ``obs-12`` sharing one prefix as delta-coded numbers."""
    first = _ID.fullmatch(values[0]) if values else None
    if first is not None:
        prefix, numbers = first.group(1), []
        for value in values:
            match = _ID.fullmatch(value)
            if match is None or match.group(1) != prefix:
                break
            numbers.append(int(match.group(2)))
        else:
            return f"ids:{prefix}", _deltas(numbers)
    return "str", zlib.compress("\x00".join(values).encode(), 1)


def _deltas(values: npt.ArrayLike) -> bytes:
    array = np.asarray(values, dtype=np.int64).reshape(-1)
    return zlib.compress(np.diff(array, prepend=np.int64(0)).astype("<i8").tobytes(), 1)


def _flags(values: npt.ArrayLike) -> bytes:
    return zlib.compress(np.ascontiguousarray(values, dtype="u1").tobytes(), 1)


def _postings_blobs(prefix: str, postings: Postings) -> dict[str, tuple[str, bytes]]:
    return {
        f"{prefix}.terms": _strings(postings.terms),
        f"{prefix}.offsets": ("d64", _deltas(postings.offsets)),
        f"{prefix}.ordinals": ("d64", _deltas(postings.ordinals)),
    }


def _decode_blob(kind: str, piece: memoryview) -> Any:
    data = zlib.decompress(piece)
    if kind == "str":
        text = data.decode()
        return text.split("\x00") if text else []
    if kind == "u8":
        return np.frombuffer(data, dtype="u1").astype(bool)
    numbers = np.cumsum(np.frombuffer(data, dtype="<i8"))
    if kind == "d64":
        return numbers
    if kind.startswith("ids:"):
        prefix = kind[4:]
        return [f"{prefix}{n}" for n in numbers.tolist()]
    raise IndexUnusable(f"unknown blob kind {kind!r}")


def _merge(
    saved: Postings | None,
    keep: npt.NDArray[np.bool_] | None,
    fresh: dict[str, list[int]],
) -> Postings:
    """Saved postings (minus ordinals ``keep`` rules out) plus ``fresh`` ones."""
    vocabulary: list[str] = list(saved.terms) if saved is not None else []
    rows: list[npt.NDArray[np.int64]] = []
    ordinals: list[npt.NDArray[np.int32]] = []
    if saved is not None and len(saved.ordinals):
        counts = np.diff(saved.offsets)
        row_of_posting = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        kept = saved.ordinals
        if keep is not None:
            mask = keep[kept]
            kept, row_of_posting = kept[mask], row_of_posting[mask]
        rows.append(row_of_posting)
        ordinals.append(kept.astype(np.int32, copy=False))
    if fresh:
        position = dict(zip(vocabulary, range(len(vocabulary)), strict=True))
        fresh_rows: list[int] = []
        fresh_ordinals: list[int] = []
        for term, found in fresh.items():
            row = position.get(term)
            if row is None:
                row = position[term] = len(vocabulary)
                vocabulary.append(term)
            fresh_rows.extend([row] * len(found))
            fresh_ordinals.extend(found)
        rows.append(np.asarray(fresh_rows, dtype=np.int64))
        ordinals.append(np.asarray(fresh_ordinals, dtype=np.int32))
    if not rows:
        return Postings([], np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32))
    all_rows = np.concatenate(rows)
    all_ordinals = np.concatenate(ordinals)
    order = np.lexsort((all_ordinals, all_rows))  # by term, then ascending ordinal
    counts = np.bincount(all_rows, minlength=len(vocabulary))
    used = np.flatnonzero(counts)
    offsets = np.zeros(len(used) + 1, dtype=np.int64)
    np.cumsum(counts[used], out=offsets[1:])
    return Postings([vocabulary[i] for i in used.tolist()], offsets, all_ordinals[order])


def encode(graph: Graph) -> GraphImage:
    """The checkpoint image of ``graph``: records a lazy graph never read are copied
    byte for byte from its saved checkpoint; the rest are serialized."""
    saved = graph.saved
    entities, relations, observations = graph.entities, graph.relations, graph._obs
    lazy = saved is not None and isinstance(entities, LazyDocs)
    if lazy:
        assert saved is not None
        assert isinstance(entities, LazyDocs) and isinstance(relations, LazyDocs)
        assert isinstance(observations, LazyDocs)
        if len(entities) != len(saved.entity_ids) + len(entities.added()):
            raise AssertionError("a lazy graph lost saved entities")  # purges make it eager
        data = memoryview(saved.data)

    chunks: list[Buffer] = [b'{"entities":[']
    position = len(chunks[0])
    entity_ids: list[str] = []
    entity_spans: list[tuple[int, int]] = []
    name_keys: list[str] = []
    type_keys: list[str] = []
    entity_ordinal: dict[str, int] = {}
    for ordinal, entity_id in enumerate(entities):
        raw: Buffer
        if lazy:
            assert saved is not None and isinstance(entities, LazyDocs)
            entity = entities.loaded(entity_id)
            saved_at = entities.ordinal(entity_id)
        else:
            entity, saved_at = entities[entity_id], None
        if entity is None:
            assert saved is not None and saved_at is not None
            start, stop = saved.entity_span(saved_at)
            raw = data[start:stop]
            name_keys.append(saved.name_keys[saved_at])
            type_keys.append(saved.type_keys[saved_at])
        else:
            raw = orjson.dumps(entity)
            name_keys.append(name_key(entity["name"]))
            type_keys.append(type_key(entity.get("type")))
        if ordinal:
            chunks.append(b",")
            position += 1
        chunks.append(raw)
        size = len(raw) if isinstance(raw, bytes) else memoryview(raw).nbytes
        entity_spans.append((position, position + size))
        position += size
        entity_ids.append(entity_id)
        entity_ordinal[entity_id] = ordinal

    chunks.append(b'],"relations":[')
    position += len(chunks[-1])
    rel_ids: list[str] = []
    rel_spans: list[tuple[int, int]] = []
    rel_from: list[str] = []
    rel_to: list[str] = []
    rel_types: list[str] = []
    rel_current: list[bool] = []
    for ordinal, (rel_id, source, kind, target, current) in enumerate(graph.relation_ends()):
        if lazy:
            assert saved is not None and isinstance(relations, LazyDocs)
            rel = relations.loaded(rel_id)
        else:
            rel = relations[rel_id]
        if rel is None:
            assert saved is not None and isinstance(relations, LazyDocs)
            saved_at = relations.ordinal(rel_id)
            assert saved_at is not None
            start, stop = saved.rel_span(saved_at)
            raw = data[start:stop]
        else:
            raw = orjson.dumps(rel)
        if ordinal:
            chunks.append(b",")
            position += 1
        chunks.append(raw)
        size = len(raw) if isinstance(raw, bytes) else memoryview(raw).nbytes
        rel_spans.append((position, position + size))
        position += size
        rel_ids.append(rel_id)
        rel_from.append(source)
        rel_to.append(target)
        rel_types.append(kind)
        rel_current.append(current)

    tail: Doc = {"nextId": graph.next_id, "checkpointSeq": graph.seq}
    if graph.extra:
        tail["memgraph"] = graph.extra
    chunks.append(b"]," + orjson.dumps(tail)[1:])
    graph_json = b"".join(chunks)

    # Observations: the saved ones keep their ordinals, new ones follow.
    fresh_contents: list[tuple[int, str]] = []
    if lazy:
        assert saved is not None and isinstance(observations, LazyDocs)
        assert isinstance(entities, LazyDocs)
        obs_ids = list(saved.obs_ids)
        owners = [saved.obs_owner]
        current = saved.obs_current.copy()
        was_current = saved.obs_current
        for obs_id, (_entity, obs) in observations.decoded_items():
            saved_at = observations.ordinal(obs_id)
            if saved_at is not None:
                now = obs.get("validTo") is None
                current[saved_at] = now
                if now and not was_current[saved_at]:
                    fresh_contents.append((saved_at, obs["content"]))
        added = observations.added()
        new_owner = np.empty(len(added), dtype=np.int32)
        new_current = np.empty(len(added), dtype=bool)
        for index, obs_id in enumerate(added):
            entity, obs = observations[obs_id]
            ordinal = len(obs_ids)
            obs_ids.append(obs_id)
            new_owner[index] = entity_ordinal[entity["id"]]
            new_current[index] = obs.get("validTo") is None
            if new_current[index]:
                fresh_contents.append((ordinal, obs["content"]))
        owners.append(new_owner)
        obs_owner = np.concatenate(owners)
        obs_current = np.concatenate([current, new_current])
        saved_terms: Postings | None = saved.terms
        saved_names: Postings | None = saved.name_terms
        name_fresh: dict[str, list[int]] = {}
        for entity_id in entities.added():
            for term in set(terms(entities[entity_id]["name"])):
                name_fresh.setdefault(term, []).append(entity_ordinal[entity_id])
    else:
        obs_ids, owner_list, current_list = [], [], []
        for entity_id in entity_ids:
            for obs in entities[entity_id]["observations"]:
                now = obs.get("validTo") is None
                if now:
                    fresh_contents.append((len(obs_ids), obs["content"]))
                obs_ids.append(obs["id"])
                owner_list.append(entity_ordinal[entity_id])
                current_list.append(now)
        obs_owner = np.asarray(owner_list, dtype=np.int32)
        obs_current = np.asarray(current_list, dtype=bool)
        saved_terms = saved_names = None
        name_fresh = {}
        for entity_id in entity_ids:
            for term in set(terms(entities[entity_id]["name"])):
                name_fresh.setdefault(term, []).append(entity_ordinal[entity_id])
    term_fresh: dict[str, list[int]] = {}
    built = graph._terms
    if not lazy and built is not None and built.saved is None:
        # An eager graph that has answered a keyword query already holds the sets.
        ordinal_of = dict(zip(obs_ids, range(len(obs_ids)), strict=True))
        for term, found_ids in built.items():
            term_fresh[term] = [ordinal_of[i] for i in found_ids if i in ordinal_of]
    else:
        found_terms = index_terms_many([content for _, content in fresh_contents])
        for (ordinal, _content), found in zip(fresh_contents, found_terms, strict=True):
            for term in set(found):
                term_fresh.setdefault(term, []).append(ordinal)
    postings = _merge(saved_terms, obs_current, term_fresh)
    name_postings = _merge(saved_names, None, name_fresh)

    blobs: dict[str, tuple[str, bytes]] = {
        "entity.ids": _strings(entity_ids),
        "entity.spans": ("d64", _deltas(entity_spans)),
        "entity.names": _strings(name_keys),
        "entity.types": _strings(type_keys),
        "obs.ids": _strings(obs_ids),
        "obs.owner": ("d64", _deltas(obs_owner)),
        "obs.current": ("u8", _flags(obs_current)),
        "obs.noted": _strings(list(graph.noted)),
        "rel.ids": _strings(rel_ids),
        "rel.spans": ("d64", _deltas(rel_spans)),
        "rel.from": ("d64", _deltas([entity_ordinal.get(e, -1) for e in rel_from])),
        "rel.to": ("d64", _deltas([entity_ordinal.get(e, -1) for e in rel_to])),
        "rel.types": _strings(rel_types),
        "rel.current": ("u8", _flags(rel_current)),
        **_postings_blobs("terms", postings),
        **_postings_blobs("names", name_postings),
    }
    # Relation ends that name no entity (possible in imported files) are kept aside.
    dangling = {
        str(ordinal): [source, target]
        for ordinal, (source, target) in enumerate(zip(rel_from, rel_to, strict=True))
        if source not in entity_ordinal or target not in entity_ordinal
    }
    return GraphImage(graph_json, graph.seq, graph.next_id, dict(graph.extra), blobs, dangling)


def indexable(graph: Graph) -> bool:
    """Whether the index can describe ``graph`` (no NUL inside ids, names or types)."""
    if graph.saved is not None:
        entities = graph.entities
        assert isinstance(entities, LazyDocs)
        docs = [entities[i] for i in entities.added()]
    else:
        docs = list(graph.entities.values())
    return not any(
        "\x00" in doc["id"] or "\x00" in doc["name"] or "\x00" in str(doc.get("type") or "")
        for doc in docs
    )


# ------------------------------------------------------------------ reading
class IndexUnusable(ValueError):
    """The index file cannot be used (damaged, another version, another graph.json)."""


def read_index(raw: bytes, data: Buffer, stamp: tuple[int, int]) -> SavedGraph:
    """Parse ``graph.idx`` for the ``graph.json`` bytes ``data`` with ``stamp``.

    Raises :class:`ValueError` when the index does not describe this
    ``graph.json`` or is damaged; the caller then parses ``graph.json`` in full.
    """
    if not raw.startswith(INDEX_MAGIC):
        raise IndexUnusable("not a memgraph graph index")
    start = len(INDEX_MAGIC) + 8
    length = int.from_bytes(raw[len(INDEX_MAGIC) : start], "little")
    header = orjson.loads(raw[start : start + length])
    if header.get("version") != INDEX_VERSION:
        raise IndexUnusable(f"index version {header.get('version')!r}")
    graph = header.get("graph") or {}
    if (graph.get("size"), graph.get("mtimeNs")) != stamp:
        raise IndexUnusable("the index describes another graph.json")
    body = memoryview(raw)[start + length :]
    blobs: dict[str, Any] = {}
    for name, (offset, size, kind) in header["blobs"].items():
        piece = body[offset : offset + size]
        if len(piece) != size:
            raise IndexUnusable(f"blob {name!r} is truncated")
        blobs[name] = _decode_blob(kind, piece)
    entity_ids = blobs["entity.ids"]
    obs_ids = blobs["obs.ids"]
    rel_ids = blobs["rel.ids"]
    n, m, k = len(entity_ids), len(obs_ids), len(rel_ids)
    spans = blobs["entity.spans"].reshape(-1, 2)
    rel_spans = blobs["rel.spans"].reshape(-1, 2)
    ends = []
    for side, name in enumerate(("rel.from", "rel.to")):
        ordinals = blobs[name]
        if len(ordinals) != k or (k and int(ordinals.max()) >= n):
            raise IndexUnusable(f"{name} is inconsistent")
        names = [entity_ids[o] if o >= 0 else "" for o in ordinals.tolist()]
        for ordinal, pair in (header.get("dangling") or {}).items():
            names[int(ordinal)] = pair[side]
        ends.append(names)
    checks = [
        (len(spans), n),
        (len(blobs["entity.names"]), n),
        (len(blobs["entity.types"]), n),
        (len(blobs["obs.owner"]), m),
        (len(blobs["obs.current"]), m),
        (len(rel_spans), k),
        (len(blobs["rel.types"]), k),
        (len(blobs["rel.current"]), k),
    ]
    if any(have != want for have, want in checks):
        raise IndexUnusable("array lengths disagree")
    size = memoryview(data).nbytes
    for array in (spans, rel_spans):
        if len(array) and (int(array.min()) < 0 or int(array.max()) > size):
            raise IndexUnusable("a byte span lies outside graph.json")
    postings = []
    for prefix, limit in (("terms", m), ("names", n)):
        table = Postings(
            blobs[f"{prefix}.terms"],
            blobs[f"{prefix}.offsets"],
            blobs[f"{prefix}.ordinals"].astype(np.int32),
        )
        ordinals = table.ordinals
        if (
            len(table.offsets) != len(table.terms) + 1
            or (len(table.offsets) and int(table.offsets[-1]) != len(ordinals))
            or (len(ordinals) and (int(ordinals.min()) < 0 or int(ordinals.max()) >= limit))
        ):
            raise IndexUnusable(f"the {prefix} postings are inconsistent")
        postings.append(table)
    owner = blobs["obs.owner"]
    if m and (int(owner.min()) < 0 or int(owner.max()) >= n):
        raise IndexUnusable("an observation's owner is out of range")
    return SavedGraph(
        data=data,
        seq=int(header.get("seq") or 0),
        next_id=int(header.get("nextId") or 1),
        extra=dict(header.get("memgraph") or {}),
        entity_ids=entity_ids,
        entity_spans=spans,
        name_keys=blobs["entity.names"],
        type_keys=blobs["entity.types"],
        obs_ids=obs_ids,
        obs_owner=owner.astype(np.int32),
        obs_current=blobs["obs.current"],
        noted=blobs["obs.noted"],
        rel_ids=rel_ids,
        rel_spans=rel_spans,
        rel_from=ends[0],
        rel_to=ends[1],
        rel_type_keys=blobs["rel.types"],
        rel_current=blobs["rel.current"],
        terms=postings[0],
        name_terms=postings[1],
    )
