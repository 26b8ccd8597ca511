"""A write that fails at any stage stores nothing, and the memory serves nothing of it.

Every write path (``remember``, ``remember_many``, ``forget``, ``purge``, key/values,
progress) is failed at every stage it has: before extraction (the model call),
after extraction (the scope's lock cannot be had), at embedding, at commit (the
journal cannot be synced: a full disk) and at the checkpoint that follows a
commit. Both views are checked through the public API: what the same ``Memory``
serves right after the failure, and what a fresh ``Memory`` reads from disk. A
failure before the commit leaves both exactly as before; a failure of the
checkpoint after it is not a failed write: the call returns, and both show it.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from memgraph.providers.mock import HashEmbedder, MockChatModel

import memgraph.store.directory as directory
import memgraph.store.files as files
from memgraph import MemgraphError, Memory, Provider, ProviderUnavailable, StoreConflict
from memgraph.errors import StoreUnavailable
from memgraph.store.files import FileLock

SCOPE = "s"


class Faults:
    """Switches for the faults a test arms: model calls, embedding calls, fsyncs."""

    def __init__(self) -> None:
        self.chat_fails = False
        self.embed_calls_left: int | None = None  # fail once this many calls succeeded
        self.fsync_fails: Callable[[str], bool] = lambda path: False


class FlakyChat(MockChatModel):
    def __init__(self, faults: Faults) -> None:
        super().__init__()
        self.faults = faults

    def complete(self, messages: Sequence[Any], **options: Any) -> Any:
        if self.faults.chat_fails:
            raise ProviderUnavailable("the model is down (injected)")
        return super().complete(messages, **options)


class FlakyEmbedder(HashEmbedder):
    def __init__(self, faults: Faults) -> None:
        super().__init__()
        self.faults = faults

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        left = self.faults.embed_calls_left
        if left is not None:
            if left == 0:
                raise ProviderUnavailable("the embedder is down (injected)")
            self.faults.embed_calls_left = left - 1
        return super().embed(texts)


@pytest.fixture
def faults(monkeypatch: pytest.MonkeyPatch) -> Faults:
    found = Faults()
    real = os.fsync

    def fsync(fd: int) -> None:
        if found.fsync_fails(os.readlink(f"/proc/self/fd/{fd}")):
            raise OSError(errno.ENOSPC, "No space left on device (injected)")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return found


def open_memory(root: Path, faults: Faults) -> Memory:
    provider = Provider("flaky", FlakyChat(faults), FlakyEmbedder(faults))
    return Memory(root, SCOPE, provider=provider, config={"lockTimeout": 0.2})


def state(memory: Memory) -> dict[str, Any]:
    """Everything the writes below change, as the memory serves it."""
    boards = {}
    for name in ("import",):
        try:
            boards[name] = [(s.name, s.status) for s in memory.progress(name).steps]
        except MemgraphError:
            boards[name] = None
    return {
        "facts": sorted(
            (e.name, o.content) for e in memory.entities() for o in e.current_observations
        ),
        "episodes": sorted(e.text for e in memory.iter_episodes()),
        "keys": {key: memory.kv.recall(key) for key in memory.kv.keys()},  # noqa: SIM118
        "progress": boards,
        "hits": sorted(
            h.observation.content for h in memory.search("works at", k=50) if h.observation
        ),
    }


def on_disk(root: Path) -> dict[str, Any]:
    with Memory(root, SCOPE, provider=Provider("plain", MockChatModel(), HashEmbedder())) as m:
        return state(m)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    with Memory(tmp_path, SCOPE, provider="mock") as memory:
        memory.remember("Alice works at Acme.")
        memory.remember("Bob works at Globex.")
        memory.kv.remember("colour", "blue")
        memory.create_progress("import", ["ingest", "load"])
        memory.checkpoint()
        memory.remember("Carol works at Initech.")  # one commit in the journal too
    return tmp_path


# Each write: what it does, and what it adds or removes when it succeeds.
WRITES: dict[str, Callable[[Memory], Any]] = {
    "remember": lambda m: m.remember("Dave works at Hooli."),
    "remember_many": lambda m: m.remember_many(["Erin works at Umbrella.", "Finn works at Wayne."]),
    "forget": lambda m: m.forget("where does alice work"),
    "purge": lambda m: m.purge(containing="Globex"),
    "kv": lambda m: m.kv.remember("colour", "green"),
    "kv forget": lambda m: m.kv.forget("colour"),
    "progress": lambda m: m.complete_step("import", "ingest", {"rows": 3}),
}
MODEL = {"remember", "remember_many", "forget"}  # the writes that call the model
EMBED = {"remember", "remember_many"}  # the writes that embed new facts

CASES = [
    (write, stage)
    for write in WRITES
    for stage in ("before extraction", "after extraction", "at embedding", "at commit")
    if (stage != "before extraction" or write in MODEL)
    and (stage != "at embedding" or write in EMBED)
]


@contextmanager
def lock_held_elsewhere(root: Path) -> Iterator[None]:
    """The scope's lock, held through another open file (as another process would)."""
    with FileLock(root / SCOPE / ".lock", SCOPE).hold(1.0):
        yield


def arm(faults: Faults, stage: str, write: str) -> None:
    if stage == "before extraction":
        faults.chat_fails = True
    elif stage == "at embedding":
        # remember_many embeds the texts for their contexts first, then the new facts;
        # remember embeds its text for the context, then the new facts.
        faults.embed_calls_left = 1
    elif stage == "at commit":
        journal = "journal.jsonl" if write != "purge" else "graph.json"  # purge rewrites
        faults.fsync_fails = lambda path: path.endswith(journal) or f"{journal}." in path


