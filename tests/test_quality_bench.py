"""bench.quality: the data validates, the metrics compute what they claim, the harness runs."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bench.quality.__main__ import main
from bench.quality.dataset import DATA_DIR, check, load
from bench.quality.engine import hit_turns
from bench.quality.locomo import _date_spellings, load_locomo
from bench.quality.metrics import (
    contains_gold,
    dedupe,
    first_lines,
    normalize,
    percentile,
    recall_at_k,
    reciprocal_rank,
    says_nothing,
)
from bench.quality.run import first_sessions
from tests.openai_server import OpenAITestServer, openai_server  # noqa: F401

C1 = DATA_DIR / "c1.json"


def test_the_data_folder_validates() -> None:
    conversations = load(DATA_DIR)
    assert {"c1", "c2"} <= {conv.id for conv in conversations}
    problems = check(conversations)
    assert problems.errors == []
    assert sum(len(conv.questions) for conv in conversations) >= 120


def test_recall_at_k_counts_distinct_turns_in_the_first_k() -> None:
    ranked = ["a", "b", "a", "c", "d", "e", "f"]
    assert recall_at_k(ranked, ["c"], 2) == 0.0
    assert recall_at_k(ranked, ["c"], 3) == 1.0  # the repeated "a" takes no rank
    assert recall_at_k(ranked, ["a", "f", "z"], 5) == pytest.approx(1 / 3)
    assert recall_at_k(ranked, ["a", "f", "z"], 10) == pytest.approx(2 / 3)
    assert recall_at_k([], ["a"], 10) == 0.0
    with pytest.raises(ValueError):
        recall_at_k(ranked, [], 5)


def test_reciprocal_rank_is_of_the_first_evidence_turn_within_k() -> None:
    assert reciprocal_rank(["a", "b", "c"], ["a"]) == 1.0
    assert reciprocal_rank(["x", "x", "b", "c"], ["c", "b"]) == 0.5  # duplicates do not count
    assert reciprocal_rank([str(i) for i in range(20)], ["12"]) == 0.0  # beyond 10
    assert reciprocal_rank([str(i) for i in range(20)], ["12"], k=20) == pytest.approx(1 / 13)
    assert reciprocal_rank([], ["a"]) == 0.0


def test_dedupe_keeps_first_ranks_and_skips_unmapped_hits() -> None:
    assert dedupe(["a", None, "b", "a", None, "c"]) == ["a", "b", "c"]


def test_containment_is_normalized() -> None:
    assert normalize("  Inés  Rosa,\tborn: 2022-12-01! ") == "ines rosa born 2022 12 01"
    assert contains_gold("- Dana: it's the Chicago Spring-Half (May 19)", ["spring half"])
    assert contains_gold("was born on 2022-12-01 at home", ["1 December 2022", "2022-12-01"])
    assert contains_gold("Charlotte’s Web", ["Charlotte's Web"])
    assert contains_gold("Inés Rosa was born", ["Ines Rosa"])
    assert not contains_gold("they moved to Pilsen", ["Logan Square"])
    assert not contains_gold("anything", [])
    assert not contains_gold("anything", ["!!"])  # empty once normalized: never a match


def test_abstention_accepts_empty_or_nothing_relevant() -> None:
    assert says_nothing("")
    assert says_nothing("  \n")
    assert says_nothing("Nothing relevant is remembered.")
    assert not says_nothing("Dana (person):\n  - has a cat")


def test_the_first_lines_are_the_listed_facts_and_messages_in_order() -> None:
    text = (
        "(Nothing remembered says this about Dana; the nearest matches follow.)\n"
        "Dana (person):\n  - has a cat\n  - lives in Pilsen\nRelated messages:\n"
        "  - [1 May 2024] Marcus: Logan Square\n  - [2 May 2024] Dana: ok"
    )
    assert (
        first_lines(text)
        == "  - has a cat\n  - lives in Pilsen\n  - [1 May 2024] Marcus: Logan Square"
    )
    assert first_lines(text, 1) == "  - has a cat"
    assert not contains_gold(first_lines(text, 2), ["Logan Square"])


def test_percentile_interpolates() -> None:
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([1.0] * 9 + [100.0], 95) == pytest.approx(55.45)


def test_hits_without_observation_or_episode_are_tolerated() -> None:
    episode = SimpleNamespace(id="episode-3", metadata={"turn": "c1-s1-t3"})
    hits = [
        SimpleNamespace(observation=None, episode=episode),  # an episode hit
        SimpleNamespace(observation=None, episode=None),  # an entity hit
        SimpleNamespace(observation=SimpleNamespace(episode_id="episode-9"), episode=None),
        SimpleNamespace(
            observation=SimpleNamespace(episode_id="episode-5"),
            episode=SimpleNamespace(id="episode-5", metadata={}),
        ),
    ]
    mapping = {"episode-9": "c1-s2-t1", "episode-5": "c1-s1-t5"}
    memory: Any = SimpleNamespace(episode=lambda _id: None)
    assert hit_turns(memory, hits, mapping) == ["c1-s1-t3", None, "c1-s2-t1", "c1-s1-t5"]


def _tiny_slice(folder: Path) -> Path:
    """The first two sessions of c1 and the questions they answer, plus two abstentions."""
    doc = json.loads(C1.read_text("utf-8"))
    doc["sessions"] = doc["sessions"][:2]
    kept = {t["id"] for s in doc["sessions"] for t in s["turns"]}
    answerable = [q for q in doc["questions"] if q["evidence"] and set(q["evidence"]) <= kept]
    abstention = [q for q in doc["questions"] if q["category"] == "abstention"][:2]
    doc["questions"] = answerable + abstention
    assert len(answerable) >= 5
    folder.mkdir()
    (folder / "c1.json").write_text(json.dumps(doc), "utf-8")
    return folder


def test_check_reports_broken_data(tmp_path: Path) -> None:
    doc = json.loads(C1.read_text("utf-8"))
    doc["sessions"][1]["at"] = "2020-01-01T00:00:00Z"  # out of order
    doc["sessions"][0]["turns"][1]["id"] = doc["sessions"][0]["turns"][0]["id"]
    doc["questions"][0]["evidence"] = ["c1-s99-t1"]
    doc["questions"][1]["category"] = "trivia"
    abstention = next(q for q in doc["questions"] if q["category"] == "abstention")
    abstention["answers"] = ["something"]
    doc["questions"] = [*doc["questions"][:58], abstention]  # 59 questions
    doc["speakers"] = doc["speakers"][:1]  # a group chat has several; a chat has two
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "c1.json").write_text(json.dumps(doc), "utf-8")
    errors = "\n".join(check(load(tmp_path / "bad")).errors)
    for expected in (
        "is not after",
        "is used 2 times",
        "is not a turn of this conversation",
        "category 'trivia'",
        "abstention question has no answers",
        "59 questions, at least 60 needed",
        "speakers must be two or more full names",
    ):
        assert expected in errors
    assert main(["--check", "--data", str(tmp_path / "bad")]) == 1


def test_quick_run_on_a_tiny_slice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _tiny_slice(tmp_path / "data")
    out = tmp_path / "quality.json"
    assert main(["--quick", "--data", str(data), "--out", str(out), "--failures", "1"]) == 0
    printed = capsys.readouterr().out
    assert "| category | n | search R@5" in printed
    assert "worst questions per category" in printed
    document = json.loads(out.read_text("utf-8"))
    assert document["conversations"] == ["c1"]
    summary = document["summary"]
    assert summary["overall"]["n"] == sum(
        1 for q in document["questions"] if q["category"] != "abstention"
    )
    for row in [*summary["categories"].values(), summary["overall"]]:
        for key in (
            "search_r5",
            "search_r10",
            "search_mrr",
            "bm25_r10",
            "recall_contains",
            "recall_contains_first",
        ):
            assert 0.0 <= row[key] <= 1.0
        assert row["search_r5"] <= row["search_r10"]
    assert summary["abstention"]["n"] == 2
    assert summary["latency_ms"]["remember"]["n"] > 0
    for record in document["questions"]:
        assert len(record["search_turns"]) == len(set(record["search_turns"])) <= 10
    # the BM25 baseline finds a turn that shares the question's rare words
    bm25 = {q["id"]: q["bm25"] for q in document["questions"] if "bm25" in q}
    assert any(score["r10"] == 1.0 for score in bm25.values())


@pytest.mark.parametrize("fed", ["lines", "sessions"])
def test_a_conversation_can_be_fed_as_lines_or_as_whole_sessions(
    fed: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _tiny_slice(tmp_path / "data")
    out = tmp_path / "quality.json"
    assert main(["--quick", "--data", str(data), "--out", str(out), "--feed", fed]) == 0
    printed = capsys.readouterr().out
    document = json.loads(out.read_text("utf-8"))
    assert document["settings"]["feed"] == fed
    if fed == "lines":
        assert 'each turn is fed as "Speaker: text"' in printed
        assert all("search_turns" in q for q in document["questions"])
    else:  # memgraph keeps a transcript's turns apart: search maps to turns as before
        assert "each session fed as one transcript text" in printed
        assert all(q["search_turns"] for q in document["questions"])
        assert all("recall_text" in q for q in document["questions"])
        assert document["summary"]["overall"]["recall_contains"] is not None


def test_speaker_support_is_detected_and_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When remember/remember_many grow speaker parameters, the harness passes speakers."""
    from bench.quality import engine
    from memgraph import Memory

    conv = load(_tiny_slice(tmp_path / "data"))[0]
    original_one, original_many = Memory.remember, Memory.remember_many
    seen: list[str] = []

    def remember(self: Memory, text: str, *, speaker: str | None = None, **kw: Any) -> Any:
        seen.append(f"one:{speaker}")
        return original_one(self, f"{speaker}: {text}", **kw)

    def remember_many(
        self: Memory, texts: list[str], *, speakers: list[str] | None = None, **kw: Any
    ) -> Any:
        assert speakers is not None and len(speakers) == len(texts)
        seen.extend(f"many:{s}" for s in speakers)
        return original_many(self, texts, **kw)

    def plain_one(self: Memory, text: str, **kw: Any) -> Any:  # an engine without speakers
        return original_one(self, text, **kw)

    def plain_many(self: Memory, texts: list[str], **kw: Any) -> Any:
        return original_many(self, texts, **kw)

    monkeypatch.setattr(Memory, "remember", plain_one)
    monkeypatch.setattr(Memory, "remember_many", plain_many)
    assert engine.detect() == engine.Capabilities(speaker=False, bulk=None)
    with Memory(tmp_path / "plain", scope="c1", provider="mock") as memory:
        fed = engine.feed(memory, conv, engine.detect(), bulk=True)
    assert fed.notes and not fed.bulk_used  # --bulk is skipped, and the report says so
    assert len(fed.episode_turn) == len(conv.turns)

    monkeypatch.setattr(Memory, "remember", remember)
    monkeypatch.setattr(Memory, "remember_many", remember_many)
    caps = engine.detect()
    assert caps == engine.Capabilities(speaker=True, bulk="speakers")
    with Memory(tmp_path / "one", scope="c1", provider="mock") as memory:
        fed = engine.feed(memory, conv, caps, bulk=False)
    assert seen == [f"one:{t.speaker}" for t in conv.turns]
    assert sorted(fed.episode_turn.values()) == sorted(t.id for t in conv.turns)
    seen.clear()
    with Memory(tmp_path / "many", scope="c1", provider="mock") as memory:
        fed = engine.feed(memory, conv, caps, bulk=True)
    assert fed.bulk_used and seen == [f"many:{t.speaker}" for t in conv.turns]
    assert sorted(fed.episode_turn.values()) == sorted(t.id for t in conv.turns)  # by text


