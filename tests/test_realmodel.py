"""memgraph against a real model server (opt-in: set ``MEMGRAPH_TEST_LLM_BASE_URL``).

Runs remember / recall / forget and a short ``llm(memory=True)`` conversation
through the configuration a user would write (``provider.baseUrl``,
``structuredOutput`` left on auto, ``embeddings.provider``), against whatever
OpenAI-compatible server the variable points at::

    MEMGRAPH_TEST_LLM_BASE_URL=http://127.0.0.1:8080/v1 \\
        .venv/bin/python -m pytest -m realmodel tests/test_realmodel.py -s

Optional: ``MEMGRAPH_TEST_LLM_MODEL`` (default: the first model the server lists),
``MEMGRAPH_TEST_EMBEDDINGS`` (``embeddings.provider``, default ``mock``: most local
chat servers serve no pooled embeddings), ``MEMGRAPH_TEST_REPORT`` (a path: the
measurements as JSON). A small model is slow on a few cores (10-60 s per
extraction), so the scenario runs once per module and the tests read its record.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from memgraph import Memory, Thread, llm, memory, set_memory_id
from memgraph.llm_calls.provider import Completion, JsonSchema, Message, Provider

BASE_URL = os.environ.get("MEMGRAPH_TEST_LLM_BASE_URL", "")

pytestmark = [
    pytest.mark.realmodel,
    pytest.mark.skipif(
        not BASE_URL, reason="set MEMGRAPH_TEST_LLM_BASE_URL to run against a server"
    ),
    pytest.mark.timeout(3600),
]

SENTENCES = [
    "Alice Chen is a senior engineer at Acme Corp in Berlin.",
    "Alice prefers green tea over coffee.",
    "Bob Martinez manages the payments team at Acme Corp.",
    "Dana Whitfield works as a nurse at Lisbon General Hospital.",
    "Alice is learning Rust on weekends.",
    "Bob's daughter Emma started primary school in September.",
    "Dana moved to Porto and now works at Porto Children's Clinic.",
    "The Helios project is led by Alice and uses PostgreSQL.",
    "Bob is allergic to peanuts.",
    "Alice and Bob are planning a team offsite in Lisbon in May.",
]

QUESTIONS = [
    ("What does Alice drink?", ("tea",)),
    ("Where does Dana work now?", ("porto",)),
    ("Who leads the Helios project?", ("alice",)),
    ("What is Bob allergic to?", ("peanut",)),
    ("What language is Alice learning?", ("rust",)),
]


@dataclass
class Counted:
    """Calls, tokens and seconds of one piece of work."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    finish_reasons: list[str | None] = field(default_factory=list)


