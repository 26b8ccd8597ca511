"""Asking a chat model for JSON: one call, one repair retry, then give up politely.

The asking itself is an *exchange*: a generator that yields each
:class:`ChatRequest` it needs answered and receives the :class:`Completion`,
so the same logic (prompts, parsing, the repair retry) runs with blocking calls
(:func:`ask_json`, :func:`run_exchange`) and with awaited ones
(:func:`aask_json`, :func:`arun_exchange`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from memgraph.llm_calls.parsing import ReplyError, parse_json_reply
from memgraph.llm_calls.prompts import REPAIR_INSTRUCTION
from memgraph.llm_calls.provider import (
    ChatModel,
    Completion,
    JsonSchema,
    Message,
    Usage,
    acomplete,
)

__all__ = [
    "Answer",
    "ChatRequest",
    "Exchange",
    "aask_json",
    "arun_exchange",
    "ask_json",
    "json_exchange",
    "run_exchange",
]

log = logging.getLogger("memgraph")

T = TypeVar("T")


@dataclass
class Answer(Generic[T]):
    """The validated value (or ``None``), the problems met, and the calls made."""

    value: T | None
    problems: list[str] = field(default_factory=list)
    calls: int = 0
    usage: list[Usage] = field(default_factory=list)


@dataclass(frozen=True)
class ChatRequest:
    """One chat call an exchange needs answered."""

    messages: Sequence[Message]
    schema: JsonSchema | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


Exchange = Generator[ChatRequest, Completion, T]
"""Model calls as a generator: yields each request, is sent its completion, returns the result."""


def run_exchange(chat: ChatModel, exchange: Exchange[T]) -> T:
    """Drive ``exchange`` with ``chat.complete``; provider errors propagate."""
    try:
        request = next(exchange)
        while True:
            completion = chat.complete(request.messages, schema=request.schema, **request.options)
            request = exchange.send(completion)
    except StopIteration as done:
        result: T = done.value
        return result
    finally:
        exchange.close()


async def arun_exchange(chat: ChatModel, exchange: Exchange[T]) -> T:
    """Drive ``exchange`` with awaited calls (:func:`~memgraph.llm_calls.provider.acomplete`)."""
    try:
        request = next(exchange)
        while True:
            completion = await acomplete(
                chat, request.messages, schema=request.schema, **request.options
            )
            request = exchange.send(completion)
    except StopIteration as done:
        result: T = done.value
        return result
    finally:
        exchange.close()


def json_exchange(
    system: str,
    user: str,
    schema: JsonSchema,
    validate: Callable[[dict[str, object]], T],
) -> Exchange[Answer[T]]:
    """The exchange behind :func:`ask_json`: ask for JSON, validate, repair once."""
    messages: list[Message] = [
        {"role": "system", "content": system},
        {"role": "user", "content": user},
    ]
    answer: Answer[T] = Answer(value=None)
    for attempt in range(2):
        completion = yield ChatRequest(messages, schema)
        answer.calls += 1
        answer.usage.append(completion.usage)
        try:
            answer.value = validate(parse_json_reply(completion.text))
            return answer
        except (ReplyError, ValueError, TypeError, KeyError) as exc:
            problem = str(exc) or type(exc).__name__
            answer.problems.append(f"{schema.phase} reply unusable: {problem}")
            if attempt == 0:
                messages = [
                    *messages,
                    {"role": "assistant", "content": completion.text[:4000]},
                    {"role": "user", "content": REPAIR_INSTRUCTION.format(problem=problem)},
                ]
    log.warning("memgraph: %s; nothing was changed", answer.problems[-1])
    return answer


def ask_json(
    chat: ChatModel,
    system: str,
    user: str,
    schema: JsonSchema,
    validate: Callable[[dict[str, object]], T],
) -> Answer[T]:
    """Ask ``chat`` for a JSON reply and validate it with ``validate``.

    A reply that is not JSON or has the wrong shape gets one repair retry that
    shows the model its reply and the problem. If that fails too, the answer's
    value is ``None`` and a warning is logged. Provider errors propagate.
    """
    return run_exchange(chat, json_exchange(system, user, schema, validate))


async def aask_json(
    chat: ChatModel,
    system: str,
    user: str,
    schema: JsonSchema,
    validate: Callable[[dict[str, object]], T],
) -> Answer[T]:
    """Async twin of :func:`ask_json`: the model's ``acomplete`` when it has one
    (else ``complete`` in a worker thread); the same validation and repair."""
    return await arun_exchange(chat, json_exchange(system, user, schema, validate))
