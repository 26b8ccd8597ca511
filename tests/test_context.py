"""Scopes, the config stack, memory off, and isolation between tasks and threads."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import orjson
import pytest

import memgraph
from memgraph import (
    ChangeSet,
    ConfigError,
    ContextThreadPoolExecutor,
    InvalidScope,
    Memory,
    MemoryConfig,
    close_all,
    disable_memory,
    enable_memory,
    forget,
    get_memory_id,
    is_memory_active,
    memory,
    recall,
    remember,
    set_memory_id,
    spawn,
)
from memgraph.conversation.cache import open_memory
from memgraph.conversation.context import current_config, current_target
from tests.memory_state import fresh_memory_state  # noqa: F401


def write_agency_json(directory: Path, block: dict[str, object] | None) -> None:
    document: dict[str, object] = {"model": "mock"}
    if block is not None:
        document["memory"] = block
    (directory / "agency.json").write_bytes(orjson.dumps(document))


def facts(directory: Path, scope: str) -> str:
    with Memory(directory, scope, provider="mock") as opened:
        return opened.recall("alice", rerank=False)


# --------------------------------------------------------------------- scope
def test_the_memory_id_is_default_until_set() -> None:
    assert get_memory_id() == "default"
    set_memory_id("alice")
    assert get_memory_id() == "alice"


def test_an_invalid_memory_id_is_refused() -> None:
    with pytest.raises(InvalidScope):
        set_memory_id("../etc")
    assert get_memory_id() == "default"


# ---------------------------------------------------------------- memory off
def test_memory_off_makes_every_call_a_silent_no_op_that_creates_nothing(tmp_path: Path) -> None:
    assert not is_memory_active()
    assert remember("Alice works at Acme.") == ChangeSet()
    assert recall("alice") == ""
    assert forget("alice") == ChangeSet()
    assert memgraph.llm("hello", memory=True).text == "Hello! How can I help?"
    assert list(tmp_path.iterdir()) == []


def test_an_agency_json_without_a_memory_block_leaves_memory_off(tmp_path: Path) -> None:
    write_agency_json(tmp_path, None)
    assert not is_memory_active()


# ------------------------------------------------------------- config stack
def test_agency_json_turns_memory_on_and_is_read_when_called(tmp_path: Path) -> None:
    assert not is_memory_active()
    write_agency_json(tmp_path, {"dir": "mem"})
    assert is_memory_active()
    remember("Alice works at Acme.", approve=True)
    assert "works at Acme" in facts(tmp_path / "mem", "default")


def test_an_agency_json_memory_block_without_dir_uses_dot_memgraph(tmp_path: Path) -> None:
    write_agency_json(tmp_path, {"autoExtract": {"interval": 3}})
    target = current_target()
    assert target is not None and target.dir == tmp_path.resolve() / ".memgraph"


def test_memgraph_dir_turns_memory_on_and_overrides_agency_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_agency_json(tmp_path, {"dir": "from-json", "autoExtract": {"interval": 3}})
    monkeypatch.setenv("MEMGRAPH_DIR", str(tmp_path / "from-env"))
    config = current_config()
    assert config is not None
    assert config.dir == tmp_path / "from-env"
    assert config.auto_extract.interval == 3


def test_code_wins_over_agency_json_and_keeps_its_other_fields(tmp_path: Path) -> None:
    write_agency_json(tmp_path, {"dir": "base", "compaction": {"threshold": 7}})
    assert enable_memory({"dir": "mine"}, approve=True)
    config = current_config()
    assert config is not None
    assert config.dir == tmp_path / "mine"
    assert config.compaction.threshold == 7
    remember("Alice works at Acme.", approve=True)
    assert (tmp_path / "mine" / "default").is_dir()
    assert not (tmp_path / "base").exists()


def test_enabling_the_same_dir_again_is_a_no_op(tmp_path: Path) -> None:
    assert enable_memory(dir="mem", approve=True)
    assert not enable_memory(dir=str(tmp_path / "mem"))  # no approval needed: nothing to do
    assert disable_memory(approve=True)
    assert not is_memory_active()


def test_another_dir_switches_stores_and_disable_goes_back(tmp_path: Path) -> None:
    enable_memory(dir="a", approve=True)
    remember("Alice works at Acme.", approve=True)
    enable_memory(dir="b", approve=True)
    assert recall("alice", approve=True, rerank=False) == ""
    disable_memory(approve=True)
    assert "Acme" in recall("alice", approve=True, rerank=False)


def test_disable_memory_pops_the_agency_json_config_too(tmp_path: Path) -> None:
    write_agency_json(tmp_path, {"dir": "mem"})
    assert disable_memory(approve=True)
    assert not is_memory_active()
    assert not disable_memory(approve=True)  # nothing left to pop
    assert enable_memory(approve=True)  # no arguments: agency.json again
    assert is_memory_active()


def test_the_memory_block_restores_what_was_underneath_also_on_an_error(tmp_path: Path) -> None:
    enable_memory(dir="outer", approve=True)
    with memory(dir="inner", approve=True) as block:
        assert block.changed
        assert current_config() == MemoryConfig(dir=tmp_path / "inner")
        disable_memory(approve=True)  # even popping below the block is undone
    assert current_config() == MemoryConfig(dir=tmp_path / "outer")
    with pytest.raises(RuntimeError), memory(dir="inner", approve=True):
        raise RuntimeError("boom")
    assert current_config() == MemoryConfig(dir=tmp_path / "outer")


def test_config_dicts_objects_paths_and_keyword_fields_are_all_accepted(tmp_path: Path) -> None:
    with memory({"dir": "a", "compaction": {"trigger": "token"}}, approve=True):
        config = current_config()
        assert config is not None and config.compaction.trigger == "token"
    with memory(MemoryConfig(dir=tmp_path / "b"), approve=True):
        assert current_config() == MemoryConfig(dir=tmp_path / "b")
    with memory(tmp_path / "c", approve=True, autoExtract={"interval": 2}):
        config = current_config()
        assert config is not None and config.dir == tmp_path / "c"
        assert config.auto_extract.interval == 2


def test_an_unknown_config_field_fails_where_it_was_written() -> None:
    with pytest.raises(ConfigError, match=r"unknown key memory\.colour"):
        enable_memory(dir="mem", colour="blue")
    assert not is_memory_active()


def test_a_relative_dir_resolves_against_the_working_directory_when_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    enable_memory(dir="mem", approve=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    target = current_target()
    assert target is not None and target.dir == tmp_path.resolve() / "mem"


def test_switching_stores_keeps_the_scope(tmp_path: Path) -> None:
    set_memory_id("alice")
    with memory(dir="side", approve=True):
        assert get_memory_id() == "alice"
        remember("Alice works at Acme.", approve=True)
    assert (tmp_path / "side" / "alice").is_dir()


def test_scopes_are_isolated_from_each_other(tmp_path: Path) -> None:
    enable_memory(dir="mem", approve=True)
    set_memory_id("alice")
    remember("Alice works at Acme.", approve=True)
    set_memory_id("bob")
    assert recall("where does alice work", approve=True, rerank=False) == ""
    set_memory_id("alice")
    assert "Acme" in recall("where does alice work", approve=True, rerank=False)


# ---------------------------------------------------------------- isolation
def test_asyncio_tasks_inherit_the_context_and_never_leak_into_siblings(tmp_path: Path) -> None:
    people = {"alice": "Acme", "bob": "Globex", "carol": "Initech"}

    async def branch(name: str, company: str, ready: asyncio.Event, go: asyncio.Event) -> str:
        assert get_memory_id() == "parent"  # inherited at fork time
        set_memory_id(name)
        with memory(dir=f"mem-{name}", approve=True):
            ready.set()
            await go.wait()  # every branch is inside its block now
            assert get_memory_id() == name
            target = current_target()
            assert target is not None and target.dir.name == f"mem-{name}"
            remember(f"{name.title()} works at {company}.", approve=True)
            return recall(f"where does {name} work", approve=True, rerank=False)

    async def main() -> list[str]:
        set_memory_id("parent")
        go = asyncio.Event()
        readies = [asyncio.Event() for _ in people]
        tasks = [
            asyncio.create_task(branch(name, company, ready, go))
            for (name, company), ready in zip(people.items(), readies, strict=True)
        ]
        for ready in readies:
            await ready.wait()
        go.set()
        results = await asyncio.gather(*tasks)
        assert get_memory_id() == "parent"
        assert not is_memory_active()
        return results

    results = asyncio.run(main())
    for (name, company), text in zip(people.items(), results, strict=True):
        assert company in text
        assert all(other not in text for other in people.values() if other != company)
        assert (tmp_path / f"mem-{name}" / name).is_dir()
    assert get_memory_id() == "default"


def test_spawned_threads_inherit_the_context_and_never_leak(tmp_path: Path) -> None:
    set_memory_id("parent")
    enable_memory(dir="shared", approve=True)
    barrier = threading.Barrier(2)

    def branch(name: str) -> tuple[str, str]:
        inherited = get_memory_id()
        set_memory_id(name)
        barrier.wait()  # both threads have set their scope
        with memory(dir=f"own-{name}", approve=True):
            barrier.wait()
            target = current_target()
            assert target is not None
            return inherited, f"{get_memory_id()}@{target.dir.name}"

    futures = [spawn(branch, "a"), spawn(branch, "b")]
    assert [f.result(timeout=30) for f in futures] == [("parent", "a@own-a"), ("parent", "b@own-b")]
    target = current_target()
    assert get_memory_id() == "parent" and target is not None and target.dir.name == "shared"


def test_the_context_executor_runs_each_task_in_a_copy_of_the_context() -> None:
    set_memory_id("parent")

    def task(name: str) -> str:
        seen = get_memory_id()
        set_memory_id(name)
        return seen

    with ContextThreadPoolExecutor(max_workers=2) as pool:
        assert list(pool.map(task, ["a", "b", "c"])) == ["parent"] * 3
    assert get_memory_id() == "parent"


def test_branches_pointing_at_one_directory_share_the_files(tmp_path: Path) -> None:
    enable_memory(dir="mem", approve=True)
    set_memory_id("team")
    barrier = threading.Barrier(2)

    def write(text: str) -> None:
        barrier.wait()
        remember(text, approve=True)

    futures = [spawn(write, "Alice works at Acme."), spawn(write, "Bob lives in Paris.")]
    for future in futures:
        future.result(timeout=60)
    text = recall("alice bob", approve=True, rerank=False)
    assert "Acme" in text and "Paris" in text


def test_the_cache_reuses_one_memory_per_target_until_closed(tmp_path: Path) -> None:
    enable_memory(dir="mem", approve=True)
    target = current_target()
    assert target is not None
    first = open_memory(target)
    assert open_memory(target) is first
    close_all()
    assert open_memory(target) is not first
    assert os.path.isdir(tmp_path) and not (tmp_path / "mem").exists()  # opening creates nothing
