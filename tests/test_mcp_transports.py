"""``memgraph mcp`` as real processes: stdio, streamable HTTP, several servers on one scope."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from click.testing import CliRunner
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from memgraph import Memory
from memgraph.cli import cli
from memgraph.mcp.cli import INSTALL_HINT, TOKEN_ENV
from tests.mcp_support import ok

ENV = {"MEMGRAPH_PROVIDER": "mock", "PYTHONUTF8": "1"}


def _stdio(tmp_path: Path, *args: str) -> StdioServerParameters:
    command = ["-m", "memgraph", "mcp", "--dir", str(tmp_path / "mem"), "--scope", "shared"]
    return StdioServerParameters(command=sys.executable, args=[*command, *args], env=ENV)


@contextmanager
def _http_server(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """A ``memgraph mcp --http 127.0.0.1:0`` process; yields its URL once it listens."""
    command = [sys.executable, "-m", "memgraph", "mcp", "--dir", str(tmp_path / "mem")]
    process = subprocess.Popen(
        [*command, "--scope", "shared", "--http", "127.0.0.1:0", *args],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **ENV, **(env or {})},
    )
    assert process.stderr is not None
    try:
        line = process.stderr.readline()  # printed once the socket listens
        assert "serving http://" in line, line + process.stderr.read()
        threading.Thread(target=process.stderr.read, daemon=True).start()  # keep it drained
        yield line.split()[-1]
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stderr.close()


def _entities(tmp_path: Path) -> dict[str, list[str]]:
    with Memory(tmp_path / "mem", "shared", provider="mock") as memory:
        return {e.name: [o.content for o in e.current_observations] for e in memory.entities()}


async def _remember_all(client: Client, names: list[str]) -> None:
    for name in names:
        await ok(client, "remember", {"text": f"{name} lives in Paris."})


def test_an_http_and_a_stdio_server_share_a_scope_and_lose_nothing_writing_at_once(
    tmp_path: Path,
) -> None:
    with _http_server(tmp_path) as url:

        async def main() -> None:
            async with (
                Client(url) as web,
                Client(_stdio(tmp_path), mode="legacy") as local,  # the initialize handshake
            ):
                for client in (web, local):
                    assert client.server_info is not None
                    assert client.server_info.name == "memgraph"
                    tools = [t.name for t in (await client.list_tools()).tools]
                    assert tools == ["remember", "recall", "search", "forget", "entity"]
                await ok(web, "remember", {"text": "Alice works at Acme."})
                seen = await ok(local, "recall", {"query": "where does alice work"})
                assert "works at Acme" in seen["text"]  # another process's write
                async with anyio.create_task_group() as group:
                    group.start_soon(_remember_all, web, ["Ann", "Ben", "Cid", "Dee"])
                    group.start_soon(_remember_all, local, ["Eve", "Fay", "Gus", "Hal"])
                back = await ok(web, "recall", {"query": "who lives in Paris"})
                assert "Hal" in back["text"]

        anyio.run(main)
    found = _entities(tmp_path)
    for name in ("Ann", "Ben", "Cid", "Dee", "Eve", "Fay", "Gus", "Hal"):
        assert found[name] == ["lives in Paris"], name


def test_two_servers_writing_one_scope_at_once_lose_nothing(tmp_path: Path) -> None:
    count = 10

    async def writer(client: Client, tag: str) -> None:
        for i in range(count):
            person = {"name": f"{tag}{i}", "entityType": "person", "observations": [f"{tag} fact"]}
            await ok(client, "create_entities", {"entities": [person]})
            shared = [{"entityName": "Shared", "contents": [f"seen by {tag}{i}"]}]
            await ok(client, "add_observations", {"observations": shared})

    async def main() -> None:
        reference = _stdio(tmp_path, "--compat", "reference")
        async with Client(reference) as first, Client(reference) as second:
            shared = {"name": "Shared", "entityType": "thing", "observations": []}
            await ok(first, "create_entities", {"entities": [shared]})
            async with anyio.create_task_group() as group:
                group.start_soon(writer, first, "A")
                group.start_soon(writer, second, "B")

    anyio.run(main)
    found = _entities(tmp_path)
    assert {f"{tag}{i}" for tag in "AB" for i in range(count)} <= found.keys()
    assert sorted(found["Shared"]) == sorted(f"seen by {t}{i}" for t in "AB" for i in range(count))


def test_an_http_server_with_a_token_refuses_requests_without_it(tmp_path: Path) -> None:
    with _http_server(tmp_path, env={TOKEN_ENV: "s3cret"}) as url:
        assert httpx2.post(url, json={}).status_code == 401
        wrong = httpx2.post(url, json={}, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and wrong.headers["www-authenticate"] == "Bearer"

        async def main() -> None:
            headers = {"Authorization": "Bearer s3cret"}
            async with (
                httpx2.AsyncClient(headers=headers) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                assert len((await client.list_tools()).tools) == 5

        anyio.run(main)


def test_serving_beyond_loopback_without_a_token_is_refused(monkeypatch: Any) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    result = CliRunner().invoke(cli, ["--dir", "mem", "mcp", "--http", "0.0.0.0:0"])
    assert result.exit_code == 2 and TOKEN_ENV in result.stderr


def test_memgraph_mcp_without_the_sdk_says_how_to_install_it() -> None:
    code = "import sys; sys.modules['mcp'] = None\nfrom memgraph.cli import main\nmain(['mcp'])"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **ENV}
    )
    assert done.returncode == 2
    assert done.stderr.strip() == f"error: {INSTALL_HINT}"


def _readme_servers() -> list[list[str]]:
    """The ``args`` of every stdio server in the README's MCP client snippets."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme[readme.index("## Use from an MCP client") :]
    section = section[: section.index("\n## ", 1)]
    found = []
    for block in section.split("```json\n")[1:]:
        config = json.loads(block[: block.index("```")])
        for server in (config.get("mcpServers") or config.get("servers") or {}).values():
            if server.get("command") == "memgraph":
                found.append(server["args"])
    return found


def test_the_readme_client_configs_start_a_working_server(tmp_path: Path) -> None:
    configs = _readme_servers()
    assert len(configs) == 3

    async def check(args: list[str]) -> None:
        args = [str(tmp_path / "mem") if a.endswith("/.memgraph") else a for a in args]
        assert args[0] == "mcp"
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "memgraph", *args], env=ENV
        )
        async with Client(params, mode="legacy") as client:
            tools = (await client.list_tools()).tools
            assert len(tools) == (9 if "--compat" in args else 5), args

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for args in configs:
                group.start_soon(check, args)

    anyio.run(main)
