"""The OpenAI-compatible provider against what local servers really do.

Structured output that adapts (and remembers), request options, timeouts and
retries fitted to the kind of endpoint, tool calls returned as text, and
embeddings that come back one vector per token. Against the local fake server
in ``tests/openai_server.py`` and ``httpx.MockTransport``.
"""

# The ``openai_server`` fixture is imported; test arguments of that name shadow it.
# ruff: noqa: F811

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from memgraph.providers.openai_compat import OpenAIChatModel, OpenAIEmbedder
from memgraph.providers.openai_structured import MEMO_FILE, FormatMemo
from memgraph.providers.openai_transport import default_timeout, endpoint_kind

from memgraph.config import MemoryConfig
from memgraph.errors import BadResponse, ConfigError, ProviderUnavailable
from memgraph.llm_calls.provider import JsonSchema, Provider
from memgraph.llm_calls.resolve import choose_provider
from tests.openai_server import OpenAITestServer, openai_server  # noqa: F401

SCHEMA = JsonSchema(
    "memgraph_summarize",
    {
        "type": "object",
        "properties": {"summary": {"type": "string"}},
        "required": ["summary"],
        "additionalProperties": False,
    },
)
USER = [{"role": "user", "content": "Summarize: Alice moved to Berlin."}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


@contextmanager
def chosen(config: MemoryConfig) -> Iterator[Provider]:
    """The provider ``config`` selects, its clients closed afterwards."""
    provider, _ = choose_provider(None, config)
    try:
        yield provider
    finally:
        for part in (provider.chat, provider.embedder):
            close = getattr(part, "close", None)
            if close is not None:
                close()


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def chat(server: OpenAITestServer, **kwargs: Any) -> OpenAIChatModel:
    kwargs.setdefault("sleep", Sleeps())
    return OpenAIChatModel("qwen", base_url=server.base_url, **kwargs)


def formats(server: OpenAITestServer) -> list[str | None]:
    return [(r.body.get("response_format") or {}).get("type") for r in server.requests_to("chat")]


def completion_body(text: str) -> dict[str, Any]:
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
    }


# ------------------------------------------------------------- structured output
@pytest.mark.parametrize("status", [400, 500])
def test_a_refused_json_schema_steps_down_to_json_object_with_the_schema_beside_it(
    openai_server: OpenAITestServer, status: int
) -> None:
    openai_server.json_schema_refusal = status
    openai_server.enqueue_chat('{"summary": "Alice moved."}')
    with chat(openai_server) as model:
        reply = model.complete(USER, schema=SCHEMA)
        assert model.structured_output == "json_object"
    assert json.loads(reply.text) == {"summary": "Alice moved."}
    assert formats(openai_server) == ["json_schema", "json_object"]
    fallback = openai_server.requests_to("chat")[1].body
    assert fallback["response_format"]["schema"] == dict(SCHEMA.schema)
    assert '{"summary":"<the summary>"}' in fallback["messages"][0]["content"]


def test_a_server_refusing_every_response_format_gets_none_and_a_plain_reply(
    openai_server: OpenAITestServer,
) -> None:
    openai_server.json_schema_refusal = 500
    openai_server.refuse_response_format = True
    openai_server.enqueue_chat('Sure:\n```json\n{"summary": "Alice moved."}\n```')
    with chat(openai_server) as model:
        reply = model.complete(USER, schema=SCHEMA)
        assert model.structured_output == "none"
    assert formats(openai_server) == ["json_schema", "json_object", None]
    assert "Sure:" in reply.text, "prose stays for the lenient parser"


