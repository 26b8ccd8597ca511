"""Measuring helpers: engine-only timing, percentiles, resident memory, file sizes, tokens."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from bench.scripted import ProviderClock

__all__ = [
    "Samples",
    "environment",
    "file_sizes",
    "percentile",
    "rss_bytes",
    "summarize",
    "timed",
    "token_count",
]

T = TypeVar("T")
REPO = Path(__file__).resolve().parent.parent


@dataclass
class Samples:
    """Per-call times (seconds): wall, engine (wall − provider) and engine CPU.

    Engine CPU is the process CPU time of the call minus the provider's (JSON
    only). It counts every thread, and OpenBLAS worker threads spin-wait after
    a matrix product, so it can exceed wall time: read it as a rough second
    opinion when other work shares the cores, not as a target.
    """

    wall: list[float] = field(default_factory=list)
    engine: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def add(
        self, wall: float, provider: float, cpu: float = 0.0, provider_cpu: float = 0.0
    ) -> None:
        self.wall.append(wall)
        self.engine.append(max(wall - provider, 0.0))
        self.cpu.append(max(cpu - provider_cpu, 0.0))


def timed(clock: ProviderClock, samples: Samples, call: Callable[[], T]) -> T:
    """Run ``call``; record its wall time, minus provider time, and its engine CPU time."""
    before, before_cpu = clock.seconds, clock.cpu
    started, cpu = time.perf_counter(), time.process_time()
    result = call()
    wall, used = time.perf_counter() - started, time.process_time() - cpu
    samples.add(wall, clock.seconds - before, used, clock.cpu - before_cpu)
    return result


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if values else float("nan")


def summarize(values: Sequence[float], scale: float = 1000.0) -> dict[str, float]:
    """median / p95 / mean / max of ``values`` times ``scale`` (seconds → ms by default)."""
    if not values:
        return {}
    array = np.asarray(values, dtype=np.float64) * scale
    return {
        "p50": round(float(np.percentile(array, 50)), 3),
        "p95": round(float(np.percentile(array, 95)), 3),
        "mean": round(float(array.mean()), 3),
        "max": round(float(array.max()), 3),
        "n": len(values),
    }


def rss_bytes() -> dict[str, int]:
    """VmRSS and VmHWM (peak) of this process, from /proc/self/status."""
    out: dict[str, int] = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) * 1024
    except OSError:  # not Linux: fall back to the peak from resource
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        out = {"VmRSS": peak, "VmHWM": peak}
    return out


def file_sizes(path: Path) -> dict[str, int]:
    """Size of every regular file directly in ``path`` (lock and temp files excluded)."""
    if not path.is_dir():
        return {}
    return {
        entry.name: entry.stat().st_size
        for entry in sorted(path.iterdir())
        if entry.is_file() and not entry.name.startswith(".")
    }


_COUNTER: Callable[[str], int] | None = None


def token_count(text: str) -> int:
    """Tokens of ``text`` for gpt-4o-mini (offline: the bundled cl100k, see memgraph.llm_calls.tokens)."""
    global _COUNTER
    if _COUNTER is None:
        import logging

        from memgraph.llm_calls.tokens import token_counter

        logger = logging.getLogger("memgraph")
        level = logger.level
        logger.setLevel(logging.ERROR)  # the offline fallback warning is expected here
        try:
            _COUNTER = token_counter("gpt-4o-mini")
        finally:
            logger.setLevel(level)
    return _COUNTER(text)


def _git(*args: str) -> str:
    try:
        done = subprocess.run(
            ["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip()


def environment() -> dict[str, Any]:
    """Machine, interpreter and commit facts for the report."""
    import numpy

    dirty = _git("status", "--porcelain", "--", "memgraph", "providers")
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        first = Path("/proc/meminfo").read_text().splitlines()[0]
        memory = f"{int(first.split()[1]) / 1024 / 1024:.1f} GiB"
    except (OSError, IndexError, ValueError):
        pass
    import memgraph

    commit = _git("rev-parse", "--short", "HEAD") or os.environ.get("BENCH_COMMIT", "unknown")
    return {
        "uname": " ".join(platform.uname()),
        "cpu": cpu,
        "nproc": os.cpu_count(),
        "memory": memory,
        "python": sys.version.split()[0],
        "numpy": numpy.__version__,
        "commit": commit,
        "engine_path": str(Path(memgraph.__file__).resolve().parent),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "engine_dirty": bool(dirty),
        "dirty_files": dirty.splitlines(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
