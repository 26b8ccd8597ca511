"""Structured output that adapts to what the server supports.

Three ways to ask an OpenAI-compatible server for JSON, best first:

``json_schema``
    ``response_format={"type": "json_schema", ...}``: the server constrains the
    reply to the schema (OpenAI, recent vLLM, Ollama and llama.cpp's ``llama-server``).
``json_object``
    ``response_format={"type": "json_object", "schema": {...}}`` plus an example
    object in the system prompt: llama-cpp-python, vLLM and Ollama constrain the
    reply to the schema sent alongside; other servers at least return JSON.
``none``
    no ``response_format``; the example object in the system prompt is all the
    model has, and the reply is parsed leniently.

``provider.structuredOutput`` picks one (``"auto"`` by default: the best the
server accepts). In ``auto``, a server that refuses a format (any 4xx or 5xx
whose body names ``response_format`` / ``json_schema``) is asked again with the
next one, once per request, and the downgrade is remembered per endpoint and
model in ``structured-output.json`` in the user cache directory
(:func:`cache_dir`), so later processes start at the format that works. The
warning is logged once: when the downgrade is first found.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, cast

from memgraph.errors import BadResponse, ConfigError
from memgraph.llm_calls.prompts import structured_fallback_instruction
from memgraph.llm_calls.provider import JsonSchema, Message

__all__ = [
    "MEMO_FILE",
    "MODES",
    "SETTINGS",
    "FormatMemo",
    "StructuredMode",
    "StructuredOutput",
    "cache_dir",
    "plain",
    "shape_request",
]

StructuredMode = Literal["json_schema", "json_object", "none"]
MODES: tuple[StructuredMode, ...] = ("json_schema", "json_object", "none")
SETTINGS = ("auto", *MODES)
MEMO_FILE = "structured-output.json"

log = logging.getLogger("memgraph.providers.openai")


def cache_dir() -> Path:
    """Where memgraph keeps what it learned about servers: ``MEMGRAPH_CACHE_DIR``, else the
    user cache directory (``$XDG_CACHE_HOME/memgraph``, ``~/.cache/memgraph``,
    ``~/Library/Caches/memgraph`` on macOS, ``%LOCALAPPDATA%\\memgraph\\cache`` on Windows)."""
    explicit = os.environ.get("MEMGRAPH_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "memgraph" / "cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "memgraph"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "memgraph"


def plain(value: Any) -> Any:
    """``value`` with every mapping turned into a dict and every sequence into a list."""
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


class FormatMemo:
    """The structured-output mode each endpoint and model was last found to accept.

    Kept in one small JSON file, read when asked and replaced atomically when a
    downgrade is found; a file that cannot be read or written only costs the
    next process one refused request (logged at debug level).
    """

    _lock = threading.Lock()

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else cache_dir() / MEMO_FILE

    def _read(self) -> dict[str, Any]:
        try:
            document = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.debug("memgraph: ignoring unreadable %s (%s)", self.path, exc)
            return {}
        return document if isinstance(document, dict) else {}

    def get(self, key: str) -> StructuredMode | None:
        """The remembered mode for ``key``, if any."""
        entry = self._read().get(key)
        mode = entry.get("mode") if isinstance(entry, dict) else None
        return cast(StructuredMode, mode) if mode in MODES else None

    def put(self, key: str, mode: StructuredMode, reason: str) -> bool:
        """Remember ``mode`` for ``key``; False when it was already remembered."""
        with self._lock:
            document = self._read()
            entry = document.get(key)
            if isinstance(entry, dict) and entry.get("mode") == mode:
                return False
            document[key] = {"mode": mode, "reason": reason[:300]}
            temporary: str | None = None
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                with tempfile.NamedTemporaryFile(
                    "w", encoding="utf-8", dir=self.path.parent, delete=False, suffix=".tmp"
                ) as handle:
                    temporary = handle.name
                    json.dump(document, handle, indent=1, sort_keys=True)
                os.replace(temporary, self.path)
            except OSError as exc:
                log.debug("memgraph: could not save %s (%s)", self.path, exc)
                if temporary is not None:
                    with contextlib.suppress(OSError):
                        os.unlink(temporary)
            return True


_warned: set[str] = set()
_warned_lock = threading.Lock()


class StructuredOutput:
    """The structured-output mode of one chat model, and how it adapts to refusals.

    Args:
        setting: ``"auto"`` or a fixed mode (see the module docstring).
        endpoint: the server's display URL.
        model: the chat model name.
        memo: where downgrades are remembered (``None``: only in this object).

    Raises:
        ConfigError: ``setting`` is not one of :data:`SETTINGS`.
    """

    def __init__(self, setting: str, *, endpoint: str, model: str, memo: FormatMemo | None) -> None:
        if setting not in SETTINGS:
            choices = ", ".join(repr(s) for s in SETTINGS)
            raise ConfigError(
                f"provider.structuredOutput must be one of {choices}, got {setting!r}"
            )
        self.setting = setting
        self.endpoint = endpoint
        self.model = model
        self.key = f"{endpoint} {model}"
        self._memo = memo
        self._mode: StructuredMode | None = (
            None if setting == "auto" else cast(StructuredMode, setting)
        )

    @property
    def mode(self) -> StructuredMode:
        """The mode the next request uses."""
        if self._mode is None:
            remembered = self._memo.get(self.key) if self._memo is not None else None
            self._mode = remembered or "json_schema"
            if remembered is not None:
                log.info(
                    "memgraph: %s is known to need structured output %r for model %r",
                    self.endpoint, remembered, self.model,
                )  # fmt: skip
        return self._mode

    def refused(self, mode: StructuredMode, detail: str) -> StructuredMode:
        """The mode to use after the server refused ``mode``; remembers the downgrade.

        Raises:
            BadResponse: the mode is fixed by the setting, or there is nothing left to drop.
        """
        if self.setting != "auto" or mode == "none":
            hint = (
                'set provider.structuredOutput to "auto" (or "json_object" / "none")'
                if self.setting != "auto"
                else "the server refused a request without response_format too"
            )
            raise BadResponse(
                f"{self.endpoint} refused response_format {mode!r} for model {self.model!r} "
                f"({detail}); {hint}",
                raw=detail,
            )
        lower = MODES[MODES.index(mode) + 1]
        if self._mode is None or MODES.index(lower) > MODES.index(self._mode):
            self._mode = lower
        new = self._memo.put(self.key, lower, detail) if self._memo is not None else True
        with _warned_lock:
            first = new and self.key not in _warned
            _warned.add(self.key)
        if first:
            log.warning(
                "memgraph: %s refused structured output %r for model %r (%s); using %r from "
                "now on (remembered in the user cache; set provider.structuredOutput to choose)",
                self.endpoint, mode, self.model, detail, lower,
            )  # fmt: skip
        return lower


def shape_request(
    messages: Sequence[Message], schema: JsonSchema, mode: StructuredMode
) -> tuple[list[Message], dict[str, Any] | None]:
    """The messages and ``response_format`` asking for ``schema`` in ``mode``."""
    body = plain(schema.schema)
    if mode == "json_schema":
        return [dict(message) for message in messages], {
            "type": "json_schema",
            "json_schema": {"name": schema.name, "schema": body, "strict": schema.strict},
        }
    instructed = _with_instruction(messages, structured_fallback_instruction(schema))
    if mode == "json_object":
        return instructed, {"type": "json_object", "schema": body}
    return instructed, None


def _with_instruction(messages: Sequence[Message], instruction: str) -> list[Message]:
    """Copy ``messages`` with ``instruction`` appended to the system prompt (added if absent)."""
    out = [dict(message) for message in messages]
    if out and out[0].get("role") in ("system", "developer"):
        first = out[0]
        content = first.get("content")
        if isinstance(content, str):
            first["content"] = f"{content}\n\n{instruction}" if content else instruction
            return out
        if isinstance(content, list):
            first["content"] = [*copy.deepcopy(content), {"type": "text", "text": instruction}]
            return out
    return [{"role": "system", "content": instruction}, *out]
