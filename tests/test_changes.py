"""The rules for applying an extraction (and a forget) to the graph, one regression each."""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import pytest

from memgraph.graph.changes import (
    EXPIRE_SIMILARITY,
    Plan,
    attribute_of,
    plan_extraction,
    plan_forget,
)
from memgraph.graph.graph import Graph
from memgraph.llm_calls.extract import (
    Expiration,
    ExtractedEntity,
    ExtractedRelation,
    Extraction,
)
from memgraph.text import content_key, similarity

Doc = dict[str, Any]

T1 = "2026-01-01T00:00:00.000Z"
T2 = "2026-02-01T00:00:00.000Z"
T3 = "2026-03-01T00:00:00.000Z"
MAY = "2026-05-01T00:00:00.000Z"


def person(name: str, *observations: str, type_: str = "person") -> ExtractedEntity:
    return ExtractedEntity(name, type_, tuple(observations))


def learn(
    graph: Graph,
    *entities: ExtractedEntity,
    relations: tuple[ExtractedRelation, ...] = (),
    expirations: tuple[Expiration, ...] = (),
    at: str = T1,
    episode: Doc | None = None,
) -> Plan:
    """Plan an extraction and apply it the way the engine does."""
    extraction = Extraction(tuple(entities), relations, expirations)
    plan = plan_extraction(graph, extraction, at=at, now=at, source="test", episode=episode)
    graph.apply(plan.ops)
    graph.next_id = max(graph.next_id, plan.next_id)
    return plan


def current(graph: Graph, name: str) -> list[str]:
    entity = graph.entity_by_name(name)
    assert entity is not None, f"no entity {name!r}"
    return [o["content"] for o in entity["observations"] if o.get("validTo") is None]


def observations(graph: Graph, name: str) -> list[Doc]:
    entity = graph.entity_by_name(name)
    assert entity is not None
    return list(entity["observations"])


def current_relations(graph: Graph) -> list[tuple[str, str, str]]:
    return [
        (graph.entities[r["from"]]["name"], r["type"], graph.entities[r["to"]]["name"])
        for r in graph.relations.values()
        if r.get("validTo") is None
    ]


def op_kinds(plan: Plan) -> list[str]:
    return [op["op"] for op in plan.ops]


# --------------------------------------------------------------------------- superseding
def test_a_new_name_supersedes_the_old_one() -> None:
    graph = Graph()
    learn(graph, person("User", "name is Alice"), at=T1)
    plan = learn(graph, person("User", "name is Bob"), at=T2)
    assert current(graph, "User") == ["name is Bob"]
    old, new = observations(graph, "User")
    assert old["content"] == "name is Alice"
    assert old["validTo"] == T2
    assert old["retiredAt"] == T2
    assert old["supersededBy"] == new["id"]
    assert new["validTo"] is None
    assert op_kinds(plan) == ["obs", "expire_obs"] or op_kinds(plan) == ["expire_obs", "obs"]


def test_a_new_job_somewhere_supersedes_where_someone_worked() -> None:
    graph = Graph()
    learn(graph, person("Kenji", "works at Panasonic"), at=T1)
    learn(graph, person("Kenji", "started a new job at Sony"), at=T2)
    assert current(graph, "Kenji") == ["started a new job at Sony"]


def test_an_employer_change_retires_the_old_fact_and_the_old_works_at_relation() -> None:
    graph = Graph()
    learn(
        graph,
        person("Alice", "works at Initech"),
        relations=(ExtractedRelation("Alice", "Initech", "works_at"),),
        at=T1,
    )
    learn(
        graph,
        person("Alice", "works at Globex"),
        relations=(ExtractedRelation("Alice", "Globex", "works at"),),
        at=T2,
    )
    assert current(graph, "Alice") == ["works at Globex"]
    old = observations(graph, "Alice")[0]
    assert old["validTo"] == T2 and old["supersededBy"] == observations(graph, "Alice")[1]["id"]
    assert current_relations(graph) == [("Alice", "works_at", "Globex")]
    alice = graph.entity_by_name("Alice")
    initech = graph.entity_by_name("Initech")
    assert alice is not None and initech is not None
    assert graph.current_relation(alice["id"], "works_at", initech["id"]) is None
    [old_rel] = [r for r in graph.relations.values() if r["to"] == initech["id"]]
    assert old_rel["validTo"] == T2


