"""The OpenAI-compatible provider: chat completions and embeddings over the OpenAI API.

Works with the official OpenAI API and with any server that speaks its protocol
(Ollama, vLLM, the llama.cpp server, LM Studio, ...) through ``base_url``.
Importing this module registers the provider as ``"openai"``::

    from memgraph.llm_calls.provider import resolve_provider

    provider = resolve_provider("openai:gpt-4o-mini")
    provider = resolve_provider("openai:llama3.1", base_url="http://localhost:11434/v1")

Retries are done here, not in the SDK (the SDK client is built with
``max_retries=0``): 429, 408, 409 and 5xx (honouring ``Retry-After``, capped
at 30 s), timeouts and connection errors are retried up to ``max_retries``
times with exponential backoff and a little jitter; the sleep function is injectable so tests never
sleep. Every failure leaves this module as a :mod:`memgraph.errors` exception,
chained to the SDK exception, and no message or log line ever carries the API
key.

``ProviderSettings.options`` keys understood by the factory: ``dimensions``,
``embedding_batch_size``, ``encoding_format``, ``chat_options`` (default
keyword options for every completion, e.g. ``{"temperature": 0}``),
``organization``, ``project``, ``default_headers``, and for tests
``http_client``, ``async_http_client`` and ``sleep``.

This is the only module in memgraph that imports the ``openai`` SDK.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import functools
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
from collections.abc import Awaitable, Callable, Mapping, Sequence
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import openai

from memgraph.errors import (
    BadResponse,
    ConfigError,
    MissingCredentials,
    ProviderError,
    ProviderUnavailable,
)
from memgraph.llm_calls.provider import (
    Completion,
    JsonSchema,
    Message,
    Provider,
    ProviderSettings,
    Usage,
    register_provider,
)

if TYPE_CHECKING:
    import httpx
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_CHAT_MODEL",
    "DEFAULT_EMBEDDING_BATCH_SIZE",
    "DEFAULT_EMBEDDING_MODEL",
    "LOCAL_PLACEHOLDER_API_KEY",
    "OpenAIChatModel",
    "OpenAIEmbedder",
    "create_provider",
]

DEFAULT_CHAT_MODEL = "gpt-4o-mini"
DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_EMBEDDING_BATCH_SIZE = 512
LOCAL_PLACEHOLDER_API_KEY = "sk-no-key-required"
"""Sent as the key to local servers (localhost / 127.0.0.1), which need none."""

MAX_RETRY_AFTER = 30.0
"""Longest ``Retry-After`` we honour, in seconds."""

_KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
_RETRYABLE_STATUSES = frozenset({408, 409, 429})
_SCHEMA_REJECTION_HINTS = (
    "response_format",
    "response format",
    "json_schema",
    "json schema",
    "structured output",
)
_LOCAL_HOSTS = frozenset({"localhost", "ip6-localhost", "0.0.0.0", "::"})
_KEYLIKE = re.compile(r"\bsk-[A-Za-z0-9_\-*.]{6,}")
_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)

log = logging.getLogger("memgraph.providers.openai")

SleepFn = Callable[[float], object]
"""A sleep function; in ``acomplete``/``aembed`` an awaitable result is awaited."""

_T = TypeVar("_T")


class _JsonSchemaRejected(Exception):
    """Internal: the server refused a ``json_schema`` response_format (HTTP 400)."""


# --------------------------------------------------------------------------- helpers


def _is_local(base_url: str | None) -> bool:
    """Whether ``base_url`` points at this machine (a local server needs no key)."""
    if not base_url:
        return False
    host = (urlsplit(base_url).hostname or "").lower()
    if host in _LOCAL_HOSTS or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _display_url(base_url: str) -> str:
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
    if _is_local(base_url):
        return LOCAL_PLACEHOLDER_API_KEY
    raise MissingCredentials(
        _missing_key_message(api_key_env, _display_url(base_url or DEFAULT_BASE_URL))
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


def _body_text(exc: openai.APIError) -> str:
    if exc.body is None:
        return ""
    if isinstance(exc.body, str):
        return exc.body
    try:
        return json.dumps(exc.body, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(exc.body)


def _is_schema_rejection(exc: openai.APIStatusError) -> bool:
    if exc.status_code not in (400, 422):
        return False
    error = _error_body(exc)
    text = " ".join(
        str(part) for part in (error.get("message"), error.get("param"), _body_text(exc)) if part
    ).lower()
    return any(hint in text for hint in _SCHEMA_REJECTION_HINTS)


def _dump(obj: Any) -> str:
    """Best-effort JSON text of an SDK response object."""
    try:
        return str(obj.model_dump_json())
    except Exception:
        return repr(obj)


def _plain(value: Any) -> Any:
    """``value`` with every mapping turned into a dict and every sequence into a list."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _schema_instruction(schema: JsonSchema) -> str:
    return (
        f"Reply with one JSON object only (no prose, no code fences) that follows this JSON "
        f"schema, named {schema.name}:\n{json.dumps(_plain(schema.schema), ensure_ascii=False)}"
    )


