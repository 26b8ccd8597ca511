"""The per-scope vector index: normalized float32 rows, exact cosine search.

Rows come in two parts: ``base`` (the checkpointed ``vectors.npy``, usually a
read-only memory map) and ``tail`` (rows added since, in a growable array).
Search is one matrix-vector product per part and a top-k by ``argpartition``;
rows of expired or purged observations are masked out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from memgraph.ivf import CoarseIndex

__all__ = ["VectorIndex", "normalize_rows"]

Matrix = npt.NDArray[np.float32]


def normalize_rows(matrix: npt.ArrayLike) -> Matrix:
    """Rows scaled to unit length (zero rows stay zero), as C-contiguous float32."""
    array = np.ascontiguousarray(matrix, dtype=np.float32)
    if array.ndim == 1:
        array = array.reshape(1, -1)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(array / norms, dtype=np.float32)


class VectorIndex:
    """Vectors of one scope's observations, keyed by observation id."""

    def __init__(
        self,
        model: str | None = None,
        dimension: int | None = None,
        base: Matrix | None = None,
        base_ids: Sequence[str] = (),
    ) -> None:
        self.model = model
        self.dimension = dimension if base is None else int(base.shape[1])
        width = self.dimension or 0
        self.base: Matrix = base if base is not None else np.zeros((0, width), np.float32)
        self.base_ids: list[str] = list(base_ids)[: len(self.base)]
        self._tail: Matrix = np.zeros((0, width), np.float32)
        self.tail_ids: list[str] = []
        self.row_of: dict[str, int] = {obs_id: row for row, obs_id in enumerate(self.base_ids)}
        # Only the latest row of an id is live (an id repeats when its vector was replaced).
        self._alive = np.zeros(len(self.base_ids), dtype=bool)
        self._alive[np.fromiter(self.row_of.values(), np.intp, len(self.row_of))] = True
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
            grown = np.zeros(
                (max(needed, 2 * self._tail.shape[0], 256), self.dimension), np.float32
            )
            grown[:count] = self._tail[:count]
            self._tail = grown
        self._tail[count:needed] = rows
        if len(self._alive) < len(self.base_ids) + needed:
            alive = np.ones(max(len(self.base_ids) + needed, 2 * len(self._alive)), dtype=bool)
            alive[: len(self._alive)] = self._alive
            self._alive = alive
        for offset, obs_id in enumerate(ids):
            old = self.row_of.get(obs_id)
            if old is not None:
                self._alive[old] = False
            row = len(self.base_ids) + count + offset
            self.row_of[obs_id] = row
            self._alive[row] = True
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
    ) -> list[tuple[str, float]]:
        """The ``k`` most similar live rows with cosine >= ``threshold``, best first.

        ``mask`` (one boolean per row) replaces the liveness of rows.
        """
        total = len(self)
        if total == 0 or k <= 0 or self.dimension is None:
            return []
        vector = normalize_rows(query)[0]
        if vector.shape[0] != self.dimension:
            return []
        alive = self._alive[:total] if mask is None else mask[:total]
        coarse = self.coarse
        if coarse is not None and mask is None and coarse.covered <= total:
            # Approximate: only the rows of the nearest lists (and rows not yet
            # covered), each still scored exactly.
            rows = np.concatenate(
                [coarse.candidates(vector), np.arange(coarse.covered, total, dtype=np.int64)]
            )
            rows = rows[alive[rows]]
            scores = self.gather(rows) @ vector
        else:
            rows = np.flatnonzero(alive)
            parts = []
            if len(self.base_ids):
                parts.append(self.base[: len(self.base_ids)] @ vector)
            if self.tail_ids:
                parts.append(self.tail @ vector)
            scores = (parts[0] if len(parts) == 1 else np.concatenate(parts))[rows]
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
        parts = []
        if split:
            parts.append(np.asarray(self.base[rows[:split]], dtype=np.float32))
        if split < len(rows):
            parts.append(self._tail[rows[split:] - base_count])
        if not parts:
            return np.zeros((0, self.dimension or 0), np.float32)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def ids(self) -> list[str]:
        """Every row's observation id, in row order."""
        return [*self.base_ids, *self.tail_ids]

    def rows(self, start: int, stop: int) -> Matrix:
        """Rows ``start:stop`` across base and tail."""
        base_count = len(self.base_ids)
        parts = []
        if start < base_count:
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
        """Make exactly these observations searchable (their latest row each)."""
        self._alive[:] = False
        for obs_id in obs_ids:
            row = self.row_of.get(obs_id)
            if row is not None:
                self._alive[row] = True
