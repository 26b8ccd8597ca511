"""The ``memgraph dump`` and ``memgraph load`` commands (attached to :data:`memgraph.cli.cli`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from memgraph.admin.migrate import show
from memgraph.cli.commands import _emit_json, _global_options, _logging, _opt
from memgraph.engine.core import MemoryCore, default_dir
from memgraph.portable.dump import dump_scope
from memgraph.portable.load import load_dump, read_dump
from memgraph.scope import validate_scope
from memgraph.store.pg_schema import is_dsn

__all__ = ["dump_command", "load_command"]


def _location() -> str:
    """The directory or DSN the global options and the config point at."""
    config = MemoryCore._resolve_config(_opt("config"))
    kind = os.environ.get("MEMGRAPH_STORE") or config.store
    if kind == "files":
        return str(_opt("dir") or config.dir or default_dir())
    if is_dsn(kind):
        return kind
    raise click.UsageError(
        f"dump and load work on a directory or PostgreSQL; the store is {kind!r}"
    )


def _explicit_scope(ctx: click.Context) -> bool:
    """Whether --scope (or $MEMGRAPH_SCOPE) was given rather than defaulted."""
    given = (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)
    return any(c.get_parameter_source("scope") in given for c in (ctx, ctx.find_root()))


@click.command("dump")
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False), help="File.")
@click.option("--vectors", is_flag=True, help="Include the embedding vectors (base64 float32).")
@_global_options(top=False)
def dump_command(output: Path | None, vectors: bool) -> None:
    """Write the whole scope as one versioned JSON Lines dump.

    Entities, every fact (expired ones too, with both clocks and provenance),
    relations, episodes, key/values, notes, progress boards, rules and the
    summary; --vectors adds the embeddings. Written to stdout unless -o is
    given. `memgraph load` reads it on any machine and store.
    """
    from memgraph.admin.migrate import open_location

    location = _location()
    store = open_location(location, validate_scope(_opt("scope", "default")))
    with _logging(_opt("verbose", 0)):
        try:
            if output is None:
                report = dump_scope(store, sys.stdout.buffer, vectors=vectors)
            else:
                # A dump is personal data: owner-only, like everything memgraph writes.
                fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "wb") as handle:
                    os.fchmod(handle.fileno(), 0o600)
                    report = dump_scope(store, handle, vectors=vectors)
        finally:
            store.close()
    counts = ", ".join(f"{v} {k}" for k, v in report.counts.items() if v)
    click.echo(f"dumped scope {report.scope!r}: {counts}; sha256 {report.sha256}", err=True)


@click.command("load")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Replace the scope's whole content if it holds data.")
@_global_options(top=False)
def load_command(file: Path, force: bool) -> None:
    """Load a dump FILE into an empty scope, after verifying it.

    The scope is the dump's own unless --scope is given. The dump's header,
    version, counts and SHA-256 are checked before anything is written, and
    the copy is read back and compared. A scope that holds data is only
    replaced with --force, and then its previous content is gone (dump it
    first to keep it).
    """
    from memgraph.admin.migrate import open_location

    location = _location()
    with _logging(_opt("verbose", 0)), open(file, "rb") as handle:
        dump = read_dump(handle, str(file))
        ctx = click.get_current_context()
        scope = _opt("scope") if _explicit_scope(ctx) else dump.header.get("scope")
        name = validate_scope(str(scope or "default"))
        report = load_dump(
            dump, lambda: open_location(location, name), where=show(location), force=force
        )
    if _opt("json"):
        _emit_json(report)
        return
    counts = ", ".join(f"{v} {k}" for k, v in report.counts.items() if v)
    click.echo(f"loaded {counts} into scope {report.scope!r}; sha256 {report.checksum} verified")
