"""Whether what recall found says how old the person asked about is."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from memgraph.retrieval.ages import age_asked_of, relative_age_asked, says_an_age, states_their_age


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("How old is Walt?", "Walt"),
        ("How old is Kenji's wife Laura?", "Laura"),
        ("how old is Sam now?", "Sam"),
        ("How old is Ada's granddaughter?", None),  # named only by a relative
        ("How old was Wren when she started?", None),  # an age then, worked out
        ("What does Walt do?", None),
    ],
)
def test_the_age_asked_is_of_whom_the_question_names_last(question: str, name: str | None) -> None:
    assert age_asked_of(question) == name


@pytest.mark.parametrize(
    ("question", "relative"),
    [
        ("How old is Dana's mother?", "Dana's mother"),
        ("How old is Ada's granddaughter now?", "Ada's granddaughter"),
        ("How old is Walt?", None),  # a name: age_asked_of's
        ("How old is Kenji's wife Laura?", None),
        ("How old was Wren when she started?", None),
    ],
)
def test_the_relative_whose_age_is_asked(question: str, relative: str | None) -> None:
    assert relative_age_asked(question) == relative


def test_an_age_to_come_is_not_said() -> None:
    assert says_an_age("my dad turns 70 next week")
    assert says_an_age("she's 74 and stubborn")
    assert not says_an_age("she'll be dancing until she's 100")
    assert not says_an_age("the drive is 15 min")


def says(name: str, *turns: tuple[str | None, str | None, str], before: Sequence[str] = ()) -> bool:
    """Whether the ``turns`` (speaker, addressee, text) say ``name``'s age; each
    turn goes on from the ones before it, the first from ``before``."""
    texts = [(f"e{n}", speaker, text) for n, (speaker, _, text) in enumerate(turns)]
    to = {f"e{n}": addressee for n, (_, addressee, _) in enumerate(turns)}
    earlier = {f"e{n}": text for n, (_, _, text) in enumerate(turns)}

    def going_on_from(episode: str) -> list[tuple[str, str]]:
        at = int(episode[1:])
        if at == 0:
            return [("x", text) for text in before]
        return [(f"e{back}", earlier[f"e{back}"]) for back in range(at - 1, -1, -1)]

    return states_their_age(name, texts, addressee=to.get, before=going_on_from)


def test_an_age_is_theirs_when_it_is_said_of_them() -> None:
    assert says("Gus", ("Karen", "Mike", "Gus is 78 with a bad knee."))
    assert says("Tolu", ("Olumide", "Kenji", "Tolu's 27 and reads like a machine"))
    assert says("Mateo", ("Rosa", "Evelyn", "Mateo turned 9 on Saturday!"))
    assert says("Danny", ("Danny", "Mei", "I'm 29 and my knees are 60"))
    assert says("Davi", ("Rafael", "Callum", "Davi is obsessed. ya, he's 15"))
    assert says("Sam", ("Bea", "Sam", "happy 30th old man 🎉"))
    # a bare number after "how old are you?", or putting right an age given them
    assert says(
        "Dev",
        ("Dev", "Marisol", "35 actually. my birthday was Monday"),
        before=["I'm so proud. 34 year old kickflip king"],
    )
    assert says("Dev", ("Dev", "Marisol", "35!"), before=["how old are you now?"])


def test_a_bare_number_answering_how_old_he_is_is_the_age_of_whom_he_is() -> None:
    # "he" in the question is whom the turn before it named
    assert says(
        "Tobi",
        ("Maya", "Jules", "tobi was so bored. he played on his switch all day"),
        ("Jules", "Maya", "how old is he now, 16?"),
        ("Maya", "Jules", "17! doing a levels"),
    )
    assert not says(
        "Tobi",
        ("Maya", "Jules", "my cousin was so bored. he played on his switch all day"),
        ("Jules", "Maya", "how old is he now, 16?"),
        ("Maya", "Jules", "17! doing a levels"),
    )


def test_a_bare_number_after_a_birthday_wish_is_the_age_of_whom_it_is_said_to() -> None:
    wish = "Happy birthday for yesterday boss!! Sorry, was at a job till late. 73!"
    assert says("Graham", ("Jordan", "Graham", wish))
    assert not says("Jordan", ("Jordan", "Graham", wish))
    # no wish: a bare number is not an age ("3!" of a score)
    assert not says("Graham", ("Jordan", "Graham", "What a game!! We won. 3!"))


def test_an_age_of_someone_else_or_something_else_is_not_theirs() -> None:
    assert not says("Walt", ("Karen", "Mike", "the furnace is 25 years old."))
    assert not says("Walt", ("Tess", "Karen", "what do I tell a five year old about this"))
    assert not says("Laura", ("Kenji", "Femi", "Not bad for a 41 year old"))
    assert not says("Walt", ("Karen", "Mike", "Gus is 78 with a bad knee."))
    assert not says("Dev", ("Dev", "Marisol", "35 minutes late, sorry"), before=["where are you?"])
    assert not says("Tomasz", ("Tomasz", "Ewa", "ok. i can go tues, filton is 15 min away"))
    # an age to come is not theirs
    assert not says("Irene", ("Megan", "Rachel", "Irene will talk about it until she's 100"))
    assert not says("Dev", ("Dev", "Marisol", "I'll stop skating when I'm 64"))
    assert not says("Walt", ("Karen", "Mike", "Dad won 3 of the 5 games"))


def test_how_old_he_is_asked_of_someone_else_and_he_is_the_one_named_last() -> None:
    # "How old is he?" of Tomasz's son: Tomasz's "7 on saturday" is the boy's age
    assert not says(
        "Tomasz",
        ("Ewa", "Tomasz", "Don't apologise, it's his birthday. How old is he?"),
        ("Tomasz", "Ewa", "7 on saturday. dinosaur theme. pray for me"),
    )
    assert says(
        "Tomasz",
        ("Ewa", "Tomasz", "Wait how old are you now?"),
        ("Tomasz", "Ewa", "41 on saturday. pray for me"),
    )
    # "He" after Ewan's name is Ewan, whoever the turn before spoke of
    ewan = "It was Ewan's birthday on Thursday. He is nine now."
    assert not says("Callum", ("Alasdair", "Fiona", ewan), before=["How's Callum doing?"])
    assert says("Ewan", ("Alasdair", "Fiona", ewan), before=["How's Callum doing?"])
    # a day named in between names no one
    assert says(
        "Callum", ("Alasdair", "Fiona", "Party on Saturday. He is nine now."), before=["Callum!"]
    )
