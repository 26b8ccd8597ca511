"""The ``memgraph mcp`` server, on the official MCP Python SDK (``MCPServer``).

Two profiles: the native tools (:mod:`memgraph.mcp.tools`) or, with
``profile="reference"``, the nine tools of ``@modelcontextprotocol/server-memory``
(:mod:`memgraph.mcp.compat`). Every tool answers with structured content (its
result type, published as the output schema) and text for the model. A bad
argument is a tool error (``isError``) that changed nothing.

The resource ``memory://knowledge-graph`` (``memory://knowledge-graph/{scope}``
with several scopes) is the current graph, bounded to one page; after every
write the server publishes ``notifications/resources/updated`` to
``subscriptions/listen`` streams (2026-07-28 clients) and to the sessions that
called ``resources/subscribe`` (earlier clients).

Tools run the blocking memory calls on worker threads; ``Memory`` serializes
its own work and the store's lock coordinates processes.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypeVar

import anyio.to_thread
from mcp import types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.subscriptions import ResourceUpdated
from pydantic import Field
from typing_extensions import TypedDict  # pydantic needs it below 3.12; the SDK requires it

from memgraph import (
    ConfigError,
    MemgraphError,
    Memory,
    ProviderError,
    StoreConflict,
    StoreError,
    __version__,
)
from memgraph.mcp import compat, tools

__all__ = ["RESOURCE", "MemoryPool", "ServerOptions", "build_server"]

RESOURCE = "memory://knowledge-graph"
"""The URI of the current graph (``RESOURCE + "/" + scope`` with several scopes)."""

T = TypeVar("T")
Profile = Literal["native", "reference"]

_INSTRUCTIONS = (
    "Long-term memory as a knowledge graph (memgraph): entities, facts about them that "
    "hold from a time until they are retired, and relations. Remember what the user "
    "tells you that will matter later; recall or search before answering questions "
    "about the user, their people, projects and preferences. Forgetting retires facts; "
    "their history stays."
)


@dataclass(frozen=True)
class ServerOptions:
    """How to open memories and which tools to offer.

    Attributes:
        dir, store, provider, config: as for :class:`memgraph.Memory`.
        scope: the scope every tool works on (single-scope servers).
        multi_scope: every tool takes a required ``scope`` argument instead.
        profile: ``"native"`` (memgraph's tools) or ``"reference"`` (the nine
            tools of the reference memory server).
        extra_tools: with the native profile, also ``note``, ``notes``,
            ``kv_get`` and ``kv_set``.
    """

    dir: str | None = None
    scope: str = "default"
    store: str | None = None
    provider: str | None = None
    config: str | None = None
    multi_scope: bool = False
    profile: Profile = "native"
    extra_tools: bool = False


@dataclass
class MemoryPool:
    """The open memories of a server, one per scope, opened on first use."""

    options: ServerOptions
    _open: dict[str, Memory] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, scope: str | None) -> Memory:
        """The memory of ``scope`` (the server's own when not multi-scope).

        Raises:
            InvalidScope: the scope id breaks the naming rule.
        """
        name = scope if self.options.multi_scope and scope is not None else self.options.scope
        with self._lock:
            memory = self._open.get(name)
            if memory is None:
                memory = Memory(
                    self.options.dir,
                    name,
                    provider=self.options.provider,
                    config=self.options.config,
                    store=self.options.store,
                )
                self._open[name] = memory
            return memory

    def close(self) -> None:
        """Close every open memory."""
        with self._lock:
            for memory in self._open.values():
                memory.close()
            self._open.clear()


# ----------------------------------------------------------------- arguments
ScopeArg = Annotated[
    str,
    Field(
        description="Whose memory: a scope id such as a user or workspace name ([A-Za-z0-9._-])."
    ),
]
TimeArg = Annotated[
    str | None,
    Field(description="An ISO-8601 time, e.g. 2025-01-31 or 2025-01-31T09:00:00Z."),
]

_READ = types.ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
_WRITE = types.ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
_DELETE = types.ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)


def _message(error: Exception) -> str:
    if isinstance(error, StoreConflict):
        return f"the memory is busy (another writer holds it): {error}; try again"
    if isinstance(error, ProviderError):
        return f"the model provider failed: {error}"
    if isinstance(error, StoreError):
        return f"the memory could not be read or written: {error}"
    return str(error)


class _Subscribers:
    """Connections that subscribed to a resource with ``resources/subscribe`` (2025-era
    clients), each reached through the session of its subscribe request."""

    def __init__(self) -> None:
        self.by_uri: dict[str, dict[int, ServerSession]] = {}

    @staticmethod
    def _key(session: ServerSession) -> int:
        # A ServerSession lives for one request; its connection for the client's
        # whole connection (the SDK exposes no public handle for it).
        return id(getattr(session, "_connection", session))

    async def subscribe(self, ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        self.by_uri.setdefault(str(params.uri), {})[self._key(ctx.session)] = ctx.session
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: Any, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self.by_uri.get(str(params.uri), {}).pop(self._key(ctx.session), None)
        return types.EmptyResult()

    async def notify(self, uri: str) -> None:
        sessions = self.by_uri.get(uri, {})
        for key, session in list(sessions.items()):
            try:
                await session.send_resource_updated(uri)
            except Exception:  # a closed connection only loses its subscription
                sessions.pop(key, None)


class _Runtime:
    """What every tool shares: the memories, and the notifications after writes."""

    def __init__(self, options: ServerOptions, bus: InMemorySubscriptionBus) -> None:
        self.options = options
        self.pool = MemoryPool(options)
        self.bus = bus
        self.sessions = _Subscribers()

    def uri(self, scope: str | None) -> str:
        if self.options.multi_scope:
            return f"{RESOURCE}/{scope}"
        return RESOURCE

    async def call(self, scope: str | None, work: Callable[[Memory], T], *, write: bool) -> T:
        """Run ``work`` on the scope's memory in a worker thread; errors become tool errors."""

        def run() -> T:
            return work(self.pool.get(scope))

        try:
            result = await anyio.to_thread.run_sync(run)
        except (MemgraphError, ValueError, TypeError) as error:
            raise ToolError(_message(error)) from error
        if write:
            uri = self.uri(scope)
            await self.bus.publish(ResourceUpdated(uri=uri))
            await self.sessions.notify(uri)
        return result


def _text_result(text: str, structured: Mapping[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=dict(structured)
    )


def _native(result: Any) -> types.CallToolResult:
    return _text_result(tools.render(result), dataclasses.asdict(result))


def _reference(value: Any, structured: Mapping[str, Any]) -> types.CallToolResult:
    """The reference server's answer: ``JSON.stringify(value, null, 2)`` as text."""
    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
    return _text_result(text, structured)


def _scoped(fn: Callable[..., Awaitable[Any]], multi_scope: bool) -> Callable[..., Any]:
    """``fn`` as published: its ``scope`` parameter required with several scopes, gone otherwise."""
    signature = inspect.signature(fn, eval_str=True)
    parameters = [p for p in signature.parameters.values() if p.name != "scope"]
    if multi_scope:
        parameters.append(
            inspect.Parameter("scope", inspect.Parameter.KEYWORD_ONLY, annotation=ScopeArg)
        )

    async def published(**arguments: Any) -> Any:
        return await fn(**arguments)

    published.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    published.__annotations__ = {p.name: p.annotation for p in parameters}
    published.__annotations__["return"] = signature.return_annotation
    published.__name__ = fn.__name__
    published.__doc__ = fn.__doc__
    return published


# --------------------------------------------------------------------- native
def _native_tools(rt: _Runtime) -> list[tuple[Callable[..., Any], str, types.ToolAnnotations]]:
    async def remember(
        text: Annotated[
            str,
            Field(description="What was said or learned, in plain language (up to 100,000 chars)."),
        ],
        at: TimeArg = None,
        source: Annotated[
            str | None, Field(description="Where it came from (an agent, a channel).")
        ] = None,
        scope: str | None = None,
    ) -> Annotated[types.CallToolResult, tools.RememberResult]:
        """Store what the user said or what you learned. memgraph extracts the entities,
        facts and relations, keeps the text as their source, and retires facts the new
        text replaces (a new employer, a new address). `at` is when it was said."""
        result = await rt.call(
            scope, lambda m: tools.remember(m, text, at=at, source=source), write=True
        )
        return _native(result)

    async def recall(
        query: Annotated[str, Field(description="What you want to know, in plain language.")],
        as_of: Annotated[
            str | None,
            Field(description="Read the memory as it was at this ISO-8601 time."),
        ] = None,
        scope: str | None = None,
    ) -> Annotated[types.CallToolResult, tools.RecallResult]:
        """Recall the facts relevant to a question, grouped by entity, as text ready to
        use. Empty when nothing relevant is known. Use it before answering questions
        about the user, their people, projects and preferences."""
        result = await rt.call(scope, lambda m: tools.recall(m, query, as_of=as_of), write=False)
        return _native(result)

    async def search(
        query: Annotated[str, Field(description="What to look for.")],
        k: Annotated[int, Field(description="How many hits at most (1-50).")] = 10,
        as_of: Annotated[
            str | None, Field(description="Search the memory as it was at this ISO-8601 time.")
        ] = None,
        scope: str | None = None,
    ) -> Annotated[types.CallToolResult, tools.SearchResult]:
        """Ranked facts matching a query, each with its score, validity and provenance
        (the text it was learned from). Use it to check where a fact came from."""
        result = await rt.call(
            scope, lambda m: tools.search(m, query, k=k, as_of=as_of), write=False
        )
        return _native(result)

    async def forget(
        request: Annotated[
            str,
            Field(description="What to forget, e.g. 'Alice's old phone number'."),
        ],
        scope: str | None = None,
    ) -> Annotated[types.CallToolResult, tools.ForgetResult]:
        """Retire the facts a request describes, when the user asks you to forget
        something or a fact is no longer true. Retired facts leave recall and search;
        their history stays."""
        result = await rt.call(scope, lambda m: tools.forget(m, request), write=True)
        return _native(result)

    async def entity(
        name: Annotated[str, Field(description="The entity's name (case does not matter).")],
        scope: str | None = None,
    ) -> Annotated[types.CallToolResult, tools.EntityResult]:
        """Everything known about one entity, with its history: current and retired
        facts and relations, newest first, each with when it held."""
        result = await rt.call(scope, lambda m: tools.entity(m, name), write=False)
        return _native(result)

    found: list[tuple[Callable[..., Any], str, types.ToolAnnotations]] = [
        (remember, "Remember", _WRITE),
        (recall, "Recall", _READ),
        (search, "Search memory", _READ),
        (forget, "Forget", _DELETE),
        (entity, "Entity and history", _READ),
    ]
    if not rt.options.extra_tools:
        return found

    async def note(
        content: Annotated[str, Field(description="The note, stored verbatim.")],
        category: Annotated[
            Literal["preference", "rule", "learning", "decision", "context"],
            Field(description="What kind of note it is."),
        ],
        tags: Annotated[list[str], Field(description="Tags to find it by.")] = [],  # noqa: B006
        scope: str | None = None,
    ) -> Annotated[types.CallToolResult, tools.NoteResult]:
        """Store a note verbatim (no interpretation): a preference, rule, learning,
        decision or piece of context, with optional tags."""
        result = await rt.call(
            scope, lambda m: tools.note(m, content, category=category, tags=tags), write=True
        )
        return _native(result)

    async def notes(
        category: Annotated[
            Literal["preference", "rule", "learning", "decision", "context"] | None,
            Field(description="Only notes of this category."),
        ] = None,
        tags: Annotated[list[str], Field(description="Only notes with any of these tags.")] = [],  # noqa: B006
        search: Annotated[str | None, Field(description="Only notes containing this text.")] = None,
        limit: Annotated[int, Field(description="At most this many (1-100).")] = 20,
        scope: str | None = None,
    ) -> Annotated[types.CallToolResult, tools.NotesResult]:
        """List current notes, newest first, optionally filtered."""
        result = await rt.call(
            scope,
            lambda m: tools.notes(m, category=category, tags=tags, search=search, limit=limit),
            write=False,
        )
        return _native(result)

    async def kv_get(
        key: Annotated[str, Field(description="The key.")],
        scope: str | None = None,
    ) -> Annotated[types.CallToolResult, tools.KeyValue]:
        """Read a value stored under a key (null when unset)."""
        return _native(await rt.call(scope, lambda m: tools.kv_get(m, key), write=False))

    async def kv_set(
        key: Annotated[str, Field(description="The key.")],
        value: Annotated[Any, Field(description="Any JSON value.")],
        scope: str | None = None,
    ) -> Annotated[types.CallToolResult, tools.KeyValue]:
        """Store a JSON value under a key; earlier values are kept as versions."""
        return _native(await rt.call(scope, lambda m: tools.kv_set(m, key, value), write=True))

    return [
        *found,
        (note, "Note", _WRITE),
        (notes, "Notes", _READ),
        (kv_get, "Read a key", _READ),
        (kv_set, "Set a key", _WRITE),
    ]


# ------------------------------------------------------------------ reference
class _EntityArg(TypedDict):
    name: Annotated[str, Field(description="The name of the entity")]
    entityType: Annotated[str, Field(description="The type of the entity")]
    observations: Annotated[
        list[str],
        Field(description="An array of observation contents associated with the entity"),
    ]


_RelationArg = TypedDict(
    "_RelationArg",
    {
        "from": Annotated[
            str, Field(description="The name of the entity where the relation starts")
        ],
        "to": Annotated[str, Field(description="The name of the entity where the relation ends")],
        "relationType": Annotated[str, Field(description="The type of the relation")],
    },
)


class _ObservationArg(TypedDict):
    entityName: Annotated[
        str, Field(description="The name of the entity to add the observations to")
    ]
    contents: Annotated[list[str], Field(description="An array of observation contents to add")]


class _DeletionArg(TypedDict):
    entityName: Annotated[
        str, Field(description="The name of the entity containing the observations")
    ]
    observations: Annotated[list[str], Field(description="An array of observations to delete")]


def _reference_tools(
    rt: _Runtime,
) -> list[tuple[Callable[..., Any], str, types.ToolAnnotations]]:
    def view(memory: Memory) -> compat.ReferenceGraph:
        return compat.ReferenceGraph(memory)

    async def create_entities(
        entities: list[_EntityArg], scope: str | None = None
    ) -> Annotated[types.CallToolResult, compat.CreatedEntities]:
        """Create multiple new entities in the knowledge graph"""
        created = await rt.call(
            scope, lambda m: view(m).create_entities([dict(e) for e in entities]), write=True
        )
        return _reference(created, {"entities": created})

    async def create_relations(
        relations: list[_RelationArg], scope: str | None = None
    ) -> Annotated[types.CallToolResult, compat.CreatedRelations]:
        """Create multiple new relations between entities in the knowledge graph. Relations should be in active voice"""
        created = await rt.call(
            scope, lambda m: view(m).create_relations([dict(r) for r in relations]), write=True
        )
        return _reference(created, {"relations": created})

    async def add_observations(
        observations: list[_ObservationArg], scope: str | None = None
    ) -> Annotated[types.CallToolResult, compat.ObservationResults]:
        """Add new observations to existing entities in the knowledge graph"""
        results = await rt.call(
            scope,
            lambda m: view(m).add_observations([dict(o) for o in observations]),
            write=True,
        )
        return _reference(results, {"results": results})

    async def delete_entities(
        entityNames: Annotated[list[str], Field(description="An array of entity names to delete")],
        scope: str | None = None,
    ) -> Annotated[types.CallToolResult, compat.Status]:
        """Delete multiple entities and their associated relations from the knowledge graph"""
        status = await rt.call(scope, lambda m: view(m).delete_entities(entityNames), write=True)
        return _reference(status["message"], status)

    async def delete_observations(
        deletions: list[_DeletionArg], scope: str | None = None
    ) -> Annotated[types.CallToolResult, compat.Status]:
        """Delete specific observations from entities in the knowledge graph"""
        status = await rt.call(
            scope, lambda m: view(m).delete_observations([dict(d) for d in deletions]), write=True
        )
        return _reference(status["message"], status)

    async def delete_relations(
        relations: Annotated[
            list[_RelationArg], Field(description="An array of relations to delete")
        ],
        scope: str | None = None,
    ) -> Annotated[types.CallToolResult, compat.Status]:
        """Delete multiple relations from the knowledge graph"""
        status = await rt.call(
            scope, lambda m: view(m).delete_relations([dict(r) for r in relations]), write=True
        )
        return _reference(status["message"], status)

    async def read_graph(
        cursor: Annotated[
            str | None,
            Field(description="memgraph: the nextCursor of the previous page, for the next one"),
        ] = None,
        scope: str | None = None,
    ) -> Annotated[types.CallToolResult, compat.GraphPage]:
        """Read the entire knowledge graph (memgraph: a page at a time; a long graph answers with nextCursor)"""
        page = await rt.call(scope, lambda m: view(m).read_graph(cursor), write=False)
        return _reference(page, page)

    async def search_nodes(
        query: Annotated[
            str,
            Field(
                description="The search query to match against entity names, types, and observation content"
            ),
        ],
        scope: str | None = None,
    ) -> Annotated[types.CallToolResult, compat.GraphPage]:
        """Search for nodes in the knowledge graph based on a query"""
        page = await rt.call(scope, lambda m: view(m).search_nodes(query), write=False)
        return _reference(page, page)

    async def open_nodes(
        names: Annotated[list[str], Field(description="An array of entity names to retrieve")],
        scope: str | None = None,
    ) -> Annotated[types.CallToolResult, compat.GraphPage]:
        """Open specific nodes in the knowledge graph by their names"""
        page = await rt.call(scope, lambda m: view(m).open_nodes(names), write=False)
        return _reference(page, page)

    return [
        (create_entities, "Create Entities", _WRITE),
        (create_relations, "Create Relations", _WRITE),
        (add_observations, "Add Observations", _WRITE),
        (delete_entities, "Delete Entities", _DELETE),
        (delete_observations, "Delete Observations", _DELETE),
        (delete_relations, "Delete Relations", _DELETE),
        (read_graph, "Read Graph", _READ),
        (search_nodes, "Search Nodes", _READ),
        (open_nodes, "Open Nodes", _READ),
    ]


# --------------------------------------------------------------------- server
def build_server(options: ServerOptions) -> tuple[MCPServer[Any], MemoryPool]:
    """The MCP server for ``options`` and the pool of memories it opens (close it after).

    Raises:
        InvalidScope: the server's scope breaks the naming rule.
        ConfigError: an unknown profile.
    """
    if options.profile not in ("native", "reference"):
        raise ConfigError(f"unknown profile {options.profile!r}; use 'native' or 'reference'")
    bus = InMemorySubscriptionBus()
    server: MCPServer[Any] = MCPServer(
        "memgraph",
        title="memgraph",
        description="Knowledge-graph long-term memory",
        # The reference server gives none: a drop-in must not steer the model differently.
        instructions=None if options.profile == "reference" else _INSTRUCTIONS,
        version=__version__,
        subscriptions=bus,
        log_level="WARNING",
    )
    rt = _Runtime(options, bus)
    if not options.multi_scope:
        rt.pool.get(None)  # opens nothing on disk; a bad scope or config fails here
    found = _reference_tools(rt) if options.profile == "reference" else _native_tools(rt)
    for fn, title, hints in found:
        server.add_tool(
            _scoped(fn, options.multi_scope),
            title=title,
            annotations=hints,
            structured_output=True,
        )

    def graph_page(memory: Memory) -> str:
        return json.dumps(compat.ReferenceGraph(memory).read_graph(), indent=2, ensure_ascii=False)

    description = (
        "The current knowledge graph (entities and relations), the first page of "
        "read_graph when it is long."
    )
    if options.multi_scope:

        @server.resource(
            RESOURCE + "/{scope}",
            name="knowledge-graph",
            title="Knowledge Graph",
            description=description,
            mime_type="application/json",
        )
        async def scoped_graph(scope: str) -> str:
            return await rt.call(scope, graph_page, write=False)

    else:

        @server.resource(
            RESOURCE,
            name="knowledge-graph",
            title="Knowledge Graph",
            description=description,
            mime_type="application/json",
        )
        async def graph() -> str:
            return await rt.call(None, graph_page, write=False)

    # Clients before 2026-07-28 subscribe with resources/subscribe, a method the
    # 2026 revision removed; MCPServer has no public hook for it, and the SDK's
    # own in-process client reaches the low-level server the same way.
    lowlevel = server._lowlevel_server
    lowlevel.add_request_handler(
        "resources/subscribe", types.SubscribeRequestParams, rt.sessions.subscribe
    )
    lowlevel.add_request_handler(
        "resources/unsubscribe", types.UnsubscribeRequestParams, rt.sessions.unsubscribe
    )
    return server, rt.pool
