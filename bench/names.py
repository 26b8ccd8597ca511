"""Workloads of names that share a word, and the scenario that times queries naming them.

Three seeded workloads, one entity and one fact per text (``n`` observations =
``n`` entities), each entity linked to an earlier one:

* ``numbered``: every entity is ``Person_1`` … ``Person_N`` (the word
  ``person`` is in every name, and is also every entity's type).
* ``surname``: N people who all share the surname Smith, with distinct first
  names (``Maria Smith``, ``James Smith``, … then made-up ones such as
  ``Karimo Smith``).
* ``prefix``: N places whose names share a four-word prefix and differ in the
  last word (``Northwind Regional Sales Office Karimo``).

Queries come in three kinds: ``full`` names one entity fully ("Where does
Maria Smith work?"), ``shared`` names only the shared word or prefix
("Smith", "Who is Smith?"), ``topical`` names nobody ("which data engineers
work in Oslo"). The ``names`` scenario times ``recall`` and ``search`` per
kind and, from a fresh process (:mod:`bench.coldopen`), opening the scope
through the first query of each kind.
"""

from __future__ import annotations

import random
from typing import Any

from bench.workload import (
    _SYLLABLES,
    CITIES,
    DOMAINS,
    ROLES,
    Item,
    Workload,
    _mix,
    _Picker,
    _split,
)

__all__ = [
    "KINDS",
    "NAME_WORKLOADS",
    "NamesWorkload",
    "NumberedWorkload",
    "PrefixWorkload",
    "SurnameWorkload",
    "distinct_names",
]

SURNAME = "Smith"
PREFIX = "Northwind Regional Sales Office"
KINDS = ("full", "shared", "topical")

_REAL = _split(
    "Maria James Anna John Elena David Sofia Michael Laura Daniel Emma Thomas Olivia Peter "
    "Clara Lucas Hannah Mateo Ines Omar Priya Kenji Amara Tomas Freya Rafael Leila Jonas "
    "Yara Ivan Nadia Felix Zara Hugo Mina Oscar Aisha Leon Greta Arjun"
)
_TAKEN = {w.lower() for text in (*ROLES, *CITIES, *DOMAINS) for w in text.split()} | {
    SURNAME.lower(),
    *PREFIX.lower().split(),
    "person",
}


def distinct_names(count: int, seed: int) -> list[str]:
    """``count`` distinct capitalized first names: common real ones, then made-up ones of
    two to four syllables (none equal to a word the workloads use elsewhere)."""
    names = list(_REAL[:count])
    seen = {n.lower() for n in names} | _TAKEN
    index = 0
    while len(names) < count:
        index += 1
        value = _mix(seed, index, 11)
        parts = 2 + value % 3
        word = ""
        for _ in range(parts):
            value //= 3 if not word else len(_SYLLABLES)
            word += _SYLLABLES[value % len(_SYLLABLES)]
        if word not in seen:
            seen.add(word)
            names.append(word.capitalize())
    return names


