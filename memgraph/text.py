"""Text normalization and tokenization shared by the graph, recall and the mock provider."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

import Stemmer

__all__ = [
    "IRREGULAR_PAST",
    "KIN_WORDS",
    "SAME_WORDS",
    "SHORT_WORDS",
    "STOP_WORDS",
    "VERB_FORMS",
    "WORD_FORMS",
    "as_asked",
    "content_key",
    "in_any_form",
    "index_terms",
    "index_terms_many",
    "name_key",
    "similarity",
    "stem",
    "terms",
    "words",
]

_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_ASCII_SPLIT = {code: " " for code in range(1, 128) if not chr(code).isalnum()} | {0: " \x00 "}
_ASCII_WORDS = {code: " " for code in range(128) if not chr(code).isalnum()}
_SPLIT_FROM = 40
_WORD_OR_SEPARATOR = re.compile(r"[^\W_]+|\x00", re.UNICODE)
_POSSESSIVE = re.compile(r"['’]s\b", re.UNICODE)
_PRONOUN_CONTRACTION = re.compile(
    r"\b(i|you|u|we|they|he|she|it|that|there|who|what)['’](?:d|ll|ve|re|m)\b", re.UNICODE
)
"""A pronoun's contraction ("we'd", "I'll", "she'll"): read as the pronoun alone, not
as the word its letters spell without the apostrophe ("wed", "ill", "shell")."""
_TRAILING = re.compile(r"[\s.!;,]+$")

_STOP_WORD_TEXT = """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your yours
    yourself yourselves tell know remember recall anything something thing things user's
"""
STOP_WORDS: frozenset[str] = frozenset(_STOP_WORD_TEXT.split())
"""Words too common to match on (English function words and recall filler)."""


def _fold(text: str) -> str:
    if text.isascii():  # already NFKC; casefold is lower; split() knows the same spaces
        return " ".join(text.lower().split())
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


@functools.lru_cache(maxsize=4096)
def name_key(name: str) -> str:
    """The key two entity names share when they name the same thing.

    Case, Unicode compatibility forms (NFKC) and runs of whitespace are ignored.
    """
    return _fold(name)


@functools.lru_cache(maxsize=4096)
def content_key(content: str) -> str:
    """The key two observations share when they state the same fact (kept for the
    latest texts: a write asks for the key of each new fact several times)."""
    return _TRAILING.sub("", _fold(content))


def words(text: str) -> list[str]:
    """Lower-case word tokens of ``text`` (NFKC, casefolded), in order."""
    if text.isascii():  # already NFKC; casefold is lower; no curly apostrophe
        folded = text.lower()
        if "'" in folded:
            folded = _PRONOUN_CONTRACTION.sub(r"\1", folded)
            folded = _POSSESSIVE.sub("", folded).replace("'", "")
        if len(folded) > _SPLIT_FROM:  # a C-speed split beats the regex on longer texts
            return folded.translate(_ASCII_WORDS).split()
        return _WORD.findall(folded)
    folded = _PRONOUN_CONTRACTION.sub(r"\1", unicodedata.normalize("NFKC", text).casefold())
    return _WORD.findall(_POSSESSIVE.sub("", folded).replace("'", "").replace("’", ""))


def terms(text: str) -> list[str]:
    """Word tokens of ``text`` without stop words or one-letter words."""
    return [w for w in words(text) if len(w) > 1 and w not in STOP_WORDS]


def similarity(a: str, b: str) -> float:
    """Token-set similarity of two texts in [0, 1] (Dice coefficient of their words)."""
    left, right = set(words(a)), set(words(b))
    if not left or not right:
        return 0.0
    return 2.0 * len(left & right) / (len(left) + len(right))


_STEMMER = Stemmer.Stemmer("english")


def stem(word: str) -> str:
    """The Snowball (Porter 2) English stem of a lower-case word: ``works`` /
    ``working`` / ``worked`` → ``work``, ``adoption`` → ``adopt``. A final ``i``
    that Snowball leaves for a ``y`` is dropped, so ``allergies`` meets ``allergic``."""
    kept = _NOT_STEMMED.get(word)
    if kept is not None:
        return kept
    found = str(_STEMMER.stemWord(word))
    return found[:-1] if len(found) > 4 and found.endswith("i") else found


_NOT_STEMMED = {"busy": "busy", "busier": "busy", "busiest": "busy"}
"""Words Snowball folds into another's stem: "busy" into "business" ("busi")."""


_TERM_OF: dict[str, str] = {}  # word -> its index term ("" for a stop word), memoized


_UNITS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9,
}  # fmt: skip
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}  # fmt: skip
_NUMBER_WORDS = {
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, **_TENS,
}  # fmt: skip
"""Numbers said in words that are index terms as digits ("twenty-three" is "23", as
"turned 23" says it); one to nine stay words, as "3", one character, is no term."""


