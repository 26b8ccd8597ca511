"""Asking a chat model for JSON: one call, one repair retry, then give up politely."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from memgraph.llm_calls.parsing import ReplyError, parse_json_reply
from memgraph.llm_calls.prompts import REPAIR_INSTRUCTION
from memgraph.llm_calls.provider import ChatModel, JsonSchema, Message, Usage

__all__ = ["Answer", "ask_json"]

log = logging.getLogger("memgraph")

T = TypeVar("T")


@dataclass
class Answer(Generic[T]):
    """The validated value (or ``None``), the problems met, and the calls made."""

    value: T | None
    problems: list[str] = field(default_factory=list)
    calls: int = 0
    usage: list[Usage] = field(default_factory=list)


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
    messages: list[Message] = [
        {"role": "system", "content": system},
        {"role": "user", "content": user},
    ]
    answer: Answer[T] = Answer(value=None)
    for attempt in range(2):
        completion = chat.complete(messages, schema=schema)
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
