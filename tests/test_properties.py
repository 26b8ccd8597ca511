"""Property tests: random extractions keep the graph valid, the journal replays to the
in-memory state, and any text survives the store."""

from __future__ import annotations

import hashlib
import tempfile
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memgraph.graph.changes import plan_extraction
from memgraph.graph.graph import Graph
from memgraph.llm_calls.extract import (
    Expiration,
    ExtractedEntity,
    ExtractedRelation,
    Extraction,
    validate_extraction,
)
from memgraph.retrieval.vectors import VectorIndex
from memgraph.store import Commit, DirectoryStore, VectorBatch
from memgraph.text import content_key, name_key

Doc = dict[str, Any]

PROPERTY_SETTINGS = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

MODEL = "hash-embed"
DIM = 8
NAMES = ["Alice", "alice", " ALICE ", "ＡＬＩＣＥ", "Bob", "BOB", "Acme", "acme", "Globex", "User"]
TYPES = ["person", "company", "thing", "Person"]
CONTENTS = [
    "name is Alice",
    "name is Bob",
    "works at Acme",
    "works at Globex",
    "now works for Initech",
    "lives in Rome",
    "lives in Paris",
    "likes green tea",
    "Likes green tea.",
    "likes strong green tea",
    "likes black coffee",
    "is 31 years old",
    "is 32 years old",
    "favorite color is blue",
    "favorite color is red",
]
RELATION_TYPES = ["works_at", "works at", "Works-At", "knows", "lives_in", "married_to"]
TIMES = [f"2026-0{month}-01T00:00:00.000Z" for month in range(1, 7)]

entities = st.builds(
    ExtractedEntity,
    st.sampled_from(NAMES),
    st.sampled_from(TYPES),
    st.lists(st.sampled_from(CONTENTS), max_size=3).map(tuple),
)
relations = st.builds(
    ExtractedRelation,
    st.sampled_from(NAMES),
    st.sampled_from(NAMES),
    st.sampled_from(RELATION_TYPES),
)
expirations = st.builds(Expiration, st.sampled_from(NAMES), st.sampled_from(CONTENTS))
extractions = st.builds(
    Extraction,
    st.lists(entities, max_size=3).map(tuple),
    st.lists(relations, max_size=2).map(tuple),
    st.lists(expirations, max_size=2).map(tuple),
)


@dataclass(frozen=True)
class Step:
    extraction: Extraction
    at: str
    episode: bool
    checkpoint: bool
    reopen: bool
    sync_reader: bool


steps = st.lists(
    st.builds(
        Step,
        extractions,
        st.sampled_from(TIMES),
        st.booleans(),
        st.integers(0, 3).map(lambda n: n == 0),
        st.integers(0, 5).map(lambda n: n == 0),
        st.booleans(),
    ),
    min_size=1,
    max_size=10,
)


# --------------------------------------------------------------------------- the engine's loop
def embed(text: str) -> np.ndarray:
    digest = hashlib.sha256(text.encode()).digest()
    return np.frombuffer(digest[: DIM * 4], dtype="<u4").astype(np.float32) / 2**32 - 0.5


class State:
    """The engine's in-memory state for one scope: graph, vectors, uncheckpointed episodes."""

    def __init__(self, graph: Graph | None = None, index: VectorIndex | None = None) -> None:
        self.graph = graph or Graph()
        self.index = index or VectorIndex(MODEL)

    def plan(self, step: Step, seq: int) -> Commit:
        now = f"2026-07-01T00:00:{seq % 60:02d}.000Z"
        episode = (
            {"text": f"step {seq}", "at": step.at, "recordedAt": now} if step.episode else None
        )
        plan = plan_extraction(
            self.graph, step.extraction, at=step.at, now=now, source="prop", episode=episode
        )
        batch = None
        if plan.embed:
            ids = tuple(obs_id for obs_id, _ in plan.embed)
            batch = VectorBatch(MODEL, ids, np.stack([embed(text) for _, text in plan.embed]))
        return Commit(self.graph.seq + 1, now, plan.next_id, plan.ops, batch)

    def apply(self, commit: Commit) -> None:
        self.graph.apply(commit.ops)
        self.graph.next_id = max(self.graph.next_id, commit.next_id)
        self.graph.seq = commit.seq
        if commit.vectors is not None:
            self.index.add(commit.vectors.ids, commit.vectors.matrix)
        self.index.discard(op["id"] for op in commit.ops if op["op"] == "expire_obs")

    @classmethod
    def load(cls, store: DirectoryStore) -> State:
        snapshot = store.load()
        index = None
        if snapshot.vectors is not None and snapshot.vectors.model == MODEL:
            index = VectorIndex(MODEL, None, snapshot.vectors.matrix, snapshot.vectors.ids)
        state = cls(Graph.from_document(snapshot.document or {}), index)
        for commit in snapshot.commits:
            state.apply(commit)
        return state

    def sync(self, store: DirectoryStore) -> State:
        commits = store.changes_since(self.graph.seq)
        if commits is None:
            return State.load(store)
        for commit in commits:
            assert commit.seq == self.graph.seq + 1
            self.apply(commit)
        return self


