"""A rule-based English fact extractor: the offline stand-in for an LLM's extraction.

:func:`extract` turns plain English into the reply shape of the extraction
prompt (``entities`` / ``relations`` / ``expirations``). It is a handful of
deterministic rules, not a parser. Per clause it finds a subject (a name,
``I``/``we``/``my``, a pronoun, a possessive such as ``Alice's``) and a
predicate, then:

* records the predicate as an observation, conjugated to the third person
  (``I live in Paris`` → User: ``lives in Paris``);
* links named objects with a relation named after the verb phrase
  (``works_at``, ``reports_to``, ``based_in``, ``ceo_of``);
* turns ``no longer`` / ``not ... anymore`` / ``stopped ...ing`` into an
  expiration of the matching fact under ``<known>``;
* types entities by cues (``is a company``, ``works at X``, ``lives in X``,
  ``Inc``/``GmbH``, person verbs, pronouns); known entities keep their name and type.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from memgraph.clock import parse_iso
from memgraph.dates import mentions_time, read_days, resolve_relative_dates
from memgraph.llm_calls.prompts import KNOWN_FACTS
from memgraph.speakers import short_for, split_speaker
from memgraph.text import STOP_WORDS, content_key, name_key

from .embedder import stems
from .lexicon import (
    ANIMAL_HEADS,
    ATTR,
    AUX,
    BE,
    COMMON_NOUNS,
    COMMON_STARTS,
    CONCEPT_HEADS,
    DETERMINERS,
    FILLERS,
    GREETING_WORDS,
    HEAD,
    HOLIDAYS,
    IMPERATIVES,
    IMPERSONAL,
    KEEP_ADVERBS,
    KIN,
    KNOWN,
    MODALS,
    NAME_ATTRS,
    NAME_CONNECTORS,
    NEGATIONS,
    NOT_NAMES,
    ORG_HEADS,
    ORG_OBJECT_ROLES,
    ORG_RELATIONS,
    ORG_SUBJECT_RELATIONS,
    ORG_SUFFIXES,
    ORG_VERBS,
    PARTICLES,
    PAST,
    PERSON_RELATIONS,
    PERSON_ROLES,
    PERSON_SUBJECT_RELATIONS,
    PERSON_VERBS,
    PERSONAL_ATTRS,
    PLACE_HEADS,
    PLACE_RELATIONS,
    PLURAL_VERBS,
    PREPOSITIONS,
    PRODUCT_HEADS,
    PROJECT_HEADS,
    PRONOUN,
    RELATION,
    SMALL_TALK_WORDS,
    SMALLTALK,
    STUDENT_ROLES,
    SUFFIX,
    VERB,
    VERBS,
    _base,
    _finite,
    _gerund_base,
    _set,
    third_person,
)

__all__ = ["KnownEntity", "extract", "parse_known", "split_sentences", "third_person"]


# --------------------------------------------------------------------------- known


@dataclass
class KnownEntity:
    """One entity parsed from recall's text format (the ``<known>`` block)."""

    name: str
    type: str
    facts: list[str] = field(default_factory=list)
    relations: list[tuple[str, str]] = field(default_factory=list)


_HEADER = re.compile(r"^(?P<name>[^\s\-*•].*?)\s+\((?P<type>[^()]+)\)\s*(?::\s*(?P<fact>.*))?$")
_FACT = re.compile(r"^\s*[-*•]\s+(?P<fact>.+?)\s*$")


def parse_known(known: str) -> list[KnownEntity]:
    """Parse recall's text format: ``Name (type)`` headers followed by ``  - fact`` lines.

    A fact line with an arrow (``  - works_at → Acme``) is a relation
    ``(type, target)``; a single line ``Name (type): fact`` is also accepted, and
    so is the extraction prompt's ``Name (type): already stored: a; b``.
    """
    entities: list[KnownEntity] = []
    by_key: dict[str, KnownEntity] = {}
    current: KnownEntity | None = None
    for line in known.splitlines():
        if not line.strip():
            continue
        header = _HEADER.match(line) if not line[:1].isspace() else None
        if header:
            key = name_key(header["name"])
            current = by_key.get(key)
            if current is None:
                current = KnownEntity(header["name"].strip(), header["type"].strip().lower())
                by_key[key] = current
                entities.append(current)
            fact = (header["fact"] or "").strip()
            if fact.startswith(KNOWN_FACTS):  # render_known's one line per entity
                for item in fact[len(KNOWN_FACTS) :].split("; "):
                    _known_fact(current, item.strip())
            elif fact:
                current.facts.append(fact)
            continue
        fact = _FACT.match(line)
        if fact and current is not None:
            _known_fact(current, fact["fact"])
    return entities


def _known_fact(entity: KnownEntity, text: str) -> None:
    """Add one fact line of the known block to ``entity`` (a relation when it has an arrow)."""
    if "→" in text:
        rtype, _, target = text.partition("→")
        if name_key(target) != name_key(entity.name):  # else an incoming relation
            entity.relations.append((rtype.strip(), target.strip()))
    elif "←" not in text and text:
        entity.facts.append(text)


def _best_fact(phrase: str, facts: Iterable[str]) -> str | None:
    """The known fact that ``phrase`` restates, if any (exact key, else stem overlap ≥ 0.5)."""
    key = content_key(phrase)
    wanted = set(stems(phrase))
    best, best_score = None, 0.0
    for fact in facts:
        if content_key(fact) == key:
            return fact
        if wanted:
            score = len(wanted & set(stems(fact))) / len(wanted)
            if score > best_score:
                best, best_score = fact, score
    return best if best_score >= 0.5 else None


# --------------------------------------------------------------------------- text

