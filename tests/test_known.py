"""The <known> context of extraction prompts: names by exact lookup, nearest facts,
bounded size, and the same context on the single and the bulk path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from memgraph.providers.mock import HashEmbedder, ScriptedChatModel

from memgraph import Memory, Provider
from memgraph.graph.graph import Graph
from memgraph.llm_calls.prompts import read_tag
from memgraph.llm_calls.tokens import count_tokens
from memgraph.retrieval import known
from memgraph.retrieval.vectors import VectorIndex

Doc = dict[str, Any]
T1 = "2026-01-01T00:00:00.000Z"


def build(entities: list[tuple[str, str, list[str]]], relations: Any = ()) -> Graph:
    """A graph of ``(name, type, facts)`` entities; ids entity-1, obs-2, ... in order."""
    graph = Graph()
    ops: list[Doc] = []
    number = 1
    ids: dict[str, str] = {}
    for name, type_, facts in entities:
        entity_id = f"entity-{number}"
        number += 1
        ids[name] = entity_id
        ops.append(
            {
                "op": "entity",
                "entity": {"id": entity_id, "name": name, "type": type_, "createdAt": T1},
            }
        )
        for fact in facts:
            ops.append(
                {
                    "op": "obs",
                    "entity": entity_id,
                    "obs": {"id": f"obs-{number}", "content": fact, "validFrom": T1},
                }
            )
            number += 1
    for source, type_, target in relations:
        ops.append(
            {
                "op": "rel",
                "rel": {
                    "id": f"rel-{number}",
                    "from": ids[source],
                    "to": ids[target],
                    "type": type_,
                    "validFrom": T1,
                },
            }
        )
        number += 1
    graph.apply(ops)
    graph.next_id = number
    return graph


def names(graph: Graph, ids: list[str]) -> list[str]:
    return [graph.entities[i]["name"] for i in ids]


def embedded(graph: Graph, dimension: int = 64) -> tuple[VectorIndex, HashEmbedder]:
    embedder = HashEmbedder(dimension)
    pairs = [
        (obs["id"], f"{entity['name']} ({entity['type']}): {obs['content']}")
        for entity, obs in graph.current_observations()
    ]
    index = VectorIndex(embedder.model)
    index.add([i for i, _ in pairs], embedder.embed([t for _, t in pairs]))
    return index, embedder


# ----------------------------------------------------------------- names
def test_exact_names_are_found_by_lookup_whatever_the_case_and_punctuation() -> None:
    graph = build(
        [
            ("Ilse Vorn", "person", ["likes tea"]),
            ("Acme Inc.", "company", []),
            ("Oslo", "place", []),
            ("The Hague", "place", []),
        ]
    )
    text = "Mira met ILSE VORN. She moved from (Oslo) to the hague; Acme Inc. hired Ilse's friend."
    exact, partly = known.named_entities(graph, text)
    assert names(graph, exact) == ["Ilse Vorn", "Oslo", "The Hague", "Acme Inc."]
    assert partly == []


def test_the_longest_name_wins_and_names_do_not_overlap() -> None:
    graph = build([("Amber", "person", []), ("Amber Falcon", "project", [])])
    exact, _ = known.named_entities(graph, "Amber Falcon ships soon; Amber leads it.")
    assert names(graph, exact) == ["Amber Falcon", "Amber"]


def test_names_under_three_characters_and_stop_word_names_are_skipped() -> None:
    graph = build([("Go", "language", []), ("The Who", "band", []), ("Bo Lin", "person", [])])
    exact, partly = known.named_entities(graph, "I go to see the who with Bo Lin.")
    assert names(graph, exact) == ["Bo Lin"]
    assert partly == []


def test_a_distinctive_word_names_an_entity_partly_but_a_common_one_does_not() -> None:
    people = [(f"Mira Person{i}", "person", []) for i in range(known.PARTIAL_NAMES + 1)]
    graph = build([*people, ("Ilse Vorn", "person", []), ("Ilse Kar", "person", [])])
    exact, partly = known.named_entities(graph, "Mira told Ilse about it.")
    assert exact == []
    # "Mira" is in more names than PARTIAL_NAMES: it names nobody; "Ilse" names both.
    assert names(graph, partly) == ["Ilse Kar", "Ilse Vorn"]  # newest first


def test_words_exactly_named_do_not_also_name_partly() -> None:
    graph = build([("Ilse Vorn", "person", []), ("Ilse Kar", "person", [])])
    exact, partly = known.named_entities(graph, "Ilse Vorn called.")
    assert names(graph, exact) == ["Ilse Vorn"]
    assert partly == []


def test_looking_up_names_does_not_scan_the_entities_sharing_a_word(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    graph = build([(f"Mira Person{i}", "person", []) for i in range(2000)])
    looked_up: list[str] = []
    original = graph.entity_by_name

    def counting(name: str) -> Doc | None:
        looked_up.append(name)
        return original(name)

    monkeypatch.setattr(graph, "entity_by_name", counting)
    monkeypatch.setattr(graph, "name_words", lambda entity_id: pytest.fail("scanned a name"))
    exact, partly = known.named_entities(graph, "Mira Person7 and Mira went hiking with Mira.")
    assert names(graph, exact) == ["Mira Person7"]
    assert partly == []
    # A few lookups per run of name words (longest first), none per entity named Mira.
    assert looked_up[0] == "mira person7 and mira"
    assert len(looked_up) <= 12


# ----------------------------------------------------------------- selection
def test_named_entities_come_first_then_the_nearest_facts_fill_the_places() -> None:
    graph = build(
        [
            ("Ilse Vorn", "person", ["mentors the data team"]),
            ("Kato Ren", "person", ["prefers Rust for payments work"]),
            ("Lina Oyelaran", "person", ["prefers Rust for billing work"]),
        ]
    )
    hits = [("obs-6", 0.9), ("obs-4", 0.8), ("obs-2", 0.5)]
    chosen = known.select(graph, "Ilse Vorn now prefers Rust for payments work.", hits)
    assert names(graph, chosen.order) == ["Ilse Vorn", "Lina Oyelaran", "Kato Ren"]
    assert chosen.named == {"entity-1"}
    assert [o["id"] for o in chosen.matched["entity-1"]] == ["obs-2"]


def test_a_text_in_the_first_person_shows_its_speaker_s_facts() -> None:
    graph = build(
        [
            ("Marta", "person", ["is lactose intolerant", "works at Flowbit"]),
            ("Theo", "person", ["lives in Madrid"]),
        ]
    )
    said = "I'm no longer lactose intolerant apparently, the new tests were negative!"
    chosen = known.select(graph, said, [], speaker="Marta")
    assert names(graph, chosen.order) == ["Marta"]
    assert chosen.named == {"entity-1"}
    # not for a text that does not speak of its speaker, nor for a speaker with no entity
    assert known.select(graph, "Theo is moving in April", [], speaker="Marta").named == {"entity-4"}
    assert known.select(graph, said, [], speaker="Nobody").order == []


def test_the_context_shows_at_most_max_entities_whatever_the_scope_size() -> None:
    graph = build([(f"Person {i}", "person", [f"likes topic {i}"]) for i in range(40)])
    hits = [(f"obs-{2 * i + 2}", 0.9 - i / 100) for i in range(40)]
    chosen = known.select(graph, "someone likes a topic", hits)
    assert len(chosen.order) == known.MAX_ENTITIES
    assert names(graph, chosen.order)[:2] == ["Person 0", "Person 1"]  # in rank order


def test_a_named_entity_shows_its_facts_closest_to_the_text_and_its_relations() -> None:
    facts = [f"visited city number {i}" for i in range(30)] + ["lives in Paris"]
    graph = build(
        [("Alice", "person", facts), ("Acme", "company", []), ("Bob", "person", [])],
        relations=[("Alice", "works_at", "Acme"), ("Bob", "knows", "Alice")],
    )
    vectors, embedder = embedded(graph)
    text = "Alice lives in Berlin now."
    context = known.extraction_context(
        graph,
        text,
        count_tokens=count_tokens,
        budget=800,
        vectors=vectors,
        query_vector=embedder.embed([text])[0],
        hits=[],
    )
    lines = context.splitlines()
    assert lines[0] == "Alice (person):"
    assert "  - lives in Paris" in lines
    assert "  - works_at → Acme" in lines and "  - Bob knows → Alice" in lines
    facts_shown = [line for line in lines if line.startswith("  - ") and "→" not in line]
    assert len(facts_shown) == known.FACTS_PER_ENTITY


def test_the_context_stops_at_the_token_budget_on_whole_lines() -> None:
    long_fact = "likes " + " ".join(f"word{i}" for i in range(150))
    graph = build([(f"Person {i}", "person", [long_fact + f" {i}"]) for i in range(8)])
    hits = [(f"obs-{2 * i + 2}", 0.9) for i in range(8)]
    context = known.extraction_context(
        graph, "someone", count_tokens=count_tokens, budget=400, hits=hits
    )
    assert 0 < count_tokens(context) <= 400
    lines = context.splitlines()
    assert not lines[-1].endswith(":")  # never a header without a line under it
    assert all(line.startswith(("Person", "  - ")) for line in lines)


def test_an_empty_scope_has_no_context() -> None:
    assert known.extraction_context(Graph(), "Alice likes tea.", count_tokens=len, budget=800) == ""


def test_without_vectors_the_keyword_tier_finds_the_nearest_facts() -> None:
    graph = build([("Kato Ren", "person", ["prefers Rust for payments work"])])
    assert known.neighbours(graph, "who prefers Rust", None, None)[0][0] == "obs-2"


# ----------------------------------------------------------------- through Memory
def _remembered(tmp_path: Path, texts: list[str]) -> tuple[Memory, ScriptedChatModel]:
    replies = [
        {
            "entities": [{"name": f"Person {i}", "type": "person", "observations": [text]}],
            "relations": [],
            "expirations": [],
        }
        for i, text in enumerate(texts)
    ]
    chat = ScriptedChatModel(replies)
    memory = Memory(tmp_path / "mem", scope="s", provider=Provider("t", chat, HashEmbedder(64)))
    memory.remember_many([f"Person {i} {text}" for i, text in enumerate(texts)])
    return memory, chat


def test_the_bulk_path_builds_the_same_contexts_as_one_remember_each(tmp_path: Path) -> None:
    facts = [f"works on project {i % 7} in city {i % 5}" for i in range(60)]
    memory, _ = _remembered(tmp_path, facts)
    with memory:
        graph = memory._sync()
        texts = ["Person 3 works on project 3 in city 3.", "Someone in city 4.", "Person 59 left."]
        single = [memory._context_for(graph, text) for text in texts]
        assert memory._contexts_for(graph, texts) == single
        assert single[0].startswith("Person 3 (person):")
        assert "Person 59 (person):" in single[2]


def test_remember_prompts_show_the_named_entity_among_many_namesakes(tmp_path: Path) -> None:
    facts = [f"likes topic {i}" for i in range(30)]
    memory, chat = _remembered(tmp_path, facts)
    with memory:
        chat.add({"entities": [], "relations": [], "expirations": []})
        memory.remember("Person 17 likes topic 99 now.")
    context = read_tag(chat.calls[-1].last_user, "known") or ""
    assert context.startswith("Person 17 (person): already stored: likes topic 17")
    assert context.count("(person):") <= known.MAX_ENTITIES


def test_search_many_finds_what_search_finds() -> None:
    rng = np.random.default_rng(3)
    index = VectorIndex("m")
    index.add([f"obs-{i}" for i in range(500)], rng.standard_normal((500, 16)))
    queries = rng.standard_normal((7, 16))
    many = index.search_many(queries, 5, 0.0)
    for query, found in zip(queries, many, strict=True):
        single = index.search(query, 5, 0.0)
        assert [i for i, _ in found] == [i for i, _ in single]
        assert [s for _, s in found] == pytest.approx([s for _, s in single], abs=1e-5)
