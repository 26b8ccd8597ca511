"""Forgetting: soft (``forget``, ``expire``) and hard (``purge``); export."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np
import orjson

from memgraph.clock import now_iso
from memgraph.engine.core import MemoryCore
from memgraph.errors import NotFound
from memgraph.graph.changes import plan_forget
from memgraph.graph.export import to_graphml, to_json
from memgraph.graph.graph import Graph
from memgraph.llm_calls.ask import Answer, Exchange, json_exchange, run_exchange
from memgraph.llm_calls.extract import clean_label
from memgraph.llm_calls.prompts import FORGET_SCHEMA, FORGET_SYSTEM, forget_message
from memgraph.models import (
    ChangeSet,
)
from memgraph.retrieval import ranking as tiers
from memgraph.retrieval.vectors import VectorIndex

__all__ = ["ForgetMixin"]

log = logging.getLogger("memgraph")


class ForgetMixin(MemoryCore):
    """Forgetting: soft (``forget``, ``expire``) and hard (``purge``); export."""

    def forget(self, query: str) -> ChangeSet:
        """Expire the facts ``query`` refers to, as chosen by the model.

        Nothing is erased: the facts get a ``validTo`` and drop out of recall,
        while :meth:`history` still shows them. Use :meth:`purge` to erase.
        """
        lines = self._forget_lines(query)
        if not lines:
            return ChangeSet()
        return self._forgotten(run_exchange(self.provider.chat, forget_exchange(query, lines)))

    # The phases of forget, also run one by one by AsyncMemory, which awaits the model.
    def _forget_lines(self, query: str) -> list[tuple[str, str]]:
        """The current facts and links ``query`` may mean, as ``(id, text)`` for the model."""
        if not isinstance(query, str) or not query.strip():
            raise ValueError("forget needs a non-empty query saying what to forget")
        with self._lock:
            graph = self._sync()
            ranked = self._candidates(graph, self._names_written_out(graph, query), limit=40)
            ranked += self._facts_of_episodes(graph, ranked)
            lines: list[tuple[str, str]] = list(
                dict.fromkeys((c.id, c.text()) for c in ranked if c.obs)
            )
            entities = (c.entity["id"] for c in ranked if c.entity is not None and c.obs)
            for entity_id in dict.fromkeys(entities):
                for rel in graph.relations_of(entity_id):
                    if rel.get("validTo") is None and not any(rel["id"] == i for i, _ in lines):
                        relation = self._relation(rel)
                        text = f"{relation.from_name} {relation.type} → {relation.to_name}"
                        lines.append((rel["id"], text))
        return lines

    def _forgotten(self, answer: Answer[Chosen]) -> ChangeSet:
        """Expire what the model chose (nothing when its reply was unusable)."""
        if answer.value is None:
            return ChangeSet(warnings=tuple(answer.problems))
        observations, relations = answer.value
        now = now_iso()
        plan, commit = self._write(
            lambda g: plan_forget(g, observations=observations, relations=relations, now=now)
        )
        return self._change_set(plan, commit, tuple(answer.problems))

    def _facts_of_episodes(
        self, graph: Graph, ranked: list[tiers.Candidate]
    ) -> list[tiers.Candidate]:
        """The current facts stated by the remembered texts among ``ranked``: a request
        may quote the words that were said rather than the fact drawn from them."""
        index = self._episodes_indexed()
        found: list[tiers.Candidate] = []
        for item in ranked:
            if item.episode is None:
                continue
            for number in index.facts_of(item.episode) or ():
                pair = graph.observation(f"obs-{number}")
                if pair is not None and pair[1].get("validTo") is None:
                    found.append(tiers.Candidate(pair[0], pair[1], {}, item.score))
        return found

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
        doc = self._read_graph(lambda graph: graph.entity_by_name(name))
        if doc is None:
            raise NotFound(f"no entity named {name!r} in scope {self.scope!r}")
        return self.expire(doc["id"])

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
            try:
                graph.apply([{"op": "purge", "ids": sorted(doomed)}])
                kept_episodes = [e for i, e in episodes.items() if i not in doomed]
                graph.episodes.clear()
                graph.seq += 1
                index = self._vectors
                kept = VectorIndex(index.model if index else self.embedder_model)
                if index is not None and len(index):
                    # The vectors of the facts and of the remembered texts that stay.
                    live = {o["id"] for _, o in graph.all_observations()}
                    live.update(e["id"] for e in kept_episodes)
                    rows = np.sort(index.rows_of(list(live)))
                    rows = rows[rows >= 0]
                    if len(rows):
                        ids = index.ids()
                        kept.add([ids[r] for r in rows.tolist()], index.rows(0, len(ids))[rows])
                self.store.rewrite(graph.to_document(), kept, kept_episodes)
                if needle:
                    summary = self.store.read_summary()
                    if summary and needle in orjson.dumps(summary).decode().casefold():
                        self.store.write_summary(_redact(summary, containing or ""))
            finally:
                # The graph was purged in memory first; whatever reached the store,
                # reload it from there (a failed purge must not be served).
                self._graph = None
            self._sync()
            return {
                "entities": before["entities"] - len(graph.entities),
                "observations": before["observations"] - graph.observation_count,
                "relations": before["relations"] - len(graph.relations),
                "episodes": before["episodes"] - len(kept_episodes),
            }

    def export(self, format: str = "json", *, current_only: bool = False) -> bytes:
        """The scope as JSON (graph + episodes) or GraphML bytes.

        ``current_only`` leaves out expired facts and links.

        Raises:
            ValueError: ``format`` is not ``"json"`` or ``"graphml"``.
        """
        with self._lock:
            graph = self._sync()
            if format == "json":
                episodes = {e["id"]: e for e in self.store.episodes()}
                episodes.update(graph.episodes)
                return to_json(
                    graph, episodes.values(), scope=self.scope, current_only=current_only
                )
            if format == "graphml":
                return to_graphml(graph, current_only=current_only)
        raise ValueError(f"unknown export format {format!r}; use 'json' or 'graphml'")


Chosen = tuple[list[tuple[str, str]], list[tuple[str, str, str]]]
"""The facts (entity, content) and links (from, to, type) a forget reply names."""


def forget_exchange(query: str, lines: list[tuple[str, str]]) -> Exchange[Answer[Chosen]]:
    """The model call of :meth:`ForgetMixin.forget`: which of ``lines`` ``query`` means."""
    return json_exchange(
        FORGET_SYSTEM, forget_message(query, lines[:60]), FORGET_SCHEMA, _validate_forget
    )


def _validate_forget(document: Mapping[str, Any]) -> Chosen:
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
