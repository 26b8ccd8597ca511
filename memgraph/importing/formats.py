"""Readers of the files ``memgraph import`` takes, and how their format is recognised.

Every reader turns a file's text into :class:`Record`\\ s, numbered in file
order; the number is the record's resume key, so it never depends on the
import's options. Formats:

* ``messages``: JSON Lines, one message per line:
  ``{"role": "user" | "assistant" | ..., "speaker"?: "Ann", "content": "...", "at"?: "2024-..."}``
  (``role`` or ``speaker``; other keys are ignored).
* ``openai``: an OpenAI chat messages export: a JSON array of
  ``{"role", "content"}`` messages, or an object with such a ``"messages"`` array.
  ``content`` may be a list of text parts.
* ``chat``: a chat log, one message per line with its speaker ("Dana: hi"),
  optionally time-stamped as WhatsApp exports or logs are
  (:mod:`memgraph.importing.chat_log`).
* ``text``: plain text, one record per paragraph (paragraphs are separated by
  blank lines).

Bad input raises :class:`~memgraph.errors.InvalidInput` naming the file and
the line (or message) before anything is imported.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import orjson

from memgraph.engine.core import coerce_time
from memgraph.errors import InvalidInput
from memgraph.importing.chat_log import looks_like_chat, read_chat
from memgraph.importing.records import Record
from memgraph.llm_calls.provider import message_text

__all__ = [
    "READERS",
    "Record",
    "decode",
    "detect_format",
    "read_messages",
    "read_openai",
    "read_text",
]


Reader = Callable[[str, str], list[Record]]


def decode(data: bytes, path: str) -> str:
    """The file's text (UTF-8, a byte-order mark allowed)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"{path}: not UTF-8 text (byte {exc.start}); convert it to UTF-8 first",
            path=path,
            position=f"byte {exc.start}",
        ) from exc


def _bad(path: str, where: str, problem: str) -> InvalidInput:
    return InvalidInput(f"{path}: {where}: {problem}", path=path, position=where)


def _message(
    value: object, index: int, where: str, path: str, *, require_content: bool
) -> Record | None:
    """A record of one message object; None when it carries no text and that is allowed."""
    if not isinstance(value, Mapping):
        raise _bad(path, where, f"expected a JSON object, got {type(value).__name__}")
    role, speaker, at = value.get("role"), value.get("speaker"), value.get("at")
    for name, field in (("role", role), ("speaker", speaker), ("at", at)):
        if field is not None and not isinstance(field, str):
            raise _bad(path, where, f"{name!r} must be a string, got {field!r}")
    if "content" not in value and require_content:
        raise _bad(path, where, "the message has no 'content'")
    content = value.get("content")
    if content is not None and not isinstance(content, (str, list)):
        raise _bad(path, where, f"'content' must be text, got {type(content).__name__}")
    text = message_text(value).strip()
    if not text:
        if require_content:
            raise _bad(path, where, "the message's 'content' is empty")
        return None
    when = None
    if at is not None:
        try:
            when = coerce_time(at)
        except (TypeError, ValueError) as exc:
            raise _bad(path, where, f"'at' is not a time: {exc}") from exc
    return Record(index, where, text, role, (speaker or "").strip() or None, when)


def read_messages(text: str, path: str) -> list[Record]:
    """JSON Lines of messages; blank lines are skipped."""
    records: list[Record] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise _bad(path, f"line {number}", f"not valid JSON ({exc})") from exc
        record = _message(value, len(records), f"line {number}", path, require_content=True)
        assert record is not None
        records.append(record)
    return records


def read_openai(text: str, path: str) -> list[Record]:
    """An OpenAI messages export: ``[...]`` or ``{"messages": [...]}``.

    Messages without text (an assistant's tool call, an empty reply) are left
    out; they keep their place in the numbering.
    """
    try:
        value: Any = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise _bad(path, "the file", f"not valid JSON ({exc})") from exc
    if isinstance(value, Mapping):
        value = value.get("messages")
    if not isinstance(value, list):
        raise _bad(path, "the file", 'expected a JSON array of messages or {"messages": [...]}')
    records: list[Record] = []
    for number, message in enumerate(value):
        record = _message(message, number, f"message {number}", path, require_content=False)
        if record is not None:
            records.append(record)
    return records


def read_text(text: str, path: str) -> list[Record]:
    """Plain text: one record per paragraph (blank lines separate paragraphs)."""
    records: list[Record] = []
    lines: list[str] = []
    start = 0
    for number, line in enumerate([*text.splitlines(), ""], 1):
        if line.strip():
            if not lines:
                start = number
            lines.append(line.rstrip())
        elif lines:
            where = f"paragraph {len(records) + 1} (line {start})"
            records.append(Record(len(records), where, "\n".join(lines).strip()))
            lines = []
    return records


READERS: dict[str, Reader] = {
    "messages": read_messages,
    "openai": read_openai,
    "chat": read_chat,
    "text": read_text,
}
"""The built-in readers by format name."""


def detect_format(text: str, path: str) -> str:
    """The format of a file's text: ``openai``, ``messages``, ``chat`` or ``text``.

    Raises:
        InvalidInput: the file is empty, is the reference MCP memory server's
            file (use ``--format mcp-jsonl``), or is JSON of no known shape.
    """
    stripped = text.lstrip()
    if not stripped:
        raise InvalidInput(f"{path}: the file is empty; there is nothing to import", path=path)
    if stripped[0] != "{":  # "[": a JSON array, or a chat log stamped "[31.12.23, 21:15]"
        if looks_like_chat(stripped):
            return "chat"
        return "openai" if stripped[0] == "[" else "text"
    try:
        first = orjson.loads(stripped.split("\n", 1)[0])
    except orjson.JSONDecodeError:
        try:  # a pretty-printed object over several lines
            first = orjson.loads(stripped)
        except orjson.JSONDecodeError as exc:
            raise InvalidInput(
                f"{path}: line 1 starts like JSON but is not valid JSON ({exc}); fix it, or pass "
                "--format text to import the file as plain text",
                path=path,
                position="line 1",
            ) from exc
    if isinstance(first, Mapping):
        if first.get("type") in ("entity", "relation"):
            raise InvalidInput(
                f"{path} looks like the reference MCP memory server's file "
                '(lines of {"type": "entity", ...}): use --format mcp-jsonl',
                path=path,
            )
        if isinstance(first.get("messages"), list):
            return "openai"
        if "content" in first:
            return "messages"
    raise InvalidInput(
        f"{path}: cannot tell the format: line 1 is JSON but not a message "
        '({"role" or "speaker", "content"}); pass --format',
        path=path,
        position="line 1",
    )
