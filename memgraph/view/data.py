"""The data a graph view shows, read from a :class:`~memgraph.Memory` through its public API.

:func:`build_payload` returns one JSON-ready dict. Records are positional
arrays rather than objects, which keeps a 5,000-entity page about half the
size; the page's script (``assets/view.js``) is the only reader:

* ``entities``: ``[name, type index, source index, createdAt]``
* ``facts``: ``[entity index, content, validFrom, validTo | null, source index,
  episode index | -1]``, grouped by entity, oldest first
* ``relations``: ``[from index, to index, type, validFrom, validTo | null,
  source index, episode index | -1]``
* ``episodes``: ``[id, text, at, source index]`` (the texts facts came from)
* ``types`` and ``sources``: the names the indexes point into, most frequent first

Every fact and relation is included, expired ones too, so the page can show
the graph as of any moment with ``as_of``'s rule (``validFrom <= t < validTo``).
Beyond ``max_entities`` entities the most connected ones are kept, and the
payload says how many there were.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from memgraph.models import Entity, EntityHistory, Episode, Relation

__all__ = ["FORMAT", "MAX_ENTITIES", "MAX_EPISODE_CHARS", "ViewSource", "build_payload"]

FORMAT = 1
MAX_ENTITIES = 5_000  # beyond this the page keeps the most connected entities
MAX_EPISODE_CHARS = 2_000  # a provenance text is shortened past this (a text may be 100k)
DEFAULT_SOURCE = "main"  # what an unattributed write counts as (the top-level namespace)


class ViewSource(Protocol):
    """What the view reads: the part of :class:`~memgraph.Memory`'s public API it uses."""

    @property
    def scope(self) -> str: ...

    def entities(self) -> list[Entity]: ...

    def history(self, entity_name: str) -> EntityHistory: ...

    def iter_episodes(self) -> Iterator[Episode]: ...


class _Index:
    """Names to small integers, first seen first; reordered by frequency at the end."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.ids: dict[str, int] = {}

    def __call__(self, name: str | None) -> int:
        key = name or DEFAULT_SOURCE
        self.counts[key] += 1
        found = self.ids.get(key)
        if found is None:
            found = self.ids[key] = len(self.ids)
        return found

    def ordered(self) -> tuple[list[str], list[int]]:
        """The names most frequent first, and the map from old index to new."""
        names = sorted(self.ids, key=lambda name: (-self.counts[name], name))
        position = {name: n for n, name in enumerate(names)}
        remap = [0] * len(self.ids)
        for name, old in self.ids.items():
            remap[old] = position[name]
        return names, remap


def _relations(memory: ViewSource, entities: Iterable[Entity]) -> list[Relation]:
    """Every relation version (current and expired) touching ``entities``, once each.

    ``history`` looks an entity up by name; a relation is read from both of its
    ends, so it is missed only if both ends share their names with other
    entities (which ``remember`` never creates: it resolves names).
    """
    found: dict[str, Relation] = {}
    for entity in entities:
        for relation in memory.history(entity.name).relations:
            found.setdefault(relation.id, relation)
    return sorted(found.values(), key=lambda r: (r.valid_from, r.id))


def _keep(entities: list[Entity], relations: list[Relation], limit: int) -> list[Entity]:
    """The ``limit`` most connected entities (links, then facts, then the newest)."""
    degree: Counter[str] = Counter()
    for relation in relations:
        degree[relation.from_id] += 1
        degree[relation.to_id] += 1
    ranked = sorted(
        entities,
        key=lambda e: (degree[e.id], len(e.observations), e.created_at, e.id),
        reverse=True,
    )
    return ranked[:limit]


def _episode_text(episode: Episode) -> str:
    text = episode.text
    return text if len(text) <= MAX_EPISODE_CHARS else text[:MAX_EPISODE_CHARS] + "…"


def build_payload(
    memory: ViewSource, *, max_entities: int = MAX_ENTITIES, generated_at: str | None = None
) -> dict[str, Any]:
    """The view's data for ``memory``'s scope (see the module docstring for its shape).

    Args:
        memory: an open :class:`~memgraph.Memory` (or anything with its reads).
        max_entities: entities shown at most; beyond it the most connected are kept.
        generated_at: the time stamped on the page (default: left out).

    Raises:
        ValueError: ``max_entities`` is less than 1.
    """
    if max_entities < 1:
        raise ValueError(f"max_entities must be at least 1, got {max_entities!r}")
    everything = memory.entities()
    relations = _relations(memory, everything)
    total = {"entities": len(everything), "relations": len(relations)}
    kept = everything
    if len(everything) > max_entities:
        kept = _keep(everything, relations, max_entities)
    chosen = {entity.id for entity in kept}  # (and a link to a lost entity has no end to draw)
    relations = [r for r in relations if r.from_id in chosen and r.to_id in chosen]
    kept = sorted(kept, key=lambda e: (e.created_at, e.id))
    position = {entity.id: n for n, entity in enumerate(kept)}

    types, sources = _Index(), _Index()
    episode_ids: dict[str, int] = {}

    def episode_of(episode_id: str | None) -> int:
        return episode_ids.setdefault(episode_id, len(episode_ids)) if episode_id else -1

    entity_rows: list[list[Any]] = []
    fact_rows: list[list[Any]] = []
    for n, entity in enumerate(kept):
        entity_rows.append(
            [entity.name, types(entity.type), sources(entity.source), entity.created_at]
        )
        for obs in sorted(entity.observations, key=lambda o: (o.valid_from, o.id)):
            fact_rows.append(
                [
                    n,
                    obs.content,
                    obs.valid_from,
                    obs.valid_to,
                    sources(obs.source),
                    episode_of(obs.episode_id),
                ]
            )
    relation_rows: list[list[Any]] = []
    for relation in relations:
        relation_rows.append(
            [
                position[relation.from_id],
                position[relation.to_id],
                relation.type,
                relation.valid_from,
                relation.valid_to,
                sources(relation.source),
                episode_of(relation.episode_id),
            ]
        )

    # An episode that was purged (or never stored) keeps its id and no text:
    # the page says the text is gone.
    episode_rows: list[list[Any]] = [[key, None, None, -1] for key in episode_ids]
    shortened = 0
    if episode_ids:
        for episode in memory.iter_episodes():
            slot = episode_ids.get(episode.id)
            if slot is not None:
                text = _episode_text(episode)
                shortened += text is not episode.text
                episode_rows[slot] = [episode.id, text, episode.at, sources(episode.source)]

    type_names, type_map = types.ordered()
    source_names, source_map = sources.ordered()
    for row in entity_rows:
        row[1], row[2] = type_map[row[1]], source_map[row[2]]
    for row in fact_rows:
        row[4] = source_map[row[4]]
    for row in relation_rows:
        row[5] = source_map[row[5]]
    for row in episode_rows:
        if row[3] >= 0:
            row[3] = source_map[row[3]]

    payload: dict[str, Any] = {
        "format": FORMAT,
        "scope": memory.scope,
        "total": total,
        "maxEntities": max_entities,
        "maxEpisodeChars": MAX_EPISODE_CHARS,
        "shortenedEpisodes": shortened,
        "types": type_names,
        "sources": source_names,
        "entities": entity_rows,
        "facts": fact_rows,
        "relations": relation_rows,
        "episodes": episode_rows,
    }
    if generated_at is not None:
        payload["generatedAt"] = generated_at
    return payload
