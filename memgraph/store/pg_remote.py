"""What a lazily opened PostgreSQL scope reads on demand: checkpoint records and vector rows.

Opening a scope reads its compact index (``graph.idx``'s bytes, the vector
ids, the approximate index) and leaves the rest in the database:

* :class:`RemoteImage` stands for the checkpoint's ``graph.json`` bytes (the
  ``images.document`` column, stored uncompressed so that the server reads
  only the chunks a slice covers). A lazy graph reads a record's byte span the
  first time it parses it; reads that walk the image in order are served
  from a growing read-ahead window, so parsing everything costs a few large
  reads rather than one per record.
* :class:`RemoteRows` stands for the checkpointed vector rows: a search reads
  the rows of the lists it visits (and keeps them), an exact search or a
  rewrite reads all of them once.

A scope in active use ends up with both in memory: after
:data:`WHOLE_AFTER_READS` reads of records, or once a quarter of the vector
rows were read, the rest is read in one pass. A scope opened for a call or
two reads only what those calls needed.

Both only read: they are handed functions of the store that fetch bytes of
one checkpoint generation (or one vector generation) and fail with
``StoreConflict`` if that is gone.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["READ_AHEAD_MAX", "RemoteImage", "RemoteRows"]

READ_AHEAD_MIN = 64 << 10
READ_AHEAD_MAX = 8 << 20
"""The largest read-ahead window of a sequential walk over an image (bytes)."""
WHOLE_AFTER_READS = 16
"""Reads of an image's records after which the rest of it is read at once: a scope in
active use ends up with its image in memory (as a memory-mapped graph.json ends up in
the page cache), one opened for a call or two reads only what it needed."""
WHOLE_AFTER_SHARE = 0.25
"""Share of a scope's vector rows read after which the rest are read at once."""

Matrix = npt.NDArray[np.float32]
Spans = Sequence[tuple[int, int]]


class RemoteImage:
    """A checkpoint's bytes, read from the store span by span (see the module docstring).

    Args:
        fetch: reads the bytes of each ``(start, stop)`` span, in order.
        size: the image's length in bytes.
    """

    def __init__(self, fetch: Callable[[Spans], list[bytes]], size: int) -> None:
        self._fetch = fetch
        self._size = size
        self._window = b""
        self._window_start = 0
        self._ahead = 0  # the next read-ahead, while reads go forward in order
        self._last_stop = -1
        self._whole: bytes | None = None  # every byte, once a scope in use read enough
        self._lock = threading.Lock()
        self.reads = 0  # round trips to the store, for tests and profiles

    def __len__(self) -> int:
        return self._size

    @property
    def resident_bytes(self) -> int:
        """Bytes of the image held in memory."""
        return len(self._whole) if self._whole is not None else len(self._window)

    def __getitem__(self, span: slice, /) -> bytes:
        start, stop, step = span.indices(self._size)
        if step != 1:
            raise ValueError("a checkpoint image is read in contiguous spans")
        if stop <= start:
            return b""
        with self._lock:
            if self._whole is not None or self.reads >= WHOLE_AFTER_READS:
                return self._read([(start, stop)])[0]
            window, first = self._window, self._window_start
            if first <= start and stop <= first + len(window):
                self._last_stop = stop
                return window[start - first : stop - first]
            # A record right after the last one (records are separated by a comma):
            # a walk in order; read ahead, doubling the window each time.
            if 0 <= start - self._last_stop <= 2:
                self._ahead = min(max(2 * self._ahead, READ_AHEAD_MIN), READ_AHEAD_MAX)
            else:
                self._ahead = 0
            end = min(max(stop, start + self._ahead), self._size)
            [data] = self._read([(start, end)])
            if end > stop:
                self._window, self._window_start = data, start
            self._last_stop = stop
            return data[: stop - start]

    def read_many(self, spans: Spans) -> list[bytes]:
        """The bytes of each span, fetched together (one round trip)."""
        if not spans:
            return []
        with self._lock:
            return self._read([(int(a), int(b)) for a, b in spans])

    def _read(self, spans: Spans) -> list[bytes]:
        if self._whole is None and self.reads >= WHOLE_AFTER_READS:
            self.reads += 1
            [self._whole] = self._fetch([(0, self._size)])
            self._window = b""
        whole = self._whole
        if whole is not None:
            return [whole[start:stop] for start, stop in spans]
        self.reads += 1
        found = self._fetch(spans)
        if len(found) != len(spans) or any(
            len(data) != stop - start for data, (start, stop) in zip(found, spans, strict=False)
        ):
            raise ValueError("the image returned fewer bytes than its spans cover")
        return found


