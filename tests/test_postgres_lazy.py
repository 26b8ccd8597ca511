"""PostgreSQL scopes open lazily, share a process's connections and write in few round trips.

A checkpoint stores graph.json's bytes with their index (the directory store's
graph.idx) in ``images``; opening a scope reads the index, the vector ids and
the approximate index, and leaves the records and vector rows in the database
until a call needs them. Needs a server: see tests/postgres_server.py.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from memgraph import Memory
from memgraph.errors import StoreConflict
from memgraph.graph.graph import Graph
from memgraph.retrieval.ivf import CoarseIndex
from memgraph.retrieval.vectors import VectorIndex
from memgraph.store import Commit, PostgresStore, VectorBatch, pg_pool, pg_remote, postgres
from memgraph.store.pg_remote import RemoteImage, RemoteRows
from tests.postgres_server import new_schema, new_scope

if TYPE_CHECKING:
    import psycopg
else:
    psycopg = pytest.importorskip(
        "psycopg", reason="psycopg is not installed: pip install -e '.[dev]'"
    )

pytestmark = pytest.mark.postgres

AT = "2026-01-02T03:04:05.678Z"
DIM = 8
Stores = Callable[..., PostgresStore]


SMALL_IMAGE, SMALL_VECTORS = postgres.WHOLE_IMAGE_BYTES, postgres.WHOLE_VECTOR_ROWS


@pytest.fixture(autouse=True)
def lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every scope here counts as large: records and vector rows stay in the database."""
    monkeypatch.setattr(postgres, "WHOLE_IMAGE_BYTES", 0)
    monkeypatch.setattr(postgres, "WHOLE_VECTOR_ROWS", 0)


@pytest.fixture
def schema(postgres_dsn: str) -> str:
    return new_schema()


@pytest.fixture
def stores(postgres_dsn: str, schema: str) -> Iterator[Stores]:
    opened: list[PostgresStore] = []

    def open_handle(scope: str = "alice", dsn: str = postgres_dsn) -> PostgresStore:
        store = PostgresStore(dsn, scope, schema=schema)
        opened.append(store)
        return store

    yield open_handle
    for store in opened:
        store.close()


def make_commit(seq: int) -> Commit:
    """Person ``seq`` (entity), a fact about them with a vector, and a relation to
    the previous person."""
    entity_id, obs_id, rel_id = f"entity-{4 * seq}", f"obs-{4 * seq + 1}", f"rel-{4 * seq + 2}"
    ops: list[dict[str, Any]] = [
        {"op": "entity", "entity": {"id": entity_id, "name": f"Person {seq}", "type": "person"}},
        {
            "op": "obs",
            "entity": entity_id,
            "obs": {"id": obs_id, "content": f"works at Company {seq}", "validFrom": AT},
        },
    ]
    if seq > 1:
        rel = {"id": rel_id, "from": entity_id, "to": f"entity-{4 * seq - 4}", "type": "knows"}
        ops.append({"op": "rel", "rel": {**rel, "validFrom": AT}})
    vector = np.random.default_rng(seq).standard_normal((1, DIM)).astype(np.float32)
    return Commit(seq, AT, 4 * seq + 3, ops, VectorBatch("m", (obs_id,), vector))


def written(store: PostgresStore, count: int, *, coarse: bool = False) -> tuple[Graph, VectorIndex]:
    """Commit people 1..count through ``store`` and checkpoint them; the state written."""
    store.load()
    graph, index = Graph(), VectorIndex("m")
    with store.lock(5):
        for seq in range(1, count + 1):
            commit = make_commit(seq)
            store.commit(commit)
            graph.apply(commit.ops)
            graph.next_id, graph.seq = commit.next_id, seq
            assert commit.vectors is not None
            index.add(commit.vectors.ids, commit.vectors.matrix)
        if coarse:
            index.coarse = CoarseIndex.train(index.rows(0, len(index)))
        assert store.checkpoint(graph, index, [], force=True)
    return graph, index


def image_of(graph: Graph) -> RemoteImage:
    assert graph.saved is not None and isinstance(graph.saved.data, RemoteImage)
    return graph.saved.data


# --------------------------------------------------------------------------- opening
def test_opening_a_checkpointed_scope_reads_its_index_and_no_record(stores: Stores) -> None:
    graph, _ = written(stores(), 40)
    snapshot = stores().load()
    assert snapshot.saved is not None, "opened from the image's index, not parsed whole"
    lazy = snapshot.graph()
    image = image_of(lazy)
    assert len(lazy.entities) == 40 and lazy.observation_count == 40
    assert lazy.entity_name("entity-8") == "Person 2"  # answered from the index
    assert lazy.owner_of("obs-9") == "entity-8"
    assert image.reads == 0
    assert lazy.entities["entity-8"] == graph.entities["entity-8"]
    assert image.reads == 1
    assert lazy.to_document() == graph.to_document()


