"""``llm()`` and ``allm()``: chat calls that use memory without managing it.

A turn runs in four steps:

1. resolve the provider (the active memory's, or
   :func:`~memgraph.llm_calls.resolve.choose_provider` with the config in effect; the
   offline mock when nothing is configured);
2. with ``memory=True`` and memory active: if the thread's pending messages
   belong to another scope (the scope changed), extract them there first; on
   the thread's first memory-on turn, put the scope's stored summary into it
   and extract what earlier threads saved with the scope but could not extract;
   then run recall tiers 1+2 for the prompt and, when anything matches, put
   a system message starting with ``Relevant context from memory:`` right
   before the new user message (nothing is injected when nothing matches);
3. call the model and append the exchange (user message, assistant reply
   with its tool calls) to the thread;
4. with memory on and a thread: every ``autoExtract.interval`` turns extract
   the new messages, and compact the thread when it is over its threshold.

Steps 2 and 4 are automatic paths: they never ask for approval, and a memory
failure there is logged and retried later instead of losing the reply.
``allm`` is the async twin: it awaits the provider's ``acomplete`` when there
is one and runs the memory work in worker threads (with this context).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from memgraph.config import MemoryConfig
from memgraph.conversation.autoextract import extract_quietly, extract_saved
from memgraph.conversation.cache import Target, chat_provider, open_memory
from memgraph.conversation.compaction import Compaction, compact, resume
from memgraph.conversation.context import current_settings
from memgraph.conversation.follow_up import follow_up_query
from memgraph.conversation.thread import Thread
from memgraph.engine.memory import Memory
from memgraph.errors import MemgraphError
from memgraph.llm_calls.provider import ChatModel, Completion, Message, Usage
from memgraph.llm_calls.tokens import token_counter
from memgraph.models import ChangeSet

__all__ = ["CONTEXT_HEADER", "WHOLE_MEMORY_HEADER", "LLMReply", "allm", "llm"]

log = logging.getLogger("memgraph")

CONTEXT_HEADER = "Relevant context from memory:"
"""How the injected memory system message starts."""

WHOLE_MEMORY_HEADER = "Known information from memory:"
"""How the system message of ``memory="all"`` (the whole current memory) starts."""


@dataclass(frozen=True)
class LLMReply:
    """The reply of one :func:`llm` call.

    Attributes:
        text: the assistant's text (``""`` when it only called tools).
        completion: the provider's completion (model, usage, tool calls).
        context: the memory context injected into the call (``""`` when none).
        extracted: what automatic extraction stored after this turn, if it ran.
        compaction: what compaction did after this turn, if it ran.
    """

    text: str
    completion: Completion
    context: str = ""
    extracted: ChangeSet | None = None
    compaction: Compaction | None = None

    def __str__(self) -> str:
        return self.text

    @property
    def usage(self) -> Usage:
        """Token usage of the chat call."""
        return self.completion.usage

    @property
    def tool_calls(self) -> tuple[dict[str, Any], ...]:
        """Tool calls the model made, in the OpenAI shape."""
        return self.completion.tool_calls


@dataclass
class _Turn:
    chat: ChatModel
    new: list[Message]
    query: str
    options: dict[str, Any]
    system: str | None
    thread: Thread | None
    target: Target | None = None
    memory: Memory | None = None
    context: str = ""
    header: str = CONTEXT_HEADER


def _prepare(
    prompt: str | None,
    *,
    memory: bool | Literal["all"],
    thread: Thread | None,
    model: str | None,
    system: str | None,
    tools: Sequence[Mapping[str, Any]] | None,
    options: dict[str, Any],
) -> _Turn:
    """Steps 1 and 2: pick the model, open the memory, recall the context."""
    if prompt is None:
        if thread is None or not len(thread):
            raise ValueError("llm() needs a prompt, or a thread with messages to continue")
    elif not isinstance(prompt, str):
        raise TypeError(f"prompt must be a string, got {type(prompt).__name__}")
    config, explicit, target = current_settings()
    if not memory:
        target = None
    opened = open_memory(target) if target is not None else None
    if opened is not None and model is None:
        chat = opened.provider.chat
    else:
        chat = chat_provider(config or MemoryConfig(), explicit, model).chat
    if tools:
        options = {**options, "tools": [dict(tool) for tool in tools]}
    new: list[Message] = [] if prompt is None else [{"role": "user", "content": prompt}]
    query = prompt if prompt is not None else thread.last_user_text() if thread else ""
    if prompt is not None and thread is not None and opened is not None:
        # "And where does she work?" is recalled with the names said just before it
        try:
            query = follow_up_query(prompt, thread.last_user_text(), opened.names_in)
        except MemgraphError as exc:
            log.warning("memgraph: the names before this message could not be read (%s)", exc)
    turn = _Turn(chat, new, query, options, system, thread, target, opened)
    if opened is not None:
        _switch_scope(turn)
        _start(turn)
        try:
            if memory == "all":
                turn.header = WHOLE_MEMORY_HEADER
                turn.context = opened.known_information()
            elif turn.query.strip():
                turn.context = opened.recall(turn.query, rerank=False)
        except MemgraphError as exc:
            log.warning("memgraph: memory context could not be recalled (%s)", exc)
    return turn


def _switch_scope(turn: _Turn) -> None:
    """Extract messages said under another scope into that scope before moving on."""
    thread, previous = turn.thread, turn.thread.state.target if turn.thread else None
    if (
        thread is not None
        and previous is not None
        and turn.target is not None
        and previous.place != turn.target.place
    ):
        extract_quietly(thread, open_memory(previous))
        thread.state.turns = 0


def _start(turn: _Turn) -> None:
    """A thread's first memory-on turn: carry on the scope's summary, and extract the
    transcripts an earlier thread saved with the scope because it could not."""
    thread, opened = turn.thread, turn.memory
    if thread is None or opened is None or thread.state.target is not None:
        return
    try:
        resume(thread, opened)
        extract_saved(opened)
    except MemgraphError as exc:
        log.warning("memgraph: the scope's conversation state could not be loaded (%s)", exc)


def _request(turn: _Turn) -> list[Message]:
    history = turn.thread.to_messages() if turn.thread is not None else []
    system: list[Message] = [{"role": "system", "content": turn.system}] if turn.system else []
    note: list[Message] = []
    if turn.context:
        note = [{"role": "system", "content": f"{turn.header}\n{turn.context}"}]
    if turn.new:
        return [*system, *history, *note, *turn.new]
    leading = 0
    while leading < len(history) and history[leading].get("role") == "system":
        leading += 1
    return [*system, *history[:leading], *note, *history[leading:]]


def _record(turn: _Turn, completion: Completion) -> None:
    if turn.thread is not None:
        for message in turn.new:
            turn.thread.add(message)
        turn.thread.add(completion.as_message())


def _upkeep(turn: _Turn) -> tuple[ChangeSet | None, Compaction | None]:
    """Step 4: automatic extraction at the interval, then compaction when over the threshold."""
    thread, opened = turn.thread, turn.memory
    if thread is None or opened is None:
        return None, None
    state = thread.state
    state.target = turn.target
    state.turns += 1
    extracted = None
    interval = opened.config.auto_extract.interval
    if interval > 0 and state.turns >= interval:
        extracted = extract_quietly(thread, opened)
        if not thread.pending():
            state.turns = 0
    compaction = None
    try:
        compaction = compact(thread, opened, count_tokens=token_counter(turn.chat.model or None))
    except MemgraphError as exc:
        log.warning("memgraph: compaction failed (%s); the thread was left as it was", exc)
    return extracted, compaction


def _reply(turn: _Turn, completion: Completion, upkeep: tuple[Any, Any]) -> LLMReply:
    return LLMReply(completion.text, completion, turn.context, *upkeep)


def llm(
    prompt: str | None = None,
    *,
    memory: bool | Literal["all"] = False,
    thread: Thread | None = None,
    model: str | None = None,
    system: str | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    **options: Any,
) -> LLMReply:
    """Call the configured chat model, optionally with long-term memory.

    Args:
        prompt: the user's message; ``None`` continues the thread (e.g. after
            adding tool replies).
        memory: recall context for the prompt and inject it, and keep the
            thread's memory up to date (extraction, compaction). ``"all"``
            injects the whole current memory instead, under ``Known
            information from memory:`` (for small memories). No-op when memory
            is off.
        thread: the conversation; the exchange is appended to it.
        model: a chat model overriding the configured one.
        system: a system prompt for this call only (not stored in the thread).
        tools: tool definitions in the OpenAI shape.
        **options: passed to the provider (``temperature``, ``tool_choice``, ...).

    Returns:
        The reply: ``str(reply)`` is its text; it also carries the completion
        (usage, tool calls) and the injected context.

    Raises:
        ValueError: no prompt and no thread to continue.
        TypeError: ``prompt`` is not a string.
        ProviderError: the chat call failed; the thread is unchanged.
        ConfigError: the configuration is invalid.
    """
    turn = _prepare(
        prompt,
        memory=memory,
        thread=thread,
        model=model,
        system=system,
        tools=tools,
        options=options,
    )
    completion = turn.chat.complete(_request(turn), **turn.options)
    _record(turn, completion)
    return _reply(turn, completion, _upkeep(turn))


async def allm(
    prompt: str | None = None,
    *,
    memory: bool | Literal["all"] = False,
    thread: Thread | None = None,
    model: str | None = None,
    system: str | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    **options: Any,
) -> LLMReply:
    """Async twin of :func:`llm`: the same arguments, result and errors.

    The chat call awaits the provider's ``acomplete`` when it has one (else it
    runs ``complete`` in a worker thread); recall, extraction and compaction
    run in worker threads, so the event loop is never blocked.

    Raises:
        ValueError: no prompt and no thread to continue.
        TypeError: ``prompt`` is not a string.
        ProviderError: the chat call failed; the thread is unchanged.
        ConfigError: the configuration is invalid.
    """
    turn = await asyncio.to_thread(
        _prepare,
        prompt,
        memory=memory,
        thread=thread,
        model=model,
        system=system,
        tools=tools,
        options=options,
    )
    request = _request(turn)
    acomplete = getattr(turn.chat, "acomplete", None)
    if callable(acomplete):
        completion: Completion = await acomplete(request, **turn.options)
    else:
        completion = await asyncio.to_thread(turn.chat.complete, request, **turn.options)
    _record(turn, completion)
    upkeep = await asyncio.to_thread(_upkeep, turn) if turn.memory else (None, None)
    return _reply(turn, completion, upkeep)
