"""Exporting a scope: memgraph's JSON document, or GraphML through networkx."""

from __future__ import annotations

import io
from collections.abc import Iterable

import networkx as nx
import orjson

from memgraph.graph.graph import Doc, Graph

__all__ = ["to_graphml", "to_json", "to_networkx"]


def to_json(
    graph: Graph, episodes: Iterable[Doc], *, scope: str, current_only: bool = False
) -> bytes:
    """The whole scope as pretty JSON: graph.json's shape plus the episodes.

    ``current_only`` leaves out expired observations and relations.
    """
    document = graph.to_document()
    document.pop("checkpointSeq", None)
    if current_only:
        document["entities"] = [
            {**e, "observations": [o for o in e["observations"] if o.get("validTo") is None]}
            for e in document["entities"]
        ]
        document["relations"] = [r for r in document["relations"] if r.get("validTo") is None]
    document["scope"] = scope
    document["episodes"] = list(episodes)
    return orjson.dumps(document, option=orjson.OPT_INDENT_2)


def to_networkx(graph: Graph, *, current_only: bool = False) -> nx.MultiDiGraph:
    """Entities as nodes and relations as edges; observations ride on their node."""
    result = nx.MultiDiGraph()
    for entity in graph.entities.values():
        observations = [
            o for o in entity["observations"] if not current_only or o.get("validTo") is None
        ]
        result.add_node(
            entity["id"],
            name=entity["name"],
            type=entity.get("type") or "thing",
            createdAt=entity.get("createdAt") or "",
            observations=orjson.dumps(
                [{k: v for k, v in o.items() if v is not None} for o in observations]
            ).decode(),
            current=" | ".join(o["content"] for o in observations if o.get("validTo") is None),
        )
    for rel in graph.relations.values():
        if current_only and rel.get("validTo") is not None:
            continue
        result.add_edge(
            rel["from"],
            rel["to"],
            key=rel["id"],
            type=rel["type"],
            validFrom=rel.get("validFrom") or "",
            validTo=rel.get("validTo") or "",
        )
    return result


def to_graphml(graph: Graph, *, current_only: bool = False) -> bytes:
    """GraphML bytes of :func:`to_networkx`."""
    buffer = io.BytesIO()
    nx.write_graphml(to_networkx(graph, current_only=current_only), buffer)
    return buffer.getvalue()
