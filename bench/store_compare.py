"""JSON files vs PostgreSQL: the same workload through the public ``Memory`` API on both stores.

Run::

    python -m bench.store_compare                       # 10k and 100k, a throwaway server
    python -m bench.store_compare --sizes 10k --dsn postgresql://user@host/db
    python -m bench.store_compare --write-results       # also update bench/RESULTS.md

For each size N (observations in scope):

1. **Seed** one scope of N observations of the seeded ``facts`` workload
   (:mod:`bench.workload`) into the directory store at the store level
   (:func:`bench.build.seed_scope`, a checkpointed scope as a long run of
   ``remember`` calls would leave), then copy it to PostgreSQL with
   :func:`memgraph.admin.migrate.migrate` (verified by counts and checksum). Both
   stores start from the identical scope.
2. **Cold open**: a new ``Memory`` on each store, timed to the end of its first
   ``recall(rerank=False)``
   (after one checkpoint on each, so both hold their approximate vector index
   as a long-lived scope would).
3. **Ingest marginal cost**: ``--remembers`` new texts through
   ``Memory.remember`` on each store (the scripted provider answers each
   extraction from a dict; its time is subtracted for the engine-only figure).
4. **Recall**: ``--recalls`` seeded queries through ``Memory.recall(rerank=False)``
   (tiers 1+2: names, keywords, vectors), and the same queries each right
   after another handle on the same store committed a write (the scale-out
   case: the recall must first pick up the other server's commit).

Steps 2-4 alternate between the stores call by call, so other load on the
machine falls on both alike.

The PostgreSQL server runs with its default durability settings (fsync on,
synchronous_commit on) on the same machine, over TCP on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.build import seed_scope
from bench.measure import Samples, environment, summarize, timed
from bench.scripted import bench_provider
from bench.workload import Item, make_workload
from memgraph import Memory
from memgraph.admin.migrate import migrate
from memgraph.llm_calls.provider import Provider
from memgraph.store.pg_schema import mask_dsn

RESULTS = Path(__file__).resolve().with_name("RESULTS.md")
HEADING = "## JSON files vs PostgreSQL"
SCOPE = "bench"
COLD_OPENS = 3


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.store_compare", description=__doc__)
    parser.add_argument("--sizes", default="10k,100k", help="observations in scope (10k,100k)")
    parser.add_argument("--dim", type=int, default=384, help="embedding dimension (384)")
    parser.add_argument("--remembers", type=int, default=200, help="timed remember calls (200)")
    parser.add_argument("--recalls", type=int, default=300, help="timed recall calls (300)")
    parser.add_argument("--seed", type=int, default=7, help="workload seed (7)")
    parser.add_argument("--dsn", default=os.environ.get("MEMGRAPH_BENCH_POSTGRES_DSN"))
    parser.add_argument("--write-results", action="store_true", help=f"update {RESULTS.name}")
    args = parser.parse_args(argv)
    args.sizes = [
        int(float(s.lower().rstrip("k")) * (1000 if "k" in s.lower() else 1))
        for s in args.sizes.split(",")
    ]
    return args


# ------------------------------------------------------------------ a throwaway server
@contextlib.contextmanager
def throwaway_server() -> Iterator[str]:
    """A fresh PostgreSQL cluster on 127.0.0.1 (as ``postgres`` when root), default settings."""
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not candidates:
        raise SystemExit("no PostgreSQL server binaries; pass --dsn")
    binaries = candidates[-1].parent
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    root = Path(tempfile.mkdtemp(prefix="memgraph-bench-pg-"))
    if as_user:
        owner = pwd.getpwnam("postgres")
        os.chown(root, owner.pw_uid, owner.pw_gid)
    data = root / "data"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    try:
        subprocess.run(
            [
                *as_user,
                str(binaries / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-locale",
            ],
            check=True,
            capture_output=True,
        )
        subprocess.run(
            [
                *as_user,
                str(binaries / "pg_ctl"),
                "-D",
                str(data),
                "-l",
                str(root / "log"),
                "-w",
                "-o",
                f"-c listen_addresses=127.0.0.1 -p {port} -k {root}",
                "start",
            ],
            check=True,
            capture_output=True,
        )
        subprocess.run(
            [
                str(binaries / "createdb"),
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
                "-U",
                "postgres",
                "bench",
            ],
            check=True,
            capture_output=True,
        )
        yield f"postgresql://postgres@127.0.0.1:{port}/bench"
    finally:
        subprocess.run(
            [*as_user, str(binaries / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"],
            capture_output=True,
            check=False,
        )
        shutil.rmtree(root, ignore_errors=True)


# ------------------------------------------------------------------ measuring
def open_memory(store: str, root: Path, provider: Provider) -> Memory:
    if store == "files":
        return Memory(root, scope=SCOPE, provider=provider, config={}, store="files")
    return Memory(scope=SCOPE, provider=provider, config={}, store=store)


def ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def settle(memory: Memory) -> None:
    """Wait for a background vector-index build, so no timing pays for another's."""
    wait = getattr(memory, "wait_for_index", None)
    if wait is not None:
        wait()


