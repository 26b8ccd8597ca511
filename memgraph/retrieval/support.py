"""Whether what recall found is about the person a question asks about, or about
someone else.

"What did Dana name her dog?" when only Marcus ever spoke of a dog: the best
texts hold what is asked, but none of them is Dana's. Recall then says that
nothing remembered says it of Dana before it lists what it found, so a reader
does not hand Marcus's dog to Dana. A question whose words no text holds at all
(an answer in other words: "peds ER nurse" for "What does she do for a living?")
is not flagged: it is not a question about someone else.

Whose a text's words are is read clause by clause: a text naming the person
("Dana's sister lives in Evanston") speaks of theirs; a clause said to someone
("you have a dog", "is your eye surgery still on?", "what flavor did you make?")
of the addressee's; one with "I" or "my" of the speaker's (unless "you" is the
nearest person before the topic: "I bet you never thought you'd get a third
turtle"); any other question
(a yes-or-no one about "you": "have you been to Rome?") of nobody's. A plain
clause ("Full knee replacement.") is theirs when one of the three turns before it
names them, the other speaker's when it echoes their words ("smart tortoise."),
else its speaker's; but one that goes on from the speaker's own ("here's a photo I
took! It's a waterfall") and a shared photo's caption are always its speaker's,
and one after a reaction to the other's news ("YAYYY well done!! Officially a
second-year PhD student") the addressee's.
The thing asked about is also owned by the words around it: "my sister", "your
dog", "Speaking of sisters, mine is coming", "a friend of yours"; "her husband"
is theirs when the turn or one before it names them ("Nomsa is expecting!" ...
"Kagiso, her husband, went pink"), or when they never speak (told of as "her").
What a clause denies ("We're not married yet", "I haven't got a dog") is nobody's.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from memgraph.chatter import CAPTION
from memgraph.dates import MONTHS, WEEKDAYS, asked_period
from memgraph.graph.graph import Doc, Graph
from memgraph.retrieval.names import mention_groups
from memgraph.retrieval.never_named import LIGHT_VERBS, WORD
from memgraph.retrieval.possession import (
    ANSWER_WORDS,
    KIN_TERMS,
    NOUN_WORDS,
    PETS,
    RELATIONS,
    is_their_name,
    kin,
    kinds,
    possessed,
)
from memgraph.retrieval.ranking import FIRST_PERSON_WORDS, PARTIAL_NAMES, Candidate, Query
from memgraph.speakers import spoken_words, transcript_turns
from memgraph.text import WORD_FORMS, as_asked, in_any_form, index_terms, words

__all__ = [
    "CLEAR_MARGIN",
    "FIRST_PERSON_WORDS",
    "HARDLY_THEIRS",
    "LESS_THAN_HALF",
    "LIGHT_VERBS",
    "LOOKED_AT",
    "MOSTLY_THEIRS",
    "OWN_SHARE",
    "SECOND_PERSON_WORDS",
    "SWAP_MARGIN",
    "THIRD_PERSON_WORDS",
    "WHOLE_TOPIC",
    "Support",
    "Talk",
    "never_said_theirs",
    "support",
]

OWN_SHARE = 0.3
"""Below this share of the topic's words, no text of the named person holds it."""
SWAP_MARGIN = 0.5
"""How much more of the topic someone else's text must hold for the question to be
about someone else's."""
MOSTLY_THEIRS = 0.5
"""A text of theirs holding this share of the topic answers for them, whoever else
speaks of what the question says is theirs."""
CLEAR_MARGIN = 0.25
"""How much more of the topic someone else's text must hold, when it holds most of
it, for the question to be about someone else's though theirs hold some of it."""
LARGELY_THEIRS = 0.65
"""From this part of all that the texts hold of the topic on (see
:attr:`Support.theirs`), the topic is theirs though one text of someone else's holds
more of it than any of theirs."""
WHOLE_TOPIC = 0.95
"""Someone else's text holding this share of the topic holds all of it."""
LESS_THAN_HALF = 0.45
"""When someone else's text holds all of the topic, theirs must hold more than this."""
LOOKED_AT = 60
"""How many of the best candidates are read."""
HARDLY_THEIRS = 0.2
"""Below this part of all that the texts hold of the topic (see
:attr:`Support.theirs`), the topic is someone else's, however much of it one text
of theirs happens to hold."""

_CLAUSE = re.compile(CAPTION.pattern + r"|[^.!?;\n\[]+[.!?;]*", re.IGNORECASE)
"""A clause: a sentence's part up to its stop, or the caption of a photo shared
("[shared image: a black labrador asleep on a couch]"), which is the sharer's
whatever the words after it say ("That is Bosun on your nan's couch")."""
SECOND_PERSON_WORDS = frozenset(
    {"you", "your", "yours", "yourself", "yourselves", "u", "ur", "youre", "youve", "youll", "youd"}
)
THIRD_PERSON_WORDS = frozenset({"he", "him", "his", "she", "her", "hers", "they", "them", "their"})
"""The words (as :func:`memgraph.text.words` gives them) that say a clause is the
speaker's own ("I", "we"), the addressee's ("you") or someone else's ("she")."""
_KIND = "\x00kind"
"""The term that stands for any of the everyday words of the answer asked for."""
_GREETINGS = frozenset(
    index_terms("hi hey hello thanks thank ok okay oh morning night dear love yes no sorry")
)
"""Words said around a name that only calls someone ("Emi.", "thanks Rosa")."""
_ASKS_WHAT = re.compile(
    r"\s*(?:so |and |but |oh,? )?(?:what|which|where|when|how|who|why)s?\b", re.IGNORECASE
)
"""A question that takes something for granted and asks about it ("What flavor did
you make?", "whats ur new job"), unlike a yes-or-no one ("Have you ever been to
Rome?")."""
_BARE_QUESTION = re.compile(
    r"\W*(?:(?:so|and|but|oh|ok|okay|wait)\W+)?(?:what|which|where|when|how|who)"
    r"(?:s|['’]s| is| are| was| were| did| do| does)\b",
    re.IGNORECASE,
)
"""A question typed without its "?" ("whos the new boss", "where is it")."""
_ASKS_HOW = re.compile(
    r"\W*(?:(?:so|and|but|oh|hey|morning|ok|okay)\W+){0,2}how(?:['’]s| is| was| are| were|"
    r"['’]re| did| does| do)? (?:the|that|this|those|these) ",
    re.IGNORECASE,
)
"""A question about how a thing is going ("how's the job hunt", "how was the
race?"): in a chat, the addressee's."""
_THEIR_WORDS = re.compile(
    r"\b(?:what|how|which)(?: \w+)? (?:did|does|do|has|have|would|will) (?P<who>\w+) (?:\w+ )?"
    r"(?:say|said|tell|told|think|suggest|recommend|advise|mention|share|describe|explain|"
    r"feel|felt|express)\b|"
    r"\bwhat (?:advice|tips?|suggestions?|recommendations?) (?:did|does|do) (?P<giver>\w+)\b|"
    r"\baccording to (?P<source>\w+)\b",
    re.IGNORECASE,
)
"""A question about what someone says, thinks or feels ("What did Jon say about
his customers?", "How does Tim feel while surfing?"): their own words answer it,
whoever's the topic they speak of."""


