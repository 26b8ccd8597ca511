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
import re
import shlex
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from memgraph.errors import StoreConflict, StoreCorrupt, StoreUnavailable
from memgraph.graph.graph import Graph
from memgraph.graph.saved import SavedGraph
from memgraph.graph.snapshot import GraphImage, encode, indexable, read_index
from memgraph.retrieval.ivf import CoarseIndex
from memgraph.retrieval.vectors import VectorIndex
from memgraph.store.base import Commit, Doc, Snapshot, VectorSet, journal_outgrew
from memgraph.store.files import FILE_MODE, FileLock, atomic_write, ensure_dir, fsync_dir

log = logging.getLogger("memgraph")

__all__ = ["NPY_HEADER_BYTES", "DirectoryStore", "doctor_hint", "read_npy_rows"]

VECTOR_FORMAT = 1
NPY_HEADER_BYTES = 128
MIN_JOURNAL_BYTES = 1 << 20
JOURNAL_RATIO = 0.25
OPS_RATIO = 0.125  # journal ops (replayed through the graph on load) per byte of graph.json

_JSON_POSITION = re.compile(r"line (\d+) column (\d+)|char (\d+)")


def doctor_hint(path: Path, *, repair: bool = False) -> str:
    """The ``memgraph doctor`` command that checks (or repairs) the scope holding ``path``."""
    scope_dir = path.parent
    flag = " --repair" if repair else ""
    return (
        f"`memgraph doctor --dir {shlex.quote(str(scope_dir.parent))} "
        f"--scope {shlex.quote(scope_dir.name)}{flag}`"
    )


def _damaged(path: Path, position: str, problem: str, *, vectors: bool = False) -> StoreCorrupt:
    """A StoreCorrupt naming ``path``, the ``position`` and what is wrong there."""
    advice = (
        f"run {doctor_hint(path, repair=True)} to rebuild the vectors from the observations"
        if vectors
        else f"run {doctor_hint(path)} to inspect it"
    )
    return StoreCorrupt(
        f"{str(path)!r} is damaged at {position}: {problem}. It was left untouched; {advice}.",
        path=str(path),
        position=position,
    )


def _decode_error(
    path: Path, exc: Exception, line: int | None = None, data: bytes | None = None
) -> StoreCorrupt:
    """A StoreCorrupt naming ``path`` and where in it (``data``: the file's bytes) it broke."""
    text = str(exc)
    match = _JSON_POSITION.search(text)
    where = f"line {line}" if line is not None else ""
    if match and line is None:
        where = f"line {match.group(1)}, column {match.group(2)}" if match.group(1) else ""
        where = where or f"byte {match.group(3)}"
    if data is not None and line is None:
        try:  # orjson reports invalid UTF-8 at char 0 whatever its place: find the byte
            data.decode("utf-8")
        except UnicodeDecodeError as bad:
            number = data.count(b"\n", 0, bad.start) + 1
            where = f"byte {bad.start} (line {number})"
    return StoreCorrupt(
        f"{str(path)!r} is damaged at {where or 'an unknown position'}: {text}. "
        f"It was left untouched; run {doctor_hint(path)} to inspect it "
        "(add --repair to rebuild what can be rebuilt).",
        path=str(path),
        position=where,
    )


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


