"""Checksummed records, and ``graph.json`` written one record per line.

Every record memgraph writes (an entity or a relation of ``graph.json``, a
journal commit, an episode) is a JSON object whose last key is ``"crc"``: the
CRC-32, as 8 hex digits, of the record's bytes before ``,"crc":``. A record is
verified on its own, so one damaged byte costs one record, found by the reader
that parses it (lazily, record by record, on open; all of them in ``memgraph
doctor``). Records without the key (Agency's files, older memgraph files) are
read as they are.

``graph.json`` is written one record per line, so people can read and diff it
and a repair can keep every intact record::

    {"entities":[
    {"id":"entity-1","name":"Alice",...,"crc":"1a2b3c4d"},
    {"id":"entity-2",...,"crc":"..."}
    ],"relations":[
    {"id":"rel-3","from":"entity-1",...,"crc":"..."}
    ],"nextId":4,"checkpointSeq":2,...,"counts":{...},"checksums":"crc32","crc":"..."}

It stays one JSON document that Agency and ``json.load`` read. The last line
(the *tail*) carries the checkpoint's own values: ``nextId``,
``checkpointSeq``, the key/value, progress and rule state (``memgraph``), the
number of records (``counts``) and the size of ``episodes.jsonl`` when it was
written (``episodesBytes``), so a reader can check the other files against it.
"""

from __future__ import annotations

import mmap
import re
import zlib
from dataclasses import dataclass, field
from typing import Any

import orjson

__all__ = [
    "CHECKSUMS",
    "CRC_KEY",
    "HEAD",
    "MIDDLE",
    "Checkpoint",
    "ChecksumMismatch",
    "RecordDamaged",
    "has_checksum",
    "read_checkpoint",
    "read_record",
    "read_tail",
    "seal_record",
    "sealed_line",
    "tail_line",
]

Doc = dict[str, Any]
Buffer = bytes | bytearray | memoryview | mmap.mmap

CRC_KEY = "crc"
CHECKSUMS = "crc32"  # the tail's "checksums" value: every record line carries one
HEAD = b'{"entities":[\n'
MIDDLE = b'],"relations":[\n'
_MARK = b',"crc":"'
_SUFFIX = len(_MARK) + 8 + 2  # ,"crc":"xxxxxxxx"}
_HEX_DIGITS = b"0123456789abcdef"
_ID = re.compile(rb'"id":"((?:[^"\\]|\\.){1,200})"')


class RecordDamaged(ValueError):
    """A record fails its checksum, is not a JSON object, or lacks a required checksum."""


class ChecksumMismatch(RecordDamaged):
    """A complete record whose checksum does not match: damage, never a torn write."""


def seal_record(body: bytes) -> bytes:
    """``body`` (a JSON object's bytes, without a ``crc`` key) with its checksum as last key."""
    if len(body) < 3 or body[-1:] != b"}":  # '{}' has no key to follow
        return body
    head = body[:-1]
    return head + b'%s%08x"}' % (_MARK, zlib.crc32(head))


def sealed_line(body: bytes) -> bytes:
    """``seal_record(body) + b"\\n"``, copying ``body`` once (a journal line holds
    megabytes of vectors)."""
    if len(body) < 3 or body[-1:] != b"}":
        return body + b"\n"
    head = memoryview(body)[:-1]
    return b"".join((head, b'%s%08x"}\n' % (_MARK, zlib.crc32(head))))


def _stated_checksum(view: memoryview) -> int | None:
    """The checksum ``view`` ends with (its last key), or None when it ends otherwise."""
    if len(view) <= _SUFFIX:
        return None
    tail = bytes(view[-_SUFFIX:])
    digits = tail[len(_MARK) : -2]
    if tail[: len(_MARK)] != _MARK or tail[-2:] != b'"}' or digits.translate(None, _HEX_DIGITS):
        return None
    return int(digits, 16)


def has_checksum(raw: Buffer) -> bool:
    """Whether ``raw`` ends with a checksum key (not whether it is right)."""
    return _stated_checksum(memoryview(raw)) is not None


