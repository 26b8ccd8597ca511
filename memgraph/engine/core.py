"""The core of a Memory: its state, how it loads, syncs, locks and commits.

Feature mixins in ``writing``, ``reading``, ``forgetting`` and ``extras``
build on :class:`MemoryCore`; :class:`memgraph.engine.memory.Memory` combines them.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from memgraph.attributes import attribute_cues, attribute_words
from memgraph.clock import epoch_ms, iso, now_iso, parse_iso
from memgraph.config import MemoryConfig, load_config
from memgraph.dates import asked_period
from memgraph.errors import ProviderError, StoreConflict, StoreCorrupt, StoreUnavailable
from memgraph.graph.changes import Plan, episode_embedding_text
from memgraph.graph.graph import Doc, Graph
from memgraph.llm_calls.provider import Provider
from memgraph.llm_calls.resolve import OFFLINE_NOTICE, choose_provider
from memgraph.llm_calls.tokens import token_counter
from memgraph.models import (
    ChangeSet,
    Entity,
    Episode,
    Observation,
    Relation,
)
from memgraph.retrieval import known
from memgraph.retrieval import ranking as tiers
from memgraph.retrieval.ages import BIRTHDAY_WORDS, age_asked_of, age_shares
from memgraph.retrieval.amounts import amount_shares, topic_of_amount
from memgraph.retrieval.days_said import DAYS_SAID_TURNS
from memgraph.retrieval.episode_index import (
    EpisodeIndex,
    OlderIndexFormat,
    conversation_key,
    episode_terms,
)
from memgraph.retrieval.ivf import IVF_MIN_ROWS, CoarseIndex
from memgraph.retrieval.names import mention_groups
from memgraph.retrieval.news import tells_another_s_news
from memgraph.retrieval.nicknames import with_names_written_out
from memgraph.retrieval.periods import period_shares
from memgraph.retrieval.said_of import first_name
from memgraph.retrieval.support import Talk
from memgraph.retrieval.vectors import EPISODE_PREFIX, VectorIndex
from memgraph.scope import validate_scope
from memgraph.speakers import ASSISTANT, spoken_words
from memgraph.store import open_store
from memgraph.store.base import Commit, Store, VectorBatch
from memgraph.store.directory import doctor_hint
from memgraph.text import in_any_form, index_terms

__all__ = ["CONTEXT_BUDGET", "MAX_TEXT_CHARS", "MemoryCore", "coerce_time", "default_dir"]

log = logging.getLogger("memgraph")

T = TypeVar("T")
M = TypeVar("M", bound="MemoryCore")

MAX_TEXT_CHARS = 100_000
"""Longest text one ``remember`` accepts; split longer input into several calls."""

EMBED_BATCH = 256
EMBED_RETRY_SECONDS = 60.0
"""After the embedder failed, how long until missing vectors are tried again."""
CONTEXT_CHUNK = 1024
"""Texts whose extraction contexts ``remember_many`` searches for at once."""
BULK_VECTORS = 1000
CONTEXT_BUDGET = 800
FREEZE_AFTER = 50_000
MODEL_CACHE = 256  # entities kept converted for search hits


@dataclass(frozen=True)
class EntityModel:
    """An entity converted for search hits: its :class:`Entity`, every relation
    (record and model) and, ready to hand out, the current ones."""

    entity: Entity
    relations: list[tuple[Doc, Relation]]
    current_relations: tuple[Relation, ...]


@dataclass(frozen=True)
class Draft:
    """A write planned against a snapshot of the graph, before its vectors and commit."""

    plan_for: Callable[[Graph], Plan]
    plan: Plan
    graph: Graph
    seq: int


def default_dir() -> Path:
    """``MEMGRAPH_DIR`` if set, else ``.memgraph`` in the working directory."""
    return Path(os.environ.get("MEMGRAPH_DIR") or ".memgraph")


def coerce_time(value: str | datetime | None) -> str:
    return now_iso() if value is None else iso(parse_iso(value))


EPISODE_INDEX = "episodes.idx"
COMPACT_EPISODES = 1_024
"""Episodes indexed at load past the saved index that make it sort them into one table
(an index added to in memory finds a term's episodes by scanning everything added)."""
EPISODE_CANDIDATES = 50
RARE_NAME = 0.02
"""A person who never speaks and whom fewer texts than this share name is the topic
of a question naming them ("How did Kwame propose to Sophie?"): their name is searched."""
CUE_WEIGHT = 1.5
"""How much a named person's text in the words an asked attribute's news comes in
("I start at ...", "we found a house in ...") counts, times its share of them."""
NEWS_SHARE = 1.0
"""For a question about now ("Where does Wren work now?"), what the named person's
text most in the words such news comes in counts as ("Brightpath made me an
offer"), the others in proportion: all of the question, as much as a text that
only says "work" ("I have a work offsite on the 8th") holds, so the news is told
from such texts by what was said last."""
NEWS_READ = 12
"""How many of the best texts found in the words of such news are read to drop those
that tell someone else's."""
OTHER_NEWS = 0.75
"""What a text of such news keeps when the question names what it asks about ("the café
in Fitzroy") and the text holds none of it."""
KIND_HITS = 10
"""Of those, how many of the named person's count."""
KIND_SHARE = 0.5
"""What the best of them counts as (a text holding a fair share of the question)."""
TURNS_BEFORE = 3
"""How many turns a turn goes on from are read with it (in a group chat the news
is often three turns back: "Chai ate a sock" "WHAT" "is she ok??" "$600 later")."""
NEAREST = 80
"""Rows one vector search returns, facts and texts together."""
SEAL_POSTINGS = 50_000
"""An episode index that added more postings than this since it was saved is compacted."""
DEFAULT_SPEAKER = "User"
"""Who speaks when no speaker is given: the agent's own user."""


def index_episode(index: EpisodeIndex, doc: Doc, location: int = -1) -> None:
    """Add an episode record to the episode index (or note its location)."""
    if doc["id"] in index:  # indexed when committed: the store now says where it is
        if location >= 0:
            index.locate(doc["id"], location)
        return
    try:
        at_ms = epoch_ms(doc.get("at") or doc.get("recordedAt") or "")
    except ValueError:
        at_ms = 0
    index.add(
        doc["id"],
        spoken_words(doc),  # a "Name:" label is its speaker, indexed as one
        at_ms=at_ms,
        source=doc.get("source"),
        speaker=doc.get("speaker"),
        conversation=conversation_key(doc),
        location=location,
        facts=doc.get("facts") if isinstance(doc.get("facts"), list) else None,
    )


def _fact_terms(graph: Graph, fact: Doc) -> list[str]:
    """The index terms of what a fact says ("lives in Toronto"; a relation as its
    type and target: "lives in Toronto" for lives_in → Toronto)."""
    if "content" in fact:
        return index_terms(str(fact["content"] or ""))
    return index_terms(f"{fact['type'].replace('_', ' ')} {graph.entity_name(fact['to']) or ''}")


def _is_history(
    graph: Graph, facts: Sequence[int], gone: Sequence[int], wanted: set[str] | None
) -> bool:
    """Whether a text that stated ``facts``, of which ``gone`` are no longer current,
    is history for a question asking ``wanted`` (index terms in any form; ``None``:
    any question). It is when every fact is gone or one was forgotten (``forget``,
    ``expire``, or purged); when only some changed, for a question in the words of
    what changed, not of what still holds."""
    if not gone:
        return False
    if wanted is None or len(gone) == len(facts):
        return True
    changed = [graph.stated_fact(n) for n in gone]
    if any(fact is None or fact.get("forgotten") for fact in changed):
        return True
    held = [graph.stated_fact(n) for n in facts if n not in gone]
    kept = {t for fact in held if fact is not None for t in _fact_terms(graph, fact)}
    said = {t for fact in changed if fact is not None for t in _fact_terms(graph, fact)}
    return bool(wanted & in_any_form(said - kept))


def _expired_before(doc: Doc, lens: tiers.Lens) -> bool:
    """Whether a fact was retired by the moment ``lens`` reads (not merely not yet true)."""
    valid_to = doc.get("validTo")
    return valid_to is not None and (lens.at is None or valid_to <= lens.at)


def _highest_id(ops: Sequence[Doc]) -> int:
    highest = 0
    for op in ops:
        for key in ("entity", "obs", "rel"):
            value = op.get(key)
            if isinstance(value, dict):
                _, _, number = str(value.get("id", "")).rpartition("-")
                if number.isdigit():
                    highest = max(highest, int(number))
    return highest


class MemoryCore:
    """State and primitives shared by every part of :class:`memgraph.Memory`."""

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
        self.config = self._resolve_config(config)
        self.provider, self.offline = choose_provider(provider, self.config)
        self._owns_provider = not isinstance(provider, Provider)  # built here: closed here
        if self.offline:
            log.info(OFFLINE_NOTICE)
        self.dir: Path | None = None
        if store is not None and not isinstance(store, str):
            self.store: Store = store
        else:
            kind = store or os.environ.get("MEMGRAPH_STORE") or self.config.store
            self.dir = Path(dir) if dir is not None else (self.config.dir or default_dir())
            self.store = open_store(kind, self.dir, self.scope)
        self._token_model = self.provider.chat.model or None
        self._lock = threading.RLock()
        self._graph: Graph | None = None
        self._vectors: VectorIndex | None = None
        self._episode_cache: dict[str, Doc] | None = None
        # The episode tier's lexical index: loaded on first read or write, kept in step
        # with every commit applied, saved next to the episodes at checkpoints.
        self._episode_index: EpisodeIndex | None = None
        # Entity id -> its Entity and (relation doc, Relation) pairs, for search hits:
        # a hub entity holds thousands of facts, converted once until it changes.
        self._models: OrderedDict[str, EntityModel] = OrderedDict()
        self._closed = False
        self._writing = False
        self._training: threading.Thread | None = None
        # When the embedder failed, the monotonic time after which missing vectors are
        # embedded again (reads go on with the lexical tiers meanwhile).
        self._embed_retry_at: float | None = None

    @staticmethod
    def _resolve_config(
        config: MemoryConfig | Mapping[str, Any] | str | os.PathLike[str] | None,
    ) -> MemoryConfig:
        if isinstance(config, MemoryConfig):
            return config
        if isinstance(config, Mapping):
            return MemoryConfig.from_dict(config)
        if config is not None:
            return load_config(Path(config)) or MemoryConfig()
        return load_config() or MemoryConfig()

    def __enter__(self: M) -> M:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Release files. The memory can be reopened by creating a new ``Memory``."""
        with self._lock:
            self.store.close()
            self._closed = True
            if self._owns_provider:
                for part in (self.provider.chat, self.provider.embedder):
                    close = getattr(part, "close", None)
                    if callable(close):
                        close()

    def resident_bytes(self) -> int:
        """A rough estimate of the memory this object holds for its scope (what a
        :class:`~memgraph.conversation.cache.MemoryCache` budgets): the graph and
        vectors loaded so far. Zero before the first call loads the scope."""
        graph, vectors = self._graph, self._vectors
        if graph is None:
            return 0
        return graph.resident_bytes() + (vectors.resident_bytes() if vectors is not None else 0)

    def __repr__(self) -> str:
        where = str(self.dir) if self.dir is not None else type(self.store).__name__
        return f"Memory({where!r}, scope={self.scope!r}, provider={self.provider.name!r})"

    def _count_tokens(self, text: str) -> int:
        """Tokens of ``text`` for the chat model (the encoding loads on first use)."""
        return token_counter(self._token_model)(text)

    @property
    def embedder_model(self) -> str | None:
        """The identity of the embedder's vector space (its ``space`` when it has one:
        the model, endpoint and size), recorded with the vectors."""
        embedder = self.provider.embedder
        if embedder is None:
            return None
        space = getattr(embedder, "space", None)
        return space if isinstance(space, str) and space else embedder.model

    def _sync(self) -> Graph:
        """Bring the in-memory graph up to date with the store (cheap when nothing changed)."""
        commits = None if self._graph is None else self.store.changes_since(self._graph.seq)
        if commits is None:  # first use, or another handle's checkpoint replaced the files
            self._backfill_vectors(self._load())
        else:
            for commit in commits:
                self._apply(commit)
            retry_at = self._embed_retry_at
            if retry_at is not None and time.monotonic() >= retry_at:
                assert self._graph is not None
                self._backfill_vectors(self._graph.current_observation_ids())
        assert self._graph is not None
        self._maybe_train()
        return self._graph

    def _maybe_train(self) -> None:
        """Start training the approximate vector index in the background when due.

        Due when the scope has at least ``IVF_MIN_ROWS`` vectors and the index
        covers less than half of them. Searches stay exact until it is ready.
        """
        index = self._vectors
        if index is None or len(index) < IVF_MIN_ROWS or self._training is not None:
            return
        if index.coarse is not None and index.coarse.covered * 2 >= len(index):
            return
        count = len(index)
        rows = index.rows(0, count)

        def train() -> None:
            try:
                trained = CoarseIndex.train(rows)
                with self._lock:
                    if self._vectors is index:
                        trained.extend(index.rows(trained.covered, len(index)))
                        index.coarse = trained
            except Exception:  # a failed background build only costs speed
                log.exception("memgraph: building the vector index of %r failed", self.scope)
            finally:
                self._training = None

        self._training = threading.Thread(target=train, name="memgraph-ivf", daemon=True)
        self._training.start()

    def wait_for_index(self, timeout: float | None = None) -> bool:
        """Wait until a background vector-index build (if any) is done; True if none runs."""
        thread = self._training
        if thread is not None:
            thread.join(timeout)
        return self._training is None

    def _backfill_vectors(self, current: Sequence[str]) -> None:
        """Embed current observations that have no vector (new embedding model, Agency files).

        Persisted when the scope's lock is free; otherwise kept in memory and
        persisted by the next write.
        """
        graph = self._graph
        assert graph is not None
        missing = self._missing_vectors(graph, current)
        if not missing:
            return
        held = self._vectors
        if held is not None and not len(held):
            # No vectors at all (a new embedding model, a repair, a dump loaded without
            # them): the remembered texts are embedded along with the facts.
            index = self._episodes_indexed()
            docs = self._episode_docs(graph, index.ids)
            missing += [(e, episode_embedding_text(docs[e])) for e in index.ids if e in docs]
        log.info("memgraph: embedding %d facts and texts of scope %r", len(missing), self.scope)
        try:
            rows = self._embed([text for _, text in missing])
        except ProviderError as exc:  # reading needs no model: embed them on a later read
            if self._embed_retry_at is None:
                log.warning(
                    "memgraph: %d facts of scope %r have no vector for %r yet (%s); until "
                    "they do, reads match them by name and keyword only",
                    len(missing), self.scope, self.embedder_model, exc,
                )  # fmt: skip
            self._embed_retry_at = time.monotonic() + EMBED_RETRY_SECONDS
            return
        self._embed_retry_at = None
        vectors = {obs_id: row for (obs_id, _), row in zip(missing, rows, strict=True)}
        try:
            with self._writer(min(self.config.lock_timeout, 1.0)):
                commits = self.store.changes_since(graph.seq)
                if commits is None:
                    return
                for commit in commits:
                    self._apply(commit)
                plan = Plan(next_id=graph.next_id, embed=[m for m in missing if m[0] in vectors])
                if len(plan.embed) > BULK_VECTORS:
                    assert self._vectors is not None
                    self._vectors.add(list(vectors), np.stack(list(vectors.values())))
                    self._maybe_checkpoint(force=True)
                else:
                    self._commit(plan, vectors)
        except StoreConflict:
            assert self._vectors is not None
            self._vectors.add(list(vectors), np.stack(list(vectors.values())))

    @contextlib.contextmanager
    def _writer(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the store's single-writer lock (re-entrant within this object)."""
        if self._writing:
            yield
            return
        with self.store.lock(self.config.lock_timeout if timeout is None else timeout):
            self._writing = True
            try:
                yield
            finally:
                self._writing = False

    def checkpoint(self) -> None:
        """Fold the journal into ``graph.json`` now (it also happens automatically)."""
        with self._lock, self._writer():
            self._sync()
            self._maybe_checkpoint(force=True)

    def _load(self) -> Sequence[str]:
        """Load the scope from the store; returns the ids of the current observations."""
        snapshot = self.store.load()
        try:
            graph = snapshot.graph()
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise self._corrupt("graph_path", "is not a valid graph", "structure", exc) from exc
        model = self.embedder_model
        vectors = snapshot.vectors
        if vectors is not None and model is not None and vectors.model == model:
            index = VectorIndex(model, None, vectors.matrix, vectors.ids, source=vectors.source)
            if vectors.coarse is not None and vectors.coarse.centroids.shape[1:] == (
                index.dimension,
            ):
                index.coarse = vectors.coarse
        else:
            if vectors is not None and len(vectors.ids) and model is not None:
                log.warning(
                    "memgraph: scope %r has vectors of model %r but the embedder is %r; "
                    "rebuilding the index instead of mixing vector spaces",
                    self.scope,
                    vectors.model,
                    model,
                )
            index = VectorIndex(model)
        self._graph, self._vectors, self._episode_cache = graph, index, None
        self._episode_index = None  # rebuilt from the store's copy on next use
        self._models.clear()
        graph.defer_indexing()  # the replayed facts are indexed in one batch below
        for commit in snapshot.commits:
            try:
                self._apply(commit)
            except (AttributeError, KeyError, TypeError, ValueError, StopIteration) as exc:
                self._graph = None
                problem = "does not apply to the graph"
                raise self._corrupt("journal_path", problem, f"commit {commit.seq}", exc) from exc
        graph.flush_indexing()
        current = graph.current_observation_ids()
        index.set_live(current)
        self._freeze_if_large(graph)
        return current

    @staticmethod
    def _freeze_if_large(graph: Graph) -> None:
        """Keep the cyclic GC from re-scanning a large graph on every full collection
        (it cost a fifth of write time at 100k facts): after loading, after each
        checkpoint and after each bulk batch, since a lazy graph parses its records
        as they are used. Young garbage is collected first so it is not frozen."""
        if graph.observation_count >= FREEZE_AFTER:
            gc.collect(1)
            gc.freeze()

    def _corrupt(self, attribute: str, problem: str, position: str, exc: Exception) -> StoreCorrupt:
        """A StoreCorrupt for stored data that parsed but does not make a graph."""
        path = str(getattr(self.store, attribute, "") or "")
        shown = repr(path) if path else f"the store of scope {self.scope!r}"
        advice = doctor_hint(Path(path)) if path else "`memgraph doctor` on the scope"
        return StoreCorrupt(
            f"{shown} is damaged at {position}: it {problem} ({type(exc).__name__}: {exc}). "
            f"It was left untouched; run {advice} to inspect it",
            path=path,
            position=position,
        )

    def _apply(self, commit: Commit) -> None:
        graph = self._graph
        assert graph is not None
        self._forget_models(graph, commit.ops)
        graph.apply(commit.ops)
        graph.next_id = max(graph.next_id, commit.next_id)
        graph.seq = commit.seq
        self._apply_vectors(commit)
        self._index_episode_ops(commit.ops)

    def _index_episode_ops(self, ops: Sequence[Doc]) -> None:
        """Keep a loaded episode index in step with applied ops."""
        if self._episode_index is None:
            return
        for op in ops:
            if op["op"] == "episode":
                index_episode(self._episode_index, op["episode"])
            elif op["op"] == "extracted":
                self._episode_index.set_facts(op["episode"], op.get("facts") or [])
            elif op["op"] == "purge":
                self._episode_index.remove(op["ids"])

    def _forget_models(self, graph: Graph, ops: Sequence[Doc]) -> None:
        """Drop the cached models of the entities ``ops`` change."""
        models = self._models
        if not models:
            return
        for op in ops:
            kind = op["op"]
            if kind == "obs":
                models.pop(op["entity"], None)
            elif kind == "expire_obs":
                pair = graph.observation(op["id"])
                if pair is not None:
                    models.pop(pair[0]["id"], None)
            elif kind == "rel":
                models.pop(op["rel"]["from"], None)
                models.pop(op["rel"]["to"], None)
            elif kind == "expire_rel":
                rel = graph.relations.get(op["id"])
                if rel is not None:
                    models.pop(rel["from"], None)
                    models.pop(rel["to"], None)
            elif kind == "purge":
                models.clear()

    def _entity_model(self, graph: Graph, entity: Doc) -> EntityModel:
        """``entity`` as an :class:`Entity` with its relations (cached, least recently used out)."""
        models = self._models
        found = models.get(entity["id"])
        if found is None:
            pairs = [(rel, self._relation(rel)) for rel in graph.relations_of(entity["id"])]
            current = tuple(model for rel, model in pairs if rel.get("validTo") is None)
            found = models[entity["id"]] = EntityModel(Entity.from_doc(entity), pairs, current)
            if len(models) > MODEL_CACHE:
                models.popitem(last=False)
        else:
            models.move_to_end(entity["id"])
        return found

    def _apply_vectors(self, commit: Commit) -> None:
        index = self._vectors
        assert index is not None
        batch = commit.vectors
        if batch is not None and batch.ids and batch.model == index.model:
            index.add(batch.ids, batch.matrix)
        index.discard(op["id"] for op in commit.ops if op["op"] == "expire_obs")

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        embedder = self.provider.embedder
        assert embedder is not None
        parts = [
            embedder.embed(texts[i : i + EMBED_BATCH]) for i in range(0, len(texts), EMBED_BATCH)
        ]
        return np.concatenate(parts) if len(parts) > 1 else parts[0]

    def _missing_vectors(self, graph: Graph, current: Sequence[str]) -> list[tuple[str, str]]:
        """(id, text to embed) of the ``current`` observations that have no vector."""
        index = self._vectors
        if self.provider.embedder is None or index is None:
            return []
        missing = []
        for obs_id in index.missing(current):
            pair = graph.observation(obs_id)
            assert pair is not None
            entity, obs = pair
            text = f"{entity['name']} ({entity.get('type') or 'thing'}): {obs['content']}"
            missing.append((obs_id, text))
        return missing

    def _commit(self, plan: Plan, vectors: Mapping[str, np.ndarray]) -> Commit:
        """Append ``plan`` as the next commit and apply it. Caller holds both locks."""
        graph = self._graph
        assert graph is not None
        ids = [obs_id for obs_id, _ in plan.embed if obs_id in vectors]
        batch = None
        if ids and self.embedder_model is not None:
            batch = VectorBatch(
                self.embedder_model, tuple(ids), np.stack([vectors[i] for i in ids])
            )
        commit = Commit(graph.seq + 1, now_iso(), plan.next_id, plan.ops, batch)
        self.store.commit(commit)
        self._apply(commit)
        self._maybe_checkpoint()
        return commit

    def _maybe_checkpoint(self, *, force: bool = False) -> None:
        graph = self._graph
        assert graph is not None
        if not force and not self.store.checkpoint_due():
            self._maybe_train()
            return  # building the document for a store that would decline costs O(n)
        episodes = list(graph.episodes.values())
        self._episodes_indexed()  # so the index saved with this checkpoint covers it
        try:
            written = self.store.checkpoint(graph, self._vectors, episodes, force=force)
        except StoreUnavailable as exc:
            if force:
                raise
            # The write that triggered it is committed (in the journal): reporting it
            # as failed would make the caller store it twice. A later write retries.
            log.warning(
                "memgraph: checkpoint of scope %r failed, retried later: %s", self.scope, exc
            )
            return
        if written:
            graph.episodes.clear()
            if self._episode_cache is not None:
                for episode in episodes:
                    self._episode_cache[episode["id"]] = episode
            self._save_episode_index()
            self._freeze_if_large(graph)
        self._maybe_train()

    def _context_for(
        self,
        graph: Graph,
        text: str,
        query_vector: np.ndarray | None = None,
        hits: Sequence[tuple[str, float]] | None = None,
        lookups: known.NameLookups | None = None,
        speaker: str | None = None,
    ) -> str:
        """The bounded existing-entity context for an extraction prompt (:mod:`memgraph.retrieval.known`).

        ``query_vector`` is the text's embedding and ``hits`` its nearest
        observations, when the caller has them (the bulk path); else they are
        computed here. ``lookups``: name lookups shared by texts over this graph.
        ``speaker``: who said the text (default: the user).
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
            lookups=lookups,
            speaker=speaker or DEFAULT_SPEAKER,
        )

    def _contexts_for(
        self,
        graph: Graph,
        texts: Sequence[str],
        queries_out: dict[str, np.ndarray] | None = None,
        speakers: Sequence[str | None] | None = None,
    ) -> list[str]:
        """:meth:`_context_for` of many texts (said by ``speakers``, default the user):
        per :data:`CONTEXT_CHUNK` texts, one embedding call and one pass over the vector
        lists they visit. The texts' embeddings are put in ``queries_out`` when given (a
        text's episode vector, when it is the text itself, need not be asked for again)."""
        if not graph.entities:
            return ["" for _ in texts]
        said_by = list(speakers) if speakers is not None else [None] * len(texts)
        # The graph does not change while these contexts are found (the caller holds
        # the lock): the texts share what their name lookups learn of it.
        lookups = known.NameLookups(graph)
        index = self._vectors
        if self.provider.embedder is None or index is None or not len(index):
            return [
                self._context_for(graph, text, lookups=lookups, speaker=said_by[i])
                for i, text in enumerate(texts)
            ]
        contexts: list[str] = []
        for start in range(0, len(texts), CONTEXT_CHUNK):  # bounded scratch for huge imports
            chunk = texts[start : start + CONTEXT_CHUNK]
            queries = self._embed(chunk)
            if queries_out is not None:
                queries_out.update(zip(chunk, queries, strict=True))
            found = index.search_many(
                queries,
                known.NEIGHBOURS,
                tiers.SEMANTIC_THRESHOLD,
                max_rows=known.PROBE_ROWS,
                kind="facts",
            )
            contexts += [
                self._context_for(graph, text, queries[i], found[i], lookups, said_by[start + i])
                for i, text in enumerate(chunk)
            ]
        return contexts

    # ------------------------------------------------------------- episode tier
    def _episodes_indexed(self) -> EpisodeIndex:
        """The episode index, loaded (or rebuilt) on first use and caught up with the
        store and the journal. Caller holds ``self._lock`` and has synced."""
        index = self._episode_index
        if index is None:
            index = self._load_episode_index()
            graph = self._graph
            assert graph is not None
            for doc in graph.episodes.values():  # journal episodes, not yet checkpointed
                index_episode(index, doc)
            self._episode_index = index
        return index

    def _load_episode_index(self) -> EpisodeIndex:
        index: EpisodeIndex | None = None
        data = self.store.read_derived(EPISODE_INDEX)
        if data is not None:
            try:
                index = EpisodeIndex.decode(data)
            except OlderIndexFormat:
                log.info("memgraph: rebuilding the episode index of scope %r", self.scope)
            except (ValueError, KeyError, TypeError) as exc:
                log.warning(
                    "memgraph: the episode index of scope %r is unreadable (%s); rebuilding it",
                    self.scope,
                    exc,
                )
        if index is not None:
            try:
                tail, end = self.store.episodes_after(index.mark)
            except (ValueError, StoreCorrupt) as exc:
                # The episodes were rewritten since (a purge, a restore): the index is
                # stale, and its mark may even fall inside a record. The primary file
                # wins: read it from the start, where real damage is still raised.
                log.info(
                    "memgraph: the episode index of %r is stale (%s); rebuilding it",
                    self.scope,
                    exc,
                )
                index = None
        saved = data is not None  # a small rebuild over a stale copy is not saved
        if index is None:
            index = EpisodeIndex()
            tail, end = self.store.episodes_after(0)
        for location, doc in tail:
            index_episode(index, doc, location)
        index.mark = end
        if (saved or not tail) and index.added_postings <= SEAL_POSTINGS:
            return index
        # A rebuilt (none saved, e.g. a scope copied between stores) or far-behind
        # index: compact it, and save it so the next opener does not rebuild it too
        # (derived data: any process may write it, and a copy older than the store is
        # caught up from its mark).
        encoded, sealed = index.encode_sealed()
        try:
            self.store.write_derived(EPISODE_INDEX, encoded())
        except OSError as exc:
            log.warning("memgraph: could not save the episode index of %r: %s", self.scope, exc)
        return sealed

    def _embed_missing_episodes(self) -> int:
        """Embed the episodes that have no vector (after a repair or an embedder change)
        and save them with a checkpoint; returns how many were embedded."""
        if self.provider.embedder is None:
            return 0
        with self._lock, self._writer():
            graph = self._sync()
            index = self._episodes_indexed()
            vectors = self._vectors
            assert vectors is not None
            missing = vectors.missing(list(index.ids))
            for start in range(0, len(missing), EMBED_BATCH):
                batch = missing[start : start + EMBED_BATCH]
                docs = self._episode_docs(graph, batch)
                found = [e for e in batch if e in docs]
                if found:
                    rows = self._embed([episode_embedding_text(docs[e]) for e in found])
                    vectors.add(found, rows)
            if missing:
                self._maybe_checkpoint(force=True)
            return len(missing)

    def _save_episode_index(self) -> None:
        """After a checkpoint: note where the store put the new episodes, save the index."""
        index = self._episode_index
        if index is None:
            return
        try:
            tail, end = self.store.episodes_after(index.mark)
        except ValueError:
            self._episode_index = None
            return
        for location, doc in tail:
            index_episode(index, doc, location)
        index.mark = end
        encoded, sealed = index.encode_sealed()
        try:  # the directory store encodes and writes it in the background
            self.store.write_derived_later(EPISODE_INDEX, encoded)
        except OSError as exc:  # derived data: a failed save costs the next opener time
            log.warning("memgraph: could not save the episode index of %r: %s", self.scope, exc)
        self._episode_index = sealed  # compact: flat arrays, nothing added

    def _write(self, plan_for: Callable[[Graph], Plan]) -> tuple[Plan, Commit | None]:
        """Plan against a snapshot, embed, then lock, catch up, re-plan and commit."""
        draft = self._draft(plan_for)
        texts = self._draft_texts(draft)
        vectors = dict(zip(texts, self._embed(texts), strict=True)) if texts else {}
        return self._commit_draft(draft, vectors)

    def _draft(self, plan_for: Callable[[Graph], Plan]) -> Draft:
        """The first step of :meth:`_write`: plan against the synced graph, unlocked after."""
        with self._lock:
            graph = self._sync()
            return Draft(plan_for, plan_for(graph), graph, graph.seq)

    def _draft_texts(self, draft: Draft) -> list[str]:
        """What to embed for ``draft`` before committing it (nothing without an embedder)."""
        if self.provider.embedder is None:
            return []
        return [text for _, text in draft.plan.embed]

    def _commit_draft(
        self, draft: Draft, vectors: dict[str, np.ndarray]
    ) -> tuple[Plan, Commit | None]:
        """The last step of :meth:`_write`, given the draft's vectors by text: lock,
        catch up, re-plan if another write landed, embed what is new, commit."""
        with self._lock, self._writer():
            graph = self._sync()
            # Re-plan only when another write landed since the draft (ids, duplicates).
            same = (graph, graph.seq) == (draft.graph, draft.seq)
            plan = draft.plan if same else draft.plan_for(graph)
            missing = [text for _, text in plan.embed if text not in vectors]
            if missing and self.provider.embedder is not None:
                for text, row in zip(missing, self._embed(missing), strict=True):
                    vectors[text] = row
            if not plan.ops:
                return plan, None
            by_id = {obs_id: vectors[text] for obs_id, text in plan.embed if text in vectors}
            return plan, self._commit(plan, by_id)

    def _change_set(
        self, plan: Plan, commit: Commit | None, warnings: tuple[str, ...]
    ) -> ChangeSet:
        if commit is None:
            return ChangeSet(warnings=warnings)
        graph = self._graph
        assert graph is not None
        episode = None
        entities, observations, relations, expired_obs, expired_rels = [], [], [], [], []
        # A new entity's facts are most often this plan's new facts, as stored: made once.
        made = {
            op["obs"]["id"]: (op["obs"], Observation.from_doc(op["obs"], op["entity"]))
            for op in plan.ops
            if op["op"] == "obs"
        }

        def fact(doc: Doc, entity_id: str) -> Observation:
            found = made.get(doc["id"])
            if found is not None and found[1].entity_id == entity_id and found[0] == doc:
                return found[1]
            return Observation.from_doc(doc, entity_id)

        for op in plan.ops:
            kind = op["op"]
            if kind == "episode":
                episode = Episode.from_doc(op["episode"])
            elif kind == "entity":
                doc = graph.entities[op["entity"]["id"]]
                facts = tuple(fact(o, doc["id"]) for o in doc["observations"])
                entities.append(Entity.from_doc(doc, observations=facts))
            elif kind == "obs":
                observations.append(made[op["obs"]["id"]][1])
            elif kind == "rel":
                relations.append(self._relation(op["rel"]))
            elif kind == "expire_obs":
                pair = graph.observation(op["id"])
                if pair is not None:
                    expired_obs.append(Observation.from_doc(pair[1], pair[0]["id"]))
            elif kind == "expire_rel":
                expired_rels.append(self._relation(graph.relations[op["id"]]))
        return ChangeSet(
            episode,
            tuple(entities),
            tuple(observations),
            tuple(relations),
            tuple(expired_obs),
            tuple(expired_rels),
            warnings,
        )

    def _relation(self, rel: Doc) -> Relation:
        graph = self._graph
        assert graph is not None
        # The ends' names without parsing their records (a lazy graph peeks at them).
        source, target = graph.entity_name(rel["from"]), graph.entity_name(rel["to"])
        return Relation.from_doc(
            rel,
            source if source is not None else rel["from"],
            target if target is not None else rel["to"],
        )

    def _candidates(
        self,
        graph: Graph,
        query: str,
        *,
        limit: int = 200,
        query_vector: np.ndarray | None = None,
        lens: tiers.Lens = tiers.CURRENT,
        floor: float | None = None,
        analyzed: tiers.Query | None = None,
    ) -> list[tiers.Candidate]:
        """Tiers 1 and 2 over facts and episodes, fused and floored, through ``lens``
        (at ``floor``, default ``recall.floor``); ``analyzed`` is the query's
        :meth:`_analyze`, when the caller has it."""
        if analyzed is None:
            analyzed = self._analyze(graph, query)
        history = lens.at is not None
        vectors = self._vectors if self.provider.embedder is not None else None
        if vectors is not None and len(vectors) and query_vector is None:
            try:
                query_vector = self._embed([query])[0]
            except ProviderError as exc:  # reading needs no model: search without vectors
                log.warning("memgraph: the embedder failed (%s); searching without it", exc)
                vectors = None
        mask = None
        if history and vectors is not None and len(vectors):
            visible = (o["id"] for _, o in graph.all_observations() if lens.visible(o))
            mask = vectors.mask_for(visible)
        facts = tiers.named_facts(graph, analyzed.named, history=history)
        # One vector search for facts and texts alike (in the past, facts through their
        # visibility mask and texts in a search of their own).
        nearest = tiers.semantic_matches(
            vectors,
            None,
            query,
            k=NEAREST if lens == tiers.CURRENT else 200,
            query_vector=query_vector,
            mask=mask,
            kind=None if mask is None else "facts",
            facts=facts,
        )
        semantic = {i: v for i, v in nearest.items() if not i.startswith(EPISODE_PREFIX)}
        near_texts = (
            None
            if mask is not None
            else {i: v for i, v in nearest.items() if i.startswith(EPISODE_PREFIX)}
        )
        # An identity query ("Who is Bob?") also finds the facts that mention the name.
        content = analyzed.content_terms or analyzed.terms
        keywords = (
            tiers.keyword_matches(graph, content, history=history, facts=facts) if content else {}
        )
        return tiers.fuse(
            graph,
            analyzed,
            types=tiers.type_matches(graph, query, among=analyzed.named),
            keywords=keywords,
            semantic=semantic,
            episodes=self._episode_signals(graph, analyzed, query_vector, lens, near_texts),
            floor=self.config.recall.floor if floor is None else floor,
            limit=limit,
            lens=lens,
        )

    def _analyze(self, graph: Graph, query: str) -> tiers.Query:
        """The query's named entities and content (:func:`tiers.analyze`). Content
        that no remembered text or current fact holds, in any form, is set aside
        (:meth:`tiers.Query.set_aside`) when the query calls someone by name: it asks about
        them in words never said, so what is remembered of them answers it, under a
        note that nothing says it."""
        analyzed = tiers.analyze(graph, query, user=self._user_entity(graph))
        content = analyzed.content_terms
        if not analyzed.name_terms or not content or analyzed.attributes or analyzed.answer_cues:
            # named by no name ("Tell me a joke": "me" is no question about the user), or
            # the words its answers come in are looked for instead
            return analyzed
        if self._episodes_indexed().holds_any(content) or tiers.facts_hold_any(graph, content):
            return analyzed
        return analyzed.set_aside()

    def _names_written_out(self, graph: Graph, query: str) -> str:
        """``query`` with the short form of a speaker's name, or the name the others
        call them by, written out ("What is Pri's cat called?" → "Priyanka's",
        "Shiv's dog" → "Siobhán's"): :func:`nicknames.with_names_written_out`."""
        index = self._episodes_indexed()
        speakers = index.first_names()
        if not speakers.firsts:  # no conversation: nobody to call by a short name
            return query
        return with_names_written_out(
            query,
            speakers,
            is_name=lambda w: graph.name_term_index().count(w) > 0,
            called=index.called,
        )

    def _user_entity(self, graph: Graph) -> str | None:
        """The entity first-person words stand for (the default speaker's)."""
        entity = graph.entity_by_name(DEFAULT_SPEAKER)
        return str(entity["id"]) if entity is not None else None

    def _retired_episodes(
        self, graph: Graph, episode_ids: Iterable[str], wanted: set[str] | None = None
    ) -> set[str]:
        """The episodes that are history: every fact they stated is no longer current
        (superseded, corrected or expired by a later text), or one was forgotten
        (``forget``, ``expire``). Read from the graph's saved flags, all at once.

        A text only some of whose facts a later text changed is history for a
        question asking ``wanted`` (index terms in any form) of what changed ("Where does Dana
        live?" of "I live in Toronto and work at Acme", after "I moved to Berlin"),
        and findable for the rest ("Where does Dana work?"): a small model's stray
        expiration, or a wrong fact put right, does not make the rest of what it
        said unsayable. Without ``wanted``, any change makes it history."""
        index = self._episodes_indexed()
        stated = {e: index.facts_of(e) or () for e in episode_ids}
        numbers = list(dict.fromkeys(n for facts in stated.values() for n in facts))
        current = dict(zip(numbers, graph.facts_current(numbers), strict=True))
        return {
            episode_id
            for episode_id, facts in stated.items()
            if _is_history(graph, facts, [n for n in facts if not current[n]], wanted)
        }

    def _talk(self, graph: Graph) -> Talk:
        """Whom a remembered turn speaks to, and what was said before it."""
        index = self._episodes_indexed()

        def addressee(episode_id: str) -> str | None:
            name = index.addressee(episode_id)
            entity = graph.entity_by_name(name) if name else None
            # someone with no entity of their own is still not the one asked about
            return str(entity["id"]) if entity is not None else name and f"speaker:{name}"

        @functools.cache  # asked again of the same turn by each check of one recall
        def before(episode_id: str) -> tuple[tuple[str, str], ...]:
            if index.speaker_of(episode_id) is None:
                return ()  # a note, not a turn of a conversation
            turns: list[str] = []
            previous = index.context_of(episode_id)
            while previous is not None and len(turns) < TURNS_BEFORE:
                turns.append(previous)
                previous = index.context_of(previous)
            docs = self._episode_docs(graph, turns)
            return tuple((t, spoken_words(docs[t])) for t in turns if t in docs)

        return Talk(addressee, before)

    def _episode_signals(
        self,
        graph: Graph,
        query: tiers.Query,
        query_vector: np.ndarray | None,
        lens: tiers.Lens,
        near: dict[str, float] | None = None,
    ) -> tiers.EpisodeSignals:
        """The episode tier for ``query``: BM25 over the texts and their vectors."""
        index = self._episodes_indexed()
        if not len(index):
            return tiers.EpisodeSignals()
        at_ms = None if lens.at is None else epoch_ms(lens.at)

        # A person's name is in every text they said (their speaker name is indexed),
        # and one spoken of often is named in many: it picks whose texts, not which.
        # A named place or thing, or a person seldom spoken of, is the topic itself.
        def whose(name: str, entity_id: str) -> bool:  # the name picks whose texts
            if index.heard(name):  # a speaker, even one named as a thing first
                return True
            if (graph.entities.get(entity_id) or {}).get("type") != "person":
                return False
            return any(index.share_saying(t) >= RARE_NAME for t in episode_terms(name))

        named = {e: graph.entity_name(e) or "" for e in query.named}
        names = {t for e, name in named.items() if whose(name, e) for t in episode_terms(name)}
        asked = [
            t
            for t in tiers.without_years(episode_terms(query.asked_text))
            if t not in query.unheard
        ]
        terms = [t for t in asked if t not in names] or list(asked)
        speakers: dict[str, str | None] = {}

        def speaker_entity(name: str) -> str | None:
            if name not in speakers:
                entity = graph.entity_by_name(name)
                speakers[name] = str(entity["id"]) if entity is not None else None
            return speakers[name]

        def speaker(episode_id: str) -> str | None:
            return speaker_entity(index.speaker_of(episode_id) or DEFAULT_SPEAKER)

        def spoken(ids: list[str]) -> dict[str, str]:  # the words of these texts, as said
            return {e: spoken_words(doc) for e, doc in self._episode_docs(graph, ids).items()}

        period = asked_period(query.text)  # "What did Tim start in August 2023?"
        within = None if period is None else period.epoch_ms()
        lexical = dict(
            index.search(
                terms, k=EPISODE_CANDIDATES, at_ms=at_ms, source=lens.source, said_within=within
            )
        )
        if period is not None:
            # "What was Sam doing on December 4, 2023?": the texts that speak of that day
            voices: list[str | None] = [
                n for n in index.speaker_names() if speaker_entity(n) in query.named
            ]
            if speaker_entity(DEFAULT_SPEAKER) in query.named:
                voices.append(None)  # texts remembered without a speaker are the user's
            lexical.update(
                period_shares(
                    index,
                    period,
                    lexical,
                    speakers=voices if query.named else None,
                    texts=spoken,
                    at_ms=at_ms,
                    source=lens.source,
                )
            )
        topical = None
        if query.name_terms - names:  # a named topic counted: what the other words hold
            unnamed = [t for t in terms if t not in query.name_terms]
            # what a text says of the topic: its own words and the turn it answers
            topical = (
                dict(
                    index.search(
                        unnamed,
                        k=EPISODE_CANDIDATES,
                        at_ms=at_ms,
                        source=lens.source,
                        near_context=True,
                    )
                )
                if unnamed
                else {}
            )

        cues = attribute_cues(query.attributes) if query.named else ""
        if cues:
            # "Where does Emi work now?": her texts in the words such news comes in
            # ("I start at Calloway the monday after") answer it as well as "work".
            extra = [t for t in episode_terms(cues) if t not in asked]
            found = index.search(extra, k=EPISODE_CANDIDATES, at_ms=at_ms, source=lens.source)
            theirs = [(e, share) for e, share in found if speaker(e) in query.named]
            theirs = self._own_news(graph, theirs[:NEWS_READ], query.named) + theirs[NEWS_READ:]
            best = max((share for _, share in theirs), default=0.0)
            now = query.asks_now  # the news itself, not the texts that say "work" most
            # "Does Chloe still work at the café in Fitzroy?": news of that café more
            # than of her other jobs
            asking = attribute_words(query.attributes) | set(extra)
            which = [[t] for t in query.content_terms if t not in asking]
            holds_which = index.holding(which) if which else None
            ordinal = index.ordinal
            for episode_id, share in theirs:
                cued = NEWS_SHARE * share / best if now else min(1.0, CUE_WEIGHT * share)
                if holds_which is not None and not holds_which[ordinal[episode_id]]:
                    cued *= OTHER_NEWS
                lexical[episode_id] = max(lexical.get(episode_id, 0.0), cued)
        mentioned = index.mentioning(query.mentions)  # by a distinctive word of a name
        kind_cues = query.answer_cues if query.named else []
        if kind_cues:
            # "What does Naomi do for work?": texts by or naming her (a speaker's name is
            # in their texts) in the words such answers come in ("she's a pediatric
            # dentist"), the rarest words first
            extra = [t for t in kind_cues if t not in asked]
            held = index.holding_any(extra, mentioned, at_ms=at_ms, source=lens.source)
            hits = list(held.items())
            hits.sort(key=lambda hit: (-hit[1], -index.ordinal[hit[0]]))
            best = hits[0][1] if hits else 0.0
            for episode_id, weight in hits[:KIND_HITS]:
                cued = KIND_SHARE * weight / best
                lexical[episode_id] = max(lexical.get(episode_id, 0.0), cued)
                if topical is not None:  # the answer's words are the topic's, too
                    topical[episode_id] = max(topical.get(episode_id, 0.0), cued)
        if query.asks_amount:
            # "How much did the oven repair cost?": "it was £1,800 to fix", said two
            # turns after "the deck oven died" and holding none of the question's words
            topic = topic_of_amount(terms)
            for episode_id, share in amount_shares(
                index, sorted(topic), texts=spoken, at_ms=at_ms, source=lens.source
            ).items():
                lexical[episode_id] = max(lexical.get(episode_id, 0.0), share)
        asked_age = age_asked_of(query.text) if query.named else None
        if asked_age is not None:
            # "How old is Dan?": "I'm 45 Luis" holds no word of the question but his name.
            # Read their texts, the texts naming them, and birthday wishes ("Happy
            # birthday boss!! ... 73!" said to them).
            whom = [e for e in query.named if first_name(graph.entity_name(e)) == asked_age.lower()]
            of_them = index.mentioning(mention_groups(graph, whom, partial=tiers.PARTIAL_NAMES))
            of_them |= index.holding(
                [[term] for term in index_terms(BIRTHDAY_WORDS)], context=False
            )
            of_them |= index.said_by(n for n in index.speaker_names() if speaker_entity(n) in whom)
            for episode_id, share in age_shares(
                index,
                asked_age,
                of_them,
                texts=spoken,
                before=self._talk(graph).before,
                at_ms=at_ms,
                source=lens.source,
            ).items():
                lexical[episode_id] = max(lexical.get(episode_id, 0.0), share)
        semantic: dict[str, float] = {}
        vectors = self._vectors
        if near is None and vectors is not None and query_vector is not None and len(vectors):
            near = dict(
                vectors.search(
                    query_vector, EPISODE_CANDIDATES, tiers.SEMANTIC_THRESHOLD, kind="episodes"
                )
            )
        if near:
            for episode_id, score in near.items():
                if (
                    index.says_nothing(episode_id)
                    or index.only_reacts(episode_id)
                    or index.few_words(episode_id)
                ):
                    continue  # near the question only by its speaker's name
                said = index.at_of(episode_id)
                if said is None or (at_ms is not None and said > at_ms):
                    continue
                if lens.source is not None and index.source_of(episode_id) != lens.source:
                    continue
                semantic[episode_id] = score

        def mentions(episode_id: str) -> bool:
            ordinal = index.ordinal.get(episode_id)
            return ordinal is not None and bool(mentioned[ordinal])

        # A speaker's name is near every turn of their conversations (in the turn
        # before, or calling them: "Wow, John!"): naming them says little of whose
        # the words are. Only a name of someone who does not speak is evidence.
        voiced = {e for e in query.named if index.heard(graph.entity_name(e))}
        unvoiced = sorted(query.named - voiced)
        if not voiced:
            telling = mentioned
        elif unvoiced:
            telling = index.mentioning(mention_groups(graph, unvoiced, partial=tiers.PARTIAL_NAMES))
        else:
            telling = None

        def names_telling(episode_id: str) -> bool:
            ordinal = index.ordinal.get(episode_id)
            return telling is not None and ordinal is not None and bool(telling[ordinal])

        # A text that stated a fact since expired (superseded, corrected or forgotten)
        # would say it again: its current facts speak for it instead. The usual read:
        # the saved flags answer for every text found, at once, nothing is parsed.
        checked = {*lexical, *semantic} if lens.at is None else set()
        # what is asked, not whom it names ("Mei-hua's turnip cake" is not asked in
        # the words of her lives_in → Mei-hua put right), unless it only names
        wanted = in_any_form(query.content_terms or query.terms)
        gone = self._retired_episodes(graph, checked, wanted) if checked else set()

        def expired_by_then(number: int) -> bool:
            fact = graph.stated_fact(number)
            return fact is None or (not lens.visible(fact) and _expired_before(fact, lens))

        @functools.cache  # an episode found by words and by meaning is read once
        def retired(episode_id: str) -> bool:
            if episode_id in checked:
                return episode_id in gone
            if lens.at is None:
                return bool(self._retired_episodes(graph, (episode_id,), wanted))
            facts = index.facts_of(episode_id) or ()
            return _is_history(graph, facts, [n for n in facts if expired_by_then(n)], wanted)

        return tiers.EpisodeSignals(
            lexical,
            semantic,
            topical,
            speaker,
            mentions,
            retired,
            index.timed,
            index.updates,
            index.recency,
            names_telling,
            index.asks_only,
            lambda episode_id: index.speaker_of(episode_id) == ASSISTANT,
            index.names_something,
        )

    def _own_news(
        self, graph: Graph, found: list[tuple[str, float]], named: frozenset[str]
    ) -> list[tuple[str, float]]:
        """``found`` without the texts that tell someone else's news ("chidi got a part
        time job btw", said by the person asked about)."""
        if not found:
            return found
        docs = self._episode_docs(graph, [e for e, _ in found])

        def someone_else(word: str) -> bool:
            entity = graph.entity_by_name(word)
            return (
                entity is not None
                and entity.get("type") == "person"
                and str(entity["id"]) not in named
            )

        return [
            (e, share)
            for e, share in found
            if e not in docs or not tells_another_s_news(spoken_words(docs[e]), someone_else)
        ]

    def _turns_before(self, graph: Graph, episode_id: str | None) -> list[Doc]:
        """Up to :data:`DAYS_SAID_TURNS` episodes remembered before this one (before
        the next one, for ``None``), nearest first: where the days a conversation
        named before a turn are read (see :mod:`memgraph.retrieval.days_said`)."""
        index = self._episodes_indexed()
        earlier = (
            index.latest(DAYS_SAID_TURNS)
            if episode_id is None
            else index.earlier(episode_id, DAYS_SAID_TURNS)
        )
        docs = self._episode_docs(graph, earlier)
        return [docs[e] for e in earlier if e in docs]

    def _episode_docs(self, graph: Graph, episode_ids: Sequence[str]) -> dict[str, Doc]:
        """The records of these episodes: from the journal, else read where the store keeps them."""
        found: dict[str, Doc] = {}
        index = self._episodes_indexed()
        wanted: dict[int, str] = {}
        for episode_id in episode_ids:
            doc = graph.episodes.get(episode_id)
            if doc is not None:
                found[episode_id] = doc
                continue
            location = index.location(episode_id)
            if location is not None:
                wanted[location] = episode_id
        if wanted:
            for location, doc in self.store.read_episodes(sorted(wanted)).items():
                if doc.get("id") == wanted[location]:
                    found[wanted[location]] = doc
        missing = [e for e in episode_ids if e not in found]
        if missing:  # a stale location: read them all once
            if self._episode_cache is None or any(e not in self._episode_cache for e in missing):
                self._episode_cache = {e["id"]: e for e in self.store.episodes()}
            for episode_id in missing:
                doc = self._episode_cache.get(episode_id)
                if doc is not None:
                    found[episode_id] = doc
        return found

    def _write_ops(
        self, build: Callable[[Graph], list[Doc]], *, vectors: bool = False
    ) -> Commit | None:
        """Commit the ops ``build`` returns for the synced graph (no LLM).

        ``build`` may allocate ids past ``graph.next_id``; the counter moves past
        the highest one. With ``vectors``, new observations are embedded.
        """
        with self._lock, self._writer():
            graph = self._sync()
            graph.check_next_id()
            ops = build(graph)
            if not ops:
                return None
            plan = Plan(ops=ops, next_id=max(graph.next_id, _highest_id(ops) + 1))
            names = {op["entity"]["id"]: op["entity"] for op in ops if op["op"] == "entity"}
            for op in ops:
                if op["op"] == "obs" and vectors and self.provider.embedder is not None:
                    entity = names.get(op["entity"]) or graph.entities[op["entity"]]
                    text = f"{entity['name']} ({entity.get('type') or 'thing'}): {op['obs']['content']}"
                    plan.embed.append((op["obs"]["id"], text))
            by_id: dict[str, np.ndarray] = {}
            if plan.embed:
                rows = self._embed([text for _, text in plan.embed])
                by_id = {obs_id: row for (obs_id, _), row in zip(plan.embed, rows, strict=True)}
            return self._commit(plan, by_id)

    def _read_graph(self, read: Callable[[Graph], T]) -> T:
        """Run ``read`` on the synced graph under the object's lock."""
        with self._lock:
            return read(self._sync())
