"""Whether an answer's word said is said of whom the question asks about.

"What does Farida's husband Tom do for work?" is not answered by Farida's "being
a vet nurse makes it worse", nor by "he's a pharmacist" when the turn before
spoke of her brother Sami: a job word found is someone else's unless the
sentence saying it names Tom, is Tom's own ("I'm a ..."), is said to him ("you
...") or, naming no one, goes on about him ("What does Tom do?" "Pharmacist.").
So too an instrument ("What instrument does Leah play?"), a car ("What car does
Evelyn drive?"), an airline ("Which airline did Priya fly?"), a finishing time
("What was Gus's finishing time in the Leeds 10K?"), a field of study ("What did
Meera study at university?") and a sum ("How much did Gus pay for his car?").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from memgraph.chatter import BIRTHDAY_WISH
from memgraph.retrieval.kinds_said import (
    AIRLINE,
    BIRTHDAY,
    BREED,
    CAR,
    FINISH_TIME,
    GRADE,
    INSTRUMENT,
    JOB,
    OUTCOME,
    STUDY,
)
from memgraph.retrieval.never_named import TITLES
from memgraph.retrieval.possession import RELATIONS, kin
from memgraph.retrieval.support import FIRST_PERSON_WORDS, SECOND_PERSON_WORDS, THIRD_PERSON_WORDS
from memgraph.text import index_terms, words

__all__ = [
    "COLOUR",
    "SUM",
    "Turn",
    "asked_of",
    "first_name",
    "kin_asked",
    "said_of",
    "said_of_owner",
]


class Turn(NamedTuple):
    """A text as said in a conversation."""

    speaker: str | None
    addressee: str | None
    text: str
    before: Callable[[], Sequence[str]]
    """The turns it goes on from, nearest first (read only when a sentence needs
    them)."""


_WHO = r"(?P<who>[^?]+?)"
SUM = "sum"
"""The kind of answer a sum of money is ("How much did Gus pay for his car?")."""
COLOUR = "colour"
"""The kind of answer a colour is ("What colour was Julien's cast?")."""
_KIND_OF = r"(?:(?:kind|sort|type)s?\s+of\s+)?"
"""What a question may say before the kind it asks ("What type of instrument ...")."""
_ASKED_OF: dict[str, tuple[str, ...]] = {
    COLOUR: (r"^\s*what\s+colou?r\s+(?:is|was|are|were)\s+" + _WHO + r"['’]s\s+\w",),
    JOB.name: (
        r"^\s*(?:what|which)\s+(?:does|did|do)\s+" + _WHO + r"\s+do\s+for\s+(?:a\s+)?"
        r"(?:living|work|job)\b",
        r"^\s*what\s+(?:is|was)\s+" + _WHO + r"['’]s\s+(?:(?:current|new|old)\s+)?"
        r"(?:job|occupation|profession|trade)\b",
        # "What job is Kiri moving to Wellington for?"
        r"^\s*what\s+"
        + _KIND_OF
        + r"(?:job|work)\s+(?:is|was|does|did|has|had|will)\s+"
        + _WHO
        + r"\s+(?:\w+ing|do|have|get|start|take|want|apply|move|leave)\b",
    ),
    BREED.name: (
        # "What breed is Marcus's dog?", "What breed of dog does Farhad own?"
        r"^\s*what\s+(?:breed|kind\s+of\s+(?:dog|cat))\s+(?:of\s+\w+\s+)?(?:is|was|are|were)\s+"
        + _WHO
        + r"['’]s\s+\w",
        r"^\s*what\s+breed\s+of\s+\w+\s+(?:does|did|do)\s+"
        + _WHO
        + r"\s+(?:have|own|get|adopt|walk|keep)\b",
    ),
    BIRTHDAY.name: (r"^\s*when\s+(?:is|was)\s+" + _WHO + r"['’]s?\s+(?:birthday|bday)\b",),
    STUDY.name: (
        r"^\s*what\s+(?:did|does|do|is|was|will)\s+" + _WHO + r"\s+(?:stud(?:y|ying)|major)\b",
    ),
    INSTRUMENT.name: (
        r"^\s*(?:what|which)\s+"
        + _KIND_OF
        + r"(?:musical\s+)?instruments?\s+(?:does|did|do|can)\s+"
        + _WHO
        + r"\s+(?:play|learn|practi[sc]e|teach)\b",
    ),
    CAR.name: (
        r"^\s*(?:what|which)\s+(?:(?:make|model|brand|kind|type)\s+(?:of\s+)?)?"
        r"(?:car|truck|van|suv|pickup|motorbike|motorcycle)s?\s+(?:does|did|do)\s+"
        + _WHO
        + r"\s+(?:drive|own|have|buy|get)\b",
    ),
    AIRLINE.name: (
        r"^\s*(?:what|which)\s+"
        + _KIND_OF
        + r"airlines?\s+(?:does|did|do|will)\s+"
        + _WHO
        + r"\s+(?:fly|take|book|use)\b",
    ),
    FINISH_TIME.name: (
        r"^\s*what\s+(?:was|is)\s+" + _WHO + r"['’]s\s+finish(?:ing)?\s+time\b",
        r"^\s*what\s+finish(?:ing)?\s+time\s+(?:did|does|was)\s+" + _WHO + r"\s+\w+",
        r"^\s*what\s+(?:was|is)\s+" + _WHO + r"['’]s\s+(?:(?:half\s+)?marathon\s+|race\s+|"
        r"run\s+|swim\s+|bike\s+|\d+k\s+)?time\b",
    ),
    GRADE.name: (
        r"^\s*what\s+(?:grades?|scores?|marks?|results?)\s+(?:did|does|do|has|had|will)\s+"
        + _WHO
        + r"\s+(?:get|score|receive|achieve|earn)\b",
    ),
    OUTCOME.name: (
        # "Did Joy pass her G1 test?", "How did Elsa do in the tournament?", "What place
        # did Imani finish in?"
        r"^\s*did\s+" + _WHO + r"\s+(?:win|pass)\b",
        r"^\s*how\s+did\s+" + _WHO + r"\s+do\s+(?:in|at|on)\b",
        r"^\s*what\s+(?:place|position)\s+did\s+" + _WHO + r"\s+(?:finish|come|place)\b",
        r"^\s*where\s+did\s+" + _WHO + r"\s+(?:place|finish|come)\b(?!\s+from)",
    ),
    SUM: (
        r"^\s*(?:(?:roughly|about|approximately)\s+)?how\s+much\s+(?:money\s+|rent\s+)?"
        r"(?:did|does|do|will|would|has|have)\s+"
        + _WHO
        + r"\s+(?:pay|spend|spent|charge|earn|make|get|lend|borrow|owe|send|give|donate|save"
        r"|raise|sell|bid|offer)\b",
    ),
}
_ASKED = {
    name: tuple(re.compile(pattern, re.IGNORECASE) for pattern in patterns)
    for name, patterns in _ASKED_OF.items()
}
"""For each kind of answer, a question asking it of someone, and whom ("What
instrument does Leah play?": Leah)."""
_NAMED_SUBJECT = re.compile(
    r"(?:[A-Z][\w-]*['’]s\s+(?:(?:ex-|late\s+)?[^\W\d_A-Z][\w-]*\s+){1,2})?"
    r"(?:(?:Uncle|Aunt|Auntie|Aunty|Cousin|Grandma|Grandpa|Granny|Grandad|Nan|Nana|Gran|"
    + TITLES
    + r")\.?\s+)?(?P<name>[A-Z][\w-]*)"
)
"""Whom a question asks about by name: "Tom", "Farida's husband Tom", "Kasia's fiancé
Piotr", "Uncle Rob"."""
_KIN_SUBJECT = re.compile(r"(?P<owner>[A-Z][\w-]*)['’]s\s+(?P<kin>[^\W\d_][\w-]*)")
"""Whom a question asks about as someone's relative: "Tessa's nan", "Kofi's dad"."""
_ADVERB_AFTER = re.compile(
    r"\s+(?:currently|now|still|finally|originally|actually|really|usually|ever|first)$",
    re.IGNORECASE,
)
"""A word after the subject that is not part of it ("How much does Priya currently pay")."""
_SENTENCE = re.compile(r"(?:[^.!?\n]|(?<=\d)\.(?=\d))+")
"""A sentence: up to a stop that is no decimal point ("7.5 in Port Economics")."""
_CAPITALISED = re.compile(r"\b[A-Z][\w'’-]+")
_POSSESSIVE = re.compile(r"['’]s$")
_IN_A_PLACE = re.compile(
    r"\b(?:in|from|near|via|at|north|south|east|west|central)\s+[A-Z][\w'’-]+(?!['’]s\b)"
)
"""A capitalised word said as a place ("still in Lagos, he's a doctor", "a pharmacist at
Southmead so north Bristol would suit her"): no one."""
_HE_OR_SHE = THIRD_PERSON_WORDS - {"they", "them", "their"}
"""Someone else, one person ("he's a pharmacist"; "they quoted £900" is a garage)."""
_PERSONS = FIRST_PERSON_WORDS | SECOND_PERSON_WORDS | _HE_OR_SHE


def asked_of(kind: str, question: str) -> str | None:
    """The name of whom ``question`` asks an answer of ``kind`` (the name of a
    :class:`~memgraph.retrieval.kinds_said.KindOfAnswer`, or :data:`SUM`) of, when its subject
    is a name ("What does Farida's husband Tom do for work?": Tom); ``None``
    otherwise ("What does Kofi's dad do for a living?")."""
    found = next((m for pattern in _ASKED.get(kind, ()) if (m := pattern.search(question))), None)
    if found is None:
        return None
    who = _ADVERB_AFTER.sub("", found["who"].strip())
    subject = _NAMED_SUBJECT.fullmatch(who)
    if subject is not None:
        return subject["name"]
    return who if kin_asked(who) is not None else None


def kin_asked(person: str) -> tuple[str, str] | None:
    """Whose relative, and which, ``person`` is when it is one ("Tessa's nan":
    ``("tessa", "grandmoth")``, the relative as an index term in its formal word);
    ``None`` for a name."""
    found = _KIN_SUBJECT.fullmatch(person.strip())
    if found is None:
        return None
    relative = _kin_term(found["kin"])
    return (found["owner"].lower(), relative) if relative is not None else None


def _kin_term(word: str) -> str | None:
    """The relative a word says, as :data:`~memgraph.retrieval.possession.RELATIONS`
    holds it ("mum": "mother"), or ``None``."""
    return next(iter(kin(index_terms(word)[:1]) & RELATIONS), None)


def _subject(sentence: str) -> str | None:
    """The first personal pronoun of a sentence ("he" of "he's", "I", "your"), if any."""
    return next((word for word in words(sentence) if word in _PERSONS), None)


def first_name(name: str | None) -> str:
    """A name's first word, lower-cased, as a question names someone by it ("gus" of
    "Gus Ward")."""
    return name.split()[0].lower() if name and name.split() else ""


_KIN_KEY = "\x00relative"
"""Who a sentence is about, when it speaks of the relative asked about."""


def said_of(
    says: Callable[[str], bool],
    person: str,
    turns: Iterable[Turn],
    is_person: Callable[[str], bool],
) -> bool:
    """Whether a sentence that ``says`` an answer (a job, an instrument, a sum) is
    said of ``person`` in ``turns``: in a sentence naming them, in their own turn in the
    first person, to them in the second, or in a sentence naming no one when it
    goes on about them. Who a sentence naming no one is about: for "he" or
    "she", whom the text, or else the nearest turn before naming anyone, named
    last (when no one, it may be them); for a bare one ("Forensic accountant.",
    "First job is mixing an album"), whom the text named last, or else the turn
    it answers ("What does Daniel do?"), or else its speaker. ``is_person`` says
    whether a capitalised word names someone; the two talking are left out, as
    "he" and "she" are neither. A relative ("Tessa's nan") is spoken of where
    their word is said of them: "my nan" in Tessa's own turn, "your nan" to her,
    "Tessa's nan", "her nan"; not "my nan" in another's turn. A "he" or "she"
    only after the answer is the answer's own ("New manager since December and
    he's obsessed with metrics": the manager, not whom "he" would be)."""
    asked_kin = kin_asked(person)
    key = person.lower() if asked_kin is None else _KIN_KEY
    for turn in turns:
        talking = {first_name(turn.speaker), first_name(turn.addressee)}

        def named_in(words: str, turn: Turn = turn, talking: set[str] = talking) -> set[str]:
            found = set()
            # "Tom's parents": his parents are spoken of, not Tom
            for word in _CAPITALISED.findall(_IN_A_PLACE.sub("", _without_owners(words))):
                bare = _POSSESSIVE.sub("", word)
                if bare.lower() == key or is_person(bare):
                    found.add(bare.lower())
            if asked_kin is not None and _relative_said(asked_kin, words, turn):
                found.add(key)
            return found - talking

        earlier: set[str] = set()  # whom the text named last before this sentence
        spoken_of: set[str] = set()  # and whom it spoke of, the two talking too
        for sentence in _with_the_wish(_SENTENCE.findall(_without_calling(turn)), says, named_in):
            names = named_in(sentence)
            if says(sentence) and _of_them(
                key, sentence, names, (earlier, spoken_of), turn, named_in, says
            ):
                return True
            # "I drove to Bagheria with Davide and bought the Ape. €4,800": the
            # speaker's, as much as Davide's (but "she" is not the speaker's, and
            # "you" may be a car's: "Goodbye Fiesta, you served us well")
            subject = _subject(sentence)
            talked_of = names
            if subject in FIRST_PERSON_WORDS:
                talked_of = names | {first_name(turn.speaker)}
            elif subject in _HE_OR_SHE and not names:
                # "I forgot to tell you! He passed on Tuesday! 47 out of 50": whom
                # "he" is, named in the text or the turn it answers ("did Liam do
                # his theory test?")
                talked_of = earlier or next(map(named_in, turn.before()[:1]), set())
            earlier = names or earlier
            spoken_of = talked_of or spoken_of
    return False


def _with_the_wish(
    sentences: list[str], says: Callable[[str], bool], named_in: Callable[[str], set[str]]
) -> list[str]:
    """``sentences``, a birthday wish joined with the sentence after it when that one
    tells its day and names no one ("happy early birthday! Saturday isn't it?",
    "Happy early birthday btw! It's the 21st right?")."""
    joined: list[str] = []
    for sentence in sentences:
        if (
            joined
            and BIRTHDAY_WISH.search(joined[-1])
            and not says(joined[-1])
            and not set(words(sentence)) & _PERSONS
            and not named_in(sentence)
            and says(f"{joined[-1]} {sentence}")
        ):
            joined[-1] = f"{joined[-1]} {sentence}"
        else:
            joined.append(sentence)
    return joined


_CALLING = re.compile(r"^\W*(?:(?i:hey|hi|oh|ok|okay|so)\s+)?([A-Z][\w'’-]*)\s*[,!]+\s")
"""A turn opening by calling someone ("Dad, results are out.", "Hey Thandi, ...")."""


def _without_calling(turn: Turn) -> str:
    """The text of ``turn`` without the word it opens with to call the other ("Dad,
    results are out. 7.5 in Port Economics!!"): whom it calls is not whom it
    speaks of."""
    found = _CALLING.match(turn.text)
    if found is None:
        return turn.text
    called = found[1]
    if called.lower() == first_name(turn.addressee) or _kin_term(called) is not None:
        return turn.text[found.end() :]
    return turn.text


def said_of_owner(says: Callable[[str], bool], person: str, turns: Iterable[Turn]) -> bool:
    """Whether a sentence that ``says`` an answer about a thing of ``person``'s (their
    dog's breed) is said by them, to them ("your dog is a lab"), or names them
    ("Marisol's dog"): a pet is "he" and "she" and its own name, whoever owns it."""
    key = person.lower()
    for turn in turns:
        for sentence in _SENTENCE.findall(turn.text):
            if not says(sentence):
                continue
            spoken = set(words(sentence))
            if first_name(turn.speaker) == key or key in spoken:
                return True  # their own turn, or "Marisol's dog"
            if first_name(turn.addressee) == key and spoken & SECOND_PERSON_WORDS:
                return True  # "your dog is a lab"
    return False


def _of_them(
    key: str,
    sentence: str,
    names: set[str],
    earlier: tuple[set[str], set[str]],
    turn: Turn,
    named_in: Callable[[str], set[str]],
    says: Callable[[str], bool],
) -> bool:
    """Whether a sentence of ``turn`` saying an answer (``says``) says it of
    ``key`` (see :func:`said_of`); ``earlier``: whom the text named before it,
    and whom it spoke of (the two talking too)."""
    if len(names) > 1:
        # "Priya made me chai and Josh played a sad song on his guitar": Josh's
        clause = _answer_clause(sentence, says)
        in_clause = named_in(clause)
        if in_clause:
            return key in in_clause or key in words(_without_owners(clause))
    if key in names or key in words(_without_owners(sentence)):
        return True  # "Tom's a plumber", "tom's a plumber"; not "Tom's parents"
    if not names and BIRTHDAY_WISH.search(sentence):
        return first_name(turn.addressee) == key  # "happy birthday for yesterday grandad!!!"
    clause = _answer_clause(sentence, says)
    if clause != sentence:
        # "She wants to move back to Toronto, and I'm here for two more years of PhD"
        own = _subject(clause)
        if _someone_of_theirs(clause, says):
            return False  # "... and my dad plays the trumpet": the dad's
        if own in FIRST_PERSON_WORDS:
            return first_name(turn.speaker) == key
        if own in SECOND_PERSON_WORDS:
            return first_name(turn.addressee) == key
    subject = _subject(sentence)
    if subject in _HE_OR_SHE and _subject(_up_to_answer(sentence, says)) is None:
        subject = None  # "New manager since December and he's obsessed with metrics"
    if _someone_of_theirs(sentence, says):
        return False  # "My manager plays bass in a covers band": the manager's
    if subject in FIRST_PERSON_WORDS:
        return first_name(turn.speaker) == key
    if subject in SECOND_PERSON_WORDS:
        return first_name(turn.addressee) == key
    if names:
        return False  # "Sami's a pharmacist"
    named, spoken_of = earlier
    if subject in _HE_OR_SHE:  # "he's a pharmacist"
        told = named or next((found for found in map(named_in, turn.before()) if found), set())
        if told:
            return key in told
        # no one named: it may be them when it is their own turn or they are spoken
        # of, in any case, in it or the turns before ("his name's rory. he's a
        # teacher"); not someone never mentioned ("She's our small animal vet")
        return key == first_name(turn.speaker) or any(
            key in words(text) for text in (turn.text, *turn.before())
        )
    # "Forensic accountant.": of whom the text, or the turn it answers, spoke last
    told = spoken_of or next(map(named_in, turn.before()[:1]), set())
    return key in (told or {first_name(turn.speaker)})


_PEOPLE_OF_SOMEONE = RELATIONS | frozenset(
    kin(
        index_terms(
            "friend mate buddy bestie colleague coworker boss manager supervisor neighbour "
            "neighbor landlord landlady tenant teacher coach therapist doctor mentor student "
            "classmate client patient teammate"
        )
    )
)
"""Whom "my" or "your" may open a sentence with ("my manager", "your dad")."""
_OF_SOMEONE = re.compile(
    r"^\W*(?:\w+\s+){0,3}?(?:my|our|your|ur)\s+([\w'’-]+)(?:\s+([\w'’-]+))?", re.IGNORECASE
)


_OWN_WORDS = frozenset({"my", "our", "your", "ur"})


def _someone_of_theirs(sentence: str, says: Callable[[str], bool]) -> bool:
    """Whether ``sentence``, up to the words that say its answer, opens on someone of
    the speaker's or the addressee's and has no "I", "we" or "you" of its own: "My
    manager plays bass", "your dad's a nurse", "my new manager"; not "My friend and
    I play in a band"."""
    said = _up_to_answer(sentence, says)
    found = _OF_SOMEONE.match(said)
    if found is None or _subject(said) not in _OWN_WORDS:
        return False
    people = kin(index_terms(" ".join(word for word in found.groups() if word)))
    rest = set(words(said[found.end() :])) | set(words(said[: found.start(1)]))
    return bool(people & _PEOPLE_OF_SOMEONE) and not (rest - _OWN_WORDS) & (
        FIRST_PERSON_WORDS | SECOND_PERSON_WORDS
    )


_WORD_END = re.compile(r"\S+")


def _up_to_answer(sentence: str, says: Callable[[str], bool]) -> str:
    """The sentence up to the end of the first words that say the answer."""
    for word in _WORD_END.finditer(sentence):
        if says(sentence[: word.end()]):
            return sentence[: word.end()]
    return sentence


_CLAUSE_BREAK = re.compile(r",|;|\s(?:and|but|while|whereas|so|then)\s", re.IGNORECASE)


def _answer_clause(sentence: str, says: Callable[[str], bool]) -> str:
    """The clause of ``sentence`` that says the answer: from the last break (a
    comma, "and", "but" ...) before its first word that says it, to the end."""
    upto = _up_to_answer(sentence, says).rstrip(",;")  # "nurse," ends no clause before it
    breaks = list(_CLAUSE_BREAK.finditer(upto))
    return sentence[breaks[-1].end() :] if breaks else sentence


_OWNED = re.compile(r"\b[\w-]+['’]s\s+([^\W\d_]+)")
_KINSFOLK = frozenset({"parents", "family", "folks"})


def _without_owners(sentence: str) -> str:
    """``sentence`` with each "Name's" before a relative's word left out ("Tom's
    parents", "Tom's mum" as "parents", "mum"): whose relatives they are is no one
    it speaks of."""
    return _OWNED.sub(
        lambda found: (
            found[1]
            if _kin_term(found[1]) is not None or found[1].lower() in _KINSFOLK
            else found.group()
        ),
        sentence,
    )


_OWNER = re.compile(r"([\w-]+)['’]s$")


def _relative_said(asked_kin: tuple[str, str], text: str, turn: Turn) -> bool:
    """Whether ``text`` of ``turn`` speaks of the relative ``asked_kin`` (whose, and which):
    their word, said of them ("my nan" in the owner's own turn, "your nan" to
    them, "Tessa's nan", "her nan")."""
    owner, relative = asked_kin
    said = text.split()
    for at, word in enumerate(said):
        if _kin_term(word.strip(".,!?;:()\"'’")) != relative:
            continue
        before = said[at - 1].lower() if at else ""
        if before == "my":
            whose = first_name(turn.speaker)
        elif before in ("your", "ur"):
            whose = first_name(turn.addressee)
        elif (possessor := _OWNER.search(before)) is not None:
            whose = possessor[1]
        else:  # "her nan", "the dad"
            return True
        if whose == owner:
            return True
    return False
