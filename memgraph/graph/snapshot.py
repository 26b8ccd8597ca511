"""Checkpoint images: ``graph.json`` written record by record, plus its index file.

A checkpoint writes two files. ``graph.json`` is the whole graph in Agency's
shape; memgraph writes it one entity and one relation at a time so that it
knows where each record starts and ends. ``graph.idx`` records those byte
spans together with everything a lazy :class:`~memgraph.graph.graph.Graph` needs
before parsing any record: ids, normalized names and types, which entity owns
each observation, which facts are current, the relation ends, and the keyword
and name indexes as compressed-sparse-row arrays.

Opening a scope then reads ``graph.idx`` (a few flat arrays) and memory-maps
``graph.json``; an entity is parsed the first time it is read. The index is
derived data: it names the size and modification time of the ``graph.json``
it describes, and a missing, stale or unreadable index only means the
checkpoint is parsed in full, as before.

The next checkpoint of a lazy graph copies every run of records no op changed
since the last one byte for byte and serializes only the changed and new
records, so its Python work follows the changes, not the scope; the saved
observations keep their ordinals, so the saved postings carry over with one
vectorized filter. The graph is then re-based on the checkpoint it wrote.

``graph.idx`` layout: ``MGIDX01\\n``, the byte length of a JSON header as an
8-byte little-endian integer, the header (``seq``, ``nextId``, ``memgraph``
extra state, the ``graph.json`` stamp, relation ends naming no entity, and
``blobs``: name -> ``[offset, length, kind]``), then the blobs, each
zlib-compressed. Kinds: ``str`` (NUL-separated UTF-8), ``ids:<prefix>`` (ids
``<prefix><n>`` as delta-coded int64), ``d64`` (delta-coded int64) and ``u8``
(flags).
"""

from __future__ import annotations

import dataclasses
import logging
import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from memgraph.background import InThread
from memgraph.graph.graph import LEAN_FACTS, Doc, Graph, type_key
from memgraph.graph.lazy import LazyDocs, Postings
from memgraph.graph.records import CHECKSUMS, CRC_KEY, HEAD, MIDDLE, seal_record, tail_line
from memgraph.graph.saved import (
    Buffer,
    Records,
    RelationEnds,
    SavedGraph,
    Spans,
    StringColumn,
    as_buffer,
)
from memgraph.id_column import IdColumn, id_column, joined_ids, parse_numbers
from memgraph.text import index_terms_many, name_key, terms

__all__ = [
    "INDEX_MAGIC",
    "GraphImage",
    "IndexStale",
    "IndexUnusable",
    "encode",
    "indexable",
    "read_index",
    "stored",
]

log = logging.getLogger("memgraph")

INDEX_MAGIC = b"MGIDX03\n"
# 5: terms are Snowball stems; 6: "we'd" is not "wed"; 7: "twenty-three" is "23";
# 8: "33rd" is "33"; 9: "busy" is not "business"
INDEX_VERSION = 9


