"""Text → validated extraction result: the prompt, the call, and the shape checks.

The model's reply is untrusted: names are cleaned of control characters,
lengths are capped, and a reply of the wrong shape is rejected whole so that
nothing of it reaches the graph.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from memgraph.chatter import nothing_to_extract, only_asks
from memgraph.dates import MONTHS, WEEKDAYS
from memgraph.llm_calls.ask import (
    Answer,
    Exchange,
    ReplyFailure,
    arun_exchange,
    json_exchange,
    run_exchange,
)
from memgraph.llm_calls.prompts import (
    EXTRACT_SCHEMA,
    EXTRACT_SYSTEM,
    KNOWN_FACTS,
    extract_message,
)
from memgraph.llm_calls.provider import ChatModel
from memgraph.text import content_key, in_any_form, index_terms, similarity, words

__all__ = [
    "NO_CONTEXT",
    "Expiration",
    "ExtractedEntity",
    "ExtractedRelation",
    "Extraction",
    "TurnContext",
    "aextract",
    "clean_label",
    "extract",
    "extraction_exchange",
    "misplaced_expirations_as_facts",
    "validate_extraction",
    "without_copied_facts",
    "without_invented_names",
    "without_previous_turn_facts",
    "without_questions",
    "without_unfounded_expirations",
]

MAX_NAME = 200
MAX_TYPE = 60
MAX_CONTENT = 2_000
MAX_ITEMS = 500
COPY_SIMILARITY = 0.75
"""A fact this close (word overlap) to a known one, and not in the text, is a copy."""
RENDERED_PARTS = 3
"""A fact of this many parts joined by ";", one of them a known fact, is a rendered
line of the known block, whatever else the model changed in it."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class ExtractedEntity:
    name: str
    type: str
    observations: tuple[str, ...]


@dataclass(frozen=True)
class ExtractedRelation:
    source: str
    target: str
    type: str


@dataclass(frozen=True)
class Expiration:
    entity_name: str
    content: str


@dataclass(frozen=True)
class Extraction:
    """A validated extraction reply."""

    entities: tuple[ExtractedEntity, ...] = ()
    relations: tuple[ExtractedRelation, ...] = ()
    expirations: tuple[Expiration, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.entities or self.relations or self.expirations)


def clean_label(value: object, field: str, limit: int) -> str:
    """A model-supplied string with control characters removed and whitespace collapsed.

    Raises:
        TypeError: ``value`` is not a string.
        ValueError: it is longer than ``limit`` characters.
    """
    if not isinstance(value, str):
        raise TypeError(f"{field} must be a string, got {type(value).__name__}")
    if value.isascii() and value.isprintable():  # NFC, no control character, only " "
        text = value.strip() if "  " not in value else " ".join(value.split())
    else:
        text = _SPACE.sub(" ", _CONTROL.sub(" ", unicodedata.normalize("NFC", value))).strip()
    if len(text) > limit:
        raise ValueError(f"{field} is {len(text)} characters long, over {limit}")
    return text


def _list(document: Mapping[str, Any], key: str) -> list[Any]:
    value = document.get(key, [])
    if value is None:
        return []
    if not isinstance(value, list):
        raise TypeError(f"{key!r} must be a list, got {type(value).__name__}")
    if len(value) > MAX_ITEMS:
        raise ValueError(f"{key!r} has {len(value)} items, over {MAX_ITEMS}")
    return value


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"{where} must be an object, got {type(value).__name__}")
    return value


