"""A text whose extraction failed is kept, findable, and extracted later."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from memgraph.providers.mock import HashEmbedder, ScriptedChatModel

from memgraph import Memory, Provider, register_provider
from memgraph.cli import cli


def broken(_settings: object = None) -> Provider:
    """A model whose every extraction reply is unusable (and its repair too)."""
    replies = ["not json"] * 20
    return Provider("broken", ScriptedChatModel({"extract": replies}), HashEmbedder())


register_provider("broken-extractor", broken)


def test_an_unusable_reply_keeps_the_text_and_reextract_draws_its_facts_later(
    tmp_path: Path,
) -> None:
    with Memory(tmp_path, "alice", provider=broken()) as memory:
        changes = memory.remember("Alice works at Acme.", speaker="Alice")
        assert not changes and changes.unusable_reply
        episode = changes.episode
        assert episode is not None and not episode.extracted and episode.speaker == "Alice"
    with Memory(tmp_path, "alice", provider="mock") as memory:
        assert [e.text for e in memory.iter_episodes() if not e.extracted] == [
            "Alice works at Acme."
        ]
        [redone] = memory.reextract()
        assert [o.content for o in redone.added_observations] == ["works at Acme"]
        assert all(o.episode_id == episode.id for o in redone.added_observations)
        assert memory.reextract() == []  # never twice
        assert all(e.extracted for e in memory.iter_episodes())
        assert "works at Acme" in memory.recall("Where does Alice work?")
    with Memory(tmp_path, "alice", provider="mock") as memory:  # durable, and after a reopen
        assert memory.reextract() == []
        assert [o.content for o in memory.entity("Alice").observations] == ["works at Acme"]


def test_the_cli_says_the_reply_was_unusable_and_exits_3_then_reextract_succeeds(
    tmp_path: Path,
) -> None:
    runner = CliRunner()
    base = ["--dir", str(tmp_path), "--scope", "alice"]
    stored = runner.invoke(
        cli, [*base, "--provider", "broken-extractor", "remember", "Alice works at Acme."]
    )
    assert stored.exit_code == 3
    assert "model reply unusable" in stored.stderr and "memgraph reextract" in stored.stderr
    found = runner.invoke(cli, [*base, "--provider", "mock", "search", "acme"])
    assert "Alice works at Acme." in found.stdout
    still = runner.invoke(cli, [*base, "--provider", "broken-extractor", "reextract"])
    assert still.exit_code == 3 and "re-extracted 0 of 1" in still.stdout
    redone = runner.invoke(cli, [*base, "--provider", "mock", "reextract"])
    assert redone.exit_code == 0, redone.output
    assert "re-extracted 1 of 1" in redone.stdout and "works at Acme" in redone.stdout


def test_a_batch_text_whose_reply_is_unusable_is_kept_unextracted_for_reextract(
    tmp_path: Path,
) -> None:
    with Memory(tmp_path, "alice", provider=broken()) as memory:
        [changes] = memory.remember_many(["Alice works at Acme."])
        assert not changes and changes.unusable_reply
    with Memory(tmp_path, "alice", provider="mock") as memory:
        assert [(e.text, e.extracted) for e in memory.iter_episodes()] == [
            ("Alice works at Acme.", False)
        ]
        [redone] = memory.reextract()
        assert [o.content for o in redone.added_observations] == ["works at Acme"]
        assert all(e.extracted for e in memory.iter_episodes())
