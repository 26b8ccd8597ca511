"""A real, scriptable OpenAI-protocol HTTP server for tests.

It listens on 127.0.0.1 on an ephemeral port in a background thread and
speaks enough of the OpenAI API for the provider: ``POST /v1/chat/completions``,
``POST /v1/embeddings`` and ``GET /v1/models``. Each endpoint has a queue of
scripted behaviours (a reply, an error status, a delay, a dropped
connection); when its queue is empty an endpoint answers deterministically:

* chat echoes the last user message, or, when the request asks for a
  ``json_schema`` response format (or ``json_object`` with a ``schema`` beside
  it, as llama.cpp, vLLM and Ollama take it), replies with a minimal JSON object
  valid for that schema (``""`` for strings, ``[]`` for arrays, ...);
* embeddings derive each vector from the sha256 of its input text
  (:func:`fake_embedding`), of ``embedding_dimensions`` size unless the request
  asks for ``dimensions``.

Server-wide switches imitate what real servers do (see :class:`OpenAITestServer`):
refusing ``json_schema`` with 400 (OpenAI's older models) or 500
(llama-cpp-python), refusing every ``response_format``, answering
``/embeddings`` with 500 (llama.cpp without ``--embedding``) or with one
vector per token. Scripted replies cover fenced JSON, trailing commas, a reply
cut off at the token limit (``finish_reason="length"``), slow replies and
anything else a model may say.

Every request is recorded (method, path, headers, JSON body). Use the
:func:`openai_server` fixture::

    from tests.openai_server import openai_server  # noqa: F401

    def test_something(openai_server):
        openai_server.enqueue_error("chat", 500)
        ...
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.server
import json
import socket
import threading
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

__all__ = [
    "OpenAITestServer",
    "RecordedRequest",
    "fake_embedding",
    "minimal_instance",
    "openai_server",
    "unused_base_url",
]

_ENDPOINTS = {
    "chat": "chat",
    "chat/completions": "chat",
    "/v1/chat/completions": "chat",
    "embeddings": "embeddings",
    "/v1/embeddings": "embeddings",
    "models": "models",
    "/v1/models": "models",
}
_PATHS = {
    "/v1/chat/completions": "chat",
    "/v1/embeddings": "embeddings",
    "/v1/models": "models",
}


def fake_embedding(text: str, dimensions: int = 8) -> np.ndarray[Any, np.dtype[np.float32]]:
    """The deterministic unit vector the server returns for ``text``."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
    vector = np.random.default_rng(seed).standard_normal(dimensions)
    vector /= np.linalg.norm(vector) or 1.0
    return vector.astype(np.float32)


