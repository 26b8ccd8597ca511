"""A fleet of app servers shares many scopes through PostgreSQL; one of them dies mid-load.

Three server processes (tests/fleet_server.py) serve a stream of writes to a
dozen scopes, each write sent to the next server in turn, so every scope is
written by every server, each keeping only a few scopes open at once (a tiny
``store.cacheMB``: scopes are closed and reopened as the load moves). After
each write a server checks that it sees every write acknowledged so far in
that scope, by anyone. One server is killed (SIGKILL) halfway; the others
carry on with their streams, and afterwards every acknowledged write is there.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memgraph import Memory
from tests.fleet_server import acknowledged
from tests.postgres_server import new_scope

if TYPE_CHECKING:
    import psycopg
else:
    psycopg = pytest.importorskip(
        "psycopg", reason="psycopg is not installed: pip install -e '.[dev]'"
    )

pytestmark = pytest.mark.postgres

SERVER = Path(__file__).resolve().with_name("fleet_server.py")
SERVERS = 3
SCOPES = 12
WRITES = 30  # per server
TIMEOUT = 240


def test_every_acknowledged_write_survives_a_server_killed_mid_load(
    postgres_dsn: str, tmp_path: Path
) -> None:
    scopes = [new_scope("fleet") for _ in range(SCOPES)]
    markers = tmp_path / "markers"
    markers.mkdir()
    servers = [
        subprocess.Popen(
            [sys.executable, str(SERVER), postgres_dsn, str(n), str(markers), "0.05"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        for n in range(SERVERS)
    ]
    try:
        for server in servers:
            assert server.stdout is not None and server.stdout.readline() == "ready\n"
        for n in range(WRITES * SERVERS):  # writes to a scope go to every server in turn
            server = servers[n % SERVERS]
            person = f"Person{n}"
            assert server.stdin is not None
            server.stdin.write(f"{scopes[n % SCOPES]} {person} works at Firm{n % 5}.\n")
        victim = servers[0]
        for server in servers:
            assert server.stdin is not None
            server.stdin.flush()
        assert victim.stdout is not None
        for _ in range(WRITES // 2):  # halfway through its stream
            line = victim.stdout.readline()
            assert line == "acked\n", line + victim.communicate(timeout=TIMEOUT)[1]
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=TIMEOUT)
        outcomes = [server.communicate(timeout=TIMEOUT) for server in servers[1:]]  # EOF: done
    finally:
        for server in servers:
            if server.poll() is None:
                server.kill()
                server.wait()
            for stream in (server.stdin, server.stdout, server.stderr):
                if stream is not None:
                    with contextlib.suppress(OSError):  # a broken pipe to the killed server
                        stream.close()
    for server, (out, err) in zip(servers[1:], outcomes, strict=True):
        assert server.returncode == 0, f"{out}\n{err}"
        opened, closed = (int(word) for word in out.split("\n")[-2].split()[1::2])
        assert closed > 0 and opened > SCOPES, "the small cache closed and reopened scopes"
    acked = acknowledged(markers)
    by_server = {n: (markers / f"server-{n}").read_text().count("\n") for n in range(SERVERS)}
    assert by_server[1] == by_server[2] == WRITES, "the survivors finished their streams"
    assert WRITES // 2 <= by_server[0] < WRITES
    for scope in scopes:
        with Memory(scope=scope, provider="mock", store=postgres_dsn) as fresh:
            names = {e.name for e in fresh.entities()}
            ids = [o.id for e in fresh.entities() for o in fresh.entity(e.name).observations]
        want = {entity for where, entity in acked if where == scope}
        assert want <= names, f"lost acknowledged writes in {scope}: {sorted(want - names)}"
        assert len(ids) == len(set(ids))
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute("DELETE FROM memgraph.scopes WHERE scope = ANY(%s)", [scopes])
