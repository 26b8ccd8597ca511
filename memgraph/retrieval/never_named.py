"""Whether a name a question asks for was ever said.

"What is the name of Tasha's sister?" when a sister is spoken of ("w/ my sister")
but no text says a name near the word for her: nothing remembered names her, and
recall says so before what it found (:func:`relative_named`). So is someone
asked of by their role ("What is the name of Tobenna's landlord?"), and "What is
Keisha's last name?" when only her first name was ever said
(:func:`last_name_said`).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from memgraph.dates import DAY_NAMES
from memgraph.retrieval.possession import (
    NOUN_WORDS,
    PETS,
    RELATIONS,
    is_their_name,
    kin,
    kinds,
    possessed,
)
from memgraph.retrieval.ranking import FIRST_PERSON_WORDS, Query
from memgraph.text import STOP_WORDS, in_any_form, index_terms, words

__all__ = [
    "LIGHT_VERBS",
    "OWNER_REACH",
    "RELATIVE_REACH",
    "TITLES",
    "WORD",
    "Voice",
    "body_asked",
    "brand_asked",
    "first_name_said",
    "last_name_said",
    "relative_named",
    "speaks_of",
]

WORD = re.compile(r"[\w'’]+")
_UPPER = "A-ZÀ-ÖØ-ÞĀĂĄĆČĎĐĒĘĚĞĪİŁŃŇŌŐŒŘŚŞŠŢŤŪŮŰŹŻŽ"
_LOWER = "a-zß-öø-ÿāăąćčďđēęěğīıłńňōőœřśşšţťūůűźżž"
_NAME_LIKE = re.compile(rf"\b[{_UPPER}][{_LOWER}]{{2,}}\b")
"""A capitalised word, in any Latin letters ("Ayşe", "Élise", "Łukasz")."""
_NOT_AFTER_A_TITLE = "".join(
    rf"(?<!\b[{t[0].upper()}{t[0]}]{t[1:]})" for t in ("mr", "mrs", "ms", "dr", "st")
)
"""Before a full stop, what makes it a title's, which ends no sentence ("our landlord
Mr. Petrakis")."""
_STARTS_SENTENCE = re.compile(rf"(?:^|\n|{_NOT_AFTER_A_TITLE}[.!?:]\s*|\]\s*)\W*$")
_NAME_AFTER = r"\s+([^\W\d_][\w'’-]+)"
_CALLED = re.compile(r"\b(?:called|named|(?:dr|mr|mrs|ms)\.?)" + _NAME_AFTER, re.IGNORECASE)
"""A name said as one, in any case: "a guy called jim", "dr wiśniewska"."""
_CALLED_THING = re.compile(r"\b(?:called|named)" + _NAME_AFTER, re.IGNORECASE)
"""A place's or a body's name said as one ("a café called Anatolia"); after a title
it is a person's ("Dr. Visser's group")."""
_PLACE_BEFORE = re.compile(r"\b(?:in|at|to|from|near|on|into|via|of|outside)\s+$", re.IGNORECASE)
_A_PLACE = re.compile(rf"\b(?:in|from)\s+([{_UPPER}][{_LOWER}]{{2,}})\b(?!['’])")
"""A capitalised word said as a place ("flew in from Manchester")."""
_IN_PLACE_BEFORE = re.compile(r"\b(?:in|from|near|via)\s+$", re.IGNORECASE)
_IN_TOWN_BEFORE = re.compile(r"\b(?:in|near|via)\s+$", re.IGNORECASE)
"""Before a town's name, not a body's: a company or a school is "at Brightwire",
"with Pathways", "an offer from Northwave"."""
_ARTICLE_BEFORE = re.compile(
    r"\b(?:a|an|the|one|no|more|some|any|another|every|each)\s+$", re.IGNORECASE
)
"""Before a capitalised word, what makes it a thing's name, not a person's ("get a
Polo", "the Ritz", "down to the one Stick")."""
_THEIRS_BEFORE = re.compile(r"\b(?:my|your|his|her|our|their)\s+$", re.IGNORECASE)
"""Before a capitalised word, what makes it a thing someone has, not someone a role
is ("my Novablasts", "her Fiesta")."""
_DEMONYM_WORDS = (
    "american british english scottish welsh irish canadian australian kiwi french german "
    "dutch belgian swiss austrian italian spanish portuguese greek polish czech hungarian "
    "romanian russian ukrainian swedish norwegian danish finnish icelandic turkish lebanese "
    "syrian israeli egyptian moroccan nigerian ghanaian kenyan ethiopian african indian "
    "pakistani bangladeshi nepali chinese japanese korean vietnamese thai filipino "
    "indonesian malaysian mexican brazilian argentinian argentine chilean peruvian "
    "colombian cuban jamaican caribbean asian european latin arab persian"
)
_DEMONYMS = frozenset(_DEMONYM_WORDS.split())
"""Capitalised words that describe, not name ("Nice cardiologist, Irish fella")."""
_NAMED_RELATIVE = re.compile(
    r"\b(?:[A-Z][\w-]*['’]s|his|her|their|my|your) " + NOUN_WORDS + r"[A-Z][\w-]*"
)
"""A relative named in the question itself ("her brother Teo")."""
_OWNER_WORD = re.compile(r"\b(\w+)['’]s\b(?!\s+(?:(?:first|last|full|maiden)\s+)?name\b)")
"""Whose something is in a question ("Priya's sister's husband"); not the one whose
name is asked ("Ingrid's mother's name")."""
_OWNER_NAMED = re.compile(r"\b[A-Z][\w-]*['’]s\b")
_TOLD_OF_THROUGH_OTHERS = frozenset(index_terms("niece nephew grandson granddaughter cousin"))
"""Relatives often told of through another ("your sister's toddler") and not by
their own kinship word."""
_ASKS_A_NAME = re.compile(r"\bnamed?\b[^.!?]*\?|\bcalled\?", re.IGNORECASE)
_SHORT_REPLY = 5
"""How many words a reply naming someone after a role is spoken of may have to name
them ("the cardiologist cleared him" "Dr. Okafor?")."""
OWNER_REACH = 3
"""How many words before a kinship word a name with "'s" says whose relative it is
("Joris's mom", "Musa's older brother")."""
_OWNS = re.compile(r"['’]s\b")
TITLES = "Mr|Mrs|Ms|Miss|Dr|Prof|Professor"
"""The titles a question may call someone by ("Mrs Okafor", "Dr Patel")."""
_TITLES = f"(?:{TITLES})"
_A_PLACE_OF = re.compile(rf"['’]s\s+[{_UPPER}][{_LOWER}]")
"""After a name, what makes it part of a place's or a shop's name ("Arthur's Seat",
"Macy's Parade")."""
_PLACE_OF_BEFORE = re.compile(rf"\b[{_UPPER}][\w-]*['’]s\s+$")
"""Before a capitalised word, what makes it the rest of such a name ("Seat" of
"Arthur's Seat")."""
_IS_WORDS = (
    "the a an my our your his her their such so just still also really now definitely "
    "basically probably"
)
"""Words after an "'s" that make it "is" ("Aoife's the Irish flatmate")."""
_IS_SHORT = re.compile(rf"['’]s\s+(?:{'|'.join(_IS_WORDS.split())})\b", re.IGNORECASE)
"""A name's "'s" that says "is", not whose ("Aoife's the Irish flatmate")."""
_IS_SAID = re.compile(
    r"['’]s\s+(?:\w+ly|"
    + "|".join(
        (
            _IS_WORDS + " great nice good fine ok okay cool chill kind sweet strict lovely "
            "amazing brilliant awful here back home away gone sick ill busy"
        ).split()
    )
    + r")\b",
    re.IGNORECASE,
)
"""After a relative's word, an "'s" that is "is", also before how they are ("my
supervisor's lovely"); not said of a name, where "Owen's lovely mom" is his."""
LIGHT_VERBS = frozenset(
    index_terms(
        "spend spent go going went come came do did get got make made take took have had see "
        "saw say said tell told keep kept put use used find found give gave want need like "
        "love think feel know try plan start stay visit live work happen end turn call look bring set"
    )
)
"""Verbs said of anything: a topic of these alone ("Where did Claire spend
Christmas?" once the day is set aside) says nothing of whose it is."""
BRAND_REACH = 1000
"""A brand's name may be anywhere in a text that speaks of the thing or in its
reply ("the Kharcha app", "what's the oven?" / "An Ooni. Don't judge")."""
RELATIVE_REACH = 8
"""How many words from a kinship word a name may be to be that relative's ("my
sister Layla", "her husband? Dev would love it")."""
THING_REACH = 16
"""How many words from a company's, a school's or a thing's word its name may be
("I got into Whitcombe! They've got a great art department, the school is huge"):
further off, a capitalised word is someone or something else ("Rory came home
without it AGAIN" about "a navy school jumper"). A brand is said anywhere ("got
the Ooni in the end, after weeks of reading about pizza ovens")."""


