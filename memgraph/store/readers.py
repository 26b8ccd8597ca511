"""The readers of a directory-store scope's files, shared by the store and ``memgraph doctor``.

Each reader takes a file's bytes and says what is in it and, when something is
wrong, where: the store raises the first problem as
:class:`~memgraph.errors.StoreCorrupt`, doctor reports them all. One parser per
file, so a load and a check never disagree about what a file holds.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import shlex
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from memgraph.errors import StoreCorrupt
from memgraph.graph.records import RecordDamaged, has_checksum, read_checkpoint, read_record
from memgraph.id_column import MAX_DIGITS, IdColumn

__all__ = [
    "NPY_HEADER_BYTES",
    "PACKED_VECTOR_FORMAT",
    "VECTOR_FORMAT",
    "EpisodeLines",
    "VectorsHeader",
    "damaged",
    "decode_error",
    "doctor_hint",
    "pack_row_ids",
    "parse_episodes",
    "parse_graph",
    "parse_summary",
    "parse_vectors_header",
    "read_coarse",
    "read_npy_rows",
    "unpack_row_ids",
    "vector_blocks_damaged",
]

VECTOR_FORMAT = 1  # the rows' ids as a list of strings
PACKED_VECTOR_FORMAT = 2  # the rows' ids packed (see pack_row_ids)
NPY_HEADER_BYTES = 128
Doc = dict[str, Any]

_JSON_POSITION = re.compile(r"line (\d+) column (\d+)|char (\d+)")


def doctor_hint(path: Path, *, repair: bool = False) -> str:
    """The ``memgraph doctor`` command that checks (or repairs) the scope holding ``path``."""
    scope_dir = path.parent
    flag = " --repair" if repair else ""
    return (
        f"`memgraph doctor --dir {shlex.quote(str(scope_dir.parent))} "
        f"--scope {shlex.quote(scope_dir.name)}{flag}`"
    )


def damaged(path: Path, position: str, problem: str, *, vectors: bool = False) -> StoreCorrupt:
    """A StoreCorrupt naming ``path``, the ``position`` and what is wrong there."""
    advice = (
        f"run {doctor_hint(path, repair=True)} to rebuild the vectors from the observations"
        if vectors
        else f"run {doctor_hint(path)} to inspect it"
    )
    return StoreCorrupt(
        f"{str(path)!r} is damaged at {position}: {problem}. It was left untouched; {advice}.",
        path=str(path),
        position=position,
    )


def decode_error(
    path: Path, exc: Exception, line: int | None = None, data: bytes | None = None
) -> StoreCorrupt:
    """A StoreCorrupt naming ``path`` and where in it (``data``: the file's bytes) it broke."""
    text = str(exc)
    match = _JSON_POSITION.search(text)
    where = f"line {line}" if line is not None else ""
    if match and line is None:
        where = f"line {match.group(1)}, column {match.group(2)}" if match.group(1) else ""
        where = where or f"byte {match.group(3)}"
    if data is not None and line is None:
        try:  # orjson reports invalid UTF-8 at char 0 whatever its place: find the byte
            data.decode("utf-8")
        except UnicodeDecodeError as bad:
            number = data.count(b"\n", 0, bad.start) + 1
            where = f"byte {bad.start} (line {number})"
    return StoreCorrupt(
        f"{str(path)!r} is damaged at {where or 'an unknown position'}: {text}. "
        f"It was left untouched; run {doctor_hint(path)} to inspect it "
        "(add --repair to rebuild what can be rebuilt).",
        path=str(path),
        position=where,
    )


def read_npy_rows(path: Path, rows: int) -> np.ndarray[Any, np.dtype[np.float32]]:
    """The first ``rows`` rows of a memgraph ``vectors.npy``, memory-mapped read-only.

    Raises:
        StoreCorrupt: the file is missing, truncated, or not a float32 matrix
            of at least ``rows`` rows (naming the file and the position).
    """
    try:
        matrix = np.load(path, mmap_mode="r")  # never unpickles: allow_pickle is False
    except (OSError, ValueError, EOFError) as exc:
        try:
            size = os.path.getsize(path)
        except OSError:
            size = -1
        if size < 0:
            where = "byte 0 (the file is missing)"
        elif size < NPY_HEADER_BYTES:
            where = f"byte {size} (the file ends inside its {NPY_HEADER_BYTES}-byte header)"
        elif "header" in str(exc).lower() or "magic" in str(exc).lower():
            where = f"header (bytes 0-{NPY_HEADER_BYTES - 1})"
        else:
            where = f"byte {size} (the file ends before the rows its header declares)"
        raise StoreCorrupt(
            f"{str(path)!r} is damaged at {where}: {exc}. It was left untouched; run "
            f"{doctor_hint(path, repair=True)} to rebuild the vectors from the observations",
            path=str(path),
            position=where,
        ) from exc
    if matrix.dtype != np.float32 or matrix.ndim != 2 or matrix.shape[0] < rows:
        raise damaged(
            path,
            f"header (shape {matrix.shape})",
            f"it holds {matrix.dtype} rows, expected at least {rows} float32 rows",
            vectors=True,
        )
    return matrix[:rows]  # type: ignore[no-any-return]


def parse_graph(path: Path, raw: bytes) -> Doc:
    """``graph.json``'s document: record by record with their checksums when it is
    written one record per line, else as one JSON document (Agency's files).

    Raises:
        StoreCorrupt: a record is damaged or the file cut short (naming the line),
            the file is not JSON, or not a graph document.
    """
    try:
        document = read_checkpoint(raw).document
    except orjson.JSONDecodeError as exc:
        raise decode_error(path, exc, data=raw) from exc
    except RecordDamaged as exc:
        where, _, why = str(exc).partition(": ")
        where = where if where.startswith("line ") else "the end"
        raise damaged(path, where, why or str(exc)) from exc
    if (
        not isinstance(document, dict)
        or not isinstance(document.get("entities", []), list)
        or type(document.get("checkpointSeq") or 0) is not int
    ):
        raise damaged(
            path, "top level", "not a graph document (no 'entities' list, or a bad 'checkpointSeq')"
        )
    return document


@dataclass
class EpisodeLines:
    """What ``episodes.jsonl`` holds: the episodes (by id, a later copy replacing an
    earlier one in place), the lines that could not be read, and a torn tail."""

    episodes: dict[str, Doc] = field(default_factory=dict)
    bad: list[tuple[int, str]] = field(default_factory=list)  # line number, what is wrong
    torn: int = 0  # bytes after the last newline that do not make an episode


def parse_episodes(data: bytes) -> EpisodeLines:
    """Read ``episodes.jsonl``. A line that is not an episode (a JSON object with an
    ``id``, its checksum right) is bad, except an incomplete last line: the tail
    torn by an interrupted checkpoint (the journal still held those episodes).
    Once a line carries a checksum, every later line must."""
    found = EpisodeLines()
    pieces = data.split(b"\n")
    sealed = False
    for number, piece in enumerate(pieces, start=1):
        if not piece.strip():
            continue
        last = number == len(pieces)  # no newline after it: written in part
        try:
            record = read_record(piece, required=sealed)
            if not isinstance(record.get("id"), str):
                raise RecordDamaged("not an episode (a JSON object with an 'id')")
        except RecordDamaged as exc:
            if last:
                found.torn = len(piece)
            else:
                found.bad.append((number, str(exc)))
            continue
        sealed = sealed or has_checksum(piece)
        found.episodes[record["id"]] = record
    return found


def parse_summary(path: Path, raw: bytes) -> Doc:
    """``summary.json``'s object.

    Raises:
        StoreCorrupt: it is not JSON, or not a JSON object.
    """
    try:
        summary = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise decode_error(path, exc, data=raw) from exc
    if not isinstance(summary, dict):
        raise damaged(path, "top level", "not a JSON object")
    return summary


@dataclass(frozen=True)
class VectorsHeader:
    """``vectors.json``: the model, the row width and the ids of the rows, in order
    (an :class:`~memgraph.id_column.IdColumn` when they were packed), and the CRC-32
    of each block of rows a checkpoint wrote (``(end row, crc)``; none in files
    older than the checksums)."""

    model: str
    dim: int | None
    ids: Sequence[str]
    blocks: list[tuple[int, int]]


def parse_vectors_header(path: Path, raw: bytes) -> VectorsHeader:
    """``vectors.json``'s header.

    Raises:
        StoreCorrupt: not JSON, not an object, an unknown format, ids that do not
            match the count or cannot be unpacked, or blocks that do not end at the
            count.
    """
    try:
        header = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise decode_error(path, exc, data=raw) from exc
    if not isinstance(header, dict):
        raise damaged(path, "top level", "not a vectors header (a JSON object)", vectors=True)
    ids = _header_ids(path, header)
    count = header.get("count", len(ids) if ids is not None else 0)
    blocks = header.get("blocks") or []
    if ids is None or type(count) is not int or count != len(ids):
        shown = len(ids) if ids is not None else "no"
        raise damaged(
            path, "header", f"an unknown format, or {shown} ids for {count!r} rows", vectors=True
        )
    ends = [b[0] for b in blocks if isinstance(b, list) and len(b) == 2]
    if blocks and (
        len(ends) != len(blocks)
        or not all(type(b[0]) is int and type(b[1]) is int for b in blocks)
        or ends != sorted(set(ends))
        or ends[-1] != count
    ):
        raise damaged(path, "header", f"blocks {blocks!r} do not cover {count} rows", vectors=True)
    dim = header.get("dim")
    return VectorsHeader(
        str(header.get("model") or ""),
        dim if type(dim) is int else None,
        ids,
        [(int(end), int(crc)) for end, crc in blocks],
    )


def _header_ids(path: Path, header: Doc) -> Sequence[str] | None:
    """The rows' ids in a vectors header: a list of strings (format 1) or packed
    (format 2); None when the format or the list is not one of those."""
    ids = header.get("ids") or []
    if header.get("format") == VECTOR_FORMAT:
        return ids if isinstance(ids, list) and set(map(type, ids)) <= {str} else None
    if header.get("format") != PACKED_VECTOR_FORMAT:
        return None
    try:
        return unpack_row_ids(ids, header.get("count"))
    except ValueError as exc:
        raise damaged(path, "header", f"ids that cannot be unpacked: {exc}", vectors=True) from exc


def pack_row_ids(column: IdColumn) -> Doc:
    """Vector rows' ids as stored: their prefixes, and each id's prefix (an index
    into them; absent when there is one prefix) and its number less the one
    before it, as base64 of little-endian arrays compressed by zlib."""
    packed: Doc = {
        "prefixes": list(column.prefixes),
        "numbers": _pack(np.diff(column.numbers, prepend=0).astype("<i8")),
    }
    if column.codes is not None:
        packed["codes"] = _pack(column.codes)
    return packed


def unpack_row_ids(packed: object, count: object) -> IdColumn:
    """The ``count`` ids :func:`pack_row_ids` packed.

    Raises:
        ValueError: ``packed`` is not that, or holds another number of ids.
    """
    if not isinstance(packed, dict) or type(count) is not int:
        raise ValueError("not packed ids (an object) and their count")
    prefixes = packed.get("prefixes")
    if not (
        isinstance(prefixes, list)
        and 0 < len(prefixes) <= 256
        and all(isinstance(p, str) and p for p in prefixes)
    ):
        raise ValueError("no list of 1 to 256 prefixes")
    numbers = np.cumsum(_unpack(packed.get("numbers"), "<i8", count), dtype=np.int64)
    codes = None if "codes" not in packed else _unpack(packed["codes"], "u1", count)
    if len(numbers) and not 0 <= int(numbers.min()) <= int(numbers.max()) < 10**MAX_DIGITS:
        raise ValueError(f"numbers outside 0 to {MAX_DIGITS} digits")
    if codes is not None and len(codes) and int(codes.max()) >= len(prefixes):
        raise ValueError(f"a prefix beyond the {len(prefixes)} named")
    return IdColumn(prefixes, numbers, codes)


def _pack(array: npt.NDArray[Any]) -> str:
    return base64.b64encode(zlib.compress(array.tobytes(), 1)).decode("ascii")


def _unpack(text: object, dtype: str, count: int) -> npt.NDArray[Any]:
    """The ``count`` items of ``dtype`` that :func:`_pack` made ``text`` of."""
    if not isinstance(text, str):
        raise ValueError("an array that is not a string")
    try:
        data = zlib.decompress(base64.b64decode(text, validate=True))
    except (binascii.Error, zlib.error) as exc:
        raise ValueError(f"an array that cannot be decoded ({exc})") from exc
    width = np.dtype(dtype).itemsize
    if len(data) != count * width:
        raise ValueError(f"{len(data) // width} ids for {count} rows")
    return np.frombuffer(data, dtype=dtype)


def read_coarse(
    path: Path,
) -> tuple[np.ndarray[Any, np.dtype[np.float32]], np.ndarray[Any, np.dtype[np.int32]]]:
    """The centroids and row labels of ``vectors.ivf.npz`` (a zip: each member has a
    CRC-32, checked as it is read).

    Raises:
        FileNotFoundError: there is none.
        ValueError: it cannot be read (the message says why).
    """
    try:
        with open(path, "rb") as handle, np.load(handle) as saved:  # never unpickles
            centroids = np.ascontiguousarray(saved["centroids"], dtype=np.float32)
            labels = np.ascontiguousarray(saved["labels"], dtype=np.int32)
    except FileNotFoundError:
        raise
    except Exception as exc:  # zip, zlib, npy and OS errors alike: the file is unusable
        raise ValueError(f"{type(exc).__name__}: {exc}") from exc
    if centroids.ndim != 2 or labels.ndim != 1:
        raise ValueError(f"arrays of shapes {centroids.shape} and {labels.shape}")
    return centroids, labels


def vector_blocks_damaged(
    matrix: np.ndarray[Any, np.dtype[np.float32]], blocks: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """The row ranges ``[start, end)`` of ``matrix`` whose CRC-32 differs from ``blocks``."""
    found = []
    start = 0
    for end, crc in blocks:
        if block_crc(matrix[start:end]) != crc:
            found.append((start, end))
        start = end
    return found


def block_crc(rows: np.ndarray[Any, np.dtype[Any]]) -> int:
    """The CRC-32 of rows as stored (little-endian float32)."""
    return zlib.crc32(np.ascontiguousarray(rows, dtype="<f4").data)