@dataclass(frozen=True)
class Talk:
    """What a remembered turn's conversation says around it.

    Attributes:
        addressee: episode id -> the entity id of whom it speaks to (another
            string when they have no entity), if known.
        before: episode id -> the (at most three) turns it goes on from, nearest
            first, as ``(episode id, text)``.
    """

    addressee: Callable[[str], str | None] = lambda _episode: None
    before: Callable[[str], Sequence[tuple[str, str]]] = lambda _episode: ()


@dataclass(frozen=True)
class Support:
    """How much of a question's topic the best texts hold.

    Attributes:
        own: the best share held by a text of (or naming) a named entity, or one
            of its facts.
        anyone: the best share held by any text or fact.
        unowned: the relative the question says is theirs ("Dana's sister") is
            spoken of, but never as anyone's ("a sister would be nice").
        others: the texts in which someone else speaks of such a relative of their
            own ("my sister Karin"): the name near it is not theirs.
        theirs: how much of all that the texts hold of the topic is theirs, each
            text counted by the square of the share it holds (one holding all of
            the topic counts four times one holding half); ``None`` when not
            weighed (a thing of theirs judged alone).
    """

    own: float
    anyone: float
    unowned: bool = False
    others: frozenset[str] = frozenset()
    theirs: float | None = None

    @property
    def about_someone_else(self) -> bool:
        """The topic is held, but not by anything of the named entities: theirs hold
        little of it and someone else's much more; or someone else's hold most of
        it and theirs less than half and clearly less, while less than
        :data:`LARGELY_THEIRS` of all the texts hold of it is theirs ("How is John's
        new puppy settling in?" when only Maria has a puppy and John spoke of dogs;
        for a thing of theirs judged alone, only another's holding all of it
        counts); or
        someone else's hold all of it and theirs less than half ("What did Jon
        find for his store?" when Gina found it for hers, and Jon only spoke of
        his store); or the relative the question says is theirs is only ever
        spoken of as nobody's ("What does Evelyn's sister do?" when only "a
        sister would be acceptable" was said); or hardly any of what all the texts
        hold of it is theirs ("What does Caroline say running has been great
        for?" when Melanie speaks of her running again and again, and Caroline
        once "ran into" someone on a not-so-great hike)."""
        if self.unowned or (self.theirs is not None and self.theirs < HARDLY_THEIRS):
            return True
        if self.anyone >= WHOLE_TOPIC and self.own <= LESS_THAN_HALF:
            return True
        if (
            self.own < MOSTLY_THEIRS <= self.anyone
            and self.anyone - self.own >= CLEAR_MARGIN
            and self.theirs is not None  # a thing judged alone: only all of it is another's
            and self.theirs < LARGELY_THEIRS
        ):
            return True  # someone else's holds most of it, theirs clearly less
        return self.own < OWN_SHARE and self.anyone - self.own >= SWAP_MARGIN


