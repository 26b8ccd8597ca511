"""What the peer (Agency's memory layer) would write for the same content.

Agency keeps a scope as two pretty-printed JSON files (see
``fixtures/agency-memory``): ``graph.json`` (entities with their
observations, relations, ``nextId``; ``JSON.stringify(doc, null, 2)``) and
``embeddings.json`` (``{"model", "embeddings": {obs id: [floats...]}}``, also
indented, one float per line). Python's ``json.dumps(indent=2,
ensure_ascii=False)`` writes the same bytes, and a float32 widened to a double
prints the same shortest round-trip digits in both languages.

The size is computed without writing the files (at 100k observations the
embeddings file alone is over a gigabyte): ``graph.json`` exactly, one entity
at a time; ``embeddings.json`` exactly up to :data:`EXACT_VECTORS` rows and
from a sample of rows above (the per-row size is near constant).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import orjson

__all__ = ["EXACT_VECTORS", "agency_sizes"]

EXACT_VECTORS = 5_000
SAMPLE_ROWS = 2_000

_ENTITY_FIELDS = ("id", "name", "type", "source", "createdAt")
_OBS_FIELDS = ("id", "content", "validFrom", "validTo")
_REL_FIELDS = ("id", "from", "to", "type", "source", "validFrom", "validTo")


def _dump(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _indented(value: Any, depth: int) -> int:
    """UTF-8 bytes of ``value`` pretty-printed as an array item at ``depth`` levels."""
    text = _dump(value).replace("\n", "\n" + "  " * depth)
    return len(("  " * depth + text).encode())


def _graph_bytes(document: dict[str, Any]) -> int:
    entities = document.get("entities") or []
    relations = document.get("relations") or []
    total = len(b'{\n  "entities": [\n') + len(b'\n  ],\n  "relations": [\n')
    total += len(f'\n  ],\n  "nextId": {int(document.get("nextId") or 1)}\n}}'.encode())
    for n, entity in enumerate(entities):
        doc = {k: entity.get(k) for k in _ENTITY_FIELDS}
        doc["observations"] = [{k: o.get(k) for k in _OBS_FIELDS} for o in entity["observations"]]
        total += _indented(doc, 2) + (2 if n else 0)  # ",\n" between items
    for n, rel in enumerate(relations):
        total += _indented({k: rel.get(k) for k in _REL_FIELDS}, 2) + (2 if n else 0)
    if not entities:
        total -= 1
    if not relations:
        total -= 1
    return total


def _embeddings_bytes(ids: list[str], matrix: np.ndarray, model: str) -> tuple[int, bool]:
    count = len(ids)
    if count <= EXACT_VECTORS:
        document = {
            "model": model,
            "embeddings": dict(zip(ids, matrix[:count].tolist(), strict=True)),
        }
        return len(_dump(document).encode()), True
    rows = np.linspace(0, count - 1, SAMPLE_ROWS).astype(int)
    sample = {ids[r]: matrix[r].tolist() for r in rows}
    head = len(_dump({"model": model, "embeddings": {}}).encode()) - 2
    body = len(_dump({"model": model, "embeddings": sample}).encode()) - head
    return head + round(body * count / len(sample)), False


def agency_sizes(scope_dir: Path) -> dict[str, Any]:
    """Bytes of Agency's ``graph.json`` and ``embeddings.json`` for this scope's content."""
    document = orjson.loads((scope_dir / "graph.json").read_bytes())
    header = orjson.loads((scope_dir / "vectors.json").read_bytes())
    count = int(header["count"])
    matrix = np.load(scope_dir / "vectors.npy", mmap_mode="r")[:count]
    current = {o["id"] for e in document.get("entities") or [] for o in e["observations"]}
    ids = [i for i in header["ids"] if i in current]
    graph = _graph_bytes(document)
    embeddings, exact = _embeddings_bytes(ids, np.asarray(matrix), header.get("model") or "")
    return {
        "agency_graph_json": graph,
        "agency_embeddings_json": embeddings,
        "agency_embeddings_exact": exact,
        "agency_total": graph + embeddings,
    }
