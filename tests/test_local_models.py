"""Memory against servers that behave like the local ones people run.

Each test configures memgraph as a user would (``provider.baseUrl`` pointing at
the local fake server in ``tests/openai_server.py``) and drives the public API
through one thing real servers do: refusing ``json_schema`` with 500 or 400,
taking a schema beside ``json_object``, knowing no ``response_format``,
replying in fences, with trailing commas, cut off at the token limit, too
slowly, with invalid re-rank ids, without embeddings or with per-token ones.
Every path ends in a clear outcome: the facts stored, or a typed failure.
"""

# The ``openai_server`` fixture is imported; test arguments of that name shadow it.
# ruff: noqa: F811

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memgraph import Memory
from memgraph.engine import core
from memgraph.errors import BadResponse, ProviderUnavailable
from memgraph.llm_calls.prompts import EXTRACT_SCHEMA
from tests.openai_server import OpenAITestServer, openai_server  # noqa: F401

ALICE = {
    "entities": [{"name": "Alice Chen", "type": "person", "observations": ["drinks green tea"]}],
    "relations": [{"from": "Alice Chen", "to": "Acme", "type": "works_at"}],
    "expirations": [],
}


def config(
    server: OpenAITestServer, embeddings: str | None = None, **provider: Any
) -> dict[str, Any]:
    block: dict[str, Any] = {
        "provider": {"name": "openai", "model": "qwen", "baseUrl": server.base_url, **provider}
    }
    if embeddings is not None:
        block["embeddings"] = {"provider": embeddings}
    return block


def local(tmp_path: Path, server: OpenAITestServer, **kwargs: Any) -> Memory:
    return Memory(tmp_path / "mem", "alice", config=config(server, **kwargs))


def extract_formats(server: OpenAITestServer) -> list[str | None]:
    return [
        (r.body.get("response_format") or {}).get("type")
        for r in server.requests_to("chat")
        if "<text>" in json.dumps(r.body)
    ]


def unextracted(memory: Memory) -> list[str]:
    return [e.text for e in memory.iter_episodes() if not e.extracted]


def current(memory: Memory) -> dict[str, list[str]]:
    return {e.name: [o.content for o in e.current_observations] for e in memory.entities()}


# ------------------------------------------------------------- structured output
@pytest.mark.parametrize("status", [500, 400])
def test_a_server_refusing_json_schema_still_stores_the_text(
    tmp_path: Path, openai_server: OpenAITestServer, status: int
) -> None:
    openai_server.json_schema_refusal = status
    openai_server.enqueue_chat(json.dumps(ALICE))
    with local(tmp_path, openai_server) as memory:
        changes = memory.remember("Alice Chen drinks green tea and works at Acme.")
        assert changes and current(memory)["Alice Chen"] == ["drinks green tea"]
    assert extract_formats(openai_server) == ["json_schema", "json_object"]


def test_the_next_process_starts_with_the_format_that_worked(
    tmp_path: Path, openai_server: OpenAITestServer, caplog: pytest.LogCaptureFixture
) -> None:
    openai_server.json_schema_refusal = 500
    with caplog.at_level(logging.WARNING):
        for text in ("Alice drinks tea.", "Bob drinks coffee."):
            with local(tmp_path, openai_server) as memory:  # one CLI process each
                memory.remember(text)
    assert extract_formats(openai_server) == ["json_schema", "json_object", "json_object"]
    assert caplog.text.count("refused structured output") == 1


def test_a_server_without_response_format_gets_a_prompt_with_an_example(
    tmp_path: Path, openai_server: OpenAITestServer
) -> None:
    openai_server.refuse_response_format = True
    openai_server.enqueue_chat("Here is the JSON:\n```json\n" + json.dumps(ALICE) + "\n```")
    with local(tmp_path, openai_server, structuredOutput="none") as memory:
        assert memory.remember("Alice Chen drinks green tea and works at Acme.")
    [request] = openai_server.requests_to("chat")
    assert "response_format" not in request.body
    assert '"observations":["<short fact about it>"]' in request.body["messages"][0]["content"]


def test_json_object_mode_sends_the_schema_beside_it(
    tmp_path: Path, openai_server: OpenAITestServer
) -> None:
    with local(tmp_path, openai_server, structuredOutput="json_object") as memory:
        memory.remember("Alice drinks tea.")  # the server fills the schema: nothing new
    [request] = openai_server.requests_to("chat")
    assert request.body["response_format"] == {
        "type": "json_object",
        "schema": json.loads(json.dumps(EXTRACT_SCHEMA.schema)),
    }


# ------------------------------------------------------------- replies
@pytest.mark.parametrize(
    "reply",
    [
        "```json\n" + json.dumps(ALICE) + "\n```",
        json.dumps(ALICE, indent=1).replace("]\n", "],\n").replace('"\n', '",\n'),
        json.dumps({"type": "object", "properties": ALICE}),
        json.dumps(
            {"entities": {"Alice Chen": {"type": "person", "observations": "drinks green tea"}}}
        ),
    ],
    ids=["fenced", "trailing-commas", "schema-echo", "keyed-by-name"],
)
def test_replies_small_models_get_wrong_are_stored_without_a_repair_call(
    tmp_path: Path, openai_server: OpenAITestServer, reply: str
) -> None:
    openai_server.enqueue_chat(reply)
    with local(tmp_path, openai_server) as memory:
        changes = memory.remember("Alice Chen drinks green tea at Acme.")
        assert current(memory)["Alice Chen"] == ["drinks green tea"]
        assert not changes.warnings
    assert len(openai_server.requests_to("chat")) == 1


