"""``Thread``: one conversation's messages, each with a stable sequence number.

A thread holds OpenAI-shaped messages (system, user, assistant with optional
``tool_calls``, tool replies with ``tool_call_id``). Every message gets a
sequence number when it is added and keeps it for good, so bookkeeping such as
"extracted up to message 41" stays true after compaction rewrites the thread.
This module is pure data; :mod:`memgraph.conversation.turn` drives it.
"""

from __future__ import annotations

import copy
import logging
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

from memgraph.llm_calls.provider import Message, message_text
from memgraph.models import ChangeSet

if TYPE_CHECKING:
    from memgraph.conversation.cache import Target

log = logging.getLogger("memgraph")

__all__ = [
    "ROLES",
    "SUMMARY_HEADER",
    "Thread",
    "ThreadMessage",
    "spoken",
    "transcript",
    "use_flusher",
]

ROLES = ("system", "user", "assistant", "tool")
SUMMARY_HEADER = "Previous conversation summary:"
"""How the system message carrying the compacted conversation starts."""


@dataclass(frozen=True)
class ThreadMessage:
    """A message and its sequence number in its thread."""

    seq: int
    message: Message

    @property
    def role(self) -> str:
        return str(self.message["role"])

    @property
    def text(self) -> str:
        return message_text(self.message)

    @property
    def is_summary(self) -> bool:
        """Whether this is the ``Previous conversation summary:`` system message."""
        return self.role == "system" and self.text.startswith(SUMMARY_HEADER)


@dataclass
class ThreadState:
    """Memory bookkeeping of a thread (kept by :mod:`memgraph.conversation.turn`).

    Attributes:
        extracted_through: every non-system message with a sequence number up
            to this one has been extracted into memory.
        turns: memory-on LLM turns since the last automatic extraction.
        messages_summarized: messages folded into the thread's summary so far.
        target: where the thread's last memory-on turn went (a
            :class:`~memgraph.conversation.cache.Target`); pending messages belong there.
    """

    extracted_through: int = 0
    turns: int = 0
    messages_summarized: int = 0
    target: Target | None = None


class Flusher(Protocol):
    """Extracts a thread's pending messages (see :func:`memgraph.conversation.autoextract.flush`)."""

    def __call__(self, thread: Thread, *, keep_on_failure: bool = False) -> list[ChangeSet]: ...


_flushers: list[Flusher] = []


def use_flusher(flusher: Flusher) -> None:
    """Install what :meth:`Thread.flush` runs (the conversation layer installs
    :func:`memgraph.conversation.autoextract.flush` when it is imported, so this
    pure-data module never imports the layer that drives it)."""
    _flushers[:] = [flusher]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def spoken(
    entries: Iterable[ThreadMessage], *, tools: bool = False
) -> Iterator[tuple[ThreadMessage, str, str]]:
    """The messages a transcript shows, as ``(entry, role, text)`` with the text on
    one line: system messages left out, and tool plumbing unless ``tools`` is true
    (then tool calls read ``[calls name]`` and tool replies are cut at 500
    characters)."""
    for entry in entries:
        role, text = entry.role, _one_line(entry.text)
        if role == "system":
            continue
        if role == "tool":
            if tools and text:
                yield entry, role, text[:500]
            continue
        calls = entry.message.get("tool_calls") or ()
        if tools and calls:
            names = ", ".join(str(c.get("function", {}).get("name", "?")) for c in calls)
            text = f"{text} [calls {names}]".strip()
        if text:
            yield entry, role, text


def transcript(entries: Iterable[ThreadMessage], *, tools: bool = False) -> str:
    """The entries as ``role: text`` lines, one per message (system messages left out).

    Tool plumbing is left out unless ``tools`` is true; then tool calls read
    ``assistant: [calls name]`` and tool replies ``tool: text`` (cut at 500
    characters). Line breaks inside a message become spaces.
    """
    return "\n".join(f"{role}: {text}" for _, role, text in spoken(entries, tools=tools))


