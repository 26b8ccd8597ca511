"""``memgraph mcp``, native profile, in-process through the SDK's own client."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client, MCPDeprecationWarning
from mcp.types import ResourceUpdatedNotification

from memgraph import InvalidScope, Memory
from memgraph.cli import cli
from memgraph.mcp.server import RESOURCE, ServerOptions, build_server
from tests.mcp_support import fails, ok, serve, text

NATIVE = ["remember", "recall", "search", "forget", "entity"]
EXTRA = ["note", "notes", "kv_get", "kv_set"]


def _stats(tmp_path: Path, scope: str = "test") -> dict[str, int]:
    with Memory(tmp_path / "mem", scope, provider="mock") as memory:
        return memory.stats()


def test_native_profile_lists_five_tools_with_descriptions_and_output_schemas(
    tmp_path: Path,
) -> None:
    async def session(client: Client) -> None:
        listed = (await client.list_tools()).tools
        assert [t.name for t in listed] == NATIVE
        for tool in listed:
            assert tool.description and len(tool.description) > 60, tool.name
            assert tool.output_schema is not None and tool.output_schema["type"] == "object"
            assert "scope" not in tool.input_schema["properties"]
        hints = {t.name: t.annotations for t in listed}
        assert hints["recall"] is not None and hints["recall"].read_only_hint
        assert hints["forget"] is not None and hints["forget"].destructive_hint
        assert client.server_info is not None and client.server_info.name == "memgraph"

    serve(tmp_path, session)


def test_remember_recall_search_and_entity_answer_with_structure_and_text(tmp_path: Path) -> None:
    async def session(client: Client) -> None:
        said = "Alice works at Acme. She prefers tea."
        learned = await ok(client, "remember", {"text": said, "source": "chat"})
        assert {(f["entity"], f["fact"]) for f in learned["added"]} == {
            ("Alice", "works at Acme"),
            ("Alice", "prefers tea"),
        }
        assert learned["episode"] and learned["added"][0]["source"] == "chat"
        result = await client.call_tool("remember", {"text": said})
        assert text(result) == "Nothing new to remember."

        recalled = await client.call_tool("recall", {"query": "where does alice work?"})
        assert "works at Acme" in text(recalled)
        assert recalled.structured_content == {
            "query": "where does alice work?",
            "text": text(recalled),
            "as_of": None,
        }

        found = await ok(client, "search", {"query": "alice tea", "k": 3})
        top = found["hits"][0]
        assert (top["entity"], top["fact"], top["episode_text"]) == ("Alice", "prefers tea", said)

        alice = await ok(client, "entity", {"name": "alice"})
        assert alice["name"] == "Alice" and alice["facts_total"] == 2
        assert {f["fact"] for f in alice["facts"]} == {"works at Acme", "prefers tea"}

    serve(tmp_path, session)


def test_forget_expires_facts_and_entity_still_shows_their_history(tmp_path: Path) -> None:
    async def session(client: Client) -> None:
        await ok(client, "remember", {"text": "Alice likes tea."})
        forgotten = await ok(client, "forget", {"request": "alice likes tea"})
        assert [f["fact"] for f in forgotten["expired"]] == ["likes tea"]
        recalled = await ok(client, "recall", {"query": "what does alice like"})
        assert "likes tea" not in recalled["text"]
        [fact] = (await ok(client, "entity", {"name": "Alice"}))["facts"]
        assert fact["fact"] == "likes tea" and fact["valid_to"] is not None

    serve(tmp_path, session)


def test_recall_and_search_as_of_read_the_memory_as_it_was(tmp_path: Path) -> None:
    async def session(client: Client) -> None:
        await ok(client, "remember", {"text": "Alice works at Acme.", "at": "2020-01-01"})
        await ok(client, "remember", {"text": "Alice works at Globex.", "at": "2024-01-01"})
        now = await ok(client, "recall", {"query": "where does alice work"})
        then = await ok(client, "recall", {"query": "where does alice work", "as_of": "2021-06-01"})
        assert "Globex" in now["text"] and "Acme" not in now["text"]
        assert "works at Acme" in then["text"] and then["as_of"].startswith("2021-06-01")
        hits = await ok(client, "search", {"query": "alice work", "as_of": "2021-06-01"})
        assert {h["fact"] for h in hits["hits"]} == {"works at Acme"}

    serve(tmp_path, session)


def test_extra_tools_keep_notes_and_versioned_keys(tmp_path: Path) -> None:
    async def session(client: Client) -> None:
        assert [t.name for t in (await client.list_tools()).tools] == NATIVE + EXTRA
        stored = await ok(
            client,
            "note",
            {"content": "API is slow on Mondays", "category": "learning", "tags": ["api"]},
        )
        assert stored["category"] == "learning" and stored["tags"] == ["api"]
        listed = await ok(client, "notes", {"tags": ["api"]})
        assert [n["content"] for n in listed["notes"]] == ["API is slow on Mondays"]
        assert (await ok(client, "kv_get", {"key": "name"}))["value"] is None
        await ok(client, "kv_set", {"key": "name", "value": "ada"})
        latest = await ok(client, "kv_set", {"key": "name", "value": {"full": "ada lovelace"}})
        assert latest == {"key": "name", "value": {"full": "ada lovelace"}, "version": 2}
        result = await client.call_tool("kv_get", {"key": "name"})
        assert text(result) == 'name = {"full":"ada lovelace"} (version 2)'

    serve(tmp_path, session, extra_tools=True)


BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("remember", {"text": ""}, "text is empty"),
    ("remember", {"text": "   "}, "text is empty"),
    ("remember", {"text": 5}, "valid string"),
    ("remember", {}, "Field required"),
    ("remember", {"text": "Alice likes tea." * 7_000}, "over the 100,000 limit"),
    ("remember", {"text": "Alice likes tea.", "at": "not a time"}, "not a time"),
    ("recall", {"query": ""}, "non-empty query"),
    ("recall", {"query": ["a"]}, "valid string"),
    ("recall", {"query": "alice", "as_of": "yesterday-ish"}, "yesterday-ish"),
    ("search", {"query": "alice", "k": 0}, "k must be between 1 and 50"),
    ("search", {"query": "alice", "k": 10_000}, "k must be between 1 and 50"),
    ("search", {"query": "alice", "k": "many"}, "valid integer"),
    ("forget", {"request": ""}, "non-empty query"),
    ("entity", {"name": "Nobody"}, "no entity named 'Nobody'"),
    ("notes", {"category": "gossip"}, "Input should be"),
    ("note", {"content": "", "category": "learning"}, "1 to 10,000 characters"),
    ("kv_set", {"key": "", "value": 1}, "keys must not be empty"),
]


@pytest.mark.parametrize(("tool", "arguments", "message"), BAD_CALLS)
def test_bad_arguments_are_tool_errors_that_change_nothing(
    tmp_path: Path, tool: str, arguments: dict[str, Any], message: str
) -> None:
    async def session(client: Client) -> None:
        error = await fails(client, tool, arguments)
        assert error.startswith(f"Error executing tool {tool}")
        assert message in error

    serve(tmp_path, session, extra_tools=True)
    assert _stats(tmp_path)["observations"] == 0


def test_multi_scope_tools_require_a_scope_and_keep_scopes_apart(tmp_path: Path) -> None:
    async def session(client: Client) -> None:
        for tool in (await client.list_tools()).tools:
            assert "scope" in tool.input_schema["required"], tool.name
        await ok(client, "remember", {"text": "Alice likes tea.", "scope": "alice"})
        mine = await ok(client, "recall", {"query": "what does alice like", "scope": "alice"})
        theirs = await ok(client, "recall", {"query": "what does alice like", "scope": "bob"})
        assert "likes tea" in mine["text"] and theirs["text"] == ""
        assert "Field required" in await fails(client, "recall", {"query": "tea"})
        assert "scope" in await fails(client, "recall", {"query": "tea", "scope": "../etc"})
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == [RESOURCE + "/{scope}"]
        page = await client.read_resource(RESOURCE + "/alice")
        assert "likes tea" in page.contents[0].text  # type: ignore[union-attr]

    serve(tmp_path, session, multi_scope=True)
    assert _stats(tmp_path, "alice")["observations"] == 1
    assert _stats(tmp_path, "bob")["observations"] == 0


def test_the_resource_is_the_current_graph_as_json(tmp_path: Path) -> None:
    async def session(client: Client) -> None:
        [resource] = (await client.list_resources()).resources
        assert (str(resource.uri), resource.mime_type) == (RESOURCE, "application/json")
        await ok(client, "remember", {"text": "Alice works at Acme."})
        [contents] = (await client.read_resource(RESOURCE)).contents
        assert contents.mime_type == "application/json"
        assert '"works at Acme"' in contents.text  # type: ignore[union-attr]

    serve(tmp_path, session)


def test_writes_notify_listeners_of_the_resource(tmp_path: Path) -> None:
    async def session(client: Client) -> None:
        async with client.listen(resource_subscriptions=[RESOURCE]) as events:
            await ok(client, "recall", {"query": "alice"})  # a read publishes nothing
            await ok(client, "remember", {"text": "Alice works at Acme."})
            with anyio.fail_after(5):
                event = await events.__anext__()
            assert getattr(event, "uri", None) == RESOURCE

    serve(tmp_path, session)


def test_writes_notify_sessions_that_subscribed_the_2025_way(tmp_path: Path) -> None:
    updated: list[str] = []
    arrived = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            updated.append(message.params.uri)
            arrived.set()

    async def session(client: Client) -> None:
        assert client.server_capabilities.resources is not None
        assert client.server_capabilities.resources.subscribe
        with pytest.warns(MCPDeprecationWarning):  # removed from the 2026 protocol
            await client.subscribe_resource(RESOURCE)
        await ok(client, "remember", {"text": "Alice works at Acme."})
        with anyio.fail_after(5):
            await arrived.wait()

    serve(tmp_path, session, mode="legacy", message_handler=on_message)
    assert updated == [RESOURCE]


def test_importing_memgraph_and_its_cli_never_imports_the_sdk() -> None:
    code = (
        "import sys, memgraph, memgraph.cli, memgraph.mcp, memgraph.mcp.compat, "
        "memgraph.mcp.reference_file, memgraph.mcp.tools\n"
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_memgraph_mcp_package_does_not_shadow_the_sdk() -> None:
    import mcp

    from memgraph.mcp import server

    assert "memgraph" not in Path(mcp.__file__ or "").parts
    assert server.MCPServer.__module__.startswith("mcp.server")


def test_a_server_with_a_bad_scope_fails_at_start(tmp_path: Path) -> None:
    with pytest.raises(InvalidScope):
        build_server(ServerOptions(dir=str(tmp_path), scope="../etc", provider="mock"))
    result = CliRunner().invoke(cli, ["--dir", "mem", "mcp", "--scope", "../etc"])
    assert result.exit_code == 2 and "scope" in result.stderr
