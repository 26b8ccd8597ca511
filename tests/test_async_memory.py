"""AsyncMemory: Memory's methods, awaitable, with model calls that overlap and an
event loop that never waits on a file, a lock or a blocking model call."""

from __future__ import annotations

import asyncio
import gc
import inspect
import logging
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from memgraph.providers.mock import HashEmbedder, MockChatModel, ScriptedChatModel

from memgraph import AsyncMemory, ChangeSet, InvalidScope, Memory, NotFound
from memgraph.llm_calls.ask import aask_json, ask_json
from memgraph.llm_calls.prompts import EXTRACT_SCHEMA
from memgraph.llm_calls.provider import Completion, JsonSchema, Message, Provider

NAMES = [
    f"{first}{last}"
    for first in ("Ka", "Lo", "Mi", "Ne", "Ru")
    for last in ("dar", "fen", "gil", "mon", "tas", "vik", "zor", "bel", "cur", "don")
]
LATENCY = 0.2


class SlowChat:
    """The mock chat model behind a network-like latency; counts calls in flight."""

    def __init__(
        self, latency: float = LATENCY, *, offload: bool = False, inner: Any = None
    ) -> None:
        self.model = "slow-mock"
        self.latency = latency
        self.offload = offload  # answer from a worker thread, as an HTTP client would
        self.inner = inner or MockChatModel()
        self.in_flight = 0
        self.peak = 0
        self.threads: set[str] = set()

    def complete(
        self, messages: Sequence[Message], *, schema: JsonSchema | None = None, **options: Any
    ) -> Completion:
        self.threads.add(threading.current_thread().name)
        time.sleep(self.latency)  # a blocking HTTP call
        return self.inner.complete(messages, schema=schema, **options)

    async def acomplete(
        self, messages: Sequence[Message], *, schema: JsonSchema | None = None, **options: Any
    ) -> Completion:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(self.latency)  # the model thinking, off the loop
        finally:
            self.in_flight -= 1
        if self.offload:
            return await asyncio.to_thread(self.inner.complete, messages, schema=schema, **options)
        return self.inner.complete(messages, schema=schema, **options)


class OffloadedEmbedder(HashEmbedder):
    """Hashed embeddings computed in a worker thread (an embedder with a real ``aembed``)."""

    async def aembed(self, texts: Sequence[str]) -> Any:
        return await asyncio.to_thread(self.embed, texts)


def slow_provider(chat: Any) -> Provider:
    return Provider("slow", chat, HashEmbedder())


def test_fifty_concurrent_remembers_overlap_their_model_calls_and_keep_every_write(
    tmp_path: Path,
) -> None:
    chat = SlowChat()
    texts = [f"{name} works at Org{i} Labs." for i, name in enumerate(NAMES)]

    async def main() -> tuple[float, list[ChangeSet]]:
        async with AsyncMemory(tmp_path, "team", provider=slow_provider(chat)) as memory:
            await memory.stats()  # open the scope first: the timing is of the writes
            started = time.perf_counter()
            changes = await asyncio.gather(*(memory.remember(text) for text in texts))
            return time.perf_counter() - started, changes

    elapsed, changes = asyncio.run(main())
    serial = len(texts) * LATENCY
    assert elapsed < serial / 4, f"{len(texts)} remembers took {elapsed:.2f}s (serial: {serial}s)"
    # More model calls were in flight at once than the default thread pool has threads:
    # they overlapped on the event loop, not in worker threads.
    assert chat.peak > min(32, (os.cpu_count() or 1) + 4), chat.peak
    assert chat.threads == set()  # the blocking complete() was never used
    assert len({c.episode.id for c in changes if c.episode}) == len(texts)
    with Memory(tmp_path, "team", provider="mock") as reopened:
        assert reopened.stats()["episodes"] == len(texts)
        for i, name in enumerate(NAMES):
            facts = [o.content for o in reopened.entity(name).observations]
            assert facts == [f"works at Org{i} Labs"]


