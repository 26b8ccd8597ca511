"""Configuration: the ``memory`` block of ``agency.json``, validated.

One precedence chain, highest first: an explicit argument, the innermost
``with memory(...)`` block, ``MEMGRAPH_*`` environment variables,
``agency.json``, then the defaults below. The environment is read when a
config is resolved, never at import.

Every field (JSON name → attribute)::

    dir                      directory holding one sub-directory per scope
    model                    chat model for memory's own work (extract, rerank, forget, compact)
    store                    "files" (default) or a PostgreSQL DSN; or an object:
    store.url                the same ("files", "memory" or a DSN)
    store.cacheMB            memory budget of the process's open memories (512; see
                             memgraph.conversation.cache.MemoryCache); MEMGRAPH_CACHE_MB
    lockTimeout              seconds a writer waits for a scope's lock (10)
    autoExtract.interval     LLM turns between automatic extraction passes (5)
    compaction.trigger       "messages" or "token"
    compaction.threshold     compact once the thread grows past this (50)
    embeddings.model         embedding model (derived from the provider when omitted)
    embeddings.provider      provider of the embedding model (the chat provider when omitted)
    embeddings.dimension     vector size to request, when the model supports it
    embeddings.baseUrl       endpoint of the embedding model, when another server serves it
    provider.name            "openai", "mock", or any registered provider
    provider.model           chat model served by the provider
    provider.baseUrl         OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp server)
    provider.apiKeyEnv       environment variable holding the API key (OPENAI_API_KEY)
    provider.timeout         seconds per request (default by endpoint: 300 on this machine,
                             120 on a private network, 60 elsewhere)
    provider.maxRetries      retries on errors the server reports as transient (3)
    provider.structuredOutput  "auto" (default), "json_schema", "json_object" or "none"
    provider.options         request options: temperature, max_tokens, top_p, seed, and any
                             other body field the server understands
    recall.tokenBudget       tokens of recalled text handed to a prompt (2000)
    recall.maxEntities       entities in a recall (10)
    recall.floor             relevance floor of the fused score (0.12)
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import orjson

from memgraph.errors import ConfigError

__all__ = [
    "AutoExtractConfig",
    "CompactionConfig",
    "EmbeddingsConfig",
    "JsonMapping",
    "MemoryConfig",
    "ProviderConfig",
    "RecallConfig",
    "find_agency_json",
    "load_config",
]


@dataclass(frozen=True)
class AutoExtractConfig:
    interval: int = 5


@dataclass(frozen=True)
class CompactionConfig:
    trigger: str = "messages"
    threshold: int = 50


@dataclass(frozen=True)
class EmbeddingsConfig:
    model: str | None = None
    provider: str | None = None
    dimension: int | None = None
    base_url: str | None = None


class JsonMapping(Mapping[str, Any]):
    """A read-only JSON object that can be part of a frozen, hashable config."""

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        self._data = dict(data or {})
        self._key = orjson.dumps(self._data, option=orjson.OPT_SORT_KEYS)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, JsonMapping):
            return self._key == other._key
        return isinstance(other, Mapping) and self._data == dict(other)

    def __repr__(self) -> str:
        return f"JsonMapping({self._data!r})"


@dataclass(frozen=True)
class ProviderConfig:
    name: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float | None = None
    max_retries: int = 3
    structured_output: str = "auto"
    options: JsonMapping = field(default_factory=JsonMapping)


@dataclass(frozen=True)
class RecallConfig:
    token_budget: int = 2000
    max_entities: int = 10
    floor: float = 0.12


@dataclass(frozen=True)
class MemoryConfig:
    """A resolved ``memory`` configuration (see the module docstring for each field)."""

    dir: Path | None = None
    model: str | None = None
    store: str = "files"
    cache_mb: float = 512.0
    lock_timeout: float = 10.0
    auto_extract: AutoExtractConfig = field(default_factory=AutoExtractConfig)
    compaction: CompactionConfig = field(default_factory=CompactionConfig)
    embeddings: EmbeddingsConfig = field(default_factory=EmbeddingsConfig)
    provider: ProviderConfig = field(default_factory=ProviderConfig)
    recall: RecallConfig = field(default_factory=RecallConfig)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, base_dir: Path | None = None) -> MemoryConfig:
        """Validate a ``memory`` block; a relative ``dir`` resolves against ``base_dir``.

        Raises:
            ConfigError: a key is unknown or a value has the wrong type; the
                message names the key.
        """
        config: MemoryConfig = _build(cls, data, "memory")
        if config.dir is not None and not config.dir.is_absolute():
            config = replace(config, dir=(base_dir or Path.cwd()) / config.dir)
        return config

    def merged(self, data: Mapping[str, Any], *, base_dir: Path | None = None) -> MemoryConfig:
        """This config with the fields present in ``data`` overriding it."""
        merged: MemoryConfig = _merge(self, data, "memory", base_dir)
        return merged


_JSON_NAMES = {
    "lock_timeout": "lockTimeout",
    "auto_extract": "autoExtract",
    "base_url": "baseUrl",
    "api_key_env": "apiKeyEnv",
    "max_retries": "maxRetries",
    "structured_output": "structuredOutput",
    "token_budget": "tokenBudget",
    "max_entities": "maxEntities",
}
_NESTED: dict[str, type] = {
    "auto_extract": AutoExtractConfig,
    "compaction": CompactionConfig,
    "embeddings": EmbeddingsConfig,
    "provider": ProviderConfig,
    "recall": RecallConfig,
}
_CHOICES = {
    "trigger": ("messages", "token"),
    "structured_output": ("auto", "json_schema", "json_object", "none"),
}
# ``store`` is a string, or an object of these keys (JSON name -> attribute); the
# attributes are not keys of the block themselves.
_STORE_KEYS = {"url": "store", "cacheMB": "cache_mb"}


def _json_name(attribute: str) -> str:
    return _JSON_NAMES.get(attribute, attribute)


def _attribute(cls: type, key: str) -> str | None:
    names = {f.name for f in fields(cls)}
    for attribute in names:
        if key in (attribute, _json_name(attribute)):
            return attribute
    return None


def _check(value: Any, default: Any, attribute: str, path: str) -> Any:
    if attribute == "dir":
        if value is None:
            return None
        if not isinstance(value, (str, os.PathLike)) or not str(value):
            raise ConfigError(f"{path} must be a non-empty path string, got {value!r}")
        return Path(value).expanduser()
    if attribute == "options":
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            raise ConfigError(f"{path} must be an object, got {type(value).__name__} {value!r}")
        try:
            return JsonMapping(value)
        except TypeError as exc:
            raise ConfigError(f"{path} must hold JSON values only: {exc}") from exc
    if attribute in _CHOICES:
        if value not in _CHOICES[attribute]:
            choices = " or ".join(repr(c) for c in _CHOICES[attribute])
            raise ConfigError(f"{path} must be {choices}, got {value!r}")
        return value
    if value is None and (default is None or attribute in ("name", "model")):
        return None
    if isinstance(default, bool) or (default is None and attribute == "dimension"):
        expected: tuple[type, ...] = (int,) if attribute == "dimension" else (bool,)
    elif isinstance(default, float) or attribute == "timeout":
        expected = (int, float)
    elif isinstance(default, int):
        expected = (int,)
    else:
        expected = (str,)
    if (isinstance(value, bool) and bool not in expected) or not isinstance(value, expected):
        kind = " or ".join(t.__name__ for t in expected)
        raise ConfigError(f"{path} must be {kind}, got {type(value).__name__} {value!r}")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        raise ConfigError(f"{path} must not be negative, got {value!r}")
    if attribute == "timeout" and value == 0:
        raise ConfigError(f"{path} must be a positive number of seconds, got {value!r}")
    is_float = isinstance(default, float) or attribute == "timeout"
    return float(value) if is_float and isinstance(value, (int, float)) else value


def _build(cls: type, data: Mapping[str, Any], path: str) -> Any:
    return _merge(cls(), data, path, None)


def _merge(base: Any, data: Mapping[str, Any], path: str, base_dir: Path | None) -> Any:
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path} must be an object, got {type(data).__name__}")
    changes: dict[str, Any] = {}
    hidden = set(_STORE_KEYS.values()) - {"store"} if isinstance(base, MemoryConfig) else set()
    for key, value in data.items():
        attribute = _attribute(type(base), key)
        if attribute is None or attribute in hidden:
            known = ", ".join(
                sorted(_json_name(f.name) for f in fields(base) if f.name not in hidden)
            )
            raise ConfigError(f"unknown key {path}.{key}; known keys: {known}")
        if attribute == "store" and hidden and isinstance(value, Mapping):
            changes.update(_store_object(base, value, f"{path}.store"))
            continue
        where = f"{path}.{_json_name(attribute)}"
        current = getattr(base, attribute)
        if attribute in _NESTED and isinstance(current, _NESTED[attribute]):
            changes[attribute] = _merge(current, value, where, base_dir)
        else:
            default = getattr(type(base)(), attribute)
            changes[attribute] = _check(value, default, attribute, where)
    merged = replace(base, **changes)
    if (
        base_dir is not None
        and getattr(merged, "dir", None) is not None
        and not merged.dir.is_absolute()
    ):
        merged = replace(merged, dir=base_dir / merged.dir)
    return merged


def _store_object(base: MemoryConfig, data: Mapping[str, Any], path: str) -> dict[str, Any]:
    """The fields set by a ``store`` object (``{"url": ..., "cacheMB": ...}``)."""
    changes: dict[str, Any] = {}
    for key, value in data.items():
        attribute = _STORE_KEYS.get(key)
        if attribute is None:
            known = ", ".join(sorted(_STORE_KEYS))
            raise ConfigError(f"unknown key {path}.{key}; known keys: {known}")
        default = getattr(MemoryConfig(), attribute)
        changes[attribute] = _check(value, default, attribute, f"{path}.{key}")
    if changes.get("cache_mb") == 0:
        raise ConfigError(f"{path}.cacheMB must be positive, got 0")
    return changes


def find_agency_json(start: Path | None = None) -> Path | None:
    """The ``agency.json`` in ``start`` (default: the working directory), if any."""
    candidate = (start or Path.cwd()) / "agency.json"
    return candidate if candidate.is_file() else None


_MEMORY_KEYS = frozenset({"provider", "embeddings", "recall", "store", "autoExtract", "compaction"})
"""Keys of the ``memory`` block that agency.json itself does not have at its top level."""


def load_config(path: Path | str | None = None) -> MemoryConfig | None:
    """The ``memory`` block of ``agency.json`` (or ``path``), or ``None`` when absent.

    A top-level ``model`` in agency.json is the default for ``memory.model``.

    Raises:
        ConfigError: the file is not valid JSON, the block is invalid, or the
            file holds memory settings at its top level instead of in the block
            (they would be ignored without a word).
    """
    file = Path(path) if path is not None else find_agency_json()
    if file is None:
        return None
    try:
        document = orjson.loads(file.read_bytes())
    except FileNotFoundError as exc:
        raise ConfigError(f"config file {str(file)!r} does not exist") from exc
    except orjson.JSONDecodeError as exc:
        raise ConfigError(f"{str(file)!r} is not valid JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise ConfigError(f"{str(file)!r} must hold a JSON object")
    block = document.get("memory")
    if block is None:
        misplaced = sorted(_MEMORY_KEYS.intersection(document))
        if misplaced:
            raise ConfigError(
                f"{str(file)!r} has {', '.join(misplaced)} at its top level: memory settings "
                'go under "memory" ({"memory": {"provider": ...}}), as in agency.json.example'
            )
        return None
    config = MemoryConfig.from_dict(block, base_dir=file.resolve().parent)
    if config.model is None and isinstance(document.get("model"), str):
        config = replace(config, model=document["model"])
    return config