def support(
    graph: Graph,
    ranked: Sequence[Candidate],
    query: Query,
    *,
    episode_docs: Mapping[str, Doc],
    frequency: Callable[[str], float],
    talk: Talk | None = None,
    cues: Iterable[str] = (),
    silent: Callable[[str], bool] = lambda _entity: False,
) -> Support | None:
    """How much of ``query``'s topic the best of ``ranked`` hold, and whose they are.

    ``frequency`` weighs a term (an inverse document frequency); ``talk`` tells
    whom a remembered turn speaks to and what was said before it; ``cues`` are the
    everyday words of the kind of answer asked for ("dentist" for "What does Naomi
    do for work?"): a text holding one holds the topic. ``None`` when the
    query does not name exactly one entity, or one person among several ("Dana's
    brother Chidi" names two: whose is the topic is then no single person's), or
    asks nothing but an answer's kind.
    When the question asks about something of theirs ("Dana's sister", "her
    tortoise"), that thing is also judged alone: when someone else's texts hold
    it and theirs do not, the topic is someone else's, whatever else theirs
    hold; a relative of theirs ("Dana's sister") is judged alone only, as what
    is said of a relative comes in words of its own, and a relative said to be
    nobody's ("a home for kids who need one") is not theirs.
    """
    query = _as_written(graph, query)
    named = set(query.named)
    if _names_theirs(graph, query):
        return None  # "Ellie's niece Isla": a text about Isla is about the niece, whoever says it
    if len(named) > 1:  # "Melanie's painting for the Art show": the one person named
        named = {e for e in named if (graph.entities.get(e) or {}).get("type") == "person"}
    if len(named) != 1:
        return None
    if named != set(query.named):
        # a text naming Nike names the company, not them; one naming "Meera's Nani",
        # what the question says is theirs
        kept = named | {e for e in query.named if _said_theirs(graph.entity_name(e), query)}
        # "Leah's plan for Broad Street": the street is what is asked about
        query = dataclasses.replace(
            query,
            name_terms=_names_left(graph, query, kept),
            mentions=mention_groups(graph, sorted(kept), partial=PARTIAL_NAMES),
        )
    quiet = silent(next(iter(named)))
    their_words = _asks_their_words(query)
    asking = their_words or frozenset()
    # "Which city does Mehmet live in?": "city" is the answer's kind, said as "Schiedam"
    asking = asking | _place_asked(query.text)
    if asked_period(query.text) is not None:
        # "on 11 August, 2023": when it was said, not what ("It all started August
        # last year" holds nothing of the workshop asked about)
        asking = asking | _DATE_TERMS | {t for t in query.content_terms if t.isdigit()}
    topic = list(kin(t for t in query.content_terms if t not in ANSWER_WORDS | asking))
    # a word weighs as the rarest of its forms the texts hold ("grandma" for "grandmother")
    weights = {t: max(map(frequency, (t, *WORD_FORMS.get(t, ())))) for t in topic}
    kind = set(cues) - set(topic)
    if kind:  # as much as the topic's weightiest word (all of it when none is held)
        weights[_KIND] = max(weights.values(), default=0.0) or 1.0
    if math.fsum(weights.values()) <= 0:
        return None
    if not kind and all(t in LIGHT_VERBS for t in topic if weights[t] > 0):
        return None  # "Where did Claire spend Christmas?": "spends his days" is no one's Christmas
    wanted = [*topic, *kind]
    things, head = possessed(query)
    possessions = {t for t in things & set(topic) if weights[t] > 0}
    talk = talk or Talk()
    # the topic's words a text holds; whether they are theirs (None: nobody's, asked)
    parts: list[tuple[set[str], bool | None]] = []
    holders: list[str | None] = []  # whose each part is when it is not theirs
    elsewhere: set[str] = set()  # texts speaking of such a relative of someone else's
    for item in ranked[:LOOKED_AT]:
        if item.obs is not None:
            content = str(item.obs.get("content") or "")
            said = as_asked(index_terms(content)) & set(wanted)
            mine = item.entity is not None and item.entity["id"] in named
            if (
                head in KIN_TERMS
                and head in said
                and _owner(content, head, query) is None
                and not _opens_with(content, head)  # "sister is a nurse": "my" is dropped
            ):
                # "goal is to give kids a loving home" says nothing of whose kids
                parts.append(({head}, None))
                said = said - {head}
            if mine and said:
                # "loves Evan's paintings" on their entity: the paintings are Evan's (a
                # fact tells of its entity as "her", so only a name says another's)
                others = {t for t in said if _owner(content, t, query, spoken_of=True) == "other"}
                if others:
                    parts.append((others, False))
                    said = said - others
            if quiet and not mine and set(words(content)) & THIRD_PERSON_WORDS:
                # of someone who never speaks, "scattered his ashes" on the widow's
                # entity may well be theirs: it says nothing of whose
                parts.append((said, None))
            else:
                parts.append((said, mine))
            entity = item.entity["id"] if item.entity is not None else None
            holders.extend([entity] * (len(parts) - len(holders)))
        elif item.episode is not None and item.episode in episode_docs:
            text = spoken_words(episode_docs[item.episode])
            speaker = item.entity["id"] if item.entity is not None else None
            for line, (said_by, line_text, heard) in _turns(
                graph, item.episode, text, speaker, talk
            ):
                held_by = _clauses(
                    line_text,
                    wanted,
                    said_by,
                    line,
                    named,
                    query,
                    heard,
                    head=head,
                    chain=frozenset(things),
                    their_words=their_words is not None,
                    spoken_of=quiet,
                    kind=frozenset(kind),
                )
                if (
                    head in RELATIONS
                    and said_by not in named
                    and _tells_own(line_text, head, query)
                ):
                    elsewhere.add(item.episode)  # "my sister Karin", said by another
                parts.extend(held_by)
                # what is not theirs in a turn of theirs is the addressee's
                holders.extend(
                    [heard.addressee(line) if said_by in named else said_by] * len(held_by)
                )
    if kind:  # any of the answer's everyday words holds the same share
        parts = [((said - kind) | ({_KIND} if said & kind else set()), t) for said, t in parts]
    own, anyone = _shares(parts, weights)
    # a pet, a job, a city is said of everyone's, and one text of theirs naming
    # theirs ("I have a fish") says they have one, however often others speak of theirs
    share_theirs = 1.0 if kind and own >= WHOLE_TOPIC else _how_much_theirs(parts, holders, weights)
    # someone never heard themselves (Kristen's mother Carol) is told of as "Mom",
    # "she": only what the question says is theirs ("Carol's sister") is judged
    found = (
        None if quiet else Support(own, anyone, others=frozenset(elsewhere), theirs=share_theirs)
    )
    # "after her father's stroke": the stroke is her father's, spoken of by all who
    # share him ("tata's stroke" in a sibling's turn), not a thing of hers alone
    of_a_relative = head not in KIN_TERMS and head not in PETS and bool(things & KIN_TERMS - {head})
    if (
        possessions
        and not of_a_relative
        and (own < MOSTLY_THEIRS or head in KIN_TERMS or head in PETS)
        and any(possessions & said for said, _ in parts)
    ):
        # what is theirs, alone: someone else's holds it and theirs do not (a pet or
        # a relative, however much else is theirs: "Which rescue did Kasia adopt her
        # dog from?" when she adopted a cat there and only others speak of dogs)
        held = {t: w for t, w in weights.items() if t in possessions}
        if head in held:  # a text that holds the kind of thing is about one
            held[head] = max(held[head], math.fsum(held.values()) - held[head])
        # (not by how much of all the texts hold is theirs: judged so, a thing of
        # theirs flagged as many answerable questions as it gained abstentions)
        theirs = Support(
            *_shares([(said & possessions, mine) for said, mine in parts], held),
            others=frozenset(elsewhere),
        )
        if head in KIN_TERMS and theirs.anyone == 0.0:
            # "a sister would be acceptable": the relative is spoken of as nobody's
            return Support(0.0, 0.0, unowned=True)
        if theirs.about_someone_else or head in KIN_TERMS:
            # a relative's news is in words of its own: "my sister moved to Austin"
            # says where Dana's sister lives, whoever else's sister "lives" somewhere
            return theirs
    return found


_DATE_TERMS = frozenset(index_terms(" ".join(MONTHS + WEEKDAYS)))
"""The words of a day a question names ("on 11 August, 2023"), with its numbers:
no part of its topic."""


_PLACE_KINDS = (
    "city town country neighbourhood neighborhood suburb state area village region district "
    "county province island street road part"
)
"""Kinds of place a question asks for by "which" or "what"."""
_WHICH_PLACE = re.compile(
    r"\b(?:which|what)\s+(?:\w+\s+)?(" + "|".join(_PLACE_KINDS.split()) + r")\b"
    r"(?=\s+(?:is|was|are|were|does|did|do|has|had|will|would)\b)",
    re.IGNORECASE,
)


def _place_asked(question: str) -> frozenset[str]:
    """The kind of place a question asks for ("Which city does Mehmet live in now?":
    "city"), as index terms: the answer names it ("Schiedam"), so texts need not
    hold the word."""
    found = _WHICH_PLACE.search(question)
    return frozenset(index_terms(found.group(1))) if found else frozenset()


_SAID_BY_ITS_WORD = frozenset(index_terms("surname maiden blood"))
"""What someone has that a chat names by its own word when it speaks of it at all
("my surname", "her maiden name", "my blood type"): most of what the texts hold,
they say in other words ("Sung-min's PhD": "my thesis defence"; "Anneke's
granddaughter": "a baby girl")."""


def never_said_theirs(query: Query) -> bool:
    """Whether the thing the question says is the named person's was never said at
    all, when it is something a chat names by its own word ("What is Arjun's
    surname?" when no text says "surname"). Other words never said ("When was
    Elin born?", "Who supervises Sung-min's PhD?") ask in words of their own what
    the texts may say in others ("a little girl, at 4:12", "my thesis"); a thing
    the question calls by its own name ("Aoife's nephew Cian") is said by that
    name."""
    if any(
        set(index_terms(match.group(1))) <= query.name_terms
        for match in _THEIR_NAMED.finditer(query.text)
    ):
        return False  # "Aoife's nephew Cian": the nephew is remembered by his own name
    things, _head = possessed(query)
    return bool(things & set(query.unheard) & _SAID_BY_ITS_WORD)