@dataclass
class GraphImage:
    """A checkpoint ready to write: ``graph.json`` bytes and the tables of its index."""

    graph_json: bytes  # empty when the bytes went to a sink as they were made
    tables: SavedGraph  # ``data`` left empty until the bytes are on disk
    size: int  # bytes of graph.json

    def saved(self, data: Buffer | Records, path: str) -> SavedGraph:
        """The tables over the written ``graph.json`` (to re-base the graph on)."""
        return dataclasses.replace(self.tables, data=data, path=path, checksummed=True)

    def index_bytes(
        self, stamp: tuple[int, int], blobs: dict[str, tuple[str, bytes]] | None = None
    ) -> bytes:
        """The body of ``graph.idx`` (the store seals it with :data:`INDEX_MAGIC` and
        a checksum) for the written ``graph.json`` with ``(size, mtime_ns)``;
        ``blobs``: :meth:`index_blobs`, when made already (they need no stamp)."""
        t = self.tables
        if blobs is None:
            blobs = self.index_blobs()
        layout: dict[str, list[Any]] = {}
        offset = 0
        for name, (kind, blob) in blobs.items():
            layout[name] = [offset, len(blob), kind]
            offset += len(blob)
        header = orjson.dumps(
            {
                "version": INDEX_VERSION,
                "graph": {"size": stamp[0], "mtimeNs": stamp[1]},
                "seq": t.seq,
                "nextId": t.next_id,
                "memgraph": t.extra,
                "dangling": t.dangling,
                "blobs": layout,
            }
        )
        body = b"".join(blob for _kind, blob in blobs.values())
        return len(header).to_bytes(8, "little") + header + body

    def index_blobs(self) -> dict[str, tuple[str, bytes]]:
        """The tables of ``graph.idx``, compressed: name -> (kind, bytes), in file order.

        The relation and keyword tables are compressed by a helper thread while this
        one does the entity and observation tables: most of the work is zlib and
        numpy, which let go of the GIL, so the halves overlap on a second core."""
        t = self.tables
        later: dict[str, tuple[str, bytes]] = {}

        def relation_blobs() -> None:
            later.update(
                {
                    "rel.ids": _strings(t.rel_ids),
                    "rel.spans": ("d64", _deltas(t.rel_spans)),
                    "rel.from": ("d64", _deltas(t.rel_from_ordinals)),
                    "rel.to": ("d64", _deltas(t.rel_to_ordinals)),
                    "rel.types": _strings(t.rel_type_keys),
                    "rel.current": ("u8", _flags(t.rel_current)),
                    **_postings_blobs("terms", t.terms),
                    **_postings_blobs("names", t.name_terms),
                }
            )

        helper = InThread(relation_blobs, name="memgraph-index")
        try:
            first = {
                "entity.ids": _strings(t.entity_ids),
                "entity.spans": ("d64", _deltas(t.entity_spans)),
                "entity.display": _strings(t.names),
                "entity.names": _strings(t.name_keys),
                "entity.types": _strings(t.type_keys),
                "obs.ids": _strings(t.obs_ids),
                "obs.owner": ("d64", _deltas(t.obs_owner)),
                "obs.current": ("u8", _flags(t.obs_current)),
                "obs.noted": _strings(t.noted),
            }
        finally:
            helper.wait()
        helper.result()
        return {**first, **later}


# ----------------------------------------------------------------- encoding
_NUMBER = r"(?:[1-9][0-9]{0,17}|0)"


def _strings(values: Sequence[str]) -> tuple[str, bytes]:
    """NUL-separated UTF-8; ids like ``obs-12`` sharing one prefix as delta-coded numbers."""
    if isinstance(values, IdColumn) and values.codes is None:
        return f"ids:{values.prefixes[0]}", _deltas(values.numbers)
    values = list(values)
    joined = "\x00".join(values)
    if values:
        prefix = values[0].rstrip("0123456789")
        if prefix != values[0]:
            if joined.isascii():
                numbers = parse_numbers(values, prefix)
                if numbers is not None:
                    return f"ids:{prefix}", _deltas(numbers)
            else:
                item = re.escape(prefix) + _NUMBER
                if re.fullmatch(f"{item}(?:\x00{item})*", joined):
                    digits = joined.replace(prefix, "") if prefix else joined
                    numbers = np.array(digits.split("\x00"), dtype=np.int64)
                    return f"ids:{prefix}", _deltas(numbers)
    return "str", zlib.compress(joined.encode(), 1)


def _deltas(values: npt.ArrayLike) -> bytes:
    array = np.asarray(values, dtype=np.int64).reshape(-1)
    steps = np.diff(array, prepend=np.int64(0)).astype("<i8", copy=False)
    return zlib.compress(steps.data, 1)  # from the array's memory, not a copy of it


def _flags(values: npt.ArrayLike) -> bytes:
    return zlib.compress(np.ascontiguousarray(values, dtype="u1").data, 1)


def _postings_blobs(prefix: str, postings: Postings) -> dict[str, tuple[str, bytes]]:
    return {
        f"{prefix}.terms": _strings(postings.terms),
        f"{prefix}.offsets": ("d64", _deltas(postings.offsets)),
        f"{prefix}.ordinals": ("d64", _deltas(postings.ordinals)),
    }