@pytest.mark.parametrize(
    ("old", "said"),
    [
        ("is allergic to peanuts", "is no longer allergic to peanuts"),
        ("works as a nurse at Lisbon General Hospital", "no longer works at Lisbon General"),
        ("drinks coffee", "does not drink coffee anymore"),
    ],
)
def test_a_fact_saying_no_longer_retires_the_fact_it_negates(old: str, said: str) -> None:
    graph = Graph()
    learn(graph, person("Dana", old, "likes hiking"), at=T1)
    plan = learn(graph, person("Dana", said), at=T2)
    assert current(graph, "Dana") == ["likes hiking", said]
    [retired] = [o for o in observations(graph, "Dana") if o["content"] == old]
    assert retired["validTo"] == T2 and retired["supersededBy"]
    assert not plan.warnings


def test_a_no_longer_fact_about_something_unknown_retires_nothing() -> None:
    graph = Graph()
    learn(graph, person("Dana", "drinks tea"), at=T1)
    learn(graph, person("Dana", "no longer eats meat"), at=T2)
    assert current(graph, "Dana") == ["drinks tea", "no longer eats meat"]


def test_a_person_relation_stated_backwards_is_turned_around() -> None:
    graph = Graph()
    learn(graph, person("Dana", type_="person"), person("Porto Clinic", type_="organization"))
    learn(graph, relations=(ExtractedRelation("Porto Clinic", "Dana", "works_at"),), at=T2)
    assert current_relations(graph) == [("Dana", "works_at", "Porto Clinic")]


def test_returning_to_a_former_employer_makes_that_relation_current_again() -> None:
    graph = Graph()
    for at, company in ((T1, "Initech"), (T2, "Globex"), (T3, "Initech")):
        learn(
            graph,
            person("Alice", f"works at {company}"),
            relations=(ExtractedRelation("Alice", company, "works_at"),),
            at=at,
        )
    assert current(graph, "Alice") == ["works at Initech"]
    assert current_relations(graph) == [("Alice", "works_at", "Initech")]
    assert len(graph.relations) == 3


def test_a_superseded_fact_keeps_validity_ordered_when_the_new_one_is_older() -> None:
    graph = Graph()
    learn(
        graph,
        person("Alice", "name is Alice", "works at Initech"),
        relations=(ExtractedRelation("Alice", "Initech", "works_at"),),
        at=MAY,
    )
    learn(
        graph,
        person("Alice", "name is Alicia", "works at Globex"),
        relations=(ExtractedRelation("Alice", "Globex", "works_at"),),
        at=T1,
    )
    for obs in observations(graph, "Alice"):
        assert obs["validTo"] is None or obs["validTo"] >= obs["validFrom"]
    for rel in graph.relations.values():
        assert rel["validTo"] is None or rel["validTo"] >= rel["validFrom"]
    retired = [o for o in observations(graph, "Alice") if o["validTo"] is not None]
    assert [o["validTo"] for o in retired] == [MAY, MAY]


def test_facts_that_are_not_single_valued_accumulate() -> None:
    graph = Graph()
    learn(graph, person("Alice", "likes green tea"), at=T1)
    learn(graph, person("Alice", "likes black coffee"), at=T2)
    assert current(graph, "Alice") == ["likes green tea", "likes black coffee"]


def test_two_values_in_one_change_are_both_kept() -> None:
    graph = Graph()
    learn(graph, person("Alice", "works at Initech", "works at Globex"))
    assert current(graph, "Alice") == ["works at Initech", "works at Globex"]


# --------------------------------------------------------------------------- duplicates
def test_the_same_fact_twice_keeps_one_current_observation_and_loses_nothing() -> None:
    graph = Graph()
    learn(graph, person("Alice", "likes green tea", "lives in Rome"), at=T1)
    before = copy.deepcopy(graph.to_document())
    plan = learn(graph, person("alice", "Likes green tea.", "LIVES IN  ROME!"), at=T2)
    assert plan.ops == []
    assert graph.to_document() == before
    assert current(graph, "Alice") == ["likes green tea", "lives in Rome"]


