"""The offline chat model: answers every memgraph prompt deterministically.

:class:`MockChatModel` reads the phase from the reply schema (``extract``,
``rerank``, ``forget``, ``summarize``, ``merge``) and answers from the tagged
parts of the last user message (see :mod:`memgraph.llm_calls.prompts`) with simple,
deterministic rules. Without a schema it chats like a simple assistant
(:mod:`memgraph.providers.mock.reply`): it answers a question from the facts of
a memory context system message in a sentence, or says it does not know; it
calls a tool the user names, and acknowledges anything else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from memgraph.answer_kinds import answer_cues
from memgraph.attributes import asked_attributes, attribute_cues, attribute_of
from memgraph.chatter import asks_what_was_asked, only_asks
from memgraph.dates import asks_about_now, asks_when, mentions_time
from memgraph.llm_calls.prompts import DAYS_NAMED_LABEL, read_tag
from memgraph.llm_calls.provider import Completion, JsonSchema, Message, Usage, message_text
from memgraph.sums import asks_amount, states_amount
from memgraph.text import STOP_WORDS, VERB_FORMS, WORD_FORMS, content_key, stem, words

from .reply import reply
from .rules import extract, split_sentences

__all__ = [
    "MEMORY_HEADERS",
    "MockChatModel",
    "count_tokens",
    "message_text",
    "overlap_terms",
    "relevance",
]

MEMORY_HEADERS = ("Relevant context from memory:", "Known information from memory:")
"""How a system message that carries recalled memory starts."""

SUMMARY_LIMIT = 600


def _stems(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in text.split())


_FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "i'm", "i've", "i'd", "i'll"})
_SYNONYMS = {
    stem(word): stem(meaning)
    for word, meaning in (
        ("job", "work"),
        ("employer", "work"),
        ("employ", "work"),
        ("home", "live"),
        ("address", "live"),
        ("reside", "live"),
        ("residence", "live"),
        ("hometown", "live"),
        ("wife", "married"),
        ("husband", "married"),
    )
}
_COMMAND_WORDS = _stems(
    """forget forgot remove delete erase drop wipe clear memory memories fact facts
    everything anything all info information data stuff please remember record records note
    notes entry entries detail details"""
)
_DECISION = _stems(
    """decide decided agree agreed plan plans will deadline schedule scheduled budget chose
    choose prefer need must commit promise remind todo going deliver ship launch due by"""
)
_WEAK = _stems("like get got make good new use want")
_QUOTE_START = re.compile(r" \((?:in reply to|after|answered by) ")
_CANDIDATE = re.compile(r"^\[([^\]]+)\]\s?(.*)$")
_OBSERVATION = re.compile(r"^(?P<entity>.+?) \((?P<type>[^()]*)\): (?P<content>.+)$")
_HEADER_ONLY = re.compile(r"^(?P<entity>.+?) \((?P<type>[^()]*)\):?(?P<content>)$")
_MEMORY_LINE = re.compile(r"^(?P<name>.+?) \((?P<type>[^()]+)\)\s*(?::\s*(?P<fact>.*))?$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_REQUEST = re.compile(r"^\s*(?:please\s+)?(?:tell|remind|show)\s+me\b", re.IGNORECASE)
_ROLE_PREFIX = re.compile(r"^(?:user|assistant)\s*:\s*", re.IGNORECASE)


def count_tokens(text: str) -> int:
    """A cheap token estimate: words × 4/3, rounded."""
    return round(len(text.split()) * 4 / 3)


def overlap_terms(text: str) -> set[str]:
    """Stemmed content terms of ``text`` for lexical matching.

    First-person words add the term ``user`` (the speaker's entity) and a few
    synonyms map onto the words facts use (``job`` → ``work``, ``home`` → ``live``).
    """
    tokens = words(text)
    out = {stem(w) for w in tokens if len(w) > 1 and w not in STOP_WORDS}
    out |= {_SYNONYMS[t] for t in out if t in _SYNONYMS}
    if _FIRST_PERSON & set(tokens):
        out.add("user")
    return out


def _asked_attributes(query: set[str]) -> set[str]:
    """The attributes a query's (stemmed) terms ask about: "live" → residence."""
    return asked_attributes(sorted(query | {_UNSTEM.get(t, t) for t in query}))


_UNSTEM = {stem(w): w for w in ("lives", "living", "works", "working", "named", "called")}


def relevance(
    query: set[str],
    fact: str,
    *,
    cues: frozenset[str] = frozenset(),
    news: frozenset[str] = frozenset(),
) -> float:
    """How well ``fact`` (``Name (type): content`` or plain text) matches query terms.

    Shared content terms count 1 each, shared entity-name terms 1.5; a match on
    weak words alone (``like``, ``get``, ...) counts as no match. The turns a
    message is quoted with (``(in reply to X: "…")``) count half: they say what
    the message is about, not what it says. A message in the everyday words of
    the kind of answer asked for (``cues``: "a pediatric dentist" for "What does
    Naomi do for work?") counts as one more match and a half, one in the words
    news of an asked attribute comes in (``news``: "we found a house in
    Bloomfield" for "Where does Wren live now?") as one more.
    """
    fact, *rest = _QUOTE_START.split(fact, maxsplit=1)
    quoted = rest[0] if rest else ""
    match = _OBSERVATION.match(fact) or _HEADER_ONLY.match(fact)
    name = overlap_terms(match["entity"]) if match else set()
    own = overlap_terms(match["content"] or "") if match else overlap_terms(fact)
    context = overlap_terms(quoted) - own if quoted else set()
    content = own | context
    kind = 1.5 if cues & own else 1.0 if news & own else 0.0
    if not (query & (name | content)) - _WEAK and not kind:
        return 0.0
    asked = query - name - {"user"} - _WEAK
    said = (
        " ".join((match["content"] or "").replace("_", " ").replace("→", " ").split())
        if match
        else ""
    )
    attribute = attribute_of(said) if said else None
    stated = 2.0 if attribute is not None and attribute in _asked_attributes(query) else 0.0
    # "user" (first person on both sides) says whose, not what: "Where do I live?"
    # is not answered by "I work at Acme".
    if asked and not (query & content) - _WEAK - {"user"} and not stated and not kind:
        return 0.0  # the name matches, but nothing of what is asked about it
    matched = len(query & own) + 0.5 * len(query & context) + 1.5 * len(query & name)
    return matched + stated + kind


LISTED_FIRST = 3.0
"""What being listed first is worth to the re-ranker, in shared words."""
LISTED_HALF = 10
"""The place in the list where being listed is worth half as much."""


def listed_weight(index: int) -> float:
    """What a candidate's place in the list it was handed is worth.

    The list comes best first from the lexical and vector tiers, which weigh rare
    words, names and context that word overlap alone misses: "I've had them for 3
    years now", listed first for "How long has Nate had his turtles?", shares
    fewer words with it than "Long time no see, Nate!". A model reading the list
    weighs that order too, so the first place counts as three shared words, the
    tenth as one and a half."""
    return LISTED_FIRST * LISTED_HALF / (LISTED_HALF + index)


SAYS_WHEN = 1.5
"""What saying when ("last Sunday", "on the 3rd") is worth, in shared words, for a
question that asks when."""
SAYS_A_SUM = 1.5
"""What stating a sum of money ("$32 a mug") is worth, in shared words, for a
question that asks how much."""
SAYS_A_COUNT = 1.5
"""What saying a number ("like 9 people", "three cats") is worth, in shared words,
for a question that asks how many (the days a message's dates were resolved to
are not its numbers)."""
ASKING = 2.0
"""What a message that only asks ("Is work far from there?") loses, in shared
words, unless the question asks what was asked."""
LATEST = 1.0
"""What being the last said among the candidates is worth, in shared words, for a
question about now ("Where does Wren work now?")."""


def _own_part(label: str) -> tuple[str, re.Match[str] | None]:
    """A candidate's label without the turns quoted after it, and its ``Name (type or
    day): text`` parts when it has them."""
    own = _QUOTE_START.split(label, maxsplit=1)[0]
    return own, _OBSERVATION.match(own)


_HOW_MANY = re.compile(r"^\s*(?:roughly |about )?how many\b", re.IGNORECASE)
_COUNT = re.compile(
    r"\b(?:\d+(?![:\d])|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|dozen|"
    r"fifteen|twenty|thirty|forty|fifty|hundred|a few|a couple)\b",
    re.IGNORECASE,
)
_RESOLVED = re.compile(r"\([^()]*\d{4}\)")


def _said(label: str) -> str:
    """A message's own words: its label (``Speaker (19 January 2024): text``) without
    the speaker and day before them and the turns quoted after them."""
    own, match = _own_part(label)
    return match["content"] if match else own


def _lateness(listed: Sequence[tuple[str, str]]) -> dict[str, float]:
    """How late each message was said among the listed ones, from 0 (the first day)
    to 1 (the last); facts, whose labels name a type where a message's name its
    day, are left out."""
    days: dict[str, int] = {}
    for cid, text in listed:
        _, match = _own_part(text)
        if match is None:
            continue
        try:
            days[cid] = datetime.strptime(match["type"], "%d %B %Y").toordinal()
        except ValueError:  # a fact's type ("person"), not a day
            continue
    rank = {day: at for at, day in enumerate(sorted(set(days.values())))}
    last = max(1, len(rank) - 1)
    return {cid: rank[day] / last for cid, day in days.items()}


def _candidates(body: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for line in body.splitlines():
        match = _CANDIDATE.match(line.strip())
        if match:
            out.append((match[1], match[2].strip()))
        elif out and line.strip():
            out[-1] = (out[-1][0], f"{out[-1][1]} {line.strip()}")
    return out


def _empty_reply(schema: Mapping[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {key: _empty_reply(value) for key, value in props.items()}
    return {"array": [], "string": "", "number": 0, "integer": 0, "boolean": False}.get(str(kind))


def _last_user(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return message_text(message)
    return ""


def _field(prompt: str, label: str, *, first_word: bool = False) -> str | None:
    """The value of a ``Label: value`` line of the prompt (outside the tagged data)."""
    head = prompt.split("<text>", 1)[0]
    match = re.search(rf"^{re.escape(label)}: (.+)$", head, re.MULTILINE)
    if match is None:
        return None
    value = match.group(1).strip()
    return value.split()[0] if first_word and value else value or None


def _tagged(messages: Sequence[Message], tag: str) -> str | None:
    """The body of ``<tag>`` in the latest user message that has one."""
    for message in reversed(messages):
        if message.get("role") == "user":
            body = read_tag(message_text(message), tag)
            if body is not None:
                return body
    return None


class MockChatModel:
    """A deterministic, offline chat model that understands memgraph's prompts.

    Args:
        model: the model name reported in completions (default ``"mock"``).
    """

    def __init__(self, model: str = "mock") -> None:
        self.model = model

    def __repr__(self) -> str:
        return f"MockChatModel(model={self.model!r})"

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: JsonSchema | None = None,
        **options: Any,
    ) -> Completion:
        """Answer ``messages``; with ``schema`` the text is JSON in that schema's shape."""
        prompt = sum(count_tokens(message_text(m)) for m in messages)
        if schema is None:
            return self._chat(messages, options, prompt)
        handlers = {
            "extract": self._extract,
            "rerank": self._rerank,
            "forget": self._forget,
            "summarize": self._summarize,
            "merge": self._merge,
        }
        handler = handlers.get(schema.phase)
        reply = handler(messages) if handler else _empty_reply(schema.schema)
        text = json.dumps(reply, ensure_ascii=False)
        return self._completion(text, prompt)

    async def acomplete(
        self,
        messages: Sequence[Message],
        *,
        schema: JsonSchema | None = None,
        **options: Any,
    ) -> Completion:
        """Async twin of :meth:`complete`."""
        return self.complete(messages, schema=schema, **options)

    def _completion(
        self,
        text: str,
        prompt: int,
        tool_calls: tuple[dict[str, Any], ...] = (),
    ) -> Completion:
        spoken = text or json.dumps(list(tool_calls))
        return Completion(
            text=text,
            model=self.model,
            usage=Usage(prompt_tokens=prompt, completion_tokens=count_tokens(spoken)),
            tool_calls=tool_calls,
            finish_reason="tool_calls" if tool_calls else "stop",
        )

    # ------------------------------------------------------------------ phases

    def _extract(self, messages: Sequence[Message]) -> dict[str, Any]:
        text = _tagged(messages, "text")
        if text is None:
            user = [message_text(m) for m in messages if m.get("role") == "user"]
            text = user[-1] if user else ""
        prompt = _last_user(messages)
        reply: dict[str, Any] = extract(
            text,
            _tagged(messages, "known") or "",
            speaker=_field(prompt, "Speaker"),
            addressee=_field(prompt, "Addressee"),
            said_at=_field(prompt, "Said at", first_word=True),
            previous=_tagged(messages, "previous"),
            days_named=_field(prompt, DAYS_NAMED_LABEL),
        )
        return reply

    def _rerank(self, messages: Sequence[Message]) -> dict[str, Any]:
        asked = _tagged(messages, "query") or ""
        query = overlap_terms(asked)
        # the words said for the asked ones ("my manager" for "her boss"), as a model reads them
        query |= {
            form for term in query if term not in VERB_FORMS for form in WORD_FORMS.get(term, ())
        }
        cues = frozenset(answer_cues(asked)) - query
        attributes = attribute_cues(asked_attributes(words(asked)))
        news = frozenset(stem(w) for w in words(attributes)) - query
        listed = _candidates(_tagged(messages, "candidates") or "")
        late = _lateness(listed) if asks_about_now(asked) else {}
        asks_asked = asks_what_was_asked(asked)
        when = asks_when(asked)
        how_much = asks_amount(asked)
        how_many = bool(_HOW_MANY.search(asked))
        scored: list[tuple[float, int, str]] = []
        for index, (cid, text) in enumerate(listed):
            score = relevance(query, text, cues=cues, news=news)
            if score > 0:  # the order it was handed counts only among the relevant
                order = listed_weight(index) + LATEST * late.get(cid, 0.0)
                said = _said(text)
                if when and mentions_time(said):
                    order += SAYS_WHEN  # "When did ...?" is answered by a text that says when
                if how_much and states_amount(said):
                    order += SAYS_A_SUM  # "How much ...?" by one that states a sum
                if how_many and _COUNT.search(_RESOLVED.sub("", said)):
                    order += SAYS_A_COUNT  # "How many ...?" by one that says a number
                if not asks_asked and only_asks(said):
                    order -= ASKING  # a question does not answer one
                scored.append((-(score + order), index, cid))
        return {"ids": [cid for _, _, cid in sorted(scored)]}

    def _forget(self, messages: Sequence[Message]) -> dict[str, Any]:
        request = _tagged(messages, "request") or ""
        facts = [
            _ForgetCandidate.parse(t) for _, t in _candidates(_tagged(messages, "candidates") or "")
        ]
        candidates = [f for f in facts if f is not None]
        whole = overlap_terms(request) - _COMMAND_WORDS
        named_whole = {n for c in candidates for n, t in c.names.items() if t and t <= whole}
        chosen: list[_ForgetCandidate] = []
        for part in re.split(r"\band\b|[,;]", request):
            wanted = overlap_terms(part) - _COMMAND_WORDS
            if not wanted:
                continue
            named = {n for c in candidates for n, t in c.names.items() if t and t <= wanted}
            named = named or named_whole
            scores: list[tuple[float, _ForgetCandidate]] = []
            for candidate in candidates:
                involved = [n for n in candidate.names if n in named]
                if named and not involved:
                    continue
                rest = wanted - set().union(*(candidate.names[n] for n in involved))
                score = 1.0 if not rest else len(rest & candidate.terms) / len(rest)
                scores.append((score, candidate))
            best = max((s for s, _ in scores), default=0.0)
            if best >= 0.5:
                chosen += [c for s, c in scores if s == best and c not in chosen]
        return {
            "observations": [c.reply for c in chosen if "content" in c.reply],
            "relations": [c.reply for c in chosen if "type" in c.reply],
        }

    def _summarize(self, messages: Sequence[Message]) -> dict[str, Any]:
        conversation = _tagged(messages, "conversation") or ""
        items: list[tuple[str, str]] = []
        role = "user"
        for line in conversation.splitlines():
            head, sep, content = line.partition(":")
            if sep and head.strip().lower() in ("user", "assistant", "system", "tool"):
                role, line = head.strip().lower(), content
            if role in ("user", "assistant"):
                items += [(role, s) for s in split_sentences(line)]
        scored = sorted((-_informative(s), i) for i, (_, s) in enumerate(items))
        keep = [i for score, i in scored if score < 0] or [i for _, i in scored]
        picked: list[int] = []
        used = 0
        for i in keep:
            cost = len(items[i][1]) + 12
            if used + cost <= SUMMARY_LIMIT:
                picked.append(i)
                used += cost
        parts: list[str] = []
        last_role = ""
        for i in sorted(picked):
            role, sentence = items[i]
            sentence = sentence if sentence[-1:] in ".!?" else sentence + "."
            parts.append(f"{role.title()}: {sentence}" if role != last_role else sentence)
            last_role = role
        return {"summary": _bounded(" ".join(parts))}

    def _merge(self, messages: Sequence[Message]) -> dict[str, Any]:
        previous = _sentences(_tagged(messages, "previous") or "")
        new = _sentences(_tagged(messages, "new") or "")
        seen: set[str] = set()
        merged: list[str] = []
        for sentence in previous + new:
            key = content_key(_ROLE_PREFIX.sub("", sentence))
            if key and key not in seen:
                seen.add(key)
                merged.append(sentence)
        while len(" ".join(merged)) > SUMMARY_LIMIT and len(merged) > 1:
            merged.pop(0)
        return {"summary": _bounded(" ".join(merged))}

    # ------------------------------------------------------------------ chat

    def _chat(
        self, messages: Sequence[Message], options: Mapping[str, Any], prompt: int
    ) -> Completion:
        last = messages[-1] if messages else {}
        if last.get("role") == "tool":
            return self._completion(f"(mock) Tool result: {message_text(last)[:300]}", prompt)
        users = [message_text(m) for m in messages if m.get("role") == "user"]
        said = users[-1] if users else ""
        tools = options.get("tools")
        if tools and last.get("role") == "user":
            call = _tool_call(tools, said)
            if call is not None:
                return self._completion("", prompt, (call,))
        facts: list[str] = []
        for message in messages:
            text = message_text(message)
            if message.get("role") == "system" and text.startswith(MEMORY_HEADERS):
                facts += _memory_facts(text)
        wanted = overlap_terms(_REQUEST.sub("", said))  # "tell me about X" is about X
        return self._completion(reply(said, facts, lambda fact: relevance(wanted, fact)), prompt)


class _ForgetCandidate:
    """One parsed forget candidate: the names it involves and its content terms."""

    def __init__(self, names: list[str], text: str, reply: dict[str, str]) -> None:
        self.names = {n: overlap_terms(n) for n in names}
        self.terms = overlap_terms(text)
        self.reply = reply

    @classmethod
    def parse(cls, text: str) -> _ForgetCandidate | None:
        if " → " in text:
            left, _, target = text.partition(" → ")
            source, _, rtype = left.strip().rpartition(" ")
            if not source:
                return None
            reply = {"from": source, "to": target.strip(), "type": rtype}
            return cls([source, target.strip()], f"{rtype} {target}", reply)
        match = _OBSERVATION.match(text)
        if match is None:
            return None
        reply = {"entityName": match["entity"], "content": match["content"]}
        return cls([match["entity"]], match["content"], reply)


def _informative(sentence: str) -> float:
    tokens = sentence.split()
    score = 0.0
    if any(t[:1].isupper() and t.strip(".,!").lower() not in STOP_WORDS for t in tokens[1:]):
        score += 2
    if re.search(r"\d", sentence):
        score += 2
    if {stem(w) for w in words(sentence)} & _DECISION:
        score += 2
    if tokens and tokens[0].lower() in ("i", "i'm", "my", "we", "our"):
        score += 1
    if len(tokens) < 3:
        score -= 1
    if sentence.rstrip().endswith("?"):
        score = min(score, 0.5)
    return score


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


def _bounded(text: str) -> str:
    return text if len(text) <= SUMMARY_LIMIT else text[: SUMMARY_LIMIT - 3].rstrip() + "..."


def _memory_facts(text: str) -> list[str]:
    """Facts of a memory context message, each as ``Name (type): fact``."""
    facts: list[str] = []
    header = ""
    other_section = False  # e.g. the texts the facts came from: not facts
    for line in text.splitlines()[1:]:
        stripped = line.strip()
        if not stripped:
            continue
        bullet = re.match(r"^[-*•]\s+", stripped)
        body = stripped[bullet.end() :] if bullet else stripped
        match = _MEMORY_LINE.match(body)
        top_level = not line[:1].isspace() and not bullet
        if top_level:
            other_section = match is None and body.endswith(":")
        if other_section:
            continue
        if match and not (line[:1].isspace() and bullet and header):
            header = f"{match['name']} ({match['type']})"
            if match["fact"]:
                facts.append(f"{header}: {match['fact']}")
        else:
            facts.append(f"{header}: {body}" if header else body)
    return facts


def _tool_call(tools: Iterable[Any], said: str) -> dict[str, Any] | None:
    """A call of the first tool whose function name the user's message contains."""
    lowered = said.lower()
    for tool in tools:
        function = tool.get("function", tool) if isinstance(tool, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if not isinstance(name, str) or not name:
            continue
        spoken = name.lower().replace("_", " ")
        at = lowered.find(name.lower())
        at = at if at >= 0 else lowered.find(spoken)
        if at < 0:
            continue
        arguments: dict[str, Any] = {}
        params = function.get("parameters", {}) if isinstance(function, Mapping) else {}
        required = params.get("required", []) if isinstance(params, Mapping) else []
        props = params.get("properties", {}) if isinstance(params, Mapping) else {}
        if len(required) == 1 and props.get(required[0], {}).get("type") == "string":
            tail = said[at + len(name) :].strip(" :,.-?!").split()
            while tail and tail[0].lower() in STOP_WORDS:
                tail.pop(0)
            remainder = " ".join(tail) or said.strip()
            arguments[required[0]] = remainder
        return {
            "id": "call_1",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
        }
    return None
