"""Portable dumps: a dump loaded into an empty scope answers every query as the original does."""

from __future__ import annotations

import dataclasses
import io
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from memgraph import InvalidInput, Memory, NotFound, StoreConflict
from memgraph.cli import cli
from memgraph.portable import dump, load, read_dump
from tests.postgres_server import new_scope

QUERIES = [
    "where does alice work",
    "alice",
    "who likes jazz",
    "green tea",
    "who lives in rome",
    "is the api slow",
    "bob",
]
TIMES = [
    "2019-12-31T00:00:00Z",
    "2020-02-15T00:00:00Z",
    "2021-01-01T00:00:00Z",
    "2021-06-15T00:00:00Z",
    "2022-06-01T00:00:00Z",
]


def fill(memory: Memory) -> None:
    """A scope with history: superseded and forgotten facts, a checkpoint and a journal
    tail, speakers, a note, a progress board, a rule, key/value versions and a summary."""
    memory.remember("Alice works at Acme.", at="2020-01-01T00:00:00Z")
    memory.remember("Alice lives in Paris.", at="2020-02-01T00:00:00Z")
    memory.remember("Bob likes jazz. Bob mentors Alice.", at="2020-03-01T00:00:00Z")
    memory.checkpoint()
    memory.remember("Alice works at Globex now.", at="2021-06-01T00:00:00Z")  # supersedes Acme
    memory.remember("Alice likes green tea.", at="2021-07-01T00:00:00Z")
    memory.forget("alice's liking for green tea")
    memory.remember_many(
        [{"text": "Carol lives in Rome.", "speaker": "Carol", "at": "2022-01-01T00:00:00Z"}]
    )
    memory.note("The API is slow on Mondays", category="learning", tags=["api"])
    memory.create_progress("import", ["ingest", "validate", "load"])
    memory.complete_step("import", "ingest", {"rows": 100})
    memory.add_rule("max_discount", "must", "discount <= 0.20", "pricing")
    memory.kv.remember("theme", "dark")
    memory.kv.remember("theme", "light")
    memory.kv.forget("theme")
    memory.kv.remember("name", "ada")
    memory.save_summary({"summary": "talked with alice", "messagesSummarized": 7})


def hits(found: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (
            h.entity.name if h.entity else None,
            h.observation,
            round(h.score, 6),
            sorted(h.tiers),
            h.episode,
        )
        for h in found
    ]


def answers(memory: Memory, *, history: bool = True) -> dict[str, Any]:
    """Everything the public API answers about the scope."""
    result: dict[str, Any] = {"stats": memory.stats()}
    for query in QUERIES:
        result[f"recall {query}"] = memory.recall(query, rerank=False)
        result[f"rerank {query}"] = memory.recall(query)
        result[f"search {query}"] = hits(memory.search(query, k=10, episodes=True))
    result["entities"] = sorted(memory.entities(), key=lambda e: e.id)
    summary = dataclasses.asdict(memory.memory_summary())
    summary.pop("scope")
    result["summary"] = summary
    result["notes"] = memory.notes()
    result["progress"] = memory.progress("import")
    result["rules"] = memory.get_rules()
    result["keys"] = memory.kv.keys()
    result["kv"] = [memory.kv.history(key) for key in ("theme", "name")]
    result["episodes"] = sorted(memory.iter_episodes(), key=lambda e: e.id)
    result["conversation summary"] = memory.summary()
    if history:
        for entity in result["entities"]:
            result[f"history {entity.name}"] = memory.history(entity.name)
        for when in TIMES:
            view = memory.as_of(when)
            result[f"as_of {when} entities"] = sorted(view.entities(), key=lambda e: e.id)
            for query in QUERIES:
                result[f"as_of {when} recall {query}"] = view.recall(query)
                result[f"as_of {when} search {query}"] = hits(view.search(query, k=10))
    return result


def dump_bytes(location: str | Path, scope: str, *, vectors: bool = True) -> bytes:
    out = io.BytesIO()
    dump(location, scope, out, vectors=vectors)
    return out.getvalue()


def records(data: bytes) -> list[Any]:
    """The dump's lines, parsed, without the header's creation time (nor the checksum,
    which covers it)."""
    lines = [orjson.loads(line) for line in data.splitlines()]
    lines[0].pop("createdAt")
    lines[-1].pop("sha256")
    return lines


