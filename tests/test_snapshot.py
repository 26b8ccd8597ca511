"""Checkpoint images: a lazily opened graph behaves exactly like one parsed in full."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memgraph import Memory
from memgraph.graph.graph import Graph, SavedDocumentError
from memgraph.graph.lazy import LazyDocs
from memgraph.graph.snapshot import encode, read_index
from memgraph.store.directory import DirectoryStore
from memgraph.text import index_terms, terms

Doc = dict[str, Any]
T1 = "2026-01-01T00:00:00.000Z"
T2 = "2026-03-01T00:00:00.000Z"
WORDS = ["tea", "green", "Oslo", "rust", "pricing", "mentor", "café", "data", "engineer"]
NAMES = ["Alice", "Bob Stone", "Acme", "Mira Tovan", "Zoë", "Room 101", "Alice"]


def alice() -> Graph:
    graph = Graph()
    entity = {"id": "entity-1", "name": "Alice", "type": "person", "source": "main"}
    graph.apply([{"op": "entity", "entity": {**entity, "createdAt": T1}}])
    return graph


def reopen(graph: Graph) -> Graph:
    """``graph`` written as a checkpoint image and opened lazily from it."""
    image = encode(graph)
    data = image.graph_json
    saved = read_index(image.index_bytes((len(data), 7)), data, (len(data), 7))
    written = Graph.from_document(orjson.loads(data)).to_document()
    assert orjson.loads(orjson.dumps(written)) == orjson.loads(orjson.dumps(graph.to_document()))
    return Graph.from_saved(saved)


def view(graph: Graph) -> dict[str, Any]:
    """Everything a reader can ask the graph, in comparable form."""
    document = orjson.loads(orjson.dumps(graph.to_document()))
    entity_ids = [e["id"] for e in document["entities"]]
    names = {e["name"] for e in document["entities"]}
    all_terms = {
        t
        for e in document["entities"]
        for o in e["observations"]
        for t in index_terms(o["content"])
    }
    name_terms = {t for n in names for t in terms(n)}
    return {
        "document": document,
        "current": sorted(graph.current_observation_ids()),
        # every fact number, current or not (a lazy graph reads its saved flags at once)
        "facts_current": graph.facts_current(list(range(1, graph.next_id + 3))),
        "count": (graph.observation_count, len(graph.entities), len(graph.relations)),
        "by_name": {n: (graph.entity_by_name(n) or {}).get("id") for n in names},
        "relations_of": {e: [r["id"] for r in graph.relations_of(e)] for e in entity_ids},
        "current_relation": {
            r["id"]: (graph.current_relation(r["from"], r["type"], r["to"]) or {}).get("id")
            for r in document["relations"]
        },
        "types": {t: sorted(graph.entities_of_type(t)) for t in ("person", "company", "thing")},
        "terms": {t: sorted(graph.term_index().get(t, set())) for t in sorted(all_terms)},
        "name_terms": {
            t: sorted(graph.name_term_index().get(t, set())) for t in sorted(name_terms)
        },
        "noted": list(graph.noted),
        "observations": {
            o["id"]: (graph.observation(o["id"]) or ({}, {}))[1].get("content")
            for e in document["entities"]
            for o in e["observations"]
        },
        "owners": {
            o["id"]: graph.owner_of(o["id"])
            for e in document["entities"]
            for o in e["observations"]
        },
        "names": {e: graph.entity_name(e) for e in [*entity_ids, "entity-0"]},
    }


@st.composite
def op_batches(draw: st.DrawFn) -> list[list[Doc]]:
    """Three batches of valid ops over a growing graph (ids from one counter)."""
    counter = [0]
    entities: list[str] = []
    observations: list[str] = []
    relations: list[str] = []

    def take(prefix: str) -> str:
        counter[0] += 1
        return f"{prefix}-{counter[0]}"

    batches = []
    for _ in range(3):
        ops: list[Doc] = []
        for _ in range(draw(st.integers(0, 14))):
            kind = draw(
                st.sampled_from(["entity", "obs", "obs", "rel", "expire_obs", "expire_rel"])
            )
            if kind == "entity" or not entities:
                entity_id = take("entity")
                entities.append(entity_id)
                ops.append(
                    {
                        "op": "entity",
                        "entity": {
                            "id": entity_id,
                            "name": draw(st.sampled_from(NAMES)),
                            "type": draw(st.sampled_from(["person", "company", None])),
                            "source": "main",
                            "createdAt": T1,
                        },
                    }
                )
            elif kind == "obs":
                obs_id = take("obs")
                observations.append(obs_id)
                content = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)))
                obs: Doc = {"id": obs_id, "content": content, "validFrom": T1, "validTo": None}
                if draw(st.booleans()):
                    obs["tags"] = ["x"]
                ops.append({"op": "obs", "entity": draw(st.sampled_from(entities)), "obs": obs})
            elif kind == "rel":
                rel_id = take("rel")
                relations.append(rel_id)
                ops.append(
                    {
                        "op": "rel",
                        "rel": {
                            "id": rel_id,
                            "from": draw(st.sampled_from(entities)),
                            "to": draw(st.sampled_from(entities)),
                            "type": draw(st.sampled_from(["knows", "works_at"])),
                            "validFrom": T1,
                            "validTo": None,
                        },
                    }
                )
            elif kind == "expire_obs" and observations:
                ops.append(
                    {"op": "expire_obs", "id": draw(st.sampled_from(observations)), "validTo": T2}
                )
            elif kind == "expire_rel" and relations:
                ops.append(
                    {"op": "expire_rel", "id": draw(st.sampled_from(relations)), "validTo": T2}
                )
        batches.append(ops)
    return batches


def _apply(graph: Graph, ops: list[Doc]) -> None:
    for op in ops:
        if op["op"] == "expire_obs":
            pair = graph.observation(op["id"])
            if pair is None or pair[1].get("validTo") is not None:
                continue
        if op["op"] == "expire_rel" and graph.relations[op["id"]].get("validTo") is not None:
            continue
        graph.apply([op])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_batches(), st.integers(0, 3))
def test_a_lazy_graph_answers_like_a_parsed_one_before_and_after_changes(
    batches: list[list[Doc]], reads: int
) -> None:
    eager = Graph()
    _apply(eager, batches[0])
    eager.seq, eager.next_id = 3, 1000
    lazy = reopen(eager)
    assert view(lazy) == view(eager)

    # Touch a few saved records first, so later ops hit decoded and untouched ones.
    fresh = reopen(eager)
    for entity_id in list(fresh.entities)[:reads]:
        fresh.entities[entity_id]
    _apply(eager, batches[1])
    if reads > 1:
        fresh.term_index()  # new facts are then indexed (and their terms kept) as applied
    if reads % 2:
        fresh.defer_indexing()  # as a journal replay does
    _apply(fresh, batches[1])
    assert view(fresh) == view(eager)

    again = reopen(fresh)  # the encoder mixes copied bytes and re-serialized records
    assert view(again) == view(eager)

    # Re-based on its own checkpoint, the graph keeps answering and writing alike.
    image = encode(fresh)
    # The terms the graph found when indexing new facts give the same postings.
    kept = dict(fresh.fresh_terms)
    fresh.fresh_terms.clear()
    assert _by_term(encode(fresh).tables.terms) == _by_term(image.tables.terms)
    fresh.fresh_terms.update(kept)
    fresh.rebase(image.saved(image.graph_json, "graph.json"))
    assert not fresh.changed_entities and not fresh.changed_relations
    assert view(fresh) == view(eager)
    _apply(eager, batches[2])
    _apply(fresh, batches[2])
    assert view(fresh) == view(eager)
    assert view(reopen(fresh)) == view(eager)


def _by_term(postings: Any) -> dict[str, list[int]]:
    offsets = postings.offsets
    return {
        term: sorted(postings.ordinals[offsets[row] : offsets[row + 1]].tolist())
        for row, term in enumerate(postings.terms)
    }


def test_a_lazy_graph_parses_only_what_is_read() -> None:
    graph = Graph()
    ops: list[Doc] = []
    for n in range(1, 200, 2):
        ops.append(
            {
                "op": "entity",
                "entity": {
                    "id": f"entity-{n}",
                    "name": f"Person {n}",
                    "type": "person",
                    "source": "main",
                    "createdAt": T1,
                },
            }
        )
        ops.append(
            {
                "op": "obs",
                "entity": f"entity-{n}",
                "obs": {
                    "id": f"obs-{n + 1}",
                    "content": f"likes topic{n}",
                    "validFrom": T1,
                    "validTo": None,
                },
            }
        )
    graph.apply(ops)
    lazy = reopen(graph)
    assert isinstance(lazy.entities, LazyDocs)
    assert lazy.observation(f"obs-{52}") is not None
    assert lazy.term_index().get("topic51") == {"obs-52"}
    assert len(lazy.entities) == 100 and lazy.observation_count == 100
    decoded = [key for key, _ in lazy.entities.decoded_items()]
    assert decoded == ["entity-51"]


def test_a_damaged_record_raises_store_corrupt_naming_the_bytes() -> None:
    graph = alice()
    image = encode(graph)
    data = image.graph_json.replace(b'"name":"Alice"', b'"name"!"Alice"')
    saved = read_index(image.index_bytes((len(data), 1)), data, (len(data), 1))
    lazy = Graph.from_saved(saved)
    with pytest.raises(SavedDocumentError, match="bytes"):
        lazy.entities["entity-1"]


def _memory(root: Path) -> Memory:
    return Memory(root, scope="s", provider="mock")


def test_a_scope_reopens_lazily_after_a_checkpoint_and_eagerly_when_the_index_is_stale(
    tmp_path: Path,
) -> None:
    with _memory(tmp_path) as memory:
        memory.remember("Alice works at Acme. Alice likes green tea.")
        memory.remember("Bob lives in Oslo.")
        memory.checkpoint()
        expected = memory.recall("What does Alice like?", rerank=False)
    store = DirectoryStore(tmp_path, "s")
    assert store.load().saved is not None
    with _memory(tmp_path) as memory:
        assert memory.recall("What does Alice like?", rerank=False) == expected
        assert memory._graph is not None and memory._graph.saved is not None
        memory.remember("Alice moved to Oslo.")
    with _memory(tmp_path) as memory:
        assert "Oslo" in memory.recall("Where does Alice live?", rerank=False)
        expected = memory.recall("What does Alice like?", rerank=False)

    graph_path = tmp_path / "s" / "graph.json"
    stat = graph_path.stat()
    os.utime(graph_path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    store = DirectoryStore(tmp_path, "s")
    snapshot = store.load()
    assert snapshot.saved is None and snapshot.document is not None
    with _memory(tmp_path) as memory:
        assert memory.recall("What does Alice like?", rerank=False) == expected


def test_an_unreadable_index_is_ignored_and_rewritten(tmp_path: Path) -> None:
    with _memory(tmp_path) as memory:
        memory.remember("Alice works at Acme.")
        memory.checkpoint()
    index = tmp_path / "s" / "graph.idx"
    index.write_bytes(b"MGIDX01\n" + b"\xff" * 40)
    with _memory(tmp_path) as memory:
        assert "Acme" in memory.recall("Where does Alice work?", rerank=False)
        memory.remember("Alice likes tea.")
        memory.checkpoint()
    assert DirectoryStore(tmp_path, "s").load().saved is not None


def test_a_purge_leaves_no_trace_in_the_index(tmp_path: Path) -> None:
    with _memory(tmp_path) as memory:
        memory.remember("Zebulon Quark works at Acme.")
        memory.remember("Alice works at Initech.")
        memory.checkpoint()
    with _memory(tmp_path) as memory:
        memory.purge(entity="Zebulon Quark")
        memory.recall("Who works at Initech?", rerank=False)
    snapshot = DirectoryStore(tmp_path, "s").load()
    assert snapshot.saved is not None
    assert not any("zebulon" in key for key in snapshot.saved.name_keys)
    assert not any("zebulon" in term for term in snapshot.saved.name_terms.terms)


def test_doctor_notes_a_stale_index_without_calling_the_scope_damaged(tmp_path: Path) -> None:
    from memgraph.admin.doctor import check_scope

    with _memory(tmp_path) as memory:
        memory.remember("Alice works at Acme.")
        memory.checkpoint()
    assert not any("graph.idx" in note for note in check_scope(tmp_path, "s").notes)
    graph_path = tmp_path / "s" / "graph.json"
    stat = graph_path.stat()
    os.utime(graph_path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    report = check_scope(tmp_path, "s")
    assert report.ok
    assert any("graph.idx does not describe graph.json" in note for note in report.notes)


def test_a_dropped_lazy_graph_is_freed_without_the_cyclic_collector() -> None:
    import gc
    import weakref

    graph = alice()
    lazy = reopen(graph)
    lazy.entities["entity-1"]
    ref = weakref.ref(lazy)
    gc.disable()
    try:
        del lazy
        assert ref() is None  # no reference cycle keeps it (gc.freeze() would pin one)
    finally:
        gc.enable()


def test_checkpoints_of_a_long_lived_graph_copy_what_did_not_change(tmp_path: Path) -> None:
    with _memory(tmp_path) as memory:
        for n in range(30):
            memory.remember(f"Person{n} Smith works at Company{n}.")
        memory.checkpoint()
    with _memory(tmp_path) as memory:
        memory.remember("Person3 Smith likes green tea.")
        memory.checkpoint()
        graph = memory._graph
        assert graph is not None and graph.saved is not None
        assert not graph.changed_entities  # re-based on the checkpoint it wrote
        decoded = {key for key, _ in graph.entities.decoded_items()}  # type: ignore[attr-defined]
        memory.remember("Person5 Smith lives in Oslo.")
        memory.checkpoint()
    reopened = DirectoryStore(tmp_path, "s").load()
    document = reopened.document
    assert document is not None
    names = {e["name"] for e in document["entities"]}
    assert {"Person3 Smith", "Person5 Smith", "Company29"} <= names
    assert len(decoded) < 31
    with _memory(tmp_path) as memory:
        assert "green tea" in memory.recall("What does Person3 Smith like?", rerank=False)
        assert "Oslo" in memory.recall("Where does Person5 Smith live?", rerank=False)


def test_recorded_at_is_left_out_when_it_equals_valid_from_and_restored_on_reading() -> None:
    graph = alice()
    facts = [
        {"id": "obs-2", "content": "a", "validFrom": T1, "validTo": None, "recordedAt": T1},
        {"id": "obs-3", "content": "b", "validFrom": T1, "validTo": None, "recordedAt": T2},
        {"id": "obs-4", "content": "c", "validFrom": T1, "validTo": None},  # Agency's shape
    ]
    graph.apply([{"op": "obs", "entity": "entity-1", "obs": fact} for fact in facts])
    image = encode(graph)
    written = orjson.loads(image.graph_json)
    [entity] = written["entities"]
    assert [("recordedAt" in o, o.get("recordedAt")) for o in entity["observations"]] == [
        (False, None),
        (True, T2),
        (True, None),
    ]
    expected = [list(f.items()) for f in facts]
    for again in (Graph.from_document(written), reopen(graph)):
        observations = again.entities["entity-1"]["observations"]
        assert [list(o.items()) for o in observations] == expected  # same keys, same order


def test_threads_reading_a_lazy_graph_share_one_object_per_record() -> None:
    import threading

    graph = Graph()
    ops: list[Doc] = []
    for n in range(1, 400, 2):
        entity = {"id": f"entity-{n}", "name": f"P{n}", "type": "person", "source": "main"}
        ops.append({"op": "entity", "entity": {**entity, "createdAt": T1}})
        obs = {"id": f"obs-{n + 1}", "content": f"likes x{n % 7}", "validFrom": T1, "validTo": None}
        ops.append({"op": "obs", "entity": f"entity-{n}", "obs": obs})
    graph.apply(ops)
    lazy = reopen(graph)
    start = threading.Barrier(8)

    def read(offset: int) -> None:
        start.wait()
        for n in range(1, 400, 2):
            index = (n + offset * 50) % 400 | 1
            lazy.observation(f"obs-{index + 1}")
            lazy.term_index().get(f"x{index % 7}")

    threads = [threading.Thread(target=read, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for n in range(1, 400, 2):
        pair = lazy.observation(f"obs-{n + 1}")
        assert pair is not None and pair[0] is lazy.entities[f"entity-{n}"]
    assert lazy.term_index().get("x3") == {f"obs-{n + 1}" for n in range(1, 400, 2) if n % 7 == 3}


def test_a_stale_next_id_of_an_imported_file_is_fixed_before_the_first_image(
    tmp_path: Path,
) -> None:
    scope = tmp_path / "s"
    scope.mkdir(mode=0o700)
    document = {
        "entities": [
            {
                "id": "entity-40",
                "name": "Alice",
                "type": "person",
                "source": "main",
                "createdAt": T1,
                "observations": [
                    {"id": "obs-41", "content": "likes tea", "validFrom": T1, "validTo": None}
                ],
            }
        ],
        "relations": [],
        "nextId": 3,  # stale: ids up to 41 are in use
    }
    (scope / "graph.json").write_bytes(orjson.dumps(document))
    with _memory(tmp_path) as memory:
        memory.checkpoint()  # no write yet: the image must still carry a safe nextId
    assert DirectoryStore(tmp_path, "s").load().saved is not None
    with _memory(tmp_path) as memory:
        memory.remember("Bob works at Acme.")
        ids = [e.id for e in memory.entities()]
    assert len(ids) == len(set(ids)) and "entity-40" in ids
    assert all(int(i.rpartition("-")[2]) >= 40 for i in ids)


def _strings_by_regex(values: list[str]) -> tuple[str, bytes]:
    """The id test of ``_strings`` as a regex over the joined values (the reference)."""
    import re
    import zlib

    from memgraph.graph.snapshot import _NUMBER, _deltas

    joined = "\x00".join(values)
    if values:
        prefix = values[0].rstrip("0123456789")
        item = re.escape(prefix) + _NUMBER
        if prefix != values[0] and re.fullmatch(f"{item}(?:\x00{item})*", joined):
            digits = joined.replace(prefix, "") if prefix else joined
            return f"ids:{prefix}", _deltas(np.array(digits.split("\x00"), dtype=np.int64))
    return "str", zlib.compress(joined.encode(), 1)


_ID_PIECES = ["obs-", "rel-", "", "e-", "0", "00", "7", "123", "9" * 18, "1" + "0" * 18, "-", "é"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(0, 10**19).map(lambda n: f"obs-{n}"),
            st.lists(st.sampled_from(_ID_PIECES), min_size=1, max_size=3).map("".join),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_ids_are_told_from_strings_as_the_regex_tells_them(values: list[str]) -> None:
    from memgraph.graph.snapshot import _strings

    assert _strings(values) == _strings_by_regex(values)