_VERB_ENDING = re.compile(r"ed$", re.IGNORECASE)
_NOT_A_NAME_SHAPE = re.compile(r"\w{3,}(?:ing|ed|ly)$", re.IGNORECASE)
"""A word opening a sentence in the shape of a verb or an adverb ("Sleeping.",
"Honestly"), not a name."""
_A_HOLIDAY = re.compile(r"(?:['’]?s)?\s+Day\b")


def _unaccented(word: str) -> str:
    """``word`` without its accents ("Mamá" -> "Mama")."""
    return "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))


def _is_a(head: str, word: str) -> bool:
    """Whether ``word`` says the relative, role or pet ``head`` (an index term) in
    any of its forms ("mum" for "mother", "pups" for "dog")."""
    return head in kinds(in_any_form(index_terms(word)))


def _not_a_noun(token: str, after: str) -> bool:
    """Whether a word that says a relative or a role in some form says none here:
    a verb ("she bossed him around", "he photographed it") or a holiday
    ("Happy Mother's Day")."""
    return _VERB_ENDING.search(token) is not None or _A_HOLIDAY.match(after) is not None


def _named_near(
    head: str,
    texts: list[str],
    query: Query,
    known: Callable[[str], bool],
    is_name: Callable[[str], bool],
    *,
    called: bool = False,
    titles: bool = True,
    voices: Sequence[Voice] = (),
    reach: int = RELATIVE_REACH,
    thing: bool = False,
    in_sentence: bool = False,
    opening: bool = False,
    role: bool = False,
    body: bool = False,
) -> tuple[bool | None, bool]:
    """Whether a text that says ``head`` (an index term, in any of its forms) has a
    capitalised name within :data:`RELATIVE_REACH` words of it (see
    :func:`relative_named`), ``None`` when a text asks for that name ("What's your
    mum's name?"); and whether any text says ``head`` at all. A pet or a ``role``
    said of a kind ("fine with cats", "you guys", "he's a physio") is none, and a
    thing after "my" or "her" names no role ("Physio said my Novablasts were
    done"). ``titles``: a name after a title may be the one asked (a person's role);
    without, it is someone else ("Dr. Visser's group", for a restaurant). ``body``:
    a company or a school is asked, named after "at", "to", "from" or "with" ("with
    Pathways") and never by a word of a body's kind alone ("the University
    Hospital")."""
    # a word said in lower case somewhere is a word, not a name, at a sentence's start
    lower = {w for text in texts for w in re.findall(r"\b[a-z]+\b", text)}
    # and one never written with a capital inside a sentence is no name there either
    inside = {
        name.group()
        for text in texts
        for name in _NAME_LIKE.finditer(text)
        if not _STARTS_SENTENCE.search(text, 0, name.start())
    }
    asked = set(_NAME_LIKE.findall(query.text))
    # a word any of the texts says as a place ("in Manchester") is no one's name
    places = {m.group(1) for text in texts for m in _A_PLACE.finditer(text)}
    spoken_of = False
    asked_plural = any(
        token.endswith("s") and _is_a(head, token) for token in WORD.findall(query.text)
    )
    for number, text in enumerate(texts):
        tokens = list(WORD.finditer(text))
        place = {t.start(): n for n, t in enumerate(tokens)}
        bounds = _sentences(text, tokens)
        sentences = bounds if in_sentence else None
        at = [
            n
            for n, t in enumerate(tokens)
            if _is_a(head, t.group()) and not _not_a_noun(t.group(), text[t.end() :])
        ]
        if number < len(voices):
            # "Rosamma's son", Leah's "his mum": a relative of someone else's; and one
            # whose name they ask ("A DOG!!!! What's his name?!") is not theirs
            voice = voices[number]
            if any(
                _ASKS_A_NAME.match(text, token.start())
                and _asks_of_anothers(text, tokens, bounds[n], voice, query)
                for n, token in enumerate(tokens)
            ):
                at = []
            at = [
                n
                for n in at
                if _whose(tokens, n, voice, query) is not False
                and (head not in PETS or _pet_whose(text, tokens[n], voice, query) is not False)
                and not _asks_of_anothers(text, tokens, bounds[n], voice, query)
                and not _anothers_photo(text, tokens[n], head, voice, query)
            ]
        if head in PETS:
            # "fine with cats", "thinking about getting a cat": no pet of theirs yet,
            # and no name beside it is one ("Tunde's trying to get me to get a cat")
            at = [
                n
                for n in at
                if not _generic(text, tokens, n, asked_plural) or _in_caption(text, tokens[n])
            ]
        elif role:
            # "Porto landlords", "did you guys get hit", "he's a physio": a kind, a
            # job said of someone, no one's landlord or physio
            at = [
                n
                for n in at
                if not _generic(text, tokens, n, asked_plural, role=True)
                and not _A_JOB.search(text, max(0, tokens[n].start() - 40), tokens[n].start())
            ]
        if not at:
            continue
        spoken_of = True
        if _ASKS_A_NAME.search(text):
            return None, True  # "What's your mum's name?": the turn after may say it, in any case
        for said_as in (_CALLED if titles else _CALLED_THING).finditer(text) if called else ():
            # "an old guy called jim", "dr wiśniewska": a name, whatever its case
            word = said_as.group(1)
            where = place.get(said_as.start(1))
            if (
                where is not None
                and word.lower() not in STOP_WORDS
                and not known(word.capitalize())
                and any(
                    abs(where - n) <= 2 * reach
                    and (
                        sentences is None
                        or _names_it(sentences, tokens, n, where, text, titled=True)
                    )
                    for n in at
                )
            ):
                return True, True
        for name in _NAME_LIKE.finditer(text):
            word = name.group()
            if (
                word.lower() in DAY_NAMES
                or word.lower() in _DEMONYMS
                # "the University Hospital" names no university: "Bilborough College" does
                or (body and word.lower() in _BODY_WORDS)
                or word in asked  # the name asked for is not in the question
                or known(word)
                or is_their_name(word, query)
                or word in places
            ):
                continue
            if kin(index_terms(_unaccented(word))) & RELATIONS:
                continue  # "Mum", "Mamá" is a relative, not their name
            if not thing and (
                _A_PLACE_OF.match(text, name.end())
                or _PLACE_OF_BEFORE.search(text, max(0, name.start() - 40), name.start())
            ):
                continue  # "climb Arthur's Seat": a place's name, no one's
            if word.lower() in _NEVER_NAMES:
                continue  # "taking him tues Anyone up for it?", "5 seeds Haha": no full stop
            if _STARTS_SENTENCE.search(text, 0, name.start()) and (
                word.lower() in lower
                or word.lower() in STOP_WORDS
                or (
                    word not in inside
                    and not is_name(word)
                    and (not opening or _NOT_A_NAME_SHAPE.search(word) is not None)
                )
            ):
                continue
            run = _run_start(text, name.start())
            # a company or a school asked for is "at Brightwire", "with Pathways"
            place_before = _IN_TOWN_BEFORE if body else _PLACE_BEFORE
            if place_before.search(text, max(0, name.start() - 8), name.start()):
                continue
            if _PARTICLE.search(text, run, name.start()) and place_before.search(
                text, max(0, run - 8), run
            ):
                continue  # "on Witte de Withstraat": a place, whichever word of it
            if (_IN_TOWN_BEFORE if body else _IN_PLACE_BEFORE).search(text, max(0, run - 8), run):
                continue  # "in Cape Town"
            if run < name.start() and is_their_name(text[run : name.start()].split()[-1], query):
                continue  # "Tony Marchetti": their own last name
            if not thing and _ARTICLE_BEFORE.search(text, 0, run):
                continue  # "get a Polo", "a Toyota Yaris": a thing's name
            if role and _THEIRS_BEFORE.search(text, 0, run):
                continue  # "Physio said my Novablasts were done": a thing of theirs
            if not titles and _TITLE_BEFORE.search(text, max(0, run - 6), run):
                continue  # "Dr. Visser's group": a person, not the restaurant asked
            where = place.get(name.start())
            if (
                where is not None
                and _OWNS.match(text, name.end())
                and not _IS_SHORT.match(text, name.end())
                and any(0 < n - where <= OWNER_REACH for n in at)
            ):
                continue  # "Naomi's grandmother", "Owen's mom": whose relative, not its name
            if where is not None and any(
                abs(where - n) <= reach
                and (sentences is None or _names_it(sentences, tokens, n, where, text))
                for n in at
            ):
                return True, True
    return False, spoken_of


