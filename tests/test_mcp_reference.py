"""``memgraph mcp --compat reference``: the nine tools of @modelcontextprotocol/server-memory.

The expected shapes, titles, hints and messages are those of the reference
server's source (``src/memory/index.ts`` of modelcontextprotocol/servers): its
zod input and output schemas, and what its KnowledgeGraphManager returns.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memgraph import Memory
from memgraph.mcp.compat import DELETED_MARKER, MAX_BATCH, PAGE_CHARS, PAGE_ENTITIES
from tests.mcp_support import fails, ok, serve, text

ENTITY = {"name": "string", "entityType": "string", "observations": ["string"]}
RELATION = {"from": "string", "to": "string", "relationType": "string"}
GRAPH = {"entities": [ENTITY], "relations": [RELATION]}
STATUS = {"success": "boolean", "message": "string"}

# name: (title, input shape, output shape, (readOnly, destructive, idempotent))
REFERENCE: dict[str, tuple[str, Any, Any, tuple[bool, bool, bool]]] = {
    "create_entities": (
        "Create Entities",
        {"entities": [ENTITY]},
        {"entities": [ENTITY]},
        (False, False, False),
    ),
    "create_relations": (
        "Create Relations",
        {"relations": [RELATION]},
        {"relations": [RELATION]},
        (False, False, False),
    ),
    "add_observations": (
        "Add Observations",
        {"observations": [{"entityName": "string", "contents": ["string"]}]},
        {"results": [{"entityName": "string", "addedObservations": ["string"]}]},
        (False, False, False),
    ),
    "delete_entities": (
        "Delete Entities",
        {"entityNames": ["string"]},
        STATUS,
        (False, True, True),
    ),
    "delete_observations": (
        "Delete Observations",
        {"deletions": [{"entityName": "string", "observations": ["string"]}]},
        STATUS,
        (False, True, True),
    ),
    "delete_relations": (
        "Delete Relations",
        {"relations": [RELATION]},
        STATUS,
        (False, True, True),
    ),
    "read_graph": ("Read Graph", {}, GRAPH, (True, False, True)),
    "search_nodes": ("Search Nodes", {"query": "string"}, GRAPH, (True, False, True)),
    "open_nodes": ("Open Nodes", {"names": ["string"]}, GRAPH, (True, False, True)),
}


def _shape(schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """A schema's required structure: objects by their required keys, arrays by their items."""
    if "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rpartition("/")[2]]
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties", {})
        return {k: _shape(properties[k], root) for k in schema.get("required", [])}
    if kind == "array":
        return [_shape(schema["items"], root)]
    return kind


def _optional(schema: dict[str, Any]) -> set[str]:
    return set(schema.get("properties", {})) - set(schema.get("required", []))


def _graph(tmp_path: Path) -> Any:
    with Memory(tmp_path / "mem", "test", provider="mock") as memory:
        from memgraph.mcp.compat import ReferenceGraph

        return ReferenceGraph(memory).read_graph()


def test_the_nine_tools_have_the_reference_names_titles_hints_and_shapes(tmp_path: Path) -> None:
    async def session(client: Client) -> None:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert list(listed) == list(REFERENCE)
        assert client.instructions is None  # the reference gives none, so neither do we
        for name, (title, given, answer, hints) in REFERENCE.items():
            tool = listed[name]
            assert tool.title == title
            assert tool.annotations is not None
            assert (
                tool.annotations.read_only_hint,
                tool.annotations.destructive_hint,
                tool.annotations.idempotent_hint,
                tool.annotations.open_world_hint,
            ) == (*hints, False), name
            assert _shape(tool.input_schema, tool.input_schema) == given, name
            assert tool.output_schema is not None
            assert _shape(tool.output_schema, tool.output_schema) == answer, name
        # memgraph's additions are optional: a client that never sends them works as before
        assert _optional(listed["read_graph"].input_schema) == {"cursor"}
        assert _optional(listed["read_graph"].output_schema or {}) == {"nextCursor", "note"}

    serve(tmp_path, session, profile="reference")


ALICE = {"name": "Alice", "entityType": "person", "observations": ["likes tea"]}
ACME = {"name": "Acme", "entityType": "organization", "observations": []}
WORKS = {"from": "Alice", "to": "Acme", "relationType": "works_at"}
ALICE_BOTH = {**ALICE, "observations": ["likes tea", "speaks French"]}
ALICE_FRENCH = {**ALICE, "observations": ["speaks French"]}