def _decode_blob(kind: str, piece: memoryview) -> tuple[Any, int]:
    """A blob's values, and the highest id number among them (0 when not ids)."""
    try:
        data = zlib.decompress(piece)
    except zlib.error as exc:
        raise IndexUnusable(f"a blob does not decompress ({exc})") from exc
    if kind == "str":
        return StringColumn(data), 0
    if kind == "u8":
        return np.frombuffer(data, dtype="u1").astype(bool), 0
    numbers = np.cumsum(np.frombuffer(data, dtype="<i8"))
    if kind == "d64":
        return numbers, 0
    if kind.startswith("ids:"):
        prefix = kind[4:]
        top = int(numbers.max()) if len(numbers) else 0
        return IdColumn([prefix], numbers), top
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
    # Saved postings come sorted by term and new ordinals follow the saved ones, so a
    # stable sort by term keeps each term's ordinals ascending (and is nearly linear).
    order = np.argsort(all_rows, kind="stable")
    counts = np.bincount(all_rows, minlength=len(vocabulary))
    used = np.flatnonzero(counts)
    offsets = np.zeros(len(used) + 1, dtype=np.int64)
    np.cumsum(counts[used], out=offsets[1:])
    return Postings([vocabulary[i] for i in used.tolist()], offsets, all_ordinals[order])


def _lean(fact: Doc) -> Doc:
    """An observation or relation as written: ``recordedAt`` is left out when it
    equals ``validFrom`` (most facts are recorded when said) and written as null
    when the fact never had one (Agency's files), so reading restores it exactly."""
    if "recordedAt" not in fact:
        return {**fact, "recordedAt": None}
    if fact["recordedAt"] == fact.get("validFrom"):
        return {key: value for key, value in fact.items() if key != "recordedAt"}
    return fact


def stored(record: Doc) -> Doc:
    """An entity (with its observations) or a relation as ``graph.json`` holds it."""
    if CRC_KEY in record:  # a record read without its checksum removed gets a fresh one
        record = {key: value for key, value in record.items() if key != CRC_KEY}
    if "observations" in record:
        return {**record, "observations": [_lean(o) for o in record["observations"]]}
    return _lean(record)


def _serialized(record: Doc) -> bytes:
    """One record line's bytes (without the separator): JSON with its checksum."""
    return seal_record(orjson.dumps(stored(record)))


Sink = Callable[[bytes | bytearray | memoryview], None]
"""Where the bytes of ``graph.json`` go as they are made, in order (a file being written)."""

_SMALL = 1 << 20
"""A sink is handed small pieces gathered into parts of about this size."""


class _Writer:
    """Writes ``graph.json`` one record per line and tracks each record's byte span.

    Without a sink the pieces are kept in ``chunks``; with one, each is handed on as
    soon as it is made (small ones gathered), so the file can be written while the
    rest is still being serialized."""

    def __init__(self, sink: Sink | None = None) -> None:
        self.chunks: list[Buffer] = []
        self.sink = sink
        self.pending = bytearray()
        self.position = len(HEAD)
        self.first = True
        self._add(HEAD)

    def _add(self, piece: Buffer) -> None:
        if self.sink is None:
            self.chunks.append(piece)
        elif len(piece) >= _SMALL:  # a run of saved records: handed on as it is
            self.flush()
            self.sink(piece if isinstance(piece, (bytes, bytearray)) else memoryview(piece))
        else:
            self.pending += piece
            if len(self.pending) >= _SMALL:
                self.flush()

    def flush(self) -> None:
        """Hand the gathered small pieces to the sink."""
        if self.pending:
            assert self.sink is not None
            self.sink(bytes(self.pending))
            self.pending.clear()

    def raw(self, piece: bytes) -> None:
        """Close the current list of records with ``piece`` (the next list's opening
        line, or the tail)."""
        if not self.first:
            piece = b"\n" + piece
        self._add(piece)
        self.position += len(piece)
        self.first = True

    def record(self, piece: Buffer, size: int) -> int:
        if not self.first:
            self._add(b",\n")
            self.position += 2
        self.first = False
        self._add(piece)
        start = self.position
        self.position += size
        return start

    def records(
        self,
        saved: tuple[memoryview, Spans] | None,
        saved_count: int,
        changed: dict[int, Doc],
        new: Sequence[Doc],
    ) -> Spans:
        """Saved records ``0..saved_count`` (runs of unchanged ones copied, ``changed``
        ones serialized), then the ``new`` ones; their spans in the output."""
        spans = np.empty((saved_count + len(new), 2), dtype=np.int64)
        previous = 0
        for ordinal in [*sorted(changed), saved_count]:
            if previous < ordinal:  # an unchanged run: one copy, shifted spans
                assert saved is not None
                data, old = saved
                begin, end = int(old[previous, 0]), int(old[ordinal - 1, 1])
                start = self.record(data[begin:end], end - begin)
                spans[previous:ordinal] = old[previous:ordinal] + (start - begin)
            if ordinal < saved_count:
                piece = _serialized(changed[ordinal])
                start = self.record(piece, len(piece))
                spans[ordinal] = (start, start + len(piece))
            previous = ordinal + 1
        for index, doc in enumerate(new):
            piece = _serialized(doc)
            start = self.record(piece, len(piece))
            spans[saved_count + index] = (start, start + len(piece))
        return spans


