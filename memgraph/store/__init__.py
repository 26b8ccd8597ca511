"""Stores: where a scope's graph, episodes, vectors and summary persist.

``DirectoryStore`` (plain files, the default) and ``InMemoryStore``
(session-only) implement the :class:`~memgraph.store.base.Store` protocol.
"""

from __future__ import annotations

from pathlib import Path

from memgraph.errors import ConfigError
from memgraph.store.base import Commit, Snapshot, Store, VectorBatch, VectorSet
from memgraph.store.directory import DirectoryStore
from memgraph.store.memory import InMemoryStore


def open_store(kind: str, root: Path, scope: str) -> Store:
    """The store a ``memory.store`` setting names, for one scope.

    ``"files"`` (the default) keeps plain files under ``root / scope``;
    ``"memory"`` keeps everything in this process only.

    Raises:
        ConfigError: the setting names no known store.
    """
    if kind == "files":
        return DirectoryStore(root, scope)
    if kind == "memory":
        return InMemoryStore(scope)
    raise ConfigError(f"unknown memory.store {kind!r}; use 'files' or 'memory'")


__all__ = [
    "Commit",
    "DirectoryStore",
    "InMemoryStore",
    "Snapshot",
    "Store",
    "VectorBatch",
    "VectorSet",
    "open_store",
]
