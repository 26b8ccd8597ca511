"""A store that keeps everything in process memory: for tests, REPLs and session-only memory."""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager

import numpy as np

from memgraph.errors import StoreConflict
from memgraph.graph.graph import Graph
from memgraph.retrieval.vectors import VectorIndex
from memgraph.store.base import Commit, Doc, Snapshot, VectorSet

__all__ = ["InMemoryStore"]


class InMemoryStore:
    """A non-persistent store with the same contract as the file store."""

    def __init__(self, scope: str = "default") -> None:
        self.scope = scope
        self._document: Doc | None = None
        self._commits: list[Commit] = []
        self._episodes: dict[str, Doc] = {}
        self._derived: dict[str, bytes] = {}
        self._vectors: VectorSet | None = None
        self._summary: Doc | None = None
        self._lock = threading.Lock()
        self._held = False
        self._generation = 0
        self._seen_generation = 0

    def exists(self) -> bool:
        return self._document is not None or bool(self._commits)

    def _last_seq(self) -> int:
        if self._commits:
            return self._commits[-1].seq
        return int((self._document or {}).get("checkpointSeq") or 0)

    def load(self) -> Snapshot:
        self._seen_generation = self._generation
        return Snapshot(
            document=copy.deepcopy(self._document),
            commits=list(self._commits),
            vectors=self._vectors,
        )

    def changes_since(self, seq: int) -> list[Commit] | None:
        checkpoint_seq = int((self._document or {}).get("checkpointSeq") or 0)
        if (
            self._seen_generation != self._generation
            or not checkpoint_seq <= seq <= self._last_seq()
        ):
            return None  # the commits up to the checkpoint were folded into it: reload
        return [c for c in self._commits if c.seq > seq]

    def lock(self, timeout: float) -> AbstractContextManager[None]:
        @contextmanager
        def hold() -> Iterator[None]:
            if not self._lock.acquire(timeout=timeout):
                raise StoreConflict(f"scope {self.scope!r} is locked by another writer")
            self._held = True
            try:
                yield
            finally:
                self._held = False
                self._lock.release()

        return hold()

    def commit(self, commit: Commit) -> None:
        if not self._held:
            raise StoreConflict(f"write to scope {self.scope!r} without holding its lock")
        if commit.seq != self._last_seq() + 1:
            raise StoreConflict(
                f"scope {self.scope!r} moved on: commit {commit.seq} does not follow "
                f"{self._last_seq()}; reload and retry"
            )
        self._commits.append(commit)

    def checkpoint_due(self) -> bool:
        return False  # nothing to fold for speed in memory; checkpoints are forced

    def checkpoint(
        self,
        graph: Graph,
        vectors: VectorIndex | None,
        episodes: Sequence[Doc],
        *,
        force: bool = False,
    ) -> bool:
        if not force or not self._commits:
            return False
        folded = graph.seq
        if folded != self._last_seq():
            raise StoreConflict(
                f"scope {self.scope!r}: a checkpoint at commit {folded} would drop the commits "
                f"up to {self._last_seq()}; catch up and retry"
            )
        self.rewrite(graph.to_document(), vectors, [*self._episodes.values(), *episodes])
        return True

    def rewrite(self, document: Doc, vectors: VectorIndex | None, episodes: Sequence[Doc]) -> None:
        self._document = copy.deepcopy(document)
        self._commits = []
        if (
            self._episodes
            and list(self._episodes) != [e["id"] for e in episodes][: len(self._episodes)]
        ):
            self._derived.clear()  # episodes were removed or reordered: indexes are stale
        self._episodes = {e["id"]: dict(e) for e in episodes}
        if vectors is not None and len(vectors):
            matrix = np.array(vectors.rows(0, len(vectors)), dtype=np.float32)
            self._vectors = VectorSet(vectors.model or "", vectors.ids(), matrix)
        else:
            self._vectors = None
        self._generation += 1
        self._seen_generation = self._generation

    def episodes(self) -> Iterator[Doc]:
        return iter(list(self._episodes.values()))

    def episodes_after(self, mark: int) -> tuple[list[tuple[int, Doc]], int]:
        docs = list(self._episodes.values())
        if mark > len(docs):
            raise ValueError(f"mark {mark} is past the {len(docs)} stored episodes")
        return [(mark + i, dict(doc)) for i, doc in enumerate(docs[mark:])], len(docs)

    def read_episodes(self, locations: Sequence[int]) -> dict[int, Doc]:
        docs = list(self._episodes.values())
        return {i: dict(docs[i]) for i in locations if 0 <= i < len(docs)}

    def read_derived(self, name: str) -> bytes | None:
        return self._derived.get(name)

    def write_derived(self, name: str, data: bytes) -> None:
        self._derived[name] = bytes(data)

    def write_derived_later(self, name: str, make: Callable[[], bytes]) -> None:
        """:meth:`write_derived` of ``make()``, now."""
        self.write_derived(name, make())

    def read_summary(self) -> Doc | None:
        return copy.deepcopy(self._summary)

    def write_summary(self, summary: Doc) -> None:
        self._summary = copy.deepcopy(summary)

    def close(self) -> None:
        return None