def _turns(
    graph: Graph, episode: str, text: str, speaker: str | None, talk: Talk
) -> list[tuple[str, tuple[str | None, str, Talk]]]:
    """A text as the turns it holds: itself, or, for a transcript remembered as one
    text (each turn a line starting "Dana: …"), each turn as its speaker's,
    spoken to the speaker of the turn before it and going on from the turns
    before it."""
    lines = transcript_turns(text)
    if lines is None:
        return [(episode, (speaker, text, talk))]
    ids = [f"{episode}#{n}" for n in range(len(lines))]
    place = {line: n for n, line in enumerate(ids)}
    who: dict[str, str | None] = {}
    for label, _ in lines:
        entity = graph.entity_by_name(str(label))
        who[str(label)] = str(entity["id"]) if entity is not None else str(label)
    speakers = [who[str(label)] for label, _ in lines]

    def addressee(line: str) -> str | None:
        at = place[line]
        before = [s for s in reversed(speakers[:at]) if s != speakers[at]]
        after = [s for s in speakers[at + 1 :] if s != speakers[at]]
        return (before or after or [None])[0]

    def before(line: str) -> list[tuple[str, str]]:
        at = place[line]
        return [(ids[n], lines[n][1]) for n in range(at - 1, max(-1, at - 3), -1)]

    heard = Talk(addressee, before)
    return [
        (line, (said_by, words, heard))
        for line, said_by, (_, words) in zip(ids, speakers, lines, strict=True)
    ]


def _asks_their_words(query: Query) -> frozenset[str] | None:
    """When the question asks what the named person says, thinks or feels, the
    terms of how it asks ("say", "feel": not its topic); else ``None``."""
    match = _THEIR_WORDS.search(query.text)
    if match is None:
        return None
    who = match["who"] or match["giver"] or match["source"]
    if not is_their_name(who, query):
        return None
    return frozenset(in_any_form(index_terms(match.group().split(who, 1)[-1])))


def _shares(
    parts: Sequence[tuple[set[str], bool | None]], weights: Mapping[str, float]
) -> tuple[float, float]:
    """The best share of the weights held by a part that is theirs, and by any part
    that is someone's."""
    total = math.fsum(weights.values())  # exactly rounded: the same in any order
    own = anyone = 0.0
    for said, theirs in parts:
        if theirs is None or total <= 0:
            continue
        share = math.fsum(weights.get(t, 0.0) for t in said) / total
        anyone = max(anyone, share)
        if theirs:
            own = max(own, share)
    return own, anyone


def _how_much_theirs(
    parts: Sequence[tuple[set[str], bool | None]],
    holders: Sequence[str | None],
    weights: Mapping[str, float],
) -> float:
    """How much of what the parts hold of the weights is theirs, against the one
    other holder who holds most (``holders[i]`` holds ``parts[i]`` when it is not
    theirs): each part counts by the square of its share, so a text holding all of
    the topic counts four times one holding half. Against one other, not all
    others: in a scope of many people who all "work" somewhere, where one works is
    no less theirs; a part no one is known to hold (a note with no speaker) is a
    holder of its own. 1.0 when no part holds any."""
    total = math.fsum(weights.values())
    if total <= 0:
        return 1.0
    theirs: list[float] = []
    others: dict[str | int, list[float]] = {}
    for n, ((said, whose), holder) in enumerate(zip(parts, holders, strict=True)):
        if whose is None:
            continue
        share = math.fsum(weights.get(t, 0.0) for t in said) / total
        # a text no one is known to have said (a note) is one holder of its own
        (theirs if whose else others.setdefault(n if holder is None else holder, [])).append(
            share * share
        )
    mine = math.fsum(theirs)
    most = max((math.fsum(held) for held in others.values()), default=0.0)
    return mine / (mine + most) if mine + most > 0 else 1.0


