"""Several processes (standing in for app servers) share scopes through PostgreSQL.

Each worker (tests/postgres_worker.py) writes to and recalls from the same
two scopes at once; after every write it checks that its next reads see every
write any worker had acknowledged before them. Afterwards a fresh reader
checks that nothing was lost and every id is unique.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memgraph import Memory
from tests.postgres_server import new_scope

if TYPE_CHECKING:
    import psycopg
else:
    psycopg = pytest.importorskip(
        "psycopg", reason="psycopg is not installed: pip install -e '.[dev]'"
    )

pytestmark = pytest.mark.postgres

WORKER = Path(__file__).resolve().with_name("postgres_worker.py")
WORKERS = 4
WRITES = 24
TIMEOUT = 240


def test_every_process_sees_every_other_processes_committed_writes(
    postgres_dsn: str, tmp_path: Path
) -> None:
    scopes = [new_scope("shared"), new_scope("shared")]
    markers = tmp_path / "markers"
    markers.mkdir()
    processes = [
        subprocess.Popen(
            [sys.executable, str(WORKER), postgres_dsn, str(w), str(WRITES), str(markers), *scopes],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        for w in range(WORKERS)
    ]
    try:
        for process in processes:
            assert process.stdout is not None
            ready = process.stdout.readline()
            assert ready == "ready\n", process.communicate(timeout=TIMEOUT)
        for process in processes:  # start together
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        outputs = [process.communicate(timeout=TIMEOUT) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.communicate()
    for process, (out, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, f"misses or a crash:\n{out}\n{err}"

    try:
        expected = {s: set[str]() for s in scopes}
        for w in range(WORKERS):
            for i in range(WRITES):
                expected[scopes[i % len(scopes)]].add(f"Worker{w}Item{i}")
        for scope in scopes:
            with Memory(scope=scope, provider="mock", store=postgres_dsn) as reader:
                entities = reader.entities()
                workers = {e.name for e in entities if e.name.startswith("Worker")}
                assert workers == expected[scope], "a write was lost"
                ids = Counter(e.id for e in entities)
                ids.update(o.id for e in entities for o in e.observations)
                assert max(ids.values()) == 1, "an id was handed out twice"
                assert reader.stats()["observations"] == len(expected[scope])
                history = reader.store.load()
                seq = (history.document or {}).get("checkpointSeq", 0)
                last = history.commits[-1].seq if history.commits else seq
                assert last == len(expected[scope]), "one commit per remember"
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as connection:
            for scope in scopes:
                connection.execute("DELETE FROM memgraph.scopes WHERE scope = %s", [scope])
