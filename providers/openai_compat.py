"""The OpenAI-compatible provider: chat completions and embeddings over the OpenAI API.

Works with the official OpenAI API and with any server that speaks its protocol
(Ollama, vLLM, the llama.cpp server, LM Studio, ...) through ``base_url``.
Importing this module registers the provider as ``"openai"``::

    from memgraph.llm_calls.provider import resolve_provider

    provider = resolve_provider("openai:gpt-4o-mini")
    provider = resolve_provider("openai:llama3.1", base_url="http://localhost:11434/v1")

How the server is reached (connection options, timeouts per kind of endpoint,
which failures are retried) is in :mod:`memgraph.providers.openai_transport`;
how structured output adapts to what the server supports is in
:mod:`memgraph.providers.openai_structured`; tool calls that come back as text
are read by :mod:`memgraph.providers.openai_tools`.

``ProviderSettings.options`` keys understood by the factory: ``dimensions`` (or
``dimension``, the name of the config field),
``embedding_batch_size``, ``encoding_format``, ``chat_options`` (default
options for every completion: ``temperature``, ``max_tokens``, ``top_p``,
``seed``, ...; keys the OpenAI SDK does not know go into the request body as
they are), ``structured_output`` (``"auto"``, ``"json_schema"``,
``"json_object"`` or ``"none"``), ``organization``, ``project``,
``default_headers``, and for tests ``http_client``, ``async_http_client``,
``sleep`` and ``format_memo``.

This package is the only part of memgraph that imports the ``openai`` SDK.
"""

from __future__ import annotations

import base64
import functools
import inspect
import logging
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

import numpy as np
from openai.resources.chat.completions import Completions

from memgraph.errors import BadResponse, ConfigError
from memgraph.llm_calls.provider import (
    Completion,
    JsonSchema,
    Message,
    Provider,
    ProviderSettings,
    Usage,
    register_provider,
)

from .openai_structured import (
    FormatMemo,
    StructuredMode,
    StructuredOutput,
    shape_request,
)
from .openai_tools import tool_calls_from_text
from .openai_transport import (
    CONNECTION_OPTIONS,
    DEFAULT_BASE_URL,
    LOCAL_PLACEHOLDER_API_KEY,
    Call,
    Connection,
    ConnectionOptions,
    FormatRefused,
    Steps,
    check_positive_int,
    dump,
)

if TYPE_CHECKING:
    import numpy.typing as npt
    from typing_extensions import Unpack

    Vectors = npt.NDArray[np.float32]

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_CHAT_MODEL",
    "DEFAULT_EMBEDDING_BATCH_SIZE",
    "DEFAULT_EMBEDDING_MODEL",
    "LOCAL_PLACEHOLDER_API_KEY",
    "ConnectionOptions",
    "OpenAIChatModel",
    "OpenAIEmbedder",
    "create_provider",
]

DEFAULT_CHAT_MODEL = "gpt-4o-mini"
DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"
DEFAULT_EMBEDDING_BATCH_SIZE = 512

_KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)

log = logging.getLogger("memgraph.providers.openai")

_Self = TypeVar("_Self", bound="_ClientOwner")


@functools.cache
def _sdk_parameters() -> frozenset[str]:
    """Keyword arguments ``chat.completions.create`` takes; others go into the body."""
    return frozenset(inspect.signature(Completions.create).parameters) - {"self"}


def _strip_fence(text: str) -> str:
    match = _FENCE.match(text)
    return match.group(1).strip() if match else text


class _ClientOwner:
    """Shared constructor, lifecycle and context-manager plumbing."""

    model: str

    def __init__(self, model: str, connection: ConnectionOptions) -> None:
        if not model or not isinstance(model, str):
            raise ConfigError(f"model must be a non-empty string, got {model!r}")
        self.model = model
        self._conn = Connection(connection)

    @property
    def base_url(self) -> str:
        """The API base URL requests go to."""
        return self._conn.base_url

    @property
    def timeout(self) -> float:
        """Seconds per HTTP attempt (the endpoint's default when none was set)."""
        return self._conn.timeout

    def close(self) -> None:
        """Close the synchronous HTTP client (an injected ``http_client`` too)."""
        self._conn.close()

    async def aclose(self) -> None:
        """Close both HTTP clients; call it inside the event loop that used the async methods."""
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


