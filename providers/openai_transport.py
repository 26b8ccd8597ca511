"""How the OpenAI-compatible provider reaches a server: connection options, retries, drivers.

:class:`ConnectionOptions` is the one home of the keyword arguments that
:class:`~memgraph.providers.openai_compat.OpenAIChatModel` and
:class:`~memgraph.providers.openai_compat.OpenAIEmbedder` share. A
:class:`Connection` owns the SDK clients, the key and the retry policy.

The chat and embeddings logic is written once, as a generator of
:class:`Call` steps (``response = yield Call(...)``); :meth:`Connection.run`
drives it with the synchronous client and :meth:`Connection.arun` with the
asynchronous one, so ``complete``/``acomplete`` and ``embed``/``aembed`` are one
code path each.

Retry policy (the SDK client is built with ``max_retries=0``):

* retried, up to ``max_retries`` times with exponential backoff and a little
  jitter: statuses the server reports as transient (408, 409, 429, 502, 503,
  504, anything with ``Retry-After`` or ``x-should-retry: true``, and 500 from
  a remote server), timeouts on a remote server, connection errors;
* not retried: a status the server does not report as transient (a 500 from a
  server on this machine is usually a request it cannot handle, not an outage),
  ``x-should-retry: false``, and a client-side timeout on a server on this
  machine (the server keeps working on the abandoned request, so a retry would
  only queue behind it);
* a refused ``response_format`` (any 4xx or 5xx whose body names it) is not an
  error here: the step generator is told through :class:`FormatRefused` and
  adapts the request.

Every failure leaves as a :mod:`memgraph.errors` exception chained to a masked
copy of the SDK exception; no message or log line carries the API key.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import ipaddress
import itertools
import json
import logging
import os
import random
import re
import threading
import time
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, Literal, TypedDict, TypeVar, cast
from urllib.parse import urlsplit, urlunsplit

import openai

from memgraph.errors import (
    BadResponse,
    ConfigError,
    MissingCredentials,
    ProviderError,
    ProviderUnavailable,
)

if TYPE_CHECKING:
    import httpx

__all__ = [
    "DEFAULT_BASE_URL",
    "LOCAL_PLACEHOLDER_API_KEY",
    "MAX_RETRY_AFTER",
    "Call",
    "Connection",
    "ConnectionOptions",
    "FormatRefused",
    "SleepFn",
    "Steps",
    "UpstreamError",
    "default_timeout",
    "endpoint_kind",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
LOCAL_PLACEHOLDER_API_KEY = "sk-no-key-required"
"""Sent as the key to local servers (localhost / 127.0.0.1), which need none."""

MAX_RETRY_AFTER = 30.0
"""Longest ``Retry-After`` honoured, in seconds."""

DEFAULT_TIMEOUTS = {"loopback": 300.0, "private": 120.0, "remote": 60.0}
"""Seconds per request when ``timeout`` is not set, by :func:`endpoint_kind`: a model on
this machine is often slow (a small model on a few cores takes 10-60 s per extraction)."""

_RETRYABLE_STATUSES = frozenset({408, 409, 429, 502, 503, 504})
_FORMAT_HINTS = ("response_format", "response format", "json_schema", "json schema", "json_object")
_LOCAL_HOSTS = frozenset({"localhost", "ip6-localhost", "0.0.0.0", "::"})
_KEYLIKE = re.compile(r"\bsk-[A-Za-z0-9_\-*.]{6,}")

log = logging.getLogger("memgraph.providers.openai")

SleepFn = Callable[[float], object]
"""A sleep function; in the async methods an awaitable result is awaited."""

_T = TypeVar("_T")


class ConnectionOptions(TypedDict, total=False):
    """How to reach the server: keyword arguments of both the chat model and the embedder."""

    api_key: str | None
    """The API key; when ``None`` it is read from ``api_key_env`` (a local server needs none)."""
    api_key_env: str
    """The environment variable holding the key (``OPENAI_API_KEY``)."""
    base_url: str | None
    """The API root (``.../v1``); ``None`` for api.openai.com."""
    timeout: float | None
    """Seconds per HTTP attempt; ``None`` for the endpoint's default (:data:`DEFAULT_TIMEOUTS`)."""
    max_retries: int
    """Retries after the first attempt for transient failures (3)."""
    http_client: httpx.Client | None
    """An ``httpx.Client`` for the SDK to use (tests pass one with a ``MockTransport``)."""
    async_http_client: httpx.AsyncClient | None
    """An ``httpx.AsyncClient`` for the async methods."""
    sleep: SleepFn | None
    """Replaces ``time.sleep`` between retries (awaited if it returns an awaitable)."""
    organization: str | None
    """The OpenAI organization header, if any."""
    project: str | None
    """The OpenAI project header, if any."""
    default_headers: Mapping[str, str] | None
    """Extra headers for every request."""
    backoff_base: float
    """First backoff delay in seconds, doubled per attempt (0.5)."""
    backoff_max: float
    """Longest backoff delay in seconds, before jitter (8)."""
    max_retry_after: float
    """Longest ``Retry-After`` honoured, in seconds (:data:`MAX_RETRY_AFTER`)."""


