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

__all__ = ["BUFFERS", "Buffer", "Records", "SavedGraph", "Spans", "as_buffer"]

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


@dataclass
class SavedGraph:
    """A checkpoint's bytes and the index arrays that describe them."""

    data: Buffer | Records
    seq: int
    next_id: int
    extra: dict[str, Any]
    entity_ids: list[str]
    entity_spans: Spans  # (n, 2) byte offsets into data
    names: list[str]  # as written (name_keys are normalized)
    name_keys: list[str]
    type_keys: list[str]
    obs_ids: list[str]
    obs_owner: npt.NDArray[np.int32]  # entity ordinal of each observation
    obs_current: npt.NDArray[np.bool_]
    noted: list[str]
    rel_ids: list[str]
    rel_spans: Spans
    rel_from: list[str]
    rel_to: list[str]
    rel_from_ordinals: npt.NDArray[np.int64]  # -1: an end that names no entity
    rel_to_ordinals: npt.NDArray[np.int64]
    rel_type_keys: list[str]
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
