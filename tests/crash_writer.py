"""A writer for the crash tests: writes one thing after another until it is killed.

Write ``i`` (for ``i = FIRST, FIRST + 1, ...``) is, by ``i % 4``:

0. ``remember("Person{i} works at Company{i}.")``, acknowledged ``remember i``;
1. ``kv.remember("key{i}", {"i": i})``, acknowledged ``kv i``;
2. a progress board ``board{i}``: ``create_progress``, ``start_step("fetch")``,
   ``complete_step("fetch", result=i)``, acknowledged ``progress i create``,
   ``progress i start`` and ``progress i complete`` one by one;
3. ``note("crash note {i}", category="learning", tags=["crash"])``, acknowledged
   ``note i``.

Each acknowledgement is written with one ``write(2)`` (so a kill never cuts it)
only after the call returned: every acknowledged write is one the memory
promised to keep. ``ready`` is printed once the scope is loaded.

Two ways to run it:

``python tests/crash_writer.py DIR SCOPE FIRST [LIMIT]``
    One writer process (used by the concurrent-writers crash test).

``python tests/crash_writer.py --serve``
    A fork server: it imports memgraph once, then for each command line
    ``run DIR SCOPE FIRST LIMIT JOURNAL_BYTES JOURNAL_RATIO DIE_AT NTH`` on
    stdin forks a child that runs the writer, prints ``started PID``, waits for
    the child and prints ``exited PID STATUS`` (the raw ``waitpid`` status). The
    harness SIGKILLs the child; forking instead of starting a new interpreter
    makes a round cost milliseconds instead of a second, so many kills fit in
    a CI run. ``JOURNAL_BYTES`` / ``JOURNAL_RATIO`` (``-`` for the defaults)
    patch ``memgraph.store.directory.MIN_JOURNAL_BYTES`` / ``JOURNAL_RATIO`` in
    the child so that checkpoints are frequent and kills land inside them.
    ``DIE_AT`` (``-`` for none) names a point inside a commit or a checkpoint
    where the child SIGKILLs itself the ``NTH`` time it gets there.

While a checkpoint runs the child prints ``cp <step>`` before each of its steps
(``episodes``, ``vectors``, ``graph``) and ``cp end`` after it, so the harness
can tell which kills landed inside a checkpoint.

Environment (single-writer mode): ``MEMGRAPH_CRASH_JOURNAL_BYTES`` and
``MEMGRAPH_CRASH_JOURNAL_RATIO`` patch the same two thresholds.

Every writer stops by itself after ``LIMIT`` writes, after two minutes, or when
the process that started it (or the test process) is gone, so a crashed test
run leaves no process behind.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

DIE_POINTS = (
    "torn-commit",  # half of a journal line written, then killed
    "episodes-appended",  # checkpoint: episodes.jsonl appended, nothing else
    "vector-rows-appended",  # checkpoint: vectors.npy grown, vectors.json not yet
    "vectors-json-tmp",  # checkpoint: the new vectors.json written but not renamed
    "graph-tmp-half",  # checkpoint: half of the new graph.json written, not renamed
    "graph-replaced",  # checkpoint: graph.json replaced, the journal not yet
    "journal-replaced",  # checkpoint: complete, the call not yet returned
)
WRITER_SECONDS = 120.0

Emit = Callable[[str], None]


def emit(line: str) -> None:
    """One whole line on stdout in one ``write(2)``: a kill never cuts it."""
    data = (line + "\n").encode()
    while data:
        data = data[os.write(1, data) :]


def set_thresholds(journal_bytes: str | None, journal_ratio: str | None) -> None:
    from memgraph.store import directory

    if journal_bytes:
        directory.MIN_JOURNAL_BYTES = int(journal_bytes)
    if journal_ratio:
        directory.JOURNAL_RATIO = float(journal_ratio)


def install_probes(out: Emit, die_at: str | None, nth: int) -> None:
    """Report checkpoint steps on ``out`` and die at ``die_at`` the ``nth`` time."""
    import orjson

    from memgraph.store import directory

    if die_at is not None and die_at not in DIE_POINTS:
        raise SystemExit(f"unknown die point {die_at!r}; use one of {DIE_POINTS}")
    reached = {"count": 0}
    store = directory.DirectoryStore

    def point(name: str) -> bool:
        """True when the child must die here (``nth`` arrival at ``die_at``)."""
        if name != die_at:
            return False
        reached["count"] += 1
        return reached["count"] == nth

    def die(name: str) -> None:
        out(f"die {name}")
        os.kill(os.getpid(), signal.SIGKILL)

    original_commit = store.commit
    original_episodes = store._append_episodes
    original_vectors = store._save_vectors
    original_replace = store._replace_checkpoint
    original_atomic_write = directory.atomic_write
    original_start = directory.start_atomic_write

    def commit(self: Any, commit: Any) -> None:
        if point("torn-commit"):
            line = orjson.dumps(commit.to_record(), option=orjson.OPT_SERIALIZE_NUMPY) + b"\n"
            self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.journal_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            os.write(fd, line[: len(line) // 2])
            os.fsync(fd)
            die("torn-commit")
        original_commit(self, commit)

    def append_episodes(self: Any, episodes: Any) -> None:
        out("cp episodes")
        original_episodes(self, episodes)
        if point("episodes-appended"):
            die("episodes-appended")

    def save_vectors(self: Any, index: Any) -> None:
        out("cp vectors")
        original_vectors(self, index)

    def replace_checkpoint(self: Any, document: Any, *args: Any, **kwargs: Any) -> None:
        out("cp graph")
        original_replace(self, document, *args, **kwargs)
        out("cp end")
        if point("journal-replaced"):
            die("journal-replaced")

    def atomic_write(path: Path, data: bytes) -> None:
        if path.name == "vectors.json":
            if point("vector-rows-appended"):
                die("vector-rows-appended")
            if point("vectors-json-tmp"):
                _write_tmp(path, data)
                die("vectors-json-tmp")
        if path.name == "graph.json" and point("graph-tmp-half"):
            _write_tmp(path, data[: len(data) // 2])
            die("graph-tmp-half")
        original_atomic_write(path, data)
        if path.name == "graph.json" and point("graph-replaced"):
            die("graph-replaced")

    class StartedWrite:
        """``graph.json`` written in the background: the same die points as above."""

        def __init__(self, path: Path, data: bytes | None = None) -> None:
            self.path = path
            self.parts = [] if data is None else [bytes(data)]
            self.writing = original_start(path, data)

        def put(self, part: bytes) -> None:
            self.parts.append(bytes(part))
            self.writing.put(part)

        def finish(self) -> None:
            if self.path.name == "graph.json" and point("graph-tmp-half"):
                data = b"".join(self.parts)
                _write_tmp(self.path, data[: len(data) // 2])
                die("graph-tmp-half")
            self.writing.finish()
            if self.path.name == "graph.json" and point("graph-replaced"):
                die("graph-replaced")

        def cancel(self) -> None:
            self.writing.cancel()

    store.commit = commit  # type: ignore[method-assign]
    store._append_episodes = append_episodes  # type: ignore[method-assign]
    store._save_vectors = save_vectors  # type: ignore[method-assign]
    store._replace_checkpoint = replace_checkpoint  # type: ignore[method-assign]
    directory.atomic_write = atomic_write  # type: ignore[assignment]
    directory.start_atomic_write = StartedWrite  # type: ignore[assignment,misc]


def _write_tmp(path: Path, data: bytes) -> None:
    """What ``atomic_write`` does before its rename."""
    fd = os.open(path.with_name(f".{path.name}.tmp"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def write(
    root: str, scope: str, first: int, limit: int, out: Emit, alive: Callable[[], bool]
) -> int:
    """Write ``limit`` things from ``first`` on, acknowledging each on ``out``."""
    from memgraph import Memory
    from memgraph.llm_calls.provider import resolve_provider

    deadline = time.monotonic() + WRITER_SECONDS
    with Memory(root, scope, provider=resolve_provider("mock")) as memory:
        memory.stats()  # load the scope before saying ready
        out("ready")
        for i in range(first, first + limit):
            if not alive() or time.monotonic() > deadline:
                return 1
            kind = i % 4
            if kind == 0:
                memory.remember(f"Person{i} works at Company{i}.")
                out(f"remember {i}")
            elif kind == 1:
                memory.kv.remember(f"key{i}", {"i": i})
                out(f"kv {i}")
            elif kind == 2:
                board = f"board{i}"
                memory.create_progress(board, ["fetch", "store"])
                out(f"progress {i} create")
                memory.start_step(board, "fetch")
                out(f"progress {i} start")
                memory.complete_step(board, "fetch", result=i)
                out(f"progress {i} complete")
            else:
                memory.note(f"crash note {i}", category="learning", tags=["crash"])
                out(f"note {i}")
    return 0


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def warm_up() -> None:
    """Import and exercise everything once so forked children start instantly."""
    import shutil
    import tempfile

    root = tempfile.mkdtemp(prefix="memgraph-crash-warmup-")
    try:
        write(root, "warmup", 0, 4, lambda line: None, lambda: True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def serve() -> int:
    """The fork server: one forked writer per ``run`` command on stdin."""
    harness, server = os.getppid(), os.getpid()
    warm_up()
    emit("serving")
    for command in sys.stdin:
        parts = command.split()
        if not parts:
            continue
        if parts[0] != "run" or len(parts) != 9:
            emit(f"error bad command {command.strip()!r}")
            return 2
        root, scope, first, limit = parts[1], parts[2], int(parts[3]), int(parts[4])
        journal_bytes, journal_ratio, die_at, nth = parts[5:9]
        pid = os.fork()
        if pid == 0:  # the child: never return into the server's loop
            code = 1
            try:
                set_thresholds(
                    None if journal_bytes == "-" else journal_bytes,
                    None if journal_ratio == "-" else journal_ratio,
                )
                install_probes(emit, None if die_at == "-" else die_at, int(nth))
                code = write(
                    root,
                    scope,
                    first,
                    limit,
                    emit,
                    lambda: os.getppid() == server and _process_alive(harness),
                )
            except BaseException:
                import traceback

                traceback.print_exc()
            finally:
                os._exit(code)
        emit(f"started {pid}")
        _, status = os.waitpid(pid, 0)
        emit(f"exited {pid} {status}")
    return 0


def main() -> int:
    if sys.argv[1:] == ["--serve"]:
        return serve()
    root, scope, first = sys.argv[1], sys.argv[2], int(sys.argv[3])
    limit = int(sys.argv[4]) if len(sys.argv) > 4 else 100_000
    parent = os.getppid()
    set_thresholds(
        os.environ.get("MEMGRAPH_CRASH_JOURNAL_BYTES"),
        os.environ.get("MEMGRAPH_CRASH_JOURNAL_RATIO"),
    )
    return write(root, scope, first, limit, emit, lambda: os.getppid() == parent)


if __name__ == "__main__":
    sys.exit(main())
