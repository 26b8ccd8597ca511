"""The key/value face of a memory: versioned, append-only, with tombstones.

``remember(key, value)`` and ``forget(key)`` only ever append a version, so
``history(key)`` lists every value a key had (tombstones included) and
``as_of(key, version)`` travels back. The versions live in the same journal as
the knowledge graph.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from memgraph.clock import now_iso
from memgraph.faces.host import GraphHost
from memgraph.faces.namespaces import current_source
from memgraph.graph.graph import EXTRA_OPS, Doc, Graph

__all__ = ["KeyValueMemory", "KeyVersion"]


@dataclass(frozen=True)
class KeyVersion:
    """One version of a key: a value, or a tombstone (``deleted``)."""

    key: str
    version: int
    value: Any
    deleted: bool
    at: str
    source: str | None

    def __str__(self) -> str:
        what = "forgotten" if self.deleted else f"= {orjson.dumps(self.value).decode()}"
        return f"v{self.version} {self.at} {self.key} {what} ({self.source or 'main'})"


def _versions(graph: Graph) -> dict[str, list[Doc]]:
    versions: dict[str, list[Doc]] = graph.extra.setdefault("kv", {})
    return versions


def _apply(graph: Graph, op: Doc) -> None:
    _versions(graph).setdefault(op["key"], []).append(
        {
            "value": op.get("value"),
            "deleted": bool(op.get("deleted")),
            "at": op["at"],
            "source": op.get("source"),
        }
    )


EXTRA_OPS["kv"] = _apply


def _key_versions(key: str, versions: list[Doc]) -> list[KeyVersion]:
    return [
        KeyVersion(key, number, v["value"], v["deleted"], v["at"], v.get("source"))
        for number, v in enumerate(versions, start=1)
    ]


def _check_key(key: object) -> str:
    if not isinstance(key, str):
        raise TypeError(f"keys must be strings, got {type(key).__name__}")
    if not key:
        raise ValueError("keys must not be empty")
    return key


class KeyValueMemory:
    """Versioned key/value memory over a :class:`~memgraph.Memory`'s store.

    Obtain it as ``memory.kv``; for a session-only one use
    ``Memory(store="memory").kv``.
    """

    def __init__(self, memory: GraphHost) -> None:
        self._memory = memory

    def _read(self, read: Callable[[dict[str, list[Doc]]], Any]) -> Any:
        return self._memory._read_graph(lambda graph: read(_versions(graph)))

    def remember(self, key: str, value: Any) -> int:
        """Store ``value`` as the newest version of ``key``; returns its version number.

        Raises:
            TypeError: the key is not a string, or the value is not
                JSON-serializable (the message names its type).
        """
        return self.remember_many({key: value})[key]

    def remember_many(self, values: Mapping[str, Any]) -> dict[str, int]:
        """Store new versions of several keys in one write (all of them or none).

        Returns:
            Each key's new version number.

        Raises:
            TypeError: a key is not a string, or a value is not JSON-serializable
                (the message names its type); nothing is stored.
        """
        at, source = now_iso(), current_source()
        ops: list[Doc] = []
        for key, value in values.items():
            _check_key(key)
            try:
                clean = orjson.loads(orjson.dumps(value))
            except TypeError as exc:
                raise TypeError(
                    f"values must be JSON-serializable; {type(value).__name__} is not ({exc})"
                ) from exc
            ops.append({"op": "kv", "key": key, "value": clean, "at": at, "source": source})
        if not ops:
            return {}
        self._memory._write_ops(lambda graph: ops)
        return dict(self._read(lambda kv: {key: len(kv.get(key, [])) for key in values}))

    def recall(self, key: str) -> Any:
        """The latest value of ``key``, or ``None`` if it was never set or was forgotten."""
        _check_key(key)
        versions = self._read(lambda kv: kv.get(key))
        if not versions or versions[-1]["deleted"]:
            return None
        return versions[-1]["value"]

    def forget(self, key: str) -> None:
        """Write a tombstone for ``key``; forgetting a missing key does nothing."""
        self.forget_many([key])

    def forget_many(self, keys: Iterable[str]) -> int:
        """Write tombstones for several keys in one write; keys without a value are
        skipped. Returns how many keys were forgotten."""
        chosen = [_check_key(key) for key in keys]
        at, source = now_iso(), current_source()
        forgotten: list[Doc] = []

        def build(graph: Graph) -> list[Doc]:
            versions = _versions(graph)
            forgotten[:] = [
                {"op": "kv", "key": key, "deleted": True, "at": at, "source": source}
                for key in dict.fromkeys(chosen)
                if versions.get(key) and not versions[key][-1]["deleted"]
            ]
            return forgotten

        self._memory._write_ops(build)
        return len(forgotten)

    def keys(self) -> list[str]:
        """The keys that currently have a value, in the order they were first set."""
        return list(self._read(lambda kv: [k for k, v in kv.items() if not v[-1]["deleted"]]))

    def history(self, key: str) -> list[KeyVersion]:
        """Every version of ``key`` in order, tombstones included."""
        _check_key(key)
        return _key_versions(key, self._read(lambda kv: list(kv.get(key, ()))))

    def histories(self, prefix: str = "") -> dict[str, list[KeyVersion]]:
        """Every version of every key that starts with ``prefix`` (forgotten keys
        too), in the order the keys were first set: one read for many keys."""
        if not isinstance(prefix, str):
            raise TypeError(f"prefix must be a string, got {type(prefix).__name__}")
        found: dict[str, list[Doc]] = self._read(
            lambda kv: {k: list(v) for k, v in kv.items() if k.startswith(prefix)}
        )
        return {key: _key_versions(key, versions) for key, versions in found.items()}

    def as_of(self, key: str, version: int) -> Any:
        """The value ``key`` had at ``version`` (``None`` before it existed or if forgotten)."""
        _check_key(key)
        if isinstance(version, bool) or not isinstance(version, int):
            raise TypeError(f"version must be an int, got {type(version).__name__}")
        versions = self._read(lambda kv: list(kv.get(key, ())))
        if version < 1 or not versions:
            return None
        chosen = versions[min(version, len(versions)) - 1]
        return None if chosen["deleted"] else chosen["value"]