_ROLE_LINE = re.compile(r"^\s*(user|human|me)\s*:\s*", re.IGNORECASE)
_OTHER_ROLE = re.compile(r"^\s*(assistant|ai|bot|system|tool)\s*:", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\bMr\.)(?<!\bMrs\.)(?<!\bMs\.)(?<!\bDr\.)(?<!\bSt\.)(?<!\bvs\.)"
    r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bProf\.)\s+"
)


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences (and lines), keeping their end punctuation.

    ``user:`` prefixes are dropped; ``assistant:``/``system:`` lines are skipped.
    """
    out: list[str] = []
    for line in text.replace("\r", "\n").split("\n"):
        if _OTHER_ROLE.match(line):
            continue
        line = _BULLET.sub("", _ROLE_LINE.sub("", line)).strip()
        out.extend(part.strip() for part in _SENTENCE_END.split(line) if part.strip())
    return out


_CONTRACTIONS = [
    (re.compile(r"\bI'm\b", re.I), "I am"),
    (re.compile(r"\bwon't\b", re.I), "will not"),
    (re.compile(r"\bcan't\b", re.I), "can not"),
    (re.compile(r"n't\b", re.I), " not"),
    (re.compile(r"'re\b", re.I), " are"),
    (re.compile(r"'ve\b", re.I), " have"),
    (re.compile(r"'ll\b", re.I), " will"),
    (re.compile(r"\b(I|you|he|she|we|they)'d\b", re.I), r"\1 would"),
    (re.compile(r"\b(he|she|it|that|there|what|who)'s (?=been\b|got\b)", re.I), r"\1 has "),
    (re.compile(r"\b(he|she|it|that|there|what|who)'s\b", re.I), r"\1 is"),
    (
        re.compile(
            r"\b([A-Z][\w-]*)'s (?=(?:a|an|the|not|no|now|from|in|at|very|also|still|currently|"
            r"going|working|living|always|never|back|here|so|based|married|moving)\b)"
        ),
        r"\1 is ",
    ),
]
_LEAD = re.compile(
    r"^(?:(?:hi|hello|hey|hiya|thanks|thank you|btw|by the way|fyi|also|and|but|so|plus|"
    r"anyway|anyways|actually|well|oh|ah|um|uh|please|just so you know|for the record|"
    r"honestly|basically|seriously|literally|lol|haha+|omg|wow|ugh|yay|aww+|guess what|"
    r"(?:quick|one|small|big|good|bad|fun|random|funny|huge|exciting|sad) (?:thing|news|update|"
    r"fact|question|note|one)|update|news|"
    r"for context|good (?:morning|afternoon|evening)|(?:please )?(?:remember|note|keep in mind)"
    r"(?: that)?|(?:yes|yeah|yep|no|nope|ok|okay|sure|great|cool|alright|right|hmm)(?=[,.!:;]))"
    r"(?:[\s,.!:;-]+|$))+",
    re.IGNORECASE,
)
_VOCATIVE = re.compile(
    r"^(?P<name>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)[,!]\s+(?=(?:I|[Ww]e|[Yy]ou|[Hh]e|[Ss]he|"
    r"[Tt]hey|[Ii]t|[Tt]his|[Tt]hat|[Tt]here|[Ss]o|[Jj]ust|[Gg]uess|[Gg]ot|[Hh]ad|[Bb]een)\b)"
)
"""A name that calls the one spoken to before the clause ("Maria, I started a yoga
class"): not the clause's subject."""
_CALLED = re.compile(r"^(?P<name>[A-Z][\w'-]+)[,!]\s+")
"""A first word set off by a comma: a name calling someone when it is theirs."""
_SUBORDINATE = re.compile(
    r"^(?:when|while|since|after|before|because|if|although|though|once)\b[^,]*,\s*", re.I
)
_FRONTED_TIME = re.compile(
    r"^((?:in|since|from|until|during|on|by|after|before)\s+[^,]*\d[^,]*|yesterday|today|"
    r"tonight|recently|lately|earlier today|(?:this|last) (?:morning|evening|night|week|"
    r"weekend|month|year|summer|winter|spring|autumn|fall)),?\s+(.+)$",
    re.I,
)
_TOKEN = re.compile(r"[,;:]|(?:[^\s,;:()\[\]\"“”]|(?<=\d)[,:](?=\d))+")
"""A word, or a comma, semicolon or colon; one between digits is the number's
("$1,450", "2:11:40")."""


_SHOUTED = re.compile(r"\b[A-Z][A-Z']*(?:[\s,]+[A-Z][A-Z']*\b)+")
_CAPS_WORD = re.compile(r"\b[A-Z]{2,}\b")


def _lower_run(match: re.Match[str]) -> str:
    """A run of capitalised words in lower case, "I" and "I'M" kept as the speaker."""
    run = match.group()
    if sum(len(word) > 1 for word in re.findall(r"[A-Z']+", run) if word[:2] != "I'") < 2:
        return run  # "I NEED" stays: one word is not a run
    return re.sub(
        r"[A-Z][A-Z']*",
        lambda w: w.group() if w.group()[:2] in ("I", "I'") else w.group().lower(),
        run,
    )


def _unshout(sentence: str) -> str:
    """Words written in capitals for emphasis in lower case ("I GOT THE JOB!!", "Leo had
    NO idea"): a run of them, or an everyday word. An acronym alone ("SQL") stays."""
    sentence = _SHOUTED.sub(_lower_run, sentence)
    return _CAPS_WORD.sub(
        lambda m: m.group().lower() if m.group().lower() in _LOUD_WORDS else m.group(), sentence
    )


def _prepare(sentence: str) -> str | None:
    """Normalise one sentence; ``None`` for questions, greetings and requests."""
    s = _unshout(sentence.replace("’", "'").replace("‘", "'").strip())
    if s.endswith("?"):
        return None
    s = s.rstrip(".!… ").strip()
    for pattern, replacement in _CONTRACTIONS:
        s = pattern.sub(replacement, s)
    s = _LEAD.sub("", s).strip()
    called = _VOCATIVE.match(s)
    if called and all(_capitalised(word) for word in called["name"].split()):
        s = s[called.end() :].strip()
    s = _SUBORDINATE.sub("", s).strip()
    fronted = _FRONTED_TIME.match(s)
    if fronted:
        s = f"{fronted[2]} {fronted[1][0].lower()}{fronted[1][1:]}"
    first = s.split(" ", 1)[0].lower().strip(",:;") if s else ""
    if not s or first in IMPERATIVES:
        return None
    if all(w.strip(",.!:;'").lower() in GREETING_WORDS for w in s.split()):
        return None
    return s


def _tokenize(sentence: str) -> list[str]:
    return [t.lstrip("'") for t in _TOKEN.findall(sentence) if t.lstrip("'")]


_I_FORMS = {"i": None, "i'm": "am", "i've": "have", "i'll": "will", "i'd": "would"}
_PLURAL_BE = {"am": "are", "was": "were"}


def _i_as(tokens: list[str], subject: str, *, plural: bool) -> list[str]:
    """A predicate with "I" inside it ("thinks I've lost it", "when I'm home") said of
    ``subject`` instead, its verb agreeing: "thinks Marcus has lost it", "when they
    are home"."""
    out: list[str] = []
    at = 0
    while at < len(tokens):
        token = tokens[at]
        form = token.lower().replace("’", "'")
        at += 1
        if form not in _I_FORMS:
            out.append(token)
            continue
        verb = _I_FORMS[form]
        asked = bool(out) and out[-1].lower() in AUX  # "what can I say": its verb stays
        if verb is None and at < len(tokens) and not asked:
            verb, at = tokens[at], at + 1
        out.append(subject)
        if verb is not None:
            low = verb.lower()
            if plural:
                out.append(_PLURAL_BE.get(low, verb))
            elif low in ("am", "have", "do") or low in VERBS:
                out.append(third_person(low))
            else:  # "I was", "I can", "I only", "I did"
                out.append(verb)
    return out


def _titled(index: int, token: str) -> bool:
    """A capitalised word inside a predicate ("playing You Are My Sunshine"): part of
    a title or a quotation, never a pronoun to resolve."""
    return index > 0 and token[:1].isupper() and token.split("'")[0] != "I"


def _join(tokens: Iterable[str]) -> str:
    return re.sub(r" ([,;:])", r"\1", " ".join(tokens)).strip(" ,;:")


def _snake(words: Iterable[str]) -> str:
    return re.sub(r"[^0-9a-z]+", "_", " ".join(words).lower()).strip("_")


def _clean_name(token_text: str) -> str:
    name = token_text.strip(" '\"")
    if name.endswith(("'s", "’s")):
        name = name[:-2]
    return name.rstrip(".!?-…").strip()


_GERUND = re.compile(r"^[A-Z][a-z]{2,}ing$")
_COMMON_WORD = re.compile(
    r"^[A-Z][a-z]{2,}(?:ness|ity|ities|tion|tions|sion|sions|ment|ments|ship|hood|ism|ful|ous|"
    r"ive|ies|ings|ure|ures|ally|fully|ously|ingly|edly|ively|ently|antly|ately|ably|ibly|ckily)$"
)
"""A capitalised first word shaped like a common noun, adjective or adverb
("Creativity", "Thankfully", "Memories"): not a name. Endings that names share
("Kelly", "Florence", "Constance") are left to :data:`COMMON_NOUNS`."""
_LOUD_WORDS = STOP_WORDS | COMMON_STARTS | COMMON_NOUNS | KEEP_ADVERBS | FILLERS
"""Everyday words that, written in capitals alone ("I have NEWS", "NEVER again"),
are said loudly, not acronyms."""


def _capitalised(token: str) -> bool:
    core = _clean_name(token)
    if not core or not core[0].isalpha() or core.lower() in NOT_NAMES | PERSON_ROLES:
        return False
    base, apostrophe, _rest = core.replace("’", "'").replace("`", "'").partition("'")
    if base == "I":
        return False  # "I'm", "I've": the speaker, capitalised mid-sentence
    if apostrophe and base.lower() in STOP_WORDS:
        return False  # "It'd", "That'd", "We`ve": a pronoun's contraction
    if sum(c.isalpha() for c in core) < 2:
        return False
    return core[0].isupper() or any(c.isupper() for c in core[1:])


def _is_participle(word: str) -> bool:
    return (word.endswith("ed") and len(word) > 4) or (word in PAST and word not in BE)


def _head_type(head: str) -> str | None:
    for word in (head, head[:-1] if head.endswith("s") else head):
        for heads, type_ in (
            (ORG_HEADS, "organization"),
            (PLACE_HEADS, "place"),
            (PERSON_ROLES, "person"),
            (PRODUCT_HEADS, "product"),
            (PROJECT_HEADS, "project"),
            (CONCEPT_HEADS, "concept"),
            (ANIMAL_HEADS, "animal"),
        ):
            if word in heads:
                return type_
    return "person" if head.endswith(("ist", "ian", "eer", "ologist")) else None


def _copula_head(pred: list[str]) -> str | None:
    """The head noun of ``is a <noun phrase>`` (``is a robotics company based ...`` → company)."""
    low = [t.lower() for t in pred]
    if not low or low[0] not in BE:
        return None
    i = 1
    while i < len(low) and low[i] in FILLERS | KEEP_ADVERBS:
        i += 1
    if i >= len(low) or low[i] in NEGATIONS:
        return None
    if low[i] not in DETERMINERS and not low[i].endswith("'s"):
        return None
    head = None
    for word in low[i + 1 :]:
        if word in STOP_WORDS or word in PREPOSITIONS or not re.fullmatch(r"[\w-]+", word):
            break
        if head is not None and _is_participle(word):
            break
        head = word
    return head


def _conjugate(pred: list[str]) -> list[str]:
    """Conjugate the first verb of a first-person predicate to the third person."""
    out = list(pred)
    i = 0
    while i < len(out):
        low = out[i].lower()
        if low in KEEP_ADVERBS or low in FILLERS:
            i += 1
        elif low == "no" and i + 1 < len(out) and out[i + 1].lower() == "longer":
            i += 2
        else:
            break
    if i < len(out):
        word, low = out[i], out[i].lower()
        if low in ("am", "are"):
            out[i] = "is"
        elif low == "were":
            out[i] = "was"
        elif low in _INFORMAL:
            out[i : i + 1] = _INFORMAL[low]
        elif low in ("have", "do") or (
            word == low
            and low.isalpha()
            and not (low in AUX or low in PAST or low.endswith("ed") or low in _NOT_VERBS)
        ):
            out[i] = third_person(low)
    return out


_INFORMAL = {"gonna": ["is", "going", "to"], "gotta": ["has", "to"], "wanna": ["wants", "to"]}
_NOT_VERBS = DETERMINERS | NEGATIONS | PREPOSITIONS | STOP_WORDS
"""Words a predicate may start with that are no verb to conjugate ("we all make
mistakes", "no matter where we are")."""


_LITTLE = STOP_WORDS | SMALL_TALK_WORDS | AUX | FILLERS | KEEP_ADVERBS | PARTICLES


def _says_little(words: list[str]) -> bool:
    """Whether a predicate (lowercase words) holds nothing but small talk: no word
    beyond the everyday words of a reaction ("feels great", "will give it a shot"),
    at most one when said to the listener ("is always here to support you", "will
    keep you posted"), or an interjection first ("sorry to hear about that")."""
    if words and words[0] in _INTERJECTIONS:
        return True
    content = [w for w in words if w.strip("'") not in _LITTLE and any(c.isalnum() for c in w)]
    return len(content) <= (1 if _TO_YOU.intersection(words) else 0)


_INTERJECTIONS = _set("thanks thank sorry glad awesome congrats congratulations wow")
_TO_YOU = _set("you your yours yourself u ur")


_INTRODUCING = re.compile(
    r"^\W*(?:hi|hello|hey|hiya|greetings|good (?:morning|afternoon|evening))\b|"
    r"\bnice to meet you\b|\bpleased to meet you\b",
    re.IGNORECASE,
)
"""A text that introduces its speaker: "I'm Marta" in it gives a name."""


def _first_clause(tokens: list[str]) -> list[str]:
    """``tokens`` up to the first comma or semicolon."""
    cut = next((i for i, t in enumerate(tokens) if t in (",", ";")), len(tokens))
    return tokens[:cut]


def _unnegate(pred: list[str]) -> list[str] | None:
    """The positive form of a predicate that ends a fact (``no longer``/``anymore``/``stopped``)."""
    low = [t.lower() for t in pred]
    out: list[str] = []
    marker = anymore = False
    i = 0
    while i < len(pred):
        if low[i] == "no" and low[i + 1 : i + 2] == ["longer"]:
            marker, i = True, i + 2
        elif low[i] == "anymore" or (
            low[i] == "any" and low[i + 1 : i + 2] in (["more"], ["longer"])
        ):
            anymore, i = True, i + (1 if low[i] == "anymore" else 2)
        else:
            out.append(pred[i])
            i += 1
    if marker:
        return out
    lo = [t.lower() for t in out]
    if anymore and ("not" in lo or "never" in lo):
        k = lo.index("not") if "not" in lo else lo.index("never")
        if k > 0 and lo[k - 1] in ("does", "do", "did") and k + 1 < len(out):
            return [*out[: k - 1], third_person(lo[k + 1]), *out[k + 2 :]]
        return out[:k] + out[k + 1 :]
    k = 0
    while k < len(lo) and lo[k] in KEEP_ADVERBS | FILLERS:
        k += 1
    start = k + 1 if lo[k : k + 1] and lo[k] in ("stopped", "stops", "quit", "quits") else None
    if lo[k : k + 2] in (["gave", "up"], ["gives", "up"]):
        start = k + 2
    if start is not None and start < len(lo) and lo[start].endswith("ing") and len(lo[start]) > 4:
        return [*out[:k], third_person(_gerund_base(lo[start])), *out[start + 1 :]]
    return None


# --------------------------------------------------------------------------- extractor


@dataclass
class _Entity:
    name: str
    type: str = "thing"
    rank: int = 0
    observations: list[str] = field(default_factory=list)
    used: bool = False

    def cue(self, type_: str | None, rank: int) -> None:
        if type_ and rank > self.rank:
            self.type, self.rank = type_, rank

    def observe(self, text: str) -> None:
        key = content_key(text)
        if key and all(content_key(o) != key for o in self.observations):
            self.observations.append(text)
        self.used = True


@dataclass
class _Subject:
    entities: list[_Entity]
    rest: list[str]
    conj: bool = False
    possessive: bool = False


_USER_SUBSTITUTES = {"my": "their", "me": "them", "mine": "theirs", "myself": "themselves"}
_USER_SUBSTITUTES |= {"our": "their", "us": "them", "ours": "theirs", "ourselves": "themselves"}
_OTHER_SUBSTITUTES = {"my": "User's", "me": "User", "mine": "User's", "myself": "User"}
_OTHER_SUBSTITUTES |= {"our": "User's", "us": "User", "ours": "User's"}
_PRONOUN_WANTS = {"he": "person", "she": "person", "him": "person", "her": "person"}
_PRONOUN_WANTS |= {"his": "person", "hers": "person", "it": "thing", "its": "thing"}
_TRAILING = _set("too thanks please now currently btw anyway honestly tbh lol lmao haha hahaha , !")


class _Extractor:
    def __init__(
        self,
        known: list[KnownEntity],
        *,
        speaker: str | None = None,
        addressee: str | None = None,
        said_at: datetime | None = None,
        text: str = "",
    ) -> None:
        self.known = known
        self.speaker = speaker or "User"
        self.addressee = addressee
        self.said_at = said_at
        self.days_said: dict[int, date] = {}  # the days the conversation named before
        self.context_people: list[str] = []  # person names of the previous turn
        self.known_by_key = {name_key(k.name): k for k in known}
        self.lower_words = set(re.findall(r"\b[a-z]+\b", text))  # written in lower case
        self.introducing = _INTRODUCING.search(text) is not None
        self.known_max = max((len(k.name.split()) for k in known), default=0)
        self.entities: dict[str, _Entity] = {}
        self.order: list[_Entity] = []
        self.relations: list[dict[str, str]] = []
        self.expirations: list[dict[str, str]] = []
        self.mentions: list[_Entity] = []
        self.subjects: list[_Entity] = []
        self.bound: dict[str, _Entity] = {}
        self.user_entity: _Entity | None = None

    # ----------------------------------------------------------------- entities

    def _new(self, name: str, type_: str | None, rank: int) -> _Entity:
        ent = _Entity(name)
        parts = name.lower().split()
        if type_:
            ent.cue(type_, rank)
        elif parts[-1] in ORG_SUFFIXES or parts[0] in ("university", "bank", "institute"):
            ent.cue("organization", SUFFIX)
        elif parts[0] in PROJECT_HEADS or parts[-1] in PROJECT_HEADS:
            ent.cue("project", SUFFIX)
        elif parts[0] in HOLIDAYS:
            ent.cue("event", SUFFIX)
        self.entities[name_key(name)] = ent
        self.order.append(ent)
        return ent

    def user(self) -> _Entity:
        """The speaker's entity (first-person words)."""
        if self.user_entity is None:
            known = self.known_by_key.get(name_key(self.speaker))
            name, type_ = (known.name, known.type) if known else (self.speaker, "person")
            self.user_entity = self.entities.get(name_key(name)) or self._new(name, type_, KNOWN)
            self.user_entity.cue("person", KNOWN)
        return self.user_entity

    def switch_speaker(self, speaker: str, *, addressee: str | None) -> None:
        """A new line of a transcript, said by ``speaker`` to ``addressee``."""
        self.speaker, self.addressee = speaker, addressee
        self.user_entity = None
        self.bound = {}

    def calls(self, word: str) -> bool:
        """Whether ``word`` is the first name of someone in the conversation, or its
        short form ("Pri" for Priyanka): said first or last in a clause, set off by
        a comma, it calls them."""
        key = name_key(word)
        if not key:
            return False
        for name in (self.addressee, self.speaker):
            first = name_key(name.split()[0]) if name else ""
            if first == key or short_for(key, first):
                return True
        return False

    def you(self) -> _Entity | None:
        """The addressee's entity ("you"), when the conversation says who it is."""
        if not self.addressee or name_key(self.addressee) == name_key(self.speaker):
            return None
        ent = self.entity(self.addressee)
        ent.cue("person", KNOWN)
        return ent

    def _alias(self, key: str, names: Iterable[str]) -> str | None:
        if " " in key:
            return None
        hits = [
            n
            for n in names
            if " " in n.strip() and key in (name_key(n).split()[0], name_key(n).split()[-1])
        ]
        return hits[0] if len(set(hits)) == 1 else None

    def entity(self, raw: str) -> _Entity:
        name = _clean_name(raw)
        key = name_key(name)
        if key in ("i", "me", "we", "us", "myself") or key == name_key(self.speaker):
            return self.user()
        found = self.entities.get(key)
        if found is None:
            known = self.known_by_key.get(key)
            alias = None if known else self._alias(key, [k.name for k in self.known])
            if alias:
                known = self.known_by_key[name_key(alias)]
            if known:
                found = self.entities.get(name_key(known.name)) or self._new(
                    known.name, known.type, KNOWN
                )
            else:
                alias = self._alias(key, [e.name for e in self.order])
                found = self.entities[name_key(alias)] if alias else self._new(name, None, 0)
            self.entities[key] = found
        return found

    def name_end(self, toks: list[str], i: int, initial: bool) -> int:
        """End (exclusive) of the name starting at ``toks[i]``, or ``i`` if none starts there."""
        for length in range(min(self.known_max, len(toks) - i), 0, -1):
            span = toks[i : i + length]
            key = name_key(_clean_name(" ".join(span)))
            possessive_inside = any(t.endswith("'s") for t in span[:-1])
            if key in self.known_by_key and key not in STOP_WORDS and not possessive_inside:
                known = self.known_by_key[key]
                if length == 1 and known.type == "thing" and not _capitalised(span[0]):
                    continue  # "nature", "family": a word, whatever an entity is called
                return i + length
        if not _capitalised(toks[i]) or (initial and _clean_name(toks[i]).lower() in COMMON_STARTS):
            return i
        j = i + 1
        while j < len(toks) and not toks[j - 1].endswith("'s"):
            if _capitalised(toks[j]):
                j += 1
            elif toks[j] in NAME_CONNECTORS and j + 1 < len(toks) and _capitalised(toks[j + 1]):
                j += 2
            else:
                break
        if initial and _GERUND.match(toks[i]):
            return i  # "Closing is set for December 15", "Exploring Japan was": a doing
        if initial and j == i + 1 and self._common_word(toks, i):
            return i
        if initial and j == i + 1 and not toks[i].endswith("'s"):
            # A capitalised first word is a name only when it reads as a subject:
            # a verb, "and" or an apposition follows ("Maria moved", not "Honestly I").
            k = j
            while k < len(toks) and toks[k].lower() in KEEP_ADVERBS | FILLERS | NEGATIONS | {
                "no",
                "longer",
            }:
                k += 1
            after = toks[k].lower() if k < len(toks) else ""
            apposition = (
                after == ","
                and toks[j + 1 : j + 2]
                and (
                    toks[j + 1].lower() in DETERMINERS | {"my", "his", "her", "our", "their", "who"}
                )
            )
            if not (after in ("and", "&") or apposition or (after and _finite(toks[k], False))):
                return i
        return j

    def _common_word(self, toks: list[str], i: int) -> bool:
        """Whether a capitalised first word reads as a common word: shaped like one
        ("Creativity", "Thankfully"), a plural with a plural verb ("Books are"),
        written in lower case elsewhere in the text ("Nature heals. I love nature"),
        or an everyday noun ("Music keeps me going")."""
        word = _clean_name(toks[i])
        if _COMMON_WORD.match(word):
            return True
        after = toks[i + 1].lower() if i + 1 < len(toks) else ""
        if re.fullmatch(r"[A-Z][a-z]+[^su]s", word) and after in PLURAL_VERBS:
            return True
        return word.lower() in self.lower_words or word.lower() in COMMON_NOUNS

    def mention(self, entities: Iterable[_Entity], subject: bool = False) -> None:
        for ent in entities:
            for seen in (self.mentions, self.subjects) if subject else (self.mentions,):
                if ent in seen:
                    seen.remove(ent)
                seen.append(ent)

    def resolve(self, pronoun: str, exclude: _Entity | None = None) -> _Entity | None:
        """The entity a pronoun refers to: the last fitting named entity, else the first known."""
        want = _PRONOUN_WANTS.get(pronoun)
        if pronoun in self.bound and self.bound[pronoun] is not exclude:
            return self.bound[pronoun]

        def fits(type_: str, rank: int, loose: bool) -> bool:
            if want == "person":
                return type_ == "person" or (loose and type_ == "thing" and rank < RELATION)
            return want is None or type_ != "person"

        pools = [
            [e for e in reversed(pool) if e is not self.user_entity and e is not exclude]
            for pool in (self.subjects, self.mentions)
        ]
        choice = next(
            (
                e
                for loose in (False, True)
                for pool in pools
                for e in pool
                if fits(e.type, e.rank, loose)
            ),
            None,
        )
        if choice is None and want == "person":
            # Not named in this text: the one person the previous turn named, else the
            # one known person (other than the speakers). Never a guess among several.
            speakers = {name_key(self.speaker), name_key(self.addressee or "")}
            for pool in (self.context_people, [k.name for k in self.known if k.type == "person"]):
                people = [n for n in dict.fromkeys(pool) if name_key(n) not in speakers]
                if len(people) == 1:
                    choice = self.entity(people[0])
                    break
                if people:
                    break
        if choice is not None:
            if want == "person":
                choice.cue("person", PRONOUN)
            if exclude is None:
                self.bound[pronoun] = choice
        return choice

    def known_facts(self, ent: _Entity) -> list[str]:
        known = self.known_by_key.get(name_key(ent.name))
        return known.facts if known else []

    # ----------------------------------------------------------------- facts

    def relate(self, source: _Entity, type_: str, target: _Entity) -> None:
        if source is target or not type_:
            return
        relation = {"from": source.name, "to": target.name, "type": type_}
        source.used = target.used = True
        if relation not in self.relations:
            self.relations.append(relation)

    def expire(self, ent: _Entity, tokens: list[str], only_known: bool = False) -> None:
        phrase = _join(tokens)
        if not stems(phrase):
            return
        match = _best_fact(phrase, self.known_facts(ent))
        if match is None and only_known:
            return
        item = {"entityName": ent.name, "observationContent": match or phrase}
        if item not in self.expirations:
            self.expirations.append(item)

    def supersede(self, ent: _Entity, text: str, possessive: bool) -> None:
        """Expire known single-valued facts the new one replaces (name, address, ...)."""
        key = content_key(text)
        attr = re.match(r"^(.{1,40}?) (?:is|are) ", key) if possessive else None
        for fact in self.known_facts(ent):
            old = content_key(fact)
            if old == key:
                continue
            if attr and re.match(re.escape(attr[1]) + r" (?:is|are) ", old):
                self.expire(ent, [fact])
            moves = ("lives in ", "moved to ", "relocated to ")
            if not possessive and key.startswith(moves) and old.startswith(moves):
                place = key.split(" ", 2)[2]
                if place not in old:
                    self.expire(ent, [fact])

    def correct(self, raw: str) -> bool:
        """A correction ("The trip moved to November 21, not the 14th"; "it's on
        Friday, not Thursday"): the known fact holding the old value gives way to the
        same fact with the new one. True when a fact was corrected."""
        match = _CORRECTION.search(raw.replace("’", "'"))
        if match is None:
            return False
        new, old = match.group("new").strip(), match.group("old").strip()
        new_number, old_number = _NUMBER_IN.search(new), _NUMBER_IN.search(old)
        topic = set(stems(raw[: match.start("new")])) - set(stems(new))
        best: tuple[int, KnownEntity, str] | None = None
        for known in self.known:
            for fact in known.facts:
                if old_number is not None:
                    holds = re.search(rf"\b{old_number.group(0)}\b", fact) is not None
                else:
                    holds = old.lower() in fact.lower()
                shared = len(topic & set(stems(fact)))
                if holds and shared and (best is None or shared > best[0]):
                    best = (shared, known, fact)
        if best is None:
            return False
        _shared, known, fact = best
        if old_number is not None and new_number is not None:
            fixed = re.sub(rf"\b{old_number.group(0)}\b", new_number.group(0), fact)
        else:
            fixed = re.sub(re.escape(old), new, fact, flags=re.IGNORECASE)
        owner = self.entity(known.name)
        self.expire(owner, [fact])
        owner.observe(fixed)
        return True

    # ----------------------------------------------------------------- clauses

    def sentence(self, raw: str) -> None:
        if self.correct(raw):
            return
        counts = {id(ent): len(ent.observations) for ent in self.order}
        self._sentence(raw)
        when = self.sentence_date(raw)
        if when is None:
            return
        # "Miso had her dental yesterday, they pulled two teeth": the day is the
        # sentence's, for the facts of every clause that names none.
        for ent in self.order:
            for index in range(counts.get(id(ent), 0), len(ent.observations)):
                fact = ent.observations[index]
                if not mentions_time(fact):
                    ent.observations[index] = f"{fact} ({when})"

    def sentence_date(self, raw: str) -> str | None:
        """The date a sentence's relative or partial date resolves to, if it has one."""
        if self.said_at is None:
            return None
        found = _RESOLVED.findall(
            resolve_relative_dates(raw, self.said_at, days_said=self.days_said)
        )
        known = set(_RESOLVED.findall(raw))
        fresh = [d for d in found if d not in known]
        return fresh[0] if fresh else None

    def _sentence(self, raw: str) -> None:
        prepared = _prepare(raw)
        if prepared:
            called = _CALLED.match(prepared)  # "Pri, the greyhound is gorgeous"
            if called and self.calls(called["name"]):
                prepared = prepared[called.end() :].strip()
        if not prepared:
            return
        toks = _tokenize(prepared)
        conj = bool(toks) and toks[0].lower() in ("i", "we", "they")
        previous: _Subject | None = None
        for index, clause in enumerate(self.clauses(toks, conj)):
            subject = self.subject(clause, index == 0, previous)
            if subject is not None:
                if subject.rest:
                    self.process(subject)
                previous = subject

    def clauses(self, toks: list[str], conj: bool) -> list[list[str]]:
        """Split a sentence at ``and``/``but``/``,``/``;`` where a new clause starts."""
        out: list[list[str]] = []
        current: list[str] = []
        i = 0
        while i < len(toks):
            token, low = toks[i], toks[i].lower()
            nxt = None
            if low in ("and", "but"):
                nxt = i + 1
            elif token == ",":
                nxt = (
                    i + 2
                    if toks[i + 1 : i + 2] and toks[i + 1].lower() in ("and", "but")
                    else i + 1
                )
            if token == ";" or (
                nxt is not None
                and nxt < len(toks)
                and any(_finite(t, True) for t in current[1:])
                and self.starts_clause(toks, nxt, conj)
            ):
                if current:
                    out.append(current)
                current, i = [], (i + 1 if token == ";" else nxt or i + 1)
                continue
            current.append(token)
            i += 1
        if current:
            out.append(current)
        return out

    def starts_clause(self, toks: list[str], j: int, conj: bool) -> bool:
        low = toks[j].lower()
        if low in ("i", "he", "she", "they", "we", "it", "you"):
            return j + 1 < len(toks)
        k = j
        while k < len(toks) and toks[k].lower() in FILLERS | KEEP_ADVERBS:
            k += 1
        if k < len(toks) and (_finite(toks[k], conj) or toks[k].lower() == "no"):
            return True
        if low in ("my", "his", "her", "their", "our"):
            return any(_finite(t, False) for t in toks[j + 1 : j + 5])
        end = self.name_end(toks, j, False)
        return j < end < len(toks) and _finite(toks[end], False)

    def subject(
        self, clause: list[str], initial: bool, previous: _Subject | None
    ) -> _Subject | None:
        """Find the clause's subject; the rest of the clause is its predicate."""
        low = clause[0].lower()
        if low in ("i", "we"):
            return _Subject([self.user()], clause[1:], conj=True)
        if low in ("my", "our"):
            return _Subject([self.user()], clause[1:], possessive=True)
        if low in ("you", "your"):
            addressee = self.you()
            if addressee is None:
                return None
            return _Subject([addressee], clause[1:], conj=low == "you", possessive=low == "your")
        if low == "it" and clause[2:3] and clause[2].lower() in IMPERSONAL:
            return None
        if low in ("he", "she", "they", "it", "his", "her", "their", "its"):
            ent = self.resolve({"their": "they", "its": "it"}.get(low, low))
            possessive = low in ("his", "her", "their", "its")
            return _Subject([ent], clause[1:], low == "they", possessive) if ent else None
        end = self.name_end(clause, 0, initial)
        if end == 0:
            if previous and (_finite(clause[0], previous.conj) or low in FILLERS | {"no"}):
                return _Subject(previous.entities, clause, previous.conj)
            return None
        entities = [self.entity(_join(clause[:end]))]
        if clause[end - 1].endswith("'s"):
            return _Subject(entities, clause[end:], possessive=True)
        j = end
        while j < len(clause) and clause[j].lower() in (",", "and"):
            k = j + 1
            if clause[j] == "," and clause[k : k + 1] and clause[k].lower() == "and":
                k += 1
            if k < len(clause) and clause[k].lower() == "i":
                entities.append(self.user())
                j = k + 1
            elif k < len(clause) and (e := self.name_end(clause, k, False)) > k:
                entities.append(self.entity(_join(clause[k:e])))
                j = e
            else:
                break
        relative = clause[j + 1 : j + 2] if clause[j : j + 1] == [","] else clause[j : j + 1]
        if len(entities) == 1 and [w.lower() for w in relative] in (["who"], ["which"]):
            start = j + 2 if clause[j] == "," else j + 1
            close = clause.index(",", start) if "," in clause[start:] else len(clause)
            self.mention(entities, subject=True)
            self.predicate(entities[0], clause[start:close], conj=False)
            j = close + 1
        elif len(entities) == 1 and clause[j : j + 1] == [","] and "," in clause[j + 1 : j + 9]:
            close = clause.index(",", j + 1)
            apposition = clause[j + 1 : close]
            if apposition and apposition[0].lower() in DETERMINERS:
                self.mention(entities, subject=True)
                self.predicate(entities[0], ["is", *apposition], conj=False)
                j = close + 1
        return _Subject(entities, clause[j:], conj=len(entities) > 1)

    def process(self, subject: _Subject) -> None:
        self.mention(subject.entities, subject=True)
        if subject.possessive:
            self.possessive(subject.entities[0], subject.rest)
            return
        for ent in subject.entities:
            self.predicate(ent, subject.rest, subject.conj)

    # ----------------------------------------------------------------- predicates

    def clean(self, rest: list[str], conj: bool, owner: _Entity) -> list[str]:
        pred = list(rest)
        while pred and pred[0].lower() in FILLERS:
            pred.pop(0)
        while pred and pred[-1].lower() in _TRAILING:
            pred.pop()
        if [t.lower() for t in pred[-2:]] in (["as", "well"], ["thank", "you"]):
            pred = pred[:-2]
        if len(pred) > 2 and pred[-2] == "," and self.calls(pred[-1]):
            pred = pred[:-2]  # "is so happy for you, Sam": Sam is only called
        if conj:
            pred = _conjugate(pred)
        if _says_little([t.lower() for t in pred]):
            return []  # "feels great", "is so proud of you": the episode keeps it
        you = self.you()
        yours: dict[str, str] = {}
        if you is not None and you is not owner:  # in a chat between two, the other one
            yours = {"your": f"{you.name}'s", "yours": f"{you.name}'s", "you": you.name}
        if owner is self.user_entity:  # "will send pics when I'm home": when they are
            pred = _i_as(pred, "they", plural=True)
            substitutes = _USER_SUBSTITUTES | yours
        else:  # "Ingrid thinks I've lost it": that the speaker has; "my" is theirs
            speaker = self.user().name
            pred = _i_as(pred, speaker, plural=False)
            mine = f"{speaker}'s"
            substitutes = {"my": mine, "mine": mine, "our": mine, "ours": mine}
            substitutes |= {"me": speaker, "myself": speaker, "us": speaker} | yours
        return [t if _titled(i, t) else substitutes.get(t.lower(), t) for i, t in enumerate(pred)]

    def predicate(self, ent: _Entity, rest: list[str], conj: bool) -> None:
        pred = self.clean(rest, conj, ent)
        text = _join(pred)
        low = [t.lower() for t in pred]
        if not stems(text):
            return
        if ent is self.user_entity and self._introduces(pred):
            # "Hi! I'm Marta.": the speaker's name, as "my name is Marta" ("I'm Marta,
            # nice to meet you": the rest is small talk)
            self.possessive(ent, ["name", "is", *_first_clause(pred)[1:]])
            return
        positive = _unnegate(pred)
        if positive is not None:
            # "no longer lactose intolerant, the new tests were negative": what ended is
            # the first clause; the rest is why (the episode keeps it)
            self.expire(ent, _first_clause(positive))
            return
        if low[:2] == ["used", "to"] and len(low) > 2 and low[2] in VERBS:
            self.expire(ent, [third_person(low[2]), *pred[3:]], only_known=True)
        if ent is self.user_entity and len(low) == 2 and low[0] in BE and low[1] in SMALLTALK:
            return
        companions = _COMPANIONS.search(text)
        if companions is not None and companions.start() > 0:
            # "lives in Toronto with their partner Sam and their dog Biscuit": three
            # facts, so a move retires the address and not the partner and the dog.
            for role, name in _companion_pairs(companions.group(0)):
                companion = self.entity(name)
                companion.cue(_head_type(role), RELATION)
                ent.observe(f"has a {role} named {companion.name}")
                self.relate(companion, f"{_snake([role])}_of", ent)
                self.mention([companion])
            text = text[: companions.start()].rstrip(" ,")
            pred = pred[: len(_tokenize(text))]
        ent.observe(text)
        self.supersede(ent, text, possessive=False)
        head = _copula_head(pred)
        if head:
            ent.cue(_head_type(head), HEAD)
        else:
            skip = KEEP_ADVERBS | FILLERS | AUX | NEGATIONS
            first = next((w for w in low if w not in skip), "")
            if _base(first) in PERSON_VERBS:
                ent.cue("person", VERB)
            elif _base(first) in ORG_VERBS:
                ent.cue("organization", VERB)
        self.relations_in(ent, pred)

    def _introduces(self, pred: list[str]) -> bool:
        """Whether ``pred`` ("is Marta", "is Priya Raman") gives the speaker's name: a
        capitalised name after "is", of two or three words, or of one in a text that
        greets or says "nice to meet you" ("I'm Canadian" alone is no name)."""
        name = _first_clause(pred)[1:]
        if not name or pred[0].lower() != "is" or len(name) > 3:
            return False
        if not all(_capitalised(t) and t.isalpha() for t in name):
            return False
        return len(name) > 1 or self.introducing

    def possessive(self, owner: _Entity, rest: list[str]) -> None:
        """``Alice's favourite colour is blue`` / ``My sister Carol lives in Rome``."""
        k = next((i for i, t in enumerate(rest) if _finite(t, False)), 0)
        if k == 0:
            return
        phrase, pred = rest[:k], rest[k:]
        for s in range(1, len(phrase)):
            if self.name_end(phrase, s, False) == len(phrase):
                role = phrase[s - 1].lower()
                target = self.entity(_join(phrase[s:]))
                if role in PERSON_ROLES:
                    target.cue("person", RELATION)
                self.relate(target, f"{_snake([role])}_of", owner)
                self.mention([target], subject=True)
                self.predicate(target, pred, conj=False)
                return
        tokens = self.clean(rest, False, owner)
        positive = _unnegate(tokens)
        if positive is not None:
            self.expire(owner, positive)
            return
        text = _join(tokens)
        owner.observe(text)
        self.supersede(owner, text, possessive=True)
        words = [w.lower() for w in phrase]
        if set(words) & PERSONAL_ATTRS:
            owner.cue("person", ATTR)
        value = pred[2:] if [w.lower() for w in pred[1:2]] in (["called"], ["named"]) else pred[1:]
        single = len(words) == 1 and words[0] not in NAME_ATTRS and pred[0].lower() in BE
        named = bool(value) and self.name_end(value, 0, False) == len(value)
        if single and named and not re.search(r"\d", text):
            target = self.entity(_join(value))
            target.cue(_head_type(words[0]), RELATION)
            if words[0] not in ORG_OBJECT_ROLES:
                self.relate(target, f"{_snake(words)}_of", owner)

    def relations_in(self, ent: _Entity, pred: list[str]) -> None:
        """Relations from ``ent`` to the named objects of its predicate."""
        low = [t.lower() for t in pred]
        spans: list[tuple[int, int]] = []
        i = 1
        while i < len(pred):
            end = self.name_end(pred, i, False)
            last = i + 1 == len(low) or low[i + 1] in PREPOSITIONS | {",", "and"}
            if end == i and low[i] in ("him", "her", "them") and last:
                end = i + 1
            if end > i:
                spans.append((i, end))
            i = max(end, i + 1)
        previous_end, previous_type = -1, None
        for start, end in spans:
            role = low[start - 2] if start >= 2 and low[start - 1] in ("named", "called") else ""
            if role in PERSON_ROLES | ANIMAL_HEADS:  # "has a daughter named Emma"
                named = self.entity(_join(pred[start:end]))
                named.cue(_head_type(role), RELATION)
                self.relate(named, f"{_snake([role])}_of", ent)
                self.mention([named])
                continue
            between = low[previous_end:start] if previous_end >= 0 else []
            if previous_type and between and all(w in (",", "and", "or") for w in between):
                type_: str | None = previous_type
            else:
                type_ = self.relation_type(low, pred, start, end)
            previous_end, previous_type = end, type_
            if not type_:
                continue
            if low[start] in ("him", "her", "them") and end == start + 1:
                target = self.resolve(low[start], exclude=ent)
            else:
                target = self.entity(_join(pred[start:end]))
            if target is None or target is ent:
                continue
            self.relate(ent, type_, target)
            self.mention([target])
            self.type_cues(ent, type_, target)

    def relation_type(self, low: list[str], pred: list[str], start: int, end: int) -> str | None:
        """The relation type implied by the words before a named object."""
        prefix = low[:start]
        if pred[end - 1].endswith("'s"):
            if len(prefix) != 1 or prefix[0] not in BE:
                return None
            head = next((w for w in low[end:] if w not in STOP_WORDS and w.isalpha()), None)
            return f"{head}_of" if head in PERSON_ROLES | ORG_HEADS else None
        words = [w for w in prefix if w not in FILLERS | KEEP_ADVERBS | {"together"}]
        plain = all(re.fullmatch(r"[a-z][a-z-]*", w) for w in words)
        if 1 <= len(words) <= 5 and plain and not set(words) & (DETERMINERS | NEGATIONS):
            verbal = all(w in PREPOSITIONS | AUX | PARTICLES or _base(w) for w in words[1:])
            copular = len(words) == 3 and words[0] in BE and words[2] in PREPOSITIONS
            if words[0] not in PREPOSITIONS | {"used"} and (verbal or copular):
                if words[0] in BE and len(words) > 1:
                    words = words[1:] if words[1] not in PREPOSITIONS or len(words) > 2 else words
                elif words[0] in ("has", "have", "had") and len(words) > 1:
                    words = words[1:] if _is_participle(words[1]) else words
                return None if words[0] in BE and len(words) == 1 else _snake(words)
        if len(prefix) >= 2 and _is_participle(prefix[-2]) and prefix[-1] in PREPOSITIONS:
            return f"{prefix[-2]}_{prefix[-1]}"
        if len(prefix) >= 4 and prefix[0] in BE and prefix[-1] in ("at", "for", "of"):
            head = prefix[-2]
            if (prefix[1] in DETERMINERS or prefix[1].endswith("'s")) and head.isalpha():
                if prefix[-1] == "of":
                    return f"{head}_of"
                return "studies_at" if head in STUDENT_ROLES else f"works_{prefix[-1]}"
        return None

    def type_cues(self, source: _Entity, type_: str, target: _Entity) -> None:
        head, _, tail = type_.partition("_")
        if head in MODALS | {"to", "wants", "want", "plans"} and tail:
            type_ = tail.removeprefix("to_")
        if type_ in ORG_RELATIONS:
            target.cue("organization", RELATION)
        elif type_ in PLACE_RELATIONS or type_ == "is_in":
            target.cue("place", RELATION)
        elif type_ in PERSON_RELATIONS:
            target.cue("person", RELATION)
        if type_ in PERSON_SUBJECT_RELATIONS:
            source.cue("person", RELATION)
        elif type_ in ORG_SUBJECT_RELATIONS:
            source.cue("organization", RELATION)
        if type_.endswith("_of"):
            role = type_[:-3]
            if role in PERSON_ROLES:
                source.cue("person", RELATION)
            if role in ORG_OBJECT_ROLES:
                target.cue("organization", RELATION)
            elif role in KIN:
                target.cue("person", RELATION)

    def result(self) -> dict[str, Any]:
        entities: list[dict[str, Any]] = []
        seen: set[int] = set()
        for ent in self.order:
            if ent.used and id(ent) not in seen:
                seen.add(id(ent))
                observations = list(ent.observations)
                if self.said_at is not None:
                    observations = [
                        resolve_relative_dates(o, self.said_at, days_said=self.days_said)
                        for o in observations
                    ]
                entities.append({"name": ent.name, "type": ent.type, "observations": observations})
        return {
            "entities": entities,
            "relations": list(self.relations),
            "expirations": list(self.expirations),
        }


def extract(
    text: str,
    known: str = "",
    *,
    speaker: str | None = None,
    addressee: str | None = None,
    said_at: str | datetime | None = None,
    previous: str | None = None,
    days_named: str | None = None,
) -> dict[str, Any]:
    """Extract entities, relations and expirations from English ``text``.

    Args:
        text: the text to remember (one or more sentences; ``Name:`` line labels
            allowed: each labelled line is that speaker's).
        known: relevant existing entities in recall's text format; their names and
            types are reused and their facts are what expirations point at.
        speaker: who said the text: first-person words are about them
            (default ``"User"``).
        addressee: who "you" is, when known.
        said_at: when it was said: relative dates ("yesterday") are resolved
            against it in the facts.
        previous: the turn before, for pronouns that point into it.
        days_named: the days the conversation named before ("28 November 2025;
            8 August 2026"): a bare "the 28th" is the one listed.

    Returns:
        ``{"entities": [{"name", "type", "observations"}], "relations": [{"from", "to",
        "type"}], "expirations": [{"entityName", "observationContent"}]}`` — empty lists
        for questions, greetings, an assistant's words (``speaker="assistant"`` or
        an ``assistant:`` line: its suggestions stay searchable in the episode) and
        text with nothing to extract.
    """
    if speaker is not None and speaker.strip().lower() == "assistant":
        return {"entities": [], "relations": [], "expirations": []}  # as its labelled lines
    moment = None
    if said_at is not None:
        try:
            moment = parse_iso(said_at)
        except ValueError:
            moment = None
    extractor = _Extractor(
        parse_known(known), speaker=speaker, addressee=addressee, said_at=moment, text=text
    )
    extractor.days_said = read_days(days_named)
    if previous:
        extractor.context_people = _names_in(previous, extractor)
    current = speaker or "User"
    for line in text.replace("\r", "\n").split("\n"):
        label, words_ = split_speaker(line)
        if label is not None and label.lower() != "user":
            if label.lower() == "assistant":
                continue
            if name_key(label) != name_key(current):
                extractor.switch_speaker(label, addressee=current)
                current = label
            line = words_
        for sentence in _named_roles(split_sentences(_captions(line))):
            extractor.sentence(sentence)
    return extractor.result()


_MY_ROLE = re.compile(
    r"\bmy\s+((?:(?:new|old|best|older|younger|little|big|baby|step|ex)\s+)?(\w+))\b",
    re.IGNORECASE,
)
_ROLE_NAME = re.compile(
    r"^\W*(?:[Hh]er|[Hh]is|[Tt]heir)\s+name(?:'s|’s|\s+is)\s+([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,2})"
    r"\s*[.!]*\s*$"
)


def _named_roles(sentences: list[str]) -> list[str]:
    """ "My sister lives in Pune. Her name is Kavya." as "My sister Kavya lives in
    Pune.": a name given for the role just spoken of names that person (a question,
    "have you met my new roommate? her name is Priyanka", gets "My roommate is
    Priyanka.")."""
    out = list(sentences)
    for index, sentence in enumerate(sentences):
        named = _ROLE_NAME.match(sentence)
        if named is None or index == 0:
            continue
        before = out[index - 1]
        roles = [m for m in _MY_ROLE.finditer(before) if m.group(2).lower() in PERSON_ROLES]
        if not roles:
            continue
        role, name = roles[-1], named.group(1)
        if before.rstrip().endswith("?"):
            out[index] = f"My {role.group(2)} is {name}."
        else:
            out[index - 1] = f"{before[: role.end()]} {name}{before[role.end() :]}"
            out[index] = ""
    return [sentence for sentence in out if sentence]


def _names_in(text: str, extractor: _Extractor) -> list[str]:
    """Person-like names of ``text``: known persons, and capitalised words that do
    not start a sentence (the speaker label aside); not a word shouted ("her AS
    exams", "I GOT IT") nor an acronym ("the ICU")."""
    _label, text = split_speaker(text)
    found: list[str] = []
    for sentence in split_sentences(text):
        toks = _tokenize(_unshout(sentence))
        i = 0
        while i < len(toks):
            end = extractor.name_end(toks, i, i == 0)
            if end > i:
                name = _clean_name(" ".join(toks[i:end]))
                known = extractor.known_by_key.get(name_key(name))
                if known is None and extractor.calls(name):
                    pass  # "Oh Pri, ...": calls the one speaking now, not a third person
                elif (known is not None and known.type == "person") or (
                    known is None and i > 0 and not name.isupper()
                ):
                    found.append(known.name if known else name)
                i = end
            else:
                i += 1
    return found


_CORRECTION = re.compile(
    r"(?:^|\s)(?:to|on|for|at|is|was|it's|its|now)\s+(?P<new>[^,.;!?]{1,40}?),?\s+"
    r"(?:not|instead of|rather than)\s+(?:the\s+|on\s+|at\s+|in\s+)?(?P<old>[^,.;!?]{1,40})",
    re.IGNORECASE,
)
_NUMBER_IN = re.compile(r"\d+")
_RESOLVED = re.compile(r"\(((?:the (?:week|weekend) (?:of|before|after) )?[^()]*\d{4})\)")
_OWNER = r"(?:my|their|our|his|her|your)"
_COMPANIONS = re.compile(
    rf"\bwith {_OWNER} [a-z]+(?: [a-z]+)? [A-Z][\w'-]+(?:,? and {_OWNER} [a-z]+(?: [a-z]+)? [A-Z][\w'-]+)*"
)
_COMPANION = re.compile(rf"{_OWNER} ([a-z]+(?: [a-z]+)?) ([A-Z][\w'-]+)")


def _companion_pairs(text: str) -> list[tuple[str, str]]:
    """``(role, name)`` of ``with my partner Sam and my dog Biscuit``."""
    return [(m.group(1), m.group(2)) for m in _COMPANION.finditer(text)]


_CAPTION = re.compile(
    r"\[\s*(?:shared|sent|attached)?\s*(?:an?\s+)?(?:image|photo|picture|pic)s?\s*:\s*([^\]]+)\]",
    re.IGNORECASE,
)
_CAPTION_HEAD = re.compile(r"^(?:an?\s+)?(?:photo|picture|image|pic)\s+of\s+", re.IGNORECASE)


def _captions(line: str) -> str:
    """A shared image's caption as a sentence of its own: ``I shared a photo of ...``."""

    def sentence(match: re.Match[str]) -> str:
        caption = _CAPTION_HEAD.sub("", match.group(1).strip().rstrip("."))
        return f" . I shared a photo of {caption}. "

    return _CAPTION.sub(sentence, line)
