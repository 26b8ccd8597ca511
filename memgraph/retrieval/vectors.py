"""The per-scope vector index: normalized float32 rows, exact cosine search.

Rows come in two parts: ``base`` (the checkpointed ``vectors.npy``, usually a
read-only memory map) and ``tail`` (rows added since, in a growable array).
Search is one matrix-vector product per part and a top-k by ``argpartition``;
rows of expired or purged observations are masked out.

The base rows may also stay in the store (a :class:`RowSource`, e.g. a
PostgreSQL table): searches through the approximate index then read only the
rows of the lists they visit, and anything that needs every row (an exact
search, training, a rewrite) reads the rest once.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from memgraph.retrieval.ivf import CoarseIndex, dot_rows

__all__ = ["RowSource", "VectorIndex", "normalize_rows"]

Matrix = npt.NDArray[np.float32]
ID_BYTES = 150  # a row's id string, its list entry and its row_of entry


class RowSource(Protocol):
    """Checkpointed rows kept by the store and read on demand."""

    def take(self, rows: npt.NDArray[np.int64]) -> Matrix:
        """The vectors of ``rows`` (ascending row numbers), one per row, in order."""
        ...

    def all(self) -> Matrix:
        """Every row, in row order."""
        ...

    @property
    def resident_bytes(self) -> int:
        """Memory held by the rows read so far."""
        ...


def normalize_rows(matrix: npt.ArrayLike) -> Matrix:
    """Rows scaled to unit length (zero rows stay zero), as C-contiguous float32."""
    array = np.ascontiguousarray(matrix, dtype=np.float32)
    if array.ndim == 1:
        array = array.reshape(1, -1)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(array / norms, dtype=np.float32)


EPISODE_PREFIX = "episode-"
"""Row ids starting with this are episodes (remembered texts); the rest observations."""


class VectorIndex:
    """Vectors of one scope's observations, keyed by observation id."""

    def __init__(
        self,
        model: str | None = None,
        dimension: int | None = None,
        base: Matrix | None = None,
        base_ids: Sequence[str] = (),
        *,
        source: RowSource | None = None,
    ) -> None:
        """``base`` holds the rows of ``base_ids``; with ``source`` it is empty (its
        width the dimension) and every row of ``base_ids`` is read from ``source``."""
        self.model = model
        self.dimension = dimension if base is None else int(base.shape[1])
        width = self.dimension or 0
        self.base: Matrix = base if base is not None else np.zeros((0, width), np.float32)
        self._source = source
        self.base_ids: list[str] = list(base_ids)[: None if source else len(self.base)]
        self._tail: Matrix = np.zeros((0, width), np.float32)
        self.tail_ids: list[str] = []
        self.row_of: dict[str, int] = dict(
            zip(self.base_ids, range(len(self.base_ids)), strict=True)
        )
        # Only the latest row of an id is live (an id repeats when its vector was replaced).
        self._alive = np.zeros(len(self.base_ids), dtype=bool)
        self._alive[np.fromiter(self.row_of.values(), np.intp, len(self.row_of))] = True
        # Rows of episodes (the remembered texts) beside those of observations.
        self._episode = np.fromiter(
            map(str.startswith, self.base_ids, itertools.repeat(EPISODE_PREFIX)),
            bool,
            len(self.base_ids),
        )
        self.coarse: CoarseIndex | None = None  # approximate index over a prefix of the rows

    def __len__(self) -> int:
        return len(self.base_ids) + len(self.tail_ids)

    def __contains__(self, obs_id: object) -> bool:
        return obs_id in self.row_of

    @property
    def tail(self) -> Matrix:
        """Rows added since the last checkpoint."""
        return self._tail[: len(self.tail_ids)]

    def add(self, ids: Sequence[str], matrix: npt.ArrayLike) -> None:
        """Add (or replace) the vectors of ``ids``; rows are normalized here."""
        if not ids:
            return
        rows = normalize_rows(matrix)
        if rows.shape[0] != len(ids):
            raise ValueError(f"{len(ids)} ids but {rows.shape[0]} vectors")
        if self.dimension is None or len(self) == 0:
            self.dimension = int(rows.shape[1])
            if len(self) == 0:
                self.base = np.zeros((0, self.dimension), np.float32)
                self._tail = np.zeros((0, self.dimension), np.float32)
        if rows.shape[1] != self.dimension:
            raise ValueError(f"vectors of dimension {rows.shape[1]}, index has {self.dimension}")
        count = len(self.tail_ids)
        needed = count + len(ids)
        if needed > self._tail.shape[0]:
            size = max(needed, 2 * self._tail.shape[0], 256)
            try:
                # In place when nothing else holds the array: a large block is then
                # remapped by realloc, not copied into fresh memory and touched again.
                self._tail.resize((size, self.dimension), refcheck=True)
            except ValueError:  # a view of it is in use (a search reading it): copy
                grown = np.zeros((size, self.dimension), np.float32)
                grown[:count] = self._tail[:count]
                self._tail = grown
        self._tail[count:needed] = rows
        if len(self._alive) < len(self.base_ids) + needed:
            size = max(len(self.base_ids) + needed, 2 * len(self._alive))
            alive = np.ones(size, dtype=bool)
            alive[: len(self._alive)] = self._alive
            self._alive = alive
        if len(self._episode) < len(self._alive):
            kinds = np.zeros(len(self._alive), dtype=bool)
            kinds[: len(self._episode)] = self._episode
            self._episode = kinds
        first, end = len(self.base_ids) + count, len(self.base_ids) + needed
        row_of = self.row_of
        replaced = [row_of[obs_id] for obs_id in ids if obs_id in row_of]
        row_of.update(zip(ids, range(first, end), strict=True))  # a repeated id: its last row
        if replaced:
            self._alive[replaced] = False
        self._alive[first:end] = True
        superseded = [row for row, obs_id in enumerate(ids, first) if row_of[obs_id] != row]
        if superseded:  # an id given twice in this batch lives on its last row only
            self._alive[superseded] = False
        self._episode[first:end] = [obs_id.startswith(EPISODE_PREFIX) for obs_id in ids]
        self.tail_ids.extend(ids)
        if self.coarse is not None and self.coarse.covered == len(self) - len(ids):
            self.coarse.extend(rows)

    def discard(self, obs_ids: Iterable[str]) -> None:
        """Stop returning these observations (expired or purged)."""
        for obs_id in obs_ids:
            row = self.row_of.get(obs_id)
            if row is not None:
                self._alive[row] = False

    def revive(self, obs_ids: Iterable[str]) -> None:
        for obs_id in obs_ids:
            row = self.row_of.get(obs_id)
            if row is not None:
                self._alive[row] = True

    def search(
        self,
        query: npt.ArrayLike,
        k: int,
        threshold: float = 0.0,
        *,
        mask: npt.NDArray[np.bool_] | None = None,
        max_rows: int | None = None,
        kind: str | None = None,
    ) -> list[tuple[str, float]]:
        """The ``k`` most similar live rows with cosine >= ``threshold``, best first.

        ``kind`` keeps only ``"facts"`` (observations) or ``"episodes"``.

        ``mask`` (one boolean per row) replaces the liveness of rows. With the
        approximate index, ``max_rows`` caps the rows of the nearest lists that
        are scored (whole lists, at least one), so the cost stops growing with
        the index; the default visits about 6% of the rows.
        """
        total = len(self)
        if total == 0 or k <= 0 or self.dimension is None:
            return []
        vector = normalize_rows(query)[0]
        if vector.shape[0] != self.dimension:
            return []
        alive = self._of_kind(self._alive[:total] if mask is None else mask[:total], kind)
        coarse = self.coarse
        if coarse is not None and mask is None and coarse.covered <= total:
            # Approximate: only the rows of the nearest lists (and rows not yet
            # covered), each still scored exactly.
            rows = coarse.candidates(vector, max_rows=max_rows)
            if coarse.covered < total:
                rows = np.concatenate([rows, np.arange(coarse.covered, total, dtype=np.int64)])
            rows = rows[alive[rows]]
            scores = dot_rows(self.gather(rows), vector)
        else:
            self._read_source()
            rows = np.flatnonzero(alive)
            parts = []
            if len(self.base_ids):
                parts.append(dot_rows(self.base[: len(self.base_ids)], vector))
            if self.tail_ids:
                parts.append(dot_rows(self.tail, vector))
            scores = (parts[0] if len(parts) == 1 else np.concatenate(parts))[rows]
        return self._top(rows, scores, k, threshold)

    def search_many(
        self,
        queries: npt.ArrayLike,
        k: int,
        threshold: float = 0.0,
        *,
        max_rows: int | None = None,
        kind: str | None = None,
    ) -> list[list[tuple[str, float]]]:
        """:meth:`search` for each row of ``queries``, in one pass over the vectors.

        Visits the same rows as one :meth:`search` per query would (same hits,
        up to the order of equal scores), but gathers the rows of each list once
        for all the queries that visit it (the bulk-import path).
        """
        matrix = normalize_rows(queries) if np.size(queries) else np.zeros((0, 0), np.float32)
        count = len(matrix)
        total = len(self)
        if count == 0 or total == 0 or k <= 0 or self.dimension is None:
            return [[] for _ in range(count)]
        if matrix.shape[1] != self.dimension:
            return [[] for _ in range(count)]
        alive = self._of_kind(self._alive[:total], kind)
        coarse = self.coarse
        if coarse is None or coarse.covered > total:
            rows = np.flatnonzero(alive)
            results = []
            for start in range(0, count, 64):  # bounded scratch: rows x 64 scores
                block = self._all_scores(matrix[start : start + 64].T)[rows]
                results += [
                    self._top(rows, block[:, j], k, threshold) for j in range(block.shape[1])
                ]
            return results
        lists = coarse.lists()
        visitors: dict[int, list[int]] = {}
        for query, numbers in enumerate(coarse.probes(matrix, max_rows=max_rows)):
            for number in numbers.tolist():
                visitors.setdefault(number, []).append(query)
        row_parts: list[list[npt.NDArray[np.int64]]] = [[] for _ in range(count)]
        score_parts: list[list[npt.NDArray[np.float32]]] = [[] for _ in range(count)]
        for number, visiting in visitors.items():
            rows = lists[number]
            rows = rows[alive[rows]]
            if not len(rows):
                continue
            block = self.gather(rows)
            # One single-threaded product per query (see dot_rows): a BLAS product
            # with a few columns costs 10-100x more when the machine is busy.
            for query in visiting:
                row_parts[query].append(rows)
                score_parts[query].append(dot_rows(block, matrix[query]))
        if coarse.covered < total:  # rows not yet covered are visited by every query
            rows = np.arange(coarse.covered, total, dtype=np.int64)
            rows = rows[alive[rows]]
            block = self.gather(rows) @ matrix.T
            for query in range(count):
                row_parts[query].append(rows)
                score_parts[query].append(block[:, query])
        results = []
        for query in range(count):
            if not row_parts[query]:
                results.append([])
                continue
            rows = np.concatenate(row_parts[query])
            scores = np.concatenate(score_parts[query])
            results.append(self._top(rows, scores, k, threshold))
        return results

    def _of_kind(self, alive: npt.NDArray[np.bool_], kind: str | None) -> npt.NDArray[np.bool_]:
        if kind is None:
            return alive
        episodes: npt.NDArray[np.bool_] = self._episode[: len(alive)]
        if kind == "episodes":
            return np.logical_and(alive, episodes)
        if kind == "facts":
            return np.logical_and(alive, np.logical_not(episodes))
        raise ValueError(f"kind must be 'facts', 'episodes' or None, got {kind!r}")

    def similarities(self, query: npt.ArrayLike, obs_ids: Sequence[str]) -> dict[str, float]:
        """Cosine of ``query`` with each of ``obs_ids`` that has a vector (live or not)."""
        if not obs_ids or self.dimension is None or not len(self):
            return {}
        vector = normalize_rows(query)[0]
        if vector.shape[0] != self.dimension:
            return {}
        found = [
            (obs_id, row) for obs_id in obs_ids if (row := self.row_of.get(obs_id)) is not None
        ]
        if not found:
            return {}
        rows = np.fromiter((row for _, row in found), np.int64, len(found))
        order = np.argsort(rows, kind="stable")
        scores = np.empty(len(found), np.float32)
        scores[order] = dot_rows(self.gather(rows[order]), vector)
        return {
            obs_id: float(score) for (obs_id, _), score in zip(found, scores.tolist(), strict=True)
        }

    def _read_source(self) -> None:
        """Read every base row kept by the store (once; the index holds them from then on)."""
        if self._source is not None:
            self.base = np.ascontiguousarray(self._source.all(), dtype=np.float32)
            self._source = None

    def _all_scores(self, columns: Matrix) -> Matrix:
        """Scores of every row (base then tail) against ``columns`` (dimension x m)."""
        self._read_source()
        parts = []
        if len(self.base_ids):
            parts.append(self.base[: len(self.base_ids)] @ columns)
        if self.tail_ids:
            parts.append(self.tail @ columns)
        if not parts:
            return np.zeros((0, columns.shape[1]), np.float32)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _top(
        self,
        rows: npt.NDArray[np.int64],
        scores: npt.NDArray[np.float32],
        k: int,
        threshold: float,
    ) -> list[tuple[str, float]]:
        """The ``k`` best ``(id, score)`` of ``rows`` with score >= ``threshold``, best first."""
        keep = min(k, len(rows))
        if keep <= 0:
            return []
        best = np.argpartition(-scores, keep - 1)[:keep] if keep < len(rows) else np.arange(keep)
        best = best[np.argsort(-scores[best], kind="stable")]
        ids = self.base_ids
        hits: list[tuple[str, float]] = []
        for row, score in zip(rows[best].tolist(), scores[best].tolist(), strict=True):
            if score < threshold:
                break
            obs_id = ids[row] if row < len(ids) else self.tail_ids[row - len(ids)]
            hits.append((obs_id, float(score)))
        return hits

    def gather(self, rows: npt.NDArray[np.int64]) -> Matrix:
        """The vectors of ``rows`` (ascending row numbers) across base and tail."""
        base_count = len(self.base_ids)
        split = int(np.searchsorted(rows, base_count))
        out = np.empty((len(rows), self.dimension or 0), np.float32)
        # np.take into one buffer: no copy to join the parts, and no memmap
        # subclass overhead (the rows are valid, so "clip" never clips).
        if split and self._source is not None:
            out[:split] = self._source.take(rows[:split])
        elif split:
            base = np.asarray(self.base, dtype=np.float32)
            np.take(base, rows[:split], axis=0, out=out[:split], mode="clip")
        if split < len(rows):
            np.take(self._tail, rows[split:] - base_count, axis=0, out=out[split:], mode="clip")
        return out

    def resident_bytes(self) -> int:
        """A rough estimate of the memory the index holds (for a cache's budget): its
        rows (those read so far, when the store keeps them), ids and list labels."""
        source = self._source
        rows = self.base.nbytes if source is None else source.resident_bytes
        coarse = self.coarse
        lists = 0 if coarse is None else coarse.centroids.nbytes + coarse.labels.nbytes
        return rows + self._tail.nbytes + self._alive.nbytes + len(self.row_of) * ID_BYTES + lists

    def ids(self) -> list[str]:
        """Every row's observation id, in row order."""
        return [*self.base_ids, *self.tail_ids]

    def rows(self, start: int, stop: int) -> Matrix:
        """Rows ``start:stop`` across base and tail."""
        base_count = len(self.base_ids)
        parts = []
        if start < base_count:
            self._read_source()
            parts.append(self.base[start : min(stop, base_count)])
        if stop > base_count:
            parts.append(self.tail[max(start - base_count, 0) : stop - base_count])
        if not parts:
            return np.zeros((0, self.dimension or 0), np.float32)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def live_rows(self) -> tuple[list[str], Matrix]:
        """Ids and rows of every live vector (for a full rewrite), in row order."""
        total = len(self)
        alive = self._alive[:total]
        ids = [*self.base_ids, *self.tail_ids]
        self._read_source()
        matrix = (
            np.concatenate([self.base[: len(self.base_ids)], self.tail]) if total else self.base
        )
        keep = np.flatnonzero(alive)
        return [ids[i] for i in keep.tolist()], np.ascontiguousarray(matrix[keep])

    def mask_for(self, obs_ids: Iterable[str]) -> npt.NDArray[np.bool_]:
        """A row mask selecting the latest row of each of ``obs_ids``."""
        mask = np.zeros(len(self), dtype=bool)
        for obs_id in obs_ids:
            row = self.row_of.get(obs_id)
            if row is not None:
                mask[row] = True
        return mask

    def set_live(self, obs_ids: Iterable[str]) -> None:
        """Make exactly these observations searchable (their latest row each); every
        episode's latest row stays searchable."""
        get = self.row_of.get
        rows = np.array([get(obs_id, -1) for obs_id in obs_ids], dtype=np.intp)
        total = len(self)
        episodes = self._episode[:total] & self._alive[:total]
        self._alive[:] = False
        self._alive[rows[rows >= 0]] = True
        self._alive[:total] |= episodes
