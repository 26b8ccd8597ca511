"""A scripted chat model for tests: canned replies, recorded calls.

:class:`ScriptedChatModel` answers from a queue of canned replies, or from
one queue per pipeline phase (``extract``, ``rerank``, ``forget``,
``summarize``, ``merge``, and ``chat`` for calls without a schema). It records
every call. When the script runs out it raises :class:`ScriptExhausted` (an
``AssertionError``), or hands the call to a fallback model.

Example::

    model = ScriptedChatModel({"extract": [{"entities": [], "relations": [], "expirations": []}]})
    provider = Provider("test", chat=model, embedder=HashEmbedder())
    memory = Memory("./mem", scope="test", provider=provider)
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memgraph.llm_calls.provider import ChatModel, Completion, JsonSchema, Message, Usage

__all__ = ["PHASES", "Reply", "ScriptExhausted", "ScriptedCall", "ScriptedChatModel"]

PHASES = frozenset({"extract", "rerank", "forget", "summarize", "merge", "chat"})
"""The phases a script can be keyed by (``chat`` = calls without a schema)."""

Reply = str | Mapping[str, Any] | list[Any] | Completion | BaseException | type[BaseException]
"""One canned reply: text, a JSON-able dict/list, a Completion, or an exception to raise."""

_SINGLE = (str, Mapping, Completion, BaseException, type)


class ScriptExhausted(AssertionError):
    """A :class:`ScriptedChatModel` was called more often than its script allows."""


@dataclass(frozen=True)
class ScriptedCall:
    """One recorded call of a :class:`ScriptedChatModel`."""

    messages: list[Message]
    schema: JsonSchema | None
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def phase(self) -> str:
        """The pipeline phase (``schema.phase``), or ``"chat"`` without a schema."""
        return self.schema.phase if self.schema is not None else "chat"

    @property
    def last_user(self) -> str:
        """The text of the last user message ("" when there is none)."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                content = message.get("content")
                return content if isinstance(content, str) else json.dumps(content)
        return ""


def _queue(replies: Reply | Iterable[Reply]) -> deque[Reply]:
    if isinstance(replies, _SINGLE):
        return deque([replies])
    return deque(replies)


class ScriptedChatModel:
    """A deterministic fake chat model that replays a script.

    Args:
        replies: either one queue of replies used for every call (a single reply
            or a list of them), or a mapping from phase (``"extract"``,
            ``"rerank"``, ``"forget"``, ``"summarize"``, ``"merge"``, ``"chat"``)
            to that phase's reply or list of replies. A reply is a string, a dict
            (or a list nested in a queue; sent as JSON), a :class:`Completion`, or
            an exception (instance or class) to raise. A dict whose keys are all
            phase names (or an empty dict) is read as a phase mapping; pass
            ``by_phase=True`` for other phase names.
        fallback: the model that answers once the script has run out; without
            one, an exhausted script raises :class:`ScriptExhausted`.
        model: the model name reported in completions.

    Attributes:
        calls: every call received, in order (messages, schema, options).
    """

    def __init__(
        self,
        replies: Reply | Iterable[Reply] | Mapping[str, Reply | Iterable[Reply]] = (),
        *,
        fallback: ChatModel | None = None,
        model: str = "scripted",
        by_phase: bool | None = None,
    ) -> None:
        self.model = model
        self.fallback = fallback
        self.calls: list[ScriptedCall] = []
        self._queue: deque[Reply] | None = None
        self._phases: dict[str, deque[Reply]] = {}
        if by_phase is None:
            by_phase = isinstance(replies, Mapping) and set(replies) <= PHASES
        if by_phase:
            if not isinstance(replies, Mapping):
                raise TypeError("by_phase=True needs a mapping from phase to replies")
            self._phases = {str(k): _queue(v) for k, v in replies.items()}
        else:
            self._queue = _queue(replies)

    def __repr__(self) -> str:
        return f"ScriptedChatModel(model={self.model!r}, remaining={self.remaining()})"

    def add(self, reply: Reply, *, phase: str | None = None) -> None:
        """Append ``reply`` to the queue (or to ``phase``'s queue for a phase-keyed script)."""
        if phase is None and self._queue is not None:
            self._queue.append(reply)
        elif phase is not None and self._queue is None:
            self._phases.setdefault(phase, deque()).append(reply)
        else:
            raise ValueError("pass phase= exactly when the script is keyed by phase")

    def remaining(self, phase: str | None = None) -> int:
        """How many replies are left (for ``phase``, or in total)."""
        if self._queue is not None:
            return len(self._queue)
        if phase is not None:
            return len(self._phases.get(phase, ()))
        return sum(len(q) for q in self._phases.values())

    @property
    def exhausted(self) -> bool:
        """Whether no scripted reply is left."""
        return self.remaining() == 0

    def calls_for(self, phase: str) -> list[ScriptedCall]:
        """The recorded calls of one phase."""
        return [c for c in self.calls if c.phase == phase]

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: JsonSchema | None = None,
        **options: Any,
    ) -> Completion:
        """Record the call and answer with the next scripted reply for its phase.

        Raises:
            ScriptExhausted: no reply is left and there is no fallback.
            BaseException: whatever exception the script holds for this call.
        """
        call = ScriptedCall([dict(m) for m in messages], schema, dict(options))
        self.calls.append(call)
        queue = self._queue if self._queue is not None else self._phases.get(call.phase)
        if not queue:
            if self.fallback is not None:
                return self.fallback.complete(messages, schema=schema, **options)
            scripted = "a single queue" if self._queue is not None else sorted(self._phases)
            raise ScriptExhausted(
                f"ScriptedChatModel has no reply left for phase {call.phase!r} "
                f"(call #{len(self.calls)}; script: {scripted}); "
                f"last user message: {call.last_user[:200]!r}"
            )
        return self._reply(queue.popleft(), call)

    async def acomplete(
        self,
        messages: Sequence[Message],
        *,
        schema: JsonSchema | None = None,
        **options: Any,
    ) -> Completion:
        """Async twin of :meth:`complete`."""
        return self.complete(messages, schema=schema, **options)

    def _reply(self, reply: Reply, call: ScriptedCall) -> Completion:
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, type) and issubclass(reply, BaseException):
            raise reply(f"scripted failure in phase {call.phase!r}")
        if isinstance(reply, Completion):
            return reply
        text = reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)
        prompt = sum(len(str(m.get("content") or "").split()) for m in call.messages)
        usage = Usage(
            prompt_tokens=round(prompt * 4 / 3),
            completion_tokens=round(len(text.split()) * 4 / 3),
        )
        return Completion(text=text, model=self.model, usage=usage, finish_reason="stop")