def test_async_remember_asks_the_model_exactly_what_remember_asks(tmp_path: Path) -> None:
    said = [
        "Maria: I joined a gym in Lisbon last week.",
        "Maria: My sister Ana lives in Porto.",
        "Maria: I left the gym.",
    ]

    def replies() -> ScriptedChatModel:
        return ScriptedChatModel(fallback=MockChatModel())

    sync_chat, async_chat = replies(), replies()
    with Memory(tmp_path / "sync", "maria", provider=Provider("s", sync_chat, HashEmbedder())) as m:
        expected = [
            m.remember(text, at=f"2024-05-0{i + 1}T10:00:00Z") for i, text in enumerate(said)
        ]

    async def main() -> list[ChangeSet]:
        provider = Provider("a", async_chat, HashEmbedder())
        async with AsyncMemory(tmp_path / "async", "maria", provider=provider) as memory:
            return [
                await memory.remember(text, at=f"2024-05-0{i + 1}T10:00:00Z")
                for i, text in enumerate(said)
            ]

    got = asyncio.run(main())
    assert [c.messages for c in async_chat.calls] == [c.messages for c in sync_chat.calls]
    for mine, theirs in zip(got, expected, strict=True):
        assert [o.content for o in mine.added_observations] == [
            o.content for o in theirs.added_observations
        ]
        assert [o.content for o in mine.expired_observations] == [
            o.content for o in theirs.expired_observations
        ]
        assert mine.episode is not None and theirs.episode is not None
        assert (mine.episode.id, mine.episode.speaker) == (
            theirs.episode.id,
            theirs.episode.speaker,
        )


class EntryPoints:
    """A chat model that records whether it was called blocking or awaited, by phase."""

    def __init__(self) -> None:
        self.model = "entry-points"
        self.inner = ScriptedChatModel(fallback=MockChatModel())
        self.used: list[tuple[str, str]] = []

    def complete(
        self, messages: Sequence[Message], *, schema: JsonSchema | None = None, **options: Any
    ) -> Completion:
        self.used.append(("complete", schema.phase if schema else "chat"))
        return self.inner.complete(messages, schema=schema, **options)

    async def acomplete(
        self, messages: Sequence[Message], *, schema: JsonSchema | None = None, **options: Any
    ) -> Completion:
        self.used.append(("acomplete", schema.phase if schema else "chat"))
        return self.inner.complete(messages, schema=schema, **options)


def test_async_forget_awaits_the_model_and_forgets_what_forget_forgets(tmp_path: Path) -> None:
    said = ["Alice works at Acme.", "Alice prefers green tea.", "Bob lives in Rome."]
    sync_chat, async_chat = EntryPoints(), EntryPoints()
    with Memory(tmp_path / "s", "a", provider=Provider("s", sync_chat, HashEmbedder())) as memory:
        for text in said:
            memory.remember(text, at="2024-05-01T10:00:00Z")
        expected = memory.forget("alice's job at acme")

    async def main() -> ChangeSet:
        provider = Provider("a", async_chat, HashEmbedder())
        async with AsyncMemory(tmp_path / "a", "a", provider=provider) as memory:
            for text in said:
                await memory.remember(text, at="2024-05-01T10:00:00Z")
            assert await memory.forget("nothing like this at all") == ChangeSet()
            return await memory.forget("alice's job at acme")

    got = asyncio.run(main())
    assert [o.content for o in got.expired_observations] == ["works at Acme"]
    assert [o.content for o in got.expired_observations] == [
        o.content for o in expected.expired_observations
    ]
    assert [c.messages for c in async_chat.inner.calls] == [
        c.messages for c in sync_chat.inner.calls
    ]
    assert {way for way, _ in async_chat.used} == {"acomplete"}
    assert ("acomplete", "forget") in async_chat.used


def test_an_unusable_reply_is_repaired_once_then_the_text_is_kept_unextracted(
    tmp_path: Path,
) -> None:
    chat = ScriptedChatModel({"extract": ["not json", "still not json"]})

    async def main() -> ChangeSet:
        provider = Provider("s", chat, HashEmbedder())
        async with AsyncMemory(tmp_path, "a", provider=provider) as memory:
            return await memory.remember("Alice works at Acme.")

    changes = asyncio.run(main())
    assert changes.unusable_reply is not None and "extract reply unusable" in changes.unusable_reply
    assert changes.episode is not None and not changes.episode.extracted
    assert len(chat.calls) == 2 and "not json" in str(chat.calls[1].messages[-2]["content"])