def measure(
    stores: dict[str, str],
    root: Path,
    new: list[Item],
    foreign: list[Item],
    queries: list[str],
    dim: int,
) -> dict[str, dict[str, Any]]:
    """Cold open, marginal remember, recall, and recall after a foreign write, per store.

    The stores take turns call by call, so load from anything else on the
    machine falls on both alike.
    """
    results: dict[str, dict[str, Any]] = {label: {"store": label} for label in stores}
    for store in stores.values():  # as a long-lived scope would be: its vector index saved
        provider, _, _, _ = bench_provider(dim)
        with open_memory(store, root, provider) as memory:
            memory.stats()
            settle(memory)
            memory.checkpoint()
    opens: dict[str, list[float]] = {label: [] for label in stores}
    for turn in range(COLD_OPENS):
        for label, store in stores.items():
            provider, _, _, _ = bench_provider(dim)
            gc.collect()
            started = time.perf_counter()
            with open_memory(store, root, provider) as memory:
                memory.recall(queries[turn % len(queries)], rerank=False)
                opens[label].append(time.perf_counter() - started)
                results[label]["observations"] = memory.stats()["observations"]
                settle(memory)
    with contextlib.ExitStack() as stack:
        sides = {}
        for label, store in stores.items():
            provider, chat, _, clock = bench_provider(dim)
            other_provider, other_chat, _, _ = bench_provider(dim)
            chat.script(new)
            other_chat.script(foreign)
            memory = stack.enter_context(open_memory(store, root, provider))
            other = stack.enter_context(open_memory(store, root, other_provider))
            memory.stats()
            other.stats()
            settle(memory)
            settle(other)
            sides[label] = (memory, other, chat, clock, Samples(), Samples(), Samples())
        for item in new:
            for memory, _, _, clock, writes, _, _ in sides.values():
                timed(clock, writes, functools.partial(memory.remember, item.text))
        for query in queries:
            for memory, _, _, clock, _, recalls, _ in sides.values():
                timed(clock, recalls, functools.partial(memory.recall, query, rerank=False))
        for item, query in zip(foreign, queries, strict=False):
            for memory, other, _, clock, _, _, after in sides.values():
                other.remember(item.text)  # another app server commits...
                timed(clock, after, functools.partial(memory.recall, query, rerank=False))
        for label, (_, _, chat, _, writes, recalls, after) in sides.items():
            if chat.misses:
                raise SystemExit(f"the scripted chat missed {chat.misses} extractions ({label})")
            results[label].update(
                cold_open_ms=ms(sorted(opens[label])[len(opens[label]) // 2]),
                remember={"wall": summarize(writes.wall), "engine": summarize(writes.engine)},
                recall={"wall": summarize(recalls.wall), "engine": summarize(recalls.engine)},
                recall_after_foreign_write={"wall": summarize(after.wall)},
            )
    return results


def warm_up(dim: int) -> None:
    """Load what every first ``Memory`` loads (tokenizer, modules) before timing anything."""
    provider, _, _, _ = bench_provider(dim)
    with Memory(scope="warmup", provider=provider, config={}, store="memory") as memory:
        memory.stats()


def run_size(size: int, args: argparse.Namespace, dsn: str, work: Path) -> dict[str, Any]:
    workload = make_workload("facts", args.seed)
    items = list(workload.until(size))
    root = work / f"files-{size}"
    _, _, embedder, _ = bench_provider(args.dim)
    say(f"{size:,}: seeding the directory store ({len(items):,} texts)")
    seeded = seed_scope(root, SCOPE, items, embedder)
    say(f"{size:,}: copying to PostgreSQL with memgraph.admin.migrate")
    started = time.perf_counter()
    [report] = migrate(str(root), dsn, [SCOPE], replace=True)
    copy_seconds = time.perf_counter() - started
    new = workload.take(args.remembers)
    foreign = workload.take(args.recalls)
    queries = [query for _, query in workload.queries(args.recalls)]
    del items
    results: dict[str, Any] = {
        "size": size,
        "seed_seconds": round(seeded.seconds, 2),
        "migrate_seconds": round(copy_seconds, 2),
        "checksum": report.checksum,
        "stores": [],
    }
    say(f"{size:,}: measuring both stores, turn by turn")
    stores = {"JSON files": "files", "PostgreSQL": dsn}
    measured = measure(stores, root, new, foreign, queries, args.dim)
    results["stores"] = [measured[label] for label in stores]
    return results


def say(message: str) -> None:
    print(f"[store_compare] {message}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------ reporting
def server_facts(dsn: str) -> str:
    import psycopg

    with psycopg.connect(dsn) as connection:
        row = connection.execute(
            "SELECT split_part(version(), ' ', 2), current_setting('fsync'), "
            "current_setting('synchronous_commit'), current_setting('shared_buffers')"
        ).fetchone()
    assert row is not None
    return (
        f"PostgreSQL {row[0]} on the same machine over TCP 127.0.0.1; fsync={row[1]}, "
        f"synchronous_commit={row[2]}, shared_buffers={row[3]}"
    )


def markdown(
    runs: list[dict[str, Any]], args: argparse.Namespace, server: str, load: list[float]
) -> str:
    env = environment()
    lines = [
        HEADING,
        "",
        f"Machine: {env['cpu']} ({env['nproc']} cores), {env['memory']}, Python {env['python']},"
        f" numpy {env['numpy']}. Commit {env['commit']}"
        + (" plus uncommitted changes" if env.get("engine_dirty") else "")
        + f". {server}. 1-minute load average at the start and end of the run: "
        + ", ".join(f"{value:.2f}" for value in load)
        + ".",
        "",
        f"Workload: the seeded `facts` workload (seed {args.seed}), {args.dim}-dimensional "
        "scripted embeddings, the scripted chat model (a dict lookup, its time subtracted for "
        "the engine-only columns). Each scope was seeded at the store level into the directory "
        "store (`bench.build.seed_scope`), then copied to PostgreSQL with `memgraph migrate` "
        "(verified by counts and checksum), so both stores start from the same scope; one "
        "`Memory.checkpoint()` on each then saves its approximate vector index, as a "
        "long-lived scope would have it. Background index builds are waited for outside the "
        "timings. "
        "Then, through the public `Memory` API, the two stores taking turns call by call (so "
        f"other load on the machine falls on both alike): {args.remembers} new `remember` "
        f"calls, {args.recalls} `recall(rerank=False)` calls, and the same recalls each right "
        "after another handle committed a write (what an app server sees behind a load "
        "balancer). Times in ms.",
        "",
        "| observations | store | open + first recall (median of 3) | remember p50 / p95 (engine p50) | remember mean "
        "| recall p50 / p95 | recall after a foreign write p50 / p95 |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for run in runs:
        for store in run["stores"]:
            wall, engine = store["remember"]["wall"], store["remember"]["engine"]
            recall = store["recall"]["wall"]
            after = store["recall_after_foreign_write"]["wall"]
            lines.append(
                f"| {run['size']:,} | {store['store']} | {store['cold_open_ms']:.0f} "
                f"| {wall['p50']:.2f} / {wall['p95']:.2f} ({engine['p50']:.2f}) "
                f"| {wall['mean']:.2f} | {recall['p50']:.2f} / {recall['p95']:.2f} "
                f"| {after['p50']:.2f} / {after['p95']:.2f} |"
            )
    lines += [
        "",
        "PostgreSQL's extra cost at p50 (ms): " + "; ".join(_deltas(run) for run in runs) + ".",
    ]
    lines += [
        "",
        "Where it goes: a `remember` through PostgreSQL waits on the server four times: "
        "two catch-ups (one indexed query each, where the files need a `stat`), taking the "
        "advisory lock together with a third catch-up (one round trip, a pipeline), and the "
        "commit (one statement and a WAL flush); the unlock is sent without waiting. A "
        "`recall` waits once (a catch-up). The server shares the two cores with the benchmark "
        "here, so every round trip also costs context switches. A cold open is one round trip "
        "(a pipeline) bringing the checkpoint's index and, for a scope of up to 1 MiB of image "
        "and 20,000 vectors, its records and vectors; a larger scope reads the records and "
        "vector lists its calls need, and the rest in one pass once it is in active use, where "
        "the files memory-map them.",
        "",
        "Seeding and copying: "
        + "; ".join(
            f"{run['size']:,}: seed {run['seed_seconds']} s, migrate to PostgreSQL "
            f"{run['migrate_seconds']} s (sha256 {run['checksum'][:12]}…)"
            for run in runs
        )
        + ".",
        "",
        "Rerun: `python -m bench.store_compare --write-results` (starts a throwaway server; "
        "`--dsn postgresql://…` uses yours, `--sizes 10k` for a quick run).",
        "",
    ]
    return "\n".join(lines)


def _deltas(run: dict[str, Any]) -> str:
    files, postgres = run["stores"]

    def delta(*path: str) -> str:
        a, b = files, postgres
        for key in path:
            a, b = a[key], b[key]
        return f"{b - a:+.2f}"

    cold = postgres["cold_open_ms"] / max(files["cold_open_ms"], 1e-9)
    return (
        f"{run['size']:,}: remember {delta('remember', 'wall', 'p50')}, "
        f"recall {delta('recall', 'wall', 'p50')}, after a foreign write "
        f"{delta('recall_after_foreign_write', 'wall', 'p50')}, cold open x{cold:.1f}"
    )


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


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the cleanups below
    with contextlib.ExitStack() as stack:
        dsn = args.dsn or stack.enter_context(throwaway_server())
        say(f"PostgreSQL at {mask_dsn(dsn)}")
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="memgraph-bench-")))
        warm_up(args.dim)
        load = [os.getloadavg()[0]]
        runs = [run_size(size, args, dsn, work) for size in args.sizes]
        load.append(os.getloadavg()[0])
        section = markdown(runs, args, server_facts(dsn), load)
    print(section)
    if args.write_results:
        write_results(section)
        say(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