def read_npy_rows(path: Path, rows: int) -> np.ndarray[Any, np.dtype[np.float32]]:
    """The first ``rows`` rows of a memgraph ``vectors.npy``, memory-mapped read-only.

    Raises:
        StoreCorrupt: the file is missing, truncated, or not a float32 matrix
            of at least ``rows`` rows (naming the file and the position).
    """
    try:
        matrix = np.load(path, mmap_mode="r")  # never unpickles: allow_pickle is False
    except (OSError, ValueError, EOFError) as exc:
        try:
            size = os.path.getsize(path)
        except OSError:
            size = -1
        if size < 0:
            where = "byte 0 (the file is missing)"
        elif size < NPY_HEADER_BYTES:
            where = f"byte {size} (the file ends inside its {NPY_HEADER_BYTES}-byte header)"
        elif "header" in str(exc).lower() or "magic" in str(exc).lower():
            where = f"header (bytes 0-{NPY_HEADER_BYTES - 1})"
        else:
            where = f"byte {size} (the file ends before the rows its header declares)"
        raise StoreCorrupt(
            f"{str(path)!r} is damaged at {where}: {exc}. It was left untouched; run "
            f"{doctor_hint(path, repair=True)} to rebuild the vectors from the observations",
            path=str(path),
            position=where,
        ) from exc
    if matrix.dtype != np.float32 or matrix.ndim != 2 or matrix.shape[0] < rows:
        raise _damaged(
            path,
            f"header (shape {matrix.shape})",
            f"it holds {matrix.dtype} rows, expected at least {rows} float32 rows",
            vectors=True,
        )
    return matrix[:rows]  # type: ignore[no-any-return]


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

    # ------------------------------------------------------------------ reading
    def exists(self) -> bool:
        return self.journal_path.exists() or self.graph_path.exists()

    def load(self) -> Snapshot:
        snapshot = Snapshot()
        checkpoint_seq = 0
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
        raw: bytes | None = None
        saved = self._open_saved()
        if saved is not None:
            snapshot.saved = saved
            checkpoint_seq = saved.seq
            self._checkpoint_bytes = len(saved.data)
        else:
            self._graph_stamp = self._stamp(self.graph_path)
            try:
                raw = self.graph_path.read_bytes()
            except FileNotFoundError:
                raw = None
            except OSError as exc:
                raise StoreUnavailable(f"cannot read {str(self.graph_path)!r}: {exc}") from exc
            self._checkpoint_bytes = len(raw or b"")
        if raw is not None:  # an empty graph.json is damaged too (memgraph never writes one)
            try:
                document = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                raise _decode_error(self.graph_path, exc, data=raw) from exc
            if (
                not isinstance(document, dict)
                or not isinstance(document.get("entities", []), list)
                or type(document.get("checkpointSeq") or 0) is not int
            ):
                raise _damaged(
                    self.graph_path,
                    "top level",
                    "not a graph document (no 'entities' list, or a bad 'checkpointSeq')",
                )
            snapshot.document = document
            checkpoint_seq = document.get("checkpointSeq") or 0
        self._last_seq = checkpoint_seq
        self._offset = 0
        self._journal_lines = 0
        self._journal_vector_bytes = 0
        snapshot.commits = [c for c in self._read_journal() if c.seq > checkpoint_seq]
        snapshot.vectors = self._load_vectors()
        return snapshot

    def _open_saved(self) -> SavedGraph | None:
        """The checkpoint memory-mapped with its index, if the index describes it.

        The index is derived data: when it is missing, stale (another
        ``graph.json``) or unreadable, the caller parses ``graph.json`` in full.
        """
        try:
            raw_index = self.index_path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.warning("memgraph: ignoring unreadable %s (%s)", self.index_path, exc)
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
            saved = read_index(raw_index, data, (stat.st_size, stat.st_mtime_ns))
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
            log.info("memgraph: parsing %s in full (%s: %s)", self.graph_path, self.index_path, exc)
            data.close()
            return None
        saved.path = str(self.graph_path)
        self._graph_stamp = (stat.st_dev, stat.st_ino, stat.st_mtime_ns, stat.st_size)
        return saved

    def _load_vectors(self) -> VectorSet | None:
        try:
            raw = self.header_path.read_bytes()
        except FileNotFoundError:
            self._vector_count, self._vector_model = 0, None
            return None
        try:
            header = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise _decode_error(self.header_path, exc, data=raw) from exc
        if not isinstance(header, dict):
            raise _damaged(
                self.header_path, "top level", "not a vectors header (a JSON object)", vectors=True
            )
        ids = header.get("ids") or []
        count = header.get("count", len(ids) if isinstance(ids, list) else 0)
        if (
            header.get("format") != VECTOR_FORMAT
            or not isinstance(ids, list)
            or not all(isinstance(i, str) for i in ids)
            or type(count) is not int
            or count != len(ids)
        ):
            shown = len(ids) if isinstance(ids, list) else "no"
            raise _damaged(
                self.header_path,
                "header",
                f"an unknown format, or {shown} ids for {count!r} rows",
                vectors=True,
            )
        matrix = read_npy_rows(self.vectors_path, count) if count else None
        dim = header.get("dim")
        if matrix is not None and type(dim) is int and matrix.shape[1] != dim:
            raise _damaged(
                self.vectors_path,
                f"header (shape {matrix.shape})",
                f"rows of {matrix.shape[1]} floats, but {str(self.header_path)!r} says {dim}",
                vectors=True,
            )
        self._vector_count, self._vector_model = count, header.get("model")
        self._vector_dim = matrix.shape[1] if matrix is not None else None
        if matrix is None:
            return VectorSet(header.get("model") or "", [], np.zeros((0, 0), np.float32))
        return VectorSet(header.get("model") or "", ids, matrix, self._load_coarse(count))

    def _load_coarse(self, count: int) -> CoarseIndex | None:
        """The saved approximate index, if it fits these vectors (it is derived data:
        anything unusable is ignored and rebuilt in the background)."""
        try:
            with np.load(self.ivf_path) as saved:
                centroids = np.ascontiguousarray(saved["centroids"], dtype=np.float32)
                labels = np.ascontiguousarray(saved["labels"], dtype=np.int32)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError) as exc:
            log.warning("memgraph: ignoring unreadable %s (%s)", self.ivf_path, exc)
            return None
        if len(labels) > count or (len(labels) and int(labels.max()) >= len(centroids)):
            return None
        return CoarseIndex(centroids, labels)

    def _read_journal(self) -> list[Commit]:
        """Commits from the consumed offset on; complete, parseable lines only.

        A damaged *last* line is a write torn by a crash: it is not consumed,
        and the next commit truncates it away. A damaged line before the last
        one is corruption and raises.
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
                record = orjson.loads(line)
                commit = Commit.from_record(record)
            except (orjson.JSONDecodeError, AttributeError, KeyError, TypeError, ValueError) as exc:
                if index == len(lines) - 1 and consumed + len(line) + 1 == len(data):
                    break  # torn last line: leave it unconsumed
                raise _decode_error(self.journal_path, exc, line=number) from exc
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
        try:
            data = self.episodes_path.read_bytes()
        except FileNotFoundError:
            return iter(())
        seen: dict[str, Doc] = {}
        lines = data.split(b"\n")
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                if number == len(lines):
                    break  # torn tail of an interrupted checkpoint
                raise _decode_error(self.episodes_path, exc, line=number) from exc
            if not isinstance(record, dict) or not isinstance(record.get("id"), str):
                raise StoreCorrupt(
                    f"{str(self.episodes_path)!r} line {number} is not an episode (a JSON "
                    f"object with an 'id'). It was left untouched; run "
                    f"{doctor_hint(self.episodes_path)} to inspect it.",
                    path=str(self.episodes_path),
                    position=f"line {number}",
                )
            seen[record["id"]] = record
        return iter(seen.values())

    def episodes_after(self, mark: int) -> tuple[list[tuple[int, Doc]], int]:
        try:
            fd = os.open(self.episodes_path, os.O_RDONLY)
        except FileNotFoundError:
            if mark:
                raise ValueError(
                    f"mark {mark} is past the end of a missing episodes file"
                ) from None
            return [], 0
        try:
            size = os.fstat(fd).st_size
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
                record = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
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
                    record = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue  # a location from a stale index: the caller rebuilds it
                if isinstance(record, dict) and isinstance(record.get("id"), str):
                    found[location] = record
        finally:
            os.close(fd)
        return found

    def read_derived(self, name: str) -> bytes | None:
        try:
            return (self.path / _derived_name(name)).read_bytes()
        except FileNotFoundError:
            return None

    def write_derived(self, name: str, data: bytes) -> None:
        ensure_dir(self.path)
        atomic_write(self.path / _derived_name(name), data)

    def read_summary(self) -> Doc | None:
        try:
            raw = self.summary_path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            summary = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise _decode_error(self.summary_path, exc, data=raw) from exc
        if not isinstance(summary, dict):
            raise _damaged(self.summary_path, "top level", "not a JSON object")
        return summary

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
        fd = self._journal()
        if os.fstat(fd).st_size > self._offset:
            # Bytes past the last good line were torn by a writer that crashed
            # (we hold the lock, so nobody is writing them now): drop them.
            os.ftruncate(fd, self._offset)
        record = commit.to_record()
        line = orjson.dumps(record, option=orjson.OPT_SERIALIZE_NUMPY) + b"\n"
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError as exc:
            raise StoreUnavailable(
                f"could not append to {str(self.journal_path)!r}: {exc}; nothing was saved"
            ) from exc
        self._last_seq = commit.seq
        self._offset = os.fstat(fd).st_size
        self._journal_lines += 1
        self._journal_vector_bytes += _vector_payload(record)

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
        if episodes:
            self._append_episodes(episodes)
        if vectors is not None and len(vectors):
            self._save_vectors(vectors)
            self._save_coarse(vectors)
        self._replace_checkpoint(graph)
        return True

    def _append_episodes(self, episodes: Sequence[Doc]) -> None:
        ensure_dir(self.path)
        fd = os.open(self.episodes_path, os.O_RDWR | os.O_APPEND | os.O_CREAT, FILE_MODE)
        try:
            size = os.fstat(fd).st_size
            complete = _complete_lines_length(fd, size)
            if complete < size:
                # A tail torn by a checkpoint that crashed: appending after it would
                # glue it to the next record and damage that line for good.
                os.ftruncate(fd, complete)
            view = memoryview(b"".join(orjson.dumps(e) + b"\n" for e in episodes))
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)

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
            with open(self.vectors_path, "r+b") as handle:
                handle.seek(NPY_HEADER_BYTES + self._vector_count * dim * 4)
                rows = index.rows(self._vector_count, total)
                handle.write(np.ascontiguousarray(rows, dtype="<f4").tobytes())
                handle.truncate()
                handle.flush()
                os.fsync(handle.fileno())
                handle.seek(0)
                handle.write(_npy_header(total, dim))
                handle.flush()
                os.fsync(handle.fileno())
        else:
            # Every row is new (a new model or a rewrite): an approximate index saved
            # for the old rows must not be loaded with these.
            with contextlib.suppress(FileNotFoundError):
                self.ivf_path.unlink()
            matrix = index.rows(0, total)
            atomic_write(
                self.vectors_path,
                _npy_header(total, dim) + np.ascontiguousarray(matrix, "<f4").tobytes(),
            )
        header = {"format": VECTOR_FORMAT, "model": index.model, "dim": dim, "count": total}
        atomic_write(self.header_path, orjson.dumps({**header, "ids": index.ids()}))
        self._vector_count, self._vector_model = total, index.model
        self._vector_dim = dim

    def _save_coarse(self, index: VectorIndex) -> None:
        coarse = index.coarse
        if coarse is None or coarse.covered > len(index):
            return
        buffer = io.BytesIO()
        np.savez(buffer, centroids=coarse.centroids, labels=coarse.labels)
        atomic_write(self.ivf_path, buffer.getvalue())

    def _replace_checkpoint(self, graph: Graph) -> None:
        # The old index goes first: a crash before the new one is written leaves
        # no index (graph.json is then parsed in full), never a misleading one.
        with contextlib.suppress(FileNotFoundError):
            self.index_path.unlink()
        image = encode(graph) if indexable(graph) else None
        data = image.graph_json if image is not None else orjson.dumps(graph.to_document())
        atomic_write(self.graph_path, data)
        self._checkpoint_bytes = len(data)
        if image is not None:
            stat = os.stat(self.graph_path)
            atomic_write(self.index_path, image.index_bytes((stat.st_size, stat.st_mtime_ns)))
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
        self._last_seq = graph.seq
        if image is not None:
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
        if len(data) != len(image.graph_json):  # replaced by another writer meanwhile
            data.close()
            return
        _random_access(data)
        self._graph_stamp = self._stamp(self.graph_path)
        graph.rebase(image.saved(data, str(self.graph_path)))

    def rewrite(self, document: Doc, vectors: VectorIndex | None, episodes: Sequence[Doc]) -> None:
        self._require_lock()
        self._check_current()
        ensure_dir(self.path)
        atomic_write(self.episodes_path, b"".join(orjson.dumps(e) + b"\n" for e in episodes))
        if vectors is not None and len(vectors):
            self._vector_model = None  # force a full rewrite
            self._save_vectors(vectors)
        else:
            for path in (self.vectors_path, self.header_path):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
            self._vector_count, self._vector_model = 0, None
        for derived in (self.ivf_path, self.path / "episodes.idx"):
            with contextlib.suppress(FileNotFoundError):
                derived.unlink()  # rows and episodes changed: derived indexes are rebuilt
        self._replace_checkpoint(Graph.from_document(document))

    def write_summary(self, summary: Doc) -> None:
        ensure_dir(self.path)
        atomic_write(self.summary_path, orjson.dumps(summary, option=orjson.OPT_INDENT_2))

    def close(self) -> None:
        if self._journal_fd is not None:
            os.close(self._journal_fd)
            self._journal_fd = None
        self._unpin()


DERIVED_NAMES = frozenset({"episodes.idx"})


def _derived_name(name: str) -> str:
    if name not in DERIVED_NAMES:
        raise ValueError(f"{name!r} is not a derived file of a scope ({sorted(DERIVED_NAMES)})")
    return name


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
