"""The ``memgraph`` command line: a thin layer over :class:`memgraph.Memory`.

Every command opens one scope, runs one public method and closes the scope.
Errors print ``error: <message>`` on stderr and exit with 2 (bad input, scope
or config, an empty query), 3 (provider), 4 (store) or 1 (anything else, e.g.
not found, or a read of a scope that does not exist). A read that finds
nothing prints :data:`NOTHING_RELEVANT`.
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click
import orjson

from memgraph import __version__
from memgraph.cli.demo import NOTHING_RELEVANT
from memgraph.engine.memory import Memory
from memgraph.errors import (
    ConfigError,
    InvalidInput,
    InvalidScope,
    InvalidTime,
    MemgraphError,
    NotFound,
    ProviderError,
    StoreError,
)
from memgraph.llm_calls.resolve import OFFLINE_NOTICE
from memgraph.mcp.cli import mcp_command  # imports no MCP SDK
from memgraph.models import ChangeSet, Entity, Relation
from memgraph.view.cli import view_command

__all__ = ["NOTHING_RELEVANT", "cli", "main"]

F = TypeVar("F", bound=Callable[..., Any])
_KEY = "memgraph."
_PREFIX = "memgraph:"


# ----------------------------------------------------------------- global options
def _store(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    """Record a global option; a value given after the subcommand overrides the group's."""
    if param.name is None or value is None or value is False:
        return
    key = _KEY + param.name
    if param.name == "verbose":
        ctx.meta[key] = ctx.meta.get(key, 0) + value
    else:
        ctx.meta[key] = value


def _global_options(*, top: bool) -> Callable[[F], F]:
    """The options every command accepts, before or after the subcommand's name."""
    common: dict[str, Any] = {"callback": _store, "expose_value": False}
    options = [
        click.option(
            "--dir",
            type=click.Path(path_type=Path),
            help="Memory directory (default: config dir, $MEMGRAPH_DIR, ./.memgraph).",
            **common,
        ),
        click.option(
            "--scope",
            envvar="MEMGRAPH_SCOPE" if top else None,
            default="default" if top else None,
            show_default=top,
            help="Scope id: whose memory ($MEMGRAPH_SCOPE).",
            **common,
        ),
        click.option(
            "--provider", help="Provider spec, e.g. mock or openai:gpt-4o-mini.", **common
        ),
        click.option(
            "--config",
            type=click.Path(path_type=Path, dir_okay=False),
            help="An agency.json to read the memory block from.",
            **common,
        ),
        click.option("--json", is_flag=True, help="Machine-readable JSON output.", **common),
        click.option(
            "-v", "--verbose", count=True, help="Log to stderr (-v info, -vv debug).", **common
        ),
    ]

    def decorate(function: F) -> F:
        for option in reversed(options):
            function = option(function)
        return function

    return decorate


def _opt(name: str, default: Any = None) -> Any:
    return click.get_current_context().meta.get(_KEY + name, default)


# ------------------------------------------------------------------------ logging
class _EchoHandler(logging.Handler):
    """``memgraph: message`` on the current stderr (which ``CliRunner`` swaps per run).

    Most messages already start with ``memgraph:``; the prefix is not doubled.
    """

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage() == OFFLINE_NOTICE:
            return  # the command prints it itself, exactly once
        try:
            text = self.format(record)
            click.echo(text if text.startswith(_PREFIX) else f"{_PREFIX} {text}", err=True)
        except Exception:
            self.handleError(record)


@contextmanager
def _logging(verbose: int) -> Iterator[None]:
    logger, handler = logging.getLogger("memgraph"), _EchoHandler()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbose > 1 else logging.INFO if verbose else logging.WARNING)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


# ------------------------------------------------------------------------- errors
_EXIT_CODES: tuple[tuple[type[Exception] | tuple[type[Exception], ...], int], ...] = (
    (NotFound, 1),
    ((InvalidScope, InvalidTime, ConfigError, InvalidInput), 2),
    (ProviderError, 3),
    (StoreError, 4),
    (MemgraphError, 1),
    ((ValueError, TypeError), 2),
)


def _exit_code(error: Exception) -> int:
    return next((code for kind, code in _EXIT_CODES if isinstance(error, kind)), 1)


