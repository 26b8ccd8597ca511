"""Exceptions raised by memgraph.

Every exception memgraph raises on purpose derives from :class:`MemgraphError`::

    MemgraphError
    ├── ConfigError (also ValueError)        bad agency.json / config field
    ├── InvalidScope (also ValueError)       scope id or memory name breaks the naming rule
    ├── InvalidInput (also ValueError)       a file to import or load is malformed (names the line)
    ├── InvalidTime (also ValueError)        a timestamp that is not ISO-8601 or out of range
    ├── NotFound (also LookupError)          no entity / observation / relation with that name or id
    ├── ProviderError                        the LLM or embedding provider failed
    │   ├── UnknownProvider                  no provider registered under that name
    │   ├── MissingCredentials               no API key where one is needed
    │   ├── ProviderUnavailable              timeouts, refused connections, 429/5xx after retries
    │   └── BadResponse                      the reply could not be used (carries the raw text)
    ├── StoreError                           the store could not load or persist
    │   ├── StoreConflict                    another writer committed first / lock timeout
    │   ├── StoreCorrupt                     a file is damaged (names the file and the position)
    │   └── StoreUnavailable                 the backing store cannot be reached
    └── ApprovalRequired                     a memory action needs approval before it runs

Foreign exceptions (OS errors, SDK errors, JSON errors) are translated at the
boundary with ``raise ... from exc`` so callers only ever need these types.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ApprovalRequired",
    "BadResponse",
    "ConfigError",
    "InvalidInput",
    "InvalidScope",
    "InvalidTime",
    "MemgraphError",
    "MissingCredentials",
    "NotFound",
    "ProviderError",
    "ProviderUnavailable",
    "StoreConflict",
    "StoreCorrupt",
    "StoreError",
    "StoreUnavailable",
    "UnknownProvider",
]


class MemgraphError(Exception):
    """Root of every exception memgraph raises on purpose."""


class ConfigError(MemgraphError, ValueError):
    """A configuration value is missing, unknown or of the wrong type."""


class InvalidScope(MemgraphError, ValueError):
    """A scope id or memory name does not match the naming rule."""


class InvalidInput(MemgraphError, ValueError):
    """A file given to ``import`` or ``load`` is malformed; the message names where."""

    def __init__(self, message: str, *, path: str = "", position: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.position = position


class InvalidTime(MemgraphError, ValueError):
    """A timestamp is not ISO-8601, or lies outside the years 0001-9999 in UTC."""


class NotFound(MemgraphError, LookupError):
    """No entity, observation, relation or key matches what was asked for."""


class ProviderError(MemgraphError):
    """The chat or embedding provider failed."""


class UnknownProvider(ProviderError):
    """No provider is registered under the requested name."""


class MissingCredentials(ProviderError):
    """The provider needs an API key that is not set."""


class ProviderUnavailable(ProviderError):
    """The provider could not be reached or kept failing after retries."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class BadResponse(ProviderError):
    """The provider answered, but the answer could not be used."""

    def __init__(self, message: str, *, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


class StoreError(MemgraphError):
    """The store could not load or persist a scope."""


class StoreConflict(StoreError):
    """Another writer holds the scope, or committed first."""


class StoreCorrupt(StoreError):
    """A stored file is damaged; the message names the file and the position."""

    def __init__(self, message: str, *, path: str = "", position: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.position = position


class StoreUnavailable(StoreError):
    """The backing store (a directory or a database) cannot be reached."""


class ApprovalRequired(MemgraphError):
    """A memory action needs approval; approve it and call again.

    Attributes:
        action: the action's name (``"remember"``, ``"forget"``, ...).
        data: what the action would act on.
    """

    def __init__(self, action: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(
            f"memory action {action!r} needs approval: pass approve=True, "
            "set an approval handler, or pre-approve it with a policy"
        )
        self.action = action
        self.data = dict(data or {})
