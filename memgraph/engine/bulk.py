"""The bulk path behind :meth:`memgraph.Memory.remember_many`.

Items (texts, or :class:`Item` records carrying their own time, speaker,
source and metadata) are remembered in input order:

1. **Validate** every item first: a bad one raises before anything is stored.
2. **Contexts per window.** The extraction contexts of a window of items are
   found together (one embedding call, one pass over the vector lists),
   against the memory as it is when the window starts, so a window sees every
   chunk committed before it. Inline, the first window is 64 items and later
   ones about a second's worth (8 to 1,024); with ``concurrency``, 8 per worker.
3. **Extract** (one model call per item) inline, or with ``concurrency > 1``
   in a bounded thread pool: at most ``concurrency`` calls in flight, the
   provider's own retries and backoff on 429 unchanged. Answers are consumed
   in input order.
4. **Commit in chunks.** Answers wait in memory until :data:`CHUNK_TEXTS`
   items are ready or the oldest has waited :data:`CHUNK_SECONDS`; then, under
   the scope's lock, items are planned in order (later ones resolve against
   earlier ones) until the chunk is done, :data:`CHUNK_VECTORS` new facts need
   embedding, or planning has held the lock for ``LOCK_SHARE * lockTimeout``
   (at most ``CHUNK_SECONDS``); their new facts are embedded in one batch and
   the chunk is one journal commit (one fsync). The lock is released between
   chunks, and kept free for at least :data:`LOCK_GAP` (longer than a waiting
   file-lock writer's poll interval), so no writer waits longer than one chunk.

Failure: a chunk is all or nothing. When a call raises, every chunk reported
through ``progress`` is stored and nothing after it; if the failure is an
extraction (the model could not be reached) or an interrupt, the answers
already in hand are committed first, so exactly the items before the failing
one are stored. The in-memory graph is dropped when a chunk fails after it
was planned into it, and reloaded from the store on the next call, so it never
serves facts that were not stored.
"""

from __future__ import annotations

import contextvars
import dataclasses
import logging
import sys
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from memgraph.clock import epoch_ms, now_iso
from memgraph.dates import days_line, names_a_bare_day
from memgraph.engine.core import DEFAULT_SPEAKER, coerce_time
from memgraph.graph.changes import Plan, plan_extraction
from memgraph.graph.graph import Doc
from memgraph.llm_calls.ask import Answer
from memgraph.llm_calls.extract import NO_CONTEXT, Extraction, TurnContext, extract
from memgraph.models import ChangeSet, Item
from memgraph.retrieval.days_said import DAYS_SAID_TURNS, days_said_before
from memgraph.retrieval.episode_index import conversation_key
from memgraph.speakers import ASSISTANT, speaker_name
from memgraph.store.base import Commit, VectorBatch

if TYPE_CHECKING:
    from memgraph.engine.core import MemoryCore as RememberMixin

__all__ = [
    "CHUNK_SECONDS",
    "CHUNK_TEXTS",
    "CHUNK_VECTORS",
    "LOCK_GAP",
    "LOCK_SHARE",
    "Entry",
    "Progress",
    "prepare",
    "remember_entries",
]

log = logging.getLogger("memgraph")

CHUNK_TEXTS = 1000
"""Most items in one commit."""
CHUNK_SECONDS = 1.0
"""A chunk commits once its oldest answer has waited this long (durability with slow models)."""
CHUNK_VECTORS = 2048
"""A chunk stops planning once this many new facts need embedding (bounds the embedding call
made under the lock)."""
LOCK_SHARE = 0.25
"""Planning under the lock stops after this share of ``lockTimeout`` (and at ``CHUNK_SECONDS``)."""
LOCK_GAP = 0.06
"""Seconds the lock stays free between two chunks: a writer waiting for the file lock polls at
least every 50 ms, so it gets its turn."""
WINDOW = 1024
"""Most items whose contexts are found together when extracting inline."""
FIRST_WINDOW = 64
"""Items in the first window inline; later windows hold about ``CHUNK_SECONDS`` of items."""
WINDOW_PER_WORKER = 8
"""Items per worker whose contexts are found together with ``concurrency > 1``."""

Progress = Callable[[int, int], None]
"""``progress(done, total)``: called after each durable chunk (and once with 0 first)."""

_EMPTY = Extraction()
GAP_MS = 6 * 3600 * 1000
"""Items further apart than this are not each other's context."""