_LAZY_COMMANDS = {  # commands kept in their own packages, loaded when used
    "import": "memgraph.cli.importing:import_command",
    "dump": "memgraph.cli.portable:dump_command",
    "load": "memgraph.cli.portable:load_command",
}


class _Group(click.Group):
    """A group that turns memgraph's errors into ``error: ...`` and an exit code."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in _LAZY_COMMANDS and cmd_name not in self.commands:
            module, _, name = _LAZY_COMMANDS[cmd_name].partition(":")
            self.add_command(getattr(importlib.import_module(module), name), cmd_name)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise  # click's standalone mode quiets a closed pipe (``| head``)
        except (MemgraphError, ValueError, TypeError, OSError) as error:
            if ctx.meta.get(_KEY + "verbose"):
                traceback.print_exc(file=sys.stderr)
            click.echo(f"error: {error}", err=True)
            ctx.exit(_exit_code(error))


# ------------------------------------------------------------------------ helpers
@contextmanager
def _memory(*, existing: bool = False) -> Iterator[Memory]:
    """Open the scope the global options name, and set up logging for the command.

    With ``existing``, a scope that holds nothing yet is an error (exit 1) naming
    the scopes that do exist, so a typo'd ``--scope`` never reads as "empty".
    """
    with _logging(_opt("verbose", 0)):
        scope, provider = _opt("scope", "default"), _opt("provider")
        with Memory(_opt("dir"), scope, provider=provider, config=_opt("config")) as memory:
            if memory.offline:
                click.echo(OFFLINE_NOTICE, err=True)
            if existing:
                _require_scope(memory)
            yield memory


def _existing_scopes(memory: Memory) -> tuple[str, list[str]]:
    """Where ``memory``'s store keeps its scopes (printable) and the scopes there."""
    from memgraph.admin.migrate import location_scopes, show
    from memgraph.store.pg_schema import is_dsn

    kind = os.environ.get("MEMGRAPH_STORE") or memory.config.store
    if is_dsn(kind):
        location = kind
    elif kind == "files" and memory.dir is not None:
        location = str(memory.dir)
    else:
        return f"the {kind!r} store", []
    try:
        return show(location), location_scopes(location)
    except NotFound:
        return show(location), []


def _require_scope(memory: Memory) -> None:
    """Raise :class:`NotFound` when nothing was ever written to ``memory``'s scope."""
    if memory.store.exists():
        return
    where, scopes = _existing_scopes(memory)
    if memory.scope in scopes:  # a scope holding only a conversation summary
        return
    listed = ", ".join(scopes) if scopes else "none yet (memgraph remember creates one)"
    raise NotFound(
        f"no scope {memory.scope!r} in {where}; existing scopes: {listed}. "
        "Pick one with --scope (or $MEMGRAPH_SCOPE), or --dir for another directory"
    )


def _require_query(query: str, what: str = "query") -> str:
    """``query`` itself; an empty or blank one is bad input (exit 2)."""
    if not query.strip():
        raise ValueError(f"the {what} is empty; say what to look for, e.g. 'where does Alice work'")
    return query


def _default(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"cannot serialize {type(value).__name__}")


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return [_plain(v) for v in value] if isinstance(value, list) else value


def _emit_json(value: Any) -> None:
    text = orjson.dumps(_plain(value), default=_default, option=orjson.OPT_INDENT_2)
    click.echo(text.decode())


def _relation_text(relation: Relation) -> str:
    return f"{relation.from_name} {relation.type} → {relation.to_name}"


def _summarize(memory: Memory, changes: ChangeSet, empty: str) -> None:
    """Print what a write changed, one ``+``/``-`` line per fact."""
    if not changes:
        click.echo(empty)
        return
    names: dict[str, Entity] = {e.id: e for e in memory.entities()}
    described = {o.entity_id for o in changes.added_observations}
    for entity in changes.added_entities:
        if entity.id not in described:
            click.echo(f"+ {entity.name} ({entity.type})")
    for obs in changes.added_observations:
        owner = names.get(obs.entity_id)
        label = f"{owner.name} ({owner.type})" if owner else obs.entity_id
        click.echo(f"+ {label}: {obs.content}")
    for relation in changes.added_relations:
        click.echo(f"+ {_relation_text(relation)}")
    for obs in changes.expired_observations:
        owner = names.get(obs.entity_id)
        click.echo(f"- expired: {owner.name if owner else obs.entity_id}: {obs.content}")
    for relation in changes.expired_relations:
        click.echo(f"- expired: {_relation_text(relation)}")


