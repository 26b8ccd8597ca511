"""The process-wide cache of open memories and chat providers, within a memory budget.

The module-level API (``remember``, ``recall``, ``llm(memory=True)``, ...)
resolves a :class:`Target` (a directory, a scope, the config and provider in
effect) on every call. Opening a :class:`~memgraph.engine.memory.Memory` for it each
time would reload the scope, so open memories are kept here, one per target,
shared by every thread and asyncio task of the process. A ``Memory`` is safe
to share: it serializes its own work, and its store coordinates writers
across processes. :func:`close_all` closes everything (it also runs at exit).

A service serving thousands of users (scopes) cannot keep every scope it has
seen: :class:`MemoryCache` keeps the memories a process uses within a budget
(``store.cacheMB``, ``MEMGRAPH_CACHE_MB``, 512 MB by default), closing the
least recently used ones past it. The module-level API uses one; a service
holding its own ``Memory`` objects (one per user) can use another.
"""

from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import gc
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Generic, TypeVar

from memgraph.config import MemoryConfig
from memgraph.engine.memory import Memory
from memgraph.errors import ConfigError
from memgraph.llm_calls.provider import Provider
from memgraph.llm_calls.resolve import OFFLINE_NOTICE, choose_provider

__all__ = [
    "DEFAULT_CACHE_MB",
    "MemoryCache",
    "Target",
    "cache_budget",
    "chat_provider",
    "close_all",
    "open_memory",
]

log = logging.getLogger("memgraph")

DEFAULT_CACHE_MB = MemoryConfig().cache_mb
K = TypeVar("K", bound=Hashable)


class MemoryCache(Generic[K]):
    """Open memories kept for reuse, one per key, within a memory budget.

    :meth:`get` returns the memory of a key, opening it on first use. Then,
    while the memories held add up to more than ``budget_mb`` (each one's
    :meth:`~memgraph.engine.memory.Memory.resident_bytes`, measured again after
    it was used), the least recently used ones are closed and dropped; the
    memory just returned is always kept. A dropped scope reopens on its next
    use, from its checkpoint's index (a few milliseconds for a small scope, and
    its records and vectors are read again as calls need them). Writes from
    other processes are picked up on every call either way: closing changes
    what this process holds, never what it sees.

    A memory still in use elsewhere when it is dropped keeps working; it is
    freed when its last user lets go. Thread-safe.

    Args:
        budget_mb: the budget in MiB (``store.cacheMB``; 512 by default).
    """

    def __init__(self, budget_mb: float = DEFAULT_CACHE_MB) -> None:
        self.budget_mb = budget_mb
        self._open: OrderedDict[K, Memory] = OrderedDict()  # least recently used first
        self._sizes: dict[K, int] = {}
        self._used: set[K] = set()  # handed out since their size was last measured
        self._freed = 0  # estimated bytes closed since memory was last given back
        self._lock = threading.Lock()
        self.opened = 0
        self.closed = 0

    def __len__(self) -> int:
        return len(self._open)

    def __contains__(self, key: object) -> bool:
        return key in self._open

    @property
    def resident_bytes(self) -> int:
        """The estimated memory of the open memories, as last measured."""
        return sum(self._sizes.values())

    def get(self, key: K, opener: Callable[[], Memory]) -> Memory:
        """The open memory of ``key`` (``opener()`` makes it on first use).

        Raises:
            Whatever ``opener`` raises; nothing is cached then.
        """
        with self._lock:
            memory = self._open.get(key)
            if memory is None:
                memory = self._open[key] = opener()
                self.opened += 1
            else:
                self._open.move_to_end(key)
            dropped = self._shrink(keep=key)
            self._used.add(key)
        self._close(dropped)
        return memory

    def close(self, key: K) -> None:
        """Close and drop the memory of ``key``, if open."""
        with self._lock:
            memory = self._open.pop(key, None)
            self._sizes.pop(key, None)
            self._used.discard(key)
        self._close([memory] if memory is not None else [])

    def close_all(self) -> None:
        """Close and drop every memory (safe to call repeatedly)."""
        with self._lock:
            memories = list(self._open.values())
            self._open.clear()
            self._sizes.clear()
            self._used.clear()
        self._close(memories)

    def _shrink(self, *, keep: K) -> list[Memory]:
        """Measure the memories used since last time; drop the least recently used
        ones until the rest fit the budget. Caller holds the lock."""
        for used in self._used:
            memory = self._open.get(used)
            if memory is not None:
                self._sizes[used] = memory.resident_bytes()
        self._used.clear()
        budget = self.budget_mb * (1 << 20)
        total = sum(self._sizes.values())
        dropped: list[Memory] = []
        while total > budget and len(self._open) > 1:
            oldest = next(iter(self._open))
            if oldest == keep:
                break
            dropped.append(self._open.pop(oldest))
            size = self._sizes.pop(oldest, 0)
            total -= size
            self._freed += size
        return dropped

    def _close(self, memories: list[Memory]) -> None:
        for memory in memories:
            self.closed += 1
            try:
                memory.close()
            except Exception:  # closing must not fail the call that made room
                log.exception("memgraph: could not close %r", memory)
        if memories and self._freed >= self.budget_mb * (1 << 20) / 8:
            # What the closed memories held is free, but the C allocator keeps most of
            # it in its heap, between blocks still in use; give it back to the system
            # (a scope's records and vectors are many blocks of every size).
            self._freed = 0
            del memories
            _return_freed_memory()