def validate_extraction(document: Mapping[str, Any]) -> Extraction:
    """Check a parsed reply against the extraction shape.

    Items with an empty name or content are dropped; anything of the wrong
    type rejects the whole reply.

    Raises:
        TypeError, ValueError: the reply does not have the extraction shape.
    """
    if not any(key in document for key in ("entities", "relations", "expirations")):
        raise ValueError("expected keys 'entities', 'relations' and 'expirations'")
    entities: list[ExtractedEntity] = []
    for index, raw in enumerate(_list(document, "entities")):
        item = _mapping(raw, f"entities[{index}]")
        name = clean_label(item.get("name"), f"entities[{index}].name", MAX_NAME)
        type_ = clean_label(item.get("type") or "thing", f"entities[{index}].type", MAX_TYPE)
        observations = []
        for position, content in enumerate(_list(item, "observations")):
            text = clean_label(content, f"entities[{index}].observations[{position}]", MAX_CONTENT)
            if text:
                observations.append(text)
        if name:
            entities.append(ExtractedEntity(name, type_.lower() or "thing", tuple(observations)))
    relations: list[ExtractedRelation] = []
    for index, raw in enumerate(_list(document, "relations")):
        item = _mapping(raw, f"relations[{index}]")
        source = clean_label(item.get("from"), f"relations[{index}].from", MAX_NAME)
        target = clean_label(item.get("to"), f"relations[{index}].to", MAX_NAME)
        type_ = clean_label(item.get("type"), f"relations[{index}].type", MAX_TYPE)
        if source and target and type_:
            relations.append(ExtractedRelation(source, target, type_))
    expirations: list[Expiration] = []
    for index, raw in enumerate(_list(document, "expirations")):
        item = _mapping(raw, f"expirations[{index}]")
        name = clean_label(item.get("entityName"), f"expirations[{index}].entityName", MAX_NAME)
        content = clean_label(
            item.get("observationContent"), f"expirations[{index}].observationContent", MAX_CONTENT
        )
        if name and content:
            expirations.append(Expiration(name, content))
    return Extraction(tuple(entities), tuple(relations), tuple(expirations))


@dataclass(frozen=True)
class TurnContext:
    """What an extraction is told around a text: who "you" is (``addressee``), the
    turn said just before it in its conversation (``previous``: context only,
    pronouns may point into it) and the days its conversation named before it
    (``days_named``: "28 November 2025", for its "the 28th")."""

    addressee: str | None = None
    previous: str | None = None
    days_named: str | None = None


NO_CONTEXT = TurnContext()
"""A text said on its own."""


def extract(
    chat: ChatModel,
    text: str,
    *,
    known: str,
    said_at: str,
    speaker: str | None = None,
    turn: TurnContext = NO_CONTEXT,
) -> Answer[Extraction]:
    """Ask ``chat`` to extract facts from ``text`` given the relevant ``known`` entities,
    who said it (``speaker``) and what was said around it (``turn``; the calls are
    those of :func:`extraction_exchange`). A turn with nothing to extract
    (:func:`~memgraph.chatter.nothing_to_extract`: "how was the weekend?", "lol")
    asks nothing and extracts nothing."""
    if nothing_to_extract(text, turn.previous):
        return Answer(Extraction(), calls=0)
    exchange = extraction_exchange(text, known=known, said_at=said_at, speaker=speaker, turn=turn)
    return run_exchange(chat, exchange)


async def aextract(
    chat: ChatModel,
    text: str,
    *,
    known: str,
    said_at: str,
    speaker: str | None = None,
    turn: TurnContext = NO_CONTEXT,
) -> Answer[Extraction]:
    """Async twin of :func:`extract` (the model's ``acomplete``, else a worker thread)."""
    if nothing_to_extract(text, turn.previous):
        return Answer(Extraction(), calls=0)
    exchange = extraction_exchange(text, known=known, said_at=said_at, speaker=speaker, turn=turn)
    return await arun_exchange(chat, exchange)


