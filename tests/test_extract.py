from __future__ import annotations

import pytest

from memgraph.llm_calls.extract import clean_label, validate_extraction, without_invented_names


def test_valid_reply_becomes_an_extraction() -> None:
    result = validate_extraction(
        {
            "entities": [{"name": "Alice", "type": "Person", "observations": ["likes tea", ""]}],
            "relations": [{"from": "Alice", "to": "Bob", "type": "knows"}],
            "expirations": [{"entityName": "Alice", "observationContent": "likes coffee"}],
        }
    )
    assert result.entities[0].name == "Alice"
    assert result.entities[0].type == "person"
    assert result.entities[0].observations == ("likes tea",)
    assert result.relations[0].target == "Bob"
    assert result.expirations[0].content == "likes coffee"


def test_missing_lists_are_treated_as_empty() -> None:
    result = validate_extraction({"entities": []})
    assert not result


@pytest.mark.parametrize(
    "reply",
    [
        {},
        {"entities": "Alice"},
        {"entities": [["Alice"]]},
        {"entities": [{"name": 42, "type": "person", "observations": []}]},
        {"entities": [{"name": "A", "type": "t", "observations": "x"}]},
        {"relations": [{"from": "A", "to": None, "type": "knows"}]},
        {"expirations": [{"entityName": "A"}]},
    ],
)
def test_wrong_shapes_are_rejected_whole(reply: dict[str, object]) -> None:
    with pytest.raises((TypeError, ValueError)):
        validate_extraction(reply)


def test_control_characters_are_removed_from_names() -> None:
    assert clean_label("Ali\x00ce\u202e \n Smith", "name", 100) == "Ali ce Smith"


def test_overlong_names_are_rejected() -> None:
    with pytest.raises(ValueError, match="over"):
        clean_label("x" * 201, "name", 200)


def test_too_many_items_are_rejected() -> None:
    entities = [{"name": f"E{i}", "type": "t", "observations": []} for i in range(501)]
    with pytest.raises(ValueError, match="over"):
        validate_extraction({"entities": entities})


def test_what_names_something_nothing_read_names_is_left_out() -> None:
    reply = validate_extraction(
        {
            "entities": [
                {
                    "name": "Marcus",
                    "type": "person",
                    "observations": ["is working at Acme", "moved to Chicago on 7 May 2023"],
                },
                {"name": "Acme", "type": "organization", "observations": ["is a company"]},
                {"name": "Dana's mother", "type": "person", "observations": ["had hip surgery"]},
                {"name": "Ali", "type": "person", "observations": ["likes tea"]},
            ],
            "relations": [
                {"from": "Marcus", "to": "Acme", "type": "works_at"},
                {"from": "Marcus", "to": "Chicago", "type": "lives_in"},
            ],
        }
    )
    text = "Marcus: we moved to Chicago yesterday. Alice says my mom had hip surgery."
    kept, dropped = without_invented_names(reply, text, "Dana")
    assert [(e.name, e.observations) for e in kept.entities] == [
        ("Marcus", ("moved to Chicago on 7 May 2023",)),  # a month is no name
        ("Dana's mother", ("had hip surgery",)),
        ("Ali", ("likes tea",)),  # a name cut short is not invented
    ]
    assert [(r.source, r.target) for r in kept.relations] == [("Marcus", "Chicago")]
    assert dropped == ["Marcus: is working at Acme", "Acme: is a company", "Marcus works_at Acme"]
    assert without_invented_names(kept, text, "Dana") == (kept, [])
    assert without_invented_names(kept, text)[1] == ["Dana's mother: had hip surgery"]
