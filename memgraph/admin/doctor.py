"""Checking and repairing a scope's files: ``memgraph doctor [--repair]``.

:func:`check_scope` reads every file of a directory-store scope on its own
(``graph.json``, ``journal.jsonl``, ``episodes.jsonl``, ``vectors.npy``,
``vectors.json``, ``summary.json``) and reports each one as ``ok``,
``missing`` or ``damaged`` (with the position), plus counts and notes such as
a torn journal tail. It changes nothing.

:func:`repair_scope` first copies the scope directory to a backup next to it
(``<scope>.backup-YYYYmmddTHHMMSS``, UTC), then, holding the scope's lock,
rebuilds what can be rebuilt and says precisely what was lost:

* a damaged line in the middle of the journal: the commits before it are kept,
  the rest are dropped (and counted: commits, episodes with their texts,
  observations, relations, key/value writes, ...);
* a damaged ``graph.json``: restored from the newest backup holding an older
  checkpoint that the journal extends, or else rebuilt from the journal alone
  when the journal starts at commit 1; otherwise it is unrecoverable and left
  untouched;
* unreadable lines of ``episodes.jsonl``: dropped (those texts are lost);
* a damaged ``summary.json``: removed (the summary is lost; the backup keeps it);
* damaged vectors: removed and re-embedded from the current observations
  through :class:`~memgraph.Memory` (batched), when a provider with an
  embedder is given; otherwise on the next open.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

from memgraph.admin.migrate import read_scope
from memgraph.config import MemoryConfig
from memgraph.engine.memory import (
    Memory,  # also registers the op kinds of key/value, progress and rules
)
from memgraph.errors import MemgraphError, StoreCorrupt
from memgraph.graph.graph import Doc, Graph
from memgraph.graph.records import (
    Checkpoint,
    ChecksumMismatch,
    RecordDamaged,
    has_checksum,
    read_checkpoint,
    read_record,
    read_tail,
    seal_record,
)
from memgraph.graph.snapshot import INDEX_MAGIC, IndexStale, read_index
from memgraph.llm_calls.provider import Provider
from memgraph.scope import validate_scope
from memgraph.store.base import Commit
from memgraph.store.directory import DirectoryStore
from memgraph.store.files import (
    DIR_MODE,
    FILE_MODE,
    DerivedUnusable,
    atomic_write,
    fsync_dir,
    unseal,
)
from memgraph.store.readers import (
    parse_episodes,
    parse_graph,
    parse_summary,
    parse_vectors_header,
    read_coarse,
    read_npy_rows,
    vector_blocks_damaged,
)

__all__ = ["FileReport", "Report", "check_scope", "repair_scope"]

log = logging.getLogger("memgraph")

FILES = (
    "graph.json",
    "journal.jsonl",
    "episodes.jsonl",
    "vectors.npy",
    "vectors.json",
    "summary.json",
)
LOCK_TIMEOUT = 10.0
_READ_ERRORS = (orjson.JSONDecodeError, AttributeError, KeyError, TypeError, ValueError)
_APPLY_ERRORS = (AttributeError, KeyError, TypeError, ValueError, StopIteration)


# --------------------------------------------------------------------------- the report
@dataclass
class FileReport:
    """One file of a scope: ``ok``, ``missing`` or ``damaged`` (with the position)."""

    name: str
    state: str
    position: str = ""
    detail: str = ""
    size: int | None = None

    def render(self) -> str:
        if self.state == "damaged":
            where = f" at {self.position}" if self.position else ""
            return f"{self.name:<15} DAMAGED{where}: {self.detail}"
        if self.state == "missing" and self.detail:
            return f"{self.name:<15} {self.detail}"
        size = f" ({self.size:,} bytes)" if self.size is not None else ""
        detail = f"; {self.detail}" if self.detail else ""
        return f"{self.name:<15} {self.state}{size}{detail}"


@dataclass
class Report:
    """What :func:`check_scope` found (and, after :func:`repair_scope`, what it did)."""

    scope: str
    path: str
    files: list[FileReport] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    backup: str | None = None
    repaired: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing is damaged (notes such as a torn journal tail are fine)."""
        return not self.problems

    def file(self, name: str) -> FileReport:
        return next(f for f in self.files if f.name == name)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}

    def render(self) -> str:
        lines = [f"scope {self.scope!r} ({self.path})"]
        lines += [f"  {f.render()}" for f in self.files]
        if self.counts:
            lines.append("  counts: " + ", ".join(f"{v:,} {k}" for k, v in self.counts.items()))
        lines += [f"  note: {note}" for note in self.notes]
        if self.backup:
            lines.append(f"  backup: {self.backup}")
        lines += [f"  repaired: {item}" for item in self.repaired]
        lines += [f"  lost: {item}" for item in self.lost]
        if (self.backup or self.repaired) and not self.lost and self.ok:
            lines.append("  lost: nothing")
        if self.ok:
            lines.append("healthy" if not self.repaired else "repaired: the scope is healthy")
        else:
            lines += [f"  problem: {problem}" for problem in self.problems]
            hint = "" if self.backup else "; run `memgraph doctor --repair`"
            lines.append(f"{len(self.problems)} problem(s) remain{hint}")
        return "\n".join(lines)