def _clauses(
    text: str,
    topic: Sequence[str],
    speaker: str | None,
    episode: str,
    named: set[str],
    query: Query,
    talk: Talk,
    *,
    head: str | None = None,
    chain: frozenset[str] = frozenset(),
    their_words: bool = False,
    spoken_of: bool = False,
    kind: frozenset[str] = frozenset(),
) -> list[tuple[set[str], bool | None]]:
    """The topic's words a text holds, split by whose they are: theirs (the text
    names them, or goes on from a turn that does), its speaker's own, its
    addressee's (said to them), or nobody's (asked, or of someone unnamed).

    ``head`` is the kind of thing the question says is theirs ("dog" of "Dana's
    dog"): a clause that says whose that thing is ("my dog", "her grandma's cat")
    is that owner's; ``chain`` the rest of what it says is theirs ("brother" of
    "Mei's brother's wedding"). When the question asks what they say (``their_words``), a
    plain clause is its speaker's, whatever was said before it. ``spoken_of``: they
    never speak, so "her" and "Mom's" do not say the thing is someone else's.
    ``kind``: the everyday words of the answer asked for, which a denial does not
    take from its owner ("Not Norway, the Azores instead" still tells their own)."""
    wanted = set(topic)
    clauses = _split(text)
    if not any(said & wanted for _, said in clauses):
        referred = _referred(clauses, wanted, episode, named, query, talk)
        return [(referred, True)] if referred else []
    to_them = _is(talk.addressee(episode), named)
    # Said to them, their name only calls them ("That's great, Caroline! Which one?"),
    # unless it says something is theirs ("and Dana's knee?")
    names_them = _names(clauses, query)
    named_in_text = names_them and (not to_them or _owned_by_name(text, query))
    # the turns before, by clause, and whether a name of theirs in it only calls them
    before: list[tuple[list[tuple[str, set[str]]], bool]] | None = None

    def turns_before() -> list[tuple[list[tuple[str, set[str]]], bool]]:
        """The turns before, by clause, and whether a name of theirs in it only calls
        them (said to them, unless it says something is theirs)."""
        nonlocal before
        if before is None:
            before = [
                (
                    _split(turn),
                    bool(_is(talk.addressee(said_by), named)) and not _owned_by_name(turn, query),
                )
                for said_by, turn in talk.before(episode)
            ]
        return before

    def named_before() -> bool:  # a turn it goes on from names them, not only calls them
        return any(_names(turn, query) and not calls for turn, calls in turns_before())

    def told_of() -> bool:  # the turn, or one it goes on from, names them
        return names_them or named_before()

    owned: dict[bool | None, set[str]] = {}
    telling_own = False  # an earlier clause spoke of the topic with "I" or "my"
    reacting = False  # an earlier clause reacted to the addressee's news ("well done!!")
    friends = False  # an earlier clause told what a friend of the speaker's did
    for clause, said in clauses:
        held = said & wanted
        clause_words = set(words(clause))
        own_news = (
            bool(clause_words & FIRST_PERSON_WORDS) and not clause_words & SECOND_PERSON_WORDS
        )
        if own_news:
            reacting = False  # "My dogs love the park": back to their own news
        elif not held and not telling_own and _reacts(clause, clause_words):
            reacting = True
        if not held:
            if not telling_own and not clause.rstrip().endswith("?"):
                # "I'm hooked on this game called FIFA 23. This is a great football
                # game": what follows goes on from the speaker's own
                telling_own = own_news
            continue
        spoken = clause_words
        asks_how = _ASKS_HOW.match(clause) is not None  # "how's the job hunt": theirs
        owner = (
            _owner(clause, head, query, chain, spoken_of=spoken_of, told_of=told_of)
            if head is not None and head in held
            else None
        )
        if owner is None and head is None and not named_in_text:
            # "I love your turtles": what the clause holds is the addressee's
            owners = {_owner(clause, term, query, spoken_of=spoken_of) for term in held} - {None}
            owner = "addressee" if owners == {"addressee"} else None
        if owner is not None and not named_in_text:
            whose = {"speaker": speaker in named, "addressee": to_them}.get(owner, owner == "them")
        elif clause.rstrip().endswith("?") or _BARE_QUESTION.match(clause):
            # "is your eye surgery still on?" takes it that the addressee has one
            # and "what did you make?" that they made something
            asks_them = (
                "your" in spoken
                or (_ASKS_WHAT.match(clause) is not None and bool(spoken & SECOND_PERSON_WORDS))
                or asks_how
            )
            whose = to_them if asks_them else None
        elif named_in_text:
            whose = True
        elif (
            asks_how
            # asked what Nate suggests, "You can use coconut oil" is his own words
            or (_to_them(spoken) and not their_words)
            or _reacts(clause, spoken)
        ):
            whose = to_them
        elif not their_words and _yours_nearest(clause, held):
            # "I bet you never thought you'd be getting a third turtle": the
            # addressee's, though the clause also says "I"
            whose = to_them
        elif (
            _SOMEONE_OF_THEIRS_DOES.match(clause)
            and not (spoken - _SOMEONE_OF_THEIRS_WORDS) & FIRST_PERSON_WORDS
        ):
            # "a buddy of mine adopted last year", "my friend moved to Leeds": theirs,
            # not the speaker's, and so is what goes on from it ("It was a long process")
            whose = None
            friends = True
        elif spoken & FIRST_PERSON_WORDS or their_words:
            whose = speaker in named
            telling_own = telling_own or bool(spoken & FIRST_PERSON_WORDS)
        elif friends and not spoken & (FIRST_PERSON_WORDS | SECOND_PERSON_WORDS):
            whose = None
        elif (telling_own and not _OPENS_WITH_A_THIRD.match(clause)) or CAPTION.search(clause):
            # "here's a picture I snapped. It's a waterfall", or the caption of a
            # photo they shared: the speaker's, whatever the turn before held
            whose = speaker in named
        elif reacting:
            # "YAYYY well done!! Officially a second-year PhD student": what follows
            # a reaction to their news is theirs
            whose = to_them
        else:
            before = turns_before()
            nearest = before[0][0] if before else []
            echoed = [  # not a question's words: "For walking or running?" "running."
                set(words(other))
                for other, terms in nearest
                if held & terms and not other.rstrip().endswith("?")
            ]
            if named_before():
                whose = True  # "Full knee replacement." after "Walt's knee?"
            elif echoed and not any(_to_them(other) for other in echoed):
                # "smart tortoise." after the other's tortoise
                to = talk.addressee(episode)
                # "I signed up for a race!!" "The Ngong Hills one.": the speaker's
                # own turns in a row go on from their own words
                nearest_id = next(iter(talk.before(episode)), (None, ""))[0]
                own_turn = nearest_id is not None and talk.addressee(nearest_id) == to
                whose = speaker in named if to is None or own_turn else to in named
            else:  # "RIP Subaru, the car's dead" after "are you getting a new car?"
                whose = speaker in named
        if (
            head in KIN_TERMS
            and head in held
            and owner is None
            and not named_in_text
            and not (speaker in named and (_definite(clause, head) or _answers_as(clause, head)))
        ):
            # "a home for kids who need it" says nothing of whose kids they are ("the
            # kids" in their own turn are theirs, and so is "Husband!" answering "Daniel
            # is your...?")
            owned.setdefault(None, set()).add(head)
            held = held - {head}
        elif (
            head in PETS
            and head in held
            and owner is None
            and (
                # "the rescue says no cats": no one's pet ("I have a dog", "we got a
                # cat", "how's the cat?" say whose; "the cat" alone is most often the
                # speaker's)
                (
                    not named_in_text
                    and not asks_how
                    and _plural(clause, head)
                    and (
                        not spoken & (FIRST_PERSON_WORDS | SECOND_PERSON_WORDS)
                        or _of_a_kind(clause, head)
                    )
                )
                # "Andy's never been a dog person"
                or _a_kind_of_person(clause, head)
                # "she wants a garden for a dog", "I'd love a cat someday": nobody's yet
                or _wished_for(clause, head)
            )
        ):
            owned.setdefault(None, set()).add(head)
            held = held - {head}
        # (not a value of the answer's kind: "Not Norway. ... the Azores instead!")
        denied = (
            _denied(clause, held - kind)
            if whose is not None and clause_words & _NEGATIONS
            else set()
        )
        if denied:
            # "We're not married yet": what they say they do not have or do is not theirs
            owned.setdefault(None, set()).update(denied)
            held = held - denied
        if (
            spoken_of
            and whose is False
            and owner is None
            and not named_in_text
            and (spoken & THIRD_PERSON_WORDS or not spoken & FIRST_PERSON_WORDS)
        ):
            # of someone who never speaks, "appointment is on the 11th, I'm going with
            # her" may well be theirs: only "I" and "my" alone say it is not
            whose = None
        owned.setdefault(whose, set()).update(held)
    return [(held, whose) for whose, held in owned.items()]


_NEGATIONS = frozenset(
    {"not", "never", "no", "nor", "without", "cant", "wont", "aint"}
    | {"dont", "doesnt", "didnt", "havent", "hasnt", "hadnt", "isnt", "arent", "wasnt"}
    | {"werent", "couldnt", "wouldnt", "shouldnt"}
)
"""Words that deny what follows them ("not married yet", "haven't got a dog")."""
_DENIAL_REACH = 3
"""How many words before the topic's word a denial reaches ("never been to Rome")."""
_NOT_A_DENIAL = frozenset(
    {"know", "knew", "known", "think", "thought", "wait", "believe", "believed", "forget"}
    | {"forgot", "mind", "worry", "only", "sure", "even", "just", "doubt", "stop", "miss"}
    | {"care", "remember", "matter", "problem", "way", "idea", "expect", "expected"}
    | {"realise", "realised", "realize", "realized", "imagine", "imagined", "guess"}
    | {"a", "an", "the", "to", "my", "your", "that", "this", "his", "her", "their", "our"}
)
"""Words after a denial that deny nothing of what follows ("can't wait to get
married", "no idea if the wedding's on", "I never knew turtles could be so
interesting", "she's not a summer dog", "silly not to give you a talk")."""


