"""What the directory store promises beyond the contract: file modes, torn writes,
damage reports, memory-mapped vectors appended in place, and when it checkpoints."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import orjson
import pytest

from memgraph.errors import StoreConflict, StoreCorrupt, StoreUnavailable
from memgraph.graph.graph import Graph
from memgraph.graph.records import seal_record
from memgraph.id_column import IdColumn
from memgraph.retrieval.vectors import VectorIndex
from memgraph.store import Commit, DirectoryStore
from memgraph.store import directory as directory_module
from memgraph.store.readers import (
    PACKED_VECTOR_FORMAT,
    VECTOR_FORMAT,
    pack_row_ids,
    unpack_row_ids,
)
from tests.test_store_contract import (
    DIM,
    MODEL,
    SCOPE,
    Model,
    assert_same_commits,
    catch_up,
    checkpoint,
    episode,
    loaded_graph,
    make_commit,
    rebuild,
    replay,
    write,
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "memory"


@pytest.fixture
def open_store(root: Path) -> Iterator[Callable[[], DirectoryStore]]:
    handles: list[DirectoryStore] = []

    def opener() -> DirectoryStore:
        store = DirectoryStore(root, SCOPE)
        handles.append(store)
        return store

    yield opener
    for store in handles:
        store.close()


def journal_lines(store: DirectoryStore) -> list[bytes]:
    return store.journal_path.read_bytes().split(b"\n")


def checkpointed(
    open_store: Callable[[], DirectoryStore], *seqs: int
) -> tuple[DirectoryStore, Model]:
    """A store opened and loaded, the commits ``seqs`` written and checkpointed."""
    store = open_store()
    store.load()
    model = Model()
    write(store, model, *seqs)
    checkpoint(store, model)
    return store, model


# --------------------------------------------------------------------------- permissions
def test_files_are_owner_only_and_directories_private(
    tmp_path: Path, open_store: Callable[[], DirectoryStore]
) -> None:
    previous = os.umask(0)  # the store must not rely on the caller's umask
    try:
        store = open_store()
        store.load()
        model = Model()
        write(store, model, 1, 2)
        checkpoint(store, model, [episode(1)])
        write(store, model, 3)
        store.write_summary({"text": "private"})
    finally:
        os.umask(previous)
    root = store.path.parent
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o700
    names = sorted(p.name for p in store.path.iterdir())
    assert names == sorted(
        [
            ".lock",
            "episodes.jsonl",
            "graph.idx",
            "graph.json",
            "journal.jsonl",
            "summary.json",
            "vectors.json",
            "vectors.npy",
        ]
    )
    for path in store.path.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name


def test_reading_a_missing_scope_creates_no_directory(
    root: Path, open_store: Callable[[], DirectoryStore]
) -> None:
    store = open_store()
    store.load()
    assert store.changes_since(0) == []
    assert list(store.episodes()) == []
    assert store.read_summary() is None
    assert not store.exists()
    assert not store.path.exists()
    assert not root.exists()


# --------------------------------------------------------------------------- the journal
def test_commit_fsyncs_the_journal_before_returning(
    open_store: Callable[[], DirectoryStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_store()
    store.load()
    synced: list[int] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        synced.append(os.fstat(fd).st_ino)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    with store.lock(5):
        store.commit(make_commit(1))
        assert store.journal_path.stat().st_ino in synced


def test_a_commit_that_does_not_follow_the_last_one_is_refused_naming_both(
    open_store: Callable[[], DirectoryStore],
) -> None:
    store = open_store()
    store.load()
    with store.lock(5):
        store.commit(make_commit(1))
        with pytest.raises(StoreConflict, match=r"commit 3 does not follow 1; reload and retry"):
            store.commit(make_commit(3))
    assert len(journal_lines(store)) == 2  # one line and the final newline


def test_a_journal_that_cannot_be_opened_fails_the_commit_and_saves_nothing(
    open_store: Callable[[], DirectoryStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_store()
    store.load()
    real_open = os.open

    def refuse_the_journal(path: object, flags: int, *args: int) -> int:
        if str(path).endswith("journal.jsonl") and flags & os.O_APPEND:
            raise OSError(errno.EACCES, "Permission denied (injected)")
        return real_open(path, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", refuse_the_journal)
    with store.lock(5), pytest.raises(StoreUnavailable, match="nothing was saved") as caught:
        store.commit(make_commit(1))
    assert repr(str(store.journal_path)) in str(caught.value)
    monkeypatch.undo()
    assert open_store().load().commits == []


def sealed_line(seq: int) -> bytes:
    return seal_record(orjson.dumps(make_commit(seq).to_record())) + b"\n"


def test_damage_after_this_handles_own_commits_is_reported_at_its_line(
    open_store: Callable[[], DirectoryStore],
) -> None:
    store = open_store()
    store.load()
    with store.lock(5):
        store.commit(make_commit(1))
        store.commit(make_commit(2))
    with open(store.journal_path, "ab") as handle:  # another writer's lines, one damaged
        handle.write(b'{"seq": 3, "at": "oops\n' + sealed_line(4))
    with pytest.raises(StoreCorrupt) as caught:
        store.changes_since(2)
    assert caught.value.position == "line 3"


def test_a_line_without_its_checksum_after_this_handles_sealed_commit_is_damage(
    open_store: Callable[[], DirectoryStore],
) -> None:
    store = open_store()
    store.load()
    with store.lock(5):
        store.commit(make_commit(1))
    with open(store.journal_path, "ab") as handle:  # the checksum of line 2 was cut off
        handle.write(orjson.dumps(make_commit(2).to_record()) + b"\n" + sealed_line(3))
    with pytest.raises(StoreCorrupt) as caught:
        store.changes_since(1)
    assert caught.value.position == "line 2"


def test_a_journal_that_cannot_be_cut_back_after_a_failed_append_still_fails_the_commit(
    open_store: Callable[[], DirectoryStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_store()
    store.load()

    def disk_gone(fd: int, *args: int) -> None:
        raise OSError(errno.EIO, "Input/output error (injected)")

    with store.lock(5):
        store.commit(make_commit(1))  # the journal exists: the next append fails, not its creation
        monkeypatch.setattr(os, "fsync", disk_gone)
        monkeypatch.setattr(os, "ftruncate", disk_gone)
        with pytest.raises(StoreUnavailable, match="Input/output error"):
            store.commit(make_commit(2))


TORN_TAILS = {
    "half a line": lambda line: line[: len(line) // 2],
    "a garbage line": lambda line: b"\x00garbage{]\n",
}


@pytest.mark.parametrize("tear", TORN_TAILS.values(), ids=TORN_TAILS.keys())
def test_torn_last_journal_line_is_dropped_on_load(
    open_store: Callable[[], DirectoryStore], tear: Callable[[bytes], bytes]
) -> None:
    store = open_store()
    store.load()
    committed = write(store, Model(), 1, 2)
    line = seal_record(orjson.dumps(make_commit(3).to_record())) + b"\n"
    with open(store.journal_path, "ab") as handle:
        handle.write(tear(line))
    before = store.journal_path.read_bytes()
    snapshot = open_store().load()
    assert_same_commits(snapshot.commits, committed)
    assert store.journal_path.read_bytes() == before, "loading must not repair anything"


@pytest.mark.parametrize("tear", TORN_TAILS.values(), ids=TORN_TAILS.keys())
def test_the_next_commit_truncates_a_torn_tail_so_the_journal_stays_valid(
    open_store: Callable[[], DirectoryStore], tear: Callable[[bytes], bytes]
) -> None:
    store = open_store()
    store.load()
    model = Model()
    write(store, model, 1, 2)
    clean = store.journal_path.read_bytes()
    line = seal_record(orjson.dumps(make_commit(3).to_record())) + b"\n"
    with open(store.journal_path, "ab") as handle:
        handle.write(tear(line))
    store.close()
    survivor = open_store()
    survivor.load()
    write(survivor, model, 3)
    assert store.journal_path.read_bytes() == clean + line
    for raw in journal_lines(survivor)[:-1]:
        Commit.from_record(orjson.loads(raw))
    assert rebuild(open_store()) == model.document()


def test_a_torn_tail_left_while_a_reader_watches_is_not_reported_as_commits(
    open_store: Callable[[], DirectoryStore],
) -> None:
    writer = open_store()
    writer.load()
    model = Model()
    write(writer, model, 1)
    reader = open_store()
    graph = catch_up(reader, Graph.from_document(rebuild(reader)))
    line = orjson.dumps(make_commit(2).to_record()) + b"\n"
    with open(writer.journal_path, "ab") as handle:
        handle.write(line[:10])
    assert reader.changes_since(graph.seq) == []


def test_garbled_journal_line_in_the_middle_raises_store_corrupt_naming_file_and_line(
    open_store: Callable[[], DirectoryStore],
) -> None:
    store = open_store()
    store.load()
    write(store, Model(), 1, 2, 3)
    lines = journal_lines(store)
    lines[1] = b'{"seq": 2, "at": "oops'
    store.journal_path.write_bytes(b"\n".join(lines))
    before = store.journal_path.read_bytes()
    with pytest.raises(StoreCorrupt) as caught:
        open_store().load()
    assert caught.value.path == str(store.journal_path)
    assert caught.value.position == "line 2"
    assert str(store.journal_path) in str(caught.value)
    assert "line 2" in str(caught.value)
    assert store.journal_path.read_bytes() == before


def test_a_gap_in_the_journal_seqs_raises_store_corrupt(
    open_store: Callable[[], DirectoryStore],
) -> None:
    store = open_store()
    store.load()
    write(store, Model(), 1, 2, 3)
    lines = journal_lines(store)
    del lines[1]
    store.journal_path.write_bytes(b"\n".join(lines))
    with pytest.raises(StoreCorrupt) as caught:
        open_store().load()
    assert caught.value.path == str(store.journal_path)
    assert "line 2" in caught.value.position


def test_garbled_graph_json_raises_store_corrupt_with_file_and_position(
    open_store: Callable[[], DirectoryStore],
) -> None:
    store, _model = checkpointed(open_store, 1)
    document = store.graph_path.read_bytes()
    damaged = document[:40] + b"\n  ,,oops" + document[40:]
    store.graph_path.write_bytes(damaged)
    with pytest.raises(StoreCorrupt) as caught:
        open_store().load()
    error = caught.value
    assert error.path == str(store.graph_path)
    assert error.position and error.position != "an unknown position"
    assert str(store.graph_path) in str(error)
    assert error.position in str(error)
    assert store.graph_path.read_bytes() == damaged


def test_a_graph_json_that_is_not_a_graph_raises_store_corrupt(
    open_store: Callable[[], DirectoryStore],
) -> None:
    store = open_store()
    store.path.mkdir(parents=True)
    store.graph_path.write_bytes(b'["not", "a", "graph"]')
    with pytest.raises(StoreCorrupt) as caught:
        store.load()
    assert caught.value.path == str(store.graph_path)


# --------------------------------------------------------------------------- episodes
def test_a_torn_episodes_tail_is_ignored_and_the_next_checkpoint_appends_cleanly(
    open_store: Callable[[], DirectoryStore],
) -> None:
    store = open_store()
    store.load()
    model = Model()
    write(store, model, 1)
    checkpoint(store, model, [episode(1)])
    with open(store.episodes_path, "ab") as handle:
        handle.write(orjson.dumps(episode(2))[:25])
    assert list(open_store().episodes()) == [episode(1)]
    store.close()
    survivor = open_store()
    survivor.load()
    write(survivor, model, 2)
    checkpoint(survivor, model, [episode(2), episode(3)])
    assert list(open_store().episodes()) == [episode(1), episode(2), episode(3)]


def test_the_episodes_a_checkpoint_appended_read_back_as_the_file_holds_them(
    open_store: Callable[[], DirectoryStore],
) -> None:
    store = open_store()
    store.load()
    model = Model()
    write(store, model, 1)
    checkpoint(store, model, [episode(1)])
    _, mark = store.episodes_after(0)
    write(store, model, 2)
    checkpoint(store, model, [episode(2), {**episode(3), "metadata": {"thread": "t"}}])
    kept, end = store.episodes_after(mark)  # this handle's own append, not parsed again
    assert (kept, end) == open_store().episodes_after(mark)
    assert [doc["id"] for _, doc in kept] == [episode(2)["id"], episode(3)["id"]]
    assert store.read_episodes([location for location, _ in kept]) == dict(kept)
    write(store, model, 3)
    checkpoint(store, model, [episode(4)])
    with open(store.episodes_path, "ab") as handle:  # another append: the file decides
        handle.write(seal_record(orjson.dumps(episode(5))) + b"\n")
    assert store.episodes_after(end) == open_store().episodes_after(end)
    assert len(store.episodes_after(end)[0]) == 2


def test_derived_files_written_in_the_background_land_in_order_and_never_after_a_rewrite(
    open_store: Callable[[], DirectoryStore], caplog: pytest.LogCaptureFixture
) -> None:
    store = open_store()
    store.load()
    model = Model()
    write(store, model, 1)
    checkpoint(store, model, [episode(1)])
    index_file = store.path / "episodes.idx"
    started = threading.Event()

    def slow(data: bytes) -> Callable[[], bytes]:
        def make() -> bytes:
            started.set()
            time.sleep(0.2)
            return data

        return make

    store.write_derived_later("episodes.idx", slow(b"first"))
    store.write_derived_later("episodes.idx", lambda: b"second")
    assert store.read_derived("episodes.idx") == b"second"  # waits for both, in order
    store.write_derived_later("episodes.idx", slow(b"stale"))
    assert started.wait(5)
    with store.lock(5):  # a purge: the index it removes must not come back
        store.rewrite(model.document(), model.index, [episode(1)])
    assert not index_file.exists()

    writer = open_store()  # another process's purge while this one encodes its index
    store.write_derived_later("episodes.idx", slow(b"of the old episodes"))
    with writer.lock(5):
        writer.load()
        writer.rewrite(model.document(), model.index, [episode(1)])
    store.wait_for_derived()
    assert not index_file.exists()

    def failing() -> bytes:
        raise OSError(28, "No space left on device")

    store.write_derived_later("episodes.idx", failing)
    store.close()  # waits; the failure is logged, not raised (derived data is rebuilt)
    assert "could not save episodes.idx" in caplog.text
    assert not index_file.exists()


def test_garbled_episode_line_in_the_middle_raises_store_corrupt(
    open_store: Callable[[], DirectoryStore],
) -> None:
    store = open_store()
    store.load()
    model = Model()
    write(store, model, 1)
    checkpoint(store, model, [episode(1), episode(2), episode(3)])
    lines = store.episodes_path.read_bytes().split(b"\n")
    lines[1] = b"{damaged"
    store.episodes_path.write_bytes(b"\n".join(lines))
    with pytest.raises(StoreCorrupt) as caught:
        list(open_store().episodes())
    assert caught.value.path == str(store.episodes_path)
    assert caught.value.position == "line 2"


# --------------------------------------------------------------------------- vectors
def test_checkpointed_vectors_load_memory_mapped(open_store: Callable[[], DirectoryStore]) -> None:
    store, model = checkpointed(open_store, 1, 2, 3)
    vectors = open_store().load().vectors
    assert vectors is not None
    assert isinstance(vectors.matrix, np.memmap)
    assert vectors.matrix.dtype == np.float32
    assert vectors.matrix.tobytes() == model.index.rows(0, 3).tobytes()
    assert np.load(store.vectors_path).tobytes() == model.index.rows(0, 3).tobytes()


def test_a_second_checkpoint_appends_vectors_in_place_keeping_earlier_rows(
    open_store: Callable[[], DirectoryStore],
) -> None:
    first = open_store()
    first.load()
    model = Model()
    write(first, model, 1, 2, 3)
    checkpoint(first, model)
    inode = first.vectors_path.stat().st_ino
    first.close()

    second = open_store()
    snapshot = second.load()
    assert snapshot.vectors is not None
    earlier = np.array(snapshot.vectors.matrix)
    reader = Model()
    reader.graph = Graph.from_document(snapshot.document or {})
    reader.index = VectorIndex(MODEL, None, snapshot.vectors.matrix, snapshot.vectors.ids)
    write(second, reader, 4, 5)
    checkpoint(second, reader)

    assert second.vectors_path.stat().st_ino == inode, "rows are appended in place"
    vectors = open_store().load().vectors
    assert vectors is not None
    assert list(vectors.ids) == ["obs-4", "obs-7", "obs-10", "obs-13", "obs-16"]
    assert vectors.matrix[:3].tobytes() == earlier.tobytes()
    assert vectors.matrix.tobytes() == reader.index.rows(0, 5).tobytes()
    assert snapshot.vectors.matrix.tobytes() == earlier.tobytes(), "old maps stay valid"
    assert np.load(second.vectors_path).shape == (5, earlier.shape[1])


def test_rows_past_the_header_left_by_a_crashed_append_are_overwritten(
    open_store: Callable[[], DirectoryStore],
) -> None:
    store, model = checkpointed(open_store, 1, 2)
    with open(store.vectors_path, "ab") as handle:  # rows written, header not yet updated
        handle.write(np.full((3, 4), 7.0, np.float32).tobytes())
    store.close()
    survivor = open_store()
    snapshot = survivor.load()
    assert snapshot.vectors is not None and len(snapshot.vectors.ids) == 2
    write(survivor, model, 3)
    checkpoint(survivor, model)
    vectors = open_store().load().vectors
    assert vectors is not None
    assert vectors.matrix.tobytes() == model.index.rows(0, 3).tobytes()
    assert np.load(store.vectors_path).shape == (3, 4)


def test_an_embedding_model_change_rewrites_the_vectors_in_full(
    open_store: Callable[[], DirectoryStore],
) -> None:
    store, model = checkpointed(open_store, 1, 2)
    inode = store.vectors_path.stat().st_ino
    other = VectorIndex("other-embed")
    other.add(["obs-4", "obs-7"], np.array([[1, 0, 0], [0, 1, 1]], np.float32))
    with store.lock(5):
        assert store.checkpoint(model.graph, other, [], force=True)
    assert store.vectors_path.stat().st_ino != inode
    vectors = open_store().load().vectors
    assert vectors is not None
    assert vectors.model == "other-embed"
    assert list(vectors.ids) == ["obs-4", "obs-7"]
    assert vectors.matrix.shape == (2, 3)
    assert vectors.matrix.tobytes() == other.rows(0, 2).tobytes()
    header = orjson.loads(store.header_path.read_bytes())
    assert header["model"] == "other-embed" and header["dim"] == 3 and header["count"] == 2


def test_a_vectors_header_that_disagrees_with_its_ids_raises_store_corrupt(
    open_store: Callable[[], DirectoryStore],
) -> None:
    store, _model = checkpointed(open_store, 1, 2)
    header = orjson.loads(store.header_path.read_bytes())
    header["count"] = 5
    store.header_path.write_bytes(orjson.dumps(header))
    with pytest.raises(StoreCorrupt) as caught:
        open_store().load()
    assert caught.value.path == str(store.header_path)


def test_a_checkpoint_packs_the_vector_ids_and_a_load_reads_them_as_a_column(
    open_store: Callable[[], DirectoryStore],
) -> None:
    store, model = checkpointed(open_store, 1, 2, 3)
    header = orjson.loads(store.header_path.read_bytes())
    assert header["format"] == PACKED_VECTOR_FORMAT and header["ids"]["prefixes"] == ["obs-"]
    vectors = open_store().load().vectors
    assert vectors is not None and isinstance(vectors.ids, IdColumn)
    assert list(vectors.ids) == model.index.ids() == ["obs-4", "obs-7", "obs-10"]


def test_a_vectors_header_listing_its_ids_loads_and_the_next_append_packs_them(
    open_store: Callable[[], DirectoryStore],
) -> None:
    store, _model = checkpointed(open_store, 1, 2)
    blocks = orjson.loads(store.header_path.read_bytes())["blocks"]
    earlier = {"format": 1, "model": MODEL, "dim": DIM, "count": 2, "blocks": blocks}
    store.header_path.write_bytes(orjson.dumps({**earlier, "ids": ["obs-4", "obs-7"]}))
    store.close()
    second = open_store()
    snapshot = second.load()
    assert snapshot.vectors is not None and list(snapshot.vectors.ids) == ["obs-4", "obs-7"]
    reader = Model()
    reader.graph = loaded_graph(open_store())
    reader.index = VectorIndex(MODEL, None, snapshot.vectors.matrix, snapshot.vectors.ids)
    write(second, reader, 3)
    checkpoint(second, reader)
    assert orjson.loads(second.header_path.read_bytes())["format"] == PACKED_VECTOR_FORMAT
    vectors = open_store().load().vectors
    assert vectors is not None and list(vectors.ids) == ["obs-4", "obs-7", "obs-10"]


def test_vector_ids_that_are_not_prefixes_and_numbers_are_listed(
    open_store: Callable[[], DirectoryStore],
) -> None:
    store = open_store()
    store.load()
    model = Model()
    write(store, model, 1)
    odd = VectorIndex(MODEL)
    odd.add(["obs-4", "Alice"], np.array([[1, 0, 0, 0], [0, 1, 0, 0]], np.float32))
    with store.lock(5):
        assert store.checkpoint(model.graph, odd, [], force=True)
    header = orjson.loads(store.header_path.read_bytes())
    assert header["format"] == VECTOR_FORMAT and header["ids"] == ["obs-4", "Alice"]
    vectors = open_store().load().vectors
    assert vectors is not None and list(vectors.ids) == ["obs-4", "Alice"]


PACKED = pack_row_ids(IdColumn(["obs-", "episode-"], [3, 1, 6], [0, 1, 0]))


def test_packed_ids_unpack_to_the_ids_packed() -> None:
    assert unpack_row_ids(PACKED, 3).tolist() == ["obs-3", "episode-1", "obs-6"]
    single = pack_row_ids(IdColumn(["obs-"], [7, 2, 9]))
    assert "codes" not in single
    assert unpack_row_ids(single, 3).tolist() == ["obs-7", "obs-2", "obs-9"]
    assert unpack_row_ids(pack_row_ids(IdColumn(["obs-"], [])), 0).tolist() == []


@pytest.mark.parametrize(
    ("packed", "count", "problem"),
    [
        (PACKED, 4, "3 ids for 4 rows"),
        (["obs-3"], 1, "not packed ids"),
        ({**PACKED, "prefixes": []}, 3, "prefixes"),
        ({**PACKED, "prefixes": ["obs-"]}, 3, "a prefix beyond the 1 named"),
        ({**PACKED, "numbers": "not base64!"}, 3, "cannot be decoded"),
        ({**PACKED, "numbers": 12}, 3, "not a string"),
        (pack_row_ids(IdColumn(["obs-"], [5, -9])), 2, "numbers outside"),
        (pack_row_ids(IdColumn(["obs-"], [10**18])), 1, "numbers outside"),
    ],
)
def test_packed_ids_that_are_not_what_was_packed_are_refused(
    packed: object, count: int, problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        unpack_row_ids(packed, count)


def test_packed_vector_ids_that_cannot_be_unpacked_raise_store_corrupt(
    open_store: Callable[[], DirectoryStore],
) -> None:
    store, _model = checkpointed(open_store, 1, 2)
    header = orjson.loads(store.header_path.read_bytes())
    header["ids"]["numbers"] = header["ids"]["numbers"][:-4]
    store.header_path.write_bytes(orjson.dumps(header))
    with pytest.raises(StoreCorrupt, match="ids that cannot be unpacked") as caught:
        open_store().load()
    assert caught.value.path == str(store.header_path)


# --------------------------------------------------------------------------- checkpoints
def test_a_checkpoint_is_due_once_the_journal_outgrows_its_threshold(
    open_store: Callable[[], DirectoryStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(directory_module, "MIN_JOURNAL_BYTES", 1500)
    store = open_store()
    store.load()
    model = Model()
    written = []
    for seq in range(1, 40):
        write(store, model, seq)
        journal = store.journal_path.stat().st_size
        graph = store.graph_path.stat().st_size if store.graph_path.exists() else 0
        lines = store.journal_path.read_bytes().splitlines()
        payload = sum(len(orjson.loads(line).get("vectors", {}).get("b64", "")) for line in lines)
        vectors = 0
        if store.header_path.exists():
            header = orjson.loads(store.header_path.read_bytes())
            vectors = header["count"] * header["dim"] * 4
        ratio, ops_ratio = directory_module.JOURNAL_RATIO, directory_module.OPS_RATIO
        # Ops bytes against graph.json, or the whole journal against graph.json + vectors.
        due = journal - payload > max(1500, ops_ratio * graph) or journal > max(
            1500, ratio * (graph + vectors)
        )
        with store.lock(5):
            done = store.checkpoint(model.graph, model.index, [episode(seq)])
        assert done == due, f"seq {seq}: journal {journal} bytes, checkpoint {graph} bytes"
        if done:
            written.append(seq)
            assert store.journal_path.stat().st_size == 0
            assert orjson.loads(store.graph_path.read_bytes())["checkpointSeq"] == seq
    assert len(written) >= 2
    assert rebuild(open_store()) == model.document()


def test_a_small_journal_is_not_checkpointed_by_default(
    open_store: Callable[[], DirectoryStore],
) -> None:
    store = open_store()
    store.load()
    model = Model()
    write(store, model, 1, 2, 3)
    with store.lock(5):
        assert not store.checkpoint(model.graph, model.index, [])
    assert not store.graph_path.exists()


# --------------------------------------------------------------------------- concurrency
class _HookedPath(type(Path())):  # type: ignore[misc]
    """A path whose ``read_bytes`` runs a callback right after reading."""

    after_read: Callable[[], None] | None = None

    def read_bytes(self) -> bytes:
        data = super().read_bytes()
        hook, type(self).after_read = type(self).after_read, None
        if hook is not None:
            hook()
        return data


def test_a_load_racing_a_checkpoint_returns_a_consistent_state(
    open_store: Callable[[], DirectoryStore],
) -> None:
    writer = open_store()
    writer.load()
    model = Model()
    write(writer, model, 1)
    checkpoint(writer, model)
    write(writer, model, 2)

    def checkpoint_in_between() -> None:
        write(writer, model, 3)
        checkpoint(writer, model)
        write(writer, model, 4)

    reader = open_store()

    class Hooked(_HookedPath):
        after_read = staticmethod(checkpoint_in_between)

    reader.graph_path = Hooked(reader.graph_path)
    snapshot = reader.load()
    graph = replay(Graph.from_document(snapshot.document or {}), snapshot.commits)
    assert graph.seq >= 2
    assert catch_up(reader, graph).to_document() == model.document()


LOCK_HOLDER = """
import sys, time
from pathlib import Path
from memgraph.store.files import FileLock
with FileLock(Path(sys.argv[1]), "alice").hold(5):
    print("held", flush=True)
    time.sleep(60)
"""


def test_a_lock_held_by_another_process_times_out_and_is_freed_when_it_dies(
    open_store: Callable[[], DirectoryStore],
) -> None:
    store = open_store()
    store.load()
    store.path.mkdir(parents=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(store.path / ".lock")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreConflict, match="locked by another writer"), store.lock(0.05):
            pytest.fail("the lock was granted while another process held it")
    finally:
        holder.kill()
        holder.wait(10)
        if holder.stdout is not None:
            holder.stdout.close()
    with store.lock(2):
        store.commit(make_commit(1))
