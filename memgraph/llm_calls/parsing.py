"""Robust parsing of JSON out of model replies.

Local models wrap JSON in code fences, add prose around it, or think aloud in
``<think>`` blocks first. :func:`parse_json_reply` strips all of that and
returns the first complete JSON object in the reply.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

__all__ = ["ReplyError", "parse_json_reply", "strip_thinking"]

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


def parse_json_reply(reply: str) -> dict[str, Any]:
    """Return the JSON object in a model reply.

    Raises:
        ReplyError: the reply is empty, too large, or holds no JSON object.
    """
    if not isinstance(reply, str) or not reply.strip():
        raise ReplyError("the reply is empty")
    if len(reply) > MAX_REPLY_CHARS:
        raise ReplyError(f"the reply is {len(reply):,} characters long, over {MAX_REPLY_CHARS:,}")
    text = strip_thinking(reply)
    candidates = [match.group(1) for match in _FENCE.finditer(text)]
    candidates.append(text)
    for candidate in candidates:
        stripped = candidate.strip()
        try:
            value = orjson.loads(stripped)
        except orjson.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            return value
        for span in _balanced_objects(candidate):
            try:
                value = orjson.loads(span)
            except orjson.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    raise ReplyError("the reply holds no JSON object")