@dataclass(frozen=True)
class Entry:
    """A validated item, ready to extract and store."""

    text: str
    at: str
    source: str
    speaker: str | None = None
    metadata: dict[str, Any] | None = None
    extract: bool = True

    def episode(self, now: str) -> Doc:
        """The episode record of this item (its id is allocated when planned)."""
        record: Doc = {"text": self.text, "at": self.at, "recordedAt": now, "source": self.source}
        if self.speaker is not None:
            record["speaker"] = self.speaker
        if self.metadata:
            record["metadata"] = self.metadata
        return record


_FIELDS = ("text", "at", "speaker", "source", "metadata", "extract")


def prepare(
    items: Iterable[str | Item | Mapping[str, Any]],
    *,
    at: str | datetime | None,
    source: str,
    check_text: Callable[[object], str],
    check_metadata: Callable[[Mapping[str, Any] | None], dict[str, Any] | None],
) -> list[Entry]:
    """Validate every item; the message of an error names the item's index.

    Raises:
        TypeError: ``items`` is a single string, or an item, text or
            metadata has the wrong type.
        ValueError: a text is empty or too long, a time does not parse, or a
            mapping has an unknown key.
    """
    if isinstance(items, (str, bytes, Mapping)):
        raise TypeError(
            f"remember_many takes a list of items, got one {type(items).__name__}; "
            "wrap it in a list or use remember()"
        )
    default_at = None if at is None else coerce_time(at)
    entries = []
    for index, item in enumerate(items):
        try:
            entries.append(_entry(item, default_at, source, check_text, check_metadata))
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"item {index}: {exc}") from exc
    return entries


def _entry(
    item: object,
    default_at: str | None,
    source: str,
    check_text: Callable[[object], str],
    check_metadata: Callable[[Mapping[str, Any] | None], dict[str, Any] | None],
) -> Entry:
    if isinstance(item, (str, bytes)):
        return Entry(check_text(item), default_at or now_iso(), source)
    if isinstance(item, Item):
        fields: Mapping[str, Any] = {name: getattr(item, name) for name in _FIELDS}
    elif isinstance(item, Mapping):
        unknown = sorted(str(key) for key in item if key not in _FIELDS)
        if unknown:
            raise ValueError(f"unknown key {unknown[0]!r}; an item has {', '.join(_FIELDS)}")
        if "text" not in item:
            raise ValueError("the item has no 'text'")
        fields = item
    else:
        raise TypeError(f"an item must be a string, an Item or a dict, got {type(item).__name__}")
    speaker = fields.get("speaker")
    if speaker is not None and not isinstance(speaker, str):
        raise TypeError(f"speaker must be a string, got {type(speaker).__name__}")
    item_source = fields.get("source")
    if item_source is not None and not isinstance(item_source, str):
        raise TypeError(f"source must be a string, got {type(item_source).__name__}")
    when = fields.get("at")
    name = (speaker_name(speaker) or None) if speaker is not None else None
    extract = fields.get("extract")
    return Entry(
        text=check_text(fields["text"]),
        at=coerce_time(when) if when is not None else default_at or now_iso(),
        source=item_source or source,
        speaker=name,
        metadata=check_metadata(fields.get("metadata")),
        extract=name != ASSISTANT if extract is None else bool(extract),
    )


# ------------------------------------------------------------------ extraction
Ready = tuple[Entry, "Answer[Extraction] | None"]


