"""Owner rules: named conditions with a level, checked against a context.

Levels: ``must`` (a hard block), ``should`` (a warning), ``prefer`` (a soft
preference) — each is violated when its condition is *false* — and ``avoid``,
violated when its condition is *true*. Rules are not namespaced by agent: one
rulebook per memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from memgraph.faces.conditions import Condition, ConditionError, parse_condition
from memgraph.graph.graph import EXTRA_OPS, Doc, Graph

__all__ = ["LEVELS", "Rule", "Violation", "check", "rule_op", "rules_of"]

LEVELS = ("must", "should", "avoid", "prefer")


@dataclass(frozen=True)
class Rule:
    """A stored owner rule."""

    name: str
    level: str
    condition: str
    category: str
    created_at: str

    @property
    def blocking(self) -> bool:
        """True for ``must`` rules: a violation should stop the action."""
        return self.level == "must"


@dataclass(frozen=True)
class Violation:
    """A rule a context breaks, and why."""

    rule: str
    level: str
    why: str
    blocking: bool


def _rules(graph: Graph) -> dict[str, Doc]:
    rules: dict[str, Doc] = graph.extra.setdefault("rules", {})
    return rules


def rules_of(graph: Graph, category: str | None = None) -> list[Rule]:
    """Every rule, or the rules of one category, in the order they were added."""
    return [
        Rule(name, doc["level"], doc["condition"], doc["category"], doc.get("createdAt") or "")
        for name, doc in _rules(graph).items()
        if category is None or doc["category"] == category
    ]


def rule_op(
    name: str,
    level: str,
    condition: str,
    category: str,
    *,
    at: str,
    variables: Iterable[str] | None = None,
) -> Doc:
    """The op adding (or replacing) a rule, after checking it.

    Raises:
        ValueError: an unknown level, or an empty name or category.
        ConditionError: the condition does not parse, compares literals of
            the wrong types, or reads names outside ``variables``.
    """
    if level not in LEVELS:
        raise ValueError(f"unknown rule level {level!r}; use one of: {', '.join(LEVELS)}")
    for value, what in ((name, "rule name"), (category, "rule category")):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"the {what} must be a non-empty string, got {value!r}")
    parsed = parse_condition(condition)
    if variables is not None:
        unknown = parsed.names() - set(variables)
        if unknown:
            raise ConditionError(
                f"rule {name!r} reads unknown names {sorted(unknown)}; "
                f"known names: {sorted(set(variables))}"
            )
    rule = {"level": level, "condition": parsed.source, "category": category, "createdAt": at}
    return {"op": "rule", "action": "add", "name": name, "rule": rule}


def check(graph: Graph, category: str, context: Mapping[str, Any]) -> list[Violation]:
    """The rules of ``category`` that ``context`` violates.

    Raises:
        ConditionError: a rule reads a name the context lacks, or a value of
            the wrong type; the message names the rule.
    """
    violations = []
    for rule in rules_of(graph, category):
        condition: Condition = parse_condition(rule.condition)
        try:
            holds = condition.evaluate(context)
        except ConditionError as exc:
            raise ConditionError(f"rule {rule.name!r}: {exc}") from exc
        violated = holds if rule.level == "avoid" else not holds
        if violated:
            state = "holds" if holds else "does not hold"
            why = f"{rule.level} rule {rule.name!r}: {condition.explain(context)} {state}"
            violations.append(Violation(rule.name, rule.level, why, rule.blocking))
    return violations


def _apply(graph: Graph, op: Doc) -> None:
    rules = _rules(graph)
    if op["action"] == "add":
        rules[op["name"]] = dict(op["rule"])
    elif op["action"] == "remove":
        rules.pop(op["name"], None)


EXTRA_OPS["rule"] = _apply