def test_a_fact_repeated_within_one_change_is_added_once() -> None:
    graph = Graph()
    learn(graph, person("Alice", "likes tea", "likes tea."), person("ALICE", "Likes Tea"))
    assert current(graph, "Alice") == ["likes tea"]


def test_a_repeated_fact_with_an_episode_only_records_the_episode() -> None:
    graph = Graph()
    learn(graph, person("Alice", "likes tea"), episode={"text": "Alice likes tea."})
    plan = learn(graph, person("Alice", "likes tea"), episode={"text": "Alice likes tea!"})
    assert op_kinds(plan) == ["episode"]
    assert len(graph.episodes) == 2
    assert current(graph, "Alice") == ["likes tea"]


# --------------------------------------------------------------------------- entity names
@pytest.mark.parametrize(
    "spellings",
    [
        ("Alice", " ALICE ", "alice"),
        ("Alice", "ＡＬＩＣＥ"),
        ("Alice  Smith", "alice smith", "ALICE\tSMITH"),
        ("Ǆemal", "ǅemal", "ǆemal"),
    ],
)
def test_entities_resolve_by_normalized_name_into_one_node(spellings: tuple[str, ...]) -> None:
    graph = Graph()
    learn(graph, *(person(name, f"fact {i}") for i, name in enumerate(spellings)))
    for i, name in enumerate(spellings):
        learn(graph, person(name, f"later fact {i}"))
    assert len(graph.entities) == 1
    [entity] = graph.entities.values()
    assert entity["name"] == spellings[0]
    assert len(current(graph, spellings[-1])) == 2 * len(spellings)


# --------------------------------------------------------------------------- expirations
def _tea_and_coffee() -> Graph:
    graph = Graph()
    learn(
        graph,
        person("Alice", "likes green tea", "likes black coffee"),
        person("Bob", "likes green tea"),
    )
    return graph


def test_an_expiration_matches_its_fact_exactly_after_normalization() -> None:
    graph = _tea_and_coffee()
    plan = learn(graph, expirations=(Expiration("alice", "  Likes Green Tea. "),), at=T2)
    assert op_kinds(plan) == ["expire_obs"]
    assert current(graph, "Alice") == ["likes black coffee"]
    assert current(graph, "Bob") == ["likes green tea"]
    assert plan.warnings == []


def test_an_exact_match_wins_over_a_closer_looking_candidate() -> None:
    graph = Graph()
    learn(graph, person("Alice", "likes green tea a lot", "likes green tea"))
    learn(graph, expirations=(Expiration("Alice", "likes green tea"),), at=T2)
    assert current(graph, "Alice") == ["likes green tea a lot"]


def test_an_inexact_expiration_retires_the_closest_fact_above_the_threshold() -> None:
    graph = _tea_and_coffee()
    wording = "likes strong green tea"
    assert similarity(wording, "likes green tea") >= EXPIRE_SIMILARITY
    assert similarity(wording, "likes black coffee") < EXPIRE_SIMILARITY
    plan = learn(graph, expirations=(Expiration("Alice", wording),), at=T2)
    assert op_kinds(plan) == ["expire_obs"]
    assert current(graph, "Alice") == ["likes black coffee"]


def test_an_expiration_below_the_threshold_retires_nothing_and_warns() -> None:
    graph = _tea_and_coffee()
    wording = "enjoys hiking in the alps"
    assert similarity(wording, "likes green tea") < EXPIRE_SIMILARITY
    plan = learn(graph, expirations=(Expiration("Alice", wording),), at=T2)
    assert plan.ops == []
    assert len(plan.warnings) == 1 and "matches no current fact" in plan.warnings[0]
    assert current(graph, "Alice") == ["likes green tea", "likes black coffee"]


def test_an_expiration_never_touches_another_entitys_facts() -> None:
    graph = Graph()
    learn(graph, person("Alice", "likes black coffee"), person("Bob", "likes green tea"))
    plan = learn(graph, expirations=(Expiration("Alice", "likes green tea"),), at=T2)
    assert plan.ops == []
    assert current(graph, "Bob") == ["likes green tea"]
    assert current(graph, "Alice") == ["likes black coffee"]


