"""PostgreSQL store behaviour beyond the shared contract (tests/test_store_contract.py).

Transactions are all or nothing, the advisory lock excludes other
connections (and dies with a crashed holder), migrations run once and are
versioned, errors map onto memgraph's tree without leaking a password, and
``Memory`` works end to end from a DSN in ``store=``, the config or
``MEMGRAPH_STORE``. Needs a server: see tests/postgres_server.py.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import pytest

from memgraph import Memory
from memgraph.errors import (
    ConfigError,
    StoreConflict,
    StoreCorrupt,
    StoreError,
    StoreUnavailable,
)
from memgraph.graph.graph import Graph
from memgraph.id_column import IdColumn
from memgraph.llm_calls.provider import Provider, resolve_provider
from memgraph.retrieval.ivf import CoarseIndex
from memgraph.retrieval.vectors import VectorIndex
from memgraph.store import Commit, PostgresStore, VectorBatch, open_store, pg_schema, postgres
from memgraph.store.pg_schema import ensure_schema, mask_dsn, translate_errors
from tests.postgres_server import new_schema, new_scope, scope_footprint

if TYPE_CHECKING:
    import psycopg
else:
    psycopg = pytest.importorskip(
        "psycopg", reason="psycopg is not installed: pip install -e '.[dev]'"
    )

pytestmark = pytest.mark.postgres

AT = "2026-01-02T03:04:05.678Z"
Stores = Callable[..., PostgresStore]


@pytest.fixture
def schema(postgres_dsn: str) -> str:
    return new_schema()


@pytest.fixture
def stores(postgres_dsn: str, schema: str) -> Iterator[Stores]:
    """Opens handles on the test's schema (scope ``alice`` unless told); closes them all."""
    opened: list[PostgresStore] = []

    def open_handle(scope: str = "alice") -> PostgresStore:
        store = PostgresStore(postgres_dsn, scope, schema=schema)
        opened.append(store)
        return store

    yield open_handle
    for store in opened:
        store.close()


@pytest.fixture
def admin(postgres_dsn: str) -> Iterator[psycopg.Connection[Any]]:
    """A plain autocommit connection for looking at (and tampering with) the tables."""
    with psycopg.connect(postgres_dsn, autocommit=True) as connection:
        yield connection


@pytest.fixture
def scope(postgres_dsn: str) -> Iterator[str]:
    """A fresh scope in the default schema, whose rows are deleted afterwards."""
    name = new_scope()
    yield name
    with psycopg.connect(postgres_dsn, autocommit=True) as connection:
        connection.execute("DELETE FROM memgraph.scopes WHERE scope = %s", [name])
        connection.execute("DELETE FROM memgraph.summaries WHERE scope = %s", [name])


def make_commit(seq: int) -> Commit:
    entity_id, obs_id = f"entity-{3 * seq}", f"obs-{3 * seq + 1}"
    ops = [
        {
            "op": "entity",
            "entity": {"id": entity_id, "name": f"Person {seq}", "type": "person"},
        },
        {
            "op": "obs",
            "entity": entity_id,
            "obs": {"id": obs_id, "content": f"works at Company {seq}", "validFrom": AT},
        },
    ]
    vector = np.random.default_rng(seq).standard_normal((1, 4)).astype(np.float32)
    return Commit(seq, AT, 3 * seq + 2, ops, VectorBatch("m", (obs_id,), vector))


def state_after(*seqs: int) -> tuple[Graph, VectorIndex]:
    graph, index = Graph(), VectorIndex("m")
    for seq in seqs:
        commit = make_commit(seq)
        graph.apply(commit.ops)
        graph.next_id, graph.seq = commit.next_id, seq
        assert commit.vectors is not None
        index.add(commit.vectors.ids, commit.vectors.matrix)
    return graph, index


def committed(stores: Stores, *seqs: int) -> tuple[PostgresStore, Graph, VectorIndex]:
    """A loaded store holding the commits ``seqs``, and the graph and vectors they make."""
    store = stores()
    store.load()
    with store.lock(5):
        for seq in seqs:
            store.commit(make_commit(seq))
    return (store, *state_after(*seqs))