# --------------------------------------------------------------------------- scanning
@dataclass
class _Line:
    number: int
    start: int
    end: int  # offset just past the newline
    commit: Commit | None
    error: str = ""


@dataclass
class _Scan:
    """Everything read from a scope's files, independently of each other."""

    path: Path
    files: dict[str, FileReport] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    graph_bytes: bytes | None = None
    document: Doc | None = None  # graph.json, parsed and valid
    graph_damaged: bool = False
    salvaged: Checkpoint | None = None  # the intact records of a damaged graph.json
    journal: bytes = b""
    lines: list[_Line] = field(default_factory=list)  # complete lines, readable or not
    torn: int = 0  # bytes of a torn tail (an incomplete or unreadable last line)
    episodes: list[Doc] = field(default_factory=list)
    bad_episode_lines: list[int] = field(default_factory=list)
    episode_tail: int = 0
    episodes_lost: bool = False  # the file is shorter than the checkpoint says it was
    vectors_damaged: bool = False
    vector_count: int = 0
    summary_damaged: bool = False
    derived: list[str] = field(default_factory=list)  # damaged derived files, to rebuild

    @property
    def checkpoint_seq(self) -> int:
        return int((self.document or {}).get("checkpointSeq") or 0)

    def readable_prefix(self) -> list[_Line]:
        """Readable journal lines up to the first unreadable one (a torn tail excluded)."""
        prefix = []
        for line in self.lines:
            if line.commit is None:
                break
            prefix.append(line)
        return prefix

    def checkpoint_graph(self) -> Graph:
        """The graph of the intact ``graph.json`` (an empty one when there is none)."""
        if self.graph_bytes is None:
            return Graph()
        return Graph.from_document(parse_graph(self.path / "graph.json", self.graph_bytes))


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _scan(path: Path) -> _Scan:
    scan = _Scan(path)
    _scan_graph(scan)
    _scan_journal(scan)
    _scan_episodes(scan)
    _scan_vectors(scan)
    _scan_summary(scan)
    for name in sorted(p.name for p in path.glob(".*.tmp")) if path.is_dir() else ():
        scan.notes.append(f"{name} was left by an interrupted write; it is ignored")
    return scan


def _damaged(scan: _Scan, name: str, position: str, detail: str, size: int | None) -> None:
    scan.files[name] = FileReport(name, "damaged", position, detail, size)


def _problem_of(exc: StoreCorrupt) -> str:
    """What a reader's StoreCorrupt says is wrong, without the file name and advice."""
    detail = str(exc.__cause__ or exc).split(". It was left untouched")[0]
    if exc.__cause__ is None or isinstance(exc.__cause__, RecordDamaged):
        detail = str(exc).split(". It was left untouched")[0]
        detail = detail.partition(f"{exc.position}: ")[2] or detail
    return detail


def _scan_graph(scan: _Scan) -> None:
    raw = scan.graph_bytes = _read(scan.path / "graph.json")
    if raw is None:
        scan.files["graph.json"] = FileReport("graph.json", "missing", "", _NOT_YET)
        return
    try:
        document = parse_graph(scan.path / "graph.json", raw)
        problem, position = _structure_problem(raw), "structure"
    except StoreCorrupt as exc:
        problem, position = _problem_of(exc), exc.position
        with contextlib.suppress(RecordDamaged, orjson.JSONDecodeError):
            scan.salvaged = read_checkpoint(raw, salvage=True)
    if problem:
        _damaged(scan, "graph.json", position, problem, len(raw))
        scan.graph_damaged = True
        return
    scan.document = document
    detail = f"checkpoint at commit {scan.checkpoint_seq}"
    if document.get("checksums"):
        detail += f", {len(document['entities']) + len(document.get('relations') or [])} "
        detail += "records, every checksum verified"
    scan.files["graph.json"] = FileReport("graph.json", "ok", "", detail, len(raw))


