"""The process-wide cache of open memories and chat providers.

The module-level API (``remember``, ``recall``, ``llm(memory=True)``, ...)
resolves a :class:`Target` (a directory, a scope, the config and provider in
effect) on every call. Opening a :class:`~memgraph.engine.memory.Memory` for it each
time would reload the scope, so open memories are kept here, one per target,
shared by every thread and asyncio task of the process. A ``Memory`` is safe
to share: it serializes its own work, and its store coordinates writers
across processes. :func:`close_all` closes everything (it also runs at exit).
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from dataclasses import dataclass, replace
from pathlib import Path

from memgraph.config import MemoryConfig
from memgraph.engine.memory import Memory
from memgraph.errors import ConfigError
from memgraph.llm_calls.provider import Provider
from memgraph.llm_calls.resolve import OFFLINE_NOTICE, choose_provider

__all__ = ["Target", "chat_provider", "close_all", "open_memory"]

log = logging.getLogger("memgraph")

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


_lock = threading.Lock()
_memories: dict[Target, Memory] = {}
_providers: dict[tuple[object, ...], Provider] = {}


def open_memory(target: Target) -> Memory:
    """The open :class:`Memory` for ``target``, opening it on first use.

    Raises:
        InvalidScope: the scope breaks the naming rule.
        ConfigError: the configuration is invalid.
    """
    with _lock:
        memory = _memories.get(target)
        if memory is None:
            memory = Memory(
                target.dir, target.scope, provider=target.provider, config=target.config
            )
            _memories[target] = memory
        return memory


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
    with _lock:
        memories, providers = list(_memories.values()), list(_providers.values())
        _memories.clear()
        _providers.clear()
    for memory in memories:
        try:
            memory.close()
        except Exception:  # closing at exit must not mask the real error
            log.exception("memgraph: could not close %r", memory)
    for provider in providers:
        for part in (provider.chat, provider.embedder):
            close = getattr(part, "close", None)
            if callable(close):
                try:
                    close()
                except Exception:
                    log.exception("memgraph: could not close %r", part)


atexit.register(close_all)