def test_an_expiration_never_retires_a_fact_added_by_the_same_change() -> None:
    graph = Graph()
    learn(graph, person("Alice", "likes black coffee"))
    plan = learn(
        graph,
        person("Alice", "likes green tea"),
        expirations=(
            Expiration("Alice", "likes green tea"),
            Expiration("Alice", "likes strong green tea"),
        ),
        at=T2,
    )
    assert "expire_obs" not in op_kinds(plan)
    assert current(graph, "Alice") == ["likes black coffee", "likes green tea"]


def test_an_expiration_of_a_fact_superseded_in_the_same_change_is_quiet() -> None:
    graph = Graph()
    learn(graph, person("Alice", "works at Initech"))
    plan = learn(
        graph,
        person("Alice", "works at Globex"),
        expirations=(Expiration("Alice", "works at Initech"),),
        at=T2,
    )
    assert Counter(op_kinds(plan)) == Counter({"obs": 1, "expire_obs": 1})
    assert plan.warnings == []
    assert current(graph, "Alice") == ["works at Globex"]


def test_an_expiration_of_an_unknown_entity_is_ignored_with_a_warning() -> None:
    graph = _tea_and_coffee()
    plan = learn(graph, expirations=(Expiration("Carol", "likes green tea"),), at=T2)
    assert plan.ops == []
    assert "unknown entity" in plan.warnings[0]


def test_an_expiration_also_retires_the_relation_it_describes() -> None:
    graph = Graph()
    learn(
        graph,
        person("Alice", "works at Initech", "likes tea"),
        relations=(ExtractedRelation("Alice", "Initech", "works_at"),),
    )
    plan = learn(graph, expirations=(Expiration("Alice", "works at Initech"),), at=T2)
    assert Counter(op_kinds(plan)) == Counter({"expire_obs": 1, "expire_rel": 1})
    assert current(graph, "Alice") == ["likes tea"]
    assert current_relations(graph) == []


def test_expired_facts_get_a_validity_end_not_before_their_start() -> None:
    graph = Graph()
    learn(graph, person("Alice", "likes green tea"), at=MAY)
    learn(graph, expirations=(Expiration("Alice", "likes green tea"),), at=T1)
    [obs] = observations(graph, "Alice")
    assert obs["validFrom"] == MAY
    assert obs["validTo"] == MAY
    assert obs["retiredAt"] == T1


# --------------------------------------------------------------------------- relations
def test_a_relation_to_unknown_names_creates_both_ends() -> None:
    graph = Graph()
    plan = learn(graph, relations=(ExtractedRelation("Alice", "Zed Corp", "Works-At"),))
    assert op_kinds(plan) == ["entity", "entity", "rel"]
    assert current_relations(graph) == [("Alice", "works_at", "Zed Corp")]
    zed = graph.entity_by_name("zed corp")
    assert zed is not None and zed["type"] == "thing"


def test_a_relation_reuses_entities_named_earlier_in_the_change() -> None:
    graph = Graph()
    learn(
        graph,
        person("Alice", "likes tea"),
        person("Acme", type_="company"),
        relations=(ExtractedRelation("ALICE", "acme", "works_at"),),
    )
    assert len(graph.entities) == 2
    assert current_relations(graph) == [("Alice", "works_at", "Acme")]


def test_a_relation_that_is_already_current_is_not_added_again() -> None:
    graph = Graph()
    spellings = ("works_at", "works at", "Works-At", "WORKS_AT")
    learn(graph, relations=tuple(ExtractedRelation("Alice", "Acme", t) for t in spellings))
    plan = learn(
        graph,
        relations=(
            ExtractedRelation(" alice ", "ACME", "works at"),
            ExtractedRelation("Alice", "Acme", "works_at"),
        ),
        at=T2,
    )
    assert plan.ops == []
    assert current_relations(graph) == [("Alice", "works_at", "Acme")]
    assert len(graph.relations) == 1