def _structure_problem(raw: bytes) -> str:
    """What makes a parsed ``graph.json`` unusable as a graph ('' when nothing)."""
    document = parse_graph(Path("graph.json"), raw)
    try:
        graph = Graph.from_document(document)
    except _APPLY_ERRORS as exc:
        return f"not a valid graph ({type(exc).__name__}: {exc})"
    ids: Counter[str] = Counter(e["id"] for e in document.get("entities") or [])
    ids.update(o["id"] for e in document.get("entities") or [] for o in e["observations"])
    ids.update(r["id"] for r in document.get("relations") or [])
    repeated = sorted(i for i, n in ids.items() if n > 1)
    if repeated:
        return f"{len(repeated)} id(s) used twice ({', '.join(repeated[:5])})"
    next_id = document.get("nextId")
    highest = max(
        (int(i.rpartition("-")[2]) for i in ids if i.rpartition("-")[2].isdigit()), default=0
    )
    if type(next_id) is int and highest >= next_id:
        return f"nextId {next_id} is not past the ids in use (up to {highest})"
    counts = document.get("counts")
    if isinstance(counts, dict) and counts != {
        "entities": len(graph.entities),
        "relations": len(graph.relations),
    }:
        return f"it says it holds {counts} but holds other numbers of records"
    return ""


def _scan_journal(scan: _Scan) -> None:
    raw = _read(scan.path / "journal.jsonl")
    if raw is None:
        scan.files["journal.jsonl"] = FileReport("journal.jsonl", "missing")
        return
    scan.journal = raw
    pieces = raw.split(b"\n")
    offset = 0
    sealed = False
    for number, piece in enumerate(pieces[:-1], start=1):
        end = offset + len(piece) + 1
        try:
            commit = Commit.from_record(read_record(piece, required=sealed))
            scan.lines.append(_Line(number, offset, end, commit))
            sealed = sealed or has_checksum(piece)
        except (*_READ_ERRORS, RecordDamaged) as exc:
            scan.lines.append(_Line(number, offset, end, None, f"{type(exc).__name__}: {exc}"))
        offset = end
    scan.torn = len(pieces[-1])
    last_line = scan.lines[-1] if scan.lines else None
    if (
        last_line is not None
        and last_line.commit is None
        and not scan.torn
        and not last_line.error.startswith(ChecksumMismatch.__name__)
    ):
        last = scan.lines.pop()  # an unreadable last line is a torn write, as on load
        scan.torn = last.end - last.start
    if scan.torn:
        scan.notes.append(
            f"journal.jsonl ends in a torn line ({scan.torn} bytes), a write cut by a crash "
            "before it returned: loads skip it and the next write drops it"
        )
    base = scan.checkpoint_graph() if scan.document else None
    if base is None and not scan.graph_damaged:
        base = Graph()
    problem = _replay(base, scan.checkpoint_seq if base is not None else None, scan.lines)
    missing_checkpoint = (
        problem is not None
        and scan.files["graph.json"].state == "missing"
        and problem[0] == scan.lines[0].number
        and "follows 0" in problem[2]
    )
    if missing_checkpoint:
        first = scan.lines[0].commit
        assert first is not None
        _damaged(
            scan,
            "graph.json",
            "whole file",
            f"missing, but journal.jsonl starts at commit {first.seq}: the checkpoint "
            f"holding commits 1-{first.seq - 1} is gone",
            None,
        )
        scan.graph_damaged = True
        problem = _replay(None, None, scan.lines)
    if problem is not None:
        _, where, detail = problem
        _damaged(scan, "journal.jsonl", where, detail, len(raw))
        return
    commits = sum(1 for line in scan.lines if line.commit and line.commit.seq > scan.checkpoint_seq)
    detail = f"{commits} commit(s)" + ("" if scan.graph_damaged else " since the checkpoint")
    if scan.files["graph.json"].state == "missing":
        detail += " from commit 1: the scope is journal-first until its first checkpoint"
    scan.files["journal.jsonl"] = FileReport("journal.jsonl", "ok", "", detail, len(raw))


def _replay(
    graph: Graph | None, seq: int | None, lines: Iterable[_Line]
) -> tuple[int, str, str] | None:
    """Apply the journal's commits after ``seq`` to ``graph``; the first line that fails,
    as (line number, position, what is wrong).

    With ``graph`` None only the order of the commits is checked; with ``seq``
    None the first commit may have any number.
    """
    for line in lines:
        commit = line.commit
        if commit is None:
            return line.number, f"line {line.number}", f"unreadable ({line.error})"
        if seq is not None and commit.seq <= seq:
            continue  # already folded into the checkpoint
        where = f"line {line.number} (commit {commit.seq})"
        if seq is not None and commit.seq != seq + 1:
            missing = f"commits {seq + 1}-{commit.seq - 1} are missing"
            return line.number, where, f"commit {commit.seq} follows {seq}: {missing}"
        if graph is not None:
            try:
                graph.apply(commit.ops)
            except _APPLY_ERRORS as exc:
                why = f"{type(exc).__name__}: {exc}"
                return line.number, where, f"commit {commit.seq} does not apply ({why})"
            graph.next_id = max(graph.next_id, commit.next_id)
            graph.seq = commit.seq
        seq = commit.seq
    return None


