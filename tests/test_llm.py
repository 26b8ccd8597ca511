"""llm() / allm(): injection, threads, automatic extraction and compaction, offline."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from memgraph.providers.mock import HashEmbedder, MockChatModel, ScriptedChatModel

from memgraph import (
    Completion,
    ConfigError,
    Memory,
    Provider,
    ProviderUnavailable,
    Thread,
    allm,
    enable_memory,
    llm,
    memory,
    remember,
    set_memory_id,
)
from memgraph.conversation.cache import open_memory
from memgraph.conversation.compaction import compact, orphaned_tool_replies
from memgraph.conversation.context import current_target
from memgraph.conversation.follow_up import follow_up_query
from memgraph.conversation.thread import SUMMARY_HEADER
from memgraph.conversation.turn import CONTEXT_HEADER
from memgraph.llm_calls.prompts import read_tag
from memgraph.llm_calls.tokens import token_counter
from tests.memory_state import fresh_memory_state  # noqa: F401

OFFICE_TOOL = {
    "type": "function",
    "function": {
        "name": "lookup_office",
        "description": "Find an office by city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def recorder(script: dict[str, Any] | None = None, *, model: str = "scripted") -> Provider:
    chat = ScriptedChatModel(script or {}, fallback=MockChatModel(), model=model)
    return Provider("recorder", chat, HashEmbedder(64))


def calls(provider: Provider, phase: str) -> list[Any]:
    chat = provider.chat
    assert isinstance(chat, ScriptedChatModel)
    return chat.calls_for(phase)


def use(provider: Provider, **fields: Any) -> None:
    enable_memory(dir="mem", approve=True, provider=provider, **fields)


def summary_file(tmp_path: Path, scope: str = "default") -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads((tmp_path / "mem" / scope / "summary.json").read_bytes())
    return data


def episode_ranges(directory: Path, scope: str) -> list[tuple[int, int]]:
    with Memory(directory, scope, provider="mock") as opened:
        return [
            tuple(e.metadata["messages"])  # type: ignore[misc]
            for e in opened.iter_episodes()
            if e.metadata.get("via") == "conversation"
        ]


# --------------------------------------------------------------- plain calls
def test_llm_is_a_plain_chat_call_on_the_offline_mock_without_memory() -> None:
    reply = llm("hello there")
    assert str(reply) == reply.text == "Hello! How can I help?"
    assert reply.usage.total_tokens > 0
    assert reply.context == "" and reply.extracted is None and reply.compaction is None


def test_a_model_override_selects_that_model() -> None:
    assert llm("hi", model="mock-large").completion.model == "mock-large"


def test_a_model_override_cannot_change_a_provider_object() -> None:
    use(recorder())
    with pytest.raises(ConfigError, match="cannot change the model"):
        llm("hi", model="other")


def test_llm_needs_a_prompt_or_a_thread_to_continue() -> None:
    with pytest.raises(ValueError, match="needs a prompt"):
        llm()
    with pytest.raises(TypeError):
        llm(42)  # type: ignore[arg-type]


def test_a_system_prompt_is_sent_but_not_stored_in_the_thread() -> None:
    provider = recorder()
    use(provider)
    thread = Thread()
    llm("hi", thread=thread, system="Be brief.")
    sent = calls(provider, "chat")[-1].messages
    assert sent[0] == {"role": "system", "content": "Be brief."}
    assert [m["role"] for m in thread] == ["user", "assistant"]


# ----------------------------------------------------------------- injection
def test_memory_true_injects_relevant_context_right_before_the_prompt() -> None:
    provider = recorder()
    use(provider)
    remember("Alice works at Acme.", approve=True)
    reply = llm("Where does Alice work?", memory=True)
    sent = calls(provider, "chat")[-1].messages
    assert sent[-1] == {"role": "user", "content": "Where does Alice work?"}
    assert sent[-2]["role"] == "system"
    assert sent[-2]["content"].startswith(f"{CONTEXT_HEADER}\n")
    assert "works at Acme" in sent[-2]["content"] == f"{CONTEXT_HEADER}\n{reply.context}"
    assert "Acme" in reply.text


def test_a_follow_up_by_pronoun_recalls_the_person_named_before_it() -> None:
    use(recorder())
    remember("Alice Chen is a senior engineer at Acme Corp in Berlin.", approve=True)
    remember("Alice prefers green tea over coffee.", approve=True)
    remember("Dana moved to Porto and now works at Porto Children's Clinic.", approve=True)
    thread = Thread()
    llm("Does Alice prefer tea or coffee?", memory=True, thread=thread)
    reply = llm("And where does she work?", memory=True, thread=thread)
    assert "Acme" in reply.context, reply.context
    assert "Porto" not in reply.context.split("Related messages:")[0], reply.context
    # a message that names someone is recalled as it is
    assert "Porto" in llm("And where does Dana work?", memory=True, thread=thread).context


def test_nothing_is_injected_when_nothing_matches() -> None:
    provider = recorder()
    use(provider)
    remember("Alice works at Acme.", approve=True)
    reply = llm("Tell me a joke about penguins.", memory=True)
    assert reply.context == ""
    sent = calls(provider, "chat")[-1].messages
    assert [m["role"] for m in sent] == ["user"]


def test_the_memory_flag_is_per_call() -> None:
    provider = recorder()
    use(provider)
    remember("Alice works at Acme.", approve=True)
    assert llm("Where does Alice work?").context == ""
    assert len(calls(provider, "chat")[-1].messages) == 1
    assert llm("Where does Alice work?", memory=True).context != ""


def test_the_thread_gets_the_exchange_with_tool_calls_preserved() -> None:
    provider = recorder()
    use(provider)
    thread = Thread()
    thread.add_system("You are Acme's onboarding assistant.")
    first = llm("Please lookup_office Berlin", memory=True, thread=thread, tools=[OFFICE_TOOL])
    assert first.text == "" and first.tool_calls[0]["function"]["name"] == "lookup_office"
    call_id = first.tool_calls[0]["id"]
    thread.add_tool(call_id, "Acme Berlin: Torstrasse 1")
    second = llm(memory=True, thread=thread, tools=[OFFICE_TOOL])
    assert "Torstrasse 1" in second.text
    roles = [m["role"] for m in thread]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    assert thread.to_messages()[2]["tool_calls"] == list(first.tool_calls)
    sent = calls(provider, "chat")[-1]
    assert sent.options["tools"] == [OFFICE_TOOL]
    assert orphaned_tool_replies(sent.messages) == []


def test_a_failed_chat_call_leaves_the_thread_unchanged() -> None:
    use(recorder({"chat": [ProviderUnavailable("down")]}))
    thread = Thread()
    with pytest.raises(ProviderUnavailable):
        llm("hi", memory=True, thread=thread)
    assert len(thread) == 0


# ------------------------------------------------------------ auto-extraction
def test_auto_extraction_runs_every_interval_turns_on_new_messages_only(tmp_path: Path) -> None:
    provider = recorder()
    use(provider, autoExtract={"interval": 2})
    thread = Thread()
    said = ["My name is Alice.", "I work at Acme.", "I live in Paris.", "I have a dog.", "I'm 34."]
    ran = [llm(text, memory=True, thread=thread).extracted is not None for text in said]
    assert ran == [False, True, False, True, False]
    extracted = [read_tag(c.last_user, "text") or "" for c in calls(provider, "extract")]
    for text in said[:4]:
        assert sum(text in body for body in extracted) == 1
    assert all("I'm 34." not in body for body in extracted)
    thread.close()  # flushes the last turn
    assert (
        sum("I'm 34." in (read_tag(c.last_user, "text") or "") for c in calls(provider, "extract"))
        == 1
    )
    # each message its own episode, stored once
    assert sorted(episode_ranges(tmp_path / "mem", "default")) == [(n, n) for n in range(1, 11)]


def test_a_failed_extraction_is_retried_next_time_and_the_reply_is_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    provider = recorder({"extract": [ProviderUnavailable("extraction model down")]})
    use(provider, autoExtract={"interval": 1})
    thread = Thread()
    with caplog.at_level(logging.WARNING, logger="memgraph"):
        first = llm("I work at Acme.", memory=True, thread=thread)
    assert first.text and first.extracted is None
    assert "automatic extraction failed" in caplog.text
    second = llm("I live in Paris.", memory=True, thread=thread)
    assert second.extracted is not None
    retried = [read_tag(c.last_user, "text") for c in calls(provider, "extract")[1:]]
    assert "I work at Acme." in retried and "I live in Paris." in retried


def test_extraction_survives_compaction_in_between_without_repeating(tmp_path: Path) -> None:
    provider = recorder()
    use(provider, autoExtract={"interval": 3}, compaction={"threshold": 6})
    said = [f"Fact number {i}: Alice visited city {i}." for i in range(9)]
    with Thread() as thread:
        compactions = [llm(text, memory=True, thread=thread).compaction for text in said]
    assert sum(c is not None for c in compactions) >= 2
    extracted = [read_tag(c.last_user, "text") or "" for c in calls(provider, "extract")]
    for text in said:
        assert sum(text in body for body in extracted) == 1
    ranges = sorted(episode_ranges(tmp_path / "mem", "default"))
    covered = [seq for first, last in ranges for seq in range(first, last + 1)]
    assert len(covered) == len(set(covered))


def test_a_scope_switch_extracts_pending_messages_into_the_old_scope(tmp_path: Path) -> None:
    use(recorder(), autoExtract={"interval": 10})
    set_memory_id("alice")
    thread = Thread()
    llm("My name is Alice and I work at Acme.", memory=True, thread=thread)
    set_memory_id("bob")
    llm("My name is Bob and I work at Globex.", memory=True, thread=thread)
    thread.close()
    with Memory(tmp_path / "mem", "alice", provider="mock") as alice:
        assert "Acme" in alice.recall("where do i work", rerank=False)
        assert "Globex" not in alice.recall("where do i work", rerank=False)
    with Memory(tmp_path / "mem", "bob", provider="mock") as bob:
        assert "Globex" in bob.recall("where do i work", rerank=False)
        assert "Acme" not in bob.recall("where do i work", rerank=False)


# ----------------------------------------------------------------- compaction
def test_compaction_summarizes_the_older_half_and_persists_summary_json(tmp_path: Path) -> None:
    provider = recorder()
    use(provider, autoExtract={"interval": 100}, compaction={"threshold": 6})
    thread = Thread()
    thread.add_system("You are helpful.")
    replies = [llm(f"I visited city number {i}.", memory=True, thread=thread) for i in range(3)]
    assert [r.compaction is not None for r in replies] == [False, False, True]
    done = replies[-1].compaction
    assert done is not None and done.summarized == 2 and done.kept == 4
    messages = thread.to_messages()
    assert messages[0] == {"role": "system", "content": "You are helpful."}
    assert messages[1]["content"] == f"{SUMMARY_HEADER}\n{done.summary}"
    assert [m["role"] for m in messages[2:]] == ["user", "assistant"] * 2
    stored = summary_file(tmp_path)
    assert stored["summary"] == done.summary and stored["messagesSummarized"] == 2
    assert stored["lastCompactedAt"].endswith("Z")
    assert len(calls(provider, "extract")) == 1  # the compacted part was extracted first


def test_summaries_merge_and_are_never_stacked(tmp_path: Path) -> None:
    provider = recorder()
    use(provider, autoExtract={"interval": 100}, compaction={"threshold": 6})
    thread = Thread()
    thread.add_system("You are helpful.")
    counts = []
    for i in range(8):
        reply = llm(f"I visited city number {i}.", memory=True, thread=thread)
        if reply.compaction:
            counts.append(summary_file(tmp_path)["messagesSummarized"])
        summaries = [m for m in thread if str(m["content"]).startswith(SUMMARY_HEADER)]
        assert len(summaries) <= 1
    assert len(counts) >= 3 and counts == sorted(counts) and len(set(counts)) == len(counts)
    assert len(calls(provider, "merge")) == len(counts) - 1


def test_a_new_threads_first_compaction_merges_the_scopes_stored_summary(tmp_path: Path) -> None:
    provider = recorder()
    use(provider, compaction={"threshold": 4})
    memory_now = open_memory(current_target())  # type: ignore[arg-type]
    memory_now.save_summary(
        {"summary": "Alice joined Acme.", "lastCompactedAt": "x", "messagesSummarized": 10}
    )
    thread = Thread()
    llm("Message one.", memory=True, thread=thread)
    assert thread.to_messages()[0]["content"] == f"{SUMMARY_HEADER}\nAlice joined Acme."
    llm("Message two.", memory=True, thread=thread)  # the summary counts: 5 messages > 4
    assert summary_file(tmp_path)["messagesSummarized"] == 12
    assert "<previous>\nAlice joined Acme.\n</previous>" in calls(provider, "merge")[0].last_user


def test_compaction_is_skipped_with_a_warning_without_a_safe_boundary(
    caplog: pytest.LogCaptureFixture,
) -> None:
    use(recorder(), compaction={"threshold": 3})
    thread = Thread()
    thread.add_system("You are helpful.")
    thread.add_assistant(
        tool_calls=[
            {"id": f"c{i}", "type": "function", "function": {"name": "f"}} for i in range(3)
        ]
    )
    for i in range(3):
        thread.add_tool(f"c{i}", f"result {i}")
    before = thread.to_messages()
    opened = open_memory(current_target())  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger="memgraph"):
        assert compact(thread, opened, count_tokens=token_counter("mock")) is None
    assert "no safe split point" in caplog.text
    assert thread.to_messages() == before


def test_a_summary_the_model_cannot_make_leaves_the_thread_alone(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    use(recorder({"summarize": ["not json", "still not json"]}), compaction={"threshold": 3})
    thread = Thread()
    with caplog.at_level(logging.WARNING, logger="memgraph"):
        llm("one", memory=True, thread=thread)
        reply = llm("two", memory=True, thread=thread)
    assert reply.compaction is None and len(thread) == 4
    assert "could not be summarized" in caplog.text
    assert not (tmp_path / "mem" / "default" / "summary.json").exists()


def test_the_token_trigger_compacts_on_real_token_counts(tmp_path: Path) -> None:
    use(recorder(), compaction={"trigger": "token", "threshold": 120})
    thread = Thread()
    short = [llm("hi", memory=True, thread=thread) for _ in range(5)]
    assert all(r.compaction is None for r in short)  # 10 messages, few tokens
    long = llm("word " * 150, memory=True, thread=thread)
    assert long.compaction is not None


def test_token_counting_for_a_model_without_offline_encoding_warns_once(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tiktoken

    real = tiktoken.get_encoding

    def offline(name: str) -> Any:  # gpt-4o-mini's o200k_base cannot be downloaded
        if name == "o200k_base":
            raise ConnectionError("no network")
        return real(name)

    monkeypatch.setattr(tiktoken, "get_encoding", offline)
    token_counter.cache_clear()
    use(recorder(model="gpt-4o-mini"), compaction={"trigger": "token", "threshold": 60})
    thread = Thread()
    with caplog.at_level(logging.WARNING, logger="memgraph"):
        replies = [llm("word " * 20, memory=True, thread=thread) for _ in range(4)]
    token_counter.cache_clear()
    assert any(r.compaction for r in replies)
    fallbacks = [r.getMessage() for r in caplog.records if "tiktoken" in r.getMessage()]
    assert len(fallbacks) == 1, fallbacks
    assert "o200k_base could not be loaded (o200k_base: ConnectionError)" in fallbacks[0]


# ---------------------------------------------------------------------- async
class AsyncOnly:
    """A chat model whose sync path must not be used by allm."""

    def __init__(self) -> None:
        self.model = "async-only"
        self.inner = MockChatModel(model="async-only")
        self.async_calls = 0

    def complete(self, messages: Sequence[Any], **options: Any) -> Completion:
        if options.get("schema") is None:  # memory's own calls may be synchronous
            raise AssertionError("allm must await acomplete for the chat call")
        return self.inner.complete(messages, **options)

    async def acomplete(self, messages: Sequence[Any], **options: Any) -> Completion:
        self.async_calls += 1
        return self.inner.complete(messages, **options)


def test_allm_awaits_the_providers_async_client() -> None:
    chat = AsyncOnly()
    enable_memory(dir="mem", approve=True, provider=Provider("async", chat, HashEmbedder(64)))
    remember("Alice works at Acme.", approve=True)
    reply = asyncio.run(allm("Where does Alice work?", memory=True))
    assert chat.async_calls == 1
    assert "Acme" in reply.context and "Acme" in reply.text


def test_allm_falls_back_to_a_worker_thread_for_sync_only_models() -> None:
    class SyncOnly:
        model = "sync-only"

        def complete(self, messages: Sequence[Any], **options: Any) -> Completion:
            return Completion("sync answer", self.model)

    enable_memory(dir="mem", approve=True, provider=Provider("sync", SyncOnly()))
    thread = Thread()
    reply = asyncio.run(allm("hi", memory=True, thread=thread))
    assert reply.text == "sync answer" and len(thread) == 2


def test_concurrent_allm_tasks_with_different_scopes_do_not_leak(tmp_path: Path) -> None:
    async def chat(name: str, company: str) -> tuple[str, str]:
        set_memory_id(name)
        async with memory(dir="mem", approve=True, autoExtract={"interval": 1}):
            thread = Thread()
            await allm(
                f"My name is {name.title()} and I work at {company}.", memory=True, thread=thread
            )
            reply = await allm("Where do I work?", memory=True, thread=thread)
            return name, reply.context

    async def main() -> list[tuple[str, str]]:
        return await asyncio.gather(chat("alice", "Acme"), chat("bob", "Globex"))

    results = dict(asyncio.run(main()))
    assert "Acme" in results["alice"] and "Globex" not in results["alice"]
    assert "Globex" in results["bob"] and "Acme" not in results["bob"]


def test_memory_all_injects_the_whole_memory_under_known_information(tmp_path: Path) -> None:
    from memgraph import enable_memory
    from memgraph import remember as remember_fact

    enable_memory(dir=str(tmp_path / "mem"), provider="mock", approve=True)
    assert llm("hello", memory="all").context == ""  # empty memory: nothing injected
    remember_fact("Alice prefers TypeScript. Bob lives in Berlin.", approve=True)
    reply = llm("anything at all", memory="all")
    assert "prefers TypeScript" in reply.context and "lives in Berlin" in reply.context


def test_facts_extracted_inside_an_agent_belong_to_that_agent(tmp_path: Path) -> None:
    from memgraph import Thread, enable_memory
    from memgraph.faces.namespaces import agent

    enable_memory(
        dir=str(tmp_path / "mem"), provider="mock", approve=True, autoExtract={"interval": 1}
    )
    thread = Thread()
    with agent("Writer"):
        llm("Alice works at Acme.", memory=True, thread=thread)
        assert "works at Acme" in llm("where does alice work?", memory=True).context
    with Memory(tmp_path / "mem", "default", provider="mock") as opened:
        assert {e.source for e in opened.iter_episodes()} == {"Writer"}


def test_a_follow_up_query_names_who_was_named_before_only_for_a_pronoun() -> None:
    def names(text: str) -> list[str]:
        return ["Alice Chen"] if "Alice" in text else []

    asked = "Does Alice prefer tea or coffee?"
    assert follow_up_query("And where does she work?", asked, names) == (
        "Alice Chen: And where does she work?"
    )
    assert follow_up_query("Where does Alice work?", asked, names) == "Where does Alice work?"
    assert follow_up_query("what's the weather?", asked, names) == "what's the weather?"
    assert follow_up_query("and his job?", "hello", names) == "and his job?"
