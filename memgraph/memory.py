"""``Memory``: one scope of long-term memory, the object the rest of memgraph stands on.

The engine orchestrates; the pieces compute. ``remember`` runs
extract → plan → embed → lock → catch up → re-plan → commit → apply;
``recall`` runs the tiers of :mod:`memgraph.recall` over the in-memory graph.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from memgraph import recall as tiers
from memgraph.ask import ask_json
from memgraph.changes import Plan, plan_extraction, plan_forget
from memgraph.clock import iso, now_iso, parse_iso
from memgraph.config import MemoryConfig, load_config
from memgraph.errors import NotFound, StoreConflict
from memgraph.export import to_graphml, to_json
from memgraph.extract import Extraction, clean_label, extract
from memgraph.graph import Doc, Graph
from memgraph.models import (
    ChangeSet,
    Entity,
    EntityHistory,
    Episode,
    Hit,
    Observation,
    Relation,
)
from memgraph.prompts import FORGET_SCHEMA, FORGET_SYSTEM, forget_message
from memgraph.provider import Provider
from memgraph.resolve import OFFLINE_NOTICE, choose_provider
from memgraph.scope import validate_scope
from memgraph.store import open_store
from memgraph.store.base import Commit, Store, VectorBatch
from memgraph.tokens import token_counter
from memgraph.vectors import VectorIndex

__all__ = ["MAX_TEXT_CHARS", "Memory", "default_dir"]

log = logging.getLogger("memgraph")

MAX_TEXT_CHARS = 100_000
"""Longest text one ``remember`` accepts; split longer input into several calls."""

EMBED_BATCH = 256
BULK_VECTORS = 1000
CONTEXT_BUDGET = 800


def default_dir() -> Path:
    """``MEMGRAPH_DIR`` if set, else ``.memgraph`` in the working directory."""
    return Path(os.environ.get("MEMGRAPH_DIR") or ".memgraph")


def _coerce_time(value: str | datetime | None) -> str:
    return now_iso() if value is None else iso(parse_iso(value))


class Memory:
    """Long-term memory for one scope, stored under ``dir/scope``.

    Args:
        dir: the memory directory (one sub-directory per scope). Defaults to
            the config's ``dir``, then ``MEMGRAPH_DIR``, then ``./.memgraph``.
        scope: the scope id (a user, a channel, a workspace).
        provider: a :class:`~memgraph.provider.Provider` or a spec such as
            ``"mock"`` or ``"openai:gpt-4o-mini"``.
        config: a :class:`~memgraph.config.MemoryConfig`, a ``memory`` block
            dict, or a path to an ``agency.json``. Defaults to ``agency.json``
            in the working directory, if any.
        store: a :class:`~memgraph.store.base.Store`, or a ``memory.store``
            setting (``"files"``, ``"memory"`` for a session-only in-process
            store, ...). Defaults to ``MEMGRAPH_STORE``, then the config.

    Raises:
        InvalidScope: ``scope`` breaks the naming rule.
        ConfigError: the configuration is invalid.

    Use it as a context manager so files are closed::

        with Memory("./mem", scope="alice") as memory:
            memory.remember("Alice prefers concise answers.")
            print(memory.recall("how does alice like answers?"))
    """

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
        self._count_tokens = token_counter(self.provider.chat.model or None)
        self._lock = threading.RLock()
        self._graph: Graph | None = None
        self._vectors: VectorIndex | None = None
        self._episode_cache: dict[str, Doc] | None = None
        self._closed = False
        self._writing = False

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

    # --------------------------------------------------------------- lifecycle
    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Release files. The memory can be reopened by creating a new ``Memory``."""
        with self._lock:
            self.store.close()
            self._closed = True

    def __repr__(self) -> str:
        where = str(self.dir) if self.dir is not None else type(self.store).__name__
        return f"Memory({where!r}, scope={self.scope!r}, provider={self.provider.name!r})"

    # ------------------------------------------------------------------- state
    @property
    def embedder_model(self) -> str | None:
        embedder = self.provider.embedder
        return embedder.model if embedder is not None else None

    def _sync(self) -> Graph:
        """Bring the in-memory graph up to date with the store (cheap when nothing changed)."""
        if self._graph is None:
            self._load()
            self._backfill_vectors()
        else:
            commits = self.store.changes_since(self._graph.seq)
            if commits is None:
                self._load()
                self._backfill_vectors()
            else:
                for commit in commits:
                    self._apply(commit)
        assert self._graph is not None
        return self._graph

    def _backfill_vectors(self) -> None:
        """Embed current observations that have no vector (new embedding model, Agency files).

        Persisted when the scope's lock is free; otherwise kept in memory and
        persisted by the next write.
        """
        graph = self._graph
        assert graph is not None
        missing = self._missing_vectors(graph)
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

    def _load(self) -> None:
        snapshot = self.store.load()
        graph = Graph.from_document(snapshot.document or {})
        model = self.embedder_model
        vectors = snapshot.vectors
        if vectors is not None and model is not None and vectors.model == model:
            index = VectorIndex(model, None, vectors.matrix, vectors.ids)
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
        for commit in snapshot.commits:
            self._apply(commit)
        index.set_live(o["id"] for _, o in graph.current_observations())

    def _apply(self, commit: Commit) -> None:
        graph = self._graph
        assert graph is not None
        graph.apply(commit.ops)
        graph.next_id = max(graph.next_id, commit.next_id)
        graph.seq = commit.seq
        self._apply_vectors(commit)

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

    def _missing_vectors(self, graph: Graph) -> list[tuple[str, str]]:
        index = self._vectors
        if self.provider.embedder is None or index is None:
            return []
        return [
            (obs["id"], f"{entity['name']} ({entity.get('type') or 'thing'}): {obs['content']}")
            for entity, obs in graph.current_observations()
            if obs["id"] not in index
        ]

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
        episodes = list(graph.episodes.values())
        if self.store.checkpoint(graph.to_document(), self._vectors, episodes, force=force):
            graph.episodes.clear()
            if self._episode_cache is not None:
                for episode in episodes:
                    self._episode_cache[episode["id"]] = episode

    def _write(self, plan_for: Any) -> tuple[Plan, Commit | None]:
        """Plan against a snapshot, embed, then lock, catch up, re-plan and commit."""
        with self._lock:
            draft = plan_for(self._sync())
        vectors: dict[str, np.ndarray] = {}
        if self.provider.embedder is not None and draft.embed:
            texts = [text for _, text in draft.embed]
            for (_obs_id, text), row in zip(draft.embed, self._embed(texts), strict=True):
                vectors[text] = row
        with self._lock, self._writer():
            plan = plan_for(self._sync())
            missing = [text for _, text in plan.embed if text not in vectors]
            if missing and self.provider.embedder is not None:
                for text, row in zip(missing, self._embed(missing), strict=True):
                    vectors[text] = row
            if not plan.ops:
                return plan, None
            by_id = {obs_id: vectors[text] for obs_id, text in plan.embed if text in vectors}
            return plan, self._commit(plan, by_id)

    # ------------------------------------------------------------------ writes
    def remember(
        self,
        text: str,
        *,
        at: str | datetime | None = None,
        source: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> ChangeSet:
        """Extract facts from ``text`` and store them, with the text as an episode.

        Args:
            text: what was said or learned, in plain language.
            at: when it was said (world time, for importing old conversations);
                defaults to now.
            source: where the text came from (an agent, a channel); kept on the
                episode and every fact.
            metadata: a JSON-serializable dict stored with the episode.

        Returns:
            What changed. Empty (falsy) when nothing new was learned or the
            model's reply was unusable (a warning is logged then).

        Raises:
            TypeError: ``text`` is not a string or ``metadata`` is not JSON-serializable.
            ValueError: ``text`` is empty or longer than :data:`MAX_TEXT_CHARS`.
            ProviderError: the model could not be reached; nothing was stored.
            StoreError: the write could not be persisted; nothing was stored.
        """
        clean = self._check_text(text)
        source = source or "main"
        said_at = _coerce_time(at)
        meta = self._check_metadata(metadata)
        with self._lock:
            graph = self._sync()
            known = self._context_for(graph, clean)
        answer = extract(self.provider.chat, clean, known=known, said_at=said_at)
        if answer.value is None:
            return ChangeSet(warnings=tuple(answer.problems))
        extraction: Extraction = answer.value
        now = now_iso()
        episode: Doc = {"text": clean, "at": said_at, "recordedAt": now, "source": source}
        if meta:
            episode["metadata"] = meta

        def plan_for(graph: Graph) -> Plan:
            return plan_extraction(
                graph, extraction, at=said_at, now=now, source=source, episode=episode
            )

        plan, commit = self._write(plan_for)
        warnings = tuple(answer.problems) + tuple(plan.warnings)
        for warning in plan.warnings:
            log.warning("memgraph: %s", warning)
        return self._change_set(plan, commit, warnings)

    def remember_many(
        self,
        texts: Sequence[str],
        *,
        at: str | datetime | None = None,
        source: str | None = None,
    ) -> list[ChangeSet]:
        """Remember many texts with batched embedding calls and one commit.

        The bulk path for imports: the texts are embedded for their context in
        one batched call, extracted one by one (one LLM call each), applied in
        order, and persisted as a single journal commit with one fsync. The
        context of each extraction is the memory as it was before the batch.

        Returns:
            One change set per text, in order.

        Raises:
            TypeError, ValueError: a text is not acceptable (nothing is stored).
            ProviderError: the model could not be reached; nothing is stored.
            StoreError: the batch could not be persisted; nothing is stored.
        """
        cleaned = [self._check_text(text) for text in texts]
        if not cleaned:
            return []
        source = source or "main"
        said_at = _coerce_time(at)
        with self._lock:
            graph = self._sync()
            vectors = None
            if graph.entities and self.provider.embedder is not None:
                vectors = self._embed(cleaned)
            known = [
                self._context_for(graph, text, None if vectors is None else vectors[i])
                for i, text in enumerate(cleaned)
            ]
        answers = [
            extract(self.provider.chat, text, known=context, said_at=said_at)
            for text, context in zip(cleaned, known, strict=True)
        ]
        now = now_iso()
        with self._lock, self._writer():
            graph = self._sync()
            plans: list[Plan | None] = []
            ops: list[Doc] = []
            embed: list[tuple[str, str]] = []
            try:
                for text, answer in zip(cleaned, answers, strict=True):
                    if answer.value is None:
                        plans.append(None)
                        continue
                    episode = {"text": text, "at": said_at, "recordedAt": now, "source": source}
                    plan = plan_extraction(
                        graph, answer.value, at=said_at, now=now, source=source, episode=episode
                    )
                    graph.apply(plan.ops)  # later texts resolve against earlier ones
                    graph.next_id = plan.next_id
                    plans.append(plan)
                    ops.extend(plan.ops)
                    embed.extend(plan.embed)
                rows = self._embed([t for _, t in embed]) if embed and self.embedder_model else None
                batch = None
                if rows is not None and self.embedder_model is not None:
                    batch = VectorBatch(self.embedder_model, tuple(i for i, _ in embed), rows)
                commit = Commit(graph.seq + 1, now_iso(), graph.next_id, ops, batch)
                if ops:
                    self.store.commit(commit)
            except BaseException:
                self._graph = None  # the in-memory graph ran ahead of the store: reload
                raise
            if ops:
                graph.seq = commit.seq
                self._apply_vectors(commit)
                self._maybe_checkpoint()
            results = []
            for planned, answer in zip(plans, answers, strict=True):
                if planned is None:
                    results.append(ChangeSet(warnings=tuple(answer.problems)))
                else:
                    warnings = tuple(answer.problems) + tuple(planned.warnings)
                    results.append(self._change_set(planned, commit, warnings))
            return results

    @staticmethod
    def _check_text(text: object) -> str:
        if isinstance(text, bytes):
            try:
                text = text.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(
                    f"text is not valid UTF-8 (byte {exc.start}); decode it before remembering"
                ) from exc
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        clean = text.replace("\x00", "").strip()
        if not clean:
            raise ValueError("text is empty; there is nothing to remember")
        if len(clean) > MAX_TEXT_CHARS:
            raise ValueError(
                f"text is {len(clean):,} characters, over the {MAX_TEXT_CHARS:,} limit of one "
                "remember; split it into several calls"
            )
        return clean

    @staticmethod
    def _check_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any] | None:
        if metadata is None:
            return None
        if not isinstance(metadata, Mapping):
            raise TypeError(f"metadata must be a dict, got {type(metadata).__name__}")
        try:
            return dict(orjson.loads(orjson.dumps(dict(metadata))))
        except TypeError as exc:
            raise TypeError(f"metadata must be JSON-serializable: {exc}") from exc

    def _context_for(self, graph: Graph, text: str, query_vector: np.ndarray | None = None) -> str:
        """The bounded existing-entity context for an extraction prompt."""
        if not graph.entities:
            return ""
        ranked = self._candidates(graph, text, limit=60, query_vector=query_vector)
        return tiers.format_entities(
            graph,
            ranked,
            count_tokens=self._count_tokens,
            budget=CONTEXT_BUDGET,
            max_entities=8,
            extra_facts=4,
        )

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

    # ------------------------------------------------------------------- reads
    def _candidates(
        self,
        graph: Graph,
        query: str,
        *,
        limit: int = 200,
        query_vector: np.ndarray | None = None,
    ) -> list[tiers.Candidate]:
        """Tiers 1 and 2, fused and floored."""
        embed = self._embed if self.provider.embedder is not None else None
        return tiers.fuse(
            graph,
            names=tiers.name_matches(graph, query),
            types=tiers.type_matches(graph, query),
            keywords=tiers.keyword_matches(graph, query),
            semantic=tiers.semantic_matches(self._vectors, embed, query, query_vector=query_vector),
            floor=self.config.recall.floor,
            limit=limit,
        )

    def _ranked(self, query: str, *, rerank: bool) -> list[tiers.Candidate]:
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        with self._lock:
            graph = self._sync()
            if not query.strip() or not graph.entities:
                return []
            ranked = self._candidates(graph, query)
            if not rerank:
                return ranked
            pool = ranked or (tiers.every_entity(graph) if len(graph.entities) <= 50 else [])
        if not pool:
            return []
        kept = tiers.rerank(self.provider.chat, query, pool)
        return ranked if kept is None else kept

    def recall(self, query: str, *, rerank: bool = True) -> str:
        """The facts relevant to ``query``, grouped by entity, as text ("" when none).

        Uses all three tiers; ``rerank=False`` skips the LLM (the variant that
        context injection uses). The text is capped by ``recall.tokenBudget``.
        """
        ranked = self._ranked(query, rerank=rerank)
        if not ranked:
            return ""
        with self._lock:
            graph = self._sync()
            return tiers.format_entities(
                graph,
                ranked,
                count_tokens=self._count_tokens,
                budget=self.config.recall.token_budget,
                max_entities=self.config.recall.max_entities,
            )

    def search(
        self, query: str, *, k: int = 10, rerank: bool = False, episodes: bool = False
    ) -> list[Hit]:
        """Ranked observation-level hits for ``query``, best first.

        Args:
            query: what to look for.
            k: how many hits at most.
            rerank: also run tier 3 (the LLM re-ranker).
            episodes: attach the episode each fact came from to its hit.
        """
        ranked = self._ranked(query, rerank=rerank)[:k]
        with self._lock:
            graph = self._sync()
            hits = []
            for item in ranked:
                entity = Entity.from_doc(item.entity)
                rels = tuple(
                    self._relation(r)
                    for r in graph.relations_of(entity.id)
                    if r.get("validTo") is None
                )
                obs = Observation.from_doc(item.obs, entity.id) if item.obs is not None else None
                episode = None
                if episodes and obs is not None and obs.episode_id:
                    episode = self.episode(obs.episode_id)
                hits.append(
                    Hit(entity, obs, rels, round(item.score, 6), frozenset(item.signals), episode)
                )
            return hits

    def episode(self, episode_id: str) -> Episode | None:
        """The episode with this id, or ``None``."""
        with self._lock:
            graph = self._sync()
            doc = graph.episodes.get(episode_id)
            if doc is None:
                if self._episode_cache is None or episode_id not in self._episode_cache:
                    self._episode_cache = {e["id"]: e for e in self.store.episodes()}
                doc = self._episode_cache.get(episode_id)
            return Episode.from_doc(doc) if doc is not None else None

    def supporting_episodes(self, hits: Sequence[Hit]) -> list[Episode]:
        """The distinct episodes behind ``hits``, in rank order."""
        seen: dict[str, Episode] = {}
        for hit in hits:
            episode_id = hit.observation.episode_id if hit.observation else None
            if episode_id and episode_id not in seen:
                found = hit.episode or self.episode(episode_id)
                if found is not None:
                    seen[episode_id] = found
        return list(seen.values())

    def entities(self) -> list[Entity]:
        """Every entity with all its observations (current and expired)."""
        with self._lock:
            return [Entity.from_doc(e) for e in self._sync().entities.values()]

    def entity(self, name: str) -> Entity:
        """The entity called ``name`` (normalized match).

        Raises:
            NotFound: no entity has that name.
        """
        with self._lock:
            doc = self._sync().entity_by_name(name)
            if doc is None:
                raise NotFound(f"no entity named {name!r} in scope {self.scope!r}")
            return Entity.from_doc(doc)

    def history(self, entity_name: str) -> EntityHistory:
        """Every observation and relation version of an entity, expired ones included.

        Raises:
            NotFound: no entity has that name.
        """
        with self._lock:
            graph = self._sync()
            doc = graph.entity_by_name(entity_name)
            if doc is None:
                raise NotFound(f"no entity named {entity_name!r} in scope {self.scope!r}")
            entity = Entity.from_doc(doc)
            observations = sorted(entity.observations, key=lambda o: (o.valid_from, o.id))
            relations = sorted(
                (self._relation(r) for r in graph.relations_of(doc["id"])),
                key=lambda r: (r.valid_from, r.id),
            )
            return EntityHistory(entity, tuple(observations), tuple(relations))

    def summary(self) -> dict[str, Any] | None:
        """The stored conversation summary (``summary.json``), if any."""
        with self._lock:
            return self.store.read_summary()

    def save_summary(self, summary: Mapping[str, Any]) -> None:
        """Persist the conversation summary atomically (``summary``,
        ``lastCompactedAt``, ``messagesSummarized`` and any extra fields)."""
        with self._lock:
            self.store.write_summary(dict(summary))

    def stats(self) -> dict[str, int]:
        """Counts of entities, observations (all / current), relations and vectors."""
        with self._lock:
            graph = self._sync()
            current = sum(1 for _ in graph.current_observations())
            return {
                "entities": len(graph.entities),
                "observations": graph.observation_count,
                "current_observations": current,
                "relations": len(graph.relations),
                "vectors": len(self._vectors or ()),
            }

    def iter_episodes(self) -> Iterator[Episode]:
        """Every stored episode, oldest first."""
        with self._lock:
            graph = self._sync()
            docs = {e["id"]: e for e in self.store.episodes()}
            docs.update(graph.episodes)
        for doc in sorted(docs.values(), key=lambda d: (d.get("recordedAt") or "", d["id"])):
            yield Episode.from_doc(doc)

    # ------------------------------------------------------------------ forget
    def forget(self, query: str) -> ChangeSet:
        """Expire the facts ``query`` refers to, as chosen by the model.

        Nothing is erased: the facts get a ``validTo`` and drop out of recall,
        while :meth:`history` still shows them. Use :meth:`purge` to erase.
        """
        if not isinstance(query, str) or not query.strip():
            raise ValueError("forget needs a non-empty query saying what to forget")
        with self._lock:
            graph = self._sync()
            ranked = self._candidates(graph, query, limit=40)
            lines: list[tuple[str, str]] = [(c.id, c.text()) for c in ranked if c.obs]
            for entity_id in dict.fromkeys(c.entity["id"] for c in ranked):
                for rel in graph.relations_of(entity_id):
                    if rel.get("validTo") is None and not any(rel["id"] == i for i, _ in lines):
                        relation = self._relation(rel)
                        text = f"{relation.from_name} {relation.type} → {relation.to_name}"
                        lines.append((rel["id"], text))
        if not lines:
            return ChangeSet()
        answer = ask_json(
            self.provider.chat,
            FORGET_SYSTEM,
            forget_message(query, lines[:60]),
            FORGET_SCHEMA,
            _validate_forget,
        )
        if answer.value is None:
            return ChangeSet(warnings=tuple(answer.problems))
        observations, relations = answer.value
        now = now_iso()
        plan, commit = self._write(
            lambda g: plan_forget(g, observations=observations, relations=relations, now=now)
        )
        return self._change_set(plan, commit, tuple(answer.problems))

    def expire(self, *ids: str) -> ChangeSet:
        """Expire observations, relations or whole entities by id, without the LLM.

        An entity id expires all its current observations and relations.

        Raises:
            NotFound: an id names nothing in this scope.
        """
        with self._lock:
            graph = self._sync()
            for item_id in ids:
                if (
                    item_id not in graph.entities
                    and item_id not in graph.relations
                    and graph.observation(item_id) is None
                ):
                    raise NotFound(f"no entity, observation or relation {item_id!r}")
        now = now_iso()
        plan, commit = self._write(lambda g: plan_forget(g, ids=ids, now=now))
        return self._change_set(plan, commit, ())

    def expire_entity(self, name: str) -> ChangeSet:
        """Expire every current fact and link of the entity called ``name``.

        Raises:
            NotFound: no entity has that name.
        """
        return self.expire(self.entity(name).id)

    # ------------------------------------------------------------------- purge
    def purge(self, containing: str | None = None, *, entity: str | None = None) -> dict[str, int]:
        """Erase data for real (data-protection requests), unlike :meth:`forget`.

        Args:
            containing: erase every observation, episode and entity name that
                contains this text (case-insensitive), and redact it from the
                conversation summary.
            entity: erase this entity with all its observations and relations.

        Returns:
            Counts of what was erased.

        The scope's files are rewritten without the erased data (graph,
        journal, episodes, vectors), so the text is found nowhere under the
        scope's directory afterwards.
        """
        if not containing and not entity:
            raise ValueError("purge needs `containing` text or an `entity` name")
        needle = (containing or "").casefold()
        with self._lock, self._writer():
            graph = self._sync()
            doomed: set[str] = set()
            if entity:
                doc = graph.entity_by_name(entity)
                if doc is None:
                    raise NotFound(f"no entity named {entity!r} in scope {self.scope!r}")
                doomed.add(doc["id"])
            episodes = {e["id"]: e for e in self.store.episodes()}
            episodes.update(graph.episodes)
            if needle:
                doomed |= {
                    e["id"] for e in graph.entities.values() if needle in e["name"].casefold()
                }
                doomed |= {
                    o["id"]
                    for _, o in graph.all_observations()
                    if needle in o["content"].casefold()
                }
                doomed |= {i for i, e in episodes.items() if needle in e["text"].casefold()}
            before = {
                "entities": len(graph.entities),
                "observations": graph.observation_count,
                "relations": len(graph.relations),
                "episodes": len(episodes),
            }
            graph.apply([{"op": "purge", "ids": sorted(doomed)}])
            kept_episodes = [e for i, e in episodes.items() if i not in doomed]
            graph.episodes.clear()
            graph.seq += 1
            index = self._vectors
            kept = VectorIndex(index.model if index else self.embedder_model)
            if index is not None and len(index):
                live = {o["id"] for _, o in graph.all_observations()}
                ids = index.ids()
                rows = [r for r, i in enumerate(ids) if i in live and index.row_of.get(i) == r]
                if rows:
                    kept.add([ids[r] for r in rows], index.rows(0, len(ids))[rows])
            self.store.rewrite(graph.to_document(), kept, kept_episodes)
            if needle:
                summary = self.store.read_summary()
                if summary and needle in orjson.dumps(summary).decode().casefold():
                    self.store.write_summary(_redact(summary, containing or ""))
            self._graph = None
            self._sync()
            return {
                "entities": before["entities"] - len(graph.entities),
                "observations": before["observations"] - graph.observation_count,
                "relations": before["relations"] - len(graph.relations),
                "episodes": before["episodes"] - len(kept_episodes),
            }

    # ------------------------------------------------------------------ export
    def export(self, format: str = "json", *, current_only: bool = False) -> bytes:
        """The scope as JSON (graph + episodes) or GraphML bytes.

        Raises:
            ValueError: ``format`` is not ``"json"`` or ``"graphml"``.
        """
        with self._lock:
            graph = self._sync()
            if format == "json":
                episodes = {e["id"]: e for e in self.store.episodes()}
                episodes.update(graph.episodes)
                return to_json(graph, episodes.values(), scope=self.scope)
            if format == "graphml":
                return to_graphml(graph, current_only=current_only)
        raise ValueError(f"unknown export format {format!r}; use 'json' or 'graphml'")


def _validate_forget(
    document: Mapping[str, Any],
) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    observations = []
    for item in document.get("observations") or []:
        if not isinstance(item, Mapping):
            raise TypeError("each observation must be an object")
        observations.append(
            (
                clean_label(item.get("entityName"), "entityName", 200),
                clean_label(item.get("content"), "content", 2000),
            )
        )
    relations = []
    for item in document.get("relations") or []:
        if not isinstance(item, Mapping):
            raise TypeError("each relation must be an object")
        relations.append(
            (
                clean_label(item.get("from"), "from", 200),
                clean_label(item.get("to"), "to", 200),
                clean_label(item.get("type"), "type", 60),
            )
        )
    return observations, relations


def _redact(value: Any, text: str) -> Any:
    if isinstance(value, str):
        import re

        return re.sub(re.escape(text), "[purged]", value, flags=re.IGNORECASE)
    if isinstance(value, list):
        return [_redact(v, text) for v in value]
    if isinstance(value, dict):
        return {k: _redact(v, text) for k, v in value.items()}
    return value