def encode(graph: Graph, files: Doc | None = None, sink: Sink | None = None) -> GraphImage:
    """The checkpoint image of ``graph`` (``files``: more fields for the tail, such as
    the size of ``episodes.jsonl`` the checkpoint goes with).

    For a lazy graph, records no op changed since its checkpoint are copied
    from that checkpoint's bytes; changed and new records are serialized.
    ``sink``: where the bytes of ``graph.json`` go as they are made (the image's
    ``graph_json`` is then empty; its ``size`` says how many there were).
    """
    saved = graph.saved
    entities, relations = graph.entities, graph.relations
    observations = graph.observations_by_id
    if saved is None:
        return _encode_all(graph, files, sink)
    assert isinstance(entities, LazyDocs) and isinstance(relations, LazyDocs)
    assert isinstance(observations, LazyDocs)
    saved_entities, saved_rels = len(saved.entity_ids), len(saved.rel_ids)
    if len(entities) != saved_entities + len(entities.added()):
        raise AssertionError("a lazy graph lost saved entities")  # purges make it eager
    data = memoryview(as_buffer(saved.data))
    new_entity_ids = entities.added()
    new_rel_ids = relations.added()
    changed_entities = _changed(entities, graph.changed_entities)
    changed_rels = _changed(relations, graph.changed_relations)

    writer = _Writer(sink)
    new_entities = [entities[i] for i in new_entity_ids]
    entity_spans = writer.records(
        (data, saved.entity_spans), saved_entities, changed_entities, new_entities
    )
    writer.raw(MIDDLE)
    new_rels = [relations[i] for i in new_rel_ids]
    rel_spans = writer.records((data, saved.rel_spans), saved_rels, changed_rels, new_rels)
    graph_json = _finish(writer, graph, files)

    ordinal_of_new = {e: saved_entities + i for i, e in enumerate(new_entity_ids)}

    def entity_ordinal(entity_id: str) -> int:
        found = entities.ordinal(entity_id)
        return found if found is not None else ordinal_of_new.get(entity_id, -1)

    # Observations: the saved ones keep their ordinals, new ones follow.
    current = saved.obs_current.copy()
    fresh: list[tuple[int, str]] = []  # ordinals and contents of facts current since
    for entity in changed_entities.values():
        for obs in entity["observations"]:
            ordinal = observations.ordinal(obs["id"])
            if ordinal is not None:
                now = obs.get("validTo") is None
                if now and not saved.obs_current[ordinal]:
                    fresh.append((ordinal, obs["content"]))
                current[ordinal] = now
    added = observations.added()
    owners = np.empty(len(added), dtype=np.int32)
    added_current = np.empty(len(added), dtype=bool)
    for index, obs_id in enumerate(added):
        entity, obs = observations[obs_id]
        owners[index] = entity_ordinal(entity["id"])
        added_current[index] = now = obs.get("validTo") is None
        if now:
            fresh.append((len(saved.obs_ids) + index, obs["content"]))
    obs_current = np.concatenate([current, added_current])

    rel_current = saved.rel_current.copy()
    for ordinal, rel in changed_rels.items():
        rel_current[ordinal] = rel.get("validTo") is None
    dangling = dict(saved.dangling)
    new_from = [rel["from"] for rel in new_rels]
    new_to = [rel["to"] for rel in new_rels]
    for index, (source, target) in enumerate(zip(new_from, new_to, strict=True)):
        if source not in entities or target not in entities:
            dangling[str(saved_rels + index)] = [source, target]

    name_fresh: dict[str, list[int]] = {}
    for entity in new_entities:
        for term in set(terms(entity["name"])):
            name_fresh.setdefault(term, []).append(ordinal_of_new[entity["id"]])
    names = [*saved.names, *(str(e["name"]) for e in new_entities)]
    name_keys = [*saved.name_keys, *(name_key(e["name"]) for e in new_entities)]
    type_keys = [*saved.type_keys, *(type_key(e.get("type")) for e in new_entities)]
    for ordinal, entity in changed_entities.items():  # an op may have replaced one
        names[ordinal] = str(entity["name"])
        name_keys[ordinal] = name_key(entity["name"])
        type_keys[ordinal] = type_key(entity.get("type"))
    entity_ids = joined_ids(saved.entity_ids, new_entity_ids)
    rel_from_ordinals = np.concatenate(
        [saved.rel_from_ordinals, np.asarray([entity_ordinal(e) for e in new_from], np.int64)]
    )
    rel_to_ordinals = np.concatenate(
        [saved.rel_to_ordinals, np.asarray([entity_ordinal(e) for e in new_to], np.int64)]
    )
    tables = SavedGraph(
        data=b"",
        seq=graph.seq,
        next_id=graph.next_id,
        extra=dict(graph.extra),
        entity_ids=entity_ids,
        entity_spans=entity_spans,
        names=names,
        name_keys=name_keys,
        type_keys=type_keys,
        obs_ids=joined_ids(saved.obs_ids, added),
        obs_owner=np.concatenate([saved.obs_owner, owners]),
        obs_current=obs_current,
        noted=list(graph.noted),
        rel_ids=joined_ids(saved.rel_ids, new_rel_ids),
        rel_spans=rel_spans,
        rel_from=RelationEnds(rel_from_ordinals, entity_ids, dangling, 0),
        rel_to=RelationEnds(rel_to_ordinals, entity_ids, dangling, 1),
        rel_from_ordinals=rel_from_ordinals,
        rel_to_ordinals=rel_to_ordinals,
        rel_type_keys=[*saved.rel_type_keys, *(type_key(r["type"]) for r in new_rels)],
        rel_current=np.concatenate(
            [rel_current, np.asarray([r.get("validTo") is None for r in new_rels], dtype=bool)]
        ),
        terms=_merge(saved.terms, obs_current, _terms_of(fresh, graph.fresh_terms)),
        name_terms=_merge(saved.name_terms, None, name_fresh),
        dangling=dangling,
    )
    return GraphImage(graph_json, tables, writer.position)