def test_a_relation_of_a_new_kind_between_the_same_ends_is_added() -> None:
    graph = Graph()
    learn(graph, relations=(ExtractedRelation("Alice", "Acme", "works_at"),))
    learn(graph, relations=(ExtractedRelation("Alice", "Acme", "invests_in"),), at=T2)
    assert sorted(current_relations(graph)) == [
        ("Alice", "invests_in", "Acme"),
        ("Alice", "works_at", "Acme"),
    ]


# --------------------------------------------------------------------------- plans
def test_planning_leaves_the_graph_untouched() -> None:
    graph = _tea_and_coffee()
    before = copy.deepcopy(graph.to_document())
    next_id = graph.next_id
    plan = plan_extraction(
        graph,
        Extraction(
            (person("Alice", "name is Alice", "likes green tea"), person("Carol", "is new")),
            (ExtractedRelation("Alice", "Carol", "knows"),),
            (Expiration("Alice", "likes black coffee"),),
        ),
        at=T2,
        now=T2,
        episode={"text": "x"},
    )
    assert plan.ops
    assert graph.to_document() == before
    assert graph.next_id == next_id


def test_a_plan_allocates_fresh_ids_and_links_facts_to_their_episode() -> None:
    graph = _tea_and_coffee()
    plan = learn(
        graph,
        person("Carol", "likes tea"),
        relations=(ExtractedRelation("Carol", "Alice", "knows"),),
        at=T2,
        episode={"text": "Carol likes tea and knows Alice.", "at": T2},
    )
    ids = [op.get("entity", {}).get("id") if op["op"] == "entity" else None for op in plan.ops] + [
        op[op["op"]]["id"] for op in plan.ops if op["op"] in ("obs", "rel", "episode")
    ]
    fresh = [i for i in ids if i]
    assert len(fresh) == len(set(fresh)) == 4
    assert all(int(i.rsplit("-", 1)[1]) >= 5 for i in fresh)
    assert plan.next_id == graph.next_id
    [episode_op] = [op for op in plan.ops if op["op"] == "episode"]
    episode_id = episode_op["episode"]["id"]
    assert graph.episodes[episode_id]["text"] == "Carol likes tea and knows Alice."
    for op in plan.ops:
        if op["op"] in ("obs", "rel"):
            assert op[op["op"]]["episode"] == episode_id
            assert op[op["op"]]["source"] == "test"
    assert plan.embed == [
        *((op["obs"]["id"], "Carol (person): likes tea") for op in plan.ops if op["op"] == "obs"),
        (episode_id, "Carol likes tea and knows Alice."),
    ]


def test_observation_fields_are_stored_on_every_new_fact() -> None:
    graph = Graph()
    extraction = Extraction((person("Alice", "likes tea", "lives in Rome"),))
    plan = plan_extraction(
        graph, extraction, at=T1, now=T1, observation_fields={"category": "preference"}
    )
    graph.apply(plan.ops)
    assert {o["category"] for o in observations(graph, "Alice")} == {"preference"}


@pytest.mark.parametrize(
    ("content", "attribute"),
    [
        ("name is Bob", "name"),
        ("Her name is Bob.", "name"),
        ("works at Globex", "employer"),
        ("now works for Globex", "employer"),
        ("is employed by Globex", "employer"),
        ("lives in Rome", "residence"),
        ("moved to Rome", "residence"),
        ("is 31 years old", "age"),
        ("current employer is Globex", "employer"),
        ("favorite color is blue", "favorite color"),
        ("prefers tea", None),
        ("he is nice", None),
        ("name of the dog is Rex", "name of the dog"),
        ("thinks it is important to stand up for what we believe in", None),
        ("bets performing with him is a dream come true", None),
        ("hears the parks are amazing", None),
        ("no one was hurt", None),
        ("love language is acts of service", "love language"),
        ("is sure the audience is gonna love it", None),
        ("started a new job at Sony, so he can take only 10 days off", "employer"),
        ("got a job as a nurse at Mercy Hospital", "employer"),
        ("has a new role at Stripe", "employer"),
        ("started a new hobby", None),
    ],
)
def test_attribute_of_names_single_valued_attributes(content: str, attribute: str | None) -> None:
    assert attribute_of(content) == attribute


