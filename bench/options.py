"""Options of a suite run, and the context the scenarios of one configuration share."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.build import BATCH
from bench.measure import REPO
from bench.scripted import BenchChat, ProviderClock
from bench.workload import Workload
from memgraph import Memory

__all__ = ["ALL_SCENARIOS", "NAME_WORKLOADS", "WRITE_LIMIT", "Context", "Options"]

ALL_SCENARIOS = (
    "disk",
    "recall",
    "coldopen",
    "rss",
    "remember",
    "tokens",
    "bulk",
    "conversation",
    "names",
)
NAME_WORKLOADS = ("numbered", "surname", "prefix")  # bench.names; run by the names scenario
WRITE_LIMIT = 100_000  # sizes above this get the read scenarios only (recall, cold open, disk, rss)


@dataclass
class Options:
    """What to run: sizes are observations in scope; budgets bound each scenario's time."""

    sizes: list[int] = field(default_factory=lambda: [1_000, 10_000, 100_000])
    dims: list[int] = field(default_factory=lambda: [384, 1536])
    workloads: list[str] = field(default_factory=lambda: ["facts", "conversation"])
    only: set[str] = field(default_factory=lambda: set(ALL_SCENARIOS))
    out: Path = REPO / "bench" / "out"
    build: str = "auto"
    queries: int = 200
    warmup: int = 10
    remembers: int = 100
    recall_budget_s: float = 15.0  # per API (recall, search) and configuration
    remember_budget_s: float = 20.0
    min_samples: int = 20
    cold_runs: int = 3
    cold_queries: int = 20
    bulk_texts: int = 20_000
    bulk_batch: int = BATCH
    bulk_budget_s: float = 30.0
    keep_scopes: bool = False
    quick: bool = False
    seed: int = 7

    @classmethod
    def quick_defaults(cls) -> Options:
        return cls(
            sizes=[200, 1_000],
            dims=[384],
            queries=20,
            warmup=2,
            remembers=10,
            min_samples=5,
            cold_runs=1,
            cold_queries=3,
            bulk_texts=200,
            bulk_budget_s=5.0,
            quick=True,
        )


@dataclass
class Context:
    """What the scenarios of one (workload, dim, size) share."""

    options: Options
    workload: Workload
    dim: int
    size: int
    root: Path
    scope: str
    memory: Memory
    chat: BenchChat
    clock: ProviderClock
    result: dict[str, Any]

    @property
    def scope_dir(self) -> Path:
        return self.root / self.scope