def _changed(docs: LazyDocs[Doc], ids: set[str]) -> dict[int, Doc]:
    """Saved ordinal -> record, of the saved records in ``ids``."""
    found = {}
    for item_id in ids:
        ordinal = docs.ordinal(item_id)
        if ordinal is not None and item_id in docs:
            found[ordinal] = docs[item_id]
    return found


def _finish(writer: _Writer, graph: Graph, files: Doc | None) -> bytes:
    """Close ``graph.json`` with its tail line (see :mod:`memgraph.graph.records`)."""
    tail: Doc = {"nextId": graph.next_id, "checkpointSeq": graph.seq, "factFormat": LEAN_FACTS}
    if graph.extra:
        tail["memgraph"] = graph.extra
    tail["counts"] = {"entities": len(graph.entities), "relations": len(graph.relations)}
    tail.update(files or {})
    tail["checksums"] = CHECKSUMS
    writer.raw(tail_line(tail))
    if writer.sink is not None:
        writer.flush()
        return b""
    return b"".join(writer.chunks)


def _terms_of(
    contents: list[tuple[int, str]], known: dict[str, tuple[str, ...]] | None = None
) -> dict[str, list[int]]:
    """Term -> ordinals of the facts ``contents``; ``known``: terms by content already
    found (when the graph indexed them), the rest are found here in one batch."""
    known = known or {}
    missing = [content for _, content in contents if content not in known]
    found_terms = dict(zip(missing, map(set, index_terms_many(missing)), strict=True))
    table: dict[str, list[int]] = {}
    for ordinal, content in contents:
        found = known.get(content)
        for term in found if found is not None else found_terms[content]:
            table.setdefault(term, []).append(ordinal)
    return table