def _with_schema_in_system_prompt(messages: Sequence[Message], schema: JsonSchema) -> list[Message]:
    """Copy ``messages`` with the schema appended to the system prompt (added if absent)."""
    out = [dict(message) for message in messages]
    instruction = _schema_instruction(schema)
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


def _strip_fence(text: str) -> str:
    match = _FENCE.match(text)
    return match.group(1).strip() if match else text


def _check_positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name} must be a positive integer, got {value!r}")
    return value


# --------------------------------------------------------------------------- transport


class _Connection:
    """The SDK clients, the key and the retry policy one model instance uses."""

    def __init__(
        self,
        *,
        api_key: str | None,
        api_key_env: str,
        base_url: str | None,
        timeout: float,
        max_retries: int,
        http_client: httpx.Client | None,
        async_http_client: httpx.AsyncClient | None,
        sleep: SleepFn | None,
        organization: str | None,
        project: str | None,
        default_headers: Mapping[str, str] | None,
        backoff_base: float,
        backoff_max: float,
        max_retry_after: float,
    ) -> None:
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ConfigError(f"max_retries must be a non-negative integer, got {max_retries!r}")
        if not timeout or timeout <= 0:
            raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.api_key_env = api_key_env
        self.key_from_settings = bool(api_key)
        # The key is read now when it is there; a missing one is an error only when
        # a request needs it, so commands that never call the model work without it.
        self._api_key: str | None = None
        with contextlib.suppress(MissingCredentials):
            self._api_key = _resolve_api_key(api_key, api_key_env, base_url)
        self.base_url = base_url or DEFAULT_BASE_URL
        self.display_url = _display_url(self.base_url)
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self._http_client = http_client
        self._async_http_client = async_http_client
        self._sleep = sleep
        self._organization = organization
        self._project = project
        self._default_headers = dict(default_headers) if default_headers else None
        self._backoff_base = backoff_base
        self._backoff_max = backoff_max
        self._max_retry_after = max_retry_after
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
            "organization": self._organization,
            "project": self._project,
            "default_headers": self._default_headers,
        }

    def client(self) -> openai.OpenAI:
        with self._lock:
            if self._client is None:
                self._client = openai.OpenAI(
                    **self._client_kwargs(), http_client=cast(Any, self._http_client)
                )
            return self._client

    def async_client(self) -> openai.AsyncOpenAI:
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
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    async def aclose(self) -> None:
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

    # -- retry policy ------------------------------------------------------------------

    def _backoff(self, attempt: int) -> float:
        delay = min(self._backoff_max, self._backoff_base * (2.0 ** (attempt - 1)))
        return delay + self._random.uniform(0.0, delay * 0.25)

    def _attempts(self) -> int:
        return self.max_retries + 1

    def _gave_up(self, what: str, why: str, attempt: int) -> str:
        tries = "attempt" if attempt == 1 else "attempts"
        return self.redact(
            f"{what} failed at {self.display_url}: {why}; gave up after {attempt} {tries}"
        )

    def decide(
        self, exc: Exception, attempt: int, what: str, *, model: str, schema_sent: bool
    ) -> float | Exception:
        """After a failed attempt: the delay before the next one, or the error to raise."""
        if isinstance(exc, openai.APIStatusError):
            return self._decide_status(exc, attempt, what, model=model, schema_sent=schema_sent)
        if isinstance(exc, openai.APITimeoutError):
            why = f"timed out after {self.timeout:g} s"
        elif isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            why = "could not connect"
            if cause is not None:
                why += (
                    f" ({type(cause).__name__}: {cause})"
                    if str(cause)
                    else f" ({type(cause).__name__})"
                )
        elif isinstance(exc, openai.APIResponseValidationError):
            return BadResponse(
                self.redact(f"{what}: {self.display_url} sent a reply that does not fit the API"),
                raw=self.redact(_body_text(exc)),
            )
        else:
            return ProviderError(self.redact(f"{what} failed at {self.display_url}: {exc}"))
        if attempt >= self._attempts():
            return ProviderUnavailable(self._gave_up(what, why, attempt))
        delay = self._backoff(attempt)
        log.info(
            "%s: %s; retrying in %.2f s (attempt %d of %d)",
            what,
            self.redact(why),
            delay,
            attempt,
            self._attempts(),
        )
        return delay

    def _decide_status(
        self, exc: openai.APIStatusError, attempt: int, what: str, *, model: str, schema_sent: bool
    ) -> float | Exception:
        status = exc.status_code
        detail = self.redact(_server_message(exc))
        said = f": {detail}" if detail else ""
        if status == 429 and _error_body(exc).get("code") == "insufficient_quota":
            return ProviderUnavailable(
                self.redact(
                    f"{what}: the account behind the API key for {self.display_url} is out of quota (HTTP 429){said}"
                ),
                status=status,
            )
        if status in _RETRYABLE_STATUSES or status >= 500:
            if attempt >= self._attempts():
                return ProviderUnavailable(
                    self._gave_up(what, f"HTTP {status}{said}", attempt), status=status
                )
            asked = _parse_retry_after(exc.response.headers)
            delay = self._backoff(attempt) if asked is None else min(asked, self._max_retry_after)
            log.info(
                "%s: HTTP %d from %s; retrying in %.2f s (attempt %d of %d)",
                what, status, self.display_url, delay, attempt, self._attempts(),
            )  # fmt: skip
            return delay
        if status in (401, 403):
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
        if status == 404:
            return ProviderError(
                self.redact(
                    f"{what}: model {model!r} not found at {self.display_url} (HTTP 404){said}; "
                    "check the model name and base_url"
                )
            )
        if schema_sent and _is_schema_rejection(exc):
            return _JsonSchemaRejected(detail)
        return BadResponse(
            self.redact(f"{what}: {self.display_url} refused the request (HTTP {status}){said}"),
            raw=self.redact(_body_text(exc)),
        )

    def masked(self, exc: BaseException) -> UpstreamError:
        """The SDK error as a cause that is safe to log (the server may quote the key)."""
        masked = UpstreamError(f"{type(exc).__name__}: {self.redact(str(exc))}")
        masked.__suppress_context__ = True
        return masked

    # -- loops -------------------------------------------------------------------------

    def call(self, fn: Callable[[], _T], what: str, *, model: str, schema_sent: bool = False) -> _T:
        """Run ``fn`` with the retry policy; SDK errors leave as memgraph errors."""
        for attempt in itertools.count(1):
            try:
                return fn()
            except openai.OpenAIError as exc:
                outcome = self.decide(exc, attempt, what, model=model, schema_sent=schema_sent)
                if isinstance(outcome, Exception):
                    raise outcome from self.masked(exc)
            (time.sleep if self._sleep is None else self._sleep)(outcome)
        raise AssertionError("unreachable")  # pragma: no cover

    async def acall(
        self, fn: Callable[[], Awaitable[_T]], what: str, *, model: str, schema_sent: bool = False
    ) -> _T:
        """Async twin of :meth:`call`."""
        for attempt in itertools.count(1):
            try:
                return await fn()
            except openai.OpenAIError as exc:
                outcome = self.decide(exc, attempt, what, model=model, schema_sent=schema_sent)
                if isinstance(outcome, Exception):
                    raise outcome from self.masked(exc)
            if self._sleep is None:
                await asyncio.sleep(outcome)
            else:
                result = self._sleep(outcome)
                if inspect.isawaitable(result):
                    await result
        raise AssertionError("unreachable")  # pragma: no cover


