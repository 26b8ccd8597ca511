"""The bulk path: ``Memory.remember_many`` with items, concurrency, progress and chunked commits."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from memgraph.providers.mock import HashEmbedder, MockChatModel

from memgraph import Episode, Item, Memory, Provider, ProviderUnavailable, StoreConflict
from memgraph.clock import now_iso
from memgraph.engine import bulk as bulk_module
from memgraph.errors import StoreUnavailable
from memgraph.llm_calls.provider import Completion
from tests.postgres_server import new_scope


class CountingChat:
    """The mock chat model, counting calls; raises ``error`` on call number ``fail_at``."""

    def __init__(self, fail_at: int | None = None, error: BaseException | None = None) -> None:
        self.inner = MockChatModel()
        self.model = self.inner.model
        self.calls = 0
        self.fail_at = fail_at
        self.error = error
        self._lock = threading.Lock()

    def complete(
        self, messages: Sequence[Any], *, schema: Any = None, **options: Any
    ) -> Completion:
        with self._lock:
            self.calls += 1
            number = self.calls
        if number == self.fail_at and self.error is not None:
            raise self.error
        return self.inner.complete(messages, schema=schema, **options)


class BarrierChat(CountingChat):
    """Each call waits until ``parties`` calls are in flight at once (proves concurrency)."""

    def __init__(self, parties: int) -> None:
        super().__init__()
        self.barrier = threading.Barrier(parties, timeout=10)

    def complete(
        self, messages: Sequence[Any], *, schema: Any = None, **options: Any
    ) -> Completion:
        self.barrier.wait()
        return super().complete(messages, schema=schema, **options)


class FailingEmbedder(HashEmbedder):
    """Hashed embeddings that fail on any batch holding ``poison`` (after extraction)."""

    def __init__(self, poison: str) -> None:
        super().__init__()
        self.poison = poison

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if any(self.poison in text and "(" in text for text in texts):
            raise ProviderUnavailable("embedding service down")
        return super().embed(texts)


def provider(chat: Any = None, embedder: Any = None) -> Provider:
    return Provider("test", chat or CountingChat(), embedder or HashEmbedder())


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(bulk_module, "CHUNK_TEXTS", 2)
    yield


def in_order(episodes: Iterable[Episode]) -> list[Episode]:
    """Episodes in the order they were written (ids are numbered)."""
    return sorted(episodes, key=lambda e: int(e.id.rpartition("-")[2]))


def journal_lines(root: Path, scope: str = "s") -> int:
    path = root / scope / "journal.jsonl"
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_each_item_keeps_its_own_time_speaker_source_and_metadata(tmp_path: Path) -> None:
    items: list[Any] = [
        "Alice works at Acme.",
        {"text": "Bob likes jazz.", "at": "2024-03-01T10:00:00Z", "speaker": "Bob"},
        Item("Carol lives in Rome.", at="2024-03-02T09:00:00Z", speaker="Carol", source="chat"),
        {"text": "Sorry to hear that.", "speaker": "assistant", "extract": False},
        {"text": "Dan plays chess.", "metadata": {"thread": 7}},
    ]
    with Memory(tmp_path, "s", provider="mock") as memory:
        results = memory.remember_many(items, at="2024-01-01T00:00:00Z", source="import")
        episodes = in_order(memory.iter_episodes())
        bob = memory.entity("Bob").observations[0]
    assert [e.text for e in episodes] == [
        "Alice works at Acme.",
        "Bob likes jazz.",
        "Carol lives in Rome.",
        "Sorry to hear that.",
        "Dan plays chess.",
    ]
    assert [e.at for e in episodes] == [
        "2024-01-01T00:00:00.000Z",
        "2024-03-01T10:00:00.000Z",
        "2024-03-02T09:00:00.000Z",
        "2024-01-01T00:00:00.000Z",
        "2024-01-01T00:00:00.000Z",
    ]
    assert [e.speaker for e in episodes] == [None, "Bob", "Carol", "assistant", None]
    assert [e.source for e in episodes] == ["import", "import", "chat", "import", "import"]
    assert episodes[4].metadata == {"thread": 7}
    assert bob.valid_from == "2024-03-01T10:00:00.000Z"
    assert results[3].episode is not None and not results[3]  # kept, nothing extracted
    assert all(results[i] for i in (0, 1, 2, 4))


def test_an_item_not_extracted_makes_no_model_call(tmp_path: Path) -> None:
    chat = CountingChat()
    with Memory(tmp_path, "s", provider=provider(chat)) as memory:
        memory.remember_many([{"text": "Thanks, noted.", "extract": False}] * 3)
        assert len(list(memory.iter_episodes())) == 3
    assert chat.calls == 0


@pytest.mark.parametrize("store", ["files", "memory", "postgres"])
def test_the_speaker_round_trips_through_every_store(
    store: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    def open_memory() -> Memory:
        if store == "postgres":
            dsn = request.getfixturevalue("postgres_dsn")
            return Memory(scope=scope, provider="mock", store=dsn)
        return Memory(tmp_path, scope, provider="mock", store=store)

    scope = new_scope("bulk") if store == "postgres" else "s"
    with open_memory() as memory:
        memory.remember_many([{"text": "Alice likes tea.", "speaker": "Alice"}])
        memory.checkpoint()  # from the journal into the checkpointed episodes
        memory.remember_many([{"text": "Alice works at Acme.", "speaker": "Alice"}])
        if store == "memory":
            assert [e.speaker for e in memory.iter_episodes()] == ["Alice", "Alice"]
            return
    with open_memory() as memory:
        assert [e.speaker for e in memory.iter_episodes()] == ["Alice", "Alice"]
        first = memory.entity("Alice").observations[0].episode_id
        assert first is not None
        found = memory.episode(first)
        assert found is not None and found.speaker == "Alice"


@pytest.mark.parametrize(
    ("items", "error", "message"),
    [
        ("Alice likes tea.", TypeError, "takes a list"),
        ([{"text": "a", "speakr": "Bob"}], ValueError, "item 0: unknown key 'speakr'"),
        (["ok", {"speaker": "Bob"}], ValueError, "item 1: the item has no 'text'"),
        (["ok", "ok", {"text": "x", "at": "yesterday"}], ValueError, "item 2"),
        (["ok", {"text": "x", "speaker": 3}], TypeError, "item 1: speaker must be a string"),
        (["ok", ""], ValueError, "item 1: text is empty"),
    ],
)
def test_a_bad_item_is_refused_naming_it_before_anything_is_stored(
    tmp_path: Path, items: Any, error: type[Exception], message: str
) -> None:
    with Memory(tmp_path, "s", provider="mock") as memory:
        with pytest.raises(error, match=message):
            memory.remember_many(items)
        assert not memory.store.exists()


@pytest.mark.parametrize("concurrency", [0, -1, True, 1.5, "2"])
def test_a_concurrency_that_is_not_a_positive_integer_is_refused_before_anything_is_stored(
    tmp_path: Path, concurrency: Any
) -> None:
    with Memory(tmp_path, "s", provider="mock") as memory:
        with pytest.raises(
            ValueError, match=f"concurrency must be a positive integer, got {concurrency!r}"
        ):
            memory.remember_many(["Alice works at Acme."], concurrency=concurrency)
        assert not memory.store.exists()


def test_concurrent_extraction_runs_calls_at_once_and_applies_them_in_input_order(
    tmp_path: Path,
) -> None:
    chat = BarrierChat(parties=4)  # every call waits for three others: serial would time out
    texts = [f"Alice works at Company{i}." for i in range(8)]
    with Memory(tmp_path, "s", provider=provider(chat)) as memory:
        results = memory.remember_many(texts, concurrency=4)
        current = [o.content for o in memory.entity("Alice").current_observations]
        history = {o.content: o for o in memory.history("Alice").observations}
    assert chat.calls == 8
    assert [r.episode.text if r.episode else None for r in results] == texts
    assert current == ["works at Company7"]  # each one superseded the one before, in order
    for i in range(7):  # each one superseded the one before it
        successor = history[f"works at Company{i + 1}"].id
        assert history[f"works at Company{i}"].superseded_by == successor


def test_progress_reports_zero_then_every_durable_chunk(tmp_path: Path, small_chunks: None) -> None:
    seen: list[tuple[int, int]] = []
    texts = [f"Person{i} likes tea." for i in range(5)]
    with Memory(tmp_path, "s", provider="mock") as memory:
        memory.remember_many(texts, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(0, 5), (2, 5), (4, 5), (5, 5)]
    assert journal_lines(tmp_path) == 3  # one commit per chunk


def test_a_model_failure_stores_exactly_the_items_before_it(
    tmp_path: Path, small_chunks: None
) -> None:
    chat = CountingChat(fail_at=4, error=ProviderUnavailable("rate limited for good"))
    texts = [f"Person{i} likes tea." for i in range(6)]
    seen: list[int] = []
    with Memory(tmp_path, "s", provider=provider(chat)) as memory:
        with pytest.raises(ProviderUnavailable):
            memory.remember_many(texts, progress=lambda done, total: seen.append(done))
        assert sorted(e.name for e in memory.entities()) == ["Person0", "Person1", "Person2"]
    assert seen[-1] == 3


def test_an_interrupt_keeps_the_items_already_extracted(tmp_path: Path) -> None:
    chat = CountingChat(fail_at=3, error=KeyboardInterrupt())
    texts = [f"Person{i} likes tea." for i in range(5)]
    with Memory(tmp_path, "s", provider=provider(chat)) as memory, pytest.raises(KeyboardInterrupt):
        memory.remember_many(texts, concurrency=1)
    with Memory(tmp_path, "s", provider="mock") as memory:
        assert [e.text for e in memory.iter_episodes()] == [
            "Person0 likes tea.",
            "Person1 likes tea.",
        ]


def test_an_embedder_failing_after_extraction_keeps_earlier_chunks_and_serves_only_stored_facts(
    tmp_path: Path, small_chunks: None
) -> None:
    texts = [f"Person{i} likes tea." for i in range(6)]
    embedder = FailingEmbedder(poison="Person4")  # extraction contexts pass; chunk 3's facts fail
    with Memory(tmp_path, "s", provider=provider(embedder=embedder)) as memory:
        with pytest.raises(ProviderUnavailable):
            memory.remember_many(texts)
        names = sorted(e.name for e in memory.entities())
        recalled = memory.recall("who likes tea", rerank=False)
    assert names == ["Person0", "Person1", "Person2", "Person3"]
    assert "Person4" not in recalled and "Person3" in recalled
    with Memory(tmp_path, "s", provider="mock") as fresh:
        assert sorted(e.name for e in fresh.entities()) == names
        assert len(list(fresh.iter_episodes())) == 4
    assert journal_lines(tmp_path) == 2


def test_a_long_bulk_import_lets_other_writers_in_within_the_lock_timeout(tmp_path: Path) -> None:
    config = {"lockTimeout": 2.0}
    texts = [f"Person{i} works at Company{i % 97}." for i in range(5000)]
    holds: list[float] = []
    errors: list[BaseException] = []
    with Memory(tmp_path, "s", provider="mock", config=config) as bulk:
        bulk.remember("Zed likes tea.")  # the scope exists before the writers start
        store_lock = bulk.store.lock

        def timed_lock(timeout: float) -> Any:
            import contextlib
            import time

            @contextlib.contextmanager
            def hold() -> Iterator[None]:
                with store_lock(timeout):
                    started = time.monotonic()
                    try:
                        yield
                    finally:
                        holds.append(time.monotonic() - started)

            return hold()

        bulk.store.lock = timed_lock  # type: ignore[method-assign]

        def run() -> None:
            try:
                bulk.remember_many(texts)
            except BaseException as exc:
                errors.append(exc)

        worker = threading.Thread(target=run)
        worker.start()
        writes = 0
        with Memory(tmp_path, "s", provider="mock", config=config) as other:
            while worker.is_alive() or writes < 3:
                try:
                    other.remember(f"Yan{writes} likes coffee.")
                except StoreConflict as exc:  # pragma: no cover - the failure this test guards
                    errors.append(exc)
                    break
                writes += 1
        worker.join()
        order = [e.text[:3] for e in in_order(bulk.iter_episodes())]
    assert not errors
    assert len(holds) > 2  # several chunks, each short
    assert max(holds) < config["lockTimeout"]
    first, last = order.index("Per"), len(order) - order[::-1].index("Per") - 1
    assert "Yan" in order[first:last]  # another writer got in between two chunks


# ------------------------------------------------------------------ commit of a chunk
def test_a_chunk_records_when_its_facts_were_stored_and_where_they_came_from(
    tmp_path: Path,
) -> None:
    with Memory(tmp_path, "s", provider="mock") as memory:
        before = now_iso()
        memory.remember_many(["Alice works at Acme."], source="import")
        after = now_iso()
        (fact,) = memory.entity("Alice").observations
        (episode,) = memory.iter_episodes()
    assert fact.source == "import"
    assert fact.recorded_at is not None and before <= fact.recorded_at <= after
    assert before <= episode.recorded_at <= after


def test_remember_many_without_an_embedder_stores_its_facts_and_no_vectors(tmp_path: Path) -> None:
    chat_only = Provider("chat only", MockChatModel(), None)
    with Memory(tmp_path, "s", provider=chat_only) as memory:
        memory.remember_many(["Alice works at Acme.", "Bob likes jazz."])
        stats = memory.stats()
    assert (stats["current_observations"], stats["episodes"], stats["vectors"]) == (2, 2, 0)
    with Memory(tmp_path, "s", provider=chat_only) as reopened:
        assert reopened.stats() == stats


def test_a_chunk_ends_once_it_holds_the_vector_limit_and_the_rest_follows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bulk_module, "CHUNK_VECTORS", 2)  # each item below brings two
    seen: list[tuple[int, int]] = []
    texts = ["Alice works at Acme.", "Bob likes jazz.", "Carol lives in Rome."]
    with Memory(tmp_path, "s", provider="mock") as memory:
        results = memory.remember_many(
            texts, progress=lambda done, total: seen.append((done, total))
        )
        assert [r.episode.text if r.episode else None for r in results] == texts
    assert seen == [(0, 3), (1, 3), (2, 3), (3, 3)]


def test_the_graph_stays_in_step_with_the_store_after_a_chunk_without_a_reload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memory(tmp_path, "s", provider="mock") as memory:
        memory.remember("Zed likes tea.")
        loads: list[int] = []
        load = memory.store.load

        def counted_load() -> Any:
            loads.append(1)
            return load()

        monkeypatch.setattr(memory.store, "load", counted_load)
        memory.remember_many(["Alice works at Acme.", "Bob likes jazz."])
        assert memory.stats()["vectors"] == 6  # three facts and the three texts
        assert loads == []


def test_a_failure_after_a_chunk_is_stored_is_logged_and_the_chunk_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with Memory(tmp_path, "s", provider="mock") as memory:
        memory.remember("Zed likes tea.")

        def broken(*args: Any, **kwargs: Any) -> bool:
            raise RuntimeError("the checkpoint broke (injected)")

        monkeypatch.setattr(memory.store, "checkpoint_due", lambda: True)
        monkeypatch.setattr(memory.store, "checkpoint", broken)
        results = memory.remember_many(["Alice works at Acme."])
        assert [o.content for o in results[0].added_observations] == ["works at Acme"]
        (record,) = [r for r in caplog.records if "bulk chunk" in r.getMessage()]
        assert record.getMessage() == "memgraph: checkpoint after a bulk chunk failed"
        assert record.exc_info is not None and "injected" in str(record.exc_info[1])
        monkeypatch.undo()
        assert sorted(e.name for e in memory.entities()) == ["Acme", "Alice", "Zed"]
    with Memory(tmp_path, "s", provider="mock") as reopened:
        assert sorted(e.name for e in reopened.entities()) == ["Acme", "Alice", "Zed"]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes need Python 3.11")
def test_a_model_failure_says_how_much_of_the_batch_is_stored(
    tmp_path: Path, small_chunks: None, caplog: pytest.LogCaptureFixture
) -> None:
    chat = CountingChat(fail_at=4, error=ProviderUnavailable("rate limited for good"))
    texts = [f"Person{i} likes tea." for i in range(6)]
    with (
        Memory(tmp_path, "s", provider=provider(chat)) as memory,
        pytest.raises(ProviderUnavailable) as caught,
    ):
        memory.remember_many(texts)
    assert getattr(caught.value, "__notes__", None) == [
        "memgraph: the first 3 of 6 items are stored, the rest are not"
    ]
    assert "memgraph: storing the 1 items extracted before ProviderUnavailable" in caplog.messages


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes need Python 3.11")
def test_a_store_failure_says_how_much_of_the_batch_is_stored(
    tmp_path: Path, small_chunks: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [f"Person{i} likes tea." for i in range(4)]
    with Memory(tmp_path, "s", provider="mock") as memory:
        memory.remember("Zed likes tea.")
        commit = memory.store.commit
        calls: list[int] = []

        def full_disk_on_the_second_chunk(change: Any) -> None:
            calls.append(1)
            if len(calls) == 2:
                raise StoreUnavailable("No space left on device (injected)")
            commit(change)

        monkeypatch.setattr(memory.store, "commit", full_disk_on_the_second_chunk)
        with pytest.raises(StoreUnavailable) as caught:
            memory.remember_many(texts)
    assert getattr(caught.value, "__notes__", None) == [
        "memgraph: the first 2 of 4 items are stored, the rest are not"
    ]


class RecordingEmbedder(HashEmbedder):
    """Hashed embeddings, recording every text asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return super().embed(texts)