def _encode_all(graph: Graph, files: Doc | None, sink: Sink | None = None) -> GraphImage:
    """The image of a graph with no saved checkpoint: every record serialized."""
    # A lazy graph opened from this image trusts its nextId: make sure it is past
    # every id in use (an imported file's nextId may be stale).
    graph.check_next_id()
    entity_docs = list(graph.entities.values())
    rel_docs = list(graph.relations.values())
    writer = _Writer(sink)
    entity_spans = writer.records(None, 0, {}, entity_docs)
    writer.raw(MIDDLE)
    rel_spans = writer.records(None, 0, {}, rel_docs)
    graph_json = _finish(writer, graph, files)

    entity_ids = [e["id"] for e in entity_docs]
    ordinal_of = dict(zip(entity_ids, range(len(entity_ids)), strict=True))
    obs_ids: list[str] = []
    owners: list[int] = []
    current: list[bool] = []
    fresh: list[tuple[int, str]] = []
    for ordinal, entity in enumerate(entity_docs):
        for obs in entity["observations"]:
            now = obs.get("validTo") is None
            if now:
                fresh.append((len(obs_ids), obs["content"]))
            obs_ids.append(obs["id"])
            owners.append(ordinal)
            current.append(now)
    built = graph.built_term_index
    if built is not None and built.saved is None:
        # A graph that has answered a keyword query already holds the sets.
        obs_ordinal = dict(zip(obs_ids, range(len(obs_ids)), strict=True))
        term_table = {
            term: [obs_ordinal[i] for i in found if i in obs_ordinal]
            for term, found in built.items()
        }
    else:
        term_table = _terms_of(fresh)
    name_table: dict[str, list[int]] = {}
    for ordinal, entity in enumerate(entity_docs):
        for term in set(terms(entity["name"])):
            name_table.setdefault(term, []).append(ordinal)
    rel_from = [r["from"] for r in rel_docs]
    rel_to = [r["to"] for r in rel_docs]
    dangling = {
        str(ordinal): [source, target]
        for ordinal, (source, target) in enumerate(zip(rel_from, rel_to, strict=True))
        if source not in ordinal_of or target not in ordinal_of
    }
    tables = SavedGraph(
        data=b"",
        seq=graph.seq,
        next_id=graph.next_id,
        extra=dict(graph.extra),
        entity_ids=id_column(entity_ids),
        entity_spans=entity_spans,
        names=[str(e["name"]) for e in entity_docs],
        name_keys=[name_key(e["name"]) for e in entity_docs],
        type_keys=[type_key(e.get("type")) for e in entity_docs],
        obs_ids=id_column(obs_ids),
        obs_owner=np.asarray(owners, dtype=np.int32),
        obs_current=np.asarray(current, dtype=bool),
        noted=list(graph.noted),
        rel_ids=id_column([r["id"] for r in rel_docs]),
        rel_spans=rel_spans,
        rel_from=rel_from,
        rel_to=rel_to,
        rel_from_ordinals=np.asarray([ordinal_of.get(e, -1) for e in rel_from], np.int64),
        rel_to_ordinals=np.asarray([ordinal_of.get(e, -1) for e in rel_to], np.int64),
        rel_type_keys=[type_key(r["type"]) for r in rel_docs],
        rel_current=np.asarray([r.get("validTo") is None for r in rel_docs], dtype=bool),
        terms=_merge(None, None, term_table),
        name_terms=_merge(None, None, name_table),
        dangling=dangling,
    )
    return GraphImage(graph_json, tables, writer.position)


