"""Compaction: fold the older half of a long thread into one summary message.

When a memory-on thread grows past ``compaction.threshold`` (messages, or
tokens counted with tiktoken for the model when ``compaction.trigger`` is
``"token"``):

1. keep the leading system messages, except an older summary, which is
   replaced, never stacked;
2. split the rest near its middle (by messages or by tokens) at a safe
   boundary: the kept tail starts at a user message (or, in a long tool loop
   with no user message to split at, an assistant message), never at a tool
   reply, so no tool reply is orphaned from the call that asked for it;
3. extract the facts of the part being compacted (messages not yet extracted);
4. summarize that part with the LLM, and merge the summary with the previous
   one (the thread's, else the scope's ``summary.json``);
5. persist ``summary.json`` (``summary``, ``lastCompactedAt``,
   ``messagesSummarized``) and rebuild the thread as the system prefix, one
   ``Previous conversation summary:`` system message, and the kept tail.

With no safe boundary the thread is left alone and a warning logged. Planning
(:func:`plan_compaction`) is pure; :func:`compact` does the side effects.

A thread's first memory-on turn in a scope (:func:`resume`) puts the scope's
stored summary into the thread, so what lived only in the summary of an
earlier conversation is known to the next one.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from memgraph.clock import now_iso
from memgraph.conversation.autoextract import extract_quietly
from memgraph.conversation.thread import SUMMARY_HEADER, Thread, ThreadMessage, transcript
from memgraph.engine.memory import Memory
from memgraph.llm_calls.ask import ask_json
from memgraph.llm_calls.prompts import (
    MERGE_SCHEMA,
    MERGE_SYSTEM,
    SUMMARIZE_SCHEMA,
    SUMMARIZE_SYSTEM,
    merge_message,
    summarize_message,
)
from memgraph.llm_calls.provider import ChatModel
from memgraph.llm_calls.tokens import TokenCounter

__all__ = [
    "Compaction",
    "CompactionPlan",
    "compact",
    "measure",
    "message_tokens",
    "orphaned_tool_replies",
    "plan_compaction",
    "resume",
]

log = logging.getLogger("memgraph")

MESSAGE_OVERHEAD = 4
"""Tokens a chat format spends per message on roles and separators."""


@dataclass(frozen=True)
class Compaction:
    """What one compaction did.

    Attributes:
        summary: the thread's summary now (merged with the previous one).
        summarized: messages folded into it by this compaction.
        messages_summarized: messages folded into it in all (``summary.json``).
        kept: messages kept verbatim after the summary.
    """

    summary: str
    summarized: int
    messages_summarized: int
    kept: int


@dataclass(frozen=True)
class CompactionPlan:
    """How to compact a thread: ``prefix`` + summary of ``head`` + ``tail``.

    ``head`` is empty when the thread is over its threshold but has no safe
    boundary to split at.
    """

    prefix: tuple[ThreadMessage, ...]
    previous: str | None
    head: tuple[ThreadMessage, ...]
    tail: tuple[ThreadMessage, ...]


def message_tokens(message: Mapping[str, Any], count_tokens: TokenCounter) -> int:
    """Tokens of one message: its text, its tool calls, and the per-message overhead."""
    content = message.get("content")
    text = content if isinstance(content, str) else orjson.dumps(content).decode()
    tokens = count_tokens(text) if text else 0
    if message.get("tool_calls"):
        tokens += count_tokens(orjson.dumps(message["tool_calls"]).decode())
    return tokens + MESSAGE_OVERHEAD


def _weights(entries: Sequence[ThreadMessage], trigger: str, count: TokenCounter) -> list[int]:
    if trigger == "token":
        return [message_tokens(e.message, count) for e in entries]
    return [1] * len(entries)


def measure(entries: Sequence[ThreadMessage], *, trigger: str, count_tokens: TokenCounter) -> int:
    """The size of a thread as ``trigger`` counts it (messages or tokens)."""
    return sum(_weights(entries, trigger, count_tokens))


def _split(rest: Sequence[ThreadMessage], weights: Sequence[int]) -> int | None:
    """The index where the kept tail starts: a safe boundary nearest the middle.

    A user message (the start of an exchange) is preferred; an assistant
    message is used only when the rest has no user message to split at (an
    agent's long tool loop). A tool reply never starts the tail.
    """
    half = sum(weights) / 2
    best: dict[str, tuple[float, int]] = {}
    before = 0
    for index, entry in enumerate(rest):
        if index > 0 and entry.role in ("user", "assistant"):
            distance = abs(before - half)
            if entry.role not in best or distance < best[entry.role][0]:
                best[entry.role] = (distance, index)
        before += weights[index]
    chosen = best.get("user") or best.get("assistant")
    return None if chosen is None else chosen[1]


def plan_compaction(
    entries: Sequence[ThreadMessage],
    *,
    trigger: str,
    threshold: int,
    count_tokens: TokenCounter,
) -> CompactionPlan | None:
    """The compaction plan for a thread, or ``None`` when it is within its threshold.

    A threshold of 0 or less turns compaction off.
    """
    if threshold <= 0:
        return None
    weights = _weights(entries, trigger, count_tokens)
    if sum(weights) <= threshold:
        return None
    leading = 0
    while leading < len(entries) and entries[leading].role == "system":
        leading += 1
    prefix = tuple(e for e in entries[:leading] if not e.is_summary)
    summaries = [e.text[len(SUMMARY_HEADER) :].strip() for e in entries[:leading] if e.is_summary]
    previous = "\n".join(s for s in summaries if s) or None
    rest, rest_weights = entries[leading:], weights[leading:]
    split = _split(rest, rest_weights)
    if split is None:
        return CompactionPlan(prefix, previous, (), tuple(rest))
    return CompactionPlan(prefix, previous, tuple(rest[:split]), tuple(rest[split:]))


def orphaned_tool_replies(messages: Sequence[Mapping[str, Any]]) -> list[int]:
    """Indexes of tool replies whose call is not in an earlier assistant message."""
    called: set[str] = set()
    orphans: list[int] = []
    for index, message in enumerate(messages):
        if message.get("role") == "assistant":
            called |= {str(c.get("id")) for c in message.get("tool_calls") or ()}
        elif message.get("role") == "tool" and message.get("tool_call_id") not in called:
            orphans.append(index)
    return orphans


def _ask_summary(chat: ChatModel, system: str, user: str, schema: Any) -> str | None:
    def validate(document: Mapping[str, Any]) -> str:
        summary = document.get("summary")
        if not isinstance(summary, str) or not summary.strip():
            raise ValueError("'summary' must be a non-empty string")
        return summary.strip()

    return ask_json(chat, system, user, schema, validate).value


def compact(thread: Thread, memory: Memory, *, count_tokens: TokenCounter) -> Compaction | None:
    """Compact ``thread`` if it is over its threshold (see the module docstring).

    Returns:
        What was done, or ``None`` when nothing was (within the threshold, no
        safe boundary, or the summary could not be made; a warning says which).

    Raises:
        ProviderError: the model could not be reached; the thread is unchanged.
        StoreError: ``summary.json`` could not be written; the thread is unchanged.
    """
    settings = memory.config.compaction
    plan = plan_compaction(
        thread.entries(),
        trigger=settings.trigger,
        threshold=settings.threshold,
        count_tokens=count_tokens,
    )
    if plan is None:
        return None
    if not plan.head:
        log.warning(
            "memgraph: thread %s is over its compaction threshold but has no safe split "
            "point (the messages after its system prompt start a tool exchange that never "
            "ends); not compacted",
            thread.id,
        )
        return None
    extract_quietly(thread, memory, through=plan.head[-1].seq)
    chat = memory.provider.chat
    new = _ask_summary(
        chat,
        SUMMARIZE_SYSTEM,
        summarize_message(transcript(plan.head, tools=True)),
        SUMMARIZE_SCHEMA,
    )
    if new is None:
        log.warning("memgraph: thread %s could not be summarized; not compacted", thread.id)
        return None
    previous, counted = plan.previous, thread.state.messages_summarized
    if previous is None:
        stored = memory.summary() or {}
        if isinstance(stored.get("summary"), str) and stored["summary"].strip():
            previous = stored["summary"].strip()
            counted = int(stored.get("messagesSummarized") or 0)
    summary = new
    if previous:
        merged = _ask_summary(chat, MERGE_SYSTEM, merge_message(previous, new), MERGE_SCHEMA)
        summary = merged if merged is not None else f"{previous}\n{new}"
    total = counted + len(plan.head)
    fields = {"summary": summary, "lastCompactedAt": now_iso(), "messagesSummarized": total}
    memory.update_summary(lambda stored: {**(stored or {}), **fields})
    thread.rebuild(plan.prefix, summary, plan.tail)
    thread.state.messages_summarized = total
    return Compaction(summary, len(plan.head), total, len(plan.tail))


def resume(thread: Thread, memory: Memory) -> bool:
    """Put the scope's stored summary into a thread that has none, after its
    leading system messages (a thread's first memory-on turn does this).

    Returns:
        Whether a summary was added.

    Raises:
        StoreError: ``summary.json`` could not be read.
    """
    if thread.summary is not None:
        return False
    stored = memory.summary() or {}
    text = stored.get("summary")
    if not isinstance(text, str) or not text.strip():
        return False
    entries = thread.entries()
    leading = 0
    while leading < len(entries) and entries[leading].role == "system":
        leading += 1
    thread.rebuild(entries[:leading], text.strip(), entries[leading:])
    counted = stored.get("messagesSummarized")
    thread.state.messages_summarized = counted if isinstance(counted, int) else 0
    return True