class CountingChat:
    """A chat model that counts what the wrapped one does."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model: str = inner.model
        self.current = Counted()

    def complete(
        self, messages: Sequence[Message], *, schema: JsonSchema | None = None, **options: Any
    ) -> Completion:
        started = time.perf_counter()
        completion: Completion = self.inner.complete(messages, schema=schema, **options)
        self.current.seconds += time.perf_counter() - started
        self.current.calls += 1
        self.current.prompt_tokens += completion.usage.prompt_tokens
        self.current.completion_tokens += completion.usage.completion_tokens
        self.current.finish_reasons.append(completion.finish_reason)
        return completion

    def measure(self) -> Counted:
        self.current = Counted()
        return self.current


def _model() -> str:
    name = os.environ.get("MEMGRAPH_TEST_LLM_MODEL")
    if name:
        return name
    reply = httpx.get(f"{BASE_URL.rstrip('/')}/models", timeout=30)
    reply.raise_for_status()
    return str(reply.json()["data"][0]["id"])


def _config(directory: Path) -> dict[str, Any]:
    return {
        "dir": str(directory),
        "provider": {
            "name": "openai",
            "model": _model(),
            "baseUrl": BASE_URL,
            "options": {"temperature": 0, "max_tokens": 1024},
        },
        "embeddings": {"provider": os.environ.get("MEMGRAPH_TEST_EMBEDDINGS", "mock")},
    }


def _facts(mem: Memory, changes: Any) -> list[str]:
    names = {e.id: e.name for e in mem.entities()}
    lines = [f"{names.get(o.entity_id)}: {o.content}" for o in changes.added_observations]
    lines += [f"{r.from_name} {r.type} {r.to_name}" for r in changes.added_relations]
    lines += [f"expired {o.content}" for o in changes.expired_observations]
    return lines


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Run the whole scenario once; the tests check what it recorded."""
    root = tmp_path_factory.mktemp("realmodel")
    saved_cache = os.environ.get("MEMGRAPH_CACHE_DIR")
    os.environ["MEMGRAPH_CACHE_DIR"] = str(root / "cache")  # start as a first run does
    config = _config(root / "memory")
    out: dict[str, Any] = {"base_url": BASE_URL, "model": config["provider"]["model"]}
    started = time.perf_counter()
    try:
        with Memory(scope="realmodel", config=config) as mem:
            counting = CountingChat(mem.provider.chat)
            mem.provider = Provider(mem.provider.name, counting, mem.provider.embedder)
            out["remember"] = []
            for text in SENTENCES:
                spent = counting.measure()
                began = time.perf_counter()
                changes = mem.remember(text)
                out["remember"].append(
                    {
                        "text": text,
                        "stored": bool(changes),
                        "episode": changes.episode is not None,
                        "unextracted": changes.unusable_reply,
                        "facts": _facts(mem, changes),
                        "warnings": list(changes.warnings),
                        "calls": spent.calls,
                        "prompt_tokens": spent.prompt_tokens,
                        "completion_tokens": spent.completion_tokens,
                        "finish_reasons": spent.finish_reasons,
                        "seconds": round(time.perf_counter() - began, 1),
                    }
                )
            out["structured_output"] = counting.inner.structured_output
            out["entities"] = {
                e.name: [o.content for o in e.current_observations] for e in mem.entities()
            }
            out["recall"] = []
            for question, expected in QUESTIONS:
                spent = counting.measure()
                began = time.perf_counter()
                answer = mem.recall(question)
                out["recall"].append(
                    {
                        "question": question,
                        "answer": answer,
                        "answered": all(
                            re.search(rf"\b{word}(s|es)?\b", answer, re.IGNORECASE)
                            for word in expected
                        ),
                        "calls": spent.calls,
                        "seconds": round(time.perf_counter() - began, 1),
                    }
                )
            began = time.perf_counter()
            forgotten = mem.forget("Bob is no longer allergic to peanuts")
            out["forget"] = {
                "expired": [o.content for o in forgotten.expired_observations],
                "recall_after": mem.recall("What is Bob allergic to?"),
                "seconds": round(time.perf_counter() - began, 1),
            }
            set_memory_id("realmodel")
            began = time.perf_counter()
            with memory(config, provider=mem.provider, approve=True), Thread() as thread:
                first = llm(
                    "Does Alice prefer tea or coffee? Answer briefly.", memory=True, thread=thread
                )
                second = llm("And where does she work?", memory=True, thread=thread)
            out["conversation"] = {
                "replies": [str(first), str(second)],
                "context": first.context,
                "contexts": [first.context, second.context],
                "seconds": round(time.perf_counter() - began, 1),
            }
    finally:
        if saved_cache is None:
            os.environ.pop("MEMGRAPH_CACHE_DIR", None)
        else:
            os.environ["MEMGRAPH_CACHE_DIR"] = saved_cache
    out["seconds"] = round(time.perf_counter() - started, 1)
    report = os.environ.get("MEMGRAPH_TEST_REPORT")
    if report:
        Path(report).write_text(json.dumps(out, indent=1, ensure_ascii=False), encoding="utf-8")
    yield out


def test_every_sentence_is_stored_or_fails_with_a_clear_message(record: dict[str, Any]) -> None:
    for item in record["remember"]:
        assert item["episode"], f"the text itself was lost: {item['text']!r}"
        assert item["stored"] or item["unextracted"] or item["warnings"], (
            f"silently dropped: {item['text']!r}"
        )
    stored = sum(item["stored"] for item in record["remember"])
    assert stored >= len(SENTENCES) // 2, record["remember"]


def test_a_short_name_resolves_to_the_known_person(record: dict[str, Any]) -> None:
    names = set(record["entities"])
    assert "Alice Chen" in names and "Alice" not in names, sorted(names)


def test_recall_answers_most_questions(record: dict[str, Any]) -> None:
    answered = sum(item["answered"] for item in record["recall"])
    assert answered >= 3, record["recall"]


def test_forget_expires_the_fact(record: dict[str, Any]) -> None:
    assert "peanut" not in record["forget"]["recall_after"].lower(), record["forget"]


def test_a_conversation_with_memory_uses_the_remembered_fact(record: dict[str, Any]) -> None:
    assert "tea" in record["conversation"]["context"].lower(), record["conversation"]
    assert "tea" in record["conversation"]["replies"][0].lower(), record["conversation"]
