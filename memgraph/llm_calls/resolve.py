"""Choosing the provider a memory uses, by the documented precedence chain."""

from __future__ import annotations

import logging
import os

from memgraph.config import MemoryConfig
from memgraph.llm_calls.provider import Provider, ProviderSettings, resolve_provider

__all__ = ["OFFLINE_NOTICE", "choose_provider"]

log = logging.getLogger("memgraph")

OFFLINE_NOTICE = (
    "memgraph: no provider configured and OPENAI_API_KEY is not set; running offline on the "
    "deterministic mock provider (set MEMGRAPH_PROVIDER or provider.name in agency.json)"
)


def choose_provider(explicit: Provider | str | None, config: MemoryConfig) -> tuple[Provider, bool]:
    """The provider to use and whether it is the offline fallback.

    Order: ``explicit``, ``MEMGRAPH_PROVIDER``, ``provider.name`` in the config,
    ``openai`` when ``OPENAI_API_KEY`` (or the configured variable) is set,
    else the offline ``mock`` provider.
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
    provider = resolve_provider(
        ProviderSettings(
            name=spec_name,
            model=spec_model or settings.model or config.model,
            embedding_model=config.embeddings.model,
            base_url=settings.base_url or os.environ.get("MEMGRAPH_BASE_URL"),
            api_key_env=settings.api_key_env,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            options={"dimension": config.embeddings.dimension}
            if config.embeddings.dimension
            else {},
        )
    )
    if config.embeddings.provider and config.embeddings.provider != spec_name:
        other = resolve_provider(
            ProviderSettings(
                name=config.embeddings.provider,
                embedding_model=config.embeddings.model,
                api_key_env=settings.api_key_env,
                timeout=settings.timeout,
                max_retries=settings.max_retries,
            )
        )
        provider = Provider(provider.name, provider.chat, other.embedder)
    return provider, fallback
