"""The second search for a question that describes whom it asks about."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgraph import Memory
from memgraph.retrieval import bridge
from memgraph.retrieval.bridge import (
    asks_about_someone_described,
    bridge_names,
    bridged,
    describes_someone,
    second_query,
)
from memgraph.retrieval.ranking import Candidate


def test_a_question_describing_someone_is_told_from_one_naming_them() -> None:
    assert describes_someone("What does the relative who dogsat Pickles do for a living?")
    assert describes_someone("The flatmate who quizzed Joris was studying what subject?")
    assert describes_someone("What does the person whose hair tie Simit swallowed do?")
    assert not describes_someone("What does Noah do for a living?")
    assert not describes_someone("Who looked after the cat?")


def test_a_question_about_someone_it_describes_first_is_not_about_whom_it_names() -> None:
    # whose the topic is is not judged for Tendai: the question asks about Wanjiku
    asks = asks_about_someone_described
    assert asks("What does the person Tendai played Malaika for do for a living?")
    assert asks("In which town does the person who minds Wanjiru's kids live?")
    assert asks("The family member who drove Yusra's dad to hospital trains for which trade?")
    # one of someone's people, asked for by what they did
    assert asks("Which of Hiroshi's classmates had a piece break in the kiln?")
    assert asks("Who of Dana's relatives climbed with the group?")
    assert not asks("Which of Joanna's paintings was shown at the library?")
    assert not asks("Which of Kemal's knees was injured?")
    # named first: the question is about Calvin
    assert not asks("What does Calvin feel at the relief of someone whose car he fixed?")
    assert not asks("What did Dana say to the one John Smith?")
    assert not asks("What does Noah do for a living?")
    # named, then described by whose they are: about Freja, not Maya
    assert asks("What does Freja, Maya's flatmate, do for work?")
    assert not asks("What does Maya's flatmate do for work?")
    assert not asks("Where did Tom, Dana and Marcus go camping?")


def test_bridge_names_are_the_people_the_texts_name_that_the_question_does_not() -> None:
    people = {"Karan": "Karan", "Joris": "Joris", "Terry": "Terry", "terry": "Terry"}

    def person(word: str) -> str | None:
        return people.get(word) or people.get(word.removesuffix("s"))

    texts = ["Karan grilled Joris about the storm barrier", "Joris's friend Karan again"]
    assert bridge_names(texts, person, asked={"Joris"}) == ["Karan"]
    assert bridge_names(["terrys helping with the joints"], person, asked=set()) == ["Terry"]


def test_the_second_query_keeps_the_name_and_what_the_first_texts_did_not_say() -> None:
    query = second_query(
        "The flatmate who grilled Joris about the storm barrier studies what subject?",
        "Karan",
        ["Karan grilled Joris about the storm barrier for an hour"],
    )
    assert query.startswith("Karan ")
    assert "subject" in query and "storm" not in query and "Joris" not in query


def _candidate(name: str, score: float) -> Candidate:
    return Candidate(None, None, {}, score, episode=name)


def test_what_the_second_search_finds_comes_after_the_first_search_s_best() -> None:
    first = [_candidate(f"episode-{n}", 1.0 - n / 10) for n in range(6)]
    asked: list[str] = []

    def search(query: str) -> list[Candidate]:
        asked.append(query)
        return [_candidate("episode-1", 0.9), _candidate("episode-40", 0.8)]

    found = bridged(
        "What subject does the flatmate who grilled Joris study?",
        first,
        texts=lambda found: ["Karan grilled Joris"],
        person=lambda word: word if word == "Karan" else None,
        asked={"Joris"},
        search=search,
    )
    assert asked and asked[0].startswith("Karan")
    ids = [c.id for c in found]
    assert ids[: bridge.KEPT_FIRST] == ["episode-0", "episode-1", "episode-2"]
    assert ids[bridge.KEPT_FIRST] == "episode-40"
    assert sorted(ids) == sorted({c.id for c in first} | {"episode-40"})
    # no higher than the last of the first search kept
    assert found[bridge.KEPT_FIRST].score <= first[bridge.KEPT_FIRST - 1].score
    # a question naming whom it asks about is searched once
    asked.clear()
    assert (
        bridged("What does Karan study?", first, lambda f: [], lambda w: w, set(), search) == first
    )
    assert not asked


FLAT = [
    ("Yesenia", "Flat update: the storm barrier tour was cancelled, too windy lol"),
    ("Yesenia", "Joris came over Saturday. Karan grilled him about the storm barrier for an hour"),
    ("Pilar", "haha poor Joris. what is the barrier even for"),
    ("Yesenia", "the storm barrier closes when the sea gets high, it's huge"),
    ("Pilar", "what subject are you even studying again, I forget"),
    ("Yesenia", "urban planning, same as last year 🙃"),
    ("Pilar", "studying is overrated. the flatmate situation ok?"),
    ("Yesenia", "flatmates are great. Karan is doing a PhD in port logistics"),
    ("Pilar", "a PhD in what now"),
]


@pytest.fixture
def flat(tmp_path: Path) -> Memory:
    memory = Memory(tmp_path / "memory", provider="mock")
    for n, (speaker, text) in enumerate(FLAT):
        memory.remember(text, speaker=speaker, at=f"2024-03-{n + 1:02d}T10:00:00Z")
    return memory


def test_what_a_described_person_does_is_found_through_their_name(
    flat: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    question = "The flatmate who grilled Joris about the storm barrier is studying what subject?"

    def found() -> list[str]:
        return [h.episode.text for h in flat.search(question, k=5, episodes=True) if h.episode]

    assert any("port logistics" in text for text in found())
    monkeypatch.setattr(bridge, "describes_someone", lambda _question: False)
    assert not any("port logistics" in text for text in found())