def minimal_instance(schema: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> Any:
    """A minimal value valid for a (simple) JSON schema: ``""``, ``[]``, ``0``, ``{...}``."""
    root = schema if root is None else root
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target[part]
        return minimal_instance(target, root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return minimal_instance(schema[key][0], root)
    kind = schema.get("type", "object" if "properties" in schema else None)
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: minimal_instance(sub, root) for name, sub in properties.items()}
    if kind == "array":
        return []
    if kind == "string":
        return ""
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return {}


def unused_base_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens (connections are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    endpoint: str

    @property
    def json(self) -> Any:
        """The JSON body (alias of ``body``)."""
        return self.body


@dataclass
class _Behaviour:
    kind: str  # "reply" | "status" | "delay" | "disconnect"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    seconds: float = 0.0
    chat: dict[str, Any] | None = None
    vectors: list[list[float]] | None = None
    dimensions: int | None = None


def _words(value: Any) -> int:
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, list):
        return sum(_words(part.get("text", "")) for part in value if isinstance(part, dict))
    return 0


def _error_body(status: int, message: str | None = None) -> dict[str, Any]:
    kinds = {
        400: "invalid_request_error",
        401: "invalid_request_error",
        403: "permission_error",
        404: "invalid_request_error",
        429: "rate_limit_exceeded",
    }
    return {
        "error": {
            "message": message or f"scripted error {status}",
            "type": kinds.get(status, "server_error"),
            "param": None,
            "code": None,
        }
    }


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet."""

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        path = self.path.split("?", 1)[0]
        endpoint = _PATHS.get(path, "")
        owner._record(
            RecordedRequest(
                method=method,
                path=path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                endpoint=endpoint,
            )
        )
        if not endpoint or (endpoint == "models") != (method == "GET"):
            self._send(404, _error_body(404, f"no route for {method} {path}"))
            return
        refusal = owner._refusal(endpoint, body)
        if refusal is not None:
            # A server without this feature: refuse, and leave the queue alone.
            self._send(*refusal)
            return
        if endpoint == "chat" and owner.chat_delay > 0 and owner._stopping.wait(owner.chat_delay):
            self.close_connection = True
            return
        behaviour = owner._next(endpoint)
        if behaviour is not None and behaviour.kind == "delay":
            if owner._stopping.wait(behaviour.seconds):
                self.close_connection = True
                return
            behaviour = None
        if behaviour is not None and behaviour.kind == "disconnect":
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        if behaviour is not None and behaviour.kind == "status":
            self._send(behaviour.status, behaviour.body, behaviour.headers)
            return
        if endpoint == "models":
            self._send(200, owner._models_reply())
        elif endpoint == "embeddings":
            self._send(200, owner._embeddings_reply(body, behaviour))
        else:
            self._send(200, owner._chat_reply(body, behaviour))

    def _send(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        if body is None:
            body = _error_body(status) if status >= 400 else {}
        if isinstance(body, bytes):
            payload, content_type = body, "application/octet-stream"
        elif isinstance(body, str):
            payload, content_type = body.encode("utf-8"), "text/plain; charset=utf-8"
        else:
            payload, content_type = json.dumps(body).encode("utf-8"), "application/json"
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except OSError:  # the client gave up (timeout) and closed the socket
            self.close_connection = True


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True

    def __init__(self, owner: OpenAITestServer) -> None:
        self.owner = owner
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Connection errors are expected (timeouts, dropped sockets); stay quiet."""

    def wake_open_connections(self) -> None:
        """Unblock handler threads waiting on keep-alive connections."""
        with self._open_lock:
            sockets = list(self._open)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class OpenAITestServer:
    """The scriptable server; see the module docstring.

    Attributes:
        base_url: ``"http://127.0.0.1:PORT/v1"`` once started.
        embedding_dimensions: vector size when a request does not ask for one.
        models: model ids ``GET /v1/models`` lists.
        json_schema_refusal: ``400`` or ``500`` to refuse every chat request with a
            ``json_schema`` response format with that status (OpenAI's wording for
            400, llama-cpp-python's validation error for 500); ``None`` accepts it.
        refuse_response_format: refuse every chat request with any
            ``response_format`` (HTTP 400), like a server that knows none.
        embeddings_status: answer every embeddings request with this status
            (llama.cpp's server started without ``--embedding`` answers 500).
        per_token_embeddings: answer embeddings with one vector per token (a list
            of vectors per input), as llama.cpp's server does for models without pooling.
        chat_delay: seconds every chat request takes before it is answered (a
            model's latency; requests are served concurrently).
    """

    def __init__(self, *, embedding_dimensions: int = 8) -> None:
        self.embedding_dimensions = embedding_dimensions
        self.models: list[str] = ["gpt-4o-mini", "text-embedding-3-small"]
        self.json_schema_refusal: int | None = None
        self.refuse_response_format = False
        self.embeddings_status: int | None = None
        self.per_token_embeddings = False
        self.chat_delay = 0.0
        self._queues: dict[str, deque[_Behaviour]] = {
            "chat": deque(),
            "embeddings": deque(),
            "models": deque(),
        }
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> OpenAITestServer:
        """Bind an ephemeral port and serve in a background thread."""
        self._httpd = _HTTPServer(self)
        port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.01},
            name=f"openai-test-server-{port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, drop open connections, join every thread, close the socket."""
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.wake_open_connections()
        self._httpd.server_close()  # joins the handler threads
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> OpenAITestServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- scripting ---------------------------------------------------------------------

    @staticmethod
    def _endpoint(name: str) -> str:
        try:
            return _ENDPOINTS[name]
        except KeyError:
            raise ValueError(
                f"unknown endpoint {name!r}; use 'chat', 'embeddings' or 'models'"
            ) from None

    def _push(self, endpoint: str, behaviour: _Behaviour) -> None:
        with self._lock:
            self._queues[self._endpoint(endpoint)].append(behaviour)

    def enqueue_chat(
        self,
        content: str | None = "",
        *,
        tool_calls: Sequence[Mapping[str, Any]] | None = None,
        finish_reason: str | None = None,
        usage: Mapping[str, int] | None = None,
        model: str | None = None,
        refusal: str | None = None,
    ) -> None:
        """Script the next chat reply (``content=None`` sends a null content)."""
        self._push(
            "chat",
            _Behaviour(
                "reply",
                chat={
                    "content": content,
                    "tool_calls": [dict(call) for call in tool_calls] if tool_calls else None,
                    "finish_reason": finish_reason,
                    "usage": dict(usage) if usage else None,
                    "model": model,
                    "refusal": refusal,
                },
            ),
        )

    def enqueue_embeddings(
        self,
        vectors: Sequence[Sequence[float]] | None = None,
        *,
        dimensions: int | None = None,
    ) -> None:
        """Script the next embeddings reply: exact ``vectors``, or hashed ones of ``dimensions``."""
        self._push(
            "embeddings",
            _Behaviour(
                "reply",
                vectors=[list(map(float, v)) for v in vectors] if vectors is not None else None,
                dimensions=dimensions,
            ),
        )

    def enqueue_response(
        self,
        endpoint: str,
        status: int = 200,
        *,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
    ) -> None:
        """Script an exact reply: ``body`` as JSON (dict/list), text (str) or bytes."""
        self._push(
            endpoint, _Behaviour("status", status=status, headers=dict(headers or {}), body=body)
        )

    def enqueue_error(
        self,
        endpoint: str,
        status: int,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
    ) -> None:
        """Script an error reply; the body defaults to an OpenAI-style error object."""
        if body is None:
            body = _error_body(status)
        elif isinstance(body, str) and status >= 400:
            body = _error_body(status, body)
        self.enqueue_response(endpoint, status, headers=headers, body=body)

    @property
    def reject_json_schema(self) -> bool:
        """Whether ``json_schema`` is refused with HTTP 400 (see ``json_schema_refusal``)."""
        return self.json_schema_refusal == 400

    @reject_json_schema.setter
    def reject_json_schema(self, value: bool) -> None:
        self.json_schema_refusal = 400 if value else None

    def enqueue_json_schema_rejection(self) -> None:
        """Script one HTTP 400 refusing a ``json_schema`` response format."""
        self.enqueue_response("chat", 400, body=self.json_schema_rejection_body())

    @staticmethod
    def llama_cpp_rejection_body() -> dict[str, Any]:
        """What llama-cpp-python's server answers (with HTTP 500) to ``json_schema``."""
        return {
            "error": {
                "message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
                "'response_format', 'type'), 'msg': \"Input should be 'text' or "
                "'json_object'\", 'input': 'json_schema'}",
                "type": "internal_server_error",
                "param": None,
                "code": None,
            }
        }

    def _refusal(self, endpoint: str, body: Any) -> tuple[int, Any] | None:
        """The status and body a server-wide switch answers this request with, if any."""
        if endpoint == "embeddings" and self.embeddings_status is not None:
            return self.embeddings_status, _error_body(self.embeddings_status)
        if endpoint != "chat" or not isinstance(body, dict):
            return None
        response_format = body.get("response_format")
        if response_format is not None and self.refuse_response_format:
            return 400, _error_body(400, "Unrecognized request argument: response_format")
        kind = (response_format or {}).get("type")
        if kind == "json_schema" and self.json_schema_refusal == 500:
            return 500, self.llama_cpp_rejection_body()
        if kind == "json_schema" and self.json_schema_refusal is not None:
            return self.json_schema_refusal, self.json_schema_rejection_body()
        return None

    def enqueue_truncated(self, content: str, *, completion_tokens: int = 512) -> None:
        """Script a reply cut off at the token limit (``finish_reason="length"``)."""
        self.enqueue_chat(
            content,
            finish_reason="length",
            usage={
                "prompt_tokens": 100,
                "completion_tokens": completion_tokens,
                "total_tokens": 100 + completion_tokens,
            },
        )

    @staticmethod
    def json_schema_rejection_body() -> dict[str, Any]:
        """What a server without structured output answers to ``json_schema``."""
        return {
            "error": {
                "message": "Invalid parameter: 'response_format' of type 'json_schema' is not "
                "supported with this model.",
                "type": "invalid_request_error",
                "param": "response_format",
                "code": None,
            }
        }

    def enqueue_delay(self, endpoint: str, seconds: float) -> None:
        """Wait ``seconds`` before answering the next request normally (for timeouts)."""
        self._push(endpoint, _Behaviour("delay", seconds=seconds))

    def enqueue_disconnect(self, endpoint: str) -> None:
        """Close the connection without answering the next request."""
        self._push(endpoint, _Behaviour("disconnect"))

    # -- inspection --------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in order."""
        with self._lock:
            return list(self._requests)

    def requests_to(self, endpoint: str) -> list[RecordedRequest]:
        """The requests received by one endpoint (``"chat"``, ``"embeddings"``, ``"models"``)."""
        name = self._endpoint(endpoint)
        return [request for request in self.requests if request.endpoint == name]

    def pending(self, endpoint: str) -> int:
        """How many scripted behaviours are still queued for ``endpoint``."""
        with self._lock:
            return len(self._queues[self._endpoint(endpoint)])

    # -- internals (called from handler threads) --------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next(self, endpoint: str) -> _Behaviour | None:
        with self._lock:
            queue = self._queues[endpoint]
            return queue.popleft() if queue else None

    def _models_reply(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [
                {"id": name, "object": "model", "created": 0, "owned_by": "memgraph-tests"}
                for name in self.models
            ],
        }

    def _chat_reply(self, body: Any, behaviour: _Behaviour | None) -> dict[str, Any]:
        request = body if isinstance(body, dict) else {}
        messages = request.get("messages") or []
        scripted = behaviour.chat if behaviour is not None and behaviour.chat is not None else None
        if scripted is not None:
            content = scripted["content"]
            tool_calls = scripted["tool_calls"]
        else:
            content = self._default_chat_text(request)
            tool_calls = None
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = tool_calls
        if scripted is not None and scripted["refusal"] is not None:
            message["refusal"] = scripted["refusal"]
        finish_reason = (scripted or {}).get("finish_reason") or (
            "tool_calls" if tool_calls else "stop"
        )
        prompt_tokens = sum(_words(m.get("content")) for m in messages if isinstance(m, dict))
        completion_tokens = _words(content)
        usage = (scripted or {}).get("usage") or {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        return {
            "id": f"chatcmpl-test-{len(self._requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": (scripted or {}).get("model") or request.get("model", "unknown"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": usage,
        }

    @staticmethod
    def _default_chat_text(request: Mapping[str, Any]) -> str:
        response_format = request.get("response_format") or {}
        if response_format.get("type") == "json_schema":
            schema = (response_format.get("json_schema") or {}).get("schema") or {}
            return json.dumps(minimal_instance(schema))
        if response_format.get("type") == "json_object":
            schema = response_format.get("schema")
            return json.dumps(minimal_instance(schema)) if isinstance(schema, dict) else "{}"
        last_user = next(
            (
                m.get("content")
                for m in reversed(request.get("messages") or [])
                if isinstance(m, dict) and m.get("role") == "user"
            ),
            "",
        )
        if not isinstance(last_user, str):
            last_user = json.dumps(last_user)
        return f"echo: {last_user}"

    def _embeddings_reply(self, body: Any, behaviour: _Behaviour | None) -> dict[str, Any]:
        request = body if isinstance(body, dict) else {}
        inputs = request.get("input", [])
        if isinstance(inputs, str):
            inputs = [inputs]
        dimensions = (
            (behaviour.dimensions if behaviour is not None else None)
            or request.get("dimensions")
            or self.embedding_dimensions
        )
        if behaviour is not None and behaviour.vectors is not None:
            vectors = [np.asarray(v, dtype=np.float32) for v in behaviour.vectors]
        else:
            vectors = [fake_embedding(str(text), int(dimensions)) for text in inputs]
        if self.per_token_embeddings:
            data = [
                {
                    "object": "embedding",
                    "index": index,
                    "embedding": [
                        [float(x) for x in fake_embedding(word, int(dimensions))]
                        for word in (str(text).split() or [""])
                    ],
                }
                for index, text in enumerate(inputs)
            ]
            return {"object": "list", "data": data, "model": request.get("model", "unknown")}
        as_base64 = request.get("encoding_format") == "base64"
        data = [
            {
                "object": "embedding",
                "index": index,
                "embedding": (
                    base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
                    if as_base64
                    else [float(x) for x in vector]
                ),
            }
            for index, vector in enumerate(vectors)
        ]
        tokens = sum(_words(str(text)) for text in inputs)
        return {
            "object": "list",
            "data": data,
            "model": request.get("model", "unknown"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }


@contextlib.contextmanager
def closing_provider(provider: Any) -> Iterator[Any]:
    """``provider``, its model clients closed afterwards: a ``Memory`` handed a
    provider does not own it, and an HTTP client left open is reported (a
    ``ResourceWarning``) wherever the garbage collector happens to run."""
    try:
        yield provider
    finally:
        for part in (getattr(provider, "chat", None), getattr(provider, "embedder", None)):
            close = getattr(part, "close", None)
            if callable(close):
                close()


@pytest.fixture
def openai_server() -> Iterator[OpenAITestServer]:
    """A started :class:`OpenAITestServer`, stopped (threads joined) at teardown."""
    server = OpenAITestServer().start()
    try:
        yield server
    finally:
        server.stop()
