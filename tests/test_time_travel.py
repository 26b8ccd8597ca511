"""Time travel on the graph: history and as_of views."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgraph import Memory, NotFound


def test_as_of_sees_only_what_was_valid_then(tmp_path: Path) -> None:
    with Memory(tmp_path / "mem", scope="t", provider="mock") as memory:
        memory.remember("Alice works at Acme.", at="2020-01-01T00:00:00Z")
        memory.remember("Alice lives in Paris.", at="2020-06-01T00:00:00Z")
        memory.remember("Alice works at Globex.", at="2022-01-01T00:00:00Z")
        then = memory.as_of("2021-01-01T00:00:00Z")
        text = then.recall("where does alice work")
        assert "works at Acme" in text and "Globex" not in text
        assert "[1 January 2020] works at Acme" in text  # said then, and printed once
        assert "works_at" not in text
        assert {o.content for o in then.entity("Alice").observations} == {
            "works at Acme",
            "lives in Paris",
        }
        hits = then.search("alice employer acme globex")
        assert {h.observation.content for h in hits if h.observation} >= {"works at Acme"}
        assert all(h.observation is None or "Globex" not in h.observation.content for h in hits)
        before = memory.as_of("2019-01-01T00:00:00Z")
        assert before.recall("alice") == ""
        with pytest.raises(NotFound):
            before.entity("Alice")
        now = memory.recall("where does alice work", rerank=False)
        assert "works at Globex" in now and "works at Acme" not in now


def test_history_shows_every_version_with_validity(tmp_path: Path) -> None:
    with Memory(tmp_path / "mem", scope="t", provider="mock") as memory:
        memory.remember("Alice works at Acme.", at="2020-01-01T00:00:00Z")
        memory.remember("Alice works at Globex.", at="2022-01-01T00:00:00Z")
        history = memory.history("Alice")
        spans = [
            (o.content, o.valid_from[:10], (o.valid_to or "")[:10]) for o in history.observations
        ]
        assert spans == [
            ("works at Acme", "2020-01-01", "2022-01-01"),
            ("works at Globex", "2022-01-01", ""),
        ]
        assert [(r.to_name, r.current) for r in history.relations] == [
            ("Acme", False),
            ("Globex", True),
        ]


def test_as_of_rejects_non_timestamps(tmp_path: Path) -> None:
    with (
        Memory(tmp_path / "mem", scope="t", provider="mock") as memory,
        pytest.raises(ValueError, match="ISO-8601"),
    ):
        memory.as_of("yesterday")


def test_whole_memory_text_lists_every_current_fact_and_key(tmp_path: Path) -> None:
    with Memory(tmp_path / "mem", scope="t", provider="mock") as memory:
        assert memory.known_information() == ""
        memory.remember("Alice works at Acme. Bob likes jazz.")
        memory.kv.remember("favorite_color", "blue")
        text = memory.known_information()
        assert "Alice (person):" in text and "likes jazz" in text
        assert 'favorite_color = "blue"' in text


def test_summary_gives_an_overview_of_everything(tmp_path: Path) -> None:
    with Memory(tmp_path / "mem", scope="t", provider="mock") as memory:
        memory.remember("Alice works at Acme.")
        memory.note("deploys on Fridays are banned", category="rule")
        memory.add_rule("max_discount", "must", "discount <= 0.2", "pricing")
        memory.create_progress("import", ["a", "b"])
        memory.complete_step("import", "a")
        memory.kv.remember("theme", "dark")
        summary = memory.memory_summary()
        assert summary.entities == 3 and summary.episodes == 1
        assert summary.by_category == {"uncategorized": 1, "rule": 1}
        assert summary.rules == {"must": 1}
        assert summary.progress == {"import": "1/2 done"}
        assert summary.keys == ["theme"]
        assert "progress boards: import: 1/2 done" in str(summary)
