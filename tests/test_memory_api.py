"""End-to-end behaviour of ``Memory`` through the public API, offline."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from memgraph.providers.mock import HashEmbedder, MockChatModel, ScriptedChatModel

from memgraph import InvalidScope, Memory, NotFound, Provider
from memgraph.retrieval import ranking

EMPTY = {"entities": [], "relations": [], "expirations": []}


class CountingEmbedder:
    """A HashEmbedder that records how many texts each call embedded."""

    def __init__(self, dimension: int = 64, model: str | None = None) -> None:
        self.inner = HashEmbedder(dimension)
        self.model = model or self.inner.model
        self.calls: list[int] = []

    def embed(self, texts: Any) -> np.ndarray:
        self.calls.append(len(texts))
        return self.inner.embed(texts)


def scripted(*replies: Any, fallback: bool = True) -> Provider:
    script: Any = (
        replies[0] if len(replies) == 1 and isinstance(replies[0], dict) else list(replies)
    )
    chat = ScriptedChatModel(script, fallback=MockChatModel() if fallback else None)
    return Provider("scripted", chat, HashEmbedder(64))


def memory(tmp_path: Path, scope: str = "test", provider: Any = "mock") -> Memory:
    return Memory(tmp_path / "mem", scope=scope, provider=provider)


def current_contents(m: Memory, name: str) -> list[str]:
    return [o.content for o in m.entity(name).current_observations]


# ----------------------------------------------------------------- remember
def test_remember_then_recall_returns_the_fact(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        changes = m.remember("Alice prefers concise, technical answers.")
        assert changes
        assert [e.name for e in changes.added_entities] == ["Alice"]
        assert "Alice (person):" in m.recall("how does alice like her answers?")


def test_my_name_is_alice_then_bob_leaves_one_current_name(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        m.remember("My name is Alice.")
        changes = m.remember("My name is Bob.")
        names = [c for c in current_contents(m, "User") if c.startswith("name is")]
        assert names == ["name is Bob"]
        assert [o.content for o in changes.expired_observations] == ["name is Alice"]
        history = m.history("User")
        assert [o.content for o in history.observations] == ["name is Alice", "name is Bob"]


def test_employer_change_retires_the_old_employer(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        m.remember("Alice works at Acme.")
        m.remember("Alice works at Globex.")
        assert [c for c in current_contents(m, "Alice") if "works at" in c] == ["works at Globex"]
        links = [r for r in m.history("Alice").relations if r.type == "works_at"]
        assert {(r.to_name, r.current) for r in links} == {("Acme", False), ("Globex", True)}


def test_same_fact_twice_keeps_one_current_observation(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        m.remember("Alice prefers TypeScript.")
        second = m.remember("Alice prefers TypeScript.")
        assert not second.added_observations
        assert current_contents(m, "Alice").count("prefers TypeScript") == 1
        assert len(list(m.iter_episodes())) == 2


def test_one_llm_call_and_one_batched_embedding_per_remember(tmp_path: Path) -> None:
    chat = ScriptedChatModel(
        [
            {
                "entities": [
                    {"name": "Alice", "type": "person", "observations": ["a", "b", "c"]},
                    {"name": "Bob", "type": "person", "observations": ["d"]},
                ],
                "relations": [],
                "expirations": [],
            }
        ]
    )
    embedder = CountingEmbedder()
    with memory(tmp_path, provider=Provider("t", chat, embedder)) as m:
        m.remember("Alice met Bob.")
        assert len(chat.calls) == 1
        # one call embedding the text for context is skipped on an empty scope;
        # the new observations and the text itself are embedded in one batch
        assert embedder.calls == [5]


def test_at_sets_when_the_fact_became_true(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        changes = m.remember("Alice lives in Paris.", at="2021-06-01T12:00:00+02:00")
        assert changes.added_observations[0].valid_from == "2021-06-01T10:00:00.000Z"
        assert changes.episode is not None and changes.episode.at == "2021-06-01T10:00:00.000Z"
        with pytest.raises(ValueError, match="ISO-8601"):
            m.remember("Alice lives in Rome.", at="last tuesday")


def test_every_fact_points_at_the_episode_it_came_from(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        m.remember("Alice works at Acme.", source="slack", metadata={"channel": "#eng"})
        hits = m.search("where does alice work", episodes=True)
        assert hits and hits[0].observation is not None
        episode = hits[0].episode
        assert episode is not None
        assert episode.text == "Alice works at Acme."
        assert episode.source == "slack" and episode.metadata == {"channel": "#eng"}
        assert m.supporting_episodes(hits) == [episode]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", ValueError),
        ("   \n", ValueError),
        ("x" * 100_001, ValueError),
        (b"\xff\xfe bad", ValueError),
        (42, TypeError),
    ],
)
def test_bad_text_is_refused_and_nothing_is_written(tmp_path: Path, text: Any, error: type) -> None:
    with memory(tmp_path) as m, pytest.raises(error):
        m.remember(text)
    assert not (tmp_path / "mem").exists()


def test_metadata_must_be_json_serializable(tmp_path: Path) -> None:
    with memory(tmp_path) as m, pytest.raises(TypeError, match="JSON"):
        m.remember("Alice likes tea.", metadata={"when": object()})


# ------------------------------------------------------- malformed replies
@pytest.mark.parametrize(
    "reply",
    [
        "I could not find any facts, sorry.",
        '{"entities": "Alice"}',
        '{"entities": [{"name": 7, "type": "person", "observations": []}]}',
        '{"unrelated": true}',
        "```json\n{not json}\n```",
    ],
)
def test_malformed_llm_replies_add_no_fact_but_keep_the_text(
    tmp_path: Path, reply: str, caplog: pytest.LogCaptureFixture
) -> None:
    with memory(tmp_path, provider=scripted(reply, reply, fallback=False)) as m:
        with caplog.at_level(logging.WARNING, logger="memgraph"):
            changes = m.remember("Alice works at Acme.")
        assert not changes and changes.warnings
        assert changes.unusable_reply and "reply unusable" in changes.unusable_reply
        assert "model reply unusable" in caplog.text
        assert m.entities() == []
        assert [(e.text, e.extracted) for e in m.iter_episodes()] == [
            ("Alice works at Acme.", False)
        ]


def test_a_bad_reply_gets_one_repair_retry(tmp_path: Path) -> None:
    good = {"entities": [{"name": "Alice", "type": "person", "observations": ["likes tea"]}]}
    provider = scripted("<think>hmm</think> not json", good, fallback=False)
    with memory(tmp_path, provider=provider) as m:
        changes = m.remember("Alice likes tea.")
        assert [o.content for o in changes.added_observations] == ["likes tea"]
        calls = provider.chat.calls  # type: ignore[attr-defined]
        assert len(calls) == 2
        assert "could not be used" in calls[1].last_user


def test_hallucinated_expirations_touch_nothing(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        m.remember("Alice works at Acme.")
        m.remember("Bob likes jazz.")
    reply = {
        **EMPTY,
        "expirations": [
            {"entityName": "Nobody", "observationContent": "works at Acme"},
            {"entityName": "Bob", "observationContent": "works at Acme"},
        ],
    }
    with memory(tmp_path, provider=scripted(reply)) as m:
        changes = m.remember("irrelevant")
        assert not changes.expired_observations
        assert "works at Acme" in current_contents(m, "Alice")
        assert "likes jazz" in current_contents(m, "Bob")


# --------------------------------------------------------------- scopes
@pytest.mark.parametrize(
    "scope", ["../x", "/etc", "a/b", "", ".", "..", "a\x00b", "x" * 129, "é", "a b"]
)
def test_bad_scope_ids_fail_before_any_file_is_touched(tmp_path: Path, scope: str) -> None:
    with pytest.raises(InvalidScope, match=r"\^\[A-Za-z0-9\._-\]\+\$"):
        Memory(tmp_path / "mem", scope=scope, provider="mock")
    assert not (tmp_path / "mem").exists()


def test_invalid_scope_is_a_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        Memory(tmp_path, scope="../../etc", provider="mock")


def test_scopes_never_see_each_other(tmp_path: Path) -> None:
    with memory(tmp_path, "alice") as a, memory(tmp_path, "bob") as b:
        a.remember("Alice prefers TypeScript.")
        b.remember("Bob prefers Rust.")
        assert "Rust" not in a.recall("what does everyone prefer? rust typescript")
        assert "TypeScript" not in b.recall("what does everyone prefer? rust typescript")
        assert [e.name for e in a.entities()] == ["Alice", "TypeScript"]


def test_nothing_is_created_on_disk_before_the_first_write(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        assert m.recall("anything") == ""
        assert m.search("anything") == []
        assert m.entities() == []
    assert not (tmp_path / "mem").exists()


def test_a_second_process_recalls_what_the_first_remembered(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        m.remember("Alice mentors Bob.")
    code = (
        "import sys; from memgraph import Memory\n"
        "with Memory(sys.argv[1], scope='test', provider='mock') as m:\n"
        "    print(m.recall('who does alice mentor'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "mem")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert "mentors Bob" in out.stdout


def test_two_memory_objects_on_one_scope_see_each_others_writes(tmp_path: Path) -> None:
    with memory(tmp_path) as first, memory(tmp_path) as second:
        assert second.recall("alice") == ""
        first.remember("Alice likes tea.")
        assert "likes tea" in second.recall("alice")
        second.remember("Alice likes jazz.")
        assert {"likes tea", "likes jazz"} <= set(current_contents(first, "Alice"))
        ids = [o.id for e in first.entities() for o in e.observations]
        assert len(ids) == len(set(ids))


# --------------------------------------------------------------- recall
def test_off_topic_queries_return_nothing(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        m.remember("Alice prefers TypeScript. Bob lives in Berlin.")
        assert m.recall("What is the weather like on Mars?") == ""
        assert m.search("quantum chromodynamics lecture notes") == []


def test_recall_of_an_empty_scope_is_empty(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        assert m.recall("alice") == ""


def test_a_re_ranker_that_keeps_only_a_wrong_line_does_not_hide_the_answer(
    tmp_path: Path,
) -> None:
    with memory(tmp_path) as m:
        m.remember("Alice likes green tea. Bob likes jazz.")
        wrong = m.entity("Bob").observations[0].id
    reply = {"ids": [wrong]}  # a small model's pick: Bob's line, not Alice's
    with memory(tmp_path, provider=scripted({"rerank": [reply]})) as m:
        text = m.recall("What does Alice like?")
    assert "likes green tea" in text, text


def test_recall_format_lists_facts_and_relations(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        m.remember("Alice is a senior engineer. She mentors Bob.")
        text = m.recall("alice", rerank=False)
        lines = text.splitlines()
        assert lines[0] == "Alice (person):"
        dated = [re.sub(r"^  - \[\d{1,2} \w+ \d{4}\] ", "", line) for line in lines[1:]]
        assert sorted(dated) == ["is a senior engineer", "mentors Bob"]
        # the relation mentors → Bob is the same statement: it is not printed again
        assert "→" not in text and len(lines) == 3
        assert "mentors Bob" in m.recall("bob", rerank=False)


def test_rerank_ignores_unknown_ids_and_keeps_its_order(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        m.remember("Alice likes tea. Alice likes jazz. Alice likes chess.")
        ids = {o.content: o.id for o in m.entity("Alice").observations}
    reply = {"ids": ["obs-999", ids["likes chess"], ids["likes tea"]]}
    with memory(tmp_path, provider=scripted({"rerank": [reply]})) as m:
        hits = m.search("what does alice like", rerank=True)
        assert [h.observation.content for h in hits if h.observation] == [
            "likes chess",
            "likes tea",
        ]


def test_a_failing_rerank_keeps_the_tier_order(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        m.remember("Alice likes tea. Alice likes jazz.")
        expected = [h.observation.id for h in m.search("alice likes") if h.observation]
    with memory(tmp_path, provider=scripted({"rerank": ["nope", "still nope"]})) as m:
        got = [h.observation.id for h in m.search("alice likes", rerank=True) if h.observation]
        assert got == expected


def test_small_scopes_offer_every_entity_to_the_reranker(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        m.remember("Alice likes tea.")
        alice = m.entity("Alice").observations[0].id
    with memory(tmp_path, provider=scripted({"rerank": [{"ids": [alice]}]})) as m:
        assert "likes tea" in m.recall("zzz qqq")


def test_recall_text_is_capped_by_the_token_budget(tmp_path: Path) -> None:
    facts = [f"works on project number {i} with great care" for i in range(300)]
    reply = {"entities": [{"name": "Alice", "type": "person", "observations": facts}]}
    with Memory(
        tmp_path / "mem",
        scope="t",
        provider=scripted(reply),
        config={"recall": {"tokenBudget": 200}},
    ) as m:
        m.remember("a long story about Alice")
        text = m.recall("alice project", rerank=False)
        assert 0 < len(text) < 200 * 8
        assert text.startswith("Alice (person):")


def test_superseded_facts_are_never_recalled(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        m.remember("Alice works at Acme.")
        m.remember("Alice works at Globex.")
        for rerank in (True, False):
            recalled = m.recall("where does alice work acme globex", rerank=rerank)
            assert "works at Globex" in recalled  # the new value is there...
            assert "works at Acme" not in recalled  # ...and the superseded one is not
        contents = [h.observation.content for h in m.search("alice work") if h.observation]
        assert "works at Globex" in contents
        assert "works at Acme" not in contents


def test_large_entities_list_their_most_relevant_facts_first(tmp_path: Path) -> None:
    facts = [f"visited city number {i}" for i in range(200)] + ["is allergic to peanuts"]
    reply = {"entities": [{"name": "User", "type": "person", "observations": facts}]}
    with memory(tmp_path, provider=scripted(reply)) as m:
        m.remember("a long story")
        hits = m.search("peanuts allergy", k=3)
        assert hits[0].observation is not None
        assert hits[0].observation.content == "is allergic to peanuts"
        lines = m.recall("is the user allergic to peanuts", rerank=False).splitlines()
        assert lines[1].endswith("] is allergic to peanuts")


def test_extraction_prompt_stays_bounded_as_the_graph_grows(tmp_path: Path) -> None:
    big = {
        "entities": [
            {"name": f"Person {i}", "type": "person", "observations": [f"likes topic {i}"]}
            for i in range(200)
        ]
    }
    one = {"entities": [{"name": "Alice", "type": "person", "observations": ["likes tea"]}]}
    provider = scripted(big, big, one)
    with memory(tmp_path, provider=provider) as m:
        m.remember("first batch")
        m.remember("second batch")
        m.remember("Alice likes tea and Person 7 likes topic 7.")
        prompt = provider.chat.calls[-1].last_user  # type: ignore[attr-defined]
        assert "Person 7" in prompt
        assert prompt.count("(person)") <= 8
        assert len(prompt) < 4000


# ---------------------------------------------------------- forget / purge
def test_forget_expires_the_fact_but_history_keeps_it(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        m.remember("Alice prefers TypeScript. Alice likes tea.")
        changes = m.forget("alice's preference for typescript")
        assert [o.content for o in changes.expired_observations] == ["prefers TypeScript"]
        assert "prefers TypeScript" not in m.recall("alice typescript", rerank=False)
        expired = [o for o in m.history("Alice").observations if not o.current]
        assert [o.content for o in expired] == ["prefers TypeScript"]
        assert expired[0].valid_to is not None


def test_forget_of_something_unknown_changes_nothing(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        m.remember("Alice likes tea.")
        assert not m.forget("the moon landing")
        assert current_contents(m, "Alice") == ["likes tea"]


def test_direct_expire_calls_need_no_llm(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        m.remember("Alice works at Acme. Alice likes tea.")
    provider = scripted(fallback=False)  # any LLM call would raise
    with memory(tmp_path, provider=provider) as m:
        tea = next(o for o in m.entity("Alice").observations if o.content == "likes tea")
        assert [o.id for o in m.expire(tea.id).expired_observations] == [tea.id]
        changes = m.expire_entity("Alice")
        assert changes.expired_observations and changes.expired_relations
        assert m.entity("Alice").current_observations == ()
        with pytest.raises(NotFound):
            m.expire("obs-12345")
        with pytest.raises(NotFound):
            m.expire_entity("Nobody")


def test_purge_erases_the_text_everywhere_under_the_scope(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        m.remember("Alice lives in Springfield.")
        m.remember("Bob works at Acme.")
        m.remember("Alice's passport number is XK-99871.")
        m.checkpoint()
        m.remember("Carol likes XK-99871 trivia.")
        m.store.write_summary({"summary": "Alice gave her passport XK-99871."})
        counts = m.purge("XK-99871")
        assert counts["episodes"] == 2 and counts["observations"] >= 1
        assert "XK-99871" not in m.recall("passport number", rerank=False)
        assert m.entity("Bob").current_observations
    for path in (tmp_path / "mem" / "test").rglob("*"):
        if path.is_file():
            data = path.read_bytes().lower()
            assert b"xk-99871" not in data, path
    with memory(tmp_path) as m:
        assert "works at Acme" in m.recall("bob", rerank=False)


def test_purge_of_an_entity_removes_its_facts_and_links(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        m.remember("Alice mentors Bob. Bob likes jazz.")
        m.purge(entity="Bob")
        with pytest.raises(NotFound):
            m.entity("Bob")
        assert not [r for r in m.history("Alice").relations if r.to_name == "Bob"]


# -------------------------------------------------------------- persistence
def test_checkpoint_then_reopen_keeps_everything(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        m.remember("Alice works at Acme.")
        m.checkpoint()
        m.remember("Alice works at Globex.")
        before = m.export("json"), m.stats()
    with memory(tmp_path) as m:
        assert (m.export("json"), m.stats()) == before
        assert before[1]["vectors"] == 4  # two facts and the two texts they came from


def test_changing_the_embedding_model_rebuilds_the_vectors(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first = CountingEmbedder(32, model="model-a")
    with memory(tmp_path, provider=Provider("a", MockChatModel(), first)) as m:
        m.remember("Alice works at Acme. Alice likes tea.")
        m.checkpoint()
    second = CountingEmbedder(48, model="model-b")
    with (
        caplog.at_level(logging.WARNING, logger="memgraph"),
        memory(tmp_path, provider=Provider("b", MockChatModel(), second)) as m,
    ):
        hits = m.search("alice likes tea")
        assert hits and "semantic" in hits[0].tiers
    assert "rebuilding the index" in caplog.text
    assert second.calls[0] == 3  # the current observations and the text, in one batch
    with memory(tmp_path, provider=Provider("b", MockChatModel(), second)) as m:
        calls = len(second.calls)
        m.search("tea")
        assert len(second.calls) == calls + 1  # only the query: the rebuild was persisted


def test_export_writes_json_and_graphml(tmp_path: Path) -> None:
    import networkx as nx
    import orjson

    with memory(tmp_path) as m:
        m.remember("Alice mentors Bob.")
        document = orjson.loads(m.export("json"))
        assert {e["name"] for e in document["entities"]} == {"Alice", "Bob"}
        assert document["episodes"][0]["text"] == "Alice mentors Bob."
        (tmp_path / "g.graphml").write_bytes(m.export("graphml"))
        graph = nx.read_graphml(tmp_path / "g.graphml")
        assert graph.number_of_nodes() == 2 and graph.number_of_edges() == 1
        with pytest.raises(ValueError, match="graphml"):
            m.export("csv")


def test_remember_many_stores_everything_in_one_commit(tmp_path: Path) -> None:
    texts = [f"Person{i} works at Company{i}." for i in range(20)] + ["Person3 likes tea."]
    with memory(tmp_path) as m:
        results = m.remember_many(texts)
        assert len(results) == len(texts)
        assert all(results)
        assert "likes tea" in current_contents(m, "Person3")
        journal = (tmp_path / "mem" / "test" / "journal.jsonl").read_bytes()
        assert journal.count(b"\n") == 1
    with memory(tmp_path) as m:
        assert "works at Company7" in m.recall("where does person7 work", rerank=False)
        assert m.stats()["vectors"] == 42  # one per fact and one per text


def test_remember_many_after_earlier_facts_supersedes_them(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        m.remember("Alice works at Acme.")
        m.remember_many(["Bob likes jazz.", "Alice works at Globex."])
        assert [c for c in current_contents(m, "Alice") if "works" in c] == ["works at Globex"]


def test_text_with_a_lone_surrogate_is_refused_before_the_model_call(tmp_path: Path) -> None:
    provider = scripted(fallback=False)  # any LLM call would raise
    with memory(tmp_path, provider=provider) as m, pytest.raises(ValueError, match="surrogate"):
        m.remember("Alice \ud800 likes tea.")


def test_an_imported_graph_json_is_not_reloaded_on_every_read(tmp_path: Path) -> None:
    import shutil

    from tests.conftest import fixture_path

    shutil.copytree(fixture_path("agency-memory"), tmp_path / "mem")
    with Memory(tmp_path / "mem", scope="alice", provider="mock") as m:
        m.recall("alice", rerank=False)
        graph = m._graph
        m.recall("bob", rerank=False)
        assert m._graph is graph


def test_export_current_only_leaves_out_expired_facts(tmp_path: Path) -> None:
    import orjson

    with memory(tmp_path) as m:
        m.remember("Alice works at Acme.")
        m.remember("Alice works at Globex.")
        full = orjson.loads(m.export("json"))
        current = orjson.loads(m.export("json", current_only=True))
    contents = [o["content"] for e in full["entities"] for o in e["observations"]]
    assert "works at Acme" in contents
    contents = [o["content"] for e in current["entities"] for o in e["observations"]]
    assert contents == ["works at Globex"]
    assert current["relations"]
    assert all(r["validTo"] is None for r in current["relations"])


def test_search_hits_show_each_entitys_facts_and_relations_as_of_the_latest_write(
    tmp_path: Path,
) -> None:
    with memory(tmp_path) as m:
        m.remember("Alice works at Acme.")
        [first] = m.search("Alice")
        assert [r.type for r in first.relations] == ["works_at"]
        assert len(first.entity.observations) == 1
        m.remember("Alice lives in Oslo. Alice likes tea.")
        hits = m.search("Alice")
        assert {r.type for r in hits[0].relations} == {"works_at", "lives_in"}
        assert len(hits[0].entity.observations) == 3
        m.expire_entity("Alice")
        [expired] = m.search("Alice")
        assert expired.relations == () and expired.observation is None
        assert not any(o.current for o in expired.entity.observations)
        with memory(tmp_path) as other:  # another handle's write reaches this one's hits
            other.remember("Alice moved to Bergen.")
        assert [len(h.entity.observations) for h in m.search("Alice")][:1] == [4]


@pytest.mark.parametrize("k", [0, -1, 1.5, True, "3"])
def test_search_refuses_a_k_that_is_not_a_positive_integer(tmp_path: Path, k: object) -> None:
    with Memory(tmp_path / "mem", scope="s", provider="mock") as memory:
        memory.remember("Alice works at Acme. Alice lives in Oslo.")
        with pytest.raises(ValueError, match="k must be a positive integer"):
            memory.search("alice", k=k)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="k must be a positive integer"):
            memory.as_of("2100-01-01T00:00:00Z").search("alice", k=k)  # type: ignore[arg-type]
        assert len(memory.search("alice", k=1)) == 1
        assert len(memory.search("alice", k=2)) == 2


def test_a_scope_copied_without_its_episode_index_saves_the_one_it_rebuilds(
    tmp_path: Path,
) -> None:
    # A scope copied between stores (memgraph migrate to PostgreSQL) arrives without its
    # derived episode index; the first search rebuilds it, and saves it for the next opener.
    with memory(tmp_path) as m:
        m.remember("Alice works at Acme.")
        m.remember("Bob moved to Lisbon last spring.")
        m.checkpoint()
    index = tmp_path / "mem" / "test" / "episodes.idx"
    index.unlink(missing_ok=True)
    with memory(tmp_path) as m:
        hits = m.search("who moved to lisbon", episodes=True)
        assert any(h.episode is not None and "Lisbon" in h.episode.text for h in hits)
    assert index.exists(), "the rebuilt episode index was saved"


def test_the_best_of_tiers_1_and_2_follow_the_rerankers_picks(tmp_path: Path) -> None:
    with memory(tmp_path) as m:
        for text in ("Alice likes chess.", "Alice likes tea.", "Alice likes jazz."):
            m.remember(text)
        jazz = next(o.id for o in m.entity("Alice").observations if o.content == "likes jazz")
    # a small model keeps one line of several that answer
    with memory(tmp_path, provider=scripted({"rerank": [{"ids": [jazz]}]})) as m:
        ranked = [c.id for c in m._ranked("what does alice like", rerank=False)]
        kept = [c.id for c in m._ranked("what does alice like", rerank=True)]
    assert len(ranked) > ranking.FUSED_KEPT
    assert kept == [jazz, *[i for i in ranked[: ranking.FUSED_KEPT] if i != jazz]]


def test_the_best_of_tiers_1_and_2_comes_right_after_the_rerankers_first_pick(
    tmp_path: Path,
) -> None:
    with memory(tmp_path) as m:
        for text in ("Alice likes chess.", "Alice likes tea.", "Alice likes jazz."):
            m.remember(text)
        ranked = [c.id for c in m._ranked("what does alice like", rerank=False)]
    # a small model keeps two lines, neither of them the best tiers 1 and 2 found
    picks = [i for i in ranked if i != ranked[0]][:2]
    with memory(tmp_path, provider=scripted({"rerank": [{"ids": picks}]})) as m:
        kept = [c.id for c in m._ranked("what does alice like", rerank=True)]
    assert kept[:3] == [picks[0], ranked[0], picks[1]]