def test_a_text_is_embedded_once_for_its_context_and_its_episode(tmp_path: Path) -> None:
    """The vector found for a text's context is its episode's vector too (when the
    episode is the text alone); a speaker's line is embedded as the line it is."""
    embedder = RecordingEmbedder()
    items: list[Any] = [
        "Alice moved to Oslo.",
        {"text": "Bob likes jazz.", "speaker": "Bob"},
        {"text": "Thanks, noted.", "extract": False},
        "Carol lives in Rome.",
    ]
    with Memory(tmp_path, "s", provider=provider(embedder=embedder)) as memory:
        memory.remember("Dana works at Acme.")  # vectors to search: contexts are embedded
        embedder.texts.clear()
        memory.remember_many(items)
        episodes = {e.text: e.id for e in memory.iter_episodes()}
        memory._sync()
        vectors = memory._vectors
        assert vectors is not None
        for text in ("Alice moved to Oslo.", "Carol lives in Rome.", "Thanks, noted."):
            assert embedder.texts.count(text) == 1
        assert embedder.texts.count("Bob likes jazz.") == 1  # its context
        assert embedder.texts.count("Bob: Bob likes jazz.") == 1  # its episode
        for text, line in [("Alice moved to Oslo.", None), ("Bob likes jazz.", "Bob: ")]:
            fresh = HashEmbedder().embed([f"{line or ''}{text}"])[0]
            found = vectors.similarities(fresh, [episodes[text]])
            assert found[episodes[text]] == pytest.approx(1.0, abs=1e-5)
    with Memory(tmp_path, "s", provider=provider(embedder=HashEmbedder())) as reopened:
        reopened._sync()
        vectors = reopened._vectors
        assert vectors is not None
        fresh = HashEmbedder().embed(["Carol lives in Rome."])[0]
        carol = episodes["Carol lives in Rome."]
        assert vectors.similarities(fresh, [carol])[carol] == pytest.approx(1.0, abs=1e-5)