def _denied(clause: str, held: set[str]) -> set[str]:
    """Which of the topic's words ``held`` the clause denies ("We're not married yet",
    "I don't have any kids", "never been to Rome"); a question denies nothing ("isn't
    Kevin your manager?")."""
    if clause.rstrip().endswith("?"):
        return set()
    denied: set[str] = set()
    for phrase in _PHRASE.split(clause):  # "it's not over, I signed up again"
        tokens = words(phrase)
        for at, token in enumerate(tokens):
            terms = held & as_asked(in_any_form(index_terms(token)))
            if not terms:
                continue
            reach = tokens[max(0, at - _DENIAL_REACH) : at]
            for offset, word in enumerate(reach):
                after = reach[offset + 1 : offset + 2] or [token]
                if word in _NEGATIONS and after[0] not in _NOT_A_DENIAL and "but" not in reach:
                    denied |= terms
                    break
    return denied


_WISHING = frozenset(
    {"want", "wants", "wanted", "wanting", "wish", "wishing", "for", "need", "needs"}
    | {"love", "like", "dream", "dreaming", "considering", "consider", "if"}
)
"""Words before "a dog" that make it a pet to have, not one had."""


def _wished_for(clause: str, head: str) -> bool:
    """Whether the clause speaks of a pet of ``head``'s kind only as one to have ("a
    garden for a dog", "I want a cat", "thinking about a puppy")."""
    tokens = words(clause)
    for at, token in enumerate(tokens):
        if token not in ("a", "an", "another") or at == 0:
            continue
        pet = any(head in kinds(in_any_form(index_terms(t))) for t in tokens[at + 1 : at + 3])
        if pet and (
            tokens[at - 1] in _WISHING
            or tokens[max(0, at - 2) : at] in (["thinking", "about"], ["thinking", "of"])
        ):
            return True
    return False


def _definite(clause: str, head: str) -> bool:
    """Whether the clause says ``head`` after "the" ("took the kids to the beach")."""
    tokens = words(clause)
    return any(
        before == "the" and head in kin(in_any_form(index_terms(word)))
        for before, word in itertools.pairwise(tokens)
    )


def _plurals(tokens: Sequence[str], head: str) -> list[int]:
    """Where the words ``tokens`` say ``head`` in the plural ("cats")."""
    return [
        at
        for at, word in enumerate(tokens)
        if word.endswith("s") and not word.endswith("ss") and head in in_any_form(index_terms(word))
    ]


def _plural(clause: str, head: str) -> bool:
    """Whether the clause says ``head`` in the plural ("cats"): of a kind, not a one."""
    return bool(_plurals(words(clause), head))


_OF_A_KIND_BEFORE = frozenset(
    {"of", "about", "love", "like", "hate", "adore", "all", "most", "some", "other", "no", "with"}
)
"""Words before a plural that make it a kind ("speaking of cats", "I love dogs")."""


def _of_a_kind(clause: str, head: str) -> bool:
    """Whether the clause says ``head`` in the plural as a kind ("Cats are so petty, I
    love it", "speaking of cats", "I love dogs"), not some of theirs ("my two cats",
    "I have cats")."""
    tokens = words(clause)
    return any(at == 0 or tokens[at - 1] in _OF_A_KIND_BEFORE for at in _plurals(tokens, head))


_PEOPLE_OF_A_PET = frozenset({"person", "people", "lover", "lovers", "friendly", "allergy"})
"""Words after a pet's kind that speak of people, not of a pet ("a dog person")."""


def _a_kind_of_person(clause: str, head: str) -> bool:
    """Whether the clause says ``head`` only of a kind of person ("never been a dog
    person", "cat people", "dog-friendly")."""
    tokens = words(clause)
    return any(
        head in in_any_form(index_terms(token))
        and (at + 1 < len(tokens) and tokens[at + 1] in _PEOPLE_OF_A_PET)
        for at, token in enumerate(tokens)
    )


_REFERRING = frozenset({"it", "its", "them", "that", "this", "one"})


def _referred(
    clauses: Sequence[tuple[str, set[str]]],
    wanted: set[str],
    episode: str,
    named: set[str],
    query: Query,
    talk: Talk,
) -> set[str]:
    """The topic's words a text naming them speaks of by a pronoun ("Elsa named it
    Birgit" after "the canoe is done"): those the three turns before it hold."""
    naming = [
        clause
        for clause, said in clauses
        if any(group <= said for group in query.mentions) and _REFERRING & set(words(clause))
    ]
    if not naming or not _names(clauses, query):
        return set()
    if _is(talk.addressee(episode), named) and not any(
        _owned_by_name(clause, query) for clause in naming
    ):
        return set()  # said to them, their name only calls them
    return {t for _, turn in talk.before(episode) for t in as_asked(index_terms(turn)) & wanted}


_OWNER_WORDS = {"my": "speaker", "our": "speaker", "your": "addressee", "ur": "addressee"}
_OTHERS = frozenset({"his", "her", "their", "its"})
_OWNED_AFTER = {
    "mine": "speaker",
    "ours": "speaker",
    "yours": "addressee",
    "hers": "other",
    "theirs": "other",
}
"""Whose a thing is, said after it: "Speaking of sisters, mine is coming", "a
friend of yours" ("his" only after "of": "the dog his dinner" is no dog of his)."""
_OWNED_AFTER_OF = _OWNED_AFTER | {"his": "other"}
_ARTICLES = frozenset({"the", "a", "an"})
"""Words no owner comes before: "Bran's the collie" says who the collie is."""
_NO_OWNERS = frozenset(
    index_terms(
        "women men children kids girls boys ladies people today tonight tomorrow "
        "yesterday week weekend month year world"
    )
)
"""Words before "'s" that say what kind of thing it is, not whose: "the women's
masters quad", "today's run"."""