_Self = TypeVar("_Self", bound="_ClientOwner")


class _ClientOwner:
    """Shared constructor, lifecycle and context-manager plumbing."""

    model: str

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        api_key_env: str,
        base_url: str | None,
        timeout: float,
        max_retries: int,
        http_client: httpx.Client | None,
        async_http_client: httpx.AsyncClient | None,
        sleep: SleepFn | None,
        organization: str | None,
        project: str | None,
        default_headers: Mapping[str, str] | None,
        backoff_base: float,
        backoff_max: float,
        max_retry_after: float,
    ) -> None:
        if not model or not isinstance(model, str):
            raise ConfigError(f"model must be a non-empty string, got {model!r}")
        self.model = model
        self._conn = _Connection(
            api_key=api_key,
            api_key_env=api_key_env,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            http_client=http_client,
            async_http_client=async_http_client,
            sleep=sleep,
            organization=organization,
            project=project,
            default_headers=default_headers,
            backoff_base=backoff_base,
            backoff_max=backoff_max,
            max_retry_after=max_retry_after,
        )

    @property
    def base_url(self) -> str:
        """The API base URL requests go to."""
        return self._conn.base_url

    def close(self) -> None:
        """Close the synchronous HTTP client (an injected ``http_client`` too)."""
        self._conn.close()

    async def aclose(self) -> None:
        """Close both HTTP clients; call it inside the event loop that used ``acomplete``."""
        await self._conn.aclose()

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self: _Self) -> _Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self._conn.display_url!r})"