# (tool, arguments, structured answer, the value the reference prints as text)
SCENARIO: list[tuple[str, dict[str, Any], Any, Any]] = [
    ("create_entities", {"entities": [ALICE, ACME]}, {"entities": [ALICE, ACME]}, [ALICE, ACME]),
    ("create_entities", {"entities": [{**ALICE, "observations": ["x"]}]}, {"entities": []}, []),
    ("create_relations", {"relations": [WORKS]}, {"relations": [WORKS]}, [WORKS]),
    ("create_relations", {"relations": [WORKS]}, {"relations": []}, []),
    (
        "add_observations",
        {"observations": [{"entityName": "Alice", "contents": ["likes tea", "speaks French"]}]},
        {"results": [{"entityName": "Alice", "addedObservations": ["speaks French"]}]},
        [{"entityName": "Alice", "addedObservations": ["speaks French"]}],
    ),
    (
        "open_nodes",
        {"names": ["Acme", "Nobody"]},
        {"entities": [ACME], "relations": [WORKS]},
        {"entities": [ACME], "relations": [WORKS]},
    ),
    (
        "search_nodes",
        {"query": "French"},
        {"entities": [ALICE_BOTH], "relations": [WORKS]},
        {"entities": [ALICE_BOTH], "relations": [WORKS]},
    ),
    (
        "read_graph",
        {},
        {"entities": [ALICE_BOTH, ACME], "relations": [WORKS]},
        {"entities": [ALICE_BOTH, ACME], "relations": [WORKS]},
    ),
    (
        "delete_observations",
        {"deletions": [{"entityName": "Alice", "observations": ["likes tea"]}]},
        {"success": True, "message": "Observations deleted successfully"},
        "Observations deleted successfully",
    ),
    (
        "delete_relations",
        {"relations": [WORKS]},
        {"success": True, "message": "Relations deleted successfully"},
        "Relations deleted successfully",
    ),
    (
        "read_graph",
        {},
        {"entities": [ALICE_FRENCH, ACME], "relations": []},
        {"entities": [ALICE_FRENCH, ACME], "relations": []},
    ),
    (
        "delete_entities",
        {"entityNames": ["Alice", "Nobody"]},
        {"success": True, "message": "Entities deleted successfully"},
        "Entities deleted successfully",
    ),
    (
        "read_graph",
        {},
        {"entities": [ACME], "relations": []},
        {"entities": [ACME], "relations": []},
    ),
]


def test_the_nine_tools_answer_as_the_reference_server_on_the_same_inputs(tmp_path: Path) -> None:
    async def session(client: Client) -> None:
        for tool, arguments, structured, shown in SCENARIO:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, (tool, text(result))
            assert result.structured_content == structured, (tool, arguments)
            expected = shown if isinstance(shown, str) else json.dumps(shown, indent=2)
            assert text(result) == expected, tool
        error = await fails(
            client, "add_observations", {"observations": [{"entityName": "Bob", "contents": []}]}
        )
        assert "Entity with name Bob not found" in error

    serve(tmp_path, session, profile="reference")


def test_deletes_expire_and_history_keeps_what_was_deleted(tmp_path: Path) -> None:
    async def session(client: Client) -> None:
        await ok(client, "create_entities", {"entities": [ALICE, ACME]})
        await ok(client, "create_relations", {"relations": [WORKS]})
        await ok(client, "delete_entities", {"entityNames": ["Alice"]})
        assert (await ok(client, "open_nodes", {"names": ["Alice"]}))["entities"] == []
        # Acme lost its only relation but was not deleted: it stays, as in the reference
        assert (await ok(client, "read_graph"))["entities"] == [ACME]
        recreated = {"name": "Alice", "entityType": "person", "observations": []}
        assert (await ok(client, "create_entities", {"entities": [recreated]}))["entities"] == [
            recreated
        ]
        assert (await ok(client, "open_nodes", {"names": ["Alice"]}))["entities"] == [recreated]

    serve(tmp_path, session, profile="reference")
    with Memory(tmp_path / "mem", "test", provider="mock") as memory:
        history = memory.history("Alice")
        assert [(o.content, o.current) for o in history.observations][:2] == [
            ("likes tea", False),
            (DELETED_MARKER, False),
        ]
        assert [(r.type, r.current) for r in history.relations] == [("works_at", False)]


def test_read_graph_pages_with_a_cursor_and_every_item_appears_once(tmp_path: Path) -> None:
    count = 2 * PAGE_ENTITIES + 50
    people = [
        {"name": f"Person {i}", "entityType": "person", "observations": [f"was born in {i}"]}
        for i in range(count)
    ]
    links = [
        {"from": f"Person {i}", "to": f"Person {i + 1}", "relationType": "knows"}
        for i in range(count - 1)
    ]

    async def session(client: Client) -> None:
        await ok(client, "create_entities", {"entities": people})
        await ok(client, "create_relations", {"relations": links})
        names: list[str] = []
        relations: list[dict[str, str]] = []
        cursor = None
        while True:
            result = await client.call_tool("read_graph", {"cursor": cursor} if cursor else {})
            page = result.structured_content
            assert page is not None and len(text(result)) < 2 * PAGE_CHARS
            names += [e["name"] for e in page["entities"]]
            relations += page["relations"]
            cursor = page.get("nextCursor")
            if cursor is None:
                assert "note" not in page
                break
            assert len(page["entities"]) == PAGE_ENTITIES and "read_graph" in page["note"]
        assert names == [p["name"] for p in people]
        assert relations == links

    serve(tmp_path, session, profile="reference")


