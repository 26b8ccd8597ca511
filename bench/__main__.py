"""``python -m bench``: run the engine benchmark suite and write results.md + results.json."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from bench.options import NAME_WORKLOADS
from bench.report import write
from bench.suite import ALL_SCENARIOS, Options, run


def _ints(text: str) -> list[int]:
    values = []
    for part in text.split(","):
        part = part.strip().lower().replace("_", "")
        scale = 1
        if part.endswith("k"):
            part, scale = part[:-1], 1_000
        elif part.endswith("m"):
            part, scale = part[:-1], 1_000_000
        values.append(int(float(part) * scale))
    return values


def parse(argv: list[str] | None = None) -> Options:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="memgraph engine benchmarks (issue 5). Sizes are observations in scope.",
    )
    parser.add_argument("--sizes", type=_ints, help="e.g. 1k,10k,100k (default) or 1k,100k,1M")
    parser.add_argument("--dims", type=_ints, help="embedding dimensions (default 384,1536)")
    parser.add_argument(
        "--workloads",
        help="facts,conversation (default both; conversation runs at the first dim), "
        "and numbered,surname,prefix (names that share a word; --only names runs them)",
    )
    parser.add_argument(
        "--only", help=f"comma list of scenarios: {', '.join(ALL_SCENARIOS)} (default all)"
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes for a CI smoke run")
    parser.add_argument("--out", type=Path, default=Options().out, help="default bench/out/")
    parser.add_argument(
        "--build",
        choices=("auto", "api", "seed"),
        default="auto",
        help="how scopes are filled: api (remember_many), seed (store-level), auto (api <= 1k)",
    )
    parser.add_argument("--queries", type=int, help="recall queries per size (default 200)")
    parser.add_argument("--remembers", type=int, help="timed remembers per size (default 100)")
    parser.add_argument("--keep-scopes", action="store_true", help="keep the built scopes in OUT")
    parser.add_argument("--seed", type=int, default=7, help="workload seed")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)

    opts = Options.quick_defaults() if args.quick else Options()
    if args.sizes:
        opts.sizes = sorted(set(args.sizes))
    if args.dims:
        opts.dims = args.dims
    if args.only:
        only = {s.strip() for s in args.only.split(",") if s.strip()}
        unknown = only - set(ALL_SCENARIOS)
        if unknown:
            parser.error(f"unknown scenario(s) {', '.join(sorted(unknown))}")
        opts.only = only
        if not args.workloads:
            opts.workloads = ["facts", "conversation"] if "conversation" in only else ["facts"]
            if "names" in only:
                opts.workloads = [w for w in opts.workloads if only - {"names"}]
                opts.workloads += list(NAME_WORKLOADS)
        if only == {"conversation"}:
            opts.only = set(ALL_SCENARIOS)
            opts.workloads = ["conversation"]
    if args.workloads:
        opts.workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    opts.out = args.out
    opts.build = args.build
    opts.keep_scopes = args.keep_scopes
    opts.seed = args.seed
    if args.queries:
        opts.queries = args.queries
    if args.remembers:
        opts.remembers = args.remembers
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    return opts


def main(argv: list[str] | None = None) -> int:
    opts = parse(argv)
    document = run(opts)
    json_path, md_path = write(document, opts.out)
    print(md_path.read_text())
    print(f"wrote {md_path} and {json_path}", file=sys.stderr)
    failed = [t for t in document["targets"] if t["result"] == "FAIL"]
    if failed:
        print(f"{len(failed)} target(s) not met (see the table)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
