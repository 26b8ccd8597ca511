"""The offline chat reply: a simple, deterministic assistant over recalled facts.

:func:`reply` answers the user's last message the way a plain assistant would:

* a question (or a request such as "tell me ...") is answered from the facts
  of the memory context in a sentence (``User (person): works at Acme`` and
  "Where do I work?" give "You work at Acme."), or with "I don't know ..."
  when no fact is relevant;
* a greeting is greeted back;
* anything else is acknowledged in the second person ("I work at Acme." gives
  "Noted: you work at Acme.").

Facts about the entity ``User`` (the mock extractor's entity for "I") are
said to "you". Only the best-matching facts are used (at most three).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from memgraph.text import content_key, words

__all__ = ["NOT_KNOWN", "reply"]

NOT_KNOWN = "I don't know that; nothing I remember answers it."
"""The reply to a question that no remembered fact answers."""

GREETING_REPLY = "Hello! How can I help?"

_FACT = re.compile(r"^(?P<entity>.+?) \((?P<type>[^()]*)\): (?P<content>.+)$")
_DATED = re.compile(
    r"\s*[\[(][^\[\]()]*(?:\d{4}-\d{2}-\d{2}|\d{1,2} [A-Z][a-z]+ \d{4})[^\[\]()]*[\])]\s*"
)
_QUESTION_WORDS = frozenset(
    [
        "what",
        "where",
        "when",
        "who",
        "whom",
        "whose",
        "which",
        "why",
        "how",
        "do",
        "does",
        "did",
        "is",
        "are",
        "was",
        "were",
        "can",
        "could",
        "will",
        "would",
        "should",
        "shall",
        "have",
        "has",
        "am",
        "tell",
        "remind",
        "list",
        "describe",
        "name",
    ]
)
_GREETINGS = frozenset({"hi", "hello", "hey", "greetings", "howdy"})
_FILLER = frozenset({"there", "again", "all", "everyone"})
_SECOND_PERSON = {
    "i": "you",
    "me": "you",
    "my": "your",
    "mine": "yours",
    "myself": "yourself",
    "i'm": "you're",
    "i've": "you've",
    "i'd": "you'd",
    "i'll": "you'll",
    "am": "are",
    "we": "you",
    "us": "you",
    "our": "your",
    "ours": "yours",
}
_BASE_FORMS = {"is": "are", "was": "were", "has": "have", "does": "do"}
_LINKING = frozenset({"is", "are", "was", "were", "has", "have"})
MAX_FACTS = 3


def _is_question(text: str) -> bool:
    tokens = words(text)
    return text.rstrip().endswith("?") or bool(tokens and tokens[0] in _QUESTION_WORDS)


def _second_person(text: str) -> str:
    """``text`` said back to its speaker: "I work at my desk" → "you work at your desk"."""

    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        return _SECOND_PERSON.get(word.lower(), word)

    return re.sub(r"[A-Za-z]+(?:'[a-z]+)?", swap, text.strip().rstrip(".!"))


def _base_form(verb: str) -> str:
    """The form of a third-person verb that goes with "you" (works → work)."""
    if verb in _BASE_FORMS:
        return _BASE_FORMS[verb]
    if verb.endswith("ies") and len(verb) > 4:
        return verb[:-3] + "y"
    if verb.endswith(("shes", "ches", "sses", "xes", "zes", "oes")):
        return verb[:-2]
    if verb.endswith("s") and not verb.endswith("ss"):
        return verb[:-1]
    return verb


def _clause(entity: str, content: str) -> tuple[str, str, bool]:
    """The fact as (subject, predicate, whether the predicate starts with a verb).

    ``("User", "works at Acme")`` → ``("You", "work at Acme", True)``;
    ``("User", "name is Alice")`` → ``("Your name", "is Alice", False)``.
    """
    you = entity.casefold() == "user"
    parts = content.split()
    if len(parts) > 1 and parts[1] in _LINKING and parts[0] not in _LINKING:
        owner = "Your" if you else f"{entity}'s"
        return f"{owner} {parts[0]}", " ".join(parts[1:]), False
    if you and parts:
        parts[0] = _base_form(parts[0])
        return "You", " ".join(parts), True
    return entity, content, True


def _as_fact(line: str) -> tuple[str, str] | None:
    """``Name (type): content`` as (name, content); a relation line reads as words."""
    match = _FACT.match(_DATED.sub(" ", line).strip())
    if match is None:
        return None
    content = match["content"].strip()
    if " → " in content:
        kind, _, target = content.partition(" → ")
        if " " in kind.strip():  # an incoming link ("Rex dog_of → User"): said from the other side
            return None
        content = f"{kind.strip().replace('_', ' ')} {target.strip()}"
    return match["entity"], content


def _sentences(facts: Sequence[tuple[str, str]]) -> str:
    """Facts said as sentences; consecutive verb facts of one entity share its subject."""
    out: list[str] = []
    subject, predicates = "", []  # the sentence being built
    for entity, content in facts:
        who, predicate, verbal = _clause(entity, content)
        if verbal and predicates and who == subject:
            predicates.append(predicate)
            continue
        if predicates:
            out.append(_sentence(subject, predicates))
        subject, predicates = who, [predicate]
        if not verbal:
            out.append(_sentence(subject, predicates))
            subject, predicates = "", []
    if predicates:
        out.append(_sentence(subject, predicates))
    return " ".join(out)


def _sentence(subject: str, predicates: list[str]) -> str:
    said = (
        predicates[0]
        if len(predicates) == 1
        else (", ".join(predicates[:-1]) + " and " + predicates[-1])
    )
    return f"{subject} {said}."


def _answer(said: str, facts: Sequence[str], score: Callable[[str], float]) -> str:
    scored: list[tuple[float, int, tuple[str, str]]] = []
    seen: set[tuple[str, str]] = set()
    for index, line in enumerate(facts):
        fact = _as_fact(line)
        if fact is None:
            continue
        key = (fact[0], content_key(fact[1]))
        if key in seen:
            continue
        seen.add(key)
        value = score(line)
        if value > 0:
            scored.append((value, index, fact))
    if not scored:
        return NOT_KNOWN
    best = max(value for value, _, _ in scored)
    chosen = sorted((index, fact) for value, index, fact in scored if value == best)
    return _sentences([fact for _, fact in chosen[:MAX_FACTS]])


def reply(said: str, facts: Sequence[str], score: Callable[[str], float]) -> str:
    """The assistant's reply to ``said``, given the memory context's facts.

    Args:
        said: the user's last message.
        facts: ``Name (type): content`` lines from the memory context.
        score: how relevant a fact line is to ``said`` (0 when it is not).
    """
    text = said.strip()
    if _is_question(text):
        return _answer(text, facts, score)
    tokens = words(text)
    if tokens and tokens[0] in _GREETINGS:
        rest = [t for t in tokens[1:] if t not in _FILLER]
        if not rest:
            return GREETING_REPLY
        body = re.sub(r"^\W*\w+\W*(?:there\W*)?", "", text, count=1, flags=re.IGNORECASE)
        return f"Hello! Noted: {_second_person(body)}." if body else GREETING_REPLY
    if not text:
        return GREETING_REPLY
    return f"Noted: {_second_person(text)}."
