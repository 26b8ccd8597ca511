"""The provider seam: chat models and embedders, and the registry that builds them.

A provider is two small pieces:

* a :class:`ChatModel` with one method that matters, ``complete(messages, *,
  schema=None) -> Completion``;
* an :class:`Embedder` with ``embed(texts) -> np.ndarray`` (batch first,
  float32, one row per text).

Either may also have an async twin, ``acomplete`` / ``aembed``, with the same
arguments and result: an optional capability, not part of the Protocols (a
provider without them still satisfies them). :func:`acomplete` and
:func:`aembed` await the twin when there is one and otherwise run the blocking
method in a worker thread, so async callers never block their event loop.

Built-in providers (``openai``, ``mock``) register through
:func:`register_provider`, the same door a third-party provider uses. A spec
string such as ``"openai:gpt-4o-mini"`` or ``"mock"`` resolves them.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from memgraph.errors import UnknownProvider

__all__ = [
    "ChatModel",
    "Completion",
    "Embedder",
    "JsonSchema",
    "Message",
    "Provider",
    "ProviderSettings",
    "Usage",
    "acomplete",
    "aembed",
    "known_providers",
    "message_text",
    "register_provider",
    "resolve_provider",
]

Message = dict[str, Any]
"""A chat message in the OpenAI shape: ``{"role": ..., "content": ..., ...}``."""


def message_text(message: Mapping[str, Any]) -> str:
    """The text of a message: string content, or the text parts of a content list."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, Mapping)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


Vectors = npt.NDArray[np.float32]


@dataclass(frozen=True)
class JsonSchema:
    """A JSON schema the reply must follow (structured output).

    ``name`` doubles as the pipeline phase (``memgraph_extract``,
    ``memgraph_rerank``, ``memgraph_forget``, ``memgraph_summarize``,
    ``memgraph_merge``), which scripted test models key their replies on.
    ``example`` is an object of the right shape with placeholder values, shown
    to models that are asked for JSON without a schema-constrained format.
    """

    name: str
    schema: Mapping[str, Any]
    strict: bool = True
    example: Mapping[str, Any] | None = None

    @property
    def phase(self) -> str:
        """The pipeline phase this schema serves (the name without its prefix)."""
        return self.name.removeprefix("memgraph_")


@dataclass(frozen=True)
class Usage:
    """Token usage reported by the provider (zeros when it reports none)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Completion:
    """One chat completion.

    Attributes:
        text: the assistant's text (``""`` when it only called tools).
        model: the model that answered.
        usage: token counts.
        tool_calls: tool calls in the OpenAI shape, if any.
        finish_reason: why the model stopped, when reported.
    """

    text: str
    model: str = ""
    usage: Usage = field(default_factory=Usage)
    tool_calls: tuple[dict[str, Any], ...] = ()
    finish_reason: str | None = None

    def as_message(self) -> Message:
        """The completion as an assistant message to append to a thread."""
        message: Message = {"role": "assistant", "content": self.text}
        if self.tool_calls:
            message["tool_calls"] = [dict(call) for call in self.tool_calls]
        return message


@runtime_checkable
class ChatModel(Protocol):
    """Anything that completes a conversation."""

    model: str

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: JsonSchema | None = None,
        **options: Any,
    ) -> Completion:
        """Complete ``messages``; with ``schema``, the reply text is JSON that follows it."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into vectors, a batch at a time."""

    model: str

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return a float32 array of shape ``(len(texts), dimension)``."""
        ...


async def acomplete(
    chat: ChatModel,
    messages: Sequence[Message],
    *,
    schema: JsonSchema | None = None,
    **options: Any,
) -> Completion:
    """``chat.complete`` without blocking the event loop: the model's own
    ``acomplete`` when it has one, else ``complete`` in a worker thread."""
    twin = getattr(chat, "acomplete", None)
    if callable(twin):
        completion: Completion = await twin(messages, schema=schema, **options)
        return completion
    return await asyncio.to_thread(chat.complete, messages, schema=schema, **options)


async def aembed(embedder: Embedder, texts: Sequence[str]) -> Vectors:
    """``embedder.embed`` without blocking the event loop: the embedder's own
    ``aembed`` when it has one, else ``embed`` in a worker thread."""
    twin = getattr(embedder, "aembed", None)
    if callable(twin):
        vectors: Vectors = await twin(texts)
        return vectors
    return await asyncio.to_thread(embedder.embed, texts)


@dataclass(frozen=True)
class ProviderSettings:
    """What a provider factory receives: the provider block of the config."""

    name: str = "mock"
    model: str | None = None
    embedding_model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float | None = None
    """Seconds per request; ``None`` lets the provider choose (by the kind of endpoint)."""
    max_retries: int = 3
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Provider:
    """A chat model and (optionally) an embedder that belong together."""

    name: str
    chat: ChatModel
    embedder: Embedder | None = None


ProviderFactory = Callable[[ProviderSettings], Provider]

_registry: dict[str, ProviderFactory] = {}
_lazy_builtins: dict[str, str] = {
    "mock": "memgraph.providers.mock",
    "openai": "memgraph.providers.openai_compat",
}
_lock = threading.Lock()


def register_provider(name: str, factory: ProviderFactory) -> None:
    """Register ``factory`` under ``name`` so ``resolve_provider(name)`` can build it."""
    with _lock:
        _registry[name] = factory


def known_providers() -> list[str]:
    """Names of every provider that can be resolved."""
    return sorted(set(_registry) | set(_lazy_builtins))


def _factory(name: str) -> ProviderFactory:
    with _lock:
        factory = _registry.get(name)
    if factory is None and name in _lazy_builtins:
        importlib.import_module(_lazy_builtins[name])  # registers itself on import
        with _lock:
            factory = _registry.get(name)
    if factory is None:
        raise UnknownProvider(
            f"unknown provider {name!r}; known providers: {', '.join(known_providers())}"
        )
    return factory


def resolve_provider(
    spec: str | ProviderSettings | Provider | None = None, **overrides: Any
) -> Provider:
    """Build a provider from a spec string, settings, or pass a built one through.

    ``"openai:gpt-4o-mini"`` selects the ``openai`` provider with that chat
    model; ``"mock"`` the offline deterministic one.

    Raises:
        UnknownProvider: no provider is registered under the name.
    """
    if isinstance(spec, Provider):
        return spec
    if spec is None:
        settings = ProviderSettings(**overrides)
    elif isinstance(spec, ProviderSettings):
        settings = spec
        if overrides:
            settings = ProviderSettings(**{**settings.__dict__, **overrides})
    else:
        name, _, model = spec.partition(":")
        values: dict[str, Any] = {"name": name}
        if model:
            values["model"] = model
        values.update(overrides)
        settings = ProviderSettings(**values)
    return _factory(settings.name)(settings)
