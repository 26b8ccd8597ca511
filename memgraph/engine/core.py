"""The core of a Memory: its state, how it loads, syncs, locks and commits.

Feature mixins in ``writing``, ``reading``, ``forgetting`` and ``extras``
build on :class:`MemoryCore`; :class:`memgraph.engine.memory.Memory` combines them.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from memgraph.clock import iso, now_iso, parse_iso
from memgraph.config import MemoryConfig, load_config
from memgraph.errors import StoreConflict, StoreCorrupt
from memgraph.graph.changes import Plan
from memgraph.graph.graph import Doc, Graph
from memgraph.llm_calls.provider import Provider
from memgraph.llm_calls.resolve import OFFLINE_NOTICE, choose_provider
from memgraph.llm_calls.tokens import token_counter
from memgraph.models import (
    ChangeSet,
    Entity,
    Episode,
    Observation,
    Relation,
)
from memgraph.retrieval import ranking as tiers
from memgraph.retrieval.ivf import IVF_MIN_ROWS, CoarseIndex
from memgraph.retrieval.vectors import VectorIndex
from memgraph.scope import validate_scope
from memgraph.store import open_store
from memgraph.store.base import Commit, Store, VectorBatch
from memgraph.store.directory import doctor_hint

__all__ = ["CONTEXT_BUDGET", "MAX_TEXT_CHARS", "MemoryCore", "coerce_time", "default_dir"]

log = logging.getLogger("memgraph")

T = TypeVar("T")
M = TypeVar("M", bound="MemoryCore")

MAX_TEXT_CHARS = 100_000
"""Longest text one ``remember`` accepts; split longer input into several calls."""

EMBED_BATCH = 256
BULK_VECTORS = 1000
CONTEXT_BUDGET = 800
FREEZE_AFTER = 50_000
MODEL_CACHE = 256  # entities kept converted for search hits


@dataclass(frozen=True)
class EntityModel:
    """An entity converted for search hits: its :class:`Entity`, every relation
    (record and model) and, ready to hand out, the current ones."""

    entity: Entity
    relations: list[tuple[Doc, Relation]]
    current_relations: tuple[Relation, ...]


def default_dir() -> Path:
    """``MEMGRAPH_DIR`` if set, else ``.memgraph`` in the working directory."""
    return Path(os.environ.get("MEMGRAPH_DIR") or ".memgraph")


def coerce_time(value: str | datetime | None) -> str:
    return now_iso() if value is None else iso(parse_iso(value))


def _highest_id(ops: Sequence[Doc]) -> int:
    highest = 0
    for op in ops:
        for key in ("entity", "obs", "rel"):
            value = op.get(key)
            if isinstance(value, dict):
                _, _, number = str(value.get("id", "")).rpartition("-")
                if number.isdigit():
                    highest = max(highest, int(number))
    return highest


class MemoryCore:
    """State and primitives shared by every part of :class:`memgraph.Memory`."""

    def __init__(
        self,
        dir: str | os.PathLike[str] | None = None,
        scope: str = "default",
        *,
        provider: Provider | str | None = None,
        config: MemoryConfig | Mapping[str, Any] | str | os.PathLike[str] | None = None,
        store: Store | str | None = None,
    ) -> None:
        self.scope = validate_scope(scope)
        self.config = self._resolve_config(config)
        self.provider, self.offline = choose_provider(provider, self.config)
        if self.offline:
            log.info(OFFLINE_NOTICE)
        self.dir: Path | None = None
        if store is not None and not isinstance(store, str):
            self.store: Store = store
        else:
            kind = store or os.environ.get("MEMGRAPH_STORE") or self.config.store
            self.dir = Path(dir) if dir is not None else (self.config.dir or default_dir())
            self.store = open_store(kind, self.dir, self.scope)
        self._token_model = self.provider.chat.model or None
        self._lock = threading.RLock()
        self._graph: Graph | None = None
        self._vectors: VectorIndex | None = None
        self._episode_cache: dict[str, Doc] | None = None
        # Entity id -> its Entity and (relation doc, Relation) pairs, for search hits:
        # a hub entity holds thousands of facts, converted once until it changes.
        self._models: OrderedDict[str, EntityModel] = OrderedDict()
        self._closed = False
        self._writing = False
        self._training: threading.Thread | None = None

    @staticmethod
    def _resolve_config(
        config: MemoryConfig | Mapping[str, Any] | str | os.PathLike[str] | None,
    ) -> MemoryConfig:
        if isinstance(config, MemoryConfig):
            return config
        if isinstance(config, Mapping):
            return MemoryConfig.from_dict(config)
        if config is not None:
            return load_config(Path(config)) or MemoryConfig()
        return load_config() or MemoryConfig()

    def __enter__(self: M) -> M:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Release files. The memory can be reopened by creating a new ``Memory``."""
        with self._lock:
            self.store.close()
            self._closed = True

    def resident_bytes(self) -> int:
        """A rough estimate of the memory this object holds for its scope (what a
        :class:`~memgraph.conversation.cache.MemoryCache` budgets): the graph and
        vectors loaded so far. Zero before the first call loads the scope."""
        graph, vectors = self._graph, self._vectors
        if graph is None:
            return 0
        return graph.resident_bytes() + (vectors.resident_bytes() if vectors is not None else 0)

    def __repr__(self) -> str:
        where = str(self.dir) if self.dir is not None else type(self.store).__name__
        return f"Memory({where!r}, scope={self.scope!r}, provider={self.provider.name!r})"

    def _count_tokens(self, text: str) -> int:
        """Tokens of ``text`` for the chat model (the encoding loads on first use)."""
        return token_counter(self._token_model)(text)

    @property
    def embedder_model(self) -> str | None:
        embedder = self.provider.embedder
        return embedder.model if embedder is not None else None

    def _sync(self) -> Graph:
        """Bring the in-memory graph up to date with the store (cheap when nothing changed)."""
        commits = None if self._graph is None else self.store.changes_since(self._graph.seq)
        if commits is None:  # first use, or another handle's checkpoint replaced the files
            self._backfill_vectors(self._load())
        else:
            for commit in commits:
                self._apply(commit)
        assert self._graph is not None
        self._maybe_train()
        return self._graph

    def _maybe_train(self) -> None:
        """Start training the approximate vector index in the background when due.

        Due when the scope has at least ``IVF_MIN_ROWS`` vectors and the index
        covers less than half of them. Searches stay exact until it is ready.
        """
        index = self._vectors
        if index is None or len(index) < IVF_MIN_ROWS or self._training is not None:
            return
        if index.coarse is not None and index.coarse.covered * 2 >= len(index):
            return
        count = len(index)
        rows = index.rows(0, count)

        def train() -> None:
            try:
                trained = CoarseIndex.train(rows)
                with self._lock:
                    if self._vectors is index:
                        trained.extend(index.rows(trained.covered, len(index)))
                        index.coarse = trained
            except Exception:  # a failed background build only costs speed
                log.exception("memgraph: building the vector index of %r failed", self.scope)
            finally:
                self._training = None

        self._training = threading.Thread(target=train, name="memgraph-ivf", daemon=True)
        self._training.start()

    def wait_for_index(self, timeout: float | None = None) -> bool:
        """Wait until a background vector-index build (if any) is done; True if none runs."""
        thread = self._training
        if thread is not None:
            thread.join(timeout)
        return self._training is None

    def _backfill_vectors(self, current: list[str]) -> None:
        """Embed current observations that have no vector (new embedding model, Agency files).

        Persisted when the scope's lock is free; otherwise kept in memory and
        persisted by the next write.
        """
        graph = self._graph
        assert graph is not None
        missing = self._missing_vectors(graph, current)
        if not missing:
            return
        log.info("memgraph: embedding %d observations of scope %r", len(missing), self.scope)
        rows = self._embed([text for _, text in missing])
        vectors = {obs_id: row for (obs_id, _), row in zip(missing, rows, strict=True)}
        try:
            with self._writer(min(self.config.lock_timeout, 1.0)):
                commits = self.store.changes_since(graph.seq)
                if commits is None:
                    return
                for commit in commits:
                    self._apply(commit)
                plan = Plan(next_id=graph.next_id, embed=[m for m in missing if m[0] in vectors])
                if len(plan.embed) > BULK_VECTORS:
                    assert self._vectors is not None
                    self._vectors.add(list(vectors), np.stack(list(vectors.values())))
                    self._maybe_checkpoint(force=True)
                else:
                    self._commit(plan, vectors)
        except StoreConflict:
            assert self._vectors is not None
            self._vectors.add(list(vectors), np.stack(list(vectors.values())))

    @contextlib.contextmanager
    def _writer(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the store's single-writer lock (re-entrant within this object)."""
        if self._writing:
            yield
            return
        with self.store.lock(self.config.lock_timeout if timeout is None else timeout):
            self._writing = True
            try:
                yield
            finally:
                self._writing = False

    def checkpoint(self) -> None:
        """Fold the journal into ``graph.json`` now (it also happens automatically)."""
        with self._lock, self._writer():
            self._sync()
            self._maybe_checkpoint(force=True)

    def _load(self) -> list[str]:
        """Load the scope from the store; returns the ids of the current observations."""
        snapshot = self.store.load()
        try:
            graph = snapshot.graph()
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise self._corrupt("graph_path", "is not a valid graph", "structure", exc) from exc
        model = self.embedder_model
        vectors = snapshot.vectors
        if vectors is not None and model is not None and vectors.model == model:
            index = VectorIndex(model, None, vectors.matrix, vectors.ids, source=vectors.source)
            if vectors.coarse is not None and vectors.coarse.centroids.shape[1:] == (
                index.dimension,
            ):
                index.coarse = vectors.coarse
        else:
            if vectors is not None and len(vectors.ids) and model is not None:
                log.warning(
                    "memgraph: scope %r has vectors of model %r but the embedder is %r; "
                    "rebuilding the index instead of mixing vector spaces",
                    self.scope,
                    vectors.model,
                    model,
                )
            index = VectorIndex(model)
        self._graph, self._vectors, self._episode_cache = graph, index, None
        self._models.clear()
        graph.defer_indexing()  # the replayed facts are indexed in one batch below
        for commit in snapshot.commits:
            try:
                self._apply(commit)
            except (AttributeError, KeyError, TypeError, ValueError, StopIteration) as exc:
                self._graph = None
                problem = "does not apply to the graph"
                raise self._corrupt("journal_path", problem, f"commit {commit.seq}", exc) from exc
        graph.flush_indexing()
        current = graph.current_observation_ids()
        index.set_live(current)
        self._freeze_if_large(graph)
        return current

    @staticmethod
    def _freeze_if_large(graph: Graph) -> None:
        """Keep the cyclic GC from re-scanning a large graph on every full collection
        (it cost a fifth of write time at 100k facts): after loading, after each
        checkpoint and after each bulk batch, since a lazy graph parses its records
        as they are used. Young garbage is collected first so it is not frozen."""
        if graph.observation_count >= FREEZE_AFTER:
            gc.collect(1)
            gc.freeze()

    def _corrupt(self, attribute: str, problem: str, position: str, exc: Exception) -> StoreCorrupt:
        """A StoreCorrupt for stored data that parsed but does not make a graph."""
        path = str(getattr(self.store, attribute, "") or "")
        shown = repr(path) if path else f"the store of scope {self.scope!r}"
        advice = doctor_hint(Path(path)) if path else "`memgraph doctor` on the scope"
        return StoreCorrupt(
            f"{shown} is damaged at {position}: it {problem} ({type(exc).__name__}: {exc}). "
            f"It was left untouched; run {advice} to inspect it",
            path=path,
            position=position,
        )

    def _apply(self, commit: Commit) -> None:
        graph = self._graph
        assert graph is not None
        self._forget_models(graph, commit.ops)
        graph.apply(commit.ops)
        graph.next_id = max(graph.next_id, commit.next_id)
        graph.seq = commit.seq
        self._apply_vectors(commit)

    def _forget_models(self, graph: Graph, ops: Sequence[Doc]) -> None:
        """Drop the cached models of the entities ``ops`` change."""
        models = self._models
        if not models:
            return
        for op in ops:
            kind = op["op"]
            if kind == "obs":
                models.pop(op["entity"], None)
            elif kind == "expire_obs":
                pair = graph.observation(op["id"])
                if pair is not None:
                    models.pop(pair[0]["id"], None)
            elif kind == "rel":
                models.pop(op["rel"]["from"], None)
                models.pop(op["rel"]["to"], None)
            elif kind == "expire_rel":
                rel = graph.relations.get(op["id"])
                if rel is not None:
                    models.pop(rel["from"], None)
                    models.pop(rel["to"], None)
            elif kind == "purge":
                models.clear()

    def _entity_model(self, graph: Graph, entity: Doc) -> EntityModel:
        """``entity`` as an :class:`Entity` with its relations (cached, least recently used out)."""
        models = self._models
        found = models.get(entity["id"])
        if found is None:
            pairs = [(rel, self._relation(rel)) for rel in graph.relations_of(entity["id"])]
            current = tuple(model for rel, model in pairs if rel.get("validTo") is None)
            found = models[entity["id"]] = EntityModel(Entity.from_doc(entity), pairs, current)
            if len(models) > MODEL_CACHE:
                models.popitem(last=False)
        else:
            models.move_to_end(entity["id"])
        return found

    def _apply_vectors(self, commit: Commit) -> None:
        index = self._vectors
        assert index is not None
        batch = commit.vectors
        if batch is not None and batch.ids and batch.model == index.model:
            index.add(batch.ids, batch.matrix)
        index.discard(op["id"] for op in commit.ops if op["op"] == "expire_obs")

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        embedder = self.provider.embedder
        assert embedder is not None
        parts = [
            embedder.embed(texts[i : i + EMBED_BATCH]) for i in range(0, len(texts), EMBED_BATCH)
        ]
        return np.concatenate(parts) if len(parts) > 1 else parts[0]

    def _missing_vectors(self, graph: Graph, current: list[str]) -> list[tuple[str, str]]:
        """(id, text to embed) of the ``current`` observations that have no vector."""
        index = self._vectors
        if self.provider.embedder is None or index is None:
            return []
        missing = []
        rows = index.row_of
        for obs_id in [i for i in current if i not in rows]:
            pair = graph.observation(obs_id)
            assert pair is not None
            entity, obs = pair
            text = f"{entity['name']} ({entity.get('type') or 'thing'}): {obs['content']}"
            missing.append((obs_id, text))
        return missing

    def _commit(self, plan: Plan, vectors: Mapping[str, np.ndarray]) -> Commit:
        """Append ``plan`` as the next commit and apply it. Caller holds both locks."""
        graph = self._graph
        assert graph is not None
        ids = [obs_id for obs_id, _ in plan.embed if obs_id in vectors]
        batch = None
        if ids and self.embedder_model is not None:
            batch = VectorBatch(
                self.embedder_model, tuple(ids), np.stack([vectors[i] for i in ids])
            )
        commit = Commit(graph.seq + 1, now_iso(), plan.next_id, plan.ops, batch)
        self.store.commit(commit)
        self._apply(commit)
        self._maybe_checkpoint()
        return commit

    def _maybe_checkpoint(self, *, force: bool = False) -> None:
        graph = self._graph
        assert graph is not None
        if not force and not self.store.checkpoint_due():
            self._maybe_train()
            return  # building the document for a store that would decline costs O(n)
        episodes = list(graph.episodes.values())
        if self.store.checkpoint(graph, self._vectors, episodes, force=force):
            graph.episodes.clear()
            if self._episode_cache is not None:
                for episode in episodes:
                    self._episode_cache[episode["id"]] = episode
            self._freeze_if_large(graph)
        self._maybe_train()

    def _write(self, plan_for: Any) -> tuple[Plan, Commit | None]:
        """Plan against a snapshot, embed, then lock, catch up, re-plan and commit."""
        with self._lock:
            graph = self._sync()
            draft, drafted_at = plan_for(graph), (graph, graph.seq)
        vectors: dict[str, np.ndarray] = {}
        if self.provider.embedder is not None and draft.embed:
            texts = [text for _, text in draft.embed]
            for (_obs_id, text), row in zip(draft.embed, self._embed(texts), strict=True):
                vectors[text] = row
        with self._lock, self._writer():
            graph = self._sync()
            # Re-plan only when another write landed since the draft (ids, duplicates).
            plan = draft if (graph, graph.seq) == drafted_at else plan_for(graph)
            missing = [text for _, text in plan.embed if text not in vectors]
            if missing and self.provider.embedder is not None:
                for text, row in zip(missing, self._embed(missing), strict=True):
                    vectors[text] = row
            if not plan.ops:
                return plan, None
            by_id = {obs_id: vectors[text] for obs_id, text in plan.embed if text in vectors}
            return plan, self._commit(plan, by_id)

    def _change_set(
        self, plan: Plan, commit: Commit | None, warnings: tuple[str, ...]
    ) -> ChangeSet:
        if commit is None:
            return ChangeSet(warnings=warnings)
        graph = self._graph
        assert graph is not None
        episode = None
        entities, observations, relations, expired_obs, expired_rels = [], [], [], [], []
        for op in plan.ops:
            kind = op["op"]
            if kind == "episode":
                episode = Episode.from_doc(op["episode"])
            elif kind == "entity":
                entities.append(Entity.from_doc(graph.entities[op["entity"]["id"]]))
            elif kind == "obs":
                observations.append(Observation.from_doc(op["obs"], op["entity"]))
            elif kind == "rel":
                relations.append(self._relation(op["rel"]))
            elif kind == "expire_obs":
                pair = graph.observation(op["id"])
                if pair is not None:
                    expired_obs.append(Observation.from_doc(pair[1], pair[0]["id"]))
            elif kind == "expire_rel":
                expired_rels.append(self._relation(graph.relations[op["id"]]))
        return ChangeSet(
            episode,
            tuple(entities),
            tuple(observations),
            tuple(relations),
            tuple(expired_obs),
            tuple(expired_rels),
            warnings,
        )

    def _relation(self, rel: Doc) -> Relation:
        graph = self._graph
        assert graph is not None
        source, target = graph.entities.get(rel["from"]), graph.entities.get(rel["to"])
        return Relation.from_doc(
            rel, source["name"] if source else rel["from"], target["name"] if target else rel["to"]
        )

    def _candidates(
        self,
        graph: Graph,
        query: str,
        *,
        limit: int = 200,
        query_vector: np.ndarray | None = None,
        lens: tiers.Lens = tiers.CURRENT,
    ) -> list[tiers.Candidate]:
        """Tiers 1 and 2, fused and floored, through ``lens``."""
        embed = self._embed if self.provider.embedder is not None else None
        history = lens.at is not None
        mask = None
        if history and self._vectors is not None and len(self._vectors):
            visible = (o["id"] for _, o in graph.all_observations() if lens.visible(o))
            mask = self._vectors.mask_for(visible)
        return tiers.fuse(
            graph,
            names=tiers.name_matches(graph, query),
            types=tiers.type_matches(graph, query),
            keywords=tiers.keyword_matches(graph, query, history=history),
            semantic=tiers.semantic_matches(
                self._vectors,
                embed,
                query,
                k=50 if lens == tiers.CURRENT else 200,
                query_vector=query_vector,
                mask=mask,
            ),
            floor=self.config.recall.floor,
            limit=limit,
            lens=lens,
        )

    def _write_ops(
        self, build: Callable[[Graph], list[Doc]], *, vectors: bool = False
    ) -> Commit | None:
        """Commit the ops ``build`` returns for the synced graph (no LLM).

        ``build`` may allocate ids past ``graph.next_id``; the counter moves past
        the highest one. With ``vectors``, new observations are embedded.
        """
        with self._lock, self._writer():
            graph = self._sync()
            graph.check_next_id()
            ops = build(graph)
            if not ops:
                return None
            plan = Plan(ops=ops, next_id=max(graph.next_id, _highest_id(ops) + 1))
            names = {op["entity"]["id"]: op["entity"] for op in ops if op["op"] == "entity"}
            for op in ops:
                if op["op"] == "obs" and vectors and self.provider.embedder is not None:
                    entity = names.get(op["entity"]) or graph.entities[op["entity"]]
                    text = f"{entity['name']} ({entity.get('type') or 'thing'}): {op['obs']['content']}"
                    plan.embed.append((op["obs"]["id"], text))
            by_id: dict[str, np.ndarray] = {}
            if plan.embed:
                rows = self._embed([text for _, text in plan.embed])
                by_id = {obs_id: row for (obs_id, _), row in zip(plan.embed, rows, strict=True)}
            return self._commit(plan, by_id)

    def _read_graph(self, read: Callable[[Graph], T]) -> T:
        """Run ``read`` on the synced graph under the object's lock."""
        with self._lock:
            return read(self._sync())
