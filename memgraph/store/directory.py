"""The default store: one directory of plain files per scope.

Layout of ``<dir>/<scope>/``::

    graph.json      checkpoint: Agency's graph.json shape (+ checkpointSeq, extra fields)
    graph.idx       index of the checkpoint (byte spans, ids, keyword arrays) so a scope
                    opens without parsing graph.json; derived, rebuilt at checkpoints
    journal.jsonl   one JSON commit per line since the checkpoint (fsync'd before a
                    write returns); a torn last line is dropped on load
    episodes.jsonl  raw remembered texts, appended at checkpoints
    vectors.npy     float32 rows, memory-mapped; appended in place at checkpoints
    vectors.json    header: format, model, dim, count, ids (row order)
    summary.json    compacted conversation summary
    .lock           the single-writer lock file

The cost of one write is one appended journal line and one fsync; checkpoints
fold the journal into ``graph.json`` when the journal outgrows a fraction of
the checkpoint, so their cost is amortized and cold loads replay little.
"""

from __future__ import annotations

import contextlib
import io
import logging
import mmap
import os
import threading
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from memgraph.background import InThread
from memgraph.errors import StoreConflict, StoreCorrupt, StoreError, StoreUnavailable
from memgraph.graph.graph import Graph
from memgraph.graph.records import (
    ChecksumMismatch,
    RecordDamaged,
    has_checksum,
    read_record,
    read_tail,
    seal_record,
    sealed_line,
)
from memgraph.graph.saved import SavedGraph
from memgraph.graph.snapshot import INDEX_MAGIC, GraphImage, encode, indexable, read_index
from memgraph.id_column import IdColumn
from memgraph.retrieval.ivf import CoarseIndex
from memgraph.retrieval.vectors import VectorIndex
from memgraph.store.base import Commit, Doc, Snapshot, VectorSet, journal_outgrew
from memgraph.store.files import (
    FILE_MODE,
    AtomicWrite,
    FileLock,
    atomic_write,
    ensure_dir,
    fsync_dir,
    read_derived,
    seal,
    write_all,
)
from memgraph.store.readers import (
    NPY_HEADER_BYTES,
    PACKED_VECTOR_FORMAT,
    VECTOR_FORMAT,
    block_crc,
    damaged,
    decode_error,
    doctor_hint,
    pack_row_ids,
    parse_episodes,
    parse_graph,
    parse_summary,
    parse_vectors_header,
    read_coarse,
    read_npy_rows,
    vector_blocks_damaged,
)

log = logging.getLogger("memgraph")

__all__ = ["NPY_HEADER_BYTES", "VECTOR_FORMAT", "DirectoryStore", "doctor_hint", "read_npy_rows"]
MIN_JOURNAL_BYTES = 1 << 20
JOURNAL_RATIO = 0.25
OPS_RATIO = 0.125  # journal ops (replayed through the graph on load) per byte of graph.json
start_atomic_write = AtomicWrite  # graph.json is written while it is being encoded


def _npy_header(rows: int, dim: int) -> bytes:
    body = f"{{'descr': '<f4', 'fortran_order': False, 'shape': ({rows}, {dim}), }}"
    header = body.encode("latin1")
    total = NPY_HEADER_BYTES - 10
    return b"\x93NUMPY\x01\x00" + total.to_bytes(2, "little") + header.ljust(total - 1) + b"\n"


def _vector_payload(record: Any) -> int:
    """Bytes of base64 vector data in one journal record."""
    vectors = record.get("vectors") if isinstance(record, dict) else None
    payload = vectors.get("b64") if isinstance(vectors, dict) else None
    return len(payload) if isinstance(payload, str) else 0


def _random_access(mapping: mmap.mmap | None) -> None:
    """Tell the kernel reads of ``mapping`` (graph.json) jump around: a lookup parses
    one record here and there, so pages are read as they are touched, without
    read-ahead. (Not for vectors.npy: a vector search reads whole lists of rows,
    and mapping neighbouring pages in one fault is cheaper there.)"""
    if mapping is not None and hasattr(mmap, "MADV_RANDOM"):
        with contextlib.suppress(OSError, ValueError):
            mapping.madvise(mmap.MADV_RANDOM)