def _scan_episodes(scan: _Scan) -> None:
    raw = _read(scan.path / "episodes.jsonl")
    expected = (scan.document or {}).get("episodesBytes")
    expected = expected if type(expected) is int else 0
    if raw is None and not expected:
        scan.files["episodes.jsonl"] = FileReport("episodes.jsonl", "missing", "", _NOT_YET)
        return
    found = parse_episodes(raw or b"")
    scan.episodes = list(found.episodes.values())
    scan.bad_episode_lines = [number for number, _ in found.bad]
    scan.episode_tail = found.torn
    size = len(raw or b"")
    if found.bad:
        number, problem = found.bad[0]
        extra = f" ({len(found.bad)} unreadable lines in all)" if len(found.bad) > 1 else ""
        _damaged(scan, "episodes.jsonl", f"line {number}", problem + extra, size)
        return
    if size < expected:
        scan.episodes_lost = True
        _damaged(
            scan,
            "episodes.jsonl",
            f"byte {size} (end of file)",
            f"the checkpoint was written when it held {expected:,} bytes: the remembered "
            f"texts of the last {expected - size:,} bytes are lost",
            size,
        )
        return
    if scan.episode_tail:
        scan.notes.append(
            f"episodes.jsonl ends in a torn line ({scan.episode_tail} bytes) left by an "
            "interrupted checkpoint; the journal still held it, and the next checkpoint drops it"
        )
    scan.files["episodes.jsonl"] = FileReport(
        "episodes.jsonl", "ok", "", f"{len(scan.episodes)} episode(s)", size
    )


_NOT_YET = "not written yet: the journal holds every write until the first checkpoint"


def _scan_vectors(scan: _Scan) -> None:
    header_path, npy_path = scan.path / "vectors.json", scan.path / "vectors.npy"
    raw = _read(header_path)
    npy_size = npy_path.stat().st_size if npy_path.exists() else None
    if raw is None:
        scan.files["vectors.json"] = FileReport("vectors.json", "missing", "", _NOT_YET)
        if npy_size is None:
            scan.files["vectors.npy"] = FileReport("vectors.npy", "missing", "", _NOT_YET)
        else:
            scan.files["vectors.npy"] = FileReport(
                "vectors.npy", "ok", "", "unused without vectors.json", npy_size
            )
    else:
        try:
            header = parse_vectors_header(header_path, raw)
        except StoreCorrupt as exc:
            _damaged(scan, "vectors.json", exc.position, _problem_of(exc), len(raw))
            scan.vectors_damaged = True
        else:
            _scan_vector_rows(scan, header.ids, header.dim, header.blocks, npy_size)
            scan.files["vectors.json"] = FileReport(
                "vectors.json",
                "ok",
                "",
                f"{scan.vector_count} row(s) of {header.model!r}",
                len(raw),
            )
    if "vectors.npy" not in scan.files:
        state = "missing" if npy_size is None else "ok"
        scan.files["vectors.npy"] = FileReport("vectors.npy", state, "", "", npy_size)
    _scan_coarse(scan)
    _scan_index(scan)


def _scan_vector_rows(
    scan: _Scan,
    ids: Sequence[str],
    dim: int | None,
    blocks: list[tuple[int, int]],
    size: int | None,
) -> None:
    """Check every row of ``vectors.npy`` against the header: width and checksums."""
    scan.vector_count = count = len(ids)
    if not count:
        return
    npy_path = scan.path / "vectors.npy"
    try:
        matrix = read_npy_rows(npy_path, count)
        if dim is not None and matrix.shape[1] != dim:
            raise StoreCorrupt(
                f"rows of {matrix.shape[1]} floats, the header says {dim}",
                position=f"header (shape {matrix.shape})",
            )
    except StoreCorrupt as exc:
        _damaged(scan, "vectors.npy", exc.position, _problem_of(exc), size)
        scan.vectors_damaged = True
        return
    bad = vector_blocks_damaged(matrix, blocks)
    if bad:
        where = ", ".join(f"rows {start}-{end - 1}" for start, end in bad)
        _damaged(scan, "vectors.npy", where, "the rows fail their checksum", size)
        scan.vectors_damaged = True
        return
    detail = f"{count} row(s), every checksum verified" if blocks else ""
    scan.files["vectors.npy"] = FileReport("vectors.npy", "ok", "", detail, size)


def _scan_coarse(scan: _Scan) -> None:
    """vectors.ivf.npz is derived: a damaged one is ignored by loads and rebuilt by --repair."""
    ivf = scan.path / "vectors.ivf.npz"
    if not ivf.exists():
        return
    try:
        read_coarse(ivf)
    except ValueError as exc:
        scan.derived.append(
            f"vectors.ivf.npz is unreadable ({exc}); it is derived data: loads ignore it, "
            "--repair removes it and the approximate index is rebuilt"
        )


