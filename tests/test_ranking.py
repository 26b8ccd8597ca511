"""Fusion of the recall tiers and the recall text format (memgraph.retrieval.ranking)."""

from __future__ import annotations

from typing import Any

from memgraph.graph.graph import Graph
from memgraph.retrieval import ranking as tiers

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


def test_skipping_typed_only_candidates_changes_nothing_above_the_floor() -> None:
    # The 50 newest typed entities are only ranked when a type match alone could
    # pass the floor; with the default floor the fused list is the same as the
    # full computation's, filtered at the floor.
    graph = people(120)
    typed = set(graph.entities_of_type("person"))
    signals: dict[str, Any] = {
        "names": {"entity-3", "entity-110", "entity-0"},  # named and typed: old and new
        "types": typed,
        "keywords": {"obs-7-1": 0.6, "obs-115-2": 0.4, "obs-3-0": 0.2},
        "semantic": {"obs-60-0": 0.7, "obs-119-1": 0.5},
    }
    everything = ranked(graph, 0.0, **signals)  # a floor a type match alone passes
    default = ranked(graph, tiers.RELEVANCE_FLOOR, **signals)
    assert default == [item for item in everything if item[1] >= tiers.RELEVANCE_FLOOR]
    # The named entity among the 50 newest persons has the type signal on its facts;
    # the older one has not (the rule the full computation applies).
    signals_of = {item_id: found for item_id, _, found in default}
    assert signals_of["obs-110-2"] == {"name", "type"}
    assert signals_of["obs-3-2"] == {"name"}


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
    assert len(read) <= len(lines)  # relations past the budget were never read
