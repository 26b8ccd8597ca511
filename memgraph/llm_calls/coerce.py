"""Lenient repairs of a parsed reply, guided by the JSON schema it should follow.

Small models get the shape of a reply slightly wrong in a few common ways;
each is repaired here before the reply is validated, and rejecting remains
the answer for anything else:

* the whole schema echoed around the data (``{"type": "object", "properties":
  {"entities": [...]}}``): the data inside ``properties`` is used;
* a list given as one string (``"observations": "works at Acme"``), as an empty
  object (``{}``), as a single object, or as ``null``;
* a list of named objects given as an object keyed by name (``{"Alice":
  {"type": "person", ...}}`` or ``{"Alice": ["works at Acme"]}``);
* a placeholder copied from the example (``"<name>"``), which counts as empty;
* an id given with decoration (``"[obs-3]"``, ``"/obs-3"``) where the schema
  lists the allowed values.

A schema echoed without any data (``"entities": {"type": "array", "items":
...}``) is not repaired: :class:`~memgraph.llm_calls.parsing.ReplyError` says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from memgraph.llm_calls.parsing import ReplyError

__all__ = ["coerce_reply"]

_PLACEHOLDER = re.compile(r"<[^<>\n]{1,80}>")
_DECORATION = "[]()<>{}/\\\"'`.,;: \t\n"
_SCHEMA_WORDS = frozenset({"type", "properties", "items", "required", "additionalProperties"})


def _kind(schema: Mapping[str, Any]) -> str | None:
    kind = schema.get("type", "object" if "properties" in schema else None)
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    return kind if isinstance(kind, str) else None


def _is_schema_fragment(value: object) -> bool:
    return (
        isinstance(value, Mapping)
        and value.get("type") in ("array", "object", "string")
        and bool(set(value) & {"items", "properties"})
    )


def _unwrap_echo(document: Mapping[str, Any], schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """The data inside an echoed schema wrapper (with any data left beside it), or
    ``document`` unchanged."""
    expected = set(schema.get("properties") or ())
    for _ in range(3):
        inner = document.get("properties")
        if not isinstance(inner, Mapping) or not expected & set(inner):
            break
        if document.get("type") != "object" and not set(document) <= _SCHEMA_WORDS | expected:
            break
        beside = {k: v for k, v in document.items() if k in expected and k not in inner}
        document = {**inner, **beside}
    return document


def _coerce(value: Any, schema: Mapping[str, Any], where: str) -> Any:
    kind = _kind(schema)
    if kind == "array":
        return _array(value, schema.get("items") or {}, where)
    if kind == "object" and isinstance(value, Mapping):
        properties = schema.get("properties") or {}
        return {
            key: _coerce(item, properties[key], f"{where}.{key}") if key in properties else item
            for key, item in value.items()
        }
    if kind == "string":
        if isinstance(value, str):
            if "<" in value and _PLACEHOLDER.fullmatch(value.strip()):
                return ""
            enum = schema.get("enum")
            if isinstance(enum, list) and value not in enum:
                return _nearest(value, enum)
        return value
    return value


def _nearest(value: str, allowed: list[Any]) -> str:
    """``value`` stripped of decoration when that names an allowed value, else unchanged."""
    bare = value.strip(_DECORATION).casefold()
    for option in allowed:
        if isinstance(option, str) and option.casefold() == bare:
            return option
    return value


def _array(value: Any, items: Mapping[str, Any], where: str) -> Any:
    if value is None:
        return []
    if _is_schema_fragment(value):
        raise ReplyError(
            f'{where} repeats the JSON schema ({{"type": ...}}) instead of giving values'
        )
    item_kind = _kind(items)
    if isinstance(value, str) and item_kind == "string":
        value = [value] if value.strip() else []
    elif isinstance(value, Mapping):
        value = _listed(value, items, item_kind)
    if not isinstance(value, list):
        return value
    return [_coerce(item, items, f"{where}[{index}]") for index, item in enumerate(value)]


def _listed(value: Mapping[str, Any], items: Mapping[str, Any], item_kind: str | None) -> Any:
    """A mapping given where a list belongs, as that list (or unchanged when unclear)."""
    if not value:
        return []
    if item_kind == "string":
        values = list(value.values())
        return values if all(isinstance(v, str) for v in values) else value
    if item_kind != "object":
        return value
    properties = items.get("properties") or {}
    if set(value) & set(properties):
        return [value]  # one object where a list of them belongs
    if "name" not in properties:
        return value
    lists = [key for key, sub in properties.items() if _kind(sub) == "array"]
    listed: list[Any] = []
    for name, body in value.items():
        if isinstance(body, Mapping):
            listed.append({"name": name, **body})
        elif isinstance(body, (list, str)) and len(lists) == 1:
            listed.append({"name": name, lists[0]: body})
        else:
            return value
    return listed


def coerce_reply(document: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """``document`` with the lenient repairs of the module docstring applied.

    Raises:
        ReplyError: the reply is the schema itself, without values.
    """
    unwrapped = _unwrap_echo(document, schema)
    coerced = _coerce(dict(unwrapped), schema, "reply")
    return dict(coerced) if isinstance(coerced, Mapping) else dict(unwrapped)
