"""Scope ids and memory names: the only strings that become paths."""

from __future__ import annotations

import re

from memgraph.errors import InvalidScope

__all__ = ["MAX_SCOPE_LENGTH", "SCOPE_RULE", "validate_scope"]

SCOPE_RULE = "^[A-Za-z0-9._-]+$, not '.' or '..', at most 128 characters"
MAX_SCOPE_LENGTH = 128
_SCOPE = re.compile(r"[A-Za-z0-9._-]+")


def validate_scope(scope: object) -> str:
    """Return ``scope`` if it is a safe scope id.

    Raises:
        InvalidScope: (a ``ValueError``) naming the rule, before any file is touched.
    """
    if (
        not isinstance(scope, str)
        or not _SCOPE.fullmatch(scope)
        or scope in (".", "..")
        or len(scope) > MAX_SCOPE_LENGTH
    ):
        shown = scope if not isinstance(scope, str) or len(scope) <= 80 else scope[:80] + "..."
        raise InvalidScope(f"invalid scope id {shown!r}: scope ids must match {SCOPE_RULE}")
    return scope
