"""The OpenAI-compatible provider, against a real local HTTP server and MockTransport."""

# The ``openai_server`` fixture is imported; test arguments of that name shadow it.
# ruff: noqa: F811

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from types import MappingProxyType
from typing import Any

import httpx
import numpy as np
import pytest
from memgraph.providers.openai_compat import (
    LOCAL_PLACEHOLDER_API_KEY,
    OpenAIChatModel,
    OpenAIEmbedder,
)

from memgraph.errors import (
    BadResponse,
    MissingCredentials,
    ProviderError,
    ProviderUnavailable,
)
from memgraph.llm_calls.provider import (
    ChatModel,
    Embedder,
    JsonSchema,
    Provider,
    known_providers,
    resolve_provider,
)
from tests.openai_server import (
    OpenAITestServer,
    fake_embedding,
    openai_server,  # noqa: F401
    unused_base_url,
)

KEY = "sk-test-4f1c9e2b7a6d5c3e1f0a"

EXTRACT = JsonSchema(
    name="memgraph_extract",
    schema={
        "type": "object",
        "properties": {
            "entities": {"type": "array", "items": {"type": "string"}},
            "summary": {"type": "string"},
        },
        "required": ["entities", "summary"],
        "additionalProperties": False,
    },
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "remember",
            "description": "Store a fact.",
            "parameters": {
                "type": "object",
                "properties": {"fact": {"type": "string"}},
                "required": ["fact"],
            },
        },
    }
]


