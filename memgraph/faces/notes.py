"""Categorized, tagged notes and the filter API over them.

A note is an observation stored verbatim (no LLM) with a ``category`` from a
fixed set and free-form ``tags``. Extracted facts can carry a category and
tags too (``remember(text, category=..., tags=...)``).

A note about nothing in particular belongs to one entity per scope,
:data:`NOTES_ENTITY` (type :data:`NOTES_TYPE`); who wrote it (``main`` or an
agent's name) is its ``source``, never an entity of its own. Noting what is
already noted (the same text, category, tags and source, still current) stores
nothing and returns the existing note, so a program that runs twice does not
duplicate its notes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memgraph.graph.graph import Doc, Graph
from memgraph.text import content_key

__all__ = [
    "CATEGORIES",
    "NOTES_ENTITY",
    "NOTES_TYPE",
    "Note",
    "existing_note",
    "note_fields",
    "select_notes",
    "validate_category",
    "validate_tags",
]

CATEGORIES = ("preference", "rule", "learning", "decision", "context")
"""The fixed set of note categories."""

NOTES_ENTITY = "Notes"
"""The entity that holds the notes given no ``about=`` entity."""

NOTES_TYPE = "notes"
"""The type of :data:`NOTES_ENTITY`."""


@dataclass(frozen=True)
class Note:
    """A categorized observation, as returned by :meth:`memgraph.Memory.notes`."""

    id: str
    content: str
    category: str | None
    tags: tuple[str, ...]
    source: str | None
    entity: str
    recorded_at: str
    valid_from: str


def validate_category(category: object) -> str:
    """Return ``category`` if it is one of :data:`CATEGORIES`.

    Raises:
        ValueError: naming the allowed categories.
    """
    if category not in CATEGORIES:
        allowed = ", ".join(CATEGORIES)
        raise ValueError(f"unknown category {category!r}; use one of: {allowed}")
    return str(category)


def validate_tags(tags: Iterable[str] | str | None) -> tuple[str, ...]:
    """Tags as a tuple of non-empty strings (a single string is one tag).

    Raises:
        TypeError: a tag is not a string.
    """
    if tags is None:
        return ()
    if isinstance(tags, str):
        tags = [tags]
    result = []
    for tag in tags:
        if not isinstance(tag, str):
            raise TypeError(f"tags must be strings, got {type(tag).__name__} {tag!r}")
        if tag.strip():
            result.append(tag.strip())
    return tuple(dict.fromkeys(result))


def note_fields(category: str | None, tags: Iterable[str] | str | None) -> dict[str, object]:
    """The extra observation fields for a category and tags (validated).

    Raises:
        ValueError: an unknown category.
        TypeError: a tag is not a string.
    """
    fields: dict[str, object] = {}
    if category is not None:
        fields["category"] = validate_category(category)
    clean = validate_tags(tags)
    if clean:
        fields["tags"] = list(clean)
    return fields


def existing_note(
    graph: Graph, entity_id: str, content: str, fields: dict[str, object], source: str
) -> str | None:
    """The id of the current note of ``entity_id`` that says ``content`` with the
    same category, tags and source, if there is one."""
    key = content_key(content)
    if key not in graph.facts_of(entity_id).keys:  # no current fact says it: the usual case
        return None
    tags = set(fields.get("tags") or ())  # type: ignore[call-overload]
    for obs in reversed(graph.entities[entity_id]["observations"]):
        if (
            obs.get("validTo") is None
            and obs.get("source") == source
            and obs.get("category") == fields.get("category")
            and set(obs.get("tags") or ()) == tags
            and content_key(obs["content"]) == key
        ):
            return str(obs["id"])
    return None


def select_notes(
    graph: Graph,
    *,
    category: str | None = None,
    tags: Sequence[str] = (),
    mode: str = "any",
    search: str | None = None,
    limit: int = 200,
    source: str | None = None,
) -> list[Note]:
    """Current notes matching every given filter, newest first.

    Raises:
        ValueError: an unknown category or mode.
    """
    if category is not None:
        validate_category(category)
    if mode not in ("any", "all"):
        raise ValueError(f"mode must be 'any' or 'all', got {mode!r}")
    wanted = set(tags)
    needle = search.casefold() if search else None
    found: list[tuple[Doc, Doc]] = []
    for obs_id in reversed(graph.noted):
        pair = graph.observation(obs_id)
        if pair is None:
            continue
        entity, obs = pair
        if obs.get("validTo") is not None:
            continue
        if category is not None and obs.get("category") != category:
            continue
        if source is not None and obs.get("source") != source:
            continue
        have = set(obs.get("tags") or ())
        if wanted and (not wanted & have if mode == "any" else not wanted <= have):
            continue
        if needle is not None and needle not in obs["content"].casefold():
            continue
        found.append((entity, obs))
    found.sort(key=lambda pair: (pair[1].get("recordedAt") or "", _number(pair[1])), reverse=True)
    return [
        Note(
            id=obs["id"],
            content=obs["content"],
            category=obs.get("category"),
            tags=tuple(obs.get("tags") or ()),
            source=obs.get("source"),
            entity=entity["name"],
            recorded_at=obs.get("recordedAt") or "",
            valid_from=obs.get("validFrom") or "",
        )
        for entity, obs in found[: max(limit, 0)]
    ]


def _number(obs: Doc) -> int:
    _, _, number = str(obs["id"]).rpartition("-")
    return int(number) if number.isdigit() else 0