def _scan_index(scan: _Scan) -> None:
    """graph.idx is derived: a damaged one (checksum, or values that disagree with
    graph.json) is a problem --repair fixes by writing a new one; a stale one (it
    describes an older graph.json) is only noted, as the next checkpoint replaces it."""
    raw = _read(scan.path / "graph.idx")
    if raw is None or scan.graph_bytes is None or scan.graph_damaged:
        return
    try:
        body = unseal(INDEX_MAGIC, raw)
        stat = os.stat(scan.path / "graph.json")
        read_index(
            body, scan.graph_bytes, (stat.st_size, stat.st_mtime_ns), read_tail(scan.graph_bytes)
        )
    except IndexStale as exc:
        scan.notes.append(
            f"graph.idx does not describe graph.json ({exc}); it is derived data: loads "
            "parse graph.json in full and the next checkpoint writes a new index"
        )
    except DerivedUnusable as exc:
        if "kind or version" in str(exc):
            scan.notes.append(
                f"graph.idx is of another version ({exc}); loads parse graph.json in full "
                "and the next checkpoint writes a new index"
            )
        else:
            scan.derived.append(f"graph.idx is damaged ({exc}); it is derived data: " + _REBUILT)
    except Exception as exc:  # any failure to read derived data is the same: rebuild it
        scan.derived.append(
            f"graph.idx disagrees with graph.json ({type(exc).__name__}: {exc}); it is "
            "derived data: " + _REBUILT
        )


_REBUILT = "loads ignore it and --repair writes a new one"


def _scan_summary(scan: _Scan) -> None:
    raw = _read(scan.path / "summary.json")
    if raw is None:
        scan.files["summary.json"] = FileReport(
            "summary.json", "missing", "", "none yet (written when a conversation is compacted)"
        )
        return
    try:
        parse_summary(scan.path / "summary.json", raw)
    except StoreCorrupt as exc:
        _damaged(scan, "summary.json", exc.position, _problem_of(exc), len(raw))
        scan.summary_damaged = True
        return
    scan.files["summary.json"] = FileReport("summary.json", "ok", "", "", len(raw))


def _graph_now(scan: _Scan) -> Graph | None:
    """The scope's graph as a load would build it, or None when it cannot be built."""
    if scan.graph_damaged or scan.files["journal.jsonl"].state == "damaged":
        return None
    graph = scan.checkpoint_graph()
    _replay(graph, graph.seq, scan.lines)
    return graph


def _report(scan: _Scan, scope: str) -> Report:
    report = Report(scope, str(scan.path))
    report.files = [scan.files[name] for name in FILES]
    report.notes = list(scan.notes)
    report.problems = [
        f"{f.name} is damaged{f' at {f.position}' if f.position else ''}: {f.detail}"
        for f in report.files
        if f.state == "damaged"
    ] + list(scan.derived)
    graph = _graph_now(scan)
    if graph is not None:
        stored = {e["id"] for e in scan.episodes} | set(graph.episodes)
        report.counts = {
            "entities": len(graph.entities),
            "observations": graph.observation_count,
            "current observations": sum(1 for _ in graph.current_observations()),
            "relations": len(graph.relations),
            "episodes": len(stored),
            "journal commits": sum(
                1 for line in scan.lines if line.commit and line.commit.seq > scan.checkpoint_seq
            ),
            "vectors": scan.vector_count
            + sum(
                len(line.commit.vectors.ids)
                for line in scan.lines
                if line.commit and line.commit.vectors and line.commit.seq > scan.checkpoint_seq
            ),
            "keys": len(graph.extra.get("kv", {})),
        }
        cited = {o.get("episode") for _, o in graph.all_observations()} - {None}
        absent = cited - stored
        if absent:
            report.notes.append(
                f"{len(absent)} episode(s) cited by observations are not stored (erased by "
                "purge, or lost from episodes.jsonl)"
            )
    return report


def check_scope(root: str | os.PathLike[str], scope: str) -> Report:
    """Check every file of ``root / scope`` without changing anything.

    Raises:
        InvalidScope: ``scope`` breaks the naming rule.
    """
    path = Path(root) / validate_scope(scope)
    if not path.is_dir():
        report = Report(scope, str(path), [FileReport(name, "missing") for name in FILES])
        report.notes.append("the scope has no files (nothing was written to it yet)")
        return report
    return _report(_scan(path), scope)


# --------------------------------------------------------------------------- repairing
BACKUPS = "@backups"
"""The folder, next to the scopes, holding doctor's backups: ``@backups/<scope>/<time>``.
No scope id can name it ('@' is not allowed in one), so a backup is never taken
for a scope, and a scope's backups are found only under its own name."""


def backups_of(root: str | os.PathLike[str], scope: str) -> list[Path]:
    """The backups ``doctor --repair`` made of ``scope``, newest first."""
    folder = Path(root) / BACKUPS / validate_scope(scope)
    if not folder.is_dir():
        return []
    return sorted((p for p in folder.iterdir() if p.is_dir()), key=lambda p: p.name, reverse=True)


