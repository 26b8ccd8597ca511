"""What a question says is someone's, and the words for relatives and pets.

"Where does Dana's sister live?" asks about something of Dana's: her sister
(:func:`possessed`), a relative (:data:`KIN_TERMS`). Relatives and pets are also
told of in other words: "Mom's mammogram" is her mother's, "our kitten" a cat
(:func:`kinds`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memgraph.retrieval.ranking import Query
from memgraph.text import KIN_WORDS, index_terms

__all__ = [
    "ANSWER_WORDS",
    "CLOSE_PEOPLE",
    "KIN",
    "KIN_TERMS",
    "NOUN_WORDS",
    "PETS",
    "RELATIONS",
    "is_their_name",
    "kin",
    "kinds",
    "possessed",
]

ANSWER_WORDS = frozenset(
    index_terms(
        "name names named called call time times old age much many long kind type sort "
        "way thing things day date year first last new now currently still ever recent recently "
        "lately model brand go going "
        "went do does did doing get got take took make made have has had"
    )
)
"""Words that say what kind of answer is wanted ("the name of", "what time"), not
what it is about: a text need not hold them to be about the topic."""
_POSSESSED = re.compile(
    r"(?=(?:\b(\w+)['’]s|\b(?:his|her|their|my))((?:\s+[\w-]+){1,3}))", re.IGNORECASE
)
_THEMSELVES = frozenset(index_terms("family"))
"""What is said of someone as "we" in their own words ("Tane's family": "we fly out
on the 12th"): them, not something of theirs."""
_DO_SUBJECT = re.compile(r"\b(?:do|does|did)\s+\w$", re.IGNORECASE)
_BE_SUBJECT = re.compile(r"\b(?:is|are|was|were|am)\s+\w$", re.IGNORECASE)
"""Before a possession, what makes a word in "-ing" after it the verb ("Where is
Liam's dad living now?", "What is Dana's sister doing?"), not a noun's."""
_NO_NOUN_NEXT = re.compile(
    r"\s*(?:[?.!]|$|(?:now|in|at|with|for|these|this|today|after|since|to|on|up|as|so)\b)",
    re.IGNORECASE,
)
KIN = {
    alias: index_terms(word)[0]
    for word, aliases in KIN_WORDS.items()
    for alias in index_terms(aliases)
}
"""Kinship words said in other words ("Mom's mammogram" for "her mother's")."""
KIN_TERMS = frozenset(KIN.values())
"""The kinship words themselves: a relative the question says is theirs."""
CLOSE_PEOPLE = frozenset(
    index_terms(
        "wife girlfriend boyfriend partner fiance fiancee son daughter baby nephew niece "
        "cousin aunt uncle grandson granddaughter stepmother stepfather flatmate roommate "
        "housemate"
    )
)
"""Others someone has, like relatives, who are told of by that word and their name."""
RELATIONS = KIN_TERMS | CLOSE_PEOPLE
PETS = {
    alias: index_terms(kind)[0]
    for kind, aliases in {
        "cat": "cat kitten kitty",
        "dog": "dog puppy pup",
        "rabbit": "rabbit bunny",
        "tortoise": "tortoise turtle",
        "hamster": "hamster",
        "parrot": "parrot budgie",
        "horse": "horse pony",
    }.items()
    for alias in index_terms(aliases)
}
"""Pets, told of by their kind and their name ("our kitten Miso"), and the words
for their young."""
NOUN_WORDS = r"(?:(?!(?:in|at|on|of|to|from|for|with|near|and|or|back)\b)[a-z-]+ ){1,2}"
"""One or two words of a noun phrase ("brother", "older sister"), not a place's
preposition ("grandmother in Ghana") or a list's "and"."""
_LATE = frozenset(index_terms("late"))
"""Said before a relative ("her late husband"), of one who has died."""


_SAYS_WHICH = re.compile(
    r"^(?:finishing|starting|opening|closing|leaving|moving|asking|selling|buying|due|"
    r"target|goal|expected|estimated)$",
    re.IGNORECASE,
)
"""A word before an answer's that only says which one is asked ("finishing time",
"starting salary", "due date")."""


def possessed(query: Query, *, anyones: bool = False) -> tuple[set[str], str | None]:
    """The terms of what the question says is the named person's ("Dana's sister",
    "her tortoise", "his architecture licensing exam", the user's "my brother"),
    and the last one's head noun (the kind of thing it is: "exam"). With ``anyones``,
    also what it says is the possession of a name memory holds no entity for
    ("Jess's grandmother", where Jess is only spoken of)."""
    found: set[str] = set()
    head = None
    for match in _POSSESSED.finditer(query.text):
        owner, thing = match.group(1), match.group(2)
        theirs = owner is None or kin(index_terms(owner)) <= query.name_terms | found
        if not theirs and not (anyones and owner[:1].isupper()):
            continue  # someone else's, unless it is theirs ("Ifeoma's mother's biopsy")
        if re.search(r"\bin[- ]laws?\b", thing, re.IGNORECASE):
            continue  # an in-law is spoken of as another's relative ("Arjun's dad")
        phrase: list[str] = []
        ended = False  # by the verb itself ("go" of "did her scents go")
        said = thing.split()
        being = _BE_SUBJECT.search(query.text[: match.start() + 1]) is not None
        rest = query.text[match.end(2) :]
        for at, word in enumerate(said):  # up to the noun phrase's end
            if (
                being
                and at
                and word.lower().endswith("ing")
                and _NO_NOUN_NEXT.match(" ".join(said[at + 1 :]) + rest)
            ):
                # "Where is Liam's dad living now?": the verb ends it ("Tolu's marathon
                # training plan" goes on with a noun)
                break
            terms = index_terms(word)
            if terms and terms[0] in _LATE and at + 1 < len(said):
                continue  # "Kofi's late grandfather": the grandfather, not "lately"
            if not terms or terms[0] in query.name_terms or terms[0] in ANSWER_WORDS:
                ended = bool(terms) and terms[0] in ANSWER_WORDS
                if ended and at and _SAYS_WHICH.match(said[at - 1]):
                    phrase.pop()  # "Cerys's finishing time", "Mere's due date": no thing of theirs
                break
            phrase.append(KIN.get(terms[0], terms[0]))
        if not ended and len(phrase) > 1 and _DO_SUBJECT.search(query.text[: match.start() + 1]):
            # "Where does Dana's sister live": the verb ends it, right after a relative
            # or a pet ("When did Tyler's dad visit England?")
            kept = next(
                (at + 1 for at, term in enumerate(phrase) if term in KIN_TERMS or term in PETS),
                len(phrase) - 1,
            )
            del phrase[kept:]
        if phrase and not set(phrase) <= _THEMSELVES:
            found.update(phrase)
            head = phrase[-1]
    return found, head


def kin(terms: Iterable[str]) -> set[str]:
    return {KIN.get(t, t) for t in terms}


def kinds(terms: Iterable[str]) -> set[str]:
    """The kin or pet kind each term says ("mom" -> "mother", "kitten" -> "cat")."""
    return {PETS.get(t) or KIN.get(t, t) for t in terms}


def is_their_name(word: str, query: Query) -> bool:
    """Whether ``word`` (an owner before "'s") is the asked person's name."""
    terms = kin(index_terms(word))
    return bool(terms) and terms <= query.name_terms
