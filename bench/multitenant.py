"""A fleet of app servers serving many users: the multi-tenant benchmark.

Run::

    python -m bench.multitenant                          # 4 servers, 10,000 scopes, both stores
    python -m bench.multitenant --quick                  # 4 servers, 200 scopes, 1,000 ops
    python -m bench.multitenant --stores postgres --dsn postgresql://... --write-results

What it does:

1. **Scopes.** ``--scopes`` users (scopes ``u00000``...), each holding between
   ``--min-facts`` and ``--max-facts`` observations (log-uniform: most users
   are small). They are copies of ``--templates`` distinct scopes of the
   seeded ``facts`` workload (:mod:`bench.workload`), written once with the
   store's own checkpoint (:func:`bench.build.seed_scope`, then
   ``memgraph migrate`` for PostgreSQL) and copied per user inside the
   database (or as directories), so preparing 10,000 users takes minutes.
2. **Load.** ``--ops`` operations: a user drawn from a Zipf law over the users
   (exponent ``--zipf``; rank order shuffled), then ``remember`` (a new text
   of that user's workload, ``--writes`` of the ops) or ``recall(rerank=False)``
   (one of its workload's queries).
3. **Servers.** ``--servers`` processes (``python -m bench.multitenant --serve``),
   each holding the users it serves in a :class:`memgraph.MemoryCache` of
   ``--cache-mb``. The driver is the load balancer: it sends each operation
   to the server with the fewest outstanding (at most 2 each), so a user's
   calls land on any server, as behind a stateless balancer. Servers time
   each call (scripted LLM and hashed embeddings: engine and store cost
   only) and acknowledge it on stdout once it returned.
4. **A crash.** With ``--kill``, the driver SIGKILLs one server once half of
   the operations are acknowledged; its queued operations go to the others,
   the one it was running is lost unacknowledged (a client would retry).
5. **Checks.** Afterwards every acknowledged ``remember`` is looked up in its
   user's stored episodes: none may be missing.

Reported per store: throughput, p50/p95/p99 of each call, each server's
resident memory (before the first call, its peak, at the end) against the
cache budget, how many scopes the caches opened and closed, and the crash
figures. The scripted model answers from a dict, so the numbers are memgraph
and its store, not an LLM.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zlib
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
import orjson

from bench.measure import environment, percentile, rss_bytes

RESULTS = Path(__file__).resolve().with_name("RESULTS.md")
HEADING = "## Multi-tenant service"
TEMPLATE = "template-{:03d}"
USER = "u{:05d}"
DEPTH = 2  # outstanding operations per server
MB = 1 << 20


# ------------------------------------------------------------------ options
def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.multitenant", description=__doc__)
    parser.add_argument("--servers", type=int, default=4)
    parser.add_argument("--scopes", type=int, default=10_000)
    parser.add_argument("--min-facts", type=int, default=200)
    parser.add_argument("--max-facts", type=int, default=2_000)
    parser.add_argument("--templates", type=int, default=40, help="distinct scope contents (40)")
    parser.add_argument("--ops", type=int, default=20_000)
    parser.add_argument("--writes", type=float, default=0.25, help="share of remember (0.25)")
    parser.add_argument("--zipf", type=float, default=1.0, help="Zipf exponent of activity")
    parser.add_argument("--cache-mb", type=float, default=256.0, help="store.cacheMB per server")
    parser.add_argument(
        "--routes",
        default="any,sticky",
        help="any: to the server with the fewest outstanding calls; sticky: by a hash of the "
        "scope (any,sticky: one run each)",
    )
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--stores", default="postgres,files", help="postgres,files")
    parser.add_argument("--dsn", default=os.environ.get("MEMGRAPH_BENCH_POSTGRES_DSN"))
    parser.add_argument("--work", type=Path, help="where the scopes live (kept between runs)")
    parser.add_argument("--no-kill", dest="kill", action="store_false", help="no crash")
    parser.add_argument("--quick", action="store_true", help="200 scopes, 1,000 ops")
    parser.add_argument("--write-results", action="store_true")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--script", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.routes = [r.strip() for r in args.routes.split(",") if r.strip()]
    if set(args.routes) - {"any", "sticky"}:
        parser.error(f"unknown routing in --routes {args.routes}; use any, sticky")
    args.route = args.routes[0]
    if args.quick:
        args.scopes, args.ops, args.templates = 200, 1_000, 10
    return args


# ------------------------------------------------------------------ the scopes
@dataclass
class Users:
    """Who the users are: each one's template, and the texts they will remember."""

    templates: list[int]  # template of each user
    sizes: list[int]  # observations of each template
    continuations: list[list[Any]] = field(default_factory=list)  # items per template
    queries: list[list[str]] = field(default_factory=list)  # queries per template