def test_a_cut_off_reply_is_retried_with_more_room_and_stored(
    tmp_path: Path, openai_server: OpenAITestServer
) -> None:
    openai_server.enqueue_truncated(json.dumps(ALICE)[:50], completion_tokens=600)
    openai_server.enqueue_chat(json.dumps(ALICE))
    with local(tmp_path, openai_server, options={"max_tokens": 600}) as memory:
        assert memory.remember("Alice Chen drinks green tea at Acme.")
    first, second = (r.body for r in openai_server.requests_to("chat"))
    assert first["max_tokens"] == 600 and second["max_tokens"] == 1200
    assert second["messages"] == first["messages"], "no repair prompt for a cut-off reply"


def test_a_reply_cut_off_twice_stores_no_invented_facts_and_says_so(
    tmp_path: Path, openai_server: OpenAITestServer
) -> None:
    openai_server.enqueue_truncated(json.dumps(ALICE)[:50], completion_tokens=600)
    openai_server.enqueue_truncated(json.dumps(ALICE)[:90], completion_tokens=1200)
    with local(tmp_path, openai_server) as memory:
        changes = memory.remember("Alice Chen drinks green tea at Acme.")
        assert not changes and memory.entities() == []
        assert changes.unusable_reply is not None
        assert "cut off at the token limit after 1200 tokens" in changes.unusable_reply
        assert unextracted(memory) == ["Alice Chen drinks green tea at Acme."], "the text is kept"
    assert len(openai_server.requests_to("chat")) == 2


def test_a_reply_unusable_after_its_repair_keeps_the_text_for_reextract(
    tmp_path: Path, openai_server: OpenAITestServer
) -> None:
    openai_server.enqueue_chat('{"entities": [{"name": "Alice Chen" "type": "person"}]}')
    openai_server.enqueue_chat("I cannot help with that.")
    with local(tmp_path, openai_server, embeddings="none") as memory:
        changes = memory.remember("Alice Chen drinks green tea at Acme.")
        assert not changes and changes.unusable_reply
        assert unextracted(memory) == ["Alice Chen drinks green tea at Acme."]
        assert "Alice Chen drinks green tea at Acme." in memory.recall("green tea", rerank=False)
        openai_server.enqueue_chat(json.dumps(ALICE))
        [redone] = memory.reextract()
        assert redone.unusable_reply is None
        assert current(memory)["Alice Chen"] == ["drinks green tea"]
        assert unextracted(memory) == []


def test_an_unusable_reply_gets_one_repair_quoting_the_parse_error(
    tmp_path: Path, openai_server: OpenAITestServer
) -> None:
    openai_server.enqueue_chat('{"entities": [{"name": "Alice Chen" "type": "person"}]}')
    openai_server.enqueue_chat(json.dumps(ALICE))
    with local(tmp_path, openai_server) as memory:
        assert memory.remember("Alice Chen drinks green tea at Acme.")
    repair = openai_server.requests_to("chat")[1].body["messages"][-1]["content"]
    assert "Expecting ',' delimiter" in repair


def test_a_slow_local_server_fails_fast_with_advice_instead_of_queueing_retries(
    tmp_path: Path, openai_server: OpenAITestServer
) -> None:
    openai_server.enqueue_delay("chat", 1.0)
    with (
        local(tmp_path, openai_server, timeout=0.2) as memory,
        pytest.raises(ProviderUnavailable, match=r"provider\.timeout"),
    ):
        memory.remember("Alice Chen drinks green tea at Acme.")
    assert len(openai_server.requests_to("chat")) == 1


# ------------------------------------------------------------- re-ranking
@pytest.mark.parametrize("ids", [["/obs-72"], [""], [], ["Alice"]])
def test_a_rerank_naming_no_candidate_keeps_the_tier_1_and_2_order(
    tmp_path: Path, openai_server: OpenAITestServer, ids: list[str]
) -> None:
    openai_server.enqueue_chat(json.dumps(ALICE))
    with local(tmp_path, openai_server, embeddings="none") as memory:
        memory.remember("Alice Chen drinks green tea and works at Acme.")
        expected = memory.recall("what does alice chen drink", rerank=False)
        openai_server.enqueue_chat(json.dumps({"ids": ids}))
        assert expected and memory.recall("what does alice chen drink") == expected