def test_a_small_scope_opens_in_one_round_trip_with_its_records_and_vectors(
    stores: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres, "WHOLE_IMAGE_BYTES", SMALL_IMAGE)
    monkeypatch.setattr(postgres, "WHOLE_VECTOR_ROWS", SMALL_VECTORS)
    graph, index = written(stores(), 40)
    store = stores()
    statements: list[str] = []
    store.load()  # the schema check of a handle's first use
    original = psycopg.Connection.pipeline

    def watched(self: psycopg.Connection[Any]) -> Any:
        statements.append("pipeline")
        return original(self)

    original_run = PostgresStore._run

    def run(self: PostgresStore, what: str, work: Any, **options: Any) -> Any:
        statements.append(what)
        return original_run(self, what, work, **options)

    monkeypatch.setattr(psycopg.Connection, "pipeline", watched)
    monkeypatch.setattr(PostgresStore, "_run", run)
    snapshot = store.load()
    lazy = snapshot.graph()
    lazy.parse_many(entity_ids=list(lazy.entities))
    assert statements == ["loading", "pipeline"], "nothing read after the load"
    assert snapshot.saved is not None and isinstance(snapshot.saved.data, bytes)
    assert snapshot.graph().to_document() == graph.to_document()
    assert snapshot.vectors is not None and snapshot.vectors.source is None
    assert snapshot.vectors.matrix.tobytes() == index.rows(0, 40).tobytes()


def test_records_a_call_needs_are_read_together_in_one_round_trip(stores: Stores) -> None:
    written(stores(), 40)
    lazy = stores().load().graph()
    image = image_of(lazy)
    lazy.parse_many(
        entity_ids=["entity-4", "entity-40"],
        observation_ids=[f"obs-{4 * n + 1}" for n in range(10, 20)],
        relation_ids=["rel-10", "rel-90"],
    )
    assert image.reads == 1
    assert lazy.entities["entity-60"]["name"] == "Person 15"
    assert lazy.relations["rel-90"]["to"] == "entity-84"
    assert image.reads == 1, "parsed ones are not read again"


def test_reading_a_whole_image_in_order_takes_a_few_large_reads(stores: Stores) -> None:
    graph, _ = written(stores(), 300)
    lazy = stores().load().graph()
    assert lazy.to_document() == graph.to_document()
    assert image_of(lazy).reads < 10, "read ahead, not one read per record"


def test_a_search_reads_only_the_vector_rows_of_the_lists_it_visits(stores: Stores) -> None:
    _, index = written(stores(), 400, coarse=True)
    snapshot = stores().load()
    assert snapshot.vectors is not None
    rows = snapshot.vectors.source
    assert isinstance(rows, RemoteRows)
    lazy = VectorIndex("m", None, snapshot.vectors.matrix, snapshot.vectors.ids, source=rows)
    lazy.coarse = snapshot.vectors.coarse
    query = index.rows(7, 8)[0]
    assert lazy.search(query, 5) == index.search(query, 5)
    assert rows.reads == 1
    assert 0 < rows.held < 400 / 4
    assert lazy.rows(0, 400).tobytes() == index.rows(0, 400).tobytes()  # the rest, once


def test_a_scope_in_use_reads_the_rest_of_its_image_once_it_read_enough_records(
    stores: Stores,
) -> None:
    graph, _ = written(stores(), 100)
    lazy = stores().load().graph()
    image = image_of(lazy)
    picks = [f"entity-{4 * n}" for n in range(1, 101, 3)]  # not in order: no read-ahead
    for entity_id in picks[: pg_remote.WHOLE_AFTER_READS]:
        assert lazy.entities[entity_id] == graph.entities[entity_id]
    assert image.reads == pg_remote.WHOLE_AFTER_READS
    assert image.resident_bytes < len(image) / 4
    for entity_id in picks[pg_remote.WHOLE_AFTER_READS :]:
        assert lazy.entities[entity_id] == graph.entities[entity_id]
    assert image.reads == pg_remote.WHOLE_AFTER_READS + 1, "the rest in one read"
    assert image.resident_bytes == len(image)
    assert lazy.to_document() == graph.to_document()
    assert image.reads == pg_remote.WHOLE_AFTER_READS + 1


