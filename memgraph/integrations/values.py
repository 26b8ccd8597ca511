"""JSON item values as the LangGraph store reads them: their text, and filters.

Framework-free, so the rules are testable without LangGraph installed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["matches", "value_text"]


def value_text(
    value: Any, paths: list[str] | None, text_at: Callable[[Any, str], list[str]]
) -> str:
    """The text of an item that memgraph remembers: the strings at ``paths``
    (LangGraph field paths, read with ``text_at``), or with no paths every string
    in the value and ``key: value`` for its numbers and booleans, one a line."""
    if paths is not None:
        return "\n".join(text for path in paths for text in text_at(value, path) if text.strip())
    lines: list[str] = []
    _leaves(value, None, lines)
    return "\n".join(lines)


def _leaves(value: Any, key: str | None, lines: list[str]) -> None:
    if isinstance(value, str):
        if value.strip():
            lines.append(value.strip())
    elif isinstance(value, bool | int | float):
        if key is not None:
            lines.append(f"{key}: {value}")
    elif isinstance(value, Mapping):
        for name, inner in value.items():
            _leaves(inner, str(name), lines)
    elif isinstance(value, list | tuple):
        for inner in value:
            _leaves(inner, key, lines)


def matches(value: Mapping[str, Any], conditions: Mapping[str, Any] | None) -> bool:
    """Whether an item's value satisfies a search ``filter``: equality of each
    field (nested objects field by field, lists element by element), or the
    operators ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte`` (as
    LangGraph's stores compare, after PostgreSQL's JSONB).

    Raises:
        ValueError: an unknown ``$`` operator.
    """
    return not conditions or all(_equal(value.get(k), v) for k, v in conditions.items())


def _equal(actual: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):
            return all(_compare(actual, op, operand) for op, operand in wanted.items())
        if not isinstance(actual, Mapping):
            return False
        return all(_equal(actual.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(wanted)
            and all(_equal(a, w) for a, w in zip(actual, wanted, strict=True))
        )
    return bool(actual == wanted)


def _compare(actual: Any, operator: str, operand: Any) -> bool:
    if operator == "$eq":
        return bool(actual == operand)
    if operator == "$ne":
        return bool(actual != operand)
    comparisons: dict[str, Callable[[float, float], bool]] = {
        "$gt": lambda a, b: a > b,
        "$gte": lambda a, b: a >= b,
        "$lt": lambda a, b: a < b,
        "$lte": lambda a, b: a <= b,
    }
    compare = comparisons.get(operator)
    if compare is None:
        raise ValueError(
            f"unknown filter operator {operator!r}; use $eq, $ne, $gt, $gte, $lt or $lte"
        )
    try:
        return compare(float(actual), float(operand))
    except (TypeError, ValueError):
        return False