def test_aask_json_sends_the_same_repair_as_ask_json_and_falls_back_to_a_thread() -> None:
    class BlockingOnly:
        """A chat model without ``acomplete``: aask_json must not call it on the loop."""

        def __init__(self) -> None:
            self.model = "blocking"
            self.script = ScriptedChatModel(["{oops", {"entities": []}])
            self.threads: list[str] = []

        def complete(self, messages: Sequence[Message], **kwargs: Any) -> Completion:
            self.threads.append(threading.current_thread().name)
            return self.script.complete(messages, **kwargs)

    def validate(document: dict[str, object]) -> object:
        return document["entities"]

    sync_chat, async_chat = ScriptedChatModel(["{oops", {"entities": []}]), BlockingOnly()
    expected = ask_json(sync_chat, "system", "user", EXTRACT_SCHEMA, validate)
    answer = asyncio.run(aask_json(async_chat, "system", "user", EXTRACT_SCHEMA, validate))
    assert (
        (answer.value, answer.calls, answer.problems)
        == (
            expected.value,
            expected.calls,
            expected.problems,
        )
        == ([], 2, expected.problems)
    )
    assert [c.messages for c in async_chat.script.calls] == [c.messages for c in sync_chat.calls]
    assert threading.main_thread().name not in async_chat.threads


class SlowCallbacks(logging.Handler):
    """Collects asyncio's debug-mode reports of callbacks that held the loop too long."""

    def __init__(self) -> None:
        super().__init__()
        self.reports: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("Executing"):
            self.reports.append(message)


def run_watched(main: Any) -> list[str]:
    """Run ``main()`` with asyncio's slow-callback detection at 50 ms; what it reported."""
    handler = SlowCallbacks()
    logger = logging.getLogger("asyncio")
    logger.addHandler(handler)
    try:

        async def watched() -> None:
            asyncio.get_running_loop().slow_callback_duration = 0.05
            await main()

        # What earlier tests left in this process is not scanned by the collector
        # (a full collection of it is a pause of tens of milliseconds on any loop).
        gc.collect()
        gc.freeze()
        try:
            asyncio.run(watched(), debug=True)
        finally:
            gc.unfreeze()
    finally:
        logger.removeHandler(handler)
    return handler.reports


def test_async_memory_never_blocks_the_event_loop(tmp_path: Path) -> None:
    # The first extraction (of a long text) gets a canned reply: the mock's rules
    # would spend a quarter second of CPU on it, holding the GIL the loop needs too.
    tea = {"entities": [{"name": "Kadar", "type": "person", "observations": ["likes tea"]}]}
    inner = ScriptedChatModel({"extract": [tea]}, fallback=MockChatModel())
    chat = SlowChat(latency=0.06, offload=True, inner=inner)
    provider = Provider("offloaded", chat, OffloadedEmbedder())

    async def workload() -> None:
        async with AsyncMemory(tmp_path, "alice", provider=provider) as memory:
            await memory.remember("Kadar prefers green tea. " * 4_000)  # 100,000 characters
            texts = [f"{name} works at Org{i} Labs." for i, name in enumerate(NAMES[:20])]
            await asyncio.gather(*(memory.remember(text) for text in texts))
            await memory.remember_many(["Kafen lives in Rome.", "Kagil lives in Oslo."])
            assert "Org0 Labs" in await memory.recall("where does kadar work?")
            assert await memory.search("rome", k=3)
            await memory.forget("kafen's home")
            await memory.kv.remember("theme", "dark")
            await memory.note("API is slow on Mondays", category="learning")
            await memory.history("Kadar")
            await memory.as_of("2020-01-01T00:00:00Z").entities()
            await memory.checkpoint()
            await memory.export()
        unusable = ScriptedChatModel({"extract": ["not json"] * 2})
        broken = Provider("broken", SlowChat(0.06, offload=True, inner=unusable), provider.embedder)
        async with AsyncMemory(tmp_path, "bob", provider=broken) as memory:
            assert (await memory.remember("Bob plays the cello.")).unusable_reply
        async with AsyncMemory(tmp_path, "bob", provider=provider) as memory:
            (redone,) = await memory.reextract()
            assert [o.content for o in redone.added_observations] == ["plays the cello"]

    assert run_watched(workload) == []


