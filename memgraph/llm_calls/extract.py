"""Text → validated extraction result: the prompt, the call, and the shape checks.

The model's reply is untrusted: names are cleaned of control characters,
lengths are capped, and a reply of the wrong shape is rejected whole so that
nothing of it reaches the graph.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memgraph.llm_calls.ask import Answer, ask_json
from memgraph.llm_calls.prompts import EXTRACT_SCHEMA, EXTRACT_SYSTEM, extract_message
from memgraph.llm_calls.provider import ChatModel

__all__ = [
    "Expiration",
    "ExtractedEntity",
    "ExtractedRelation",
    "Extraction",
    "clean_label",
    "extract",
    "validate_extraction",
]

MAX_NAME = 200
MAX_TYPE = 60
MAX_CONTENT = 2_000
MAX_ITEMS = 500

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class ExtractedEntity:
    name: str
    type: str
    observations: tuple[str, ...]


@dataclass(frozen=True)
class ExtractedRelation:
    source: str
    target: str
    type: str


@dataclass(frozen=True)
class Expiration:
    entity_name: str
    content: str


@dataclass(frozen=True)
class Extraction:
    """A validated extraction reply."""

    entities: tuple[ExtractedEntity, ...] = ()
    relations: tuple[ExtractedRelation, ...] = ()
    expirations: tuple[Expiration, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.entities or self.relations or self.expirations)


def clean_label(value: object, field: str, limit: int) -> str:
    """A model-supplied string with control characters removed and whitespace collapsed.

    Raises:
        TypeError: ``value`` is not a string.
        ValueError: it is longer than ``limit`` characters.
    """
    if not isinstance(value, str):
        raise TypeError(f"{field} must be a string, got {type(value).__name__}")
    text = _SPACE.sub(" ", _CONTROL.sub(" ", unicodedata.normalize("NFC", value))).strip()
    if len(text) > limit:
        raise ValueError(f"{field} is {len(text)} characters long, over {limit}")
    return text


def _list(document: Mapping[str, Any], key: str) -> list[Any]:
    value = document.get(key, [])
    if value is None:
        return []
    if not isinstance(value, list):
        raise TypeError(f"{key!r} must be a list, got {type(value).__name__}")
    if len(value) > MAX_ITEMS:
        raise ValueError(f"{key!r} has {len(value)} items, over {MAX_ITEMS}")
    return value


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"{where} must be an object, got {type(value).__name__}")
    return value


def validate_extraction(document: Mapping[str, Any]) -> Extraction:
    """Check a parsed reply against the extraction shape.

    Items with an empty name or content are dropped; anything of the wrong
    type rejects the whole reply.

    Raises:
        TypeError, ValueError: the reply does not have the extraction shape.
    """
    if not any(key in document for key in ("entities", "relations", "expirations")):
        raise ValueError("expected keys 'entities', 'relations' and 'expirations'")
    entities: list[ExtractedEntity] = []
    for index, raw in enumerate(_list(document, "entities")):
        item = _mapping(raw, f"entities[{index}]")
        name = clean_label(item.get("name"), f"entities[{index}].name", MAX_NAME)
        type_ = clean_label(item.get("type") or "thing", f"entities[{index}].type", MAX_TYPE)
        observations = []
        for position, content in enumerate(_list(item, "observations")):
            text = clean_label(content, f"entities[{index}].observations[{position}]", MAX_CONTENT)
            if text:
                observations.append(text)
        if name:
            entities.append(ExtractedEntity(name, type_.lower() or "thing", tuple(observations)))
    relations: list[ExtractedRelation] = []
    for index, raw in enumerate(_list(document, "relations")):
        item = _mapping(raw, f"relations[{index}]")
        source = clean_label(item.get("from"), f"relations[{index}].from", MAX_NAME)
        target = clean_label(item.get("to"), f"relations[{index}].to", MAX_NAME)
        type_ = clean_label(item.get("type"), f"relations[{index}].type", MAX_TYPE)
        if source and target and type_:
            relations.append(ExtractedRelation(source, target, type_))
    expirations: list[Expiration] = []
    for index, raw in enumerate(_list(document, "expirations")):
        item = _mapping(raw, f"expirations[{index}]")
        name = clean_label(item.get("entityName"), f"expirations[{index}].entityName", MAX_NAME)
        content = clean_label(
            item.get("observationContent"), f"expirations[{index}].observationContent", MAX_CONTENT
        )
        if name and content:
            expirations.append(Expiration(name, content))
    return Extraction(tuple(entities), tuple(relations), tuple(expirations))


def extract(
    chat: ChatModel,
    text: str,
    *,
    known: str,
    said_at: str,
    speaker: str | None = None,
    addressee: str | None = None,
    previous: str | None = None,
) -> Answer[Extraction]:
    """Ask ``chat`` to extract facts from ``text`` given the relevant ``known`` entities,
    who said it (``speaker``), to whom (``addressee``) and the turn before it."""
    return ask_json(
        chat,
        EXTRACT_SYSTEM,
        extract_message(
            text, known, said_at, speaker=speaker, addressee=addressee, previous=previous
        ),
        EXTRACT_SCHEMA,
        validate_extraction,
    )
