"""Sense parity: versioned, append-only key/value memory."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from memgraph import Memory


def open_memory(tmp_path: Path) -> Memory:
    return Memory(tmp_path / "mem", scope="kv", provider="mock")


def test_remember_recall_forget_keys(tmp_path: Path) -> None:
    with open_memory(tmp_path) as memory:
        kv = memory.kv
        kv.remember("topic", "sense keywords")
        assert kv.recall("topic") == "sense keywords"
        assert kv.recall("missing") is None
        assert kv.keys() == ["topic"]
        kv.forget("topic")
        assert kv.keys() == [] and kv.recall("topic") is None
        kv.forget("never-there")  # a no-op, not an error
        assert kv.history("never-there") == []


def test_every_version_is_kept_and_as_of_travels_back(tmp_path: Path) -> None:
    with open_memory(tmp_path) as memory:
        kv = memory.kv
        assert kv.remember("name", "ada") == 1
        assert kv.remember("name", "ada lovelace") == 2
        kv.forget("name")
        kv.remember("name", {"first": "Ada", "langs": ["en", "fr"], "age": 36, "ok": True})
        history = kv.history("name")
        assert [(v.version, v.deleted) for v in history] == [
            (1, False),
            (2, False),
            (3, True),
            (4, False),
        ]
        assert "forgotten" in str(history[2]) and "v1" in str(history[0])
        assert kv.as_of("name", 1) == "ada"
        assert kv.as_of("name", 2) == "ada lovelace"
        assert kv.as_of("name", 3) is None
        assert kv.as_of("name", 0) is None
        assert kv.as_of("name", 99) == kv.recall("name")
        assert kv.recall("name")["langs"] == ["en", "fr"]


def test_the_log_is_append_only_on_disk(tmp_path: Path) -> None:
    with open_memory(tmp_path) as memory:
        memory.kv.remember("k", 1)
        memory.kv.remember("k", 2)
        memory.kv.forget("k")
    lines = (tmp_path / "mem" / "kv" / "journal.jsonl").read_bytes().splitlines()
    ops = [op for line in lines for op in orjson.loads(line)["ops"]]
    assert [(op["op"], op.get("value"), op.get("deleted", False)) for op in ops] == [
        ("kv", 1, False),
        ("kv", 2, False),
        ("kv", None, True),
    ]


def test_versions_survive_restart_and_checkpoint(tmp_path: Path) -> None:
    with open_memory(tmp_path) as memory:
        memory.kv.remember("k", "a")
        memory.checkpoint()
        memory.kv.remember("k", "b")
    with open_memory(tmp_path) as memory:
        assert [v.value for v in memory.kv.history("k")] == ["a", "b"]


@pytest.mark.parametrize("value", [object(), {1, 2}, b"bytes", {"nested": object()}])
def test_values_that_are_not_json_raise_type_error_naming_the_type(
    tmp_path: Path, value: object
) -> None:
    with open_memory(tmp_path) as memory:
        with pytest.raises(TypeError, match=type(value).__name__):
            memory.kv.remember("k", value)
        assert memory.kv.history("k") == []


def test_keys_must_be_strings(tmp_path: Path) -> None:
    with open_memory(tmp_path) as memory, pytest.raises(TypeError, match="keys must be strings"):
        memory.kv.remember(42, "x")  # type: ignore[arg-type]


def test_a_session_only_memory_has_the_same_api_and_writes_nothing(tmp_path: Path) -> None:
    with Memory(tmp_path / "mem", scope="s", provider="mock", store="memory") as memory:
        memory.kv.remember("x", 1)
        memory.kv.remember("x", 2)
        assert memory.kv.as_of("x", 1) == 1
        memory.remember("Alice likes tea.")
        assert "likes tea" in memory.recall("alice", rerank=False)
    assert not (tmp_path / "mem").exists()
    with Memory(tmp_path / "mem", scope="s", provider="mock", store="memory") as memory:
        assert memory.kv.recall("x") is None


def test_two_threads_writing_one_memory_lose_nothing(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with open_memory(tmp_path) as memory:

        def write(worker: int) -> None:
            for i in range(25):
                memory.kv.remember(f"w{worker}", i)
                memory.remember(f"Person{worker}x{i} likes topic{i}.")

        with ThreadPoolExecutor(4) as pool:
            list(pool.map(write, range(4)))
        assert all(len(memory.kv.history(f"w{w}")) == 25 for w in range(4))
        assert len(memory.entities()) >= 100
    with open_memory(tmp_path) as memory:
        assert len(memory.entities()) >= 100  # reloaded from disk
        ids = [o.id for e in memory.entities() for o in e.observations]
        assert len(ids) == len(set(ids))


def test_many_keys_are_one_write_all_or_nothing_and_read_back_by_prefix(tmp_path: Path) -> None:
    with open_memory(tmp_path) as memory:
        kv = memory.kv
        assert kv.remember_many({"chat:1": "hi", "chat:2": "hello", "other": 1}) == {
            "chat:1": 1,
            "chat:2": 1,
            "other": 1,
        }
        journal = (tmp_path / "mem" / "kv" / "journal.jsonl").read_text().splitlines()
        assert len(journal) == 1  # one commit, one fsync
        with pytest.raises(TypeError, match="JSON-serializable"):
            kv.remember_many({"chat:3": "fine", "chat:4": object()})
        assert kv.recall("chat:3") is None  # nothing of a refused write is stored
        assert kv.forget_many(["chat:1", "chat:1", "never-there"]) == 1
        assert kv.forget_many([]) == 0
        histories = kv.histories("chat:")
        assert list(histories) == ["chat:1", "chat:2"]
        assert [(v.version, v.value, v.deleted) for v in histories["chat:1"]] == [
            (1, "hi", False),
            (2, None, True),
        ]
        assert kv.keys() == ["chat:2", "other"]
        assert len((tmp_path / "mem" / "kv" / "journal.jsonl").read_text().splitlines()) == 2