def _answers(
    memory: RememberMixin,
    entries: list[Entry],
    concurrency: int,
    queries: dict[str, np.ndarray] | None = None,
) -> Generator[Ready, None, None]:
    """Each entry with its extraction answer (``None`` when not extracted), in input
    order. The embeddings of the texts, found for their contexts, go in ``queries``."""

    def contexts(window: list[Entry]) -> list[str]:
        texts = [entry.text for entry in window if entry.extract]
        speakers = [entry.speaker for entry in window if entry.extract]
        with memory._lock:
            graph = memory._sync()
            found = iter(memory._contexts_for(graph, texts, queries, speakers) if texts else [])
        return [next(found) if entry.extract else "" for entry in window]

    chat = memory.provider.chat
    turns = _turns(memory, entries)

    def ask(entry: Entry, context: str, turn: TurnContext) -> Answer[Extraction]:
        return extract(
            chat,
            entry.text,
            known=context,
            said_at=entry.at,
            speaker=entry.speaker or DEFAULT_SPEAKER,
            turn=turn,
        )

    if concurrency <= 1:
        start, size = 0, FIRST_WINDOW
        while start < len(entries):
            window = entries[start : start + size]
            start += len(window)
            began = time.monotonic()
            for offset, (entry, context) in enumerate(zip(window, contexts(window), strict=True)):
                answer = None
                if entry.extract:
                    answer = ask(entry, context, turns[start - len(window) + offset])
                yield entry, answer
            # About CHUNK_SECONDS of items per window: a fast model gets large batches, a
            # slow one fresh contexts (each window sees the chunks committed before it).
            per_item = (time.monotonic() - began) / len(window)
            size = max(WINDOW_PER_WORKER, min(WINDOW, int(CHUNK_SECONDS / max(per_item, 1e-6))))
        return
    size = WINDOW_PER_WORKER * concurrency
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="memgraph-extract")
    pending: deque[tuple[Entry, Future[Answer[Extraction]] | None]] = deque()
    position = 0
    try:
        while position < len(entries) or pending:
            if position < len(entries) and len(pending) <= concurrency:
                window = entries[position : position + size]
                for offset, (entry, context) in enumerate(
                    zip(window, contexts(window), strict=True)
                ):
                    future = None
                    if entry.extract:
                        run = contextvars.copy_context().run  # the caller's context, per call
                        turn = turns[position + offset]
                        future = pool.submit(run, ask, entry, context, turn)
                    pending.append((entry, future))
                position += len(window)
                continue
            entry, future = pending.popleft()
            yield entry, future.result() if future is not None else None
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _turns(memory: RememberMixin, entries: list[Entry]) -> list[TurnContext]:
    """Per entry, who "you" is, the turn said just before it in its conversation
    (the previous item, or for the first the last remembered turn), and, when it
    speaks of a bare day ("the 28th"), the days its conversation named before it."""
    bare = any(entry.extract and names_a_bare_day(entry.text) for entry in entries)
    with memory._lock:
        graph = memory._sync()
        last = memory._episodes_indexed()._last
        remembered = memory._turns_before(graph, None) if bare else []
    items: list[Doc] = []  # the entries' episodes so far, oldest first
    found: list[TurnContext] = []
    previous: tuple[str, int, str | None, str, str | None] | None = None
    if last is not None:
        previous = (last.conversation, last.at_ms, last.speaker, last.text, last.other)
    for entry in entries:
        doc = entry.episode("")
        key = conversation_key(doc)
        at_ms = epoch_ms(entry.at)
        turn = NO_CONTEXT
        days = None
        if bare and entry.extract and names_a_bare_day(entry.text):
            earlier = [*items[-DAYS_SAID_TURNS:][::-1], *remembered][:DAYS_SAID_TURNS]
            days = days_line(days_said_before(doc, earlier))
        items.append(doc)
        if previous is not None and previous[0] == key and 0 <= at_ms - previous[1] <= GAP_MS:
            _key, _at, speaker, text, other = previous
            addressee = speaker if speaker != entry.speaker else other
            said = f"{speaker}: {text}" if speaker else text
            turn = TurnContext(addressee if addressee != entry.speaker else None, said)
            other = speaker if speaker != entry.speaker else other
        else:
            other = None
        previous = (key, at_ms, entry.speaker, entry.text[:600], other)
        found.append(dataclasses.replace(turn, days_named=days))
    return found


# --------------------------------------------------------------------- commits
def remember_entries(
    memory: RememberMixin,
    entries: list[Entry],
    *,
    concurrency: int = 1,
    progress: Progress | None = None,
    whole: bool = False,
) -> list[ChangeSet]:
    """Extract and store ``entries`` in chunks (see the module docstring); ``whole``:
    all of them in one commit once every answer is in, or none of them."""
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be a positive integer, got {concurrency!r}")
    total = len(entries)
    results: list[ChangeSet] = []
    if not entries:
        return results
    if progress is not None:
        progress(0, total)
    ready: list[Ready] = []
    released: list[float] = []  # when the lock was last released by this call
    # Texts embedded for their contexts: an episode whose vector is made of its text
    # alone (no speaker) reuses it instead of embedding the same text again.
    queries: dict[str, np.ndarray] = {}

    def flush() -> None:
        while ready:
            if released:
                pause = LOCK_GAP - (time.monotonic() - released[-1])
                if pause > 0:
                    time.sleep(pause)  # let a waiting writer in between two chunks
            done = _commit_chunk(memory, ready, queries)
            released.append(time.monotonic())
            del ready[: len(done)]
            results.extend(done)
            if progress is not None:
                progress(len(results), total)

    answers = _answers(memory, entries, concurrency, queries)
    oldest = 0.0
    try:
        while True:
            try:
                pair = next(answers)
            except StopIteration:
                break
            except BaseException as exc:  # model failure or Ctrl-C: keep what is in hand
                if ready and not whole:
                    log.warning(
                        "memgraph: storing the %d items extracted before %s",
                        len(ready),
                        type(exc).__name__,
                    )
                    flush()
                _note(exc, len(results), total)
                raise
            if not ready:
                oldest = time.monotonic()
            ready.append(pair)
            if whole:
                continue
            if len(ready) >= CHUNK_TEXTS or time.monotonic() - oldest >= CHUNK_SECONDS:
                flush()
        if whole and ready:
            results.extend(_commit_chunk(memory, ready, queries, whole=True))
            ready.clear()
            if progress is not None:
                progress(len(results), total)
        flush()
    except BaseException as exc:
        _note(exc, len(results), total)
        raise
    finally:
        answers.close()
    return results


