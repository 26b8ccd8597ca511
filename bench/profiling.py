"""Profile the engine's hot paths with pyinstrument (a dev tool: ``pip install pyinstrument``).

``python -m bench.profiling --size 100k --what remember,recall,open`` builds
(seeds) a scope, then profiles ``remember`` calls, ``recall(rerank=False)``
calls and an in-process open + first recall, writing one text and one HTML
report per path into ``--out`` (default ``bench/out/profile``). The provider
is the bench provider, so what remains is the engine.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.__main__ import _ints
from bench.build import build_scope, open_memory
from bench.measure import REPO
from bench.scripted import bench_provider
from bench.workload import make_workload


def _profiler() -> Any:
    try:
        from pyinstrument import Profiler
    except ImportError:
        sys.exit("pyinstrument is not installed: .venv/bin/pip install pyinstrument")
    return Profiler(interval=0.0005)


def _save(profiler: Any, out: Path, name: str) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    text = profiler.output_text(unicode=True, color=False, show_all=False)
    (out / f"{name}.txt").write_text(text)
    (out / f"{name}.html").write_text(profiler.output_html())
    return out / f"{name}.txt"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profiling")
    parser.add_argument("--size", type=lambda s: _ints(s)[0], default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--workload", default="facts")
    parser.add_argument("--what", default="remember,recall,open")
    parser.add_argument("--count", type=int, default=100, help="calls per profiled path")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "profile")
    parser.add_argument("--build", default="seed", choices=("auto", "api", "seed"))
    args = parser.parse_args(argv)
    what = {w.strip() for w in args.what.split(",")}

    root = args.out / "scopes"
    scope = f"profile-{args.workload}-{args.dim}-{args.size}"
    shutil.rmtree(root / scope, ignore_errors=True)
    workload = make_workload(args.workload)
    build_scope(root, scope, workload, args.size, args.dim, args.build)
    queries = [q for _, q in workload.queries(args.count)]
    label = f"{args.workload}-{args.dim}-{args.size}"
    written = []
    try:
        if "open" in what:
            provider, *_ = bench_provider(args.dim)
            profiler = _profiler()
            profiler.start()
            with open_memory(root, scope, provider) as memory:
                memory.recall(queries[0], rerank=False)
            profiler.stop()
            written.append(_save(profiler, args.out, f"open-{label}"))
        provider, chat, _embedder, _clock = bench_provider(args.dim)
        with open_memory(root, scope, provider) as memory:
            for query in queries[:5]:
                memory.recall(query, rerank=False)
            memory.wait_for_index()  # as the suite does: profile the steady state
            reads: dict[str, Callable[..., Any]] = {
                "recall": memory.recall,
                "search": memory.search,
            }
            for name, read in reads.items():
                if name not in what:
                    continue
                profiler = _profiler()
                profiler.start()
                for query in queries:
                    read(query, rerank=False)
                profiler.stop()
                written.append(_save(profiler, args.out, f"{name}-{label}"))
            if "remember" in what:
                items = workload.take(args.count + 5)
                chat.script(items)
                for item in items[:5]:
                    memory.remember(item.text)
                profiler = _profiler()
                profiler.start()
                for item in items[5:]:
                    memory.remember(item.text)
                profiler.stop()
                written.append(_save(profiler, args.out, f"remember-{label}"))
            if "bulk" in what:
                items = workload.take(args.count)
                chat.script(items)
                profiler = _profiler()
                profiler.start()
                memory.remember_many([item.text for item in items])
                profiler.stop()
                written.append(_save(profiler, args.out, f"bulk-{label}"))
    finally:
        shutil.rmtree(root / scope, ignore_errors=True)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