class DirectoryStore:
    """Persist one scope as plain files under ``root / scope``."""

    def __init__(self, root: Path | str, scope: str) -> None:
        self.scope = scope
        self.path = Path(root) / scope
        self.graph_path = self.path / "graph.json"
        self.index_path = self.path / "graph.idx"
        self.journal_path = self.path / "journal.jsonl"
        self.episodes_path = self.path / "episodes.jsonl"
        self.vectors_path = self.path / "vectors.npy"
        self.header_path = self.path / "vectors.json"
        self.ivf_path = self.path / "vectors.ivf.npz"
        self.summary_path = self.path / "summary.json"
        self._lock = FileLock(self.path / ".lock", scope)
        self._journal_fd: int | None = None
        # A read-only fd on the journal this handle has read. Holding it open keeps
        # the file's inode from being reused by a newer journal, so "same inode" on
        # the path always means "same journal"; None until a journal was seen.
        self._pin: int | None = None
        self._graph_stamp: tuple[int, int, int, int] | None = None
        self._offset = 0  # bytes of the journal consumed (complete lines only)
        self._journal_lines = 0
        self._last_seq = 0
        self._checkpoint_bytes = 0
        self._journal_vector_bytes = 0  # base64 vector payload in the journal lines read
        self._vector_count = 0
        self._vector_dim: int | None = None
        self._vector_model: str | None = None
        self._vector_blocks: list[tuple[int, int]] = []
        self._journal_sealed = False  # a line with a checksum was read: later ones need one
        self._vector_check: threading.Thread | None = None
        # The episodes this handle appended last: (file, start, end) and each one's
        # location, so reading them back after a checkpoint needs no parsing.
        self._appended: tuple[tuple[int, int], int, int, list[tuple[int, Doc]]] | None = None
        self._deriving: InThread | None = None  # derived files being written, in order
        self.vector_problems: list[tuple[int, int]] = []  # row ranges failing their checksum

    # ------------------------------------------------------------------ reading
    def exists(self) -> bool:
        return self.journal_path.exists() or self.graph_path.exists()

    def load(self) -> Snapshot:
        snapshot = Snapshot()
        # Open the journal *before* reading the checkpoint: if a checkpoint lands in
        # between, the journal opened here still holds every commit the checkpoint
        # read below may lack (and the newer journal would miss them).
        self._unpin()
        try:
            self._pin = os.open(self.journal_path, os.O_RDONLY)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise StoreUnavailable(f"cannot read {str(self.journal_path)!r}: {exc}") from exc
        tail: Doc | None = None
        saved = self._open_saved()
        if saved is not None:
            snapshot.saved = saved
            checkpoint_seq = saved.seq
            self._checkpoint_bytes = len(saved.data)
            tail = saved.tail
        else:
            self._graph_stamp = self._stamp(self.graph_path)
            raw = self._read_bytes(self.graph_path)
            self._checkpoint_bytes = len(raw or b"")
            # An empty graph.json is damaged too (memgraph never writes one).
            snapshot.document = parse_graph(self.graph_path, raw) if raw is not None else None
            tail = snapshot.document
            checkpoint_seq = (snapshot.document or {}).get("checkpointSeq") or 0
        self._check_episodes_size(tail)
        self._last_seq = checkpoint_seq
        self._offset = 0
        self._journal_lines = 0
        self._journal_vector_bytes = 0
        self._journal_sealed = False
        snapshot.commits = [c for c in self._read_journal() if c.seq > checkpoint_seq]
        snapshot.vectors = self._load_vectors()
        return snapshot

    @staticmethod
    def _read_bytes(path: Path) -> bytes | None:
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreUnavailable(f"cannot read {str(path)!r}: {exc}") from exc

    def _check_episodes_size(self, tail: Doc | None) -> None:
        """Warn when ``episodes.jsonl`` is shorter than the checkpoint says it was
        (episodes are lost: damage, not a crash, since episodes are appended before
        the checkpoint that counts them is written)."""
        expected = (tail or {}).get("episodesBytes")
        if type(expected) is not int or not expected:
            return
        try:
            size = os.stat(self.episodes_path).st_size
        except FileNotFoundError:
            size = 0
        if size < expected:
            log.warning(
                "memgraph: %s holds %d bytes but the checkpoint was written when it held %d: "
                "remembered texts were lost; run %s",
                self.episodes_path,
                size,
                expected,
                doctor_hint(self.episodes_path),
            )

    def _open_saved(self) -> SavedGraph | None:
        """The checkpoint memory-mapped with its index, if the index describes it.

        The index is derived data: when it is missing, stale (another
        ``graph.json``), fails its checksum or disagrees with ``graph.json``'s own
        values, the caller parses ``graph.json`` in full (and the next checkpoint
        writes a new index).
        """
        body = read_derived(self.index_path, INDEX_MAGIC)
        if body is None:
            return None
        try:
            fd = os.open(self.graph_path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreUnavailable(f"cannot read {str(self.graph_path)!r}: {exc}") from exc
        try:
            stat = os.fstat(fd)
            if stat.st_size == 0:
                return None
            data = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
            _random_access(data)
        finally:
            os.close(fd)
        try:
            tail = read_tail(data)
            saved = read_index(body, data, (stat.st_size, stat.st_mtime_ns), tail)
        except RecordDamaged:
            data.close()
            return None  # graph.json itself is damaged: the full parse says where
        except (ValueError, KeyError, TypeError, IndexError, AttributeError, zlib.error) as exc:
            log.warning(
                "memgraph: ignoring %s, which is derived data: %s; parsing %s in full",
                self.index_path,
                exc,
                self.graph_path,
            )
            data.close()
            return None
        saved.path = str(self.graph_path)
        saved.tail = tail
        self._graph_stamp = (stat.st_dev, stat.st_ino, stat.st_mtime_ns, stat.st_size)
        return saved

    def _load_vectors(self) -> VectorSet | None:
        raw = self._read_bytes(self.header_path)
        if raw is None:
            self._vector_count, self._vector_model, self._vector_blocks = 0, None, []
            return None
        header = parse_vectors_header(self.header_path, raw)
        count = len(header.ids)
        matrix = read_npy_rows(self.vectors_path, count) if count else None
        if matrix is not None and header.dim is not None and matrix.shape[1] != header.dim:
            raise damaged(
                self.vectors_path,
                f"header (shape {matrix.shape})",
                f"rows of {matrix.shape[1]} floats, but {str(self.header_path)!r} says "
                f"{header.dim}",
                vectors=True,
            )
        self._vector_count, self._vector_model = count, header.model
        self._vector_blocks = list(header.blocks)
        self._vector_dim = matrix.shape[1] if matrix is not None else None
        if matrix is None:
            return VectorSet(header.model, [], np.zeros((0, 0), np.float32))
        self._check_vectors_later(matrix, header.blocks)
        return VectorSet(header.model, header.ids, matrix, self._load_coarse(count))

    def _check_vectors_later(
        self, matrix: np.ndarray[Any, np.dtype[np.float32]], blocks: list[tuple[int, int]]
    ) -> None:
        """Verify the rows' checksums in the background (reading every row costs about
        0.1 s per 100,000 rows of 384 floats, too much for an open); a damaged block
        is logged with the repair command, and :meth:`wait_for_vector_check` tells."""
        self.vector_problems = []
        if not blocks:
            return

        def check() -> None:
            found = vector_blocks_damaged(matrix, blocks)
            self.vector_problems = found
            for start, end in found:
                log.warning(
                    "memgraph: %s rows %d-%d fail their checksum: those vectors are damaged; "
                    "run %s to rebuild them from the observations",
                    self.vectors_path,
                    start,
                    end - 1,
                    doctor_hint(self.vectors_path, repair=True),
                )

        self._vector_check = threading.Thread(target=check, name="memgraph-crc", daemon=True)
        self._vector_check.start()

    def wait_for_vector_check(self, timeout: float | None = None) -> list[tuple[int, int]]:
        """Wait for the background check of the vectors' checksums; the damaged row ranges."""
        if self._vector_check is not None:
            self._vector_check.join(timeout)
        return list(self.vector_problems)

    def _load_coarse(self, count: int) -> CoarseIndex | None:
        """The saved approximate index, if it fits these vectors (it is derived data:
        anything unusable is ignored and rebuilt in the background)."""
        try:
            centroids, labels = read_coarse(self.ivf_path)
        except FileNotFoundError:
            return None
        except ValueError as exc:
            log.warning(
                "memgraph: ignoring %s, which is derived data: %s; rebuilding it",
                self.ivf_path,
                exc,
            )
            return None
        if len(labels) > count or (
            len(labels) and (int(labels.min()) < 0 or int(labels.max()) >= len(centroids))
        ):
            return None
        return CoarseIndex(centroids, labels)

    def _read_journal(self) -> list[Commit]:
        """Commits from the consumed offset on; complete, intact lines only.

        A damaged *last* line is a write torn by a crash: it is not consumed,
        and the next commit truncates it away. A damaged line before the last
        one (unparseable, or failing its checksum) is corruption and raises.
        """
        if self._pin is None:
            return []
        data = _read_from(self._pin, self._offset)
        commits: list[Commit] = []
        lines = data.split(b"\n")[:-1]  # the piece after the last newline is incomplete
        consumed = 0
        for index, line in enumerate(lines):
            number = self._journal_lines + index + 1
            try:
                record = read_record(line, required=self._journal_sealed)
                commit = Commit.from_record(record)
            except (RecordDamaged, AttributeError, KeyError, TypeError, ValueError) as exc:
                last = index == len(lines) - 1 and consumed + len(line) + 1 == len(data)
                if last and not isinstance(exc, ChecksumMismatch):
                    break  # torn last line: leave it unconsumed (a whole line that fails
                    # its checksum was written completely, so it is damage, not a tear)
                raise decode_error(self.journal_path, exc, line=number) from exc
            self._journal_sealed = self._journal_sealed or has_checksum(line)
            consumed += len(line) + 1
            self._journal_vector_bytes += _vector_payload(record)
            if commit.seq <= self._last_seq:
                continue
            if commit.seq != self._last_seq + 1:
                raise StoreCorrupt(
                    f"{str(self.journal_path)!r} line {number}: commit {commit.seq} follows "
                    f"{self._last_seq}; commits are missing. It was left untouched; run "
                    f"{doctor_hint(self.journal_path)} to inspect it.",
                    path=str(self.journal_path),
                    position=f"line {number}",
                )
            self._last_seq = commit.seq
            commits.append(commit)
        self._offset += consumed
        self._journal_lines += data[:consumed].count(b"\n")
        return commits

    def changes_since(self, seq: int) -> list[Commit] | None:
        if seq != self._last_seq:
            return None  # this handle cannot list the commits between seq and where it is
        try:
            stat = os.stat(self.journal_path)
        except FileNotFoundError:
            # No journal (yet): nothing changed unless the checkpoint did (an
            # imported Agency graph.json is read once, not on every call).
            if self._pin is not None or self._stamp(self.graph_path) != self._graph_stamp:
                return None
            return []
        if not self._is_pinned(stat):
            return None  # a checkpoint replaced the journal (or created the first one)
        if stat.st_size == self._offset:
            return []
        return self._read_journal()

    @staticmethod
    def _stamp(path: Path) -> tuple[int, int, int, int] | None:
        """Identity of a file's current version (None when it does not exist)."""
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            return None
        return (stat.st_dev, stat.st_ino, stat.st_mtime_ns, stat.st_size)

    def _is_pinned(self, stat: os.stat_result) -> bool:
        """True when ``stat`` describes the journal this handle has read."""
        if self._pin is None:
            return False
        pinned = os.fstat(self._pin)
        return (stat.st_dev, stat.st_ino) == (pinned.st_dev, pinned.st_ino)

    def _unpin(self) -> None:
        if self._pin is not None:
            os.close(self._pin)
            self._pin = None

    def episodes(self) -> Iterator[Doc]:
        raw = self._read_bytes(self.episodes_path)
        if raw is None:
            return iter(())
        found = parse_episodes(raw)
        if found.bad:
            number, problem = found.bad[0]
            raise StoreCorrupt(
                f"{str(self.episodes_path)!r} line {number} is damaged ({problem}). It was "
                f"left untouched; run {doctor_hint(self.episodes_path)} to inspect it.",
                path=str(self.episodes_path),
                position=f"line {number}",
            )
        return iter(found.episodes.values())

    def episodes_after(self, mark: int) -> tuple[list[tuple[int, Doc]], int]:
        appended, self._appended = self._appended, None
        try:
            fd = os.open(self.episodes_path, os.O_RDONLY)
        except FileNotFoundError:
            if mark:
                raise ValueError(
                    f"mark {mark} is past the end of a missing episodes file"
                ) from None
            return [], 0
        try:
            stat = os.fstat(fd)
            size = stat.st_size
            if appended is not None:
                file, start, end, records = appended
                if (stat.st_dev, stat.st_ino) == file and mark == start and size == end:
                    # Exactly what this handle appended (under the lock) since the mark.
                    return [(location, dict(doc)) for location, doc in records], end
            if mark > size:
                raise ValueError(f"mark {mark} is past the end of {str(self.episodes_path)!r}")
            data = _read_from(fd, mark)
        finally:
            os.close(fd)
        end = data.rfind(b"\n") + 1  # a torn last line is not an episode yet
        found: list[tuple[int, Doc]] = []
        offset = 0
        for number, line in enumerate(data[:end].split(b"\n")[:-1], start=1):
            location = mark + offset
            offset += len(line) + 1
            if not line.strip():
                continue
            try:
                record = read_record(line)
            except RecordDamaged as exc:
                where = f"line {number}" if mark == 0 else f"byte {location}"
                raise StoreCorrupt(
                    f"{str(self.episodes_path)!r} is damaged at {where}: {exc}. It was "
                    f"left untouched; run {doctor_hint(self.episodes_path)} to inspect it.",
                    path=str(self.episodes_path),
                    position=where,
                ) from exc
            if isinstance(record, dict) and isinstance(record.get("id"), str):
                found.append((location, record))
        return found, mark + end

    def read_episodes(self, locations: Sequence[int]) -> dict[int, Doc]:
        found: dict[int, Doc] = {}
        if not locations:
            return found
        try:
            fd = os.open(self.episodes_path, os.O_RDONLY)
        except FileNotFoundError:
            return found
        try:
            for location in locations:
                chunk = os.pread(fd, 8192, location)
                while chunk and b"\n" not in chunk and len(chunk) % 8192 == 0:
                    more = os.pread(fd, 65536, location + len(chunk))
                    if not more:
                        break
                    chunk += more
                line = chunk.split(b"\n", 1)[0]
                try:
                    record = read_record(line)
                except RecordDamaged:
                    continue  # a location from a stale index: the caller rebuilds it
                if isinstance(record, dict) and isinstance(record.get("id"), str):
                    found[location] = record
        finally:
            os.close(fd)
        return found

    def read_derived(self, name: str) -> bytes | None:
        self.wait_for_derived()
        try:
            return (self.path / _derived_name(name)).read_bytes()
        except FileNotFoundError:
            return None

    def write_derived(self, name: str, data: bytes) -> None:
        self.wait_for_derived()
        self._write_derived(name, data)

    def _write_derived(self, name: str, data: bytes) -> None:
        ensure_dir(self.path)
        atomic_write(self.path / _derived_name(name), data)

    def write_derived_later(self, name: str, make: Callable[[], bytes]) -> None:
        """:meth:`write_derived` of ``make()``, made and written by a thread of its own
        after the derived files handed over before it. A failure is logged: derived
        data is rebuilt by whoever finds it missing. Reading a derived file, writing
        one, a rewrite and closing wait for it first. The file describes
        ``episodes.jsonl`` as it is now: it is not written if that file was replaced
        meanwhile (another process's purge or repair)."""
        _derived_name(name)
        before = self._deriving
        described = _identity(self.episodes_path)

        def work() -> None:
            if before is not None:
                before.wait()
            try:
                data = make()
                if _identity(self.episodes_path) != described:
                    log.info("memgraph: %s of scope %r is stale, not saved", name, self.scope)
                    return
                self._write_derived(name, data)
            except (OSError, StoreError) as exc:
                log.warning("memgraph: could not save %s of scope %r: %s", name, self.scope, exc)

        self._deriving = InThread(work, name="memgraph-derived")

    def wait_for_derived(self) -> None:
        """Wait for the derived files :meth:`write_derived_later` is writing."""
        job, self._deriving = self._deriving, None
        if job is not None:
            error = job.wait()
            if error is not None:  # not a file error: a bug, reported where it is seen
                raise error

    def read_summary(self) -> Doc | None:
        raw = self._read_bytes(self.summary_path)
        return None if raw is None else parse_summary(self.summary_path, raw)

    # ------------------------------------------------------------------ writing
    def lock(self, timeout: float) -> contextlib.AbstractContextManager[None]:
        return self._lock.hold(timeout)

    def _require_lock(self) -> None:
        if not self._lock.held:
            raise StoreConflict(f"write to scope {self.scope!r} without holding its lock")

    def _journal(self) -> int:
        if self._journal_fd is not None:
            try:
                same = os.stat(self.journal_path).st_ino == os.fstat(self._journal_fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                return self._journal_fd
            os.close(self._journal_fd)
            self._journal_fd = None
        ensure_dir(self.path)
        created = not self.journal_path.exists()
        self._journal_fd = os.open(
            self.journal_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE
        )
        if created:
            fsync_dir(self.path)
        if self._pin is None:
            self._pin = os.open(self.journal_path, os.O_RDONLY)
        return self._journal_fd

    def _check_current(self) -> None:
        """Refuse to append unless this handle has read every commit of the scope.

        Raises:
            StoreConflict: another writer committed or checkpointed since this
                handle last read; the caller must catch up (``changes_since``
                then answers ``None``) and retry.
        """
        try:
            stat: os.stat_result | None = os.stat(self.journal_path)
        except FileNotFoundError:
            if self._pin is None:
                return  # nothing was ever committed here: the commit creates the journal
            stat = None
        if stat is None or not self._is_pinned(stat):
            raise StoreConflict(
                f"scope {self.scope!r} moved on: its journal was replaced since this handle "
                "read it; reload and retry"
            )
        if stat.st_size > self._offset and self._read_journal():
            raise StoreConflict(
                f"scope {self.scope!r} moved on: another writer committed up to "
                f"{self._last_seq}; reload and retry"
            )

    def commit(self, commit: Commit) -> None:
        self._require_lock()
        if commit.seq != self._last_seq + 1:
            raise StoreConflict(
                f"scope {self.scope!r} moved on: commit {commit.seq} does not follow "
                f"{self._last_seq}; reload and retry"
            )
        self._check_current()
        record = commit.to_record()
        line = sealed_line(orjson.dumps(record, option=orjson.OPT_SERIALIZE_NUMPY))
        fd: int | None = None
        try:
            fd = self._journal()
            if os.fstat(fd).st_size > self._offset:
                # Bytes past the last good line were torn by a writer that crashed
                # (we hold the lock, so nobody is writing them now): drop them.
                os.ftruncate(fd, self._offset)
            write_all(fd, line)
            os.fsync(fd)
        except OSError as exc:
            if fd is not None:  # a line written in part (or not synced) must not be read
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, self._offset)
            raise StoreUnavailable(
                f"could not append to {str(self.journal_path)!r}: {exc}; nothing was saved"
            ) from exc
        self._last_seq = commit.seq
        self._offset = os.fstat(fd).st_size
        self._journal_lines += 1
        self._journal_vector_bytes += _vector_payload(record)
        self._journal_sealed = True

    def checkpoint_due(self) -> bool:
        """Whether the journal outgrew its share of the checkpoint (cheap: one stat).

        Replaying the journal on load costs by its ops (JSON applied to the graph);
        its base64 vectors only need decoding. So the ops bytes are compared with
        ⅛ of graph.json, and the whole journal with ¼ of graph.json plus
        vectors.npy: a bulk import, whose lines are mostly vectors, checkpoints
        less often, and a load replays at most about 4,000 writes at 100k facts.
        """
        journal = self._journal_bytes()
        ops = journal - self._journal_vector_bytes  # lines not read here count in full
        return journal_outgrew(
            ops, self._checkpoint_bytes, minimum=MIN_JOURNAL_BYTES, ratio=OPS_RATIO
        ) or journal_outgrew(
            journal,
            self._checkpoint_bytes + self._vector_count * 4 * (self._vector_dim or 0),
            minimum=MIN_JOURNAL_BYTES,
            ratio=JOURNAL_RATIO,
        )

    def _journal_bytes(self) -> int:
        try:
            return os.stat(self.journal_path).st_size
        except FileNotFoundError:
            return 0

    def checkpoint(
        self,
        graph: Graph,
        vectors: VectorIndex | None,
        episodes: Sequence[Doc],
        *,
        force: bool = False,
    ) -> bool:
        """Fold the journal into a new ``graph.json`` when due (or forced).

        Raises:
            StoreConflict: another writer moved the scope on.
            StoreUnavailable: a file could not be written (a full disk, an I/O
                error). Every commit is still in the journal: nothing is lost, and
                the next checkpoint starts over.
        """
        if not (force or self.checkpoint_due()):
            return False
        self._require_lock()
        self._check_current()
        folded = graph.seq
        if folded != self._last_seq:
            raise StoreConflict(
                f"scope {self.scope!r}: a checkpoint at commit {folded} would drop the commits "
                f"up to {self._last_seq}; catch up and retry"
            )

        def save_vectors() -> None:
            if vectors is not None and len(vectors):
                self._save_vectors(vectors)
                self._save_coarse(vectors)

        try:
            if episodes:
                self._append_episodes(episodes)
            self._replace_checkpoint(graph, meanwhile=save_vectors)
        except OSError as exc:
            raise StoreUnavailable(
                f"could not write a checkpoint of scope {self.scope!r} in {str(self.path)!r}: "
                f"{exc}; every write is still in the journal"
            ) from exc
        return True

    def _append_episodes(self, episodes: Sequence[Doc]) -> None:
        ensure_dir(self.path)
        self._appended = None
        fd = os.open(self.episodes_path, os.O_RDWR | os.O_APPEND | os.O_CREAT, FILE_MODE)
        try:
            stat = os.fstat(fd)
            complete = _complete_lines_length(fd, stat.st_size)
            if complete < stat.st_size:
                # A tail torn by a checkpoint that crashed: appending after it would
                # glue it to the next record and damage that line for good.
                os.ftruncate(fd, complete)
            lines = [_episode_line(e) for e in episodes]
            try:
                write_all(fd, b"".join(lines))
                os.fsync(fd)
            except OSError:  # a full disk: leave no part of a line behind
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, complete)
                raise
        finally:
            os.close(fd)
        records = []
        location = complete
        for episode, line in zip(episodes, lines, strict=True):
            if isinstance(episode.get("id"), str):
                records.append((location, episode))
            location += len(line)
        self._appended = ((stat.st_dev, stat.st_ino), complete, location, records)

    def _save_vectors(self, index: VectorIndex) -> None:
        """Persist the index: append new rows in place when the space is unchanged."""
        dim = index.dimension or 0
        total = len(index)
        appendable = (
            self._vector_model == index.model
            and self._vector_count <= total
            and self.vectors_path.exists()
        )
        if appendable and self._vector_count == total:
            return
        if appendable:
            rows = np.ascontiguousarray(index.rows(self._vector_count, total), dtype="<f4")
            blocks = [*self._vector_blocks, (total, block_crc(rows))]
            with open(self.vectors_path, "r+b") as handle:
                handle.seek(NPY_HEADER_BYTES + self._vector_count * dim * 4)
                handle.write(rows.data)  # from the array's memory, not a copy of it
                handle.truncate()
                handle.flush()
                os.fsync(handle.fileno())
                handle.seek(0)
                handle.write(_npy_header(total, dim))
                handle.flush()
                os.fsync(handle.fileno())
        else:
            # Every row is new (a new model or a rewrite). The header goes first: a
            # crash before the new one is written leaves no vectors.json, which
            # means "no vectors" (they are embedded again on open), never an old
            # header over rows it does not describe. An approximate index saved for
            # the old rows must not be loaded with these either.
            for stale in (self.header_path, self.ivf_path):
                with contextlib.suppress(FileNotFoundError):
                    stale.unlink()
            fsync_dir(self.path)
            self._vector_count, self._vector_model, self._vector_blocks = 0, None, []
            matrix = np.ascontiguousarray(index.rows(0, total), "<f4")
            blocks = [(total, block_crc(matrix))]
            atomic_write(self.vectors_path, _npy_header(total, dim) + matrix.tobytes())
        ids = index.compact_ids()
        header = {
            "format": PACKED_VECTOR_FORMAT if isinstance(ids, IdColumn) else VECTOR_FORMAT,
            "model": index.model,
            "dim": dim,
            "count": total,
            "blocks": [list(block) for block in blocks],
            "ids": pack_row_ids(ids) if isinstance(ids, IdColumn) else ids,
        }
        atomic_write(self.header_path, orjson.dumps(header))
        self._vector_count, self._vector_model = total, index.model
        self._vector_dim, self._vector_blocks = dim, blocks

    def _save_coarse(self, index: VectorIndex) -> None:
        coarse = index.coarse
        if coarse is None or coarse.covered > len(index):
            return
        buffer = io.BytesIO()
        np.savez(buffer, centroids=coarse.centroids, labels=coarse.labels)
        atomic_write(self.ivf_path, buffer.getvalue())

    def _replace_checkpoint(
        self,
        graph: Graph,
        episodes_bytes: int | None = None,
        meanwhile: Callable[[], None] | None = None,
    ) -> None:
        """Write ``graph.json`` (and its index), then replace the journal with an empty
        one. ``episodes_bytes``: the size ``episodes.jsonl`` goes with (default: now).

        ``meanwhile`` (saving the vectors: file work) runs in a thread of its own while
        this one encodes the graph, and another thread writes ``graph.json``'s
        temporary file as its bytes are made (then this one compresses the index).
        Both end before that file replaces ``graph.json``, so a crash leaves the same
        states as doing one after the other.
        """
        # The old index goes first: a crash before the new one is written leaves
        # no index (graph.json is then parsed in full), never a misleading one.
        with contextlib.suppress(FileNotFoundError):
            self.index_path.unlink()
        if episodes_bytes is None:
            try:
                episodes_bytes = os.stat(self.episodes_path).st_size
            except FileNotFoundError:
                episodes_bytes = 0
        saving = InThread(meanwhile) if meanwhile is not None else None
        writing = start_atomic_write(self.graph_path)
        try:
            image = encode(graph, {"episodesBytes": episodes_bytes}, sink=writing.put)
            image_for_index = image if indexable(graph) else None
            blobs = image.index_blobs() if image_for_index is not None else None
            if saving is not None:
                saving.result()
        except BaseException:
            if saving is not None:
                saving.wait()
            writing.cancel()
            raise
        writing.finish()
        self._checkpoint_bytes = image.size
        if image_for_index is not None:
            stat = os.stat(self.graph_path)
            body = image.index_bytes((stat.st_size, stat.st_mtime_ns), blobs)
            atomic_write(self.index_path, seal(INDEX_MAGIC, body))
        tmp = self.path / ".journal.jsonl.tmp"
        pin = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        try:
            os.replace(tmp, self.journal_path)
            fsync_dir(self.path)
        except BaseException:
            os.close(pin)
            raise
        if self._journal_fd is not None:
            os.close(self._journal_fd)
            self._journal_fd = None
        self._unpin()
        self._pin = pin
        self._offset = 0
        self._journal_lines = 0
        self._journal_vector_bytes = 0
        self._journal_sealed = False
        self._last_seq = graph.seq
        if image_for_index is not None:
            self._rebase(graph, image)

    def _rebase(self, graph: Graph, image: GraphImage) -> None:
        """Point ``graph`` at the checkpoint just written, so the next checkpoint
        copies what did not change since this one (instead of since the load)."""
        try:
            fd = os.open(self.graph_path, os.O_RDONLY)
            try:
                data = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
            finally:
                os.close(fd)
        except (OSError, ValueError) as exc:  # the graph keeps reading the older checkpoint
            log.warning("memgraph: cannot map the new %s (%s)", self.graph_path, exc)
            return
        if len(data) != image.size:  # replaced by another writer meanwhile
            data.close()
            return
        _random_access(data)
        self._graph_stamp = self._stamp(self.graph_path)
        graph.rebase(image.saved(data, str(self.graph_path)))

    def rewrite(self, document: Doc, vectors: VectorIndex | None, episodes: Sequence[Doc]) -> None:
        """Replace everything with exactly this state (a purge, a migration, a repair).

        Order, so that a crash at any point leaves a scope that opens: the vectors
        (a missing ``vectors.json`` means they are embedded again), then
        ``graph.json`` with the journal, then ``episodes.jsonl`` (until it is
        replaced, the old file holds at least the episodes the new checkpoint
        counts; a purge interrupted there leaves erased texts in it, which the
        same purge, run again, erases).

        Raises:
            StoreUnavailable: a file could not be written.
        """
        self._require_lock()
        self._check_current()
        self.wait_for_derived()  # none may land after the rewrite removed it
        ensure_dir(self.path)
        lines = _episode_lines(episodes)
        try:
            if vectors is not None and len(vectors):
                self._vector_model = None  # force a full rewrite
                self._save_vectors(vectors)
            else:
                for path in (self.header_path, self.vectors_path):
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()
                self._vector_count, self._vector_model, self._vector_blocks = 0, None, []
            for derived in (self.ivf_path, self.path / "episodes.idx"):
                with contextlib.suppress(FileNotFoundError):
                    derived.unlink()  # rows and episodes changed: derived indexes are rebuilt
            self._replace_checkpoint(Graph.from_document(document), len(lines))
            atomic_write(self.episodes_path, lines)
        except OSError as exc:
            raise StoreUnavailable(
                f"could not rewrite scope {self.scope!r} in {str(self.path)!r}: {exc}"
            ) from exc

    def write_summary(self, summary: Doc) -> None:
        """Replace ``summary.json`` atomically (callers hold the scope's lock, so
        that a purge redacting it cannot overwrite a newer summary)."""
        ensure_dir(self.path)
        atomic_write(self.summary_path, orjson.dumps(summary, option=orjson.OPT_INDENT_2))

    def close(self) -> None:
        self.wait_for_derived()
        if self._journal_fd is not None:
            os.close(self._journal_fd)
            self._journal_fd = None
        self._unpin()