def test_once_a_quarter_of_the_vector_rows_were_read_the_rest_come_in_one_pass(
    stores: Stores,
) -> None:
    _, index = written(stores(), 200)
    vectors = stores().load().vectors
    assert vectors is not None and isinstance(vectors.source, RemoteRows)
    rows = vectors.source
    assert rows.take(np.arange(0, 40, dtype=np.int64)).shape == (40, DIM)
    assert rows.reads == 1 and rows.held == 40
    got = rows.take(np.arange(40, 60, dtype=np.int64))  # past a quarter: all of them
    assert got.tobytes() == index.rows(40, 60).tobytes()
    assert rows.reads == 2 and rows.held == 200
    assert (
        rows.take(np.arange(150, 200, dtype=np.int64)).tobytes() == index.rows(150, 200).tobytes()
    )
    assert rows.reads == 2


def test_vector_rows_read_before_a_reload_are_not_read_again(stores: Stores) -> None:
    writer, reader = stores(), stores()
    written(writer, 30)
    snapshot = reader.load()
    assert snapshot.vectors is not None and snapshot.vectors.source is not None
    assert snapshot.vectors.all_rows().shape == (30, DIM)
    with writer.lock(5):  # another process appends rows with its next checkpoint
        commit = make_commit(31)
        writer.commit(commit)
        graph = writer.load().graph()
        graph.apply(commit.ops)
        graph.seq = 31
        bigger = VectorIndex("m", None, snapshot.vectors.all_rows(), snapshot.vectors.ids)
        assert commit.vectors is not None
        bigger.add(commit.vectors.ids, commit.vectors.matrix)
        assert writer.checkpoint(graph, bigger, [], force=True)
    assert reader.changes_since(30) is None, "a new image: reload"
    again = reader.load().vectors
    assert again is not None and again.source is snapshot.vectors.source
    rows = again.source
    assert isinstance(rows, RemoteRows)
    before = rows.reads
    assert rows.take(np.arange(30, dtype=np.int64)).shape == (30, DIM)
    assert rows.reads == before
    assert rows.take(np.arange(31, dtype=np.int64))[30].tobytes() == bigger.rows(30, 31).tobytes()


def test_a_reader_keeps_its_image_through_one_checkpoint_and_is_told_to_retry_after_two(
    stores: Stores,
) -> None:
    writer, reader = stores(), stores()
    graph, index = written(writer, 20)
    lazy = reader.load().graph()
    for seq in (21, 22):  # two more checkpoints by another process
        with writer.lock(5):
            commit = make_commit(seq)
            writer.commit(commit)
            graph.apply(commit.ops)
            graph.seq = seq
            assert writer.checkpoint(graph, index, [], force=True)
        if seq == 21:
            assert lazy.entities["entity-20"]["name"] == "Person 5", "the image before stays"
    with pytest.raises(StoreConflict, match="retry"):
        lazy.entities["entity-40"]
    fresh = reader.load().graph()
    assert fresh.entities["entity-40"]["name"] == "Person 10"


def test_a_checkpoint_rebases_the_writers_graph_on_the_image_it_wrote(stores: Stores) -> None:
    store = stores()
    graph, index = written(store, 20)
    assert graph.saved is not None and isinstance(graph.saved.data, RemoteImage)
    with store.lock(5):
        commit = make_commit(21)
        store.commit(commit)
        graph.apply(commit.ops)
        graph.seq = 21
        assert store.checkpoint(graph, index, [], force=True)
    assert stores().load().graph().to_document() == graph.to_document()


def test_derived_data_is_kept_with_the_scope_and_dropped_by_a_rewrite(stores: Stores) -> None:
    store = stores()
    graph, index = written(store, 3)
    store.write_derived("episodes.idx", b"\x00index\xff")
    assert stores().read_derived("episodes.idx") == b"\x00index\xff"
    assert stores().read_derived("other") is None
    with store.lock(5):
        store.rewrite(graph.to_document(), index, [])
    assert stores().read_derived("episodes.idx") is None


# --------------------------------------------------------------------------- connections
def named(dsn: str, application: str) -> str:
    return f"{dsn}{'&' if '?' in dsn else '?'}application_name={application}"


