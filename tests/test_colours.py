"""Whether a colour a question asks for was said of the thing that has it."""

from __future__ import annotations

from memgraph.retrieval.colours import asks_colour, colours_of_it, topic_of_colour
from memgraph.text import index_terms


def no_turns_before(_episode: str) -> list[tuple[str, str]]:
    return []


def topic(question: str) -> frozenset[str]:
    return topic_of_colour(index_terms(question.replace("Chloe's", "")))


def test_a_colour_question_is_told_by_its_wording() -> None:
    assert asks_colour("What colour is Chloe's Yaris?")
    assert asks_colour("Which color did Ren paint the nursery?")
    assert asks_colour("What colours are the bridesmaid dresses?")
    assert not asks_colour("What did Chloe buy?")
    # what has the colour, without the words that ask for one
    assert topic("What colour is Chloe's Yaris?") == frozenset(index_terms("Yaris"))


def test_a_colour_counts_only_when_said_of_the_thing_asked() -> None:
    yaris = topic("What colour is Chloe's Yaris?")
    said = {"e1": "bought a Yaris today, eek", "e2": "a red double-decker bus cake"}
    assert not colours_of_it(said, yaris, no_turns_before)
    said["e3"] = "the Yaris is silver, very sensible"
    assert colours_of_it(said, yaris, no_turns_before)


def test_a_colour_said_a_few_turns_after_the_thing_answers() -> None:
    lehenga = topic("What colour is the lehenga Chloe chose?")

    def before(episode: str) -> list[tuple[str, str]]:
        return [("e1", "ooh what's it like"), ("e0", "we picked the lehenga!!")]

    said = {"e2": "a deep maroon one, with gold work"}
    assert colours_of_it(said, lehenga, before)
    assert not colours_of_it(said, lehenga, no_turns_before)
    # with nothing said of what has it, any colour answers
    assert colours_of_it(said, frozenset(), no_turns_before)