DERIVED_NAMES = frozenset({"episodes.idx"})


def _derived_name(name: str) -> str:
    if name not in DERIVED_NAMES:
        raise ValueError(f"{name!r} is not a derived file of a scope ({sorted(DERIVED_NAMES)})")
    return name


def _identity(path: Path) -> tuple[int, int] | None:
    """Which file ``path`` is (device and inode), or None when there is none."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return stat.st_dev, stat.st_ino


def _episode_line(episode: Doc) -> bytes:
    """An ``episodes.jsonl`` line of ``episode``, with its checksum."""
    return seal_record(orjson.dumps(episode)) + b"\n"


def _episode_lines(episodes: Sequence[Doc]) -> bytes:
    """``episodes.jsonl`` lines of ``episodes``, each with its checksum."""
    return b"".join(map(_episode_line, episodes))


def _read_from(fd: int, offset: int) -> bytes:
    """Every byte of the file ``fd`` from ``offset`` to its end."""
    chunks = []
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _complete_lines_length(fd: int, size: int) -> int:
    """The length of the file's prefix that ends with its last newline."""
    end = size
    while end > 0:
        start = max(end - (1 << 16), 0)
        newline = os.pread(fd, end - start, start).rfind(b"\n")
        if newline >= 0:
            return start + newline + 1
        end = start
    return 0