def plan_users(args: argparse.Namespace, remembers_per_template: int) -> Users:
    from bench.workload import make_workload

    rng = np.random.default_rng(args.seed)
    low, high = math.log(args.min_facts), math.log(args.max_facts)
    sizes = [
        int(math.exp(low + (high - low) * k / max(args.templates - 1, 1)))
        for k in range(args.templates)
    ]
    users = Users(templates=rng.integers(0, args.templates, args.scopes).tolist(), sizes=sizes)
    for number, size in enumerate(sizes):
        workload = make_workload("facts", args.seed * 1000 + number)
        for _ in workload.until(size):
            pass
        users.continuations.append(workload.take(remembers_per_template))
        users.queries.append([query for _, query in workload.queries(64)])
    return users


def seed_templates(args: argparse.Namespace, users: Users, root: Path) -> None:
    """Write each template scope once into ``root`` (a directory store)."""
    from bench.build import seed_scope
    from bench.scripted import bench_provider
    from bench.workload import make_workload

    marker = (
        root
        / f".seeded-{args.seed}-{args.dim}-{len(users.sizes)}-{args.min_facts}-{args.max_facts}"
    )
    if marker.exists():
        return
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    _, _, embedder, _ = bench_provider(args.dim)
    for number, size in enumerate(users.sizes):
        workload = make_workload("facts", args.seed * 1000 + number)
        seed_scope(root, TEMPLATE.format(number), list(workload.until(size)), embedder)
    marker.touch()


def files_users(args: argparse.Namespace, users: Users, templates: Path, root: Path) -> float:
    """Every user's scope as a copy of its template's directory; seconds taken.

    Fresh copies made beforehand for the same users (``root``'s marker, which a
    run removes before it writes) are used as they are: 0 seconds.
    """
    marker = root / f".copied-{args.seed}-{args.dim}-{args.scopes}-{len(users.sizes)}"
    if marker.exists():
        return 0.0
    started = time.perf_counter()
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    for user, template in enumerate(users.templates):
        shutil.copytree(templates / TEMPLATE.format(template), root / USER.format(user))
    marker.touch()
    return time.perf_counter() - started