def indexable(graph: Graph) -> bool:
    """Whether the index can describe ``graph`` (no NUL in ids, names or types)."""
    if graph.saved is not None:
        entities, relations = graph.entities, graph.relations
        assert isinstance(entities, LazyDocs) and isinstance(relations, LazyDocs)
        entity_docs = [entities[i] for i in entities.added()]
        rel_docs = [relations[i] for i in relations.added()]
    else:
        entity_docs = list(graph.entities.values())
        rel_docs = list(graph.relations.values())
    texts = [f"{e['id']}{e['name']}{e.get('type') or ''}" for e in entity_docs]
    texts += [f"{r['id']}{r['type']}{r['from']}{r['to']}" for r in rel_docs]
    return not any("\x00" in text for text in texts)


# ------------------------------------------------------------------ reading
class IndexUnusable(ValueError):
    """The index file cannot be used (damaged, another version, another graph.json)."""


class IndexStale(IndexUnusable):
    """The index describes another ``graph.json`` (a different size or time)."""


def read_index(
    body: bytes | memoryview,
    data: Buffer | Records,
    stamp: tuple[int, int],
    tail: Doc | None = None,
) -> SavedGraph:
    """Parse the body of ``graph.idx`` (its seal checked by the store) for the
    ``graph.json`` bytes ``data`` with ``stamp``.

    The index is derived: nothing is taken from it before it agrees with the
    primary file. ``tail`` (``graph.json``'s closing line, see
    :func:`~memgraph.graph.records.read_tail`) must give the same commit,
    ``nextId`` and record counts, and no id in the index may reach ``nextId``.

    Raises:
        IndexUnusable: (a ``ValueError``) the index does not describe this
            ``graph.json`` or disagrees with it; the caller parses ``graph.json``
            in full and the next checkpoint writes a new index.
    """
    header, blobs, highest = _read_blobs(memoryview(body))
    graph = header.get("graph") or {}
    if (graph.get("size"), graph.get("mtimeNs")) != stamp:
        raise IndexStale("the index describes another graph.json")
    saved = _saved_from_blobs(header, blobs, data)
    _check_against_tail(saved, highest, tail)
    return saved


def _read_blobs(view: memoryview) -> tuple[Doc, dict[str, Any], int]:
    """The header, the decoded blobs, and the highest number of an id among them."""
    length = int.from_bytes(view[:8], "little")
    header = orjson.loads(view[8 : 8 + length])
    if not isinstance(header, dict) or header.get("version") != INDEX_VERSION:
        raise IndexUnusable(f"index version {header.get('version')!r}")
    body = view[8 + length :]
    blobs: dict[str, Any] = {}
    highest = 0
    for name, (offset, size, kind) in header["blobs"].items():
        piece = body[offset : offset + size]
        if len(piece) != size:
            raise IndexUnusable(f"blob {name!r} is truncated")
        blobs[name], top = _decode_blob(kind, piece)
        highest = max(highest, top)
    return header, blobs, highest


def _ends(
    blobs: dict[str, Any], entity_ids: Sequence[str], dangling: Doc
) -> tuple[RelationEnds, RelationEnds]:
    """The ``from`` and ``to`` entity ids of every relation."""
    n, k = len(entity_ids), len(blobs["rel.ids"])
    for name in ("rel.from", "rel.to"):
        ordinals = blobs[name]
        if len(ordinals) != k or (k and int(ordinals.max()) >= n):
            raise IndexUnusable(f"{name} is inconsistent")
    if any(not 0 <= int(ordinal) < k for ordinal in dangling):
        raise IndexUnusable("a dangling relation is out of range")
    return (
        RelationEnds(blobs["rel.from"], entity_ids, dangling, 0),
        RelationEnds(blobs["rel.to"], entity_ids, dangling, 1),
    )