_SENTENCE_END = re.compile(
    _NOT_AFTER_A_TITLE
    + r"[.!?;]+(?=\s|$)|,\s+(?=(?:and|but|so)\b)|\n|[\u2600-\u27bf\U0001F000-\U0001FFFF]+"
)
"""Where a sentence, or a clause of its own, ends (see :func:`_sentences`)."""
_SAYS_A_NAME = re.compile(r"(?<!\bmy )\b(?:name|names|named|called)\b", re.IGNORECASE)
"""A sentence saying someone's name ("Her name's Kavya"), not the speaker's own."""
_TITLE_BEFORE = re.compile(r"\b(?:mr|mrs|ms|dr|prof)\.?\s*$", re.IGNORECASE)


def _sentences(text: str, tokens: list[re.Match[str]]) -> list[tuple[int, int, int]]:
    """For each token of ``text``: its sentence's number and the sentence's first
    and last token (a sentence ends at ".", "!", "?", ";", a line's end or an
    emoji; a clause before ", and", ", but", ", so" is one too)."""
    ends = [m.start() for m in _SENTENCE_END.finditer(text)]
    numbers: list[int] = []
    sentence = 0
    for token in tokens:
        while sentence < len(ends) and ends[sentence] < token.start():
            sentence += 1
        numbers.append(sentence)
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for n, number in enumerate(numbers):
        first.setdefault(number, n)
        last[number] = n
    return [(number, first[number], last[number]) for number in numbers]


_CLOSING = 2
"""How many words after a relative's word its sentence may go on for a name opening
the next to be theirs ("my sister is here! Carmen arrived on Wednesday")."""


def _names_it(
    sentences: list[tuple[int, int, int]],
    tokens: list[re.Match[str]],
    relative: int,
    name: int,
    text: str,
    *,
    titled: bool = False,
) -> bool:
    """Whether the capitalised word at token ``name`` may name the relative at token
    ``relative``: in its sentence, or opening the next when the relative's closes
    its own ("her husband? Dev would love it"), or in a next sentence that says a
    name ("Her name's Kavya"); not one in another sentence ("Efua did cry. So did
    my mother."). A name after a title or "called" (``titled``) may be anywhere in
    the next sentence when the relative's closes its own ("the cardiologist date
    finally. 9th december, dr wiśniewska")."""
    kin_sentence, _, kin_last = sentences[relative]
    name_sentence, name_first, _ = sentences[name]
    if name_sentence == kin_sentence:
        return True
    if name_sentence != kin_sentence + 1:
        return False
    following = text[tokens[name_first].start() : tokens[sentences[name][2]].end()]
    if _SAYS_A_NAME.search(following):
        return True
    closing = relative == kin_last or (
        # "my sister is here! Carmen arrived", "my supervisor's lovely though. Nkem is
        # so calm": not "my mom's jade plant 🌱 Noor has"
        kin_last - relative <= _CLOSING
        and (
            not _OWNS.search(tokens[relative].group())
            or _IS_SAID.match(text, tokens[relative].end() - 2) is not None
        )
    )
    return closing and (
        titled or (name == name_first and not _TITLE_BEFORE.search(text, 0, tokens[name].start()))
    )


_ONE_TO_COME = re.compile(
    r"\b(?:get|getting|adopt|adopting|want|wants|wanted|wanting|can have|could have|"
    r"allowed|buy|buying|considering|about)\s+(?:a|an|another)\s+(?:[\w-]+\s+)?$",
    re.IGNORECASE,
)
"""Before a pet no one has yet: "decided to get a cat", "can have a cat"."""


_A_JOB = re.compile(
    r"(?:['’]s|\bis|\bwas|\bas|\bbe|\bbecome|\bbecame)\s+an?\s+(?:[\w-]+\s+)?$", re.IGNORECASE
)
"""Before a role said as someone's job ("he's a physio", "works as a dispatcher")."""


def _generic(
    text: str, tokens: list[re.Match[str]], at: int, asked_plural: bool, *, role: bool = False
) -> bool:
    """Whether the word at ``at`` speaks of a kind, not of someone's own: a plural
    where one is asked of ("dogs allowed", "fine with cats"), or one yet to come
    ("I've decided to get a cat"); not one of many ("one of the PE teachers") nor
    one whose thing is spoken of ("the surgeon's office")."""
    token = tokens[at]
    word = token.group().lower()
    plural = (
        word.endswith("s")
        and not (role and word.endswith(("'s", "’s")))
        and not _ONE_OF.search(text, max(0, token.start() - 40), token.start())
    )
    return (not asked_plural and plural) or bool(
        _ONE_TO_COME.search(text, max(0, token.start() - 40), token.start())
    )


