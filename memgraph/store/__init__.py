"""Stores: where a scope's graph, episodes, vectors and summary persist.

``DirectoryStore`` (plain files, the default), ``InMemoryStore``
(session-only) and ``PostgresStore`` (a PostgreSQL database shared by many
app servers) implement the :class:`~memgraph.store.base.Store` protocol.

Only the store touches disk or a database. May import: the foundation,
``memgraph.graph`` (what is saved) and ``memgraph.retrieval`` (the vectors and
the approximate index it persists). Never the model calls, the faces, the engine
or anything above.
"""

from __future__ import annotations

from pathlib import Path

from memgraph.errors import ConfigError
from memgraph.store.base import Commit, Snapshot, Store, VectorBatch, VectorSet
from memgraph.store.directory import DirectoryStore
from memgraph.store.memory import InMemoryStore
from memgraph.store.pg_schema import is_dsn, mask_dsn
from memgraph.store.postgres import PostgresStore


def open_store(kind: str, root: Path, scope: str) -> Store:
    """The store a ``memory.store`` setting names, for one scope.

    ``"files"`` (the default) keeps plain files under ``root / scope``;
    ``"memory"`` keeps everything in this process only; a
    ``postgresql://`` (or ``postgres://``) DSN keeps the scope in that
    PostgreSQL database, shared by every process that names it.

    Raises:
        ConfigError: the setting names no known store.
        StoreUnavailable: a DSN was given but psycopg is not installed.
    """
    if kind == "files":
        return DirectoryStore(root, scope)
    if kind == "memory":
        return InMemoryStore(scope)
    if is_dsn(kind):
        return PostgresStore(kind, scope)
    shown = mask_dsn(kind) if "://" in kind or "=" in kind else kind
    raise ConfigError(
        f"unknown memory.store {shown!r}; use 'files', 'memory' or a PostgreSQL DSN "
        "such as 'postgresql://user@host/db'"
    )


__all__ = [
    "Commit",
    "DirectoryStore",
    "InMemoryStore",
    "PostgresStore",
    "Snapshot",
    "Store",
    "VectorBatch",
    "VectorSet",
    "open_store",
]