def check_graph(graph: Graph) -> None:
    """The invariants every graph must keep, whatever was applied to it."""
    obs = [o for e in graph.entities.values() for o in e["observations"]]
    ids = [*graph.entities, *(o["id"] for o in obs), *graph.relations, *graph.episodes]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    assert all(int(i.rsplit("-", 1)[1]) < graph.next_id for i in ids)
    names = [name_key(e["name"]) for e in graph.entities.values()]
    assert len(names) == len(set(names)), "one name, one node"
    assert graph.observation_count == len(obs)
    for entity in graph.entities.values():
        keys = Counter(
            content_key(o["content"]) for o in entity["observations"] if o["validTo"] is None
        )
        assert all(n == 1 for n in keys.values()), (entity["name"], keys)
        for o in entity["observations"]:
            assert o["validTo"] is None or o["validTo"] >= o["validFrom"], o
            assert graph.observation(o["id"]) == (entity, o)
    current: Counter[tuple[str, str, str]] = Counter()
    for rel in graph.relations.values():
        assert rel["from"] in graph.entities and rel["to"] in graph.entities, rel
        assert rel["validTo"] is None or rel["validTo"] >= rel["validFrom"], rel
        if rel["validTo"] is None:
            key = (rel["from"], name_key(rel["type"]), rel["to"])
            current[key] += 1
            assert graph.current_relation(*key) is rel
    assert all(n == 1 for n in current.values()), current


# --------------------------------------------------------------------------- (a) validity
def all_ids(graph: Graph) -> set[str]:
    obs = (o["id"] for e in graph.entities.values() for o in e["observations"])
    return {*graph.entities, *obs, *graph.relations, *graph.episodes}


def check_change(before: set[str], commit: Commit, graph: Graph) -> None:
    """A change loses nothing, never retires what it adds, and links successors correctly."""
    assert before <= all_ids(graph), "an extraction never erases anything"
    added = {op["obs"]["id"] for op in commit.ops if op["op"] == "obs"}
    added |= {op["rel"]["id"] for op in commit.ops if op["op"] == "rel"}
    retired = {op["id"] for op in commit.ops if op["op"] in ("expire_obs", "expire_rel")}
    assert not added & retired, "a change never retires a fact it adds"
    assert len(retired) == sum(op["op"] in ("expire_obs", "expire_rel") for op in commit.ops)
    for op in commit.ops:
        if op["op"] == "expire_obs" and op.get("supersededBy"):
            entity, _ = graph.observation(op["id"]) or ({}, {})
            successor = graph.observation(op["supersededBy"])
            assert successor is not None and successor[0] is entity
            assert successor[1]["validTo"] is None


def run_step(state: State, step: Step) -> None:
    before = all_ids(state.graph)
    commit = state.plan(step, state.graph.seq + 1)
    state.apply(commit)
    check_graph(state.graph)
    check_change(before, commit, state.graph)


@PROPERTY_SETTINGS
@given(steps)
def test_any_sequence_of_extractions_keeps_the_graph_valid(sequence: list[Step]) -> None:
    state = State()
    for step in sequence:
        run_step(state, step)
    document = orjson.loads(orjson.dumps(state.graph.to_document()))
    reloaded = Graph.from_document(document)
    check_graph(reloaded)
    assert reloaded.to_document() == state.graph.to_document()


raw_text = st.text(max_size=40)
raw_replies = st.fixed_dictionaries(
    {
        "entities": st.lists(
            st.fixed_dictionaries(
                {
                    "name": st.one_of(st.sampled_from(NAMES), raw_text),
                    "type": raw_text,
                    "observations": st.lists(
                        st.one_of(st.sampled_from(CONTENTS), raw_text), max_size=3
                    ),
                }
            ),
            max_size=3,
        ),
        "relations": st.lists(
            st.fixed_dictionaries(
                {
                    "from": st.one_of(st.sampled_from(NAMES), raw_text),
                    "to": st.one_of(st.sampled_from(NAMES), raw_text),
                    "type": raw_text,
                }
            ),
            max_size=2,
        ),
        "expirations": st.lists(
            st.fixed_dictionaries(
                {
                    "entityName": st.one_of(st.sampled_from(NAMES), raw_text),
                    "observationContent": st.one_of(st.sampled_from(CONTENTS), raw_text),
                }
            ),
            max_size=2,
        ),
    }
)


