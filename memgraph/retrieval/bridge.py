"""A second search for a question that describes the person it asks about.

"What does the relative who dogsat Pickles in November do for a living?" names no
one the answer speaks of. The text that says who dogsat Pickles ("Noah is flying
in from Denver to dogsit") names the relative; another text says what Noah does.
The first search finds the describing text. The names it holds that the question
does not (the bridge) are searched for again, with the question's words that
text does not hold ("do for a living"), and the best of that second search join
the best of the first.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

from memgraph.retrieval.ranking import Candidate
from memgraph.text import in_any_form, index_terms, words

__all__ = [
    "ADDED",
    "BRIDGES",
    "KEPT_FIRST",
    "READ_FIRST",
    "asks_about_someone_described",
    "bridge_names",
    "bridged",
    "describes_someone",
    "second_query",
]

READ_FIRST = 3
"""How many of the first search's best candidates are read for a bridge's name."""
BRIDGES = 2
"""How many bridge names are searched for."""
KEPT_FIRST = 3
"""How many of the first search's best stay ahead of what the second one adds."""
ADDED = 3
"""How many of the second search's best join, after those."""

_DESCRIBED = re.compile(
    r"\b(?:the|a|an|her|his|their|my|your|[A-Z][\w-]*['’]s)\s+(?:[\w'’-]+\s+){0,3}?"
    r"(?:who|whom|whose)\b",
    re.IGNORECASE,
)
"""Someone the question describes instead of naming: "the relative who knitted
Juno's jumper", "the crewmate whose lab ..."."""
_DESCRIBED_BY_A_CLAUSE = re.compile(
    r"\b(?i:the)\s+(?i:person|man|woman|guy|girl|friend|relative|one|colleague|coworker|"
    r"neighbou?r)\s+[A-Z][\w'’-]*\s+(?!and\b|or\b)[a-z]"
)
"""Someone described by what a named person did, with no "who": "the person
Tendai played it for", "the man Tolu started dating"."""
_ONE_OF_THEIR_PEOPLE = re.compile(
    r"^\s*(?:which|who)\s+of\s+[A-Z][\w-]*['’]s?\s+(?:[\w-]+\s+){0,2}?"
    r"(?:relatives|family|siblings|children|kids|sons|daughters|brothers|sisters|cousins|"
    r"aunts|uncles|grandparents|parents|friends|mates|classmates|teammates|colleagues|"
    r"coworkers|co-workers|flatmates|roommates|housemates|neighbou?rs|students|clients|"
    r"members|bandmates|crewmates|bosses)\b",
    re.IGNORECASE,
)
"""One of someone's people, asked for by what they did: "Which of Hiroshi's
classmates had a piece break in the kiln?" asks about the classmate."""
_APPOSITION = re.compile(
    r"\b[A-Z][\w'’-]+,\s+(?:[A-Z][\w-]*['’]s|the|a|an|her|his|their)\s+(?:[\w-]+\s+){0,2}?[\w-]+,"
)
"""Someone named and then described by whose they are: "What does Freja, Maya's
flatmate, do for work?" asks about Freja, not about Maya."""
_WORD = re.compile(r"[^\W\d_][\w'’-]*")


_CAPITALISED = re.compile(r"(?<=\s)[A-Z][\w'’-]*")
"""A capitalised word after the question's first: where it names someone."""


def asks_about_someone_described(question: str) -> bool:
    """Whether the question asks about someone it describes before it names
    anyone ("What does the person Tendai played it for do?", "In which town does
    the person who minds Wanjiru's kids live?"), not about whom it names first
    ("What does Calvin feel at the relief of someone whose car he fixed?"), or
    one of someone's people ("Which of Hiroshi's classmates sold out his
    teapots?"), or someone named and then described ("What does Freja, Maya's
    flatmate, do for work?")."""
    if _APPOSITION.search(question):
        return True
    found = [
        m.start()
        for m in (
            _DESCRIBED.search(question),
            _DESCRIBED_BY_A_CLAUSE.search(question),
            _ONE_OF_THEIR_PEOPLE.search(question),
        )
        if m is not None
    ]
    if not found:
        return False
    named = _CAPITALISED.search(question)
    return named is None or min(found) < named.start()


def describes_someone(question: str) -> bool:
    """Whether the question speaks of someone by what they did ("the flatmate who
    quizzed Joris"), not by name."""
    return _DESCRIBED.search(question) is not None


def bridge_names(
    texts: Sequence[str], person: Callable[[str], str | None], asked: set[str]
) -> list[str]:
    """The names of people (``person``: a word's person entity's name, if any) the
    texts hold, in the order they first come, that are not among ``asked`` (the
    question's own names, as entity names)."""
    found: list[str] = []
    for text in texts:
        for match in _WORD.finditer(text):
            word = re.sub(r"['’]s$", "", match.group())
            name = person(word)
            if name is not None and name not in asked and name not in found:
                found.append(name)
    return found


def second_query(question: str, name: str, held: Sequence[str]) -> str:
    """The bridge's name and the words of ``question`` the describing texts
    (``held``) do not hold."""
    said = in_any_form(t for text in held for t in index_terms(text))
    kept = [w for w in words(question) if not set(index_terms(w)) & said]
    return " ".join([name, *kept])


def bridged(
    question: str,
    first: list[Candidate],
    texts: Callable[[Sequence[Candidate]], list[str]],
    person: Callable[[str], str | None],
    asked: set[str],
    search: Callable[[str], list[Candidate]],
) -> list[Candidate]:
    """``first`` (the first search's ranking) with what a second search for each
    bridge name finds: its best :data:`ADDED` new candidates after the first
    :data:`KEPT_FIRST`. ``texts`` reads candidates' texts; ``search`` runs a search.
    ``first`` as it is when the question names whom it asks about or no bridge is
    found."""
    if not first or not describes_someone(question):
        return first
    read = texts(first[:READ_FIRST])
    names = bridge_names(read, person, asked)[:BRIDGES]
    if not names:
        return first
    kept = first[:KEPT_FIRST]
    taken = {c.id for c in kept}
    each: list[list[Candidate]] = []
    for name in names:
        found = [c for c in search(second_query(question, name, read)) if c.id not in taken]
        each.append(found[:ADDED])
    # the names' best in turn: the first name's best, the second's, ...
    added: list[Candidate] = []
    for rank in range(ADDED):
        for found in each:
            if rank < len(found) and found[rank].id not in taken and len(added) < ADDED:
                taken.add(found[rank].id)
                added.append(found[rank])
    if not added:
        return first
    # in the order shown, no higher than the last of the first search kept
    below = kept[-1].score
    added = [dataclasses.replace(c, score=min(c.score, below)) for c in added]
    return kept + added + [c for c in first[KEPT_FIRST:] if c.id not in taken]
