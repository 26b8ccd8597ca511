"""Tool calls that a server returns as text in ``content`` instead of ``tool_calls``.

Many local servers (llama-cpp-python's default chat handler, Ollama with some
templates) leave the model's tool call in the message text: a JSON object such
as ``{"name": "get_weather", "arguments": {"city": "Paris"}}``, sometimes inside
``<tool_call>`` tags or code fences, sometimes with doubled braces
(``{{...}}``), or a list of them. When the request offered tools and the whole
reply is such a call to one of them, :func:`tool_calls_from_text` turns it into
OpenAI-shaped tool calls. Anything else (prose, JSON naming no offered tool) is
left as text.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["offered_tool_names", "tool_calls_from_text"]

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)
MAX_TEXT = 100_000


def offered_tool_names(tools: object) -> set[str]:
    """The function names of a request's ``tools`` list."""
    names: set[str] = set()
    if not isinstance(tools, Sequence) or isinstance(tools, (str, bytes)):
        return names
    for tool in tools:
        if isinstance(tool, Mapping):
            function = tool.get("function")
            name = function.get("name") if isinstance(function, Mapping) else tool.get("name")
            if isinstance(name, str):
                names.add(name)
    return names


def _load(body: str) -> Any:
    text = body.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    for _ in range(3):
        try:
            return json.loads(text)
        except ValueError:
            if text.startswith("{{") and text.endswith("}}"):
                text = text[1:-1].strip()  # a template's escaped braces left in the reply
                continue
            return None
    return None


def _calls(value: Any) -> Iterable[Mapping[str, Any]]:
    if isinstance(value, list):
        for item in value:
            yield from _calls(item)
    elif isinstance(value, Mapping):
        for key in ("tool_calls", "tool_call", "function_call"):
            if key in value:
                yield from _calls(value[key])
                return
        function = value.get("function")
        yield function if isinstance(function, Mapping) else value


def _call(item: Mapping[str, Any], names: set[str], number: int, seed: str) -> dict[str, Any]:
    name = item.get("name")
    if not isinstance(name, str) or name not in names:
        raise ValueError(name)
    arguments = item.get("arguments", item.get("parameters", {}))
    if isinstance(arguments, str):
        json.loads(arguments or "{}")  # a string must hold JSON arguments
        text = arguments or "{}"
    elif isinstance(arguments, Mapping):
        text = json.dumps(arguments, ensure_ascii=False)
    else:
        raise ValueError(arguments)
    digest = hashlib.sha256(f"{seed}:{number}".encode()).hexdigest()[:24]
    return {
        "id": f"call_{digest}",
        "type": "function",
        "function": {"name": name, "arguments": text},
    }


def tool_calls_from_text(text: str, tools: object) -> tuple[dict[str, Any], ...]:
    """OpenAI-shaped tool calls when ``text`` is entirely a call to one of ``tools``.

    Returns ``()`` when it is not (prose, malformed JSON, or a name that was not offered).
    """
    names = offered_tool_names(tools)
    if not names or not text or len(text) > MAX_TEXT:
        return ()
    tagged = _TAGGED.findall(text)
    if tagged and _TAGGED.sub("", text).strip():
        return ()  # prose around the tagged calls: not a bare tool call
    bodies = tagged or [text]
    items: list[Mapping[str, Any]] = []
    for body in bodies:
        value = _load(body)
        if value is None:
            return ()
        items.extend(_calls(value))
    try:
        return tuple(_call(item, names, number, text) for number, item in enumerate(items))
    except (ValueError, TypeError):
        return ()