_ONE_OF = re.compile(r"\bone of (?:the|my|your|his|her|their|our)\s+(?:[\w-]+\s+)?$", re.IGNORECASE)
"""Before a plural that says one of many ("one of the PE teachers")."""


def _in_caption(text: str, token: re.Match[str]) -> bool:
    """Whether ``token`` is inside a shared photo's caption ("[shared image: a grey
    cat ...]"), which says "a" of the speaker's own cat."""
    opened = text.rfind("[", 0, token.start())
    return opened >= 0 and text.find("]", opened) > token.start()


def _anothers_photo(text: str, token: re.Match[str], head: str, voice: Voice, query: Query) -> bool:
    """Whether ``token`` is a pet in a photo someone other than the person asked
    about shared ("[shared image: ... a ginger cat glaring]" by Jo, asked of Sam's)."""
    return (
        head in PETS
        and voice.speaker is not None
        and _in_caption(text, token)
        and not is_their_name(voice.speaker, query)
    )


class Voice(NamedTuple):
    """Who says a text and to whom (each ``None`` when not known)."""

    speaker: str | None
    addressee: str | None


_KIN_OWNER = re.compile(
    r"^(?:my|your|his|her|their)$"
    r"|^(?!(?:it|that|this|he|she|there|here|what|who|where|let)['’]s$)(.+)['’]s$",
    re.IGNORECASE,
)
"""The word before a relative that says whose it is ("my", "Rosamma's"); not a
word whose "'s" is "is" ("It's a consultancy")."""


def _whose(tokens: list[re.Match[str]], at: int, voice: Voice, query: Query) -> bool | None:
    """Whether the relative at token ``at`` is the asked person's, by the word that
    says whose it is ("my sister" in their own turn, "Rosamma's son", "your mother's
    sister"); ``None`` when no word says, or it cannot tell ("our mum", "her son"
    in another's turn)."""
    for back in (1, 2):  # "my sister", "my big sister"
        if at - back < 0:
            return None
        word = tokens[at - back].group()
        owner = _KIN_OWNER.match(word)
        if owner is None:
            continue
        if owner.group(1) is not None:
            if kin(index_terms(owner.group(1))) & RELATIONS:
                return False  # "your mother's sister": a relative's relative
            if not owner.group(1)[:1].isupper():
                return None
            return is_their_name(owner.group(1), query)
        pronoun = word.lower()
        speaker = voice.speaker
        if pronoun == "my":
            return None if speaker is None else is_their_name(speaker, query)
        if pronoun == "your":
            if any(is_their_name(token.group(), query) for token in tokens):
                return True  # "What's your mum's name Keiko?"
            return None if voice.addressee is None else is_their_name(voice.addressee, query)
        if pronoun == "their":
            return False  # "the children ... their mother": a relative of others
        # "his mum" in their own turn is someone else's mother
        return False if speaker is not None and is_their_name(speaker, query) else None
    return None


_OWNS_A_PET = re.compile(
    r"(?:(?<![\w'’])(?:i|we)(?:['’]ve|\s+have|\s+just|\s+finally|\s+also|\s+still)*"
    r"\s+(?:got|adopted|rescued|have|bought|own)"
    r"(?:\s+(?:a|an|another|two|three))?|(?<![\w'’])our)(?:\s+[\w'’-]+){0,3}\s+$",
    re.IGNORECASE,
)
"""Words before a pet's that say the speaker's household has it: "our dog", "we got a
dog", "I also have a very spoilt ginger cat"."""
_NOT_YET = re.compile(
    r"(?<![\w'’])(?:if|when|once|until|unless|whether)\s+(?:i|we)\b[^.!?]*$", re.IGNORECASE
)
"""A pet had only in a condition: "they'd be ok if I got a dog"."""


def _asks_of_the_other(text: str, voice: Voice, query: Query) -> bool:
    """Whether ``text`` ends in the asked person's own question saying nothing of
    themselves ("That's gold. And the boss?", see :func:`_asks_of_anothers`): it
    asks after something of the other's."""
    tokens = list(WORD.finditer(text))
    return bool(tokens) and _asks_of_anothers(
        text, tokens, _sentences(text, tokens)[-1], voice, query
    )


def _pet_whose(text: str, token: re.Match[str], voice: Voice, query: Query) -> bool | None:
    """Whether the pet at ``token`` is the asked person's, by the words that say the
    speaker's household has it ("our dog", "we got a dog"); ``None`` when they say
    nothing of it or who speaks is unknown."""
    before = text[max(0, token.start() - 60) : token.start()]
    owned = _OWNS_A_PET.search(before)
    if owned is None or voice.speaker is None or _NOT_YET.search(before[: owned.end()]):
        return None
    return is_their_name(voice.speaker, query)


def _asks_of_anothers(
    text: str,
    tokens: list[re.Match[str]],
    sentence: tuple[int, int, int],
    voice: Voice,
    query: Query,
) -> bool:
    """Whether the asked person, in their own turn, asks about a relative or pet in
    ``sentence`` (see :func:`_sentences`) without saying it is theirs ("How is Joy?
    Still has that cat that hates everyone?"): one asks of someone else's."""
    if voice.speaker is None or not is_their_name(voice.speaker, query):
        return False
    _, first, last = sentence
    end = _SENTENCE_END.search(text, tokens[last].end())
    if end is None or not end.group().startswith("?"):
        return False
    said = text[tokens[first].start() : tokens[last].end()]
    return not set(words(said)) & FIRST_PERSON_WORDS


_PARTICLES = "de|van|der|den|von|la|le|di|da|del|du|dos|das"
_PARTICLE = re.compile(rf"\s(?:{_PARTICLES})\s")
"""A lower-case word inside a name ("Witte de Withstraat", "Leonardo da Vinci")."""
_CAPITALISED_BEFORE = re.compile(rf"\b[A-Z][\w-]*\s+(?:(?:{_PARTICLES})\s+)?$")


def _run_start(text: str, start: int) -> int:
    """Where the run of capitalised words ending with the one at ``start`` begins
    ("Toyota" of "a Toyota Yaris", "Witte" of "Witte de Withstraat")."""
    while True:
        before = _CAPITALISED_BEFORE.search(text[max(0, start - 30) : start])
        if before is None:
            return start
        start = max(0, start - 30) + before.start()


