"""A PostgreSQL server for the tests that need one, and helpers to keep them apart.

Where the server comes from, in order:

1. ``MEMGRAPH_TEST_POSTGRES_DSN`` (``.ci/run`` starts a throwaway server and
   sets it). If it is set but unreachable, the tests fail: they never skip
   silently in CI.
2. Otherwise a throwaway server started here, the way ``.ci/run`` does it: a
   fresh cluster in a temporary directory (``initdb`` from
   ``/usr/lib/postgresql/*/bin`` or ``PATH``), run as the ``postgres`` user
   through ``runuser`` when the tests run as root, listening on 127.0.0.1
   only on a free port, stopped and deleted when the test session ends.
3. Otherwise (or when ``MEMGRAPH_TEST_POSTGRES_START=0`` forbids starting
   one) the tests are skipped, with the reason.

Import the ``postgres_dsn`` fixture into a test module to use it; each test
should work in its own schema (:func:`new_schema`) or its own scopes.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ENV_DSN = "MEMGRAPH_TEST_POSTGRES_DSN"
ENV_START = "MEMGRAPH_TEST_POSTGRES_START"
DATABASE = "memgraph_test"
START_ATTEMPTS = 3
TABLES = ("scopes", "images", "commits", "episodes", "vectors", "coarse", "derived", "summaries")


@dataclass
class _Server:
    """The server the tests use: its DSN, or why there is none."""

    dsn: str | None = None
    reason: str = ""
    external: bool = False
    data_dir: Path | None = None
    pg_ctl: list[str] = field(default_factory=list)
    schemas: list[str] = field(default_factory=list)


_server: _Server | None = None


def _binaries() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl`` (the newest installed version)."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: (
            int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0
        ),
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start() -> _Server:
    """Start a throwaway cluster; a :class:`_Server` with a DSN or the reason it failed."""
    if os.environ.get(ENV_START) == "0":
        return _Server(reason=f"{ENV_DSN} is unset and {ENV_START}=0 forbids starting a server")
    binaries = _binaries()
    if binaries is None:
        return _Server(
            reason=f"{ENV_DSN} is unset and no PostgreSQL server binaries (initdb) "
            "were found; install postgresql or set the variable"
        )
    as_user: list[str] = []
    owner: pwd.struct_passwd | None = None
    if os.geteuid() == 0:  # the server refuses to run as root
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            return _Server(
                reason=f"{ENV_DSN} is unset and there is no 'postgres' user to run a "
                "local server as (the server refuses root)"
            )
        as_user = ["runuser", "-u", "postgres", "--"]
    root = Path(tempfile.mkdtemp(prefix="memgraph-pg-"))
    if owner is not None:
        os.chown(root, owner.pw_uid, owner.pw_gid)
    data = root / "data"
    initdb = [*as_user, str(binaries / "initdb"), "-D", str(data), "-U", "postgres"]
    initdb += ["--auth=trust", "-E", "UTF8", "--no-locale"]
    result = subprocess.run(initdb, capture_output=True, text=True, timeout=120, check=False)
    if result.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        return _Server(reason=f"{ENV_DSN} is unset and initdb failed: {result.stderr.strip()}")
    pg_ctl = [*as_user, str(binaries / "pg_ctl"), "-D", str(data)]
    log = root / "server.log"
    for _ in range(START_ATTEMPTS):
        port = _free_port()
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {root}"
        start = [*pg_ctl, "-l", str(log), "-w", "-t", "60", "-o", options, "start"]
        result = subprocess.run(start, capture_output=True, text=True, timeout=90, check=False)
        if result.returncode == 0:
            server = _Server(
                dsn=f"postgresql://postgres@127.0.0.1:{port}/{DATABASE}",
                data_dir=root,
                pg_ctl=pg_ctl,
            )
            try:
                _create_database(f"postgresql://postgres@127.0.0.1:{port}/postgres")
            except Exception as exc:
                _stop(server)
                return _Server(reason=f"the local PostgreSQL server did not take a database: {exc}")
            return server
    tail = log.read_text(errors="replace")[-2000:] if log.exists() else result.stderr
    shutil.rmtree(root, ignore_errors=True)
    return _Server(reason=f"{ENV_DSN} is unset and a local server did not start: {tail.strip()}")


def _create_database(admin_dsn: str) -> None:
    import psycopg

    with psycopg.connect(admin_dsn, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {DATABASE}")


def _stop(server: _Server) -> None:
    if server.data_dir is None:
        return
    subprocess.run(
        [*server.pg_ctl, "-m", "immediate", "-w", "-t", "60", "stop"],
        capture_output=True,
        timeout=90,
        check=False,
    )
    shutil.rmtree(server.data_dir, ignore_errors=True)
    server.data_dir = None


def _drop_schemas(server: _Server) -> None:
    if server.dsn is None or not server.schemas:
        return
    import psycopg

    with contextlib.suppress(psycopg.Error), psycopg.connect(server.dsn, autocommit=True) as conn:
        for schema in server.schemas:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    server.schemas.clear()


def _shutdown() -> None:
    if _server is not None:
        if _server.external:
            _drop_schemas(_server)
        _stop(_server)


def _get() -> _Server:
    global _server
    if _server is not None:
        return _server
    try:
        import psycopg
    except ImportError:
        _server = _Server(reason="psycopg is not installed (pip install -e '.[dev]')")
        return _server
    external = os.environ.get(ENV_DSN)
    if external:
        try:
            with psycopg.connect(external, connect_timeout=10):
                pass
        except psycopg.Error as exc:
            _server = _Server(reason=f"{ENV_DSN} is set but the server cannot be reached: {exc}")
            _server.external = True  # a configured server that is down fails the tests
            return _server
        _server = _Server(dsn=external, external=True)
    else:
        _server = _start()
    atexit.register(_shutdown)
    return _server


def server_dsn() -> str:
    """The DSN of the test server (skips the calling test when there is none)."""
    server = _get()
    if server.dsn is None and server.external:
        pytest.fail(server.reason)
    if server.dsn is None:
        pytest.skip(f"PostgreSQL tests skipped: {server.reason}")
    return server.dsn


def new_schema() -> str:
    """A fresh schema name for one test (dropped when the session ends)."""
    schema = f"t_{uuid.uuid4().hex[:16]}"
    _get().schemas.append(schema)
    return schema


def new_scope(prefix: str = "s") -> str:
    """A scope name no other test uses."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def scope_footprint(dsn: str, schema: str, scope: str) -> list[str]:
    """``table: rows`` for every table holding rows of ``scope`` (empty: nothing stored)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_namespace WHERE nspname = %s", [schema]
        ).fetchone()
        if exists is None:
            return []
        found = []
        for table in TABLES:
            row = connection.execute(
                f'SELECT count(*) FROM "{schema}".{table} WHERE scope = %s', [scope]
            ).fetchone()
            if row and row[0]:
                found.append(f"{table}: {row[0]}")
        return found


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """The DSN of a PostgreSQL server for this test session (skips without one)."""
    yield server_dsn()
