"""Whose news a remembered text tells: a text by the person asked about may tell
another's ("chidi got a part time job btw"), and then it does not answer for them."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgraph import Memory
from memgraph.retrieval.news import tells_another_s_news

PEOPLE = {"chidi", "malik", "chloe"}


@pytest.mark.parametrize(
    ("text", "another_s"),
    [
        ("chidi got a part time job btw, at a bike shop on lygon st", True),
        ("AND chidi got his offer from uni of melbourne!!!! he starts in feb", True),
        ("hes renting a room in a share house in carlton", True),
        ("omg Chidi got in!!", True),
        ("Oh, Chloe got the job", True),
        ("start date is 10 nov, royal north shore ICU!!!!", False),
        ("AND we got the crows nest flat!!!", False),  # "we": the speaker's own
        ("She started at the bakery and I love it", False),
        ("Malik, that's huge!! You two have been talking about it for so long", False),
        ("Already signed! No more law firm.", False),
        ("Finally got the job at the bakery!", False),
        # written in lower case where the text writes names with a capital: no name
        ("chloe's idea, honestly. Went to Paris anyway.", False),
    ],
)
def test_a_text_tells_another_s_news_when_its_subject_is_someone_else(
    text: str, another_s: bool
) -> None:
    assert tells_another_s_news(text, lambda word: word in PEOPLE) is another_s


def test_news_of_someone_else_said_by_the_person_asked_about_is_not_their_news(
    tmp_path: Path,
) -> None:
    said = [
        ("Ada", "my brother Chidi is coming to Sydney next year"),
        ("Maggie", "How is the new hospital treating you?"),
        ("Ada", "start date is 10 nov, royal north shore ICU!!!!"),
        ("Maggie", "Wonderful news, my dear."),
        ("Ada", "chidi got a part time job btw, at a bike shop on lygon st"),
        ("Ada", "and chidi got his offer from uni of melbourne!!!! he starts in feb"),
    ]
    with Memory(tmp_path / "mem", "chat", provider="mock") as memory:
        for minute, (speaker, text) in enumerate(said):
            memory.remember(text, speaker=speaker, at=f"2025-09-20T10:{minute:02d}:00Z")
        hits = memory.search("Which hospital does Ada work at now?", k=3)
    first = next(h for h in hits if h.episode is not None)
    assert "royal north shore" in first.episode.text
