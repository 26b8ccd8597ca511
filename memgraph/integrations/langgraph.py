"""A LangGraph store kept by memgraph: ``MemgraphStore`` (``pip install 'memgraph-kg[langgraph]'``).

``MemgraphStore`` implements LangGraph's ``BaseStore`` (``batch`` / ``abatch``
over ``GetOp``, ``PutOp``, ``SearchOp`` and ``ListNamespacesOp``), so a graph
compiled with ``store=MemgraphStore(...)``, and LangMem's memory tools, keep
their memories in memgraph:

* **A namespace is a scope.** ``("memories", "alice")`` lives in the scope
  ``langgraph.memories.alice`` (labels outside ``[A-Za-z0-9-]`` are escaped as
  ``_XX`` bytes; a name over 128 characters ends in a hash), so namespaces are
  as separate as two users' memories, facts included. The scope ``langgraph``
  lists the namespaces that have held items (as ``InMemoryStore`` lists them).
* **An item** is a key of the scope's key/value face (``item:<key>``): its JSON
  value, with when it was created (the first version since it last did not
  exist) and updated. Every write is journaled and fsync'd like any memgraph
  write; ``put(..., None)`` deletes (a tombstone: history keeps it).
* **Its text is remembered.** Unless ``index=False``, the item's text (the
  strings at the ``index`` fields, else at the store's ``fields``, else every
  string in the value) is remembered in the scope: an episode, and facts
  extracted from it (``extract=False`` keeps the episode only, no model call).
  Updating or deleting an item expires the facts its previous text gave.
* **search** with a ``query`` ranks the namespace's items by memgraph's search
  over those facts and texts (each item scored by its best hit: a fact it
  stated, its text, or an entity its facts are about), then lists
  the items that matched nothing (``score`` ``None``) after them, as
  LangGraph's own stores do for items without vectors; ``filter`` (field
  equality and ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``),
  ``offset`` and ``limit`` apply. Without a query, items come oldest first.

In a batch, reads see the store as it was before the batch's writes (as in
LangGraph's ``InMemoryStore``), and of several writes to one key the last wins.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from memgraph import (
    AsyncMemory,
    ChangeSet,
    Hit,
    Item,
    KeyVersion,
    Memory,
    MemoryConfig,
    NotFound,
    Provider,
)
from memgraph.clock import parse_iso
from memgraph.integrations.values import matches, value_text
from memgraph.scope import validate_scope

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        get_text_at_path,
        validate_op_namespace,
    )
    from langgraph.store.base import Item as StoreItem
except ImportError as exc:  # pragma: no cover - exercised in a process without LangGraph
    raise ImportError(
        "memgraph.integrations.langgraph needs LangGraph; install it with "
        "pip install 'memgraph-kg[langgraph]'"
    ) from exc

__all__ = ["MemgraphStore"]

ITEM = "item:"
"""Prefix of an item's key in its namespace's key/value face."""
NAMESPACE = "namespace:"
"""Prefix of a namespace's key (its labels as JSON) in the registry scope."""
SEARCH_DEPTH = 50
"""Search hits asked of memgraph at least, per namespace searched."""

_PLAIN = re.compile(r"[A-Za-z0-9-]")


@dataclass(frozen=True)
class _Stored:
    """An item as its namespace holds it."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    episode: str | None
    facts: tuple[str, ...]
    created_at: datetime
    updated_at: datetime

    def item(self) -> StoreItem:
        return StoreItem(
            value=self.value,
            key=self.key,
            namespace=self.namespace,
            created_at=self.created_at,
            updated_at=self.updated_at,
        )

    def found(self, score: float | None) -> SearchItem:
        return SearchItem(
            self.namespace, self.key, self.value, self.created_at, self.updated_at, score
        )


@dataclass(frozen=True)
class _Put:
    """A put between its phases: the old item's facts expired, its text to remember."""

    memory: Memory
    op: PutOp
    text: str