def _span(valid_from: str, valid_to: str | None) -> str:
    return f"{valid_from or '?'} → {valid_to or 'current'}"


# ----------------------------------------------------------------------- commands
@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@_global_options(top=True)
@click.version_option(__version__, prog_name="memgraph")
def cli() -> None:
    """Knowledge-graph long-term memory for LLM agents, from the shell."""


@cli.command()
@click.argument("text", required=False)
@click.option("--at", help="When it was said (ISO-8601); defaults to now.")
@click.option("--source", help="Where the text came from (an agent, a channel).")
@click.option("--metadata", help="A JSON object stored with the episode.")
@click.option("--speaker", help='Who said it ("I" is them); default: a "Name:" label, else User.')
@_global_options(top=False)
def remember(
    text: str | None, at: str | None, source: str | None, metadata: str | None, speaker: str | None
) -> None:
    """Learn facts from TEXT.

    TEXT is stored as an episode and its facts are added to the graph; with
    TEXT "-" or omitted, the text is read from stdin.
    """
    if text is None or text == "-":
        text = sys.stdin.read()
    meta: Mapping[str, Any] | None = None
    if metadata is not None:
        try:
            meta = orjson.loads(metadata)
        except orjson.JSONDecodeError as exc:
            raise click.BadParameter(f"not valid JSON: {exc}", param_hint="--metadata") from exc
    with _memory() as memory:
        changes = memory.remember(text, at=at, source=source, metadata=meta, speaker=speaker)
        if _opt("json"):
            _emit_json(changes)
        else:
            _summarize(memory, changes, "nothing new to remember")
    if changes.unusable_reply is not None:
        click.echo(
            f"error: model reply unusable: {changes.unusable_reply}; the text is stored "
            "unextracted (search finds it); `memgraph reextract` retries its facts",
            err=True,
        )
        sys.exit(3)


@cli.command()
@click.option("--limit", type=click.IntRange(min=1), help="Try at most this many texts.")
@_global_options(top=False)
def reextract(limit: int | None) -> None:
    """Ask the model again for the facts of texts stored unextracted.

    A text is stored unextracted when the model's reply to it was unusable;
    exit 3 when some reply is still unusable.
    """
    with _memory(existing=True) as memory:
        results = memory.reextract(limit=limit)
        if _opt("json"):
            _emit_json(results)
        else:
            for changes in results:
                if changes.unusable_reply is None:
                    _summarize(memory, changes, "extracted: nothing new")
            done = sum(1 for c in results if c.unusable_reply is None)
            click.echo(f"re-extracted {done} of {len(results)} unextracted text(s)")
    if any(c.unusable_reply is not None for c in results):
        sys.exit(3)


@cli.command()
@click.argument("query")
@click.option("--no-rerank", is_flag=True, help="Skip the LLM re-ranking tier.")
@_global_options(top=False)
def recall(query: str, no_rerank: bool) -> None:
    """Print the facts relevant to QUERY.

    The facts are grouped by entity; "(nothing relevant remembered)" is printed
    when none are relevant.
    """
    _require_query(query)
    with _memory(existing=True) as memory:
        text = memory.recall(query, rerank=not no_rerank)
    if _opt("json"):
        _emit_json({"query": query, "text": text})
    else:
        click.echo(text or NOTHING_RELEVANT)


