"""Whether what recall found says how old the person asked about is.

"How old is Walt?" is answered by "Gus is 78 with a bad knee" only for Gus: an
age is said of someone ("Tolu's 27", "he's 15 and thinks he's Neymar" after his
name, "I'm 29" by him, "happy 30th" to him, "35 actually" after "how old are
you?"). When the texts recall found say ages only of others ("a 41 year old"
by her husband, "the furnace is 25 years old"), nothing remembered says theirs.
Only a question naming whom it asks about is judged ("How old is Kenji's wife
Laura?"); "How old is Ada's granddaughter?" names her by a relative, whom a text
calls by her own name.

An age is seldom said in the question's words ("I'm 45 Luis"), so such a question
also reads the person's texts that hold a number for one (:func:`age_shares`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from memgraph.chatter import BIRTHDAY_WISH
from memgraph.dates import CALENDAR_WORDS
from memgraph.retrieval.episode_index import EpisodeIndex
from memgraph.text import index_terms, words

__all__ = [
    "AGE_READ",
    "AGE_SHARE",
    "AGE_TEXTS",
    "BIRTHDAY_WORDS",
    "age_asked_of",
    "age_shares",
    "relative_age_asked",
    "says_an_age",
    "states_their_age",
]

_NUMBER_WORDS = "one two three four five six seven eight nine ten eleven twelve"
BIRTHDAY_WORDS = "birthday bday"
"""The words of a birthday wish, which may say the age of whom it is said to."""

AGE_TEXTS = 250
"""How many of the asked person's texts holding a number are read at most for their
age, newest first, :data:`AGE_READ` at a time until one says it."""
AGE_READ = 50
"""How many of those texts are read at a time."""
AGE_SHARE = 1.0
"""What a text saying their age counts as in the episode tier: the answer itself,
though it holds no word of the question ("I'm 45 Luis, I have a physio")."""
_AGE_TERMS = (*map(str, range(1, 121)), *index_terms(_NUMBER_WORDS))
"""The terms an age is indexed as (one to nine stay words; from ten on, digits)."""

_ASKS_AGE = re.compile(
    r"^\s*how old (?:is|are) (?P<who>[^?]+?)(?:\s+(?:now|these days|today))?\s*\?*\s*$",
    re.IGNORECASE,
)
_NAME_LAST = re.compile(r"(?:^|\s)(?P<name>[A-Z][\w'-]*)$")

_NUMBER = (
    r"(?:\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
    r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|(?:twenty|thirty|forty|fifty|"
    r"sixty|seventy|eighty|ninety)(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?)"
)
_WISH = re.compile(r"\bhappy \d{1,3}(?:st|nd|rd|th)\b", re.IGNORECASE)
"""A birthday wish ("happy 30th old man"): the age of whom it is said to."""
_AGE = re.compile(
    r"\b" + _NUMBER + r"[- ](?:years?|yrs?|months?|weeks?)[- ]old\b"  # 14 yrs old, a 41-year-old
    r"|\b\d{1,3} ?(?:yo|y/o|y\.o\.)\b"
    r"|\b(?:turn(?:s|ed|ing)?|(?:be|is|'s|’s|am|'m|’m|are|'re|’re|was|aged?|at)"
    r"(?: (?:only|just|almost|nearly|about|now|already|gonna be|going to be|turning))?) "
    + _NUMBER
    + r"\b(?![.:,]\d|\s*(?:%|percent|minutes|mins?\b|secs?\b|seconds|hours|hrs|am|pm|k\b|km|"
    r"miles|mph|kg|lbs|pounds|dollars|euros|quid|weeks? pregnant|o'clock|degrees|points|of|"
    r"out of|in the))"
    r"|\b\d{1,3}(?:st|nd|rd|th)\b(?= birthday| bday|!|\s*🎉|\s*🎂| party)|" + _WISH.pattern,
    re.IGNORECASE,
)
"""An age said: "14 yrs old", "a 41 year old", "turned 9", "he's 15", "I'm 29",
"she's gonna be 8", "her 90th birthday", "happy 30th"."""
_BARE_AGE = re.compile(r"^\W*" + _NUMBER + r"\b(?!\s*(?:%|k\b|km|miles|minutes|hours))", re.I)
_ASKS_HOW_OLD = re.compile(r"\bhow old\b|\bwhat age\b", re.IGNORECASE)
_CLAUSE = re.compile(r"[^.!?;\n]+[.!?;]*")
_HYPOTHETICAL = re.compile(
    r"\b(?:until|till|til|when|whenever|by the time|before|if|once)\s+[\w'’]+\s*$", re.IGNORECASE
)
"""Words before "she's 100" that make it an age to come, not hers ("She's going to
be talking about this until she's 100", "when I'm 64")."""
_FIRST = frozenset({"i", "im", "my", "me"})
_SECOND = frozenset({"you", "ur", "your", "u"})
_THIRD = frozenset({"he", "she", "they", "his", "her"})
"""Persons as :func:`memgraph.text.words` reads them ("I'm" is "i", "he's" "he")."""


def relative_age_asked(question: str) -> str | None:
    """Whose relative, and which, ``question`` asks the age of ("Dana's mother" of "How
    old is Dana's mother?"), as :func:`~memgraph.retrieval.said_of.kin_asked` reads
    it; ``None`` when it asks of a name or of no relative."""
    match = _ASKS_AGE.match(question.replace("’", "'"))
    if match is None:
        return None
    who = match["who"].strip()
    return who if _NAME_LAST.search(who) is None else None


def says_an_age(sentence: str) -> bool:
    """Whether ``sentence`` says an age ("she's 74", "turned 9"), not one to come
    ("until she's 100")."""
    return any(
        _HYPOTHETICAL.search(sentence, 0, found.start()) is None
        for found in _AGE.finditer(sentence)
    )


def age_asked_of(question: str) -> str | None:
    """The name of whom ``question`` asks the age of ("Laura" of "How old is Kenji's
    wife Laura?"), when it asks "How old is ..." of someone it names last; else
    ``None`` ("How old is Ada's granddaughter?", "How old was Wren when ...")."""
    match = _ASKS_AGE.match(question.replace("’", "'"))
    if match is None:
        return None
    named = _NAME_LAST.search(match["who"].strip())
    return named["name"].removesuffix("'s") if named is not None else None


_NAMED = re.compile(r"(?<=\s)[A-Z][a-z]{2,}")
"""A capitalised word inside a clause: whom it may name ("It was Ewan's birthday")."""


def _last_named_is_them(
    earlier: Sequence[str],
    said_before: Callable[[], Sequence[tuple[str, str]]],
    names_them: Callable[[str], bool],
) -> bool:
    """Whether "he" or "she" is them: the nearest clause before it in the text
    that names anyone names them ("It was Ewan's birthday on Thursday. He is nine
    now" is Ewan's, whoever the turn before spoke of), or, when none does, the
    turn it goes on from."""
    for clause in reversed(earlier):
        if names_them(clause):
            return True
        if any(word.lower() not in CALENDAR_WORDS for word in _NAMED.findall(clause)):
            return False
    return any(names_them(turn) for _id, turn in said_before()[:1])


def states_their_age(
    name: str,
    texts: Iterable[tuple[str, str | None, str]],
    *,
    addressee: Callable[[str], str | None],
    before: Callable[[str], Sequence[tuple[str, str]]],
) -> bool:
    """Whether one of ``texts`` says how old ``name`` is.

    ``texts`` are ``(episode id, speaker, words)``; ``addressee`` gives whom an
    episode speaks to, ``before`` the turns it goes on from, nearest first. An
    age is theirs when its clause names them, or is said by them in the first
    person, or to them in the second (or wished a happy 30th), or calls them
    "he" or "she" after a clause or turn naming them; a bare number opening a
    turn is theirs when it answers "how old" asked of them (by name, or as "he"
    or "she" after a turn naming them), or puts right an age the turn before gave
    them; one after a birthday wish to them is theirs
    ("Happy birthday for yesterday boss!! Sorry, was at a job till late. 73!")."""
    wanted = name.lower()

    def names_them(text: str) -> bool:
        return wanted in words(text)

    def is_them(who: str | None) -> bool:
        return bool(who) and str(who).split()[0].lower() == wanted

    for episode_id, speaker, text in texts:
        clauses = [m.group() for m in _CLAUSE.finditer(text)]
        said_before = functools.cache(lambda e=episode_id: list(before(e)))
        for at, clause in enumerate(clauses):
            if not says_an_age(clause):
                if (
                    at > 0
                    and _BARE_AGE.match(clause)
                    and any(BIRTHDAY_WISH.search(wish) for wish in clauses[:at])
                    and is_them(addressee(episode_id))
                ):
                    return True  # "Happy birthday boss!! ... 73!"
                if at == 0 and _BARE_AGE.match(clause):  # "35 actually." after "how old?"
                    asked = said_before()[0][1] if said_before() else ""
                    # "how old is Dev?", "how old are you?", or an age said to them
                    # ("34 year old kickflip king"), which they put right
                    # ("How old is he?" answered by them asks of someone else: "7 on
                    # saturday" is their son's)
                    if (
                        (_ASKS_HOW_OLD.search(asked) or _AGE.search(asked))
                        and (
                            names_them(asked)
                            or (is_them(speaker) and not set(words(asked)) & _THIRD)
                            # "tobi was so bored" "how old is he now, 16?" "17!": whom
                            # "he" is, named in the turn the question goes on from
                            or (
                                bool(set(words(asked)) & _THIRD)
                                and any(names_them(turn) for _id, turn in said_before()[1:2])
                            )
                        )
                    ):
                        return True
                continue
            spoken = set(words(clause))
            if (
                names_them(clause)
                or (spoken & _FIRST and is_them(speaker))
                or ((spoken & _SECOND or _WISH.search(clause)) and is_them(addressee(episode_id)))
                or (spoken & _THIRD and _last_named_is_them(clauses[:at], said_before, names_them))
            ):
                return True
    return False


def age_shares(
    index: EpisodeIndex,
    name: str,
    within: npt.NDArray[np.bool_],
    *,
    texts: Callable[[list[str]], Mapping[str, str]],
    before: Callable[[str], Sequence[tuple[str, str]]],
    at_ms: int | None = None,
    source: str | None = None,
) -> dict[str, float]:
    """The texts of ``within`` (a mask in index order: the texts by or naming the
    person) that say how old ``name`` is, each at :data:`AGE_SHARE`: of the newest
    :data:`AGE_TEXTS` that hold a number, read :data:`AGE_READ` at a time until some
    say it, those :func:`states_their_age` reads as theirs ("I'm 45 Luis", "Gus
    can't do Saturdays forever, he's 63"). ``texts`` reads episodes' words,
    ``before`` the turns an episode goes on from."""
    held = index.holding_any(_AGE_TERMS, within, at_ms=at_ms, source=source, most=1.0)
    if not held:
        return {}
    ordinal = index.ordinal
    newest = sorted(held, key=lambda episode_id: -ordinal[episode_id])[:AGE_TEXTS]
    found: dict[str, float] = {}
    for start in range(0, len(newest), AGE_READ):
        batch = newest[start : start + AGE_READ]
        said = texts(batch)
        found.update(
            (episode_id, AGE_SHARE)
            for episode_id in batch
            if episode_id in said
            and states_their_age(
                name,
                [(episode_id, index.speaker_of(episode_id), said[episode_id])],
                addressee=index.addressee,
                before=before,
            )
        )
        if found:  # the newest say how old they are now
            break
    return found
