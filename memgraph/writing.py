"""Writing to memory: ``remember`` and the bulk path ``remember_many``."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import orjson

from memgraph import bulk, known
from memgraph import ranking as tiers
from memgraph.bulk import Item, Progress
from memgraph.changes import Plan, plan_extraction
from memgraph.clock import now_iso
from memgraph.core import CONTEXT_BUDGET, MAX_TEXT_CHARS, MemoryCore, coerce_time
from memgraph.extract import Extraction, extract
from memgraph.graph import Doc, Graph
from memgraph.models import (
    ChangeSet,
)
from memgraph.namespaces import current_source
from memgraph.notes import note_fields

__all__ = ["RememberMixin"]

log = logging.getLogger("memgraph")

CONTEXT_CHUNK = 1024
"""Texts whose extraction contexts ``remember_many`` searches for at once."""


class RememberMixin(MemoryCore):
    """Writing to memory: ``remember`` and the bulk path ``remember_many``."""

    def remember(
        self,
        text: str,
        *,
        at: str | datetime | None = None,
        source: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        category: str | None = None,
        tags: Sequence[str] | str | None = None,
    ) -> ChangeSet:
        """Extract facts from ``text`` and store them, with the text as an episode.

        Args:
            text: what was said or learned, in plain language.
            at: when it was said (world time, for importing old conversations);
                defaults to now.
            source: where the text came from (an agent, a channel); kept on the
                episode and every fact.
            metadata: a JSON-serializable dict stored with the episode.
            category: a category for every extracted fact (``preference``,
                ``rule``, ``learning``, ``decision`` or ``context``).
            tags: tags for every extracted fact.

        Returns:
            What changed. Empty (falsy) when nothing new was learned or the
            model's reply was unusable (a warning is logged then).

        Raises:
            TypeError: ``text`` is not a string or ``metadata`` is not JSON-serializable.
            ValueError: ``text`` is empty or longer than :data:`MAX_TEXT_CHARS`.
            ProviderError: the model could not be reached; nothing was stored.
            StoreError: the write could not be persisted; nothing was stored.
        """
        clean = self._check_text(text)
        source = source or current_source()
        said_at = coerce_time(at)
        meta = self._check_metadata(metadata)
        fields = note_fields(category, tags)
        with self._lock:
            graph = self._sync()
            context = self._context_for(graph, clean)
        answer = extract(self.provider.chat, clean, known=context, said_at=said_at)
        if answer.value is None:
            return ChangeSet(warnings=tuple(answer.problems))
        extraction: Extraction = answer.value
        now = now_iso()
        episode: Doc = {"text": clean, "at": said_at, "recordedAt": now, "source": source}
        if meta:
            episode["metadata"] = meta

        def plan_for(graph: Graph) -> Plan:
            return plan_extraction(
                graph,
                extraction,
                at=said_at,
                now=now,
                source=source,
                episode=episode,
                observation_fields=fields,
            )

        plan, commit = self._write(plan_for)
        warnings = tuple(answer.problems) + tuple(plan.warnings)
        for warning in plan.warnings:
            log.warning("memgraph: %s", warning)
        return self._change_set(plan, commit, warnings)

    def remember_many(
        self,
        items: Iterable[str | Item | Mapping[str, Any]],
        *,
        at: str | datetime | None = None,
        source: str | None = None,
        concurrency: int = 1,
        progress: Progress | None = None,
    ) -> list[ChangeSet]:
        """Remember many texts: the bulk path for imports (:mod:`memgraph.bulk`).

        Each item is a text, an :class:`~memgraph.bulk.Item` or a dict with
        ``text`` and optionally ``at``, ``speaker``, ``source``, ``metadata``
        and ``extract``; each keeps its own time, speaker and metadata on its
        episode. Extraction contexts are found in batches, model calls run
        ``concurrency`` at a time, and results are applied in input order and
        committed in chunks (at most 1,000 items, about a second of lock time
        each), releasing the lock between chunks.

        Args:
            items: the texts or items, in the order they were said.
            at: the time of items that give none (default: now).
            source: the source of items that give none.
            concurrency: model calls in flight at once (1: one after another).
            progress: called as ``progress(done, total)`` first with 0, then
                after each chunk is durably stored.

        Returns:
            One change set per item, in order.

        Raises:
            TypeError, ValueError: an item is not acceptable (the message names
                its index); nothing is stored.
            ProviderError: the model could not be reached. The items before
                the failing one are stored, nothing from it on.
            StoreError: a chunk could not be persisted. Every chunk reported
                through ``progress`` is stored, nothing after it.
        """
        entries = bulk.prepare(
            items,
            at=at,
            source=source or current_source(),
            check_text=self._check_text,
            check_metadata=self._check_metadata,
        )
        return bulk.remember_entries(self, entries, concurrency=concurrency, progress=progress)

    @staticmethod
    def _check_text(text: object) -> str:
        if isinstance(text, bytes):
            try:
                text = text.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(
                    f"text is not valid UTF-8 (byte {exc.start}); decode it before remembering"
                ) from exc
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        clean = text.replace("\x00", "").strip()
        try:
            clean.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(
                f"text holds a lone surrogate at index {exc.start} and is not valid Unicode; "
                "decode it properly before remembering"
            ) from exc
        if not clean:
            raise ValueError("text is empty; there is nothing to remember")
        if len(clean) > MAX_TEXT_CHARS:
            raise ValueError(
                f"text is {len(clean):,} characters, over the {MAX_TEXT_CHARS:,} limit of one "
                "remember; split it into several calls"
            )
        return clean

    @staticmethod
    def _check_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any] | None:
        if metadata is None:
            return None
        if not isinstance(metadata, Mapping):
            raise TypeError(f"metadata must be a dict, got {type(metadata).__name__}")
        try:
            return dict(orjson.loads(orjson.dumps(dict(metadata))))
        except TypeError as exc:
            raise TypeError(f"metadata must be JSON-serializable: {exc}") from exc

    def _context_for(
        self,
        graph: Graph,
        text: str,
        query_vector: np.ndarray | None = None,
        hits: Sequence[tuple[str, float]] | None = None,
    ) -> str:
        """The bounded existing-entity context for an extraction prompt (:mod:`memgraph.known`).

        ``query_vector`` is the text's embedding and ``hits`` its nearest
        observations, when the caller has them (the bulk path); else they are
        computed here.
        """
        if not graph.entities:
            return ""
        vectors = self._vectors if self.provider.embedder is not None else None
        if vectors is not None and not len(vectors):
            vectors = None
        if vectors is not None and query_vector is None:
            query_vector = self._embed([text])[0]
        return known.extraction_context(
            graph,
            text,
            count_tokens=self._count_tokens,
            budget=CONTEXT_BUDGET,
            vectors=vectors,
            query_vector=query_vector,
            hits=hits,
        )

    def _contexts_for(self, graph: Graph, texts: Sequence[str]) -> list[str]:
        """:meth:`_context_for` of many texts: per :data:`CONTEXT_CHUNK` texts, one
        embedding call and one pass over the vector lists they visit."""
        if not graph.entities:
            return ["" for _ in texts]
        index = self._vectors
        if self.provider.embedder is None or index is None or not len(index):
            return [self._context_for(graph, text) for text in texts]
        contexts: list[str] = []
        for start in range(0, len(texts), CONTEXT_CHUNK):  # bounded scratch for huge imports
            chunk = texts[start : start + CONTEXT_CHUNK]
            queries = self._embed(chunk)
            found = index.search_many(
                queries, known.NEIGHBOURS, tiers.SEMANTIC_THRESHOLD, max_rows=known.PROBE_ROWS
            )
            contexts += [
                self._context_for(graph, text, queries[i], found[i]) for i, text in enumerate(chunk)
            ]
        return contexts