# --------------------------------------------------------------------------- chat


class UpstreamError(Exception):
    """The OpenAI SDK's error, re-raised as a cause with secrets masked."""


class OpenAIChatModel(_ClientOwner):
    """A :class:`~memgraph.llm_calls.provider.ChatModel` backed by ``/chat/completions``.

    The API key is resolved when the model is built: ``api_key``, else the
    environment variable named by ``api_key_env``, else (only for a local
    ``base_url``) a placeholder.

    Structured output uses ``response_format={"type": "json_schema", ...}``.
    When a server refuses that with HTTP 400, the call is repeated once in
    JSON mode (``{"type": "json_object"}``) with the schema appended to the
    system prompt, and this instance keeps using JSON mode from then on.

    Args:
        model: the chat model name.
        api_key: the API key; when ``None`` it is read from ``api_key_env``.
        api_key_env: the environment variable holding the key.
        base_url: the API root (``.../v1``); ``None`` for api.openai.com.
        timeout: seconds per HTTP attempt.
        max_retries: retries after the first attempt for transient failures.
        http_client: an ``httpx.Client`` (or ``httpx2.Client``) for the SDK to use.
        async_http_client: an ``httpx.AsyncClient`` (or ``httpx2.AsyncClient``) for
            ``acomplete``.
        sleep: replaces ``time.sleep`` between retries (awaited if it returns an
            awaitable in ``acomplete``).
        default_options: keyword options sent with every completion
            (``temperature``, ``max_tokens``, ...); per-call options win.
        organization: the OpenAI organization header, if any.
        project: the OpenAI project header, if any.
        default_headers: extra headers for every request.
        backoff_base: first backoff delay in seconds, doubled per attempt.
        backoff_max: longest backoff delay in seconds (before jitter).
        max_retry_after: longest ``Retry-After`` honoured, in seconds.

    Raises:
        MissingCredentials: no API key is set and ``base_url`` is not local.
        ConfigError: a numeric setting is out of range.
    """

    def __init__(
        self,
        model: str = DEFAULT_CHAT_MODEL,
        *,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        http_client: httpx.Client | None = None,
        async_http_client: httpx.AsyncClient | None = None,
        sleep: SleepFn | None = None,
        default_options: Mapping[str, Any] | None = None,
        organization: str | None = None,
        project: str | None = None,
        default_headers: Mapping[str, str] | None = None,
        backoff_base: float = 0.5,
        backoff_max: float = 8.0,
        max_retry_after: float = MAX_RETRY_AFTER,
    ) -> None:
        super().__init__(
            model,
            api_key=api_key,
            api_key_env=api_key_env,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            http_client=http_client,
            async_http_client=async_http_client,
            sleep=sleep,
            organization=organization,
            project=project,
            default_headers=default_headers,
            backoff_base=backoff_base,
            backoff_max=backoff_max,
            max_retry_after=max_retry_after,
        )
        self.default_options: dict[str, Any] = dict(default_options or {})
        self._json_schema_supported = True

    @property
    def json_schema_supported(self) -> bool:
        """False once the server refused ``json_schema`` and this model fell back to JSON mode."""
        return self._json_schema_supported

    def _request(
        self, messages: Sequence[Message], schema: JsonSchema | None, options: Mapping[str, Any]
    ) -> tuple[dict[str, Any], bool]:
        """The ``create`` keyword arguments, and whether they carry a json_schema format."""
        request: dict[str, Any] = {**self.default_options, **options}
        request["model"] = self.model
        if schema is None:
            request["messages"] = [dict(message) for message in messages]
            return request, False
        if self._json_schema_supported:
            request["messages"] = [dict(message) for message in messages]
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": schema.name,
                    "schema": _plain(schema.schema),
                    "strict": schema.strict,
                },
            }
            return request, True
        request["messages"] = _with_schema_in_system_prompt(messages, schema)
        request["response_format"] = {"type": "json_object"}
        return request, False

    def _downgrade(self, reason: str) -> None:
        if self._json_schema_supported:
            self._json_schema_supported = False
            log.warning(
                "%s refused json_schema structured output for model %r (%s); using JSON mode "
                "with the schema in the system prompt from now on",
                self._conn.display_url,
                self.model,
                self._conn.redact(reason),
            )

    def _what(self) -> str:
        return f"chat completion with model {self.model!r}"

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: JsonSchema | None = None,
        **options: Any,
    ) -> Completion:
        """Complete ``messages``; with ``schema``, the reply text is JSON that follows it.

        Args:
            messages: the conversation, OpenAI-shaped dicts.
            schema: when given, ask for structured output following it.
            **options: passed to ``chat.completions.create`` (``tools``,
                ``tool_choice``, ``temperature``, ``max_tokens``, ...).

        Returns:
            The completion, with text, model, usage, tool calls and finish reason.

        Raises:
            ProviderUnavailable: timeouts, connection errors, 429/5xx after the retries.
            MissingCredentials: the server rejected the key (HTTP 401/403).
            BadResponse: the request was refused (other 4xx) or the reply is unusable.
            ProviderError: the model does not exist (HTTP 404), or another SDK failure.
        """
        client = self._conn.client()
        request, schema_sent = self._request(messages, schema, options)
        create = cast(Any, client.chat.completions).create
        try:
            response = self._conn.call(
                lambda: create(**request), self._what(), model=self.model, schema_sent=schema_sent
            )
        except _JsonSchemaRejected as exc:
            assert schema is not None
            self._downgrade(str(exc))
            request, _ = self._request(messages, schema, options)
            response = self._conn.call(lambda: create(**request), self._what(), model=self.model)
        return self._parse(response, json_mode=schema is not None)

    async def acomplete(
        self,
        messages: Sequence[Message],
        *,
        schema: JsonSchema | None = None,
        **options: Any,
    ) -> Completion:
        """Async twin of :meth:`complete`, on ``openai.AsyncOpenAI``.

        Args:
            messages: the conversation, OpenAI-shaped dicts.
            schema: when given, ask for structured output following it.
            **options: passed to ``chat.completions.create``.

        Returns:
            The completion.

        Raises:
            ProviderUnavailable: timeouts, connection errors, 429/5xx after the retries.
            MissingCredentials: the server rejected the key (HTTP 401/403).
            BadResponse: the request was refused (other 4xx) or the reply is unusable.
            ProviderError: the model does not exist (HTTP 404), or another SDK failure.
        """
        client = self._conn.async_client()
        request, schema_sent = self._request(messages, schema, options)
        create = cast(Any, client.chat.completions).create
        try:
            response = await self._conn.acall(
                lambda: create(**request), self._what(), model=self.model, schema_sent=schema_sent
            )
        except _JsonSchemaRejected as exc:
            assert schema is not None
            self._downgrade(str(exc))
            request, _ = self._request(messages, schema, options)
            response = await self._conn.acall(
                lambda: create(**request), self._what(), model=self.model
            )
        return self._parse(response, json_mode=schema is not None)

    def _parse(self, response: Any, *, json_mode: bool) -> Completion:
        what = self._what()
        choices = getattr(response, "choices", None)
        if not choices:
            raise BadResponse(
                f"{what}: {self._conn.display_url} sent a reply without choices",
                raw=self._conn.redact(_dump(response)),
            )
        choice = choices[0]
        message = getattr(choice, "message", None)
        if message is None:
            raise BadResponse(
                f"{what}: {self._conn.display_url} sent a choice without a message",
                raw=self._conn.redact(_dump(response)),
            )
        text = getattr(message, "content", None) or ""
        tool_calls = tuple(
            cast(dict[str, Any], call.model_dump(mode="json", exclude_none=True))
            if hasattr(call, "model_dump")
            else dict(call)
            for call in (getattr(message, "tool_calls", None) or ())
        )
        if not text and not tool_calls:
            refusal = getattr(message, "refusal", None)
            reason = f"the model refused: {refusal}" if refusal else "the reply has no content"
            raise BadResponse(
                self._conn.redact(f"{what}: {reason}"), raw=self._conn.redact(_dump(response))
            )
        if json_mode and not self._json_schema_supported:
            text = _strip_fence(text)
        usage = getattr(response, "usage", None)
        return Completion(
            text=text,
            model=getattr(response, "model", None) or self.model,
            usage=Usage(
                prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            ),
            tool_calls=tool_calls,
            finish_reason=getattr(choice, "finish_reason", None),
        )