def _numbers_as_digits(tokens: list[str]) -> list[str]:
    """``tokens`` with a tens word and the unit after it as one number ("twenty",
    "three" -> "23")."""
    if _TENS.keys().isdisjoint(tokens):
        return tokens
    merged: list[str] = []
    skip = False
    for at, token in enumerate(tokens):
        if skip:
            skip = False
            continue
        tens = _TENS.get(token)
        if tens is not None and at + 1 < len(tokens) and tokens[at + 1] in _UNITS:
            merged.append(str(tens + _UNITS[tokens[at + 1]]))
            skip = True
        else:
            merged.append(token)
    return merged


_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")
"""An ordinal in digits, "33rd": its number ("turned 33" for "her 33rd birthday")."""


def _index_term(word: str) -> str:
    found = _TERM_OF.get(word)
    if found is None:
        number = _NUMBER_WORDS.get(word)
        ordinal = _ORDINAL.fullmatch(word)
        if number is not None:
            found = str(number)
        elif ordinal is not None:
            found = ordinal.group(1)
        else:
            found = stem(word) if len(word) > 1 and word not in STOP_WORDS else ""
        if len(_TERM_OF) < 1_000_000:
            _TERM_OF[word] = found
    return found


_TERMS_OF_TEXT: dict[str, tuple[str, ...]] = {}  # text -> its index terms, memoized
_TEXTS_KEPT = 8192
_TEXT_CHARS_KEPT = 2000
"""Texts whose terms are kept: a remembered text is read by the extraction guards, then
indexed when its chunk commits (up to a window of texts later); a new fact likewise."""


def index_terms(text: str) -> list[str]:
    """Stemmed content terms of ``text``: what the keyword index stores and looks up."""
    found = _TERMS_OF_TEXT.get(text)
    if found is None:
        found = tuple([term for term in map(_index_term, _numbers_as_digits(words(text))) if term])
        if len(text) <= _TEXT_CHARS_KEPT:  # a long text is rare and would pin its memory
            if len(_TERMS_OF_TEXT) >= _TEXTS_KEPT:
                _TERMS_OF_TEXT.clear()
            _TERMS_OF_TEXT[text] = found
    return list(found)


def index_terms_many(texts: list[str]) -> list[list[str]]:
    """:func:`index_terms` of many texts at once (one normalization, one regex pass)."""
    if not texts:
        return []
    joined = "\x00".join(t.replace("\x00", " ") for t in texts)
    folded = unicodedata.normalize("NFKC", joined).casefold()
    folded = _PRONOUN_CONTRACTION.sub(r"\1", folded)
    folded = _POSSESSIVE.sub("", folded).replace("'", "").replace("’", "")
    if folded.count("\x00") != len(texts) - 1:  # NFKC merged a separator: go one by one
        return [index_terms(text) for text in texts]
    if folded.isascii():  # the common case: a C-speed split instead of a regex scan
        tokens = folded.translate(_ASCII_SPLIT).split()
    else:
        tokens = _WORD_OR_SEPARATOR.findall(folded)
    tokens = _numbers_as_digits(tokens)
    result: list[list[str]] = [[]]
    current = result[0]
    term_of = _TERM_OF
    for token in tokens:
        if token == "\x00":
            current = []
            result.append(current)
            continue
        term = term_of.get(token)
        if term is None:
            term = _index_term(token)
        if term:
            current.append(term)
    return result