def _owner(
    clause: str,
    head: str,
    query: Query,
    chain: frozenset[str] | set[str] = frozenset(),
    *,
    spoken_of: bool = False,
    told_of: Callable[[], bool] = lambda: False,
) -> str | None:
    """Whose the clause says the asked thing is, by the words just before it: "my
    dog" the speaker's, "your dog" the addressee's, "Dana's dog" theirs ("them"),
    "her grandma's cat" someone else's ("other"); or just after it: "Speaking of
    sisters, mine is coming", "a friend of yours"; ``None`` when it does not say
    ("the dog", "a cat"). ``chain``: the other things the question says are theirs
    ("Mei's brother's wedding"): "my brother's wedding" is then whose the brother is.
    ``spoken_of``: the person asked about never speaks and is told of as "her": "her
    dad" is theirs ("taking a bottle of whisky for her dad" for Morven's father),
    and "Mom's" may be (Kristen's "Mom's appointment" for Carol's), so does not
    say. ``told_of``: whether the turn, or one it goes on from, names them ("Nomsa
    is expecting!" ... "Kagiso, her husband, went pink"): "her" is then theirs.
    A "her" the question itself says of the thing ("her fall at her flat") is
    theirs. A later mention may say what an earlier one does not ("never knew
    turtles could be so fun until I met your turtles")."""
    tokens = WORD.findall(clause)
    for at, token in enumerate(tokens):  # the first mention that says whose it is
        if head in in_any_form(index_terms(token)):
            after = [t.lower() for t in tokens[at + 1 : at + 3]]
            if after[:1] == ["of"] and after[1:] and after[1] in _OWNED_AFTER_OF:
                return _OWNED_AFTER_OF[after[1]]  # "a friend of his"
            if after and after[0] in _OWNED_AFTER:
                return _OWNED_AFTER[after[0]]  # "Speaking of sisters, mine is coming"
            start, position = at, at - 1
            while position >= max(0, start - 2):
                low = tokens[position].lower().replace("’", "'")
                if low in _ARTICLES:
                    break  # "Bran's the collie": Bran is the collie, no owner of it
                if low in _OWNER_WORDS:
                    return _OWNER_WORDS[low]
                if low in _OTHERS:
                    if _asked_as(low, head, query):
                        return "them"  # "her flat" of "Tunde's mum ... at her flat"
                    return "them" if spoken_of or told_of() else "other"
                if low.endswith("'s") and set(index_terms(low[:-2])) - _NO_OWNERS:
                    if is_their_name(low[:-2], query):
                        return "them"
                    if spoken_of and kin(index_terms(low[:-2])) & KIN_TERMS:
                        return None
                    if not kin(index_terms(low[:-2])) <= chain:
                        return "other"
                    start = position  # a thing the question says is theirs: whose is it?
                position -= 1
    return None


def _asked_as(pronoun: str, head: str, query: Query) -> bool:
    """Whether the question itself says ``head`` after ``pronoun`` ("When did Tunde's
    mum have her fall at her flat?": "her flat" is the mum's, as in the texts)."""
    tokens = [t.lower() for t in WORD.findall(query.text)]
    return any(
        tokens[at - 1] == pronoun and head in in_any_form(index_terms(token))
        for at, token in enumerate(tokens)
        if at > 0
    )


def _tells_own(text: str, head: str, query: Query) -> bool:
    """Whether a text speaks of its speaker's own such relative ("my sister Karin")."""
    return any(
        head in said and _owner(clause, head, query) == "speaker" for clause, said in _split(text)
    )


def _answers_as(clause: str, head: str) -> bool:
    """Whether the clause is the kinship word alone ("Husband!" answering "Daniel is
    your...?")."""
    said = WORD.findall(clause)
    return len(said) == 1 and head in kin(in_any_form(index_terms(said[0])))


def _opens_with(content: str, term: str) -> bool:
    """Whether a fact's content starts with ``term`` ("sister is a nurse"): the
    subject of a fact stated in the first person, whose "my" the extraction drops."""
    first = WORD.match(content.strip())
    return first is not None and term in in_any_form(index_terms(first.group()))


_THEIR_NAMED = re.compile(r"\b[A-Z][\w-]*['’]s " + NOUN_WORDS + r"([A-Z][\w-]*)")


def _names_theirs(graph: Graph, query: Query) -> bool:
    """Whether the question calls what it says is theirs by its own name ("Ellie's
    niece Isla", "Rosa's husband Frank"), a second entity it names."""
    names = {
        word.lower(): entity
        for entity in query.named
        for word in (graph.entity_name(entity) or "").split()
    }
    return any(
        names.get(match.group(1).lower()) is not None for match in _THEIR_NAMED.finditer(query.text)
    )


def _said_theirs(name: str | None, query: Query) -> bool:
    """Whether the question says the entity so named is theirs ("Meera's Nani",
    "her Nani")."""
    if not name:
        return False
    pattern = rf"(?:['’]s|\bhis|\bher|\btheir|\bmy)\s+(?:[\w-]+\s+)?{re.escape(name)}\b"
    return re.search(pattern, query.text, re.IGNORECASE) is not None


def _owned_by_name(text: str, query: Query) -> bool:
    """Whether the text names the asked person as an owner ("Dana's knee")."""
    return any(
        token.lower().endswith(("'s", "’s")) and is_their_name(token[:-2], query)
        for token in WORD.findall(text)
    )


def _split(text: str) -> list[tuple[str, set[str]]]:
    clauses = (
        _NOT_TO_THEM.sub(" ", _YOUR_DOING.sub(_without_you, m.group()))
        for m in _CLAUSE.finditer(text)
    )
    return [(clause, as_asked(index_terms(_PRAISE.sub(" ", clause)))) for clause in clauses]


_YOUR_DOING = re.compile(
    r"\b(?:that|which|the|this|those|these)\s+(?:[\w'’-]+\s+){0,3}?"
    r"(?P<you>(?:you|u)\s+(?:recommended|suggested|mentioned|told\s+me\s+about|sent(?:\s+me)?|"
    r"gave\s+me|lent\s+me|showed\s+me|shared|posted|linked|got\s+me|made\s+me))\b",
    re.IGNORECASE,
)
"""Someone's own doing with a thing the addressee gave them the idea of ("Been
reading that book you recommended and painting to keep busy"): the clause is
still the speaker's."""


def _without_you(found: re.Match[str]) -> str:
    start, end = found.span("you")
    return found.string[found.start() : start] + " " + found.string[end : found.end()]


_NOT_TO_THEM = re.compile(
    r"\b(?:thank(?:s|\s+(?:you|u))(?:\s+(?:both|all|so much|again))?"
    # "thank you for the sunflowers": the sunflowers were the addressee's doing
    r"(?!\s+for\s+(?:the|your|a|an|this|that|these|those|my|our|all)\b)|"
    r"(?:just\s+)?(?:like|as)\s+(?:you|u)\s+(?:said|suggested|recommended|told me|mentioned|"
    r"advised|predicted|warned|promised|guessed|say)|(?:see|miss|love)\s+(?:you|u)(?:\s+all)?)\b",
    re.IGNORECASE,
)
"""Words to the addressee that say nothing is theirs ("got fitted like you said",
"thank you both for coming", "see you Friday"); not thanks for a thing ("thank
you for the sunflowers"), which was theirs to give."""


_PRAISE = re.compile(
    r"\b(?:good|great|nice|awesome|amazing|fantastic|excellent|brilliant|wonderful|"
    r"incredible|terrific|super|fab|cool|well)\s+job\b",
    re.IGNORECASE,
)
"""Praise ("Great job, you picked up some great skills!"), which speaks of no job."""


