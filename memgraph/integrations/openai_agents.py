"""memgraph for the OpenAI Agents SDK (``pip install 'memgraph-kg[openai-agents]'``).

* :class:`MemgraphSession` implements the SDK's ``Session`` protocol: a
  conversation's items are kept in a memgraph scope, so history survives
  restarts and is shared by every process using the scope's store, and the
  conversation is extracted into the scope's long-term memory the way a
  :class:`memgraph.Thread` is: every ``autoExtract.interval`` user turns (5),
  once the turn is answered, the items not yet extracted are remembered one
  message at a time, each its own episode with its speaker (tool calls and
  system messages left out; the assistant's kept as context, with no model
  call), and the cursor moves past each message once it is stored, so an item
  is never extracted twice and a failed pass is retried by the next one.
* :func:`memory_tools` gives an agent ``remember`` and ``recall`` function tools
  over a memory, so facts told in one session are recalled in another.

Items live in the scope's key/value face under ``agents:<session id>:``, one
key per item; ``pop_item`` and ``clear_session`` write tombstones (the key
history keeps them). Clearing a session keeps what was extracted from it: that
is long-term memory, forgotten with ``forget`` or ``purge``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from types import TracebackType
from typing import Any, TypeVar, cast
from urllib.parse import quote

from memgraph import AsyncMemory, ChangeSet, KeyVersion, MemgraphError, Memory
from memgraph.conversation.autoextract import SOURCE, message_items
from memgraph.conversation.thread import ThreadMessage, spoken
from memgraph.llm_calls.provider import Message, message_text
from memgraph.speakers import speaker_name

try:
    from agents import FunctionTool, SessionSettings, TResponseInputItem, function_tool
    from agents.memory.session_settings import resolve_session_limit
except ImportError as exc:  # pragma: no cover - exercised in a process without the SDK
    raise ImportError(
        "memgraph.integrations.openai_agents needs the OpenAI Agents SDK; install it with "
        "pip install 'memgraph-kg[openai-agents]'"
    ) from exc

__all__ = ["MemgraphSession", "memory_tools"]

log = logging.getLogger("memgraph")

NOTHING = "(nothing relevant remembered)"

T = TypeVar("T")


def _async(memory: AsyncMemory | Memory) -> AsyncMemory:
    return memory if isinstance(memory, AsyncMemory) else AsyncMemory.wrap(memory)


class MemgraphSession:
    """An Agents SDK ``Session`` kept in a memgraph scope, extracted into its memory.

    Args:
        session_id: the conversation's id; the same id in another run or process
            continues the same history.
        memory: the memory that keeps the history and learns from it.
        extract_every: user turns between extraction passes; default the
            memory's ``autoExtract.interval``; ``0`` only extracts on :meth:`flush`.
        session_settings: the SDK's session settings (``limit`` for ``get_items``).

    Use ``async with`` (or call :meth:`flush`) to extract what is pending when
    the conversation ends; otherwise the next session with this id extracts it.

    Raises:
        ValueError: ``session_id`` is empty or ``extract_every`` is negative.
    """

    def __init__(
        self,
        session_id: str,
        memory: AsyncMemory | Memory,
        *,
        extract_every: int | None = None,
        session_settings: SessionSettings | None = None,
    ) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise ValueError(f"session_id must be a non-empty string, got {session_id!r}")
        if extract_every is not None and (
            isinstance(extract_every, bool)
            or not isinstance(extract_every, int)
            or extract_every < 0
        ):
            raise ValueError(f"extract_every must be 0 or more user turns, got {extract_every!r}")
        self.session_id = session_id
        self.session_settings = session_settings
        self.memory = _async(memory)
        self.extract_every = extract_every
        self._prefix = f"agents:{quote(session_id, safe='')}:"
        self._items = self._prefix + "item:"
        self._cursor = self._prefix + "extracted"
        self._lock = asyncio.Lock()
        self._stamp = 0

    def __repr__(self) -> str:
        return f"MemgraphSession({self.session_id!r}, {self.memory!r})"

    async def __aenter__(self) -> MemgraphSession:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            await self.flush()
        except MemgraphError as exc:
            if error is None:
                raise
            log.warning("memgraph: extracting session %r failed: %s", self.session_id, exc)

    # ---------------------------------------------------------------- history
    async def _stored(self) -> list[tuple[str, Any]]:
        """The session's current items as ``(key, item)``, oldest first."""
        histories = await self.memory.kv.histories(self._items)
        current = [(key, versions[-1].value) for key, versions in _current(histories)]
        return sorted(current, key=lambda pair: pair[0])

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The conversation so far, oldest first; with ``limit``, its last ``limit`` items."""
        chosen = resolve_session_limit(limit, self.session_settings)
        items = [cast(TResponseInputItem, item) for _, item in await self._stored()]
        if chosen is None or chosen < 0:
            return items
        return items[-chosen:] if chosen else []

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append ``items`` (one durable write), then extract if enough turns are pending.

        Raises:
            TypeError: an item is not JSON-serializable; nothing is stored.
            StoreError: the items could not be stored.
        """
        if not items:
            return
        async with self._lock:
            self._stamp = max(time.time_ns(), self._stamp + 1)
            values = {
                f"{self._items}{self._stamp:020d}.{index:06d}": dict(item)
                for index, item in enumerate(items)
            }
            await _settled(self.memory.kv.remember_many(values))
            every = await self._interval()
            # A turn counts once answered: the user's message is extracted with its reply.
            if every and _role(items[-1]) != "user" and await self._user_turns() >= every:
                try:
                    await self._extract()
                except MemgraphError as exc:
                    log.warning(
                        "memgraph: extracting session %r failed (%s); it will be retried",
                        self.session_id,
                        exc,
                    )

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the newest item (``None`` when the session is empty)."""
        async with self._lock:
            stored = await self._stored()
            if not stored:
                return None
            key, item = stored[-1]
            await _settled(self.memory.kv.forget(key))
            return cast(TResponseInputItem, item)

    async def clear_session(self) -> None:
        """Remove every item of the session (what was extracted from it stays remembered)."""
        async with self._lock:
            keys = [key for key, _ in await self._stored()]
            await _settled(self.memory.kv.forget_many(keys))

    # ------------------------------------------------------------- extraction
    async def flush(self) -> list[ChangeSet]:
        """Extract every item not yet in long-term memory now.

        Returns:
            One change set per stored message (empty when nothing was pending).

        Raises:
            ProviderError, StoreError: the extraction failed; the items from the
                failing one on stay pending.
        """
        async with self._lock:
            return await self._extract()

    async def _interval(self) -> int:
        if self.extract_every is not None:
            return self.extract_every
        return (await self.memory.open()).config.auto_extract.interval

    async def _pending(self) -> list[tuple[str, Any]]:
        through = await self.memory.kv.recall(self._cursor)
        after = through if isinstance(through, str) else ""
        return [(key, item) for key, item in await self._stored() if key > after]

    async def _user_turns(self) -> int:
        """User messages not yet extracted."""
        return sum(1 for _, item in await self._pending() if _role(item) == "user")

    async def _extract(self) -> list[ChangeSet]:
        pending = await self._pending()
        if not pending:
            return []
        entries = [
            ThreadMessage(number, message)
            for number, (_, item) in enumerate(pending, start=1)
            if (message := _message(item)) is not None
        ]
        keys = [key for key, _ in pending]
        turns = [
            (speaker_name(role), text, keys[entry.seq - 1]) for entry, role, text in spoken(entries)
        ]
        stamp = len(self._items)
        items = message_items(
            [(speaker, text, [key[stamp:], key[stamp:]]) for speaker, text, key in turns],
            {"via": SOURCE, "thread": self.session_id},
            key="items",
        )
        stored = 0

        def heard(done: int, _total: int) -> None:
            nonlocal stored
            stored = done

        try:
            changes = await self.memory.remember_many(items, progress=heard)
        except MemgraphError:
            if stored:  # the messages stored before the failure are never extracted again
                await self.memory.kv.remember(self._cursor, turns[stored - 1][2])
            raise
        await self.memory.kv.remember(self._cursor, keys[-1])
        return changes


async def _settled(write: Awaitable[T]) -> T:
    """Await a write to its end even when the caller is cancelled meanwhile (its
    worker thread would finish it anyway), then let the cancellation through: the
    caller never sees a cancelled write that was in fact stored (as the SDK's own
    sessions do)."""
    task = asyncio.ensure_future(write)
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        task.result()  # a failed write is the error to report
        raise asyncio.CancelledError
    return task.result()


def _current(histories: dict[str, list[KeyVersion]]) -> list[tuple[str, list[KeyVersion]]]:
    return [(key, versions) for key, versions in histories.items() if not versions[-1].deleted]


def _role(item: Any) -> str | None:
    role = item.get("role") if isinstance(item, dict) else None
    return role if isinstance(role, str) else None


def _message(item: Any) -> Message | None:
    """A user or assistant message item as a chat message (other items carry no
    conversation text: tool calls, their outputs, reasoning)."""
    role = _role(item)
    if role not in ("user", "assistant") or item.get("type", "message") != "message":
        return None
    text = message_text(item)
    if not text:
        parts = item.get("content")
        if isinstance(parts, list):  # refusals carry their text under "refusal"
            text = "\n".join(
                str(p.get("refusal")) for p in parts if isinstance(p, dict) and p.get("refusal")
            )
    return {"role": role, "content": text} if text else None


def memory_tools(memory: AsyncMemory | Memory, *, rerank: bool = True) -> list[FunctionTool]:
    """``remember`` and ``recall`` as Agents SDK function tools over ``memory``.

    Args:
        memory: the memory the agent writes and reads.
        rerank: let ``recall`` ask the model which facts are relevant (tier 3).

    Returns:
        ``[remember, recall]``, for ``Agent(tools=...)``.
    """
    target = _async(memory)

    @function_tool
    async def remember(text: str) -> str:
        """Store something worth knowing later (a fact about the user, a preference,
        a decision) in long-term memory.

        Args:
            text: what to remember, as a plain sentence.
        """
        return _told(await target.remember(text))

    @function_tool
    async def recall(query: str) -> str:
        """Look up what long-term memory knows that is relevant to a question.

        Args:
            query: the question or topic.
        """
        return await target.recall(query, rerank=rerank) or NOTHING

    return [remember, recall]


def _told(changes: ChangeSet) -> str:
    """What a remember stored, for the model to read."""
    if changes.unusable_reply:
        return "Kept the text, but no facts could be drawn from it yet."
    names = {entity.id: entity.name for entity in changes.added_entities}
    for link in changes.added_relations:
        names.update({link.from_id: link.from_name, link.to_id: link.to_name})
    learned = [
        f"{names[fact.entity_id]}: {fact.content}" if fact.entity_id in names else fact.content
        for fact in changes.added_observations
    ]
    said = " ".join(learned).lower()
    learned += [  # links a fact does not already say ("works at Acme" and works_at → Acme)
        f"{r.from_name} {r.type.replace('_', ' ')} {r.to_name}"
        for r in changes.added_relations
        if r.to_name.lower() not in said
    ]
    if not learned:
        return "Nothing new: that was already known."
    return "Remembered: " + "; ".join(learned)
