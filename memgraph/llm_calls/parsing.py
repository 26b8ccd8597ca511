"""Robust parsing of JSON out of model replies.

Local models wrap JSON in code fences, add prose around it, or think aloud in
``<think>`` blocks first; small ones leave trailing commas (``[1, 2,]``) or
double the braces of a template (``{{...}}``). :func:`parse_json_reply` strips
all of that and returns the first complete JSON object in the reply. When
there is none, the :class:`ReplyError` says exactly what is wrong (the JSON
parser's own message and where), so a repair prompt can quote it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

__all__ = ["ReplyError", "parse_json_reply", "strip_thinking", "without_trailing_commas"]

_OPENERS = ("<think>", "<thinking>")
_CLOSERS = ("</think>", "</thinking>")
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)

MAX_REPLY_CHARS = 1_000_000


class ReplyError(ValueError):
    """The reply holds no usable JSON object; the message says why."""


def _find_tag(lower: str, tags: tuple[str, ...], start: int) -> tuple[int, int]:
    """The first of ``tags`` in ``lower`` at or after ``start``: (where, where it ends),
    or (-1, -1)."""
    found = [(i, i + len(tag)) for tag in tags if (i := lower.find(tag, start)) >= 0]
    return min(found) if found else (-1, -1)


def strip_thinking(text: str) -> str:
    """``text`` without its ``<think>...</think>`` (or ``<thinking>``) blocks.

    Each opener ends at the first closer after it. A reply that *starts* with an
    opener never closed is all thinking: nothing is left of it. Linear in the
    length of ``text``: once an opener has no closer after it, no later opener
    has one either, so the scan stops there.
    """
    lower = text.lower()
    kept: list[str] = []
    position = 0
    while True:
        opener, inside = _find_tag(lower, _OPENERS, position)
        if opener < 0:
            break
        closer, after = _find_tag(lower, _CLOSERS, inside)
        if closer < 0:
            break
        kept.append(text[position:opener])
        position = after
    kept.append(text[position:])
    rest = "".join(kept)
    if "</think" not in rest.lower() and rest.lstrip().lower().startswith(_OPENERS):
        return ""
    return rest


def _balanced_objects(text: str) -> list[str]:
    """Every top-level ``{...}`` span of ``text``, honouring strings and escapes."""
    spans: list[str] = []
    depth = 0
    start = -1
    in_string = False
    escaped = False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"' and depth > 0:
            in_string = True
        elif char == "{":
            if depth == 0:
                start = index
            depth += 1
        elif char == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start : index + 1])
    return spans


def without_trailing_commas(text: str) -> str:
    """``text`` without commas that directly precede a closing ``}`` or ``]`` (outside strings)."""
    out: list[str] = []
    pending = -1  # index in ``out`` of a comma that may turn out to be trailing
    in_string = False
    escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            out.append(char)
            continue
        if char in "}]" and pending >= 0:
            out[pending] = ""
        if not char.isspace():
            pending = -1
        if char == ",":
            pending = len(out)
        elif char == '"':
            in_string = True
        out.append(char)
    return "".join(out)


def _load(span: str) -> Any:
    """``span`` as JSON: as it is, else without trailing commas or doubled braces."""
    try:
        return orjson.loads(span)
    except orjson.JSONDecodeError:
        pass
    fixed = without_trailing_commas(span)
    for _ in range(3):
        try:
            return orjson.loads(fixed)
        except orjson.JSONDecodeError:
            if fixed.startswith("{{") and fixed.endswith("}}"):
                fixed = fixed[1:-1].strip()  # a template's escaped braces left in the reply
                continue
            return None
    return None


def _describe(text: str) -> str:
    """What is wrong with ``text`` as a JSON object, quoting the JSON parser."""
    start = text.find("{")
    if start < 0:
        preview = " ".join(text.split())[:80]
        return f"the reply holds no JSON object (it reads {preview!r})"
    if not _balanced_objects(text[start:]):
        return (
            f"the JSON object is not complete: the reply ends after {len(text) - start} "
            "characters of it, before its closing brace"
        )
    span = _balanced_objects(text[start:])[0]
    try:
        value = json.loads(without_trailing_commas(span))
    except RecursionError:
        return "the reply nests JSON too deeply"
    except json.JSONDecodeError as exc:
        near = span[max(0, exc.pos - 30) : exc.pos + 30].replace("\n", " ")
        return (
            f"the reply is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno} "
            f"of the object (near {near!r})"
        )
    return f"the reply holds a JSON {type(value).__name__}, not an object"


def parse_json_reply(reply: str) -> dict[str, Any]:
    """Return the JSON object in a model reply.

    Raises:
        ReplyError: the reply is empty, too large, or holds no JSON object; the
            message says what is wrong and where.
    """
    if not isinstance(reply, str) or not reply.strip():
        raise ReplyError("the reply is empty")
    if len(reply) > MAX_REPLY_CHARS:
        raise ReplyError(f"the reply is {len(reply):,} characters long, over {MAX_REPLY_CHARS:,}")
    text = strip_thinking(reply)
    if not text.strip():
        raise ReplyError("the reply holds only thinking (<think> ...), no JSON object")
    fenced = [match.group(1) for match in _FENCE.finditer(text)]
    for candidate in [*fenced, text]:
        value = _load(candidate.strip())
        if isinstance(value, dict):
            return value
        for span in _balanced_objects(candidate):
            value = _load(span)
            if isinstance(value, dict):
                return value
    raise ReplyError(_describe(fenced[0] if fenced else text))
