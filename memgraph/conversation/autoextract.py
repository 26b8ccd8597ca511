"""Automatic extraction: the thread's new messages become facts in memory.

Every ``autoExtract.interval`` memory-on turns (and before compaction, and
when a thread is flushed) the messages added since the last extraction are
written as one ``role: text`` transcript through
:meth:`~memgraph.engine.memory.Memory.remember`, with ``via: "conversation"`` and
the thread id and message range as episode metadata. The thread's cursor
(``state.extracted_through``, a sequence number) moves only after the write
succeeded, so a message is never extracted twice and a failed pass is retried
by the next one. This is an automatic path: it never asks for approval.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from memgraph.conversation.cache import open_memory
from memgraph.conversation.thread import Thread, ThreadMessage, transcript
from memgraph.engine.memory import MAX_TEXT_CHARS, Memory
from memgraph.errors import MemgraphError
from memgraph.models import ChangeSet

__all__ = ["SOURCE", "extract_pending", "flush"]

log = logging.getLogger("memgraph")

SOURCE = "conversation"
"""Recorded as ``via`` in the metadata of episodes extracted from threads. Their
``source`` is the writing namespace (``"main"`` or the agent's name), like any write."""


def _chunks(text: str, limit: int = MAX_TEXT_CHARS) -> list[str]:
    """``text`` cut at line breaks into pieces ``remember`` accepts."""
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for line in text.splitlines():
        line = line[:limit]
        if current and size + len(line) + 1 > limit:
            chunks.append("\n".join(current))
            current, size = [], 0
        current.append(line)
        size += len(line) + 1
    if current:
        chunks.append("\n".join(current))
    return chunks


def _combine(changes: Sequence[ChangeSet]) -> ChangeSet:
    if len(changes) == 1:
        return changes[0]
    return ChangeSet(
        episode=next((c.episode for c in reversed(changes) if c.episode), None),
        added_entities=tuple(e for c in changes for e in c.added_entities),
        added_observations=tuple(o for c in changes for o in c.added_observations),
        added_relations=tuple(r for c in changes for r in c.added_relations),
        expired_observations=tuple(o for c in changes for o in c.expired_observations),
        expired_relations=tuple(r for c in changes for r in c.expired_relations),
        warnings=tuple(w for c in changes for w in c.warnings),
    )


def extract_pending(
    thread: Thread, memory: Memory, *, through: int | None = None
) -> ChangeSet | None:
    """Extract the thread's messages not yet in memory (up to seq ``through``).

    Returns:
        What changed, or ``None`` when no message was pending.

    Raises:
        ProviderError, StoreError: the write failed; the cursor did not move.
    """
    entries: list[ThreadMessage] = thread.pending(through)
    if not entries:
        return None
    last = entries[-1].seq
    text = transcript(entries)
    changes = [
        memory.remember(
            chunk,
            metadata={"via": SOURCE, "thread": thread.id, "messages": [entries[0].seq, last]},
        )
        for chunk in _chunks(text)
    ]
    thread.state.extracted_through = max(thread.state.extracted_through, last)
    return _combine(changes) if changes else ChangeSet()


def extract_quietly(
    thread: Thread, memory: Memory, *, through: int | None = None
) -> ChangeSet | None:
    """:func:`extract_pending`, logging a failure instead of raising it.

    The automatic paths use this: a reply the user already has must not be
    lost because memory could not be written; the next pass retries.
    """
    try:
        return extract_pending(thread, memory, through=through)
    except MemgraphError as exc:
        log.warning("memgraph: automatic extraction failed (%s); it will be retried", exc)
        return None


def flush(thread: Thread) -> ChangeSet | None:
    """Extract every pending message into the scope of the thread's last memory-on turn.

    Returns:
        What changed, or ``None`` when nothing was pending or the thread never
        had a memory-on turn.
    """
    target = thread.state.target
    if target is None:
        return None
    changes = extract_quietly(thread, open_memory(target))
    thread.state.turns = 0
    return changes