_ENV = ("MEMGRAPH_PROVIDER", "MEMGRAPH_STORE", "MEMGRAPH_BASE_URL")


def _environment(config: MemoryConfig) -> tuple[str | None, ...]:
    """The environment that changes which provider or store a config opens."""
    has_key = "key" if os.environ.get(config.provider.api_key_env) else None
    return (*(os.environ.get(name) for name in _ENV), has_key)


@dataclass(frozen=True)
class Target:
    """Where module-level memory calls go: a resolved config, a scope, a provider.

    Attributes:
        config: the config in effect, with an absolute ``dir``.
        scope: the memory id (scope) in effect.
        provider: an explicit provider (object or spec) pushed with the config.
        environment: the ``MEMGRAPH_*`` variables and key presence it was
            resolved under (part of the cache key).
    """

    config: MemoryConfig
    scope: str
    provider: Provider | str | None = None
    environment: tuple[str | None, ...] = ()

    @classmethod
    def of(cls, config: MemoryConfig, scope: str, provider: Provider | str | None) -> Target:
        """The target for ``config`` (which must have a ``dir``) and ``scope``."""
        assert config.dir is not None
        resolved = replace(config, dir=Path(os.path.abspath(config.dir)).resolve())
        return cls(resolved, scope, provider, _environment(config))

    @property
    def dir(self) -> Path:
        """The memory directory (absolute)."""
        assert self.config.dir is not None
        return self.config.dir

    @property
    def place(self) -> tuple[Path, str, str]:
        """Where the facts land: directory, scope and store kind (settings aside)."""
        return self.dir, self.scope, self.config.store


def _return_freed_memory() -> None:
    """Ask the C allocator to give its free memory back to the system (glibc's
    ``malloc_trim``; nothing elsewhere)."""
    global _trim
    if _trim is None:
        try:
            _trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _trim = False
    if _trim:
        gc.collect()
        _trim(0)


_trim: Any = None
_lock = threading.Lock()
_memories: MemoryCache[Target] = MemoryCache()
_providers: dict[tuple[object, ...], Provider] = {}


def cache_budget(config: MemoryConfig) -> float:
    """The memory budget in MiB: ``MEMGRAPH_CACHE_MB`` if set, else ``store.cacheMB``.

    Raises:
        ConfigError: ``MEMGRAPH_CACHE_MB`` is not a positive number.
    """
    raw = os.environ.get("MEMGRAPH_CACHE_MB")
    if not raw:
        return config.cache_mb
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise ConfigError(f"MEMGRAPH_CACHE_MB must be a positive number of MiB, got {raw!r}")
    return value


def open_memory(target: Target) -> Memory:
    """The open :class:`Memory` for ``target``, opening it on first use.

    The process keeps the memories it opens within the budget of the config
    in effect (:func:`cache_budget`), closing the least recently used ones.

    Raises:
        InvalidScope: the scope breaks the naming rule.
        ConfigError: the configuration is invalid.
    """
    _memories.budget_mb = cache_budget(target.config)
    return _memories.get(
        target,
        lambda: Memory(target.dir, target.scope, provider=target.provider, config=target.config),
    )


def chat_provider(
    config: MemoryConfig, explicit: Provider | str | None, model: str | None = None
) -> Provider:
    """The provider for a conversation turn, by :func:`~memgraph.llm_calls.resolve.choose_provider`.

    Args:
        config: the config in effect (defaults when memory is off).
        explicit: a provider object or spec pushed with the config, if any.
        model: a chat model overriding the configured one.

    Raises:
        ConfigError: ``model`` was given with an explicit provider object,
            whose model cannot be changed.
        UnknownProvider: the configured provider is not registered.
    """
    if model is not None:
        if isinstance(explicit, Provider):
            raise ConfigError(
                f"model={model!r} cannot change the model of the provider object "
                f"{explicit.name!r}; pass a spec such as 'openai:{model}' instead"
            )
        raw = explicit or os.environ.get("MEMGRAPH_PROVIDER") or config.provider.name
        explicit = raw.partition(":")[0] if raw else None
        config = replace(config, provider=replace(config.provider, model=model))
    key = (config, explicit, _environment(config))
    with _lock:
        provider = _providers.get(key)
        if provider is None:
            provider, offline = choose_provider(explicit, config)
            if offline:
                log.info(OFFLINE_NOTICE)
            _providers[key] = provider
        return provider


def close_all() -> None:
    """Close every cached memory and provider client (safe to call repeatedly)."""
    _memories.close_all()
    with _lock:
        providers = list(_providers.values())
        _providers.clear()
    for provider in providers:
        for part in (provider.chat, provider.embedder):
            close = getattr(part, "close", None)
            if callable(close):
                try:
                    close()
                except Exception:
                    log.exception("memgraph: could not close %r", part)


atexit.register(close_all)