def _locomo_file(path: Path) -> Path:
    """A two-session conversation in the LoCoMo file's shape."""
    sample = {
        "sample_id": "x",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a greyhound yesterday!"},
                {
                    "speaker": "Ben",
                    "dia_id": "D1:2",
                    "text": "No way! What's her name?",
                    "blip_caption": "a photo of a grey dog on a couch",
                },
            ],
            "session_2_date_time": "10:37 am on 27 June, 2023",
            "session_2": [{"speaker": "Ana", "dia_id": "D2:1", "text": "Her name is Juniper."}],
        },
        "qa": [
            {"question": "What is Ana's dog called?", "answer": "Juniper", "evidence": ["D2:1"], "category": 4},
            {"question": "When did Ana adopt her dog?", "answer": "May 7, 2023", "evidence": ["D1:1"], "category": 2},
            {"question": "What breed is Ben's dog?", "adversarial_answer": "greyhound", "evidence": ["D1:1"], "category": 5},
            {"question": "Where does Ana work?", "answer": "a bank", "evidence": ["D9:9"], "category": 4},
        ],
    }  # fmt: skip
    path.write_text(json.dumps([sample]), "utf-8")
    return path


def test_a_locomo_file_reads_as_conversations(tmp_path: Path) -> None:
    (conv,) = load_locomo(_locomo_file(tmp_path / "locomo10.json"))
    assert conv.id == "l1" and conv.speakers == ("Ana", "Ben")
    assert [t.id for t in conv.turns] == ["l1-D1-1", "l1-D1-2", "l1-D2-1"]
    assert conv.turns[1].text.endswith("[shared image: a photo of a grey dog on a couch]")
    assert conv.turns[2].at.isoformat().startswith("2023-06-27T10:37")
    by_id = {q.id: q for q in conv.questions}
    assert by_id["l1-q1"].category == "single-fact" and by_id["l1-q1"].evidence == ("l1-D2-1",)
    # a day also accepts its other spellings
    assert by_id["l1-q2"].answers == ("May 7, 2023", "7 May 2023", "2023-05-07")
    assert by_id["l1-q3"].category == "abstention" and by_id["l1-q3"].answers == ()
    assert "l1-q4" not in by_id  # its evidence names no turn of the conversation