def extraction_exchange(
    text: str,
    *,
    known: str,
    said_at: str,
    speaker: str | None = None,
    turn: TurnContext = NO_CONTEXT,
) -> Exchange[Answer[Extraction]]:
    """The model calls of one extraction (see :mod:`memgraph.llm_calls.ask`).

    Facts the model copied from ``known`` that the text does not state are left
    out (small models often repeat the known facts, onto the wrong entity too), and
    so are expirations the text gives no reason for; the answer's problems say so.
    An expiration that names no known fact but states what the text says becomes a
    new fact. A reply that holds nothing but copies is asked for once more without
    the known facts (the planner still resolves the names it gives to known entities);
    when that reply states nothing new either, the answer is an unusable reply, so
    the text is kept unextracted for ``reextract``. Facts taken from the previous
    turn (``turn.previous``) about someone the text does not name count as copies too.
    """
    previous, addressee = turn.previous, turn.addressee
    notes: list[str] = []
    copies_only: list[str] = []

    def validate(document: Mapping[str, Any]) -> Extraction:
        extraction = validate_extraction(document)
        notes.clear()
        copies_only.clear()
        copied: list[str] = []
        if known:
            extraction, copied = without_copied_facts(extraction, known, text)
        if previous:
            extraction, repeated = without_previous_turn_facts(extraction, previous, text, speaker)
            copied += repeated
        extraction, asked = without_questions(extraction)
        if asked:
            notes.append(
                f"left out {len(asked)} fact(s) that only ask: "
                f"{', '.join(repr(c) for c in asked[:3])}"
            )
        extraction, invented = without_invented_names(
            extraction, text, " ".join(filter(None, (previous, known, speaker, addressee)))
        )
        if invented:
            notes.append(
                f"left out {len(invented)} fact(s) naming what nothing it read names: "
                f"{', '.join(repr(c) for c in invented[:3])}"
            )
        extraction, unfounded_relations = without_unfounded_relations(extraction, text, known)
        if unfounded_relations:
            notes.append(
                f"left out {len(unfounded_relations)} relation(s) nothing in the text founds: "
                f"{', '.join(repr(c) for c in unfounded_relations[:3])}"
            )
        if extraction.expirations:
            extraction, moved = misplaced_expirations_as_facts(extraction, known, text)
            if moved:
                notes.append(
                    f"read {len(moved)} expiration(s) that name no known fact but state what "
                    f"the text says as new facts: {', '.join(repr(c) for c in moved[:3])}"
                )
            extraction, unfounded = without_unfounded_expirations(extraction, text)
            if unfounded:
                notes.append(
                    f"left out {len(unfounded)} expiration(s) the text gives no reason for: "
                    f"{', '.join(repr(c) for c in unfounded[:3])}"
                )
        shown = ", ".join(repr(c) for c in copied[:3])
        if copied and not _states_anything(extraction):
            copies_only.append(shown)  # nothing left but what the model copied: ask again
        elif copied:
            notes.insert(
                0,
                f"left out {len(copied)} fact(s) the model copied from the known facts "
                f"without the text stating them: {shown}",
            )
        return extraction

    def message(block: str) -> str:
        return extract_message(
            text,
            block,
            said_at,
            speaker=speaker,
            addressee=addressee,
            previous=previous,
            days_named=turn.days_named,
        )

    answer = yield from json_exchange(EXTRACT_SYSTEM, message(known), EXTRACT_SCHEMA, validate)
    answer.problems.extend(notes)
    if copies_only and answer.value is not None:
        copies = copies_only[0]
        answer.problems.append(
            f"the reply only repeated facts already in memory ({copies}); asked again without them"
        )
        again = yield from json_exchange(EXTRACT_SYSTEM, message(""), EXTRACT_SCHEMA, validate)
        again.calls += answer.calls
        again.usage[:0] = answer.usage
        again.problems[:0] = answer.problems
        again.problems.extend(notes)
        if again.value is not None and not _states_anything(again.value):
            # Copies, then nothing: the model did not read the text. Keep it for reextract.
            problem = (
                f"the model only repeated facts already in memory ({copies}) and, "
                "asked again without them, stated nothing new"
            )
            again.problems.append(problem)
            again.value = None
            again.failure = ReplyFailure("unusable", problem)
        answer = again
    return answer


def _states_anything(extraction: Extraction) -> bool:
    """Whether ``extraction`` holds a fact, a relation or an expiration (not just names)."""
    return bool(
        extraction.relations
        or extraction.expirations
        or any(entity.observations for entity in extraction.entities)
    )


_CHANGE_WORD_TEXT = """
    no not never nor longer anymore more now nowadays moved move moves moving left leave
    leaves leaving quit quits stopped stop stops changed change changes switched switch
    former formerly used ex retired resigned divorced sold ended ends instead new newly
    renamed replaced became become becomes isnt doesnt dont wasnt arent cant wont
    lost fired gave gone
"""
CHANGE_WORDS = frozenset(_CHANGE_WORD_TEXT.split())
"""Words by which a text says a fact changed; an expiration needs one (or the fact itself)."""
_CHANGED_TEXT = """
    longer anymore moved move moves moving left leave leaves leaving quit quits stopped
    changed switched former formerly used ex retired resigned divorced sold ended instead
    renamed replaced became fired
"""
CHANGED_WORDS = frozenset(_CHANGED_TEXT.split())
"""The change words that say by themselves that something changed ("moved", "quit");
the others ("no", "now", "never", "more", "stops") are as often said of anything
("no rush", "4 stops on the MRT"), so an expiration they allow must also share a
word with the text or with what the text states."""


