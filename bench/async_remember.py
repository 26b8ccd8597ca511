"""Concurrent ``remember`` from asyncio when every model call takes 200 ms.

A local OpenAI-compatible test server (``tests/openai_server.py``) answers each
chat request after ``--delay`` seconds (embeddings at once). ``--writes`` texts
are remembered into a fresh scope with the ``openai`` provider, three ways:

* ``Memory.remember`` one after another (what a loop of blocking calls costs);
* ``Memory.remember`` in worker threads (``asyncio.to_thread``, gathered): as
  many calls at once as the default thread pool has threads (``min(32, CPUs + 4)``);
* ``AsyncMemory.remember``, gathered: the model calls are awaited over HTTP
  (``acomplete``), so all of them overlap, and only the commits queue.

Each run checks that every write is stored (one episode per text).

    python -m bench.async_remember                 # 50 writes, 200 ms per model call
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from multiprocessing.connection import Connection
from pathlib import Path

from memgraph import AsyncMemory, Memory
from tests import openai_server
from tests.openai_server import OpenAITestServer

# The test server listens with socketserver's default backlog of 5 connections: 50
# clients connecting at once would wait for SYN retransmits (a second or more), which
# measures the server, not memgraph.
openai_server._HTTPServer.request_queue_size = 256


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.async_remember", description=__doc__)
    parser.add_argument("--writes", type=int, default=50)
    parser.add_argument("--delay", type=float, default=0.2, help="seconds per chat reply")
    return parser.parse_args(argv)


def serve(delay: float, pipe: Connection) -> None:
    """Run the test server in its own process, so it does not share the GIL with
    the client being measured; it stops when the pipe is written to."""
    with OpenAITestServer() as server:
        server.chat_delay = delay
        pipe.send(server.base_url)
        pipe.recv()


def texts(count: int) -> list[str]:
    return [f"Person{i} works at Company{i % 7} and lives in City{i % 5}." for i in range(count)]


def serial(root: Path, said: list[str]) -> float:
    with Memory(root, "bench", provider="openai") as memory:
        memory.stats()  # open the scope before the clock starts
        started = time.perf_counter()
        for text in said:
            memory.remember(text)
        return time.perf_counter() - started


async def threads(root: Path, said: list[str]) -> float:
    with Memory(root, "bench", provider="openai") as memory:
        memory.stats()
        started = time.perf_counter()
        await asyncio.gather(*(asyncio.to_thread(memory.remember, text) for text in said))
        return time.perf_counter() - started


async def awaited(root: Path, said: list[str]) -> float:
    async with AsyncMemory(root, "bench", provider="openai") as memory:
        await memory.stats()
        started = time.perf_counter()
        await asyncio.gather(*(memory.remember(text) for text in said))
        return time.perf_counter() - started


def stored(root: Path) -> int:
    with Memory(root, "bench", provider="openai") as memory:
        return memory.stats()["episodes"]


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    said = texts(args.writes)
    runs: list[tuple[str, Callable[[Path, list[str]], float | Awaitable[float]]]] = [
        ("Memory.remember, one after another", serial),
        ("Memory.remember in asyncio.to_thread, gathered", threads),
        ("AsyncMemory.remember, gathered", awaited),
    ]
    ours, theirs = multiprocessing.Pipe()
    server = multiprocessing.Process(target=serve, args=(args.delay, theirs), daemon=True)
    server.start()
    try:
        os.environ["MEMGRAPH_BASE_URL"] = ours.recv()
        os.environ.pop("OPENAI_API_KEY", None)  # a local server needs none
        measure(args, said, runs)
    finally:
        ours.send("stop")
        server.join(timeout=10)
    return 0


def measure(
    args: argparse.Namespace,
    said: list[str],
    runs: list[tuple[str, Callable[[Path, list[str]], float | Awaitable[float]]]],
) -> None:
    with tempfile.TemporaryDirectory() as work:
        print(
            f"# {args.writes} concurrent remembers, model replies after "
            f"{args.delay * 1000:.0f} ms (serial floor {args.writes * args.delay:.1f} s)\n"
        )
        print("| run | wall time | writes stored |")
        print("|---|---|---|")
        for number, (name, run) in enumerate(runs):
            root = Path(work, str(number))
            result = run(root, said)
            seconds = asyncio.run(result) if asyncio.iscoroutine(result) else result
            print(f"| {name} | {seconds:.2f} s | {stored(root)} / {args.writes} |")
        print(f"\nthread pool here: {min(32, (os.cpu_count() or 1) + 4)} threads")


if __name__ == "__main__":
    raise SystemExit(main())
