"""Owner rules and the condition language (never eval)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memgraph import Memory, NotFound
from memgraph.faces.conditions import ConditionError, parse_condition


def open_memory(tmp_path: Path) -> Memory:
    return Memory(tmp_path / "mem", scope="shop", provider="mock")


def test_a_numeric_must_rule_flags_a_violation(tmp_path: Path) -> None:
    with open_memory(tmp_path) as memory:
        memory.add_rule("max_discount", "must", "discount <= 0.20", "pricing")
        violations = memory.check_rules("pricing", {"discount": 0.25})
        assert len(violations) == 1
        assert violations[0].rule == "max_discount" and violations[0].blocking
        assert "discount = 0.25" in violations[0].why
        assert memory.check_rules("pricing", {"discount": 0.1}) == []


def test_levels_and_categories(tmp_path: Path) -> None:
    with open_memory(tmp_path) as memory:
        memory.add_rule("eu_big", "should", 'region == "EU" and total > 100', "orders")
        memory.add_rule("no_crypto", "avoid", 'payment in ["btc", "eth"]', "orders")
        memory.add_rule("prefer_card", "prefer", 'payment == "card"', "orders")
        memory.add_rule("max_discount", "must", "discount <= 0.2", "pricing")
        context = {"region": "US", "total": 50, "payment": "btc"}
        found = {(v.rule, v.level, v.blocking) for v in memory.check_rules("orders", context)}
        assert found == {
            ("eu_big", "should", False),
            ("no_crypto", "avoid", False),
            ("prefer_card", "prefer", False),
        }
        assert [r.name for r in memory.get_rules("orders")] == [
            "eu_big",
            "no_crypto",
            "prefer_card",
        ]
        assert len(memory.get_rules()) == 4
        memory.remove_rule("no_crypto")
        assert [r.name for r in memory.get_rules("orders")] == ["eu_big", "prefer_card"]
        with pytest.raises(NotFound):
            memory.remove_rule("no_crypto")


def test_rules_survive_a_restart(tmp_path: Path) -> None:
    with open_memory(tmp_path) as memory:
        memory.add_rule("max_discount", "must", "discount <= 0.20", "pricing")
        memory.checkpoint()
        memory.add_rule("min_total", "should", "total >= 10", "pricing")
    with open_memory(tmp_path) as memory:
        assert [r.name for r in memory.get_rules("pricing")] == ["max_discount", "min_total"]


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        ("discount <=", "expected a value at position 11"),
        ('"EU" > 5', "cannot apply '>' to a string and a number"),
        ("a ==== b", "position 4"),
        ('__import__("os").system("true")', "unexpected '\\('"),
        ("a @ 2", "unexpected character '@'"),
        ("(a > 1", "expected '\\)'"),
        ("", "must not be empty"),
        ("x > true", "cannot take a boolean"),
    ],
)
def test_bad_conditions_are_refused_at_add_rule_time(
    tmp_path: Path, condition: str, message: str
) -> None:
    with open_memory(tmp_path) as memory:
        with pytest.raises(ConditionError, match=message):
            memory.add_rule("r", "must", condition, "pricing")
        assert memory.get_rules() == []


def test_unknown_names_are_refused_at_add_time_when_the_variables_are_declared(
    tmp_path: Path,
) -> None:
    with (
        open_memory(tmp_path) as memory,
        pytest.raises(ConditionError, match=r"unknown names \['discont'\]"),
    ):
        memory.add_rule("r", "must", "discont <= 0.2", "pricing", variables=["discount"])


def test_unknown_levels_are_refused(tmp_path: Path) -> None:
    with open_memory(tmp_path) as memory, pytest.raises(ValueError, match="must, should"):
        memory.add_rule("r", "never", "a > 1", "x")


def test_check_time_errors_name_the_rule(tmp_path: Path) -> None:
    with open_memory(tmp_path) as memory:
        memory.add_rule("max_discount", "must", "discount <= 0.20", "pricing")
        with pytest.raises(ConditionError, match=r"rule 'max_discount': .*'discount'"):
            memory.check_rules("pricing", {})
        with pytest.raises(ConditionError, match="rule 'max_discount'"):
            memory.check_rules("pricing", {"discount": "a lot"})


@pytest.mark.parametrize(
    ("condition", "context", "expected"),
    [
        ("a + b * 2 == 7", {"a": 1, "b": 3}, True),
        ("-a < 0", {"a": 1}, True),
        ("not (x in [1, 2])", {"x": 3}, True),
        ("x not in [1, 2]", {"x": 2}, False),
        ("customer.tier == 'gold' or total > 1e3", {"customer": {"tier": "x"}, "total": 5}, False),
        ("name >= 'b' and name < 'c'", {"name": "bob"}, True),
        ("flag == true and other == null", {"flag": True, "other": None}, True),
        ("'a\\'b' == s", {"s": "a'b"}, True),
    ],
)
def test_condition_semantics(condition: str, context: dict[str, Any], expected: bool) -> None:
    assert parse_condition(condition).evaluate(context) is expected


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_text_either_parses_or_raises_condition_error(source: str) -> None:
    try:
        condition = parse_condition(source)
    except ConditionError:
        return
    with contextlib.suppress(ConditionError):
        condition.evaluate({})


_ATOMS = st.sampled_from(["a", "b.c", "1", "2.5", "'x'", "true", "null", "[1, 'y']", "(a)"])
_OPS = st.sampled_from(["<", "<=", "==", "!=", "in", "not in", "+", "-", "*", "/", "and", "or"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_ATOMS, _OPS), min_size=1, max_size=6), _ATOMS)
def test_generated_expressions_never_escape_the_grammar(
    parts: list[tuple[str, str]], last: str
) -> None:
    source = " ".join(f"{atom} {op}" for atom, op in parts) + f" {last}"
    context = {"a": 3, "b": {"c": "z"}}
    with contextlib.suppress(ConditionError):
        parse_condition(source).evaluate(context)