IRREGULAR_PAST: dict[str, str] = {
    "went": "go", "met": "meet", "got": "get", "made": "make", "took": "take", "left": "leave",
    "began": "begin", "bought": "buy", "saw": "see", "said": "say", "told": "tell",
    "thought": "think", "knew": "know", "found": "find", "gave": "give", "came": "come",
    "became": "become", "felt": "feel", "kept": "keep", "held": "hold", "brought": "bring",
    "built": "build", "sold": "sell", "sent": "send", "spent": "spend", "taught": "teach",
    "wrote": "write", "drove": "drive", "ate": "eat", "drank": "drink", "ran": "run",
    "swam": "swim", "sang": "sing", "sat": "sit", "grew": "grow", "flew": "fly",
    "forgot": "forget", "heard": "hear", "led": "lead", "meant": "mean", "slept": "sleep",
    "chose": "choose", "spoke": "speak", "won": "win", "lost": "lose", "paid": "pay",
    "quit": "quit", "put": "put", "set": "set", "cut": "cut", "let": "let", "hit": "hit",
    "was": "be", "were": "be", "did": "do", "had": "have", "born": "bear", "grown": "grow",
    "known": "know", "fell": "fall", "broke": "break", "caught": "catch", "woke": "wake",
    "wore": "wear", "hid": "hide", "rode": "ride", "threw": "throw", "stole": "steal",
    "shook": "shake", "tore": "tear", "stood": "stand", "understood": "understand",
    "fed": "feed", "fought": "fight", "rang": "ring", "froze": "freeze", "drew": "draw",
    "blew": "blow", "dug": "dig", "hung": "hang", "shot": "shoot", "stuck": "stick",
    "swore": "swear", "bit": "bite", "sank": "sink", "struck": "strike", "spun": "spin",
    "taken": "take", "given": "give", "eaten": "eat", "fallen": "fall", "broken": "break",
    "written": "write", "driven": "drive", "chosen": "choose", "forgotten": "forget",
    "gone": "go", "gotten": "get", "begun": "begin", "flown": "fly", "drunk": "drink",
    "ridden": "ride", "sung": "sing", "spoken": "speak", "stolen": "steal", "swum": "swim",
    "thrown": "throw", "woken": "wake", "worn": "wear", "hidden": "hide", "torn": "tear",
    "drawn": "draw", "shaken": "shake", "sunk": "sink", "frozen": "freeze", "sought": "seek",
    "lent": "lend", "swept": "sweep", "swung": "swing", "dealt": "deal", "forgave": "forgive",
    "forgiven": "forgive",
}  # fmt: skip
"""Irregular past forms (and past participles) of English verbs -> their base form."""
_NOT_ONLY_PAST = frozenset(
    {"saw", "left", "found", "bit", "born", "rang", "was", "were", "did", "had"}
    | {"quit", "put", "set", "cut", "let", "hit"}
)
"""Past forms that are as often other words ("a bit", "on the left") or the verb's base
itself, or whose verb is a stop word."""


def _verb_groups() -> list[list[str]]:
    """The index terms of each irregular verb's forms (``make``, ``made``)."""
    groups: dict[str, list[str]] = {}
    for past, base in IRREGULAR_PAST.items():
        if past not in _NOT_ONLY_PAST:
            groups.setdefault(base, [base]).append(past)
    return [[stem(word) for word in group] for group in groups.values()]


KIN_WORDS: dict[str, str] = {
    "mother": "mom mum mama mommy mam",
    "father": "dad papa daddy",
    "grandmother": "grandma nana granny nan nanna gran nonna abuela oma babcia mamie",
    "grandfather": "grandpa grandad granddad nonno abuelo opa dziadek papy",
    "brother": "bro",
    "sister": "sis",
    "husband": "hubby",
    "children": "kids kid child",
    "grandchildren": "grandchild grandkids grandkid",
}
"""Family words -> the everyday words said for them."""
SHORT_WORDS: dict[str, str] = {
    "veterinary": "vet", "veterinarian": "vet", "technician": "tech", "technology": "tech",
    "professor": "prof", "university": "uni", "graduate": "grad",
    "graduation": "grad", "undergraduate": "undergrad", "laboratory": "lab",
    "mathematics": "math maths", "chemistry": "chem", "biology": "bio",
    "psychology": "psych", "economics": "econ", "statistics": "stats",
    "examination": "exam", "photograph": "photo pic picture", "picture": "pic photo",
    "bicycle": "bike", "motorcycle": "motorbike",
    "application": "app", "advertisement": "ad", "apartment": "apt", "gymnasium": "gym",
    "rehabilitation": "rehab", "physiotherapy": "physio", "refrigerator": "fridge",
    "television": "tv", "information": "info", "introduction": "intro",
    "congratulations": "congrats", "favorite": "fave fav favourite", "vacation": "vacay",
    "limousine": "limo", "influenza": "flu", "identification": "id",
    "administration": "admin", "representative": "rep", "sergeant": "sgt",
    "saxophone": "sax", "hippopotamus": "hippo", "physiotherapist": "physio",
    "medication": "meds", "birthday": "bday", "doctor": "doc dr", "boyfriend": "bf",
    "girlfriend": "gf", "tomorrow": "tmrw", "appointment": "appt", "tournament": "tourney",
    "weekend": "wknd", "kilometres": "km", "kilometers": "km", "hours": "hrs",
    "minutes": "mins", "street": "st", "road": "rd", "avenue": "ave",
}  # fmt: skip
"""Words -> their common clipped forms ("vet tech" for "veterinary technician")."""
SAME_WORDS: tuple[str, ...] = (
    "boss manager supervisor",
    "fired laid",
    "buy bought purchase purchased",
    "movie film",
    "physician doctor",
    "nickname nicknamed name named",
    "surgery operation op",
    "friend mate",
    "boyfriend bf",
    "girlfriend gf",
    "dental tooth teeth",
    "medicine medication",
    "jewellery jewelry",
    "housemate roommate flatmate",
    "fly flight flights",
    "colleague coworker workmate",
    "married marry wedding",
    "born birth",
    "rota roster rotation shifts",
)
"""Words everyday speech uses for one another ("my manager" for "her boss")."""
DERIVED_WORDS: dict[str, str] = {
    "apprenticeship": "apprentice", "internship": "intern", "membership": "member",
    "ownership": "owner", "championship": "champion", "sponsorship": "sponsor",
    "friendship": "friend", "citizenship": "citizen", "leadership": "leader",
    "childhood": "child kid", "parenthood": "parent", "motherhood": "mother mom",
    "fatherhood": "father dad", "adulthood": "adult",
}  # fmt: skip
"""Nouns made from another word that the stemmer leaves whole ("apprenticeship") -> the
words said for them ("started as an apprentice")."""
SAID_AS: dict[str, str] = {
    "arrive": "landed", "depart": "leave left", "departure": "leave left",
    "discharge": "home released", "resign": "quit notice", "relocate": "moved",
    "die": "passed", "engage": "proposed", "injure": "hurt", "vacation": "holiday",
    "accommodation": "flat halls dorm apartment", "split": "broke break breakup",
    "born": "baby newborn", "birth": "baby", "begin": "started", "withdraw": "pulled",
    "pay": "bought buy", "swallow": "ate eat", "gift": "gave give", "visit": "trip",
    "repair": "fixed", "see": "saw", "find": "found", "supervise": "supervisor",
    "give": "present gift", "agent": "realtor",
}  # fmt: skip
"""A question's formal word -> the everyday ones a chat says it in ("When did Tolu
arrive?": "I landed Thursday"), one way: "landed a job" is no arrival."""


