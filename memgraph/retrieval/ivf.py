"""An inverted-file (IVF) coarse index: approximate vector search in plain numpy.

Exact search reads every vector (about 16 ms for 100k × 384 float32 on two
cores, bound by memory bandwidth). The IVF index clusters the rows with
k-means (about √n lists) and a query only scores the rows of the lists whose
centroids are nearest to it, then ranks those rows by their exact cosine.
Training is seeded, so the same rows always give the same index.

The index covers a prefix of the rows (``covered``); rows added later are
assigned to their nearest list as they come, and the index is retrained when
it covers less than half of the rows it would be trained on.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = [
    "IVF_MIN_ROWS",
    "SINGLE_THREAD_ROWS",
    "SMALL_PRODUCT",
    "CoarseIndex",
    "dot_block",
    "dot_rows",
]

IVF_MIN_ROWS = 20_000
"""Below this many rows exact search is fast enough and no index is built."""

Matrix = npt.NDArray[np.float32]


_VECDOT = getattr(np, "vecdot", None)  # numpy >= 2.0


def dot_rows(rows: Matrix, vector: Matrix) -> Matrix:
    """``rows @ vector`` (one score per row) without a multi-threaded BLAS call.

    A matrix-vector product of a few hundred rows or more is split across
    threads by OpenBLAS, which saves nothing for a memory-bound product and,
    when the other cores are busy, waits for its threads to be scheduled: on
    a loaded two-core machine a 316 x 384 product took 100x longer.
    ``np.vecdot`` (``einsum`` before numpy 2) stays on the calling thread.
    """
    if _VECDOT is not None:
        return np.asarray(_VECDOT(rows, vector), dtype=np.float32)
    return np.asarray(np.einsum("ij,j->i", rows, vector), dtype=np.float32)


SINGLE_THREAD_ROWS = 4096
"""Products with at most this many rows (a bulk chunk's new rows, a window's queries)
stay on the calling thread (:func:`dot_block`); larger ones (training) use BLAS."""


SMALL_PRODUCT = 65_536 * 4
"""OpenBLAS computes a matrix product of at most this many multiply-adds (m·n·k) on
the calling thread (``SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD``)."""


def dot_block(rows: Matrix, others: Matrix) -> Matrix:
    """``rows @ others.T`` without a multi-threaded BLAS call (see :func:`dot_rows`).

    A BLAS matrix product splits across threads, which then spin-wait for the next
    call for a while: on the bulk path (a product per window and per chunk) that
    kept a second core busy doing nothing (~40% of the process's CPU time), taking
    it from whatever else runs on the machine. The product is computed in square
    tiles small enough for BLAS to keep each on the calling thread (one stacked
    ``matmul``): ~4 ms for 1,500 x 387 x 384, where row-by-row dot products
    (``np.vecdot``) take ~14 ms.
    """
    left = np.asarray(rows, dtype=np.float32)
    right = np.asarray(others, dtype=np.float32)
    count, dim = left.shape
    width = len(right)
    if not count or not width or not dim:
        return np.zeros((count, width), dtype=np.float32)
    tile = max(1, math.isqrt(SMALL_PRODUCT // dim))
    tall, wide = -(-count // tile) * tile, -(-width // tile) * tile
    padded_left = np.zeros((tall, dim), dtype=np.float32)
    padded_left[:count] = left
    padded_right = np.zeros((wide, dim), dtype=np.float32)
    padded_right[:width] = right
    tiles = np.matmul(
        padded_left.reshape(tall // tile, 1, tile, dim),
        padded_right.reshape(wide // tile, tile, dim).transpose(0, 2, 1)[None],
    )  # (row tiles, column tiles, tile, tile)
    product = tiles.transpose(0, 2, 1, 3).reshape(tall, wide)[:count, :width]
    return np.ascontiguousarray(product)


def _nearest(rows: Matrix, centroids: Matrix, chunk: int = 8192) -> npt.NDArray[np.int32]:
    if len(rows) <= SINGLE_THREAD_ROWS:  # a write's rows: single-threaded (see dot_block)
        scores = dot_block(rows, centroids)
        return np.asarray(np.argmax(scores, axis=1), dtype=np.int32).reshape(-1)
    labels = np.empty(len(rows), dtype=np.int32)
    for start in range(0, len(rows), chunk):
        block = np.asarray(rows[start : start + chunk], dtype=np.float32)
        labels[start : start + len(block)] = np.argmax(block @ centroids.T, axis=1)
    return labels


class CoarseIndex:
    """k-means centroids and, per list, the rows assigned to it."""

    def __init__(self, centroids: Matrix, labels: npt.ArrayLike) -> None:
        self.centroids = centroids
        # Labels live in a buffer with spare room, so extending by a few rows per
        # write does not copy every label.
        self._labels: npt.NDArray[np.int32] = np.array(labels, dtype=np.int32).reshape(-1)
        self._count = len(self._labels)
        self._lists: list[npt.NDArray[np.int64]] | None = None
        self._sizes: npt.NDArray[np.int64] | None = None

    def __repr__(self) -> str:
        return f"CoarseIndex(lists={len(self.centroids)}, covered={self.covered})"

    @property
    def labels(self) -> npt.NDArray[np.int32]:
        """One list number per covered row."""
        return self._labels[: self._count]

    @property
    def covered(self) -> int:
        """How many leading rows the index covers."""
        return self._count

    @classmethod
    def train(cls, rows: Matrix, *, seed: int = 0, iterations: int = 8) -> CoarseIndex:
        """Cluster ``rows`` (unit vectors) into about √n lists with spherical k-means."""
        count = len(rows)
        lists = max(1, int(math.sqrt(count)))
        rng = np.random.default_rng(seed)
        sample_size = min(count, max(lists * 40, 10_000))
        sample = np.asarray(rows[np.sort(rng.choice(count, sample_size, replace=False))])
        centroids = sample[rng.choice(sample_size, lists, replace=False)].copy()
        for _ in range(iterations):
            labels = _nearest(sample, centroids)
            sums = np.zeros_like(centroids)
            np.add.at(sums, labels, sample)
            sizes = np.bincount(labels, minlength=lists)
            empty = sizes == 0
            sums[empty] = sample[rng.choice(sample_size, int(empty.sum()), replace=False)]
            norms = np.linalg.norm(sums, axis=1, keepdims=True)
            norms[norms == 0] = 1.0
            centroids = (sums / norms).astype(np.float32)
        return cls(np.ascontiguousarray(centroids), _nearest(rows, centroids))

    def extend(self, rows: Matrix) -> None:
        """Assign ``rows`` (the next rows after :attr:`covered`) to their nearest lists."""
        if not len(rows):
            return
        start = self._count
        labels = _nearest(rows, self.centroids)
        needed = start + len(labels)
        if needed > len(self._labels):
            grown = np.empty(max(needed, 2 * len(self._labels), 1024), dtype=np.int32)
            grown[:start] = self._labels[:start]
            self._labels = grown
        self._labels[start:needed] = labels
        self._count = needed
        if self._lists is not None:  # keep the lists instead of re-sorting every label
            assert self._sizes is not None
            order = np.argsort(labels, kind="stable")  # the new rows of a list, ascending
            grouped = labels[order]
            bounds = np.flatnonzero(np.diff(grouped)) + 1
            for part in np.split(order, bounds):
                label = int(labels[part[0]])
                self._lists[label] = np.concatenate([self._lists[label], start + part])
                self._sizes[label] += len(part)

    def lists(self) -> list[npt.NDArray[np.int64]]:
        """Row numbers of each list, ascending."""
        if self._lists is None:
            labels = self.labels
            order = np.argsort(labels, kind="stable")
            bounds = np.searchsorted(labels[order], np.arange(len(self.centroids) + 1))
            self._lists = [order[bounds[i] : bounds[i + 1]] for i in range(len(self.centroids))]
            self._sizes = np.diff(bounds).astype(np.int64)
        return self._lists

    def probes(
        self, queries: Matrix, fraction: float = 0.06, max_rows: int | None = None
    ) -> list[npt.NDArray[np.intp]]:
        """For each query row, the lists to visit, nearest first.

        The nearest lists until they hold ``fraction`` of the covered rows; with
        ``max_rows`` under that, the nearest lists that together hold at most
        ``max_rows`` rows (always at least the nearest list).
        """
        self.lists()
        sizes = self._sizes
        assert sizes is not None
        wanted = max(1, int(self.covered * fraction))
        cap = max_rows if max_rows is not None and max_rows < wanted else None
        queries = np.atleast_2d(queries)
        if len(queries) == 1:
            closeness = dot_rows(self.centroids, queries[0])[None, :]
        elif len(queries) <= SINGLE_THREAD_ROWS:  # a bulk window's queries (see dot_block)
            closeness = dot_block(queries, self.centroids)
        else:
            closeness = queries @ self.centroids.T
        nearest = min(len(sizes), 32)  # enough lists for ``wanted`` unless they are tiny
        # Every query's nearest lists in one call each (row by row, as one query alone).
        tops = np.argpartition(-closeness, nearest - 1, axis=1)[:, :nearest]
        ranks = np.argsort(-np.take_along_axis(closeness, tops, axis=1), axis=1)
        tops = np.take_along_axis(tops, ranks, axis=1)
        target = wanted if cap is None else cap
        held = np.cumsum(sizes[tops], axis=1)
        if cap is None:  # the first lists whose rows reach ``wanted``
            counts = np.minimum((held < wanted).sum(axis=1) + 1, nearest)
        else:  # the first lists whose rows stay within ``cap``
            counts = np.maximum((held <= cap).sum(axis=1), 1)
        short = (held[:, -1] < target) & (nearest < len(sizes))
        chosen = []
        for query, (order, count) in enumerate(zip(tops, counts.tolist(), strict=True)):
            if short[query]:  # the nearest lists are too small: rank them all
                order = np.argsort(-closeness[query])
                ranked = np.cumsum(sizes[order])
                if cap is None:
                    count = min(int(np.searchsorted(ranked, wanted)) + 1, len(order))
                else:
                    count = max(1, int(np.searchsorted(ranked, cap, side="right")))
            first = order[:count]
            chosen.append(first[sizes[first] > 0])  # empty lists add nothing
        return chosen

    def candidates(
        self, query: Matrix, fraction: float = 0.06, max_rows: int | None = None
    ) -> npt.NDArray[np.int64]:
        """Rows in the lists nearest to ``query`` (see :meth:`probes`), ascending."""
        lists = self.lists()
        chosen = [lists[int(number)] for number in self.probes(query, fraction, max_rows)[0]]
        return np.sort(np.concatenate(chosen)) if chosen else np.zeros(0, dtype=np.int64)