class MemgraphStore(BaseStore):
    """A LangGraph ``BaseStore`` whose namespaces are memgraph scopes.

    Args:
        dir: the memory directory (as :class:`memgraph.Memory`'s ``dir``).
        provider: a provider or spec shared by every scope (default: the config's).
        config: a :class:`~memgraph.MemoryConfig`, a ``memory`` block or an
            ``agency.json`` path.
        store: the storage backend of every scope: ``"files"``, a PostgreSQL DSN,
            or ``"memory"`` (this process only).
        extract: extract facts from each item's text (one model call per put);
            ``False`` keeps the text as an episode only, searchable by its words
            and meaning.
        fields: the value fields whose text is remembered (LangGraph paths such
            as ``"content"`` or ``"memories[*].text"``); default: every string.
        prefix: the registry scope, and the first part of every namespace's scope.

    Use it as a context manager (or call :meth:`close`) to close the scopes' files.

    Raises:
        InvalidScope: ``prefix`` is not a valid scope id.
    """

    def __init__(
        self,
        dir: str | os.PathLike[str] | None = None,
        *,
        provider: Provider | str | None = None,
        config: MemoryConfig | Mapping[str, Any] | str | os.PathLike[str] | None = None,
        store: str | None = None,
        extract: bool = True,
        fields: Sequence[str] | None = None,
        prefix: str = "langgraph",
    ) -> None:
        self.prefix = validate_scope(prefix)
        self.extract = extract
        self.fields = list(fields) if fields is not None else None
        self._dir, self._config, self._store = dir, config, store
        self._provider = provider
        self._memories: dict[str, Memory] = {}
        self._known: set[tuple[str, ...]] = set()
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ scopes
    def scope_of(self, namespace: tuple[str, ...]) -> str:
        """The scope that holds ``namespace``'s items and facts."""
        labels = ["".join(_escape(ch) for ch in label) for label in namespace]
        scope = ".".join([self.prefix, *labels])
        if len(scope) > 128:
            digest = hashlib.sha256(scope.encode()).hexdigest()[:16]
            scope = f"{scope[:111]}_{digest}"
        return scope

    def memory(self, namespace: tuple[str, ...]) -> Memory:
        """The :class:`~memgraph.Memory` of ``namespace`` (opened once, kept open)."""
        return self._open(self.scope_of(namespace))

    def _open(self, scope: str) -> Memory:
        with self._lock:
            memory = self._memories.get(scope)
            if memory is None:
                provider = self._provider
                if scope != self.prefix:
                    provider = self._open(self.prefix).provider  # one provider for all
                memory = Memory(
                    self._dir, scope, provider=provider, config=self._config, store=self._store
                )
                self._memories[scope] = memory
            return memory

    def close(self) -> None:
        """Close every scope opened."""
        with self._lock:
            memories, self._memories = list(self._memories.values()), {}
        for memory in memories:
            memory.close()

    def __enter__(self) -> MemgraphStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _namespaces(self) -> list[tuple[str, ...]]:
        """Every namespace that has held items, in the order they were first used."""
        keys = self._open(self.prefix).kv.keys()
        return [tuple(json.loads(k[len(NAMESPACE) :])) for k in keys if k.startswith(NAMESPACE)]

    def _register(self, namespace: tuple[str, ...]) -> None:
        """List ``namespace`` in the registry (once: entries are never removed, so
        writers in other threads or processes cannot race on them)."""
        if namespace in self._known:
            return
        key = NAMESPACE + json.dumps(list(namespace), ensure_ascii=False)
        registry = self._open(self.prefix).kv
        if registry.recall(key) is None:
            registry.remember(key, {"scope": self.scope_of(namespace)})
        self._known.add(namespace)

    # ------------------------------------------------------------------- batch
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order; reads see the store as it was before the batch's writes."""
        ops = list(ops)
        results, puts = self._read_all(ops)
        for op in puts:
            put = self._prepare_put(op)
            if put is not None:
                changes = None
                if put.text:
                    changes = self._remember(put.memory, put.text, op)
                self._finish_put(put, changes)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` without blocking the event loop: reads and file work in worker
        threads, the puts' extractions awaited concurrently (:class:`~memgraph.AsyncMemory`)."""
        ops = list(ops)
        results, puts = await asyncio.to_thread(self._read_all, ops)
        await asyncio.gather(*(self._aput(op) for op in puts))
        return results

    async def _aput(self, op: PutOp) -> None:
        put = await asyncio.to_thread(self._prepare_put, op)
        if put is None:
            return
        changes = None
        if put.text and self.extract:
            metadata = _metadata(op)
            changes = await AsyncMemory.wrap(put.memory).remember(put.text, metadata=metadata)
        elif put.text:
            changes = await asyncio.to_thread(self._remember, put.memory, put.text, op)
        await asyncio.to_thread(self._finish_put, put, changes)

    def _read_all(self, ops: list[Op]) -> tuple[list[Result], list[PutOp]]:
        """The results of the reads among ``ops`` and the puts to apply (the last per key)."""
        for op in ops:
            validate_op_namespace(op)
            if isinstance(op, PutOp) and op.value is not None:
                _check_value(op)
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            elif isinstance(op, PutOp):
                puts[(tuple(op.namespace), op.key)] = op
                results.append(None)
            else:
                raise TypeError(f"unknown store operation {type(op).__name__}")
        return results, list(puts.values())

    # ------------------------------------------------------------------- reads
    def _items(self, namespace: tuple[str, ...], key: str = "") -> list[_Stored]:
        """The items of ``namespace`` (those whose key starts with ``key``), oldest first."""
        if namespace not in self._known and namespace not in self._namespaces():
            return []
        histories = self.memory(namespace).kv.histories(ITEM + key)
        found = [_stored(namespace, name[len(ITEM) :], v) for name, v in histories.items()]
        items = [item for item in found if item is not None]
        return sorted(items, key=lambda item: item.created_at)

    def _get(self, op: GetOp) -> StoreItem | None:
        namespace = tuple(op.namespace)
        for found in self._items(namespace, op.key):
            if found.key == op.key:
                return found.item()
        return None

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        chosen = [ns for ns in self._namespaces() if ns[: len(prefix)] == prefix]
        scored: list[tuple[float, int, _Stored]] = []
        rest: list[_Stored] = []
        for namespace in chosen:
            items = [item for item in self._items(namespace) if matches(item.value, op.filter)]
            scores = self._scores(namespace, items, op) if op.query else {}
            for item in items:
                score = scores.get(item.key)
                if score is None:
                    rest.append(item)
                else:
                    scored.append((score, len(scored), item))
        scored.sort(key=lambda entry: (-entry[0], entry[1]))
        rest.sort(key=lambda item: item.created_at)
        ranked = [item.found(score) for score, _, item in scored]
        ranked += [item.found(None) for item in rest]
        return ranked[op.offset : op.offset + op.limit]

    def _scores(
        self, namespace: tuple[str, ...], items: list[_Stored], op: SearchOp
    ) -> dict[str, float]:
        """Each item's best score among memgraph's hits for the query: a fact hit counts
        for the item that stated the fact, an episode hit (whose entity, the speaker's,
        may be ``None``) for the item whose text it is, an entity hit for the items
        that stated the entity's current facts and relations."""
        if not op.query:
            return {}
        owner: dict[str, str] = {}  # an episode or fact id -> the key of the item it is from
        for item in items:
            owner.update(dict.fromkeys(item.facts, item.key))
            if item.episode:
                owner[item.episode] = item.key
        if not owner:
            return {}
        depth = max(SEARCH_DEPTH, 3 * (op.offset + op.limit))
        scores: dict[str, float] = {}
        for hit in self.memory(namespace).search(op.query, k=depth):
            for key in {owner[i] for i in _sources(hit) if i in owner}:
                if hit.score > scores.get(key, -1.0):
                    scores[key] = hit.score
        return scores

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        found = [
            ns
            for ns in self._namespaces()
            if all(_matches(condition, ns) for condition in op.match_conditions or ())
        ]
        if op.max_depth is not None:
            found = [ns[: op.max_depth] for ns in found]
        return sorted(set(found))[op.offset : op.offset + op.limit]

    # ------------------------------------------------------------------ writes
    def _prepare_put(self, op: PutOp) -> _Put | None:
        """Expire the facts of the item's previous text; delete it when the value is
        ``None`` (then nothing is left to do, and ``None`` is returned)."""
        namespace = tuple(op.namespace)
        memory = self.memory(namespace)
        previous = memory.kv.recall(ITEM + op.key)
        if isinstance(previous, Mapping) and previous.get("facts"):
            _expire(memory, [str(fact) for fact in previous["facts"]])
        if op.value is None:
            if previous is not None:
                memory.kv.forget(ITEM + op.key)
            return None
        if op.index is False:
            return _Put(memory, op, "")
        paths = list(op.index) if op.index is not None else self.fields
        return _Put(memory, op, value_text(op.value, paths, get_text_at_path))

    def _remember(self, memory: Memory, text: str, op: PutOp) -> ChangeSet:
        metadata = _metadata(op)
        if self.extract:
            return memory.remember(text, metadata=metadata)
        return memory.remember_many([Item(text, metadata=metadata, extract=False)])[0]

    def _finish_put(self, put: _Put, changes: ChangeSet | None) -> None:
        """Store the item, with the episode and facts its text gave."""
        facts: list[str] = []
        episode = None
        if changes is not None:
            episode = changes.episode.id if changes.episode is not None else None
            facts = [fact.id for fact in changes.added_observations]
            facts += [relation.id for relation in changes.added_relations]
        assert put.op.value is not None
        stored = {"value": dict(put.op.value), "episode": episode, "facts": facts}
        put.memory.kv.remember(ITEM + put.op.key, stored)
        self._register(tuple(put.op.namespace))


def _escape(ch: str) -> str:
    return ch if _PLAIN.fullmatch(ch) else "".join(f"_{byte:02X}" for byte in ch.encode())


def _check_value(op: PutOp) -> None:
    """Refuse, before anything is written, a value the store cannot keep as JSON."""
    try:
        orjson.dumps(dict(op.value or {}))
    except TypeError as exc:
        raise TypeError(
            f"the value of item {op.key!r} in namespace {tuple(op.namespace)!r} is not "
            f"JSON-serializable ({exc}); store plain dicts, lists, strings, numbers and booleans"
        ) from exc


def _metadata(op: PutOp) -> dict[str, Any]:
    return {"langgraph": {"namespace": list(op.namespace), "key": op.key}}


def _stored(namespace: tuple[str, ...], key: str, versions: list[KeyVersion]) -> _Stored | None:
    """The item a key's versions hold now, or ``None`` when it is deleted."""
    if not versions or versions[-1].deleted:
        return None
    first = len(versions) - 1
    while first > 0 and not versions[first - 1].deleted:
        first -= 1
    stored = versions[-1].value
    return _Stored(
        namespace,
        key,
        dict(stored["value"]),
        stored.get("episode"),
        tuple(stored.get("facts") or ()),
        parse_iso(versions[first].at),
        parse_iso(versions[-1].at),
    )


def _expire(memory: Memory, ids: list[str]) -> None:
    """Expire the facts still current among ``ids`` (ids purged since are skipped)."""
    try:
        memory.expire(*ids)
    except NotFound:
        for fact in ids:
            try:
                memory.expire(fact)
            except NotFound:
                continue


def _sources(hit: Hit) -> list[str]:
    """The ids of the facts and texts ``hit`` stands on."""
    if hit.observation is not None:
        return [hit.observation.id, hit.observation.episode_id or ""]
    if hit.episode is not None:
        return [hit.episode.id]
    facts = hit.entity.observations if hit.entity is not None else ()
    ids = [i for fact in facts for i in (fact.id, fact.episode_id or "")]
    return ids + [i for relation in hit.relations for i in (relation.id, relation.episode_id or "")]


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """Whether ``namespace`` starts (``prefix``) or ends (``suffix``) with the
    condition's path, where ``"*"`` matches any label."""
    if condition.match_type not in ("prefix", "suffix"):
        raise ValueError(f"unknown namespace match type {condition.match_type!r}")
    path = tuple(condition.path)
    if not path:
        return True
    if len(namespace) < len(path):
        return False
    labels = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(want in ("*", label) for want, label in zip(path, labels, strict=True))