@pytest.mark.parametrize(
    ("gold", "also"),
    [
        ("The Friday before 15 July 2023", "14 July 2023"),  # a Saturday: the day before
        ("The sunday before 25 May 2023", "21 May 2023"),
        ("on the Friday before 21 June, 2023", "June 16, 2023"),
        ("Saturday after 27 January, 2023", "2023-01-28"),
        ("The weekend before 17 July 2023", "weekend of 15 July 2023"),  # said on a Monday
        ("two weekends before 17 July 2023", "weekend of 8 July 2023"),
        ("The weekend after 3June, 2022.", "weekend of 4 June 2022"),  # a Friday
        ("The weekend of 24June, 2022.", "weekend of 25 June 2022"),
        ("3June, 2022", "3 June 2022"),
    ],
)
def test_a_locomo_day_named_by_another_also_accepts_that_day(gold: str, also: str) -> None:
    spellings = _date_spellings(gold)
    assert spellings[0] == gold and also in spellings


@pytest.mark.parametrize(
    ("gold", "also"),
    [
        ("The week before October 13th, 2023.", "The week before 13 October 2023."),
        ("The week before 15April, 2022.", "The week before 15 April 2022."),
    ],
)
def test_a_locomo_answer_holding_a_day_also_accepts_it_spelled_one_way(
    gold: str, also: str
) -> None:
    assert _date_spellings(gold) == [gold, also]


