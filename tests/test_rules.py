"""Owner rules and the condition language (never eval)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memgraph import Memory, NotFound
from memgraph.faces.conditions import MAX_TREE_DEPTH, ConditionError, parse_condition


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
    assert condition.source == source.strip()
    assert parse_condition(condition.source).tree == condition.tree  # parsing is a function
    try:
        value = condition.evaluate({})
    except ConditionError:
        return
    assert value is True or value is False


_ATOMS = st.sampled_from(["a", "b.c", "1", "2.5", "'x'", "true", "null", "[1, 'y']", "(a)"])
_OPS = st.sampled_from(["<", "<=", "==", "!=", "in", "not in", "+", "-", "*", "/", "and", "or"])


class _Fields:
    """``b.c`` for Python's evaluation of the same expression."""

    c = "z"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_ATOMS, _OPS), min_size=1, max_size=6), _ATOMS)
def test_generated_expressions_evaluate_as_python_would(
    parts: list[tuple[str, str]], last: str
) -> None:
    # Python evaluates the same expressions (the grammar is a subset of its own, with
    # true/null for True/None): wherever a condition evaluates, Python agrees on its
    # truth, so precedence, associativity and operator meaning match.
    source = " ".join(f"{atom} {op}" for atom, op in parts) + f" {last}"
    try:
        holds = parse_condition(source).evaluate({"a": 3, "b": {"c": "z"}})
    except ConditionError:
        return
    python = source.replace("true", "True").replace("null", "None")
    expected = eval(python, {"__builtins__": {}}, {"a": 3, "b": _Fields()})
    assert holds is bool(expected)


@pytest.mark.parametrize(
    ("source", "context", "expected"),
    [
        ("a + 1 * 2 > 4", {"a": 3}, True),
        ("not a in [1, 2] or a - 1 - 1 == 1", {"a": 3}, True),
        ("a / 2 * 2 == a and 'x' in 'xyz'", {"a": 3}, True),
        ("[1, [2, a]] == [1, [2, 3]]", {"a": 3}, True),
    ],
)
def test_fixed_expressions_evaluate_as_python_would(
    source: str, context: dict[str, Any], expected: bool
) -> None:
    assert parse_condition(source).evaluate(context) is expected
    assert bool(eval(source, {"__builtins__": {}}, dict(context))) is expected


def test_a_long_chain_of_operators_is_refused_at_add_rule(tmp_path: Path) -> None:
    chain = "+".join(["a"] * 990) + " > 0"
    with open_memory(tmp_path) as memory:
        with pytest.raises(ConditionError, match="deeper than"):
            memory.add_rule("long", "must", chain, "pricing")
        memory.add_rule("cap", "must", "discount <= 0.2", "pricing")
        violated = memory.check_rules("pricing", {"a": 1, "discount": 0.5})
        assert [v.rule for v in violated] == ["cap"]


def test_a_chain_within_the_limit_is_accepted_and_checked(tmp_path: Path) -> None:
    chain = "+".join(["a"] * (MAX_TREE_DEPTH - 1)) + " > 0"  # a tree exactly that deep
    with open_memory(tmp_path) as memory:
        memory.add_rule("sum", "must", chain, "pricing")
        assert memory.check_rules("pricing", {"a": 1}) == []
        assert [v.rule for v in memory.check_rules("pricing", {"a": -1})] == ["sum"]


@pytest.mark.parametrize("source", ["[" * 600 + "]" * 600 + " == 1", "[" * 51 + "1" + "]" * 51])
def test_deeply_nested_lists_are_refused_with_condition_error(source: str) -> None:
    with pytest.raises(ConditionError, match="deeper than"):
        parse_condition(source)


def test_a_context_integer_too_long_to_print_is_checked_and_explained(tmp_path: Path) -> None:
    huge = 10**5000
    with open_memory(tmp_path) as memory:
        memory.add_rule("small", "must", "n < 5", "sizes")
        assert memory.check_rules("sizes", {"n": 4}) == []
        [violation] = memory.check_rules("sizes", {"n": huge})
    assert violation.rule == "small"
    assert "5,001 digits" in violation.why


def test_an_overflow_with_a_huge_integer_names_it_without_printing_it() -> None:
    with pytest.raises(ConditionError, match="overflows on <an integer of about 5,001 digits>"):
        parse_condition("n / 1.5 > 0").evaluate({"n": 10**5000})