@cli.command()
@click.argument("query")
@click.option("-k", type=click.IntRange(min=1), default=10, help="Hits at most (10).")
@click.option("--episodes", is_flag=True, help="Show the text each fact came from.")
@_global_options(top=False)
def search(query: str, k: int, episodes: bool) -> None:
    """Print ranked facts matching QUERY.

    Each line shows the score, the tiers that matched, the entity and the fact;
    --episodes adds the text each fact came from; "(nothing relevant
    remembered)" is printed when nothing matches.
    """
    _require_query(query)
    with _memory(existing=True) as memory:
        hits = memory.search(query, k=k, episodes=episodes)
    if _opt("json"):
        _emit_json(hits)
        return
    if not hits:
        click.echo(NOTHING_RELEVANT)
    for hit in hits:
        tiers = ",".join(sorted(hit.tiers)) or "-"
        if hit.observation is None and hit.episode is not None:
            speaker = f"{hit.episode.speaker}: " if hit.episode.speaker else ""
            click.echo(
                f"{hit.score:.3f}  [{tiers}]  said {hit.episode.at}: {speaker}{hit.episode.text}"
            )
            continue
        label = f"{hit.entity.name} ({hit.entity.type})" if hit.entity else "?"
        fact = f": {hit.observation.content}" if hit.observation else ""
        click.echo(f"{hit.score:.3f}  [{tiers}]  {label}{fact}")
        if hit.episode is not None:
            click.echo(f"        ↳ {hit.episode.at}: {hit.episode.text}")


@cli.command()
@click.argument("query")
@_global_options(top=False)
def forget(query: str) -> None:
    """Expire the facts QUERY refers to.

    Nothing is erased: expired facts drop out of recall and search, while
    history still shows them.
    """
    _require_query(query)
    with _memory(existing=True) as memory:
        changes = memory.forget(query)
        if _opt("json"):
            _emit_json(changes)
        else:
            _summarize(memory, changes, "nothing to forget")


@cli.command()
@_global_options(top=False)
def entities() -> None:
    """List entities and their number of current facts."""
    with _memory(existing=True) as memory:
        found = memory.entities()
    if _opt("json"):
        _emit_json(found)
        return
    for entity in sorted(found, key=lambda e: e.name.casefold()):
        count = len(entity.current_observations)
        click.echo(
            f"{entity.name} ({entity.type}) — {count} current fact{'' if count == 1 else 's'}"
        )


@cli.command()
@click.argument("name")
@_global_options(top=False)
def history(name: str) -> None:
    """Print every version of NAME's facts and links.

    Expired versions are included; each line shows validFrom → validTo
    ("current" while the fact holds).
    """
    _require_query(name, "entity name")
    with _memory(existing=True) as memory:
        found = memory.history(name)
    if _opt("json"):
        _emit_json(found)
        return
    click.echo(f"{found.entity.name} ({found.entity.type})")
    for obs in found.observations:
        click.echo(f"  {_span(obs.valid_from, obs.valid_to)}  {obs.content}")
    for relation in found.relations:
        click.echo(f"  {_span(relation.valid_from, relation.valid_to)}  {_relation_text(relation)}")


@cli.command()
@click.option(
    "--format", "format_", type=click.Choice(["json", "graphml", "mcp-jsonl"]), default="json"
)
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False), help="File.")
@click.option("--current-only", is_flag=True, help="GraphML: leave out expired facts.")
@_global_options(top=False)
def export(format_: str, output: Path | None, current_only: bool) -> None:
    """Export the scope as JSON or GraphML.

    JSON holds the graph and the episodes; GraphML holds entities as nodes and
    relations as edges; mcp-jsonl is the memory.jsonl of the reference MCP
    memory server (current facts only). Written to stdout unless --output is given.
    """
    with _memory(existing=True) as memory:
        if format_ == "mcp-jsonl":  # the reference MCP memory server's memory.jsonl
            from memgraph.mcp.reference_file import export_reference

            data = export_reference(memory).encode()
        else:
            data = memory.export(format_, current_only=current_only)
    if output is None:
        stream = sys.stdout.buffer
        exact = data.endswith(b"\n") or format_ == "mcp-jsonl"  # that file ends without one
        stream.write(data if exact else data + b"\n")
        stream.flush()
    else:
        # Exports are personal data: owner-only, like everything memgraph writes.
        fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o600)
            handle.write(data)


@cli.command()
@_global_options(top=False)
def stats() -> None:
    """Print counts of entities, facts, relations and vectors."""
    with _memory(existing=True) as memory:
        counts = memory.stats()
    if _opt("json"):
        _emit_json(counts)
        return
    for key, value in counts.items():
        click.echo(f"{key.replace('_', ' ')}: {value}")


