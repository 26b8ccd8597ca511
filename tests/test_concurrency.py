"""Several processes on one scope: every write lands, ids stay unique, the files stay
valid, readers always see a consistent state, and a writer that cannot get the lock
gets a clear ``StoreConflict`` instead of hanging.

``tests/concurrency_worker.py`` holds the writer and reader processes. K = 4
writers each make M calls through the public API (remember, remember_many and
key/value writes) while two readers poll the scope. M is
``MEMGRAPH_CONCURRENCY_WRITES`` (200 by default: 800 calls, 1,000 texts and
keys). Run with ``-s`` to see the figures.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from memgraph import Memory, StoreConflict
from memgraph.admin.doctor import check_scope
from memgraph.cli import cli
from memgraph.llm_calls.provider import resolve_provider
from tests.test_crash import check_files

WORKER = Path(__file__).resolve().with_name("concurrency_worker.py")
SCOPE = "shared"
K = 4
M = int(os.environ.get("MEMGRAPH_CONCURRENCY_WRITES", "200"))
READERS = 2
TIMEOUT = 240.0


@dataclass
class Run:
    root: Path
    writers: list[tuple[int, str, str]]  # (returncode, stdout, stderr)
    readers: list[tuple[int, str, str]]
    seconds: float


def _start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """K writers x M calls on one scope while READERS readers poll it; run once."""
    work = tmp_path_factory.mktemp("concurrency")
    root, stop = work / "memory", work / "stop"
    writers = [_start("write", str(root), SCOPE, str(k), str(M), cwd=work) for k in range(K)]
    readers = [_start("read", str(root), SCOPE, str(stop), cwd=work) for _ in range(READERS)]
    processes = writers + readers
    try:
        for process in processes:
            assert process.stdout is not None
            assert process.stdout.readline().strip() == "ready"
        started = time.monotonic()
        for writer in writers:  # start signal: all writers begin together
            assert writer.stdin is not None
            writer.stdin.write("go\n")
            writer.stdin.flush()
        writer_results = [_finish(w, TIMEOUT) for w in writers]
        seconds = time.monotonic() - started
        stop.touch()
        reader_results = [_finish(r, 60) for r in readers]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait(10)
    yield Run(root, writer_results, reader_results, seconds)


def _finish(process: subprocess.Popen[str], timeout: float) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out, err


def test_every_write_of_four_concurrent_writers_is_present_with_unique_ids(run: Run) -> None:
    for code, out, err in run.writers:
        assert code == 0, err[-2000:]
        assert out.split("\n")[-2] == "done"
        assert [line for line in out.split("\n") if line.startswith("ack ")] == [
            f"ack {j}" for j in range(M)
        ]
    missing: list[str] = []
    checked = 0
    with Memory(run.root, SCOPE, provider=resolve_provider("mock")) as memory:
        document = orjson.loads(memory.export("json"))
        names = {e["name"]: e for e in document["entities"]}
        texts = {e["text"] for e in document["episodes"]}
        kv = document["memgraph"]["kv"]
        for k in range(K):
            for j in range(M):
                kind = j % 4
                if kind == 0:
                    expected = {f"W{k}P{j}": f"works at C{k}x{j}"}
                    said = [f"W{k}P{j} works at C{k}x{j}."]
                elif kind == 2:
                    expected = {f"W{k}Q{j}": f"lives in T{k}x{j}", f"W{k}R{j}": f"likes tea{k}x{j}"}
                    said = [f"W{k}Q{j} lives in T{k}x{j}.", f"W{k}R{j} likes tea{k}x{j}."]
                else:
                    checked += 1
                    versions = kv.get(f"w{k}-{j}", [])
                    if [v["value"] for v in versions] != [{"k": k, "j": j}]:
                        missing.append(f"w{k}-{j}")
                    continue
                for name, fact in expected.items():
                    checked += 1
                    facts = [o["content"] for o in names.get(name, {}).get("observations", [])]
                    if fact not in facts:
                        missing.append(f"{name}: {fact}")
                for text in said:
                    checked += 1
                    if text not in texts:
                        missing.append(f"episode {text!r}")
    assert not missing, f"{len(missing)} writes missing: {missing[:20]}"
    entities = document["entities"]
    observations = [o["id"] for e in entities for o in e["observations"]]
    ids = [e["id"] for e in entities] + observations
    ids += [r["id"] for r in document["relations"]] + [e["id"] for e in document["episodes"]]
    assert len(ids) == len(set(ids)), "ids are unique"
    print(
        f"\n{K} writers x {M} calls in {run.seconds:.1f} s: {checked} writes checked "
        f"({len(texts)} episodes, {len(kv)} keys, {len(ids)} ids, all unique), 0 missing"
    )


def test_the_files_are_valid_and_doctor_finds_nothing_after_concurrent_writes(run: Run) -> None:
    check_files(run.root, SCOPE)
    report = check_scope(run.root, SCOPE)
    assert report.ok, report.render()
    result = CliRunner().invoke(cli, ["doctor", "--dir", str(run.root), "--scope", SCOPE])
    assert result.exit_code == 0, result.output
    assert "healthy" in result.output


def test_readers_in_other_processes_always_see_a_consistent_state(run: Run) -> None:
    polls = []
    for code, out, err in run.readers:
        assert code == 0, err[-2000:]
        polls.append(int(out.split()[-1]))
    assert all(n > 0 for n in polls), polls
    print(f"\n{READERS} readers polled {sum(polls)} consistent snapshots, 0 inconsistent")


LOCK_HOLDER = """
import fcntl, os, sys, time
os.makedirs(os.path.dirname(sys.argv[1]), mode=0o700, exist_ok=True)
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.readline()
"""


def test_a_writer_that_cannot_get_the_lock_in_time_gets_a_clear_store_conflict(
    tmp_path: Path,
) -> None:
    root = tmp_path / "memory"
    with Memory(root, SCOPE, provider="mock") as memory:
        memory.kv.remember("before", 1)
    journal = (root / SCOPE / "journal.jsonl").read_bytes()
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(root / SCOPE / ".lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        config = {"lockTimeout": 0.3}
        with Memory(root, SCOPE, provider="mock", config=config) as memory:
            for write in (
                lambda: memory.kv.remember("blocked", 2),
                lambda: memory.remember("Alice works at Acme."),
                lambda: memory.note("blocked", category="context"),
            ):
                started = time.monotonic()
                with pytest.raises(StoreConflict) as caught:
                    write()
                assert time.monotonic() - started < 5, "gave up promptly"
                message = str(caught.value)
                assert f"scope {SCOPE!r} is locked by another writer" in message
                assert "0.3 s" in message and "lockTimeout" in message
            assert memory.kv.recall("before") == 1, "reads need no lock"
        assert (root / SCOPE / "journal.jsonl").read_bytes() == journal, "nothing was written"
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(10)
        if holder.stdout is not None:
            holder.stdout.close()
    with Memory(root, SCOPE, provider="mock", config={"lockTimeout": 5}) as memory:
        memory.kv.remember("after", 3)
        assert memory.kv.keys() == ["before", "after"]
