"""A PostgreSQL store: many app servers sharing one memory.

Select it with a DSN as ``memory.store`` (or ``MEMGRAPH_STORE``), e.g.
``"store": "postgresql://memgraph@db.internal/memgraph"``. It keeps exactly
what the directory store keeps, in tables of one PostgreSQL schema
(``memgraph``; see :mod:`memgraph.store.pg_schema` for the DDL)::

    scopes      one row per scope: its counters (last committed seq, the
                checkpoint's seq and image generation, the rewrite epoch) and
                vector header
    images      checkpoints: graph.json's bytes, graph.idx's bytes (the
                index a lazy graph opens from) and the vector rows' ids; the
                current generation and the one before it
    commits     the journal: one row per commit since the checkpoint,
                PRIMARY KEY (scope, seq), with the new observations' vectors
    episodes    remembered texts, folded in at checkpoints (episodes.jsonl)
    vectors     checkpointed float32 rows, one per row of the index (vectors.npy)
    coarse      the approximate (IVF) index of those rows (vectors.ivf.npz)
    derived     other derived data kept with a scope, by name
    summaries   the conversation summary (summary.json)

Semantics match the directory store: a commit is one transaction that must
follow the scope's last seq (``StoreConflict`` otherwise; the primary key also
makes a duplicate seq impossible); checkpoints fold the journal into the
checkpoint when it outgrows a fraction of it, in one transaction, so cold
loads replay little; a rewrite (purge) replaces everything and bumps the
scope's epoch so every other process reloads.

Opening a scope is lazy, as with the directory store's ``graph.idx``: a load
reads the checkpoint's index, the vector ids and the approximate index, and
leaves the records and the vector rows in the database; the graph reads a
record when it first parses it, the vector index the rows a search visits
(:mod:`memgraph.store.pg_remote`). A checkpoint keeps the image before it, so
a reader in the middle of a call never loses the bytes its index points at;
at its next call it sees the new generation and reloads.

One writer per scope across machines: :meth:`PostgresStore.lock` holds a
session-level ``pg_advisory_lock`` on a hash of (schema, scope), waiting at
most the timeout (``lock_timeout``), then ``StoreConflict``. A crashed app
server's lock ends with its connection. Taking the lock also reads the
commits this handle has not seen, in the same round trip (a pipeline), and
releasing it does not wait for the server's reply. Readers never lock:
before every read the engine calls :meth:`PostgresStore.changes_since`, one
indexed query that returns the commits another process made (or asks for a
reload), so a recall never misses a committed write.

Handles share the process's connections (:mod:`memgraph.store.pg_pool`), so
a process serving thousands of scopes keeps a handful of sessions.

Vectors are stored as little-endian float32 bytes and searched in-process
with numpy (the engine's :class:`~memgraph.retrieval.vectors.VectorIndex`); the
``vector`` extension is not needed.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt
import orjson

from memgraph.errors import StoreConflict, StoreCorrupt, StoreUnavailable
from memgraph.graph.graph import Graph
from memgraph.graph.snapshot import GraphImage, encode, indexable, read_index
from memgraph.id_column import IdColumn, joined_ids
from memgraph.retrieval.ivf import IVF_MIN_ROWS, CoarseIndex
from memgraph.scope import validate_scope
from memgraph.store.base import Commit, Doc, Snapshot, VectorBatch, VectorSet, journal_outgrew
from memgraph.store.pg_pool import pool_for, send_and_forget
from memgraph.store.pg_remote import RemoteImage, RemoteRows, Spans
from memgraph.store.pg_schema import (
    DEFAULT_SCHEMA,
    advisory_key,
    connect,
    ensure_schema,
    import_psycopg,
    mask_dsn,
    translate_errors,
    validate_schema_name,
)
from memgraph.store.readers import pack_row_ids, unpack_row_ids

if TYPE_CHECKING:
    from psycopg import Connection

    from memgraph.retrieval.vectors import VectorIndex

__all__ = ["JOURNAL_RATIO", "MIN_JOURNAL_BYTES", "PostgresStore", "list_scopes"]

log = logging.getLogger("memgraph")

MIN_JOURNAL_BYTES = 1 << 20
JOURNAL_RATIO = 0.25
WHOLE_IMAGE_BYTES = 1 << 20
"""A checkpoint image up to this size is read whole when the scope opens (one round
trip, instead of one per batch of records later); larger ones are read on demand."""
WHOLE_VECTOR_ROWS = IVF_MIN_ROWS
"""Scopes with up to this many vector rows read them all when they open: searches
below this size are exact and need every row anyway."""

T = TypeVar("T")
Matrix = npt.NDArray[np.float32]
_COMMIT_COLUMNS = "seq, at, next_id, ops::text, vector_model, vector_dim, vector_ids, vector_data"


def list_scopes(dsn: str, *, schema: str = DEFAULT_SCHEMA) -> list[str]:
    """The scopes stored under ``schema`` at ``dsn`` (with a graph or a summary), sorted."""
    schema = validate_schema_name(schema)
    with contextlib.closing(connect(dsn)) as connection, translate_errors(dsn, "listing scopes"):
        ensure_schema(connection, schema, dsn)
        rows = connection.execute(
            f'SELECT scope FROM "{schema}".scopes UNION SELECT scope FROM "{schema}".summaries '
            "ORDER BY 1"
        ).fetchall()
    return [row[0] for row in rows]


def pack_ids(ids: Sequence[str]) -> bytes:
    """The vector rows' ids as stored with a checkpoint image: packed as in
    ``vectors.json`` (a JSON object) when they are a column, else NUL-separated and
    compressed."""
    if isinstance(ids, IdColumn):
        return orjson.dumps(pack_row_ids(ids))
    return zlib.compress("\x00".join(ids).encode(), 1)


def unpack_ids(blob: bytes, count: int) -> Sequence[str]:
    """The ids :func:`pack_ids` stored (ValueError or zlib.error when it cannot tell)."""
    if blob.startswith(b"{"):  # never the first byte of a zlib stream
        return unpack_row_ids(orjson.loads(blob), count)
    text = zlib.decompress(blob).decode()
    return text.split("\x00") if text else []


class PostgresStore:
    """Persist one scope in PostgreSQL (see the module docstring).

    Args:
        dsn: a ``postgresql://`` connection URI.
        scope: the scope id.
        schema: the PostgreSQL schema holding memgraph's tables.

    The handle borrows a connection from the process's pool for each piece of
    work (a new one after a lost connection, never while it holds the scope's
    lock). It is safe to share between threads;
    :class:`~memgraph.engine.memory.Memory` serializes its calls.
    """

    def __init__(self, dsn: str, scope: str, *, schema: str = DEFAULT_SCHEMA) -> None:
        import_psycopg()
        self.dsn = dsn
        self.scope = validate_scope(scope)
        self.schema = validate_schema_name(schema)
        self._s = f'"{self.schema}"'
        self._key = advisory_key(self.schema, self.scope)
        self._pool = pool_for(dsn)
        self._schema_checked = False
        self._io = threading.RLock()  # one database conversation at a time per handle
        self._writer = threading.Lock()  # one lock() block at a time per handle
        self._held_by: Connection[tuple[Any, ...]] | None = None
        self._prefetched: tuple[int, list[tuple[Any, ...]]] | None = None
        self._epoch: int | None = None  # the rewrite epoch this handle's state comes from
        self._image: int | None = None  # the checkpoint image generation it reads from
        self._seen_seq = 0  # the last commit this handle loaded, returned or made
        self._journal_bytes = 0
        self._checkpoint_bytes = 0
        # The stored vector rows' ids as this handle last saw them, and their generation
        # (bumped whenever the rows are replaced rather than appended to).
        self._vector_ids: Sequence[str] = []
        self._vector_generation: int | None = None
        self._rows: RemoteRows | None = None  # rows read so far, kept across reloads

    def __repr__(self) -> str:
        return (
            f"PostgresStore({mask_dsn(self.dsn)!r}, scope={self.scope!r}, schema={self.schema!r})"
        )

    # ------------------------------------------------------------- connection
    def _take(self) -> Connection[tuple[Any, ...]]:
        """A pooled connection; the schema is checked on this handle's first use."""
        conn = self._pool.take()
        if not self._schema_checked:
            try:
                ensure_schema(conn, self.schema, self.dsn)
            except BaseException:
                self._pool.give(conn)
                raise
            self._schema_checked = True
        return conn

    def _run(
        self, what: str, work: Callable[[Connection[tuple[Any, ...]]], T], *, pin: bool = False
    ) -> T:
        """Run ``work`` on a connection, translating errors.

        The connection is the one holding the lock, if any, else one from the
        pool, given back afterwards (or kept as the lock's, with ``pin``). A
        read that fails because the connection was lost (a restarted server, a
        failover) is retried once on a fresh connection, unless this handle
        holds the lock (whose loss the caller must see).
        """
        psycopg = import_psycopg()
        with self._io:
            for attempt in (1, 2):
                held = self._held_by
                conn = held if held is not None else self._take()
                try:
                    with translate_errors(self.dsn, f"{what} scope {self.scope!r}"):
                        result = work(conn)
                except StoreUnavailable as exc:
                    # psycopg marks a connection the server dropped either broken or
                    # closed, depending on when it noticed.
                    gone = conn.broken or conn.closed
                    lost = isinstance(exc.__cause__, psycopg.OperationalError) and gone
                    if held is None:
                        self._pool.give(conn)
                    if lost and held is conn:
                        raise self._lost_lock(str(exc)) from exc.__cause__
                    if lost:
                        self._pool.discard_idle()  # its siblings are likely gone too
                    if attempt == 2 or not lost or held is not None:
                        raise
                    continue
                except BaseException:
                    if held is None:
                        self._pool.give(conn)
                    raise
                if pin:
                    self._held_by = conn
                elif held is None:
                    self._pool.give(conn)
                return result
            raise AssertionError("unreachable")  # pragma: no cover

    # ---------------------------------------------------------------- reading
    def exists(self) -> bool:
        def work(conn: Connection[tuple[Any, ...]]) -> bool:
            row = conn.execute(
                f"SELECT EXISTS (SELECT 1 FROM {self._s}.scopes WHERE scope = %s)", [self.scope]
            ).fetchone()
            return bool(row and row[0])

        return self._run("checking", work)

    def load(self) -> Snapshot:
        return self._run("loading", self._load)

    def _load(self, conn: Connection[tuple[Any, ...]]) -> Snapshot:
        """Everything a scope opens from, in one round trip: a pipeline of reads in one
        ``REPEATABLE READ`` snapshot (a checkpoint committed meanwhile cannot delete
        commits between the checkpoint and the journal read here). A small scope's
        image and vector rows come whole; a large one's stay in the database."""
        s, scope = self._s, self.scope
        current = f"(SELECT image_generation FROM {s}.scopes WHERE scope = %s)"
        reads: list[tuple[str, list[Any]]] = [
            (
                "SELECT epoch, last_seq, checkpoint_seq, image_generation, "
                "CASE WHEN image_generation = 0 THEN checkpoint::text END, checkpoint_bytes, "
                "journal_bytes, vector_model, vector_dim, vector_count, vector_generation "
                f"FROM {s}.scopes WHERE scope = %s",
                [scope],
            ),
            (
                "SELECT generation, octet_length(document), document_index, vector_ids, "
                "CASE WHEN octet_length(document) <= %s OR document_index IS NULL "
                f"THEN document END FROM {s}.images WHERE scope = %s AND generation = {current}",
                [WHOLE_IMAGE_BYTES, scope, scope],
            ),
            (
                f"SELECT {_COMMIT_COLUMNS} FROM {s}.commits WHERE scope = %s AND seq > "
                f"(SELECT checkpoint_seq FROM {s}.scopes WHERE scope = %s) ORDER BY seq",
                [scope, scope],
            ),
            (f"SELECT lists, dim, centroids, labels FROM {s}.coarse WHERE scope = %s", [scope]),
            (
                f"SELECT v.data FROM {s}.vectors v JOIN {s}.scopes x ON x.scope = v.scope "
                "WHERE v.scope = %s AND x.vector_count <= %s AND v.row_index < x.vector_count "
                "ORDER BY v.row_index",
                [scope, WHOLE_VECTOR_ROWS],
            ),
        ]
        cursors = [conn.cursor(binary=True) for _ in reads]
        try:
            with conn.pipeline():
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                for cursor, (sql, params) in zip(cursors, reads, strict=True):
                    cursor.execute(sql, params)
                conn.execute("COMMIT")
            scope_rows, image_rows, commit_rows, coarse_rows = (c.fetchall() for c in cursors[:4])
            # The vector rows are copied into their matrix one at a time.
            return self._read_snapshot(scope_rows, image_rows, commit_rows, coarse_rows, cursors[4])
        finally:
            for cursor in cursors:
                cursor.close()

    def _read_snapshot(
        self,
        scope_rows: list[tuple[Any, ...]],
        image_rows: list[tuple[Any, ...]],
        commit_rows: list[tuple[Any, ...]],
        coarse_rows: list[tuple[Any, ...]],
        vector_rows: Iterable[tuple[Any, ...]],
    ) -> Snapshot:
        snapshot = Snapshot()
        if not scope_rows:
            self._epoch, self._image, self._seen_seq = 0, 0, 0
            self._journal_bytes, self._checkpoint_bytes = 0, 0
            self._vector_ids, self._vector_generation, self._rows = [], 0, None
            return snapshot
        row = scope_rows[0]
        epoch, last_seq, checkpoint_seq, image, document = row[:5]
        model, dim, count, generation = row[7:11]
        vector_ids: bytes | None = None
        if image:
            if not image_rows:
                raise self._corrupt("images", f"lacks checkpoint image {image}")
            vector_ids = self._read_image(snapshot, image_rows[0])
        elif document is not None:
            snapshot.document = self._decode(document, "scopes.checkpoint", "checkpoint")
            if not isinstance(snapshot.document, dict):
                raise self._corrupt("scopes.checkpoint", "is not a graph document")
        snapshot.commits = [self._commit_of(r) for r in commit_rows]
        self._check_sequence(snapshot.commits, checkpoint_seq, last_seq)
        ids: Sequence[str] = []
        if model is not None:
            ids = self._vector_ids_of(vector_ids, count)
            coarse = self._coarse_of(coarse_rows, count, dim)
            snapshot.vectors = self._vector_set(model, ids, dim, generation, coarse, vector_rows)
        self._epoch, self._image, self._seen_seq = epoch, image, last_seq
        self._checkpoint_bytes, self._journal_bytes = row[5], row[6]
        self._vector_ids, self._vector_generation = ids, generation
        return snapshot

    def _read_image(self, snapshot: Snapshot, row: tuple[Any, ...]) -> bytes | None:
        """Open a checkpoint image from its index (its bytes read on demand, or at once
        when small), or parse it whole when it has no usable index; returns its
        vector ids."""
        generation, size, index, vector_ids, whole = row
        data: bytes | RemoteImage | None = bytes(whole) if whole is not None else None
        if index is not None:
            if data is None:
                data = RemoteImage(self._image_reader(generation), int(size))
            try:
                saved = read_index(bytes(index), data, (int(size), generation))
            except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
                log.info(
                    "memgraph: parsing checkpoint %s of %r in full (%s)", generation, self, exc
                )
            else:
                saved.path = self._image_path(generation)
                snapshot.saved = saved
                return bytes(vector_ids) if vector_ids is not None else None
        if not isinstance(data, bytes):
            data = self._image_reader(generation)([(0, int(size))])[0]
        snapshot.document = self._decode(data, "images.document", "checkpoint")
        if not isinstance(snapshot.document, dict):
            raise self._corrupt("images.document", "is not a graph document")
        return bytes(vector_ids) if vector_ids is not None else None

    def _image_path(self, generation: int) -> str:
        return f"{self.schema}.images.document (scope {self.scope!r}, generation {generation})"

    def _image_reader(self, generation: int) -> Callable[[Spans], list[bytes]]:
        """Reads byte spans of image ``generation`` (``StoreConflict`` once it is gone)."""
        sql = (
            f"SELECT substring(i.document FROM s.start FOR s.length) FROM {self._s}.images i, "
            "unnest(%s::int4[], %s::int4[]) WITH ORDINALITY AS s(start, length, n) "
            "WHERE i.scope = %s AND i.generation = %s ORDER BY s.n"
        )

        def fetch(spans: Spans) -> list[bytes]:
            starts = [start + 1 for start, _ in spans]  # SQL counts from 1
            lengths = [stop - start for start, stop in spans]

            def work(conn: Connection[tuple[Any, ...]]) -> list[bytes]:
                with conn.cursor(binary=True) as cursor:
                    rows = cursor.execute(sql, [starts, lengths, self.scope, generation]).fetchall()
                if not rows:
                    raise self._moved_on(f"its checkpoint image {generation} was replaced")
                return [bytes(r[0]) for r in rows]

            return self._run("reading the checkpoint of", work)

        return fetch

    def _vector_ids_of(self, blob: bytes | None, count: int) -> Sequence[str]:
        """The ids of the stored vector rows: from the image when it carries them."""
        if blob is not None:
            with contextlib.suppress(zlib.error, ValueError):
                ids = unpack_ids(blob, count)
                if len(ids) == count:
                    return ids

        def work(conn: Connection[tuple[Any, ...]]) -> list[str]:
            rows = conn.execute(
                f"SELECT obs_id FROM {self._s}.vectors WHERE scope = %s AND row_index < %s "
                "ORDER BY row_index",
                [self.scope, count],
            ).fetchall()
            return [r[0] for r in rows]

        ids = self._run("reading vector ids of", work)  # a scope the previous release wrote
        if len(ids) != count:
            raise self._corrupt("vectors", f"holds {len(ids)} rows, expected {count}")
        return ids

    def _vector_set(
        self,
        model: str,
        ids: Sequence[str],
        dim: int,
        generation: int,
        coarse: CoarseIndex | None,
        rows_read: Iterable[tuple[Any, ...]],
    ) -> VectorSet:
        """The stored vectors: a small scope's rows as read with the load (an exact
        search needs them all), a large one's left in the database until a search
        reads them."""
        count = len(ids)
        if count == 0:
            self._rows = None
            return VectorSet(model, [], np.zeros((0, 0), np.float32))
        if count <= WHOLE_VECTOR_ROWS:
            self._rows = None
            matrix = np.empty((count, dim), dtype="<f4")
            target, width, seen = matrix.data.cast("B"), dim * 4, 0
            for (data,) in rows_read:
                if seen == count or len(data) != width:
                    raise self._corrupt("vectors", f"row {seen} holds {len(data)} bytes")
                target[seen * width : (seen + 1) * width] = data
                seen += 1
            if seen != count:
                raise self._corrupt("vectors", f"holds {seen} rows, expected {count}")
            return VectorSet(model, ids, matrix.astype(np.float32, copy=False), coarse)
        rows = self._rows
        if rows is None or rows.generation != generation or rows.count > count or rows.dim != dim:
            rows = RemoteRows(
                self._row_reader(generation, dim),
                self._all_rows_reader(generation, dim),
                count,
                dim,
                generation=generation,
            )
        rows.extend(count)
        self._rows = rows
        return VectorSet(model, ids, np.zeros((0, dim), np.float32), coarse, source=rows)

    def _row_reader(
        self, generation: int, dim: int
    ) -> Callable[[npt.NDArray[np.int64]], tuple[npt.NDArray[np.int64], Matrix]]:
        query = (
            f"COPY (SELECT v.row_index, v.data FROM {self._s}.vectors v WHERE v.scope = %s "
            "AND v.row_index = ANY(%s::int4[]) AND EXISTS (SELECT 1 FROM "
            f"{self._s}.scopes s WHERE s.scope = %s AND s.vector_generation = %s)) "
            "TO STDOUT (FORMAT BINARY)"
        )

        def fetch(wanted: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], Matrix]:
            def work(conn: Connection[tuple[Any, ...]]) -> tuple[npt.NDArray[np.int64], Matrix]:
                numbers: list[int] = []
                matrix = np.empty((len(wanted), dim), dtype="<f4")
                target, width = matrix.data.cast("B"), dim * 4
                params = [self.scope, wanted.tolist(), self.scope, generation]
                with conn.cursor() as cursor, cursor.copy(query, params) as copy:
                    copy.set_types(["int4", "bytea"])
                    for number, data in copy.rows():
                        if len(data) != width or len(numbers) == len(wanted):
                            raise self._corrupt("vectors", f"row {number} has the wrong length")
                        position = len(numbers) * width
                        target[position : position + width] = data
                        numbers.append(number)
                if len(numbers) != len(wanted):
                    self._check_vector_generation(conn, generation)
                    raise self._corrupt("vectors", f"lacks {len(wanted) - len(numbers)} rows")
                return np.asarray(numbers, dtype=np.int64), matrix.astype(np.float32, copy=False)

            return self._run("reading vectors of", work)

        return fetch

    def _all_rows_reader(self, generation: int, dim: int) -> Callable[[int], Matrix]:
        def fetch(count: int) -> Matrix:
            def work(conn: Connection[tuple[Any, ...]]) -> Matrix:
                return self._read_vectors(conn, count, dim, generation)

            return self._run("reading vectors of", work)

        return fetch

    def _read_vectors(
        self, conn: Connection[tuple[Any, ...]], count: int, dim: int, generation: int
    ) -> Matrix:
        """Rows ``0..count`` of vector generation ``generation``, in order, in one pass."""
        # Rows go straight into a numpy-allocated matrix (aligned, and on huge pages
        # where numpy asks for them, which random row gathers in search notice).
        matrix = np.empty((count, dim), dtype="<f4")
        target = matrix.data.cast("B")
        width, position, seen = dim * 4, 0, 0
        # Binary COPY streams the rows about twice as fast as fetching them.
        query = (
            f"COPY (SELECT data FROM {self._s}.vectors WHERE scope = %s AND row_index < %s "
            f"AND EXISTS (SELECT 1 FROM {self._s}.scopes s WHERE s.scope = %s "
            "AND s.vector_generation = %s) ORDER BY row_index) TO STDOUT (FORMAT BINARY)"
        )
        with (
            conn.cursor() as cursor,
            cursor.copy(query, [self.scope, count, self.scope, generation]) as copy,
        ):
            copy.set_types(["bytea"])
            for (row,) in copy.rows():
                if len(row) != width or seen == count:
                    raise self._corrupt(
                        "vectors", f"row {seen} holds {len(row)} bytes, expected {width}"
                    )
                target[position : position + width] = row
                position += width
                seen += 1
        if seen != count:
            self._check_vector_generation(conn, generation)
            raise self._corrupt("vectors", f"holds {seen} rows, expected {count}")
        return matrix.astype(np.float32, copy=False)

    def _check_vector_generation(self, conn: Connection[tuple[Any, ...]], generation: int) -> None:
        row = conn.execute(
            f"SELECT vector_generation FROM {self._s}.scopes WHERE scope = %s", [self.scope]
        ).fetchone()
        if row is None or row[0] != generation:
            raise self._moved_on("its vectors were replaced")

    def _moved_on(self, what: str) -> StoreConflict:
        return StoreConflict(
            f"scope {self.scope!r} moved on while this call read it ({what} by another "
            "process); retry the call"
        )

    @staticmethod
    def _coarse_of(rows: list[tuple[Any, ...]], count: int, dim: int) -> CoarseIndex | None:
        """The saved approximate index, if it fits these rows (derived data: anything
        unusable is ignored, and the engine rebuilds it in the background)."""
        if not rows:
            return None
        lists, width, centroids, labels = rows[0]
        if width != dim or len(centroids) != lists * dim * 4 or len(labels) % 4:
            return None
        label_array = np.frombuffer(labels, dtype="<i4").astype(np.int32)
        if len(label_array) > count or (len(label_array) and int(label_array.max()) >= lists):
            return None
        matrix = np.frombuffer(centroids, dtype="<f4").astype(np.float32).reshape(lists, dim)
        return CoarseIndex(matrix, label_array)

    def _commit_of(self, row: Sequence[Any]) -> Commit:
        seq, at, next_id, ops_text, model, dim, ids, data = row
        ops = self._decode(ops_text, "commits.ops", f"seq {seq}")
        batch = None
        if ids:
            raw = bytes(data or b"")
            if len(raw) != len(ids) * dim * 4:
                raise self._corrupt("commits.vector_data", f"seq {seq} has the wrong length")
            matrix = np.frombuffer(raw, dtype="<f4").astype(np.float32).reshape(len(ids), dim)
            batch = VectorBatch(model or "", tuple(ids), matrix)
        return Commit(seq=int(seq), at=at, next_id=int(next_id), ops=ops, vectors=batch)

    def _decode(self, text: str | bytes, column: str, where: str) -> Any:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise self._corrupt(column, f"{where} is not valid JSON: {exc}") from exc

    def _corrupt(self, column: str, problem: str) -> StoreCorrupt:
        table = f"{self.schema}.{column}"
        return StoreCorrupt(
            f"{table} of scope {self.scope!r} in {mask_dsn(self.dsn)!r} {problem}; "
            "it was left untouched",
            path=table,
            position=f"scope {self.scope!r}",
        )

    def _check_sequence(self, commits: Sequence[Commit], after: int, last: int) -> None:
        expected = after
        for commit in commits:
            if commit.seq != expected + 1:
                raise self._corrupt(
                    "commits", f"jumps from seq {expected} to {commit.seq}; commits are missing"
                )
            expected = commit.seq
        if expected != last:
            raise self._corrupt("commits", f"ends at seq {expected}, the scope says {last}")

    @property
    def _changes_sql(self) -> str:
        """The scope's counters left joined to the commits after a seq: one snapshot."""
        return (
            "SELECT s.epoch, s.last_seq, s.checkpoint_seq, s.image_generation, "
            "c.seq, c.at, c.next_id, c.ops::text, c.vector_model, c.vector_dim, "
            f"c.vector_ids, c.vector_data FROM {self._s}.scopes s "
            f"LEFT JOIN {self._s}.commits c ON c.scope = s.scope AND c.seq > %s "
            "WHERE s.scope = %s ORDER BY c.seq"
        )

    def changes_since(self, seq: int) -> list[Commit] | None:
        prefetched, self._prefetched = self._prefetched, None
        if prefetched is not None and prefetched[0] == seq and self._held_by is not None:
            return self._changes_of(prefetched[1], seq)  # read with the lock: still current

        def work(conn: Connection[tuple[Any, ...]]) -> list[Commit] | None:
            with conn.cursor(binary=True) as cursor:
                rows = cursor.execute(self._changes_sql, [seq, self.scope]).fetchall()
            return self._changes_of(rows, seq)

        return self._run("reading changes of", work)

    def _changes_of(self, rows: list[tuple[Any, ...]], seq: int) -> list[Commit] | None:
        if not rows:
            return [] if seq == 0 else None
        epoch, last_seq, checkpoint_seq, image = rows[0][:4]
        if self._epoch is not None and epoch != self._epoch:
            return None  # rewritten (purged) since this handle read it: reload
        if self._image is not None and image != self._image:
            return None  # a new checkpoint image: reload from its index
        if not checkpoint_seq <= seq <= last_seq:
            return None  # the commits after seq were folded into a newer checkpoint
        commits = [self._commit_of(r[4:]) for r in rows if r[4] is not None]
        self._check_sequence(commits, seq, last_seq)
        self._epoch, self._seen_seq = epoch, last_seq
        return commits

    def episodes(self) -> Iterator[Doc]:
        def work(conn: Connection[tuple[Any, ...]]) -> list[Doc]:
            rows = conn.execute(
                f"SELECT id, record::text FROM {self._s}.episodes WHERE scope = %s ORDER BY ordinal",
                [self.scope],
            ).fetchall()
            return [self._decode(text, "episodes.record", f"episode {id_!r}") for id_, text in rows]

        return iter(self._run("reading episodes of", work))

    def episodes_after(self, mark: int) -> tuple[list[tuple[int, Doc]], int]:
        def work(conn: Connection[tuple[Any, ...]]) -> tuple[list[tuple[int, Doc]], int]:
            rows = conn.execute(
                f"SELECT ordinal, id, record::text FROM {self._s}.episodes "
                "WHERE scope = %s AND ordinal > %s ORDER BY ordinal",
                [self.scope, mark],
            ).fetchall()
            found = [
                (int(ordinal), self._decode(text, "episodes.record", f"episode {id_!r}"))
                for ordinal, id_, text in rows
            ]
            return found, (found[-1][0] if found else mark)

        return self._run("reading episodes of", work)

    def read_episodes(self, locations: Sequence[int]) -> dict[int, Doc]:
        if not locations:
            return {}

        def work(conn: Connection[tuple[Any, ...]]) -> dict[int, Doc]:
            rows = conn.execute(
                f"SELECT ordinal, id, record::text FROM {self._s}.episodes "
                "WHERE scope = %s AND ordinal = ANY(%s::int8[])",
                [self.scope, list(locations)],
            ).fetchall()
            return {
                int(ordinal): self._decode(text, "episodes.record", f"episode {id_!r}")
                for ordinal, id_, text in rows
            }

        return self._run("reading episodes of", work)

    def read_summary(self) -> Doc | None:
        def work(conn: Connection[tuple[Any, ...]]) -> Doc | None:
            row = conn.execute(
                f"SELECT summary::text FROM {self._s}.summaries WHERE scope = %s", [self.scope]
            ).fetchone()
            if row is None:
                return None
            summary = self._decode(row[0], "summaries.summary", "the summary")
            if not isinstance(summary, dict):
                raise self._corrupt("summaries.summary", "is not a JSON object")
            return summary

        return self._run("reading the summary of", work)

    def read_derived(self, name: str) -> bytes | None:
        """Derived data kept with the scope under ``name`` (an index), or ``None``."""

        def work(conn: Connection[tuple[Any, ...]]) -> bytes | None:
            with conn.cursor(binary=True) as cursor:
                row = cursor.execute(
                    f"SELECT data FROM {self._s}.derived WHERE scope = %s AND name = %s",
                    [self.scope, name],
                ).fetchone()
            return bytes(row[0]) if row is not None else None

        return self._run("reading derived data of", work)

    def write_derived(self, name: str, data: bytes) -> None:
        """Replace the derived data ``name`` (readers see the old or the new bytes).

        The scope must exist (derived data describes something stored); a
        rewrite drops it all.
        """

        def work(conn: Connection[tuple[Any, ...]]) -> None:
            conn.execute(
                f"INSERT INTO {self._s}.derived (scope, name, data) "
                f"SELECT %s, %s, %s WHERE EXISTS (SELECT 1 FROM {self._s}.scopes "
                "WHERE scope = %s) ON CONFLICT (scope, name) DO UPDATE "
                "SET data = EXCLUDED.data, updated_at = now()",
                [self.scope, name, bytes(data), self.scope],
            )

        self._run("writing derived data of", work)

    def write_derived_later(self, name: str, make: Callable[[], bytes]) -> None:
        """:meth:`write_derived` of ``make()``, now."""
        self.write_derived(name, make())

    # ---------------------------------------------------------------- locking

    def lock(self, timeout: float) -> contextlib.AbstractContextManager[None]:
        return self._hold(timeout)

    @contextlib.contextmanager
    def _hold(self, timeout: float) -> Iterator[None]:
        """Hold the scope's advisory lock for the ``with`` block.

        Raises:
            StoreConflict: another handle or process kept it for ``timeout`` seconds.
        """
        started = time.monotonic()
        if not self._writer.acquire(timeout=max(timeout, 0.0)):
            raise self._lock_timeout(timeout)
        try:
            left = max(timeout - (time.monotonic() - started), 0.0)
            self._acquire(left, timeout)
            try:
                yield
            finally:
                self._release()
        finally:
            self._writer.release()

    def _lock_timeout(self, timeout: float) -> StoreConflict:
        return StoreConflict(
            f"scope {self.scope!r} is locked by another writer; gave up after {timeout:g} s "
            "(raise `lockTimeout` or serialize the writers)"
        )

    def _acquire(self, left: float, timeout: float) -> None:
        from psycopg import errors as pg

        since = self._seen_seq

        def work(conn: Connection[tuple[Any, ...]]) -> None:
            # Try the lock and read the commits after ``since`` in one round trip.
            # The read runs after the lock is granted, so while the lock is held no
            # other writer can add to what it found: the engine's catch-up right
            # after taking the lock is answered from it.
            with conn.pipeline():
                tried = conn.execute("SELECT pg_try_advisory_lock(%s)", [self._key])
                changes = conn.cursor(binary=True)
                changes.execute(self._changes_sql, [since, self.scope])
            row = tried.fetchone()
            if row and row[0]:
                self._prefetched = (since, changes.fetchall())
                return  # it was free
            # Held elsewhere: wait server-side, bounded by lock_timeout. No polling,
            # and the lock is granted the moment the holder releases it.
            wait = f"{max(1, round(left * 1000))}ms"  # 0 would mean "wait forever"
            conn.execute("SELECT set_config('lock_timeout', %s, false)", [wait])
            try:
                conn.execute("SELECT pg_advisory_lock(%s)", [self._key])
            except pg.LockNotAvailable:
                raise self._lock_timeout(timeout) from None
            finally:
                if not conn.broken:
                    conn.execute("SELECT set_config('lock_timeout', '0', false)")

        self._run("locking", work, pin=True)

    def _release(self) -> None:
        conn, self._held_by = self._held_by, None
        self._prefetched = None
        if conn is None or conn.closed or conn.broken:
            return  # the server released it with the session
        # Nobody needs the reply: the server frees the lock as soon as this arrives.
        send_and_forget(conn, b"SELECT pg_advisory_unlock($1::bigint)", [str(self._key).encode()])
        self._pool.give(conn)

    def _require_lock(self) -> Connection[tuple[Any, ...]]:
        conn = self._held_by
        if conn is None:
            raise StoreConflict(f"write to scope {self.scope!r} without holding its lock")
        if conn.closed or conn.broken:
            raise self._lost_lock("the connection is closed")
        self._prefetched = None  # this handle changes the scope now
        return conn

    def _lost_lock(self, reason: str) -> StoreUnavailable:
        return StoreUnavailable(
            f"lost the connection to PostgreSQL while holding scope {self.scope!r}'s lock "
            f"({reason}); the lock is gone and nothing more was written: retry the write"
        )

    def _lock_scope_row(self, conn: Connection[tuple[Any, ...]]) -> tuple[Any, ...]:
        """The scope's row, locked for this transaction (created if missing)."""
        query = (
            "SELECT epoch, last_seq, vector_model, vector_dim, vector_count, vector_generation, "
            f"image_generation FROM {self._s}.scopes WHERE scope = %s FOR UPDATE"
        )
        row = conn.execute(query, [self.scope]).fetchone()
        if row is None:
            conn.execute(
                f"INSERT INTO {self._s}.scopes (scope) VALUES (%s) ON CONFLICT DO NOTHING",
                [self.scope],
            )
            row = conn.execute(query, [self.scope]).fetchone()
            assert row is not None
        return row

    def _check_epoch(self, epoch: int) -> None:
        if self._epoch is not None and epoch != self._epoch:
            raise StoreConflict(
                f"scope {self.scope!r} moved on: it was rewritten since this handle read it; "
                "reload and retry"
            )

    # ---------------------------------------------------------------- writing
    def commit(self, commit: Commit) -> None:
        self._require_lock()
        ops = orjson.dumps(list(commit.ops), option=orjson.OPT_SERIALIZE_NUMPY).decode()
        batch = commit.vectors
        model, dim, ids, data = None, 0, None, None
        if batch is not None and len(batch.ids):
            matrix = np.ascontiguousarray(batch.matrix, dtype="<f4")
            model, ids, data = batch.model, list(batch.ids), matrix.tobytes()
            dim = int(matrix.shape[1]) if matrix.ndim == 2 else 0
        params = {
            "scope": self.scope,
            "seq": commit.seq,
            "at": commit.at,
            "next_id": commit.next_id,
            "ops": ops,
            "model": model,
            "dim": dim,
            "ids": ids,
            "data": data,
            "size": len(ops) + len(data or b""),
            "epoch": self._epoch,
        }

        def work(conn: Connection[tuple[Any, ...]]) -> tuple[int, int, int]:
            # One statement is one transaction: lock the scope's row, insert the commit
            # only if it follows last_seq in the epoch this handle read, advance the
            # counters. All or nothing, in one round trip.
            row = conn.execute(self._commit_sql, params).fetchone()
            if row is None:  # the scope's first commit: create its row first
                with conn.transaction():
                    self._lock_scope_row(conn)
                    row = conn.execute(self._commit_sql, params).fetchone()
            assert row is not None
            epoch, last_seq, journal, checkpoint = row
            if journal is None:
                self._check_epoch(epoch)
                raise StoreConflict(
                    f"scope {self.scope!r} moved on: commit {commit.seq} does not follow "
                    f"{last_seq}; reload and retry"
                )
            return int(epoch), int(journal), int(checkpoint)

        self._epoch, self._journal_bytes, self._checkpoint_bytes = self._run("committing to", work)
        self._seen_seq = commit.seq

    @property
    def _commit_sql(self) -> str:
        return (
            f"WITH scope AS (SELECT epoch, last_seq FROM {self._s}.scopes "
            "WHERE scope = %(scope)s FOR UPDATE), "
            f"added AS (INSERT INTO {self._s}.commits (scope, seq, at, next_id, ops, "
            "vector_model, vector_dim, vector_ids, vector_data) "
            "SELECT %(scope)s, %(seq)s, %(at)s::text, %(next_id)s, %(ops)s::json, "
            "%(model)s::text, %(dim)s, %(ids)s::text[], %(data)s::bytea FROM scope "
            "WHERE scope.last_seq = %(seq)s - 1 "
            "AND (%(epoch)s::bigint IS NULL OR scope.epoch = %(epoch)s::bigint) RETURNING seq), "
            f"moved AS (UPDATE {self._s}.scopes SET last_seq = %(seq)s, "
            "journal_bytes = journal_bytes + %(size)s, updated_at = now() "
            "WHERE scope = %(scope)s AND EXISTS (SELECT 1 FROM added) "
            "RETURNING journal_bytes, checkpoint_bytes) "
            "SELECT scope.epoch, scope.last_seq, moved.journal_bytes, moved.checkpoint_bytes "
            "FROM scope LEFT JOIN moved ON true"
        )

    def checkpoint_due(self) -> bool:
        """Whether the journal outgrew its share of the checkpoint (no query: the
        sizes come back with every commit this handle makes, and with each load)."""
        return journal_outgrew(
            self._journal_bytes,
            self._checkpoint_bytes,
            minimum=MIN_JOURNAL_BYTES,
            ratio=JOURNAL_RATIO,
        )

    def checkpoint(
        self,
        graph: Graph,
        vectors: VectorIndex | None,
        episodes: Sequence[Doc],
        *,
        force: bool = False,
    ) -> bool:
        if not (force or self.checkpoint_due()):
            return False
        self._require_lock()
        seq = graph.seq
        image, document, index = self._image_of(graph)

        def work(conn: Connection[tuple[Any, ...]]) -> tuple[int, int]:
            with conn.transaction():
                row = self._lock_scope_row(conn)
                epoch, last_seq, generation = row[0], row[1], row[6] + 1
                self._check_epoch(epoch)
                if seq != last_seq:
                    raise StoreConflict(
                        f"scope {self.scope!r} moved on: a checkpoint of seq {seq} cannot fold "
                        f"the journal, which ends at {last_seq}; reload and retry"
                    )
                if episodes:
                    self._insert_episodes(conn, episodes, upsert=True)
                ids = self._save_vectors(conn, vectors, row)
                self._write_image(conn, generation, document, index(generation), ids)
                conn.execute(
                    f"UPDATE {self._s}.scopes SET checkpoint = NULL, checkpoint_seq = %s, "
                    "image_generation = %s, checkpoint_bytes = %s, journal_bytes = 0, "
                    "updated_at = now() WHERE scope = %s",
                    [seq, generation, len(document), self.scope],
                )
                # The image before this one stays for readers in the middle of a call.
                conn.execute(
                    f"DELETE FROM {self._s}.images WHERE scope = %s AND generation < %s",
                    [self.scope, generation - 1],
                )
                conn.execute(
                    f"DELETE FROM {self._s}.commits WHERE scope = %s AND seq <= %s",
                    [self.scope, seq],
                )
                return int(epoch), int(generation)

        self._epoch, generation = self._run("checkpointing", work)
        self._seen_seq, self._image = seq, generation
        self._checkpoint_bytes, self._journal_bytes = len(document), 0
        if image is not None:
            # Read from what was just written from now on, so the next checkpoint copies
            # what did not change since this one (as the directory store does).
            remote = RemoteImage(self._image_reader(generation), len(document))
            graph.rebase(image.saved(remote, self._image_path(generation)))
        return True

    def _image_of(
        self, graph: Graph
    ) -> tuple[GraphImage | None, bytes, Callable[[int], bytes | None]]:
        """``graph``'s checkpoint image (None when it cannot be indexed), its bytes, and
        a function giving its index for a generation."""
        image = encode(graph) if indexable(graph) else None
        if image is None:
            document = orjson.dumps(graph.to_document())
            return None, document, lambda generation: None
        size = len(image.graph_json)
        return image, image.graph_json, lambda generation: image.index_bytes((size, generation))

    def _write_image(
        self,
        conn: Connection[tuple[Any, ...]],
        generation: int,
        document: bytes,
        index: bytes | None,
        vector_ids: Sequence[str],
    ) -> None:
        conn.execute(
            f"INSERT INTO {self._s}.images (scope, generation, document, document_index, "
            "vector_ids) VALUES (%s, %s, %s, %s, %s)",
            [self.scope, generation, document, index, pack_ids(vector_ids)],
        )

    def rewrite(self, document: Doc, vectors: VectorIndex | None, episodes: Sequence[Doc]) -> None:
        self._require_lock()
        seq = int(document.get("checkpointSeq") or 0)
        _image, data, index = self._image_of(Graph.from_document(document))

        def work(conn: Connection[tuple[Any, ...]]) -> tuple[int, int]:
            with conn.transaction():
                row = self._lock_scope_row(conn)
                generation = row[6] + 1
                if row[1] != self._seen_seq or (self._epoch is not None and row[0] != self._epoch):
                    raise StoreConflict(
                        f"scope {self.scope!r} moved on: another writer committed since this "
                        "handle read it, and a rewrite would drop that; reload and retry"
                    )
                rows = self._rows_to_save(vectors, 0)  # read before the old rows go
                for table in ("commits", "episodes", "vectors", "images", "derived"):
                    conn.execute(f"DELETE FROM {self._s}.{table} WHERE scope = %s", [self.scope])
                self._insert_episodes(conn, episodes, upsert=False)
                ids = self._save_vectors(conn, vectors, row, replace=True, rows=rows)
                self._write_image(conn, generation, data, index(generation), ids)
                new = conn.execute(
                    f"UPDATE {self._s}.scopes SET epoch = epoch + 1, last_seq = %s, "
                    "checkpoint_seq = %s, checkpoint = NULL, image_generation = %s, "
                    "checkpoint_bytes = %s, journal_bytes = 0, updated_at = now() "
                    "WHERE scope = %s RETURNING epoch",
                    [seq, seq, generation, len(data), self.scope],
                ).fetchone()
                assert new is not None
                return int(new[0]), int(generation)

        self._epoch, generation = self._run("rewriting", work)
        self._seen_seq, self._image = seq, generation
        self._checkpoint_bytes, self._journal_bytes = len(data), 0

    def _insert_episodes(
        self, conn: Connection[tuple[Any, ...]], episodes: Sequence[Doc], *, upsert: bool
    ) -> None:
        if not episodes:
            return
        conflict = " ON CONFLICT (scope, id) DO UPDATE SET record = EXCLUDED.record"
        if not upsert:  # rewrite: the table holds nothing of this scope; last duplicate wins
            unique = {e["id"]: e for e in episodes}
            episodes = list(unique.values())
            conflict = ""
        with conn.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {self._s}.episodes (scope, id, record) VALUES (%s, %s, %s){conflict}",
                [(self.scope, e["id"], orjson.dumps(e).decode()) for e in episodes],
            )

    @staticmethod
    def _rows_to_save(index: VectorIndex | None, start: int) -> Matrix | None:
        """The index's rows from ``start`` on (its stored rows are read first, if need be)."""
        if index is None or not len(index):
            return None
        return np.ascontiguousarray(index.rows(start, len(index)), dtype="<f4")

    def _save_vectors(
        self,
        conn: Connection[tuple[Any, ...]],
        index: VectorIndex | None,
        row: tuple[Any, ...],
        *,
        replace: bool = False,
        rows: Matrix | None = None,
    ) -> Sequence[str]:
        """Store the index: append its new rows when the stored ones are its prefix.

        ``row`` is the scope's locked row. The stored rows are replaced instead
        when the model or dimension changed, or when they are not this index's
        first rows (another process kept vectors this one does not have).
        ``rows`` are the index's rows when the caller read them already. Returns
        the ids of the stored rows.
        """
        model, dim, count, generation = row[2], row[3], row[4], row[5]
        if index is None or not len(index):
            if replace:
                self._set_vectors(conn, None, 0, 0, generation + 1, [])
                self._drop_coarse(conn)
                return []
            return self._stored_vector_ids(conn, count, generation)
        total, ids = len(index), index.compact_ids()
        width = index.dimension or 0
        start = 0
        if not replace and model == index.model and dim == width and count <= total:
            stored = self._stored_vector_ids(conn, count, generation)
            start = count if stored == ids[:count] else 0
            if start == total:
                self._save_coarse(conn, index)
                return ids
        if rows is None or start:
            rows = self._rows_to_save(index, start)  # before the old rows are deleted
        assert rows is not None
        if start == 0:
            conn.execute(f"DELETE FROM {self._s}.vectors WHERE scope = %s", [self.scope])
            generation += 1
            self._drop_coarse(conn)  # row numbers changed
        copy_sql = (
            f"COPY {self._s}.vectors (scope, row_index, obs_id, data) FROM STDIN (FORMAT BINARY)"
        )
        with conn.cursor() as cursor, cursor.copy(copy_sql) as copy:
            copy.set_types(["text", "int4", "text", "bytea"])
            for offset in range(total - start):
                number = start + offset
                copy.write_row((self.scope, number, ids[number], rows[offset].tobytes()))
        self._set_vectors(conn, index.model, width, total, generation, ids)
        self._save_coarse(conn, index)
        return ids

    def _save_coarse(self, conn: Connection[tuple[Any, ...]], index: VectorIndex) -> None:
        """Keep the index's approximate (IVF) index with the rows it covers, if it has one."""
        coarse = index.coarse
        if coarse is None or coarse.covered > len(index):
            return
        centroids = np.ascontiguousarray(coarse.centroids, dtype="<f4")
        if centroids.ndim != 2 or centroids.shape[1] != (index.dimension or 0):
            return
        labels = np.ascontiguousarray(coarse.labels, dtype="<i4")
        conn.execute(
            f"INSERT INTO {self._s}.coarse (scope, lists, dim, centroids, labels) "
            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (scope) DO UPDATE SET lists = EXCLUDED.lists,"
            " dim = EXCLUDED.dim, centroids = EXCLUDED.centroids, labels = EXCLUDED.labels",
            [
                self.scope,
                centroids.shape[0],
                centroids.shape[1],
                centroids.tobytes(),
                labels.tobytes(),
            ],
        )

    def _drop_coarse(self, conn: Connection[tuple[Any, ...]]) -> None:
        conn.execute(f"DELETE FROM {self._s}.coarse WHERE scope = %s", [self.scope])

    def _set_vectors(
        self,
        conn: Connection[tuple[Any, ...]],
        model: str | None,
        dim: int,
        count: int,
        generation: int,
        ids: Sequence[str],
    ) -> None:
        conn.execute(
            f"UPDATE {self._s}.scopes SET vector_model = %s, vector_dim = %s, vector_count = %s, "
            "vector_generation = %s WHERE scope = %s",
            [model, dim, count, generation, self.scope],
        )
        # Takes effect only if the transaction commits; a rollback raises before use.
        self._vector_ids = ids if isinstance(ids, IdColumn) else list(ids)
        self._vector_generation = generation
        rows = self._rows
        if rows is not None and rows.generation != generation:
            self._rows = None  # replaced: the rows read so far are not these

    def _stored_vector_ids(
        self, conn: Connection[tuple[Any, ...]], count: int, generation: int
    ) -> Sequence[str]:
        """The ids of the first ``count`` stored rows (reading only what this handle lacks)."""
        known = self._vector_ids if self._vector_generation == generation else []
        if len(known) > count:
            known = []
        if len(known) < count:
            rows = conn.execute(
                f"SELECT obs_id FROM {self._s}.vectors WHERE scope = %s AND row_index >= %s "
                "AND row_index < %s ORDER BY row_index",
                [self.scope, len(known), count],
            ).fetchall()
            known = joined_ids(known, [r[0] for r in rows])
        self._vector_ids, self._vector_generation = known, generation
        return known

    def write_summary(self, summary: Doc) -> None:
        text = orjson.dumps(summary).decode()

        def work(conn: Connection[tuple[Any, ...]]) -> None:
            conn.execute(
                f"INSERT INTO {self._s}.summaries (scope, summary) VALUES (%s, %s) "
                "ON CONFLICT (scope) DO UPDATE SET summary = EXCLUDED.summary, updated_at = now()",
                [self.scope, text],
            )

        self._run("writing the summary of", work)

    def delete_summary(self) -> None:
        """Remove the scope's summary (``read_summary`` answers ``None`` afterwards)."""

        def work(conn: Connection[tuple[Any, ...]]) -> None:
            conn.execute(f"DELETE FROM {self._s}.summaries WHERE scope = %s", [self.scope])

        self._run("deleting the summary of", work)

    def close(self) -> None:
        """Give back the connection held for the lock, if any, and forget the rows read."""
        with self._io:
            conn, self._held_by = self._held_by, None
            self._rows = None
            if conn is not None:
                conn.close()  # ends the session, and with it the lock