def relative_named(
    query: Query,
    texts: Iterable[str],
    known: Callable[[str], bool],
    is_name: Callable[[str], bool] = lambda _word: False,
    *,
    voices: Sequence[Voice] = (),
    replies: Callable[[], Sequence[str]] = tuple,
    asked_before: Callable[[], Sequence[str]] = tuple,
    told_after: Callable[[], Sequence[str]] = tuple,
) -> bool | None:
    """For a question asking the name of someone's relative or partner ("What is the name of
    Tasha's sister?"), whether any of ``texts`` that speaks of that relative has a
    name within :data:`RELATIVE_REACH` words of the kinship word: a capitalised word
    that is not a speaker or the person asked about (``known``), a month or day, a
    place after "in" or "to", nor whose relative it is ("Naomi's grandmother"); at a
    sentence's start, only a word no text says in lower case that a text writes with
    a capital inside a sentence or that is a name memory holds (``is_name``). Nor is
    a word the question itself says ("the Lebanese restaurant in Ancoats"), a
    nationality ("Irish fella"), a thing's name after "a" or "the" ("get a Polo", "a
    Toyota Yaris"), or a word a text says as a place ("So, Manchester." when
    another says "in Manchester").

    When no text speaks of the relative, ``False`` if the question says by name
    whose they are ("Ellie's brother"), except for relatives often told of through
    another (a niece as "your sister's toddler"). A pet's name ("What is the name
    of Dana's dog?") is judged the same way, except that a pet spoken of is often
    called by its name alone ("biscuit ate it"), so one spoken of gives ``False``
    only when no name is near its word across sentences and turns either (see
    :func:`_pet_named_beside`). Someone asked of by their role ("the name of Tobenna's
    landlord", "the contractor renovating Arjun's flat"), or a place or body by
    what it is ("the name of the shelter where Jiwon adopted Dubu"), is judged the
    same way,
    and a word after "called", "named" or a title is a name in any case ("an old
    guy called jim", "dr wiśniewska"); a person's role or a body no text speaks
    of is left to the texts' other words ("the PT", "she's at Deloitte"), and a
    place's kind no text speaks of ("the tapas bar in El Born") gives ``False``.
    ``voices`` says who said each text and to whom, so a
    relative a text says is someone else's ("Rosamma's son", another's "my son") is
    not theirs; ``replies`` reads the turn after each text, where a thing asked by
    name ("the name of the startup Kiran worked at") is often named alone, and
    someone asked of by their role is named in answer to a question ("Is the
    landlord nice?" "Older guy called Declan") or in a short reply ("Dr.
    Okafor?"); ``asked_before`` reads the turn before each text, where someone
    asked of by their role may be named by who asked about them ("who's Rick
    again?" "our contractor"). A relative's name is one in the sentence that
    speaks of them (see :func:`_names_it`), or in the reply to a text asking of
    them ("The baby? Tell me!" "her name is Frida") or in the turn before one that
    answers who they are ("Who's Alfie?" "My grandson."); ``told_after`` reads the
    few turns after each text together, where a relative or someone asked of by their
    role may be named as "him" or "her" ("I finally saw a physio" ... "his name is
    Marco").
    ``None`` when the question asks no relative's name, names the
    relative itself ("her brother Teo"), or leaves it to the texts' other words."""
    if _ABOUT_THE_NAME.search(query.text):
        return None  # "What does Wanjiru's puppy's name mean?": the name is not asked
    # the turns beside the texts are read at most once, and only when needed
    replies = functools.cache(replies)
    asked_before = functools.cache(asked_before)
    told_after = functools.cache(told_after)
    _things, head = possessed(query, anyones=True)
    head = PETS.get(head or "", head)
    role = _ROLE_NAMED.search(query.text)
    if (
        role is not None
        and (
            head is None
            or head not in RELATIONS | PETS.keys()
            # "the name of the physiotherapist who treated Ifeanyi's father": the role's
            or _OWNER_WORD.search(query.text[: role.end()]) is None
        )
    ):
        texts = list(texts)
        # "the vet practice", "the physio clinic": the place's word, or else the word
        # before it, which a chat may say alone ("the vets")
        which = next(n for n in (1, 2, 3) if role.group(n))
        said_as = [role.group(which)]
        said_as += [
            m.group(1) for m in _A_ROLE.finditer(query.text, role.start(), role.start(which))
        ]
        for role_word in said_as:
            named, spoken_of = _role_named(
                role_word, texts, query, known, is_name, voices, replies, asked_before
            )
            role_terms = index_terms(role_word)
            if (
                named is False
                and role_terms
                and _named_beside(role_terms[0], texts, told_after, _NAME_OF_THEM, known)
            ):
                named = True  # "I finally saw a physio" ... "his name is Marco"
            if named is not False or spoken_of:
                return named
        # a person's role is said in other words ("the PT", "our guy") and a body by
        # its name alone ("she's at Deloitte"), a place by its kind: a tapas bar no
        # text speaks of has no name remembered
        return False if said_as[0].lower() in _PLACES else None
    brand = brand_asked(query.text)
    # "Which school do Kwame's children go to?": the school's name, not the children's
    body = body_asked(query.text)
    if body is not None or (
        head not in RELATIONS
        and head not in PETS
        and (brand is not None or _ASKS_A_NAME_OF.search(query.text))
    ):
        thing = body or brand or head or _thing_named(query.text)
        if thing is not None and thing not in STOP_WORDS and not kinds([thing]) & PETS.keys():
            # its name is often said alone, in the reply ("what's the team called?"
            # "The Loose Pucks."), and after "the" ("the Kharcha app")
            texts = list(texts)
            answers = replies()
            told = [
                text + "\n" + (answers[n] if n < len(answers) else "")
                for n, text in enumerate(texts)
            ]
            if body is not None:
                return _body_named(body, texts, told, query, known, is_name, voices)
            named, spoken_of = _thing_named_near(
                thing,
                told,
                query,
                known,
                is_name,
                voices,
                reach=BRAND_REACH if brand is not None else THING_REACH,
            )
            return named if named is not False else (False if spoken_of else None)
    if (head not in RELATIONS and head not in PETS) or _NAMED_RELATIVE.search(query.text):
        return None  # not a relative's name, or the question says it ("her brother Teo")
    if any(kin(index_terms(owner)) & RELATIONS for owner in _OWNER_WORD.findall(query.text)):
        voices = ()  # "Priya's sister's husband": whose the turns' words cannot say
    texts = list(texts)
    named, spoken_of = _named_near(
        head,
        texts,
        query,
        known,
        is_name,
        voices=voices,
        in_sentence=True,
    )
    if named is not False:
        return named
    if spoken_of and (
        _named_beside(head, texts, replies, _NAME_GIVEN, known, keep=_asks)
        or _named_beside(head, texts, asked_before, _WHO_IS, known)
        or _named_beside(head, texts, told_after, _NAME_OF_THEM, known)
    ):
        return True  # "The baby? Tell me!" "her name is Frida"; "Who's Alfie?" "My grandson."
    if spoken_of and head in PETS and _only_anothers(head, texts, voices, query):
        return False  # "How's your cat btw?" of Sung-min's: the cat is Anneke's
    if spoken_of and head in PETS:
        # a pet is often called by its name alone ("Bjorn does the same thing with my
        # boots. 110 pounds of Bernese mountain dog"), in the turn that asks after it
        # ("how's Bonnie?" "She's not a summer dog.") or answers ("wax on the cat"
        # "poor Waffles"); a pet only ever "the cat" is never named
        return (
            None
            if _pet_named_beside(head, texts, query, known, is_name, replies, asked_before)
            else False
        )
    if spoken_of:
        return False
    # A relative never spoken of is unknown, when the question says whose they are by
    # name; a niece is often told of as "your sister's toddler", a grandson as "her
    # boy's kid", so those are left to the texts' other words.
    owned = _OWNER_NAMED.search(query.text) is not None
    return False if owned and head not in _TOLD_OF_THROUGH_OTHERS else None


