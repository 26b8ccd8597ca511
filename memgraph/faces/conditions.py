"""A small, safe expression language for owner-rule conditions.

Grammar (no ``eval``, no attribute access, no calls)::

    expr       := or_expr
    or_expr    := and_expr ("or" and_expr)*
    and_expr   := not_expr ("and" not_expr)*
    not_expr   := "not" not_expr | comparison
    comparison := sum (("<" | "<=" | ">" | ">=" | "==" | "!=" | "in" | "not in") sum)?
    sum        := product (("+" | "-") product)*
    product    := unary (("*" | "/") unary)*
    unary      := "-" unary | atom
    atom       := NUMBER | STRING | "true" | "false" | "null" | NAME ("." NAME)*
                | "(" expr ")" | "[" (expr ("," expr)*)? "]"

Names are looked up in the context mapping (``customer.tier`` reads
``context["customer"]["tier"]``). Parsing checks syntax and the types of
literal operands; evaluation checks the types of looked-up values.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memgraph.errors import MemgraphError

__all__ = ["Condition", "ConditionError", "parse_condition"]

MAX_LENGTH = 2_000
MAX_DEPTH = 50
"""Deepest nesting of brackets, ``not`` and ``-`` a condition may use."""
MAX_TREE_DEPTH = 100
"""Deepest tree a condition may parse to: ``a + a + ... + a`` nests one level per
operator, and evaluating deeper trees would exhaust Python's stack."""


class ConditionError(MemgraphError, ValueError):
    """A rule condition is malformed, or cannot be evaluated on a context."""


_TOKEN = re.compile(
    r"""\s*(?:
      (?P<number>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)
    | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
    | (?P<op><=|>=|==|!=|<|>|\+|-|\*|/|\(|\)|\[|\]|,|\.)
    | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    )""",
    re.VERBOSE,
)
_KEYWORDS = {"and", "or", "not", "in", "true", "false", "null", "True", "False", "None"}
_CONSTANTS = {
    "true": True,
    "True": True,
    "false": False,
    "False": False,
    "null": None,
    "None": None,
}
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'"}


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    position: int


def _tokenize(source: str) -> list[_Token]:
    tokens: list[_Token] = []
    position = 0
    while position < len(source):
        if source[position:].strip() == "":
            break
        match = _TOKEN.match(source, position)
        if match is None or match.end() == position:
            start = len(source) - len(source[position:].lstrip())
            raise ConditionError(f"unexpected character {source[start]!r} at position {start}")
        kind = match.lastgroup or ""
        text = match.group(kind)
        tokens.append(_Token(kind, text, match.start(kind)))
        position = match.end()
    tokens.append(_Token("end", "", len(source)))
    return tokens


# AST nodes are tuples: ("lit", value) | ("name", (parts...)) | ("list", [nodes])
# | ("not", node) | ("neg", node) | ("bool", "and"/"or", [nodes]) | ("bin", op, left, right)
Node = tuple[Any, ...]


