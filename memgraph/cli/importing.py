"""The ``memgraph import FILE`` command (attached to :data:`memgraph.cli.cli`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from memgraph.cli.commands import _emit_json, _global_options, _memory, _opt
from memgraph.importing.display import ProgressDisplay, duration
from memgraph.importing.runner import (
    ASSISTANT_POLICIES,
    ImportOptions,
    ImportReport,
    external,
    import_file,
    register_format,
)
from memgraph.mcp.reference_file import import_reference

# The reference MCP memory server's file: the command line joins the two faces.
register_format("mcp-jsonl", external(import_reference, "mcp-jsonl"))

__all__ = ["import_command"]

FORMAT_CHOICES = ("auto", "messages", "openai", "chat", "text", "mcp-jsonl")


def _summary(report: ImportReport) -> str:
    parts = [f"{report.imported} new ({report.facts} facts)"]
    if report.already:
        parts.append(f"{report.already} imported by an earlier run")
    if report.left_out:
        parts.append(f"{report.left_out} left out (system/tool messages or skipped turns)")
    text = (
        f"imported {Path(report.path).name} as {report.format} in "
        f"{duration(report.seconds)}: {', '.join(parts)}"
    )
    if report.failed:
        text += (
            f"\n{report.failed} items got no usable reply from the model and were not stored; "
            "run the same command again to retry them"
        )
    return text


@click.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--format", "format_", type=click.Choice(FORMAT_CHOICES), default="auto", show_default=True
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1, max=256),
    default=8,
    show_default=True,
    help="Model calls in flight at once.",
)
@click.option("--source", help="Source of every episode and fact (an agent, a channel).")
@click.option("--speaker-user", metavar="NAME", help='Speaker name of "user" messages (User).')
@click.option(
    "--assistant",
    type=click.Choice(ASSISTANT_POLICIES),
    default="keep",
    show_default=True,
    help="Assistant turns: keep as episodes only, extract facts from them too, or skip.",
)
@_global_options(top=False)
def import_command(
    file: Path,
    format_: str,
    concurrency: int,
    source: str | None,
    speaker_user: str | None,
    assistant: str,
) -> None:
    """Import a conversation or document FILE: one episode per message or paragraph.

    FILE is JSON Lines of messages ({"role" or "speaker", "content", "at"?}),
    an OpenAI messages export (a JSON array, or {"messages": [...]}), a chat
    log (a "Name: text" line per message, optionally time-stamped, as a
    WhatsApp export is), or plain text (one episode per paragraph). Each
    message keeps its own time and speaker. Interrupted (Ctrl-C, a crash), the same command continues where
    it stopped and imports nothing twice.
    """
    display = ProgressDisplay(sys.stderr)
    options = ImportOptions(
        concurrency=concurrency,
        source=source,
        speaker_user=speaker_user,
        assistant=assistant,
        progress=display,
    )
    try:
        with _memory() as memory:
            report = import_file(memory, file, format=format_, options=options)
    except KeyboardInterrupt:
        display.close()
        click.echo(
            f"interrupted: {display.done} of {display.total} items are stored; "
            "run the same command again to continue",
            err=True,
        )
        click.get_current_context().exit(130)
    display.close()
    if _opt("json"):
        _emit_json(report)
    else:
        click.echo(_summary(report))
