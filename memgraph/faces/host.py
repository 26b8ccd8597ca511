"""What a face needs from the memory that hands it out.

``Memory`` creates the faces (``memory.kv``, ``memory.as_of(...)``) and passes
itself in; the faces call back through these Protocols, which ``Memory``
satisfies structurally. So the faces sit below the engine and never import it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from memgraph.graph.graph import Doc, Graph
from memgraph.models import Hit
from memgraph.retrieval import ranking as tiers

__all__ = ["GraphHost", "ReadHost"]

T = TypeVar("T")


class GraphHost(Protocol):
    """Reads and writes the synced graph under the memory's lock
    (:class:`~memgraph.engine.core.MemoryCore`)."""

    def _read_graph(self, read: Callable[[Graph], T]) -> T: ...

    def _write_ops(self, build: Callable[[Graph], list[Doc]]) -> object: ...


class ReadHost(GraphHost, Protocol):
    """Also ranks and formats recall through a lens
    (:class:`~memgraph.engine.reading.ReadMixin`)."""

    def _ranked(
        self,
        query: str,
        *,
        rerank: bool,
        lens: tiers.Lens = ...,
        floor: float | None = ...,
    ) -> list[tiers.Candidate]: ...

    def _top_hits(
        self, ranked: list[tiers.Candidate], k: int, *, texts: bool = False
    ) -> list[tiers.Candidate]: ...

    def _recall_text(self, query: str, *, rerank: bool, lens: tiers.Lens) -> str: ...

    def _hits(
        self, ranked: list[tiers.Candidate], episodes: bool, lens: tiers.Lens
    ) -> list[Hit]: ...
