"""``python -m bench.quality``: recall quality of search() and recall() on labelled conversations."""

from __future__ import annotations

import argparse
import logging
import sys
from collections import Counter
from pathlib import Path

from bench.quality.dataset import CATEGORIES, DATA_DIR, Conversation, check, load
from bench.quality.locomo import load_locomo
from bench.quality.report import failures, markdown, write_json
from bench.quality.run import FEEDS, Settings, evaluate, first_sessions

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO / "bench" / "out" / "quality.json"
QUICK_CONVERSATIONS = 2
QUICK_QUESTIONS = 40


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.quality",
        description="Recall quality on multi-session conversations (issue 11): search() against "
        "a BM25 baseline over the raw turns, and whether recall() contains the gold answer.",
    )
    parser.add_argument("--data", type=Path, default=DATA_DIR, help="folder of *.json files")
    parser.add_argument(
        "--locomo",
        type=Path,
        metavar="FILE",
        help="read a downloaded LoCoMo locomo10.json instead of --data (see bench/quality/locomo.py)",
    )
    parser.add_argument("--conversations", help="comma list of conversation ids (default all)")
    parser.add_argument("--only", choices=("search", "recall"), help="measure one API only")
    parser.add_argument("--check", action="store_true", help="validate the data and exit")
    parser.add_argument(
        "--failures", type=int, default=0, metavar="N", help="print the N worst per category"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"CI smoke run: first {QUICK_CONVERSATIONS} conversations, "
        f"first {QUICK_QUESTIONS} questions each",
    )
    parser.add_argument(
        "--bulk", action="store_true", help="feed each session with remember_many when possible"
    )
    parser.add_argument(
        "--feed",
        choices=FEEDS,
        default="turns",
        help="how the conversation is remembered: each turn with its speaker (default), "
        'each turn as a "Speaker: text" line, or each session as one transcript text '
        "(search is measured when the engine keeps its turns apart)",
    )
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="a memgraph config (agency.json shape) whose provider extracts, embeds and "
        "re-ranks, e.g. a local OpenAI-compatible server; default: the offline mock",
    )
    parser.add_argument(
        "--sessions",
        type=int,
        metavar="N",
        help="only the first N sessions of each conversation, and the questions they "
        "answer (a real model extracts a few turns a minute)",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON results file")
    parser.add_argument("-v", "--verbose", action="store_true", help="show engine warnings")
    return parser


def _describe(conv: Conversation) -> str:
    counts = Counter(q.category for q in conv.questions)
    cats = ", ".join(f"{cat} {counts[cat]}" for cat in CATEGORIES if counts[cat])
    return (
        f"{conv.path.name}: {conv.id}, {len(conv.sessions)} sessions, {len(conv.turns)} turns, "
        f"{len(conv.questions)} questions ({cats})"
    )


def _check(conversations: list[Conversation]) -> int:
    problems = check(conversations)
    for conv in conversations:
        print(_describe(conv))
    total = sum(len(conv.questions) for conv in conversations)
    print(f"{len(conversations)} conversations, {total} questions")
    for warning in problems.warnings:
        print(f"warning: {warning}")
    for error in problems.errors:
        print(f"error: {error}")
    print(f"{len(problems.errors)} errors, {len(problems.warnings)} warnings")
    return 1 if problems.errors else 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    engine_log = logging.getLogger("memgraph")
    level = engine_log.level
    if not args.verbose:
        engine_log.setLevel(logging.ERROR)  # extraction warnings are expected
    try:
        return _main(args)
    finally:
        engine_log.setLevel(level)  # main() is also called in-process, by the tests


def _main(args: argparse.Namespace) -> int:
    only = [c.strip() for c in args.conversations.split(",")] if args.conversations else None
    try:
        conversations = load_locomo(args.locomo, only) if args.locomo else load(args.data, only)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if not conversations:
        print(f"error: no conversations in {args.data}", file=sys.stderr)
        return 1
    if args.check:
        return _check(conversations)
    errors = check(conversations).errors
    if errors:
        print(f"warning: the data has {len(errors)} errors (see --check)", file=sys.stderr)
    settings = Settings(
        search=args.only in (None, "search"),
        recall=args.only in (None, "recall"),
        bulk=args.bulk,
        feed=args.feed,
        config=args.config,
    )
    if args.sessions is not None:
        if args.sessions < 1:
            print("error: --sessions must be at least 1", file=sys.stderr)
            return 1
        conversations = [first_sessions(conv, args.sessions) for conv in conversations]
    if args.quick:
        conversations = conversations[:QUICK_CONVERSATIONS]
        settings.questions = QUICK_QUESTIONS
    document = evaluate(conversations, settings)
    print(markdown(document))
    if args.failures > 0:
        print(failures(document, conversations, args.failures))
    path = write_json(document, args.out)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    sys.exit(main())