def fail_when(admin: psycopg.Connection[Any], schema: str, table: str, event: str) -> None:
    """Make every ``event`` on ``schema.table`` raise inside the server, mid-transaction."""
    admin.execute(
        f"CREATE FUNCTION {schema}.fail() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN RAISE EXCEPTION 'injected failure'; END $$"
    )
    admin.execute(
        f"CREATE TRIGGER fail BEFORE {event} ON {schema}.{table} "
        f"FOR EACH ROW EXECUTE FUNCTION {schema}.fail()"
    )


def stop_failing(admin: psycopg.Connection[Any], schema: str, table: str) -> None:
    admin.execute(f"DROP TRIGGER fail ON {schema}.{table}")
    admin.execute(f"DROP FUNCTION {schema}.fail()")


def counting_provider() -> tuple[Provider, list[int]]:
    """The mock provider, with a list that grows by one per embedded text."""
    provider = resolve_provider("mock")
    assert provider.embedder is not None
    embedder, calls = provider.embedder, list[int]()

    class Counting:
        model = embedder.model

        def embed(self, texts: Any) -> Any:
            calls.extend(1 for _ in texts)
            return embedder.embed(texts)

    return Provider(provider.name, provider.chat, Counting()), calls


# --------------------------------------------------------------------------- transactions
def test_a_commit_that_fails_midway_leaves_nothing_behind(
    stores: Stores, admin: psycopg.Connection[Any], schema: str
) -> None:
    store = stores()
    store.load()
    with store.lock(5):
        store.commit(make_commit(1))
    fail_when(admin, schema, "scopes", "UPDATE")  # after the commit row was inserted
    with store.lock(5), pytest.raises(StoreError):
        store.commit(make_commit(2))
    stop_failing(admin, schema, "scopes")
    row = admin.execute(f"SELECT max(seq), count(*) FROM {schema}.commits").fetchone()
    assert row == (1, 1)
    assert [c.seq for c in stores().load().commits] == [1]
    with store.lock(5):
        store.commit(make_commit(2))
    assert [c.seq for c in stores().load().commits] == [1, 2]


def test_a_first_commit_that_fails_does_not_create_the_scope(
    stores: Stores, admin: psycopg.Connection[Any], schema: str
) -> None:
    store = stores()
    store.load()
    fail_when(admin, schema, "commits", "INSERT")
    with store.lock(5), pytest.raises(StoreError):
        store.commit(make_commit(1))
    assert not store.exists()
    assert scope_footprint(admin.info.dsn, schema, "alice") == []


def test_a_checkpoint_that_fails_midway_changes_nothing(
    stores: Stores, admin: psycopg.Connection[Any], schema: str
) -> None:
    store, graph, index = committed(stores, 1, 2)
    episode = {"id": "episode-1", "text": "Person 1 works at Company 1.", "at": AT}
    fail_when(admin, schema, "commits", "DELETE")  # the last step of a checkpoint
    with store.lock(5), pytest.raises(StoreError):
        store.checkpoint(graph, index, [episode], force=True)
    stop_failing(admin, schema, "commits")
    assert scope_footprint(admin.info.dsn, schema, "alice") == ["scopes: 1", "commits: 2"]
    snapshot = stores().load()
    assert snapshot.document is None and snapshot.vectors is None
    assert [c.seq for c in snapshot.commits] == [1, 2]
    with store.lock(5):
        assert store.checkpoint(graph, index, [episode], force=True)
    assert scope_footprint(admin.info.dsn, schema, "alice") == [
        "scopes: 1",
        "images: 1",
        "episodes: 1",
        "vectors: 2",
    ]


def test_a_rewrite_that_fails_midway_keeps_the_old_state(
    stores: Stores, admin: psycopg.Connection[Any], schema: str
) -> None:
    store = stores()
    store.load()
    with store.lock(5):
        store.commit(make_commit(1))
    fail_when(admin, schema, "vectors", "INSERT")
    graph, index = state_after(1)
    graph.seq = 2
    with store.lock(5), pytest.raises(StoreError):
        store.rewrite(graph.to_document(), index, [])
    snapshot = stores().load()
    assert snapshot.document is None
    assert [c.seq for c in snapshot.commits] == [1]


