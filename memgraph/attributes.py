"""Single-valued attributes: facts of which an entity has only one current value.

``"name is Bob"`` and ``"name is Alice"`` state the same attribute (``name``),
so a new one supersedes the old; ``"prefers tea"`` states no attribute, so it
never retires ``"prefers coffee"``.
"""

from __future__ import annotations

import re

from memgraph.text import content_key, index_terms

__all__ = ["SINGLE_VALUED_RELATIONS", "asked_attributes", "attribute_cues", "attribute_of"]

SINGLE_VALUED_RELATIONS = {
    "works_at": "employer",
    "works_for": "employer",
    "employed_by": "employer",
    "lives_in": "residence",
    "based_in": "residence",
    "resides_in": "residence",
    "married_to": "spouse",
    "reports_to": "manager",
}


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_VERB_ATTRIBUTES = [
    (
        re.compile(
            r"^(?:now\s+)?(?:works|is working|worked)\s+(?:as\s+[^,;]{1,60}?\s+)?(?:at|for)\s+\S"
        ),
        "employer",
    ),
    (re.compile(r"^(?:is\s+)?employed\s+(?:at|by)\s+\S"), "employer"),
    (
        re.compile(
            r"^(?:just\s+|recently\s+)?(?:started|starts|got|took|accepted|landed|has)\s+"
            r"(?:a\s+|an\s+)?(?:new\s+)?(?:job|position|role)\s+(?:as\s+[^,;]{1,60}?\s+)?"
            r"(?:at|with)\s+\S"
        ),
        "employer",
    ),
    (re.compile(r"^(?:now\s+)?(?:lives|is living|resides)\s+in\s+\S"), "residence"),
    (re.compile(r"^(?:has\s+)?moved\s+to\s+\S"), "residence"),
    (re.compile(r"^is\s+based\s+in\s+\S"), "residence"),
    (re.compile(r"^is\s+(?:called|named)\s+\S"), "name"),
    (re.compile(r"^is\s+\d+\s+years?\s+old"), "age"),
    (re.compile(r"^is\s+married\s+to\s+\S"), "spouse"),
    (re.compile(r"^reports\s+to\s+\S"), "manager"),
]
_VERB_FIRST_WORDS = _word_set(
    "now works is worked employed lives resides has moved reports just recently started "
    "starts got took accepted landed"
)
"""The first word of every text one of :data:`_VERB_ATTRIBUTES` matches."""


_ATTRIBUTE_IS = re.compile(
    r"^(?:(?:his|her|their|its|my|the)\s+)?([a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,3})\s+(?:is|are|was)\s+\S"
)
_NOT_ATTRIBUTES = _word_set(
    "i me you he him she it they them we us one this that there who what which how why "
    "if because cause when and but or so yeah"
)
"""Words no attribute's name holds: "thinks it is worth it" and "no one was hurt"
name no attribute of the person."""
_VERB_STARTS = _word_set(
    "is are was were has have had can could will would should must may might do does "
    "did think thinks thought bet bets feel feels felt know knows knew believe believes "
    "hope hopes guess guesses say says said sound sounds seem seems look looks hear "
    "hears heard see sees saw find finds found realize realizes realized remind reminds "
    "show shows loves loved likes liked digs agree agrees mean means wish "
    "wishes want wants wonder wonders figure figures glad sure really just also still "
    "always never sometimes definitely totally"
)
"""First words of a fact that starts with what the person does, not with an
attribute's name ("bets performing with him is a dream", "hears the parks are
amazing")."""
_DETERMINERS = _word_set("the a an my his her their our your")
_PREPOSITIONS = _word_set("of in to for with at on from about")


def _names_attribute(subject: str) -> bool:
    """Whether the words before "is" name an attribute ("favorite color", "name of
    the dog"), not a clause about the person ("thinks it", "hears the parks")."""
    parts = subject.split()
    if parts[0] in _VERB_STARTS or not _NOT_ATTRIBUTES.isdisjoint(parts):
        return False
    # a determiner inside, not after a preposition, starts a second phrase
    return all(
        part not in _DETERMINERS or parts[index - 1] in _PREPOSITIONS
        for index, part in enumerate(parts[1:], start=1)
    )


