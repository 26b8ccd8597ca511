"""What a turn puts right (memgraph.retrieval.corrections)."""

from __future__ import annotations

import pytest

from memgraph.retrieval.corrections import corrected_terms


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("wait. actually it's the 27th not the 20th. Sam can't do the 20th", ["20"]),
        ("wait no 27th not the 20th my bad i keep saying 20", ["20"]),
        ("Mom's appointment is Thursday the 16th, not Tuesday", ["tuesday"]),
        ("no wait, boise's the 12th not the 11th. the 11th is a drive day", ["11"]),
        ("oh wait, it's moved. Actually it's the 14th not the 7th", ["7"]),
        ("sorry, I mean not in March", ["march"]),
    ],
)
def test_the_value_a_correction_puts_right(text: str, value: list[str]) -> None:
    assert corrected_terms(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "I am not the 1st to say it",  # no word of a correction
        "not sure, maybe friday",
        "the party is on the 20th",
        "",
    ],
)
def test_a_text_that_corrects_nothing(text: str) -> None:
    assert corrected_terms(text) == []