def test_an_entity_too_large_for_one_answer_is_cut_with_a_note(tmp_path: Path) -> None:
    facts = [f"fact number {i:04} " + "x" * 90 for i in range(500)]

    async def session(client: Client) -> None:
        big = {"name": "Big", "entityType": "thing", "observations": facts}
        await ok(client, "create_entities", {"entities": [big]})
        for tool, arguments in (("read_graph", {}), ("open_nodes", {"names": ["Big"]})):
            result = await client.call_tool(tool, arguments)
            [entity] = result.structured_content["entities"]  # type: ignore[index]
            assert 0 < len(entity["observations"]) < len(facts)
            assert entity["observations"][-1] == facts[-1]  # the newest are kept
            assert "too large" in result.structured_content["note"]  # type: ignore[index]
            assert len(text(result)) < 2 * PAGE_CHARS

    serve(tmp_path, session, profile="reference")


def test_search_nodes_ranks_by_meaning_rather_than_substring(tmp_path: Path) -> None:
    async def session(client: Client) -> None:
        await ok(
            client,
            "create_entities",
            {
                "entities": [
                    {"name": "Alice", "entityType": "person", "observations": ["drinks green tea"]},
                    {"name": "Bob", "entityType": "person", "observations": ["plays chess"]},
                ]
            },
        )
        # No entity contains "who drinks tea": the reference finds nothing.
        found = await ok(client, "search_nodes", {"query": "who drinks tea"})
        assert [e["name"] for e in found["entities"]] == ["Alice"]
        everything = await ok(client, "search_nodes", {"query": ""})
        assert [e["name"] for e in everything["entities"]] == ["Alice", "Bob"]

    serve(tmp_path, session, profile="reference")


BAD: list[tuple[str, dict[str, Any], str]] = [
    ("create_entities", {"entities": "Alice"}, "valid list"),
    ("create_entities", {"entities": [{"name": "Bob"}]}, "Field required"),
    (
        "create_entities",
        {"entities": [{"name": "", "entityType": "person", "observations": []}]},
        "is empty",
    ),
    (
        "create_entities",
        {"entities": [{"name": "B" * 300, "entityType": "person", "observations": []}]},
        "over 200",
    ),
    (
        "create_entities",
        {
            "entities": [
                {"name": f"P{i}", "entityType": "t", "observations": []}
                for i in range(MAX_BATCH + 1)
            ]
        },
        "over the 1,000 of one call",
    ),
    (
        "create_entities",
        {"entities": [{"name": "Huge", "entityType": "t", "observations": ["x" * 1_999] * 600}]},
        "over the 1,000,000 of one call",
    ),
    (
        "create_relations",
        {"relations": [{"from": "Alice", "to": "Nobody", "relationType": "knows"}]},
        "Entity with name Nobody not found",
    ),
    (
        "create_relations",
        {"relations": [{"from": "Alice", "to": "Alice", "relationType": ""}]},
        "is empty",
    ),
    (
        "add_observations",
        {
            "observations": [
                {"entityName": "Alice", "contents": ["new"]},
                {"entityName": "Nobody", "contents": ["x"]},
            ]
        },
        "Entity with name Nobody not found",
    ),
    (
        "add_observations",
        {"observations": [{"entityName": "Alice", "contents": [5]}]},
        "valid string",
    ),
    ("delete_entities", {"entityNames": "Alice"}, "valid list"),
    ("delete_relations", {"relations": [{"from": "Alice"}]}, "Field required"),
    ("read_graph", {"cursor": "bogus"}, "not one read_graph returned"),
    ("search_nodes", {"query": 5}, "valid string"),
    ("open_nodes", {"names": [1]}, "valid string"),
]


@pytest.mark.parametrize(("tool", "arguments", "message"), BAD)
def test_bad_arguments_are_tool_errors_that_change_nothing(
    tmp_path: Path, tool: str, arguments: dict[str, Any], message: str
) -> None:
    async def seed(client: Client) -> None:
        await ok(client, "create_entities", {"entities": [ALICE]})

    async def session(client: Client) -> None:
        error = await fails(client, tool, arguments)
        assert message in error, error

    serve(tmp_path, seed, profile="reference")
    before = _graph(tmp_path)
    serve(tmp_path, session, profile="reference")
    assert _graph(tmp_path) == before == {"entities": [ALICE], "relations": []}
