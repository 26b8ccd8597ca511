"""``Memory.add_facts``: facts handed over as data are stored as given, without the LLM."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from memgraph.providers.mock import HashEmbedder, ScriptedChatModel

from memgraph import Memory, Provider


def _memory(tmp_path: Path, scope: str = "facts") -> Memory:
    # A chat model with no replies: any LLM call would fail the test.
    return Memory(tmp_path, scope, provider=Provider("mock", ScriptedChatModel([]), HashEmbedder()))


def test_add_facts_stores_entities_observations_and_relations_without_the_llm(
    tmp_path: Path,
) -> None:
    with _memory(tmp_path) as memory:
        changes = memory.add_facts(
            [("Alice", "person", ["likes tea", "works at Acme"]), ("Acme", "Organization", [])],
            [("Alice", "Acme", "worksAt")],
        )
        assert [e.name for e in changes.added_entities] == ["Alice", "Acme"]
        assert [o.content for o in changes.added_observations] == ["likes tea", "works at Acme"]
        assert [(r.from_name, r.type, r.to_name) for r in changes.added_relations] == [
            ("Alice", "worksAt", "Acme")
        ]
        assert memory.entity("acme").type == "Organization"  # types and relation types as given
        assert memory.search("who likes tea")[0].entity.name == "Alice"  # embedded and indexed


def test_add_facts_twice_adds_nothing_the_second_time(tmp_path: Path) -> None:
    facts: Any = ([("Alice", "person", ["likes tea"])], [("Alice", "Bob", "knows")])
    with _memory(tmp_path) as memory:
        assert memory.add_facts(*facts)
        again = memory.add_facts(*facts)
        assert not again
        assert memory.stats()["observations"] == 1 and memory.stats()["relations"] == 1


def test_add_facts_supersedes_nothing(tmp_path: Path) -> None:
    with _memory(tmp_path) as memory:
        memory.add_facts([("Alice", "person", ["works at Acme"])], [("Alice", "Acme", "works_at")])
        changes = memory.add_facts(
            [("Alice", "robot", ["works at Globex"])], [("Alice", "Globex", "works_at")]
        )
        assert not changes.expired_observations and not changes.expired_relations
        alice = memory.entity("Alice")
        assert alice.type == "person"  # an existing entity keeps its type
        assert [o.content for o in alice.current_observations] == [
            "works at Acme",
            "works at Globex",
        ]


def test_add_facts_creates_missing_relation_ends_as_things(tmp_path: Path) -> None:
    with _memory(tmp_path) as memory:
        memory.add_facts(relations=[("Alice", "Bob", "knows")])
        assert memory.entity("Bob").type == "thing"


def test_add_facts_records_the_source_and_no_episode(tmp_path: Path) -> None:
    with _memory(tmp_path) as memory:
        changes = memory.add_facts([("Alice", "person", ["likes tea"])], source="import")
        assert changes.episode is None
        assert changes.added_observations[0].source == "import"
        assert list(memory.iter_episodes()) == []


def test_add_facts_is_durable_and_seen_by_another_handle(tmp_path: Path) -> None:
    with _memory(tmp_path) as writer, _memory(tmp_path) as reader:
        reader.stats()
        writer.add_facts([("Alice", "person", ["likes tea"])])
        assert [o.content for o in reader.entity("Alice").observations] == ["likes tea"]


@pytest.mark.parametrize(
    ("entities", "relations", "error"),
    [
        ([("", "person", ["x"])], [], ValueError),
        ([(None, "person", ["x"])], [], TypeError),
        ([("Alice", "person", "likes tea")], [], TypeError),
        ([("Alice", "person", [3])], [], TypeError),
        ([("Alice", "person", ["x" * 2_001])], [], ValueError),
        ([("A" * 201, "person", [])], [], ValueError),
        ([("Alice", "person", ["ok"])], [("Alice", "", "knows")], ValueError),
    ],
)
def test_bad_facts_are_refused_and_nothing_is_written(
    tmp_path: Path, entities: Any, relations: Any, error: type[Exception]
) -> None:
    with _memory(tmp_path) as memory:
        with pytest.raises(error):
            memory.add_facts(entities, relations)
        assert memory.stats()["entities"] == 0
