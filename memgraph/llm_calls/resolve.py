"""Choosing the provider a memory uses, by the documented precedence chain."""

from __future__ import annotations

import logging
import os

from memgraph.config import MemoryConfig
from memgraph.llm_calls.provider import Provider, ProviderSettings, resolve_provider

__all__ = ["NO_EMBEDDINGS", "OFFLINE_NOTICE", "choose_provider"]

log = logging.getLogger("memgraph")

OFFLINE_NOTICE = (
    "memgraph: no provider configured and OPENAI_API_KEY is not set; running offline on the "
    "deterministic mock provider (set MEMGRAPH_PROVIDER or provider.name in agency.json)"
)


NO_EMBEDDINGS = "none"
"""``embeddings.provider`` value for no embedder: recall uses its lexical tiers only."""


def choose_provider(explicit: Provider | str | None, config: MemoryConfig) -> tuple[Provider, bool]:
    """The provider to use and whether it is the offline fallback.

    Order: ``explicit``, ``MEMGRAPH_PROVIDER``, ``provider.name`` in the config,
    ``openai`` when ``OPENAI_API_KEY`` (or the configured variable) is set,
    else the offline ``mock`` provider. ``embeddings.provider`` picks the embedder
    separately: ``"none"`` for none (names, keywords and types only), or another
    provider's (``"mock"``: hashed n-grams, offline); ``embeddings.baseUrl`` sends
    embedding requests to another server than the chat model's.
    """
    if isinstance(explicit, Provider):
        return explicit, False
    settings = config.provider
    name = explicit or os.environ.get("MEMGRAPH_PROVIDER") or settings.name
    fallback = False
    if not name:
        if os.environ.get(settings.api_key_env):
            name = "openai"
        else:
            name, fallback = "mock", True
    spec_name, _, spec_model = name.partition(":")
    embeddings = config.embeddings
    sizing = {"dimension": embeddings.dimension} if embeddings.dimension else {}
    provider = resolve_provider(
        ProviderSettings(
            name=spec_name,
            model=spec_model or settings.model or config.model,
            embedding_model=embeddings.model,
            base_url=settings.base_url or os.environ.get("MEMGRAPH_BASE_URL"),
            api_key_env=settings.api_key_env,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            options={
                **sizing,
                "chat_options": dict(settings.options),
                "structured_output": settings.structured_output,
            },
        )
    )
    if embeddings.provider == NO_EMBEDDINGS:
        provider = Provider(provider.name, provider.chat, None)
    elif (embeddings.provider and embeddings.provider != spec_name) or embeddings.base_url:
        other = resolve_provider(
            ProviderSettings(
                name=embeddings.provider or spec_name,
                embedding_model=embeddings.model,
                base_url=embeddings.base_url
                or settings.base_url
                or os.environ.get("MEMGRAPH_BASE_URL"),
                api_key_env=settings.api_key_env,
                timeout=settings.timeout,
                max_retries=settings.max_retries,
                options=sizing,
            )
        )
        provider = Provider(provider.name, provider.chat, other.embedder)
    return provider, fallback