def test_a_change_set_shows_its_new_entity_as_the_chunk_left_it_and_its_facts_as_added(
    tmp_path: Path,
) -> None:
    """A fact superseded by a later item of the same chunk: the first item's new entity
    shows it expired (the graph after the chunk), its added facts as they were added."""
    with Memory(tmp_path, scope="s", provider=provider(), config={}) as memory:
        first, second = memory.remember_many(
            ["Ana Lopez works at Acme.", "Ana Lopez works at Globex."]
        )
    (ana,) = [e for e in first.added_entities if e.name == "Ana Lopez"]
    assert [(o.content, o.current) for o in ana.observations] == [
        ("works at Acme", False),
        ("works at Globex", True),
    ]
    assert [(o.content, o.current) for o in first.added_observations] == [("works at Acme", True)]
    assert [o.content for o in second.expired_observations] == ["works at Acme"]
    assert ana.observations[1] == second.added_observations[0]


TRANSCRIPT = (
    "Dana: how was the race?\n"
    "Marcus: I finished the Chicago half in 2:06!\n"
    "assistant: Congratulations to you both.\n"
    "Dana: I moved to Evanston last month."
)


def test_a_transcript_is_remembered_turn_by_turn_with_its_speakers(tmp_path: Path) -> None:
    chat = CountingChat()
    with Memory(tmp_path, "s", provider=Provider("counting", chat, HashEmbedder(64))) as memory:
        changes = memory.remember(TRANSCRIPT, at="2024-01-19T10:00:00Z", metadata={"via": "x"})
        episodes = list(memory.iter_episodes())
    assert [(e.speaker, e.text) for e in episodes] == [
        ("Dana", "how was the race?"),
        ("Marcus", "I finished the Chicago half in 2:06!"),
        ("assistant", "Congratulations to you both."),
        ("Dana", "I moved to Evanston last month."),
    ]
    assert {e.metadata["via"] for e in episodes} == {"x"}
    # the assistant's line and Dana's question are kept with no model call
    assert chat.calls == 2
    assert changes.episode is not None and changes.episode.id == episodes[-1].id
    learned = [o.content for o in changes.added_observations]
    assert any(fact.startswith("moved to Evanston last month") for fact in learned), learned