def test_the_watch_sees_a_blocking_remember_on_the_loop(tmp_path: Path) -> None:
    provider = Provider("slow", SlowChat(latency=0.06), HashEmbedder())

    async def blocking() -> None:
        with Memory(tmp_path, "alice", provider=provider) as memory:
            memory.remember("Alice works at Acme.")  # Memory, not AsyncMemory: blocks

    reports = run_watched(blocking)
    assert len(reports) == 1 and "took" in reports[0]


ASYNC_ONLY = {"open", "wrap"}  # opening in a worker thread; sharing an open Memory
NOT_AWAITED = {"named", "as_of", "kv", "resident_bytes"}  # no I/O until a read: as on Memory


def public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


def parameters(function: Any) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


def test_async_memory_has_every_public_method_of_memory_with_the_same_parameters() -> None:
    assert sorted(public(Memory) - public(AsyncMemory)) == []
    assert public(AsyncMemory) - public(Memory) == ASYNC_ONLY
    for name in sorted(public(Memory) - NOT_AWAITED):
        method = getattr(AsyncMemory, name)
        awaited = inspect.iscoroutinefunction(method) or inspect.isasyncgenfunction(method)
        assert awaited, f"AsyncMemory.{name} is not awaitable"
        original = inspect.getattr_static(Memory, name)
        if not isinstance(original, property):
            assert parameters(method) == parameters(getattr(Memory, name)), name
    assert parameters(AsyncMemory.named) == parameters(Memory.named)
    assert parameters(AsyncMemory.as_of) == parameters(Memory.as_of)


def test_async_reextract_awaits_the_model_and_draws_what_reextract_draws(
    tmp_path: Path,
) -> None:
    said = ["Alice works at Acme.", "Bob: I moved to Rome."]
    broken = Provider("broken", ScriptedChatModel({"extract": ["not json"] * 8}), HashEmbedder())
    for copy in ("s", "a"):
        with Memory(tmp_path / copy, "team", provider=broken) as memory:
            for text in said:
                assert memory.remember(text, at="2024-05-01T10:00:00Z").unusable_reply
    sync_chat, async_chat = EntryPoints(), EntryPoints()
    with Memory(tmp_path / "s", "team", provider=Provider("s", sync_chat, HashEmbedder())) as m:
        expected = m.reextract()

    async def main() -> tuple[list[ChangeSet], list[ChangeSet], list[bool]]:
        provider = Provider("a", async_chat, HashEmbedder())
        async with AsyncMemory(tmp_path / "a", "team", provider=provider) as memory:
            first = await memory.reextract(limit=1)
            rest = await memory.reextract()
            assert await memory.reextract() == []  # never twice
            return first, rest, [e.extracted async for e in memory.iter_episodes()]

    first, rest, extracted = asyncio.run(main())
    got = first + rest
    assert [[o.content for o in c.added_observations] for c in got] == [
        [o.content for o in c.added_observations] for c in expected
    ]
    assert [o.content for c in got for o in c.added_observations] == [
        "works at Acme",
        "moved to Rome",
    ]
    assert extracted == [True, True]
    assert [c.messages for c in async_chat.inner.calls] == [
        c.messages for c in sync_chat.inner.calls
    ]
    assert {way for way, _ in async_chat.used} == {"acomplete"}


def test_async_reextract_reports_a_reply_still_unusable_and_keeps_the_text(
    tmp_path: Path,
) -> None:
    chat = ScriptedChatModel({"extract": ["not json"] * 8})

    async def main() -> tuple[list[ChangeSet], list[bool]]:
        async with AsyncMemory(tmp_path, "a", provider=Provider("s", chat, HashEmbedder())) as m:
            await m.remember("Alice works at Acme.")
            again = await m.reextract()
            return again, [e.extracted async for e in m.iter_episodes()]

    (again,), extracted = asyncio.run(main())
    assert not again and again.unusable_reply is not None
    assert extracted == [False]


