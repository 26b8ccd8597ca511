"""A question may call a speaker by the short form of their name ("Pri" for
Priyanka): recall reads it as a question about her."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgraph.retrieval.nicknames import FirstNames, with_names_written_out
from memgraph.retrieval.recall_text import NOTHING_SAID
from tests.test_recall_quality import recalled

SPEAKERS = FirstNames({"priyanka sethi", "gwen", "samuel", "samantha", "jonathan", "declan"})


def written_out(question: str, *, names: frozenset[str] = frozenset()) -> str:
    return with_names_written_out(question, SPEAKERS, is_name=lambda word: word in names)


@pytest.mark.parametrize(
    ("question", "meant"),
    [
        ("What is the name of Pri's rescue cat?", "What is the name of Priyanka's rescue cat?"),
        ("Where did Jon go in May?", "Where did Jonathan go in May?"),
        ("whats pri's dog called", "whats priyanka's dog called"),  # typed in lower case
        ("Did Gwen and Pri meet at the studio?", "Did Gwen and Priyanka meet at the studio?"),
    ],
)
def test_a_short_form_of_one_speaker_s_first_name_is_written_out(question: str, meant: str) -> None:
    assert written_out(question) == meant


@pytest.mark.parametrize(
    "question",
    [
        "What did Sam buy?",  # Samuel and Samantha both speak: it names neither
        "What is Gw's job?",  # too short to stand for one name
        "What did Gwen bake?",  # a whole name
        "When did the prices go up?",  # "pri" is a name's start only as a word of its own
        "Where did Gwen see the Prius?",  # a longer word is no short form
        "Who is Jon's boss?",
        "What did Gwen do in Dec?",  # a month, not Declan
    ],
)
def test_other_words_are_kept(question: str) -> None:
    kept = {"jon"} if "Jon's" in question else set()
    assert written_out(question, names=frozenset(kept)) == question


def test_a_speaker_s_own_first_name_is_never_another_s_short_form() -> None:
    speakers = FirstNames({"sam", "samuel"})
    kept = with_names_written_out("What did Sam buy?", speakers, is_name=lambda _w: False)
    assert kept == "What did Sam buy?"


def test_a_question_written_with_capitals_reads_only_capitalised_words_as_names() -> None:
    assert written_out("Did Gwen want pri cing?") == "Did Gwen want pri cing?"


def test_no_speakers_keep_the_question_as_asked() -> None:
    assert with_names_written_out("Pri?", FirstNames(set()), is_name=lambda _w: False) == "Pri?"


SAID = [
    ("Priyanka", "[shared image: a grey greyhound asleep on a sofa] meet the new boy"),
    ("Gwen", "Oh Pri, the greyhound is gorgeous! What's his name?"),
    ("Priyanka", "Biscuit! We got him from a rescue in Leicester last month"),
    ("Gwen", "My cat Mabli would hate him, she hates everything"),
    ("Priyanka", "haha poor Mabli"),
]


def test_a_question_naming_a_speaker_by_her_short_name_is_about_her(tmp_path: Path) -> None:
    dog, cat = recalled(
        tmp_path, SAID, "What is Pri's greyhound called?", "What is the name of Pri's cat?"
    )
    assert "Biscuit" in dog and not dog.startswith(NOTHING_SAID), dog
    # the cat is Gwen's: nothing remembered says Priyanka has one
    assert cat.startswith(NOTHING_SAID), cat
