"""The name tier on names that share a word: a full name finds its one entity, the shared
word alone drags none of the thousands that hold it in, and the cost is bounded by
what the query names, counted in entities and ids read rather than in time."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from memgraph import Memory
from memgraph.graph.graph import Graph
from memgraph.graph.lazy import LazyDocs, PostingIndex
from memgraph.graph.snapshot import encode, read_index
from memgraph.retrieval import ranking
from memgraph.retrieval.episode_index import EpisodeIndex
from memgraph.retrieval.names import PARTIAL_NAMES, mention_groups, named_entities

T1 = "2026-01-01T00:00:00.000Z"
SMITHS = 3_000
FIRST = ["Maria", "James", "Anna", "Omar", "Priya", "Kenji"]


def first_name(number: int) -> str:
    """Distinct made-up first names after a few real ones."""
    if number < len(FIRST):
        return FIRST[number]
    letters = "bdfgklmnprstvz"
    vowels = "aeiou"
    word, n = "", number
    while n or not word:
        word += letters[n % len(letters)] + vowels[(n // len(letters)) % len(vowels)]
        n //= len(letters) * len(vowels)
    return word.capitalize() + "x"  # never a real word


def smiths(count: int = SMITHS, *, tovans: int = 3) -> Graph:
    """``count`` people surnamed Smith with distinct first names, each with one fact
    and a relation to the one before; plus ``tovans`` people surnamed Tovan."""
    graph = Graph()
    ops: list[dict[str, Any]] = []
    people = [f"{first_name(n)} Smith" for n in range(count)]
    people += [f"{first_name(count + n)} Tovan" for n in range(tovans)]
    for n, name in enumerate(people, start=1):
        entity = {"id": f"entity-{n}", "name": name, "type": "person", "source": "main"}
        ops.append({"op": "entity", "entity": {**entity, "createdAt": T1}})
        fact = {"id": f"obs-{n}", "content": f"works on project {n}", "validFrom": T1}
        ops.append({"op": "obs", "entity": f"entity-{n}", "obs": {**fact, "validTo": None}})
        if n > 1:
            rel = {"id": f"rel-{n}", "from": f"entity-{n}", "to": f"entity-{n - 1}"}
            ops.append({"op": "rel", "rel": {**rel, "type": "knows", "validFrom": T1}})
    graph.apply(ops)
    graph.next_id = len(people) + 1
    return graph


def reopen(graph: Graph) -> Graph:
    """``graph`` written as a checkpoint and opened lazily, as a scope is opened."""
    image = encode(graph)
    data = image.graph_json
    stamp = (len(data), 7)
    return Graph.from_saved(read_index(image.index_bytes(stamp), data, stamp))


class Reads:
    """Counts the records a lazy graph parses and the ids its name index hands out."""

    def __init__(self, graph: Graph, monkeypatch: pytest.MonkeyPatch) -> None:
        self.entities = 0
        self.relations = 0
        self.name_ids = 0
        assert isinstance(graph.entities, LazyDocs) and isinstance(graph.relations, LazyDocs)
        self._count(graph.entities, "entities", monkeypatch)
        self._count(graph.relations, "relations", monkeypatch)
        index = graph.name_term_index()
        get = index.get

        def counted_get(term: str, default: Any = None) -> Any:
            found = get(term, default)
            self.name_ids += len(found or ())
            return found

        monkeypatch.setattr(index, "get", counted_get)

    def _count(self, docs: LazyDocs[Any], field: str, monkeypatch: pytest.MonkeyPatch) -> None:
        decode: Callable[[int], Any] = docs._decode

        def counted(ordinal: int) -> Any:
            setattr(self, field, getattr(self, field) + 1)
            return decode(ordinal)

        monkeypatch.setattr(docs, "_decode", counted)


def entity_id(graph: Graph, name: str) -> str:
    found = graph.entity_by_name(name)
    assert found is not None
    return str(found["id"])


# ----------------------------------------------------------------- the name tier
def test_a_full_name_finds_its_one_entity_among_thousands_sharing_the_surname() -> None:
    graph = reopen(smiths())
    for text in ("Where does Maria Smith work?", "maria smith", "(Maria Smith's desk)"):
        assert named_entities(graph, text) == ([entity_id(graph, "Maria Smith")], [])
    assert ranking.name_matches(graph, "Who is Kenji Smith?") == {entity_id(graph, "Kenji Smith")}


def test_the_shared_surname_alone_names_none_of_the_thousands_that_hold_it() -> None:
    graph = reopen(smiths())
    for text in ("Smith", "Who is Smith?", "the Smith family"):
        assert named_entities(graph, text) == ([], [])
        assert ranking.analyze(graph, text).named == frozenset()


def test_a_distinctive_first_name_alone_still_names_its_entity() -> None:
    graph = reopen(smiths())
    assert named_entities(graph, "What does Priya do?") == ([], [entity_id(graph, "Priya Smith")])


def test_a_word_a_few_names_share_names_all_of_them_newest_first() -> None:
    graph = reopen(smiths(tovans=PARTIAL_NAMES))
    tovans = sorted(
        (entity_id(graph, n) for n in graph_names(graph) if n.endswith(" Tovan")),
        key=lambda i: int(i.split("-")[1]),
        reverse=True,
    )
    _exact, partly = named_entities(graph, "Tovan", partial=PARTIAL_NAMES)
    assert partly == tovans
    crowded = reopen(smiths(tovans=PARTIAL_NAMES + 1))
    assert named_entities(crowded, "Tovan", partial=PARTIAL_NAMES) == ([], [])


def test_a_word_written_in_lower_case_names_nothing_partly_where_names_have_capitals() -> None:
    graph = Graph()
    names = [("entity-1", "John", "person"), ("entity-2", "Seattle", "place")]
    names.append(("entity-3", "Game of Thrones", "show"))
    graph.apply(
        [
            {"op": "entity", "entity": {"id": i, "name": n, "type": t, "createdAt": T1}}
            for i, n, t in names
        ]
    )
    asked = ranking.analyze(graph, "When was John in Seattle for a game?")
    assert asked.named == frozenset({"entity-1", "entity-2"})
    assert "game" in asked.content_terms  # the word is what is asked about
    # a title written as a title still names it; a text typed in lower case may name
    # anything in lower case
    assert "entity-3" in ranking.analyze(graph, "Did John finish Game of Thrones?").named
    assert "entity-3" in ranking.analyze(graph, "does john like the game").named
    assert named_entities(graph, "John played a game") == (["entity-1"], ["entity-3"])


def graph_names(graph: Graph) -> Iterator[str]:
    for key in graph.entities:
        name = graph.entity_name(key)
        if name is not None:
            yield name


def test_naming_people_reads_only_the_entities_named_not_those_sharing_the_word(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    graph = reopen(smiths())
    reads = Reads(graph, monkeypatch)
    for text in ("Where does Maria Smith work?", "Smith", "Who is Smith?", "Smith Smith Smith"):
        ranking.analyze(graph, text)
    assert reads.entities <= 2
    assert reads.name_ids <= 2 * PARTIAL_NAMES  # never the 3,000 ids of "smith"


def test_a_run_of_words_every_name_shares_is_not_intersected_id_by_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    graph = Graph()
    prefix = "Northwind Regional Sales Office"
    ops = [
        {
            "op": "entity",
            "entity": {
                "id": f"entity-{n}",
                "name": f"{prefix} {first_name(n)}",
                "type": "office",
                "createdAt": T1,
            },
        }
        for n in range(1, 2_001)
    ]
    graph.apply(ops)
    graph = reopen(graph)
    reads = Reads(graph, monkeypatch)
    assert named_entities(graph, f"Where is {prefix}?") == ([], [])
    office = f"{prefix} {first_name(7)}"
    assert named_entities(graph, f"Who works at {office}?") == ([entity_id(graph, office)], [])
    assert reads.name_ids <= 2 and reads.entities <= 1


def test_a_text_mentions_a_named_entity_by_a_distinctive_word_not_the_shared_one() -> None:
    graph = reopen(smiths())
    maria = entity_id(graph, "Maria Smith")
    assert mention_groups(graph, [maria]) == (frozenset({"maria"}),)
    few = reopen(smiths(count=2, tovans=0))  # Smith is distinctive among two names
    assert set(mention_groups(few, [entity_id(few, "Maria Smith")])) == {
        frozenset({"maria"}),
        frozenset({"smith"}),
    }


def test_a_name_of_common_words_is_mentioned_only_by_all_of_them() -> None:
    graph = Graph()
    ops = []
    for n, name in enumerate(["John Smith"] + [f"John {first_name(k)}" for k in range(12)]):
        ops.append({"op": "entity", "entity": {"id": f"entity-{n}", "name": name}})
    for k in range(12):
        ops.append({"op": "entity", "entity": {"id": f"entity-s{k}", "name": f"Ann{k} Smith"}})
    graph.apply(ops)
    assert mention_groups(graph, ["entity-0"], partial=8) == (frozenset({"john", "smith"}),)


def test_episodes_mention_a_group_only_when_they_hold_all_its_terms() -> None:
    index = EpisodeIndex()
    texts = ["Maria Smith called", "John Smith called", "Maria left", "nobody"]
    for n, text in enumerate(texts):
        index.add(f"episode-{n}", text, at_ms=n * 86_400_000 * 2, conversation=str(n))
    found = index.holding([frozenset({"maria"}), frozenset({"john", "smith"})])
    assert found.tolist() == [True, True, True, False]
    assert not index.holding([frozenset({"smith", "nobody"})]).any()
    saved = EpisodeIndex.decode(index.encode())
    assert np.array_equal(saved.holding([frozenset({"maria"})]), [True, False, True, False])


def test_an_entitys_relations_on_a_lazy_graph_are_listed_without_indexing_every_relation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    eager = smiths(count=500, tovans=0)
    eager.apply(
        [
            {"op": "entity", "entity": {"id": "entity-x", "name": "Loop"}},
            {"op": "rel", "rel": {"id": "rel-x", "from": "entity-x", "to": "entity-x", "type": "is"}},
        ]
    )  # fmt: skip
    graph = reopen(eager)
    reads = Reads(graph, monkeypatch)
    ends = graph.relation_ends
    walked = 0

    def counted_ends() -> Iterator[tuple[str, str, str, str, bool]]:
        nonlocal walked
        for end in ends():
            walked += 1
            yield end

    monkeypatch.setattr(graph, "relation_ends", counted_ends)
    assert [r["id"] for r in graph.relations_of("entity-250")] == ["rel-250", "rel-251"]
    assert reads.relations == 2
    assert walked == 0  # no index of every relation in the scope
    for entity in ("entity-1", "entity-500", "entity-x", "entity-404"):
        assert [r["id"] for r in graph.relations_of(entity)] == [
            r["id"] for r in eager.relations_of(entity)
        ]
    graph.apply([{"op": "rel", "rel": {"id": "rel-y", "from": "entity-x", "to": "entity-3"}}])
    assert [r["id"] for r in graph.relations_of("entity-3")] == ["rel-3", "rel-4", "rel-y"]


def test_the_keyword_tier_keeps_a_named_entitys_fact_among_thousands_matching_as_well() -> None:
    graph = reopen(smiths(count=ranking.MAX_POSTINGS + 500))  # "work" is in every fact
    maria = entity_id(graph, "Maria Smith")
    facts = ranking.named_facts(graph, [maria])
    assert facts == ["obs-1"]
    assert ranking.keyword_matches(graph, ["work"]) == {}  # too common to find anything
    assert ranking.keyword_matches(graph, ["work"], facts=facts) == {"obs-1": 1.0}
    busy = reopen(smiths(count=2_000))  # found, but one of 2,000 equal scores
    assert "obs-1" in ranking.keyword_matches(busy, ["work"], facts=["obs-1"])


def test_the_named_facts_come_in_one_order_whatever_order_the_names_come_in() -> None:
    # a query's named entities are a set: their facts must not follow its order
    graph = reopen(smiths(count=40))
    named = [entity_id(graph, "Maria Smith"), entity_id(graph, f"{first_name(3)} Smith")]
    assert ranking.named_facts(graph, named) == ranking.named_facts(graph, named[::-1])


# ------------------------------------------------------------------------- recall
@pytest.fixture(scope="module")
def smith_memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    """A scope of 600 Smiths, each said to work somewhere, checkpointed and reopened."""
    root: Path = tmp_path_factory.mktemp("smiths")
    texts = [f"{first_name(n)} Smith works at {first_name(n)}corp." for n in range(600)]
    with Memory(root, provider="mock", config={}) as memory:
        memory.remember_many(texts, at=T1)
        memory.checkpoint()
    with Memory(root, provider="mock", config={}) as memory:
        yield memory


def test_recall_of_a_full_name_shows_that_person_first_among_the_smiths(
    smith_memory: Memory,
) -> None:
    for name in ("Maria Smith", "Kenji Smith", f"{first_name(400)} Smith"):
        text = smith_memory.recall(f"Where does {name} work?", rerank=False)
        assert text.startswith(f"{name} (person):"), text[:200]
        hits = smith_memory.search(f"Where does {name} work?")
        assert hits and hits[0].entity is not None and hits[0].entity.name == name


def test_other_smiths_texts_are_not_about_the_smith_a_query_names(smith_memory: Memory) -> None:
    hits = smith_memory.search("Where does Maria Smith work?", k=20)
    focused: list[str] = []
    for hit in hits:
        if "name" in hit.tiers:
            focused.append(
                hit.episode.text if hit.episode else hit.entity.name if hit.entity else ""
            )
    assert focused and all("Maria" in text for text in focused)
    assert len(hits) > len(focused)  # other Smiths still match "work", without the name focus


def test_recall_of_the_shared_surname_reads_a_bounded_number_of_people(
    smith_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = smith_memory._sync()
    reads = Reads(graph, monkeypatch)
    smith_memory.recall("Smith", rerank=False)
    smith_memory.recall("Who is Smith?", rerank=False)
    smith_memory.search("Smith")
    assert reads.name_ids <= 2 * PARTIAL_NAMES
    assert reads.entities <= 100  # the ranked hits' owners at most, not 1,500 Smiths


def test_a_graph_built_in_full_answers_names_like_a_lazy_one() -> None:
    eager = smiths(count=300)
    lazy = reopen(eager)
    document = Graph.from_document(orjson.loads(encode(eager).graph_json))
    for text in ("Maria Smith", "Smith", "Priya", "Where does Anna Smith work?", "Tovan"):
        assert named_entities(eager, text) == named_entities(lazy, text)
        assert named_entities(document, text) == named_entities(lazy, text)
    assert isinstance(lazy.name_term_index(), PostingIndex)


def test_texts_sharing_name_lookups_get_the_answers_each_gets_alone() -> None:
    """The bulk path shares what name lookups learn of an unchanged graph between the
    texts of a window: every answer equals the one found without sharing."""
    from memgraph.retrieval.names import NameLookups

    graph = reopen(smiths(400))
    texts = [
        f"{first_name(n)} Smith met {first_name(n + 1)} Smith and Maria in Oslo."
        for n in range(0, 400, 7)
    ] + ["Smith called.", "Maria Smith! (Maria Smith's) note", "Kenji met Omar Smith"] * 3
    shared = NameLookups(graph)
    for text in texts:
        assert named_entities(graph, text, lookups=shared) == named_entities(graph, text)
    assert shared.spans and shared.counts
    other = reopen(smiths(50))  # lookups made for another graph are not used
    assert named_entities(other, texts[-1], lookups=shared) == named_entities(other, texts[-1])


def _named_graph(*names: tuple[str, str, str]) -> Graph:
    graph = Graph()
    graph.apply(
        [
            {"op": "entity", "entity": {"id": i, "name": n, "type": t, "createdAt": T1}}
            for i, n, t in names
        ]
    )
    return graph


def test_a_name_that_says_which_thing_is_asked_about_is_a_word_of_the_question() -> None:
    graph = _named_graph(("entity-1", "Mercy", "person"), ("entity-2", "Kottayam", "thing"))
    # "House update. The Philips agreed to 96 lakhs": the house, not Kottayam
    asked = ranking.analyze(graph, "What price was agreed for the Kottayam house?")
    assert asked.named == frozenset()
    assert "kottayam" in asked.content_terms
    assert ranking.analyze(graph, "When did Mercy go to Kottayam?").named == frozenset(
        {"entity-1", "entity-2"}
    )
    # named elsewhere in the question as well: still named
    assert "entity-2" in ranking.analyze(graph, "Is the Kottayam house in Kottayam?").named


def test_a_relative_named_through_someone_is_the_one_asked_about() -> None:
    graph = _named_graph(("entity-1", "Mercy", "person"), ("entity-2", "Liza", "person"))
    asked = ranking.analyze(graph, "What line of work did Mercy's daughter Liza end up in?")
    assert asked.named == frozenset({"entity-2"})
    assert "mercy" not in asked.terms
    # a relative nobody remembers: the question stays about the one named
    graph = _named_graph(("entity-1", "Mercy", "person"))
    assert ranking.analyze(graph, "What does Mercy's son Biju do?").named == frozenset({"entity-1"})
    # not a relation: both stay named
    graph = _named_graph(("entity-1", "Jon", "person"), ("entity-2", "Rome", "thing"))
    assert ranking.analyze(graph, "When was Jon's trip to Rome?").named == frozenset(
        {"entity-1", "entity-2"}
    )
