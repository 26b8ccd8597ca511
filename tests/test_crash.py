"""Crash safety: a writer killed with SIGKILL at random moments never loses a write it
acknowledged, and the scope always reopens.

``tests/crash_writer.py`` mixes remembers, key/value writes, progress steps and
notes, and prints an acknowledgement after each call returned. A fork server
(``crash_writer.py --serve``) imports memgraph once and forks one writer per
round, so a round costs milliseconds: the harness SIGKILLs the writer after a
seeded random delay, reopens the scope and checks every acknowledged write.

* 50 random kills, half of them with frequent checkpoints (the CI run);
* 20 random kills with a checkpoint after every write, so kills land inside
  checkpoints (how many did is counted and must be at least one);
* a writer that kills itself at each step of a commit or checkpoint (a torn
  journal line, episodes appended, vector rows appended, a half-written
  ``graph.json``, ``graph.json`` replaced before the journal, ...);
* several writers at once, one of them killed (separate interpreters);
* the slow variant: ``MEMGRAPH_CRASH_KILLS`` random kills (300 by default).

``MEMGRAPH_CRASH_SEED`` sets the seed. Each test prints its figures (kills,
acknowledged writes checked); run with ``-s`` to see them.
"""

from __future__ import annotations

import contextlib
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import orjson
import pytest

from memgraph import Memory, NotFound
from memgraph.llm_calls.provider import resolve_provider
from memgraph.store import Commit, DirectoryStore
from tests.crash_writer import DIE_POINTS

WRITER = Path(__file__).resolve().with_name("crash_writer.py")
SCOPE = "crash"
SEED = int(os.environ.get("MEMGRAPH_CRASH_SEED", "20261130"))
STARTUP_TIMEOUT = 60.0
ROUND_TIMEOUT = 60.0
MAX_DELAY = 0.25
DEFAULTS = ("-", "-")
FREQUENT_CHECKPOINTS = ("3000", "0.01")  # MIN_JOURNAL_BYTES, JOURNAL_RATIO
EVERY_WRITE_CHECKPOINTS = ("1", "0")
FREQUENT_CHECKPOINTS_ENV = {
    "MEMGRAPH_CRASH_JOURNAL_BYTES": FREQUENT_CHECKPOINTS[0],
    "MEMGRAPH_CRASH_JOURNAL_RATIO": FREQUENT_CHECKPOINTS[1],
}

Ack = tuple[str, int, str]  # (kind, i, step): ("remember", 4, ""), ("progress", 6, "start")


def parse_acks(lines: list[str]) -> list[Ack]:
    """The acknowledgements among a writer's output lines."""
    acks: list[Ack] = []
    for line in lines:
        kind, _, rest = line.partition(" ")
        if kind in ("remember", "kv", "progress", "note"):
            number, _, step = rest.partition(" ")
            acks.append((kind, int(number), step))
    return acks


def next_first(acks: list[Ack]) -> int:
    return max((i for _, i, _ in acks), default=-1) + 1


# --------------------------------------------------------------------------- checking
def check_files(root: Path, scope: str = SCOPE) -> None:
    """The scope's files load, every complete journal line is a commit, and the commits
    after the checkpoint are contiguous."""
    store = DirectoryStore(root, scope)
    try:
        snapshot = store.load()
        list(store.episodes())
    finally:
        store.close()
    journal = store.journal_path.read_bytes() if store.journal_path.exists() else b""
    for line in journal.split(b"\n")[:-1]:
        Commit.from_record(orjson.loads(line))
    seqs = [c.seq for c in snapshot.commits]
    if seqs:
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "commits are contiguous"


def verify(root: Path, acks: list[Ack], scope: str = SCOPE) -> int:
    """The scope reopens without error and holds every acknowledged write.

    Returns:
        How many acknowledged writes were checked.
    """
    check_files(root, scope)
    lost: list[Ack] = []
    with Memory(root, scope, provider=resolve_provider("mock")) as memory:
        entities = {e.name: e for e in memory.entities()}
        ids = [e.id for e in entities.values()]
        ids += [o.id for e in entities.values() for o in e.observations]
        assert len(ids) == len(set(ids)), "ids are unique"
        texts = {episode.text for episode in memory.iter_episodes()}
        notes = {n.content for n in memory.notes(tags="crash", limit=10**9)}
        for ack in acks:
            kind, i, step = ack
            if kind == "remember":
                person = entities.get(f"Person{i}")
                facts = [o.content for o in person.observations] if person else []
                kept = f"works at Company{i}" in facts
                kept = kept and f"Person{i} works at Company{i}." in texts
            elif kind == "kv":
                kept = memory.kv.recall(f"key{i}") == {"i": i}
            elif kind == "progress":
                try:
                    fetch = memory.progress(f"board{i}").steps[0]
                except NotFound:
                    kept = False
                else:
                    kept = (
                        step == "create"
                        or (step == "start" and fetch.status in ("running", "done"))
                        or (fetch.status == "done" and fetch.result == i)
                    )
            else:
                kept = f"crash note {i}" in notes
            if not kept:
                lost.append(ack)
    assert not lost, f"acknowledged writes lost: {lost[:20]} ({len(lost)} in all; seed {SEED})"
    return len(acks)