class OpenAIChatModel(_ClientOwner):
    """A :class:`~memgraph.llm_calls.provider.ChatModel` backed by ``/chat/completions``.

    The API key is ``api_key``, else the environment variable named by
    ``api_key_env``, else (only for a local ``base_url``) a placeholder; a missing
    key raises :class:`~memgraph.errors.MissingCredentials` at the first request.

    Structured output starts with ``json_schema`` and, in ``"auto"`` mode,
    steps down to ``json_object`` (with the schema sent alongside and an
    example object in the system prompt) and then to no ``response_format``
    when the server refuses; see :mod:`memgraph.providers.openai_structured`.

    When a request offers ``tools`` and the reply's text is a call to one of
    them, the call is returned in ``tool_calls``.

    Args:
        model: the chat model name.
        default_options: options sent with every completion (``temperature``,
            ``max_tokens``, ``top_p``, ``seed``, or any body field the server
            understands); per-call options win.
        structured_output: ``"auto"``, ``"json_schema"``, ``"json_object"`` or ``"none"``.
        format_memo: where structured-output downgrades are remembered (default:
            the user cache directory); ``False`` keeps them in this object only.
        **connection: how to reach the server, see :class:`ConnectionOptions`.

    Raises:
        ConfigError: a setting is out of range.
    """

    def __init__(
        self,
        model: str = DEFAULT_CHAT_MODEL,
        *,
        default_options: Mapping[str, Any] | None = None,
        structured_output: str = "auto",
        format_memo: FormatMemo | Literal[False] | None = None,
        **connection: Unpack[ConnectionOptions],
    ) -> None:
        super().__init__(model, connection)
        self.default_options: dict[str, Any] = dict(default_options or {})
        self._structured = StructuredOutput(
            structured_output,
            endpoint=self._conn.display_url,
            model=model,
            memo=None if format_memo is False else (format_memo or FormatMemo()),
        )

    @property
    def structured_output(self) -> StructuredMode:
        """The structured-output mode the next request with a schema uses."""
        return self._structured.mode

    @property
    def json_schema_supported(self) -> bool:
        """False once the server refused ``json_schema`` and this model stepped down."""
        return self._structured.mode == "json_schema"

    def _what(self) -> str:
        return f"chat completion with model {self.model!r}"

    def _params(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """``create`` keyword arguments: known ones as they are, the rest in ``extra_body``."""
        known = _sdk_parameters()
        params: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in {**self.default_options, **options}.items():
            if key == "extra_body" and isinstance(value, Mapping):
                extra.update(value)
            elif key in known:
                params[key] = value
            else:
                extra[key] = value
        if extra:
            params["extra_body"] = extra
        params["model"] = self.model
        return params

    def _steps(
        self, messages: Sequence[Message], schema: JsonSchema | None, options: Mapping[str, Any]
    ) -> Steps[Completion]:
        params = self._params(options)
        tools = params.get("tools")
        if schema is None:
            params["messages"] = [dict(message) for message in messages]
            response = yield Call("chat", params, self._what())
            return self._parse(response, tools=tools, structured=None)
        mode = self._structured.mode
        while True:
            shaped, response_format = shape_request(messages, schema, mode)
            request = {**params, "messages": shaped}
            if response_format is not None:
                request["response_format"] = response_format
            try:
                response = yield Call(
                    "chat", request, self._what(), format_sent=response_format is not None
                )
            except FormatRefused as refused:
                mode = self._structured.refused(mode, str(refused))
                continue
            return self._parse(response, tools=tools, structured=mode)

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
                ``tool_choice``, ``temperature``, ``max_tokens``, ...); unknown
                keys go into the request body.

        Returns:
            The completion, with text, model, usage, tool calls and finish reason
            (``"length"`` when the reply was cut off).

        Raises:
            ProviderUnavailable: timeouts, connection errors, transient statuses after
                the retries, or a status the server did not report as transient.
            MissingCredentials: no key is set, or the server rejected it (HTTP 401/403).
            BadResponse: the request was refused (other 4xx, or a structured-output
                mode the setting fixes) or the reply is unusable.
            ProviderError: the model does not exist (HTTP 404), or another SDK failure.
        """
        return self._conn.run(self._steps(messages, schema, options), self.model)

    async def acomplete(
        self,
        messages: Sequence[Message],
        *,
        schema: JsonSchema | None = None,
        **options: Any,
    ) -> Completion:
        """Async twin of :meth:`complete`, on ``openai.AsyncOpenAI`` (same arguments,
        result and errors)."""
        return await self._conn.arun(self._steps(messages, schema, options), self.model)

    def _parse(
        self, response: Any, *, tools: object, structured: StructuredMode | None
    ) -> Completion:
        what = self._what()
        choices = getattr(response, "choices", None)
        if not choices:
            raise BadResponse(
                f"{what}: {self._conn.display_url} sent a reply without choices",
                raw=self._conn.redact(dump(response)),
            )
        choice = choices[0]
        message = getattr(choice, "message", None)
        if message is None:
            raise BadResponse(
                f"{what}: {self._conn.display_url} sent a choice without a message",
                raw=self._conn.redact(dump(response)),
            )
        text = getattr(message, "content", None) or ""
        tool_calls = tuple(
            cast(dict[str, Any], call.model_dump(mode="json", exclude_none=True))
            if hasattr(call, "model_dump")
            else dict(call)
            for call in (getattr(message, "tool_calls", None) or ())
        )
        finish_reason = getattr(choice, "finish_reason", None)
        if not text and not tool_calls:
            refusal = getattr(message, "refusal", None)
            reason = f"the model refused: {refusal}" if refusal else "the reply has no content"
            raise BadResponse(
                self._conn.redact(f"{what}: {reason}"), raw=self._conn.redact(dump(response))
            )
        if tools and not tool_calls:
            tool_calls = tool_calls_from_text(text, tools)
            if tool_calls:
                text, finish_reason = "", "tool_calls"
        if structured not in (None, "json_schema"):
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
            finish_reason=finish_reason,
        )


# --------------------------------------------------------------------------- embeddings


class OpenAIEmbedder(_ClientOwner):
    """An :class:`~memgraph.llm_calls.provider.Embedder` backed by ``/embeddings``.

    Inputs are sent in batches of at most ``batch_size`` texts; rows come back
    in input order as a float32 array. Empty strings are sent as a single
    space (the API refuses empty input).

    Args:
        model: the embedding model name.
        dimensions: ask for vectors of this size (sent as ``dimensions``).
        batch_size: most inputs per request.
        encoding_format: ``"float"`` (understood by every server) or ``"base64"``
            (smaller replies from api.openai.com).
        **connection: how to reach the server, see :class:`ConnectionOptions`.

    Raises:
        ConfigError: ``batch_size``, ``dimensions`` or another setting is out of range.
    """

    def __init__(
        self,
        model: str = DEFAULT_EMBEDDING_MODEL,
        *,
        dimensions: int | None = None,
        batch_size: int = DEFAULT_EMBEDDING_BATCH_SIZE,
        encoding_format: Literal["float", "base64"] = "float",
        **connection: Unpack[ConnectionOptions],
    ) -> None:
        super().__init__(model, connection)
        self.dimensions = (
            None if dimensions is None else check_positive_int("dimensions", dimensions)
        )
        self.batch_size = check_positive_int("batch_size", batch_size)
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

    @property
    def space(self) -> str:
        """The identity of the vector space: vectors with another identity are not comparable.

        The model name alone for OpenAI's own API at the model's native size;
        otherwise ``model@endpoint``, plus ``/<n>d`` when a size is requested,
        since one model name served by two servers (or cut to two sizes) gives
        vectors that must not be mixed.
        """
        native = self.dimensions is None or self.dimensions == _KNOWN_DIMENSIONS.get(self.model)
        if self._conn.base_url.rstrip("/") == DEFAULT_BASE_URL and native:
            return self.model
        size = f"/{self.dimensions}d" if self.dimensions is not None else ""
        return f"{self.model}@{self._conn.display_url}{size}"

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

    def _steps(self, batches: list[list[str]]) -> Steps[Vectors]:
        if not batches:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        rows: list[Vectors] = []
        for number, batch in enumerate(batches, 1):
            what = self._what(number, len(batches))
            response = yield Call("embeddings", self._params(batch), what)
            rows.append(self._parse(response, len(batch), what))
        return self._stack(rows)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``, batching requests; rows follow the input order.

        Args:
            texts: the texts to embed.

        Returns:
            A float32 array of shape ``(len(texts), dimension)``; ``(0, d)`` (or
            ``(0, 0)`` while the dimension is unknown) for no texts, without a request.

        Raises:
            ProviderUnavailable: timeouts, connection errors, transient statuses after the
                retries, or a status the server did not report as transient.
            MissingCredentials: no key is set, or the server rejected it (HTTP 401/403).
            BadResponse: the request was refused, or the reply has the wrong number or size
                of vectors, or one vector per token instead of one per text.
            ProviderError: the model does not exist (HTTP 404), or another SDK failure.
            TypeError: ``texts`` is a single string.
        """
        return self._conn.run(self._steps(self._batches(texts)), self.model)

    async def aembed(self, texts: Sequence[str]) -> Vectors:
        """Async twin of :meth:`embed`, on ``openai.AsyncOpenAI`` (same arguments, result
        and errors)."""
        return await self._conn.arun(self._steps(self._batches(texts)), self.model)

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

        def raw() -> str:
            return self._conn.redact(dump(response))

        if not data or len(data) != expected:
            got = len(data) if data else 0
            raise BadResponse(
                f"{what}: expected {expected} vectors from {self._conn.display_url}, got {got}",
                raw=raw(),
            )
        items = sorted(data, key=lambda item: int(getattr(item, "index", 0) or 0))
        if [int(getattr(item, "index", i) or 0) for i, item in enumerate(items)] != list(
            range(expected)
        ):
            # Servers that omit or repeat ``index``: trust the order they sent.
            items = list(data)
        try:
            vectors = [self._vector(getattr(item, "embedding", None)) for item in items]
            block = np.stack(vectors) if vectors else np.zeros((0, 0), dtype=np.float32)
        except _PerToken as exc:
            raise BadResponse(
                f"{what}: {self._conn.display_url} returned one vector per token (shape "
                f"{exc.shape}) instead of one per text: the server does not pool its embeddings. "
                "Start llama.cpp's server with --embedding --pooling mean, use an embedding "
                'model, or set embeddings.provider to "mock" or "none"',
                raw=raw(),
            ) from exc
        except (AttributeError, TypeError, ValueError) as exc:
            raise BadResponse(
                f"{what}: {self._conn.display_url} sent embeddings that are not equal-length "
                f"vectors of numbers ({exc})",
                raw=raw(),
            ) from exc
        if block.ndim != 2 or block.shape[1] == 0:
            raise BadResponse(f"{what}: empty vectors", raw=raw())
        if self.dimensions is not None and block.shape[1] != self.dimensions:
            raise BadResponse(
                f"{what}: asked for {self.dimensions} dimensions, got {block.shape[1]}",
                raw=raw(),
            )
        return block.astype(np.float32, copy=False)

    @staticmethod
    def _vector(embedding: object) -> Vectors:
        if isinstance(embedding, str):
            return np.frombuffer(base64.b64decode(embedding), dtype="<f4").astype(np.float32)
        vector = np.asarray(embedding, dtype=np.float32)
        if vector.ndim == 2:
            raise _PerToken(vector.shape)
        if vector.ndim != 1:
            raise ValueError(f"expected a flat vector, got shape {vector.shape}")
        return vector


