"""Who is writing: agent namespaces, and memories opened by name.

Every write records its ``source``: ``"main"`` at top level, or the agent's
name inside ``with agent("Writer"):``. Reads inside an agent default to that
agent's own entries; ``from_="Writer"`` reads another namespace and
``from_="*"`` reads all; top-level reads see everything.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from memgraph.errors import InvalidScope

__all__ = [
    "MAIN",
    "NAME_RULE",
    "agent",
    "current_agent",
    "current_source",
    "read_namespace",
    "state_dir",
    "validate_name",
]

MAIN = "main"
NAME_RULE = "[A-Za-z0-9_-]+ (letters, digits, '_' and '-'; at most 128 characters)"
_NAME = re.compile(r"[A-Za-z0-9_-]{1,128}")
_AGENT: ContextVar[str | None] = ContextVar("memgraph_agent", default=None)


def validate_name(name: object, what: str = "memory name") -> str:
    """Return ``name`` if it is a valid memory or agent name.

    Raises:
        InvalidScope: (a ``ValueError``) naming the rule.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InvalidScope(f"invalid {what} {name!r}: names must match {NAME_RULE}")
    return name


@contextmanager
def agent(name: str) -> Iterator[str]:
    """Write and read as agent ``name`` for the ``with`` block (per thread / task).

    Raises:
        InvalidScope: ``name`` is not a valid name.
    """
    token = _AGENT.set(validate_name(name, "agent name"))
    try:
        yield name
    finally:
        _AGENT.reset(token)


def current_agent() -> str | None:
    """The agent whose context this code runs in, or ``None`` at top level."""
    return _AGENT.get()


def current_source() -> str:
    """The namespace writes are recorded under: the agent's name, or ``"main"``."""
    return _AGENT.get() or MAIN


def read_namespace(from_: str | None) -> str | None:
    """The source a read is restricted to (``None`` means every source).

    ``"*"`` reads all; a name reads that namespace; ``None`` reads the current
    agent's own entries inside an agent, and everything at top level.
    """
    if from_ == "*":
        return None
    if from_ is not None:
        return from_
    return _AGENT.get()


def state_dir() -> Path:
    """Where memories opened by name live.

    ``MEMGRAPH_STATE_DIR`` if set; otherwise ``.memgraph`` next to the running
    program's main file (so the same script finds the same memory whatever the
    working directory); in a REPL, ``.memgraph`` in the working directory.
    """
    override = os.environ.get("MEMGRAPH_STATE_DIR")
    if override:
        return Path(override).expanduser()
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    if main_file:
        return Path(main_file).resolve().parent / ".memgraph"
    return Path.cwd() / ".memgraph"
