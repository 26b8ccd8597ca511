"""Building a scope of N observations: through the public API, or seeded at the store level.

* ``api``: ``Memory.remember_many`` in batches (or a loop of ``remember`` when
  the engine has no bulk path). This is the real import path; its throughput
  is the bulk-import number.
* ``seed``: the same graph built without the engine's write path: the
  workload's replies become the journal's op records (exactly the ops the
  planner emits for them, which :mod:`bench.workload` guarantees), applied to
  the engine's own :class:`~memgraph.graph.graph.Graph`, embedded in large batches,
  and written with the store's own ``rewrite`` (the hard-delete path, which
  replaces a scope with a given state). The result is a freshly checkpointed
  scope, as a long series of ``remember`` calls followed by ``checkpoint``
  would leave. It costs seconds at 100k regardless of how fast the engine's
  write path is, so the suite's run time stays bounded.

``auto`` uses ``api`` up to :data:`API_AUTO_LIMIT` observations, ``seed``
above. ``verify_seed`` checks (in ``--quick``) that both give the same counts.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

from bench.scripted import BenchChat, BenchEmbedder, ProviderClock
from bench.workload import Item, Workload
from memgraph import Memory
from memgraph.clock import iso
from memgraph.engine.core import EPISODE_INDEX, index_episode
from memgraph.graph.changes import episode_embedding_text
from memgraph.graph.graph import Doc, Graph
from memgraph.retrieval.episode_index import EpisodeIndex
from memgraph.retrieval.vectors import VectorIndex
from memgraph.store.directory import DirectoryStore
from memgraph.text import name_key

__all__ = ["API_AUTO_LIMIT", "BuildInfo", "api_import", "build_scope", "open_memory", "seed_scope"]

API_AUTO_LIMIT = 1_000
BATCH = 500
EMBED_CHUNK = 4096
_EPOCH = datetime(2025, 1, 1, tzinfo=timezone.utc)


@dataclass
class BuildInfo:
    method: str
    texts: int
    observations: int
    seconds: float
    provider_seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "texts": self.texts,
            "observations": self.observations,
            "seconds": round(self.seconds, 3),
            "provider_seconds": round(self.provider_seconds, 3),
        }


def open_memory(root: Path, scope: str, provider: Any) -> Memory:
    """A ``Memory`` on the files store with default settings (no agency.json, no env)."""
    return Memory(root, scope=scope, provider=provider, config={}, store="files")


def api_import(
    memory: Memory, chat: BenchChat, clock: ProviderClock, items: list[Item], batch: int = BATCH
) -> tuple[float, float]:
    """Remember ``items`` through the public API; returns (wall s, provider s)."""
    chat.script(items)
    bulk = getattr(memory, "remember_many", None)
    before = clock.seconds
    started = time.perf_counter()
    if bulk is not None:
        for start in range(0, len(items), batch):
            bulk([item.text for item in items[start : start + batch]])
    else:
        for item in items:
            memory.remember(item.text)
    wall = time.perf_counter() - started
    chat.forget_script()
    return wall, clock.seconds - before


def _ops_for(item: Item, graph: Graph, state: dict[str, Any], at: str) -> list[Doc]:
    """The ops ``plan_extraction`` emits for ``item`` (ids from one counter, same order)."""

    def take(prefix: str) -> str:
        value = f"{prefix}-{state['next']}"
        state["next"] += 1
        return value

    ops: list[Doc] = []
    episode = take("episode")
    ops.append(
        {
            "op": "episode",
            "episode": {
                "text": item.text,
                "at": at,
                "recordedAt": at,
                "source": "main",
                "id": episode,
            },
        }
    )
    new: dict[str, Doc] = {}
    stated: list[str] = []

    def entity(name: str, type_: str) -> Doc:
        found = graph.entity_by_name(name) or new.get(name_key(name))
        if found is not None:
            return found
        doc = {
            "id": take("entity"),
            "name": name,
            "type": type_ or "thing",
            "source": "main",
            "createdAt": at,
        }
        new[name_key(name)] = doc
        ops.append({"op": "entity", "entity": doc})
        return doc

    for item_entity in item.reply["entities"]:
        doc = entity(item_entity["name"], item_entity["type"].lower())
        for content in item_entity["observations"]:
            obs = {
                "id": take("obs"),
                "content": content,
                "validFrom": at,
                "validTo": None,
                "recordedAt": at,
                "episode": episode,
                "source": "main",
            }
            ops.append({"op": "obs", "entity": doc["id"], "obs": obs})
            state["embed"].append((obs["id"], f"{doc['name']} ({doc['type']}): {content}"))
            stated.append(obs["id"])
    for rel in item.reply["relations"]:
        start, end = entity(rel["from"], "thing"), entity(rel["to"], "thing")
        key = (start["id"], name_key(rel["type"]), end["id"])
        if key in state["rel_keys"] or graph.current_relation(*key) is not None:
            continue
        state["rel_keys"].add(key)
        ops.append(
            {
                "op": "rel",
                "rel": {
                    "id": take("rel"),
                    "from": start["id"],
                    "to": end["id"],
                    "type": rel["type"],
                    "source": "main",
                    "validFrom": at,
                    "validTo": None,
                    "recordedAt": at,
                    "episode": episode,
                },
            }
        )
        stated.append(ops[-1]["rel"]["id"])
    record = ops[0]["episode"]
    record["facts"] = stated  # as plan_extraction records them
    state["embed"].append((episode, episode_embedding_text(record)))
    return ops


def seed_scope(root: Path, scope: str, items: Iterable[Item], embedder: BenchEmbedder) -> BuildInfo:
    """Write a checkpointed scope holding ``items`` with the store's own ``rewrite``."""
    started = time.perf_counter()
    graph = Graph()
    state: dict[str, Any] = {"next": 1, "embed": [], "rel_keys": set()}
    episodes: list[Doc] = []
    texts = 0
    for n, item in enumerate(items):
        at = iso(_EPOCH + timedelta(seconds=n))
        state["rel_keys"] = set()
        ops = _ops_for(item, graph, state, at)
        graph.apply(ops)
        episodes.append(ops[0]["episode"])
        texts += 1
    graph.episodes.clear()
    graph.next_id = state["next"]
    graph.seq = 1
    pairs: list[tuple[str, str]] = state["embed"]
    index = VectorIndex(embedder.model)
    before = embedder.clock.seconds
    for start in range(0, len(pairs), EMBED_CHUNK * 16):
        chunk = pairs[start : start + EMBED_CHUNK * 16]
        rows = np.concatenate(
            [
                embedder.embed([text for _, text in chunk[i : i + EMBED_CHUNK]])
                for i in range(0, len(chunk), EMBED_CHUNK)
            ]
        )
        index.add([obs_id for obs_id, _ in chunk], rows)
    provider = embedder.clock.seconds - before
    store = DirectoryStore(root, scope)
    try:
        with store.lock(10.0):
            store.rewrite(graph.to_document(), index, episodes)
            # the episode index a writer keeps at its checkpoints
            texts_index = EpisodeIndex()
            stored, mark = store.episodes_after(0)
            for location, doc in stored:
                index_episode(texts_index, doc, location)
            texts_index.mark = mark
            store.write_derived(EPISODE_INDEX, texts_index.encode())
    finally:
        store.close()
    observations = graph.observation_count
    del graph, index, episodes, pairs
    gc.collect()
    return BuildInfo("seed", texts, observations, time.perf_counter() - started, provider)


def build_scope(
    root: Path,
    scope: str,
    workload: Workload,
    observations: int,
    dim: int,
    method: str = "auto",
) -> BuildInfo:
    """Fill a fresh scope with the workload's first items up to ``observations``."""
    if method == "auto":
        method = "api" if observations <= API_AUTO_LIMIT else "seed"
    from bench.scripted import bench_provider  # local: keep the module import light

    provider, chat, embedder, clock = bench_provider(dim)
    items = list(workload.until(observations))
    if method == "seed":
        return seed_scope(root, scope, items, embedder)
    if method != "api":
        raise ValueError(f"unknown build method {method!r}; use auto, api or seed")
    with open_memory(root, scope, provider) as memory:
        wall, provider_s = api_import(memory, chat, clock, items)
        memory.checkpoint()
        count = memory.stats()["observations"]
    name = "api:remember_many" if hasattr(Memory, "remember_many") else "api:remember-loop"
    return BuildInfo(name, len(items), count, wall, provider_s)
