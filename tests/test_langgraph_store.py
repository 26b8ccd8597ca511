"""MemgraphStore: a LangGraph BaseStore that behaves like LangGraph's own stores,
keeps its items durably, remembers their text, and serves a graph and LangMem."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict

import pytest

pytest.importorskip("langgraph", reason="needs the optional 'langgraph' extra")

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore
from memgraph.providers.mock import HashEmbedder, MockChatModel, ScriptedChatModel

from memgraph import Memory, Provider
from memgraph.integrations.langgraph import MemgraphStore
from memgraph.scope import validate_scope
from tests.postgres_server import new_scope

ALICE = ("users", "alice", "memories")
BOB = ("users", "bob", "memories")
NOTES = ("users", "alice", "notes")


def open_store(path: Path, **options: Any) -> MemgraphStore:
    return MemgraphStore(path, provider="mock", **options)


def shape(item: Item | None) -> Any:
    """What two stores must agree on about an item (not its timestamps or score)."""
    if item is None:
        return None
    return (item.namespace, item.key, item.value)


def fill(store: BaseStore) -> None:
    store.put(ALICE, "job", {"text": "Alice works at Acme.", "kind": "fact", "rank": 3})
    store.put(ALICE, "drink", {"text": "Alice drinks green tea.", "kind": "taste", "rank": 1})
    store.put(ALICE, "city", {"text": "Alice lives in Lisbon.", "kind": "fact", "rank": 2})
    store.put(BOB, "job", {"text": "Bob works at Globex.", "kind": "fact", "rank": 5})
    store.put(NOTES, "todo", {"text": "Call the bank.", "kind": "todo", "nested": {"due": 2}})
    store.put(ALICE, "city", {"text": "Alice lives in Porto.", "kind": "fact", "rank": 2})
    store.put(ALICE, "drink", {"text": "Alice drinks coffee.", "kind": "taste", "rank": 1})
    store.delete(ALICE, "drink")
    store.put(ALICE, "drink", {"text": "Alice drinks coffee.", "kind": "taste", "rank": 4})
    store.put(("users", "dave"), "x", {"text": "Dave left."})
    store.delete(("users", "dave"), "x")  # an emptied namespace stays listed


READS: list[tuple[str, Callable[[BaseStore], Any]]] = [
    ("get", lambda s: shape(s.get(ALICE, "city"))),
    ("get missing", lambda s: shape(s.get(ALICE, "nothing"))),
    ("get deleted then put again", lambda s: shape(s.get(ALICE, "drink"))),
    ("search one namespace", lambda s: [shape(i) for i in s.search(ALICE)]),
    ("search limit offset", lambda s: [shape(i) for i in s.search(ALICE, limit=1, offset=1)]),
    ("search filter", lambda s: [shape(i) for i in s.search(ALICE, filter={"kind": "fact"})]),
    ("search $gt", lambda s: [shape(i) for i in s.search(ALICE, filter={"rank": {"$gt": 1}})]),
    ("search $ne $lte", lambda s: [shape(i) for i in s.search(ALICE, filter={"rank": {"$ne": 2, "$lte": 3}})]),
    ("search nested", lambda s: [shape(i) for i in s.search(("users",), filter={"nested": {"due": 2}})]),
    ("search prefix", lambda s: sorted(shape(i) for i in s.search(("users",), limit=20))),
    ("search nothing", lambda s: s.search(("nobody",))),
    ("list", lambda s: s.list_namespaces()),
    ("list prefix", lambda s: s.list_namespaces(prefix=("users", "alice"))),
    ("list suffix", lambda s: s.list_namespaces(suffix=("memories",))),
    ("list wildcard", lambda s: s.list_namespaces(prefix=("users", "*", "notes"))),
    ("list depth", lambda s: s.list_namespaces(max_depth=2)),
    ("list page", lambda s: s.list_namespaces(limit=1, offset=1)),
]  # fmt: skip


def test_memgraph_store_answers_like_langgraphs_in_memory_store(tmp_path: Path) -> None:
    theirs = InMemoryStore()
    fill(theirs)
    with open_store(tmp_path) as ours:
        fill(ours)
        for name, read in READS:
            assert read(ours) == read(theirs), name
        # With a query, theirs (no embeddings configured) lists everything unranked;
        # ours ranks what memgraph's search finds first and lists the rest after it.
        found = ours.search(ALICE, query="where does alice work?")
        everything = theirs.search(ALICE, query="where does alice work?")
        assert sorted(map(shape, found)) == sorted(map(shape, everything))
        assert found[0].key == "job" and found[0].score is not None and found[0].score > 0
        assert [i.score for i in found[1:]] == [None, None]
        # A batch reads the store as it was before the batch's writes.
        batch = [
            PutOp(ALICE, "pet", {"text": "Alice has a cat."}),
            GetOp(ALICE, "pet"),
            SearchOp(ALICE, {"text": "Alice has a cat."}),
            ListNamespacesOp((MatchCondition("prefix", ("users", "carol")),)),
            PutOp(("users", "carol"), "x", {"text": "Carol sings."}),
            PutOp(("users", "carol"), "x", {"text": "Carol dances."}),
        ]
        assert ours.batch(batch) == theirs.batch(batch) == [None, None, [], [], None, None]
        assert shape(ours.get(("users", "carol"), "x")) == shape(
            theirs.get(("users", "carol"), "x")
        )
        assert shape(ours.get(ALICE, "pet")) == shape(theirs.get(ALICE, "pet"))


def test_timestamps_say_when_an_item_was_created_and_last_updated(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        store.put(ALICE, "city", {"text": "Alice lives in Lisbon."})
        first = store.get(ALICE, "city")
        store.put(ALICE, "city", {"text": "Alice lives in Porto."})
        second = store.get(ALICE, "city")
        assert first is not None and second is not None
        assert first.created_at == first.updated_at == second.created_at
        assert second.updated_at > first.updated_at
        assert second.created_at.tzinfo is not None
        store.delete(ALICE, "city")
        store.put(ALICE, "city", {"text": "Alice lives in Faro."})
        third = store.get(ALICE, "city")
        assert third is not None and third.created_at > second.updated_at  # created anew


def test_the_async_methods_agree_with_the_sync_ones(tmp_path: Path) -> None:
    async def run() -> list[Any]:
        with open_store(tmp_path / "async") as store:
            await store.aput(ALICE, "job", {"text": "Alice works at Acme."})
            await store.aput(ALICE, "drink", {"text": "Alice drinks tea."})
            await asyncio.gather(
                store.aput(BOB, "job", {"text": "Bob works at Globex."}),
                store.aput(BOB, "city", {"text": "Bob lives in Rome."}),
            )
            await store.adelete(ALICE, "drink")
            return [
                shape(await store.aget(ALICE, "job")),
                [shape(i) for i in await store.asearch(("users",), limit=10)],
                (await store.asearch(BOB, query="where does bob work?"))[0].key,
                await store.alist_namespaces(),
            ]

    got = asyncio.run(run())
    with open_store(tmp_path / "sync") as store:
        store.put(ALICE, "job", {"text": "Alice works at Acme."})
        store.put(BOB, "job", {"text": "Bob works at Globex."})
        store.put(BOB, "city", {"text": "Bob lives in Rome."})
        expected = [
            shape(store.get(ALICE, "job")),
            [shape(i) for i in store.search(("users",), limit=10)],
            store.search(BOB, query="where does bob work?")[0].key,
            store.list_namespaces(),
        ]
    assert got[0] == expected[0] and got[2] == expected[2] == "job"
    assert sorted(got[1]) == sorted(expected[1]) and got[3] == expected[3]


def test_items_and_their_facts_survive_reopening_the_store(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        fill(store)
        before = [(i.key, i.value, i.created_at, i.updated_at) for i in store.search(ALICE)]
        namespaces = store.list_namespaces()
    with open_store(tmp_path) as store:
        after = [(i.key, i.value, i.created_at, i.updated_at) for i in store.search(ALICE)]
        assert after == before and store.list_namespaces() == namespaces
        assert store.search(ALICE, query="where does alice work")[0].key == "job"
    with Memory(tmp_path, MemgraphStore(tmp_path).scope_of(ALICE), provider="mock") as memory:
        assert "Acme" in memory.recall("where does alice work?")


def test_an_items_text_becomes_facts_that_follow_the_item(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        store.put(ALICE, "job", {"text": "Alice works at Acme."})
        memory = store.memory(ALICE)
        assert "works at Acme" in memory.recall("where does alice work?")
        store.put(ALICE, "job", {"text": "Alice works at Initech."})
        recalled = memory.recall("where does alice work?")
        assert "Initech" in recalled and "Acme" not in recalled
        store.delete(ALICE, "job")
        assert "Initech" not in memory.recall("where does alice work?")
        history = [o.content for o in memory.history("Alice").observations]
        assert history == ["works at Acme", "works at Initech"]  # expired, not erased
        # index=False stores the item without remembering its text.
        store.put(ALICE, "secret", {"text": "Alice's PIN is 1234."}, index=False)
        assert memory.stats()["episodes"] == 2
        # index=[fields] remembers only those fields' text; extract=False only the episode.
    with open_store(tmp_path, extract=False, fields=["body"]) as store:
        store.put(BOB, "note", {"title": "ignored", "body": "Bob plays the cello."})
        memory = store.memory(BOB)
        assert [e.text for e in memory.iter_episodes()] == ["Bob plays the cello."]
        assert memory.entities() == []
        assert store.search(BOB, query="cello")[0].score is not None


def test_search_ranks_items_by_every_kind_of_hit_memgraph_finds(tmp_path: Path) -> None:
    # The model's facts leave out the employer the text names: the entity and the text
    # match "Zorblax", and both lead to the item.
    job = {
        "entities": [
            {"name": "Alice", "type": "person", "observations": ["starts a new job on Monday"]},
            {"name": "Zorblax", "type": "organization", "observations": []},
        ],
        "relations": [{"from": "Alice", "to": "Zorblax", "type": "works_at"}],
    }
    chat = ScriptedChatModel({"extract": [job]}, fallback=MockChatModel())
    with MemgraphStore(tmp_path, provider=Provider("p", chat, HashEmbedder())) as store:
        store.put(ALICE, "job", {"text": "My new job starts Monday, Zorblax!"})
        store.put(ALICE, "sister", {"text": "Maria: My sister Ana lives in Porto."})
        store.put(ALICE, "weather", {"text": "Hmm, nice weather today."})
        memory = store.memory(ALICE)
        hits = memory.search("Zorblax", k=5)
        assert {"entity", "episode"} <= {h.kind for h in hits}  # the relation came from the item
        for query, kind, key in [
            ("Zorblax", hits[0].kind, "job"),
            ("Porto", "fact", "sister"),
            ("Maria's sister", "episode", "sister"),  # the speaker's entity: Maria
            ("weather", "episode", "weather"),  # no entity: the speaker is no one known
        ]:
            best = memory.search(query, k=5)[0]
            assert best.kind == kind, (query, best)
            found = store.search(ALICE, query=query)
            assert found[0].key == key and found[0].score == best.score, (query, found)
        (nobody,) = [h for h in memory.search("weather", k=5) if h.kind == "episode"]
        assert nobody.entity is None


def test_namespaces_are_separate_scopes(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        store.put(ALICE, "job", {"text": "I work at Acme."})
        store.put(BOB, "job", {"text": "I work at Globex."})
        assert "Acme" in store.memory(ALICE).recall("where do I work?")
        assert "Acme" not in store.memory(BOB).recall("where do I work?")
        assert [i.key for i in store.search(BOB, query="acme")] == ["job"]
        assert store.search(BOB, query="acme")[0].value["text"] == "I work at Globex."
        odd = ("users", "x@y z", "ü" * 80)
        scope = store.scope_of(odd)
        assert validate_scope(scope) == scope and len(scope) == 128
        assert store.scope_of(("a_b",)) != store.scope_of(("a", "b"))
        store.put(odd, "k", {"text": "Odd names work."})
        assert store.list_namespaces(prefix=("users", "x@y z")) == [odd]


def test_bad_namespaces_and_values_are_refused_before_anything_is_stored(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        with pytest.raises(InvalidNamespaceError):
            store.put(("users", "a.b"), "k", {"text": "x"})
        with pytest.raises(InvalidNamespaceError):
            store.batch([GetOp(("users", "a.b"), "k")])
        with pytest.raises(InvalidNamespaceError):
            store.put(("langgraph", "x"), "k", {"text": "x"})
        with pytest.raises(TypeError, match="not JSON-serializable"):
            store.put(ALICE, "k", {"when": object()})
        with pytest.raises(NotImplementedError):
            store.put(ALICE, "k", {"text": "x"}, ttl=5)
        with pytest.raises(ValueError, match="unknown filter operator"):
            store.put(ALICE, "k", {"rank": 1})
            store.search(ALICE, filter={"rank": {"$near": 1}})
        assert store.list_namespaces() == [ALICE]
        assert [i.key for i in store.search(ALICE)] == ["k"]


@pytest.mark.postgres
def test_the_store_keeps_its_namespaces_in_postgresql_too(postgres_dsn: str) -> None:
    psycopg = pytest.importorskip("psycopg", reason="needs the optional 'postgres' extra")
    prefix = new_scope("lg")
    try:
        with MemgraphStore(provider="mock", store=postgres_dsn, prefix=prefix) as store:
            fill(store)
        theirs = InMemoryStore()
        fill(theirs)
        with MemgraphStore(provider="mock", store=postgres_dsn, prefix=prefix) as store:
            for name, read in READS:
                assert read(store) == read(theirs), name
            assert store.search(ALICE, query="where does alice work?")[0].key == "job"
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as connection:
            for table in ("scopes", "summaries"):
                connection.execute(
                    f"DELETE FROM memgraph.{table} WHERE scope = %s OR scope LIKE %s",
                    [prefix, prefix + ".%"],
                )


class State(TypedDict):
    user: str
    message: str
    answer: str


def assistant(state: State, runtime: Runtime[Any]) -> dict[str, str]:
    """A node that reads memories about the user and writes what the user says."""
    store = runtime.store
    assert store is not None
    namespace = ("users", state["user"], "memories")
    found = store.search(namespace, query=state["message"], limit=1)
    if state["message"].endswith("?"):
        known = found[0].value["text"] if found and found[0].score else "nothing yet"
        return {"answer": f"I remember: {known}"}
    store.put(namespace, str(len(store.search(namespace, limit=100))), {"text": state["message"]})
    return {"answer": "Noted."}


async def async_assistant(state: State, runtime: Runtime[Any]) -> dict[str, str]:
    store = runtime.store
    assert store is not None
    namespace = ("users", state["user"], "memories")
    if state["message"].endswith("?"):
        found = await store.asearch(namespace, query=state["message"], limit=1)
        known = found[0].value["text"] if found and found[0].score else "nothing yet"
        return {"answer": f"I remember: {known}"}
    count = len(await store.asearch(namespace, limit=100))
    await store.aput(namespace, str(count), {"text": state["message"]})
    return {"answer": "Noted."}


def graph_of(node: Any, store: BaseStore) -> Any:
    builder = StateGraph(State)
    builder.add_node("assistant", node)
    builder.add_edge(START, "assistant")
    builder.add_edge("assistant", END)
    return builder.compile(store=store)


def test_a_langgraph_graph_reads_and_writes_memories_through_the_store(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        app = graph_of(assistant, store)
        said = app.invoke({"user": "alice", "message": "I work at Acme."})
        assert said["answer"] == "Noted."
        app.invoke({"user": "alice", "message": "I have a cat called Tom."})
        app.invoke({"user": "bob", "message": "I work at Globex."})
    with open_store(tmp_path) as store:  # a new process would see the same
        app = graph_of(assistant, store)
        asked = app.invoke({"user": "alice", "message": "Where do I work?"})
        assert asked["answer"] == "I remember: I work at Acme."
        asked = app.invoke({"user": "carol", "message": "Where do I work?"})
        assert asked["answer"] == "I remember: nothing yet"

    async def run() -> str:
        with open_store(tmp_path / "async") as store:
            app = graph_of(async_assistant, store)
            await app.ainvoke({"user": "alice", "message": "I work at Acme."})
            await app.ainvoke({"user": "alice", "message": "I play the cello."})
            asked = await app.ainvoke({"user": "alice", "message": "What do I play?"})
            return str(asked["answer"])

    assert asyncio.run(run()) == "I remember: I play the cello."


def test_langmems_memory_tools_work_on_the_store(tmp_path: Path) -> None:
    langmem = pytest.importorskip("langmem", reason="needs the optional 'langmem' package")
    with open_store(tmp_path) as store:
        manage = langmem.create_manage_memory_tool(namespace=ALICE, store=store)
        search = langmem.create_search_memory_tool(namespace=ALICE, store=store)
        created = manage.invoke({"content": "Alice works at Acme.", "action": "create"})
        manage.invoke({"content": "Alice has a cat called Tom.", "action": "create"})
        memory_id = created.split()[-1]
        found = json.loads(search.invoke({"query": "where does alice work?"}))
        assert found[0]["key"] == memory_id and found[0]["value"] == {
            "content": "Alice works at Acme."
        }
        manage.invoke({"content": "Alice works at Initech.", "action": "update", "id": memory_id})
        found = json.loads(search.invoke({"query": "where does alice work?"}))
        assert found[0]["value"]["content"] == "Alice works at Initech."
        assert "Acme" not in store.memory(ALICE).recall("where does alice work?")
        manage.invoke({"action": "delete", "id": memory_id})
        assert [m["value"]["content"] for m in json.loads(search.invoke({"query": "work"}))] == [
            "Alice has a cat called Tom."
        ]

        async def run() -> list[Any]:
            await manage.ainvoke({"content": "Alice plays the cello.", "action": "create"})
            return list(json.loads(await search.ainvoke({"query": "what does alice play?"})))

        assert asyncio.run(run())[0]["value"]["content"] == "Alice plays the cello."


def test_importing_memgraph_imports_no_framework_and_a_missing_one_names_its_extra() -> None:
    probe = (
        "import importlib, pkgutil, sys\n"
        "import memgraph\n"
        "frameworks = {'langgraph', 'langchain_core', 'langmem', 'agents'}\n"
        "assert not frameworks & set(sys.modules), sorted(frameworks & set(sys.modules))\n"
        "for name in frameworks:\n"
        "    sys.modules[name] = None  # as if not installed\n"
        "integrations = {'memgraph.integrations.langgraph', 'memgraph.integrations.openai_agents'}\n"
        "for module in pkgutil.walk_packages(memgraph.__path__, 'memgraph.'):\n"
        "    if module.name not in integrations:\n"
        "        importlib.import_module(module.name)  # every other module works without them\n"
        "for name in sorted(integrations):\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except ImportError as exc:\n"
        "        print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert "pip install 'memgraph-kg[langgraph]'" in done.stdout
    assert "pip install 'memgraph-kg[openai-agents]'" in done.stdout
