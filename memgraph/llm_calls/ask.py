"""Asking a chat model for JSON: one call, a second chance, then a clear failure.

Every answer ends in one of three outcomes, which callers tell apart by
:attr:`Answer.failure`:

* a value (``failure is None``): the reply parsed, possibly after lenient
  repairs (:mod:`memgraph.llm_calls.coerce`), and passed validation;
* ``failure.kind == "truncated"``: the model ran out of room
  (``finish_reason == "length"``) even after one retry with twice the room.
  A cut-off reply is never "repaired": the model would invent the missing half;
* ``failure.kind == "unusable"``: the reply was not usable JSON of the right
  shape, and neither was the reply to one repair request that quoted the
  exact problem.

Provider errors (the model could not be reached) propagate as exceptions.

The asking itself is an *exchange*: a generator that yields each
:class:`ChatRequest` it needs answered and receives the :class:`Completion`,
so the same logic (prompts, parsing, the retries) runs with blocking calls
(:func:`ask_json`, :func:`run_exchange`) and with awaited ones
(:func:`aask_json`, :func:`arun_exchange`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from memgraph.llm_calls.coerce import coerce_reply
from memgraph.llm_calls.parsing import ReplyError, parse_json_reply
from memgraph.llm_calls.prompts import repair_message
from memgraph.llm_calls.provider import (
    ChatModel,
    Completion,
    JsonSchema,
    Message,
    Usage,
    acomplete,
)

__all__ = [
    "MIN_ROOM",
    "Answer",
    "ChatRequest",
    "Exchange",
    "ReplyFailure",
    "aask_json",
    "arun_exchange",
    "ask_json",
    "json_exchange",
    "run_exchange",
]

log = logging.getLogger("memgraph")

T = TypeVar("T")

MIN_ROOM = 1024
"""Fewest ``max_tokens`` a retry after a cut-off reply asks for."""
MAX_ROOM = 16384
"""Most ``max_tokens`` a retry after a cut-off reply asks for."""
REPLY_CHARS = 2000
"""Characters of the last reply kept in a :class:`ReplyFailure`."""


@dataclass(frozen=True)
class ReplyFailure:
    """Why a model's reply could not be used.

    Attributes:
        kind: ``"truncated"`` (cut off at the token limit) or ``"unusable"``
            (not JSON of the expected shape, even after a repair request).
        message: what was wrong with the last reply, e.g. ``extract reply: the reply
            is not valid JSON: Expecting ',' delimiter at line 3, column 5 (near ...)``.
        reply: the start of the last reply, for diagnostics.
    """

    kind: Literal["truncated", "unusable"]
    message: str
    reply: str = ""

    def __str__(self) -> str:
        return f"model reply unusable: {self.message}"


@dataclass
class Answer(Generic[T]):
    """The validated value (or ``None``), the problems met, and the calls made.

    ``failure`` says why ``value`` is ``None``; ``problems`` lists every problem
    met on the way, including ones a later call fixed.
    """

    value: T | None
    problems: list[str] = field(default_factory=list)
    calls: int = 0
    usage: list[Usage] = field(default_factory=list)
    failure: ReplyFailure | None = None


def _more_room(used: int, asked: object) -> int:
    previous = asked if isinstance(asked, int) and not isinstance(asked, bool) else 0
    return min(MAX_ROOM, max(MIN_ROOM, 2 * used, 2 * previous))


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
    *,
    options: Mapping[str, Any] | None = None,
) -> Exchange[Answer[T]]:
    """The exchange behind :func:`ask_json`: ask for JSON, widen a cut-off reply's
    room once, repair an unusable one once."""
    messages: list[Message] = [
        {"role": "system", "content": system},
        {"role": "user", "content": user},
    ]
    extra = dict(options or {})
    answer: Answer[T] = Answer(value=None)
    repaired = widened = False
    while True:
        completion = yield ChatRequest(messages, schema, dict(extra))
        answer.calls += 1
        answer.usage.append(completion.usage)
        if completion.finish_reason == "length":
            used = completion.usage.completion_tokens
            problem = (
                f"{schema.phase} reply was cut off at the token limit after {used} tokens "
                "(finish_reason 'length')"
            )
            answer.problems.append(problem)
            if not widened and used > 0:
                widened = True
                extra["max_tokens"] = _more_room(used, extra.get("max_tokens"))
                continue
            answer.failure = ReplyFailure("truncated", problem, completion.text[:REPLY_CHARS])
            break
        try:
            document = coerce_reply(parse_json_reply(completion.text), schema.schema)
            answer.value = validate(document)
            return answer
        except (ReplyError, ValueError, TypeError, KeyError) as exc:
            problem = str(exc) or type(exc).__name__
            answer.problems.append(f"{schema.phase} reply unusable: {problem}")
            if repaired:
                failure = f"{schema.phase} reply: {problem}"
                answer.failure = ReplyFailure("unusable", failure, completion.text[:REPLY_CHARS])
                break
            repaired = True
            messages = [
                *messages,
                {"role": "assistant", "content": completion.text[:4000]},
                {"role": "user", "content": repair_message(problem, schema)},
            ]
    log.warning("memgraph: %s; nothing was changed", answer.failure)
    return answer


def ask_json(
    chat: ChatModel,
    system: str,
    user: str,
    schema: JsonSchema,
    validate: Callable[[dict[str, object]], T],
    *,
    options: Mapping[str, Any] | None = None,
) -> Answer[T]:
    """Ask ``chat`` for a JSON reply and validate it with ``validate``.

    A reply cut off at the token limit is asked for again once with more room
    (``max_tokens``); a reply that is not JSON or has the wrong shape gets one
    repair request quoting the exact problem. When neither helps, the answer's
    value is ``None``, :attr:`Answer.failure` says why, and a warning is logged.

    Args:
        chat: the model.
        system: the system prompt.
        user: the user message.
        schema: the shape the reply must have.
        validate: turns the parsed (and leniently repaired) reply into the value;
            raises ``ValueError``, ``TypeError`` or ``KeyError`` when it cannot.
        options: passed to every ``chat.complete`` call.

    Raises:
        ProviderError: the model could not be reached or refused the request.
    """
    return run_exchange(chat, json_exchange(system, user, schema, validate, options=options))


async def aask_json(
    chat: ChatModel,
    system: str,
    user: str,
    schema: JsonSchema,
    validate: Callable[[dict[str, object]], T],
    *,
    options: Mapping[str, Any] | None = None,
) -> Answer[T]:
    """Async twin of :func:`ask_json`: the model's ``acomplete`` when it has one
    (else ``complete`` in a worker thread); the same validation and retries."""
    exchange = json_exchange(system, user, schema, validate, options=options)
    return await arun_exchange(chat, exchange)
