"""The faces an :class:`~memgraph.engine.async_memory.AsyncMemory` hands out, awaitable:
key/values (``memory.kv``) and time travel (``memory.as_of(...)``).

Each call opens the memory if needed and runs the synchronous face's method in a
worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from memgraph.clock import iso, parse_iso
from memgraph.faces.kv import KeyValueMemory, KeyVersion
from memgraph.faces.timetravel import MemoryView
from memgraph.models import Entity, Hit

if TYPE_CHECKING:
    from memgraph.engine.memory import Memory

__all__ = ["AsyncKeyValues", "AsyncMemoryView"]

T = TypeVar("T")

Opener = Callable[[], Awaitable["Memory"]]


class AsyncKeyValues:
    """:class:`~memgraph.KeyValueMemory` with awaitable methods (``AsyncMemory.kv``)."""

    def __init__(self, open: Opener) -> None:
        self._open = open

    async def _run(self, call: Callable[[KeyValueMemory], T]) -> T:
        memory = await self._open()
        return await asyncio.to_thread(call, memory.kv)

    async def remember(self, key: str, value: Any) -> int:
        """Store ``value`` as the newest version of ``key``; returns its version number."""
        return await self._run(lambda kv: kv.remember(key, value))

    async def remember_many(self, values: Mapping[str, Any]) -> dict[str, int]:
        """Store new versions of several keys in one write; returns their version numbers."""
        return await self._run(lambda kv: kv.remember_many(values))

    async def recall(self, key: str) -> Any:
        """The latest value of ``key``, or ``None``."""
        return await self._run(lambda kv: kv.recall(key))

    async def forget(self, key: str) -> None:
        """Write a tombstone for ``key``."""
        await self._run(lambda kv: kv.forget(key))

    async def forget_many(self, keys: Iterable[str]) -> int:
        """Tombstones for several keys in one write; returns how many had a value."""
        chosen = list(keys)
        return await self._run(lambda kv: kv.forget_many(chosen))

    async def keys(self) -> list[str]:
        """The keys that currently have a value."""
        return await self._run(lambda kv: kv.keys())

    async def history(self, key: str) -> list[KeyVersion]:
        """Every version of ``key``, tombstones included."""
        return await self._run(lambda kv: kv.history(key))

    async def histories(self, prefix: str = "") -> dict[str, list[KeyVersion]]:
        """Every version of every key that starts with ``prefix``, in one read."""
        return await self._run(lambda kv: kv.histories(prefix))

    async def as_of(self, key: str, version: int) -> Any:
        """The value ``key`` had at ``version``."""
        return await self._run(lambda kv: kv.as_of(key, version))


class AsyncMemoryView:
    """:class:`~memgraph.MemoryView` with awaitable reads (``AsyncMemory.as_of(...)``).

    Raises:
        ValueError: ``at`` is not an ISO-8601 timestamp.
    """

    def __init__(self, open: Opener, at: str | datetime) -> None:
        self._open = open
        self.at = iso(parse_iso(at))

    def __repr__(self) -> str:
        return f"AsyncMemoryView(at={self.at!r})"

    async def _run(self, call: Callable[[MemoryView], T]) -> T:
        memory = await self._open()
        return await asyncio.to_thread(call, memory.as_of(self.at))

    async def recall(self, query: str, *, rerank: bool = False, from_: str | None = None) -> str:
        """Like :meth:`AsyncMemory.recall`, as of :attr:`at`."""
        return await self._run(lambda view: view.recall(query, rerank=rerank, from_=from_))

    async def search(
        self, query: str, *, k: int = 10, episodes: bool = False, from_: str | None = None
    ) -> list[Hit]:
        """Like :meth:`AsyncMemory.search`, as of :attr:`at`."""
        return await self._run(lambda view: view.search(query, k=k, episodes=episodes, from_=from_))

    async def entities(self) -> list[Entity]:
        """The entities that existed then, each with the facts valid then."""
        return await self._run(lambda view: view.entities())

    async def entity(self, name: str) -> Entity:
        """The entity called ``name`` with the facts valid then."""
        return await self._run(lambda view: view.entity(name))