@pytest.mark.parametrize("gold", ["June 2023", "The week before 9 June 2023", "10 years ago"])
def test_a_locomo_answer_that_is_no_one_day_keeps_its_own_words(gold: str) -> None:
    assert _date_spellings(gold) == [gold]


def test_a_locomo_file_runs_through_the_benchmark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _locomo_file(tmp_path / "locomo10.json")
    out = tmp_path / "quality.json"
    assert main(["--locomo", str(path), "--out", str(out)]) == 0
    assert json.loads(out.read_text("utf-8"))["conversations"] == ["l1"]
    assert main(["--locomo", str(tmp_path / "missing.json")]) == 1
    assert "cannot read it as LoCoMo" in capsys.readouterr().err


def test_the_first_sessions_keep_their_turns_and_the_questions_they_answer() -> None:
    conv = load(DATA_DIR, ["c1"])[0]
    cut = first_sessions(conv, 2)
    kept = {session for session, _at in conv.sessions[:2]}
    assert cut.sessions == conv.sessions[:2]
    assert cut.turns and all(turn.session in kept for turn in cut.turns)
    assert len(cut.turns) < len(conv.turns)
    ids = {turn.id for turn in cut.turns}
    answerable = [q for q in cut.questions if q.category != "abstention"]
    assert answerable and all(set(q.evidence) <= ids for q in answerable)
    abstention = [q for q in conv.questions if q.category == "abstention"]
    assert [q for q in cut.questions if q.category == "abstention"] == abstention


def test_a_run_can_use_a_configured_provider(
    tmp_path: Path,
    openai_server: OpenAITestServer,  # noqa: F811 - the imported fixture
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = tmp_path / "real.json"
    config.write_text(
        json.dumps(
            {
                "memory": {
                    "provider": {
                        "name": "openai",
                        "model": "tiny",
                        "baseUrl": openai_server.base_url,
                    },
                    "embeddings": {"provider": "mock"},
                }
            }
        ),
        "utf-8",
    )
    data = _tiny_slice(tmp_path / "data")
    out = tmp_path / "quality.json"
    argv = ["--data", str(data), "--sessions", "1", "--config", str(config), "--out", str(out)]
    assert main(argv) == 0
    assert "provider openai tiny" in capsys.readouterr().out
    document = json.loads(out.read_text("utf-8"))
    assert document["settings"]["provider"] == "openai tiny"
    # every turn of the first session went through the server's extraction
    chats = openai_server.requests_to("chat")
    first = load(data)[0].sessions[0][0]
    assert len(chats) >= sum(1 for t in load(data)[0].turns if t.session == first)
    assert main([*argv[:4], "--sessions", "0"]) == 1
