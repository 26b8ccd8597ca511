"""The store contract: every :class:`~memgraph.store.base.Store` must pass this suite.

The suite talks to stores through the Protocol only. A backend joins by adding
a ``_Backend`` to :data:`BACKENDS` (see ``_directory`` and ``_in_memory``): it
opens handles on one location and reports what it has left there.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memgraph.errors import StoreConflict
from memgraph.graph.graph import Graph
from memgraph.retrieval.vectors import VectorIndex
from memgraph.store import Commit, DirectoryStore, InMemoryStore, Store, VectorBatch

SCOPE = "alice"
MODEL = "test-embed"
DIM = 4
AT = "2026-01-02T03:04:05.678Z"

Doc = dict[str, Any]


# --------------------------------------------------------------------------- backends
@dataclass
class StoreFactory:
    """Opens handles on one store location; closes them all at teardown.

    ``shared`` is True when every handle is the same object (a store without a
    location that a second process could open, such as the in-memory store).
    """

    name: str
    opener: Callable[[], Store]
    footprint: Callable[[], list[str]]
    shared: bool = False
    handles: list[Store] = field(default_factory=list)

    def __call__(self) -> Store:
        if self.shared and self.handles:
            return self.handles[0]
        store = self.opener()
        self.handles.append(store)
        return store

    def close(self) -> None:
        for store in self.handles:
            store.close()


@dataclass(frozen=True)
class _Backend:
    name: str
    build: Callable[[Path], StoreFactory]


def _directory(tmp_path: Path) -> StoreFactory:
    root = tmp_path / "memory"

    def footprint() -> list[str]:
        return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []

    return StoreFactory("directory", lambda: DirectoryStore(root, SCOPE), footprint)


def _in_memory(tmp_path: Path) -> StoreFactory:
    store = InMemoryStore(SCOPE)
    return StoreFactory(
        "memory",
        lambda: store,
        lambda: ["<in-memory state>"] if store.exists() else [],
        shared=True,
    )


def _postgres(tmp_path: Path) -> StoreFactory:
    """A fresh schema on the test server (``tests/postgres_server.py``); skips without one."""
    from memgraph.store import PostgresStore
    from tests.postgres_server import new_schema, scope_footprint, server_dsn

    dsn, schema = server_dsn(), new_schema()
    return StoreFactory(
        "postgres",
        lambda: PostgresStore(dsn, SCOPE, schema=schema),
        lambda: scope_footprint(dsn, schema, SCOPE),
    )


BACKENDS = [
    _Backend("directory", _directory),
    _Backend("memory", _in_memory),
    pytest.param(_Backend("postgres", _postgres), marks=pytest.mark.postgres, id="postgres"),
    # Every scope counted as large: records and vector rows read on demand.
    pytest.param(
        _Backend("postgres-lazy", _postgres), marks=pytest.mark.postgres, id="postgres-lazy"
    ),
]


@pytest.fixture(params=BACKENDS, ids=lambda backend: backend.name)
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    if request.param.name == "postgres-lazy":
        from memgraph.store import postgres

        monkeypatch: pytest.MonkeyPatch = request.getfixturevalue("monkeypatch")
        monkeypatch.setattr(postgres, "WHOLE_IMAGE_BYTES", 0)
        monkeypatch.setattr(postgres, "WHOLE_VECTOR_ROWS", 0)
    factory = request.param.build(tmp_path)
    yield factory
    factory.close()


# --------------------------------------------------------------------------- builders
def _vector(seq: int) -> np.ndarray:
    rng = np.random.default_rng(seq)
    return rng.standard_normal((1, DIM)).astype(np.float32)


def make_commit(seq: int, *, vectors: bool = True) -> Commit:
    """Commit ``seq``: one person with one observation (ids never collide across seqs)."""
    entity_id, obs_id = f"entity-{3 * seq}", f"obs-{3 * seq + 1}"
    ops: list[Doc] = [
        {
            "op": "entity",
            "entity": {
                "id": entity_id,
                "name": f"Person {seq}",
                "type": "person",
                "source": None,
                "createdAt": AT,
            },
        },
        {
            "op": "obs",
            "entity": entity_id,
            "obs": {
                "id": obs_id,
                "content": f"works at Company {seq}",
                "validFrom": AT,
                "validTo": None,
                "recordedAt": AT,
                "episode": None,
                "source": None,
            },
        },
    ]
    batch = VectorBatch(MODEL, (obs_id,), _vector(seq)) if vectors else None
    return Commit(seq, AT, 3 * seq + 2, ops, batch)


def episode(number: int, text: str | None = None) -> Doc:
    return {
        "id": f"episode-{number}",
        "text": text if text is not None else f"Person {number} works at Company {number}.",
        "at": AT,
        "recordedAt": AT,
        "source": None,
    }


class Model:
    """What a reader rebuilds from the commits: the graph and the vector index."""

    def __init__(self) -> None:
        self.graph = Graph()
        self.index = VectorIndex(MODEL)

    def apply(self, commit: Commit) -> None:
        self.graph.apply(commit.ops)  # any commit, in any order the test chooses
        self.graph.next_id = max(self.graph.next_id, commit.next_id)
        self.graph.seq = commit.seq
        if commit.vectors is not None:
            self.index.add(commit.vectors.ids, commit.vectors.matrix)

    def document(self) -> Doc:
        return self.graph.to_document()


def write(store: Store, model: Model, *seqs: int) -> list[Commit]:
    commits = [make_commit(seq) for seq in seqs]
    with store.lock(5):
        for commit in commits:
            store.commit(commit)
            model.apply(commit)
    return commits


def checkpoint(store: Store, model: Model, episodes: Sequence[Doc] = ()) -> None:
    with store.lock(5):
        assert store.checkpoint(model.graph, model.index, episodes, force=True)


def replay(graph: Graph, commits: Sequence[Commit]) -> Graph:
    """Apply ``commits`` to ``graph`` the way the engine does; returns ``graph``."""
    for commit in commits:
        assert commit.seq == graph.seq + 1, "commits must follow the reader's seq"
        graph.apply(commit.ops)
        graph.next_id = max(graph.next_id, commit.next_id)
        graph.seq = commit.seq
    return graph


def loaded_graph(store: Store) -> Graph:
    """The graph a fresh reader of ``store`` ends up with."""
    snapshot = store.load()
    return replay(snapshot.graph(), snapshot.commits)


def rebuild(store: Store) -> Doc:
    """The graph document a fresh reader of ``store`` ends up with."""
    return loaded_graph(store).to_document()


def catch_up(store: Store, graph: Graph) -> Graph:
    """Bring ``graph`` (built from ``store``) up to date the way the engine does."""
    commits = store.changes_since(graph.seq)
    if commits is None:
        return loaded_graph(store)
    return replay(graph, commits)


def assert_same_commits(actual: Sequence[Commit], expected: Sequence[Commit]) -> None:
    assert [c.seq for c in actual] == [c.seq for c in expected]
    for got, want in zip(actual, expected, strict=True):
        assert got.at == want.at
        assert got.next_id == want.next_id
        assert list(got.ops) == list(want.ops)
        if want.vectors is None:
            assert got.vectors is None
            continue
        assert got.vectors is not None
        assert got.vectors.model == want.vectors.model
        assert tuple(got.vectors.ids) == tuple(want.vectors.ids)
        assert got.vectors.matrix.dtype == np.float32
        assert got.vectors.matrix.shape == want.vectors.matrix.shape
        assert got.vectors.matrix.tobytes() == want.vectors.matrix.tobytes()


def assert_changes(result: list[Commit] | None, expected: Sequence[Commit]) -> None:
    """``changes_since`` may ask for a reload, but a list it returns must be exact."""
    if result is not None:
        assert_same_commits(result, expected)


# --------------------------------------------------------------------------- empty store
def test_new_store_does_not_exist_and_loads_empty(store_factory: StoreFactory) -> None:
    store = store_factory()
    assert isinstance(store, Store)
    assert store.scope == SCOPE
    assert not store.exists()
    snapshot = store.load()
    assert snapshot.document is None
    assert snapshot.commits == []
    assert snapshot.vectors is None
    assert list(store.episodes()) == []
    assert store.read_summary() is None


def test_reading_a_new_store_creates_nothing(store_factory: StoreFactory) -> None:
    store = store_factory()
    store.load()
    assert store.changes_since(0) == []
    list(store.episodes())
    store.read_summary()
    assert not store.exists()
    assert store_factory.footprint() == []


def test_first_commit_makes_the_store_exist(store_factory: StoreFactory) -> None:
    store = store_factory()
    store.load()
    write(store, Model(), 1)
    assert store.exists()


# --------------------------------------------------------------------------- commits
def test_commit_without_the_lock_is_refused(store_factory: StoreFactory) -> None:
    store = store_factory()
    store.load()
    with pytest.raises(StoreConflict):
        store.commit(make_commit(1))
    with store.lock(5):
        pass
    with pytest.raises(StoreConflict):
        store.commit(make_commit(1))
    assert not store.exists()


@pytest.mark.parametrize("seq", [0, 2, 5])
def test_commit_with_a_seq_that_does_not_follow_is_refused(
    store_factory: StoreFactory, seq: int
) -> None:
    store = store_factory()
    store.load()
    with store.lock(5), pytest.raises(StoreConflict):
        store.commit(make_commit(seq))
    assert store.load().commits == []


def test_repeating_a_committed_seq_is_refused(store_factory: StoreFactory) -> None:
    store = store_factory()
    store.load()
    model = Model()
    committed = write(store, model, 1, 2)
    with store.lock(5), pytest.raises(StoreConflict):
        store.commit(make_commit(2))
    assert_same_commits(store.load().commits, committed)


def test_commits_round_trip_through_load(store_factory: StoreFactory) -> None:
    store = store_factory()
    store.load()
    model = Model()
    committed = write(store, model, 1, 2, 3)
    snapshot = store_factory().load()
    assert snapshot.document is None
    assert_same_commits(snapshot.commits, committed)
    assert snapshot.commits[-1].next_id == committed[-1].next_id


def test_commit_vectors_round_trip_bit_exact(store_factory: StoreFactory) -> None:
    store = store_factory()
    store.load()
    special = np.array(
        [
            [-0.0, 1e-45, np.finfo(np.float32).max, np.float32(1) / np.float32(3)],
            [np.nan, -np.inf, np.inf, np.finfo(np.float32).tiny],
        ],
        dtype=np.float32,
    )
    base = make_commit(1)
    commit = Commit(1, AT, base.next_id, base.ops, VectorBatch(MODEL, ("obs-4", "obs-x"), special))
    with store.lock(5):
        store.commit(commit)
    [loaded] = store_factory().load().commits
    assert_same_commits([loaded], [commit])


def test_commit_without_vectors_round_trips(store_factory: StoreFactory) -> None:
    store = store_factory()
    store.load()
    commit = make_commit(1, vectors=False)
    with store.lock(5):
        store.commit(commit)
    assert_same_commits(store_factory().load().commits, [commit])


# --------------------------------------------------------------------------- changes_since
def test_changes_since_returns_only_newer_commits(store_factory: StoreFactory) -> None:
    writer = store_factory()
    writer.load()
    model = Model()
    write(writer, model, 1)
    reader = store_factory()
    reader.load()
    newer = write(writer, model, 2, 3)
    changes = reader.changes_since(1)
    assert changes is not None, "plain commits must not force a reload"
    assert_same_commits(changes, newer)
    assert reader.changes_since(3) == []
    assert writer.changes_since(3) == []


def test_changes_since_is_empty_when_nothing_changed(store_factory: StoreFactory) -> None:
    store = store_factory()
    store.load()
    model = Model()
    write(store, model, 1, 2)
    reader = store_factory()
    snapshot = reader.load()
    assert len(snapshot.commits) == 2
    assert reader.changes_since(2) == []
    assert reader.changes_since(2) == []


def test_changes_since_an_older_seq_is_exact_or_asks_for_a_reload(
    store_factory: StoreFactory,
) -> None:
    writer = store_factory()
    writer.load()
    model = Model()
    committed = write(writer, model, 1, 2, 3)
    assert_changes(writer.changes_since(0), committed)
    assert_changes(writer.changes_since(1), committed[1:])
    reader = store_factory()
    reader.load()
    assert reader.changes_since(3) == []
    assert_changes(reader.changes_since(1), committed[1:])


def test_a_second_handle_sees_the_first_handles_commits(store_factory: StoreFactory) -> None:
    writer = store_factory()
    writer.load()
    reader = store_factory()
    reader.load()
    model = Model()
    write(writer, model, 1, 2)
    graph = catch_up(reader, Graph())
    assert graph.to_document() == model.document()
    write(writer, model, 3)
    graph = catch_up(reader, graph)
    assert graph.to_document() == model.document()


def test_changes_since_after_another_handles_checkpoint_is_a_reload_or_exact(
    store_factory: StoreFactory,
) -> None:
    writer = store_factory()
    writer.load()
    model = Model()
    write(writer, model, 1, 2)
    reader = store_factory()
    graph = catch_up(reader, loaded_graph(reader))
    assert graph.seq == 2
    later = write(writer, model, 3)
    checkpoint(writer, model)
    later += write(writer, model, 4)
    assert_changes(reader.changes_since(2), later)
    graph = catch_up(reader, graph)
    assert graph.to_document() == model.document()


def test_a_reader_that_missed_many_checkpoints_catches_up(store_factory: StoreFactory) -> None:
    writer = store_factory()
    writer.load()
    model = Model()
    readers: list[tuple[Store, Graph]] = []
    for seq in range(1, 25):
        write(writer, model, seq)
        if seq % 3 == 0:
            reader = store_factory()
            readers.append((reader, loaded_graph(reader)))
        checkpoint(writer, model)
    write(writer, model, 25)
    for reader, graph in readers:
        assert catch_up(reader, graph).to_document() == model.document()


# --------------------------------------------------------------------------- checkpoints
def test_forced_checkpoint_then_load_returns_the_document_without_older_commits(
    store_factory: StoreFactory,
) -> None:
    store = store_factory()
    store.load()
    model = Model()
    write(store, model, 1, 2, 3)
    document = model.document()
    assert document["checkpointSeq"] == 3
    checkpoint(store, model)
    snapshot = store_factory().load()
    assert snapshot.document == document
    assert snapshot.commits == []
    assert snapshot.vectors is not None
    assert snapshot.vectors.model == MODEL
    assert list(snapshot.vectors.ids) == model.index.ids()
    matrix = np.asarray(snapshot.vectors.all_rows())
    assert matrix.dtype == np.float32
    assert matrix.tobytes() == model.index.rows(0, len(model.index)).tobytes()


def test_commits_after_a_checkpoint_load_on_top_of_it(store_factory: StoreFactory) -> None:
    store = store_factory()
    store.load()
    model = Model()
    write(store, model, 1, 2)
    checkpoint(store, model)
    later = write(store, model, 3, 4)
    snapshot = store_factory().load()
    assert snapshot.document is not None
    assert snapshot.document["checkpointSeq"] == 2
    assert_same_commits(snapshot.commits, later)
    assert rebuild(store_factory()) == model.document()


def test_a_checkpoint_that_is_not_due_writes_nothing(store_factory: StoreFactory) -> None:
    store = store_factory()
    store.load()
    model = Model()
    committed = write(store, model, 1)
    with store.lock(5):
        assert not store.checkpoint(model.graph, model.index, [])
    snapshot = store_factory().load()
    assert snapshot.document is None
    assert_same_commits(snapshot.commits, committed)


# --------------------------------------------------------------------------- episodes, summary
def test_episodes_round_trip_through_checkpoints(store_factory: StoreFactory) -> None:
    store = store_factory()
    store.load()
    model = Model()
    write(store, model, 1)
    checkpoint(store, model, [episode(1), episode(2, "Ünïcode ✓ \u05e9\u05dc\u05d5\u05dd 🎉")])
    write(store, model, 2)
    checkpoint(store, model, [episode(3)])
    stored = {e["id"]: e for e in store_factory().episodes()}
    assert stored == {e["id"]: e for e in (episode(1), episode(2, "Ünïcode ✓ שלום 🎉"), episode(3))}


def test_episodes_stored_twice_come_back_once(store_factory: StoreFactory) -> None:
    store = store_factory()
    store.load()
    model = Model()
    write(store, model, 1)
    checkpoint(store, model, [episode(1), episode(2)])
    write(store, model, 2)
    checkpoint(store, model, [episode(2), episode(3)])
    ids = [e["id"] for e in store_factory().episodes()]
    assert sorted(ids) == ["episode-1", "episode-2", "episode-3"]


def test_summary_round_trips(store_factory: StoreFactory) -> None:
    store = store_factory()
    assert store.read_summary() is None
    summary = {"text": "Alice likes tea. 🍵", "upTo": "episode-3", "turns": [1, 2]}
    store.write_summary(summary)
    assert store_factory().read_summary() == summary
    store.write_summary({"text": "newer"})
    assert store_factory().read_summary() == {"text": "newer"}


# --------------------------------------------------------------------------- rewrite
def test_rewrite_replaces_everything(store_factory: StoreFactory) -> None:
    store = store_factory()
    store.load()
    model = Model()
    write(store, model, 1, 2)
    checkpoint(store, model, [episode(1), episode(2)])
    write(store, model, 3)
    kept = Model()
    for seq in (1, 3):
        kept.apply(make_commit(seq))
    kept.graph.seq = 4
    document = kept.document()
    with store.lock(5):
        store.rewrite(document, kept.index, [episode(1)])
    for handle in (store, store_factory()):
        snapshot = handle.load()
        assert snapshot.document == document
        assert snapshot.commits == []
        assert snapshot.vectors is not None
        assert list(snapshot.vectors.ids) == kept.index.ids()
        assert (
            np.asarray(snapshot.vectors.all_rows()).tobytes()
            == kept.index.rows(0, len(kept.index)).tobytes()
        )
        assert list(handle.episodes()) == [episode(1)]


def test_rewrite_without_vectors_drops_the_stored_vectors(store_factory: StoreFactory) -> None:
    store = store_factory()
    store.load()
    model = Model()
    write(store, model, 1)
    checkpoint(store, model, [episode(1)])
    empty = Graph()
    empty.seq = 2
    with store.lock(5):
        store.rewrite(empty.to_document(), None, [])
    snapshot = store_factory().load()
    assert snapshot.document == empty.to_document()
    assert snapshot.vectors is None or len(snapshot.vectors.ids) == 0
    assert list(store_factory().episodes()) == []


def test_after_rewrite_the_next_commit_follows_the_rewritten_seq(
    store_factory: StoreFactory,
) -> None:
    store = store_factory()
    store.load()
    model = Model()
    write(store, model, 1, 2)
    model.graph.seq = 7
    with store.lock(5):
        store.rewrite(model.document(), model.index, [])
    later = write(store, model, 8)
    snapshot = store_factory().load()
    assert snapshot.document is not None and snapshot.document["checkpointSeq"] == 7
    assert_same_commits(snapshot.commits, later)


def test_a_reader_catches_up_after_a_rewrite(store_factory: StoreFactory) -> None:
    writer = store_factory()
    writer.load()
    model = Model()
    write(writer, model, 1, 2)
    reader = store_factory()
    graph = loaded_graph(reader)
    fresh = Model()
    fresh.apply(make_commit(2))
    fresh.graph.seq = 3
    with writer.lock(5):
        writer.rewrite(fresh.document(), fresh.index, [])
    assert catch_up(reader, graph).to_document() == fresh.document()


# --------------------------------------------------------------------------- stale writers
def test_a_handle_that_missed_commits_cannot_commit_over_them(store_factory: StoreFactory) -> None:
    first = store_factory()
    first.load()
    second = store_factory()
    second.load()
    model = Model()
    write(first, model, 1, 2)
    with second.lock(5), pytest.raises(StoreConflict):
        second.commit(make_commit(1))
    assert rebuild(store_factory()) == model.document()
    assert catch_up(second, Graph()).to_document() == model.document()
    write(second, model, 3)
    assert rebuild(first) == model.document()
    assert rebuild(store_factory()) == model.document()


def test_a_handle_that_missed_a_checkpoint_cannot_commit(store_factory: StoreFactory) -> None:
    first = store_factory()
    first.load()
    write(first, Model(), 1)
    second = store_factory()
    second.load()  # sees commit 1
    model = Model()
    model.apply(make_commit(1))
    write(first, model, 2)
    checkpoint(first, model)
    write(first, model, 3)
    with second.lock(5), pytest.raises(StoreConflict):
        second.commit(make_commit(2))
    assert rebuild(store_factory()) == model.document()


def test_a_checkpoint_that_would_drop_commits_is_refused(store_factory: StoreFactory) -> None:
    store = store_factory()
    store.load()
    behind = Model()
    behind.apply(make_commit(1))
    model = Model()
    committed = write(store, model, 1, 2)
    with store.lock(5), pytest.raises(StoreConflict):
        store.checkpoint(behind.graph, behind.index, [episode(1)], force=True)
    snapshot = store_factory().load()
    assert snapshot.document is None
    assert_same_commits(snapshot.commits, committed)


def test_a_handle_that_missed_commits_cannot_checkpoint_over_them(
    store_factory: StoreFactory,
) -> None:
    first = store_factory()
    first.load()
    second = store_factory()
    second.load()
    model = Model()
    write(first, model, 1, 2)
    with second.lock(5), pytest.raises(StoreConflict):
        second.checkpoint(Graph(), None, [], force=True)
    assert rebuild(store_factory()) == model.document()


def test_a_handle_that_missed_commits_cannot_rewrite_over_them(
    store_factory: StoreFactory,
) -> None:
    if store_factory.shared:
        pytest.skip("a store with one shared handle has no stale handles")
    first = store_factory()
    first.load()
    second = store_factory()
    second.load()
    model = Model()
    write(first, model, 1, 2)
    with second.lock(5), pytest.raises(StoreConflict):
        second.rewrite(Graph().to_document(), None, [])
    assert rebuild(store_factory()) == model.document()


# --------------------------------------------------------------------------- the lock
def test_the_lock_times_out_while_another_handle_holds_it(store_factory: StoreFactory) -> None:
    holder = store_factory()
    other = store_factory()
    holder.load()
    with holder.lock(5):
        started = time.monotonic()
        with pytest.raises(StoreConflict), other.lock(0.05):
            pytest.fail("the lock was granted twice")
        assert time.monotonic() - started < 2.0
    with other.lock(0.5):
        pass


def test_a_timed_out_lock_attempt_leaves_the_holders_lock_intact(
    store_factory: StoreFactory,
) -> None:
    store = store_factory()
    store.load()
    model = Model()
    with store.lock(5):
        with pytest.raises(StoreConflict), store.lock(0.02):
            pytest.fail("the lock was granted twice")
        commit = make_commit(1)
        store.commit(commit)
        model.apply(commit)
    assert rebuild(store_factory()) == model.document()