@pytest.mark.parametrize(("write", "stage"), CASES, ids=[f"{w}-{s}" for w, s in CASES])
def test_a_write_failing_before_its_commit_leaves_memory_and_disk_as_they_were(
    root: Path, faults: Faults, write: str, stage: str
) -> None:
    memory = open_memory(root, faults)
    before = state(memory)
    assert before == on_disk(root)
    arm(faults, stage, write)
    expected = {
        "before extraction": ProviderUnavailable,
        "after extraction": StoreConflict,
        "at embedding": ProviderUnavailable,
        "at commit": StoreUnavailable,
    }[stage]
    try:
        if stage == "after extraction":
            with lock_held_elsewhere(root), pytest.raises(expected):
                WRITES[write](memory)
        else:
            with pytest.raises(expected):
                WRITES[write](memory)
        faults.__init__()  # type: ignore[misc]  # everything works again
        assert state(memory) == before, "the memory serves nothing of the failed write"
        assert on_disk(root) == before, "nothing of the failed write is stored"
        assert not list((root / SCOPE).glob(".*.tmp")), "temporary files are removed"
        WRITES[write](memory)  # and the same write succeeds once the fault is gone
        after = state(memory)
        assert after != before and after == on_disk(root)
    finally:
        memory.close()


@pytest.mark.parametrize("failing", ["graph.json", "episodes", "vectors"])
@pytest.mark.parametrize("write", [w for w in WRITES if w != "purge"])
def test_a_checkpoint_failing_after_a_commit_does_not_fail_the_write(
    root: Path, faults: Faults, write: str, failing: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whichever file fails: the episodes (appended first), the vectors (saved by a
    thread of their own) or graph.json (written by another)."""
    monkeypatch.setattr(directory, "MIN_JOURNAL_BYTES", 1)  # every write checkpoints
    monkeypatch.setattr(directory, "JOURNAL_RATIO", 0.0)
    monkeypatch.setattr(directory, "OPS_RATIO", 0.0)
    memory = open_memory(root, faults)
    try:
        before = state(memory)
        faults.fsync_fails = lambda path: failing in path
        WRITES[write](memory)  # returns: the write is in the journal
        after = state(memory)
        assert after != before
        assert on_disk(root) == after
        assert not list((root / SCOPE).glob(".*.tmp"))
        faults.fsync_fails = lambda path: False
        memory.remember("Gina works at Soylent.")  # the next write checkpoints after all
        assert b"Gina" in (root / SCOPE / "graph.json").read_bytes()
        assert (root / SCOPE / "journal.jsonl").stat().st_size == 0
        assert on_disk(root) == state(memory)
    finally:
        memory.close()


@pytest.mark.parametrize("failing", ["graph.json", "vectors"])
def test_an_explicit_checkpoint_on_a_full_disk_raises_and_loses_nothing(
    root: Path, faults: Faults, failing: str
) -> None:
    memory = open_memory(root, faults)
    try:
        before = state(memory)
        faults.fsync_fails = lambda path: failing in path
        with pytest.raises(StoreUnavailable, match="No space left on device"):
            memory.checkpoint()
        assert state(memory) == before == on_disk(root)
    finally:
        memory.close()


def test_a_failed_atomic_write_leaves_the_old_file_and_no_temporary_file(
    tmp_path: Path, faults: Faults
) -> None:
    path = tmp_path / "summary.json"
    path.write_bytes(b"old")
    faults.fsync_fails = lambda name: ".summary.json." in name
    with pytest.raises(StoreUnavailable, match="the previous version is unchanged"):
        files.atomic_write(path, b"new")
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.json"]


def test_a_write_in_the_background_replaces_the_file_only_when_finished(
    tmp_path: Path, faults: Faults
) -> None:
    path = tmp_path / "graph.json"
    path.write_bytes(b"old")
    writing = files.AtomicWrite(path, b"new" * 100_000)
    assert path.read_bytes() == b"old"  # until finished, whatever the thread has written
    writing.finish()
    assert path.read_bytes() == b"new" * 100_000
    files.AtomicWrite(path, b"newer").cancel()
    faults.fsync_fails = lambda name: ".graph.json." in name
    failing = files.AtomicWrite(path, b"newest")
    with pytest.raises(StoreUnavailable, match="the previous version is unchanged"):
        failing.finish()
    assert path.read_bytes() == b"new" * 100_000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graph.json"]


def test_an_atomic_write_that_cannot_create_its_temporary_file_raises_store_unavailable(
    tmp_path: Path,
) -> None:
    path = tmp_path / "gone" / "summary.json"  # no directory: the temporary file fails first
    with pytest.raises(StoreUnavailable) as caught:
        files.atomic_write(path, b"new")
    assert repr(str(path)) in str(caught.value)
    assert isinstance(caught.value.__cause__, FileNotFoundError)
    assert not (tmp_path / "gone").exists()


def test_a_summary_save_waits_for_the_scope_lock(root: Path, faults: Faults) -> None:
    memory = open_memory(root, faults)
    try:
        with lock_held_elsewhere(root), pytest.raises(StoreConflict):
            memory.save_summary({"summary": "v2", "messagesSummarized": 2})
        assert memory.summary() is None
        memory.save_summary({"summary": "v2", "messagesSummarized": 2})
        assert memory.summary() == {"summary": "v2", "messagesSummarized": 2}
    finally:
        memory.close()
