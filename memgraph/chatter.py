"""Turns with nothing in them to extract: a question about others, or a reaction.

In a conversation many turns state nothing: "how was the weekend?", "is he
staying with you?", "lol perfect", "😂😂". They are remembered as episodes
(searchable, quoted as the context of the turns around them), but asking a
model to extract facts from them costs a call and invites facts made of a
question ("Miso is the cat?" → "is the cat"). :func:`nothing_to_extract` tells
them apart, the same way for every provider.

A question that says something of the speaker's own ("did I tell you I got
the job?") is not one of them, nor is a reaction that answers a question
("no." after "are you still at Acme?"): a model reads it with the turn before.
"""

from __future__ import annotations

import re

from memgraph.speakers import split_speaker
from memgraph.text import words

__all__ = [
    "BIRTHDAY_WISH",
    "CAPTION",
    "REACTION_CHARS",
    "REACTION_WORDS",
    "asks_what_was_asked",
    "nothing_to_extract",
    "only_asks",
]

_REACTION_TEXT = """lol lmao lmfao rofl haha hahaha hahahaha hah ha hehe heh omg omfg wow woah whoa
    yay yes yeah yea yep yup no nope nah ok okay kk sure thanks thank thx ty you cool
    nice great awesome amazing perfect love same agreed true totally definitely
    absolutely congrats congratulations aww aw awww oh ooh oops ugh hmm hm yikes bye
    goodnight night morning hi hey hello exactly indeed fair right so much too me for
    it that s is a the glad happy sorry stop and very really"""
REACTION_WORDS = frozenset(_REACTION_TEXT.split())
"""Words of a turn that only reacts ("haha yes!!", "ok love you", "that's great")."""

REACTION_CHARS = 80
"""A text longer than this that asks nothing is read as news, unread (a reaction is
short: "hahaha omg congrats!!! so happy for you" is 40)."""
_FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "ours"})
_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
CAPTION = re.compile(r"\[shared image:[^\]]*\]?", re.IGNORECASE)
"""A shared photo's caption as a remembered text holds it ("[shared image: a dog]")."""
BIRTHDAY_WISH = re.compile(
    r"\bhappy (?:belated |early |late )?(?:birthday|bday|b-day|\d{1,3}(?:st|nd|rd|th))\b"
    r"(?! to (?:me|my|our|us|his|her|their)\b)",
    re.IGNORECASE,
)
"""A birthday wish ("happy birthday for yesterday grandad!!!", "happy 30th"): to
whom it is said, not to one's own ("happy birthday to my mum")."""
_ASKED = re.compile(r"\b(?:ask|asks|asked|asking|questions?|wonder(?:s|ed)?)\b", re.IGNORECASE)


def only_asks(text: str) -> bool:
    """Whether every sentence of ``text`` (a shared image's caption aside) is a
    question: "Is work far from there?" asks about work, it says nothing of it."""
    if "?" not in text:
        return False
    spoken = CAPTION.sub(" ", text)
    sentences = [s.strip() for s in _SENTENCE.findall(spoken) if any(c.isalnum() for c in s)]
    return bool(sentences) and all(s.endswith("?") for s in sentences)


def asks_what_was_asked(question: str) -> bool:
    """Whether a question asks what someone asked ("What did Rosa ask Evelyn
    about?"), which a text that only asks answers."""
    return _ASKED.search(question) is not None


def nothing_to_extract(text: str, previous: str | None = None) -> bool:
    """Whether ``text`` (a turn, with or without its ``Name:`` label) holds no fact to
    extract: only questions that say nothing of the speaker's own, or only the
    words of a reaction when it answers no question (``previous``, the turn
    before, does not ask one). A shared image's caption is content."""
    if "?" not in text and len(text) > REACTION_CHARS:
        return False  # no question, and too long for a reaction alone (most texts)
    _label, spoken = split_speaker(text)
    if CAPTION.search(spoken):
        return False
    said = words(spoken)
    if not said:
        return bool(spoken.strip())  # emoji or punctuation only
    if all(word in REACTION_WORDS for word in said):
        return previous is None or "?" not in previous
    return only_asks(spoken) and not _FIRST_PERSON.intersection(said)