def repair_scope(
    root: str | os.PathLike[str],
    scope: str,
    provider: Provider | str | None = None,
    *,
    config: MemoryConfig | None = None,
    lock_timeout: float = LOCK_TIMEOUT,
) -> Report:
    """Back the scope up, then rebuild what can be rebuilt; the report says what was lost.

    A healthy scope is left alone (no backup). After a repair every file of the
    scope is written anew from what was kept (so the checkpoint, its index,
    the episodes and the vectors agree again). ``provider`` re-embeds the
    observations when the vectors were damaged (without one, or without an
    embedder, they are re-embedded the next time the scope is opened).

    Raises:
        InvalidScope: ``scope`` breaks the naming rule.
        StoreConflict: a writer held the scope's lock for ``lock_timeout`` seconds.
    """
    path = Path(root) / validate_scope(scope)
    before = check_scope(root, scope)
    if before.ok:
        return before
    repaired: list[str] = []
    lost: list[str] = []
    notes: list[str] = []
    store = DirectoryStore(Path(root), scope)
    backup: Path | None = None
    try:
        with store.lock(lock_timeout):
            scan = _scan(path)
            if _primary_damage(scan):
                backup = _backup(path, Path(root) / BACKUPS / scope)
                log.info("memgraph: doctor backed up scope %r to %s", scope, backup)
            base = _choose_base(scan, repaired, lost, notes)
            _repair_journal(scan, base, repaired, lost)
            _repair_episodes(scan, repaired, lost)
            if scan.summary_damaged:
                (path / "summary.json").unlink()
                repaired.append("removed the damaged summary.json")
                lost.append("the conversation summary (summary.json could not be read)")
            if scan.vectors_damaged:
                for name in ("vectors.npy", "vectors.json", "vectors.ivf.npz"):
                    with contextlib.suppress(FileNotFoundError):
                        (path / name).unlink()
                repaired.append("removed the damaged vectors (vectors.npy, vectors.json)")
            for name in _derived_to_rebuild(scan):
                with contextlib.suppress(FileNotFoundError):
                    (path / name).unlink()
                repaired.append(f"removed the damaged {name} (derived data, rebuilt from the rest)")
            fsync_dir(path)
            changed = scan.graph_damaged or scan.bad_episode_lines or scan.episodes_lost
            changed = changed or scan.files["journal.jsonl"].state == "damaged"
            if base is not None and (changed or scan.derived):
                _rewrite_consistent(store, repaired, notes)
    finally:
        store.close()
    if scan.vectors_damaged:
        _reembed(root, scope, provider, config, repaired, notes)
    after = check_scope(root, scope)
    after.backup = str(backup) if backup else None
    after.repaired, after.lost = repaired, lost
    after.notes = notes + after.notes
    for line in repaired + lost + notes:
        log.info("memgraph: doctor: %s", line)
    return after


def _primary_damage(scan: _Scan) -> bool:
    """Whether a primary file is damaged (a repair that only rebuilds derived files
    changes nothing that cannot be rebuilt, so it needs no backup)."""
    return any(f.state == "damaged" for f in scan.files.values())


def _derived_to_rebuild(scan: _Scan) -> list[str]:
    return [
        name
        for name in ("graph.idx", "vectors.ivf.npz")
        if any(line.startswith(name) for line in scan.derived)
    ]


def _rewrite_consistent(store: DirectoryStore, repaired: list[str], notes: list[str]) -> None:
    """Write every file of the scope anew from what the repair kept (under the lock
    the caller holds), so the checkpoint's counts, its index, the episodes and the
    vectors agree again."""
    try:
        state = read_scope(store)
        store.rewrite(state.document, state.vectors, state.episodes)
    except MemgraphError as exc:
        notes.append(f"the scope's files could not be written anew ({exc})")
        return
    repaired.append(
        "wrote the scope's files anew from what was kept (graph.json, graph.idx, "
        "episodes.jsonl, vectors), with fresh checksums"
    )


