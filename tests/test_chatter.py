"""Turns with nothing to extract are told apart, and ask the model nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from memgraph.providers.mock import HashEmbedder

from memgraph import Memory
from memgraph.chatter import nothing_to_extract
from memgraph.llm_calls.provider import Provider
from tests.test_bulk import CountingChat


@pytest.mark.parametrize(
    "text",
    [
        "how was the weekend?",
        "is he staying with you?",
        "Miso is the cat?",
        "oh no 😂 how many flights?",
        "lol perfect",
        "Dana: haha yes!!",
        "ok love you",
        "😂😂",
    ],
)
def test_a_question_about_others_or_a_reaction_holds_nothing_to_extract(text: str) -> None:
    assert nothing_to_extract(text)


@pytest.mark.parametrize(
    ("text", "previous"),
    [
        ("did I tell you I got the job?", None),  # the speaker's own news, asked
        ("Guess what? I got engaged!", None),
        ("I live in Paris", None),
        ("[shared image: a golden retriever puppy] so cute!", None),  # a caption is content
        ("no.", "are you still at Acme?"),  # a reaction that answers a question
    ],
)
def test_news_an_answer_or_a_caption_has_something_to_extract(
    text: str, previous: str | None
) -> None:
    assert not nothing_to_extract(text, previous)


def test_such_a_turn_is_stored_without_a_model_call(tmp_path: Path) -> None:
    chat = CountingChat()
    with Memory(tmp_path, "s", provider=Provider("counting", chat, HashEmbedder(64))) as memory:
        memory.remember("lol", speaker="Marcus")
        memory.remember("how was the race?", speaker="Dana")
        assert chat.calls == 0
        memory.remember("I finished the Chicago half in 2:06!", speaker="Marcus")
        assert chat.calls == 1
        memory.remember("yes!!", speaker="Dana")  # after no question: a reaction
        memory.remember("did you run it alone?", speaker="Marcus")
        memory.remember("no.", speaker="Dana")  # it answers one: the model reads it
        assert chat.calls == 2
        assert [e.text for e in memory.iter_episodes()][:3] == [
            "lol",
            "how was the race?",
            "I finished the Chicago half in 2:06!",
        ]
        assert memory.search("how was the race", episodes=True)