@PROPERTY_SETTINGS
@given(st.lists(raw_replies, min_size=1, max_size=5))
def test_validated_replies_of_arbitrary_text_keep_the_graph_valid(replies: list[Doc]) -> None:
    state = State()
    for number, reply in enumerate(replies):
        step = Step(
            validate_extraction(reply), TIMES[number % len(TIMES)], True, False, False, False
        )
        run_step(state, step)


# --------------------------------------------------------------------------- (b) replay
@PROPERTY_SETTINGS
@given(steps)
def test_journal_replay_equals_the_in_memory_state(sequence: list[Step]) -> None:
    with tempfile.TemporaryDirectory() as root:
        writer = DirectoryStore(root, "scope")
        reader = DirectoryStore(root, "scope")
        try:
            state = State.load(writer)
            watcher = State.load(reader)
            episodes: dict[str, Doc] = {}
            for step in sequence:
                with writer.lock(5):
                    commit = state.plan(step, state.graph.seq + 1)
                    writer.commit(commit)
                    state.apply(commit)
                    episodes.update(
                        (op["episode"]["id"], op["episode"])
                        for op in commit.ops
                        if op["op"] == "episode"
                    )
                    if step.checkpoint:
                        pending = list(state.graph.episodes.values())
                        assert writer.checkpoint(state.graph, state.index, pending, force=True)
                        state.graph.episodes.clear()
                if step.reopen:
                    writer.close()
                    writer = DirectoryStore(root, "scope")
                    reopened = State.load(writer)
                    assert reopened.graph.to_document() == state.graph.to_document()
                    state = State(reopened.graph, state.index)
                if step.sync_reader:
                    watcher = watcher.sync(reader)
                    assert watcher.graph.to_document() == state.graph.to_document()

            fresh = DirectoryStore(root, "scope")
            try:
                replayed = State.load(fresh)
                assert replayed.graph.to_document() == state.graph.to_document()
                stored = {e["id"]: e for e in fresh.episodes()}
                stored.update(replayed.graph.episodes)
                assert stored == episodes
                assert replayed.index.ids() == state.index.ids()
                rows = len(state.index)
                assert replayed.index.rows(0, rows).tobytes() == state.index.rows(0, rows).tobytes()
            finally:
                fresh.close()
            watcher = watcher.sync(reader)
            assert watcher.graph.to_document() == state.graph.to_document()
        finally:
            writer.close()
            reader.close()


# --------------------------------------------------------------------------- (c) any text
tricky_text = st.one_of(
    st.text(),
    st.text(alphabet=st.characters(codec="utf-8", categories=["Cc", "Cf", "Zl", "Zp", "Zs"])),
    st.sampled_from(
        [
            "emoji 👩‍👩‍👧‍👦🏳️‍🌈 and a flag 🇯🇵",
            "RTL \u202eevil\u202c שלום עולם مرحبا",
            "nul \x00 bell \x07 escape \x1b[31m del \x7f c1 \x85",
            "line\nbreak\r\ncarriage\u2028separator\u2029paragraph",
            '"quotes" \\backslash\\ {"json": [1]}',
            "combining e\u0301 vs \u00e9, ＡＬＩＣＥ, ﬁ ligature",
            "",
        ]
    ),
)


@PROPERTY_SETTINGS
@given(texts=st.lists(tricky_text, min_size=1, max_size=5), name=tricky_text)
def test_any_unicode_text_round_trips_through_the_store(texts: list[str], name: str) -> None:
    with tempfile.TemporaryDirectory() as root:
        store = DirectoryStore(root, "scope")
        try:
            store.load()
            ops: list[Doc] = [
                {
                    "op": "entity",
                    "entity": {"id": "entity-1", "name": name, "type": name, "createdAt": "t"},
                }
            ]
            ops += [
                {
                    "op": "obs",
                    "entity": "entity-1",
                    "obs": {
                        "id": f"obs-{i + 2}",
                        "content": text,
                        "validFrom": "t",
                        "validTo": None,
                    },
                }
                for i, text in enumerate(texts)
            ]
            episodes = [
                {"id": f"episode-{i + 100}", "text": text, "at": "t", "metadata": {text: [text]}}
                for i, text in enumerate(texts)
            ]
            with store.lock(5):
                store.commit(Commit(1, "t", 100, ops))
                graph = Graph()
                graph.apply(ops)
                graph.seq = 1
                store.commit(Commit(2, "t", 200, [{"op": "purge", "ids": []}]))
                graph.seq = 2
                store.checkpoint(graph, None, episodes[:1], force=True)
                store.commit(Commit(3, "t", 300, [{"op": "episode", "episode": episodes[-1]}]))
            store.write_summary({"text": name, "parts": texts})

            fresh = DirectoryStore(root, "scope")
            try:
                snapshot = fresh.load()
                assert snapshot.document is not None
                [entity] = snapshot.document["entities"]
                assert entity["name"] == name
                assert [o["content"] for o in entity["observations"]] == texts
                assert [c.ops for c in snapshot.commits] == [
                    [{"op": "episode", "episode": episodes[-1]}]
                ]
                assert list(fresh.episodes()) == episodes[:1]
                assert fresh.read_summary() == {"text": name, "parts": texts}
            finally:
                fresh.close()
        finally:
            store.close()