def sessions(dsn: str, application: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as admin:
        row = admin.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", [application]
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_many_scope_handles_share_a_few_connections(stores: Stores, postgres_dsn: str) -> None:
    application = new_scope("pool")
    dsn = named(postgres_dsn, application)
    handles = [stores(f"user-{n}", dsn) for n in range(60)]
    for number, handle in enumerate(handles):
        handle.load()
        with handle.lock(5):
            handle.commit(make_commit(1))
        if number % 2:
            assert handle.changes_since(1) == []
    assert sessions(postgres_dsn, application) <= pg_pool.MAX_IDLE


def test_taking_the_lock_reads_the_latest_commits_in_the_same_round_trip(
    stores: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer, other = stores(), stores()
    writer.load()
    with other.lock(5):
        other.commit(make_commit(1))
    runs: list[str] = []
    original = PostgresStore._run

    def counting(self: PostgresStore, what: str, work: Any, **options: Any) -> Any:
        runs.append(what)
        return original(self, what, work, **options)

    monkeypatch.setattr(PostgresStore, "_run", counting)
    with writer.lock(5):
        changes = writer.changes_since(0)
        assert changes is not None and [c.seq for c in changes] == [1]
        assert runs == ["locking"], "the catch-up came with the lock"
        writer.commit(make_commit(2))
    assert [c.seq for c in stores().load().commits] == [1, 2]


def test_a_forked_child_uses_connections_of_its_own_and_leaves_its_parents_alone(
    stores: Stores, postgres_dsn: str
) -> None:
    if not hasattr(os, "fork"):
        pytest.skip("no fork() here")
    parent = stores()
    written(parent, 3)
    assert parent.exists()  # the parent's pool now holds idle connections
    backends = {c.info.backend_pid for c in pg_pool.pool_for(postgres_dsn)._idle}
    assert backends
    pid = os.fork()
    if pid == 0:  # the child: use the store, then finalize what it inherited
        code = 1
        try:
            child = PostgresStore(postgres_dsn, "alice", schema=parent.schema)
            code = 0 if child.exists() and len(child.load().graph().entities) == 3 else 2
            child.close()
            pg_pool.close_idle()
            pg_pool._inherited.clear()  # as interpreter exit would finalize them
            gc.collect()
        except BaseException as exc:  # reported through the exit code and stderr
            print(f"child failed: {exc!r}", file=sys.stderr)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        alive = {r[0] for r in admin.execute("SELECT pid FROM pg_stat_activity").fetchall()}
    assert backends <= alive, "the child ended sessions of its parent"
    assert len(parent.load().graph().entities) == 3


# --------------------------------------------------------------------------- Memory
def test_a_memory_on_postgres_opens_lazily_and_answers_as_one_parsed_whole(
    postgres_dsn: str, schema: str
) -> None:
    scope = new_scope()
    texts = [
        f"Person{n} works at Company{n % 7}. Person{n} lives in City{n % 5}." for n in range(40)
    ]
    dsn = postgres_dsn
    with Memory(scope=scope, provider="mock", store=dsn) as memory:
        memory.remember_many(texts)
        memory.checkpoint()
        expected = [memory.recall(q, rerank=False) for q in ("where does person7 work", "city3")]
    with Memory(scope=scope, provider="mock", store=dsn) as reopened:
        assert [reopened.recall(q, rerank=False) for q in ("where does person7 work", "city3")] == (
            expected
        )
        graph = reopened._graph
        assert graph is not None and isinstance(
            graph.saved.data if graph.saved else None, RemoteImage
        )


def test_remembered_texts_are_found_on_a_lazy_scope_from_its_saved_episode_index(
    postgres_dsn: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    scope = new_scope()
    texts = [f"Person{n} met Person{n + 1} at the Harbor{n % 3} cafe." for n in range(30)]
    with Memory(scope=scope, provider="mock", store=postgres_dsn) as memory:
        memory.remember_many(texts)
        memory.checkpoint()
        expected = memory.search("who met Person7 at the cafe", k=5, episodes=True)
    assert any(h.episode is not None and h.episode.text == texts[7] for h in expected)
    marks: list[int] = []
    episodes_after = PostgresStore.episodes_after

    def spy(self: PostgresStore, mark: int) -> tuple[list[tuple[int, Any]], int]:
        marks.append(mark)
        return episodes_after(self, mark)

    def every_episode(self: PostgresStore) -> Any:
        raise AssertionError("read every episode of the scope")

    monkeypatch.setattr(PostgresStore, "episodes_after", spy)
    monkeypatch.setattr(PostgresStore, "episodes", every_episode)
    with Memory(scope=scope, provider="mock", store=postgres_dsn) as reopened:
        found = reopened.search("who met Person7 at the cafe", k=5, episodes=True)
    assert [(h.episode.id if h.episode else None, h.score) for h in found] == [
        (h.episode.id if h.episode else None, h.score) for h in expected
    ]
    assert marks and 0 not in marks, "the episode index came from the database, not rebuilt"