def test_a_transcript_is_stored_whole_or_not_at_all(tmp_path: Path) -> None:
    chat = CountingChat(fail_at=2, error=ProviderUnavailable("the model went away"))
    with Memory(tmp_path, "s", provider=Provider("counting", chat, HashEmbedder(64))) as memory:
        with pytest.raises(ProviderUnavailable):
            memory.remember(TRANSCRIPT)
        assert list(memory.iter_episodes()) == []  # the first line is not kept either
        memory.remember(TRANSCRIPT)  # a retry stores each line once
        assert len(list(memory.iter_episodes())) == 4


def test_a_text_with_a_speaker_or_an_unlabelled_line_is_one_episode(tmp_path: Path) -> None:
    with Memory(tmp_path, "s", provider="mock") as memory:
        memory.remember(TRANSCRIPT, speaker="Dana")
        memory.remember("Dana: how was the race?\nit rained the whole way")
        memory.remember(TRANSCRIPT, tags="race")
        texts = [e.text for e in memory.iter_episodes()]
    assert texts == [TRANSCRIPT, "Dana: how was the race?\nit rained the whole way", TRANSCRIPT]


def test_an_async_memory_remembers_a_transcript_turn_by_turn(tmp_path: Path) -> None:
    import asyncio

    from memgraph import AsyncMemory

    async def main() -> list[str | None]:
        async with AsyncMemory(tmp_path, "s", provider="mock") as memory:
            await memory.remember(TRANSCRIPT)
            return [e.speaker async for e in memory.iter_episodes()]

    assert asyncio.run(main()) == ["Dana", "Marcus", "assistant", "Dana"]


def test_a_message_of_several_paragraphs_stays_one_turn_of_its_transcript(tmp_path: Path) -> None:
    text = "Dana: big news!\nI got the job at Lurie.\nMarcus: CONGRATS"
    with Memory(tmp_path, "s", provider="mock") as memory:
        memory.remember(text)
        turns = [(e.speaker, e.text) for e in memory.iter_episodes()]
    assert turns == [("Dana", "big news!\nI got the job at Lurie."), ("Marcus", "CONGRATS")]
