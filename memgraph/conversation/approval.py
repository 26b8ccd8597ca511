"""Approval: memory actions called directly by code ask before they run.

``remember``, ``recall``, ``forget``, ``enable_memory`` and
``disable_memory`` (and the ``memory(...)`` block, which enables) are
*actions*. Before one runs, it is decided in this order:

1. ``approve=True`` on the call approves it;
2. the handlers installed with :func:`approval_handler` blocks, innermost first;
3. the process-wide handler set with :func:`set_approval_handler`;
4. nobody decided: :class:`~memgraph.errors.ApprovalRequired` is raised,
   carrying the action and its data, so an application can ask a person and
   call again with ``approve=True``.

A handler is a callable ``handler(action, data)`` returning
:attr:`Decision.APPROVE` / ``True``, :attr:`Decision.REJECT` / ``False``, or
``None`` to leave the decision to the next handler out. A rejected action
changes nothing. A policy that pre-approves action kinds is a handler too:
:func:`preapprove`. The automatic paths (context injection, auto-extraction,
compaction) never ask.

Handlers installed with :func:`approval_handler` live in a context variable,
so each asyncio task or spawned thread sees the handlers it inherited and its
own blocks never leak into siblings.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from memgraph.errors import ApprovalRequired

__all__ = [
    "ACTIONS",
    "ApprovalHandler",
    "Decision",
    "approval_handler",
    "preapprove",
    "request_approval",
    "set_approval_handler",
]

ACTIONS = frozenset({"remember", "recall", "forget", "enable_memory", "disable_memory"})
"""The memory actions that ask for approval."""


class Decision(enum.Enum):
    """What an approval handler decided."""

    APPROVE = "approve"
    REJECT = "reject"


ApprovalHandler = Callable[[str, dict[str, Any]], "Decision | bool | None"]
"""``handler(action, data) -> Decision | bool | None`` (``None``: no opinion)."""

_HANDLERS: ContextVar[tuple[ApprovalHandler, ...]] = ContextVar(
    "memgraph_approval_handlers", default=()
)
_global_handler: ApprovalHandler | None = None
_global_lock = threading.Lock()


def _check_actions(actions: tuple[str, ...]) -> frozenset[str]:
    unknown = sorted(set(actions) - ACTIONS - {"*"})
    if unknown:
        known = ", ".join(sorted(ACTIONS))
        raise ValueError(f"unknown memory action {unknown[0]!r}; actions are {known} (or '*')")
    return frozenset(actions)


def set_approval_handler(handler: ApprovalHandler | None) -> ApprovalHandler | None:
    """Set the process-wide approval handler (the outermost one); ``None`` removes it.

    Args:
        handler: ``handler(action, data)`` returning a :class:`Decision`, a
            bool, or ``None`` for no opinion.

    Returns:
        The handler it replaced, so a caller can put it back.

    Raises:
        TypeError: ``handler`` is not callable.
    """
    global _global_handler
    if handler is not None and not callable(handler):
        raise TypeError(f"an approval handler must be callable, got {handler!r}")
    with _global_lock:
        previous, _global_handler = _global_handler, handler
    return previous


@contextmanager
def approval_handler(handler: ApprovalHandler) -> Iterator[ApprovalHandler]:
    """Decide memory actions with ``handler`` inside the ``with`` block.

    Blocks nest: the innermost handler is asked first, and one that returns
    ``None`` passes the question outwards.

    Raises:
        TypeError: ``handler`` is not callable.
    """
    if not callable(handler):
        raise TypeError(f"an approval handler must be callable, got {handler!r}")
    saved = _HANDLERS.get()
    _HANDLERS.set((*saved, handler))
    try:
        yield handler
    finally:
        _HANDLERS.set(saved)


def preapprove(*actions: str) -> ApprovalHandler:
    """A policy handler approving the given action kinds (``"*"`` for all).

    Other actions get no opinion, so outer handlers still decide them::

        with approval_handler(preapprove("recall", "remember")):
            remember("Alice prefers tea.")

    Raises:
        ValueError: an action name is unknown.
    """
    allowed = _check_actions(actions)

    def policy(action: str, data: dict[str, Any]) -> Decision | None:
        return Decision.APPROVE if "*" in allowed or action in allowed else None

    return policy


def _decided(handler: ApprovalHandler, action: str, data: Mapping[str, Any]) -> bool | None:
    decision = handler(action, dict(data))
    if decision is None:
        return None
    if isinstance(decision, Decision):
        return decision is Decision.APPROVE
    if isinstance(decision, bool):
        return decision
    raise TypeError(
        f"approval handler {handler!r} returned {decision!r}; return Decision.APPROVE, "
        "Decision.REJECT, True, False or None"
    )


def request_approval(action: str, data: Mapping[str, Any], *, approve: bool = False) -> bool:
    """Whether ``action`` may run: ``True`` approved, ``False`` rejected.

    Raises:
        ApprovalRequired: nothing approved or rejected it; the exception
            carries ``action`` and ``data``.
    """
    if approve:
        return True
    with _global_lock:
        outermost = _global_handler
    handlers = [*reversed(_HANDLERS.get()), *([outermost] if outermost else [])]
    for handler in handlers:
        decision = _decided(handler, action, data)
        if decision is not None:
            return decision
    raise ApprovalRequired(action, dict(data))


def reset_approval() -> None:
    """Forget every handler (the process-wide one and this context's blocks)."""
    set_approval_handler(None)
    _HANDLERS.set(())
