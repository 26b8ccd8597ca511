"""Stores: where a scope's graph, episodes, vectors and summary persist.

``DirectoryStore`` (plain files, the default) and ``InMemoryStore``
(session-only) implement the :class:`~memgraph.store.base.Store` protocol.
"""

from __future__ import annotations

from memgraph.store.base import Commit, Snapshot, Store, VectorBatch, VectorSet
from memgraph.store.directory import DirectoryStore
from memgraph.store.memory import InMemoryStore

__all__ = [
    "Commit",
    "DirectoryStore",
    "InMemoryStore",
    "Snapshot",
    "Store",
    "VectorBatch",
    "VectorSet",
]