def _role_named(
    role_word: str,
    texts: list[str],
    query: Query,
    known: Callable[[str], bool],
    is_name: Callable[[str], bool],
    voices: Sequence[Voice],
    replies: Callable[[], Sequence[str]],
    asked_before: Callable[[], Sequence[str]],
) -> tuple[bool | None, bool]:
    """For someone or somewhere asked of by ``role_word`` (see :func:`relative_named`):
    whether the texts, the turns answering them or the turns they answer name it,
    and whether any text speaks of it."""
    roles = index_terms(role_word)
    if not roles:
        return None, False
    # a place is named after no title (a "consultancy" is no "consultant")
    people = role_word.lower() in _PEOPLE_ROLES
    named, spoken_of = _named_near(
        roles[0],
        texts,
        query,
        known,
        is_name,
        called=True,
        titles=people,
        voices=voices,
        in_sentence=True,
        role=people,
    )
    if named is not False:
        return named, spoken_of
    # "Is the landlord nice?" "Older guy called Declan": named in the reply
    answers = replies()
    asked = [
        text + "\n" + answers[n]
        for n, text in enumerate(texts)
        if n < len(answers)
        and text.rstrip().endswith("?")
        # "And the boss?" from the person asked about: the other's boss is named
        and not (n < len(voices) and _asks_of_the_other(text, voices[n], query))
    ]
    named, _ = _named_near(roles[0], asked, query, known, is_name, called=True, titles=people)
    # "who's Rick again?" "our contractor": named in the turn it answers;
    # "the cardiologist cleared him" "Dr. Okafor?": in a short reply
    if named is False:
        named = _named_beside(roles[0], texts, asked_before, _WHO_IS, known) or _named_beside(
            roles[0],
            texts,
            lambda: answers,
            _CALLED if people else _CALLED_THING,
            known,
            keep=_short,
        )
    return named, spoken_of


def _only_anothers(head: str, texts: Sequence[str], voices: Sequence[Voice], query: Query) -> bool:
    """Whether the pet ``head`` that ``texts`` speak of is said to be the other
    speaker's ("your cat" said by the person asked about, another's "my cat", or
    the person asked about asking after it: "and the cat, the mouth is healed?")
    and never said to be theirs by the word that says whose it is (see :func:`_whose`:
    "my cat" in their own turn, "your cat" to them or in a text that names them,
    "Gwen I have bad news and it involves your dog")."""
    anothers = False
    for text, voice in zip(texts, voices, strict=False):
        if not speaks_of(head, text):
            continue
        tokens = list(WORD.finditer(text))
        bounds = _sentences(text, tokens)
        for n, token in enumerate(tokens):
            if not _is_a(head, token.group()):
                continue
            if _asks_of_anothers(text, tokens, bounds[n], voice, query):
                anothers = True  # "and the cat, the mouth is healed?": her son's cat
                continue
            if n == 0:
                continue
            whose = _whose(tokens, n, voice, query)
            household = _pet_whose(text, token, voice, query)
            if whose or household:
                return False
            # only a speaker's "my" or "your" says it is the other's, not "her grandma's",
            # or a speaker's "our dog", "we got a dog"
            said = {tokens[n - back].group().lower() for back in (1, 2) if n - back >= 0}
            anothers = (
                anothers or (whose is False and bool(said & _SPEAKERS_OWN)) or household is False
            )
    return anothers


_SPEAKERS_OWN = frozenset({"my", "your"})


PET_REACH = 15
"""How many words from a pet's word, across sentences and into the turns beside
its text, its name may be ("how's Bonnie?" "Sleeping. It's been warm. She's not
a summer dog.")."""


def _pet_named_beside(
    head: str,
    texts: Sequence[str],
    query: Query,
    known: Callable[[str], bool],
    is_name: Callable[[str], bool],
    replies: Callable[[], Sequence[str]],
    asked_before: Callable[[], Sequence[str]],
) -> bool:
    """Whether a name may be that of the pet ``head`` that ``texts`` speak of: within
    :data:`PET_REACH` words of its word, in any sentence of the text or of the turns
    before and after it, one opening a sentence too ("Pepper ignored me for two
    days" / "that cat has a vendetta against you"), or one the turn before asks
    after in any case ("how's pickles?")."""
    after = replies()
    before = asked_before()
    beside = [
        "\n".join((before[n] if n < len(before) else "", text, after[n] if n < len(after) else ""))
        for n, text in enumerate(texts)
    ]
    # a pet's name often opens a turn ("Pepper ignored me for two days")
    named, _ = _named_near(head, beside, query, known, is_name, reach=PET_REACH, opening=True)
    if named is not False:
        return True
    # "how's pickles?" "tree's gone. now she just sits in the sink. 14 lbs of cat"
    return any(
        found.group(1).lower() not in _NEVER_NAMES | _ASKED_AFTER_NOT_NAMED
        and not known(found.group(1).capitalize())
        for n, text in enumerate(texts)
        if n < len(before) and speaks_of(head, text)
        for found in _ASKS_AFTER.finditer(before[n])
    )


_ASKS_AFTER = re.compile(r"\bhow(?:['’]s| is)\s+([^\W\d_][\w'’-]+)\b(?!['’])", re.IGNORECASE)
"""A turn asking after someone or a pet by its name, in any case ("how's pickles")."""
_ASKED_AFTER_WORDS = (
    "work school uni college job life things everything everyone family weather trip "
    "holiday week weekend day house flat move training"
)
_ASKED_AFTER_NOT_NAMED = frozenset(_ASKED_AFTER_WORDS.split())
"""What a turn asks after ("how's work?") that names no one."""


def speaks_of(head: str, text: str) -> bool:
    """Whether ``text`` says the relative or role ``head`` in any of its words."""
    return any(_is_a(head, t) for t in WORD.findall(text))


def _named_beside(
    head: str,
    texts: Sequence[str],
    beside: Callable[[], Sequence[str]],
    name: re.Pattern[str],
    known: Callable[[str], bool],
    *,
    keep: Callable[[str, str], bool] = lambda _text, _other: True,
) -> bool:
    """Whether a text that speaks of the relative or role ``head`` has, in the turn
    ``beside`` it (one per text, read only when one speaks of it), a name the pattern
    ``name`` finds (its first group) that is no one ``known``; ``keep`` says which
    pairs of a text and that turn count."""
    speaking = [n for n, text in enumerate(texts) if speaks_of(head, text)]
    if not speaking:
        return False
    turns = beside()
    return any(
        not known(found.group(1).capitalize())
        and found.group(1).lower() not in STOP_WORDS  # "Ice it. Called it"
        for n in speaking
        if n < len(turns) and keep(texts[n], turns[n])
        for found in name.finditer(turns[n])
    )


def _short(_text: str, reply: str) -> bool:
    """Whether ``reply`` is short enough to name whom the text spoke of ("Dr. Okafor?")."""
    return len(WORD.findall(reply)) <= _SHORT_REPLY


def _asks(text: str, _reply: str) -> bool:
    """Whether ``text`` asks something its reply may answer ("The baby? Tell me!")."""
    return "?" in text


_NAME_GIVEN = re.compile(
    rf"\b(?:name is|name's|name’s|called|named)\s+([{_UPPER}][{_LOWER}]{{2,}})"
)
"""A name given as one ("her name is Frida", "called Declan")."""
_NAME_OF_THEM = re.compile(
    rf"\b(?i:(?:his|her) name(?:['’]s| is| was)|(?:he|she)(?:['’]s| is) called)\s+"
    rf"([{_UPPER}][{_LOWER}]{{2,}})"
)
"""A name given as the name of "him" or "her" ("her name is Emma, by the way")."""
_WHO_IS = re.compile(rf"\b(?i:who(?:['’]s| is| was))\s+([{_UPPER}][{_LOWER}]{{2,}})\b[^.!]*\?")
"""A turn asking who someone is ("who's Rick again?")."""