class failing_scope:
    """While active, every commit of ``scope`` (in the default schema) fails in the server."""

    def __init__(self, admin: psycopg.Connection[Any], scope: str) -> None:
        self.admin, self.scope = admin, scope
        self.name = f"fail_{scope.replace('-', '_')}"

    def __enter__(self) -> None:
        self.admin.execute(
            f"CREATE FUNCTION memgraph.{self.name}() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN IF NEW.scope = '{self.scope}' THEN RAISE EXCEPTION 'injected'; END IF; "
            "RETURN NEW; END $$"
        )
        self.admin.execute(
            f"CREATE TRIGGER {self.name} BEFORE INSERT ON memgraph.commits "
            f"FOR EACH ROW EXECUTE FUNCTION memgraph.{self.name}()"
        )

    def __exit__(self, *exc_info: object) -> None:
        self.admin.execute(f"DROP TRIGGER {self.name} ON memgraph.commits")
        self.admin.execute(f"DROP FUNCTION memgraph.{self.name}()")


def test_a_remember_whose_write_fails_is_not_stored_and_the_next_one_is(
    postgres_dsn: str, admin: psycopg.Connection[Any], scope: str
) -> None:
    with Memory(scope=scope, provider="mock", store=postgres_dsn) as memory:
        memory.remember("Alice works at Acme.")
        with failing_scope(admin, scope), pytest.raises(StoreError):
            memory.remember("Bob lives in Paris.")
        assert memory.stats()["entities"] == 2
        assert memory.recall("where does bob live?", rerank=False) == ""
        memory.remember("Carol lives in Rome.")
    with Memory(scope=scope, provider="mock", store=postgres_dsn) as fresh:
        assert {e.name for e in fresh.entities()} == {"Alice", "Acme", "Carol", "Rome"}


def test_key_value_writes_are_all_or_nothing_and_shared(
    postgres_dsn: str, admin: psycopg.Connection[Any], scope: str
) -> None:
    with (
        Memory(scope=scope, provider="mock", store=postgres_dsn) as first,
        Memory(scope=scope, provider="mock", store=postgres_dsn) as second,
    ):
        first.kv.remember("theme", "dark")
        assert second.kv.recall("theme") == "dark"
        with failing_scope(admin, scope), pytest.raises(StoreError):
            second.kv.remember("theme", "light")
        assert first.kv.recall("theme") == "dark"
        assert second.kv.recall("theme") == "dark"
        second.kv.forget("theme")
        assert first.kv.recall("theme") is None
        assert [v.value for v in first.kv.history("theme")] == ["dark", None]


# --------------------------------------------------------------------------- the lock
def test_the_advisory_lock_excludes_another_connection_until_released(stores: Stores) -> None:
    holder, other = stores(), stores()
    with (
        holder.lock(5),
        pytest.raises(StoreConflict, match="locked by another writer"),
        other.lock(0.1),
    ):
        pytest.fail("two connections held the lock")
    with other.lock(0.5):
        pass


def test_a_waiting_writer_gets_the_lock_as_soon_as_it_is_released(stores: Stores) -> None:
    holder, waiter = stores(), stores()
    granted = threading.Event()
    errors: list[BaseException] = []

    def wait_for_lock() -> None:
        try:
            with waiter.lock(30):
                granted.set()
        except BaseException as exc:  # reported to the main thread
            errors.append(exc)

    with holder.lock(5):
        thread = threading.Thread(target=wait_for_lock)
        thread.start()
        assert not granted.wait(0.2), "the lock was granted while held"
    thread.join(30)
    assert granted.is_set() and not errors


def test_locks_of_different_scopes_and_schemas_do_not_collide(
    stores: Stores, postgres_dsn: str
) -> None:
    other_schema = PostgresStore(postgres_dsn, "alice", schema=new_schema())
    try:
        with stores("alice").lock(5), stores("bob").lock(0.5), other_schema.lock(0.5):
            pass
    finally:
        other_schema.close()


