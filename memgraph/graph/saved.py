"""A checkpoint as the in-memory graph reads it: ``graph.json``'s bytes and the index arrays.

A lazy :class:`~memgraph.graph.graph.Graph` decodes its records from a
:class:`SavedGraph`; :mod:`memgraph.graph.snapshot` writes checkpoints and reads
``graph.idx`` into one. This module sits below both, so the graph never imports
the snapshot code.
"""

from __future__ import annotations

import mmap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from memgraph.graph.lazy import Postings
from memgraph.id_column import IdColumn, StringSequence

__all__ = [
    "BUFFERS",
    "Buffer",
    "Records",
    "RelationEnds",
    "SavedGraph",
    "Spans",
    "StringColumn",
    "as_buffer",
]

Buffer = bytes | bytearray | memoryview | mmap.mmap
BUFFERS = (bytes, bytearray, memoryview, mmap.mmap)
Spans = npt.NDArray[np.int64]


class Records(Protocol):
    """A checkpoint's bytes kept elsewhere and read on demand (the PostgreSQL store's
    image): its length, and the bytes of a span. A graph over it reads a record's
    bytes when the record is first parsed."""

    def __len__(self) -> int: ...

    def __getitem__(self, span: slice, /) -> bytes: ...

    def read_many(self, spans: Sequence[tuple[int, int]], /) -> list[bytes]:
        """The bytes of each ``(start, stop)`` span, read together."""
        ...

    @property
    def resident_bytes(self) -> int:
        """Bytes of the checkpoint held in memory so far."""
        ...


def as_buffer(data: Buffer | Records) -> Buffer:
    """``data`` as a buffer: read whole when it is kept elsewhere."""
    return data if isinstance(data, BUFFERS) else data[0 : len(data)]


class StringColumn(StringSequence):
    """NUL-separated UTF-8 strings (a table of ``graph.idx``), each decoded when read:
    opening a scope does not make a string per entity name or type."""

    __slots__ = ("_data", "_ends", "_starts")

    def __init__(self, data: bytes) -> None:
        self._data = data
        if not data:
            self._starts = self._ends = np.zeros(0, np.int64)
            return
        separators = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 0)
        self._starts = np.concatenate([np.zeros(1, np.int64), separators + 1])
        self._ends = np.concatenate([separators, np.array([len(data)], np.int64)])

    def __len__(self) -> int:
        return len(self._starts)

    def _item(self, index: int) -> str:
        return self._data[int(self._starts[index]) : int(self._ends[index])].decode()

    def tolist(self) -> list[str]:
        return self._data.decode().split("\x00") if self._data else []


class RelationEnds(StringSequence):
    """The ``from`` (``side`` 0) or ``to`` (1) entity id of every saved relation, read
    from the relations' entity ordinals when asked (a relation whose end names no
    entity is in ``dangling``: relation ordinal -> ``[from, to]``)."""

    __slots__ = ("_dangling", "_entity_ids", "_ordinals", "_side")

    def __init__(
        self,
        ordinals: npt.NDArray[np.int64],
        entity_ids: Sequence[str],
        dangling: dict[str, list[str]],
        side: int,
    ) -> None:
        self._ordinals, self._entity_ids = ordinals, entity_ids
        self._dangling, self._side = dangling, side

    def __len__(self) -> int:
        return len(self._ordinals)

    def _item(self, index: int) -> str:
        ordinal = int(self._ordinals[index])
        if ordinal >= 0:
            return self._entity_ids[ordinal]
        return self._dangling[str(index)][self._side]

    def tolist(self) -> list[str]:
        ids = self._entity_ids
        if isinstance(ids, IdColumn) and bool((self._ordinals >= 0).all()):
            return ids.take(self._ordinals).tolist()
        ends = [ids[o] if o >= 0 else "" for o in self._ordinals.tolist()]
        for position, pair in self._dangling.items():
            ends[int(position)] = pair[self._side]
        return ends


@dataclass
class SavedGraph:
    """A checkpoint's bytes and the index arrays that describe them."""

    data: Buffer | Records
    seq: int
    next_id: int
    extra: dict[str, Any]
    entity_ids: Sequence[str]
    entity_spans: Spans  # (n, 2) byte offsets into data
    names: Sequence[str]  # as written (name_keys are normalized)
    name_keys: Sequence[str]
    type_keys: Sequence[str]
    obs_ids: Sequence[str]
    obs_owner: npt.NDArray[np.int32]  # entity ordinal of each observation
    obs_current: npt.NDArray[np.bool_]
    noted: Sequence[str]
    rel_ids: Sequence[str]
    rel_spans: Spans
    rel_from: Sequence[str]
    rel_to: Sequence[str]
    rel_from_ordinals: npt.NDArray[np.int64]  # -1: an end that names no entity
    rel_to_ordinals: npt.NDArray[np.int64]
    rel_type_keys: Sequence[str]
    rel_current: npt.NDArray[np.bool_]
    terms: Postings  # index term -> ordinals of current observations
    name_terms: Postings  # name term -> entity ordinals
    dangling: dict[str, list[str]] = field(default_factory=dict)  # rel ordinal -> [from, to]
    path: str = "graph.json"
    checksummed: bool = False  # every record carries a checksum (graph.json's tail says so)
    tail: dict[str, Any] | None = None  # graph.json's closing line, when it has one

    def entity_span(self, ordinal: int) -> tuple[int, int]:
        start, stop = self.entity_spans[ordinal].tolist()
        return start, stop

    def rel_span(self, ordinal: int) -> tuple[int, int]:
        start, stop = self.rel_spans[ordinal].tolist()
        return start, stop