class Thread:
    """A conversation: messages in order, tool calls preserved.

    Args:
        messages: initial messages (OpenAI-shaped dicts).
        id: a stable id (kept with extracted episodes); a random one by default.

    Raises:
        ValueError: a message has an unknown role or misses a required field.

    Pass it to :func:`memgraph.llm` to have the exchange appended. Used as a
    context manager, it extracts the messages not yet in memory on exit, also
    the ones added with :meth:`add_user` / :meth:`add_assistant` without a
    model call::

        with Thread() as thread:
            llm("Hi, I'm Alice.", memory=True, thread=thread)
            thread.add_user("I work at Acme.")
    """

    def __init__(self, messages: Iterable[Message] = (), *, id: str | None = None) -> None:
        self.id = id or uuid.uuid4().hex[:12]
        self.state = ThreadState()
        self._entries: list[ThreadMessage] = []
        self._next_seq = 1
        for message in messages:
            self.add(message)

    def __repr__(self) -> str:
        return f"Thread(id={self.id!r}, messages={len(self._entries)})"

    # ------------------------------------------------------------------ adding
    def add(self, message: Mapping[str, Any]) -> int:
        """Append a message (a copy of it) and return its sequence number.

        Raises:
            ValueError: unknown role, a tool reply without ``tool_call_id``,
                or malformed ``tool_calls``.
        """
        if not isinstance(message, Mapping):
            raise TypeError(f"a message must be a dict, got {type(message).__name__}")
        role = message.get("role")
        if role not in ROLES:
            raise ValueError(f"message role must be one of {ROLES}, got {role!r}")
        if role == "tool" and not isinstance(message.get("tool_call_id"), str):
            raise ValueError("a tool message needs the string 'tool_call_id' it answers")
        calls = message.get("tool_calls")
        if calls is not None and (
            role != "assistant"
            or not isinstance(calls, list)
            or not all(isinstance(c, Mapping) and isinstance(c.get("id"), str) for c in calls)
        ):
            raise ValueError(
                "'tool_calls' must be a list of calls with ids, on an assistant message"
            )
        seq = self._next_seq
        self._next_seq += 1
        self._entries.append(ThreadMessage(seq, copy.deepcopy(dict(message))))
        return seq

    def add_system(self, content: str) -> int:
        """Append a system message."""
        return self.add({"role": "system", "content": content})

    def add_user(self, content: str | list[Any]) -> int:
        """Append a user message (text, or a list of content parts)."""
        return self.add({"role": "user", "content": content})

    def add_assistant(
        self, content: str = "", *, tool_calls: Sequence[Mapping[str, Any]] | None = None
    ) -> int:
        """Append an assistant message, with the tool calls it made, if any."""
        message: Message = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = [dict(call) for call in tool_calls]
        return self.add(message)

    def add_tool(self, tool_call_id: str, content: str, *, name: str | None = None) -> int:
        """Append the reply to the tool call ``tool_call_id``."""
        message: Message = {"role": "tool", "tool_call_id": tool_call_id, "content": content}
        if name:
            message["name"] = name
        return self.add(message)

    # ----------------------------------------------------------------- reading
    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.to_messages())

    def to_messages(self) -> list[Message]:
        """The messages, as copies, ready to send to a chat model."""
        return [copy.deepcopy(entry.message) for entry in self._entries]

    def entries(self) -> list[ThreadMessage]:
        """The messages with their sequence numbers (copies)."""
        return [ThreadMessage(e.seq, copy.deepcopy(e.message)) for e in self._entries]

    @property
    def summary(self) -> str | None:
        """The text of the compacted-conversation summary, if the thread has one."""
        for entry in self._entries:
            if entry.is_summary:
                return entry.text[len(SUMMARY_HEADER) :].strip()
        return None

    def last_user_text(self) -> str:
        """The text of the last user message ("" when there is none)."""
        for entry in reversed(self._entries):
            if entry.role == "user":
                return entry.text
        return ""

    def pending(self, through: int | None = None) -> list[ThreadMessage]:
        """Non-system messages not yet extracted into memory (up to seq ``through``)."""
        return [
            e
            for e in self.entries()
            if e.seq > self.state.extracted_through
            and e.role != "system"
            and (through is None or e.seq <= through)
        ]

    # -------------------------------------------------------------- rewriting
    def rebuild(
        self, prefix: Sequence[ThreadMessage], summary: str, tail: Sequence[ThreadMessage]
    ) -> None:
        """Replace the messages with ``prefix``, one summary message, then ``tail``.

        Kept messages keep their sequence numbers; the summary gets a new one.
        """
        note = ThreadMessage(
            self._next_seq, {"role": "system", "content": f"{SUMMARY_HEADER}\n{summary}"}
        )
        self._next_seq += 1
        self._entries = [*prefix, note, *tail]

    # ---------------------------------------------------------------- flushing
    def flush(self) -> list[ChangeSet]:
        """Extract the messages not yet in memory (an automatic path: no approval
        is asked), also the ones added without a model call.

        They go to the scope of the thread's last memory-on turn, or, for a
        thread that never had one, to the scope in effect now. Transcripts that
        an earlier thread saved with that scope because it could not extract
        them are extracted first.

        Returns:
            One :class:`~memgraph.models.ChangeSet` per stored message (its
            ``episode`` is the message; the change set is empty when it held no
            new fact). An empty list when nothing was pending or memory is off.

        Raises:
            ProviderError, StoreError: the extraction failed; the messages from
                the failing one on stay pending and the next flush retries them.
        """
        return _flushers[0](self) if _flushers else []

    def close(self) -> list[ChangeSet]:
        """Flush, and when the extraction fails, keep the messages: they are saved
        with the scope and extracted by the next extraction there (a warning says so).

        Returns:
            What :meth:`flush` returns (an empty list when the messages were saved).

        Raises:
            ProviderError, StoreError: the extraction failed and the messages
                could not be saved either.
        """
        return _flushers[0](self, keep_on_failure=True) if _flushers else []

    def __enter__(self) -> Thread:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if error is None:
            self.close()
            return
        try:
            self.close()
        except Exception as exc:  # the block's own error is the one to propagate
            log.warning("memgraph: thread %s could not be flushed (%s)", self.id, exc)

    # --------------------------------------------------------------- persisting
    def to_dict(self) -> dict[str, Any]:
        """A JSON-serializable snapshot: messages with their numbers, and the bookkeeping."""
        return {
            "id": self.id,
            "messages": [{"seq": e.seq, **e.message} for e in self.entries()],
            "nextSeq": self._next_seq,
            "extractedThrough": self.state.extracted_through,
            "turns": self.state.turns,
            "messagesSummarized": self.state.messages_summarized,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Thread:
        """Rebuild a thread saved with :meth:`to_dict`.

        Raises:
            ValueError: a message is malformed.
        """
        thread = cls(id=str(data.get("id") or "") or None)
        for raw in data.get("messages") or []:
            message = {k: v for k, v in raw.items() if k != "seq"}
            thread._next_seq = max(thread._next_seq, int(raw.get("seq", thread._next_seq)))
            thread.add(message)
        thread._next_seq = max(thread._next_seq, int(data.get("nextSeq", 0)))
        thread.state.extracted_through = int(data.get("extractedThrough", 0))
        thread.state.turns = int(data.get("turns", 0))
        thread.state.messages_summarized = int(data.get("messagesSummarized", 0))
        return thread