def named(dsn: str, application: str) -> str:
    """``dsn`` with an ``application_name``, so a test can find (and kill) its sessions."""
    return f"{dsn}{'&' if '?' in dsn else '?'}application_name={application}"


def terminate(admin: psycopg.Connection[Any], application: str) -> None:
    """End every server session of ``application``, as a crash or a failover would."""
    killed = admin.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
        [application],
    ).fetchall()
    assert killed, f"no session of {application!r} to terminate"


def test_a_crashed_lock_holder_releases_the_lock_and_cannot_write(
    postgres_dsn: str, schema: str, stores: Stores, admin: psycopg.Connection[Any]
) -> None:
    application = new_scope("holder")
    holder = PostgresStore(named(postgres_dsn, application), "alice", schema=schema)
    other = stores()
    try:
        holder.load()
        with holder.lock(5):
            terminate(admin, application)
            with other.lock(5):  # the server released the dead session's lock
                pass
            with pytest.raises(StoreUnavailable, match="lost the connection"):
                holder.commit(make_commit(1))
        assert not other.exists()
        with holder.lock(5):  # the handle reconnects outside the lock
            holder.commit(make_commit(1))
        assert [c.seq for c in other.load().commits] == [1]
    finally:
        holder.close()


def test_a_read_after_the_server_dropped_the_connection_reconnects(
    postgres_dsn: str, schema: str, stores: Stores, admin: psycopg.Connection[Any]
) -> None:
    application = new_scope("reader")
    reader = PostgresStore(named(postgres_dsn, application), "alice", schema=schema)
    writer = stores()
    try:
        writer.load()
        reader.load()
        with writer.lock(5):
            writer.commit(make_commit(1))
        terminate(admin, application)
        changes = reader.changes_since(0)
        assert changes is not None and [c.seq for c in changes] == [1]
    finally:
        reader.close()


# --------------------------------------------------------------------------- migrations
def test_first_use_creates_the_schema_at_the_latest_version(
    stores: Stores, admin: psycopg.Connection[Any], schema: str
) -> None:
    assert not stores().exists()
    rows = admin.execute(f"SELECT version, description FROM {schema}.schema_version").fetchall()
    assert rows == [(v, d) for v, d, _ in pg_schema.MIGRATIONS]
    assert rows[-1][0] == pg_schema.LATEST_VERSION


def test_migrations_run_once_when_many_processes_start_together(
    postgres_dsn: str, schema: str, admin: psycopg.Connection[Any]
) -> None:
    applied: list[list[int]] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            with psycopg.connect(postgres_dsn, autocommit=True) as connection:
                applied.append(ensure_schema(connection, schema, postgres_dsn))
        except BaseException as exc:  # reported to the main thread
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    assert sorted(applied) == [[] for _ in range(5)] + [[v for v, _, _ in pg_schema.MIGRATIONS]]
    count = admin.execute(f"SELECT count(*) FROM {schema}.schema_version").fetchone()
    assert count == (len(pg_schema.MIGRATIONS),)


