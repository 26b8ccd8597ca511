"""``memgraph migrate``: scopes move between a directory and PostgreSQL, whole and verified.

Needs a PostgreSQL server (tests/postgres_server.py); scopes get unique names
in the default schema and are deleted afterwards.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
import pytest
from click.testing import CliRunner

from memgraph import Memory, NotFound, StoreConflict, StoreCorrupt
from memgraph.admin.migrate import migrate, open_location, read_scope
from memgraph.cli import cli
from memgraph.store import PostgresStore
from tests.postgres_server import new_scope

if TYPE_CHECKING:
    import psycopg
else:
    psycopg = pytest.importorskip(
        "psycopg", reason="psycopg is not installed: pip install -e '.[dev]'"
    )

pytestmark = pytest.mark.postgres


@pytest.fixture
def scopes(postgres_dsn: str) -> Iterator[list[str]]:
    """Two fresh scope names, deleted from the database afterwards."""
    names = [new_scope("mig"), new_scope("mig")]
    yield names
    with psycopg.connect(postgres_dsn, autocommit=True) as connection:
        for name in names:
            connection.execute("DELETE FROM memgraph.scopes WHERE scope = %s", [name])
            connection.execute("DELETE FROM memgraph.summaries WHERE scope = %s", [name])


def fill(memory: Memory, who: str) -> None:
    """A scope with history: superseded and forgotten facts, a checkpoint, a journal tail,
    key/value versions and a summary."""
    memory.remember(f"{who} works at Acme.")
    memory.remember(f"{who} lives in Paris.")
    memory.remember(f"{who} works at Globex now.")  # supersedes Acme
    memory.checkpoint()
    memory.remember(f"{who} likes green tea.")
    memory.forget(f"{who} likes green tea")
    memory.kv.remember("theme", "dark")
    memory.kv.remember("theme", "light")
    memory.save_summary({"summary": f"talked with {who}", "messagesSummarized": 7})


def export(location: str, scope: str) -> bytes:
    """The scope's JSON export read through ``Memory`` (a DSN or a directory)."""
    if location.startswith("postgresql://"):
        memory = Memory(scope=scope, provider="mock", store=location)
    else:
        memory = Memory(location, scope=scope, provider="mock")
    with memory:
        return memory.export("json")


def test_a_directory_moves_to_postgres_and_back_with_its_full_history(
    postgres_dsn: str, scopes: list[str], tmp_path: Path
) -> None:
    source, back = str(tmp_path / "source"), str(tmp_path / "back")
    for scope in scopes:
        with Memory(source, scope=scope, provider="mock") as memory:
            fill(memory, "Alice" if scope == scopes[0] else "Bob")

    there = migrate(source, postgres_dsn)
    assert [r.scope for r in there] == sorted(scopes)
    again = migrate(postgres_dsn, back, sorted(scopes))
    assert [(r.scope, r.checksum, r.counts) for r in again] == [
        (r.scope, r.checksum, r.counts) for r in there
    ]
    for report in there:
        assert report.counts["episodes"] == 4 and report.counts["summary"] == 1
        assert report.counts["vectors"] >= 4

    for scope in scopes:
        original = export(source, scope)
        assert export(postgres_dsn, scope) == original
        assert export(back, scope) == original
    with Memory(back, scope=scopes[0], provider="mock") as memory:
        works = [o for o in memory.history("Alice").observations if "works at" in o.content]
        assert [(o.content, o.valid_to is None) for o in works] == [
            ("works at Acme", False),
            ("works at Globex", True),
        ]
        assert [v.value for v in memory.kv.history("theme")] == ["dark", "light"]
        assert memory.summary() == {"summary": "talked with Alice", "messagesSummarized": 7}
        assert "tea" not in memory.recall("what does alice like?", rerank=False)


def test_the_vectors_are_copied_row_for_row(
    postgres_dsn: str, scopes: list[str], tmp_path: Path
) -> None:
    source = str(tmp_path / "source")
    with Memory(source, scope=scopes[0], provider="mock") as memory:
        fill(memory, "Alice")
    migrate(source, postgres_dsn, scopes[:1])
    before, after = (open_location(where, scopes[0]) for where in (source, postgres_dsn))
    try:
        original, copied = read_scope(before).vectors, read_scope(after).vectors
    finally:
        before.close()
        after.close()
    assert copied.model == original.model and copied.ids() == original.ids()
    assert copied.rows(0, len(copied)).tobytes() == original.rows(0, len(original)).tobytes()


