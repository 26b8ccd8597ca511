"""The deterministic offline provider ``mock``.

Importing this package registers the provider under the name ``"mock"``::

    from memgraph.llm_calls.provider import resolve_provider

    provider = resolve_provider("mock")  # MockChatModel + HashEmbedder(384)

Pieces:

* :class:`MockChatModel`: answers every memgraph prompt (extract, rerank,
  forget, summarize, merge) with deterministic rules, and chats plainly;
* :class:`HashEmbedder`: feature-hashing embeddings with real lexical similarity;
* :class:`ScriptedChatModel`: canned replies and recorded calls for tests;
* :func:`extract`: the rule-based English extractor behind the extract phase.

``resolve_provider("mock:scripted")`` gives a :class:`ScriptedChatModel` with
an empty script that falls back to :class:`MockChatModel`; the option
``dimension`` sets the embedding size.
"""

from __future__ import annotations

from memgraph.providers.mock.chat import MockChatModel
from memgraph.providers.mock.embedder import HashEmbedder
from memgraph.providers.mock.rules import KnownEntity, extract, parse_known
from memgraph.providers.mock.scripted import (
    Reply,
    ScriptedCall,
    ScriptedChatModel,
    ScriptExhausted,
)

from memgraph.errors import ConfigError
from memgraph.llm_calls.provider import ChatModel, Provider, ProviderSettings, register_provider

__all__ = [
    "HashEmbedder",
    "KnownEntity",
    "MockChatModel",
    "Reply",
    "ScriptExhausted",
    "ScriptedCall",
    "ScriptedChatModel",
    "extract",
    "mock_provider",
    "parse_known",
]


def mock_provider(settings: ProviderSettings) -> Provider:
    """Build the ``mock`` provider from its settings.

    ``settings.model`` names the chat model (``"scripted"`` selects a
    :class:`ScriptedChatModel` that falls back to :class:`MockChatModel`);
    ``settings.options["dimension"]`` sets the embedding size (default 384).

    Raises:
        ConfigError: ``dimension`` is not an integer of at least 8.
    """
    dimension = settings.options.get("dimension", 384)
    if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 8:
        raise ConfigError(
            f"mock provider option 'dimension' must be an int >= 8, got {dimension!r}"
        )
    chat: ChatModel
    if settings.model == "scripted":
        chat = ScriptedChatModel(fallback=MockChatModel())
    else:
        chat = MockChatModel(model=settings.model or "mock")
    return Provider(name="mock", chat=chat, embedder=HashEmbedder(dimension=dimension))


register_provider("mock", mock_provider)
