"""A scripted 30+ turn conversation driven through the offline mock provider.

``fixtures/conversations/onboarding.json`` plays a new employee's first days
with an onboarding assistant, then moves the conversation to another person's
scope. One run exercises context injection, automatic extraction at the
interval, several compactions with summary merging, a tool-call exchange at a
split point, and the scope switch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from memgraph.providers.mock import HashEmbedder, MockChatModel, ScriptedChatModel

from memgraph import LLMReply, Memory, Provider, Thread, enable_memory, llm, set_memory_id
from memgraph.chatter import nothing_to_extract
from memgraph.conversation.compaction import orphaned_tool_replies
from memgraph.conversation.thread import SUMMARY_HEADER, ThreadMessage
from memgraph.conversation.turn import CONTEXT_HEADER
from memgraph.llm_calls.prompts import read_tag
from tests.conftest import load_fixture
from tests.memory_state import fresh_memory_state  # noqa: F401

SCRIPT = load_fixture("conversations/onboarding.json")


@dataclass
class Run:
    """What the conversation did, turn by turn."""

    chat: ScriptedChatModel
    thread: Thread
    replies: list[tuple[dict[str, Any], LLMReply]] = field(default_factory=list)
    extracted_on: list[int] = field(default_factory=list)
    expected_extractions: list[int] = field(default_factory=list)
    compactions: list[list[ThreadMessage]] = field(default_factory=list)
    summaries_seen: list[int] = field(default_factory=list)
    summarized_counts: list[int] = field(default_factory=list)


def converse(tmp_path: Path) -> Run:
    chat = ScriptedChatModel({}, fallback=MockChatModel())
    provider = Provider("mock", chat, HashEmbedder(384))
    enable_memory(dir="mem", approve=True, provider=provider, **SCRIPT["memory"])
    interval = SCRIPT["memory"]["autoExtract"]["interval"]
    thread = Thread()
    thread.add_system(SCRIPT["system"])
    run = Run(chat, thread)
    scope, since = "default", 0

    def turn(step: dict[str, Any], prompt: str | None, tools: Any) -> LLMReply:
        nonlocal since
        before = thread.entries()
        reply = llm(prompt, memory=True, thread=thread, tools=tools)
        number = len(run.replies)
        run.replies.append((step, reply))
        since += 1
        if since == interval:
            run.expected_extractions.append(number)
            since = 0
        if reply.extracted is not None:
            run.extracted_on.append(number)
        if reply.compaction is not None:
            newest = max(e.seq for e in before)
            added = [e for e in thread.entries() if e.seq > newest and e.role != "system"]
            run.compactions.append(before + added)
            summary = orjson.loads((tmp_path / "mem" / scope / "summary.json").read_bytes())
            run.summarized_counts.append(summary["messagesSummarized"])
        run.summaries_seen.append(sum(str(m["content"]).startswith(SUMMARY_HEADER) for m in thread))
        assert orphaned_tool_replies(thread.to_messages()) == []
        return reply

    for step in SCRIPT["turns"]:
        if "scope" in step:
            scope = step["scope"]
            set_memory_id(scope)
            since = 0  # the switch extracts the old scope's pending messages
            continue
        tools = SCRIPT["tools"] if "tool_result" in step else None
        reply = turn(step, step["user"], tools)
        if reply.tool_calls:
            thread.add_tool(reply.tool_calls[0]["id"], step["tool_result"])
            turn({"continues": step["user"]}, None, tools)
    thread.close()
    return run


@pytest.fixture
def run(tmp_path: Path) -> Run:
    return converse(tmp_path)


def test_the_script_is_a_long_conversation_with_a_tool_call_and_a_scope_switch() -> None:
    users = [t for t in SCRIPT["turns"] if "user" in t]
    assert len(users) >= 30
    assert any("tool_result" in t for t in users)
    assert [t["scope"] for t in SCRIPT["turns"] if "scope" in t] == ["alice", "bob"]


def test_context_is_injected_when_relevant_and_not_otherwise(run: Run) -> None:
    checked = 0
    for step, reply in run.replies:
        if "context" not in step:
            continue
        checked += 1
        if step["context"] is None:
            assert reply.context == "", step["user"]
        else:
            for text in step["context"]:
                assert text in reply.context, (step["user"], reply.context)
        for text in step.get("absent", []):
            assert text not in reply.context, (step["user"], reply.context)
        for text in step.get("reply", []):
            assert text in reply.text, (step["user"], reply.text)
    assert checked >= 12
    chat_calls = run.chat.calls_for("chat")
    assert len(chat_calls) == len(run.replies)
    for call, (_, reply) in zip(chat_calls, run.replies, strict=True):
        notes = [m for m in call.messages if str(m.get("content")).startswith(CONTEXT_HEADER)]
        assert len(notes) == (1 if reply.context else 0)


def test_facts_are_extracted_at_the_interval_and_no_message_twice(run: Run, tmp_path: Path) -> None:
    assert run.extracted_on == run.expected_extractions
    assert len(run.extracted_on) >= 6
    # only the text to extract from counts (the previous turn rides along as context)
    bodies = [read_tag(c.last_user, "text") or "" for c in run.chat.calls_for("extract")]
    said = [step["user"] for step in SCRIPT["turns"] if "user" in step]
    skipped = [text for text in said if nothing_to_extract(text)]
    assert skipped and all(text.rstrip().endswith("?") for text in skipped)
    for text in said:
        # each message is one text; a question about others asks the model nothing
        assert bodies.count(text) == (0 if text in skipped else said.count(text)), text
    covered: list[int] = []
    for scope in ("alice", "bob"):
        with Memory(tmp_path / "mem", scope, provider="mock") as opened:
            for episode in opened.iter_episodes():
                first, last = episode.metadata["messages"]
                covered += range(first, last + 1)
    assert len(covered) == len(set(covered))


def test_several_compactions_merge_one_summary(run: Run) -> None:
    assert len(run.compactions) >= 5
    assert max(run.summaries_seen) == 1
    counts = run.summarized_counts
    assert counts == sorted(counts) and len(set(counts)) == len(counts)
    assert len(run.chat.calls_for("merge")) == len(run.compactions) - 1
    assert run.thread.summary is not None


def test_a_tool_exchange_at_the_split_point_is_never_cut(run: Run) -> None:
    at_middle = 0
    for pre in run.compactions:
        rest = [e for e in pre if e.role != "system"]
        middle = rest[len(rest) // 2]
        if middle.role == "tool":
            at_middle += 1
    assert at_middle >= 1  # the naive middle of one compaction was the tool reply
    for request in run.chat.calls_for("chat"):
        assert orphaned_tool_replies(request.messages) == []


def test_the_scope_switch_isolates_facts(run: Run, tmp_path: Path) -> None:
    with Memory(tmp_path / "mem", "alice", provider="mock") as alice:
        facts = alice.recall("where do i work and live", rerank=False)
        assert "Acme" in facts and "Lyon" in facts
        assert "Globex" not in facts and "Oslo" not in facts
    with Memory(tmp_path / "mem", "bob", provider="mock") as bob:
        facts = bob.recall("where do i work and live", rerank=False)
        assert "Globex" in facts and "Oslo" in facts
        assert "Acme" not in facts and "Lyon" not in facts