_NEW_STATE_TEXT = "now nowadays moved moves new newly became becomes switched joined"
NEW_STATE_WORDS = frozenset(_NEW_STATE_TEXT.split())
"""Words by which a statement gives the new state of a change ("now works at ...")."""
_ENDING_TEXT = """
    no not never nor longer anymore left leave leaves quit stopped former formerly used ex
    retired resigned divorced sold ended lost fired gone from isnt doesnt dont wasnt arent
"""
ENDING_WORDS = frozenset(_ENDING_TEXT.split())
"""Words by which a statement may name what ended, not what holds now."""


def _states_new_state(statement: str) -> bool:
    """Whether ``statement`` gives the new state of a change and names nothing that ended,
    in its first clause ("is lactose intolerant, the new tests were negative" does not:
    "new" is in the clause that says why)."""
    said = set(words(_FIRST_CLAUSE.split(statement, maxsplit=1)[0]))
    return bool(said & NEW_STATE_WORDS) and not said & ENDING_WORDS


_FIRST_CLAUSE = re.compile(r"[,;]|\s(?:but|because|since|so)\s", re.IGNORECASE)


class _Known(NamedTuple):
    type: str  # lower case; "" when the header gives none
    facts: list[str]


def _known_entities(known: str) -> dict[str, _Known]:
    """The ``known`` block (recall's text format: ``Name (type):`` headers, ``  - fact``
    lines) by entity name key."""
    entities: dict[str, _Known] = {}
    current: list[str] | None = None
    for line in known.splitlines():
        if line.startswith("  - ") and current is not None:
            current.append(line[4:])
        elif line.strip() and not line[0].isspace():
            head = line.strip().removesuffix(":")
            name, typed, kind = head.rpartition(" (")
            if not typed:
                name, kind = head, ""
            entry = entities.setdefault(
                content_key(name), _Known(kind.removesuffix(")").strip().lower(), [])
            )
            current = entry.facts
    return entities


def misplaced_expirations_as_facts(
    extraction: Extraction, known: str, text: str
) -> tuple[Extraction, list[str]]:
    """``extraction`` with each expiration that names no known fact of its entity, but
    states what the text says, turned into a new fact of that entity.

    An expiration must copy a known fact; one that matches none can never expire
    anything, and small models put the text's new facts there ("Emma: started
    school"). Not when the text says something changed (:data:`CHANGE_WORDS`).
    When the text says something changed, only an expiration that states the new
    state (:data:`NEW_STATE_WORDS`, none of :data:`ENDING_WORDS`: "now works at
    Porto Clinic") moves; one that may name the old state stays. Returns the
    statements moved, too.
    """
    changed = bool(set(words(text)) & CHANGE_WORDS)
    known_facts = {key: entry.facts for key, entry in _known_entities(known).items()}
    text_terms = _term_set(text)
    entities = {content_key(e.name): e for e in extraction.entities}
    kept: list[Expiration] = []
    moved: list[str] = []
    for expiration in extraction.expirations:
        key = content_key(expiration.entity_name)
        facts = known_facts.get(key, [])
        near = any(similarity(expiration.content, fact) >= 0.6 for fact in facts)
        if (
            near
            or not _grounded(expiration.content, text_terms)
            or (changed and not _states_new_state(expiration.content))
        ):
            kept.append(expiration)
            continue
        entity = entities.get(key) or ExtractedEntity(expiration.entity_name, "thing", ())
        entities[key] = ExtractedEntity(
            entity.name, entity.type, (*entity.observations, expiration.content)
        )
        moved.append(f"{expiration.entity_name}: {expiration.content}")
    if not moved:
        return extraction, []
    return Extraction(tuple(entities.values()), extraction.relations, tuple(kept)), moved


