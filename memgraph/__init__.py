"""memgraph: knowledge-graph long-term memory for LLM agents.

>>> from memgraph import Memory
>>> with Memory("./mem", scope="alice", provider="mock") as memory:   # doctest: +SKIP
...     memory.remember("Alice prefers concise, technical answers.")
...     print(memory.recall("how does alice like her answers?"))
"""

from __future__ import annotations

from memgraph.config import MemoryConfig, load_config
from memgraph.errors import (
    ApprovalRequired,
    BadResponse,
    ConfigError,
    InvalidScope,
    MemgraphError,
    MissingCredentials,
    NotFound,
    ProviderError,
    ProviderUnavailable,
    StoreConflict,
    StoreCorrupt,
    StoreError,
    StoreUnavailable,
    UnknownProvider,
)
from memgraph.memory import MAX_TEXT_CHARS, Memory
from memgraph.models import ChangeSet, Entity, EntityHistory, Episode, Hit, Observation, Relation
from memgraph.provider import (
    ChatModel,
    Completion,
    Embedder,
    JsonSchema,
    Provider,
    ProviderSettings,
    Usage,
    known_providers,
    register_provider,
    resolve_provider,
)

__version__ = "0.1.0"

__all__ = [
    "MAX_TEXT_CHARS",
    "ApprovalRequired",
    "BadResponse",
    "ChangeSet",
    "ChatModel",
    "Completion",
    "ConfigError",
    "Embedder",
    "Entity",
    "EntityHistory",
    "Episode",
    "Hit",
    "InvalidScope",
    "JsonSchema",
    "MemgraphError",
    "Memory",
    "MemoryConfig",
    "MissingCredentials",
    "NotFound",
    "Observation",
    "Provider",
    "ProviderError",
    "ProviderSettings",
    "ProviderUnavailable",
    "Relation",
    "StoreConflict",
    "StoreCorrupt",
    "StoreError",
    "StoreUnavailable",
    "UnknownProvider",
    "Usage",
    "__version__",
    "known_providers",
    "load_config",
    "register_provider",
    "resolve_provider",
]