def _note(exc: BaseException, stored: int, total: int) -> None:
    """Say on the exception how much of the batch is stored (Python 3.11+ notes)."""
    if sys.version_info >= (3, 11) and not getattr(exc, "_memgraph_noted", False):
        exc.add_note(f"memgraph: the first {stored} of {total} items are stored, the rest are not")
        exc._memgraph_noted = True  # type: ignore[attr-defined]


def _commit_chunk(
    memory: RememberMixin,
    ready: list[Ready],
    queries: dict[str, np.ndarray] | None = None,
    *,
    whole: bool = False,
) -> list[ChangeSet]:
    """Plan a prefix of ``ready`` (``whole``: all of it) under the lock and commit it;
    its change sets, in order. ``queries`` holds vectors already made for some texts
    (they are taken out of it)."""
    budget = min(CHUNK_SECONDS, LOCK_SHARE * memory.config.lock_timeout)
    now = now_iso()
    with memory._lock, memory._writer():
        started = time.monotonic()
        graph = memory._sync()
        plans: list[Plan | None] = []
        ops: list[Doc] = []
        embed: list[tuple[str, str]] = []
        try:
            for entry, answer in ready:
                episode = entry.episode(now)
                extraction = answer.value if answer is not None else _EMPTY
                if extraction is None:  # the reply was unusable: keep the text unextracted
                    extraction, episode["unextracted"] = _EMPTY, True
                plan = plan_extraction(
                    graph,
                    extraction,
                    at=entry.at,
                    now=now,
                    source=entry.source,
                    episode=episode,
                )
                memory._forget_models(graph, plan.ops)
                graph.apply(plan.ops)  # later items resolve against earlier ones
                graph.next_id = plan.next_id
                plans.append(plan)
                ops.extend(plan.ops)
                embed.extend(plan.embed)
                if whole:
                    continue
                if len(embed) >= CHUNK_VECTORS or time.monotonic() - started >= budget:
                    break
            batch = None
            model = memory.embedder_model
            if embed and model is not None:
                rows = _rows_for(memory, [text for _, text in embed], queries or {})
                batch = VectorBatch(model, tuple(obs_id for obs_id, _ in embed), rows)
            commit = Commit(graph.seq + 1, now_iso(), graph.next_id, ops, batch)
            if ops:
                memory.store.commit(commit)
        except BaseException:
            memory._graph = None  # the graph ran ahead of the store: reload on the next call
            raise
        if queries:
            for entry, _ in ready[: len(plans)]:
                queries.pop(entry.text, None)
        stored = commit if ops else None
        if stored is not None:
            graph.seq = commit.seq
            memory._apply_vectors(commit)
            memory._index_episode_ops(commit.ops)
        results = []
        for (_, answer), planned in zip(ready[: len(plans)], plans, strict=True):
            problems = tuple(answer.problems) if answer is not None else ()
            assert planned is not None
            warnings = problems + tuple(planned.warnings)
            changes = memory._change_set(planned, stored, warnings)
            if answer is not None and answer.value is None:
                unusable = problems[-1] if problems else "the model's reply was unusable"
                changes = dataclasses.replace(changes, unusable_reply=unusable)
            results.append(changes)
        if stored is not None:
            try:
                memory._maybe_checkpoint()
            except Exception:  # the chunk is stored; a later write checkpoints
                log.warning("memgraph: checkpoint after a bulk chunk failed", exc_info=True)
                memory._graph = None
            else:
                memory._freeze_if_large(graph)  # the records a chunk parsed are long-lived
        return results


def _rows_for(
    memory: RememberMixin, texts: list[str], known: Mapping[str, np.ndarray]
) -> np.ndarray:
    """The embeddings of ``texts`` in order: those in ``known`` as they are, the rest
    embedded in one batch."""
    missing = list(dict.fromkeys(text for text in texts if text not in known))
    if len(missing) == len(texts):
        return memory._embed(texts)
    fresh = dict(zip(missing, memory._embed(missing), strict=True)) if missing else {}
    return np.stack([known[text] if text in known else fresh[text] for text in texts])