def without_unfounded_expirations(
    extraction: Extraction, text: str
) -> tuple[Extraction, list[str]]:
    """``extraction`` without the expirations the text gives no reason for: the text
    neither says something changed (:data:`CHANGED_WORDS`) nor mentions the expired
    fact, and, when it says only a word that may tell of a change (:data:`CHANGE_WORDS`:
    "never", "now"), shares no word in any form with the fact, in the text or in the
    facts it states. Small models list known facts there ("arrived safely" expired by
    "What does Dad even do all day, he never tells me"), which would retire true
    facts. Returns the expirations left out, too."""
    words_of_text = set(words(text))
    if words_of_text & CHANGED_WORDS:
        return extraction, []
    text_terms = _term_set(text)
    related: set[str] = set()
    if words_of_text & CHANGE_WORDS:
        stated = [o for e in extraction.entities for o in e.observations]
        stated += [f"{r.type.replace('_', ' ')} {r.target}" for r in extraction.relations]
        related = in_any_form(text_terms.union(*(index_terms(s) for s in stated))) - _GENERIC

    def founded(expiration: Expiration) -> bool:
        if _grounded(expiration.content, text_terms):
            return True
        return bool(related & in_any_form(index_terms(expiration.content)))

    # a rendered line of known facts ("misses Mei-hua every day; arrived safely ...")
    # is judged fact by fact
    parts = [
        Expiration(e.entity_name, part.strip())
        for e in extraction.expirations
        for part in e.content.split(";")
        if part.strip()
    ]
    kept = tuple(e for e in parts if founded(e))
    unfounded = [e.content for e in parts if e not in kept]
    if not unfounded:
        return extraction, []
    return Extraction(extraction.entities, extraction.relations, kept), unfounded


_GENERIC = frozenset(
    index_terms("day days week month year today time times thing things lot way good great")
)
"""Words shared by too many facts and texts to tie an expiration to the text."""


@functools.lru_cache(maxsize=64)
def _term_set(text: str) -> frozenset[str]:
    """The index terms of a text, kept for the next checks of the same text (a text is
    checked by several guards, and is the next text's previous turn)."""
    return frozenset(index_terms(text))


def _grounded(statement: str, text_terms: frozenset[str]) -> bool:
    """Whether most content words of ``statement`` occur in the text."""
    wanted = set(index_terms(statement))
    return not wanted or len(wanted & text_terms) * 2 >= len(wanted)


_CAPITALISED = re.compile(r"(?<![\w'’])[A-Z][\w'’&.-]*")
_CALENDAR = frozenset(index_terms(" ".join([*MONTHS, *WEEKDAYS, "I"])))


def _heard(term: str, read: frozenset[str]) -> bool:
    """Whether a name's term is among the terms read, or shortens or extends one of
    them ("Ali" for "Alice", "Lurie's" for "Lurie"): a name mangled is not invented."""
    if term in read:
        return True
    return len(term) >= 3 and any(
        other.startswith(term) or (len(other) >= 4 and term.startswith(other)) for other in read
    )


_LINK_WORDS = frozenset(
    index_terms("at in to of for with from on by as is are was has have had the a an")
)
"""Words of a relation's type that say how two things are linked, not what the link is."""
_LIVES = frozenset(index_terms("live lives living based located born reside moved move from"))
_WORKS = frozenset(index_terms("work works working employed employ studies study attends attend"))
"""Relations whose target is a place (``lives_in``) or an employer or school
(``works_at``): the text need not say their word ("I'm at Acme now")."""
_PEOPLE_TYPES = frozenset({"person", "people", "human", "individual"})