def postgres_users(args: argparse.Namespace, users: Users, templates: Path, dsn: str) -> float:
    """Every user's scope as a copy of its template, made inside PostgreSQL; seconds taken."""
    import psycopg

    from memgraph.admin.migrate import migrate
    from memgraph.store.pg_schema import DEFAULT_SCHEMA, ensure_schema

    started = time.perf_counter()
    s = f'"{DEFAULT_SCHEMA}"'
    names = [TEMPLATE.format(n) for n in range(len(users.sizes))]
    with psycopg.connect(dsn, autocommit=True) as db:
        ensure_schema(db, DEFAULT_SCHEMA, dsn)
        have = {
            r[0] for r in db.execute(f"SELECT scope FROM {s}.scopes WHERE scope = ANY(%s)", [names])
        }
        missing = [name for name in names if name not in have]
        if missing:
            migrate(str(templates), dsn, missing, replace=True)
        db.execute(f"DELETE FROM {s}.scopes WHERE scope LIKE 'u%%'")
        db.execute(f"DELETE FROM {s}.summaries WHERE scope LIKE 'u%%'")
        for table in ("vectors", "images", "episodes", "commits"):  # reuse the space
            db.execute(f"VACUUM {s}.{table}")
        batch = 250
        for start in range(0, len(users.templates), batch):
            pairs = [
                (USER.format(start + offset), TEMPLATE.format(template))
                for offset, template in enumerate(users.templates[start : start + batch])
            ]
            params = [[p[0] for p in pairs], [p[1] for p in pairs]]
            join = "JOIN unnest(%s::text[], %s::text[]) AS t(user_scope, template) ON x.scope = t.template"
            with db.transaction():
                db.execute(
                    f"INSERT INTO {s}.scopes (scope, epoch, last_seq, checkpoint_seq, checkpoint_bytes, "
                    "journal_bytes, vector_model, vector_dim, vector_count, vector_generation, "
                    "image_generation) SELECT t.user_scope, x.epoch, x.last_seq, x.checkpoint_seq, "
                    "x.checkpoint_bytes, x.journal_bytes, x.vector_model, x.vector_dim, "
                    f"x.vector_count, x.vector_generation, x.image_generation FROM {s}.scopes x {join}",
                    params,
                )
                for table, columns in (
                    ("images", "generation, document, document_index, vector_ids"),
                    ("vectors", "row_index, obs_id, data"),
                    ("coarse", "lists, dim, centroids, labels"),
                ):
                    db.execute(
                        f"INSERT INTO {s}.{table} (scope, {columns}) SELECT t.user_scope, "
                        + ", ".join(f"x.{c.strip()}" for c in columns.split(","))
                        + f" FROM {s}.{table} x {join}",
                        params,
                    )
                db.execute(
                    f"INSERT INTO {s}.episodes (scope, id, record) SELECT t.user_scope, x.id, "
                    f"x.record FROM {s}.episodes x {join} ORDER BY t.user_scope, x.ordinal",
                    params,
                )
        db.execute(f"VACUUM ANALYZE {s}.scopes")
    return time.perf_counter() - started


# ------------------------------------------------------------------ the load
def plan_ops(args: argparse.Namespace, users: Users) -> list[dict[str, Any]]:
    """The operations, in order: who, what, and the text."""
    rng = np.random.default_rng(args.seed + 1)
    ranks = np.arange(1, args.scopes + 1, dtype=np.float64)
    weights = 1.0 / ranks**args.zipf
    order = rng.permutation(args.scopes)  # which user has which rank
    chosen = order[rng.choice(args.scopes, size=args.ops, p=weights / weights.sum())]
    writes = rng.random(args.ops) < args.writes
    taken: dict[int, int] = {}
    ops = []
    for number, (user, write) in enumerate(zip(chosen.tolist(), writes.tolist(), strict=True)):
        template = users.templates[user]
        if write:
            k = taken[user] = taken.get(user, -1) + 1
            text = users.continuations[template][k].text
        else:
            queries = users.queries[template]
            text = queries[int(rng.integers(len(queries)))]
        ops.append(
            {
                "i": number,
                "scope": USER.format(user),
                "op": "remember" if write else "recall",
                "text": text,
            }
        )
    return ops


def remembers_needed(args: argparse.Namespace) -> int:
    """The most remember calls one user can get (the top Zipf rank, with room)."""
    harmonic = float(np.sum(1.0 / np.arange(1, args.scopes + 1, dtype=np.float64) ** args.zipf))
    expected = args.ops * args.writes / harmonic
    return int(expected + 6 * math.sqrt(expected) + 10)


