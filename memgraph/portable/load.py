"""Reading a portable dump back into a scope, after verifying it.

:func:`read_dump` checks, before anything is written: the header (a
``memgraph-dump`` of a version this memgraph reads; a newer one is refused
with the advice to upgrade), every line, the trailer's SHA-256 over the bytes
before it (a damaged or truncated file is refused) and its counts. Then
:func:`load_dump` writes the scope with one ``rewrite`` (as ``migrate``
does), only into an empty scope unless ``force``, reads it back through a
fresh handle and compares counts and the canonical checksum.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from memgraph.admin.migrate import (
    LOCK_TIMEOUT,
    ScopeState,
    install_state,
    open_location,
    show,
    verify_state,
)
from memgraph.errors import InvalidInput
from memgraph.graph.graph import Doc
from memgraph.portable.dump import FORMAT, KINDS, NAMED, VERSION
from memgraph.retrieval.vectors import VectorIndex
from memgraph.scope import validate_scope
from memgraph.store.base import Store

__all__ = ["Dump", "LoadReport", "load", "load_dump", "read_dump"]

_EXTRA_OF_KIND = {kind: key for key, kind in KINDS.items()}


@dataclass
class Dump:
    """A verified dump: its header, the scope state it holds and its counts."""

    header: Doc
    state: ScopeState
    counts: dict[str, int]
    sha256: str


@dataclass(frozen=True)
class LoadReport:
    """What was loaded, from which scope, and the checksum the copy was verified by."""

    scope: str
    source_scope: str
    counts: dict[str, int] = field(default_factory=dict)
    checksum: str = ""


class _Reader:
    def __init__(self, name: str) -> None:
        self.name = name
        self.entities: list[Doc] = []
        self.by_id: dict[str, Doc] = {}
        self.relations: list[Doc] = []
        self.episodes: list[Doc] = []
        self.extra: dict[str, Any] = {}
        self.summary: Doc | None = None
        self.vector_model: str | None = None
        self.vector_dim = 0
        self.vector_ids: list[str] = []
        self.vector_rows: list[np.ndarray] = []
        self.counts: dict[str, int] = {
            "entities": 0,
            "observations": 0,
            "notes": 0,
            "relations": 0,
            "episodes": 0,
        }

    def bad(self, number: int, problem: str) -> InvalidInput:
        return InvalidInput(
            f"{self.name}: line {number}: {problem}", path=self.name, position=f"line {number}"
        )

    def count(self, kind: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def add(self, number: int, record: Doc) -> None:
        kind = record.get("kind")
        try:
            if kind == "entity":
                entity = {**record["entity"], "observations": []}
                self.entities.append(entity)
                self.by_id[entity["id"]] = entity
                self.count("entities")
            elif kind == "observation":
                owner = self.by_id.get(record["entity"])
                if owner is None:
                    raise self.bad(number, f"a fact of unknown entity {record['entity']!r}")
                obs = record["observation"]
                owner["observations"].append(obs)
                self.count("observations")
                if obs.get("category"):
                    self.count("notes")
            elif kind == "relation":
                self.relations.append(record["relation"])
                self.count("relations")
            elif kind == "episode":
                self.episodes.append(record["episode"])
                self.count("episodes")
            elif kind in _EXTRA_OF_KIND:
                key = _EXTRA_OF_KIND[kind]
                name_field, value_field = NAMED[key]
                self.extra.setdefault(key, {})[record[name_field]] = record[value_field]
                self.count(key)
            elif kind == "extra":
                self.extra[record["key"]] = record["value"]
                self.count("extra")
            elif kind == "summary":
                self.summary = record["summary"]
                self.count("summary")
            elif kind == "vectors":
                self.add_vectors(number, record)
            else:
                raise self.bad(number, f"unknown record kind {kind!r}")
        except (KeyError, TypeError) as exc:
            raise self.bad(number, f"a {kind!r} record without {exc}") from exc

    def add_vectors(self, number: int, record: Doc) -> None:
        model, dim, ids = record["model"], int(record["dim"]), list(record["ids"])
        if self.vector_model is None:
            self.vector_model, self.vector_dim = model, dim
        elif (model, dim) != (self.vector_model, self.vector_dim):
            raise self.bad(number, f"vectors of {model!r}/{dim} after {self.vector_model!r}")
        rows = np.frombuffer(base64.b64decode(record["b64"], validate=True), dtype="<f4")
        if dim <= 0 or rows.size != len(ids) * dim:
            raise self.bad(number, f"{len(ids)} vector ids but {rows.size} floats of dim {dim}")
        self.vector_ids += ids
        self.vector_rows.append(rows.astype(np.float32).reshape(len(ids), dim))
        self.counts["vectors"] = len(self.vector_ids)

    def state(self, header: Doc) -> ScopeState:
        document: Doc = {
            "entities": self.entities,
            "relations": self.relations,
            "nextId": int(header.get("nextId") or 1),
            "checkpointSeq": int(header.get("seq") or 0),
        }
        if self.extra:
            document["memgraph"] = self.extra
        if self.vector_rows:
            matrix = np.concatenate(self.vector_rows)
            vectors = VectorIndex(self.vector_model, None, matrix, self.vector_ids)
        else:
            vectors = VectorIndex(None)
        return ScopeState(document, self.episodes, vectors, self.summary)


def _header(first: bytes, name: str) -> Doc:
    try:
        header = orjson.loads(first)
    except orjson.JSONDecodeError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise InvalidInput(
            f"{name} is not a memgraph dump (its first line is not a "
            f'{{"format": "{FORMAT}", ...}} header)',
            path=name,
            position="line 1",
        )
    version = header.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InvalidInput(f"{name}: the header has no valid version: {version!r}", path=name)
    if version > VERSION:
        raise InvalidInput(
            f"{name} is a version {version} dump, written by memgraph "
            f"{header.get('memgraph', 'of a newer release')}; this memgraph reads dumps up to "
            f"version {VERSION}. Upgrade memgraph (pip install -U memgraph-kg) to load it",
            path=name,
            position="line 1",
        )
    return header


def read_dump(lines: Iterable[bytes], name: str = "the dump") -> Dump:
    """Parse and verify a dump (see the module docstring); nothing is written.

    Raises:
        InvalidInput: not a dump, a newer version, a damaged or truncated
            file, a checksum or count mismatch; the message names the line.
    """
    digest = hashlib.sha256()
    reader = _Reader(name)
    header: Doc | None = None
    trailer: Doc | None = None
    number = 0
    for number, raw in enumerate(lines, 1):
        if trailer is not None:
            if raw.strip():
                raise reader.bad(number, "data after the end line")
            continue
        if header is None:
            header = _header(raw, name)
            digest.update(raw)
            continue
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise reader.bad(number, f"not valid JSON ({exc}); the dump is damaged") from exc
        if not isinstance(record, dict):
            raise reader.bad(number, "not a JSON object; the dump is damaged")
        if record.get("kind") == "end":
            trailer = record
            continue
        digest.update(raw)
        reader.add(number, record)
    if header is None:
        raise InvalidInput(f"{name} is empty: not a memgraph dump", path=name)
    if trailer is None:
        raise InvalidInput(
            f"{name} is truncated after line {number}: it has no end line (it was cut short "
            "while being written or copied)",
            path=name,
            position=f"line {number}",
        )
    sha256 = digest.hexdigest()
    if trailer.get("sha256") != sha256:
        raise InvalidInput(
            f"{name} is damaged: its SHA-256 is {sha256[:12]}…, the end line says "
            f"{str(trailer.get('sha256'))[:12]}…",
            path=name,
        )
    expected = {k: v for k, v in (trailer.get("counts") or {}).items() if v}
    found = {k: v for k, v in reader.counts.items() if v}
    if expected != found:
        raise InvalidInput(f"{name}: the end line counts {expected}, the dump holds {found}")
    return Dump(header, reader.state(header), reader.counts, sha256)


def load_dump(
    dump: Dump,
    open_store: Callable[[], Store],
    *,
    where: str = "",
    force: bool = False,
    lock_timeout: float = LOCK_TIMEOUT,
) -> LoadReport:
    """Make a verified dump (:func:`read_dump`) the whole content of a scope.

    Args:
        dump: the dump.
        open_store: opens the target scope's store (called twice: to write,
            and to read the copy back through a fresh handle).
        where: the target's location in messages.
        force: replace a scope that already holds data (its previous content
            is gone afterwards: dump it first to keep it).
        lock_timeout: seconds to wait for the target scope's lock.

    Raises:
        StoreConflict: the scope holds data and ``force`` is false, or it
            stayed locked.
        StoreCorrupt: the copy read back differs from the dump.
    """
    target = open_store()
    try:
        with target.lock(lock_timeout):
            install_state(target, dump.state, replace=force, where=where, flag="--force")
    finally:
        target.close()
    checksum = verify_state(open_store(), dump.state, where=where, origin="the dump")
    return LoadReport(target.scope, str(dump.header.get("scope")), dump.counts, checksum)


def load(
    path: str | Path, location: str | Path, scope: str | None = None, *, force: bool = False
) -> LoadReport:
    """Load the dump file ``path`` into ``scope`` (default: the dump's) at a directory or DSN.

    Raises:
        InvalidInput: the dump does not verify (nothing was written).
        StoreConflict: the scope holds data and ``force`` is false.
        StoreCorrupt: the copy read back differs from the dump.
    """
    with open(path, "rb") as handle:
        dump = read_dump(handle, str(path))
    name = validate_scope(scope or str(dump.header.get("scope") or "default"))
    return load_dump(
        dump, lambda: open_location(str(location), name), where=show(str(location)), force=force
    )
