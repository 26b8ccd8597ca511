"""What a write commits: planned against the graph it lands on, with its vectors and its time.

A write plans against a snapshot, embeds without holding the scope's lock, then
locks, catches up and commits. When another writer committed in between, the
plan is made again against the newer graph, and what that new plan needs
embedded is embedded before the commit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from memgraph.providers.mock import HashEmbedder, MockChatModel

from memgraph import Memory, NotFound, Provider
from memgraph.errors import StoreUnavailable

SCOPE = "s"


class HookedEmbedder(HashEmbedder):
    """Runs ``hook`` once, on the first call, before embedding."""

    def __init__(self) -> None:
        super().__init__()
        self.hook: Callable[[], None] | None = None
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        hook, self.hook = self.hook, None
        if hook is not None:
            hook()
        self.calls.append(list(texts))
        return super().embed(texts)


def plain(root: Path) -> Memory:
    return Memory(
        root,
        SCOPE,
        provider=Provider("plain", MockChatModel(), HashEmbedder()),
        config={"lockTimeout": 1.0},
    )


def test_a_write_overtaken_by_another_writer_is_planned_again_and_embedded_as_replanned(
    tmp_path: Path,
) -> None:
    embedder = HookedEmbedder()
    with Memory(tmp_path, SCOPE, provider=Provider("hooked", MockChatModel(), embedder)) as mine:
        mine.stats()  # opened: the draft below is planned against the empty scope

        def another_writer() -> None:  # lands between the draft and its commit (unlocked)
            with plain(tmp_path) as other:
                other.add_facts([("Alice", "robot", ["lives in Oslo"])])

        embedder.hook = another_writer
        mine.add_facts([("Alice", "person", ["works at Acme"])])

        # Planned again: Alice resolves to the entity the other writer created
        # (keeping its type) instead of a second Alice with a reused id.
        (alice,) = mine.entities()
        assert (alice.name, alice.type) == ("Alice", "robot")
        assert sorted(o.content for o in alice.current_observations) == [
            "lives in Oslo",
            "works at Acme",
        ]
        # The new plan's fact text names the type it now has: embedded before the commit.
        assert embedder.calls == [
            ["Alice (person): works at Acme"],
            ["Alice (robot): works at Acme"],
        ]
        assert mine.stats()["vectors"] == mine.stats()["current_observations"] == 2
        served = sorted((e.name, o.content) for e in mine.entities() for o in e.observations)
    with plain(tmp_path) as fresh:
        assert (
            sorted((e.name, o.content) for e in fresh.entities() for o in e.observations) == served
        )


def test_a_journal_line_records_when_its_commit_was_made(tmp_path: Path) -> None:
    before = datetime.now(timezone.utc)
    with plain(tmp_path) as memory:
        memory.add_facts([("Alice", "person", ["works at Acme"])])
    after = datetime.now(timezone.utc)
    (line,) = (tmp_path / SCOPE / "journal.jsonl").read_bytes().splitlines()
    record = orjson.loads(line)
    assert record["seq"] == 1
    made = datetime.fromisoformat(record["at"].replace("Z", "+00:00"))
    assert before.replace(microsecond=before.microsecond // 1000 * 1000) <= made <= after


def journal_seqs(root: Path) -> list[int]:
    lines = (root / SCOPE / "journal.jsonl").read_bytes().splitlines()
    return [orjson.loads(line)["seq"] for line in lines]


def test_a_purge_is_committed_as_the_next_change_and_the_next_write_follows_it(
    tmp_path: Path,
) -> None:
    with plain(tmp_path) as memory:
        memory.remember("Alice works at Acme.")
        memory.remember("Bob likes jazz.")
        assert journal_seqs(tmp_path) == [1, 2]
        memory.purge(containing="jazz")  # rewrites the scope as change 3
        memory.remember("Carol works at Initech.")
        assert journal_seqs(tmp_path) == [4]


def test_a_purge_keeps_the_vectors_of_what_it_keeps_and_embeds_nothing_again(
    tmp_path: Path,
) -> None:
    embedder = HookedEmbedder()
    provider = Provider("counted", MockChatModel(), embedder)
    with Memory(tmp_path, SCOPE, provider=provider) as memory:
        memory.remember("Alice works at Acme.")
        memory.remember("Bob likes jazz.")
        assert memory.stats()["vectors"] == 4  # two facts and the two texts they came from
        embedded = len(embedder.calls)
        memory.purge(containing="jazz")
        kept = memory.stats()
        assert (kept["current_observations"], kept["episodes"]) == (1, 1)
        assert kept["vectors"] == 2  # Alice's fact and its text; Bob's are erased
        assert len(embedder.calls) == embedded
    with Memory(tmp_path, SCOPE, provider=provider) as reopened:
        assert reopened.stats() == kept
        assert len(embedder.calls) == embedded


def test_a_purge_redacts_its_text_in_the_summary_and_keeps_the_rest(tmp_path: Path) -> None:
    with plain(tmp_path) as memory:
        memory.remember("Alice's passport number is XK-99871.")
        memory.save_summary({"summary": "Alice gave her passport xk-99871 to Bob.", "n": 2})
        memory.purge(containing="XK-99871")
        assert memory.summary() == {"summary": "Alice gave her passport [purged] to Bob.", "n": 2}


def test_a_purge_by_text_and_entity_erases_both(tmp_path: Path) -> None:
    with plain(tmp_path) as memory:
        memory.add_facts(
            [("Alice", "person", ["works at Acme"]), ("Bob", "person", ["likes jazz"])]
        )
        memory.add_facts([("Carol", "person", ["likes tea"])])
        counts = memory.purge(containing="jazz", entity="Alice")
        assert (counts["entities"], counts["observations"]) == (1, 2)
        assert sorted(e.name for e in memory.entities()) == ["Bob", "Carol"]


def test_a_purge_needs_text_or_an_entity_and_an_unknown_entity_is_not_found(
    tmp_path: Path,
) -> None:
    with plain(tmp_path) as memory:
        memory.remember("Alice works at Acme.")
        with pytest.raises(ValueError, match="purge needs `containing` text or an `entity` name"):
            memory.purge()
        with pytest.raises(NotFound, match="no entity named 'Zed' in scope 's'"):
            memory.purge(entity="Zed")
        assert sorted(e.name for e in memory.entities()) == ["Acme", "Alice"]


def test_a_checkpoint_failing_after_a_commit_is_logged_naming_the_scope_and_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with plain(tmp_path) as memory:
        memory.remember("Alice works at Acme.")

        def full_disk(*args: object, **kwargs: object) -> bool:
            raise StoreUnavailable("No space left on device (injected)")

        monkeypatch.setattr(memory.store, "checkpoint_due", lambda: True)
        monkeypatch.setattr(memory.store, "checkpoint", full_disk)
        memory.remember("Bob likes jazz.")  # stored: the checkpoint is retried later
    assert (
        "memgraph: checkpoint of scope 's' failed, retried later: "
        "No space left on device (injected)"
    ) in caplog.messages


def reorder_episodes(scope_dir: Path) -> None:
    """Rewrite ``episodes.jsonl`` with its records in reverse order, each record intact:
    what a restore or another tool may leave, and what makes the byte offsets in
    ``episodes.idx`` (and in an open handle's copy of it) stale."""
    path = scope_dir / "episodes.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    assert len(lines) > 1 and len({len(line) for line in lines}) > 1
    path.write_bytes(b"".join(reversed(lines)))


def test_texts_checkpointed_after_a_stale_episode_index_is_met_are_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A read that meets a stale location reads every stored text once and keeps them;
    # a checkpoint then adds the texts it moves out of the journal to what is kept, so
    # that a later stale location of one of those is answered from there: not "no such
    # text", and without reading every stored text again.
    texts = ["Alice works at Acme.", "Bob moved to Lisbon last spring."]
    with plain(tmp_path) as memory:
        for text in texts:
            memory.remember(text)
        memory.checkpoint()
    reorder_episodes(tmp_path / SCOPE)
    with plain(tmp_path) as memory:
        ids = {e.text: e.id for e in memory.iter_episodes()}
        read_all = memory.store.episodes
        full_reads = 0

        def counted() -> Iterator[dict[str, Any]]:
            nonlocal full_reads
            full_reads += 1
            return read_all()

        monkeypatch.setattr(memory.store, "episodes", counted)
        for text in texts:
            found = memory.episode(ids[text])
            assert found is not None and found.text == text
        assert full_reads == 1, "the stale locations were met: every stored text read once"
        carol = "Carol teaches chemistry in Porto."
        memory.remember(carol)
        memory.checkpoint()  # Carol's text leaves the journal for episodes.jsonl
        ids = {e.text: e.id for e in memory.iter_episodes()}
        assert list(ids) == [*texts, carol]
        reorder_episodes(tmp_path / SCOPE)  # under the open handle: every location is stale
        full_reads = 0
        for text, episode_id in ids.items():
            found = memory.episode(episode_id)
            assert found is not None and found.text == text
        assert full_reads == 0, "the texts read once, and Carol's from its checkpoint, are kept"
        hits = memory.search("who teaches chemistry in porto", episodes=True)
        assert any(h.episode is not None and h.episode.text == carol for h in hits)


def test_a_stale_episode_index_whose_mark_falls_inside_a_record_is_rebuilt(
    tmp_path: Path,
) -> None:
    # The saved index says "read on from byte N"; after a restore the file holds the
    # same texts in another order, and byte N is in the middle of a record. That is
    # the derived file's fault, not damage: the primary file wins and the index is
    # rebuilt from it.
    scope = tmp_path / SCOPE
    with plain(tmp_path) as memory:
        memory.remember("Alice works at Acme.")
        memory.remember("Bob moved to Lisbon last spring, and he loves it there.")
        memory.checkpoint()
    old_index = (scope / "episodes.idx").read_bytes()
    with plain(tmp_path) as memory:
        memory.remember("Carol teaches chemistry in Porto.")
        memory.checkpoint()
    reorder_episodes(scope)
    (scope / "episodes.idx").write_bytes(old_index)
    with plain(tmp_path) as memory:
        hits = memory.search("who teaches chemistry in porto", episodes=True)
        assert any(h.episode is not None and "Carol" in h.episode.text for h in hits)
        assert memory.stats()["episodes"] == 3