def without_unfounded_relations(
    extraction: Extraction, text: str, known: str = ""
) -> tuple[Extraction, list[str]]:
    """``extraction`` without relations that nothing in the text founds: one to a
    person that says where someone lives or works ("lives_in → Chloe"), or one whose
    own words the text never says in any form ("manages" of a grandmother writing to
    her granddaughter: small models copy the prompt's example types). Relations of
    living and working somewhere need no word of their own ("I'm at Acme now").
    An entity's type is the one ``known`` (recall's text format) gives it, else the
    reply's. Returns the relations left out, too."""
    kinds = {content_key(e.name): e.type.strip().lower() for e in extraction.entities}
    kinds |= {key: entry.type for key, entry in _known_entities(known).items() if entry.type}
    said = in_any_form(_term_set(text))  # "Mum" says "mother" too

    def founded(relation: ExtractedRelation) -> bool:
        named = set(index_terms(relation.type.replace("_", " "))) - _LINK_WORDS
        to_person = kinds.get(content_key(relation.target), "") in _PEOPLE_TYPES
        if named and named <= _LIVES | _WORKS:
            return not to_person
        return not named or bool(in_any_form(named) & said)

    kept = tuple(r for r in extraction.relations if founded(r))
    dropped = [f"{r.source} {r.type} {r.target}" for r in extraction.relations if r not in kept]
    return Extraction(extraction.entities, kept, extraction.expirations), dropped


def without_questions(extraction: Extraction) -> tuple[Extraction, list[str]]:
    """``extraction`` without the observations that only ask ("how about you,
    Duluth right?"): a question states nothing of anyone. Returns them, too."""
    asked = [o for e in extraction.entities for o in e.observations if only_asks(o)]
    if not asked:
        return extraction, []
    entities = tuple(
        ExtractedEntity(e.name, e.type, tuple(o for o in e.observations if not only_asks(o)))
        for e in extraction.entities
    )
    return Extraction(entities, extraction.relations, extraction.expirations), asked


def without_invented_names(
    extraction: Extraction, text: str, context: str = ""
) -> tuple[Extraction, list[str]]:
    """``extraction`` without what names something nothing the model read names: an
    entity none of whose capitalised words the ``text`` or its ``context`` (the
    turn before, the known facts, the speakers) hold (small models copy the
    prompt's examples: "works at Acme"), the facts and relations of such an
    entity, and a fact or relation whose own capitalised words are of no such
    source (a day, a month and a fact's first word do not count). Returns what
    was left out. A word found as it is in the text is heard without reading its
    terms, and the context is read only for a word the text does not hold."""
    said = text.lower()

    def heard(word: str) -> bool:
        if word.lower() in said:
            return True
        terms = set(index_terms(word)) - _CALENDAR
        return not terms or any(
            _heard(t, _term_set(text)) or (context and _heard(t, _term_set(context))) for t in terms
        )

    def invented(phrase: str, *, skip_first: bool = False) -> bool:
        found = _CAPITALISED.finditer(phrase)
        return any(not heard(m.group()) for m in found if not (skip_first and m.start() == 0))

    if not (
        any(invented(e.name) for e in extraction.entities)
        or any(invented(o, skip_first=True) for e in extraction.entities for o in e.observations)
        or any(invented(r.source) or invented(r.target) for r in extraction.relations)
    ):
        return extraction, []  # the usual reply: every name heard
    invented_entities = {
        content_key(e.name)
        for e in extraction.entities
        if (names := _CAPITALISED.findall(e.name)) and not any(heard(n) for n in names)
    }
    dropped: list[str] = []
    entities: list[ExtractedEntity] = []
    for entity in extraction.entities:
        if content_key(entity.name) in invented_entities:
            dropped += [f"{entity.name}: {o}" for o in entity.observations] or [entity.name]
            continue
        kept = []
        for observation in entity.observations:
            if invented(observation, skip_first=True):
                dropped.append(f"{entity.name}: {observation}")
            else:
                kept.append(observation)
        entities.append(ExtractedEntity(entity.name, entity.type, tuple(kept)))
    relations = []
    for relation in extraction.relations:
        ends = {content_key(relation.source), content_key(relation.target)}
        if ends & invented_entities or invented(relation.source) or invented(relation.target):
            dropped.append(f"{relation.source} {relation.type} {relation.target}")
        else:
            relations.append(relation)
    if not dropped:
        return extraction, []
    return Extraction(tuple(entities), tuple(relations), extraction.expirations), dropped


_PARTS = re.compile(r";|\band\b")