class RemoteRows:
    """Checkpointed vector rows, read from the store as searches need them.

    Rows read once are kept (packed in the order they arrived) until the
    handle is closed or the rows are replaced; :meth:`all` reads the missing
    ones in one pass. Implements :class:`~memgraph.retrieval.vectors.RowSource`.

    Args:
        fetch: reads the vectors of some row numbers; returns the row numbers
            found (in any order) and their vectors.
        fetch_all: reads rows ``0..count`` in order.
        count: how many rows the store holds.
        dim: the vectors' width.
        generation: which stored rows these are (the store's replacement counter).
    """

    def __init__(
        self,
        fetch: Callable[[npt.NDArray[np.int64]], tuple[npt.NDArray[np.int64], Matrix]],
        fetch_all: Callable[[int], Matrix],
        count: int,
        dim: int,
        *,
        generation: int = 0,
    ) -> None:
        self._fetch = fetch
        self._fetch_all = fetch_all
        self.dim = dim
        self.generation = generation
        self._slot = np.full(count, -1, dtype=np.int64)
        self._packed: Matrix = np.zeros((0, dim), np.float32)
        self._used = 0
        self._lock = threading.Lock()
        self.reads = 0

    @property
    def count(self) -> int:
        return len(self._slot)

    @property
    def held(self) -> int:
        """How many rows were read so far."""
        return self._used

    @property
    def resident_bytes(self) -> int:
        """Bytes of the rows read so far (the packed buffer and the row map)."""
        return int(self._packed.nbytes + self._slot.nbytes)

    def extend(self, count: int) -> None:
        """The store now holds ``count`` rows (a checkpoint appended some)."""
        with self._lock:
            if count > len(self._slot):
                more = np.full(count - len(self._slot), -1, dtype=np.int64)
                self._slot = np.concatenate([self._slot, more])

    def take(self, rows: npt.NDArray[np.int64]) -> Matrix:
        with self._lock:
            missing = np.unique(rows[self._slot[rows] < 0])
            if len(missing) and self._used + len(missing) >= WHOLE_AFTER_SHARE * len(self._slot):
                self._read_all()  # a scope in use: the rest at once, as one pass
                return self._packed[self._slot[rows]]
            if len(missing):
                self.reads += 1
                found, matrix = self._fetch(missing)
                if len(found) != len(missing):
                    raise ValueError("the store returned fewer vector rows than asked for")
                self._append(found, matrix)
            return self._packed[self._slot[rows]]

    def all(self) -> Matrix:
        with self._lock:
            return self._read_all()

    def _read_all(self) -> Matrix:
        count = len(self._slot)
        if count and bool((self._slot >= 0).all()):
            if not (self._used == count and bool((self._slot == np.arange(count)).all())):
                # Every row is here, out of order: keep one copy, in row order.
                self._packed, self._used = self._packed[self._slot], count
                self._slot = np.arange(count, dtype=np.int64)
            return self._packed[:count]
        self.reads += 1
        matrix = np.ascontiguousarray(self._fetch_all(count), dtype=np.float32)
        if matrix.shape != (count, self.dim):
            raise ValueError("the store returned fewer vector rows than it holds")
        self._packed, self._used = matrix, count
        self._slot = np.arange(count, dtype=np.int64)
        return matrix

    def _append(self, rows: npt.NDArray[np.int64], matrix: Matrix) -> None:
        needed = self._used + len(rows)
        if needed > len(self._packed):
            spare = min(max(len(self._packed) * 3 // 2, 256), len(self._slot))
            grown = np.empty((max(needed, spare), self.dim), np.float32)
            grown[: self._used] = self._packed[: self._used]
            self._packed = grown
        self._packed[self._used : needed] = matrix
        self._slot[rows] = np.arange(self._used, needed, dtype=np.int64)
        self._used = needed
