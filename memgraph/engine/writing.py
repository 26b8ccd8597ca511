"""Writing to memory: ``remember`` and the bulk path ``remember_many``."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import orjson

from memgraph.clock import epoch_ms, now_iso
from memgraph.dates import days_line, names_a_bare_day
from memgraph.engine import bulk
from memgraph.engine.bulk import Progress
from memgraph.engine.core import (
    DEFAULT_SPEAKER,
    MAX_TEXT_CHARS,
    MemoryCore,
    coerce_time,
)
from memgraph.faces.namespaces import current_source
from memgraph.faces.notes import note_fields
from memgraph.graph.changes import Plan, plan_extraction, plan_facts
from memgraph.graph.graph import Doc, Graph
from memgraph.llm_calls.ask import Answer
from memgraph.llm_calls.extract import (
    MAX_CONTENT,
    MAX_NAME,
    MAX_TYPE,
    Extraction,
    TurnContext,
    clean_label,
    extract,
)
from memgraph.models import (
    ChangeSet,
    Episode,
    Item,
)
from memgraph.retrieval.days_said import days_said_before
from memgraph.retrieval.episode_index import conversation_key
from memgraph.speakers import speaker_name, split_speaker, transcript_turns
from memgraph.store.base import Commit

__all__ = ["RememberMixin"]

log = logging.getLogger("memgraph")


@dataclass
class _Remembering:
    """One ``remember`` between its phases: the checked input, then its context."""

    text: str
    said_at: str
    now: str
    source: str
    fields: dict[str, object]
    speaker: str | None
    episode: Doc
    context: str = ""
    turn: TurnContext = field(default_factory=TurnContext)


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

        A transcript (two or more lines, each ``Name: words``) with no
        ``speaker``, ``category`` or ``tags`` is a conversation: each line is
        remembered as its own episode with its speaker, in order, each read
        with the line before it (as :meth:`remember_many` does; an
        ``assistant:`` line is kept with no model call), and all of them are
        stored in one commit or none is. That is one model call per line, and
        what lets recall quote and attribute each turn.

        Returns:
            What changed. Empty (falsy) when nothing new was learned. When the
            model's reply was unusable the text is still stored, as an episode
            marked unextracted (``reextract`` retries it), and the change set's
            ``unusable_reply`` says why. For a transcript, everything its lines
            changed, with the last line's episode.

        Raises:
            TypeError: ``text`` is not a string or ``metadata`` is not JSON-serializable.
            ValueError: ``text`` is empty or longer than :data:`MAX_TEXT_CHARS`.
            ProviderError: the model could not be reached; nothing was stored.
            StoreError: the write could not be persisted; nothing was stored.
        """
        turns = self._transcript(text, speaker, category, tags)
        if turns is not None:
            return self._remember_transcript(turns, at=at, source=source, metadata=metadata)
        request = self._remember_request(
            text,
            at=at,
            source=source,
            metadata=metadata,
            category=category,
            tags=tags,
            speaker=speaker,
        )
        self._remember_context(request)
        answer = extract(
            self.provider.chat,
            request.text,
            known=request.context,
            said_at=request.said_at,
            speaker=request.speaker or DEFAULT_SPEAKER,
            turn=request.turn,
        )
        plan, commit = self._write(self._remember_plan(request, answer))
        return self._remembered(answer, plan, commit)

    def _transcript(
        self,
        text: object,
        speaker: str | None,
        category: str | None,
        tags: Sequence[str] | str | None,
    ) -> list[tuple[str, str]] | None:
        """The turns of ``text`` when ``remember`` stores it line by line (see there)."""
        if speaker is not None or category is not None or tags is not None:
            return None
        if not isinstance(text, str) or "\n" not in text.strip():
            return None
        return transcript_turns(self._check_text(text))

    def _remember_transcript(
        self,
        turns: Sequence[tuple[str, str]],
        *,
        at: str | datetime | None,
        source: str | None,
        metadata: Mapping[str, Any] | None,
    ) -> ChangeSet:
        """Remember a transcript's lines as their speakers' turns, in one commit."""
        entries = bulk.prepare(
            [Item(words, speaker=who, metadata=metadata) for who, words in turns],
            at=now_iso() if at is None else at,
            source=source or current_source(),
            check_text=self._check_text,
            check_metadata=self._check_metadata,
        )
        return ChangeSet.combined(bulk.remember_entries(self, entries, whole=True))

    # The phases of remember, also run one by one by AsyncMemory (engine/async_memory.py),
    # which awaits the model calls between them.
    def _remember_request(
        self,
        text: str,
        *,
        at: str | datetime | None,
        source: str | None,
        metadata: Mapping[str, Any] | None,
        category: str | None,
        tags: Sequence[str] | str | None,
        speaker: str | None,
    ) -> _Remembering:
        """Check the arguments of a remember and build its episode (no lock, no I/O)."""
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
        return _Remembering(clean, said_at, now, source, fields, speaker, episode)

    def _remember_context(
        self, request: _Remembering, query_vector: np.ndarray | None = None
    ) -> None:
        """What the extraction prompt shows besides the text: the known entities it
        names or is near (``query_vector`` is the text's embedding, when the caller
        has it) and the turn before it."""
        with self._lock:
            graph = self._sync()
            request.context = self._context_for(
                graph, request.text, query_vector, speaker=request.speaker
            )
            turn = self._turn_before(graph, request.episode)
            if names_a_bare_day(request.text):  # "the 28th": the days named before it
                days = days_said_before(request.episode, self._turns_before(graph, None))
                turn = dataclasses.replace(turn, days_named=days_line(days))
            request.turn = turn

    def _remember_plan(
        self, request: _Remembering, answer: Answer[Extraction]
    ) -> Callable[[Graph], Plan]:
        """How to plan the write of the model's answer (an unusable one stores the
        text unextracted)."""
        extraction: Extraction = Extraction()
        if answer.value is None:
            request.episode["unextracted"] = True
        else:
            extraction = answer.value

        def plan_for(graph: Graph) -> Plan:
            return plan_extraction(
                graph,
                extraction,
                at=request.said_at,
                now=request.now,
                source=request.source,
                episode=request.episode,
                observation_fields=request.fields,
            )

        return plan_for

    def _remembered(
        self, answer: Answer[Extraction], plan: Plan, commit: Commit | None
    ) -> ChangeSet:
        """The change set of a committed remember, its warnings logged."""
        unusable = None
        if answer.value is None:
            unusable = answer.problems[-1] if answer.problems else "the model's reply was unusable"
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

    def reextract(self, *, limit: int | None = None) -> list[ChangeSet]:
        """Ask the model again for the facts of texts stored unextracted (its reply was
        unusable when they were remembered), oldest first.

        Returns:
            One change set per text tried; a text whose reply is still unusable
            stays unextracted (its change set's ``unusable_reply`` says why).

        Raises:
            ProviderError: the model could not be reached; what was stored stays.
        """
        results: list[ChangeSet] = []
        for episode in self._unextracted(limit):
            answer = extract(
                self.provider.chat,
                episode.text,
                known=self._reextract_context(episode),
                said_at=episode.at,
                speaker=episode.speaker or DEFAULT_SPEAKER,
            )
            plan_for = self._reextract_plan(episode, answer)
            if plan_for is None:
                results.append(self._still_unusable(answer))
                continue
            plan, commit = self._write(plan_for)
            results.append(self._reextracted(answer, plan, commit))
        return results

    # The phases of reextract, also run one by one by AsyncMemory.
    def _unextracted(self, limit: int | None) -> list[Episode]:
        """The texts stored unextracted and not extracted since, oldest first."""
        with self._lock:
            graph = self._sync()
            done = graph.extracted_later()
            docs = {doc["id"]: doc for doc in self.store.episodes()}
            docs.update(graph.episodes)
        ordered = sorted(docs.values(), key=lambda d: (d.get("recordedAt") or "", d["id"]))
        return [
            Episode.from_doc(d) for d in ordered if d.get("unextracted") and d["id"] not in done
        ][:limit]

    def _reextract_context(self, episode: Episode, query_vector: np.ndarray | None = None) -> str:
        """The known entities the extraction prompt shows for ``episode``'s text."""
        with self._lock:
            graph = self._sync()
            return self._context_for(graph, episode.text, query_vector, speaker=episode.speaker)

    def _reextract_plan(
        self, episode: Episode, answer: Answer[Extraction]
    ) -> Callable[[Graph], Plan] | None:
        """How to plan the write of the facts the model drew from ``episode`` (``None``
        when its reply is still unusable)."""
        if answer.value is None:
            return None
        extraction: Extraction = answer.value
        now = now_iso()

        def plan_for(graph: Graph) -> Plan:
            return plan_extraction(
                graph,
                extraction,
                at=episode.at,
                now=now,
                source=episode.source,
                stored_episode=episode.id,
            )

        return plan_for

    def _reextracted(
        self, answer: Answer[Extraction], plan: Plan, commit: Commit | None
    ) -> ChangeSet:
        return self._change_set(plan, commit, tuple(answer.problems) + tuple(plan.warnings))

    @staticmethod
    def _still_unusable(answer: Answer[Extraction]) -> ChangeSet:
        """A re-extraction whose reply is still unusable: nothing changed, and why."""
        problem = answer.problems[-1] if answer.problems else "the reply was unusable"
        return ChangeSet(warnings=tuple(answer.problems), unusable_reply=problem)

    @staticmethod
    def _speaker_of(text: str, speaker: str | None) -> str | None:
        if speaker is not None:
            if not isinstance(speaker, str) or not speaker.strip():
                raise ValueError(f"speaker must be a non-empty name, got {speaker!r}")
            return speaker_name(speaker)[:200]
        label, _words = split_speaker(text)
        return label

    def _turn_before(self, graph: Graph, episode: Doc) -> TurnContext:
        """Who "you" is and what was said just before ``episode`` in its conversation."""
        index = self._episodes_indexed()
        try:
            at_ms = epoch_ms(episode["at"])
        except ValueError:
            return TurnContext()
        last = index.previous(conversation_key(episode), at_ms)
        if last is None:
            return TurnContext()
        speaker = episode.get("speaker") or DEFAULT_SPEAKER
        addressee = last.speaker if last.speaker and last.speaker != speaker else last.other
        text = last.text
        if last.speaker and not split_speaker(text)[0]:
            text = f"{last.speaker}: {text}"
        return TurnContext(addressee if addressee != speaker else None, text)

    def add_facts(
        self,
        entities: Iterable[tuple[str, str, Iterable[str]]] = (),
        relations: Iterable[tuple[str, str, str]] = (),
        *,
        at: str | datetime | None = None,
        source: str | None = None,
    ) -> ChangeSet:
        """Store entities, observations and relations exactly as given, without the LLM.

        The structured counterpart of :meth:`remember`, for facts that arrive as
        data (an MCP client's ``create_entities``, a file import). The write is
        journaled and locked like any other.

        * ``entities`` are ``(name, type, observations)``. A name resolves like
          everywhere else (case and whitespace do not matter); an existing entity
          keeps its type and gains the observations it does not already hold as
          current facts. Empty observations are skipped.
        * ``relations`` are ``(from, to, type)`` by entity name; a missing
          endpoint is created with type ``thing``, a relation already current is
          skipped, and the type is kept as given.
        * Nothing is superseded: a new "works at Globex" does not retire "works
          at Acme" (expire that one, or use :meth:`remember`, which does).

        No episode is stored; every fact records ``source``.

        Args:
            entities: ``(name, type, observations)`` triples.
            relations: ``(from, to, type)`` triples.
            at: when the facts became true (``validFrom``); defaults to now.
            source: who wrote them; defaults to the current namespace.

        Returns:
            What changed (empty when everything was already known).

        Raises:
            TypeError: a name, type or observation is not a string.
            ValueError: a name, type or relation end is empty or too long, or an
                observation is over 2,000 characters. Nothing is stored then.
            StoreError: the write could not be persisted; nothing was stored.
        """
        cleaned_entities: list[tuple[str, str, list[str]]] = []
        for index, (name, type_, observations) in enumerate(entities):
            where = f"entities[{index}]"
            contents = [
                clean_label(content, f"{where}.observations[{position}]", MAX_CONTENT)
                for position, content in enumerate(_strings(observations, f"{where}.observations"))
            ]
            cleaned_entities.append(
                (
                    _required(name, f"{where}.name", MAX_NAME),
                    clean_label(type_, f"{where}.type", MAX_TYPE) or "thing",
                    [content for content in contents if content],
                )
            )
        cleaned_relations = [
            (
                _required(start, f"relations[{index}].from", MAX_NAME),
                _required(end, f"relations[{index}].to", MAX_NAME),
                _required(type_, f"relations[{index}].type", MAX_TYPE),
            )
            for index, (start, end, type_) in enumerate(relations)
        ]
        if not cleaned_entities and not cleaned_relations:
            return ChangeSet()
        said_at, now = coerce_time(at), now_iso()
        source = source or current_source()
        plan, commit = self._write(
            lambda graph: plan_facts(
                graph, cleaned_entities, cleaned_relations, at=said_at, now=now, source=source
            )
        )
        return self._change_set(plan, commit, ())

    def remember_many(
        self,
        items: Iterable[str | Item | Mapping[str, Any]],
        *,
        at: str | datetime | None = None,
        source: str | None = None,
        concurrency: int = 1,
        progress: Progress | None = None,
    ) -> list[ChangeSet]:
        """Remember many texts: the bulk path for imports (:mod:`memgraph.engine.bulk`).

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


def _required(value: object, field: str, limit: int) -> str:
    text = clean_label(value, field, limit)
    if not text:
        raise ValueError(f"{field} is empty")
    return text


def _strings(values: object, field: str) -> list[object]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{field} must be a list of strings, got {type(values).__name__}")
    return list(values)