def _backup(path: Path, folder: Path) -> Path:
    """Copy the scope directory (owner-only) to ``folder/<UTC time>``."""
    for directory in (folder.parent, folder):
        with contextlib.suppress(FileExistsError):
            os.mkdir(directory, DIR_MODE)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = folder / stamp
    number = 1
    while target.exists():
        target = folder / f"{stamp}-{number}"
        number += 1
    os.mkdir(target, DIR_MODE)
    os.chmod(target, DIR_MODE)
    for item in sorted(path.iterdir()):
        if item.name == ".lock" or not item.is_file():
            continue
        fd = os.open(target / item.name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        try:
            os.fchmod(fd, FILE_MODE)
            with open(item, "rb") as source:
                while chunk := source.read(1 << 20):
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
    fsync_dir(target)
    fsync_dir(folder)
    return target


def _held_seq(scan: _Scan, first: int | None) -> int | None:
    """The commit the damaged checkpoint held (from its own closing line, else from
    the journal that follows it), or None when nothing tells."""
    salvaged = scan.salvaged
    if salvaged is not None and not salvaged.tail_lost and not salvaged.truncated:
        seq = salvaged.document.get("checkpointSeq")
        if type(seq) is int:
            return seq
    return first - 1 if first is not None else None


def _choose_base(
    scan: _Scan, repaired: list[str], lost: list[str], notes: list[str]
) -> tuple[Graph, int] | None:
    """The graph the journal replays onto (repairing graph.json), or None if none can be had."""
    if not scan.graph_damaged:
        graph = scan.checkpoint_graph()
        return graph, graph.seq
    readable = scan.readable_prefix()
    first = readable[0].commit.seq if readable and readable[0].commit else None
    held = _held_seq(scan, first)
    restored = _restore_backup(scan, held, first, repaired, notes)
    if restored is not None:
        return restored
    if first == 1 and _replay(Graph(), 0, readable) is None:
        with contextlib.suppress(FileNotFoundError):
            (scan.path / "graph.json").unlink()
        repaired.append(
            "removed the damaged graph.json: the scope is rebuilt from the journal alone, "
            "which holds every commit from 1 on"
        )
        lost.append(
            "whatever graph.json held that no commit in the journal wrote (e.g. a graph "
            "imported from Agency); every memgraph write is kept"
        )
        return Graph(), 0
    salvaged = _salvage(scan, held, repaired, lost)
    if salvaged is not None:
        return salvaged
    why = (
        "the journal is empty"
        if first is None
        else f"the journal starts at commit {first}, not 1"
        if first != 1
        else "the journal alone does not rebuild a valid graph"
    )
    notes.append(
        f"graph.json cannot be rebuilt: no backup holds the checkpoint it held, no record of "
        f"it can be read, and {why}. It was left untouched; restore it from a backup of your own"
    )
    return None


def _restore_backup(
    scan: _Scan, held: int | None, first: int | None, repaired: list[str], notes: list[str]
) -> tuple[Graph, int] | None:
    """Restore graph.json from this scope's newest backup that holds what the damaged
    checkpoint held: the same commit, or an older one the journal extends to it."""
    if held is None:
        return None
    for backup in backups_of(scan.path.parent, scan.path.name):
        candidate = backup / "graph.json"
        try:
            raw = candidate.read_bytes()
            graph = Graph.from_document(parse_graph(candidate, raw))
        except (OSError, StoreCorrupt, *_READ_ERRORS, StopIteration):
            continue
        seq = graph.seq
        if seq > held or (seq < held and (first is None or first > seq + 1)):
            notes.append(
                f"the backup {backup} holds the checkpoint at commit {seq}, not the damaged "
                f"one's ({held}) nor one the journal extends to it: it was not used"
            )
            continue
        atomic_write(scan.path / "graph.json", raw)
        repaired.append(
            f"restored graph.json from {candidate} (checkpoint at commit {seq}, the damaged "
            f"one held {held}); the journal replays the commits after it"
        )
        return graph, seq
    return None


def _salvage(
    scan: _Scan, held: int | None, repaired: list[str], lost: list[str]
) -> tuple[Graph, int] | None:
    """Keep every intact record of a damaged graph.json written one record per line."""
    salvaged = scan.salvaged
    if salvaged is None or not (salvaged.document["entities"] or salvaged.document["relations"]):
        return None
    document = dict(salvaged.document)
    if salvaged.tail_lost or salvaged.truncated:
        document = {"entities": document["entities"], "relations": document["relations"]}
        document["checkpointSeq"] = held or 0  # nextId: past every id in use
    try:
        graph = Graph.from_document(orjson.loads(orjson.dumps(document)))
    except _APPLY_ERRORS:
        return None
    atomic_write(scan.path / "graph.json", orjson.dumps(graph.to_document()))
    kept = f"{len(graph.entities)} entities and {len(graph.relations)} relations"
    repaired.append(f"rewrote graph.json with every intact record ({kept})")
    for number, why, record_id in salvaged.damaged:
        what = f"record {record_id!r}" if record_id else "a record whose id cannot be read"
        lost.append(f"graph.json line {number}: {what} with its facts ({why})")
    if salvaged.tail_lost:
        lost.append(
            "graph.json's closing line: the key/values, progress boards and rules kept in "
            "the checkpoint (its 'memgraph' block)"
        )
    if salvaged.truncated:
        lost.append("graph.json was cut short: every record after its last line is lost")
    return graph, graph.seq


def _repair_journal(
    scan: _Scan, base: tuple[Graph, int] | None, repaired: list[str], lost: list[str]
) -> None:
    """Drop the journal from its first bad line on (the commits before it are kept)."""
    if base is None:
        problem = _replay(None, None, scan.lines)
        folded = 0
    else:
        graph, folded = base
        problem = _replay(graph, folded, scan.lines)
    if problem is None:
        return
    number, _, detail = problem
    keep = next(line.start for line in scan.lines if line.number == number)
    dropped = [line for line in scan.lines if line.number >= number]
    atomic_write(scan.path / "journal.jsonl", scan.journal[:keep])
    last = dropped[-1].number
    repaired.append(
        f"cut journal.jsonl before line {number} ({detail}); lines {number}-{last} dropped, "
        f"{number - 1} line(s) kept"
    )
    lost.append(_describe_dropped(dropped, folded, scan.torn))


def _describe_dropped(dropped: list[_Line], folded: int, torn: int) -> str:
    commits = [line.commit for line in dropped if line.commit and line.commit.seq > folded]
    unreadable = sum(1 for line in dropped if line.commit is None)
    kinds: Counter[str] = Counter()
    texts: list[str] = []
    for commit in commits:
        assert commit is not None
        for op in commit.ops:
            kind = op.get("op") if isinstance(op, Mapping) else None
            kinds[str(kind)] += 1
            if kind == "episode":
                text = str((op.get("episode") or {}).get("text", ""))
                texts.append(text if len(text) <= 80 else text[:77] + "...")
    names = {
        "episode": "episodes",
        "entity": "entities",
        "obs": "observations",
        "rel": "relations",
        "expire_obs": "observation expirations",
        "expire_rel": "relation expirations",
        "kv": "key/value writes",
        "progress": "progress updates",
        "rule": "rule changes",
        "purge": "purges",
    }
    parts = [f"{kinds[k]} {names.get(k, k)}" for k in names if kinds[k]]
    parts += [f"{n} {k} op(s)" for k, n in kinds.items() if k not in names]
    seqs = [c.seq for c in commits if c is not None]
    span = f"commits {seqs[0]}-{seqs[-1]}" if len(seqs) > 1 else "no readable commit"
    span = f"commit {seqs[0]}" if len(seqs) == 1 else span
    text = f"journal.jsonl: {len(commits)} readable commit(s) dropped ({span})"
    if parts:
        text += ", holding " + ", ".join(parts)
    if texts:
        text += "; the dropped episodes said: " + " | ".join(repr(t) for t in texts)
    if unreadable:
        text += f"; plus {unreadable} unreadable line(s) whose content is unknown"
    if torn:
        text += f"; plus a torn tail of {torn} bytes"
    return text


def _repair_episodes(scan: _Scan, repaired: list[str], lost: list[str]) -> None:
    if scan.episodes_lost:
        # The file lost its end: what is left is rewritten by the final rewrite,
        # and the checkpoint then counts what is really there.
        cited = _cited_episodes(scan)
        missing = cited - {e["id"] for e in scan.episodes}
        lost.append(
            f"episodes.jsonl was cut short: {len(scan.episodes)} episode(s) are left, and "
            f"the text of {len(missing)} episode(s) that facts cite is gone (their facts "
            "are kept; their provenance text is lost)"
        )
    if not scan.bad_episode_lines:
        return
    kept = b"".join(seal_record(orjson.dumps(record)) + b"\n" for record in scan.episodes)
    atomic_write(scan.path / "episodes.jsonl", kept)
    numbers = ", ".join(str(n) for n in scan.bad_episode_lines)
    repaired.append(
        f"rewrote episodes.jsonl without its unreadable line(s) {numbers}; "
        f"{len(scan.episodes)} episode(s) kept"
    )
    lost.append(
        f"episodes.jsonl: the text of {len(scan.bad_episode_lines)} episode(s) on line(s) "
        f"{numbers} (their facts are kept; their provenance text is gone)"
    )


def _cited_episodes(scan: _Scan) -> set[str]:
    """The episodes the checkpoint's facts name."""
    if scan.document is None:
        return set()
    graph = scan.checkpoint_graph()
    return {o["episode"] for _, o in graph.all_observations() if o.get("episode")}


def _reembed(
    root: str | os.PathLike[str],
    scope: str,
    provider: Provider | str | None,
    config: MemoryConfig | None,
    repaired: list[str],
    notes: list[str],
) -> None:
    """Re-embed the current observations through Memory (batched) and checkpoint them."""
    try:
        with Memory(
            root, scope, provider=provider, config=config or MemoryConfig(), store="files"
        ) as memory:
            if memory.provider.embedder is None:
                notes.append("no embedder: the vectors are rebuilt the next time it has one")
                return
            memory.checkpoint()
            memory._embed_missing_episodes()
            stats = memory.stats()
            repaired.append(
                f"re-embedded {stats['current_observations']} observation(s) and "
                f"{stats['episodes']} episode(s) with {memory.embedder_model!r} and saved them"
            )
    except MemgraphError as exc:
        notes.append(
            f"the vectors could not be rebuilt now ({exc}); they are rebuilt the next time "
            "the scope is opened"
        )