def test_an_older_schema_is_upgraded_by_the_missing_migrations_in_order(
    postgres_dsn: str, schema: str, admin: psycopg.Connection[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = list(pg_schema.MIGRATIONS)
    with psycopg.connect(postgres_dsn, autocommit=True) as connection:
        assert ensure_schema(connection, schema) == [v for v, _, _ in first]
    later = [
        *first,
        (first[-1][0] + 1, "scope notes", "ALTER TABLE {s}.scopes ADD COLUMN note text"),
        (first[-1][0] + 2, "note default", "ALTER TABLE {s}.scopes ALTER note SET DEFAULT 'x'"),
    ]
    monkeypatch.setattr(pg_schema, "MIGRATIONS", later)
    monkeypatch.setattr(pg_schema, "LATEST_VERSION", later[-1][0])
    with psycopg.connect(postgres_dsn, autocommit=True) as connection:
        assert ensure_schema(connection, schema) == [later[-2][0], later[-1][0]]
        assert ensure_schema(connection, schema) == []
    store = PostgresStore(postgres_dsn, "alice", schema=schema)
    try:
        store.load()
        with store.lock(5):
            store.commit(make_commit(1))
    finally:
        store.close()
    note = admin.execute(f"SELECT note FROM {schema}.scopes").fetchone()
    assert note == ("x",)


def test_a_scope_of_the_previous_release_is_upgraded_and_opens_lazily_after_a_checkpoint(
    postgres_dsn: str, schema: str, admin: psycopg.Connection[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A schema at version 2 holding what the previous release wrote: the checkpoint
    # as a json document in scopes.checkpoint, and a commit after it.
    with monkeypatch.context() as old_code, psycopg.connect(postgres_dsn, autocommit=True) as db:
        old_code.setattr(pg_schema, "MIGRATIONS", pg_schema.MIGRATIONS[:2])
        old_code.setattr(pg_schema, "LATEST_VERSION", 2)
        ensure_schema(db, schema)
    graph, _ = state_after(1)
    admin.execute(
        f"INSERT INTO {schema}.scopes (scope, last_seq, checkpoint_seq, checkpoint) "
        "VALUES ('alice', 2, 1, %s)",
        [orjson.dumps(graph.to_document()).decode()],
    )
    second = make_commit(2)
    admin.execute(
        f"INSERT INTO {schema}.commits (scope, seq, at, next_id, ops) VALUES ('alice', 2, %s, %s, %s)",
        [AT, second.next_id, orjson.dumps(list(second.ops)).decode()],
    )
    upgraded = PostgresStore(postgres_dsn, "alice", schema=schema)
    try:
        snapshot = upgraded.load()
        assert snapshot.saved is None and snapshot.document == graph.to_document()
        assert [c.seq for c in snapshot.commits] == [2]
        everything, index = state_after(1, 2)
        with upgraded.lock(5):
            assert upgraded.checkpoint(everything, index, [], force=True)
    finally:
        upgraded.close()
    versions = admin.execute(
        f"SELECT version FROM {schema}.schema_version ORDER BY version"
    ).fetchall()
    assert versions == [(v,) for v, _, _ in pg_schema.MIGRATIONS]
    row = admin.execute(f"SELECT checkpoint, image_generation FROM {schema}.scopes").fetchone()
    assert row == (None, 1)
    reopened = PostgresStore(postgres_dsn, "alice", schema=schema)
    try:
        snapshot = reopened.load()
        assert snapshot.saved is not None, "opened from the image's index"
        assert snapshot.commits == []
        assert snapshot.document == everything.to_document()
    finally:
        reopened.close()


def test_a_schema_newer_than_this_memgraph_is_refused(
    stores: Stores, admin: psycopg.Connection[Any], schema: str
) -> None:
    stores().exists()
    admin.execute(f"INSERT INTO {schema}.schema_version VALUES (999, 'from the future')")
    with pytest.raises(StoreUnavailable, match="upgrade memgraph"):
        stores().exists()


# --------------------------------------------------------------------------- errors
def test_an_unreachable_server_is_unavailable_and_the_password_is_masked() -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    dsn = f"postgresql://app:s3cret-pw@127.0.0.1:{port}/db?connect_timeout=2"
    store = open_store(dsn, Path("unused"), "alice")
    assert isinstance(store, PostgresStore)
    assert "s3cret-pw" not in repr(store)
    with pytest.raises(StoreUnavailable) as caught:
        store.load()
    assert "s3cret-pw" not in str(caught.value)
    assert "app:***@127.0.0.1" in str(caught.value)
    store.close()


def test_a_password_is_masked_in_every_dsn_form() -> None:
    assert mask_dsn("postgresql://u:p%40ss@h/db") == "postgresql://u:***@h/db"
    assert mask_dsn("postgres://u@h/db?password=pw&sslmode=require") == (
        "postgres://u@h/db?password=***&sslmode=require"
    )
    assert mask_dsn("host=h password='a b' user=u") == "host=h password=*** user=u"
    assert mask_dsn("postgresql://u@h/db") == "postgresql://u@h/db"
    assert mask_dsn("postgresql://h:5432/db") == "postgresql://h:5432/db"


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("raw", ["#", "/", "@", "?", ":", "#/@?"])
def test_a_password_with_a_raw_special_character_is_never_shown(raw: str) -> None:
    dsn = f"postgresql://app:Mg{raw}Secret-42@127.0.0.1:{closed_port()}/db"
    assert mask_dsn(dsn) == f"postgresql://app:***@127.0.0.1:{dsn.rsplit(':', 1)[1]}"
    store = PostgresStore(dsn, "alice")
    assert "Secret-42" not in repr(store)
    with pytest.raises((StoreUnavailable, ConfigError)) as caught:  # libpq refuses a raw '?'
        store.load()
    assert "Secret-42" not in str(caught.value)
    assert "app:***@127.0.0.1" in str(caught.value)
    store.close()


def test_a_malformed_dsn_or_schema_is_a_config_error(postgres_dsn: str) -> None:
    with pytest.raises(ConfigError, match="not a valid PostgreSQL DSN"):
        PostgresStore("postgresql://u:pw@h:notaport:/db?x", "alice").load()
    with pytest.raises(ConfigError, match="schema name"):
        PostgresStore(postgres_dsn, "alice", schema="Robert'); DROP TABLE")
    with pytest.raises(ConfigError, match=r"unknown memory\.store") as caught:
        open_store("mysql://u:pw@h/db", Path("unused"), "alice")
    assert "pw" not in str(caught.value)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (psycopg.errors.LockNotAvailable("lock timeout"), StoreConflict),
        (psycopg.errors.UniqueViolation("duplicate key"), StoreConflict),
        (psycopg.errors.SerializationFailure("serialize"), StoreConflict),
        (psycopg.errors.DeadlockDetected("deadlock"), StoreConflict),
        (psycopg.OperationalError("server closed the connection"), StoreUnavailable),
        (psycopg.InterfaceError("connection is closed"), StoreUnavailable),
        (psycopg.errors.InsufficientPrivilege("permission denied"), StoreUnavailable),
        (psycopg.DataError("bad value"), StoreUnavailable),
    ],
    ids=lambda value: type(value).__name__,
)
def test_every_psycopg_error_family_maps_onto_a_store_error(
    error: Exception, expected: type[StoreError]
) -> None:
    dsn = "postgresql://u:hunter2@h/db"
    with pytest.raises(expected) as caught, translate_errors(dsn, "testing"):
        raise error
    assert caught.value.__cause__ is error
    assert "hunter2" not in str(caught.value)


def test_stored_rows_with_a_gap_in_the_journal_are_reported_as_corrupt(
    stores: Stores, admin: psycopg.Connection[Any], schema: str
) -> None:
    store = stores()
    store.load()
    with store.lock(5):
        for seq in (1, 2, 3):
            store.commit(make_commit(seq))
    admin.execute(f"DELETE FROM {schema}.commits WHERE seq = 2")
    with pytest.raises(StoreCorrupt, match=r"jumps from seq 1 to 3") as caught:
        stores().load()
    assert caught.value.path == f"{schema}.commits"


def test_a_stored_checkpoint_that_is_not_a_graph_is_reported_as_corrupt(
    stores: Stores, admin: psycopg.Connection[Any], schema: str
) -> None:
    store = stores()
    store.load()
    with store.lock(5):
        store.commit(make_commit(1))
    admin.execute(f"UPDATE {schema}.scopes SET checkpoint = '[1, 2]'")
    with pytest.raises(StoreCorrupt, match="not a graph document"):
        stores().load()


# --------------------------------------------------------------------------- checkpoints, vectors
def test_checkpoints_fold_the_journal_when_it_piles_up(
    postgres_dsn: str, scope: str, admin: psycopg.Connection[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres, "MIN_JOURNAL_BYTES", 2000)
    with Memory(scope=scope, provider="mock", store=postgres_dsn) as memory:
        for i in range(20):
            memory.remember(f"Person{i} works at Company{i}.")
    journal = admin.execute(
        "SELECT count(*) FROM memgraph.commits WHERE scope = %s", [scope]
    ).fetchone()
    folded = admin.execute(
        "SELECT checkpoint_seq, last_seq FROM memgraph.scopes WHERE scope = %s", [scope]
    ).fetchone()
    assert folded is not None and journal is not None
    assert 0 < folded[0] <= folded[1] == 20
    assert journal[0] == folded[1] - folded[0] < 20


def test_a_cold_load_takes_the_vectors_from_the_database_without_re_embedding(
    postgres_dsn: str, scope: str
) -> None:
    with Memory(scope=scope, provider="mock", store=postgres_dsn) as memory:
        for i in range(5):
            memory.remember(f"Person{i} works at Company{i}.")
        memory.checkpoint()
        memory.remember("Person9 works at Company9.")  # one more, in the journal
    provider, embedded = counting_provider()
    with Memory(scope=scope, provider=provider, store=postgres_dsn) as fresh:
        assert fresh.stats()["vectors"] == 12  # six facts and the six texts they came from
        assert embedded == []
        hits = fresh.search("Person3 job", k=3)
        assert hits and hits[0].entity.name == "Person3"


def test_the_approximate_vector_index_is_kept_with_a_checkpoint_and_dropped_by_a_rewrite(
    stores: Stores,
) -> None:
    store = stores()
    store.load()
    seqs = range(1, 61)
    with store.lock(5):
        for seq in seqs:
            store.commit(make_commit(seq))
    graph, index = state_after(*seqs)
    index.coarse = CoarseIndex.train(index.rows(0, len(index)))
    with store.lock(5):
        assert store.checkpoint(graph, index, [], force=True)
    loaded = stores().load().vectors
    assert loaded is not None and loaded.coarse is not None
    assert loaded.coarse.centroids.tobytes() == index.coarse.centroids.tobytes()
    assert loaded.coarse.labels.tolist() == index.coarse.labels.tolist()
    graph.seq += 1
    with store.lock(5):
        store.rewrite(graph.to_document(), VectorIndex("m"), [])
    after = stores().load().vectors
    assert after is None or after.coarse is None


def test_vector_ids_are_stored_packed_and_blobs_of_the_previous_form_still_read() -> None:
    column = IdColumn(["obs-", "episode-"], [3, 1, 6], [0, 1, 0])
    packed = postgres.pack_ids(column)
    assert packed.startswith(b"{")
    assert postgres.unpack_ids(packed, 3) == ["obs-3", "episode-1", "obs-6"]
    listed = postgres.pack_ids(["Alice", "obs-1"])
    assert postgres.unpack_ids(listed, 2) == ["Alice", "obs-1"]
    previous = zlib.compress(b"obs-3\x00episode-1", 1)
    assert postgres.unpack_ids(previous, 2) == ["obs-3", "episode-1"]


def test_a_checkpoint_keeps_the_vector_ids_packed_and_the_next_one_appends_after_them(
    stores: Stores, admin: psycopg.Connection[Any], schema: str
) -> None:
    store, graph, index = committed(stores, 1, 2, 3)
    with store.lock(5):
        assert store.checkpoint(graph, index, [], force=True)
    row = admin.execute(f"SELECT vector_ids FROM {schema}.images").fetchone()
    assert row is not None and bytes(row[0]).startswith(b"{")
    reader = stores()
    loaded = reader.load().vectors
    assert loaded is not None and isinstance(loaded.ids, IdColumn)
    assert list(loaded.ids) == index.ids() == ["obs-4", "obs-7", "obs-10"]
    grown = VectorIndex("m", None, loaded.all_rows(), loaded.ids)
    commit = make_commit(4)
    assert commit.vectors is not None
    grown.add(commit.vectors.ids, commit.vectors.matrix)
    graph.apply(commit.ops)
    graph.next_id, graph.seq = commit.next_id, 4
    with reader.lock(5):
        reader.commit(commit)
        assert reader.checkpoint(graph, grown, [], force=True)
    stored = admin.execute(
        f"SELECT row_index, obs_id FROM {schema}.vectors ORDER BY row_index"
    ).fetchall()
    assert stored == [(0, "obs-4"), (1, "obs-7"), (2, "obs-10"), (3, "obs-13")]
    generations = admin.execute(f"SELECT vector_generation FROM {schema}.scopes").fetchall()
    assert generations == [(1,)], "the rows were appended, not replaced"


def test_vector_ids_stored_in_the_previous_form_load(
    stores: Stores, admin: psycopg.Connection[Any], schema: str
) -> None:
    store, graph, index = committed(stores, 1, 2)
    with store.lock(5):
        assert store.checkpoint(graph, index, [], force=True)
    previous = zlib.compress(b"obs-4\x00obs-7", 1)
    admin.execute(f"UPDATE {schema}.images SET vector_ids = %s", [previous])
    loaded = stores().load().vectors
    assert loaded is not None and list(loaded.ids) == ["obs-4", "obs-7"]


# --------------------------------------------------------------------------- Memory end to end
def test_memory_selects_postgres_from_store_config_or_environment(
    postgres_dsn: str, scope: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memory(scope=scope, provider="mock", store=postgres_dsn) as memory:
        assert isinstance(memory.store, PostgresStore)
        memory.remember("Alice works at Acme.")
    with Memory(scope=scope, provider="mock", config={"store": postgres_dsn}) as memory:
        assert isinstance(memory.store, PostgresStore)
        assert "Acme" in memory.recall("where does alice work?", rerank=False)
    monkeypatch.setenv("MEMGRAPH_STORE", postgres_dsn.replace("postgresql://", "postgres://"))
    with Memory(scope=scope, provider="mock") as memory:
        assert isinstance(memory.store, PostgresStore)
        assert "Acme" in memory.recall("where does alice work?", rerank=False)


def test_two_app_servers_see_each_others_writes_on_their_next_recall(
    postgres_dsn: str, scope: str
) -> None:
    with (
        Memory(scope=scope, provider="mock", store=postgres_dsn) as first,
        Memory(scope=scope, provider="mock", store=postgres_dsn) as second,
    ):
        for i in range(12):
            writer, reader = (first, second) if i % 2 else (second, first)
            writer.remember(f"Person{i} works at Company{i}.")
            assert f"Company{i}" in reader.recall(f"where does Person{i} work?", rerank=False)
            if i % 5 == 4:
                writer.checkpoint()
        writer.forget("Person3 works at Company3")
        assert "Company3" not in reader.recall("where does Person3 work?", rerank=False)
        assert reader.history("Person3").observations[0].valid_to is not None


def test_purge_erases_the_text_from_every_table(
    postgres_dsn: str, scope: str, admin: psycopg.Connection[Any]
) -> None:
    with Memory(scope=scope, provider="mock", store=postgres_dsn) as memory:
        memory.remember("Mallory works at Evilcorp.")
        memory.remember("Alice works at Acme.")
        memory.checkpoint()
        memory.remember("Mallory lives in Gotham.")
        memory.save_summary({"summary": "Mallory and Alice talked."})
        counts = memory.purge("mallory")
        assert counts["entities"] >= 1
        assert "Alice" in {e.name for e in memory.entities()}
    for table, column in [
        ("scopes", "checkpoint"),
        ("images", "convert_from(document, 'UTF8')"),
        ("commits", "ops"),
        ("episodes", "record"),
        ("vectors", "obs_id"),
        ("summaries", "summary"),
    ]:
        row = admin.execute(
            f"SELECT count(*) FROM memgraph.{table} WHERE scope = %s "
            f"AND lower({column}::text) LIKE '%%mallory%%'",
            [scope],
        ).fetchone()
        assert row == (0,), table
    images = admin.execute(
        "SELECT i.generation = s.image_generation FROM memgraph.images i "
        "JOIN memgraph.scopes s USING (scope) WHERE scope = %s",
        [scope],
    ).fetchall()
    assert images == [(True,)], "the images before the purge are gone"


def test_the_summary_and_the_graph_round_trip_through_postgres(
    postgres_dsn: str, scope: str
) -> None:
    with Memory(scope=scope, provider="mock", store=postgres_dsn) as memory:
        memory.save_summary({"summary": "talked about tea", "messagesSummarized": 4})
        memory.remember("Alice likes green tea.")
    with Memory(scope=scope, provider="mock", store=postgres_dsn) as fresh:
        assert fresh.summary() == {"summary": "talked about tea", "messagesSummarized": 4}
        assert "green tea" in fresh.recall("what does alice like?", rerank=False)