def _check_lengths(blobs: dict[str, Any], data: Buffer | Records) -> None:
    """Every array has one entry per record, and every byte span lies inside ``data``."""
    n, m, k = len(blobs["entity.ids"]), len(blobs["obs.ids"]), len(blobs["rel.ids"])
    checks = [
        (len(blobs["entity.spans"]), 2 * n),
        (len(blobs["entity.names"]), n),
        (len(blobs["entity.display"]), n),
        (len(blobs["entity.types"]), n),
        (len(blobs["obs.owner"]), m),
        (len(blobs["obs.current"]), m),
        (len(blobs["rel.spans"]), 2 * k),
        (len(blobs["rel.types"]), k),
        (len(blobs["rel.current"]), k),
    ]
    if any(have != want for have, want in checks):
        raise IndexUnusable("array lengths disagree")
    size = data.nbytes if isinstance(data, memoryview) else len(data)
    for array in (blobs["entity.spans"], blobs["rel.spans"]):
        if len(array) and (int(array.min()) < 0 or int(array.max()) > size):
            raise IndexUnusable("a byte span lies outside graph.json")
    owner = blobs["obs.owner"]
    if m and (int(owner.min()) < 0 or int(owner.max()) >= n):
        raise IndexUnusable("an observation's owner is out of range")


def _postings(blobs: dict[str, Any], prefix: str, limit: int) -> Postings:
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
    return table


def _saved_from_blobs(header: Doc, blobs: dict[str, Any], data: Buffer | Records) -> SavedGraph:
    """The :class:`SavedGraph` the decoded blobs describe, checked for consistency."""
    _check_lengths(blobs, data)
    entity_ids = blobs["entity.ids"]
    dangling = dict(header.get("dangling") or {})
    rel_from, rel_to = _ends(blobs, entity_ids, dangling)
    return SavedGraph(
        data=data,
        seq=int(header.get("seq") or 0),
        next_id=int(header.get("nextId") or 1),
        extra=dict(header.get("memgraph") or {}),
        entity_ids=entity_ids,
        entity_spans=blobs["entity.spans"].reshape(-1, 2),
        names=blobs["entity.display"],
        name_keys=blobs["entity.names"],
        type_keys=blobs["entity.types"],
        obs_ids=blobs["obs.ids"],
        obs_owner=blobs["obs.owner"].astype(np.int32),
        obs_current=blobs["obs.current"],
        noted=blobs["obs.noted"],
        rel_ids=blobs["rel.ids"],
        rel_spans=blobs["rel.spans"].reshape(-1, 2),
        rel_from=rel_from,
        rel_to=rel_to,
        rel_from_ordinals=blobs["rel.from"],
        rel_to_ordinals=blobs["rel.to"],
        rel_type_keys=blobs["rel.types"],
        rel_current=blobs["rel.current"],
        terms=_postings(blobs, "terms", len(blobs["obs.ids"])),
        name_terms=_postings(blobs, "names", len(entity_ids)),
        dangling=dangling,
    )


def _check_against_tail(saved: SavedGraph, highest: int, tail: Doc | None) -> None:
    """The primary file wins: the index must agree with ``graph.json``'s own values."""
    if tail is None:
        return  # a graph.json of another shape: nothing of its own to compare
    counts = tail.get("counts") or {}
    wanted = {
        "checkpoint commit": (saved.seq, tail.get("checkpointSeq") or 0),
        "nextId": (saved.next_id, tail.get("nextId")),
        "entity count": (len(saved.entity_ids), counts.get("entities")),
        "relation count": (len(saved.rel_ids), counts.get("relations")),
    }
    for what, (indexed, primary) in wanted.items():
        if indexed != primary:
            raise IndexUnusable(f"its {what} {indexed!r} disagrees with graph.json's {primary!r}")
    if highest >= saved.next_id:
        raise IndexUnusable(f"it holds id number {highest}, not below nextId {saved.next_id}")
    saved.extra = dict(tail.get("memgraph") or {})  # graph.json's own copy is the one kept
    saved.checksummed = tail.get("checksums") == CHECKSUMS
