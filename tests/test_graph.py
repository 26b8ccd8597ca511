"""The in-memory graph: each op kind, its indexes, and the graph.json document shape."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from memgraph.graph.graph import EXTRA_OPS, Graph

Doc = dict[str, Any]

T1 = "2026-01-01T00:00:00.000Z"
T2 = "2026-02-01T00:00:00.000Z"


def entity_op(entity_id: str, name: str, type_: str = "person") -> Doc:
    return {
        "op": "entity",
        "entity": {"id": entity_id, "name": name, "type": type_, "source": None, "createdAt": T1},
    }


def obs_op(entity_id: str, obs_id: str, content: str) -> Doc:
    return {
        "op": "obs",
        "entity": entity_id,
        "obs": {"id": obs_id, "content": content, "validFrom": T1, "validTo": None},
    }


def rel_op(rel_id: str, source: str, target: str, type_: str = "works_at") -> Doc:
    return {
        "op": "rel",
        "rel": {
            "id": rel_id,
            "from": source,
            "to": target,
            "type": type_,
            "validFrom": T1,
            "validTo": None,
        },
    }


def alice_at_acme() -> Graph:
    graph = Graph()
    graph.apply(
        [
            entity_op("entity-1", "Alice"),
            obs_op("entity-1", "obs-2", "likes green tea"),
            entity_op("entity-3", "Acme", "company"),
            rel_op("rel-4", "entity-1", "entity-3"),
        ]
    )
    graph.next_id = 5
    return graph


# --------------------------------------------------------------------------- apply, op by op
def test_an_entity_op_adds_an_entity_found_by_normalized_name_and_type() -> None:
    graph = Graph()
    graph.apply([entity_op("entity-1", "Alice Smith")])
    entity = graph.entities["entity-1"]
    assert entity["observations"] == []
    assert graph.entity_by_name("  alice   SMITH ") is entity
    assert graph.entity_by_name("ＡＬＩＣＥ ＳＭＩＴＨ") is entity
    assert graph.entities_of_type("Person") == {"entity-1"}
    assert graph.entity_by_name("Bob") is None


def test_an_entity_op_does_not_share_the_op_record() -> None:
    op = entity_op("entity-1", "Alice")
    graph = Graph()
    graph.apply([op])
    graph.entities["entity-1"]["name"] = "changed"
    assert op["entity"]["name"] == "Alice"
    assert "observations" not in op["entity"]


def test_an_obs_op_attaches_a_current_observation() -> None:
    graph = alice_at_acme()
    entity, obs = graph.observation("obs-2") or ({}, {})
    assert entity["id"] == "entity-1"
    assert obs["content"] == "likes green tea"
    assert [o["id"] for _, o in graph.current_observations()] == ["obs-2"]
    assert graph.observation_count == 1


def test_an_obs_op_after_the_term_index_was_built_is_indexed() -> None:
    graph = alice_at_acme()
    assert graph.term_index()["tea"] == {"obs-2"}
    graph.apply([obs_op("entity-1", "obs-5", "drinks more tea daily")])
    assert graph.term_index()["tea"] == {"obs-2", "obs-5"}


def test_an_expire_obs_op_closes_the_fact_and_records_its_successor() -> None:
    graph = alice_at_acme()
    graph.term_index()
    graph.apply(
        [
            obs_op("entity-1", "obs-5", "likes black coffee"),
            {
                "op": "expire_obs",
                "id": "obs-2",
                "validTo": T2,
                "retiredAt": T2,
                "supersededBy": "obs-5",
            },
        ]
    )
    _, old = graph.observation("obs-2") or ({}, {})
    assert old["validTo"] == T2
    assert old["retiredAt"] == T2
    assert old["supersededBy"] == "obs-5"
    assert [o["id"] for _, o in graph.current_observations()] == ["obs-5"]
    assert "obs-2" not in graph.term_index().get("tea", set())
    assert graph.observation_count == 2


def test_an_expire_obs_op_without_successor_sets_no_superseded_by() -> None:
    graph = alice_at_acme()
    graph.apply([{"op": "expire_obs", "id": "obs-2", "validTo": T2, "retiredAt": T2}])
    _, old = graph.observation("obs-2") or ({}, {})
    assert old["validTo"] == T2
    assert "supersededBy" not in old


def test_a_rel_op_links_both_ends() -> None:
    graph = alice_at_acme()
    assert [r["id"] for r in graph.relations_of("entity-1")] == ["rel-4"]
    assert [r["id"] for r in graph.relations_of("entity-3")] == ["rel-4"]
    current = graph.current_relation("entity-1", "Works_At", "entity-3")
    assert current is not None and current["id"] == "rel-4"


def test_a_self_relation_is_listed_once() -> None:
    graph = alice_at_acme()
    graph.apply([rel_op("rel-5", "entity-1", "entity-1", "admires")])
    assert [r["id"] for r in graph.relations_of("entity-1")] == ["rel-4", "rel-5"]


def test_an_expire_rel_op_keeps_the_relation_in_history_only() -> None:
    graph = alice_at_acme()
    graph.apply([{"op": "expire_rel", "id": "rel-4", "validTo": T2, "retiredAt": T2}])
    assert graph.current_relation("entity-1", "works_at", "entity-3") is None
    [rel] = graph.relations_of("entity-1")
    assert rel["validTo"] == T2 and rel["retiredAt"] == T2


def test_an_episode_op_keeps_the_episode_until_checkpoint() -> None:
    graph = Graph()
    episode = {"id": "episode-1", "text": "Alice likes tea.", "at": T1, "recordedAt": T1}
    graph.apply([{"op": "episode", "episode": episode}])
    assert graph.episodes == {"episode-1": episode}
    assert graph.episodes["episode-1"] is not episode
    assert "episodes" not in graph.to_document()


def test_a_purge_op_erases_an_entity_with_its_observations_and_relations() -> None:
    graph = alice_at_acme()
    graph.term_index()
    graph.name_term_index()
    graph.apply([{"op": "purge", "ids": ["entity-1"]}])
    assert "entity-1" not in graph.entities
    assert graph.observation("obs-2") is None
    assert graph.relations == {}
    assert list(graph.relations_of("entity-3")) == []
    assert graph.entity_by_name("Alice") is None
    assert graph.entities_of_type("person") == set()
    assert "tea" not in graph.term_index()
    assert "alice" not in graph.name_term_index()
    assert graph.current_relation("entity-1", "works_at", "entity-3") is None


def test_a_purge_op_erases_single_observations_relations_and_episodes() -> None:
    graph = alice_at_acme()
    graph.apply(
        [
            obs_op("entity-1", "obs-5", "likes black coffee"),
            {"op": "episode", "episode": {"id": "episode-6", "text": "x", "at": T1}},
            {"op": "purge", "ids": ["obs-2", "rel-4", "episode-6", "no-such-id"]},
        ]
    )
    assert [o["id"] for o in graph.entities["entity-1"]["observations"]] == ["obs-5"]
    assert graph.observation("obs-2") is None
    assert graph.relations == {}
    assert list(graph.relations_of("entity-1")) == []
    assert graph.episodes == {}
    assert set(graph.entities) == {"entity-1", "entity-3"}


def test_purging_an_expired_relation_keeps_the_current_one_with_the_same_ends() -> None:
    graph = alice_at_acme()
    graph.apply(
        [
            {"op": "expire_rel", "id": "rel-4", "validTo": T2, "retiredAt": T2},
            rel_op("rel-5", "entity-1", "entity-3"),
            {"op": "purge", "ids": ["rel-4"]},
        ]
    )
    current = graph.current_relation("entity-1", "works_at", "entity-3")
    assert current is not None and current["id"] == "rel-5"


def test_expiring_an_old_relation_again_keeps_the_current_one_with_the_same_ends() -> None:
    graph = alice_at_acme()
    graph.apply(
        [
            {"op": "expire_rel", "id": "rel-4", "validTo": T2, "retiredAt": T2},
            rel_op("rel-5", "entity-1", "entity-3"),
            {"op": "expire_rel", "id": "rel-4", "validTo": T2, "retiredAt": T2},
        ]
    )
    current = graph.current_relation("entity-1", "works_at", "entity-3")
    assert current is not None and current["id"] == "rel-5"


def test_an_unknown_op_raises_value_error() -> None:
    with pytest.raises(ValueError, match="unknown op 'teleport'"):
        Graph().apply([{"op": "teleport"}])


def test_extra_op_kinds_go_to_their_registered_handler(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Doc] = []

    def handler(graph: Graph, op: Doc) -> None:
        graph.extra.setdefault("kv", {})[op["key"]] = op["value"]
        seen.append(op)

    monkeypatch.setitem(EXTRA_OPS, "kv_set", handler)
    graph = Graph()
    graph.apply([{"op": "kv_set", "key": "tz", "value": "UTC"}])
    assert len(seen) == 1
    assert graph.to_document()["memgraph"] == {"kv": {"tz": "UTC"}}


def test_a_new_entity_after_the_name_index_was_built_is_indexed() -> None:
    graph = alice_at_acme()
    assert graph.name_term_index()["alice"] == {"entity-1"}
    graph.apply([entity_op("entity-5", "Alice Cooper")])
    assert graph.name_term_index()["alice"] == {"entity-1", "entity-5"}
    assert graph.name_term_index()["cooper"] == {"entity-5"}


def test_take_id_allocates_from_one_shared_counter() -> None:
    graph = Graph()
    assert [graph.take_id("entity"), graph.take_id("obs"), graph.take_id("rel")] == [
        "entity-1",
        "obs-2",
        "rel-3",
    ]
    assert graph.next_id == 4


# --------------------------------------------------------------------------- documents
AGENCY_DOCUMENT: Doc = {
    "entities": [
        {
            "id": "entity-1",
            "name": "Alice",
            "type": "person",
            "observations": [
                {"id": "obs-2", "content": "likes green tea", "validFrom": T1, "validTo": None}
            ],
        },
        {"id": "entity-3", "name": "Acme Corp", "type": "company"},
    ],
    "relations": [
        {
            "id": "rel-4",
            "from": "Alice",
            "to": "Acme Corp",
            "type": "works_at",
            "validFrom": T1,
            "validTo": None,
        },
        {
            "id": "rel-7",
            "from": "entity-3",
            "to": "Alice",
            "type": "employs",
            "validFrom": T1,
            "validTo": None,
        },
    ],
    "nextId": 3,
}


def test_an_agency_document_linking_by_name_resolves_to_entity_ids() -> None:
    graph = Graph.from_document(copy.deepcopy(AGENCY_DOCUMENT))
    assert graph.relations["rel-4"]["from"] == "entity-1"
    assert graph.relations["rel-4"]["to"] == "entity-3"
    assert graph.relations["rel-7"]["from"] == "entity-3"
    assert graph.relations["rel-7"]["to"] == "entity-1"
    current = graph.current_relation("entity-1", "works_at", "entity-3")
    assert current is not None and current["id"] == "rel-4"
    assert {r["id"] for r in graph.relations_of("entity-1")} == {"rel-4", "rel-7"}
    assert graph.entities["entity-3"]["observations"] == []
    _, obs = graph.observation("obs-2") or ({}, {})
    assert obs["content"] == "likes green tea"


def test_an_agency_document_with_a_stale_next_id_never_reuses_an_id() -> None:
    graph = Graph.from_document(copy.deepcopy(AGENCY_DOCUMENT))
    graph.check_next_id()  # done once before the first write, not at load
    assert graph.next_id == 8
    assert graph.seq == 0
    assert graph.take_id("obs") == "obs-8"


def test_to_document_has_the_graph_json_shape() -> None:
    graph = alice_at_acme()
    graph.seq = 9
    document = graph.to_document()
    assert set(document) == {"entities", "relations", "nextId", "checkpointSeq"}
    assert document["nextId"] == 5
    assert document["checkpointSeq"] == 9
    [alice, acme] = document["entities"]
    assert alice == {
        "id": "entity-1",
        "name": "Alice",
        "type": "person",
        "source": None,
        "createdAt": T1,
        "observations": [
            {"id": "obs-2", "content": "likes green tea", "validFrom": T1, "validTo": None}
        ],
    }
    assert acme["observations"] == []
    assert document["relations"] == [rel_op("rel-4", "entity-1", "entity-3")["rel"]]


def test_to_document_carries_extra_state_under_memgraph() -> None:
    graph = Graph()
    graph.extra["rules"] = ["be brief"]
    assert graph.to_document()["memgraph"] == {"rules": ["be brief"]}
    again = Graph.from_document(orjson.loads(orjson.dumps(graph.to_document())))
    assert again.extra == {"rules": ["be brief"]}


def test_a_document_round_trips_through_json() -> None:
    graph = alice_at_acme()
    graph.apply(
        [
            {"op": "expire_rel", "id": "rel-4", "validTo": T2, "retiredAt": T2},
            obs_op("entity-3", "obs-5", "is based in Berlin"),
        ]
    )
    graph.next_id, graph.seq = 6, 3
    document = orjson.loads(orjson.dumps(graph.to_document()))
    again = Graph.from_document(copy.deepcopy(document))
    assert again.to_document() == document
    assert again.current_relation("entity-1", "works_at", "entity-3") is None
    assert again.next_id == 6 and again.seq == 3


def test_an_empty_document_is_an_empty_graph() -> None:
    graph = Graph.from_document({})
    assert graph.entities == {} and graph.relations == {}
    assert graph.next_id == 1 and graph.seq == 0


def test_bulk_term_indexing_matches_one_by_one_indexing() -> None:
    from memgraph.text import index_terms, index_terms_many

    texts = [
        "Alice's works at Acme",
        "snake_case words_here",
        "a-b c.d e/f",
        "x\x1fy z",
        "nul\x00inside it",
        "",
        "Tab\there",
        "é café Straße",
        "Ｆｕｌｌ width",
        "the cats are running",
        "we'd love it, I’ll be ill",
        "twenty-three, forty five, twenty",
        "her 33rd birthday, the 21st, 1st of May",
        "too busy with the business",
    ]
    assert index_terms_many(texts) == [index_terms(text) for text in texts]


def test_busy_is_no_business() -> None:
    from memgraph.text import index_terms

    # "What is Calvin's new business venture?" is not answered by "been so busy"
    assert index_terms("busy busier business") == ["busy", "busy", "busi"]


def test_an_ordinal_in_digits_is_its_number() -> None:
    from memgraph.text import index_terms

    # "When was Lu's 33rd birthday?" is answered by "I turned 33 on Sunday"
    assert index_terms("her 33rd birthday") == ["33", "birthday"]
    assert index_terms("the 21st, the 2nd, the 3rd, the 4th") == ["21", "2", "3", "4"]
    assert index_terms("the 1990s, 4x4, 2nd-hand") == ["1990s", "4x4", "2", "hand"]


def test_a_pronoun_s_contraction_is_not_the_word_its_letters_spell() -> None:
    from memgraph.text import index_terms, words

    # "we'd" is no wedding, "I'll" no illness, "she'll" no shell
    assert index_terms("we'd love to, I'll bring wine, she'll drive") == [
        "love",
        "bring",
        "wine",
        "drive",
    ]
    assert index_terms("the wedding, I'm ill") == ["wed", "ill"]
    assert words("you're right, I’ve got it") == ["you", "right", "i", "got", "it"]


def test_a_number_said_in_words_is_the_number() -> None:
    from memgraph.text import index_terms

    # "turned 23" finds "Twenty-three already!", "31 years" finds "thirty-one years"
    assert index_terms("Twenty-three already!") == index_terms("23 already")
    assert index_terms("thirty-one years, twelve kids") == ["31", "year", "12", "kid"]
    assert index_terms("twenty of them") == ["20"]
    # one to nine stay words: "3", one character, is no term
    assert index_terms("three kids") == ["three", "kid"]


def test_relation_ends_table_groups_each_entitys_relations_in_saved_order() -> None:
    """``_ends_table`` (one sort of end * count + relation) against a lexsort."""
    import types

    import numpy as np

    from memgraph.graph.graph import _ends_table

    rng = np.random.default_rng(1)
    for _ in range(200):
        entities, relations = int(rng.integers(0, 40)), int(rng.integers(0, 60))
        sources = rng.integers(-1, max(entities, 1), relations)  # -1: an end naming no entity
        targets = rng.integers(-1, max(entities, 1), relations)
        loops = rng.random(relations) < 0.15
        targets[loops] = sources[loops]
        saved = types.SimpleNamespace(
            rel_ids=[f"rel-{i}" for i in range(relations)],
            rel_from_ordinals=sources,
            rel_to_ordinals=targets,
            entity_ids=[f"entity-{i}" for i in range(entities)],
        )
        ends = np.concatenate([sources, targets])
        rels = np.concatenate([np.arange(relations), np.arange(relations)])
        keep = ends >= 0
        keep[relations:] &= targets != sources
        order = np.lexsort((rels[keep], ends[keep]))
        starts = np.searchsorted(ends[keep][order], np.arange(entities + 1))
        found_order, found_starts = _ends_table(saved)  # type: ignore[arg-type]
        assert found_order.tolist() == rels[keep][order].tolist()
        assert found_starts.tolist() == starts.tolist()


def test_everyday_words_for_one_another_find_each_other() -> None:
    from memgraph.text import in_any_form, index_terms

    def forms(word: str) -> set[str]:
        return in_any_form(index_terms(word))

    assert set(index_terms("flight")) <= forms("fly")  # "When did she fly?" / "my flight"
    assert set(index_terms("tooth")) <= forms("dental")
    assert set(index_terms("physio")) <= forms("physiotherapist")
    assert set(index_terms("flatmate")) <= forms("roommate")