def attribute_of(content: str) -> str | None:
    """The single-valued attribute an observation states, if any.

    ``"name is Bob"`` → ``"name"``; ``"works at Globex"`` → ``"employer"``;
    ``"prefers tea"`` → ``None`` (a preference is not exclusive).
    """
    text = content_key(content)  # single spaces: the patterns' \s+ are one " "
    if text.partition(" ")[0] in _VERB_FIRST_WORDS:
        for pattern, attribute in _VERB_ATTRIBUTES:
            if pattern.match(text):
                return attribute
    if " is " not in text and " are " not in text and " was " not in text:
        return None  # what _ATTRIBUTE_IS needs (skips its scan for most facts)
    match = _ATTRIBUTE_IS.match(text)
    if match:
        subject = match.group(1)
        if _names_attribute(subject):
            return {"current employer": "employer", "employer": "employer"}.get(subject, subject)
    return None


_ASKED = {
    "residence": (
        "live lives living lived reside resides residing home address based moved move "
        "moving relocated city town country neighborhood neighbourhood suburb village where"
    ),
    "employer": "work works working worked job employer company employed office career position",
    "name": "name named called",
    "age": "age old",
    "spouse": "married spouse wife husband partner",
    "manager": "manager boss reports supervisor",
}
_ASKED_BY_WORD = {word: attribute for attribute, text in _ASKED.items() for word in text.split()}
_NEEDS_TWO = {"where", "city", "town", "country", "office", "old", "partner", "move", "moving"}


_A_PIECE_OF_WORK = frozenset(
    [
        "bathroom",
        "kitchen",
        "paint",
        "nose",
        "odd",
        "repair",
        "roofing",
        "renovation",
        "plumbing",
        "building",
        "side",
        "wiring",
        "tiling",
        "decorating",
        "garden",
        "fencing",
        "rush",
    ]
)
"""Words that make a "job" a piece of work done ("the bathroom job"), not employment."""
_TIME_WORKED = frozenset(["shift", "shifts", "overtime", "double", "doubles", "hours"])
"""Words that make "work" time worked ("work his final shift"), not where one works."""
_PLAYED = frozenset(["play", "plays", "played", "playing"])
"""Words that make a "position" one played ("What position does Malia play?")."""


def asked_attributes(words: list[str]) -> set[str]:
    """The single-valued attributes a question asks about ("Where do I live now?" →
    residence, "Who does Ana work for?" → employer). A word that may mean other
    things ("where", "old") counts only beside another word of the attribute; a
    "job" that is a piece of work ("Marek's price for the bathroom job") and "work"
    that is time worked ("When did Darius work his final shift?") count not."""
    counts: dict[str, int] = {}
    strong: set[str] = set()
    for at, word in enumerate(words):
        if word in ("job", "jobs") and at and words[at - 1] in _A_PIECE_OF_WORK:
            continue
        if word in ("work", "works", "working", "worked") and _TIME_WORKED & set(
            words[at + 1 : at + 5]
        ):
            continue
        if word == "living" and (words[at - 1 : at] == ["a"] or words[at + 1 : at + 2] == ["room"]):
            continue  # "do for a living" is a job, "the living room" a room
        if word == "position" and (
            words[at + 1 : at + 2] in (["in"], ["on"], ["of"], ["to"]) or _PLAYED & set(words)
        ):
            continue  # "her position in the race", "What position does Malia play?"
        attribute = _ASKED_BY_WORD.get(word)
        if attribute is not None:
            counts[attribute] = counts.get(attribute, 0) + 1
            if word not in _NEEDS_TWO:
                strong.add(attribute)
    return {a for a, n in counts.items() if a in strong or n > 1}


_STATE_WORDS = "still now current currently anymore nowadays latest"
"""Words that ask for an attribute's present value ("Does Chloe still work there?")."""


def attribute_words(attributes: set[str]) -> frozenset[str]:
    """The index terms a question asks for these attributes, or their present value,
    in ("work", "job", "still"): what is left of its words says which one is meant
    ("the café in Fitzroy")."""
    asked = [_ASKED[a] for a in sorted(attributes) if a in _ASKED]
    return frozenset(index_terms(" ".join([*asked, _STATE_WORDS])))


_CUES = {
    "employer": (
        "job offer offered start started starting hired joined role position company firm "
        "transfer transferred promotion promoted"
    ),
    "residence": (
        "moved moving move lease apartment house place neighborhood rent bought found "
        "flat keys unpacked unpacking boxes"
    ),
}


def attribute_cues(attributes: set[str]) -> str:
    """The words a message that states one of these attributes often says instead
    of the attribute's own ("I start at Calloway the monday after", "we found a
    little house in Bloomfield"), for the attributes that have them."""
    return " ".join(_CUES[a] for a in sorted(attributes) if a in _CUES)