def _word_forms(groups: Iterable[Iterable[str]]) -> dict[str, tuple[str, ...]]:
    """Each term of a group of index terms that say the same -> the group's others."""
    forms: dict[str, set[str]] = {}
    for group in groups:
        stems = list(dict.fromkeys(group))
        for term in stems:
            forms.setdefault(term, set()).update(other for other in stems if other != term)
    return {term: tuple(sorted(others)) for term, others in forms.items() if others}


VERB_FORMS: dict[str, tuple[str, ...]] = _word_forms(_verb_groups())
"""Index term of an irregular verb form -> the index terms of its other forms
(``make`` -> ``made``; ``led`` -> ``lead``), for matching a question's verb in
any tense."""


def _one_way(forms: dict[str, tuple[str, ...]], more: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """``forms`` with each word of ``more`` also finding its words, not the other way
    ("apprenticeship" finds "apprentice"; "friend" does not ask for "friendship")."""
    added: dict[str, tuple[str, ...]] = {}
    for word, bases in more.items():
        (term,) = index_terms(word)
        added[term] = tuple(
            sorted({*forms.get(term, ()), *added.get(term, ()), *index_terms(bases)})
        )
    return forms | added


WORD_FORMS: dict[str, tuple[str, ...]] = _one_way(
    _word_forms(
        [
            *_verb_groups(),
            *(index_terms(f"{word} {short}") for word, short in (KIN_WORDS | SHORT_WORDS).items()),
            *map(index_terms, SAME_WORDS),
        ]
    ),
    DERIVED_WORDS | SAID_AS,
)
"""Index term -> the index terms of the other words that say the same: a verb's other
forms (``make`` -> ``made``), a family word's everyday ones (``mother`` -> ``mom``)
clipped words (``veterinari`` -> ``vet``) and everyday equivalents (``boss`` ->
``manag``), and, one way, a derived noun's base (``apprenticeship`` -> ``apprentic``)
and a formal word's everyday ones (``arriv`` -> ``land``), for matching a question's
words in any of them."""


def _asked_as(forms: dict[str, tuple[str, ...]]) -> dict[str, frozenset[str]]:
    """Each word's index term -> the terms of the question words it says (``land``
    -> ``arriv``): :data:`WORD_FORMS` read backwards."""
    asked: dict[str, set[str]] = {}
    for term, said in forms.items():
        for form in said:
            asked.setdefault(form, set()).add(term)
    return {form: frozenset(terms) for form, terms in asked.items()}


_ASKED_AS = _asked_as(WORD_FORMS)


def as_asked(terms: Iterable[str]) -> set[str]:
    """A text's index terms in any form (:func:`in_any_form`) and the question words
    each says, one way too: a text's "landed" says "arrive", as a question's
    "arrive" finds "landed"."""
    found = in_any_form(terms)
    for term in list(found):
        found.update(_ASKED_AS.get(term, ()))
    return found


def in_any_form(terms: Iterable[str]) -> set[str]:
    """Index terms with the other words said for each (:data:`WORD_FORMS`): "make"
    also "made", "boss" also "manager"."""
    found = set(terms)
    for term in list(found):
        found.update(WORD_FORMS.get(term, ()))
    return found