CONNECTION_OPTIONS = frozenset(ConnectionOptions.__annotations__)


@dataclass(frozen=True)
class Call:
    """One request a step generator asks its driver to make."""

    endpoint: Literal["chat", "embeddings"]
    params: dict[str, Any]
    what: str
    """What the request is, for messages (``chat completion with model 'x'``)."""
    format_sent: bool = False
    """Whether the request carries a ``response_format`` the server may refuse."""


Steps = Generator[Call, Any, _T]
"""A request sequence: yields :class:`Call`, receives the SDK response, returns the result."""


class FormatRefused(Exception):
    """Thrown into a step generator: the server refused the request's ``response_format``."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"HTTP {status}: {detail}" if detail else f"HTTP {status}")
        self.status = status
        self.detail = detail


class UpstreamError(Exception):
    """The OpenAI SDK's error, re-raised as a cause with secrets masked."""


# --------------------------------------------------------------------------- helpers


def endpoint_kind(base_url: str | None) -> Literal["loopback", "private", "remote"]:
    """Where ``base_url`` points: this machine, a private network, or elsewhere."""
    if not base_url:
        return "remote"
    host = (urlsplit(base_url).hostname or "").lower()
    if host in _LOCAL_HOSTS or host.endswith(".localhost"):
        return "loopback"
    if host.endswith((".local", ".lan", ".internal", ".home.arpa")):
        return "private"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "remote"
    if address.is_loopback:
        return "loopback"
    return "private" if address.is_private or address.is_link_local else "remote"


def default_timeout(base_url: str | None) -> float:
    """Seconds per request for ``base_url`` when none is configured."""
    return DEFAULT_TIMEOUTS[endpoint_kind(base_url)]


def display_url(base_url: str) -> str:
    """``base_url`` without credentials, query or fragment, for messages."""
    parts = urlsplit(base_url)
    netloc = parts.hostname or ""
    if ":" in netloc:
        netloc = f"[{netloc}]"
    if parts.port is not None:
        netloc = f"{netloc}:{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def _missing_key_message(api_key_env: str, base_url: str) -> str:
    if api_key_env == "OPENAI_API_KEY":
        how = (
            "set the OPENAI_API_KEY environment variable, or set provider.apiKeyEnv in "
            "agency.json to the name of the variable that holds the key"
        )
    else:
        how = (
            f"set the {api_key_env} environment variable (named by provider.apiKeyEnv in "
            "agency.json), or change provider.apiKeyEnv to the variable that holds the key"
        )
    return f"no API key for the OpenAI-compatible provider at {base_url}: {how}"


def _resolve_api_key(api_key: str | None, api_key_env: str, base_url: str | None) -> str:
    """The key to send: explicit, else from the environment, else a local placeholder.

    Raises:
        MissingCredentials: no key is set and ``base_url`` is not a local server.
    """
    if api_key:
        return api_key
    from_env = os.environ.get(api_key_env, "").strip()
    if from_env:
        return from_env
    if endpoint_kind(base_url) == "loopback":
        return LOCAL_PLACEHOLDER_API_KEY
    raise MissingCredentials(
        _missing_key_message(api_key_env, display_url(base_url or DEFAULT_BASE_URL))
    )


