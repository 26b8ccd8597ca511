"""Copying scopes between stores: ``memgraph migrate --from SRC --to DST``.

A location is a memory directory (one sub-directory per scope) or a
PostgreSQL DSN. Each scope is copied whole, in either direction: the graph
with every expired fact and its validity and recording times, every episode,
every vector row in index order, the conversation summary. The source is read
under its scope lock (so no write lands mid-copy) and the destination is
written with one :meth:`~memgraph.store.base.Store.rewrite` (one transaction
on PostgreSQL, atomic renames on files).

Then the copy is verified: a fresh handle reads the destination back, and its
counts and a SHA-256 over a canonical JSON form of the scope
(:func:`canonical_bytes`) must equal the source's, or
:class:`~memgraph.errors.StoreCorrupt` is raised.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson

import memgraph.engine.memory  # noqa: F401  (registers the op kinds of key/value, progress and rules)
from memgraph.errors import NotFound, StoreConflict, StoreCorrupt
from memgraph.graph.graph import Doc
from memgraph.retrieval.vectors import VectorIndex
from memgraph.scope import validate_scope
from memgraph.store import DirectoryStore, PostgresStore, Store
from memgraph.store.pg_schema import is_dsn, mask_dsn
from memgraph.store.postgres import list_scopes

__all__ = [
    "ScopeReport",
    "ScopeState",
    "canonical_bytes",
    "install_state",
    "location_scopes",
    "migrate",
    "open_location",
    "read_scope",
    "verify_state",
]

LOCK_TIMEOUT = 30.0
_LEGACY_BACKUP = re.compile(r"(.+)\.backup-\d{8}T\d{6}(?:-\d+)?")


@dataclass
class ScopeState:
    """Everything a scope holds, as read from a store."""

    document: Doc
    episodes: list[Doc]
    vectors: VectorIndex
    summary: Doc | None

    def counts(self) -> dict[str, int]:
        """Entities, observations (expired included), relations, episodes, vectors, summary."""
        entities = self.document.get("entities") or []
        return {
            "entities": len(entities),
            "observations": sum(len(e.get("observations") or []) for e in entities),
            "relations": len(self.document.get("relations") or []),
            "episodes": len(self.episodes),
            "vectors": len(self.vectors),
            "summary": int(self.summary is not None),
        }


@dataclass(frozen=True)
class ScopeReport:
    """What was copied for one scope, and the checksum both sides agree on."""

    scope: str
    counts: dict[str, int] = field(default_factory=dict)
    checksum: str = ""
    seq: int = 0


def show(location: str) -> str:
    """A location as it may be printed (a DSN's password masked)."""
    return mask_dsn(location) if is_dsn(location) else location


def open_location(location: str, scope: str) -> Store:
    """The store of ``scope`` at a directory or a DSN."""
    if is_dsn(location):
        return PostgresStore(location, scope)
    return DirectoryStore(Path(location), scope)


def location_scopes(location: str) -> list[str]:
    """Every scope stored at ``location`` (a directory or a DSN), sorted."""
    if is_dsn(location):
        return list_scopes(location)
    root = Path(location)
    if not root.is_dir():
        raise NotFound(f"no memory directory at {location!r}")
    found = []
    for child in sorted(root.iterdir()):
        if not child.is_dir():
            continue
        try:
            validate_scope(child.name)  # doctor's @backups folder is no scope id
        except ValueError:
            continue
        legacy = _LEGACY_BACKUP.fullmatch(child.name)
        if legacy and (root / legacy.group(1)).is_dir():
            continue  # a backup older versions of doctor kept beside the scope
        if any((child / name).exists() for name in ("graph.json", "journal.jsonl", "summary.json")):
            found.append(child.name)
    return found


def read_scope(store: Store) -> ScopeState:
    """Replay ``store``'s checkpoint and commits into one state (no embedding, no writes)."""
    snapshot = store.load()
    graph = snapshot.graph()
    stored = snapshot.vectors
    if stored is not None and len(stored.ids):
        index = VectorIndex(stored.model, None, np.asarray(stored.all_rows()), stored.ids)
    else:
        index = VectorIndex(stored.model if stored is not None else None)
    for commit in snapshot.commits:
        graph.apply(commit.ops)
        graph.next_id = max(graph.next_id, commit.next_id)
        graph.seq = commit.seq
        batch = commit.vectors
        if batch is None or not batch.ids:
            continue
        if not len(index) and index.model != batch.model:
            index = VectorIndex(batch.model)
        if batch.model == index.model:
            index.add(batch.ids, batch.matrix)
    episodes = {e["id"]: e for e in store.episodes()}
    episodes.update(graph.episodes)
    return ScopeState(graph.to_document(), list(episodes.values()), index, store.read_summary())


def canonical_bytes(state: ScopeState) -> bytes:
    """The scope as canonical JSON: items sorted by id, keys sorted, vectors hashed.

    Two stores holding the same scope give the same bytes whatever their
    layout (checkpoint vs journal, row order of entities).
    """
    document = state.document

    def by_id(items: Sequence[Doc]) -> list[Doc]:
        return sorted(items, key=lambda item: str(item.get("id")))

    entities = [
        {**e, "observations": by_id(e.get("observations") or [])}
        for e in by_id(document.get("entities") or [])
    ]
    index = state.vectors
    rows = np.ascontiguousarray(index.rows(0, len(index)), dtype="<f4")
    body: dict[str, Any] = {
        "seq": document.get("checkpointSeq"),
        "nextId": document.get("nextId"),
        "memgraph": document.get("memgraph") or {},
        "entities": entities,
        "relations": by_id(document.get("relations") or []),
        "episodes": by_id(state.episodes),
        "summary": state.summary,
        "vectors": {
            "model": index.model if len(index) else None,
            "dim": index.dimension if len(index) else None,
            "ids": index.ids(),
            "sha256": hashlib.sha256(rows.tobytes()).hexdigest(),
        },
    }
    return orjson.dumps(body, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)


def _drop_summary(store: Store) -> None:
    """Remove a replaced scope's summary when the source has none."""
    if isinstance(store, PostgresStore):
        store.delete_summary()
    elif isinstance(store, DirectoryStore):
        store.summary_path.unlink(missing_ok=True)


def _checksum(state: ScopeState) -> str:
    return hashlib.sha256(canonical_bytes(state)).hexdigest()


def migrate(
    source: str,
    destination: str,
    scopes: Sequence[str] | None = None,
    *,
    replace: bool = False,
    lock_timeout: float = LOCK_TIMEOUT,
    progress: Callable[[ScopeReport], None] | None = None,
) -> list[ScopeReport]:
    """Copy ``scopes`` (default: all) from ``source`` to ``destination`` and verify them.

    Args:
        source: a memory directory or a ``postgresql://`` DSN.
        destination: likewise; a directory is created when missing.
        scopes: the scopes to copy; every scope at ``source`` when omitted.
        replace: overwrite destination scopes that already hold data.
        lock_timeout: seconds to wait for each scope's lock on either side.
        progress: called with each scope's report as it is verified.

    Returns:
        One report per scope: counts, the checksum both sides share, the seq.

    Raises:
        NotFound: a named scope does not exist at ``source``.
        StoreConflict: a destination scope holds data and ``replace`` is false,
            or a scope stayed locked by a writer.
        StoreCorrupt: the copy read back differs from the source.
        StoreError: either side could not be read or written.
    """
    if source == destination:
        raise ValueError("--from and --to name the same location; nothing to migrate")
    names = list(scopes) if scopes else location_scopes(source)
    reports = []
    for scope in names:
        report = _migrate_scope(source, destination, validate_scope(scope), replace, lock_timeout)
        reports.append(report)
        if progress is not None:
            progress(report)
    return reports


def install_state(
    target: Store, state: ScopeState, *, replace: bool, where: str, flag: str = "--replace"
) -> None:
    """Make ``state`` the whole content of ``target``; the caller holds its lock.

    Raises:
        StoreConflict: ``target`` holds data and ``replace`` is false (the
            message names ``flag``, the option that allows replacing it).
    """
    target.load()
    if (target.exists() or target.read_summary() is not None) and not replace:
        raise StoreConflict(
            f"scope {target.scope!r} already holds data at {where!r}; pass {flag} to overwrite it"
        )
    target.rewrite(state.document, state.vectors, state.episodes)
    if state.summary is not None:
        target.write_summary(state.summary)
    else:
        _drop_summary(target)


def verify_state(check: Store, state: ScopeState, *, where: str, origin: str) -> str:
    """Read ``check`` (a fresh handle) back and compare it with ``state``; the checksum.

    Raises:
        StoreCorrupt: the counts or the canonical checksum differ.
    """
    expected = _checksum(state)
    try:
        copied = read_scope(check)
    finally:
        check.close()
    if copied.counts() != state.counts() or _checksum(copied) != expected:
        raise StoreCorrupt(
            f"the copy of scope {check.scope!r} at {where!r} differs from {origin}: "
            f"counts {copied.counts()} vs {state.counts()}, checksum {_checksum(copied)[:12]} "
            f"vs {expected[:12]}; {origin} is unchanged",
            path=where,
            position=f"scope {check.scope!r}",
        )
    return expected


def _migrate_scope(
    source: str, destination: str, scope: str, replace: bool, lock_timeout: float
) -> ScopeReport:
    origin = open_location(source, scope)
    target = open_location(destination, scope)
    try:
        with origin.lock(lock_timeout):
            if not origin.exists() and origin.read_summary() is None:
                raise NotFound(f"scope {scope!r} does not exist at {show(source)!r}")
            state = read_scope(origin)
            with target.lock(lock_timeout):
                install_state(target, state, replace=replace, where=show(destination))
    finally:
        origin.close()
        target.close()
    check = open_location(destination, scope)
    checksum = verify_state(check, state, where=show(destination), origin="the source")
    seq = int(state.document.get("checkpointSeq") or 0)
    return ScopeReport(scope, state.counts(), checksum, seq)
