"""Reading memory: recall, search, entities, history, episodes."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from memgraph.engine.core import MemoryCore
from memgraph.errors import NotFound
from memgraph.faces.namespaces import read_namespace
from memgraph.models import (
    Entity,
    EntityHistory,
    Episode,
    Hit,
    Observation,
)
from memgraph.retrieval import ranking as tiers

__all__ = ["ReadMixin"]

log = logging.getLogger("memgraph")


class ReadMixin(MemoryCore):
    """Reading memory: recall, search, entities, history, episodes."""

    def _ranked(
        self, query: str, *, rerank: bool, lens: tiers.Lens = tiers.CURRENT
    ) -> list[tiers.Candidate]:
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        with self._lock:
            graph = self._sync()
            if not query.strip() or not graph.entities:
                return []
            ranked = self._candidates(graph, query, lens=lens)
            if not rerank:
                return ranked
            small = len(graph.entities) <= 50
            pool = ranked or (tiers.every_entity(graph, lens) if small else [])
        if not pool:
            return []
        kept = tiers.rerank(self.provider.chat, query, pool)
        return ranked if kept is None else kept

    def recall(self, query: str, *, rerank: bool = True, from_: str | None = None) -> str:
        """The facts relevant to ``query``, grouped by entity, as text ("" when none).

        Uses all three tiers; ``rerank=False`` skips the LLM (the variant that
        context injection uses). The text is capped by ``recall.tokenBudget``.

        Args:
            query: what to recall.
            rerank: run tier 3 (the LLM keeps the relevant candidates).
            from_: read one source namespace (``"*"`` for all); inside
                ``with agent(...)`` the default is the agent's own entries.
        """
        return self._recall_text(
            query, rerank=rerank, lens=tiers.Lens(source=read_namespace(from_))
        )

    def _recall_text(self, query: str, *, rerank: bool, lens: tiers.Lens) -> str:
        ranked = self._ranked(query, rerank=rerank, lens=lens)
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
                lens=lens,
            )

    def search(
        self,
        query: str,
        *,
        k: int = 10,
        rerank: bool = False,
        episodes: bool = False,
        from_: str | None = None,
    ) -> list[Hit]:
        """Ranked observation-level hits for ``query``, best first.

        Args:
            query: what to look for.
            k: how many hits at most.
            rerank: also run tier 3 (the LLM re-ranker).
            episodes: attach the episode each fact came from to its hit.
            from_: read one source namespace (see :meth:`recall`).

        Raises:
            ValueError: ``k`` is not a positive integer.
        """
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive integer (how many hits at most), got {k!r}")
        lens = tiers.Lens(source=read_namespace(from_))
        return self._hits(self._ranked(query, rerank=rerank, lens=lens)[:k], episodes, lens)

    def _hits(self, ranked: list[tiers.Candidate], episodes: bool, lens: tiers.Lens) -> list[Hit]:
        with self._lock:
            graph = self._sync()
            hits = []
            for item in ranked:
                model = self._entity_model(graph, item.entity)
                entity = model.entity
                if lens == tiers.CURRENT:
                    rels = model.current_relations
                else:
                    rels = tuple(rel for doc, rel in model.relations if lens.visible(doc))
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
        ``lastCompactedAt``, ``messagesSummarized`` and any extra fields).

        Takes the scope's lock like every write, so a purge redacting the summary
        in another process cannot overwrite it with an older one.
        """
        with self._lock, self._writer():
            self.store.write_summary(dict(summary))

    def stats(self) -> dict[str, int]:
        """Counts of entities, observations (all / current), relations and vectors."""
        with self._lock:
            graph = self._sync()
            current = len(graph.current_observation_ids())
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
