"""The text ``recall`` returns: the ranked facts grouped by entity, then the remembered
messages that no shown fact covers, each line dated.

```
Caroline (person):
  - [8 May 2023] went to an LGBTQ support group yesterday (7 May 2023)
Related messages:
  - [25 May 2023] Caroline: I'm researching adoption agencies, it's been a dream to have a family.
```

A fact line starts with the date it was said (its ``validFrom``); relative
dates inside messages are resolved against when they were said
(:mod:`memgraph.dates`). An entity shows only the facts that matched, and the
relations whose words the query asks about (all of them, up to a few, for an
identity query). A message is left out when a shown fact came from it and
matched at least as well, and the facts it stated hold most of its words and
all of its names; or when it says next to nothing of its own ("🧡") and was found
through the turn it quotes. A reply whose own words do not say what it is about quotes
the turns it answers; a question shows the reply said right after it. Blocks come in the order of their best candidate,
and the text stops at the token budget.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

from memgraph.clock import parse_iso
from memgraph.dates import format_day, resolve_relative_dates
from memgraph.graph.graph import Doc, Graph
from memgraph.retrieval.ranking import CURRENT, Candidate, Lens, Query, budgeted_text
from memgraph.speakers import spoken_words
from memgraph.text import content_key, in_any_form, index_terms, terms, words

__all__ = [
    "CONTEXT_WORDS",
    "MESSAGES_HEADER",
    "NOTHING_SAID",
    "format_recall",
    "nothing_said_about",
    "one_line",
    "reply_context",
    "said_on",
    "snippet",
]

MESSAGES_HEADER = "Related messages:"
NOTHING_SAID = "(Nothing remembered says this"
"""How the note starts that recall puts first when what it found is someone else's."""
MAX_MESSAGES = 10
RELATIONS_SHOWN = 3
SNIPPET_WORDS = 60
COVER_MARGIN = 0.2
COVER_SHARE = 0.6
"""A message is covered by the facts drawn from it when they (with the names of
whom they are about) hold this share of its words and every name and number in it."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_TOKEN = re.compile(r"[\w'’:-]+")
CONTEXT_WORDS = 25
"""How much of the turn a message answers is quoted with it."""


def nothing_said_about(names: Sequence[str]) -> str:
    """``(Nothing remembered says this about Dana; the nearest matches follow.)``
    (``(Nothing remembered says this; ...`` when the question names nobody)."""
    about = f" about {' or '.join(names)}" if names else ""
    return f"{NOTHING_SAID}{about}; the nearest matches follow.)"


def said_on(timestamp: str | None) -> str:
    """``7 May 2023`` for an ISO timestamp ("" when missing or unreadable)."""
    if not timestamp:
        return ""
    try:
        return format_day(parse_iso(timestamp).date())
    except ValueError:
        return ""


def snippet(text: str, terms: Sequence[str], *, limit: int = SNIPPET_WORDS) -> str:
    """``text`` cut to about ``limit`` words around where the ``terms`` cluster."""
    tokens = text.split()
    if len(tokens) <= limit:
        return text
    wanted = set(terms)
    hits = [i for i, token in enumerate(tokens) if wanted & set(index_terms(token))]
    if not hits:
        return " ".join(tokens[:limit]) + " …"
    best_start, best_count = 0, -1
    for start in range(0, len(tokens) - limit + 1, max(1, limit // 6)):
        count = sum(1 for i in hits if start <= i < start + limit)
        if count > best_count:
            best_start, best_count = start, count
    head = "… " if best_start else ""
    tail = " …" if best_start + limit < len(tokens) else ""
    return head + " ".join(tokens[best_start : best_start + limit]) + tail


def said_text(doc: Doc, *, past: bool = False, days_said: Mapping[int, date] | None = None) -> str:
    """An episode's text on one line, its relative dates resolved against when it was
    said (``past``: it answers a question about the past; ``days_said``: the days
    its conversation named before it; see
    :func:`memgraph.dates.resolve_relative_dates`)."""
    days = tuple(sorted(days_said.items())) if days_said else ()
    return _said_text(one_line(doc), str(doc.get("at") or ""), past, days)


def one_line(doc: Doc) -> str:
    """An episode's text on one line, as said."""
    return " ".join(spoken_words(doc).split())


@functools.lru_cache(maxsize=4096)
def _said_text(
    text: str, at: str, past: bool = False, days: tuple[tuple[int, date], ...] = ()
) -> str:
    # A recall quotes the same turns in the re-ranker's labels and in its text.
    if at:
        with contextlib.suppress(ValueError):
            text = resolve_relative_dates(text, parse_iso(at), past=past, days_said=dict(days))
    return text


def _quote(
    lead: str, doc: Doc, terms: Sequence[str], limit: int, resolve: bool = True, past: bool = False
) -> str:
    text = said_text(doc, past=past) if resolve else one_line(doc)
    return f'{lead} {doc.get("speaker") or "someone"}: "{snippet(text, terms, limit=limit)}"'


def reply_context(
    chain: Sequence[Doc],
    terms: Sequence[str],
    *,
    speaker: str | None = None,
    limit: int = CONTEXT_WORDS,
    resolve: bool = True,
    answers_past: Callable[[str], bool] = lambda _episode: False,
) -> str:
    """``in reply to Tariq: "which one?" after Wren: "a café emailed …"``: the turns a
    message answers, nearest first, quoted. A turn the message's own ``speaker``
    said just before it (a message that goes on from it) is quoted ``after``.
    ``resolve=False`` quotes the words as said, their relative dates unresolved;
    ``answers_past`` as for :func:`answered_by`."""
    first = "after" if speaker and chain and chain[0].get("speaker") == speaker else "in reply to"
    leads = (first, *("after" for _ in chain[1:]))
    return " ".join(
        _quote(lead, doc, terms, limit, resolve, past=answers_past(str(doc.get("id"))))
        for lead, doc in zip(leads, chain, strict=True)
    )


def answered_by(
    chain: Sequence[Doc],
    terms: Sequence[str],
    *,
    limit: int = CONTEXT_WORDS,
    answers_past: Callable[[str], bool] = lambda _episode: False,
) -> str:
    """``answered by Wren: "it's called The Rolling Die"``: the reply to a question;
    ``answered by Marcus: "where??" then Dana: "Logan Square"``: a short question
    asked about news, and its reply (``answers_past``: whether a quoted turn answers
    a question about the past, its bare dates then past ones)."""
    leads = ("answered by", *("then" for _ in chain[1:]))
    return " ".join(
        _quote(lead, doc, terms, limit, past=answers_past(str(doc.get("id"))))
        for lead, doc in zip(leads, chain, strict=True)
    )


@dataclass
class _Block:
    entity: Doc
    place: int  # where its first candidate is in the ranked list
    facts: list[Candidate] = field(default_factory=list)
    more: bool = False  # the rest of an entity's facts, ranked below a message shown first


def format_recall(
    graph: Graph,
    ranked: Sequence[Candidate],
    *,
    query: Query,
    episode_docs: Mapping[str, Doc],
    count_tokens: Callable[[str], int],
    budget: int = 2000,
    max_entities: int = 10,
    max_messages: int = MAX_MESSAGES,
    lens: Lens = CURRENT,
    reply_contexts: Mapping[str, Sequence[Doc]] | None = None,
    answers: Mapping[str, Sequence[Doc]] | None = None,
    note: str | None = None,
    answers_past: Callable[[str], bool] | None = None,
    days_said: Callable[[str], Mapping[int, date]] | None = None,
) -> str:
    """The recall text for ``ranked`` candidates (best first); "" when none shows.

    ``note`` is a line put first when anything shows (see :func:`nothing_said_about`);
    ``answers_past`` tells whether a message answers a question about the past
    (its dates without a tense of their own are then past ones); ``days_said``
    gives the days a message's conversation named before it ("28 November", for
    its "the 28th").

    ``reply_contexts`` maps a message to the turns it answers, quoted after it
    (for messages whose own words do not say what they are about); ``answers``
    maps a message that asks something to the reply said right after it. A
    message is left out when the facts shown from it say what it says."""
    blocks: dict[str, _Block] = {}
    place = {id(item): at for at, item in enumerate(ranked)}
    shown_facts: dict[str, float] = {}  # episode id -> best score of a shown fact from it
    fact_words: dict[str, set[str]] = {}  # episode id -> the words of the facts shown from it
    seen_content: set[tuple[str, str]] = set()
    for item in ranked:
        if item.episode is not None or item.entity is None:
            continue
        entity_id = str(item.entity["id"])
        block = blocks.get(entity_id)
        if block is None:
            if len(blocks) >= max_entities:
                continue
            block = blocks[entity_id] = _Block(item.entity, place[id(item)])
        if item.obs is None:
            continue
        key = (entity_id, content_key(item.obs["content"]))
        if key in seen_content:
            continue
        seen_content.add(key)
        block.facts.append(item)
        source = item.obs.get("episode")
        if source:
            shown_facts[source] = max(shown_facts.get(source, 0.0), item.score)
            fact_words.setdefault(source, set()).update(index_terms(item.obs["content"]))
    messages: list[Candidate] = []
    contexts = reply_contexts or {}
    replies = answers or {}
    asked = in_any_form(query.content_terms)
    for item in ranked:
        if item.episode is None or len(messages) >= max_messages:
            continue
        if item.episode not in episode_docs:
            continue
        if item.episode in contexts and _says_little(graph, episode_docs[item.episode]):
            continue  # "🧡", "hahaha": found through the turn before it, which says it
        said = fact_words.get(item.episode, set())
        if (
            item.episode not in contexts  # its facts do not say what it answers
            and item.episode not in replies  # nor what was answered when asked about it
            and shown_facts.get(item.episode, -1.0) >= item.score - COVER_MARGIN
            and _asked_words(episode_docs[item.episode], asked) <= said
            and _covered(graph, episode_docs[item.episode], said)
        ):
            continue  # the facts shown from it say what it says, at least as relevantly
        messages.append(item)
    # A named entity with nothing to show of its own ("Who is Bob?" answered by
    # Alice's "mentors Bob") shows only relations no shown fact states; one with
    # none (all its facts forgotten) shows no empty heading.
    blocks = {
        key: block
        for key, block in blocks.items()
        if block.facts or _has_relation_lines(graph, block, query, lens)
    }
    parts = list(blocks.values())
    if messages:  # an entity's facts ranked below the first message shown go after it
        parts = [part for block in parts for part in _split(block, place, place[id(messages[0])])]
    sections: list[tuple[int, Iterator[str]]] = [
        (part.place, _entity_lines(graph, part, query, lens)) for part in parts
    ]
    if messages:
        lines = _message_lines(
            messages,
            episode_docs,
            query,
            reply_contexts or {},
            answers or {},
            answers_past or (lambda _episode: False),
            days_said or (lambda _episode: {}),
        )
        sections.append((place[id(messages[0])], lines))
    sections.sort(key=lambda pair: pair[0])  # in the order ranked (the re-ranker's, if any)
    ordered: Iterator[Iterable[str]] = (lines for _score, lines in sections)
    if note is not None and sections:
        ordered = itertools.chain([[note]], ordered)
    return budgeted_text(ordered, count_tokens=count_tokens, budget=budget)


def _split(block: _Block, place: Mapping[int, int], message: int) -> list[_Block]:
    """``block``, and the facts of it ranked below the message at ``message`` as a
    second block of the same entity, shown after that message (the whole block,
    when none of its facts is ranked above the message)."""
    later = [item for item in block.facts if place[id(item)] > message]
    if not later or block.place > message:
        return [block]
    first = [item for item in block.facts if place[id(item)] < message]
    if not first:  # only its name ranked above: its facts and relations go below
        return [_Block(block.entity, place[id(later[0])], later)]
    rest = _Block(block.entity, place[id(later[0])], later, more=True)
    return [_Block(block.entity, block.place, first), rest]


def _asked_words(doc: Doc, asked: set[str]) -> set[str]:
    """The words of the question a message holds: a fact shown from the message
    ("kids loved the pottery workshop") covers it only if it holds them too ("made
    a bowl" for "What did she make at the workshop?")."""
    return asked.intersection(index_terms(spoken_words(doc)))


def _covered(graph: Graph, doc: Doc, said: set[str]) -> bool:
    """Whether the facts drawn from a message (their words ``said``) hold most of it
    and all of its names and numbers ("joined a ukulele group" does not cover "I
    joined a ukulele group!! The Saguaro Strummers."). A name the graph knows as an
    entity's ("Acme" in "no longer works at Acme") is held by the graph itself."""
    text = spoken_words(doc)
    own = set(index_terms(text))
    if not own:
        return True
    known = graph.name_term_index()
    held = set(said)
    for token in _names_and_numbers(text):
        stems = set(index_terms(token))
        if stems <= held:
            continue
        name_terms = terms(token)
        if not name_terms or not all(term in known for term in name_terms):
            return False
        held |= stems
    if any(
        len(sentence) > 1 and not sentence & held
        for sentence in map(set, map(index_terms, _SENTENCE_END.split(text)))
    ):
        return False  # "cannon beach, just 6 of us": a sentence no fact holds a word of
    return len(own & held) >= COVER_SHARE * len(own)


def _says_little(graph: Graph, doc: Doc) -> bool:
    """At most one word of its own and no name or number ("🧡", "hahaha", "truly")."""
    return len(index_terms(spoken_words(doc))) <= 1 and not names_or_numbers(graph, doc)


def names_or_numbers(graph: Graph, doc: Doc) -> bool:
    """Whether a message names something or holds a number ("Stripe. He got an
    offer", "2:06:41!!"), unlike "lol stop": a short answer worth its context."""
    text = spoken_words(doc)
    if next(_names_and_numbers(text), None) is not None:
        return True
    known = graph.name_term_index()
    return any(
        term in known
        for token in _TOKEN.findall(text)
        if token[:1].isupper()
        for term in terms(token)
    )


def _names_and_numbers(text: str) -> Iterator[str]:
    """Capitalised words that do not open a sentence, and numbers."""
    for sentence in _SENTENCE_END.split(text):
        for index, token in enumerate(_TOKEN.findall(sentence)):
            if any(ch.isdigit() for ch in token) or (
                index and token[:1].isupper() and token.split("'")[0] != "I"
            ):
                yield token


def _fact_line(obs: Doc) -> str:
    day = said_on(obs.get("validFrom"))
    return f"  - [{day}] {obs['content']}" if day else f"  - {obs['content']}"


def _entity_lines(graph: Graph, block: _Block, query: Query, lens: Lens) -> Iterator[str]:
    entity = block.entity
    yield f"{entity['name']} ({entity.get('type') or 'thing'}):"
    for item in block.facts:
        assert item.obs is not None
        yield _fact_line(item.obs)
    if not block.more:  # its relations are shown once, with its first facts
        yield from itertools.islice(_relations_for(graph, block, query, lens), RELATIONS_SHOWN)


def _has_relation_lines(graph: Graph, block: _Block, query: Query, lens: Lens) -> bool:
    return next(_relations_for(graph, block, query, lens), None) is not None


def _relations_for(graph: Graph, block: _Block, query: Query, lens: Lens) -> Iterator[str]:
    # Relations stated with a fact print as that fact; the others are who an entity
    # is linked to, which an identity query ("Who is Bob?") asks for.
    entity = block.entity
    wanted = set(query.content_terms)
    identity = query.identity and entity["id"] in query.named
    if not identity:
        return iter(())
    shown_text = " ".join(item.obs["content"] for item in block.facts if item.obs is not None)
    shown_words = set(words(shown_text))
    return _matching_relations(graph, entity, lens, wanted, identity, shown_words)


def _matching_relations(
    graph: Graph,
    entity: Doc,
    lens: Lens,
    wanted: set[str],
    identity: bool,
    shown_words: set[str],
) -> Iterator[str]:
    """Relation lines of ``entity`` that the query asks about and no shown fact states."""
    for rel in graph.relations_of(entity["id"]):
        if not lens.visible(rel):
            continue
        linked = graph.observation(rel["obs"]) if rel.get("obs") else None
        if linked is not None and lens.visible(linked[1]):
            continue  # the observation it was stated with says it
        outgoing = rel["from"] == entity["id"]
        other = graph.entity_name(rel["to"] if outgoing else rel["from"])
        if other is None:
            continue
        kind = rel["type"].replace("_", " ")
        phrase = f"{kind} {other}"
        if not identity and not wanted & set(index_terms(phrase)):
            continue
        if set(words(other)) <= shown_words and set(words(kind)) & shown_words:
            continue  # a shown fact already says it ("works at Acme" / works_at → Acme)
        line = (
            f"  - {rel['type']} → {other}"
            if outgoing
            else f"  - {other} {rel['type']} → {entity['name']}"
        )
        yield line


def _message_lines(
    messages: Sequence[Candidate],
    episode_docs: Mapping[str, Doc],
    query: Query,
    reply_contexts: Mapping[str, Sequence[Doc]],
    answers: Mapping[str, Sequence[Doc]],
    answers_past: Callable[[str], bool],
    days_said: Callable[[str], Mapping[int, date]],
) -> Iterator[str]:
    yield MESSAGES_HEADER
    shown = {str(item.episode) for item in messages}
    above = ""  # the message on the line before: a reply to it needs no quote
    for item in messages:
        doc = episode_docs[str(item.episode)]
        said = said_text(
            doc, past=answers_past(str(item.episode)), days_said=days_said(str(item.episode))
        )
        text = snippet(said, query.terms)
        chain = list(reply_contexts.get(str(item.episode)) or ())
        # a turn shown on a line of its own is not quoted again further back
        chain = chain[:1] + [turn for turn in chain[1:] if str(turn.get("id")) not in shown]
        if chain and str(chain[0].get("id")) != above:
            quoted = reply_context(
                chain, query.terms, speaker=doc.get("speaker"), answers_past=answers_past
            )
            text += f" ({quoted})"
        above = str(item.episode)
        answer = answers.get(str(item.episode)) or ()
        if answer and str(answer[0].get("id")) not in shown:
            text += f" ({answered_by(answer, query.terms, answers_past=answers_past)})"
        speaker = doc.get("speaker")
        day = said_on(doc.get("at"))
        prefix = f"[{day}] " if day else ""
        yield f"  - {prefix}{speaker}: {text}" if speaker else f"  - {prefix}{text}"