def test_the_downgrade_is_remembered_on_disk_and_warned_about_once(
    openai_server: OpenAITestServer, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    openai_server.json_schema_refusal = 500
    with caplog.at_level(logging.WARNING):
        with chat(openai_server) as first:
            first.complete(USER, schema=SCHEMA)
        with chat(openai_server) as later:  # a new process would build a new model
            later.complete(USER, schema=SCHEMA)
            assert later.structured_output == "json_object"
    assert formats(openai_server) == ["json_schema", "json_object", "json_object"]
    assert caplog.text.count("refused structured output") == 1
    memo = json.loads((tmp_path / "cache" / MEMO_FILE).read_text())
    assert memo[f"{openai_server.base_url} qwen"]["mode"] == "json_object"


def test_the_memo_is_kept_per_endpoint_and_model(openai_server: OpenAITestServer) -> None:
    openai_server.json_schema_refusal = 400
    with chat(openai_server) as model:
        model.complete(USER, schema=SCHEMA)
    other = OpenAIChatModel("other-model", base_url=openai_server.base_url)
    assert other.structured_output == "json_schema"


def test_an_unwritable_cache_costs_only_the_memo(
    openai_server: OpenAITestServer, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    openai_server.json_schema_refusal = 500
    memo = FormatMemo(blocker / MEMO_FILE)
    with chat(openai_server, format_memo=memo) as model:
        model.complete(USER, schema=SCHEMA)
        model.complete(USER, schema=SCHEMA)
    assert formats(openai_server) == ["json_schema", "json_object", "json_object"]


def test_a_fixed_structured_output_is_used_from_the_first_request(
    openai_server: OpenAITestServer,
) -> None:
    with chat(openai_server, structured_output="json_object") as model:
        model.complete(USER, schema=SCHEMA)
    with chat(openai_server, structured_output="none") as model:
        model.complete(USER, schema=SCHEMA)
    assert formats(openai_server) == ["json_object", None]


def test_a_fixed_structured_output_the_server_refuses_says_which_setting_to_change(
    openai_server: OpenAITestServer,
) -> None:
    openai_server.json_schema_refusal = 500
    with (
        chat(openai_server, structured_output="json_schema") as model,
        pytest.raises(
            BadResponse, match=r"refused response_format 'json_schema'.*structuredOutput"
        ),
    ):
        model.complete(USER, schema=SCHEMA)
    assert len(openai_server.requests) == 1, "a refusal is not an outage: no retry"


def test_an_unknown_structured_output_setting_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="structuredOutput"):
        OpenAIChatModel("m", base_url="http://127.0.0.1:1/v1", structured_output="grammar")
    with pytest.raises(ConfigError, match="structuredOutput"):
        MemoryConfig.from_dict({"provider": {"structuredOutput": "grammar"}})


def test_the_async_path_adapts_the_same_way(openai_server: OpenAITestServer) -> None:
    openai_server.json_schema_refusal = 500

    async def main() -> str:
        async with chat(openai_server) as model:
            return (await model.acomplete(USER, schema=SCHEMA)).text

    assert json.loads(asyncio.run(main())) == {"summary": ""}
    assert formats(openai_server) == ["json_schema", "json_object"]


# ------------------------------------------------------------------ options
def test_provider_options_reach_the_request_and_unknown_ones_go_in_the_body(
    openai_server: OpenAITestServer,
) -> None:
    config = MemoryConfig.from_dict(
        {
            "provider": {
                "name": "openai",
                "model": "qwen",
                "baseUrl": openai_server.base_url,
                "options": {
                    "temperature": 0,
                    "max_tokens": 512,
                    "top_p": 0.9,
                    "seed": 7,
                    "repeat_penalty": 1.1,
                },
            }
        }
    )
    with chosen(config) as provider:
        provider.chat.complete(USER)
        provider.chat.complete(USER, max_tokens=64)
    first, second = (r.body for r in openai_server.requests_to("chat"))
    assert {k: first[k] for k in ("temperature", "max_tokens", "top_p", "seed")} == {
        "temperature": 0,
        "max_tokens": 512,
        "top_p": 0.9,
        "seed": 7,
    }
    assert first["repeat_penalty"] == 1.1, "an extra body field reaches the server as it is"
    assert second["max_tokens"] == 64, "a per-call option wins"


def test_provider_options_must_be_an_object() -> None:
    with pytest.raises(ConfigError, match=r"provider\.options must be an object"):
        MemoryConfig.from_dict({"provider": {"options": ["temperature"]}})


def test_the_embedding_dimension_option_reaches_the_request(
    openai_server: OpenAITestServer,
) -> None:
    config = MemoryConfig.from_dict(
        {
            "provider": {"name": "openai", "baseUrl": openai_server.base_url},
            "embeddings": {"dimension": 16},
        }
    )
    with chosen(config) as provider:
        assert provider.embedder is not None
        assert provider.embedder.embed(["a"]).shape == (1, 16)
    assert openai_server.requests_to("embeddings")[0].body["dimensions"] == 16


# ------------------------------------------------------- timeouts and retries
@pytest.mark.parametrize(
    ("url", "kind", "seconds"),
    [
        ("http://127.0.0.1:8080/v1", "loopback", 300.0),
        ("http://localhost:11434/v1", "loopback", 300.0),
        ("http://[::1]:8000/v1", "loopback", 300.0),
        ("http://192.168.1.20:8000/v1", "private", 120.0),
        ("http://gpu-box.local:8000/v1", "private", 120.0),
        ("https://api.openai.com/v1", "remote", 60.0),
        (None, "remote", 60.0),
    ],
)
def test_the_default_timeout_depends_on_the_kind_of_endpoint(
    url: str | None, kind: str, seconds: float
) -> None:
    assert endpoint_kind(url) == kind
    assert default_timeout(url) == seconds


def test_an_unset_timeout_in_the_config_gives_a_local_server_its_longer_default(
    openai_server: OpenAITestServer,
) -> None:
    config = MemoryConfig.from_dict(
        {"provider": {"name": "openai", "baseUrl": openai_server.base_url}}
    )
    with chosen(config) as provider:
        assert isinstance(provider.chat, OpenAIChatModel)
        assert config.provider.timeout is None and provider.chat.timeout == 300.0
    configured = MemoryConfig.from_dict({"provider": {"name": "openai", "timeout": 900}})
    assert configured.provider.timeout == 900.0


def test_a_500_from_a_local_server_is_not_retried(openai_server: OpenAITestServer) -> None:
    openai_server.enqueue_error("chat", 500, body="model failed to load")
    sleeps = Sleeps()
    with chat(openai_server, sleep=sleeps) as model, pytest.raises(ProviderUnavailable) as caught:
        model.complete(USER)
    assert "not retried" in str(caught.value) and "model failed to load" in str(caught.value)
    assert len(openai_server.requests) == 1 and sleeps == []


@pytest.mark.parametrize(("header", "calls"), [("true", 2), ("false", 1)])
def test_the_servers_x_should_retry_header_decides(
    openai_server: OpenAITestServer, header: str, calls: int
) -> None:
    openai_server.enqueue_error("chat", 500, headers={"x-should-retry": header})
    with chat(openai_server) as model:
        if calls == 2:
            model.complete(USER)
        else:
            with pytest.raises(ProviderUnavailable):
                model.complete(USER)
    assert len(openai_server.requests) == calls


def test_a_500_from_a_remote_server_is_retried() -> None:
    statuses = [500, 200]

    def handler(request: httpx.Request) -> httpx.Response:
        status = statuses.pop(0)
        if status == 500:
            return httpx.Response(500, json={"error": {"message": "overloaded"}})
        return httpx.Response(200, json=completion_body("hello"))

    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        model = OpenAIChatModel(
            "m", api_key="sk-test-0123456789", base_url="https://llm.example.test/v1",
            http_client=client, sleep=Sleeps(),
        )  # fmt: skip
        assert model.complete(USER).text == "hello"
    assert statuses == []


def test_a_slow_local_reply_fails_once_with_advice_instead_of_queueing_retries(
    openai_server: OpenAITestServer,
) -> None:
    openai_server.enqueue_delay("chat", 1.0)
    with (
        chat(openai_server, timeout=0.2, max_retries=3) as model,
        pytest.raises(ProviderUnavailable, match=r"Raise provider\.timeout"),
    ):
        model.complete(USER, schema=SCHEMA)
    assert len(openai_server.requests_to("chat")) == 1


# ------------------------------------------------------------- tool calls
@pytest.mark.parametrize(
    "content",
    [
        '{"name": "get_weather", "arguments": {"city": "Paris"}}',
        '{{"name": "get_weather", "arguments": {"city": "Paris"}}}',
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        '```json\n{"name": "get_weather", "parameters": {"city": "Paris"}}\n```',
        '{"tool_calls": [{"function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}}]}',
    ],
)
def test_a_tool_call_returned_as_text_is_parsed_when_the_request_had_tools(
    openai_server: OpenAITestServer, content: str
) -> None:
    openai_server.enqueue_chat(content)
    with chat(openai_server) as model:
        reply = model.complete(USER, tools=TOOLS)
    [call] = reply.tool_calls
    assert call["type"] == "function" and call["id"].startswith("call_")
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}
    assert reply.text == "" and reply.finish_reason == "tool_calls"
    assert reply.as_message()["tool_calls"] == [call]