class NamesWorkload(Workload):
    """One entity with one fact per text; names from :meth:`entity_name`."""

    entity_type = "person"
    relation = ("works_with", "works with")

    def __init__(self, seed: int = 7) -> None:
        super().__init__(seed)
        self._fields: list[tuple[int, int, int]] = []  # (role, city, domain) per entity
        self._firsts: list[str] = []

    def first_name(self, number: int) -> str:
        """The distinct word of entity ``number``'s name."""
        while len(self._firsts) <= number:
            self._firsts = distinct_names(max(2 * len(self._firsts), number + 1, 1024), self.seed)
        return self._firsts[number]

    def entity_name(self, number: int) -> str:
        raise NotImplementedError

    def fact(self, role: int, city: int, domain: int) -> str:
        return f"works as a {ROLES[role]} in {CITIES[city]} on {DOMAINS[domain]}"

    def _next(self) -> Item:
        i = self.position
        p = _Picker(self.seed, i)
        fields = (p.below(len(ROLES)), p.below(len(CITIES)), p.below(len(DOMAINS)))
        self._fields.append(fields)
        name = self.entity_name(i)
        fact = self.fact(*fields)
        text = f"{name} {fact}."
        relations: list[dict[str, str]] = []
        if i > 0:
            other = self.entity_name(p.below(i))
            text += f" {name} {self.relation[1]} {other}."
            relations.append({"from": name, "to": other, "type": self.relation[0]})
        reply: dict[str, Any] = {
            "entities": [{"name": name, "type": self.entity_type, "observations": [fact]}],
            "relations": relations,
            "expirations": [],
        }
        self.position += 1
        self.observations += 1
        return Item(text, reply, 1)

    def full_queries(self, name: str) -> tuple[str, ...]:
        raise NotImplementedError

    def shared_queries(self) -> tuple[str, ...]:
        raise NotImplementedError

    def topical_queries(self, role: str, city: str, domain: str) -> tuple[str, ...]:
        return (
            f"which {role}s work in {city}",
            f"who works on {domain} in {city}",
            f"{role}s working on {domain}",
        )

    def queries(self, count: int) -> list[tuple[str, str]]:
        """``(kind, query)`` pairs, the kinds in turn (``full``, ``shared``, ``topical``)."""
        return [(kind, query) for kind, query, _name in self._queries(count)]

    def named_queries(self, kind: str, count: int) -> list[tuple[str, str]]:
        """``count`` queries of one kind, each with the name of the entity it names
        fully ("" for the other kinds)."""
        found = [(q, name) for k, q, name in self._queries(count * len(KINDS)) if k == kind]
        return found[:count]

    def _queries(self, count: int) -> list[tuple[str, str, str]]:
        rng = random.Random(self.seed * 43 + self.position)
        out: list[tuple[str, str, str]] = []
        for n in range(count):
            kind = KINDS[n % len(KINDS)]
            j = rng.randrange(self.position)
            role, city, domain = self._fields[j]
            name = ""
            if kind == "full":
                name = self.entity_name(j)
                choices = self.full_queries(name)
            elif kind == "shared":
                choices = self.shared_queries()
            else:
                choices = self.topical_queries(ROLES[role], CITIES[city], DOMAINS[domain])
            out.append((kind, rng.choice(choices), name))
        return out

    def one_sentence(self, number: int) -> Item:
        rng = random.Random(self.seed * 97 + number)
        name = self.entity_name(rng.randrange(self.position))
        fact = f"moved to {CITIES[rng.randrange(len(CITIES))]} last spring"
        reply = {
            "entities": [{"name": name, "type": self.entity_type, "observations": [fact]}],
            "relations": [],
            "expirations": [],
        }
        return Item(f"{name} {fact}.", reply, 1)


class NumberedWorkload(NamesWorkload):
    """``Person_1`` … ``Person_N``."""

    name = "numbered"

    def entity_name(self, number: int) -> str:
        return f"Person_{number + 1}"

    def full_queries(self, name: str) -> tuple[str, ...]:
        return (f"What does {name} do?", f"Where does {name} work?", f"Who is {name}?")

    def shared_queries(self) -> tuple[str, ...]:
        return ("Person", "Who is the person?", "person")


class SurnameWorkload(NamesWorkload):
    """N people surnamed Smith with distinct first names."""

    name = "surname"

    def entity_name(self, number: int) -> str:
        return f"{self.first_name(number)} {SURNAME}"

    def full_queries(self, name: str) -> tuple[str, ...]:
        return (f"Where does {name} work?", f"What does {name} do?", f"Who is {name}?")

    def shared_queries(self) -> tuple[str, ...]:
        return (SURNAME, f"Who is {SURNAME}?", f"What does {SURNAME} do?")


class PrefixWorkload(NamesWorkload):
    """N offices whose names share a four-word prefix and differ in their last word."""

    name = "prefix"
    entity_type = "office"
    relation = ("reports_to", "reports to")

    def entity_name(self, number: int) -> str:
        return f"{PREFIX} {self.first_name(number)}"

    def fact(self, role: int, city: int, domain: int) -> str:
        return f"employs a {ROLES[role]} in {CITIES[city]} for {DOMAINS[domain]}"

    def full_queries(self, name: str) -> tuple[str, ...]:
        return (f"Where is {name}?", f"Who works at {name}?", f"What does {name} handle?")

    def shared_queries(self) -> tuple[str, ...]:
        return (PREFIX, f"What do we know about {PREFIX}?", f"Where is {PREFIX}?")

    def topical_queries(self, role: str, city: str, domain: str) -> tuple[str, ...]:
        return (
            f"which offices employ a {role} in {city}",
            f"offices in {city} for {domain}",
            f"{role} for {domain}",
        )


NAME_WORKLOADS: dict[str, type[NamesWorkload]] = {
    "numbered": NumberedWorkload,
    "surname": SurnameWorkload,
    "prefix": PrefixWorkload,
}
