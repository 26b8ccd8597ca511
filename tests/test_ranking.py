"""Fusion of the recall tiers and the recall text format (memgraph.retrieval.ranking)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from memgraph.graph.changes import plan_facts
from memgraph.graph.graph import Graph
from memgraph.retrieval import ranking as tiers
from memgraph.text import index_terms

Doc = dict[str, Any]
T1 = "2026-01-01T00:00:00.000Z"


def people(count: int, facts: int = 3) -> Graph:
    """``count`` persons ``Person i`` (entity-i), each with ``facts`` facts; Acme, a company."""
    graph = Graph()
    ops: list[Doc] = []
    for i in range(1, count + 1):
        ops.append(
            {
                "op": "entity",
                "entity": {"id": f"entity-{i}", "name": f"Person {i}", "type": "person"},
            }
        )
        for j in range(facts):
            ops.append(
                {
                    "op": "obs",
                    "entity": f"entity-{i}",
                    "obs": {"id": f"obs-{i}-{j}", "content": f"likes topic {j}", "validFrom": T1},
                }
            )
    ops.append({"op": "entity", "entity": {"id": "entity-0", "name": "Acme", "type": "company"}})
    graph.apply(ops)
    return graph


def ranked(graph: Graph, floor: float, **signals: Any) -> list[tuple[str, float, frozenset[str]]]:
    found = tiers.fuse(graph, floor=floor, **signals)
    return [(c.id, round(c.score, 9), frozenset(c.signals)) for c in found]


def test_a_type_match_alone_stays_under_the_floor() -> None:
    graph = people(5)
    typed = graph.entities_of_type("person")
    assert tiers.fuse(graph, types=typed) == []
    assert tiers.WEIGHTS["type"] < tiers.RELEVANCE_FLOOR


def question(graph: Graph, text: str, named: set[str]) -> tiers.Query:
    """A query naming ``named`` (its name terms are the names' words)."""
    name_terms = {t for e in named for t in index_terms(graph.entities[e]["name"])}
    terms = tuple(dict.fromkeys([*index_terms(text), *sorted(name_terms)]))
    return tiers.Query(text, terms, frozenset(named), frozenset(name_terms))


def test_a_named_entity_contributes_only_the_facts_that_match() -> None:
    # "What topic does Person 3 like?" names Person 3: its facts with evidence rank
    # first, boosted; its other facts are no candidates; others' facts are discounted.
    graph = people(10)
    query = question(graph, "topic", {"entity-3"})
    keywords = {"obs-3-0": 0.5, "obs-7-1": 0.5}
    found = {c.id: c for c in tiers.fuse(graph, query, keywords=keywords, floor=0.0)}
    assert set(found) == {"obs-3-0", "obs-7-1"}
    plain = 0.8 * 0.5
    assert found["obs-3-0"].score > plain > found["obs-7-1"].score
    assert found["obs-3-0"].signals == {"content": 0.5, "name": 1.0}
    assert found["obs-7-1"].score == pytest.approx(plain * tiers.OFF_NAME)


def test_an_identity_query_brings_in_the_named_entitys_facts() -> None:
    graph = people(10)
    query = question(graph, "", {"entity-3"})
    assert query.identity
    found = tiers.fuse(graph, query)
    assert {c.id for c in found} == {"obs-3-0", "obs-3-1", "obs-3-2"}
    assert all(c.score == pytest.approx(tiers.WEIGHTS["name"]) for c in found)


def test_relation_lines_are_cut_at_the_limit() -> None:
    graph = people(6, facts=0)
    graph.apply(
        [
            {
                "op": "rel",
                "rel": {"id": f"rel-{i}", "from": "entity-1", "to": f"entity-{i}", "type": "knows"},
            }
            for i in range(2, 7)
        ]
    )
    entity = graph.entities["entity-1"]
    every = tiers.relation_lines(graph, entity, tiers.CURRENT.visible)
    assert every[:2] == ["  - knows → Person 2", "  - knows → Person 3"] and len(every) == 5
    assert tiers.relation_lines(graph, entity, tiers.CURRENT.visible, limit=2) == every[:2]


def test_a_hub_entity_formats_only_the_relations_the_budget_shows(
    monkeypatch: Any,
) -> None:
    graph = people(3000, facts=1)
    graph.apply(
        [
            {
                "op": "rel",
                "rel": {"id": f"rel-{i}", "from": "entity-1", "to": f"entity-{i}", "type": "knows"},
            }
            for i in range(2, 3001)
        ]
    )
    read: list[str] = []
    original = graph.relations_of

    def counting(entity_id: str) -> Any:
        for rel in original(entity_id):
            read.append(rel["id"])
            yield rel

    monkeypatch.setattr(graph, "relations_of", counting)
    hub = graph.entities["entity-1"]
    candidate = tiers.Candidate(hub, hub["observations"][0], {"name": 1.0}, 0.7)
    text = tiers.format_entities(graph, [candidate], count_tokens=len, budget=300)
    lines = text.splitlines()
    assert lines[:3] == ["Person 1 (person):", "  - likes topic 0", "  - knows → Person 2"]
    assert sum(len(line) + 1 for line in lines) <= 300
    # relations past the budget were never read, but for a bounded look ahead (a text
    # short enough is counted whole first)
    assert len(read) <= tiers.WHOLE_TEXT_BYTES * len(lines) < 3000


def test_a_year_beside_other_words_says_when_not_what() -> None:
    graph = people(1)
    query = tiers.analyze(graph, "Where did Person 1 spend Christmas 2022?")
    assert "2022" in query.terms
    assert "2022" not in query.content_terms
    assert tiers.without_years(["2022"]) == ("2022",)  # alone, the year is what is asked
    assert tiers.without_years(["earl", "may", "2024"]) == ("earl", "may")


def test_for_a_living_asks_a_job_not_where_anyone_lives() -> None:
    query = tiers.analyze(Graph(), "What does Jordan do for a living?")
    assert not set(index_terms("living lives")) & set(query.content_terms)
    assert "live" in tiers.analyze(Graph(), "Where does Jordan live?").content_terms


def test_a_short_text_is_counted_once_whole_and_a_long_one_line_by_line() -> None:
    counted: list[str] = []

    def count(text: str) -> int:
        counted.append(text)
        return len(text.split())

    blocks = [["Alice (person):", "  - likes tea", "  - lives in Paris"], ["Bob (person):"]]
    text = tiers.budgeted_text(blocks, count_tokens=count, budget=100)
    assert text == "Alice (person):\n  - likes tea\n  - lives in Paris\nBob (person):"
    assert counted == [text]  # one count, of the whole text
    counted.clear()
    # over the budget: counted line by line, cut on whole lines, a lone header dropped
    text = tiers.budgeted_text(blocks, count_tokens=count, budget=12)
    assert text == "Alice (person):\n  - likes tea\n  - lives in Paris"
    assert len(counted) > 1
    # a block too long to read whole is never made whole
    endless = (f"  - fact {i}" for i in itertools.count())
    text = tiers.budgeted_text([["Carol (person):"], endless], count_tokens=count, budget=40)
    assert text.startswith("Carol (person):\n  - fact 0") and count(text) <= 40


def test_content_set_aside_leaves_a_question_about_whom_it_names() -> None:
    query = tiers.analyze(people(1), "Why is Person 1 in the US?")
    assert query.content_terms == ("us",)
    aside = query.set_aside()
    assert aside.identity
    assert aside.unheard == ("us",)
    assert aside.named == query.named


def test_an_assistant_s_message_ranks_below_the_user_s_words_that_match_as_well() -> None:
    query = tiers.analyze(Graph(), "Where does Emi live?")
    signals = tiers.EpisodeSignals(
        content={"episode-1": 0.8, "episode-2": 0.8},
        assistant=lambda episode: episode == "episode-2",  # "Noted: Emi lives in Osaka"
    )
    ranked = tiers.fuse(Graph(), query, episodes=signals)
    assert [c.id for c in ranked] == ["episode-1", "episode-2"]
    assert ranked[1].score == pytest.approx(ranked[0].score * tiers.ASSISTANT_TEXT)


def test_a_question_asking_a_name_ranks_a_text_that_says_none_below() -> None:
    signals = tiers.EpisodeSignals(
        content={"episode-1": 0.8, "episode-2": 0.8},
        names_something=lambda episode: episode == "episode-2",  # "Côr Seren started up"
    )
    asked = tiers.analyze(Graph(), "What is the name of the choir?")
    ranked = tiers.fuse(Graph(), asked, episodes=signals)
    assert [c.id for c in ranked] == ["episode-2", "episode-1"]
    assert ranked[1].score == pytest.approx(ranked[0].score * tiers.NAMELESS)
    # a question asking no name ranks them alike
    ranked = tiers.fuse(Graph(), tiers.analyze(Graph(), "When is choir?"), episodes=signals)
    assert ranked[0].score == pytest.approx(ranked[1].score)


def test_a_question_about_what_the_assistant_said_does_not_rank_its_messages_down() -> None:
    signals = tiers.EpisodeSignals(
        content={"episode-1": 0.8, "episode-2": 0.8},
        assistant=lambda episode: episode == "episode-2",
    )
    for question in ("Which hotel did the assistant recommend?", "What did you suggest?"):
        ranked = tiers.fuse(Graph(), tiers.analyze(Graph(), question), episodes=signals)
        assert ranked[0].score == pytest.approx(ranked[1].score), question


def test_a_when_question_prefers_a_fact_that_says_when() -> None:
    graph = people(1, facts=0)
    entity_id = next(iter(graph.entities))
    plan = plan_facts(
        graph,
        [("Person 1", "person", ["signed up for a pottery class", "ran a race on 3 May"])],
        [],
        at="2023-05-04T10:00:00Z",
        now="2023-05-04T10:00:00Z",
        source="test",
    )
    graph.apply(plan.ops)
    undated, dated = (o["id"] for o in graph.entities[entity_id]["observations"][-2:])
    query = tiers.analyze(graph, "When did Person 1 sign up or race?")
    signals = tiers.EpisodeSignals()
    ranked = tiers.fuse(
        graph, query, keywords={undated: 0.65, dated: 0.6}, episodes=signals, floor=0.0
    )
    assert [c.id for c in ranked][:2] == [dated, undated]


def test_facts_scored_alike_are_read_the_same_whatever_order_the_tiers_list_them() -> None:
    # more facts than are read, all scored alike: which are read must not follow the
    # order a tier happened to list them in (a set's, which differs by process)
    graph = people(40)
    ids = [f"obs-{i}-{j}" for i in range(1, 41) for j in range(3)]
    assert len(ids) > tiers.READ_FACTS

    def read(order: list[str]) -> list[str]:
        found = tiers.fuse(graph, keywords=dict.fromkeys(order, 0.5), floor=0.0)
        return sorted(c.id for c in found)

    assert read(ids) == read(ids[::-1])


def test_a_place_named_beside_a_person_is_what_is_asked() -> None:
    # "When was Jon in Rome?" asks about Jon, in Rome: not for both entities' facts
    graph = Graph()
    graph.apply(
        [
            {"op": "entity", "entity": {"id": "entity-1", "name": "Jon", "type": "person"}},
            {"op": "entity", "entity": {"id": "entity-2", "name": "Rome", "type": "place"}},
            {"op": "entity", "entity": {"id": "entity-3", "name": "Gina", "type": "person"}},
        ]
    )
    asked = tiers.analyze(graph, "When was Jon in Rome?")
    assert asked.named == {"entity-1", "entity-2"}
    assert asked.content_terms == ("rome",) and not asked.identity
    # with words of its own, both names stay names; two people stay an identity query
    assert tiers.analyze(graph, "What did Jon eat in Rome?").content_terms == ("eat",)
    assert tiers.analyze(graph, "Jon and Gina?").identity
    assert tiers.analyze(graph, "Rome?").identity