@pytest.mark.parametrize(
    ("content", "tools"),
    [
        ('{"name": "get_weather", "arguments": {"city": "Paris"}}', None),
        ('{"name": "delete_everything", "arguments": {}}', TOOLS),
        ('The tool would be {"name": "get_weather", "arguments": {}} but I know it.', TOOLS),
        ('{"name": "get_weather", "arguments": "not json"}', TOOLS),
    ],
)
def test_text_that_is_not_a_call_to_an_offered_tool_stays_text(
    openai_server: OpenAITestServer, content: str, tools: Any
) -> None:
    openai_server.enqueue_chat(content)
    with chat(openai_server) as model:
        reply = model.complete(USER, **({"tools": tools} if tools else {}))
    assert reply.text == content and reply.tool_calls == ()


# ------------------------------------------------------------------ embeddings
def test_per_token_embeddings_are_refused_with_what_to_do(openai_server: OpenAITestServer) -> None:
    openai_server.per_token_embeddings = True
    with (
        OpenAIEmbedder("qwen", base_url=openai_server.base_url) as embedder,
        pytest.raises(BadResponse) as caught,
    ):
        embedder.embed(["Alice likes tea", "Bob"])
    message = str(caught.value)
    assert "one vector per token" in message
    assert "--pooling mean" in message and 'embeddings.provider to "mock" or "none"' in message