def test_rerank_ids_are_limited_to_the_candidates_and_read_through_decoration(
    tmp_path: Path, openai_server: OpenAITestServer
) -> None:
    openai_server.enqueue_chat(json.dumps(ALICE))
    with local(tmp_path, openai_server, embeddings="none") as memory:
        memory.remember("Alice Chen drinks green tea and works at Acme.")
        [fact] = memory.entity("Alice Chen").current_observations
        openai_server.enqueue_chat(json.dumps({"ids": [f"[{fact.id}]"]}))
        hits = memory.search("what does alice chen drink", rerank=True)
    assert [hit.observation.id for hit in hits if hit.observation] == [fact.id]
    request = openai_server.requests_to("chat")[-1].body
    ids_schema = request["response_format"]["json_schema"]["schema"]["properties"]["ids"]
    assert fact.id in ids_schema["items"]["enum"], "the candidates' ids, and only those"
    assert set(ids_schema["items"]["enum"]) <= {fact.id, *(e.id for e in memory.iter_episodes())}


# ------------------------------------------------------------- embeddings
def test_without_embeddings_memory_uses_names_and_keywords_only(
    tmp_path: Path, openai_server: OpenAITestServer
) -> None:
    openai_server.enqueue_chat(json.dumps(ALICE))
    with local(tmp_path, openai_server, embeddings="none") as memory:
        assert memory.provider.embedder is None
        memory.remember("Alice Chen drinks green tea at Acme.")
        assert "drinks green tea" in memory.recall("alice chen", rerank=False)
        assert memory.stats()["vectors"] == 0
    assert openai_server.requests_to("embeddings") == []


def test_mock_embeddings_work_offline_beside_a_local_chat_model(
    tmp_path: Path, openai_server: OpenAITestServer
) -> None:
    openai_server.enqueue_chat(json.dumps(ALICE))
    with local(tmp_path, openai_server, embeddings="mock") as memory:
        memory.remember("Alice Chen drinks green tea at Acme.")
        assert memory.stats()["vectors"] == 2, "the fact and the remembered text"
        assert "drinks green tea" in memory.recall("green tea", rerank=False)
    assert openai_server.requests_to("embeddings") == []


def test_per_token_embeddings_are_refused_before_anything_is_stored(
    tmp_path: Path, openai_server: OpenAITestServer
) -> None:
    openai_server.per_token_embeddings = True
    openai_server.enqueue_chat(json.dumps(ALICE))
    with local(tmp_path, openai_server) as memory:
        with pytest.raises(BadResponse, match="one vector per token"):
            memory.remember("Alice Chen drinks green tea at Acme.")
        assert memory.entities() == []


def test_a_scope_opens_and_answers_while_the_embedder_is_down_then_catches_up(
    tmp_path: Path, openai_server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    openai_server.enqueue_chat(json.dumps(ALICE))
    with local(tmp_path, openai_server, embeddings="none") as memory:
        memory.remember("Alice Chen drinks green tea at Acme.")  # stored without vectors
    openai_server.embeddings_status = 500  # llama.cpp's server without --embedding
    monkeypatch.setattr(core, "EMBED_RETRY_SECONDS", 0.0)  # try again on every read
    with local(tmp_path, openai_server) as memory:
        assert sorted(e.name for e in memory.entities()) == ["Acme", "Alice Chen"]
        assert "drinks green tea" in memory.recall("alice chen", rerank=False)
        assert memory.stats()["vectors"] == 0
        openai_server.embeddings_status = None  # the embedder answers again
        filled = memory.stats()["vectors"]
        assert filled == 2, "the fact's and the text's vectors are filled on a later read"
    assert len(openai_server.requests_to("embeddings")) >= 2


def test_vectors_record_the_endpoint_so_another_server_re_embeds(
    tmp_path: Path, openai_server: OpenAITestServer, caplog: pytest.LogCaptureFixture
) -> None:
    openai_server.enqueue_chat(json.dumps(ALICE))
    with local(tmp_path, openai_server) as memory:
        memory.remember("Alice Chen drinks green tea at Acme.")
        memory.checkpoint()
    header = json.loads((tmp_path / "mem" / "alice" / "vectors.json").read_text())
    assert header["model"] == f"text-embedding-3-small@{openai_server.base_url}"
    with OpenAITestServer(embedding_dimensions=8).start() as other:
        with caplog.at_level(logging.WARNING), local(tmp_path, other) as memory:
            assert memory.stats()["vectors"] == 2
        assert len(other.requests_to("embeddings")) == 1, "re-embedded, never mixed"
    assert "rebuilding the index instead of mixing vector spaces" in caplog.text


def test_the_configured_dimension_is_requested_and_recorded(
    tmp_path: Path, openai_server: OpenAITestServer
) -> None:
    openai_server.enqueue_chat(json.dumps(ALICE))
    block = config(openai_server)
    block["embeddings"] = {"dimension": 16}
    with Memory(tmp_path / "mem", "alice", config=block) as memory:
        memory.remember("Alice Chen drinks green tea at Acme.")
        memory.checkpoint()
    assert openai_server.requests_to("embeddings")[0].body["dimensions"] == 16
    header = json.loads((tmp_path / "mem" / "alice" / "vectors.json").read_text())
    assert header["model"].endswith("/16d") and header["dim"] == 16
    vectors = np.load(tmp_path / "mem" / "alice" / "vectors.npy")
    assert vectors.shape == (2, 16), "the fact and the remembered text"
