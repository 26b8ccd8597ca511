"""Synsema parity: named memories, per-agent namespaces, categories, tags, filters."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memgraph import InvalidScope, Memory
from memgraph.faces.namespaces import agent, current_source


def named(name: str = "support-agent") -> Memory:
    return Memory.named(name, provider="mock")


def test_a_memory_opened_by_name_is_shared_by_every_program_using_the_name(
    tmp_path: Path,
) -> None:
    with named() as memory:
        memory.note("refunds need a receipt", category="rule")
    state = tmp_path / "state"
    for script in ("first_program.py", "renamed_copy.py"):
        (tmp_path / script).write_text(
            "from memgraph import Memory\n"
            "with Memory.named('support-agent', provider='mock') as m:\n"
            "    print([n.content for n in m.notes(category='rule')])\n"
        )
        out = subprocess.run(
            [sys.executable, str(tmp_path / script)],
            capture_output=True,
            text=True,
            check=True,
            env={"MEMGRAPH_STATE_DIR": str(state), "PATH": "/usr/bin:/bin"},
            timeout=60,
        )
        assert "refunds need a receipt" in out.stdout


def test_without_the_env_var_named_memories_live_next_to_the_program(tmp_path: Path) -> None:
    program = tmp_path / "app" / "agent.py"
    program.parent.mkdir()
    program.write_text(
        "from memgraph import Memory\n"
        "with Memory.named('helper', provider='mock') as m:\n"
        "    m.kv.remember('runs', 1)\n"
    )
    subprocess.run(
        [sys.executable, str(program)],
        check=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert (tmp_path / "app" / ".memgraph" / "helper" / "journal.jsonl").exists()


@pytest.mark.parametrize("name", ["", "a.b", "../x", "a/b", "with space", "x" * 129, "é"])
def test_invalid_memory_names_fail_at_open_time(name: str, tmp_path: Path) -> None:
    with pytest.raises(InvalidScope, match="names must match"):
        Memory.named(name, provider="mock")
    assert not (tmp_path / "state").exists()


def test_nothing_is_created_on_disk_until_the_first_write(tmp_path: Path) -> None:
    with named() as memory:
        assert memory.notes() == []
        assert memory.kv.recall("x") is None
    assert not (tmp_path / "state").exists()


def test_writes_record_main_at_top_level_and_the_agent_name_inside_an_agent() -> None:
    with named() as memory:
        assert current_source() == "main"
        top = memory.note("top-level note", category="context")
        with agent("Writer"):
            assert current_source() == "Writer"
            inside = memory.note("draft done", category="context")
            changes = memory.remember("Alice works at Acme.")
        assert top.source == "main" and inside.source == "Writer"
        assert changes.added_observations[0].source == "Writer"
        assert changes.episode is not None and changes.episode.source == "Writer"


def test_reads_inside_an_agent_default_to_its_own_entries() -> None:
    with named() as memory:
        memory.note("note-a", category="context", tags=["ns"])
        with agent("Writer"):
            memory.note("draft done", category="context", tags=["ns"])
        with agent("Analyzer"):
            assert memory.notes() == []
            assert [n.content for n in memory.notes(from_="Writer")] == ["draft done"]
            assert len(memory.notes(from_="*")) == 2
            assert memory.notes(from_="nobody") == []
        assert {n.content for n in memory.notes()} == {"note-a", "draft done"}
        assert len(memory.notes("context", ["ns"], from_="main")) == 1


def test_graph_recall_is_namespaced_the_same_way() -> None:
    with named() as memory:
        with agent("Writer"):
            memory.remember("Alice prefers tea.")
        memory.remember("Alice prefers coffee.")
        with agent("Analyzer"):
            assert memory.recall("what does alice prefer", rerank=False) == ""
            text = memory.recall("what does alice prefer", rerank=False, from_="Writer")
            assert "prefers tea" in text and "coffee" not in text
        everything = memory.recall("what does alice prefer", rerank=False)
        assert "prefers tea" in everything and "prefers coffee" in everything


def test_agent_contexts_do_not_leak_across_threads() -> None:
    from concurrent.futures import ThreadPoolExecutor

    with agent("Writer"), ThreadPoolExecutor(1) as pool:
        assert pool.submit(current_source).result() == "main"
    assert current_source() == "main"


def test_invalid_agent_names_are_refused() -> None:
    with pytest.raises(InvalidScope), agent("bad name"):
        pass


def test_recall_newest_first_with_category_and_tags() -> None:
    with named() as memory:
        memory.note("API is slow on Mondays", category="learning", tags=["api", "performance"])
        memory.note("API timeouts at 30 s", category="learning", tags=["api"])
        memory.note("prefers dark mode", category="preference", tags=["ui"])
        notes = memory.notes("learning", ["api"])
        assert [n.content for n in notes] == ["API timeouts at 30 s", "API is slow on Mondays"]
        assert [n.content for n in memory.notes(tags=["api", "performance"], mode="all")] == [
            "API is slow on Mondays"
        ]
        assert len(memory.notes(tags=["performance", "ui"])) == 2
        assert [n.content for n in memory.notes(search="monday")] == ["API is slow on Mondays"]
        assert len(memory.notes(limit=1)) == 1
        assert memory.notes(limit=0) == []


def test_the_default_limit_is_two_hundred() -> None:
    with named() as memory:
        for i in range(205):
            memory.note(f"note {i}", category="context")
        notes = memory.notes()
        assert len(notes) == 200 and notes[0].content == "note 204"


@pytest.mark.parametrize("category", ["preferencia", "", "Rule", None])
def test_unknown_categories_are_errors_listing_the_allowed_ones(category: object) -> None:
    with named() as memory, pytest.raises(ValueError, match="preference, rule, learning"):
        memory.note("x", category=category)  # type: ignore[arg-type]


def test_extracted_facts_can_carry_a_category_and_tags() -> None:
    with named() as memory:
        memory.remember("Alice prefers dark mode.", category="preference", tags="ui")
        notes = memory.notes("preference")
        assert notes and notes[0].entity == "Alice" and notes[0].tags == ("ui",)
        with pytest.raises(ValueError, match="unknown category"):
            memory.remember("Bob likes jazz.", category="music")
        assert "likes jazz" not in memory.recall("bob", rerank=False)


def test_forgotten_notes_leave_the_filter_but_stay_in_history() -> None:
    with named() as memory:
        note = memory.note("old rule", category="rule")
        memory.expire(note.id)
        assert memory.notes("rule") == []
        assert [o.content for o in memory.history("Notes").observations] == ["old rule"]


def test_notes_are_searchable_by_recall() -> None:
    with named() as memory:
        memory.note("the staging database is at db-staging-02", category="context")
        assert "db-staging-02" in memory.recall("staging database", rerank=False)


def test_notes_never_create_an_entity_named_after_their_source() -> None:
    with named() as memory:
        memory.note("API is slow on Mondays", category="learning")
        with agent("Writer"):
            memory.note("draft done", category="context")
        memory.note("Alice prefers tea", category="preference", about="Alice")
        entities = {e.name: e.type for e in memory.entities()}
        notes = {n.content: (n.entity, n.source) for n in memory.notes(from_="*")}
    assert entities == {"Notes": "notes", "Alice": "thing"}
    assert notes == {
        "API is slow on Mondays": ("Notes", "main"),
        "draft done": ("Notes", "Writer"),
        "Alice prefers tea": ("Alice", "main"),
    }


def test_noting_the_same_note_again_returns_the_existing_one_and_stores_nothing() -> None:
    with named() as memory:
        first = memory.note("API is slow on Mondays", category="learning", tags=["api"])
        seq = memory.stats()
        again = memory.note("API is slow on Mondays", category="learning", tags=["api"])
        assert again == first and memory.stats() == seq
        other_tags = memory.note("API is slow on Mondays", category="learning", tags=["ops"])
        with agent("Writer"):
            other_source = memory.note("API is slow on Mondays", category="learning", tags=["api"])
        assert len({first.id, other_tags.id, other_source.id}) == 3
        assert memory.note("API is slow on Mondays", category="learning", tags=["api"]) == first
        memory.expire(first.id)
        renewed = memory.note("API is slow on Mondays", category="learning", tags=["api"])
        assert renewed.id != first.id
        assert len(memory.notes("learning", from_="*")) == 3