def _words_by_regex(text: str) -> list[str]:
    import re
    import unicodedata

    folded = unicodedata.normalize("NFKC", text).casefold()
    # a pronoun's contraction is the pronoun ("we'd" is no "wedding", "I'D" no "id")
    folded = re.sub(
        r"\b(i|you|u|we|they|he|she|it|that|there|who|what)['’](?:d|ll|ve|re|m)\b", r"\1", folded
    )
    folded = re.sub(r"['’]s\b", "", folded).replace("'", "").replace("’", "")
    return re.findall(r"[^\W_]+", folded)


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("aZ09 _'s.,-\x00\tÉé’ﬁ"), max_size=90) | st.text(max_size=60)
)
def test_words_of_an_ascii_text_take_the_fast_path_to_the_same_tokens(text: str) -> None:
    """ASCII texts skip NFKC and split in C; the tokens equal the regex reading's."""
    from memgraph.text import index_terms, index_terms_many, words

    assert words(text) == _words_by_regex(text)
    assert index_terms_many([text, text]) == [index_terms(text)] * 2


@settings(max_examples=400, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from("aZ09 _'s.,-\x00\t\n\x0b\x0c\r\x1c\x1f\x7fÉ\xa0ﬁ"), max_size=40
    )
    | st.text(max_size=40)
)
def test_a_name_or_fact_key_reads_the_same_on_the_ascii_path(text: str) -> None:
    """An ASCII name or fact skips NFKC and the space regex; its key is the same."""
    import re
    import unicodedata

    from memgraph.text import _fold

    folded = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).casefold()).strip()
    assert _fold(text) == folded


def _attribute_by_patterns(content: str) -> str | None:
    """``attribute_of`` without its first-word and verb checks (the reference)."""
    import memgraph.attributes as attributes

    text = content_key(content)
    for pattern, attribute in attributes._VERB_ATTRIBUTES:
        if pattern.match(text):
            return attribute
    match = attributes._ATTRIBUTE_IS.match(text)
    if match and attributes._names_attribute(match.group(1)):
        subject = match.group(1)
        return {"current employer": "employer", "employer": "employer"}.get(subject, subject)
    return None


_FACT_WORDS = [
    "now",
    "works",
    "is",
    "working",
    "worked",
    "as",
    "a",
    "engineer",
    "at",
    "for",
    "employed",
    "by",
    "lives",
    "living",
    "resides",
    "in",
    "has",
    "moved",
    "to",
    "based",
    "called",
    "named",
    "42",
    "years",
    "old",
    "married",
    "reports",
    "his",
    "the",
    "name",
    "color",
    "are",
    "was",
    "he",
    "Acme",
    ",",
    ";",
    "and",
    "Now",
    "WORKS",
    "Is",
]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(_FACT_WORDS), min_size=1, max_size=8),
    st.sampled_from([" ", "  ", "\t", "\u00a0", "\n"]),
)
def test_attribute_of_skips_patterns_that_cannot_match(parts: list[str], space: str) -> None:
    from memgraph.attributes import attribute_of

    content = space.join(parts)
    assert attribute_of(content) == _attribute_by_patterns(content)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab Z.\t\n\x00\x7f\x85é\u200b\u2028 "), max_size=40))
def test_a_label_cleans_the_same_on_the_ascii_path(value: str) -> None:
    """A printable ASCII label skips normalization and the regexes, to the same text."""
    import re
    import unicodedata

    from memgraph.llm_calls.extract import _CONTROL, clean_label

    expected = re.sub(r"\s+", " ", _CONTROL.sub(" ", unicodedata.normalize("NFC", value))).strip()
    assert clean_label(value, "name", 1000) == expected


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=40)
    | st.builds(
        lambda d: orjson.dumps(d),
        st.dictionaries(st.text(max_size=5), st.integers(-1000, 1000), max_size=4),
    )
)
def test_a_sealed_line_is_the_sealed_record_and_a_newline(body: bytes) -> None:
    from memgraph.graph.records import seal_record, sealed_line

    assert sealed_line(body) == seal_record(body) + b"\n"