@pytest.fixture
def original(tmp_path: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    root = tmp_path / "original"
    with Memory(root, "alice", provider="mock") as memory:
        fill(memory)
        yield root, answers(memory)


def test_a_dump_loaded_into_an_empty_directory_scope_answers_every_query_alike(
    tmp_path: Path, original: tuple[Path, dict[str, Any]]
) -> None:
    root, expected = original
    data = dump_bytes(root, "alice")
    path = tmp_path / "alice.jsonl"
    path.write_bytes(data)
    report = load(path, tmp_path / "copy")
    assert report.scope == "alice" and report.counts["notes"] == 1
    with Memory(tmp_path / "copy", "alice", provider="mock") as copy:
        assert answers(copy) == expected
    assert records(dump_bytes(tmp_path / "copy", "alice")) == records(data)


@pytest.mark.postgres
def test_a_dump_loaded_into_an_empty_postgres_scope_answers_every_query_alike(
    tmp_path: Path, original: tuple[Path, dict[str, Any]], postgres_dsn: str
) -> None:
    import psycopg

    root, expected = original
    path = tmp_path / "alice.jsonl"
    path.write_bytes(dump_bytes(root, "alice"))
    scope = new_scope("dump")
    try:
        load(path, postgres_dsn, scope)
        with Memory(scope=scope, provider="mock", store=postgres_dsn) as copy:
            assert answers(copy) == expected
        back = dump_bytes(postgres_dsn, scope)
        assert records(back)[1:] == records(path.read_bytes())[1:]
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as connection:
            connection.execute("DELETE FROM memgraph.scopes WHERE scope = %s", [scope])
            connection.execute("DELETE FROM memgraph.summaries WHERE scope = %s", [scope])


def test_without_vectors_the_copy_embeds_current_facts_and_answers_current_queries_alike(
    tmp_path: Path, original: tuple[Path, dict[str, Any]]
) -> None:
    root, _ = original
    with Memory(root, "alice", provider="mock") as memory:
        expected = answers(memory, history=False)
    path = tmp_path / "alice.jsonl"
    path.write_bytes(dump_bytes(root, "alice", vectors=False))
    assert b'"kind":"vectors"' not in path.read_bytes()
    load(path, tmp_path / "copy")
    with Memory(tmp_path / "copy", "alice", provider="mock") as copy:
        found = answers(copy, history=False)
    # the copy embeds its current facts and every remembered text; the original also
    # keeps the vectors of its expired facts
    texts = found["stats"]["episodes"]
    assert found["stats"].pop("vectors") == found["stats"]["current_observations"] + texts
    assert expected["stats"].pop("vectors") == 8 + texts
    assert found == expected


# ------------------------------------------------------------------- verification
def dumped(original: tuple[Path, dict[str, Any]]) -> list[bytes]:
    return dump_bytes(original[0], "alice").splitlines(keepends=True)


def test_a_dump_from_a_newer_format_is_refused_with_advice(
    tmp_path: Path, original: tuple[Path, dict[str, Any]]
) -> None:
    lines = dumped(original)
    header = orjson.loads(lines[0])
    lines[0] = orjson.dumps({**header, "version": 2, "memgraph": "9.0"}) + b"\n"
    path = tmp_path / "new.jsonl"
    path.write_bytes(b"".join(lines))
    result = CliRunner().invoke(cli, ["--dir", str(tmp_path / "copy"), "load", str(path)])
    assert result.exit_code == 2
    assert "is a version 2 dump, written by memgraph 9.0" in result.output
    assert "reads dumps up to version 1. Upgrade memgraph" in result.output
    assert not (tmp_path / "copy").exists()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda ls: [line.replace(b"works at", b"works as") for line in ls], "is damaged"),
        (lambda ls: ls[:-1], "is truncated"),
        (lambda ls: [*ls, b"{}\n"], "data after the end line"),
        (lambda ls: [*ls[:3], b"{not json\n", *ls[3:]], "line 4: not valid JSON"),
        (lambda ls: [b'{"hello": 1}\n', *ls[1:]], "is not a memgraph dump"),
    ],
)
def test_a_damaged_dump_is_refused_before_anything_is_written(
    tmp_path: Path, original: tuple[Path, dict[str, Any]], damage: Any, message: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"".join(damage(dumped(original))))
    with pytest.raises(InvalidInput, match=message):
        load(path, tmp_path / "copy")
    assert not (tmp_path / "copy").exists()


def test_counts_that_disagree_with_the_records_are_refused(
    original: tuple[Path, dict[str, Any]],
) -> None:
    import hashlib

    lines = dumped(original)
    end = orjson.loads(lines[-1])
    body = [line for line in lines[:-1] if b'"kind":"episode"' not in line]
    end["sha256"] = hashlib.sha256(b"".join(body)).hexdigest()
    with pytest.raises(InvalidInput, match="the end line counts"):
        read_dump([*body, orjson.dumps(end) + b"\n"])


def test_load_refuses_a_scope_holding_data_and_force_replaces_all_of_it(
    tmp_path: Path, original: tuple[Path, dict[str, Any]]
) -> None:
    path = tmp_path / "alice.jsonl"
    path.write_bytes(dump_bytes(original[0], "alice"))
    with Memory(tmp_path / "copy", "alice", provider="mock") as memory:
        memory.remember("Zed collects stamps.")
    with pytest.raises(StoreConflict, match="pass --force"):
        load(path, tmp_path / "copy")
    load(path, tmp_path / "copy", force=True)
    with Memory(tmp_path / "copy", "alice", provider="mock") as memory:
        assert answers(memory) == original[1]
        assert "Zed" not in {e.name for e in memory.entities()}


def test_the_commands_dump_to_an_owner_only_file_and_load_into_another_scope(
    tmp_path: Path, original: tuple[Path, dict[str, Any]]
) -> None:
    root = str(original[0])
    out = tmp_path / "alice.jsonl"
    result = CliRunner().invoke(cli, ["--dir", root, "--scope", "alice", "dump", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    args = ["--dir", str(tmp_path / "copy"), "load", str(out), "--scope", "alice2"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "into scope 'alice2'" in result.output
    with Memory(tmp_path / "copy", "alice2", provider="mock") as copy:
        assert answers(copy, history=False)["recall where does alice work"]


def test_dumping_a_scope_that_holds_nothing_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="holds nothing"):
        dump_bytes(tmp_path, "nobody")
