"""The resumable import: a file's records become items of the bulk path, each once.

Each record gets a stable key, the SHA-256 of the file's bytes and the
record's number, stored in its episode's metadata as
``{"import": {"file": sha256, "item": n}}``. Before importing, the keys of
this file already stored are collected from the scope's episodes and those
records are skipped, so an import interrupted at any point (Ctrl-C, a crash,
``kill -9``) continues where it stopped when run again and stores nothing
twice. What "stored" means is the bulk path's: every chunk it reported is
durable (:mod:`memgraph.engine.bulk`).

Speakers and roles: an explicit ``speaker`` wins; role ``user`` becomes the
user's name (``speaker_user``, default ``"User"``); role ``assistant`` becomes
``"assistant"``; ``system``, ``developer``, ``tool`` and ``function`` messages
are instructions and plumbing, not conversation, and are left out.
**Assistant turns** are kept as episodes with their speaker but are not sent
to the model by default (``assistant="keep"``): they give the user's turns
their context (what a "yes" answered) and provenance, while the facts an
assistant states are its own guesses or restate what the user said.
``assistant="extract"`` extracts them too; ``"skip"`` leaves them out.

Formats are a small registry: :func:`register_format` maps a name to an
:data:`Importer`; the built-in readers go through :func:`records_importer`,
and a whole-file importer of another shape through :func:`external`.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memgraph.engine.bulk import Progress
from memgraph.engine.writing import RememberMixin
from memgraph.errors import InvalidInput
from memgraph.importing.formats import READERS, Reader, Record, decode, detect_format
from memgraph.models import Item

if TYPE_CHECKING:
    from memgraph.engine.memory import Memory

__all__ = [
    "ASSISTANT_POLICIES",
    "FORMATS",
    "ImportOptions",
    "ImportReport",
    "Importer",
    "external",
    "import_file",
    "records_importer",
    "register_format",
]

ASSISTANT_POLICIES = ("keep", "extract", "skip")
LEFT_OUT_ROLES = frozenset({"system", "developer", "tool", "function"})


@dataclass(frozen=True)
class ImportOptions:
    """How to import a file.

    Attributes:
        concurrency: model calls in flight at once.
        source: the source of every episode and fact (default: the writing namespace).
        speaker_user: the speaker name of ``user`` messages (default ``"User"``).
        assistant: ``"keep"`` assistant turns as episodes only (the default),
            ``"extract"`` facts from them too, or ``"skip"`` them.
        progress: ``progress(done, total)`` over the records to store,
            counting those stored by earlier runs as done.
    """

    concurrency: int = 8
    source: str | None = None
    speaker_user: str | None = None
    assistant: str = "keep"
    progress: Progress | None = None


@dataclass(frozen=True)
class ImportReport:
    """What an import did.

    Attributes:
        path: the file.
        format: the format it was read as.
        sha256: the file's SHA-256 (the resume key's first half).
        records: messages or paragraphs in the file.
        imported: records stored by this run.
        already: records stored by an earlier run of the same file, skipped.
        left_out: records not to be stored (system and tool messages,
            assistant turns with ``assistant="skip"``).
        failed: records the model gave no usable reply for: not stored, tried
            again by the next run.
        facts: facts (observations) this run added.
        seconds: wall time of the run.
    """

    path: str
    format: str
    sha256: str
    records: int = 0
    imported: int = 0
    already: int = 0
    left_out: int = 0
    failed: int = 0
    facts: int = 0
    seconds: float = 0.0


Importer = Callable[["Memory", Path, ImportOptions], ImportReport]
"""Imports one file into a memory."""

FORMATS: dict[str, Importer] = {}
"""Importers by format name (``--format``)."""


def register_format(name: str, importer: Importer) -> None:
    """Make ``importer`` available as ``--format name``."""
    FORMATS[name] = importer


def _item(record: Record, sha256: str, options: ImportOptions) -> Item | None:
    """The bulk item of ``record`` (None when it is left out)."""
    role = (record.role or "").strip().lower() or None
    if role in LEFT_OUT_ROLES or (role == "assistant" and options.assistant == "skip"):
        return None
    speaker = record.speaker
    if speaker is None and role == "user":
        speaker = options.speaker_user or "User"
    elif speaker is None and role is not None:
        speaker = role  # "assistant", or a name used as a role
    metadata: dict[str, Any] = {"import": {"file": sha256, "item": record.index}}
    if role is not None:
        metadata["role"] = role
    extract = role != "assistant" or options.assistant == "extract"
    return Item(record.text, at=record.at, speaker=speaker, metadata=metadata, extract=extract)


def stored_keys(memory: Memory, sha256: str) -> set[int]:
    """The record numbers of the file with this hash already stored in ``memory``."""
    found = set()
    for episode in memory.iter_episodes():
        mark = episode.metadata.get("import")
        if isinstance(mark, dict) and mark.get("file") == sha256:
            item = mark.get("item")
            if isinstance(item, int):
                found.add(item)
    return found


def records_importer(reader: Reader, name: str) -> Importer:
    """An importer of the records ``reader`` finds in a file."""

    def run(memory: Memory, path: Path, options: ImportOptions) -> ImportReport:
        started = time.monotonic()
        data = path.read_bytes()
        sha256 = hashlib.sha256(data).hexdigest()
        records = reader(decode(data, str(path)), str(path))
        pairs = [(record, _item(record, sha256, options)) for record in records]
        for record, item in pairs:
            if item is not None:
                try:
                    RememberMixin._check_text(item.text)
                except (TypeError, ValueError) as exc:
                    raise InvalidInput(
                        f"{path}: {record.where}: {exc}", path=str(path), position=record.where
                    ) from exc
        kept = [item for _, item in pairs if item is not None]
        done = stored_keys(memory, sha256)
        todo = [
            item for item in kept if item.metadata and item.metadata["import"]["item"] not in done
        ]
        already = len(kept) - len(todo)
        progress = options.progress
        if progress is not None and not todo:
            progress(already, len(kept))

        def report(count: int, total: int) -> None:
            if progress is not None:
                progress(already + count, already + total)

        results = memory.remember_many(
            todo, source=options.source, concurrency=options.concurrency, progress=report
        )
        failed = sum(1 for result in results if result.episode is None)
        return ImportReport(
            path=str(path),
            format=name,
            sha256=sha256,
            records=len(records),
            imported=len(results) - failed,
            already=already,
            left_out=len(records) - len(kept),
            failed=failed,
            facts=sum(len(result.added_observations) for result in results),
            seconds=round(time.monotonic() - started, 3),
        )

    return run


def external(function: Callable[[Memory, Path], object], name: str) -> Importer:
    """An importer from a whole-file function ``function(memory, path)`` (its own format)."""

    def run(memory: Memory, path: Path, options: ImportOptions) -> ImportReport:
        started = time.monotonic()
        before = memory.stats()
        function(memory, path)
        after = memory.stats()
        return ImportReport(
            path=str(path),
            format=name,
            sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
            facts=after.get("observations", 0) - before.get("observations", 0),
            seconds=round(time.monotonic() - started, 3),
        )

    return run


for _name, _reader in READERS.items():
    register_format(_name, records_importer(_reader, _name))
# The reference MCP memory server's file (memgraph.mcp.reference_file) is registered
# by the command line (memgraph.cli.importing), which joins the two faces.


def import_file(
    memory: Memory, path: str | Path, *, format: str = "auto", options: ImportOptions | None = None
) -> ImportReport:
    """Import ``path`` into ``memory``, resuming an earlier interrupted import of it.

    Args:
        memory: the memory to import into.
        path: the file.
        format: ``"auto"`` (recognised from the content) or a name in :data:`FORMATS`.
        options: concurrency, source, speaker and assistant policy, progress.

    Returns:
        What was imported, skipped, left out and failed.

    Raises:
        InvalidInput: the file is malformed (the message names the line) or
            of an unknown format; nothing was imported.
        OSError: the file cannot be read.
        ProviderError, StoreError: as :meth:`memgraph.Memory.remember_many`;
            the records stored before the failure stay, and running the
            import again continues after them.
    """
    options = options or ImportOptions()
    if options.assistant not in ASSISTANT_POLICIES:
        raise ValueError(
            f"assistant must be one of {', '.join(ASSISTANT_POLICIES)}, got {options.assistant!r}"
        )
    file = Path(path)
    if format == "auto":
        format = detect_format(decode(file.read_bytes(), str(file)), str(file))
    importer = FORMATS.get(format)
    if importer is None:
        known = ", ".join(sorted(FORMATS))
        raise InvalidInput(
            f"format {format!r} cannot be imported by this version of memgraph; known: {known}",
            path=str(file),
        )
    return importer(memory, file, options)
