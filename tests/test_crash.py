"""Crash safety: a writer killed with SIGKILL at random moments never loses a write it
acknowledged, and the scope always reopens.

``tests/crash_writer.py`` remembers ``Person{i} works at Company{i}.`` in a loop
and prints ``i`` once ``remember`` returned. The harness kills it after a seeded
random delay, reopens the scope, and checks that every printed ``i`` is there.
Half of the rounds force frequent checkpoints so kills land inside them too.

``MEMGRAPH_CRASH_KILLS`` sets the number of kills of the slow variant and
``MEMGRAPH_CRASH_SEED`` the seed of both.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memgraph import Memory, NotFound
from memgraph.provider import resolve_provider
from memgraph.store import DirectoryStore

WRITER = Path(__file__).resolve().with_name("crash_writer.py")
SCOPE = "crash"
SEED = int(os.environ.get("MEMGRAPH_CRASH_SEED", "20261130"))
STARTUP_TIMEOUT = 60.0
MAX_DELAY = 0.4
FREQUENT_CHECKPOINTS = {
    "MEMGRAPH_CRASH_JOURNAL_BYTES": "3000",
    "MEMGRAPH_CRASH_JOURNAL_RATIO": "0.01",
}


@dataclass
class Writer:
    """One run of the writer subprocess and the lines it printed."""

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

    def kill(self) -> list[int]:
        """SIGKILL the writer; the ``i`` it acknowledged before dying."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        return self.finish()

    def finish(self, timeout: float = 30) -> list[int]:
        """Wait for the writer to end; the ``i`` it acknowledged."""
        self.process.wait(timeout=timeout)
        assert self.reader is not None
        self.reader.join(timeout=30)
        assert self.process.stdout is not None
        self.process.stdout.close()
        return [int(line) for line in self.lines if line.isdigit()]


def verify(root: Path, acknowledged: list[int]) -> None:
    """The scope reopens without error and holds every acknowledged write."""
    store = DirectoryStore(root, SCOPE)
    try:
        store.load()
        list(store.episodes())
    finally:
        store.close()
    with Memory(root, SCOPE, provider=resolve_provider("mock")) as memory:
        missing = []
        for i in acknowledged:
            try:
                memory.entity(f"Person{i}")
            except NotFound:
                missing.append(i)
        assert not missing, f"acknowledged writes lost: {missing} (seed {SEED})"
        texts = {episode.text for episode in memory.iter_episodes()}
        lost = [i for i in acknowledged if f"Person{i} works at Company{i}." not in texts]
        assert not lost, f"episodes of acknowledged writes lost: {lost} (seed {SEED})"


def crash_repeatedly(root: Path, kills: int, budget: float) -> tuple[int, int]:
    """Kill and reopen ``kills`` times (or until ``budget`` seconds ran out)."""
    rng = random.Random(SEED + kills)
    acknowledged: list[int] = []
    started = time.monotonic()
    done = 0
    for round_ in range(kills):
        if time.monotonic() - started > budget:
            break
        env = dict(os.environ)
        if round_ % 2:
            env.update(FREQUENT_CHECKPOINTS)
        writer = Writer.start(root, max(acknowledged, default=-1) + 1, env)
        try:
            writer.wait_until_ready()
            time.sleep(rng.uniform(0.0, MAX_DELAY))
        finally:
            acknowledged += writer.kill()
        done += 1
        verify(root, acknowledged)
    return done, len(acknowledged)


def test_a_killed_writer_never_loses_an_acknowledged_write(tmp_path: Path) -> None:
    done, written = crash_repeatedly(tmp_path / "memory", kills=10, budget=40.0)
    assert done >= 5, f"only {done} kills fit in the time budget"
    assert written > 0, "the writer never acknowledged a write"


@pytest.mark.slow
def test_many_kills_never_lose_an_acknowledged_write(tmp_path: Path) -> None:
    kills = int(os.environ.get("MEMGRAPH_CRASH_KILLS", "60"))
    done, written = crash_repeatedly(tmp_path / "memory", kills=kills, budget=600.0)
    assert done >= min(kills, 20), f"only {done} kills fit in the time budget"
    assert written > 0


def test_concurrent_writers_never_lose_an_acknowledged_write(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    env = {**os.environ, **FREQUENT_CHECKPOINTS}
    writers = [Writer.start(root, k * 100_000, env, limit=60) for k in range(3)]
    doomed = Writer.start(root, 300_000, env)
    acknowledged: list[int] = []
    try:
        doomed.wait_until_ready()
        time.sleep(random.Random(SEED).uniform(0.2, 0.6))
    finally:
        acknowledged += doomed.kill()
        for writer in writers:
            acknowledged += writer.finish(timeout=120)
    failed = [w.process.returncode for w in writers if w.process.returncode]
    assert not failed, f"writers failed with {failed}"
    assert len(acknowledged) >= 3 * 60
    verify(root, acknowledged)