def test_async_memory_has_every_face_of_memory(tmp_path: Path) -> None:
    async def main() -> None:
        memory = AsyncMemory(tmp_path, "alice", provider="mock")
        assert "alice" in repr(memory)
        async with memory:
            await memory.remember("Alice works at Acme.")
            await memory.add_facts([("Bob", "person", ["likes chess"])])
            assert {e.name for e in await memory.entities()} >= {"Alice", "Bob"}
            assert (await memory.entity("bob")).observations[0].content == "likes chess"
            with pytest.raises(NotFound):
                await memory.entity("nobody")
            hits = await memory.search("chess", episodes=True)
            assert hits[0].entity is not None and hits[0].entity.name == "Bob"
            assert await memory.supporting_episodes(hits) == []  # add_facts keeps no text
            episodes = [e async for e in memory.iter_episodes()]
            assert [e.text for e in episodes] == ["Alice works at Acme."]
            assert await memory.episode(episodes[0].id) == episodes[0]
            assert (await memory.expire_entity("Bob")).expired_observations
            assert (await memory.stats())["episodes"] == 1
            assert await memory.kv.remember_many({"a": 1, "b": 2}) == {"a": 1, "b": 1}
            assert await memory.kv.forget_many(["a", "missing"]) == 1
            assert (await memory.kv.keys(), await memory.kv.recall("a")) == (["b"], None)
            assert [v.version for v in await memory.kv.history("a")] == [1, 2]
            assert await memory.kv.as_of("a", 1) == 1
            await memory.note("draft done", category="context", tags=["x"])
            assert [n.content for n in await memory.notes("context")] == ["draft done"]
            await memory.create_progress("import", ["ingest", "load"])
            await memory.start_step("import", "ingest")
            await memory.complete_step("import", "ingest", {"rows": 1})
            await memory.fail_step("import", "load", "disk full")
            assert await memory.resume_point("import") == "load"
            assert (await memory.progress("import")).steps[0].status == "done"
            await memory.add_rule("max_discount", "must", "discount <= 0.2", "pricing")
            assert [r.name for r in await memory.get_rules("pricing")] == ["max_discount"]
            assert await memory.check_rules("pricing", {"discount": 0.5})
            await memory.remove_rule("max_discount")
            assert "Acme" in await memory.known_information()
            assert (await memory.memory_summary()).scope == "alice"
            assert await memory.summary() is None
            await memory.save_summary({"summary": "Alice works at Acme.", "messages": 1})
            await memory.update_summary(lambda old: {**(old or {}), "messages": 2})
            assert await memory.summary() == {"summary": "Alice works at Acme.", "messages": 2}
            assert await memory.embedder_model() == "mock-hash-384"
            assert await memory.wait_for_index(timeout=1.0)
            assert "Alice" in (await memory.view(max_entities=10)).html
            view = memory.as_of("2000-01-01T00:00:00Z")
            assert (await view.recall("acme"), await view.search("acme")) == ("", [])
            with pytest.raises(NotFound):
                await view.entity("Alice")
            assert (await memory.forget("alice's job at acme")).expired_observations
            assert (await memory.purge("Acme"))["episodes"] == 1

    asyncio.run(main())
    with pytest.raises(InvalidScope):
        AsyncMemory(tmp_path, "no/such")
    with pytest.raises(InvalidScope):
        AsyncMemory.named("no such")
    named = AsyncMemory.named("notes", dir=tmp_path, provider="mock")
    assert (named.scope, named._arguments["dir"]) == ("notes", tmp_path)
    with pytest.raises(ValueError, match="ISO"):
        AsyncMemory(tmp_path, "alice").as_of("yesterday-ish")


def test_wrap_shares_an_open_memory(tmp_path: Path) -> None:
    with Memory(tmp_path, "alice", provider="mock") as memory:
        memory.remember("Alice works at Acme.")

        async def main() -> str:
            wrapped = AsyncMemory.wrap(memory)
            assert await wrapped.open() is memory
            return await wrapped.recall("where does alice work", rerank=False)

        assert "Acme" in asyncio.run(main())


def test_async_memory_reports_the_memory_its_open_scope_holds(tmp_path: Path) -> None:
    async def main() -> tuple[int, int]:
        memory = AsyncMemory(tmp_path / "mem", "u", provider="mock")
        before = memory.resident_bytes()
        await memory.remember("Alice works at Acme.")
        after = memory.resident_bytes()
        await memory.close()
        return before, after

    before, after = asyncio.run(main())
    assert before == 0 and after > 0
