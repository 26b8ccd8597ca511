"""A scope written by Agency loads unchanged; memgraph's checkpoints stay Agency-valid."""

from __future__ import annotations

import shutil
from pathlib import Path

import jsonschema
import orjson
import pytest

from memgraph import Memory
from tests.conftest import fixture_path, load_fixture


@pytest.fixture
def agency_dir(tmp_path: Path) -> Path:
    target = tmp_path / "agency-memory"
    shutil.copytree(fixture_path("agency-memory"), target)
    return target


def test_agency_fixture_itself_matches_the_schema() -> None:
    jsonschema.validate(
        load_fixture("agency-memory/alice/graph.json"), load_fixture("agency-graph.schema.json")
    )


def test_an_agency_scope_loads_unchanged(agency_dir: Path) -> None:
    original = (agency_dir / "alice" / "graph.json").read_bytes()
    with Memory(agency_dir, scope="alice", provider="mock") as memory:
        names = sorted(e.name for e in memory.entities())
        assert names == ["Acme Robotics", "Alice", "Bob"]
        history = memory.history("Alice")
        assert [(o.content, o.current) for o in history.observations][-2:] == [
            ("Works at Initech", False),
            ("Works at Acme Robotics", True),
        ]
        assert "Prefers TypeScript" in memory.recall("what does alice prefer", rerank=False)
        assert "mentors → Bob" in memory.recall("alice", rerank=False)
        summary = memory.store.read_summary()
        assert summary is not None and summary["messagesSummarized"] == 12
    assert (agency_dir / "alice" / "graph.json").read_bytes() == original


def test_new_ids_continue_after_agencys_next_id(agency_dir: Path) -> None:
    with Memory(agency_dir, scope="alice", provider="mock") as memory:
        changes = memory.remember("Bob lives in Berlin.")
        numbers = [int(o.id.split("-")[1]) for o in changes.added_observations]
        assert numbers and min(numbers) >= 12


def test_after_a_checkpoint_graph_json_still_validates_against_agencys_schema(
    agency_dir: Path,
) -> None:
    with Memory(agency_dir, scope="alice", provider="mock") as memory:
        memory.remember("Alice works at Globex. She prefers Rust.")
        memory.forget("alice's preference for typescript")
        memory.checkpoint()
    document = orjson.loads((agency_dir / "alice" / "graph.json").read_bytes())
    jsonschema.validate(document, load_fixture("agency-graph.schema.json"))
    alice = next(e for e in document["entities"] if e["name"] == "Alice")
    typescript = next(o for o in alice["observations"] if o["content"] == "Prefers TypeScript")
    assert typescript["validTo"] is not None


def test_agency_relations_that_link_by_name_are_resolved(tmp_path: Path) -> None:
    scope = tmp_path / "m" / "s"
    scope.mkdir(parents=True)
    document = load_fixture("agency-memory/alice/graph.json")
    for relation in document["relations"]:
        ids = {e["id"]: e["name"] for e in document["entities"]}
        relation["from"], relation["to"] = ids[relation["from"]], ids[relation["to"]]
    (scope / "graph.json").write_bytes(orjson.dumps(document))
    with Memory(tmp_path / "m", scope="s", provider="mock") as memory:
        assert "mentors → Bob" in memory.recall("alice", rerank=False)