_REACTION = re.compile(
    r"^\W*(?:(?:wo+w+|whoa|oh|oops|o+m+g+|aw+|ya+y+|hey|ah+|ooh|woo+hoo+|yes|haha+|lol|and|also|so|"
    r"huge|big|many|massive|hearty|belated)\W+(?:[^\W\d_]+[,!]+\s*)?){0,3}"
    r"(?:congrat\w*|kudos|mazel tov|(?:good|best of) luck|way to go|well done|"
    # a wish for the other's day ("Happy birthday Chloe!", "have a great trip"), not
    # one to oneself or one's own ("happy birthday to my mum")
    r"happy (?:belated |early |late )?(?:birthday|bday|anniversary|retirement|graduation|"
    r"housewarming|first day|moving day)\b(?! to (?:me|my|our|us)\b)|"
    r"(?:have|enjoy) (?:an? |the |your )?(?:(?:great|good|safe|lovely|wonderful|fun|amazing|"
    r"nice|brilliant|fab|fantastic|relaxing|restful) )?(?:\w+ )?(?:trip|flight|time|holiday|"
    r"vacation|weekend|birthday|party|wedding|honeymoon|travels)\b|safe travels|"
    r"good (?:on|for) (?:you|ya)|keep (?:it|them|that) up|keep up the|"
    r"(?:i['’]?m |i am |(?:so|really|very|super) )*(?:sorry|glad|happy|thrilled|stoked) "
    r"(?:to hear|for you|about|['’]bout)|(?:great|good|nice|awesome) to hear|"
    r"(?:that|this|it)(?:['’]s| is) (?:\w+ ){1,2}(?:news )?about|"
    r"(?:that|this)(?:['’]s| is) (?:(?:such|so|really|an?|super|truly) )*"
    r"(?:awesome|amazing|great|beautiful|cool|lovely|gorgeous|incredible|stunning|cute|"
    r"adorable|impressive|wonderful|fantastic|brilliant|inspiring)\b)",
    re.IGNORECASE,
)
"""A clause that answers the other's news ("Congrats on the promotion!", "Hey Gina,
congrats on the store!", "sorry to hear about the car", "That's awesome about the
deal") or wishes them well on their day ("Happy birthday Chloe!", "enjoy the
trip"): what it holds is theirs."""
_SOUNDS = re.compile(
    r"\b(?:sounds?|sounded|looks?|looked) (?:so |really |super |like |(?:an? )?)?"
    r"(?:amazing|great|awesome|fun|cool|incredible|lovely|wonderful|fantastic|exciting|"
    r"intense|tough|hard|rough|scary|delicious|beautiful|perfect|blast)\b",
    re.IGNORECASE,
)
"""A clause that says how the other's news sounds ("the charity race sounds
amazing"): said of it, not of the speaker's own."""


def _reacts(clause: str, spoken: set[str]) -> bool:
    """Whether a clause reacts to what the addressee told: congratulates them, is
    sorry or glad to hear it, or says how it sounds (without "I" or "my")."""
    if _REACTION.search(clause):
        return True
    return not spoken & FIRST_PERSON_WORDS and _SOUNDS.search(clause) is not None


def _yours_nearest(clause: str, held: set[str]) -> bool:
    """Whether, in a clause saying both "I" and "you", the person nearest before
    the first word of ``held`` in its phrase is "you" ("I bet you'd be getting a third turtle"),
    not "I" or "my" ("you know I got a third turtle")."""
    spoken = set(words(clause))
    if not spoken & SECOND_PERSON_WORDS or not spoken & FIRST_PERSON_WORDS:
        return False
    for part in _PHRASE.split(clause):  # "since you only got the short version: I signed it"
        tokens = words(part)
        for at, token in enumerate(tokens):
            if in_any_form(index_terms(token)) & held:
                for before in reversed(tokens[:at]):
                    if before in SECOND_PERSON_WORDS:
                        return True
                    if before in FIRST_PERSON_WORDS:
                        return False
                return False
    return False


_FRIEND = (
    r"(?:good\s+|close\s+|old\s+|best\s+)?"
    r"(?:friend|buddy|pal|mate|colleague|coworker|co-worker|neighbou?r)"
)
"""A friend's word ("a close friend", "my buddy")."""
_SOMEONE_OF_THEIRS_DOES = re.compile(
    r"\W*(?:(?:yeah|yes|oh|well|so|and|but|actually|haha|lol)\W+){0,2}"
    rf"(?:(?:a|one)\s+(?:{_FRIEND}|cousin)\s+of\s+(?:mine|ours)\b"
    rf"|my\s+{_FRIEND}\s+(?!and\b|&)[a-z]+(?:ed|s)\b)",
    re.IGNORECASE,
)
"""A clause about what a friend of the speaker's did ("a buddy of mine adopted last
year"): the friend's, not the speaker's."""
_SOMEONE_OF_THEIRS_WORDS = frozenset({"mine", "ours", "my", "our"})

_OPENS_WITH_A_THIRD = re.compile(r"\W*(?:he|she)\b", re.IGNORECASE)
"""A clause whose subject is someone else ("He's been on the waiting list two
years"): it does not go on from the speaker's own news ("I lent him my gloves")."""
_PHRASE = re.compile(r"[,:;–—]|\s-\s")
"""Where a clause's phrases part: a comma, a colon, a dash."""


def _to_them(spoken: set[str]) -> bool:
    """Whether a clause speaks of its addressee's ("you have a dog"), not its own."""
    return bool(spoken & SECOND_PERSON_WORDS) and not spoken & FIRST_PERSON_WORDS


def _is(entity: str | None, named: set[str]) -> bool | None:
    return None if entity is None else entity in named


def _names(clauses: Sequence[tuple[str, set[str]]], query: Query) -> bool:
    """Whether a turn names the person asked about, other than to call them first
    ("Emi. The surgery was Tuesday")."""
    for at, (_, said) in enumerate(clauses):
        for group in query.mentions:
            if group <= said:
                calls = at == 0 and len(clauses) > 1 and said - group <= _GREETINGS
                if not calls:
                    return True
    return False


def _as_written(graph: Graph, query: Query) -> Query:
    """The query without the entities it writes only in lower case where it writes
    others with a capital: "her eye surgery" and "Owen's dog" name no entities
    "Surgery" or "DOG" (an extractor's slips), and "surgery" and "dog" are what is
    asked about."""
    written = {e for e in query.named if _capitalised_in(graph.entity_name(e), query.text)}
    if not written or written == query.named:
        return query
    return dataclasses.replace(
        query,
        named=frozenset(written),
        name_terms=_names_left(graph, query, written),
        mentions=mention_groups(graph, sorted(written), partial=PARTIAL_NAMES),
    )


def _names_left(graph: Graph, query: Query, kept: Iterable[str]) -> frozenset[str]:
    """The query's name terms once only the entities ``kept`` count as named: the
    words of the others go back to what is asked about (a word of a name kept stays
    a name)."""
    kept = set(kept)
    naming = {t for e in kept for t in index_terms(graph.entity_name(e) or "")}
    others = {t for e in query.named - kept for t in index_terms(graph.entity_name(e) or "")}
    return query.name_terms - (others - naming)


def _capitalised_in(name: str | None, text: str) -> bool:
    """Whether ``text`` writes ``name`` with a capital, as a name."""
    return bool(name) and re.search(rf"\b{re.escape(str(name))}\b", text) is not None
