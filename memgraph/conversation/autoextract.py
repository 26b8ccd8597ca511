"""Automatic extraction: the thread's new messages become facts in memory.

Every ``autoExtract.interval`` memory-on turns (and before compaction, and
when a thread is flushed) the messages added since the last extraction are
remembered one by one through :meth:`~memgraph.engine.memory.Memory.remember_many`,
each its own episode with its speaker (``User``, ``assistant``), with ``via:
"conversation"``, the thread id and the message's sequence number (as the range
``messages``) as episode metadata. The
user's messages are extracted, each read with the message before it; the
assistant's are kept as context only, with no model call. The thread's cursor
(``state.extracted_through``, a sequence number) moves only after the write
succeeded, so a message is never extracted twice and a failed pass is retried
by the next one. This is an automatic path: it never asks for approval.

**Messages that outlive their thread.** When closing a thread (leaving ``with
Thread()``) cannot extract its pending messages (the model is down, the
store is busy), their transcript is saved with the scope, under ``"pending"``
in its conversation summary document (``summary.json``), and the thread's
cursor moves past them. The next extraction into that scope, from any thread
or process (a flush, an automatic pass, a thread's first memory-on turn),
extracts the saved transcripts first and removes them. Only when they cannot
be saved either does closing the thread raise the extraction's error. Two
processes retrying the same saved transcript at the same moment may both
store it (its facts are not duplicated: a fact already current is skipped).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from memgraph.clock import now_iso
from memgraph.conversation.cache import open_memory
from memgraph.conversation.context import current_target
from memgraph.conversation.thread import Thread, ThreadMessage, spoken, transcript, use_flusher
from memgraph.engine.memory import MAX_TEXT_CHARS, Memory
from memgraph.errors import MemgraphError
from memgraph.models import ChangeSet, Item
from memgraph.speakers import speaker_name, transcript_turns

__all__ = [
    "PENDING_KEY",
    "SOURCE",
    "extract_pending",
    "extract_saved",
    "flush",
    "message_items",
    "save_pending",
    "transcript_chunks",
]

log = logging.getLogger("memgraph")

SOURCE = "conversation"
"""Recorded as ``via`` in the metadata of episodes extracted from threads. Their
``source`` is the writing namespace (``"main"`` or the agent's name), like any write."""

PENDING_KEY = "pending"
"""The key of the saved, not yet extracted transcripts in the scope's summary document."""


def transcript_chunks(text: str, limit: int = MAX_TEXT_CHARS) -> list[str]:
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


Turn = tuple[str, str, list[int]]
"""A message to remember: its speaker, its words and its range of sequence numbers."""


def _remember_turns(
    memory: Memory,
    turns: Sequence[Turn],
    metadata: dict[str, Any],
    at: str | None = None,
    stored: Callable[[int], None] = lambda _count: None,
) -> list[ChangeSet]:
    """Remember messages one by one, each its own episode with its speaker, read with
    the message before it; the assistant's are kept as context only (its own words
    make no facts: no model call). ``stored`` hears how many are durably stored,
    as they are (a failure stores the messages before the failing one)."""
    return memory.remember_many(
        message_items(turns, metadata, key="messages", at=at),
        progress=lambda done, _total: stored(done),
    )


def message_items(
    turns: Sequence[tuple[str, str, Any]],
    metadata: Mapping[str, Any],
    *,
    key: str,
    at: str | None = None,
) -> list[Item]:
    """One :class:`Item` per message ``(speaker, words, where)``: its speaker, and its
    ``metadata`` with ``where`` under ``key`` (which message it is). The bulk path
    keeps the assistant's as context only (no model call)."""
    return [
        Item(words[:MAX_TEXT_CHARS], at=at, speaker=speaker, metadata={**metadata, key: where})
        for speaker, words, where in turns
    ]


def _remember_transcript(
    memory: Memory,
    item: dict[str, Any],
    metadata: dict[str, Any],
    at: str | None = None,
    stored: Callable[[int], None] = lambda _count: None,
) -> list[ChangeSet]:
    """Remember a saved ``role: text`` transcript message by message (each line's
    sequence number from the item's ``seqs``, else the whole range); a text that
    is not a transcript (:func:`~memgraph.speakers.transcript_turns`) is
    remembered as it is, in pieces ``remember`` accepts."""
    text = str(item["text"])
    lines = transcript_turns(text)
    if lines is None:
        return [
            memory.remember(chunk, at=at, metadata=metadata) for chunk in transcript_chunks(text)
        ]
    seqs = item.get("seqs")
    if not (isinstance(seqs, list) and len(seqs) == len(lines)):
        seqs = [None] * len(lines)
    window = list(metadata.get("messages") or [])
    turns = [
        (speaker, words, [seq, seq] if isinstance(seq, int) else window)
        for (speaker, words), seq in zip(lines, seqs, strict=True)
    ]
    return _remember_turns(memory, turns, metadata, at, stored)


def _saved(memory: Memory) -> list[dict[str, Any]]:
    document = memory.summary() or {}
    items = document.get(PENDING_KEY)
    if not isinstance(items, list):
        return []
    return [i for i in items if isinstance(i, dict) and isinstance(i.get("text"), str)]


def _drop_saved(
    memory: Memory, done: list[dict[str, Any]], *, instead: dict[str, Any] | None = None
) -> None:
    """Remove these saved transcripts (or put ``instead`` in the place of the one)."""

    def change(document: dict[str, Any] | None) -> dict[str, Any] | None:
        if not document:
            return None
        items = []
        for saved in document.get(PENDING_KEY) or []:
            if saved not in done:
                items.append(saved)
            elif instead is not None:
                items.append(instead)
        document = {k: v for k, v in document.items() if k != PENDING_KEY}
        return {**document, PENDING_KEY: items} if items else document

    memory.update_summary(change)


def extract_saved(memory: Memory) -> list[ChangeSet]:
    """Extract the transcripts that closing a thread saved with ``memory``'s scope.

    Each one is removed once it is stored.

    Returns:
        One change set per stored message (empty when nothing was saved).

    Raises:
        ProviderError, StoreError: a write failed; it and the ones after it stay saved.
    """
    saved = _saved(memory)
    if not saved:
        return []
    changes: list[ChangeSet] = []
    done: list[dict[str, Any]] = []
    stored = 0

    def heard(count: int) -> None:
        nonlocal stored
        stored = count

    try:
        for item in saved:
            metadata = {
                "via": SOURCE,
                "thread": item.get("thread"),
                "messages": item.get("messages"),
            }
            at = item.get("at") if isinstance(item.get("at"), str) else None
            stored = 0
            try:
                changes += _remember_transcript(memory, item, metadata, at, heard)
            except MemgraphError:
                if stored:  # its first messages are stored: only the rest stays saved
                    _drop_saved(memory, [item], instead=_rest(item, stored))
                raise
            done.append(item)
    finally:
        if done:
            _drop_saved(memory, done)
    return changes


def _rest(item: dict[str, Any], stored: int) -> dict[str, Any]:
    """A saved transcript without its first ``stored`` messages."""
    # one line per message, as saved (thread.transcript), its role label kept as written
    lines = [line for line in str(item["text"]).splitlines() if line.strip()][stored:]
    rest = {**item, "text": "\n".join(lines)}
    seqs = item.get("seqs")
    if isinstance(seqs, list) and seqs[stored:]:
        rest["seqs"] = seqs[stored:]
        rest["messages"] = [seqs[stored], seqs[-1]]
    return rest


def extract_pending(
    thread: Thread, memory: Memory, *, through: int | None = None
) -> ChangeSet | None:
    """Extract the thread's messages not yet in memory (up to seq ``through``).

    Transcripts saved with the scope by a thread that could not extract them
    on closing (:func:`save_pending`) are extracted first.

    Returns:
        What changed (the pieces combined), or ``None`` when no message was pending.

    Raises:
        ProviderError, StoreError: the write failed; the cursor moved past the
            messages stored before the failing one, and no further.
    """
    changes = extract_saved(memory) + _extract_thread(thread, memory, through)
    return ChangeSet.combined(changes) if changes else None


def _extract_thread(thread: Thread, memory: Memory, through: int | None = None) -> list[ChangeSet]:
    entries: list[ThreadMessage] = thread.pending(through)
    if not entries:
        return []
    last = entries[-1].seq
    metadata = {"via": SOURCE, "thread": thread.id}
    turns = [(speaker_name(role), text, [e.seq, e.seq]) for e, role, text in spoken(entries)]

    def moved(count: int) -> None:  # stored messages are never extracted again
        if count:
            seq = turns[count - 1][2][-1]
            thread.state.extracted_through = max(thread.state.extracted_through, seq)

    changes = _remember_turns(memory, turns, metadata, stored=moved) if turns else []
    thread.state.extracted_through = max(thread.state.extracted_through, last)
    return changes or [ChangeSet()]


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


def save_pending(thread: Thread, memory: Memory) -> int:
    """Save the thread's pending messages with ``memory``'s scope and move its cursor past them.

    Returns:
        How many messages were saved (0 when none was pending).

    Raises:
        StoreError: the scope's summary document could not be written; the
            cursor did not move.
    """
    entries = thread.pending()
    if not entries:
        return 0
    text = transcript(entries)
    if text:
        item = {
            "thread": thread.id,
            "messages": [entries[0].seq, entries[-1].seq],
            "text": text,
            "seqs": [entry.seq for entry, _, _ in spoken(entries)],
            "at": now_iso(),
        }

        def change(document: dict[str, Any] | None) -> dict[str, Any]:
            document = dict(document or {})
            document[PENDING_KEY] = [*(document.get(PENDING_KEY) or []), item]
            return document

        memory.update_summary(change)
    thread.state.extracted_through = max(thread.state.extracted_through, entries[-1].seq)
    return len(entries)


def flush(thread: Thread, *, keep_on_failure: bool = False) -> list[ChangeSet]:
    """Extract every pending message into the scope of the thread's last memory-on
    turn, or, for a thread that never had one, the scope in effect now.

    Args:
        thread: the thread to flush.
        keep_on_failure: when the extraction fails, save the pending messages
            with the scope (:func:`save_pending`) and log a warning instead of
            raising; what closing a thread does.

    Returns:
        One change set per stored text: the scope's saved transcripts' messages
        first, then the thread's, one per message. Empty when nothing was
        pending or memory is off.

    Raises:
        ProviderError, StoreError: the extraction failed (and, with
            ``keep_on_failure``, the messages could not be saved either); the
            messages stay pending in the thread.
    """
    target = thread.state.target or current_target()
    if target is None:
        return []
    memory = open_memory(target)
    try:
        changes = extract_saved(memory) + _extract_thread(thread, memory)
    except MemgraphError as exc:
        if not keep_on_failure:
            raise
        try:
            saved = save_pending(thread, memory)
        except MemgraphError:
            raise exc  # noqa: B904 - the extraction's error is the one to report; the
            # failed save is chained to it as its context
        log.warning(
            "memgraph: extracting thread %s failed (%s); its %d pending message(s) were saved "
            "with scope %r and will be extracted by the next extraction there",
            thread.id,
            exc,
            saved,
            memory.scope,
        )
        changes = []
    thread.state.turns = 0
    return [c for c in changes if c.episode is not None or c]


use_flusher(flush)