class Sleeps(list[float]):
    """An injectable sleep that records the delays instead of sleeping."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@contextmanager
def provider_for(server: OpenAITestServer, **overrides: Any) -> Iterator[Provider]:
    """``resolve_provider("openai:gpt-4o-mini", ...)`` against ``server``, closed afterwards."""
    settings: dict[str, Any] = {"base_url": server.base_url, "api_key": KEY}
    settings.update(overrides)
    provider = resolve_provider("openai:gpt-4o-mini", **settings)
    try:
        yield provider
    finally:
        assert isinstance(provider.chat, OpenAIChatModel)
        assert isinstance(provider.embedder, OpenAIEmbedder)
        provider.chat.close()
        provider.embedder.close()


def chat_model(server: OpenAITestServer, **kwargs: Any) -> OpenAIChatModel:
    kwargs.setdefault("api_key", KEY)
    kwargs.setdefault("sleep", Sleeps())
    return OpenAIChatModel("gpt-4o-mini", base_url=server.base_url, **kwargs)


def embedder(server: OpenAITestServer, **kwargs: Any) -> OpenAIEmbedder:
    kwargs.setdefault("api_key", KEY)
    kwargs.setdefault("sleep", Sleeps())
    return OpenAIEmbedder("text-embedding-3-small", base_url=server.base_url, **kwargs)


USER = [{"role": "user", "content": "Alice moved to Berlin."}]


# --------------------------------------------------------------------------- registry


def test_openai_is_a_known_provider_and_resolves_with_default_models(
    openai_server: OpenAITestServer,
) -> None:
    assert "openai" in known_providers()
    with provider_for(openai_server) as provider:
        assert provider.name == "openai"
        assert isinstance(provider.chat, ChatModel)
        assert isinstance(provider.embedder, Embedder)
        assert provider.chat.model == "gpt-4o-mini"
        assert provider.embedder.model == "text-embedding-3-small"


def test_spec_model_and_embedding_model_settings_are_used(openai_server: OpenAITestServer) -> None:
    provider = resolve_provider(
        "openai:llama3.1", base_url=openai_server.base_url, embedding_model="nomic-embed-text"
    )
    assert provider.chat.model == "llama3.1"
    assert provider.embedder is not None
    assert provider.embedder.model == "nomic-embed-text"


def test_the_engine_package_never_imports_the_openai_sdk() -> None:
    code = (
        "import sys, memgraph, memgraph.llm_calls.provider, memgraph.errors\n"
        "assert 'openai' not in sys.modules, 'openai imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------------------- chat


def test_plain_completion_returns_text_model_usage_and_finish_reason(
    openai_server: OpenAITestServer,
) -> None:
    with provider_for(openai_server) as provider:
        completion = provider.chat.complete(USER)
    assert completion.text == "echo: Alice moved to Berlin."
    assert completion.model == "gpt-4o-mini"
    assert completion.usage.prompt_tokens == 4
    assert completion.usage.completion_tokens == 5
    assert completion.finish_reason == "stop"
    assert completion.tool_calls == ()
    (request,) = openai_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body["model"] == "gpt-4o-mini"
    assert request.body["messages"] == USER
    assert "response_format" not in request.body


def test_structured_output_sends_a_strict_json_schema_response_format(
    openai_server: OpenAITestServer,
) -> None:
    with provider_for(openai_server) as provider:
        completion = provider.chat.complete(USER, schema=EXTRACT)
    assert json.loads(completion.text) == {"entities": [], "summary": ""}
    (request,) = openai_server.requests
    assert request.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "memgraph_extract", "schema": dict(EXTRACT.schema), "strict": True},
    }
    assert request.body["messages"] == USER


def test_a_schema_built_from_read_only_mappings_is_sent_as_plain_json(
    openai_server: OpenAITestServer,
) -> None:
    frozen = MappingProxyType(
        {
            "type": "object",
            "properties": MappingProxyType({"names": MappingProxyType({"type": "array"})}),
            "required": ("names",),
        }
    )
    with chat_model(openai_server) as model:
        completion = model.complete(USER, schema=JsonSchema("memgraph_merge", frozen, strict=False))
    assert json.loads(completion.text) == {"names": []}
    sent = openai_server.requests[0].body["response_format"]["json_schema"]
    assert sent == {
        "name": "memgraph_merge",
        "schema": {
            "type": "object",
            "properties": {"names": {"type": "array"}},
            "required": ["names"],
        },
        "strict": False,
    }


def test_options_like_temperature_and_max_tokens_are_passed_through(
    openai_server: OpenAITestServer,
) -> None:
    with provider_for(openai_server, options={"chat_options": {"temperature": 0.0}}) as provider:
        provider.chat.complete(USER, max_tokens=64, seed=7)
        provider.chat.complete(USER, temperature=0.5)
    first, second = (request.body for request in openai_server.requests)
    assert (first["temperature"], first["max_tokens"], first["seed"]) == (0.0, 64, 7)
    assert second["temperature"] == 0.5


def test_tool_calls_are_returned_as_plain_dicts_in_openai_shape(
    openai_server: OpenAITestServer,
) -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "remember", "arguments": '{"fact": "Alice lives in Berlin"}'},
    }
    openai_server.enqueue_chat(None, tool_calls=[call])
    with provider_for(openai_server) as provider:
        completion = provider.chat.complete(USER, tools=TOOLS, tool_choice="auto")
    assert completion.tool_calls == (call,)
    assert type(completion.tool_calls[0]) is dict
    assert completion.text == ""
    assert completion.finish_reason == "tool_calls"
    assert completion.as_message() == {"role": "assistant", "content": "", "tool_calls": [call]}
    (request,) = openai_server.requests
    assert request.body["tools"] == TOOLS
    assert request.body["tool_choice"] == "auto"


def test_server_refusing_json_schema_falls_back_to_json_mode_and_remembers_it(
    openai_server: OpenAITestServer,
) -> None:
    openai_server.reject_json_schema = True
    openai_server.enqueue_chat('{"entities": ["Alice"], "summary": "moved"}')
    system = {"role": "system", "content": "You extract facts."}
    with chat_model(openai_server) as model:
        first = model.complete([system, *USER], schema=EXTRACT)
        assert not model.json_schema_supported
        second = model.complete(USER, schema=EXTRACT)
    assert json.loads(first.text) == {"entities": ["Alice"], "summary": "moved"}
    assert json.loads(second.text) == {}
    rejected, fallback, later = (request.body for request in openai_server.requests)
    assert rejected["response_format"]["type"] == "json_schema"
    assert fallback["response_format"] == {"type": "json_object"}
    fallback_system = fallback["messages"][0]
    assert fallback_system["role"] == "system"
    assert fallback_system["content"].startswith("You extract facts.\n\n")
    assert json.dumps(dict(EXTRACT.schema)) in fallback_system["content"]
    assert fallback["messages"][1:] == USER
    # The downgrade is remembered: no second json_schema attempt, and a system
    # message carrying the schema is added when the thread has none.
    assert later["response_format"] == {"type": "json_object"}
    assert later["messages"][0]["role"] == "system"
    assert "memgraph_extract" in later["messages"][0]["content"]
    assert later["messages"][1:] == USER


def test_a_single_scripted_json_schema_rejection_is_retried_once_in_json_mode(
    openai_server: OpenAITestServer,
) -> None:
    openai_server.enqueue_json_schema_rejection()
    openai_server.enqueue_chat('```json\n{"entities": [], "summary": "x"}\n```')
    with chat_model(openai_server) as model:
        completion = model.complete(USER, schema=EXTRACT)
    assert json.loads(completion.text) == {"entities": [], "summary": "x"}
    assert len(openai_server.requests) == 2


def test_a_400_that_is_not_about_response_format_is_a_bad_response_without_fallback(
    openai_server: OpenAITestServer,
) -> None:
    openai_server.enqueue_error("chat", 400, body="messages[0].content is too long")
    with chat_model(openai_server) as model, pytest.raises(BadResponse) as caught:
        model.complete(USER, schema=EXTRACT)
    assert "HTTP 400" in str(caught.value)
    assert "too long" in caught.value.raw
    assert model.json_schema_supported
    assert len(openai_server.requests) == 1


def test_reply_without_choices_is_a_bad_response_carrying_the_raw_reply(
    openai_server: OpenAITestServer,
) -> None:
    openai_server.enqueue_response(
        "chat", 200, body={"id": "x", "object": "chat.completion", "choices": []}
    )
    with chat_model(openai_server) as model, pytest.raises(BadResponse) as caught:
        model.complete(USER)
    assert "without choices" in str(caught.value)
    assert '"choices":[]' in caught.value.raw


def test_reply_with_null_content_and_no_tool_calls_is_a_bad_response(
    openai_server: OpenAITestServer,
) -> None:
    openai_server.enqueue_chat(None, refusal="I can't help with that.")
    with chat_model(openai_server) as model, pytest.raises(BadResponse, match="refused"):
        model.complete(USER, schema=EXTRACT)


def test_acomplete_works_with_the_async_client(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue_error("chat", 503)
    sleeps: list[float] = []

    async def record(seconds: float) -> None:
        sleeps.append(seconds)

    async def main() -> tuple[Any, Any]:
        model = chat_model(openai_server, sleep=record)
        try:
            plain = await model.acomplete(USER)
            structured = await model.acomplete(USER, schema=EXTRACT)
        finally:
            await model.aclose()
        return plain, structured

    plain, structured = asyncio.run(main())
    assert plain.text == "echo: Alice moved to Berlin."
    assert json.loads(structured.text) == {"entities": [], "summary": ""}
    assert len(sleeps) == 1
    assert len(openai_server.requests) == 3


def test_acomplete_falls_back_to_json_mode_like_complete(openai_server: OpenAITestServer) -> None:
    openai_server.reject_json_schema = True

    async def main() -> Any:
        async with chat_model(openai_server) as model:
            return await model.acomplete(USER, schema=EXTRACT), model.json_schema_supported

    completion, supported = asyncio.run(main())
    assert json.loads(completion.text) == {}
    assert supported is False
    assert [r.body["response_format"]["type"] for r in openai_server.requests] == [
        "json_schema",
        "json_object",
    ]


# --------------------------------------------------------------------------- embeddings


def test_embeddings_are_float32_rows_in_input_order(openai_server: OpenAITestServer) -> None:
    texts = ["alpha", "beta", "gamma"]
    with provider_for(openai_server) as provider:
        assert provider.embedder is not None
        vectors = provider.embedder.embed(texts)
    assert vectors.shape == (3, 8)
    assert vectors.dtype == np.float32
    np.testing.assert_array_equal(vectors, np.stack([fake_embedding(t) for t in texts]))
    (request,) = openai_server.requests
    assert request.path == "/v1/embeddings"
    assert request.body == {
        "model": "text-embedding-3-small",
        "input": texts,
        "encoding_format": "float",
    }


def test_embeddings_are_batched_into_several_requests_preserving_order(
    openai_server: OpenAITestServer,
) -> None:
    texts = [f"text {i}" for i in range(5)]
    with provider_for(openai_server, options={"embedding_batch_size": 2}) as provider:
        assert provider.embedder is not None
        vectors = provider.embedder.embed(texts)
    assert [r.body["input"] for r in openai_server.requests] == [texts[0:2], texts[2:4], texts[4:]]
    np.testing.assert_array_equal(vectors, np.stack([fake_embedding(t) for t in texts]))


def test_empty_input_gives_an_empty_array_without_a_request(
    openai_server: OpenAITestServer,
) -> None:
    with (
        embedder(openai_server) as known,
        OpenAIEmbedder("nomic-embed-text", base_url=openai_server.base_url) as unknown,
    ):
        assert known.embed([]).shape == (0, 1536)
        empty = unknown.embed([])
        assert empty.shape == (0, 0)
        assert empty.dtype == np.float32
        unknown.embed(["x"])
        assert unknown.embed([]).shape == (0, 8)
    assert len(openai_server.requests) == 1


def test_dimensions_option_is_sent_and_sizes_the_vectors(openai_server: OpenAITestServer) -> None:
    with provider_for(openai_server, options={"dimensions": 4}) as provider:
        assert provider.embedder is not None
        assert provider.embedder.embed([]).shape == (0, 4)
        vectors = provider.embedder.embed(["a", "b"])
    assert vectors.shape == (2, 4)
    assert openai_server.requests[0].body["dimensions"] == 4


def test_base64_encoded_embeddings_are_decoded(openai_server: OpenAITestServer) -> None:
    with embedder(openai_server, encoding_format="base64") as model:
        vectors = model.embed(["a", "b"])
    np.testing.assert_array_equal(vectors, np.stack([fake_embedding("a"), fake_embedding("b")]))
    assert openai_server.requests[0].body["encoding_format"] == "base64"


def test_embedding_a_bare_string_is_a_type_error(openai_server: OpenAITestServer) -> None:
    with embedder(openai_server) as model, pytest.raises(TypeError, match="sequence of strings"):
        model.embed("not a list")
    assert openai_server.requests == []


def test_wrong_number_of_vectors_is_a_bad_response(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue_embeddings([[1.0, 2.0]])
    with embedder(openai_server) as model, pytest.raises(BadResponse, match="expected 2 vectors"):
        model.embed(["a", "b"])


def test_aembed_works_with_the_async_client(openai_server: OpenAITestServer) -> None:
    async def main() -> Any:
        async with embedder(openai_server, batch_size=1) as model:
            return await model.aembed(["a", "b"])

    vectors = asyncio.run(main())
    np.testing.assert_array_equal(vectors, np.stack([fake_embedding("a"), fake_embedding("b")]))
    assert len(openai_server.requests) == 2


# --------------------------------------------------------------------------- retries


def test_429_with_retry_after_is_retried_then_succeeds(openai_server: OpenAITestServer) -> None:
    sleeps = Sleeps()
    openai_server.enqueue_error("chat", 429, headers={"Retry-After": "2"})
    with provider_for(openai_server, options={"sleep": sleeps}) as provider:
        completion = provider.chat.complete(USER)
    assert completion.text == "echo: Alice moved to Berlin."
    assert sleeps == [2.0]
    assert len(openai_server.requests) == 2


def test_retry_after_longer_than_thirty_seconds_is_capped(openai_server: OpenAITestServer) -> None:
    sleeps = Sleeps()
    openai_server.enqueue_error("embeddings", 429, headers={"Retry-After": "3600"})
    with embedder(openai_server, sleep=sleeps) as model:
        model.embed(["a"])
    assert sleeps == [30.0]


def test_500s_until_retries_are_exhausted_raise_provider_unavailable(
    openai_server: OpenAITestServer,
) -> None:
    sleeps = Sleeps()
    for _ in range(4):
        openai_server.enqueue_error("chat", 500)
    with (
        provider_for(openai_server, max_retries=3, options={"sleep": sleeps}) as provider,
        pytest.raises(ProviderUnavailable) as caught,
    ):
        provider.chat.complete(USER)
    error = caught.value
    assert error.status == 500
    assert "HTTP 500" in str(error)
    assert openai_server.base_url in str(error)
    assert "4 attempts" in str(error)
    assert len(openai_server.requests) == 4
    assert len(sleeps) == 3
    # Exponential backoff with at most 25 % jitter: 0.5, 1, 2 seconds.
    for delay, base in zip(sleeps, [0.5, 1.0, 2.0], strict=True):
        assert base <= delay <= base * 1.25
    assert error.__cause__ is not None


def test_408_409_and_503_are_retried(openai_server: OpenAITestServer) -> None:
    for status in (408, 409, 503):
        openai_server.enqueue_error("embeddings", status)
    with embedder(openai_server) as model:
        assert model.embed(["a"]).shape == (1, 8)
    assert len(openai_server.requests) == 4


def test_a_timeout_raises_provider_unavailable(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue_delay("chat", 0.5)
    with (
        provider_for(
            openai_server, timeout=0.2, max_retries=0, options={"sleep": Sleeps()}
        ) as provider,
        pytest.raises(ProviderUnavailable, match="timed out") as caught,
    ):
        provider.chat.complete(USER)
    assert caught.value.status is None
    assert "1 attempt" in str(caught.value)


def test_a_timeout_then_success_is_retried(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue_delay("embeddings", 0.5)
    with embedder(openai_server, timeout=0.2, max_retries=1) as model:
        assert model.embed(["a"]).shape == (1, 8)


def test_connection_refused_raises_provider_unavailable_after_the_retries() -> None:
    sleeps = Sleeps()
    base_url = unused_base_url()
    with (
        OpenAIChatModel(base_url=base_url, max_retries=2, sleep=sleeps) as model,
        pytest.raises(ProviderUnavailable, match="could not connect") as caught,
    ):
        model.complete(USER)
    assert base_url in str(caught.value)
    assert "3 attempts" in str(caught.value)
    assert len(sleeps) == 2


def test_a_dropped_connection_is_retried(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue_disconnect("chat")
    with chat_model(openai_server) as model:
        assert model.complete(USER).text == "echo: Alice moved to Berlin."
    assert len(openai_server.requests) == 2


# --------------------------------------------------------------------------- credentials


def test_401_raises_missing_credentials_naming_the_variable_without_the_key(
    openai_server: OpenAITestServer,
) -> None:
    openai_server.enqueue_error("chat", 401, body=f"Incorrect API key provided: {KEY}.")
    with provider_for(openai_server) as provider, pytest.raises(MissingCredentials) as caught:
        provider.chat.complete(USER)
    message = str(caught.value)
    assert "OPENAI_API_KEY" in message or "provider.api_key" in message
    assert "HTTP 401" in message
    assert KEY not in message
    assert len(openai_server.requests) == 1


def test_401_with_a_key_from_a_custom_variable_names_that_variable(
    openai_server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMGRAPH_TEST_KEY", KEY)
    openai_server.enqueue_error("embeddings", 403)
    with (
        embedder(openai_server, api_key=None, api_key_env="MEMGRAPH_TEST_KEY") as model,
        pytest.raises(MissingCredentials, match="MEMGRAPH_TEST_KEY") as caught,
    ):
        model.embed(["a"])
    assert KEY not in str(caught.value)
    assert openai_server.requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_missing_key_raises_missing_credentials_at_the_first_model_call_not_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    provider = resolve_provider("openai:gpt-4o-mini")  # building needs no key
    assert provider.embedder is not None
    with pytest.raises(MissingCredentials) as caught:
        provider.chat.complete(USER)
    with pytest.raises(MissingCredentials):
        provider.embedder.embed(["a"])
    assert "OPENAI_API_KEY" in str(caught.value)
    assert "provider.apiKeyEnv" in str(caught.value)
    assert "api_key_env" not in str(caught.value)
    assert "agency.json" in str(caught.value)


def test_missing_key_for_a_remote_base_url_names_the_configured_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    provider = resolve_provider(
        "openai:llama-3.1-8b",
        base_url="https://api.groq.com/openai/v1",
        api_key_env="GROQ_API_KEY",
    )
    with pytest.raises(MissingCredentials, match="set the GROQ_API_KEY environment variable"):
        provider.chat.complete(USER)


def test_key_is_read_from_the_environment_when_the_provider_is_built(
    openai_server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-0123456789")
    with provider_for(openai_server, api_key=None) as provider:
        monkeypatch.delenv("OPENAI_API_KEY")
        provider.chat.complete(USER)
    assert openai_server.requests[0].headers["authorization"] == "Bearer sk-from-env-0123456789"


def test_local_server_without_a_key_gets_a_placeholder_key(
    openai_server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with provider_for(openai_server, api_key=None) as provider:
        provider.chat.complete(USER)
    assert openai_server.requests[0].headers["authorization"] == (
        f"Bearer {LOCAL_PLACEHOLDER_API_KEY}"
    )


def test_404_names_the_missing_model(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue_error("chat", 404, body="The model `gpt-9` does not exist")
    with chat_model(openai_server) as model, pytest.raises(ProviderError) as caught:
        model.complete(USER)
    assert not isinstance(caught.value, (BadResponse, ProviderUnavailable))
    assert "'gpt-4o-mini'" in str(caught.value)
    assert "HTTP 404" in str(caught.value)


def test_other_4xx_is_a_bad_response(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue_error("embeddings", 422, body="input must not be empty")
    with embedder(openai_server) as model, pytest.raises(BadResponse, match="HTTP 422") as caught:
        model.embed(["a"])
    assert "input must not be empty" in caught.value.raw


def test_the_api_key_never_appears_in_errors_or_log_lines(
    openai_server: OpenAITestServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    leak = f"Incorrect API key provided: {KEY}"
    openai_server.enqueue_error("chat", 429, body=leak)
    openai_server.enqueue_error("chat", 500, body=leak)
    openai_server.enqueue_error("chat", 500, body=leak)
    openai_server.enqueue_error("chat", 400, body=leak)
    openai_server.enqueue_error("chat", 401, body=leak)
    errors: list[Exception] = []
    with chat_model(openai_server, max_retries=1) as model:
        for _ in range(3):
            with pytest.raises(ProviderError) as caught:
                model.complete(USER)
            errors.append(caught.value)
    assert [type(e) for e in errors] == [ProviderUnavailable, BadResponse, MissingCredentials]
    for error in errors:
        assert KEY not in str(error)
        assert KEY not in repr(error)
        assert KEY not in getattr(error, "raw", "")
    assert "retrying" in caplog.text
    assert KEY not in caplog.text


# --------------------------------------------------------------------------- MockTransport


def _completion_body(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 11, "completion_tokens": 2, "total_tokens": 13},
    }


def test_injected_http_client_with_mock_transport_is_used_and_retry_after_date_honoured() -> None:
    seen: list[httpx.Request] = []
    later = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=10), usegmt=True)

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if len(seen) == 1:
            return httpx.Response(
                429, headers={"Retry-After": later}, json={"error": {"message": "slow down"}}
            )
        return httpx.Response(200, json=_completion_body("hello"))

    sleeps = Sleeps()
    with httpx.Client(transport=httpx.MockTransport(handler)) as http_client:
        model = OpenAIChatModel(
            api_key=KEY,
            base_url="https://llm.example.test/v1",
            http_client=http_client,
            sleep=sleeps,
        )
        completion = model.complete(USER)
    assert completion.text == "hello"
    assert completion.model == "gpt-4o-mini-2024-07-18"
    assert completion.usage.total_tokens == 13
    assert str(seen[0].url) == "https://llm.example.test/v1/chat/completions"
    assert len(sleeps) == 1 and 5.0 <= sleeps[0] <= 10.0


def test_insufficient_quota_429_is_not_retried() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        body = {
            "error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}
        }
        return httpx.Response(429, json=body)

    with httpx.Client(transport=httpx.MockTransport(handler)) as http_client:
        model = OpenAIChatModel(api_key=KEY, http_client=http_client, sleep=Sleeps())
        with pytest.raises(ProviderUnavailable, match="out of quota") as caught:
            model.complete(USER)
    assert caught.value.status == 429
    assert calls == 1


def test_embeddings_returned_out_of_order_are_put_back_in_input_order() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        texts = json.loads(request.content)["input"]
        data = [
            {"object": "embedding", "index": i, "embedding": [float(i), float(len(t))]}
            for i, t in enumerate(texts)
        ]
        return httpx.Response(200, json={"object": "list", "data": data[::-1], "model": "m"})

    with httpx.Client(transport=httpx.MockTransport(handler)) as http_client:
        model = OpenAIEmbedder("m", api_key=KEY, http_client=http_client)
        vectors = model.embed(["a", "bb", "ccc"])
    np.testing.assert_array_equal(vectors, np.array([[0, 1], [1, 2], [2, 3]], dtype=np.float32))


def test_async_client_with_mock_transport_is_used() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=_completion_body('{"ok": true}'))

    async def main() -> Any:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http_client:
            model = OpenAIChatModel(api_key=KEY, async_http_client=http_client)
            return await model.acomplete(
                USER, schema=JsonSchema("memgraph_rerank", {"type": "object"})
            )

    assert json.loads(asyncio.run(main()).text) == {"ok": True}


# --------------------------------------------------------------------------- the test server


def test_the_test_server_lists_models_and_records_requests(openai_server: OpenAITestServer) -> None:
    with httpx.Client() as client:
        reply = client.get(f"{openai_server.base_url}/models")
    assert reply.status_code == 200
    assert [m["id"] for m in reply.json()["data"]] == openai_server.models
    assert openai_server.requests_to("models")[0].method == "GET"