_ABOUT_THE_NAME = re.compile(r"^\W*(?:who|why|how)\b|\bname\b[^?]*\bmean\b", re.IGNORECASE)
"""A question about a name, not asking it ("Who came up with the name of Rohan's
cat?", "What does the puppy's name mean?")."""


_ROLES = (
    "landlord landlady caseworker contractor founder captain conductor neighbour neighbor "
    "boss manager supervisor coach teacher instructor tutor surgeon doctor nurse dentist "
    "cardiologist consultant technician mechanic plumber electrician builder tailor "
    "physio physiotherapist therapist counsellor counselor midwife vet trainer apprentice "
    "agent lawyer solicitor accountant realtor owner chef barber hairdresser stylist "
    "photographer driver aide carer caregiver nanny babysitter sitter teammate colleague "
    "coworker player pastor priest principal headteacher professor lecturer lead chief guy "
    "dispatcher recruiter gp optician pharmacist groomer cleaner gardener handyman decorator "
    "roofer joiner carpenter caretaker receptionist mentor advisor adviser inspector surveyor "
    "architect designer translator interpreter friend mate buddy pal vicar reverend rabbi "
    "imam chaplain creator influencer youtuber tenant"
)
_PLACE_ROLES = (
    # places a name is asked of ("the name of the shelter where …")
    "restaurant cafe café bar pub shelter hotel clinic gym nursery shop store bakery venue "
    "salon brewery practice"
)
_BODY_ROLES = "firm company agency charity consultancy startup"
"""Bodies a name is asked of, often said by their name alone ("she's at Deloitte")."""
_ROLE = "(" + "|".join((_ROLES + " " + _PLACE_ROLES + " " + _BODY_ROLES).split()) + ")"
_PEOPLE_ROLES = frozenset(_ROLES.split())
"""The roles that are people's ("landlord"), not places' or bodies' ("firm")."""
_PLACES = frozenset(_PLACE_ROLES.split())
"""The places a name is asked of, said by their kind when spoken of at all."""
_A_ROLE = re.compile(r"\b" + _ROLE + r"\b", re.IGNORECASE)
"""A role's word anywhere (the "vet" of "the vet practice")."""
_ROLE_NAMED = re.compile(
    r"\bnames? of (?:the |an? |his |her |their |[A-Z][\w-]*['’]s )?"
    r"(?:(?!(?:at|in|of|for|from|with|who|where|that|which|on|to) )[\w&-]+ ){0,3}"
    + _ROLE
    + r"s?\b|\b[A-Z][\w-]*['’]s (?:[\w-]+ ){0,2}?"
    + _ROLE
    + r"['’]?s? (?:(?:first |last |full )?name|called)\b|\bthe (?:[\w-]+ ){0,2}?"
    + _ROLE
    + r"['’]s (?:(?:first |last |full )?name)\b"
)
"""A question asking the name of someone by their role ("the name of Tobenna's
landlord", "Papá's cardiologist's first name", "the fire chief's name")."""


_ASKS_A_NAME_OF = re.compile(
    r"\bname of (?:the |an? |his |her |their |[A-Z][\w-]*['’]s )|\b[A-Z][\w-]*['’]s (?:[\w&-]+ ){1,3}called\?"
)
"""A question asking what a thing is called ("the name of the B&B Chloe stayed
at", "What is Kevin's food truck called?")."""
_NEVER_NAMES = (STOP_WORDS - {"will", "may", "june", "april", "august", "mark", "bill"}) | {
    "haha", "hahaha", "lol", "omg", "ok", "okay", "yes", "yeah", "yep", "nope", "wow", "ooh",
    "aww", "hey", "hi", "hello", "thanks", "please", "sorry", "anyway", "anyone", "someone",
    "everyone", "nobody", "tell", "also",
}  # fmt: skip
"""Words a chat capitalises where a full stop was not typed, that name no one."""
_NAME_OF_THING = re.compile(
    r"\bname of (?:the |an? |his |her |their |[A-Z][\w-]*['’]s )((?:[a-z&-]+ ?){1,4})"
)
_ENDS_PHRASE_WORDS = (
    "that which who whom where whose when in at on for from with by to near he she they we "
    "i you it his her their our my"
)
_ENDS_PHRASE = frozenset(_ENDS_PHRASE_WORDS.split())


_ASKS_A_BRAND = re.compile(
    r"^\s*(?:what|which)\s+(?:brand|make)(?:\s+and\s+model)?\s+(?:"
    r"of\s+(?P<of>(?:[\w-]+\s+){0,2}?[\w-]+)\s+(?:did|does|do|is|was|were|are|has|had|will)\b"
    r"|(?:is|was|were|are)\s+(?P<is>[^?]+))",
    re.IGNORECASE,
)
"""A question asking a thing's brand ("What brand is Maren's gravel bike?", "What
make of guitar did Tendai buy?"): a name, said like a thing's name."""


_BODIES = (
    "company firm employer business school university uni college nursery academy hotel "
    "airline bank church agency brewery bakery charity label "
    "publisher magazine newspaper podcast supermarket venue theatre theater gallery airport "
    "dealership builder builders contractor contractors rescue shelter insurer"
)
_ASKS_A_BODY = re.compile(
    r"^\s*(?:which|what)\s+(?!(?:kind|kinds|type|types|sort|sorts)\b)(?:[\w'’-]+\s+){0,2}?(?P<body>"
    + "|".join(_BODIES.split())
    + r")\s+(?=(?:did|does|do|is|was|were|are|has|had|will|would|can|could|won|ran|made|"
    r"sent|sold|took|let|laid|paid|bought|gave|built|runs|sells|makes|employs|supplies|hosts|sponsors|"
    r"[a-z]+ed)\b)",
    re.IGNORECASE,
)
"""A question asking which company, school, hotel or other body ("Which company
delivered the garden soil?", "Which school do Kwame's children go to?", "What
company does Dev work for?"): a name, said like a thing's name. Not a hospital,
a restaurant or a club: a chat names those by a ward, an acronym or a nickname
("A&E at the Queen Elizabeth", "the LGI", "a huge City fan")."""


_OTHER_BODIES = (
    "hospital clinic practice restaurant cafe bar pub museum club gym shop store salon studio "
    "garage team band infirmary"
)
"""Bodies no question is asked of by name (a chat says them by a ward, an acronym,
a nickname), whose words are still no name."""
_BODY_WORDS = frozenset((_BODIES + " " + _OTHER_BODIES).split())
"""The words of a body's kind, that a body's name may hold but never is alone."""
_BODY_TERMS = frozenset(index_terms(" ".join(_BODY_WORDS)))
_NOT_BESIDE = STOP_WORDS | LIGHT_VERBS
_RELATIVES_AND_PETS = RELATIONS | PETS.keys()
_CAPITAL = re.compile(rf"[{_UPPER}]")
_LOWER_CASE_SHARE = 0.3
"""From this share of the texts written without a capital letter on, a chat's
lower case says nothing of what is a name ("yeah i applied to bilborough
college")."""
_BODY_SAID_AS = {
    index_terms(body)[0]: tuple(term for word in also.split() for term in index_terms(word))
    for body, also in (
        ("university", "uni campus"),
        ("college", "campus"),
    )
}
"""The other words a chat says a body in ("on campus")."""


