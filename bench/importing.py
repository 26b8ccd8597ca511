"""How long ``memgraph import`` takes when every model call takes 300 ms.

A local OpenAI-compatible test server (``tests/openai_server.py``) answers
every chat request after ``--delay`` seconds (embeddings at once); a JSONL
file of ``--messages`` messages (users and assistants alternating, every one
extracted: ``assistant="extract"``) is imported through the public
``import_file`` with the ``openai`` provider, once at ``--concurrency`` and
once serially. The serial run imports ``--serial-sample`` messages and
extrapolates (``--full-serial`` imports them all: 300 s at the defaults).

    python -m bench.importing                      # 1,000 messages, 300 ms, concurrency 16
    python -m bench.importing --full-serial

Target (issue 16): 1,000 messages at concurrency 16 in under 60 s.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from memgraph import Memory
from memgraph.importing import ImportOptions, import_file
from tests.openai_server import OpenAITestServer

TARGET_S = 60.0


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.importing", description=__doc__)
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--delay", type=float, default=0.3, help="seconds per chat reply")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--serial-sample", type=int, default=50)
    parser.add_argument("--full-serial", action="store_true")
    parser.add_argument("--out", type=Path, help="write the numbers as JSON here")
    return parser.parse_args(argv)


def conversation(count: int) -> list[dict[str, Any]]:
    """Alternating user and assistant messages about people, places and work."""
    messages = []
    for i in range(count):
        if i % 2 == 0:
            content = f"My colleague Person{i} works at Company{i % 37} and lives in City{i % 11}."
        else:
            content = f"Noted: Person{i - 1} is at Company{(i - 1) % 37}. Anything else?"
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": content})
    return messages


def timed_import(root: Path, path: Path, concurrency: int) -> dict[str, Any]:
    with Memory(root, "bench", provider="openai") as memory:
        started = time.perf_counter()
        report = import_file(
            memory, path, options=ImportOptions(concurrency=concurrency, assistant="extract")
        )
        seconds = time.perf_counter() - started
    return {
        "messages": report.imported,
        "concurrency": concurrency,
        "seconds": round(seconds, 2),
        "per_second": round(report.imported / seconds, 1),
    }


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    with tempfile.TemporaryDirectory() as work, OpenAITestServer() as server:
        server.chat_delay = args.delay
        os.environ["MEMGRAPH_BASE_URL"] = server.base_url
        os.environ.pop("OPENAI_API_KEY", None)  # a local server needs none
        messages = conversation(args.messages)
        full = Path(work, "chat.jsonl")
        full.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages))
        concurrent = timed_import(Path(work, "concurrent"), full, args.concurrency)
        sample = args.messages if args.full_serial else min(args.serial_sample, args.messages)
        part = Path(work, "sample.jsonl")
        part.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages[:sample]))
        serial = timed_import(Path(work, "serial"), part, 1)
        serial["extrapolated_seconds"] = round(serial["seconds"] * args.messages / sample, 1)
        chats = len(server.requests_to("chat"))
    verdict = "PASS" if concurrent["seconds"] < TARGET_S else "FAIL"
    print(f"# import of {args.messages} messages, chat replies after {args.delay * 1000:.0f} ms\n")
    print("| run | messages | seconds | messages/s |")
    print("|---|---|---|---|")
    print(
        f"| concurrency {args.concurrency} | {concurrent['messages']} | {concurrent['seconds']} "
        f"| {concurrent['per_second']} |"
    )
    note = "" if args.full_serial else f" (extrapolated from {sample}: {serial['seconds']} s)"
    print(
        f"| serial | {args.messages} | {serial['extrapolated_seconds']}{note} "
        f"| {serial['per_second']} |"
    )
    print(f"\ntarget: concurrency {args.concurrency} under {TARGET_S:.0f} s: {verdict}")
    print(f"chat requests served: {chats}")
    if args.out is not None:
        record = {"delay": args.delay, "concurrent": concurrent, "serial": serial}
        args.out.write_bytes(orjson.dumps(record, option=orjson.OPT_INDENT_2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
