"""Notes, progress boards, owner rules, key/value memory, time travel and the overview.

These are the capabilities memgraph shares with Synsema's and Sense's memory
designs; each lives on the same store and journal as the knowledge graph.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

import orjson

from memgraph.clock import now_iso
from memgraph.engine.reading import ReadMixin
from memgraph.errors import NotFound
from memgraph.faces import progress as boards
from memgraph.faces import rules as rulebook
from memgraph.faces.kv import KeyValueMemory
from memgraph.faces.namespaces import current_source, read_namespace
from memgraph.faces.notes import (
    NOTES_ENTITY,
    NOTES_TYPE,
    Note,
    existing_note,
    note_fields,
    select_notes,
    validate_category,
    validate_tags,
)
from memgraph.faces.timetravel import MemoryView
from memgraph.graph.graph import Doc, Graph
from memgraph.models import Observation
from memgraph.retrieval import ranking as tiers

if TYPE_CHECKING:
    from memgraph.view.html import GraphView

__all__ = ["FeaturesMixin", "MemorySummary"]

MAX_NOTE_CHARS = 10_000


@dataclass(frozen=True)
class MemorySummary:
    """An overview of everything a memory holds (``str()`` renders it as text)."""

    scope: str
    entities: int
    observations: int
    current_observations: int
    relations: int
    episodes: int
    by_category: Mapping[str, int] = field(default_factory=dict)
    by_source: Mapping[str, int] = field(default_factory=dict)
    rules: Mapping[str, int] = field(default_factory=dict)
    progress: Mapping[str, str] = field(default_factory=dict)
    keys: Sequence[str] = ()

    def __str__(self) -> str:
        def counts(values: Mapping[str, Any]) -> str:
            return ", ".join(f"{k}: {v}" for k, v in values.items()) or "none"

        return "\n".join(
            [
                f"memory {self.scope!r}",
                f"  entities: {self.entities}, relations: {self.relations}, "
                f"episodes: {self.episodes}",
                f"  facts: {self.current_observations} current of {self.observations}",
                f"  facts by category: {counts(self.by_category)}",
                f"  facts by source: {counts(self.by_source)}",
                f"  rules by level: {counts(self.rules)}",
                f"  progress boards: {counts(self.progress)}",
                f"  keys ({len(self.keys)}): {', '.join(self.keys[:20]) or 'none'}",
            ]
        )


class FeaturesMixin(ReadMixin):
    """Notes, progress boards, rules, key/value memory, time travel, overview."""

    # ------------------------------------------------------------------- notes
    def note(
        self,
        content: str,
        *,
        category: str,
        tags: Sequence[str] | str | None = None,
        about: str | None = None,
    ) -> Observation:
        """Store ``content`` verbatim as a categorized fact (no LLM involved).

        Args:
            content: the note.
            category: ``preference``, ``rule``, ``learning``, ``decision`` or ``context``.
            tags: free-form tags to filter by.
            about: the entity the note is about; by default the scope's
                ``Notes`` entity (type ``notes``). The writing namespace
                (``"main"`` or the agent's name) is the note's ``source``.

        Returns:
            The note; the existing one when the same text with the same
            category, tags and source is already noted (nothing is stored).

        Raises:
            ValueError: an unknown category, or empty / overlong content.
            TypeError: content or a tag is not a string.
        """
        if not isinstance(content, str):
            raise TypeError(f"content must be a string, got {type(content).__name__}")
        text = content.strip()
        if not text or len(text) > MAX_NOTE_CHARS:
            raise ValueError(f"a note needs 1 to {MAX_NOTE_CHARS:,} characters of content")
        fields = note_fields(validate_category(category), tags)
        source = current_source()
        subject = about or NOTES_ENTITY
        now = now_iso()
        created: dict[str, str] = {}

        def build(graph: Graph) -> list[Doc]:
            ops: list[Doc] = []
            next_id = graph.next_id
            entity = graph.entity_by_name(subject)
            if entity is not None:
                found = existing_note(graph, entity["id"], text, fields, source)
                if found is not None:
                    created["obs"] = found
                    return []
            else:
                entity = {
                    "id": f"entity-{next_id}",
                    "name": subject,
                    "type": NOTES_TYPE if about is None else "thing",
                    "source": source,
                    "createdAt": now,
                }
                next_id += 1
                ops.append({"op": "entity", "entity": entity})
            obs = {
                "id": f"obs-{next_id}",
                "content": text,
                "validFrom": now,
                "validTo": None,
                "recordedAt": now,
                "source": source,
                **fields,
            }
            created["obs"] = str(obs["id"])
            ops.append({"op": "obs", "entity": entity["id"], "obs": obs})
            return ops

        self._write_ops(build, vectors=True)
        pair = self._read_graph(lambda graph: graph.observation(created["obs"]))
        assert pair is not None
        return Observation.from_doc(pair[1], pair[0]["id"])

    def notes(
        self,
        category: str | None = None,
        tags: Sequence[str] | str | None = None,
        *,
        mode: str = "any",
        search: str | None = None,
        limit: int = 200,
        from_: str | None = None,
    ) -> list[Note]:
        """Current notes (facts with a category or tags), newest first.

        Args:
            category: only this category.
            tags: only notes with any of these tags (all of them with ``mode="all"``).
            mode: ``"any"`` (the default) or ``"all"``.
            search: a case-insensitive substring of the content.
            limit: at most this many notes (200 by default).
            from_: a source namespace, ``"*"`` for all; inside an agent the
                default is the agent's own notes, at top level everything.

        Raises:
            ValueError: an unknown category or mode.
        """
        wanted = list(validate_tags(tags))
        source = read_namespace(from_)
        return self._read_graph(
            lambda graph: select_notes(
                graph,
                category=category,
                tags=wanted,
                mode=mode,
                search=search,
                limit=limit,
                source=source,
            )
        )

    # ---------------------------------------------------------------- progress
    def _progress(self, board: str, action: str, **details: Any) -> None:
        if not isinstance(board, str) or not board.strip():
            raise ValueError(f"a progress board needs a non-empty name, got {board!r}")
        if "result" in details:
            try:
                details["result"] = orjson.loads(orjson.dumps(details["result"]))
            except TypeError as exc:
                raise TypeError(f"a step result must be JSON-serializable: {exc}") from exc
        now = now_iso()

        def build(graph: Graph) -> list[Doc]:
            op = boards.progress_op(graph, board, action, at=now, **details)
            return [op] if op is not None else []

        self._write_ops(build)

    def create_progress(self, name: str, steps: Iterable[str]) -> boards.Board:
        """Create a progress board; declaring the same board again resumes it.

        Raises:
            ValueError: no steps, duplicate steps, or a board of that name with other steps.
        """
        self._progress(name, "create", steps=list(steps))
        return self.progress(name)

    def start_step(self, name: str, step: str) -> None:
        """Mark ``step`` of board ``name`` as running (durable when this returns)."""
        self._progress(name, "start", step=step)

    def complete_step(self, name: str, step: str, result: Any = None) -> None:
        """Mark ``step`` done with a JSON-serializable ``result`` (durable when this returns)."""
        self._progress(name, "complete", step=step, result=result)

    def fail_step(self, name: str, step: str, error: str) -> None:
        """Mark ``step`` failed with an error message (durable when this returns)."""
        self._progress(name, "fail", step=step, error=str(error))

    def resume_point(self, name: str) -> str | None:
        """The first step of board ``name`` not completed, or ``None`` when all are done.

        Raises:
            NotFound: no board has that name.
        """
        return self.progress(name).resume_point

    def progress(self, name: str) -> boards.Board:
        """The board called ``name``, with every step's status.

        Raises:
            NotFound: no board has that name.
        """
        return self._read_graph(lambda graph: boards.board_of(graph, name))

    # ------------------------------------------------------------------- rules
    def add_rule(
        self,
        name: str,
        level: str,
        condition: str,
        category: str,
        *,
        variables: Iterable[str] | None = None,
    ) -> rulebook.Rule:
        """Add (or replace) an owner rule.

        Args:
            name: the rule's name.
            level: ``must`` (hard block), ``should`` (warning), ``avoid`` or ``prefer``.
            condition: e.g. ``discount <= 0.20`` or ``region == "EU" and total > 100``.
            category: the group of actions it applies to (``pricing``).
            variables: the names a context will offer; when given, a condition
                reading any other name is refused now rather than at check time.

        Raises:
            ValueError: an unknown level or an empty name / category.
            ConditionError: a malformed condition (with the position), literals
                of the wrong types, or unknown names.
        """
        op = rulebook.rule_op(name, level, condition, category, at=now_iso(), variables=variables)
        self._write_ops(lambda graph: [op])
        return next(r for r in self.get_rules(category) if r.name == name)

    def remove_rule(self, name: str) -> None:
        """Remove a rule.

        Raises:
            NotFound: no rule has that name.
        """

        def build(graph: Graph) -> list[Doc]:
            if name not in {rule.name for rule in rulebook.rules_of(graph)}:
                raise NotFound(f"no rule named {name!r}")
            return [{"op": "rule", "action": "remove", "name": name}]

        self._write_ops(build)

    def get_rules(self, category: str | None = None) -> list[rulebook.Rule]:
        """Every rule, or the rules of ``category``, in the order they were added."""
        return self._read_graph(lambda graph: rulebook.rules_of(graph, category))

    def check_rules(self, category: str, context: Mapping[str, Any]) -> list[rulebook.Violation]:
        """The rules of ``category`` that ``context`` violates (empty when none).

        Raises:
            ConditionError: a rule reads a name the context lacks or a value of
                the wrong type; the message names the rule.
        """
        return self._read_graph(lambda graph: rulebook.check(graph, category, context))

    # ---------------------------------------------------------- kv, time travel
    @cached_property
    def kv(self) -> KeyValueMemory:
        """The versioned key/value face of this memory (same store, same journal)."""
        return KeyValueMemory(self)

    def as_of(self, when: str | datetime) -> MemoryView:
        """A read-only view of the memory as it was at ``when``.

        Raises:
            ValueError: ``when`` is not an ISO-8601 timestamp.
        """
        return MemoryView(self, when)

    def view(self, *, max_entities: int = 5_000) -> GraphView:
        """The scope as one self-contained, interactive HTML page (``memgraph view``).

        The returned :class:`~memgraph.view.GraphView` holds the page (``.html``,
        ``.save(path)``) and displays inline in a notebook. The page needs no
        network: entities and relations on a canvas, search, type and source
        filters, each fact with its dates and source text, and a time slider
        that shows the graph as ``as_of`` would.

        Args:
            max_entities: entities shown at most; beyond it the most connected are kept.

        Raises:
            ValueError: ``max_entities`` is less than 1.
        """
        # The page-building modules import only the foundation (models), so the
        # engine may use them; they load on first use.
        from memgraph.view.html import view_of

        return view_of(self, max_entities=max_entities, generated_at=now_iso())

    def known_information(self, *, budget: int | None = None) -> str:
        """The whole current memory as text ("" when empty), for whole-memory injection.

        Every entity with its current facts and links (recall's format), then
        the current key/values; capped at ``budget`` tokens (default: twice
        ``recall.tokenBudget``).
        """
        limit = budget or 2 * self.config.recall.token_budget

        def read(graph: Graph) -> str:
            everything = tiers.every_entity(graph)
            graph_text = tiers.format_entities(
                graph,
                everything,
                count_tokens=self._count_tokens,
                budget=limit,
                max_entities=len(graph.entities),
                extra_facts=1_000_000,
            )
            lines = [graph_text] if graph_text else []
            values = graph.extra.get("kv", {})
            for key, versions in values.items():
                if not versions[-1]["deleted"]:
                    lines.append(f"{key} = {orjson.dumps(versions[-1]['value']).decode()}")
            return "\n".join(lines)

        return self._read_graph(read)

    # ---------------------------------------------------------------- overview
    def memory_summary(self) -> MemorySummary:
        """An overview of everything stored: facts by category and source,
        rules, progress boards and keys."""

        def read(graph: Graph) -> MemorySummary:
            categories: Counter[str] = Counter()
            sources: Counter[str] = Counter()
            current = 0
            for _, obs in graph.all_observations():
                if obs.get("validTo") is None:
                    current += 1
                    categories[obs.get("category") or "uncategorized"] += 1
                    sources[obs.get("source") or "main"] += 1
            rule_levels = Counter(rule.level for rule in rulebook.rules_of(graph))
            progress = {}
            for name in graph.extra.get("progress", {}):
                board = boards.board_of(graph, name)
                finished = sum(1 for step in board.steps if step.status == "done")
                progress[name] = f"{finished}/{len(board.steps)} done"
            keys = [k for k, v in graph.extra.get("kv", {}).items() if not v[-1]["deleted"]]
            episodes = len(graph.episodes) + sum(1 for _ in self.store.episodes())
            return MemorySummary(
                scope=self.scope,
                entities=len(graph.entities),
                observations=graph.observation_count,
                current_observations=current,
                relations=len(graph.relations),
                episodes=episodes,
                by_category=dict(categories.most_common()),
                by_source=dict(sources.most_common()),
                rules=dict(rule_levels),
                progress=progress,
                keys=keys,
            )

        return self._read_graph(read)
