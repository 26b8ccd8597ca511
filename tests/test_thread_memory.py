"""A Thread's messages reach memory however the thread is used and however it ends."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import orjson
import pytest
from memgraph.providers.mock import HashEmbedder, MockChatModel, ScriptedChatModel

from memgraph import (
    Memory,
    Provider,
    ProviderUnavailable,
    StoreUnavailable,
    Thread,
    close_all,
    llm,
    memory,
    set_memory_id,
)
from memgraph.conversation.thread import SUMMARY_HEADER
from tests.memory_state import fresh_memory_state  # noqa: F401

QUESTIONS = {
    "where do I work": "Acme",
    "where do I live": "Lisbon",
    "what is my name": "Alice",
    "what do I drink": "tea",
}


def provider(script: dict[str, Any] | None = None) -> Provider:
    chat = ScriptedChatModel(script or {}, fallback=MockChatModel())
    return Provider("scripted", chat, HashEmbedder(64))


def extraction_down() -> Provider:
    return provider({"extract": [ProviderUnavailable("the extraction model is down")] * 5})


def conversation(thread: Thread) -> None:
    thread.add_system("You are helpful.")
    thread.add_user("Hi, my name is Alice.")
    thread.add_assistant("Hello Alice!")
    thread.add_user("I work at Acme. I live in Lisbon.")
    thread.add_assistant("Noted.")
    thread.add_user("I drink tea every morning.")


def answered(directory: Path, scope: str = "alice") -> list[str]:
    with Memory(directory, scope, provider="mock") as opened:
        return [q for q, a in QUESTIONS.items() if a in opened.recall(q, rerank=False)]


def summary_json(tmp_path: Path, scope: str = "alice") -> dict[str, Any]:
    path = tmp_path / "mem" / scope / "summary.json"
    data: dict[str, Any] = orjson.loads(path.read_bytes()) if path.exists() else {}
    return data


# ------------------------------------------------------- messages without llm()
def test_messages_added_without_a_model_call_are_extracted_when_the_thread_closes(
    tmp_path: Path,
) -> None:
    set_memory_id("alice")
    with memory(dir="mem", provider="mock", approve=True), Thread() as thread:
        conversation(thread)

    assert answered(tmp_path / "mem") == list(QUESTIONS)
    assert thread.pending() == []


def test_flush_returns_one_change_set_per_stored_text_and_then_nothing(tmp_path: Path) -> None:
    set_memory_id("alice")
    with memory(dir="mem", provider="mock", approve=True):
        thread = Thread()
        conversation(thread)
        stored = thread.flush()
        again = thread.flush()

    # one per message, each its own episode with its speaker (the system message left out)
    episodes = [c.episode for c in stored]
    assert [(e.metadata["messages"], e.speaker) for e in episodes if e is not None] == [
        ([2, 2], "User"),
        ([3, 3], "assistant"),
        ([4, 4], "User"),
        ([5, 5], "assistant"),
        ([6, 6], "User"),
    ]
    assert [e.text for e in episodes[:2] if e is not None] == [
        "Hi, my name is Alice.",
        "Hello Alice!",
    ]
    learned = {o.content for c in stored for o in c.added_observations}
    assert learned >= {"works at Acme", "name is Alice"}
    assert not stored[1] and not stored[3]  # the assistant's words make no facts
    assert again == []


def test_flush_with_memory_off_stores_nothing_and_creates_no_file(tmp_path: Path) -> None:
    thread = Thread()
    conversation(thread)

    assert thread.flush() == []
    assert list(tmp_path.iterdir()) == []
    assert len(thread.pending()) == 5  # still there for a flush once memory is on


# -------------------------------------------------------- a failed final extraction
def test_a_failed_extraction_on_close_is_saved_with_the_scope_and_extracted_next_time(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    set_memory_id("alice")
    with (
        caplog.at_level(logging.WARNING, logger="memgraph"),
        memory(dir="mem", provider=extraction_down(), approve=True),
        Thread() as thread,
    ):
        conversation(thread)

    assert "were saved with scope 'alice'" in caplog.text
    saved = summary_json(tmp_path)["pending"]
    assert [item["messages"] for item in saved] == [[2, 6]]
    assert "I drink tea every morning." in saved[0]["text"]
    assert answered(tmp_path / "mem") == []
    close_all()  # as a new process would

    with memory(dir="mem", provider="mock", approve=True), Thread() as later:
        later.add_user("Thanks!")

    assert answered(tmp_path / "mem") == list(QUESTIONS)
    assert "pending" not in summary_json(tmp_path)
    with Memory(tmp_path / "mem", "alice", provider="mock") as opened:
        ranges = sorted(e.metadata["messages"] for e in opened.iter_episodes())
    assert ranges == [[1, 1], [2, 2], [3, 3], [4, 4], [5, 5], [6, 6]]  # each message once


def test_a_failure_part_way_keeps_what_was_stored_and_stores_no_message_twice(
    tmp_path: Path,
) -> None:
    set_memory_id("alice")
    nothing = {"entities": [], "relations": [], "expirations": []}
    failing = provider({"extract": [nothing, ProviderUnavailable("the model went away")]})
    with memory(dir="mem", provider=failing, approve=True):
        thread = Thread()
        conversation(thread)
        with pytest.raises(ProviderUnavailable):
            thread.flush()
        # Alice's greeting and the reply to it are stored; the rest is still pending
        assert [entry.seq for entry in thread.pending()] == [4, 5, 6]
        thread.flush()  # the script has run out: the mock model answers
    with Memory(tmp_path / "mem", "alice", provider="mock") as opened:
        ranges = sorted(e.metadata["messages"] for e in opened.iter_episodes())
    assert ranges == [[2, 2], [3, 3], [4, 4], [5, 5], [6, 6]]


def test_a_saved_transcript_stored_part_way_keeps_only_the_rest_saved(tmp_path: Path) -> None:
    set_memory_id("alice")
    with memory(dir="mem", provider=extraction_down(), approve=True), Thread() as thread:
        conversation(thread)
    close_all()
    nothing = {"entities": [], "relations": [], "expirations": []}
    failing = provider({"extract": [nothing, ProviderUnavailable("the model went away")]})
    with memory(dir="mem", provider=failing, approve=True), pytest.raises(ProviderUnavailable):
        Thread().flush()
    (rest,) = summary_json(tmp_path)["pending"]
    assert rest["messages"] == [4, 6] and rest["seqs"] == [4, 5, 6]
    assert rest["text"].startswith("user: I work at Acme.")
    close_all()
    with memory(dir="mem", provider="mock", approve=True):
        Thread().flush()
    with Memory(tmp_path / "mem", "alice", provider="mock") as opened:
        ranges = sorted(e.metadata["messages"] for e in opened.iter_episodes())
    assert ranges == [[2, 2], [3, 3], [4, 4], [5, 5], [6, 6]]
    assert "pending" not in summary_json(tmp_path)


def test_saved_messages_are_extracted_by_the_next_threads_first_turn(tmp_path: Path) -> None:
    set_memory_id("alice")
    with memory(dir="mem", provider=extraction_down(), approve=True), Thread() as thread:
        conversation(thread)
    close_all()

    with memory(dir="mem", provider="mock", approve=True):
        reply = llm("Where do I work?", memory=True, thread=Thread())

    assert "pending" not in summary_json(tmp_path)
    assert answered(tmp_path / "mem") == list(QUESTIONS)
    assert str(reply) == "You work at Acme."  # extracted before the question was recalled


def test_an_explicit_flush_raises_the_failure_and_keeps_the_messages_pending(
    tmp_path: Path,
) -> None:
    set_memory_id("alice")
    with memory(dir="mem", provider=extraction_down(), approve=True):
        thread = Thread()
        conversation(thread)
        with pytest.raises(ProviderUnavailable, match="extraction model is down"):
            thread.flush()

    assert len(thread.pending()) == 5
    assert "pending" not in summary_json(tmp_path)


def test_closing_raises_when_the_messages_cannot_be_saved_either(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full(self: Memory, change: object) -> None:
        raise StoreUnavailable("no space left on device")

    monkeypatch.setattr(Memory, "update_summary", disk_full)
    set_memory_id("alice")
    with memory(dir="mem", provider=extraction_down(), approve=True):
        thread = Thread()
        conversation(thread)
        with pytest.raises(ProviderUnavailable) as caught:
            thread.__exit__(None, None, None)

    assert isinstance(caught.value.__context__, StoreUnavailable)
    assert len(thread.pending()) == 5


def test_an_error_inside_the_block_is_not_masked_by_a_failed_flush(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Memory, "update_summary", lambda self, change: _raise())
    set_memory_id("alice")
    with (
        pytest.raises(KeyError, match="the block's own error"),
        memory(dir="mem", provider=extraction_down(), approve=True),
        Thread() as thread,
    ):
        conversation(thread)
        raise KeyError("the block's own error")


def _raise() -> None:
    raise StoreUnavailable("no space left on device")


# ---------------------------------------------------------- the scope's summary
def test_a_new_thread_starts_with_the_scopes_stored_summary(tmp_path: Path) -> None:
    set_memory_id("alice")
    chat = ScriptedChatModel({}, fallback=MockChatModel())
    with memory(dir="mem", provider=Provider("scripted", chat, HashEmbedder(64)), approve=True):
        Memory(tmp_path / "mem", "alice", provider="mock").save_summary(
            {"summary": "User: My cat is called Miso.", "messagesSummarized": 8}
        )
        thread = Thread()
        thread.add_system("You are helpful.")
        llm("What is my cat called?", memory=True, thread=thread)

    sent = chat.calls_for("chat")[0].messages
    assert [m["role"] for m in sent[:2]] == ["system", "system"]
    assert sent[1]["content"] == f"{SUMMARY_HEADER}\nUser: My cat is called Miso."
    assert thread.summary == "User: My cat is called Miso."
    assert thread.state.messages_summarized == 8


def test_compaction_keeps_saved_messages_in_the_summary_document(tmp_path: Path) -> None:
    set_memory_id("alice")
    with memory(dir="mem", provider=extraction_down(), approve=True), Thread() as thread:
        conversation(thread)
    close_all()
    saved = summary_json(tmp_path)["pending"]

    settings = {"compaction": {"threshold": 4}, "autoExtract": {"interval": 100}}
    broken = provider({"extract": [ProviderUnavailable("down")] * 10})
    with memory(dir="mem", provider=broken, approve=True, **settings):
        thread = Thread()
        for text in ("one", "two", "three"):
            llm(f"Message {text}.", memory=True, thread=thread)

    stored = summary_json(tmp_path)
    assert stored["messagesSummarized"] >= 2 and stored["summary"]
    assert stored["pending"] == saved
