"""``AsyncMemory``: a :class:`~memgraph.engine.memory.Memory` for asyncio programs.

Every public method of ``Memory``, awaitable (``named``, ``as_of`` and ``kv``, which
read nothing until used, return at once; a test keeps the two lists equal). The
event loop never waits on a file, a lock or a blocking model call:

* ``remember`` runs its phases one by one (``writing.py``): the checks and the
  episode on the loop (no I/O), the extraction context in a worker thread, the
  model calls awaited through the provider's ``acomplete`` / ``aembed``
  (:func:`~memgraph.llm_calls.provider.acomplete`), the plan in a worker thread,
  the new facts' vectors awaited, and the commit (lock, catch up, re-plan if
  another write landed, fsync) in a worker thread. So many concurrent
  ``remember`` calls on one scope overlap their model calls and serialize only
  their commits, on the scope's lock, as they would from many threads.
* ``reextract`` runs the same phases for each text stored unextracted, one
  after another;
* ``forget`` finds the candidate facts in a worker thread, awaits the model's
  choice, and expires in a worker thread;
* every other call runs whole in a worker thread (``asyncio.to_thread``, which
  carries the caller's context: the scope set with ``set_memory_id``, ``with
  agent(...)``). ``recall(rerank=True)`` and ``search(rerank=True)`` make their
  model call there, blocking that thread and not the loop.

Opening a scope reads its files (and building a provider may import its SDK),
so that too happens in a worker thread, on first use or on ``async with``.

Durability is ``Memory``'s: when ``remember`` returns, the write is on disk. A
task cancelled during a model call stores nothing; one cancelled during its
commit may still be stored, since the worker thread finishes the commit.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

import numpy as np

from memgraph.config import MemoryConfig
from memgraph.engine.async_faces import AsyncKeyValues, AsyncMemoryView
from memgraph.engine.bulk import Progress
from memgraph.engine.core import DEFAULT_SPEAKER, EMBED_BATCH
from memgraph.engine.features import MemorySummary
from memgraph.engine.forgetting import forget_exchange
from memgraph.engine.memory import Memory
from memgraph.faces.namespaces import state_dir, validate_name
from memgraph.faces.notes import Note
from memgraph.faces.progress import Board
from memgraph.faces.rules import Rule, Violation
from memgraph.graph.changes import Plan
from memgraph.graph.graph import Graph
from memgraph.llm_calls.ask import arun_exchange
from memgraph.llm_calls.extract import aextract
from memgraph.llm_calls.provider import Embedder, Provider, aembed
from memgraph.models import ChangeSet, Entity, EntityHistory, Episode, Hit, Item, Observation
from memgraph.scope import validate_scope
from memgraph.store.base import Commit, Store

if TYPE_CHECKING:
    from memgraph.view.html import GraphView

__all__ = ["AsyncMemory"]

P = ParamSpec("P")
T = TypeVar("T")


class AsyncMemory:
    """Long-term memory for one scope, for asyncio: :class:`~memgraph.Memory`'s
    methods, awaitable.

    Takes the arguments of :class:`~memgraph.Memory`; the scope is opened in a
    worker thread on first use (or on entering ``async with``). Use
    :meth:`wrap` to share a ``Memory`` that is already open::

        async with AsyncMemory("./mem", scope="alice") as memory:
            await memory.remember("Alice prefers concise answers.")
            print(await memory.recall("how does alice like answers?"))

    Raises:
        InvalidScope: ``scope`` breaks the naming rule.
    """

    def __init__(
        self,
        dir: str | os.PathLike[str] | None = None,
        scope: str = "default",
        *,
        provider: Provider | str | None = None,
        config: MemoryConfig | Mapping[str, Any] | str | os.PathLike[str] | None = None,
        store: Store | str | None = None,
    ) -> None:
        self.scope = validate_scope(scope)
        self._arguments: dict[str, Any] = {
            "dir": dir,
            "scope": scope,
            "provider": provider,
            "config": config,
            "store": store,
        }
        self._memory: Memory | None = None
        self._opening = asyncio.Lock()

    @classmethod
    def wrap(cls, memory: Memory) -> AsyncMemory:
        """An ``AsyncMemory`` over an open ``memory`` (both may be used; closing either
        closes the scope's files)."""
        wrapped = cls(scope=memory.scope)
        wrapped._memory = memory
        return wrapped

    @classmethod
    def named(
        cls,
        name: str,
        *,
        provider: Any = None,
        config: Any = None,
        dir: str | Path | None = None,
    ) -> AsyncMemory:
        """Open the memory called ``name``, as :meth:`Memory.named
        <memgraph.Memory.named>` does (nothing is read until first use).

        Raises:
            InvalidScope: (a ``ValueError``) the name is empty or does not
                match ``[A-Za-z0-9_-]+``.
        """
        validate_name(name)
        return cls(dir if dir is not None else state_dir(), name, provider=provider, config=config)

    def __repr__(self) -> str:
        return f"AsyncMemory({self._memory or self._arguments!r})"

    async def open(self) -> Memory:
        """The underlying :class:`~memgraph.Memory`, opened in a worker thread the first time.

        Raises:
            ConfigError: the configuration is invalid.
            StoreError: the store could not be opened.
        """
        if self._memory is None:
            async with self._opening:
                if self._memory is None:
                    arguments = self._arguments
                    self._memory = await asyncio.to_thread(_open, arguments)
        return self._memory

    async def __aenter__(self) -> AsyncMemory:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Release the scope's files (nothing to do when it was never opened)."""
        if self._memory is not None:
            await asyncio.to_thread(self._memory.close)

    async def _run(
        self, method: Callable[Concatenate[Memory, P], T], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """``method`` of the opened memory, in a worker thread."""
        memory = await self.open()
        return await asyncio.to_thread(method, memory, *args, **kwargs)

    # ------------------------------------------------------------------ writing
    async def remember(
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
        """Async :meth:`Memory.remember <memgraph.Memory.remember>`: the same arguments,
        result and errors; its model calls are awaited, its file work is done in
        worker threads."""
        memory = await self.open()
        turns = memory._transcript(text, speaker, category, tags)
        if turns is not None:  # one model call per line, in a worker thread
            return await asyncio.to_thread(
                memory._remember_transcript, turns, at=at, source=source, metadata=metadata
            )
        request = memory._remember_request(
            text,
            at=at,
            source=source,
            metadata=metadata,
            category=category,
            tags=tags,
            speaker=speaker,
        )
        embedder = memory.provider.embedder
        vector = None
        if embedder is not None and _context_embeds(memory):
            vector = (await _embed(embedder, [request.text]))[0]
        await asyncio.to_thread(memory._remember_context, request, vector)
        answer = await aextract(
            memory.provider.chat,
            request.text,
            known=request.context,
            said_at=request.said_at,
            speaker=request.speaker or DEFAULT_SPEAKER,
            turn=request.turn,
        )
        plan_for = memory._remember_plan(request, answer)
        plan, commit = await self._write(memory, plan_for)
        return await asyncio.to_thread(memory._remembered, answer, plan, commit)

    async def _write(
        self, memory: Memory, plan_for: Callable[[Graph], Plan]
    ) -> tuple[Plan, Commit | None]:
        """``Memory._write`` with the vectors awaited between the draft and the commit."""
        draft = await asyncio.to_thread(memory._draft, plan_for)
        texts = memory._draft_texts(draft)
        vectors: dict[str, np.ndarray] = {}
        if texts and memory.provider.embedder is not None:
            rows = await _embed(memory.provider.embedder, texts)
            vectors = dict(zip(texts, rows, strict=True))
        return await asyncio.to_thread(memory._commit_draft, draft, vectors)

    async def remember_many(
        self,
        items: Iterable[str | Item | Mapping[str, Any]],
        *,
        at: str | datetime | None = None,
        source: str | None = None,
        concurrency: int = 1,
        progress: Progress | None = None,
    ) -> list[ChangeSet]:
        """Async :meth:`Memory.remember_many <memgraph.Memory.remember_many>`, run in a
        worker thread (``progress`` is called from it)."""
        return await self._run(
            Memory.remember_many,
            list(items),
            at=at,
            source=source,
            concurrency=concurrency,
            progress=progress,
        )

    async def add_facts(
        self,
        entities: Iterable[tuple[str, str, Iterable[str]]] = (),
        relations: Iterable[tuple[str, str, str]] = (),
        *,
        at: str | datetime | None = None,
        source: str | None = None,
    ) -> ChangeSet:
        """Async :meth:`Memory.add_facts <memgraph.Memory.add_facts>`."""
        return await self._run(
            Memory.add_facts, list(entities), list(relations), at=at, source=source
        )

    async def reextract(self, *, limit: int | None = None) -> list[ChangeSet]:
        """Async :meth:`Memory.reextract <memgraph.Memory.reextract>`: its model calls are
        awaited, one text after another, its file work is done in worker threads."""
        memory = await self.open()
        results: list[ChangeSet] = []
        for episode in await asyncio.to_thread(memory._unextracted, limit):
            vector = None
            if memory.provider.embedder is not None and _context_embeds(memory):
                vector = (await _embed(memory.provider.embedder, [episode.text]))[0]
            known = await asyncio.to_thread(memory._reextract_context, episode, vector)
            answer = await aextract(
                memory.provider.chat,
                episode.text,
                known=known,
                said_at=episode.at,
                speaker=episode.speaker or DEFAULT_SPEAKER,
            )
            plan_for = memory._reextract_plan(episode, answer)
            if plan_for is None:
                results.append(memory._still_unusable(answer))
                continue
            plan, commit = await self._write(memory, plan_for)
            results.append(await asyncio.to_thread(memory._reextracted, answer, plan, commit))
        return results

    # ------------------------------------------------------------------ reading
    async def recall(self, query: str, *, rerank: bool = True, from_: str | None = None) -> str:
        """Async :meth:`Memory.recall <memgraph.Memory.recall>`."""
        return await self._run(Memory.recall, query, rerank=rerank, from_=from_)

    async def search(
        self,
        query: str,
        *,
        k: int = 10,
        rerank: bool = False,
        episodes: bool = False,
        from_: str | None = None,
    ) -> list[Hit]:
        """Async :meth:`Memory.search <memgraph.Memory.search>`."""
        return await self._run(
            Memory.search, query, k=k, rerank=rerank, episodes=episodes, from_=from_
        )

    async def entities(self) -> list[Entity]:
        """Async :meth:`Memory.entities <memgraph.Memory.entities>`."""
        return await self._run(Memory.entities)

    async def entity(self, name: str) -> Entity:
        """Async :meth:`Memory.entity <memgraph.Memory.entity>`."""
        return await self._run(Memory.entity, name)

    async def names_in(self, text: str) -> list[str]:
        """Async :meth:`Memory.names_in <memgraph.Memory.names_in>`."""
        return await self._run(Memory.names_in, text)

    async def history(self, entity_name: str) -> EntityHistory:
        """Async :meth:`Memory.history <memgraph.Memory.history>`."""
        return await self._run(Memory.history, entity_name)

    async def episode(self, episode_id: str) -> Episode | None:
        """Async :meth:`Memory.episode <memgraph.Memory.episode>`."""
        return await self._run(Memory.episode, episode_id)

    async def supporting_episodes(self, hits: Sequence[Hit]) -> list[Episode]:
        """Async :meth:`Memory.supporting_episodes <memgraph.Memory.supporting_episodes>`."""
        return await self._run(Memory.supporting_episodes, hits)

    async def iter_episodes(self) -> AsyncIterator[Episode]:
        """Every stored episode, oldest first (:meth:`Memory.iter_episodes
        <memgraph.Memory.iter_episodes>`; read in a worker thread, then yielded)::

            texts = [episode.text async for episode in memory.iter_episodes()]
        """
        for episode in await self._run(lambda memory: list(memory.iter_episodes())):
            yield episode

    async def stats(self) -> dict[str, int]:
        """Async :meth:`Memory.stats <memgraph.Memory.stats>`."""
        return await self._run(Memory.stats)

    async def memory_summary(self) -> MemorySummary:
        """Async :meth:`Memory.memory_summary <memgraph.Memory.memory_summary>`."""
        return await self._run(Memory.memory_summary)

    async def known_information(self, *, budget: int | None = None) -> str:
        """Async :meth:`Memory.known_information <memgraph.Memory.known_information>`."""
        return await self._run(Memory.known_information, budget=budget)

    async def summary(self) -> dict[str, Any] | None:
        """Async :meth:`Memory.summary <memgraph.Memory.summary>`."""
        return await self._run(Memory.summary)

    async def save_summary(self, summary: Mapping[str, Any]) -> None:
        """Async :meth:`Memory.save_summary <memgraph.Memory.save_summary>`."""
        await self._run(Memory.save_summary, dict(summary))

    async def update_summary(
        self, change: Callable[[dict[str, Any] | None], Mapping[str, Any] | None]
    ) -> None:
        """Async :meth:`Memory.update_summary <memgraph.Memory.update_summary>`:
        ``change`` is called in a worker thread, holding the scope's write lock.

        Raises:
            StoreConflict: the scope's lock was not free within ``lockTimeout``.
        """
        await self._run(Memory.update_summary, change)

    async def embedder_model(self) -> str | None:
        """The embedding model's name (:attr:`Memory.embedder_model
        <memgraph.Memory.embedder_model>`), once the scope is open; ``None`` without
        an embedder."""
        return (await self.open()).embedder_model

    def resident_bytes(self) -> int:
        """:meth:`Memory.resident_bytes <memgraph.Memory.resident_bytes>` (no I/O, so not
        awaited): 0 until the scope is open."""
        return self._memory.resident_bytes() if self._memory is not None else 0

    async def wait_for_index(self, timeout: float | None = None) -> bool:
        """Async :meth:`Memory.wait_for_index <memgraph.Memory.wait_for_index>`."""
        return await self._run(Memory.wait_for_index, timeout)

    async def view(self, *, max_entities: int = 5_000) -> GraphView:
        """Async :meth:`Memory.view <memgraph.Memory.view>`: the page is built in a
        worker thread.

        Raises:
            ValueError: ``max_entities`` is less than 1.
        """
        return await self._run(Memory.view, max_entities=max_entities)

    def as_of(self, when: str | datetime) -> AsyncMemoryView:
        """A read-only view as of ``when`` whose reads are awaitable (:meth:`Memory.as_of
        <memgraph.Memory.as_of>`).

        Raises:
            ValueError: ``when`` is not an ISO-8601 timestamp.
        """
        return AsyncMemoryView(self.open, when)

    @property
    def kv(self) -> AsyncKeyValues:
        """The versioned key/value face (:attr:`Memory.kv <memgraph.Memory.kv>`), awaitable."""
        return AsyncKeyValues(self.open)

    # --------------------------------------------------------------- forgetting
    async def forget(self, query: str) -> ChangeSet:
        """Async :meth:`Memory.forget <memgraph.Memory.forget>`: its model call is awaited."""
        memory = await self.open()
        lines = await asyncio.to_thread(memory._forget_lines, query)
        if not lines:
            return ChangeSet()
        answer = await arun_exchange(memory.provider.chat, forget_exchange(query, lines))
        return await asyncio.to_thread(memory._forgotten, answer)

    async def expire(self, *ids: str) -> ChangeSet:
        """Async :meth:`Memory.expire <memgraph.Memory.expire>`."""
        return await self._run(lambda memory: memory.expire(*ids))

    async def expire_entity(self, name: str) -> ChangeSet:
        """Async :meth:`Memory.expire_entity <memgraph.Memory.expire_entity>`."""
        return await self._run(Memory.expire_entity, name)

    async def purge(
        self, containing: str | None = None, *, entity: str | None = None
    ) -> dict[str, int]:
        """Async :meth:`Memory.purge <memgraph.Memory.purge>`."""
        return await self._run(Memory.purge, containing, entity=entity)

    async def export(self, format: str = "json", *, current_only: bool = False) -> bytes:
        """Async :meth:`Memory.export <memgraph.Memory.export>`."""
        return await self._run(Memory.export, format, current_only=current_only)

    async def checkpoint(self) -> None:
        """Async :meth:`Memory.checkpoint <memgraph.Memory.checkpoint>`."""
        await self._run(Memory.checkpoint)

    # -------------------------------------------------------------------- notes
    async def note(
        self,
        content: str,
        *,
        category: str,
        tags: Sequence[str] | str | None = None,
        about: str | None = None,
    ) -> Observation:
        """Async :meth:`Memory.note <memgraph.Memory.note>`."""
        return await self._run(Memory.note, content, category=category, tags=tags, about=about)

    async def notes(
        self,
        category: str | None = None,
        tags: Sequence[str] | str | None = None,
        *,
        mode: str = "any",
        search: str | None = None,
        limit: int = 200,
        from_: str | None = None,
    ) -> list[Note]:
        """Async :meth:`Memory.notes <memgraph.Memory.notes>`."""
        return await self._run(
            Memory.notes, category, tags, mode=mode, search=search, limit=limit, from_=from_
        )

    # ----------------------------------------------------------------- progress
    async def create_progress(self, name: str, steps: Iterable[str]) -> Board:
        """Async :meth:`Memory.create_progress <memgraph.Memory.create_progress>`."""
        return await self._run(Memory.create_progress, name, list(steps))

    async def start_step(self, name: str, step: str) -> None:
        """Async :meth:`Memory.start_step <memgraph.Memory.start_step>`."""
        await self._run(Memory.start_step, name, step)

    async def complete_step(self, name: str, step: str, result: Any = None) -> None:
        """Async :meth:`Memory.complete_step <memgraph.Memory.complete_step>`."""
        await self._run(Memory.complete_step, name, step, result)

    async def fail_step(self, name: str, step: str, error: str) -> None:
        """Async :meth:`Memory.fail_step <memgraph.Memory.fail_step>`."""
        await self._run(Memory.fail_step, name, step, error)

    async def resume_point(self, name: str) -> str | None:
        """Async :meth:`Memory.resume_point <memgraph.Memory.resume_point>`."""
        return await self._run(Memory.resume_point, name)

    async def progress(self, name: str) -> Board:
        """Async :meth:`Memory.progress <memgraph.Memory.progress>`."""
        return await self._run(Memory.progress, name)

    # -------------------------------------------------------------------- rules
    async def add_rule(
        self,
        name: str,
        level: str,
        condition: str,
        category: str,
        *,
        variables: Iterable[str] | None = None,
    ) -> Rule:
        """Async :meth:`Memory.add_rule <memgraph.Memory.add_rule>`."""
        return await self._run(
            Memory.add_rule,
            name,
            level,
            condition,
            category,
            variables=None if variables is None else list(variables),
        )

    async def remove_rule(self, name: str) -> None:
        """Async :meth:`Memory.remove_rule <memgraph.Memory.remove_rule>`."""
        await self._run(Memory.remove_rule, name)

    async def get_rules(self, category: str | None = None) -> list[Rule]:
        """Async :meth:`Memory.get_rules <memgraph.Memory.get_rules>`."""
        return await self._run(Memory.get_rules, category)

    async def check_rules(self, category: str, context: Mapping[str, Any]) -> list[Violation]:
        """Async :meth:`Memory.check_rules <memgraph.Memory.check_rules>`."""
        return await self._run(Memory.check_rules, category, context)


def _context_embeds(memory: Memory) -> bool:
    """Whether the extraction context will look for the text's nearest facts, so the
    text's vector is worth awaiting first (read without the lock: when it misjudges,
    the context embeds the text itself, in its worker thread)."""
    graph, vectors = memory._graph, memory._vectors
    return graph is not None and bool(graph.entities) and vectors is not None and len(vectors) > 0


def _open(arguments: dict[str, Any]) -> Memory:
    """Open the memory, and load the chat model's tokenizer now: loading it holds
    the GIL for a moment, which would stall the event loop in the middle of a write."""
    memory = Memory(
        arguments["dir"],
        arguments["scope"],
        provider=arguments["provider"],
        config=arguments["config"],
        store=arguments["store"],
    )
    memory._count_tokens("")
    return memory


async def _embed(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """``texts`` embedded a batch of :data:`EMBED_BATCH` at a time, awaited."""
    parts = [
        await aembed(embedder, texts[start : start + EMBED_BATCH])
        for start in range(0, len(texts), EMBED_BATCH)
    ]
    return np.concatenate(parts) if len(parts) > 1 else parts[0]
