"""Where memory goes right now: the scope and the stack of memory configs.

State lives in context variables, so every asyncio task (and every thread
started with :func:`memgraph.conversation.concurrency.spawn` or a
:class:`~memgraph.conversation.concurrency.ContextThreadPoolExecutor`) inherits
the scope and config stack in effect when it was forked, and its own changes
never leak into its siblings.

**Scope.** :func:`set_memory_id` / :func:`get_memory_id` (``"default"``
until set). The scope is independent of which store is active: switching
stores keeps the scope.

**Config stack.** Configs stack like plates. The bottom plate is the
``memory`` block of ``agency.json`` in the working directory, with
``MEMGRAPH_DIR`` overriding its ``dir`` (both read when a call resolves them,
never at import). :func:`enable_memory` sets a plate on top,
:func:`disable_memory` takes the top one off (even the bottom one), and the
``with memory(...):`` block sets one for the block and restores whatever was
underneath on exit, also on an exception. A plate given as a dict or keyword
fields overrides only those fields of the config underneath; a
:class:`~memgraph.config.MemoryConfig` replaces it whole. A relative ``dir``
resolves against the working directory when the plate is set.

Memory is *active* when the config in effect has a ``dir`` (an ``agency.json``
``memory`` block or ``MEMGRAPH_DIR`` gives one). When it is off, ``remember``
and ``forget`` do nothing, ``recall`` returns ``""`` and no file is created.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import Any

from memgraph.config import MemoryConfig, load_config
from memgraph.conversation.approval import request_approval, reset_approval
from memgraph.conversation.cache import Target
from memgraph.llm_calls.provider import Provider
from memgraph.scope import validate_scope

__all__ = [
    "MemoryBlock",
    "current_config",
    "current_provider",
    "current_settings",
    "current_target",
    "disable_memory",
    "enable_memory",
    "get_memory_id",
    "is_memory_active",
    "memory",
    "reset_state",
    "set_memory_id",
]

ConfigLike = MemoryConfig | Mapping[str, Any] | str | os.PathLike[str] | None


@dataclass(frozen=True)
class _Plate:
    """One entry of the config stack."""

    fields: Mapping[str, Any] = field(default_factory=dict)
    config: MemoryConfig | None = None
    provider: Provider | str | None = None
    base: bool = False  # agency.json + MEMGRAPH_DIR, read when resolved


_BASE = _Plate(base=True)
_STACK: contextvars.ContextVar[tuple[_Plate, ...]] = contextvars.ContextVar(
    "memgraph_memory_stack", default=(_BASE,)
)
_MEMORY_ID: contextvars.ContextVar[str] = contextvars.ContextVar(
    "memgraph_memory_id", default="default"
)


# ------------------------------------------------------------------------ scope
def set_memory_id(memory_id: str) -> None:
    """Read and write the scope ``memory_id`` from now on, in this context.

    Raises:
        InvalidScope: the id breaks the scope naming rule.
    """
    _MEMORY_ID.set(validate_scope(memory_id))


def get_memory_id() -> str:
    """The scope in effect (``"default"`` until :func:`set_memory_id` is called)."""
    return _MEMORY_ID.get()


# ----------------------------------------------------------------------- stack
def _base_config() -> MemoryConfig | None:
    config = load_config()
    env_dir = os.environ.get("MEMGRAPH_DIR")
    if env_dir:
        config = replace(config or MemoryConfig(), dir=Path(env_dir).expanduser().absolute())
    elif config is not None and config.dir is None:
        config = replace(config, dir=Path.cwd() / ".memgraph")
    return config


def _resolve(stack: tuple[_Plate, ...]) -> tuple[MemoryConfig | None, Provider | str | None]:
    config: MemoryConfig | None = None
    provider: Provider | str | None = None
    for plate in stack:
        if plate.base:
            config = _base_config()
        elif plate.config is not None:
            config = plate.config
        else:
            config = (config or MemoryConfig()).merged(plate.fields)
        if plate.provider is not None:
            provider = plate.provider
    return config, provider


def _plate(config: ConfigLike, fields: Mapping[str, Any]) -> _Plate:
    provider = fields.get("provider")
    explicit: Provider | str | None = None
    if isinstance(provider, (Provider, str)):
        explicit = provider
        fields = {k: v for k, v in fields.items() if k != "provider"}
    if isinstance(config, MemoryConfig):
        if fields:
            config = config.merged(fields, base_dir=Path.cwd())
        if config.dir is not None and not config.dir.is_absolute():
            config = replace(config, dir=config.dir.expanduser().absolute())
        return _Plate(config=config, provider=explicit)
    if config is None and not fields and explicit is None:
        return _BASE
    data: dict[str, Any] = {}
    if isinstance(config, (str, os.PathLike)):
        data["dir"] = config
    elif config is not None:
        data.update(config)
    data.update(fields)
    if data.get("dir") is not None:
        data["dir"] = Path(data["dir"]).expanduser().absolute()
    MemoryConfig.from_dict(data)  # validate now: a bad key fails where it was written
    return _Plate(fields=data, provider=explicit)


def current_config() -> MemoryConfig | None:
    """The config in effect (``None`` when no plate gives one).

    Raises:
        ConfigError: ``agency.json`` is invalid.
    """
    return _resolve(_STACK.get())[0]


def current_provider() -> Provider | str | None:
    """The explicit provider pushed with the config in effect, if any."""
    return _resolve(_STACK.get())[1]


def current_settings() -> tuple[MemoryConfig | None, Provider | str | None, Target | None]:
    """The config in effect, its explicit provider, and the target (``None``: memory off).

    Raises:
        ConfigError: ``agency.json`` is invalid.
    """
    config, provider = _resolve(_STACK.get())
    if config is None or config.dir is None:
        return config, provider, None
    return config, provider, Target.of(config, get_memory_id(), provider)


def current_target() -> Target | None:
    """Where memory calls go now, or ``None`` when memory is off.

    Raises:
        ConfigError: ``agency.json`` is invalid.
    """
    return current_settings()[2]


def is_memory_active() -> bool:
    """Whether a memory store is reachable in this context."""
    return current_target() is not None


def _describe(config: MemoryConfig | None) -> dict[str, Any]:
    if config is None:
        return {"dir": None}
    return {"dir": str(config.dir) if config.dir else None, "store": config.store}


def enable_memory(config: ConfigLike = None, /, *, approve: bool = False, **fields: Any) -> bool:
    """Turn memory on, or switch stores, by setting a config on top of the stack.

    Args:
        config: a ``memory`` block dict (as in agency.json), a
            :class:`MemoryConfig`, or a directory path; omitted, the
            ``agency.json`` / ``MEMGRAPH_DIR`` config is set again.
        approve: approve the action (see :mod:`memgraph.conversation.approval`).
        **fields: config fields (``dir=``, ``compaction={...}``, ...);
            ``provider=`` may also be a provider object or spec such as ``"mock"``.

    Returns:
        Whether the stack changed. Setting the config already in effect
        (e.g. the same ``dir`` again) is a no-op and asks nothing.

    Raises:
        ConfigError: a field is unknown or has the wrong type.
        ApprovalRequired: the action was neither approved nor rejected.
    """
    plate = _plate(config, fields)
    stack = _STACK.get()
    before, after = _resolve(stack), _resolve((*stack, plate))
    if before == after:
        return False
    data = {**_describe(after[0]), "previous": _describe(before[0])["dir"]}
    if not request_approval("enable_memory", data, approve=approve):
        return False
    _STACK.set((*stack, plate))
    return True


def disable_memory(*, approve: bool = False) -> bool:
    """Take the top config off the stack (even the one from ``agency.json``).

    Library code should prefer the ``with memory(...):`` block, which cleans
    up after itself instead of popping a caller's config.

    Returns:
        Whether a config was taken off.

    Raises:
        ApprovalRequired: the action was neither approved nor rejected.
    """
    stack = _STACK.get()
    if not stack:
        return False
    data = _describe(_resolve(stack)[0])
    if not request_approval("disable_memory", data, approve=approve):
        return False
    _STACK.set(stack[:-1])
    return True


class MemoryBlock:
    """The ``with memory(...):`` block; see :func:`memory`."""

    def __init__(self, config: ConfigLike, approve: bool, fields: dict[str, Any]) -> None:
        self._args = (config, approve, fields)
        self._saved: tuple[_Plate, ...] | None = None
        self.changed = False

    def __enter__(self) -> MemoryBlock:
        config, approve, fields = self._args
        saved = _STACK.get()
        self.changed = enable_memory(config, approve=approve, **fields)
        self._saved = saved
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._saved is not None:
            _STACK.set(self._saved)
            self._saved = None

    async def __aenter__(self) -> MemoryBlock:
        return self.__enter__()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.__exit__(kind, error, trace)


def memory(config: ConfigLike = None, /, *, approve: bool = False, **fields: Any) -> MemoryBlock:
    """Use a memory config for a ``with`` block, then restore what was underneath.

    ::

        with memory(dir="./mem/alice", approve=True):
            remember("Alice's favourite colour is blue", approve=True)

    Entering asks for approval like :func:`enable_memory`; a rejected block
    runs with the memory that was already in effect (``block.changed`` is
    ``False``). The stack is restored on exit, also on an exception.

    Raises:
        ConfigError: a field is unknown or has the wrong type (on entering).
        ApprovalRequired: entering was neither approved nor rejected.
    """
    return MemoryBlock(config, approve, fields)


def reset_state() -> None:
    """Back to the defaults in this context: scope ``"default"``, only the
    ``agency.json`` plate, no approval handlers (for tests and REPLs)."""
    _STACK.set((_BASE,))
    _MEMORY_ID.set("default")
    reset_approval()
