"""memgraph: knowledge-graph long-term memory for LLM agents.

>>> from memgraph import Memory
>>> with Memory("./mem", scope="alice", provider="mock") as memory:   # doctest: +SKIP
...     memory.remember("Alice prefers concise, technical answers.")
...     print(memory.recall("how does alice like her answers?"))
"""

from __future__ import annotations

from memgraph.config import MemoryConfig, load_config
from memgraph.conversation.api import forget, recall, remember
from memgraph.conversation.approval import (
    ApprovalHandler,
    Decision,
    approval_handler,
    preapprove,
    set_approval_handler,
)
from memgraph.conversation.cache import MemoryCache, close_all
from memgraph.conversation.compaction import Compaction
from memgraph.conversation.concurrency import ContextThreadPoolExecutor, spawn
from memgraph.conversation.context import (
    MemoryBlock,
    disable_memory,
    enable_memory,
    get_memory_id,
    is_memory_active,
    memory,
    set_memory_id,
)
from memgraph.conversation.thread import Thread
from memgraph.conversation.turn import LLMReply, allm, llm
from memgraph.engine.async_memory import AsyncMemory
from memgraph.engine.features import MemorySummary
from memgraph.engine.memory import MAX_TEXT_CHARS, Memory
from memgraph.errors import (
    ApprovalRequired,
    BadResponse,
    ConfigError,
    InvalidInput,
    InvalidScope,
    InvalidTime,
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
from memgraph.faces.conditions import ConditionError
from memgraph.faces.kv import KeyValueMemory, KeyVersion
from memgraph.faces.namespaces import agent, current_source
from memgraph.faces.notes import CATEGORIES, Note
from memgraph.faces.progress import Board, Step
from memgraph.faces.rules import Rule, Violation
from memgraph.faces.timetravel import MemoryView
from memgraph.llm_calls.provider import (
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
from memgraph.models import (
    ChangeSet,
    Entity,
    EntityHistory,
    Episode,
    Hit,
    Item,
    Observation,
    Relation,
)

__version__ = "0.1.0"

__all__ = [
    "CATEGORIES",
    "MAX_TEXT_CHARS",
    "ApprovalHandler",
    "ApprovalRequired",
    "AsyncMemory",
    "BadResponse",
    "Board",
    "ChangeSet",
    "ChatModel",
    "Compaction",
    "Completion",
    "ConditionError",
    "ConfigError",
    "ContextThreadPoolExecutor",
    "Decision",
    "Embedder",
    "Entity",
    "EntityHistory",
    "Episode",
    "Hit",
    "InvalidInput",
    "InvalidScope",
    "InvalidTime",
    "Item",
    "JsonSchema",
    "KeyValueMemory",
    "KeyVersion",
    "LLMReply",
    "MemgraphError",
    "Memory",
    "MemoryBlock",
    "MemoryCache",
    "MemoryConfig",
    "MemorySummary",
    "MemoryView",
    "MissingCredentials",
    "NotFound",
    "Note",
    "Observation",
    "Provider",
    "ProviderError",
    "ProviderSettings",
    "ProviderUnavailable",
    "Relation",
    "Rule",
    "Step",
    "StoreConflict",
    "StoreCorrupt",
    "StoreError",
    "StoreUnavailable",
    "Thread",
    "UnknownProvider",
    "Usage",
    "Violation",
    "__version__",
    "agent",
    "allm",
    "approval_handler",
    "close_all",
    "current_source",
    "disable_memory",
    "enable_memory",
    "forget",
    "get_memory_id",
    "is_memory_active",
    "known_providers",
    "llm",
    "load_config",
    "memory",
    "preapprove",
    "recall",
    "register_provider",
    "remember",
    "resolve_provider",
    "set_approval_handler",
    "set_memory_id",
    "spawn",
]
