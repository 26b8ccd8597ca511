"""Writing to memory: ``remember`` and the bulk path ``remember_many``."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import orjson

from memgraph.clock import now_iso, parse_iso
from memgraph.engine.core import (
    CONTEXT_BUDGET,
    DEFAULT_SPEAKER,
    MAX_TEXT_CHARS,
    MemoryCore,
    coerce_time,
)
from memgraph.faces.namespaces import current_source
from memgraph.faces.notes import note_fields
from memgraph.graph.changes import Plan, plan_extraction
from memgraph.graph.graph import Doc, Graph
from memgraph.llm_calls.extract import Extraction, extract
from memgraph.models import (
    ChangeSet,
)
from memgraph.retrieval import known
from memgraph.retrieval import ranking as tiers
from memgraph.retrieval.episode_index import conversation_key
from memgraph.speakers import split_speaker
from memgraph.store.base import Commit, VectorBatch

__all__ = ["RememberMixin"]

log = logging.getLogger("memgraph")

CONTEXT_CHUNK = 1024
"""Texts whose extraction contexts ``remember_many`` searches for at once."""


@dataclass(frozen=True)
class _TurnContext:
    addressee: str | None = None
    previous: str | None = None


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
        speaker: str | None = None,
    ) -> ChangeSet:
        """Extract facts from ``text`` and store them, with the text as an episode.

        Args:
            text: what was said or learned, in plain language.
            at: when it was said (world time, for importing old conversations);
                defaults to now. Relative dates in the text ("yesterday") are
                resolved against it.
            source: where the text came from (an agent, a channel); kept on the
                episode and every fact.
            metadata: a JSON-serializable dict stored with the episode.
            category: a category for every extracted fact (``preference``,
                ``rule``, ``learning``, ``decision`` or ``context``).
            tags: tags for every extracted fact.
            speaker: who said it: first-person statements are about this
                entity. Defaults to the ``Name:`` label of a transcript line
                ("Maria: I joined a gym"), else ``"User"``, the agent's user.

        Returns:
            What changed. Empty (falsy) when nothing new was learned. When the
            model's reply was unusable the text is still stored, as an episode
            marked unextracted (``reextract`` retries it), and the change set's
            ``unusable_reply`` says why.

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
        speaker = self._speaker_of(clean, speaker)
        now = now_iso()
        episode: Doc = {"text": clean, "at": said_at, "recordedAt": now, "source": source}
        if speaker is not None:
            episode["speaker"] = speaker
        if meta:
            episode["metadata"] = meta
        with self._lock:
            graph = self._sync()
            context = self._context_for(graph, clean)
            turn = self._turn_before(graph, episode)
        answer = extract(
            self.provider.chat,
            clean,
            known=context,
            said_at=said_at,
            speaker=speaker or DEFAULT_SPEAKER,
            addressee=turn.addressee,
            previous=turn.previous,
        )
        unusable = None
        extraction: Extraction = Extraction()
        if answer.value is None:
            unusable = answer.problems[-1] if answer.problems else "the model's reply was unusable"
            episode["unextracted"] = True
        else:
            extraction = answer.value

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
        changes = self._change_set(plan, commit, warnings)
        if unusable is not None:
            log.warning(
                "memgraph: model reply unusable (%s); the text is kept unextracted", unusable
            )
            changes = dataclasses.replace(changes, unusable_reply=unusable)
        return changes

    @staticmethod
    def _speaker_of(text: str, speaker: str | None) -> str | None:
        if speaker is not None:
            if not isinstance(speaker, str) or not speaker.strip():
                raise ValueError(f"speaker must be a non-empty name, got {speaker!r}")
            return " ".join(speaker.split())[:200]
        label, _words = split_speaker(text)
        return label

    def _turn_before(self, graph: Graph, episode: Doc) -> _TurnContext:
        """Who "you" is and what was said just before ``episode`` in its conversation."""
        index = self._episodes_indexed()
        try:
            at_ms = int(parse_iso(episode["at"]).timestamp() * 1000)
        except ValueError:
            return _TurnContext()
        last = index.previous(conversation_key(episode), at_ms)
        if last is None:
            return _TurnContext()
        speaker = episode.get("speaker") or DEFAULT_SPEAKER
        addressee = last.speaker if last.speaker and last.speaker != speaker else last.other
        text = last.text
        if last.speaker and not split_speaker(text)[0]:
            text = f"{last.speaker}: {text}"
        return _TurnContext(addressee if addressee != speaker else None, text)

    def remember_many(
        self,
        texts: Sequence[str],
        *,
        at: str | datetime | None = None,
        source: str | None = None,
    ) -> list[ChangeSet]:
        """Remember many texts with batched embedding calls and one commit.

        The bulk path for imports: the contexts of all the texts are found
        together (batched embedding calls, one pass over the vector index), the
        texts are extracted one by one (one LLM call each), applied in order,
        and persisted as a single journal commit with one fsync. The context of
        each extraction is the memory as it was before the batch.

        Returns:
            One change set per text, in order.

        Raises:
            TypeError, ValueError: a text is not acceptable (nothing is stored).
            ProviderError: the model could not be reached; nothing is stored.
            StoreError: the batch could not be persisted; nothing is stored.
        """
        cleaned = [self._check_text(text) for text in texts]
        if not cleaned:
            return []
        source = source or current_source()
        said_at = coerce_time(at)
        with self._lock:
            contexts = self._contexts_for(self._sync(), cleaned)
        answers = [
            extract(self.provider.chat, text, known=context, said_at=said_at)
            for text, context in zip(cleaned, contexts, strict=True)
        ]
        now = now_iso()
        with self._lock, self._writer():
            graph = self._sync()
            plans: list[Plan | None] = []
            ops: list[Doc] = []
            embed: list[tuple[str, str]] = []
            try:
                for text, answer in zip(cleaned, answers, strict=True):
                    if answer.value is None:
                        plans.append(None)
                        continue
                    episode = {"text": text, "at": said_at, "recordedAt": now, "source": source}
                    plan = plan_extraction(
                        graph, answer.value, at=said_at, now=now, source=source, episode=episode
                    )
                    graph.apply(plan.ops)  # later texts resolve against earlier ones
                    graph.next_id = plan.next_id
                    plans.append(plan)
                    ops.extend(plan.ops)
                    embed.extend(plan.embed)
                rows = self._embed([t for _, t in embed]) if embed and self.embedder_model else None
                batch = None
                if rows is not None and self.embedder_model is not None:
                    batch = VectorBatch(self.embedder_model, tuple(i for i, _ in embed), rows)
                commit = Commit(graph.seq + 1, now_iso(), graph.next_id, ops, batch)
                if ops:
                    self.store.commit(commit)
            except BaseException:
                self._graph = None  # the in-memory graph ran ahead of the store: reload
                raise
            if ops:
                graph.seq = commit.seq
                self._apply_vectors(commit)
                self._maybe_checkpoint()
                self._freeze_if_large(graph)  # the records a batch parsed are long-lived
            results = []
            for planned, answer in zip(plans, answers, strict=True):
                if planned is None:
                    results.append(ChangeSet(warnings=tuple(answer.problems)))
                else:
                    warnings = tuple(answer.problems) + tuple(planned.warnings)
                    results.append(self._change_set(planned, commit, warnings))
            return results

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
        """The bounded existing-entity context for an extraction prompt (:mod:`memgraph.retrieval.known`).

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
                queries,
                known.NEIGHBOURS,
                tiers.SEMANTIC_THRESHOLD,
                max_rows=known.PROBE_ROWS,
                kind="facts",
            )
            contexts += [
                self._context_for(graph, text, queries[i], found[i]) for i, text in enumerate(chunk)
            ]
        return contexts
