"""The typed, read-only values memgraph hands to callers.

Inside the engine the graph is kept as plain dictionaries in the on-disk
(Agency ``graph.json``) shape, which makes loading and checkpointing cheap.
These frozen dataclasses are what the public API returns; build them with the
``from_doc`` constructors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = [
    "ChangeSet",
    "Entity",
    "EntityHistory",
    "Episode",
    "Hit",
    "Item",
    "Observation",
    "Relation",
]


@dataclass(frozen=True)
class Observation:
    """One fact about an entity, valid from ``valid_from`` until ``valid_to``.

    ``valid_from``/``valid_to`` are world time (when the fact was true);
    ``recorded_at``/``retired_at`` are when memgraph stored and retired it.
    ``valid_to is None`` means the fact is current.
    """

    id: str
    entity_id: str
    content: str
    valid_from: str
    valid_to: str | None = None
    recorded_at: str | None = None
    retired_at: str | None = None
    episode_id: str | None = None
    source: str | None = None
    superseded_by: str | None = None
    category: str | None = None
    tags: tuple[str, ...] = ()

    @property
    def current(self) -> bool:
        """True while the fact has not been expired."""
        return self.valid_to is None

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any], entity_id: str) -> Observation:
        return cls(
            id=doc["id"],
            entity_id=entity_id,
            content=doc["content"],
            valid_from=doc.get("validFrom") or "",
            valid_to=doc.get("validTo"),
            recorded_at=doc.get("recordedAt"),
            retired_at=doc.get("retiredAt"),
            episode_id=doc.get("episode"),
            source=doc.get("source"),
            superseded_by=doc.get("supersededBy"),
            category=doc.get("category"),
            tags=tuple(doc.get("tags") or ()),
        )


@dataclass(frozen=True)
class Entity:
    """A person, place, organisation, project or thing the memory knows about."""

    id: str
    name: str
    type: str
    source: str | None
    created_at: str
    observations: tuple[Observation, ...] = ()

    @property
    def current_observations(self) -> tuple[Observation, ...]:
        return tuple(o for o in self.observations if o.current)

    @classmethod
    def from_doc(
        cls, doc: Mapping[str, Any], *, observations: tuple[Observation, ...] | None = None
    ) -> Entity:
        """The entity of a stored record; ``observations``: its facts when already made."""
        if observations is None:
            observations = tuple(Observation.from_doc(o, doc["id"]) for o in doc["observations"])
        return cls(
            id=doc["id"],
            name=doc["name"],
            type=doc.get("type") or "thing",
            source=doc.get("source"),
            created_at=doc.get("createdAt") or "",
            observations=observations,
        )


@dataclass(frozen=True)
class Relation:
    """A typed link ``source_entity --type--> target_entity``."""

    id: str
    from_id: str
    to_id: str
    from_name: str
    to_name: str
    type: str
    source: str | None
    valid_from: str
    valid_to: str | None = None
    recorded_at: str | None = None
    retired_at: str | None = None
    episode_id: str | None = None

    @property
    def current(self) -> bool:
        return self.valid_to is None

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any], from_name: str, to_name: str) -> Relation:
        return cls(
            id=doc["id"],
            from_id=doc["from"],
            to_id=doc["to"],
            from_name=from_name,
            to_name=to_name,
            type=doc["type"],
            source=doc.get("source"),
            valid_from=doc.get("validFrom") or "",
            valid_to=doc.get("validTo"),
            recorded_at=doc.get("recordedAt"),
            retired_at=doc.get("retiredAt"),
            episode_id=doc.get("episode"),
        )


@dataclass(frozen=True)
class Episode:
    """The raw text of one ``remember`` call: where facts came from.

    ``speaker`` is who said it (a person's name, ``"assistant"``), when known.
    """

    id: str
    text: str
    at: str
    recorded_at: str
    source: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    speaker: str | None = None
    extracted: bool = True
    """False while the model's reply for this text was unusable (``reextract`` retries)."""

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> Episode:
        return cls(
            id=doc["id"],
            text=doc["text"],
            at=doc["at"],
            recorded_at=doc.get("recordedAt") or doc["at"],
            source=doc.get("source"),
            metadata=dict(doc.get("metadata") or {}),
            speaker=doc.get("speaker"),
            extracted=not doc.get("unextracted", False),
        )


@dataclass(frozen=True)
class Hit:
    """One ranked search result: a fact, a remembered text, or a whole entity, and why
    it matched.

    Attributes:
        entity: the entity the fact belongs to; for an episode hit, its
            speaker's entity (``None`` when the speaker is not an entity).
        observation: the matching fact; ``None`` for an episode or entity hit.
        relations: the entity's current relations.
        score: the fused relevance score in [0, 1].
        tiers: which tiers matched (``"name"``, ``"type"``, ``"content"``,
            ``"semantic"``, ``"rerank"``).
        episode: for a fact hit, the episode it came from (when requested);
            for an episode hit, the remembered text itself.
    """

    entity: Entity | None
    observation: Observation | None
    relations: tuple[Relation, ...]
    score: float
    tiers: frozenset[str]
    episode: Episode | None = None

    @property
    def kind(self) -> str:
        """``"fact"``, ``"episode"`` (a remembered text) or ``"entity"``."""
        if self.observation is not None:
            return "fact"
        return "episode" if self.episode is not None else "entity"


@dataclass(frozen=True)
class Item:
    """One text for :meth:`memgraph.Memory.remember_many`, with its own circumstances.

    Attributes:
        text: what was said or written.
        at: when (world time); defaults to the call's ``at``, then now.
        speaker: who said it (a person's name, ``"assistant"``); kept on the episode.
        source: where it came from (an agent, a channel); defaults to the call's.
        metadata: a JSON-serializable dict stored with the episode.
        extract: ask the model for facts (``False`` keeps the text as an episode
            only, with no model call: context). By default every text is
            extracted but an ``"assistant"`` speaker's: its own words make no
            facts about anyone.
    """

    text: str
    at: str | datetime | None = None
    speaker: str | None = None
    source: str | None = None
    metadata: Mapping[str, Any] | None = None
    extract: bool | None = None


@dataclass(frozen=True)
class ChangeSet:
    """What one write changed. Empty when nothing was learned."""

    episode: Episode | None = None
    added_entities: tuple[Entity, ...] = ()
    added_observations: tuple[Observation, ...] = ()
    added_relations: tuple[Relation, ...] = ()
    expired_observations: tuple[Observation, ...] = ()
    expired_relations: tuple[Relation, ...] = ()
    warnings: tuple[str, ...] = ()
    unusable_reply: str | None = None
    """Why the model's reply could not be used; the text was stored unextracted."""

    def __bool__(self) -> bool:
        return bool(
            self.added_entities
            or self.added_observations
            or self.added_relations
            or self.expired_observations
            or self.expired_relations
        )

    @classmethod
    def combined(cls, changes: Sequence[ChangeSet]) -> ChangeSet:
        """One change set for several writes (a transcript's turns): everything they
        changed, in order; the last episode; the first unusable reply."""
        if len(changes) == 1:
            return changes[0]
        return cls(
            episode=next((c.episode for c in reversed(changes) if c.episode), None),
            added_entities=tuple(e for c in changes for e in c.added_entities),
            added_observations=tuple(o for c in changes for o in c.added_observations),
            added_relations=tuple(r for c in changes for r in c.added_relations),
            expired_observations=tuple(o for c in changes for o in c.expired_observations),
            expired_relations=tuple(r for c in changes for r in c.expired_relations),
            warnings=tuple(w for c in changes for w in c.warnings),
            unusable_reply=next((c.unusable_reply for c in changes if c.unusable_reply), None),
        )


@dataclass(frozen=True)
class EntityHistory:
    """Every version of an entity's facts and links, current and expired, oldest first."""

    entity: Entity
    observations: tuple[Observation, ...]
    relations: tuple[Relation, ...]