def _from_command_line(name: str) -> bool:
    """Whether the global option ``name`` was typed (not taken from a default or the environment)."""
    ctx: click.Context | None = click.get_current_context()
    while ctx is not None:
        if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE:
            return True
        ctx = ctx.parent
    return False


@cli.command()
@_global_options(top=False)
def demo() -> None:
    """Remember a few facts about Alice and Bob, reopen the memory, and recall them.

    Runs in a temporary directory that is deleted afterwards, so your memory is
    never touched; with --dir it writes the scope "demo" there (or the --scope
    you type) and keeps it. Offline on the mock provider unless one is configured.
    """
    from memgraph.cli.demo import DEMO_SCOPE, run_demo

    with _logging(_opt("verbose", 0)):
        run_demo(
            _opt("dir") if _from_command_line("dir") else None,
            scope=_opt("scope") if _from_command_line("scope") else DEMO_SCOPE,
            provider=_opt("provider"),
            echo=click.echo,
            on_offline=lambda: click.echo(OFFLINE_NOTICE, err=True),
        )


@cli.command("migrate")
@click.option(
    "--from", "source", required=True, metavar="SRC", help="Directory or DSN to copy from."
)
@click.option(
    "--to", "destination", required=True, metavar="DST", help="Directory or DSN to copy to."
)
@click.option("--scope", "scopes", multiple=True, help="Copy only this scope (repeatable).")
@click.option("--replace", is_flag=True, help="Overwrite scopes that already hold data at DST.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")
def migrate_scopes(
    source: str, destination: str, scopes: tuple[str, ...], replace: bool, as_json: bool
) -> None:
    """Copy scopes between a memory directory and PostgreSQL, either way, and verify them.

    SRC and DST are each a directory or a postgresql:// DSN. Every scope (or
    each --scope) is copied with its full history: expired facts, episodes,
    vectors and the summary. The copy is read back and must match the source
    in counts and a SHA-256 checksum.
    """
    from memgraph.admin.migrate import migrate, show

    as_json = as_json or bool(_opt("json"))

    def echo(report: Any) -> None:
        if not as_json:
            counts = ", ".join(f"{v} {k}" for k, v in report.counts.items())
            click.echo(f"{report.scope}: {counts}; sha256 {report.checksum} verified")

    reports = migrate(source, destination, scopes, replace=replace, progress=echo)
    if as_json:
        _emit_json(reports)
    else:
        click.echo(f"migrated {len(reports)} scope(s) from {show(source)} to {show(destination)}")


@cli.command()
@click.option("--repair", is_flag=True, help="Back the scope up, then rebuild what can be.")
@_global_options(top=False)
def doctor(repair: bool) -> None:
    """Check a scope's files; --repair backs it up and rebuilds what can be rebuilt.

    Every file is reported ok, missing or damaged (with the position). With
    --repair the scope is first copied to <scope>.backup-<UTC time> next to it;
    the report then lists what was rebuilt and what was lost. Exits 0 when the
    scope is healthy (or was repaired), 1 when problems remain.
    """
    import os

    from memgraph.admin.doctor import check_scope, repair_scope
    from memgraph.engine.core import MemoryCore, default_dir
    from memgraph.store.pg_schema import mask_dsn

    with _logging(_opt("verbose", 0)):
        config = MemoryCore._resolve_config(_opt("config"))
        kind = os.environ.get("MEMGRAPH_STORE") or config.store
        if kind != "files":
            shown = mask_dsn(kind) if "://" in kind or "=" in kind else kind
            raise click.UsageError(f"doctor checks memory directories; memory.store is {shown!r}")
        root = _opt("dir") or config.dir or default_dir()
        scope = _opt("scope", "default")
        if repair:
            report = repair_scope(root, scope, _opt("provider"), config=config)
        else:
            report = check_scope(root, scope)
    if _opt("json"):
        _emit_json(report.to_dict())
    else:
        click.echo(report.render())
    click.get_current_context().exit(0 if report.ok else 1)


cli.add_command(mcp_command)
cli.add_command(view_command(_global_options(top=False), _memory, _opt))


def main(argv: list[str] | None = None) -> None:
    """Run the command line (the ``memgraph`` console script)."""
    cli.main(args=argv, prog_name="memgraph")
