"""Robust parsing of JSON out of model replies.

Local models wrap JSON in code fences, add prose around it, or think aloud in
``<think>`` blocks first. :func:`parse_json_reply` strips all of that and
returns the first complete JSON object in the reply.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

__all__ = ["ReplyError", "parse_json_reply"]

_THINK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_UNCLOSED_THINK = re.compile(r"^\s*<think(?:ing)?>.*", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)

MAX_REPLY_CHARS = 1_000_000


class ReplyError(ValueError):
    """The reply holds no usable JSON object; the message says why."""


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
    text = _THINK.sub("", reply)
    text = _UNCLOSED_THINK.sub("", text) if "</think" not in text.lower() else text
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