class _Parser:
    def __init__(self, source: str) -> None:
        self.tokens = _tokenize(source)
        self.index = 0
        self.depth = 0

    def peek(self) -> _Token:
        return self.tokens[self.index]

    def take(self) -> _Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def accept(self, text: str) -> bool:
        token = self.peek()
        if token.kind in ("op", "name") and token.text == text:
            self.index += 1
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.accept(text):
            token = self.peek()
            found = repr(token.text) if token.text else "the end"
            raise ConditionError(f"expected {text!r} at position {token.position}, found {found}")

    def nested(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ConditionError(f"condition nests deeper than {MAX_DEPTH} levels")

    def parse(self) -> Node:
        node = self.or_expr()
        token = self.peek()
        if token.kind != "end":
            raise ConditionError(f"unexpected {token.text!r} at position {token.position}")
        return node

    def or_expr(self) -> Node:
        parts = [self.and_expr()]
        while self.accept("or"):
            parts.append(self.and_expr())
        return parts[0] if len(parts) == 1 else ("bool", "or", parts)

    def and_expr(self) -> Node:
        parts = [self.not_expr()]
        while self.accept("and"):
            parts.append(self.not_expr())
        return parts[0] if len(parts) == 1 else ("bool", "and", parts)

    def not_expr(self) -> Node:
        if self.accept("not"):
            self.nested()
            node = ("not", self.not_expr())
            self.depth -= 1
            return node
        return self.comparison()

    def comparison(self) -> Node:
        left = self.sum()
        token = self.peek()
        if token.kind == "op" and token.text in ("<", "<=", ">", ">=", "==", "!="):
            self.take()
            return _typed(("bin", token.text, left, self.sum()), token.position)
        if token.kind == "name" and token.text == "in":
            self.take()
            return ("bin", "in", left, self.sum())
        if (
            token.kind == "name"
            and token.text == "not"
            and self.tokens[self.index + 1].text == "in"
        ):
            self.index += 2
            return ("bin", "not in", left, self.sum())
        return left

    def sum(self) -> Node:
        node = self.product()
        while self.peek().kind == "op" and self.peek().text in ("+", "-"):
            token = self.take()
            node = _typed(("bin", token.text, node, self.product()), token.position)
        return node

    def product(self) -> Node:
        node = self.unary()
        while self.peek().kind == "op" and self.peek().text in ("*", "/"):
            token = self.take()
            node = _typed(("bin", token.text, node, self.unary()), token.position)
        return node

    def unary(self) -> Node:
        if self.accept("-"):
            self.nested()
            node = ("neg", self.unary())
            self.depth -= 1
            return node
        return self.atom()

    def atom(self) -> Node:
        token = self.take()
        if token.kind == "number":
            return (
                "lit",
                float(token.text) if any(c in token.text for c in ".eE") else int(token.text),
            )
        if token.kind == "string":
            body = token.text[1:-1]
            return ("lit", re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body))
        if token.kind == "name" and token.text in _CONSTANTS:
            return ("lit", _CONSTANTS[token.text])
        if token.kind == "name" and token.text not in _KEYWORDS:
            parts = [token.text]
            while self.accept("."):
                part = self.take()
                if part.kind != "name" or part.text in _KEYWORDS:
                    raise ConditionError(f"expected a field name at position {part.position}")
                parts.append(part.text)
            return ("name", tuple(parts))
        if token.kind == "op" and token.text == "(":
            self.nested()
            node = self.or_expr()
            self.expect(")")
            self.depth -= 1
            return node
        if token.kind == "op" and token.text == "[":
            self.nested()
            items: list[Node] = []
            if not self.accept("]"):
                items.append(self.or_expr())
                while self.accept(","):
                    items.append(self.or_expr())
                self.expect("]")
            self.depth -= 1
            return ("list", items)
        found = repr(token.text) if token.text else "the end"
        raise ConditionError(f"expected a value at position {token.position}, found {found}")


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, (list, tuple)):
        return "list"
    return type(value).__name__


def _typed(node: Node, position: int) -> Node:
    """Reject operators applied to literals of the wrong types, at parse time."""
    _, op, left, right = node
    if left[0] == "lit" and right[0] == "lit":
        _check_operands(op, left[1], right[1], f"at position {position}")
    for side in (left, right):
        if side[0] == "lit" and op in ("<", "<=", ">", ">=", "+", "-", "*", "/"):
            kind = _kind(side[1])
            if kind not in ("number", "string") or (kind == "string" and op in "-*/"):
                raise ConditionError(f"{op!r} cannot take a {kind} at position {position}")
    return node


def _check_operands(op: str, left: Any, right: Any, where: str) -> None:
    if op in ("==", "!="):
        return
    if op in ("in", "not in"):
        if not isinstance(right, (list, tuple, str)):
            raise ConditionError(f"{op!r} needs a list or a string on its right {where}")
        return
    kinds = (_kind(left), _kind(right))
    if op == "+" and kinds == ("string", "string"):
        return
    if kinds != ("number", "number") and not (
        op in ("<", "<=", ">", ">=") and kinds == ("string", "string")
    ):
        raise ConditionError(f"cannot apply {op!r} to a {kinds[0]} and a {kinds[1]} {where}")


