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
from memgraph.text import content_key, index_terms, similarity

__all__ = [
    "Expiration",
    "ExtractedEntity",
    "ExtractedRelation",
    "Extraction",
    "clean_label",
    "extract",
    "validate_extraction",
    "without_copied_facts",
]

MAX_NAME = 200
MAX_TYPE = 60
MAX_CONTENT = 2_000
MAX_ITEMS = 500
COPY_SIMILARITY = 0.75
"""A fact this close (word overlap) to a known one, and not in the text, is a copy."""

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


def extract(chat: ChatModel, text: str, *, known: str, said_at: str) -> Answer[Extraction]:
    """Ask ``chat`` to extract facts from ``text`` given the relevant ``known`` entities.

    Facts the model copied from ``known`` that the text does not state are left
    out (small models often repeat the known facts, onto the wrong entity too);
    the answer's problems say how many.
    """
    answer = ask_json(
        chat,
        EXTRACT_SYSTEM,
        extract_message(text, known, said_at),
        EXTRACT_SCHEMA,
        validate_extraction,
    )
    if answer.value is not None and known:
        answer.value, copied = without_copied_facts(answer.value, known, text)
        if copied:
            answer.problems.append(
                f"left out {len(copied)} fact(s) the model copied from the known facts "
                f"without the text stating them: {', '.join(repr(c) for c in copied[:3])}"
            )
    return answer


def _grounded(statement: str, text_terms: set[str]) -> bool:
    """Whether most content words of ``statement`` occur in the text."""
    wanted = set(index_terms(statement))
    return not wanted or len(wanted & text_terms) * 2 >= len(wanted)


def without_copied_facts(
    extraction: Extraction, known: str, text: str
) -> tuple[Extraction, list[str]]:
    """``extraction`` without the facts copied from the ``known`` block: a fact equal
    or nearly equal to a known one (also with a known name in front) whose words the
    text mostly lacks. Facts the text restates stay. Returns the copies left out, too."""
    names: set[str] = set()
    facts: set[str] = set()
    for line in known.splitlines():
        if line.startswith("  - "):
            facts.add(content_key(line[4:]))
        elif line.strip() and not line[0].isspace():
            name = content_key(line.rsplit(" (", 1)[0])
            names |= {name, name.split(" ")[0]}  # "Alice drinks tea" for Alice Chen too
    text_terms = set(index_terms(text))
    copied: list[str] = []

    def fact_copied(statement: str) -> bool:
        key = content_key(statement)
        keys = {key} | {key[len(n) + 1 :] for n in names if key.startswith(n + " ")}
        near = keys & facts or any(
            similarity(k, fact) >= COPY_SIMILARITY for k in keys for fact in facts
        )
        if near and not _grounded(statement, text_terms):
            copied.append(statement)
            return True
        return False

    def relation_copied(relation: ExtractedRelation) -> bool:
        line = f"{relation.type} → {relation.target}"
        ends = f"{relation.source} {relation.target}"
        if content_key(line) in facts and not _grounded(ends, text_terms):
            copied.append(f"{relation.source} {line}")
            return True
        return False

    entities = tuple(
        ExtractedEntity(e.name, e.type, tuple(o for o in e.observations if not fact_copied(o)))
        for e in extraction.entities
    )
    relations = tuple(r for r in extraction.relations if not relation_copied(r))
    return Extraction(entities, relations, extraction.expirations), copied