# --------------------------------------------------------------------------- the fork server
@dataclass
class Round:
    """One forked writer: what it printed and how it ended."""

    lines: list[str]
    status: int

    @property
    def killed(self) -> bool:
        return os.WIFSIGNALED(self.status) and os.WTERMSIG(self.status) == signal.SIGKILL

    @property
    def inside_checkpoint(self) -> bool:
        """The kill landed between the first step of a checkpoint and its end."""
        last = self.lines[-1] if self.lines else ""
        return last.startswith("cp ") and last != "cp end"


@dataclass
class ForkServer:
    """``crash_writer.py --serve`` and a thread reading its output lines."""

    process: subprocess.Popen[str]
    stderr: IO[str]
    log: Path
    lines: queue.Queue[str | None] = field(default_factory=queue.Queue)

    @classmethod
    def start(cls, workdir: Path) -> ForkServer:
        log = workdir / "writer-stderr.log"
        stderr = open(log, "w")  # noqa: SIM115 - closed in close()
        process = subprocess.Popen(
            [sys.executable, str(WRITER), "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            cwd=workdir,
            env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"},
        )
        server = cls(process, stderr, log)
        threading.Thread(target=server._read, daemon=True).start()
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while server.next_line(deadline) != "serving":
            pass
        return server

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.endswith("\n"):
                self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def next_line(self, deadline: float) -> str:
        try:
            line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.001))
        except queue.Empty:
            raise AssertionError(f"the writer went quiet; its stderr:\n{self.errors()}") from None
        if line is None:
            raise AssertionError(f"the fork server exited; its stderr:\n{self.errors()}")
        return line

    def errors(self) -> str:
        self.stderr.flush()
        return self.log.read_text()[-3000:]

    def round(
        self,
        root: Path,
        first: int,
        *,
        thresholds: tuple[str, str] = DEFAULTS,
        delay: float | None = None,
        die_at: str | None = None,
        nth: int = 1,
        limit: int = 100_000,
    ) -> Round:
        """Fork one writer; SIGKILL it ``delay`` seconds after it is ready (if given)."""
        assert self.process.stdin is not None
        command = [
            "run",
            str(root),
            SCOPE,
            str(first),
            str(limit),
            *thresholds,
            die_at or "-",
            str(nth),
        ]
        self.process.stdin.write(" ".join(command) + "\n")
        self.process.stdin.flush()
        deadline = time.monotonic() + ROUND_TIMEOUT
        # The child runs as soon as it is forked: its first lines may come before the
        # server's "started PID".
        lines: list[str] = []
        pid = 0
        while not pid or (delay is not None and "ready" not in lines):
            line = self.next_line(deadline)
            if line.startswith("started "):
                pid = int(line.split()[1])
            else:
                assert not line.startswith("exited"), f"{line}; stderr:\n{self.errors()}"
                lines.append(line)
        if delay is not None:
            time.sleep(delay)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)  # not reaped before "exited": the pid is ours
        while not (line := self.next_line(deadline)).startswith(f"exited {pid} "):
            lines.append(line)
        return Round(lines, int(line.split()[2]))

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.stderr.close()


@contextlib.contextmanager
def fork_server(workdir: Path) -> Iterator[ForkServer]:
    server = ForkServer.start(workdir)
    try:
        yield server
    finally:
        server.close()


@dataclass
class Figures:
    kills: int = 0
    inside_checkpoint: int = 0
    acknowledged: int = 0
    checks: int = 0
    kinds: Counter[str] = field(default_factory=Counter)

    def __str__(self) -> str:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(self.kinds.items()))
        return (
            f"{self.kills} kills ({self.inside_checkpoint} inside a checkpoint), "
            f"{self.acknowledged} acknowledged writes ({kinds}), "
            f"{self.checks} acknowledged-write checks after reopening, 0 lost"
        )


def crash_repeatedly(
    tmp_path: Path, kills: int, *, thresholds: list[tuple[str, str]], seed: int
) -> Figures:
    """Kill a writer ``kills`` times at random moments; reopen and verify after each."""
    root = tmp_path / "memory"
    rng = random.Random(seed)
    acks: list[Ack] = []
    figures = Figures()
    with fork_server(tmp_path) as server:
        for number in range(kills):
            result = server.round(
                root,
                next_first(acks),
                thresholds=thresholds[number % len(thresholds)],
                delay=rng.uniform(0.0, MAX_DELAY),
            )
            assert result.killed, f"the writer ended by itself: {result.status}"
            acks += parse_acks(result.lines)
            figures.kills += 1
            figures.inside_checkpoint += result.inside_checkpoint
            figures.checks += verify(root, acks)
    figures.acknowledged = len(acks)
    figures.kinds = Counter(kind for kind, _, _ in acks)
    return figures


# --------------------------------------------------------------------------- tests
@pytest.mark.timeout(240)
def test_a_writer_killed_50_times_at_random_moments_never_loses_an_acknowledged_write(
    tmp_path: Path,
) -> None:
    figures = crash_repeatedly(tmp_path, 50, thresholds=[DEFAULTS, FREQUENT_CHECKPOINTS], seed=SEED)
    print(f"\nrandom kills: {figures}")
    assert figures.kills == 50
    assert set(figures.kinds) == {"remember", "kv", "progress", "note"}, figures.kinds


