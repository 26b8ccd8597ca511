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

from memgraph.id_column import IdColumn, as_column, id_column
from memgraph.retrieval.ivf import CoarseIndex, dot_rows

__all__ = ["RowSource", "VectorIndex", "normalize_rows"]

Matrix = npt.NDArray[np.float32]
Rows = npt.NDArray[np.int64]
ID_BYTES = 150  # an id held as a string: the string, its list entry and its dict entry
COLUMN_ID_BYTES = 41  # an id in a column: its number and prefix code, its lookup entries
VECTORISE_FROM = 100  # ids looked up together as a column from this many on


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
        if source is None and len(base_ids) > len(self.base):
            base_ids = base_ids[: len(self.base)]
        # The base rows' ids as a column when they are prefixes and numbers (found
        # without a dict of strings), else as a list with a dict.
        self._column = as_column(base_ids)
        self.base_ids: Sequence[str] = self._column if self._column is not None else list(base_ids)
        self._base_rows: dict[str, int] = (
            {} if self._column is not None else dict(zip(self.base_ids, itertools.count()))
        )
        self._tail: Matrix = np.zeros((0, width), np.float32)
        self.tail_ids: list[str] = []
        self._tail_rows: dict[str, int] = {}  # id -> its latest row among the added ones
        # Only the latest row of an id is live (an id repeats when its vector was replaced).
        self._alive = self._latest_base_rows()
        # Rows of episodes (the remembered texts) beside those of observations.
        self._episode = self._base_episodes()
        self.coarse: CoarseIndex | None = None  # approximate index over a prefix of the rows

    def _latest_base_rows(self) -> npt.NDArray[np.bool_]:
        """Which base rows hold the latest vector of their id."""
        column = self._column
        if column is not None:
            latest = column.positions_of(column)
            return np.asarray(latest == np.arange(len(column)), dtype=bool)
        alive = np.zeros(len(self.base_ids), dtype=bool)
        alive[np.fromiter(self._base_rows.values(), np.intp, len(self._base_rows))] = True
        return alive

    def _base_episodes(self) -> npt.NDArray[np.bool_]:
        """Which base rows are episodes'."""
        if self._column is not None:
            return self._column.with_prefix(EPISODE_PREFIX)
        return np.fromiter(
            map(str.startswith, self.base_ids, itertools.repeat(EPISODE_PREFIX)),
            bool,
            len(self.base_ids),
        )

    def __len__(self) -> int:
        return len(self.base_ids) + len(self.tail_ids)

    def __contains__(self, obs_id: object) -> bool:
        return isinstance(obs_id, str) and self.row(obs_id) is not None

    def row(self, obs_id: str) -> int | None:
        """The latest row of ``obs_id``, or None when it has no vector."""
        row = self._tail_rows.get(obs_id)
        if row is None:
            column = self._column
            row = self._base_rows.get(obs_id) if column is None else column.position(obs_id)
        return row

    def rows_of(self, obs_ids: Iterable[str]) -> Rows:
        """The latest row of each of ``obs_ids``, in order (-1: it has no vector);
        looked up as a column when both they and the base rows' ids are one."""
        keys = obs_ids if isinstance(obs_ids, Sequence) else list(obs_ids)
        base = self._column
        wanted = as_column(keys) if base is not None and len(keys) >= VECTORISE_FROM else None
        if base is None or wanted is None:
            row = self.row
            return np.fromiter(
                (-1 if (found := row(key)) is None else found for key in keys), np.int64, len(keys)
            )
        rows = base.positions_of(wanted)
        if self._tail_rows:
            added = self._added_rows_of(keys, wanted)
            rows = np.where(added >= 0, added, rows)
        return rows

    def _added_rows_of(self, keys: Sequence[str], wanted: IdColumn) -> Rows:
        """The latest added row of each of ``keys`` (``wanted`` is them as a column), or -1."""
        added = as_column(self.tail_ids) if isinstance(keys, IdColumn) else None
        if added is None:
            get = self._tail_rows.get
            return np.fromiter((get(key, -1) for key in keys), np.int64, len(keys))
        found = added.positions_of(wanted)
        return np.where(found >= 0, found + len(self.base_ids), -1)

    def missing(self, obs_ids: Sequence[str]) -> list[str]:
        """Those of ``obs_ids`` that have no vector, in order."""
        rows = self.rows_of(obs_ids)
        return [obs_ids[i] for i in np.flatnonzero(rows < 0).tolist()]

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
        replaced = self.rows_of(ids)
        added = self._tail_rows
        added.update(zip(ids, range(first, end), strict=True))  # a repeated id: its last row
        self._alive[replaced[replaced >= 0]] = False
        self._alive[first:end] = True
        superseded = [row for row, obs_id in enumerate(ids, first) if added[obs_id] != row]
        if superseded:  # an id given twice in this batch lives on its last row only
            self._alive[superseded] = False
        self._episode[first:end] = [obs_id.startswith(EPISODE_PREFIX) for obs_id in ids]
        self.tail_ids.extend(ids)
        if self.coarse is not None and self.coarse.covered == len(self) - len(ids):
            self.coarse.extend(rows)

    def discard(self, obs_ids: Iterable[str]) -> None:
        """Stop returning these observations (expired or purged)."""
        rows = self.rows_of(obs_ids)
        self._alive[rows[rows >= 0]] = False

    def revive(self, obs_ids: Iterable[str]) -> None:
        rows = self.rows_of(obs_ids)
        self._alive[rows[rows >= 0]] = True

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
        rows = self.rows_of(obs_ids)
        found = np.flatnonzero(rows >= 0)
        if not len(found):
            return {}
        rows = rows[found]
        order = np.argsort(rows, kind="stable")
        scores = np.empty(len(found), np.float32)
        scores[order] = dot_rows(self.gather(rows[order]), vector)
        return {
            obs_ids[i]: float(score)
            for i, score in zip(found.tolist(), scores.tolist(), strict=True)
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
        found = scores[best]
        below = np.flatnonzero(found < threshold)
        end = int(below[0]) if len(below) else len(found)
        return list(zip(self._ids_at(rows[best[:end]]), found[:end].tolist(), strict=True))

    def _ids_at(self, rows: Rows) -> list[str]:
        """The ids of ``rows``, in their order."""
        base_count, tail = len(self.base_ids), self.tail_ids
        listed = rows.tolist()
        in_base = [row for row in listed if row < base_count]
        column = self._column
        named = iter(
            column.take(in_base).tolist()
            if column is not None
            else [self.base_ids[row] for row in in_base]
        )
        return [next(named) if row < base_count else tail[row - base_count] for row in listed]

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
        flags = self._alive.nbytes + self._episode.nbytes
        per_base_id = ID_BYTES if self._column is None else COLUMN_ID_BYTES
        ids = len(self.base_ids) * per_base_id + len(self.tail_ids) * ID_BYTES
        return rows + self._tail.nbytes + flags + ids + lists

    def ids(self) -> list[str]:
        """Every row's observation id, in row order."""
        return [*self.base_ids, *self.tail_ids]

    def compact_ids(self) -> Sequence[str]:
        """Every row's id, in row order: a column when each is a prefix and a number
        (the form the stores keep), else a list."""
        if self._column is not None:
            return self._column.extended(self.tail_ids)
        return id_column(self.ids())

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
        self._read_source()
        matrix = (
            np.concatenate([self.base[: len(self.base_ids)], self.tail]) if total else self.base
        )
        keep = np.flatnonzero(self._alive[:total])
        return self._ids_at(keep), np.ascontiguousarray(matrix[keep])

    def mask_for(self, obs_ids: Iterable[str]) -> npt.NDArray[np.bool_]:
        """A row mask selecting the latest row of each of ``obs_ids``."""
        mask = np.zeros(len(self), dtype=bool)
        rows = self.rows_of(obs_ids)
        mask[rows[rows >= 0]] = True
        return mask

    def set_live(self, obs_ids: Iterable[str]) -> None:
        """Make exactly these observations searchable (their latest row each); every
        episode's latest row stays searchable."""
        rows = self.rows_of(obs_ids)
        total = len(self)
        episodes = self._episode[:total] & self._alive[:total]
        self._alive[:] = False
        self._alive[rows[rows >= 0]] = True
        self._alive[:total] |= episodes
