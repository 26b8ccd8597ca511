"""A question may call a speaker by the short form of their name ("Pri" for
Priyanka): recall reads it as a question about her."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgraph.retrieval.episode_index import EpisodeIndex
from memgraph.retrieval.nicknames import FirstNames, called_names, with_names_written_out
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


@pytest.mark.parametrize(
    ("text", "called"),
    [
        ("Shiv. The slides recording. Still waiting.", ["shiv"]),
        ("SHIV!! so the stall is happening??", ["shiv"]),
        ("hey thandi! quick update, they moved my exam", ["thandi"]),
        ("lol deal. thank you Thandi ❤️", ["thandi"]),
        ("ok Thandi, feels so weird typing that", ["thandi"]),
        ("Wow! that is great", ["wow"]),  # no name: many speakers answer it
        ("the duck was great, he cooked it", []),
        ("Zosia wants to play like Shiv.", []),  # spoken of, not called
        ("Go Jesse! Which does he want?", []),  # cheered on, not called
        ("Of course! I'll bring it", []),  # a stop word
    ],
)
def test_the_words_a_turn_calls_someone_by(text: str, called: list[str]) -> None:
    assert called_names(text) == called


def band_chat() -> EpisodeIndex:
    """Three speakers; Arjun and Wiktor call Siobhán "Shiv", everyone says "Wow!"."""
    turns = [
        ("Arjun", "SHIV!! so the stall is happening??"),
        ("Siobhán", "it is!! first market day is saturday"),
        ("Wiktor", "Wow!"),
        ("Arjun", "Wow! proud of you"),
        ("Siobhán", "thanks lads"),
        ("Wiktor", "Shiv. The slides recording. Still waiting."),
        ("Wiktor", "Also the setlist."),  # his next turn: the reply is still to the call
        ("Siobhán", "sending it tonight I promise"),
        ("Wiktor", "hey Arjun, when do you land?"),
        ("Arjun", "friday at 9"),
    ]
    return indexed(turns)


def indexed(turns: list[tuple[str, str]]) -> EpisodeIndex:
    """An episode index of one conversation's ``(speaker, text)`` turns, a minute apart."""
    index = EpisodeIndex()
    for n, (speaker, text) in enumerate(turns):
        index.add(f"e-{n + 1}", text, at_ms=n * 60_000, speaker=speaker, conversation="c")
    return index


def test_a_word_one_speaker_replies_to_again_and_again_calls_her() -> None:
    index = band_chat()
    for saved in (index, EpisodeIndex.decode(index.encode())):
        assert saved.called("shiv") == "Siobhán"
        assert saved.called("wow") is None  # answered by Arjun and Siobhán alike
        assert saved.called("arjun") is None  # a speaker's own name
        assert saved.called("setlist") is None  # once is no name


def test_a_word_its_speaker_says_of_someone_else_does_not_call_her() -> None:
    # Megan answers "JESSE!!!" and "Jesse? How was drop off?", but she speaks of
    # Jesse herself as often as Liam does: Jesse is her son, not her
    turns = [
        ("Megan", "Jesse got his offer from Stellenbosch"),
        ("Liam", "JESSE!!! Amazing!"),
        ("Megan", "I screamed. the dog barked"),
        ("Liam", "Jesse? How was drop off?"),
        ("Megan", "Saturday. Jesse's room is tiny"),
    ]
    assert indexed(turns).called("jesse") is None


def test_a_name_said_again_after_another_said_it_calls_no_one() -> None:
    # "Moss!" and "MOSS!!!!" cheer Jo's new dog, and Sam happens to answer both
    turns = [
        ("Jo", "the kennel call him Rocket, but I'm going to call him Moss"),
        ("Priya", "Moss! I love it"),
        ("Sam", "Why Moss?"),
        ("Jo", "He's a bit greeny-black in the sun"),
        ("Jo", "Moss is settling in, he sleeps on Alfie's bed"),
        ("Hannah", "MOSS!!!! 😍"),
        ("Sam", "What is he DOING"),
    ]
    assert indexed(turns).called("moss") is None
    # said without the name before it, the same turns do call Sam
    turns[0] = ("Jo", "the kennel call him Rocket, but he doesn't answer to it")
    turns[4] = ("Jo", "He's settling in, he sleeps on Alfie's bed")
    assert indexed(turns).called("moss") == "Sam"


def test_call_names_are_forgotten_with_a_purge() -> None:
    index = band_chat()
    index.remove(["e-1"])
    assert index.called("shiv") is None


def test_a_called_name_an_entity_holds_is_written_out() -> None:
    speakers = FirstNames({"siobhán byrne", "arjun pillai"})

    def out(question: str, *, names: frozenset[str]) -> str:
        return with_names_written_out(
            question,
            speakers,
            is_name=lambda word: word in names,
            called=lambda word: "Siobhán" if word == "shiv" else None,
        )

    shiv = frozenset({"shiv"})
    assert out("Which town did Shiv get her dog from?", names=shiv) == (
        "Which town did Siobhán get her dog from?"
    )
    assert out("whats shiv's dog called", names=shiv) == "whats siobhán's dog called"
    # a word no entity's name holds names no one ("Wow!" is answered too)
    assert out("Which town did Shiv get her dog from?", names=frozenset()) == (
        "Which town did Shiv get her dog from?"
    )


def test_a_question_calling_a_speaker_what_the_others_call_her_is_about_her(
    tmp_path: Path,
) -> None:
    said = [
        ("Arjun", "SHIV!! how was the first market?"),
        ("Siobhán", "sold out by noon!! the sourdough went first"),
        ("Wiktor", "Shiv. Which rescue was the dog from?"),
        ("Siobhán", "the greyhound rescue in Athenry, she's 4"),
        ("Arjun", "my dog came from a rescue in Rotterdam too"),
        ("Wiktor", "Shiv, good luck today"),
        ("Siobhán", "thanks lads"),
        ("Wiktor", "Zosia wants to see Shiv play at the gig."),  # "Shiv" is someone
    ]
    dog, where = recalled(
        tmp_path,
        said,
        "Which town's rescue did Shiv get her dog from?",
        "Where did Shiv's dog come from?",
    )
    for found in (dog, where):  # about Siobhán: her own texts answer
        assert not found.startswith(NOTHING_SAID), found
        assert "Athenry" in "".join(found.splitlines()[:4]), found