def _parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` / ``Retry-After``), if any."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _error_body(exc: openai.APIStatusError) -> dict[str, Any]:
    """The ``error`` object of an OpenAI-style error body (``{}`` when absent)."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return inner
        if isinstance(inner, str):
            return {"message": inner}
    if isinstance(body, str):
        return {"message": body}
    return {}


def _server_message(exc: openai.APIStatusError) -> str:
    """The server's own error message, shortened."""
    detail = _error_body(exc).get("message")
    if not isinstance(detail, str) or not detail:
        try:
            detail = exc.response.text
        except Exception:  # the body may be unread or undecodable
            detail = ""
    detail = " ".join(str(detail).split())
    return detail[:300] + ("..." if len(detail) > 300 else "")


def body_text(exc: openai.APIError) -> str:
    """The error body as text (JSON when it is structured)."""
    if exc.body is None:
        return ""
    if isinstance(exc.body, str):
        return exc.body
    try:
        return json.dumps(exc.body, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(exc.body)


def _names_response_format(exc: openai.APIStatusError) -> bool:
    """Whether an error's body is about the request's ``response_format``."""
    error = _error_body(exc)
    text = " ".join(
        str(part) for part in (error.get("message"), error.get("param"), body_text(exc)) if part
    ).lower()
    return any(hint in text for hint in _FORMAT_HINTS)


def dump(obj: Any) -> str:
    """Best-effort JSON text of an SDK response object."""
    try:
        return str(obj.model_dump_json())
    except Exception:
        return repr(obj)


def check_positive_int(name: str, value: object) -> int:
    """``value`` if it is an int of at least 1, else a :class:`ConfigError` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name} must be a positive integer, got {value!r}")
    return value


# --------------------------------------------------------------------------- connection


class Connection:
    """The SDK clients, the key and the retry policy one model instance uses.

    Args:
        options: see :class:`ConnectionOptions`.

    The API key is read when the connection is built; a missing one raises
    :class:`~memgraph.errors.MissingCredentials` at the first request (a local
    server needs none).

    Raises:
        ConfigError: ``timeout`` or ``max_retries`` is out of range.
    """

    def __init__(self, options: ConnectionOptions) -> None:
        unknown = sorted(set(options) - CONNECTION_OPTIONS)
        if unknown:
            raise TypeError(f"unexpected connection options {unknown}")
        base_url = options.get("base_url")
        timeout = options.get("timeout")
        if timeout is None:
            timeout = default_timeout(base_url)
        max_retries = options.get("max_retries", 3)
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ConfigError(f"max_retries must be a non-negative integer, got {max_retries!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
        api_key = options.get("api_key")
        self.api_key_env = options.get("api_key_env") or "OPENAI_API_KEY"
        self.key_from_settings = bool(api_key)
        # The key is read now when it is there; a missing one is an error only when
        # a request needs it, so commands that never call the model work without it.
        self._api_key: str | None = None
        with contextlib.suppress(MissingCredentials):
            self._api_key = _resolve_api_key(api_key, self.api_key_env, base_url)
        self.base_url = base_url or DEFAULT_BASE_URL
        self.display_url = display_url(self.base_url)
        self.kind = endpoint_kind(self.base_url)
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self._http_client = options.get("http_client")
        self._async_http_client = options.get("async_http_client")
        self._sleep = options.get("sleep")
        headers = options.get("default_headers")
        self._sdk_options: dict[str, Any] = {
            "organization": options.get("organization"),
            "project": options.get("project"),
            "default_headers": dict(headers) if headers else None,
        }
        self._backoff_base = float(options.get("backoff_base", 0.5))
        self._backoff_max = float(options.get("backoff_max", 8.0))
        self._max_retry_after = float(options.get("max_retry_after", MAX_RETRY_AFTER))
        self._random = random.Random()
        self._lock = threading.Lock()
        self._client: openai.OpenAI | None = None
        self._async_client: openai.AsyncOpenAI | None = None
        self._async_loop: asyncio.AbstractEventLoop | None = None

    # -- clients ---------------------------------------------------------------------

    def _key(self) -> str:
        """The API key (read again from the environment if it was missing at first).

        Raises:
            MissingCredentials: no key is set and the server is not local.
        """
        if self._api_key is None:
            self._api_key = _resolve_api_key(None, self.api_key_env, self.base_url)
        return self._api_key

    def _client_kwargs(self) -> dict[str, Any]:
        return {
            "api_key": self._key(),
            "base_url": self.base_url,
            "timeout": self.timeout,
            "max_retries": 0,
            **self._sdk_options,
        }

    def client(self) -> openai.OpenAI:
        """The synchronous SDK client (built on first use)."""
        with self._lock:
            if self._client is None:
                self._client = openai.OpenAI(
                    **self._client_kwargs(), http_client=cast(Any, self._http_client)
                )
            return self._client

    def async_client(self) -> openai.AsyncOpenAI:
        """The asynchronous SDK client of the running event loop."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._async_client is not None and (
                self._async_http_client is not None or self._async_loop is loop
            ):
                return self._async_client
            # First use, or a new event loop: pooled connections belong to their loop.
            self._async_client = openai.AsyncOpenAI(
                **self._client_kwargs(), http_client=cast(Any, self._async_http_client)
            )
            self._async_loop = loop
            return self._async_client

    def close(self) -> None:
        """Close the synchronous client."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    async def aclose(self) -> None:
        """Close both clients."""
        with self._lock:
            client, self._async_client, self._async_loop = self._async_client, None, None
        if client is not None:
            await client.close()
        self.close()

    # -- safety ----------------------------------------------------------------------

    def redact(self, text: str) -> str:
        """``text`` with the API key (and anything that looks like a key) masked."""
        if self._api_key and self._api_key != LOCAL_PLACEHOLDER_API_KEY:
            text = text.replace(self._api_key, "***")
        return _KEYLIKE.sub("***", text)

    def masked(self, exc: BaseException) -> UpstreamError:
        """The SDK error as a cause that is safe to log (the server may quote the key)."""
        masked = UpstreamError(f"{type(exc).__name__}: {self.redact(str(exc))}")
        masked.__suppress_context__ = True
        return masked

    # -- retry policy ------------------------------------------------------------------

    def _backoff(self, attempt: int) -> float:
        delay = min(self._backoff_max, self._backoff_base * (2.0 ** (attempt - 1)))
        return delay + self._random.uniform(0.0, delay * 0.25)

    def _gave_up(self, what: str, why: str, attempt: int) -> str:
        tries = "attempt" if attempt == 1 else "attempts"
        return self.redact(
            f"{what} failed at {self.display_url}: {why}; gave up after {attempt} {tries}"
        )

    def _retry_or(self, error: Exception, attempt: int, what: str, why: str) -> float | Exception:
        """The backoff delay before the next attempt, or ``error`` when none is left."""
        if attempt > self.max_retries:
            return error
        delay = self._backoff(attempt)
        log.info(
            "%s: %s; retrying in %.2f s (attempt %d of %d)",
            what, self.redact(why), delay, attempt, self.max_retries + 1,
        )  # fmt: skip
        return delay

    def decide(self, exc: Exception, attempt: int, call: Call, model: str) -> float | Exception:
        """After a failed attempt: the delay before the next one, or the error to raise."""
        what = call.what
        if isinstance(exc, openai.APIStatusError):
            return self._decide_status(exc, attempt, call, model)
        if isinstance(exc, openai.APITimeoutError):
            why = f"timed out after {self.timeout:g} s"
            if self.kind == "loopback":
                return ProviderUnavailable(
                    self.redact(
                        f"{what} at {self.display_url} {why}; not retried, because the server "
                        "on this machine is still working on the request and a retry would wait "
                        "behind it. Raise provider.timeout (seconds) for a slow local model"
                    )
                )
            return self._retry_or(
                ProviderUnavailable(self._gave_up(what, why, attempt)), attempt, what, why
            )
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            why = "could not connect"
            if cause is not None:
                why += (
                    f" ({type(cause).__name__}: {cause})"
                    if str(cause)
                    else f" ({type(cause).__name__})"
                )
            return self._retry_or(
                ProviderUnavailable(self._gave_up(what, why, attempt)), attempt, what, why
            )
        if isinstance(exc, openai.APIResponseValidationError):
            return BadResponse(
                self.redact(f"{what}: {self.display_url} sent a reply that does not fit the API"),
                raw=self.redact(body_text(exc)),
            )
        return ProviderError(self.redact(f"{what} failed at {self.display_url}: {exc}"))

    def _transient(self, exc: openai.APIStatusError) -> bool:
        """Whether the server reports the failure as worth retrying."""
        headers = exc.response.headers
        should = (headers.get("x-should-retry") or "").strip().lower()
        if should in ("true", "false"):
            return should == "true"
        status = exc.status_code
        if status in _RETRYABLE_STATUSES or _parse_retry_after(headers) is not None:
            return True
        return status >= 500 and self.kind != "loopback"

    def _decide_status(
        self, exc: openai.APIStatusError, attempt: int, call: Call, model: str
    ) -> float | Exception:
        status, what = exc.status_code, call.what
        detail = self.redact(_server_message(exc))
        said = f": {detail}" if detail else ""
        if call.format_sent and status >= 400 and _names_response_format(exc):
            return FormatRefused(status, detail)
        if status == 429 and _error_body(exc).get("code") == "insufficient_quota":
            return ProviderUnavailable(
                self.redact(
                    f"{what}: the account behind the API key for {self.display_url} is out of quota (HTTP 429){said}"
                ),
                status=status,
            )
        if status in (401, 403):
            return self._credentials_error(status, what, said)
        if status == 404:
            return ProviderError(
                self.redact(
                    f"{what}: model {model!r} not found at {self.display_url} (HTTP 404){said}; "
                    "check the model name and base_url"
                )
            )
        if status >= 500 or status in _RETRYABLE_STATUSES:
            if not self._transient(exc):
                return ProviderUnavailable(
                    self.redact(
                        f"{what} failed at {self.display_url}: HTTP {status}{said}; not retried "
                        "(the server did not report it as transient)"
                    ),
                    status=status,
                )
            if attempt > self.max_retries:
                return ProviderUnavailable(
                    self._gave_up(what, f"HTTP {status}{said}", attempt), status=status
                )
            asked = _parse_retry_after(exc.response.headers)
            delay = self._backoff(attempt) if asked is None else min(asked, self._max_retry_after)
            log.info(
                "%s: HTTP %d from %s; retrying in %.2f s (attempt %d of %d)",
                what, status, self.display_url, delay, attempt, self.max_retries + 1,
            )  # fmt: skip
            return delay
        return BadResponse(
            self.redact(f"{what}: {self.display_url} refused the request (HTTP {status}){said}"),
            raw=self.redact(body_text(exc)),
        )

    def _credentials_error(self, status: int, what: str, said: str) -> MissingCredentials:
        if self.key_from_settings:
            where = (
                f"check provider.api_key, or remove it and set the {self.api_key_env} "
                "environment variable"
            )
        else:
            where = (
                f"set the {self.api_key_env} environment variable to a valid key (or set "
                "provider.apiKeyEnv in agency.json to the variable that holds it)"
            )
        verb = "rejected the API key" if status == 401 else "refused access with this API key"
        return MissingCredentials(
            self.redact(f"{what}: {self.display_url} {verb} (HTTP {status}){said}; {where}")
        )

    # -- drivers -----------------------------------------------------------------------

    def _create(self, client: openai.OpenAI | openai.AsyncOpenAI, call: Call) -> Any:
        resource: Any = client.chat.completions if call.endpoint == "chat" else client.embeddings
        return resource.create(**call.params)

    def call(self, call: Call, model: str) -> Any:
        """Make ``call`` with the retry policy; SDK errors leave as memgraph errors.

        Raises:
            FormatRefused: the server refused the call's ``response_format``.
        """
        for attempt in itertools.count(1):
            try:
                return self._create(self.client(), call)
            except openai.OpenAIError as exc:
                outcome = self.decide(exc, attempt, call, model)
                if isinstance(outcome, Exception):
                    raise outcome from self.masked(exc)
            (time.sleep if self._sleep is None else self._sleep)(outcome)
        raise AssertionError("unreachable")  # pragma: no cover

    async def acall(self, call: Call, model: str) -> Any:
        """Async twin of :meth:`call`."""
        for attempt in itertools.count(1):
            try:
                return await self._create(self.async_client(), call)
            except openai.OpenAIError as exc:
                outcome = self.decide(exc, attempt, call, model)
                if isinstance(outcome, Exception):
                    raise outcome from self.masked(exc)
            if self._sleep is None:
                await asyncio.sleep(outcome)
            else:
                result = self._sleep(outcome)
                if inspect.isawaitable(result):
                    await result
        raise AssertionError("unreachable")  # pragma: no cover

    def run(self, steps: Steps[_T], model: str) -> _T:
        """Drive a step generator with the synchronous client; return its result."""
        try:
            call = next(steps)
            while True:
                try:
                    response = self.call(call, model)
                except FormatRefused as refused:
                    call = steps.throw(refused)
                else:
                    call = steps.send(response)
        except StopIteration as done:
            return cast(_T, done.value)

    async def arun(self, steps: Steps[_T], model: str) -> _T:
        """Drive a step generator with the asynchronous client; return its result."""
        try:
            call = next(steps)
            while True:
                try:
                    response = await self.acall(call, model)
                except FormatRefused as refused:
                    call = steps.throw(refused)
                else:
                    call = steps.send(response)
        except StopIteration as done:
            return cast(_T, done.value)
