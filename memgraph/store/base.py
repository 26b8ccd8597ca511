"""The store seam: what every per-scope store persists, and how.

A store keeps one scope: a checkpointed graph document, the commits made since
the checkpoint (each a list of graph ops plus the vectors of new
observations), the episodes, the vectors, and the conversation summary. The
engine owns the in-memory graph; the store only persists and replays.

Every store must pass ``tests/test_store_contract.py``.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from memgraph.graph.graph import Graph
from memgraph.retrieval.ivf import CoarseIndex

if TYPE_CHECKING:
    from memgraph.graph.saved import SavedGraph
    from memgraph.retrieval.vectors import RowSource, VectorIndex

__all__ = ["Commit", "Snapshot", "Store", "VectorBatch", "VectorSet", "journal_outgrew"]

Doc = dict[str, Any]


@dataclass(frozen=True)
class VectorBatch:
    """Vectors for some observation ids, in one embedding model's space."""

    model: str
    ids: tuple[str, ...]
    matrix: npt.NDArray[np.float32]

    def to_record(self) -> Doc:
        data = np.ascontiguousarray(self.matrix, dtype="<f4").tobytes()
        return {
            "model": self.model,
            "dim": int(self.matrix.shape[1]) if self.matrix.ndim == 2 else 0,
            "ids": list(self.ids),
            "b64": base64.b64encode(data).decode("ascii"),
        }

    @classmethod
    def from_record(cls, record: Doc) -> VectorBatch:
        raw = base64.b64decode(record["b64"])
        dim = int(record["dim"])
        matrix = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        ids = tuple(record["ids"])
        return cls(record["model"], ids, matrix.reshape(len(ids), dim) if dim else matrix)


@dataclass(frozen=True)
class Commit:
    """One atomic change of a scope: ops applied in order, then ``next_id`` set."""

    seq: int
    at: str
    next_id: int
    ops: Sequence[Doc]
    vectors: VectorBatch | None = None

    def to_record(self) -> Doc:
        record: Doc = {"seq": self.seq, "at": self.at, "nextId": self.next_id, "ops": self.ops}
        if self.vectors is not None and len(self.vectors.ids):
            record["vectors"] = self.vectors.to_record()
        return record

    @classmethod
    def from_record(cls, record: Doc) -> Commit:
        vectors = record.get("vectors")
        return cls(
            seq=int(record["seq"]),
            at=record["at"],
            next_id=int(record["nextId"]),
            ops=record["ops"],
            vectors=VectorBatch.from_record(vectors) if vectors else None,
        )


@dataclass(frozen=True)
class VectorSet:
    """The checkpointed vectors of a scope (often a read-only memory map).

    With ``source`` the rows stay in the store and are read on demand:
    ``matrix`` is then empty (zero rows, the vectors' width) and
    :meth:`all_rows` reads every row.
    """

    model: str
    ids: Sequence[str]
    matrix: npt.NDArray[np.float32]
    coarse: CoarseIndex | None = None
    source: RowSource | None = None

    def all_rows(self) -> npt.NDArray[np.float32]:
        """Every row, in order (read from the store when it keeps them)."""
        return self.matrix if self.source is None else self.source.all()


class Snapshot:
    """Everything needed to rebuild a scope in memory.

    The checkpoint is either a parsed ``document`` or, from the directory store,
    a ``saved`` checkpoint that :meth:`graph` opens lazily (reading
    :attr:`document` of such a snapshot parses it in full).
    """

    def __init__(
        self,
        document: Doc | None = None,
        commits: list[Commit] | None = None,
        vectors: VectorSet | None = None,
        saved: SavedGraph | None = None,
    ) -> None:
        self._document = document
        self.commits: list[Commit] = commits if commits is not None else []
        self.vectors = vectors
        self.saved = saved

    @property
    def document(self) -> Doc | None:
        """The checkpoint as a ``graph.json`` document (None when there is none)."""
        if self._document is None and self.saved is not None:
            self._document = self.graph().to_document()
        return self._document

    @document.setter
    def document(self, value: Doc | None) -> None:
        self._document = value

    def graph(self) -> Graph:
        """The checkpoint as a graph (commits not applied)."""
        if self.saved is not None:
            return Graph.from_saved(self.saved)
        return Graph.from_document(self._document or {})


def journal_outgrew(
    journal_bytes: int, checkpoint_bytes: int, *, minimum: int, ratio: float
) -> bool:
    """The checkpoint rule every store shares: fold the journal once it exceeds
    ``max(minimum, ratio * checkpoint_bytes)``, so a checkpoint's cost (which
    grows with the scope) is paid once per proportional amount of writing."""
    return journal_bytes > 0 and journal_bytes > max(minimum, ratio * checkpoint_bytes)


@runtime_checkable
class Store(Protocol):
    """Persistence for one scope. Writers hold :meth:`lock` around :meth:`commit`."""

    scope: str

    def exists(self) -> bool:
        """True once anything has been written for this scope."""
        ...

    def load(self) -> Snapshot:
        """The checkpoint plus every commit after it, in order."""
        ...

    def changes_since(self, seq: int) -> list[Commit] | None:
        """Commits after ``seq``; ``None`` when a reload is needed (a new checkpoint)."""
        ...

    def lock(self, timeout: float) -> AbstractContextManager[None]:
        """Hold the scope's single-writer lock (raises StoreConflict on timeout)."""
        ...

    def commit(self, commit: Commit) -> None:
        """Durably append ``commit``; its seq must follow the last stored one."""
        ...

    def checkpoint_due(self) -> bool:
        """Whether :meth:`checkpoint` would fold the journal now (cheap to ask)."""
        ...

    def checkpoint(
        self,
        graph: Graph,
        vectors: VectorIndex | None,
        episodes: Sequence[Doc],
        *,
        force: bool = False,
    ) -> bool:
        """Fold the commits into a new checkpoint when due (or forced); True if written.

        ``graph`` is the whole graph (its ``seq`` the last folded commit),
        ``episodes`` the episodes added since the last checkpoint.
        """
        ...

    def episodes(self) -> Iterator[Doc]:
        """Every checkpointed episode record."""
        ...

    def episodes_after(self, mark: int) -> tuple[list[tuple[int, Doc]], int]:
        """Checkpointed episodes stored after ``mark``, each with its location, and
        the mark of the end. ``mark`` 0 is the beginning; a mark past the end (the
        episodes were rewritten) raises ``ValueError``."""
        ...

    def read_episodes(self, locations: Sequence[int]) -> dict[int, Doc]:
        """The episodes at these locations (as :meth:`episodes_after` gave them)."""
        ...

    def read_derived(self, name: str) -> bytes | None:
        """A derived file kept with the scope (an index), or ``None``."""
        ...

    def write_derived(self, name: str, data: bytes) -> None:
        """Replace a derived file atomically (readers see the old or the new one)."""
        ...

    def write_derived_later(self, name: str, make: Callable[[], bytes]) -> None:
        """:meth:`write_derived` of ``make()``, possibly in the background (``make``
        then runs in another thread); later reads of derived data see it. A store
        that writes in the background logs a failure instead of raising it."""
        ...

    def read_summary(self) -> Doc | None: ...

    def write_summary(self, summary: Doc) -> None: ...

    def rewrite(self, document: Doc, vectors: VectorIndex | None, episodes: Sequence[Doc]) -> None:
        """Replace everything stored with exactly this state (hard delete)."""
        ...

    def close(self) -> None: ...
