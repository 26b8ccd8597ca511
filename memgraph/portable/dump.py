"""Writing a scope as a portable dump: one versioned JSON Lines stream.

The stream (format version :data:`VERSION`)::

    {"format": "memgraph-dump", "version": 1, "scope", "createdAt", "memgraph", "seq",
     "nextId", "vectors"}                                              the header
    {"kind": "entity", "entity": {id, name, type, source, createdAt}}  every entity
    {"kind": "observation", "entity": id, "observation": {...}}        every fact, expired too
    {"kind": "relation", "relation": {...}}                            every relation, expired too
    {"kind": "episode", "episode": {...}}                              every episode
    {"kind": "kv", "key": k, "versions": [...]}                        key/value versions
    {"kind": "progress", "name": n, "board": {...}}                    progress boards
    {"kind": "rule", "name": n, "rule": {...}}                         owner rules
    {"kind": "extra", "key": k, "value": v}                            any other scope data
    {"kind": "summary", "summary": {...}}                              the conversation summary
    {"kind": "vectors", "model", "dim", "ids", "b64"}                  with --vectors, in batches
    {"kind": "end", "counts": {...}, "sha256": "..."}                  the trailer

Records are written exactly as the scope keeps them: facts and relations
with both clocks (``validFrom``/``validTo``, ``recordedAt``/``retiredAt``),
``supersededBy``, ``forgotten`` (expired by forget or expire), their episode
(provenance), source, category and tags;
notes are facts with a category. Vectors are little-endian float32 in
base64, with the embedding model and dimension. The trailer's ``counts`` hold
the number of records of each kind, and ``sha256`` is the SHA-256 of every
byte before the trailer line.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import numpy as np
import orjson

from memgraph import __version__
from memgraph.admin.migrate import LOCK_TIMEOUT, ScopeState, open_location, read_scope
from memgraph.clock import now_iso
from memgraph.errors import NotFound
from memgraph.graph.graph import Doc
from memgraph.scope import validate_scope
from memgraph.store.base import Store

__all__ = [
    "FORMAT",
    "VECTOR_BATCH",
    "VERSION",
    "DumpReport",
    "dump",
    "dump_lines",
    "dump_scope",
]

FORMAT = "memgraph-dump"
VERSION = 1
"""The dump format version this memgraph writes (and the newest it reads)."""
VECTOR_BATCH = 1024
"""Vector rows per line."""
NAMED = {"kv": ("key", "versions"), "progress": ("name", "board"), "rules": ("name", "rule")}
"""Scope data kept under the document's ``memgraph`` key: line kind fields per entry."""
KINDS = {"kv": "kv", "progress": "progress", "rules": "rule"}


@dataclass(frozen=True)
class DumpReport:
    """What a dump holds: the scope, counts of each kind of record, its checksum."""

    scope: str
    counts: dict[str, int] = field(default_factory=dict)
    sha256: str = ""
    bytes: int = 0


def _line(record: Doc) -> bytes:
    return orjson.dumps(record, option=orjson.OPT_NON_STR_KEYS) + b"\n"


def dump_lines(
    state: ScopeState, scope: str, *, vectors: bool, counts: dict[str, int]
) -> Iterator[bytes]:
    """The header and record lines of ``state`` (not the trailer); fills ``counts``."""
    document = state.document
    index = state.vectors
    with_vectors = vectors and len(index) > 0
    yield _line(
        {
            "format": FORMAT,
            "version": VERSION,
            "scope": scope,
            "createdAt": now_iso(),
            "memgraph": __version__,
            "seq": int(document.get("checkpointSeq") or 0),
            "nextId": int(document.get("nextId") or 1),
            "vectors": with_vectors,
        }
    )

    def count(kind: str) -> None:
        counts[kind] = counts.get(kind, 0) + 1

    for key in ("entities", "observations", "notes", "relations", "episodes"):
        counts.setdefault(key, 0)
    for entity in document.get("entities") or ():
        record = {k: v for k, v in entity.items() if k != "observations"}
        count("entities")
        yield _line({"kind": "entity", "entity": record})
        for obs in entity.get("observations") or ():
            count("observations")
            if obs.get("category"):
                count("notes")
            yield _line({"kind": "observation", "entity": entity["id"], "observation": obs})
    for relation in document.get("relations") or ():
        count("relations")
        yield _line({"kind": "relation", "relation": relation})
    for episode in state.episodes:
        count("episodes")
        yield _line({"kind": "episode", "episode": episode})
    for key, value in (document.get("memgraph") or {}).items():
        if key in NAMED and isinstance(value, dict):
            name_field, value_field = NAMED[key]
            for name, entry in value.items():
                count(key)
                yield _line({"kind": KINDS[key], name_field: name, value_field: entry})
        else:
            count("extra")
            yield _line({"kind": "extra", "key": key, "value": value})
    if state.summary is not None:
        count("summary")
        yield _line({"kind": "summary", "summary": state.summary})
    if with_vectors:
        ids = index.ids()
        counts["vectors"] = len(ids)
        for start in range(0, len(ids), VECTOR_BATCH):
            rows = np.ascontiguousarray(index.rows(start, start + VECTOR_BATCH), dtype="<f4")
            yield _line(
                {
                    "kind": "vectors",
                    "model": index.model,
                    "dim": index.dimension,
                    "ids": ids[start : start + VECTOR_BATCH],
                    "b64": base64.b64encode(rows.tobytes()).decode("ascii"),
                }
            )


def dump_scope(
    store: Store,
    out: BinaryIO,
    *,
    vectors: bool = False,
    lock_timeout: float = LOCK_TIMEOUT,
) -> DumpReport:
    """Write the whole scope of ``store`` to ``out`` as a dump.

    The scope is read under its lock, so no write lands mid-dump; the lock is
    released before the stream is written.

    Args:
        store: the scope's store.
        out: a binary stream.
        vectors: include the embedding vectors (else the loading side embeds
            the current facts again when the scope is first opened).
        lock_timeout: seconds to wait for the scope's lock.

    Raises:
        NotFound: the scope holds nothing.
        StoreError: the scope could not be read.
    """
    with store.lock(lock_timeout):
        if not store.exists() and store.read_summary() is None:
            raise NotFound(f"scope {store.scope!r} holds nothing to dump")
        state = read_scope(store)
    digest = hashlib.sha256()
    counts: dict[str, int] = {}
    size = 0
    for line in dump_lines(state, store.scope, vectors=vectors, counts=counts):
        digest.update(line)
        out.write(line)
        size += len(line)
    sha256 = digest.hexdigest()
    trailer = _line({"kind": "end", "counts": counts, "sha256": sha256})
    out.write(trailer)
    out.flush()
    return DumpReport(store.scope, counts, sha256, size + len(trailer))


def dump(location: str | Path, scope: str, out: BinaryIO, *, vectors: bool = False) -> DumpReport:
    """Dump ``scope`` stored at a memory directory or a PostgreSQL DSN to ``out``."""
    store = open_location(str(location), validate_scope(scope))
    try:
        return dump_scope(store, out, vectors=vectors)
    finally:
        store.close()
