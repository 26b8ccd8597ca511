"""Time travel: a read-only view of a memory as it was at a past moment."""

from __future__ import annotations

from datetime import datetime

from memgraph.clock import iso, parse_iso
from memgraph.errors import NotFound
from memgraph.faces.host import ReadHost
from memgraph.faces.namespaces import read_namespace
from memgraph.graph.graph import Doc, Graph
from memgraph.models import Entity, Hit, Observation
from memgraph.retrieval import ranking as tiers

__all__ = ["MemoryView"]


class MemoryView:
    """What a memory held at ``at``: facts whose validity covers that moment.

    Obtain one with :meth:`memgraph.Memory.as_of`. A fact is visible when
    ``validFrom <= at < validTo`` (``validTo`` null means still valid). The
    view reads the live memory each call, so it sees facts recorded later
    about that time (for example a conversation imported with ``at=``).
    """

    def __init__(self, memory: ReadHost, at: str | datetime) -> None:
        self._memory = memory
        self.at = iso(parse_iso(at))

    def __repr__(self) -> str:
        return f"MemoryView({self._memory!r}, at={self.at!r})"

    def _lens(self, from_: str | None) -> tiers.Lens:
        return tiers.Lens(at=self.at, source=read_namespace(from_))

    def recall(self, query: str, *, rerank: bool = False, from_: str | None = None) -> str:
        """Like :meth:`memgraph.Memory.recall`, as of :attr:`at`."""
        return self._memory._recall_text(query, rerank=rerank, lens=self._lens(from_))

    def search(
        self, query: str, *, k: int = 10, episodes: bool = False, from_: str | None = None
    ) -> list[Hit]:
        """Like :meth:`memgraph.Memory.search`, as of :attr:`at`."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive integer (how many hits at most), got {k!r}")
        lens = self._lens(from_)
        ranked = self._memory._ranked(query, rerank=False, lens=lens, floor=tiers.SEARCH_FLOOR)
        return self._memory._hits(self._memory._top_hits(ranked, k, texts=episodes), episodes, lens)

    def _visible(self, doc: Doc, lens: tiers.Lens) -> Entity | None:
        observations = tuple(
            Observation.from_doc(o, doc["id"]) for o in doc["observations"] if lens.visible(o)
        )
        if not observations and not lens.entity_visible(doc):
            return None
        entity = Entity.from_doc(doc)
        return Entity(
            entity.id, entity.name, entity.type, entity.source, entity.created_at, observations
        )

    def entities(self) -> list[Entity]:
        """The entities that existed then, each with the facts valid then."""
        lens = self._lens("*")

        def read(graph: Graph) -> list[Entity]:
            found = (self._visible(doc, lens) for doc in graph.entities.values())
            return [entity for entity in found if entity is not None]

        return self._memory._read_graph(read)

    def entity(self, name: str) -> Entity:
        """The entity called ``name`` with the facts valid then.

        Raises:
            NotFound: it did not exist then.
        """
        lens = self._lens("*")
        doc = self._memory._read_graph(lambda graph: graph.entity_by_name(name))
        entity = self._visible(doc, lens) if doc is not None else None
        if entity is None:
            raise NotFound(f"no entity named {name!r} at {self.at}")
        return entity
