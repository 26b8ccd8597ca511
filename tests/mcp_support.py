"""Helpers for the MCP server tests: an in-process client session, and tool-call shortcuts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.types import CallToolResult, TextContent

from memgraph.mcp.server import ServerOptions, build_server

Session = Callable[[Client], Awaitable[None]]


def serve(
    tmp_path: Path,
    session: Session,
    *,
    mode: str = "auto",
    message_handler: Any = None,
    **options: Any,
) -> None:
    """Run ``session`` against an in-process server on ``tmp_path`` (mock provider).

    ``mode="legacy"`` speaks the 2025 protocol (initialize handshake) instead of
    2026-07-28; ``message_handler`` receives the server's notifications.
    """
    settings = {"dir": str(tmp_path / "mem"), "scope": "test", "provider": "mock", **options}
    server, pool = build_server(ServerOptions(**settings))

    async def main() -> None:
        async with Client(server, mode=mode, message_handler=message_handler) as client:
            await session(client)

    try:
        anyio.run(main)
    finally:
        pool.close()


def text(result: CallToolResult) -> str:
    """The text of a tool result's single text block."""
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


async def ok(client: Client, tool: str, arguments: dict[str, Any] | None = None) -> Any:
    """Call ``tool``, assert it succeeded, return its structured content."""
    result = await client.call_tool(tool, arguments or {})
    assert not result.is_error, text(result)
    return result.structured_content


async def fails(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    """Call ``tool``, assert it was a tool error, return the message."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result
    assert result.structured_content is None
    return text(result)