# --------------------------------------------------------------------------- forget
def test_forget_by_substring_expires_matching_facts_of_that_entity_only() -> None:
    graph = _tea_and_coffee()
    plan = plan_forget(graph, observations=[("ALICE", "Green Tea")], now=T2)
    graph.apply(plan.ops)
    assert current(graph, "Alice") == ["likes black coffee"]
    assert current(graph, "Bob") == ["likes green tea"]


def test_forget_by_relation_names_expires_that_relation() -> None:
    graph = Graph()
    learn(graph, relations=(ExtractedRelation("Alice", "Acme", "works_at"),))
    plan = plan_forget(graph, relations=[("alice", "ACME", "Works At")], now=T2)
    graph.apply(plan.ops)
    assert current_relations(graph) == []


def test_forget_by_entity_id_expires_all_its_facts_and_links_but_erases_nothing() -> None:
    graph = Graph()
    learn(
        graph,
        person("Alice", "likes tea", "lives in Rome"),
        person("Bob", "likes coffee"),
        relations=(ExtractedRelation("Bob", "Alice", "knows"),),
    )
    alice = graph.entity_by_name("Alice")
    assert alice is not None
    plan = plan_forget(graph, ids=[alice["id"]], now=T2)
    graph.apply(plan.ops)
    assert current(graph, "Alice") == []
    assert current(graph, "Bob") == ["likes coffee"]
    assert current_relations(graph) == []
    assert len(observations(graph, "Alice")) == 2
    assert len(graph.relations) == 1


def test_forget_by_observation_and_relation_id_and_twice_is_harmless() -> None:
    graph = Graph()
    learn(
        graph,
        person("Alice", "likes tea", "lives in Rome"),
        relations=(ExtractedRelation("Alice", "Acme", "works_at"),),
    )
    obs_id = observations(graph, "Alice")[0]["id"]
    [rel_id] = graph.relations
    plan = plan_forget(graph, ids=[obs_id, rel_id, obs_id, "obs-999"], now=T2)
    assert Counter(op_kinds(plan)) == Counter({"expire_obs": 1, "expire_rel": 1})
    graph.apply(plan.ops)
    assert plan_forget(graph, ids=[obs_id, rel_id], now=T3).ops == []
    assert current(graph, "Alice") == ["lives in Rome"]


def test_content_key_ignores_case_spacing_and_trailing_punctuation() -> None:
    assert content_key("  Likes   GREEN tea!. ") == content_key("likes green tea")
    assert content_key("likes tea?") != content_key("likes tea")


def test_a_fact_of_two_clauses_supersedes_the_value_of_each() -> None:
    graph = Graph()
    learn(graph, person("Dana", "works as a nurse at Lisbon General", "lives in Lisbon"), at=T1)
    learn(graph, person("Dana", "moved to Porto and now works at Porto Clinic"), at=T2)
    assert current(graph, "Dana") == ["moved to Porto and now works at Porto Clinic"]


def test_a_fact_of_two_clauses_restating_a_current_value_keeps_it_current() -> None:
    graph = Graph()
    learn(graph, person("Alice", "drinks green tea", "works at Acme"), at=T1)
    learn(graph, person("Alice", "drinks green tea and works at Acme"), at=T2)
    assert "works at Acme" in current(graph, "Alice")


def test_a_known_fact_a_reply_repeats_and_ends_is_no_fact_the_text_states() -> None:
    graph = Graph()
    learn(graph, person("Oskar", "cracked one of the sides on the bending iron"))
    episode: Doc = {"text": "going with mahogany for back and sides"}
    plan = learn(
        graph,
        person("Oskar", "cracked one of the sides on the bending iron", "is going with mahogany"),
        expirations=(Expiration("Oskar", "cracked one of the sides on the bending iron"),),
        at=T2,
        episode=episode,
    )
    [record] = [op["episode"] for op in plan.ops if op["op"] == "episode"]
    stated = [graph.stated_fact(int(str(i).rpartition("-")[2])) for i in record["facts"]]
    assert [fact["content"] for fact in stated if fact] == ["is going with mahogany"]
    assert current(graph, "Oskar") == ["is going with mahogany"]