def _thing_named_near(
    word: str,
    told: list[str],
    query: Query,
    known: Callable[[str], bool],
    is_name: Callable[[str], bool],
    voices: Sequence[Voice],
    *,
    reach: int = THING_REACH,
    body: bool = False,
) -> tuple[bool | None, bool]:
    """:func:`_named_near` for the name of a thing or a body spoken of as ``word`` in
    ``told`` (each text with its reply): said after "called" in any case, within
    ``reach`` words, after "a" or "the" too ("the Kharcha app")."""
    return _named_near(
        word,
        told,
        query,
        known,
        is_name,
        called=True,
        voices=voices,
        reach=reach,
        thing=True,
        body=body,
    )


def _body_named(
    body: str,
    texts: list[str],
    told: list[str],
    query: Query,
    known: Callable[[str], bool],
    is_name: Callable[[str], bool],
    voices: Sequence[Voice],
) -> bool | None:
    """For a question asking which company or school (``body``, see
    :func:`body_asked`), whether ``told`` (``texts``, each with its reply) name it:
    within :data:`THING_REACH` words of its word, another word for it ("the bus across
    campus at York") or another body the question asks of ("for nursing school"),
    or within :data:`RELATIVE_REACH` words of another word of the question that is
    no relative, pet or everyday verb ("Northwave offered me a place on their
    graduate scheme" for "Which company offered Callum a graduate job?"). ``None``
    when no text says any of its words, or when the texts are a chat in lower case,
    where no capital says a name ("we're playing palmer's on the 18th")."""
    if _LOWER_CASE_SHARE * len(texts) <= sum(not _CAPITAL.search(text) for text in texts):
        return None
    spoken_of = False
    said_as = _BODY_SAID_AS.get(body, ())
    kinds_asked = [t for t in query.content_terms if t != body and t in _BODY_TERMS]
    for word in (body, *said_as, *kinds_asked):
        named, said = _thing_named_near(word, told, query, known, is_name, voices, body=True)
        if named is not False:
            return named
        spoken_of = spoken_of or said
    beside = (
        t
        for t in query.content_terms
        if t != body and t not in _NOT_BESIDE and not kin([t]) & _RELATIVES_AND_PETS
    )
    if any(
        _named_near(
            term,
            told,
            query,
            known,
            is_name,
            voices=voices,
            reach=RELATIVE_REACH,
            thing=True,
            body=True,
        )[0]
        for term in beside
    ):
        return True
    return False if spoken_of else None


def body_asked(question: str) -> str | None:
    """The kind of place or body ``question`` asks which one of ("school" of "Which
    school do Kwame's children go to?"), as an index term; ``None`` when it asks
    none."""
    found = _ASKS_A_BODY.search(question)
    if found is None:
        return None
    terms = index_terms(found["body"])
    return terms[0] if terms else None


def brand_asked(question: str) -> str | None:
    """The head noun of the thing whose brand ``question`` asks ("bike" of "What
    brand is Maren's gravel bike?", "bass" of "What brand of double bass did
    Wiktor buy?"), as an index term; ``None`` when it asks no brand."""
    found = _ASKS_A_BRAND.search(question)
    return _head_term((found["of"] or found["is"]).split()) if found is not None else None


_BEFORE_A_THING = frozenset(
    {"the", "a", "an", "his", "her", "their", "my", "your", "our", "new", "old"}
)
"""Words before a thing's own ("the", "her", "new"), passed over to reach it."""


def _head_term(phrase: Iterable[str]) -> str | None:
    """The last word of the noun phrase that ``phrase`` opens, as an index term:
    words before the thing ("the", "Maren's") are passed over, and it ends before
    a word that starts a clause ("the startup Kiran worked at", "the stroller
    Ciarán's coworkers bought")."""
    kept: list[str] = []
    for word in phrase:
        if kept and word[:1].isupper():
            break  # "the stroller Ciarán's coworkers bought": the stroller
        if word.lower() in _BEFORE_A_THING or _OWNS.search(word):
            continue
        if word.lower() in _ENDS_PHRASE:
            break
        kept.append(word)
    terms = index_terms(kept[-1]) if kept else []
    return terms[0] if terms else None


def _thing_named(question: str) -> str | None:
    """The head noun of what "the name of ..." asks ("startup" of "the name of the
    startup Kiran worked at"), as an index term."""
    found = _NAME_OF_THING.search(question)
    return _head_term(found.group(1).split()) if found is not None else None


_ASKS_LAST_NAME = re.compile(r"\b[A-Z][\w-]*['’]s\s+(?:(?:last|family)\s+name|surname)\b")
"""A question asking a named person's own last name ("Keisha's last name"), not
that of someone of theirs ("the surname of Lena's boss")."""


def last_name_said(query: Query, names: Iterable[str], texts: Iterable[str]) -> bool | None:
    """For a question asking a named person's last name ("What is Keisha's last
    name?"), whether it is known: their name (``names``: the named entities') has a
    second word, a text writes their first name followed by another capitalised
    word ("Keisha Brown"), or one speaks of their last name ("Keisha's surname is
    Brown"). ``None`` when the question asks no last name."""
    if not _ASKS_LAST_NAME.search(query.text):
        return None
    written = [name.split() for name in names if name.strip()]
    if not written:
        # someone memory holds no entity for ("Is Ellie going too?"): as the question
        # names them
        written = [[owner[:-2]] for owner in _OWNER_NAMED.findall(query.text)]
    if not written:
        return None
    if any(len(name) > 1 for name in written):
        return True
    firsts = "|".join(map(re.escape, (name[0] for name in written)))
    said = re.compile(rf"\b(?:{firsts})\s+(?!I\b)[A-Z][\w'’-]+")
    # "Dele's surname is Bakare": said as one
    told = re.compile(rf"\b(?:{firsts})['’]s\s+(?:(?:last|family)\s+name|surname)\b")
    return any(said.search(text) or told.search(text) for text in texts)


_ASKS_FIRST_NAME_OF_TITLED = re.compile(
    rf"\b{_TITLES}\.?\s+(?P<surname>[A-Z][\w'’-]+)['’]s\s+(?:first|given|christian)\s+name\b"
)
"""A question asking the first name of someone said by title and surname ("What is
Mrs Okafor's first name?")."""


def first_name_said(query: Query, texts: Iterable[str]) -> bool | None:
    """For a question asking the first name of someone a chat calls by title and
    surname ("What is Mrs Okafor's first name?"), whether a text writes another
    capitalised word before the surname ("Grace Okafor") or speaks of their first
    name ("her first name is Grace"). ``None`` when the question asks no such name."""
    found = _ASKS_FIRST_NAME_OF_TITLED.search(query.text)
    if found is None:
        return None
    surname = re.escape(found["surname"])
    said = re.compile(rf"\b(?!{_TITLES}\b)[A-Z][\w'’-]+\.?\s+{surname}\b")
    told = re.compile(r"\bfirst\s+name\b", re.IGNORECASE)
    return any(said.search(text) or told.search(text) for text in texts)