# --------------------------------------------------------------------------- embeddings


class OpenAIEmbedder(_ClientOwner):
    """An :class:`~memgraph.llm_calls.provider.Embedder` backed by ``/embeddings``.

    Inputs are sent in batches of at most ``batch_size`` texts; rows come back
    in input order as a float32 array. Empty strings are sent as a single
    space (the API refuses empty input).

    Args:
        model: the embedding model name.
        dimensions: ask for vectors of this size (``text-embedding-3`` and later).
        batch_size: most inputs per request.
        encoding_format: ``"float"`` (understood by every server) or ``"base64"``
            (smaller replies from api.openai.com).
        api_key: the API key; when ``None`` it is read from ``api_key_env``.
        api_key_env: the environment variable holding the key.
        base_url: the API root (``.../v1``); ``None`` for api.openai.com.
        timeout: seconds per HTTP attempt.
        max_retries: retries after the first attempt for transient failures.
        http_client: an ``httpx.Client`` (or ``httpx2.Client``) for the SDK to use.
        async_http_client: an ``httpx.AsyncClient`` (or ``httpx2.AsyncClient``) for
            ``aembed``.
        sleep: replaces ``time.sleep`` between retries.
        organization: the OpenAI organization header, if any.
        project: the OpenAI project header, if any.
        default_headers: extra headers for every request.
        backoff_base: first backoff delay in seconds, doubled per attempt.
        backoff_max: longest backoff delay in seconds (before jitter).
        max_retry_after: longest ``Retry-After`` honoured, in seconds.

    Raises:
        MissingCredentials: no API key is set and ``base_url`` is not local.
        ConfigError: ``batch_size``, ``dimensions`` or another setting is out of range.
    """

    def __init__(
        self,
        model: str = DEFAULT_EMBEDDING_MODEL,
        *,
        dimensions: int | None = None,
        batch_size: int = DEFAULT_EMBEDDING_BATCH_SIZE,
        encoding_format: Literal["float", "base64"] = "float",
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        http_client: httpx.Client | None = None,
        async_http_client: httpx.AsyncClient | None = None,
        sleep: SleepFn | None = None,
        organization: str | None = None,
        project: str | None = None,
        default_headers: Mapping[str, str] | None = None,
        backoff_base: float = 0.5,
        backoff_max: float = 8.0,
        max_retry_after: float = MAX_RETRY_AFTER,
    ) -> None:
        super().__init__(
            model,
            api_key=api_key,
            api_key_env=api_key_env,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            http_client=http_client,
            async_http_client=async_http_client,
            sleep=sleep,
            organization=organization,
            project=project,
            default_headers=default_headers,
            backoff_base=backoff_base,
            backoff_max=backoff_max,
            max_retry_after=max_retry_after,
        )
        self.dimensions = (
            None if dimensions is None else _check_positive_int("dimensions", dimensions)
        )
        self.batch_size = _check_positive_int("batch_size", batch_size)
        if encoding_format not in ("float", "base64"):
            raise ConfigError(
                f"encoding_format must be 'float' or 'base64', got {encoding_format!r}"
            )
        self.encoding_format: Literal["float", "base64"] = encoding_format
        self._dimension: int | None = self.dimensions or _KNOWN_DIMENSIONS.get(model)

    @property
    def dimension(self) -> int | None:
        """The vector size, once known (from ``dimensions``, the model, or a reply)."""
        return self._dimension

    def _batches(self, texts: Sequence[str]) -> list[list[str]]:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of strings, not a single string")
        cleaned = [text if text else " " for text in texts]
        return [cleaned[i : i + self.batch_size] for i in range(0, len(cleaned), self.batch_size)]

    def _params(self, batch: list[str]) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "input": batch,
            "encoding_format": self.encoding_format,
        }
        if self.dimensions is not None:
            params["dimensions"] = self.dimensions
        return params

    def _what(self, number: int, total: int) -> str:
        suffix = f" (batch {number} of {total})" if total > 1 else ""
        return f"embeddings request with model {self.model!r}{suffix}"

    def _empty(self) -> Vectors:
        return np.zeros((0, self._dimension or 0), dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``, batching requests; rows follow the input order.

        Args:
            texts: the texts to embed.

        Returns:
            A float32 array of shape ``(len(texts), dimension)``; ``(0, d)`` (or
            ``(0, 0)`` while the dimension is unknown) for no texts, without a request.

        Raises:
            ProviderUnavailable: timeouts, connection errors, 429/5xx after the retries.
            MissingCredentials: the server rejected the key (HTTP 401/403).
            BadResponse: the request was refused, or the reply has the wrong number or size
                of vectors.
            ProviderError: the model does not exist (HTTP 404), or another SDK failure.
            TypeError: ``texts`` is a single string.
        """
        batches = self._batches(texts)
        if not batches:
            return self._empty()
        create = cast(Any, self._conn.client().embeddings).create
        rows: list[Vectors] = []
        for number, batch in enumerate(batches, 1):
            what = self._what(number, len(batches))
            params = self._params(batch)
            response = self._conn.call(functools.partial(create, **params), what, model=self.model)
            rows.append(self._parse(response, len(batch), what))
        return self._stack(rows)

    async def aembed(self, texts: Sequence[str]) -> Vectors:
        """Async twin of :meth:`embed`, on ``openai.AsyncOpenAI``.

        Args:
            texts: the texts to embed.

        Returns:
            A float32 array of shape ``(len(texts), dimension)``.

        Raises:
            ProviderUnavailable: timeouts, connection errors, 429/5xx after the retries.
            MissingCredentials: the server rejected the key (HTTP 401/403).
            BadResponse: the request was refused or the reply is unusable.
            ProviderError: the model does not exist (HTTP 404), or another SDK failure.
            TypeError: ``texts`` is a single string.
        """
        batches = self._batches(texts)
        if not batches:
            return self._empty()
        create = cast(Any, self._conn.async_client().embeddings).create
        rows: list[Vectors] = []
        for number, batch in enumerate(batches, 1):
            what = self._what(number, len(batches))
            params = self._params(batch)
            response = await self._conn.acall(
                functools.partial(create, **params), what, model=self.model
            )
            rows.append(self._parse(response, len(batch), what))
        return self._stack(rows)

    def _stack(self, rows: list[Vectors]) -> Vectors:
        widths = {block.shape[1] for block in rows}
        if len(widths) > 1:
            raise BadResponse(
                f"embeddings with model {self.model!r}: batches came back with different "
                f"vector sizes {sorted(widths)}"
            )
        out = rows[0] if len(rows) == 1 else np.concatenate(rows, axis=0)
        self._dimension = int(out.shape[1])
        return out

    def _parse(self, response: Any, expected: int, what: str) -> Vectors:
        data = getattr(response, "data", None)
        if not data or len(data) != expected:
            got = len(data) if data else 0
            raise BadResponse(
                f"{what}: expected {expected} vectors from {self._conn.display_url}, got {got}",
                raw=self._conn.redact(_dump(response)),
            )
        try:
            items = sorted(data, key=lambda item: int(getattr(item, "index", 0) or 0))
            if [int(getattr(item, "index", i) or 0) for i, item in enumerate(items)] != list(
                range(expected)
            ):
                # Servers that omit or repeat ``index``: trust the order they sent.
                items = list(data)
            vectors = [self._vector(item.embedding) for item in items]
            block = np.stack(vectors) if vectors else np.zeros((0, 0), dtype=np.float32)
        except (AttributeError, TypeError, ValueError) as exc:
            raise BadResponse(
                f"{what}: {self._conn.display_url} sent embeddings that are not equal-length "
                f"vectors of numbers ({exc})",
                raw=self._conn.redact(_dump(response)),
            ) from exc
        if block.ndim != 2 or block.shape[1] == 0:
            raise BadResponse(f"{what}: empty vectors", raw=self._conn.redact(_dump(response)))
        if self.dimensions is not None and block.shape[1] != self.dimensions:
            raise BadResponse(
                f"{what}: asked for {self.dimensions} dimensions, got {block.shape[1]}",
                raw=self._conn.redact(_dump(response)),
            )
        return block.astype(np.float32, copy=False)

    @staticmethod
    def _vector(embedding: object) -> Vectors:
        if isinstance(embedding, str):
            return np.frombuffer(base64.b64decode(embedding), dtype="<f4").astype(np.float32)
        vector = np.asarray(embedding, dtype=np.float32)
        if vector.ndim != 1:
            raise ValueError(f"expected a flat vector, got shape {vector.shape}")
        return vector


# --------------------------------------------------------------------------- factory

_FACTORY_OPTION_KEYS = frozenset(
    {
        "dimensions",
        "embedding_batch_size",
        "encoding_format",
        "chat_options",
        "organization",
        "project",
        "default_headers",
        "http_client",
        "async_http_client",
        "sleep",
    }
)


def create_provider(settings: ProviderSettings) -> Provider:
    """Build the ``openai`` provider from the provider block of the config.

    Args:
        settings: model names, base URL, key or key variable, timeout, retries and
            options (see the module docstring for the option keys).

    Returns:
        A provider with an :class:`OpenAIChatModel` and an :class:`OpenAIEmbedder`.

    Raises:
        MissingCredentials: no API key is set and ``base_url`` is not local.
        ConfigError: an option has the wrong type or is out of range.
    """
    options = dict(settings.options)
    unknown = sorted(set(options) - _FACTORY_OPTION_KEYS)
    if unknown:
        log.debug("openai provider ignores unknown options %s", unknown)
    chat_options = options.get("chat_options") or {}
    if not isinstance(chat_options, Mapping):
        raise ConfigError(f"provider.options.chat_options must be an object, got {chat_options!r}")
    default_headers = options.get("default_headers")
    if default_headers is not None and not isinstance(default_headers, Mapping):
        raise ConfigError(
            f"provider.options.default_headers must be an object, got {default_headers!r}"
        )
    common: dict[str, Any] = {
        "api_key": settings.api_key,
        "api_key_env": settings.api_key_env,
        "base_url": settings.base_url,
        "timeout": settings.timeout,
        "max_retries": settings.max_retries,
        "http_client": options.get("http_client"),
        "async_http_client": options.get("async_http_client"),
        "sleep": options.get("sleep"),
        "organization": options.get("organization"),
        "project": options.get("project"),
        "default_headers": default_headers,
    }
    chat = OpenAIChatModel(
        settings.model or DEFAULT_CHAT_MODEL, default_options=chat_options, **common
    )
    embedder = OpenAIEmbedder(
        settings.embedding_model or DEFAULT_EMBEDDING_MODEL,
        dimensions=options.get("dimensions"),
        batch_size=options.get("embedding_batch_size", DEFAULT_EMBEDDING_BATCH_SIZE),
        encoding_format=options.get("encoding_format", "float"),
        **common,
    )
    return Provider(name="openai", chat=chat, embedder=embedder)


register_provider("openai", create_provider)