def read_record(raw: Buffer, *, required: bool = False) -> Doc:
    """The JSON object of one record, its checksum verified and removed.

    Raises:
        RecordDamaged: the checksum does not match, the record is not a JSON
            object, or it has no checksum although ``required``.
    """
    view = memoryview(raw)
    stated = _stated_checksum(view)
    if stated is not None:
        if zlib.crc32(view[:-_SUFFIX]) != stated:
            raise ChecksumMismatch("its checksum does not match its content")
    elif required:
        raise RecordDamaged("it has no checksum (every record of this file has one)")
    try:
        record = orjson.loads(view)
    except orjson.JSONDecodeError as exc:
        raise RecordDamaged(f"not JSON ({exc})") from exc
    if not isinstance(record, dict):
        raise RecordDamaged(f"not a JSON object but {type(record).__name__}")
    record.pop(CRC_KEY, None)
    return record


def record_id(raw: Buffer) -> str | None:
    """The ``id`` a (possibly damaged) record line names, when it can still be read."""
    match = _ID.search(bytes(raw))
    return match.group(1).decode("utf-8", "replace") if match else None


def tail_line(fields: Doc) -> bytes:
    """The last line of ``graph.json``: closes the relations and holds ``fields``."""
    return b"]," + seal_record(orjson.dumps(fields))[1:] + b"\n"


def read_tail(data: Buffer) -> Doc | None:
    """The tail fields of a ``graph.json`` written one record per line (None for
    another shape, e.g. Agency's file).

    Raises:
        RecordDamaged: the tail line is damaged.
    """
    if bytes(data[: len(HEAD)]) != HEAD:  # slices, not a memoryview: an mmap must stay closable
        return None
    size = len(data)
    end = size - 1 if size and bytes(data[size - 1 : size]) == b"\n" else size
    searchable = data if not isinstance(data, memoryview) else bytes(data)
    start = searchable.rfind(b"\n", 0, end) + 1  # mmap and bytes search without a copy
    line = bytes(data[start:end])
    if not line.startswith(b'],"'):
        raise RecordDamaged("the last line is not the checkpoint's closing line")
    return read_record(b"{" + line[2:], required=True)


@dataclass
class Checkpoint:
    """A ``graph.json`` read record by record: the document and what could not be read."""

    document: Any  # a dict when the file is a graph document at all
    damaged: list[tuple[int, str, str | None]] = field(default_factory=list)  # line, why, id
    tail_lost: bool = False
    truncated: bool = False

    @property
    def intact(self) -> bool:
        return not self.damaged and not self.tail_lost and not self.truncated


def read_checkpoint(data: bytes, *, salvage: bool = False) -> Checkpoint:
    """Parse ``graph.json``: record by record (each checksum verified) when it is
    written one record per line, else as one JSON document (Agency's files).

    With ``salvage``, damaged records are skipped and listed instead of raising.

    Raises:
        RecordDamaged: (without ``salvage``) a record is damaged or the file is cut
            short; the message names the line.
        orjson.JSONDecodeError: a file of another shape is not valid JSON.
    """
    if not data.startswith(HEAD):
        return Checkpoint(orjson.loads(data))
    entities: list[Doc] = []
    relations: list[Doc] = []
    found = Checkpoint({"entities": entities, "relations": relations})
    in_relations = closed = False
    for number, line in enumerate(data.split(b"\n"), start=1):
        if number == 1 or not line:
            continue
        if line == MIDDLE[:-1] and not in_relations:
            in_relations = True
            continue
        if line.startswith(b'],"'):
            closed = True
            try:
                found.document.update(read_record(b"{" + line[2:], required=True))
            except RecordDamaged as exc:
                if not salvage:
                    raise RecordDamaged(f"line {number} (the closing line): {exc}") from exc
                found.tail_lost = True
            found.document["entities"], found.document["relations"] = entities, relations
            continue
        record = line[:-1] if line.endswith(b",") else line
        try:
            if closed:
                raise RecordDamaged("a line after the closing line")
            doc = read_record(record, required=True)
            # Where a record goes: by its place, or (salvaging, when a line that
            # separates the lists may itself be damaged) by its shape.
            relation = "from" in doc and "observations" not in doc if salvage else in_relations
            (relations if relation else entities).append(doc)
        except RecordDamaged as exc:
            if not salvage:
                raise RecordDamaged(f"line {number}: {exc}") from exc
            found.damaged.append((number, str(exc), record_id(record)))
    if not closed:
        if not salvage:
            raise RecordDamaged("the file ends before its closing line (it was cut short)")
        found.truncated = True
    return found