def without_previous_turn_facts(
    extraction: Extraction, previous: str, text: str, speaker: str | None = None
) -> tuple[Extraction, list[str]]:
    """``extraction`` without the facts taken from the ``previous`` turn: facts of an
    entity the previous turn names and the text does not (never the speaker), whose
    words the previous turn holds and the text mostly lacks. The previous turn is
    context only; its facts were drawn when it was remembered. Returns them, too."""
    before = _term_set(previous)
    now = _term_set(text)
    speaker_key = content_key(speaker or "")
    copied: list[str] = []

    def from_before(entity: ExtractedEntity, statement: str) -> bool:
        name = set(index_terms(entity.name))
        if content_key(entity.name) == speaker_key or not name & before or name & now:
            return False
        if _grounded(statement, before) and not _grounded(statement, now):
            copied.append(statement)
            return True
        return False

    entities = tuple(
        ExtractedEntity(e.name, e.type, tuple(o for o in e.observations if not from_before(e, o)))
        for e in extraction.entities
    )
    return Extraction(entities, extraction.relations, extraction.expirations), copied


def without_copied_facts(
    extraction: Extraction, known: str, text: str
) -> tuple[Extraction, list[str]]:
    """``extraction`` without the facts copied from the ``known`` block: a fact equal
    or nearly equal to a known one (also with a known name in front) whose words the
    text mostly lacks. Facts the text restates stay. Returns the copies left out, too."""

    read: list[tuple[set[str], set[str]]] = []  # the block, once read

    def known_block() -> tuple[set[str], set[str]]:
        """The known facts' keys and the known names (with their first words), read
        only when a fact is not grounded in the text."""
        if read:
            return read[0]
        entities = _known_entities(known)
        facts = {content_key(fact) for entry in entities.values() for fact in entry.facts}
        # "Alice drinks tea" for Alice Chen too
        names = {part for name in entities for part in (name, name.split(" ")[0])}
        read.append((facts, names))
        return facts, names

    text_terms = _term_set(text)
    copied: list[str] = []

    def near_known(key: str) -> bool:
        facts, names = known_block()
        keys = {key} | {key[len(n) + 1 :] for n in names if key.startswith(n + " ")}
        return bool(keys & facts) or any(
            similarity(k, fact) >= COPY_SIMILARITY for k in keys for fact in facts
        )

    rendered = content_key(KNOWN_FACTS)  # "already stored:", copied with a line

    def copied_key(statement: str) -> str:
        return content_key(statement).removeprefix(rendered)

    def fact_copied(statement: str) -> bool:
        if _grounded(statement, text_terms):  # the text states it: never a copy
            return False
        key = copied_key(statement)
        # A whole rendered line ("a; b; c"), or facts joined with "and", is a copy
        # when each of its parts is.
        parts = [part.strip() for part in _PARTS.split(key) if part.strip()]
        if parts and all(near_known(part) for part in parts):
            copied.append(statement)
            return True
        return False

    def kept_of(statement: str) -> str | None:
        """The statement, the parts of a rendered line the text states ("a; b; what
        the text says" keeps what the text says), or ``None`` for a copy."""
        if fact_copied(statement):
            return None
        if ";" not in statement:
            return statement
        parts = [part.strip() for part in statement.split(";") if part.strip()]
        known_parts = [  # copied, and not said again by the text
            p for p in parts if not _grounded(p, text_terms) and near_known(copied_key(p))
        ]
        if len(parts) >= RENDERED_PARTS and known_parts:
            # a rendered line copied with its names changed ("is a friend of Mei-hua"
            # for Chloe's "is a friend of Chloe"): only what the text says stays
            known_parts = [p for p in parts if not _grounded(p, text_terms)]
        fresh = [p for p in parts if p not in known_parts]
        if not known_parts or not all(_grounded(p, text_terms) for p in fresh):
            return statement
        copied.append("; ".join(known_parts))
        return "; ".join(fresh) or None

    def relation_copied(relation: ExtractedRelation) -> bool:
        line = f"{relation.type} → {relation.target}"
        ends = f"{relation.source} {relation.target}"
        if not _grounded(ends, text_terms) and content_key(line) in known_block()[0]:
            copied.append(f"{relation.source} {line}")
            return True
        return False

    entities = tuple(
        ExtractedEntity(
            e.name, e.type, tuple(k for k in map(kept_of, e.observations) if k is not None)
        )
        for e in extraction.entities
    )
    relations = tuple(r for r in extraction.relations if not relation_copied(r))
    return Extraction(entities, relations, extraction.expirations), copied