def test_a_scope_that_already_holds_data_is_only_replaced_when_asked(
    postgres_dsn: str, scopes: list[str], tmp_path: Path
) -> None:
    source = str(tmp_path / "source")
    scope = scopes[0]
    with Memory(source, scope=scope, provider="mock") as memory:
        memory.remember("Alice works at Acme.")
    with Memory(scope=scope, provider="mock", store=postgres_dsn) as memory:
        memory.remember("Mallory works at Evilcorp.")
        memory.save_summary({"summary": "about Mallory"})
    with pytest.raises(StoreConflict, match="--replace"):
        migrate(source, postgres_dsn, [scope])
    assert b"Mallory" in export(postgres_dsn, scope)
    migrate(source, postgres_dsn, [scope], replace=True)
    assert export(postgres_dsn, scope) == export(source, scope)
    with Memory(scope=scope, provider="mock", store=postgres_dsn) as memory:
        assert memory.summary() is None


def test_a_copy_that_reads_back_differently_is_reported(
    postgres_dsn: str, scopes: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = str(tmp_path / "source")
    with Memory(source, scope=scopes[0], provider="mock") as memory:
        fill(memory, "Alice")
    rewrite = PostgresStore.rewrite

    def lossy(self: PostgresStore, document: dict, vectors: object, episodes: list) -> None:  # type: ignore[type-arg]
        rewrite(self, document, vectors, episodes[1:])  # type: ignore[arg-type]

    monkeypatch.setattr(PostgresStore, "rewrite", lossy)
    with pytest.raises(StoreCorrupt, match="differs from the source"):
        migrate(source, postgres_dsn, scopes[:1])


def test_a_scope_missing_from_the_source_is_not_found(
    postgres_dsn: str, scopes: list[str], tmp_path: Path
) -> None:
    with pytest.raises(NotFound):
        migrate(str(tmp_path / "empty"), postgres_dsn, scopes[:1])


def test_the_command_reports_the_checksum_and_never_prints_the_password(
    postgres_dsn: str, scopes: list[str], tmp_path: Path
) -> None:
    source = tmp_path / "source"
    with Memory(str(source), scope=scopes[0], provider="mock") as memory:
        fill(memory, "Alice")
    # The test server trusts loopback logins, so any password connects.
    secret_dsn = postgres_dsn.replace("postgresql://postgres@", "postgresql://postgres:hunter2@")
    assert "hunter2" in secret_dsn
    runner = CliRunner()
    result = runner.invoke(
        cli, ["migrate", "--from", str(source), "--to", secret_dsn, "--scope", scopes[0]]
    )
    assert result.exit_code == 0, result.output
    assert "hunter2" not in result.output
    assert f"{scopes[0]}: " in result.output and "verified" in result.output
    assert "postgres:***@" in result.output
    again = runner.invoke(
        cli, ["migrate", "--from", str(source), "--to", secret_dsn, "--scope", scopes[0]]
    )
    assert again.exit_code == 4 and "--replace" in again.output
    assert "hunter2" not in again.output
    back_dir = str(tmp_path / "back")
    back = runner.invoke(
        cli, ["migrate", "--from", secret_dsn, "--to", back_dir, "--json", "--scope", scopes[0]]
    )
    assert back.exit_code == 0, back.output
    [report] = orjson.loads(back.output)
    assert report["scope"] == scopes[0] and len(report["checksum"]) == 64


def test_the_installed_command_migrates_in_a_fresh_process(
    postgres_dsn: str, scopes: list[str], tmp_path: Path
) -> None:
    source = tmp_path / "source"
    with Memory(str(source), scope=scopes[1], provider="mock") as memory:
        memory.remember("Bob lives in Rome.")
    done = subprocess.run(
        [sys.executable, "-m", "memgraph", "migrate", "--from", str(source), "--to", postgres_dsn],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "migrated 1 scope(s)" in done.stdout
    assert b"Rome" in export(postgres_dsn, scopes[1])
