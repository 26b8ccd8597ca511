"""``memgraph mcp`` (serve a memory to MCP clients); a reference file is imported by
``memgraph import --format mcp-jsonl`` (load a
reference ``memory.jsonl``).

The SDK is imported only when the server starts: without it, ``memgraph mcp``
says how to install it and exits 2. Options left out here fall back to the ones
given before the command name (``memgraph --scope alice mcp``).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import socket
import sys
from pathlib import Path
from typing import Any

import click

__all__ = ["INSTALL_HINT", "OFFLINE_NOTICE", "TOKEN_ENV", "mcp_command"]

INSTALL_HINT = "install the MCP extra: pip install 'memgraph-kg[mcp]'"
OFFLINE_NOTICE = (
    "memgraph mcp: no provider configured and no API key set: running offline on the "
    "mock provider (set OPENAI_API_KEY or --provider for real extraction)"
)
TOKEN_ENV = "MEMGRAPH_MCP_TOKEN"
"""The environment variable holding the bearer token HTTP clients must send."""


def _option(name: str, value: Any) -> Any:
    """``value``, else the same option given to the ``memgraph`` group (``ctx.meta``)."""
    if value is not None:
        return value
    return click.get_current_context().meta.get(f"memgraph.{name}")


def _memory_options(function: Any) -> Any:
    options = [
        click.option("--dir", type=click.Path(path_type=Path), help="Memory directory."),
        click.option("--scope", help="Scope id: whose memory (default: $MEMGRAPH_SCOPE, default)."),
        click.option("--store", help="Store: files (default), memory, or a postgresql:// DSN."),
        click.option("--provider", help="Provider spec, e.g. mock or openai:gpt-4o-mini."),
        click.option(
            "--config",
            type=click.Path(path_type=Path, dir_okay=False),
            help="An agency.json to read the memory block from.",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _address(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not [HOST:]PORT", param_hint="--http") from None
    if not 0 <= number <= 65535:
        raise click.BadParameter(f"port {number} is out of range", param_hint="--http")
    return host, number


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guard(app: Any, token: str) -> Any:
    """``app`` behind ``Authorization: Bearer <token>`` (401 otherwise)."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"text/plain"),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": b"missing or wrong bearer token"})
                return
        await app(scope, receive, send)

    return guarded


@click.command("mcp")
@_memory_options
@click.option(
    "--compat",
    type=click.Choice(["reference"]),
    help="Offer the nine tools of @modelcontextprotocol/server-memory instead of memgraph's.",
)
@click.option(
    "--http",
    "http",
    metavar="[HOST:]PORT",
    help="Serve streamable HTTP on HOST:PORT (127.0.0.1 by default) instead of stdio.",
)
@click.option("--multi-scope", is_flag=True, help="Every tool takes a `scope` argument.")
@click.option("--extra-tools", is_flag=True, help="Also note, notes, kv_get and kv_set.")
def mcp_command(
    dir: Path | None,
    scope: str | None,
    store: str | None,
    provider: str | None,
    config: Path | None,
    compat: str | None,
    http: str | None,
    multi_scope: bool,
    extra_tools: bool,
) -> None:
    """Serve the memory to MCP clients (Claude Desktop, Cursor, VS Code, agents).

    stdio by default; --http [HOST:]PORT serves streamable HTTP at /mcp. Bound
    to anything but loopback, clients must send the bearer token in
    $MEMGRAPH_MCP_TOKEN (which is also checked on loopback when set).
    """
    try:
        from memgraph.mcp.server import ServerOptions, build_server
    except ImportError as error:
        if (error.name or "").split(".")[0] not in ("mcp", "mcp_types", "pydantic", "uvicorn"):
            raise
        click.echo(f"error: {INSTALL_HINT}", err=True)
        click.get_current_context().exit(2)
    options = ServerOptions(
        dir=str(d) if (d := _option("dir", dir)) is not None else None,
        scope=_option("scope", scope) or os.environ.get("MEMGRAPH_SCOPE") or "default",
        store=store,
        provider=_option("provider", provider),
        config=str(c) if (c := _option("config", config)) is not None else None,
        multi_scope=multi_scope,
        profile="reference" if compat == "reference" else "native",
        extra_tools=extra_tools,
    )
    server, pool = build_server(options)
    try:
        if not multi_scope and pool.get(None).offline:  # opens the scope: bad config fails now
            click.echo(OFFLINE_NOTICE, err=True)
        if http is None:
            server.run("stdio")
            return
        host, port = _address(http)
        token = os.environ.get(TOKEN_ENV)
        if not _loopback(host) and not token:
            raise click.UsageError(
                f"serving on {host} exposes the memory to the network: set {TOKEN_ENV} to a "
                "secret bearer token that clients must send, or bind to 127.0.0.1"
            )
        import uvicorn

        app = server.streamable_http_app(host=host)
        if token:
            app = _guard(app, token)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted connections inherit it: without it every answer (headers, then body)
        # waited ~40 ms on Nagle and the client's delayed ACK (48 ms vs 3.7 ms per call).
        listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        listener.bind((host, port))
        listener.listen(128)
        bound = listener.getsockname()[1]
        shown = f"[{host}]" if family == socket.AF_INET6 else host
        # Connections queue on the listening socket from here on: this line means ready.
        print(f"memgraph mcp: serving http://{shown}:{bound}/mcp", file=sys.stderr, flush=True)
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listener])
    finally:
        pool.close()