@dataclass(frozen=True)
class Condition:
    """A parsed condition: evaluate it on a context with :meth:`evaluate`."""

    source: str
    tree: Node

    def names(self) -> set[str]:
        """The top-level context names the condition reads."""
        found: set[str] = set()

        def walk(node: Node) -> None:
            if node[0] == "name":
                found.add(node[1][0])
            elif node[0] in ("not", "neg"):
                walk(node[1])
            elif node[0] == "bool" or node[0] == "list":
                for child in node[-1]:
                    walk(child)
            elif node[0] == "bin":
                walk(node[2])
                walk(node[3])

        walk(self.tree)
        return found

    def evaluate(self, context: Mapping[str, Any]) -> bool:
        """True when the condition holds for ``context``.

        Raises:
            ConditionError: a name is missing, or values have the wrong types.
        """
        return bool(_evaluate(self.tree, context))

    def explain(self, context: Mapping[str, Any]) -> str:
        """The condition followed by the values it read, e.g. ``discount <= 0.2 (discount = 0.25)``."""
        values = []
        for name in sorted(self.names()):
            values.append(f"{name} = {_shown(context.get(name))}")
        return f"{self.source} ({', '.join(values)})" if values else self.source


def _lookup(parts: tuple[str, ...], context: Mapping[str, Any]) -> Any:
    value: Any = context
    for depth, part in enumerate(parts):
        if not isinstance(value, Mapping) or part not in value:
            name = ".".join(parts[: depth + 1])
            raise ConditionError(f"the context has no value for {name!r}")
        value = value[part]
    return value


def _evaluate(node: Node, context: Mapping[str, Any]) -> Any:
    kind = node[0]
    if kind == "lit":
        return node[1]
    if kind == "name":
        return _lookup(node[1], context)
    if kind == "list":
        return [_evaluate(item, context) for item in node[1]]
    if kind == "not":
        return not _truth(_evaluate(node[1], context))
    if kind == "neg":
        value = _evaluate(node[1], context)
        if _kind(value) != "number":
            raise ConditionError(f"cannot negate a {_kind(value)}")
        return -value
    if kind == "bool":
        if node[1] == "and":
            return all(_truth(_evaluate(part, context)) for part in node[2])
        return any(_truth(_evaluate(part, context)) for part in node[2])
    _, op, left_node, right_node = node
    left, right = _evaluate(left_node, context), _evaluate(right_node, context)
    _check_operands(op, left, right, "")
    try:
        return _OPERATORS[op](left, right)
    except ZeroDivisionError as exc:
        raise ConditionError("division by zero") from exc
    except OverflowError as exc:
        raise ConditionError(f"{op!r} overflows on {_shown(left)} and {_shown(right)}") from exc
    except TypeError as exc:
        raise ConditionError(f"cannot apply {op!r} to {_shown(left)} and {_shown(right)}") from exc


def _truth(value: Any) -> bool:
    return bool(value)


_OPERATORS: dict[str, Any] = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "in": lambda a, b: a in b,
    "not in": lambda a, b: a not in b,
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
}


def parse_condition(source: str) -> Condition:
    """Parse a rule condition.

    Raises:
        ConditionError: the condition is not a string, too long, or malformed;
            the message gives the position.
    """
    if not isinstance(source, str):
        raise ConditionError(f"a condition must be a string, got {type(source).__name__}")
    if not source.strip():
        raise ConditionError("a condition must not be empty")
    if len(source) > MAX_LENGTH:
        raise ConditionError(f"a condition is at most {MAX_LENGTH} characters long")
    tree = _Parser(source).parse()
    if _tree_depth(tree) > MAX_TREE_DEPTH:
        raise ConditionError(
            f"condition nests deeper than {MAX_TREE_DEPTH} levels (a chain of that many "
            "operators); split it into several rules"
        )
    return Condition(source.strip(), tree)


def _children(node: Node) -> list[Node]:
    kind = node[0]
    if kind in ("not", "neg"):
        return [node[1]]
    if kind in ("bool", "list"):
        return list(node[-1])
    if kind == "bin":
        return [node[2], node[3]]
    return []


def _tree_depth(tree: Node) -> int:
    """The depth of ``tree``, found without recursion."""
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in _children(node))
    return deepest


def _shown(value: Any) -> str:
    """``repr(value)`` for a message, shortened; an integer too long to print as
    decimal (Python refuses over 4,300 digits) is described instead."""
    try:
        text = repr(value)
    except ValueError:
        return f"<an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits>"
    return text if len(text) <= 200 else text[:197] + "..."
