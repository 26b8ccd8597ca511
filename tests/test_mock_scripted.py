"""ScriptedChatModel: canned replies, phase scripts, exhaustion and recording."""

from __future__ import annotations

import asyncio
import json

import pytest
from memgraph.providers.mock import MockChatModel, ScriptedChatModel, ScriptExhausted

from memgraph.errors import ProviderUnavailable
from memgraph.llm_calls.prompts import EXTRACT_SCHEMA, RERANK_SCHEMA
from memgraph.llm_calls.provider import ChatModel, Completion, Usage

USER = [{"role": "user", "content": "Alice works at Acme"}]


def test_a_queue_replays_strings_dicts_and_completions_in_order() -> None:
    canned = Completion(text="as is", model="other", usage=Usage(1, 2))
    model = ScriptedChatModel(["first", {"ids": ["obs-1"]}, canned])
    assert model.complete(USER).text == "first"
    assert json.loads(model.complete(USER, schema=RERANK_SCHEMA).text) == {"ids": ["obs-1"]}
    assert model.complete(USER) is canned
    assert model.exhausted


def test_a_single_reply_is_a_queue_of_one() -> None:
    model = ScriptedChatModel({"entities": [], "relations": [], "expirations": []})
    reply = json.loads(model.complete(USER, schema=EXTRACT_SCHEMA).text)
    assert reply == {"entities": [], "relations": [], "expirations": []}
    assert model.remaining() == 0


def test_replies_keyed_by_phase_answer_only_their_phase() -> None:
    model = ScriptedChatModel({"extract": [{"entities": []}], "chat": ["hello", "again"]})
    assert model.complete(USER).text == "hello"
    assert json.loads(model.complete(USER, schema=EXTRACT_SCHEMA).text) == {"entities": []}
    assert model.remaining("chat") == 1
    assert model.remaining("extract") == 0
    with pytest.raises(ScriptExhausted, match="'rerank'"):
        model.complete(USER, schema=RERANK_SCHEMA)


def test_an_exhausted_script_raises_an_assertion_error_naming_the_call() -> None:
    model = ScriptedChatModel(["only"])
    model.complete(USER)
    with pytest.raises(AssertionError, match=r"no reply left for phase 'chat' \(call #2") as info:
        model.complete(USER)
    assert "Alice works at Acme" in str(info.value)


def test_an_exhausted_script_can_fall_back_to_another_model() -> None:
    model = ScriptedChatModel({"chat": ["scripted"]}, fallback=MockChatModel())
    assert model.complete(USER).text == "scripted"
    fallback = json.loads(model.complete(USER, schema=EXTRACT_SCHEMA).text)
    assert fallback["relations"] == [{"from": "Alice", "to": "Acme", "type": "works_at"}]
    assert len(model.calls) == 2


def test_scripted_exceptions_are_raised_as_instances_or_classes() -> None:
    model = ScriptedChatModel([ProviderUnavailable("down", status=503), TimeoutError, "ok"])
    with pytest.raises(ProviderUnavailable, match="down"):
        model.complete(USER)
    with pytest.raises(TimeoutError, match="scripted failure"):
        model.complete(USER)
    assert model.complete(USER).text == "ok"


def test_every_call_is_recorded_with_messages_schema_and_options() -> None:
    model = ScriptedChatModel(["a", "b"])
    model.complete(USER, temperature=0)
    model.complete(USER, schema=RERANK_SCHEMA)
    first, second = model.calls
    assert first.messages == USER and first.schema is None and first.options == {"temperature": 0}
    assert first.phase == "chat" and first.last_user == "Alice works at Acme"
    assert second.schema is RERANK_SCHEMA and second.phase == "rerank"
    assert model.calls_for("rerank") == [second]


def test_recorded_messages_are_copies() -> None:
    messages = [{"role": "user", "content": "before"}]
    model = ScriptedChatModel(["x"])
    model.complete(messages)
    messages[0]["content"] = "after"
    assert model.calls[0].last_user == "before"


def test_replies_can_be_added_later() -> None:
    queued = ScriptedChatModel()
    queued.add("late")
    assert queued.complete(USER).text == "late"
    phased = ScriptedChatModel({"chat": []})
    phased.add("later", phase="extract")
    assert phased.complete(USER, schema=EXTRACT_SCHEMA).text == "later"
    with pytest.raises(ValueError):
        phased.add("no phase")


def test_string_replies_report_model_and_usage() -> None:
    completion = ScriptedChatModel(["three word reply"], model="fake-1").complete(USER)
    assert completion.model == "fake-1"
    assert completion.usage == Usage(prompt_tokens=5, completion_tokens=4)
    assert isinstance(ScriptedChatModel(), ChatModel)


def test_acomplete_is_the_async_twin() -> None:
    model = ScriptedChatModel(["async"])
    assert asyncio.run(model.acomplete(USER)).text == "async"
    assert len(model.calls) == 1