def test_the_vector_space_names_the_endpoint_and_the_size() -> None:
    local = OpenAIEmbedder("nomic-embed-text", base_url="http://127.0.0.1:11434/v1")
    sized = OpenAIEmbedder(
        "nomic-embed-text", base_url="http://127.0.0.1:11434/v1/", dimensions=256
    )
    other = OpenAIEmbedder("nomic-embed-text", base_url="http://127.0.0.1:8080/v1")
    openai = OpenAIEmbedder("text-embedding-3-small", api_key="sk-test-0123456789")
    native = OpenAIEmbedder("text-embedding-3-small", api_key="sk-test-0123456789", dimensions=1536)
    assert local.space == "nomic-embed-text@http://127.0.0.1:11434/v1"
    assert sized.space == "nomic-embed-text@http://127.0.0.1:11434/v1/256d"
    assert len({local.space, sized.space, other.space}) == 3
    assert openai.space == native.space == "text-embedding-3-small", "as before on OpenAI"


def test_embeddings_can_come_from_another_server(openai_server: OpenAITestServer) -> None:
    with OpenAITestServer().start() as embedding_server:
        config = MemoryConfig.from_dict(
            {
                "provider": {"name": "openai", "baseUrl": openai_server.base_url},
                "embeddings": {"model": "nomic-embed-text", "baseUrl": embedding_server.base_url},
            }
        )
        with chosen(config) as provider:
            assert provider.embedder is not None
            provider.embedder.embed(["a"])
            provider.chat.complete(USER)
        assert len(embedding_server.requests_to("embeddings")) == 1
    assert openai_server.requests_to("embeddings") == []
    assert len(openai_server.requests_to("chat")) == 1