@pytest.mark.timeout(240)
def test_kills_inside_checkpoints_never_lose_an_acknowledged_write(tmp_path: Path) -> None:
    figures = crash_repeatedly(tmp_path, 20, thresholds=[EVERY_WRITE_CHECKPOINTS], seed=SEED + 1)
    print(f"\nkills with a checkpoint after every write: {figures}")
    assert figures.kills == 20
    assert figures.inside_checkpoint >= 1, "no kill landed inside a checkpoint"
    assert figures.acknowledged > 0


@pytest.mark.timeout(240)
def test_a_writer_dying_at_each_step_of_a_commit_or_checkpoint_loses_nothing_acknowledged(
    tmp_path: Path,
) -> None:
    root = tmp_path / "memory"
    acks: list[Ack] = []
    deaths = 0
    with fork_server(tmp_path) as server:
        for nth in (1, 3):
            for point in DIE_POINTS:
                result = server.round(
                    root,
                    next_first(acks),
                    thresholds=EVERY_WRITE_CHECKPOINTS,
                    die_at=point,
                    nth=nth,
                    limit=200,
                )
                assert result.killed and f"die {point}" in result.lines, (point, result.lines)
                acks += parse_acks(result.lines)
                if point == "torn-commit":
                    journal = (root / SCOPE / "journal.jsonl").read_bytes()
                    assert not journal.endswith(b"\n"), "the journal ends in a torn line"
                verify(root, acks)
                deaths += 1
        # The writer after the last death still writes, checkpoints and keeps everything.
        result = server.round(root, next_first(acks), thresholds=EVERY_WRITE_CHECKPOINTS, limit=8)
        assert result.status == 0 and "cp end" in result.lines, result.lines
        acks += parse_acks(result.lines)
        checks = verify(root, acks)
    print(f"\nself-kills at {len(DIE_POINTS)} points x 2: {deaths} deaths, {checks} checks, 0 lost")


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_many_kills_never_lose_an_acknowledged_write(tmp_path: Path) -> None:
    kills = int(os.environ.get("MEMGRAPH_CRASH_KILLS", "300"))
    figures = crash_repeatedly(
        tmp_path,
        kills,
        thresholds=[DEFAULTS, FREQUENT_CHECKPOINTS, EVERY_WRITE_CHECKPOINTS],
        seed=SEED + kills,
    )
    print(f"\nslow random kills: {figures}")
    assert figures.kills == kills


# --------------------------------------------------------------------------- several writers
@dataclass
class Writer:
    """One writer in its own interpreter (``crash_writer.py DIR SCOPE FIRST LIMIT``)."""

    process: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None

    @classmethod
    def start(cls, root: Path, first: int, env: dict[str, str], limit: int = 100_000) -> Writer:
        process = subprocess.Popen(
            [sys.executable, str(WRITER), str(root), SCOPE, str(first), str(limit)],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=root.parent,
        )
        writer = cls(process)
        writer.reader = threading.Thread(target=writer._read, daemon=True)
        writer.reader.start()
        return writer

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.endswith("\n"):  # a line cut by the kill was never acknowledged
                self.lines.append(line.strip())

    def wait_until_ready(self) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while "ready" not in self.lines:
            if self.process.poll() is not None:
                raise AssertionError(f"the writer exited with {self.process.returncode}")
            if time.monotonic() > deadline:
                raise AssertionError("the writer did not start in time")
            time.sleep(0.01)

    def kill(self) -> list[Ack]:
        """SIGKILL the writer; the writes it acknowledged before dying."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        return self.finish()

    def finish(self, timeout: float = 30) -> list[Ack]:
        """Wait for the writer to end; the writes it acknowledged."""
        self.process.wait(timeout=timeout)
        assert self.reader is not None
        self.reader.join(timeout=30)
        assert self.process.stdout is not None
        self.process.stdout.close()
        return parse_acks(self.lines)


@pytest.mark.timeout(300)
def test_concurrent_writers_never_lose_an_acknowledged_write(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    env = {**os.environ, **FREQUENT_CHECKPOINTS_ENV}
    writers = [Writer.start(root, k * 100_000, env, limit=60) for k in range(3)]
    doomed = Writer.start(root, 300_000, env)
    acks: list[Ack] = []
    try:
        doomed.wait_until_ready()
        time.sleep(random.Random(SEED).uniform(0.2, 0.6))
    finally:
        acks += doomed.kill()
        for writer in writers:
            acks += writer.finish(timeout=120)
    failed = [w.process.returncode for w in writers if w.process.returncode]
    assert not failed, f"writers failed with {failed}"
    assert len({a[1] for a in acks if a[1] < 300_000}) == 3 * 60
    checks = verify(root, acks)
    killed = len([a for a in acks if a[1] >= 300_000])
    print(f"\n3 writers x 60 writes + 1 killed writer ({killed} acknowledged): {checks} checks")
