"""A short name or an alias resolves to the one person it names, and only then."""

from __future__ import annotations

from typing import Any

from memgraph.graph.changes import plan_extraction
from memgraph.graph.graph import Graph
from memgraph.llm_calls.extract import ExtractedEntity, ExtractedRelation, Extraction

T1 = "2026-01-01T00:00:00.000Z"


def learn(
    graph: Graph, *entities: ExtractedEntity, relations: tuple[ExtractedRelation, ...] = ()
) -> None:
    plan = plan_extraction(graph, Extraction(tuple(entities), relations), at=T1, now=T1)
    graph.apply(plan.ops)
    graph.next_id = max(graph.next_id, plan.next_id)


def one(name: str, type_: str = "person", *facts: str) -> ExtractedEntity:
    return ExtractedEntity(name, type_, tuple(facts))


def facts_by_name(graph: Graph) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for entity in graph.entities.values():
        out[entity["name"]] = [o["content"] for o in entity["observations"]]
    return out


def test_a_first_name_resolves_to_the_one_person_whose_name_it_starts() -> None:
    graph = Graph()
    learn(graph, one("Alice Chen", "person", "works at Acme"))
    learn(graph, one("Alice", "person", "drinks green tea"))
    assert facts_by_name(graph) == {"Alice Chen": ["works at Acme", "drinks green tea"]}


def test_a_relation_end_with_a_first_name_resolves_too() -> None:
    graph = Graph()
    learn(graph, one("Alice Chen"), one("Helios", "project"))
    learn(graph, relations=(ExtractedRelation("Helios", "Alice", "led_by"),))
    [relation] = graph.relations.values()
    assert graph.entities[relation["to"]]["name"] == "Alice Chen"
    assert sorted(facts_by_name(graph)) == ["Alice Chen", "Helios"]


def test_a_name_shared_by_two_people_stays_its_own_entity() -> None:
    graph = Graph()
    learn(graph, one("Alice Chen"), one("Alice Novak"))
    learn(graph, one("Alice", "person", "likes jazz"))
    assert facts_by_name(graph)["Alice"] == ["likes jazz"], "ambiguous: not guessed"
    assert facts_by_name(graph)["Alice Chen"] == [] and facts_by_name(graph)["Alice Novak"] == []


def test_only_people_are_resolved_by_a_short_name() -> None:
    graph = Graph()
    learn(graph, one("Acme Corp", "organization"), one("Alice Chen"))
    learn(graph, one("Acme", "organization", "is hiring"), one("Alice", "project", "ships"))
    assert sorted(facts_by_name(graph)) == ["Acme", "Acme Corp", "Alice", "Alice Chen"]


def test_a_name_must_end_on_a_word_boundary_of_the_longer_name() -> None:
    graph = Graph()
    learn(graph, one("Alicia Keys"), one("Bob/../../alice"))
    learn(graph, one("Ali", "person", "plays chess"), one("Bob", "person", "likes jazz"))
    assert facts_by_name(graph)["Ali"] == ["plays chess"]
    assert facts_by_name(graph)["Bob"] == ["likes jazz"]


def test_an_alias_stated_as_a_fact_resolves_to_its_person() -> None:
    graph = Graph()
    learn(graph, one("Robert Smith", "person", "also known as Bobby"))
    learn(graph, one("Bobby", "person", "plays the drums"))
    assert facts_by_name(graph) == {
        "Robert Smith": ["also known as Bobby", "plays the drums"],
    }


def test_a_short_name_resolves_to_a_person_added_earlier_in_the_same_text() -> None:
    graph = Graph()
    learn(
        graph,
        one("Dana Whitfield", "person", "is a nurse"),
        one("Dana", "person", "lives in Porto"),
    )
    assert facts_by_name(graph) == {"Dana Whitfield": ["is a nurse", "lives in Porto"]}


def test_an_exact_name_wins_over_a_longer_one() -> None:
    graph = Graph()
    learn(graph, one("Alice"), one("Alice Chen"))
    learn(graph, one("Alice", "person", "likes tea"))
    facts: dict[str, Any] = facts_by_name(graph)
    assert facts == {"Alice": ["likes tea"], "Alice Chen": []}


def test_a_name_the_user_gave_resolves_to_the_user() -> None:
    graph = Graph()
    learn(graph, one("User", "person", "name is Priya Raman"))  # "I'm Priya Raman"
    learn(graph, one("Priya Raman", "person", "loves hiking"))
    assert facts_by_name(graph) == {"User": ["name is Priya Raman", "loves hiking"]}