class _PerToken(ValueError):
    """Internal: an embedding came back as one row per token."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        super().__init__(f"one vector per token, shape {shape}")
        self.shape = shape


# --------------------------------------------------------------------------- factory

_FACTORY_OPTION_KEYS = frozenset(
    {
        "dimension",
        "dimensions",
        "embedding_batch_size",
        "encoding_format",
        "chat_options",
        "structured_output",
        "format_memo",
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
        settings: model names, base URL, key or key variable, timeout (``None``: the
            endpoint's default), retries and options (see the module docstring).

    Returns:
        A provider with an :class:`OpenAIChatModel` and an :class:`OpenAIEmbedder`.

    Raises:
        ConfigError: an option has the wrong type or is out of range.
    """
    options = dict(settings.options)
    unknown = sorted(set(options) - _FACTORY_OPTION_KEYS)
    if unknown:
        log.debug("openai provider ignores unknown options %s", unknown)
    chat_options = options.get("chat_options") or {}
    if not isinstance(chat_options, Mapping):
        raise ConfigError(f"provider.options must be an object, got {chat_options!r}")
    default_headers = options.get("default_headers")
    if default_headers is not None and not isinstance(default_headers, Mapping):
        raise ConfigError(
            f"provider.options.default_headers must be an object, got {default_headers!r}"
        )
    connection: dict[str, Any] = {
        "api_key": settings.api_key,
        "api_key_env": settings.api_key_env,
        "base_url": settings.base_url,
        "timeout": settings.timeout,
        "max_retries": settings.max_retries,
        "default_headers": default_headers,
    }
    for key in ("http_client", "async_http_client", "sleep", "organization", "project"):
        connection[key] = options.get(key)
    assert set(connection) <= CONNECTION_OPTIONS
    common = cast("ConnectionOptions", connection)
    chat = OpenAIChatModel(
        settings.model or DEFAULT_CHAT_MODEL,
        default_options=chat_options,
        structured_output=options.get("structured_output") or "auto",
        format_memo=options.get("format_memo"),
        **common,
    )
    embedder = OpenAIEmbedder(
        settings.embedding_model or DEFAULT_EMBEDDING_MODEL,
        dimensions=options.get("dimensions", options.get("dimension")),
        batch_size=options.get("embedding_batch_size", DEFAULT_EMBEDDING_BATCH_SIZE),
        encoding_format=options.get("encoding_format", "float"),
        **common,
    )
    return Provider(name="openai", chat=chat, embedder=embedder)


register_provider("openai", create_provider)