# ------------------------------------------------------------------ a server
def serve(args: argparse.Namespace) -> int:
    """One app server: read operations on stdin, acknowledge each on stdout."""
    from bench.scripted import bench_provider
    from memgraph import Memory, MemoryCache
    from memgraph.llm_calls.tokens import token_counter

    provider, chat, _, _ = bench_provider(args.dim)
    token_counter(provider.chat.model)
    with open(args.script, "rb") as handle:
        chat.script(_Item(**item) for item in orjson.loads(handle.read()))
    cache: MemoryCache[str] = MemoryCache(budget_mb=args.cache_mb)
    store = args.store
    out = sys.stdout.buffer

    def say(record: dict[str, Any]) -> None:
        out.write(orjson.dumps(record) + b"\n")
        out.flush()

    say({"ready": True, "rss": rss_bytes().get("VmRSS", 0)})
    done = 0
    for line in sys.stdin.buffer:
        op = orjson.loads(line)
        started = time.perf_counter()
        try:
            memory = cache.get(
                op["scope"],
                lambda s=op["scope"]: Memory(
                    args.root, s, provider=provider, config={}, store=store
                ),
            )
            if op["op"] == "remember":
                memory.remember(op["text"])
            else:
                memory.recall(op["text"], rerank=False)
        except Exception as exc:  # reported, never acknowledged
            say({"i": op["i"], "ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]})
            continue
        say({"i": op["i"], "ok": True, "ms": (time.perf_counter() - started) * 1000})
        done += 1
        if done % 100 == 0:
            say(
                {
                    "rss": rss_bytes().get("VmRSS", 0),
                    "held": len(cache),
                    "cache": cache.resident_bytes,
                }
            )
    status = rss_bytes()
    say(
        {
            "done": True,
            "rss": status.get("VmRSS", 0),
            "peak": status.get("VmHWM", 0),
            "opened": cache.opened,
            "closed": cache.closed,
            "held": len(cache),
            "cache": cache.resident_bytes,
            "misses": chat.misses,
        }
    )
    cache.close_all()
    return 0


@dataclass
class _Item:
    text: str
    reply: dict[str, Any]
    observations: int = 0


# ------------------------------------------------------------------ the driver
@dataclass
class Server:
    number: int
    process: subprocess.Popen[bytes]
    outstanding: list[int] = field(default_factory=list)
    buffer: bytes = b""
    alive: bool = True
    rss_start: int = 0
    rss_max: int = 0
    final: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def drive(
    args: argparse.Namespace, store: str, root: Path, script: Path, ops: list[dict[str, Any]]
) -> dict[str, Any]:
    """Start the servers, balance the operations over them (killing one halfway when
    asked) and collect their acknowledgements."""
    command = [
        sys.executable,
        "-m",
        "bench.multitenant",
        "--serve",
        "--store",
        store,
        "--root",
        str(root),
        "--script",
        str(script),
        "--cache-mb",
        str(args.cache_mb),
        "--dim",
        str(args.dim),
    ]
    servers = [
        Server(
            n,
            subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                cwd=Path(__file__).resolve().parent.parent,
            ),
        )
        for n in range(args.servers)
    ]
    selector = selectors.DefaultSelector()
    for server in servers:
        assert server.process.stdout is not None
        os.set_blocking(server.process.stdout.fileno(), False)
        selector.register(server.process.stdout, selectors.EVENT_READ, server)
    for server in servers:  # wait until every server is up
        while not server.rss_start:
            for record in _read(selector, servers):
                if "ready" in record[1]:
                    record[0].rss_start = record[1]["rss"]
    # Each server's queue (sticky routing), or one queue for all (any server).
    sticky = args.route == "sticky"
    queues: dict[int, deque[int]] = {s.number: deque() for s in servers}
    shared: deque[int] = deque()
    for number, op in enumerate(ops):
        (queues[home(op["scope"], servers)] if sticky else shared).append(number)
    acked: dict[int, float] = {}
    failed: dict[int, str] = {}
    lost_in_flight: list[int] = []
    kill_at = len(ops) // 2 if args.kill else None
    killed: dict[str, Any] = {}
    started = time.perf_counter()
    while len(acked) + len(failed) + len(lost_in_flight) < len(ops):
        for server in sorted((s for s in servers if s.alive), key=lambda s: len(s.outstanding)):
            queue = queues[server.number] if sticky else shared
            while queue and len(server.outstanding) < DEPTH:
                number = queue.popleft()
                server.outstanding.append(number)
                assert server.process.stdin is not None
                server.process.stdin.write(orjson.dumps(ops[number]) + b"\n")
                server.process.stdin.flush()
        for server, record in _read(selector, servers):
            if "i" in record:
                server.outstanding.remove(record["i"])
                if record["ok"]:
                    acked[record["i"]] = record["ms"]
                else:
                    failed[record["i"]] = record["error"]
                    server.errors.append(record["error"])
            if "rss" in record and "ready" not in record:
                server.rss_max = max(server.rss_max, record["rss"])
            if record.get("done"):
                server.final = record
        if kill_at is not None and len(acked) >= kill_at and not killed:
            victim = servers[0]
            victim.process.send_signal(signal.SIGKILL)
            victim.process.wait()
            victim.alive = False
            selector.unregister(victim.process.stdout)  # type: ignore[arg-type]
            assert victim.process.stdout is not None
            os.set_blocking(victim.process.stdout.fileno(), True)
            tail = victim.buffer + victim.process.stdout.read()
            for line in tail.split(b"\n"):  # acknowledgements sent before it died
                record = orjson.loads(line) if line.strip() else {}
                if "i" in record and record.get("ok"):
                    victim.outstanding.remove(record["i"])
                    acked[record["i"]] = record["ms"]
            in_flight = victim.outstanding[:1]
            lost_in_flight += in_flight
            # The balancer sends what the dead server had not started elsewhere.
            moved = [*victim.outstanding[1:], *queues[victim.number]]
            queues[victim.number].clear()
            for number in reversed(moved):
                if sticky:
                    queues[home(ops[number]["scope"], servers)].appendleft(number)
                else:
                    shared.appendleft(number)
            killed = {
                "server": 0,
                "after_s": time.perf_counter() - started,
                "acked_before": len(acked),
                "in_flight": ops[in_flight[0]]["op"] if in_flight else None,
                "requeued": len(moved),
            }
            victim.outstanding = []
    wall = time.perf_counter() - started
    for server in servers:
        if server.alive:
            assert server.process.stdin is not None
            server.process.stdin.close()
    for server in servers:
        while server.alive and not server.final:
            for owner, record in _read(selector, servers):
                if record.get("done"):
                    owner.final = record
                if "rss" in record:
                    owner.rss_max = max(owner.rss_max, record["rss"])
        server.process.wait(timeout=120)
    return {
        "acked": acked,
        "failed": failed,
        "lost_in_flight": lost_in_flight,
        "killed": killed,
        "wall": wall,
        "servers": servers,
    }


def home(scope: str, servers: list[Server]) -> int:
    """The server a scope is routed to when routing is sticky: a hash of the scope,
    then the next live server when that one is down."""
    first = zlib.crc32(scope.encode()) % len(servers)
    for step in range(len(servers)):
        server = servers[(first + step) % len(servers)]
        if server.alive:
            return server.number
    raise RuntimeError("no server is alive")


def _read(
    selector: selectors.BaseSelector, servers: list[Server]
) -> Iterator[tuple[Server, dict[str, Any]]]:
    for key, _ in selector.select(timeout=5):
        server: Server = key.data
        stream: IO[bytes] = key.fileobj  # type: ignore[assignment]
        chunk = stream.read()
        if not chunk:
            continue
        server.buffer += chunk
        *lines, server.buffer = server.buffer.split(b"\n")
        for line in lines:
            if line:
                yield server, orjson.loads(line)


# ------------------------------------------------------------------ checks
def verify(
    store: str, root: Path, ops: list[dict[str, Any]], acked: dict[int, float], dim: int
) -> dict[str, int]:
    """Every acknowledged remember must be among its scope's stored episodes."""
    from bench.scripted import bench_provider
    from memgraph import Memory

    wanted: dict[str, set[str]] = {}
    for number in acked:
        op = ops[number]
        if op["op"] == "remember":
            wanted.setdefault(op["scope"], set()).add(op["text"])
    provider, _, _, _ = bench_provider(dim)
    missing = 0
    for scope, texts in wanted.items():
        with Memory(root, scope, provider=provider, config={}, store=store) as memory:
            stored = {episode.text for episode in memory.iter_episodes()}
        missing += len(texts - stored)
    return {
        "checked": sum(len(t) for t in wanted.values()),
        "scopes": len(wanted),
        "missing": missing,
    }


# ------------------------------------------------------------------ one store
def run_store(
    label: str,
    store: str,
    root: Path,
    args: argparse.Namespace,
    users: Users,
    ops: list[dict[str, Any]],
    script: Path,
    prepare_s: float,
) -> dict[str, Any]:
    say(f"{label}: {args.servers} servers, {len(ops):,} operations")
    watched = store.startswith(("postgresql://", "postgres://")) and server_stats_reset(store)
    result = drive(args, store, root, script, ops)
    database = server_stats(store) if watched else {}
    acked, servers = result["acked"], result["servers"]
    by_kind: dict[str, list[float]] = {"remember": [], "recall": []}
    for number, ms in acked.items():
        by_kind[ops[number]["op"]].append(ms)
    say(
        f"{label}: checking {sum(1 for n in acked if ops[n]['op'] == 'remember'):,} acknowledged writes"
    )
    checks = verify(store, root, ops, acked, args.dim)
    return {
        "store": label,
        "prepare_s": round(prepare_s, 1),
        "wall_s": round(result["wall"], 2),
        "acked": len(acked),
        "failed": len(result["failed"]),
        "errors": sorted({e.split(":")[0] for s in servers for e in s.errors}),
        "throughput": round(len(acked) / result["wall"], 1),
        "latency": {
            kind: {f"p{q}": round(percentile(v, q), 2) for q in (50, 95, 99)} | {"n": len(v)}
            for kind, v in by_kind.items()
        },
        "servers": [
            {
                "number": s.number,
                "killed": not s.alive,
                "rss_start_mb": round(s.rss_start / MB, 1),
                "rss_peak_mb": round(max(s.final.get("peak", 0), s.rss_max) / MB, 1),
                "rss_end_mb": round(s.final.get("rss", s.rss_max) / MB, 1),
                "cache_end_mb": round(s.final.get("cache", 0) / MB, 1),
                "opened": s.final.get("opened"),
                "closed": s.final.get("closed"),
                "held": s.final.get("held"),
                "misses": s.final.get("misses"),
            }
            for s in servers
        ],
        "database": database,
        "killed": result["killed"],
        "lost_in_flight": len(result["lost_in_flight"]),
        "checks": checks,
    }


# What each statement memgraph sends is for (by how it starts).
STATEMENT_KINDS = [
    ("WITH scope AS", "commit"),
    ("SELECT s.epoch, s.last_seq", "catch-up"),
    ("SELECT pg_try_advisory_lock", "lock"),
    ("SELECT pg_advisory", "lock"),
    ("SELECT set_config", "lock"),
    ("SELECT epoch, last_seq, checkpoint_seq", "open"),
    ("SELECT generation, octet_length", "open"),
    ("SELECT seq, at, next_id", "open"),
    ("SELECT lists, dim", "open"),
    ("SELECT v.data", "open"),
    ("BEGIN", "open"),
    ("COMMIT", "open"),
    ("SELECT max(version)", "open"),
    ("SELECT substring", "records"),
    ("COPY (SELECT", "vector rows"),
]


def server_stats_reset(dsn: str) -> bool:
    """Reset PostgreSQL's statement and WAL counters; False when pg_stat_statements is
    not loaded (``shared_preload_libraries``)."""
    import psycopg

    try:
        with psycopg.connect(dsn, autocommit=True) as db:
            db.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            db.execute("SELECT pg_stat_statements_reset()")
            db.execute("SELECT pg_stat_reset_shared('wal')")
        return True
    except psycopg.Error as exc:
        say(f"no server-side figures ({type(exc).__name__}: {str(exc).strip()[:120]})")
        return False


def server_stats(dsn: str) -> dict[str, Any]:
    """Time the server spent executing memgraph's statements, by kind, and the WAL written."""
    import psycopg

    kinds: dict[str, dict[str, float]] = {}
    with psycopg.connect(dsn, autocommit=True) as db:
        rows = db.execute(
            "SELECT query, calls, total_exec_time FROM pg_stat_statements "
            "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
        ).fetchall()
        wal = db.execute("SELECT wal_bytes, wal_write, wal_sync FROM pg_stat_wal").fetchone()
    for query, calls, total in rows:
        text = " ".join(str(query).split())
        kind = next((k for start, k in STATEMENT_KINDS if text.startswith(start)), "other")
        entry = kinds.setdefault(kind, {"calls": 0, "ms": 0.0})
        entry["calls"] += int(calls)
        entry["ms"] += float(total)
    assert wal is not None
    return {"statements": kinds, "wal_bytes": int(wal[0]), "wal_syncs": int(wal[2])}


def say(message: str) -> None:
    print(f"[multitenant] {message}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------ report
def markdown(
    runs: list[dict[str, Any]],
    args: argparse.Namespace,
    server: str,
    load: list[float],
    users: Users,
) -> str:
    env = environment()
    facts = sum(users.sizes[t] for t in users.templates)
    lines = [
        HEADING,
        "",
        f"Machine: {env['cpu']} ({env['nproc']} cores), {env['memory']}, Python {env['python']}. "
        f"Commit {env['commit']}"
        + (" plus uncommitted changes" if env.get("engine_dirty") else "")
        + f". {server}. "
        "1-minute load average at the start and end: " + ", ".join(f"{v:.2f}" for v in load) + ".",
        "",
        f"`python -m bench.multitenant` (see its docstring): {args.servers} server processes, "
        f"{args.scopes:,} scopes of {args.min_facts:,}-{args.max_facts:,} observations "
        f"(log-uniform over {args.templates} distinct contents; {facts:,} observations in all, "
        f"{args.dim}-dimensional vectors), {args.ops:,} operations drawn with Zipf({args.zipf:g}) "
        f"activity over the scopes, {args.writes:.0%} `remember` and the rest "
        "`recall(rerank=False)`. Routing *any*: each call to the server with the fewest "
        "outstanding calls, so a scope's calls land on every server (a stateless balancer); "
        "*sticky*: by a hash of the scope (the next server when it is down). Each server keeps "
        "its scopes in a `MemoryCache` of "
        f"{args.cache_mb:g} MB (`store.cacheMB`)."
        + (
            " One server is SIGKILLed once half of the operations are acknowledged; the "
            "balancer hands its queue to the others."
            if args.kill
            else ""
        ),
        "",
        "| store | throughput (ops/s) | remember p50 / p95 / p99 (ms) | recall p50 / p95 / p99 (ms) | acknowledged / failed | scopes opened / closed per server | RSS start → peak → end per server (MB) |",
        "| --- | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for run in runs:
        rem, rec = run["latency"]["remember"], run["latency"]["recall"]
        opened = ", ".join(f"{s['opened'] or '-'} / {s['closed'] or '-'}" for s in run["servers"])
        rss = "; ".join(
            f"{s['rss_start_mb']:.0f} → {s['rss_peak_mb']:.0f} → "
            + ("killed" if s["killed"] else f"{s['rss_end_mb']:.0f}")
            for s in run["servers"]
        )
        lines.append(
            f"| {run['store']} | {run['throughput']:,.0f} "
            f"| {rem['p50']:.1f} / {rem['p95']:.1f} / {rem['p99']:.1f} "
            f"| {rec['p50']:.1f} / {rec['p95']:.1f} / {rec['p99']:.1f} | {run['acked']:,} / {run['failed']} "
            f"| {opened} | {rss} |"
        )
    lines.append("")
    for run in runs:
        checks, killed = run["checks"], run["killed"]
        crash = ""
        if killed:
            flight = (
                f"a `{killed['in_flight']}` was in flight (unacknowledged)"
                if killed["in_flight"]
                else "nothing was in flight"
            )
            crash = (
                f" Server 0 was killed after {killed['after_s']:.1f} s ({killed['acked_before']:,} "
                f"operations acknowledged by then); {flight}, {killed['requeued']} queued calls "
                "went to the other servers, which carried on."
            )
        errors = f" Failed calls: {', '.join(run['errors'])}." if run["errors"] else ""
        database = run.get("database") or {}
        if database:
            kinds = database["statements"]
            total = sum(k["ms"] for k in kinds.values())
            writes = run["latency"]["remember"]["n"] or 1
            parts = ", ".join(
                f"{kind} {entry['ms'] / run['acked']:.2f}"
                for kind, entry in sorted(kinds.items(), key=lambda item: -item[1]["ms"])
            )
            errors += (
                f" The server spent {total / run['acked']:.2f} ms executing statements per "
                f"call ({parts}), wrote {database['wal_bytes'] / writes / 1024:.1f} KB of WAL "
                f"and flushed it {database['wal_syncs'] / writes:.2f} times per `remember`."
            )
        lines.append(
            f"**{run['store']}**: {run['acked']:,} calls in {run['wall_s']:.1f} s.{crash} "
            f"{checks['checked']:,} acknowledged writes to {checks['scopes']:,} scopes checked "
            f"afterwards: **{checks['missing']} missing**.{errors} Preparing the scopes took "
            f"{run['prepare_s']:.0f} s."
        )
        lines.append("")
    lines.append(
        "Rerun: `python -m bench.multitenant --write-results` (a throwaway PostgreSQL server unless "
        "`--dsn`; `--quick` for 200 scopes)."
    )
    lines.append("")
    return "\n".join(lines)


def write_results(section: str) -> None:
    """Replace this section of RESULTS.md (or add it), leaving other sections alone."""
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n\n"
    start = text.find(HEADING)
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        end = text.find("\n## ", start + len(HEADING))
        text = text[:start] + section + (text[end + 1 :] if end >= 0 else "")
    RESULTS.write_text(text)


# ------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.serve:
        return serve(args)
    from bench.store_compare import server_facts, throwaway_server

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    stores = [s.strip() for s in args.stores.split(",") if s.strip()]
    with contextlib.ExitStack() as stack:
        work = args.work or Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="memgraph-mt-"))
        )
        work.mkdir(parents=True, exist_ok=True)
        dsn = args.dsn
        if "postgres" in stores and dsn is None:
            dsn = stack.enter_context(throwaway_server())
        say("planning users and operations")
        users = plan_users(args, remembers_needed(args))
        ops = plan_ops(args, users)
        script = work / "script.json"
        script.write_bytes(
            orjson.dumps(
                [{"text": i.text, "reply": i.reply} for items in users.continuations for i in items]
            )
        )
        say(f"seeding {args.templates} template scopes")
        seed_templates(args, users, work / "templates")
        load = [os.getloadavg()[0]]
        runs = []
        for label in stores:
            for route in args.routes:
                args.route = route
                name = f"{'PostgreSQL' if label == 'postgres' else 'JSON files'}, {route}"
                if label == "postgres":
                    assert dsn is not None
                    say(f"copying {args.scopes:,} scopes inside PostgreSQL")
                    prepared = postgres_users(args, users, work / "templates", dsn)
                    where, store = work / "unused", dsn
                elif label == "files":
                    say(f"copying {args.scopes:,} scope directories")
                    prepared = files_users(args, users, work / "templates", work / "users")
                    for stale in (work / "users").glob(".copied-*"):
                        stale.unlink()  # the run below writes to them
                    where, store = work / "users", "files"
                else:
                    raise SystemExit(f"unknown store {label!r}; use postgres, files")
                runs.append(run_store(name, store, where, args, users, ops, script, prepared))
        load.append(os.getloadavg()[0])
        server = server_facts(dsn) if dsn else "No PostgreSQL"
        section = markdown(runs, args, server, load, users)
        (work / "results.json").write_bytes(orjson.dumps(runs, option=orjson.OPT_INDENT_2))
    print(section)
    if args.write_results:
        write_results(section)
        say(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
