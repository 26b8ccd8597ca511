"""Threads and the pure half of compaction: sequence numbers, transcripts, split planning."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from memgraph import Thread
from memgraph.conversation.compaction import (
    measure,
    message_tokens,
    orphaned_tool_replies,
    plan_compaction,
)
from memgraph.conversation.thread import SUMMARY_HEADER, transcript
from memgraph.llm_calls.tokens import token_counter


def call(call_id: str, name: str = "lookup_office") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


def chat_thread(pairs: int, *, system: str | None = "You are helpful.") -> Thread:
    thread = Thread()
    if system:
        thread.add_system(system)
    for i in range(pairs):
        thread.add_user(f"user message {i}")
        thread.add_assistant(f"assistant reply {i}")
    return thread


def plan(thread: Thread, threshold: int, trigger: str = "messages") -> Any:
    return plan_compaction(
        thread.entries(), trigger=trigger, threshold=threshold, count_tokens=token_counter("mock")
    )


# ------------------------------------------------------------------ messages
def test_messages_get_increasing_sequence_numbers_and_come_back_as_copies() -> None:
    thread = Thread()
    assert thread.add_system("Be brief.") == 1
    assert thread.add_user("Hi") == 2
    assert thread.add_assistant("Hello!") == 3
    messages = thread.to_messages()
    messages[1]["content"] = "changed"
    assert [m["content"] for m in thread] == ["Be brief.", "Hi", "Hello!"]
    assert [e.seq for e in thread.entries()] == [1, 2, 3]
    assert len(thread) == 3


def test_tool_calls_and_tool_replies_are_preserved() -> None:
    thread = Thread()
    thread.add_user("Where is the Berlin office?")
    thread.add_assistant(tool_calls=[call("call_1")])
    thread.add_tool("call_1", "Torstrasse 1", name="lookup_office")
    messages = thread.to_messages()
    assert messages[1]["tool_calls"] == [call("call_1")]
    assert messages[2] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "Torstrasse 1",
        "name": "lookup_office",
    }


@pytest.mark.parametrize(
    "message",
    [
        {"role": "robot", "content": "beep"},
        {"role": "tool", "content": "no call id"},
        {"role": "user", "content": "hi", "tool_calls": [call("c")]},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {}}]},
    ],
)
def test_malformed_messages_are_refused(message: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Thread([message])


def test_a_thread_round_trips_through_a_dict_with_its_numbers_and_cursor() -> None:
    thread = chat_thread(2)
    thread.state.extracted_through = 3
    thread.state.messages_summarized = 7
    copy = Thread.from_dict(orjson.loads(orjson.dumps(thread.to_dict())))
    assert copy.id == thread.id
    assert [e.seq for e in copy.entries()] == [e.seq for e in thread.entries()]
    assert copy.to_messages() == thread.to_messages()
    assert copy.state.extracted_through == 3
    assert copy.state.messages_summarized == 7
    assert copy.add_user("next") == thread.add_user("next")


def test_transcript_has_one_role_line_per_message_without_system_or_tool_plumbing() -> None:
    thread = Thread()
    thread.add_system("You are helpful.")
    thread.add_user("I work at Acme.\nIn Berlin.")
    thread.add_assistant(tool_calls=[call("call_1")])
    thread.add_tool("call_1", "Torstrasse 1")
    thread.add_assistant("The office is at Torstrasse 1.")
    assert transcript(thread.entries()) == (
        "user: I work at Acme. In Berlin.\nassistant: The office is at Torstrasse 1."
    )
    with_tools = transcript(thread.entries(), tools=True)
    assert "assistant: [calls lookup_office]" in with_tools
    assert "tool: Torstrasse 1" in with_tools


def test_pending_lists_unextracted_non_system_messages_up_to_a_number() -> None:
    thread = chat_thread(2)
    thread.state.extracted_through = 2
    assert [e.seq for e in thread.pending()] == [3, 4, 5]
    assert [e.seq for e in thread.pending(through=4)] == [3, 4]


def test_rebuild_keeps_the_numbers_of_kept_messages() -> None:
    thread = chat_thread(3)
    entries = thread.entries()
    thread.rebuild(entries[:1], "Alice works at Acme.", entries[5:])
    assert [e.seq for e in thread.entries()] == [1, 8, 6, 7]
    assert thread.summary == "Alice works at Acme."
    assert thread.to_messages()[1]["content"] == f"{SUMMARY_HEADER}\nAlice works at Acme."


# ----------------------------------------------------------------- planning
def test_a_thread_within_its_threshold_is_not_compacted() -> None:
    assert plan(chat_thread(2), threshold=5) is None
    assert plan(chat_thread(20), threshold=0) is None  # 0 turns compaction off


def test_the_split_keeps_the_system_prefix_and_falls_near_the_middle() -> None:
    thread = chat_thread(4)  # system + 8 messages
    result = plan(thread, threshold=6)
    assert [e.seq for e in result.prefix] == [1]
    assert [e.seq for e in result.head] == [2, 3, 4, 5]
    assert [e.seq for e in result.tail] == [6, 7, 8, 9]
    assert result.previous is None


def test_an_older_summary_is_taken_out_of_the_prefix_to_be_replaced() -> None:
    thread = chat_thread(4)
    entries = thread.entries()
    thread.rebuild(entries[:1], "Earlier: Alice joined Acme.", entries[1:])
    result = plan(thread, threshold=6)
    assert [e.seq for e in result.prefix] == [1]
    assert result.previous == "Earlier: Alice joined Acme."


def test_the_split_prefers_the_start_of_an_exchange() -> None:
    thread = chat_thread(3, system=None)  # u a u a u a: the middle is an assistant reply
    result = plan(thread, threshold=5)
    assert result.tail[0].role == "user"
    assert [e.seq for e in result.head] == [1, 2]


def test_the_split_never_starts_the_kept_part_at_a_tool_reply() -> None:
    thread = Thread()
    thread.add_user("Set up my laptop")
    for name in ("a", "b", "c"):  # an agent's tool loop: no user message to split at
        thread.add_assistant(tool_calls=[call(name)])
        thread.add_tool(name, f"step {name} done")
    thread.add_assistant("All set.")
    result = plan(thread, threshold=4)
    assert thread.entries()[4].role == "tool"  # the middle of the thread
    assert [e.seq for e in result.head] == [1, 2, 3]
    assert result.tail[0].message["tool_calls"]
    assert orphaned_tool_replies([e.message for e in result.tail]) == []


def test_no_safe_boundary_gives_a_plan_with_nothing_to_compact() -> None:
    thread = Thread()
    thread.add_system("You are helpful.")
    thread.add_assistant(tool_calls=[call(f"c{i}") for i in range(4)])
    for i in range(4):
        thread.add_tool(f"c{i}", f"result {i}")
    result = plan(thread, threshold=3)
    assert result is not None and result.head == ()


def test_the_token_trigger_counts_real_tokens_and_splits_by_tokens() -> None:
    count = token_counter("mock")
    thread = chat_thread(3, system=None)
    thread.add_user("word " * 600)  # one long message at the end
    thread.add_assistant("ok")
    entries = thread.entries()
    assert message_tokens(entries[0].message, count) == count("user message 0") + 4
    assert measure(entries, trigger="token", count_tokens=count) > 600
    assert plan(thread, threshold=600, trigger="messages") is None
    by_tokens = plan(thread, threshold=600, trigger="token")
    assert [e.seq for e in by_tokens.head] == [1, 2, 3, 4, 5, 6]  # half the tokens
    by_count = plan(thread, threshold=6, trigger="messages")
    assert [e.seq for e in by_count.head] == [1, 2, 3, 4]  # half the messages


def test_orphaned_tool_replies_are_the_ones_without_an_earlier_call() -> None:
    messages = [
        {"role": "tool", "tool_call_id": "x", "content": "?"},
        {"role": "assistant", "content": "", "tool_calls": [call("a")]},
        {"role": "tool", "tool_call_id": "a", "content": "ok"},
    ]
    assert orphaned_tool_replies(messages) == [0]
