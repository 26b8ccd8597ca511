"""The reference memory server's ``memory.jsonl``: import it into a memory, export a memory as it.

The file (``@modelcontextprotocol/server-memory``) holds one JSON object per
line, entities first, then relations, with no trailing newline::

    {"type":"entity","name":"Alice","entityType":"person","observations":["likes tea"]}
    {"type":"relation","from":"Alice","to":"Acme","relationType":"works_at"}

:func:`import_reference` stores its facts as given (no LLM) and is idempotent:
a second run of the same file adds nothing. :func:`export_reference` writes the
current graph in that format, byte for byte as the reference server would.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from memgraph import Memory
from memgraph.mcp.compat import ReferenceGraph

__all__ = ["IMPORT_SOURCE", "ImportReport", "export_reference", "import_reference"]

IMPORT_SOURCE = "reference-import"
"""The ``source`` imported facts record (their provenance)."""

CHUNK = 500
"""Entities or relations stored per commit while importing."""


@dataclass(frozen=True)
class ImportReport:
    """What :func:`import_reference` read and what it added (all zero on a second run).

    Attributes:
        path: the file read.
        entities_read, relations_read: records in the file.
        entities_added, observations_added, relations_added: what was new.
    """

    path: str
    entities_read: int
    relations_read: int
    entities_added: int
    observations_added: int
    relations_added: int

    def __str__(self) -> str:
        return (
            f"read {self.entities_read} entities and {self.relations_read} relations "
            f"from {self.path}; added {self.entities_added} entities, "
            f"{self.observations_added} observations and {self.relations_added} relations"
        )


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise ValueError(f"{str(path)!r} line {number} is not JSON: {exc}") from exc
            if not isinstance(record, dict):
                raise ValueError(f"{str(path)!r} line {number} is not a JSON object")
            yield number, record


def _string(record: dict[str, Any], key: str, where: str) -> str:
    value = record.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{where}: {key!r} must be a string, got {value!r}")
    return value


def import_reference(memory: Memory, path: str | os.PathLike[str]) -> ImportReport:
    """Store the entities, observations and relations of a reference ``memory.jsonl``.

    Facts are stored as given (:meth:`memgraph.Memory.add_facts`, source
    :data:`IMPORT_SOURCE`), entities before relations, a few hundred per commit.
    Running it twice adds nothing the second time. Lines of another ``type``
    are skipped, as the reference server skips them.

    Raises:
        ValueError: a line is not JSON or a record lacks a field (nothing of a
            malformed file is stored: the whole file is checked first).
        OSError: the file cannot be read.
        StoreError: a commit failed; the commits before it are kept, and
            importing again completes the rest.
    """
    source = Path(path)
    entities: list[tuple[str, str, list[str]]] = []
    relations: list[tuple[str, str, str]] = []
    for number, record in _records(source):
        where = f"{str(source)!r} line {number}"
        if record.get("type") == "entity":
            observations = record.get("observations", [])
            if not isinstance(observations, list) or not all(
                isinstance(o, str) for o in observations
            ):
                raise ValueError(f"{where}: 'observations' must be a list of strings")
            entities.append(
                (
                    _string(record, "name", where),
                    _string(record, "entityType", where),
                    observations,
                )
            )
        elif record.get("type") == "relation":
            relations.append(
                (
                    _string(record, "from", where),
                    _string(record, "to", where),
                    _string(record, "relationType", where),
                )
            )
    added = [0, 0, 0]
    for start in range(0, len(entities), CHUNK):
        changes = memory.add_facts(entities[start : start + CHUNK], source=IMPORT_SOURCE)
        added[0] += len(changes.added_entities)
        added[1] += len(changes.added_observations)
    for start in range(0, len(relations), CHUNK):
        changes = memory.add_facts(relations=relations[start : start + CHUNK], source=IMPORT_SOURCE)
        added[0] += len(changes.added_entities)
        added[2] += len(changes.added_relations)
    return ImportReport(str(source), len(entities), len(relations), *added)


def export_reference(memory: Memory) -> str:
    """The memory's current graph as a reference ``memory.jsonl`` (no trailing newline).

    Entities (oldest first, with their current observations), then the current
    relations between them; expired facts are left out, as deleted ones are
    from the reference file.
    """
    entities, relations = ReferenceGraph(memory).everything()
    lines = [orjson.dumps({"type": "entity", **entity}) for entity in entities]
    lines += [orjson.dumps({"type": "relation", **relation}) for relation in relations]
    return b"\n".join(lines).decode()
