"""Module-level ``remember``, ``recall`` and ``forget``: memory in the current context.

Each call goes to the scope of :func:`~memgraph.conversation.context.get_memory_id` in the
store of the config in effect (see :mod:`memgraph.conversation.context`), through a cached
:class:`~memgraph.engine.memory.Memory`. Each is an action that asks for approval
(see :mod:`memgraph.conversation.approval`): pass ``approve=True``, or install a handler
or policy. When memory is off they do nothing and ask nothing: ``remember``
and ``forget`` return an empty change set and ``recall`` returns ``""``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from memgraph.conversation.approval import request_approval
from memgraph.conversation.cache import Target, open_memory
from memgraph.conversation.context import current_target
from memgraph.engine.memory import Memory
from memgraph.models import ChangeSet

__all__ = ["forget", "recall", "remember"]


def _open(action: str, data: dict[str, Any], approve: bool) -> Memory | None:
    """The memory to act on, once approved; ``None`` when off or rejected."""
    target: Target | None = current_target()
    if target is None:
        return None
    described = {**data, "scope": target.scope, "dir": str(target.dir)}
    if not request_approval(action, described, approve=approve):
        return None
    return open_memory(target)


def remember(
    content: str,
    *,
    approve: bool = False,
    at: str | datetime | None = None,
    source: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> ChangeSet:
    """Extract facts from ``content`` into the current scope.

    Args:
        content: what was said or learned, in plain language.
        approve: approve the action (else a handler or policy decides).
        at: when it was said (world time); defaults to now.
        source: where the text came from; kept on the episode and its facts.
        metadata: a JSON-serializable dict stored with the episode.

    Returns:
        What changed; empty when memory is off or the action was rejected.

    Raises:
        ApprovalRequired: nothing approved or rejected the action.
        TypeError: ``content`` is not a string.
        ValueError: ``content`` is empty or too long.
        ProviderError: the model could not be reached; nothing was stored.
        StoreError: the write could not be persisted; nothing was stored.
    """
    memory = _open("remember", {"content": content}, approve)
    if memory is None:
        return ChangeSet()
    return memory.remember(content, at=at, source=source, metadata=metadata)


def recall(query: str, *, approve: bool = False, rerank: bool = True) -> str:
    """The facts of the current scope relevant to ``query``, as text.

    Args:
        query: what to look for, in plain language.
        approve: approve the action (else a handler or policy decides).
        rerank: also let the LLM re-rank the matches (tier 3).

    Returns:
        The matching facts grouped by entity; ``""`` when none match, memory
        is off, or the action was rejected.

    Raises:
        ApprovalRequired: nothing approved or rejected the action.
        TypeError: ``query`` is not a string.
        ProviderError: the model could not be reached.
    """
    memory = _open("recall", {"query": query}, approve)
    if memory is None:
        return ""
    return memory.recall(query, rerank=rerank)


def forget(query: str, *, approve: bool = False) -> ChangeSet:
    """Expire the facts of the current scope that ``query`` refers to.

    Nothing is erased: the facts drop out of recall while their history stays.

    Args:
        query: what to forget, in plain language.
        approve: approve the action (else a handler or policy decides).

    Returns:
        What was expired; empty when memory is off or the action was rejected.

    Raises:
        ApprovalRequired: nothing approved or rejected the action.
        ValueError: ``query`` is empty.
        ProviderError: the model could not be reached; nothing was changed.
        StoreError: the change could not be persisted.
    """
    memory = _open("forget", {"query": query}, approve)
    if memory is None:
        return ChangeSet()
    return memory.forget(query)
