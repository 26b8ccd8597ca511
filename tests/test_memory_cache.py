"""A process keeps the memories it serves within a budget (``store.cacheMB``).

:class:`memgraph.MemoryCache` closes the least recently used memories once
their estimated size passes the budget; a closed scope reopens on its next use
and sees every write made meanwhile, by this process or another.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memgraph import (
    ConfigError,
    Memory,
    MemoryCache,
    MemoryConfig,
    enable_memory,
    recall,
    set_memory_id,
)
from memgraph import remember as remember_text
from memgraph.conversation import cache as conversation_cache
from tests.memory_state import fresh_memory_state  # noqa: F401  (autouse fixture)
from tests.postgres_server import new_scope

MB = 1 << 20


def filled(root: Path, scope: str, facts: int = 20) -> None:
    with Memory(root, scope, provider="mock", store="files") as memory:
        memory.remember_many([f"Person{n} works at Company{n}." for n in range(facts)])


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for scope in ("a", "b", "c"):
        filled(tmp_path, scope)
    return tmp_path


@pytest.fixture
def opened(root: Path) -> Iterator[MemoryCache[str]]:
    cache: MemoryCache[str] = MemoryCache()
    yield cache
    cache.close_all()


def opener(root: Path, scope: str) -> Callable[[], Memory]:
    return lambda: Memory(root, scope, provider="mock", store="files")


def use(cache: MemoryCache[str], root: Path, scope: str) -> Memory:
    memory = cache.get(scope, opener(root, scope))
    assert "Company3" in memory.recall("where does person3 work", rerank=False)
    return memory


def test_a_memory_holds_nothing_until_used_and_more_after_each_call(root: Path) -> None:
    with Memory(root, "a", provider="mock", store="files") as memory:
        assert memory.resident_bytes() == 0
        memory.recall("where does person3 work", rerank=False)
        loaded = memory.resident_bytes()
        assert loaded > 0
        memory.remember_many([f"Person{n} lives in City{n}." for n in range(30)])
        assert memory.resident_bytes() > loaded


def test_the_least_recently_used_memories_are_closed_past_the_budget(
    root: Path, opened: MemoryCache[str]
) -> None:
    first = use(opened, root, "a")
    one = first.resident_bytes()
    opened.budget_mb = 2.5 * one / MB  # room for two of these memories
    use(opened, root, "b")
    use(opened, root, "a")  # a is now the most recently used
    use(opened, root, "c")
    use(opened, root, "c")  # measured after its first use: b goes
    assert "b" not in opened and "a" in opened and "c" in opened
    assert opened.resident_bytes <= opened.budget_mb * MB
    assert opened.closed == 1


def test_the_memory_being_handed_out_is_kept_even_when_alone_over_budget(
    root: Path, opened: MemoryCache[str]
) -> None:
    opened.budget_mb = 0.001
    use(opened, root, "a")
    use(opened, root, "b")
    assert list(("a" in opened, "b" in opened)) == [False, True]
    memory = use(opened, root, "b")
    assert "b" in opened and memory is opened.get("b", opener(root, "b"))


def test_a_closed_memory_reopens_with_the_writes_made_meanwhile(
    root: Path, opened: MemoryCache[str]
) -> None:
    opened.budget_mb = 0.001
    before = use(opened, root, "a")
    use(opened, root, "b")  # closes a
    assert "a" not in opened
    filled(root, "a", facts=25)  # another process writes to a
    after = use(opened, root, "a")
    assert after is not before and opened.opened == 3
    assert "Company24" in after.recall("where does person24 work", rerank=False)


def test_a_memory_still_in_use_when_it_is_closed_keeps_working(
    root: Path, opened: MemoryCache[str]
) -> None:
    opened.budget_mb = 0.001
    held = use(opened, root, "a")
    use(opened, root, "b")
    assert "a" not in opened
    held.remember("Person99 works at Company99.")
    assert "Company99" in held.recall("where does person99 work", rerank=False)


def test_the_budget_is_store_cache_mb_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = MemoryConfig.from_dict({"store": {"url": "files", "cacheMB": 64}})
    assert (config.store, config.cache_mb) == ("files", 64.0)
    assert MemoryConfig.from_dict({"store": "files"}).cache_mb == 512.0
    assert conversation_cache.cache_budget(config) == 64.0
    monkeypatch.setenv("MEMGRAPH_CACHE_MB", "8")
    assert conversation_cache.cache_budget(config) == 8.0
    monkeypatch.setenv("MEMGRAPH_CACHE_MB", "lots")
    with pytest.raises(ConfigError, match="MEMGRAPH_CACHE_MB"):
        conversation_cache.cache_budget(config)


@pytest.mark.parametrize(
    ("block", "named"),
    [
        ({"store": {"cacheMb": 1}}, r"memory\.store\.cacheMb"),
        ({"store": {"cacheMB": "big"}}, r"memory\.store\.cacheMB"),
        ({"store": {"cacheMB": 0}}, r"memory\.store\.cacheMB must be positive"),
        ({"cache_mb": 1}, r"unknown key memory\.cache_mb"),
    ],
)
def test_a_bad_cache_budget_names_the_key(block: dict[str, object], named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        MemoryConfig.from_dict(block)


def test_the_module_level_api_keeps_its_memories_within_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMGRAPH_CACHE_MB", "0.001")
    enable_memory(dir="mem", approve=True)
    for user in ("Ann", "Bob", "Cid"):
        set_memory_id(user.lower())
        remember_text(f"{user} works at Acme.", approve=True)
    assert len(conversation_cache._memories) == 1
    set_memory_id("ann")
    assert "Acme" in recall("where does ann work", approve=True, rerank=False)


@pytest.mark.postgres
def test_on_postgres_a_reopened_scope_sees_another_servers_writes(postgres_dsn: str) -> None:
    scope = new_scope()
    first: MemoryCache[str] = MemoryCache(budget_mb=0.001)
    second: MemoryCache[str] = MemoryCache(budget_mb=0.001)

    def open_on(cache: MemoryCache[str], name: str) -> Memory:
        return cache.get(name, lambda: Memory(scope=name, provider="mock", store=postgres_dsn))

    try:
        open_on(first, scope).remember("Alice works at Acme.")
        open_on(first, "other-" + scope).recall("anything", rerank=False)  # closes scope
        assert scope not in first
        open_on(second, scope).remember("Bob lives in Paris.")  # another server
        assert "Paris" in open_on(first, scope).recall("where does bob live", rerank=False)
        open_on(second, scope).remember("Carol lives in Rome.")  # cached on both now
        assert "Rome" in open_on(first, scope).recall("where does carol live", rerank=False)
    finally:
        first.close_all()
        second.close_all()
