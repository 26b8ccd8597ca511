"""Whether a breed a question asks for was said."""

from __future__ import annotations

from memgraph.retrieval.breeds import asks_breed, names_a_breed


def test_a_breed_question_is_told_by_its_wording() -> None:
    assert asks_breed("What breed is Isla's dog?")
    assert asks_breed("What breed of cat is Mochi?")
    assert not asks_breed("What is the name of Isla's dog?")


def test_a_breed_is_named_by_its_name_or_its_shape() -> None:
    assert names_a_breed(["her dog. a kelpie. very smart, slightly unhinged"])
    assert names_a_breed(["beagles are just garbage disposals with ears"])
    assert names_a_breed(["he's a staffie, he'll be grand"])
    # one the list does not hold, said as a mix or a cross
    assert names_a_breed(["Shelter thinks he's a Kooikerhondje mix, about 2"])
    assert names_a_breed(["Collie cross, about four years old"])
    # the dog spoken of, its breed never said
    assert not names_a_breed(["Bonnie's on new tablets for her joints", "walked the dog"])
    # words a breed's name shares with everyday ones are not breeds
    assert not names_a_breed(["the staff were great", "Jack's in York"])
