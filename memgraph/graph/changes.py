"""Plan the ops that apply an extraction to the graph, without touching the graph.

The rules (each one is a regression test):

* Entities resolve by normalized name (case, whitespace, NFKC), so one name is
  one node. A name that is not known resolves to the one person whose name it
  starts ("Alice" → "Alice Chen") or whose alias it is ("also known as Al"),
  when exactly one person matches. A relation to an unknown name creates that
  entity.
* An observation already current on the entity (normalized) is not added again.
* An expiration matches a current observation of *that* entity exactly after
  normalization, else the closest one above :data:`EXPIRE_SIMILARITY`. Facts of
  other entities are never touched, and a fact added by the same change is
  never expired by it.
* A new value of a single-valued attribute ("name is Bob", "works at Globex",
  "lives in Rome") supersedes the current one: the old fact's validity is
  closed, it points at its successor, and the new fact is kept. Single-valued
  relation types (works_at, lives_in, ...) behave the same way.
* A fact that says another one is over ("is no longer allergic to peanuts",
  "doesn't drink coffee anymore") supersedes the current fact holding most of
  its words, and is kept itself.
* A relation that is already current is not added again. A person relation
  stated backwards ("Clinic works_at Dana") is turned around.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memgraph.attributes import SINGLE_VALUED_RELATIONS, attribute_of
from memgraph.graph.graph import Doc, Graph
from memgraph.llm_calls.extract import Extraction
from memgraph.speakers import spoken_words
from memgraph.text import STOP_WORDS, content_key, index_terms, name_key, similarity, stem, words

__all__ = [
    "EXPIRE_SIMILARITY",
    "Plan",
    "attribute_of",
    "negated_fact",
    "plan_extraction",
    "plan_facts",
    "plan_forget",
]

EXPIRE_SIMILARITY = 0.6
PERSON_TYPES = frozenset({"person", "people", "human", "individual", "user", "contact"})
"""Entity types a short name or alias may resolve to."""
COMMON_NAME = 64
"""A name word held by more entity names (or alias facts) than this is not resolved."""
_ALIAS = re.compile(
    r"^\s*(?:is\s+)?(?:also\s+known\s+as|known\s+as|a\.?k\.?a\.?|goes\s+by|nicknamed|"
    r"called|(?:has\s+the\s+)?nickname(?:\s+is)?|(?:full\s+)?name\s+is)\s+[\"'“]?([^\"'”.,;]+)"
    r"[\"'”]?\s*\.?\s*$",
    re.IGNORECASE,
)


_NO_LONGER = (
    re.compile(r"^(?:(is|are|was|has|have)\s+)?no\s+longer\s+(.+)$"),
    re.compile(r"^(?:does|do|did)(?:n't|\s+not)\s+()(.+?)\s+any\s*(?:more|longer)$"),
    re.compile(r"^(is|are)(?:n't|\s+not)\s+(.+?)\s+any\s*(?:more|longer)$"),
)
PERSON_SUBJECT_RELATIONS = frozenset(
    {"works_at", "works_for", "employed_by", "lives_in", "based_in", "resides_in"}
)
"""Relation types whose source is the person (``Dana works_at Clinic``, never the reverse)."""


_CLAUSES = re.compile(r"\s*(?:,|;|\band\b)\s*")


def _attributes_in(content: str) -> list[str]:
    """The single-valued attributes ``content`` states, in any of its clauses
    ("moved to Porto and now works at Porto Clinic" → residence, employer)."""
    found = [attribute_of(content)]
    if "," in content or ";" in content or "and" in content:  # else one clause: itself
        clauses = _CLAUSES.split(content)
        if len(clauses) > 1:
            found += [attribute_of(c) for c in clauses]
    return list(dict.fromkeys(a for a in found if a is not None))


def negated_fact(content: str) -> str | None:
    """The fact that ``content`` says is over, if it says so: ``"is no longer allergic
    to peanuts"`` → ``"is allergic to peanuts"``, ``"doesn't drink coffee anymore"`` →
    ``"drink coffee"``; ``None`` for any other fact."""
    key = content_key(content)
    for pattern in _NO_LONGER:
        match = pattern.match(key)
        if match:
            verb, rest = match.groups()
            return f"{verb} {rest}" if verb else rest
    return None


def _person_like(entity: Doc) -> bool:
    return str(entity.get("type") or "").lower() in PERSON_TYPES


@dataclass
class Plan:
    """The ops of one change, the ids they introduce, and what needs embedding."""

    ops: list[Doc] = field(default_factory=list)
    next_id: int = 1
    embed: list[tuple[str, str]] = field(default_factory=list)  # (obs id, text to embed)
    warnings: list[str] = field(default_factory=list)


class _Planner:
    def __init__(
        self,
        graph: Graph,
        *,
        at: str,
        now: str,
        source: str | None,
        episode_id: str | None,
        forgetting: bool = False,
    ) -> None:
        self.graph = graph
        self.forgetting = forgetting  # the user's forget or expire, not a later text's change
        self.at = at
        self.now = now
        self.source = source
        self.episode_id = episode_id
        graph.check_next_id()
        self.plan = Plan(next_id=graph.next_id)
        self.new_entities: dict[str, Doc] = {}  # name key -> entity doc added by this plan
        self.new_obs: dict[str, list[Doc]] = {}  # entity id -> observations added by this plan
        self.expired: set[str] = set()
        self.new_rel_keys: set[tuple[str, str, str]] = set()
        self.stated: list[str] = []  # ids of the facts the text states (new or already known)

    def take_id(self, prefix: str) -> str:
        value = f"{prefix}-{self.plan.next_id}"
        self.plan.next_id += 1
        return value

    # ----------------------------------------------------------------- entities
    def entity(self, name: str, type_: str) -> Doc:
        existing = (
            self.graph.entity_by_name(name)
            or self.new_entities.get(name_key(name))
            or self.known_as(name, type_)
        )
        if existing is not None:
            return existing
        doc: Doc = {
            "id": self.take_id("entity"),
            "name": name,
            "type": type_ or "thing",
            "source": self.source,
            "createdAt": self.now,
        }
        self.new_entities[name_key(name)] = doc
        self.plan.ops.append({"op": "entity", "entity": doc})
        return doc

    def known_as(self, name: str, type_: str) -> Doc | None:
        """The one person-like entity ``name`` is short for, if there is exactly one.

        Short for: the name's words start the entity's name ("Alice" for "Alice
        Chen"), or a current fact of the entity gives the name as an alias ("also
        known as Al"). Only for a person, or a name of unknown type (a relation
        end); a first name that many entity names hold is too common to resolve.
        """
        if (type_ or "thing").lower() not in PERSON_TYPES | {"thing"}:
            return None
        wanted = tuple(words(name))
        if len(name.strip()) < 3 or not wanted or any(w in STOP_WORDS for w in wanted):
            return None
        found = {doc["id"]: doc for doc in self._prefixed(wanted)}
        found.update((doc["id"], doc) for doc in self._aliased(wanted))
        return next(iter(found.values())) if len(found) == 1 else None

    def _prefixed(self, wanted: tuple[str, ...]) -> list[Doc]:
        """Person-like entities whose names start with the words ``wanted`` and a space."""
        index = self.graph.name_term_index()
        if index.count(wanted[0]) > COMMON_NAME:
            return []
        start = " ".join(wanted) + " "
        known = (self.graph.entities.get(i) for i in index.get(wanted[0], ()))
        return [
            doc
            for doc in [*known, *self.new_entities.values()]
            if doc is not None and _person_like(doc) and name_key(doc["name"]).startswith(start)
        ]

    def _aliased(self, wanted: tuple[str, ...]) -> list[Doc]:
        """Person-like entities with a current fact naming ``wanted`` as an alias."""
        index = self.graph.term_index()
        key = " ".join(wanted)
        terms = index_terms(key)
        if not terms:
            return []
        rarest = min(terms, key=lambda term: len(index.get(term, ())))
        holders = index.get(rarest, ())
        if len(holders) > COMMON_NAME:
            return []
        found = []
        for obs_id in holders:
            pair = self.graph.observation(obs_id)
            if pair is None or pair[1].get("validTo") is not None or not _person_like(pair[0]):
                continue
            match = _ALIAS.match(pair[1]["content"])
            if match and " ".join(words(match.group(1))) == key:
                found.append(pair[0])
        return found

    def current_obs(self, entity: Doc) -> list[Doc]:
        old = [
            o
            for o in entity.get("observations", ())
            if o.get("validTo") is None and o["id"] not in self.expired
        ]
        return old + self.new_obs.get(entity["id"], [])

    def has_current(self, entity: Doc, key: str) -> bool:
        """Whether a fact with this content key is current on ``entity`` (indexed)."""
        if any(content_key(o["content"]) == key for o in self.new_obs.get(entity["id"], [])):
            return True
        if entity["id"] not in self.graph.entities:
            return False
        found = self.graph.facts_of(entity["id"]).keys.get(key)
        return found is not None and found not in self.expired

    def holding(self, entity: Doc, attribute: str) -> list[Doc]:
        """Current facts of ``entity`` stating ``attribute`` (indexed)."""
        held = [
            o for o in self.new_obs.get(entity["id"], []) if attribute_of(o["content"]) == attribute
        ]
        if entity["id"] in self.graph.entities:
            for obs_id in sorted(self.graph.facts_of(entity["id"]).attributes.get(attribute, ())):
                pair = self.graph.observation(obs_id)
                if pair is not None and obs_id not in self.expired:
                    held.insert(0, pair[1])
        return held

    # ------------------------------------------------------------- observations
    def observe(
        self, entity: Doc, content: str, extra: Mapping[str, Any], *, supersede: bool = True
    ) -> None:
        key = content_key(content)
        if not key:
            return
        if self.has_current(entity, key):
            known = (
                self.graph.facts_of(entity["id"]).keys.get(key)
                if entity["id"] in self.graph.entities
                else None
            )
            if known is not None:
                self.stated.append(known)
            return
        obs: Doc = {
            "id": self.take_id("obs"),
            "content": content,
            "validFrom": self.at,
            "validTo": None,
            "recordedAt": self.now,
            "episode": self.episode_id,
            "source": self.source,
            **extra,
        }
        attributes = _attributes_in(content) if supersede else []
        clauses = {content_key(clause) for clause in _CLAUSES.split(content)} if attributes else ()
        for attribute in attributes:
            for old in self.holding(entity, attribute):
                if content_key(old["content"]) not in clauses:  # not a value restated
                    self.expire_obs(old, superseded_by=obs["id"])
        negated = negated_fact(content) if supersede else None
        if negated is not None:
            for old in self.negated_by(entity, negated):
                self.expire_obs(old, superseded_by=obs["id"])
        self.new_obs.setdefault(entity["id"], []).append(obs)
        self.stated.append(obs["id"])
        self.plan.ops.append({"op": "obs", "entity": entity["id"], "obs": obs})
        self.plan.embed.append((obs["id"], f"{entity['name']} ({entity['type']}): {content}"))

    def negated_by(self, entity: Doc, negated: str) -> list[Doc]:
        """The current facts of ``entity`` that state ``negated`` (the fact a "no
        longer" fact ends): those holding most of its words, the closest first."""
        wanted = set(index_terms(negated))
        if not wanted:
            return []
        fresh = {o["id"] for o in self.new_obs.get(entity["id"], [])}
        scored: list[tuple[float, Doc]] = []
        for obs in self.current_obs(entity):
            shared = len(wanted & set(index_terms(obs["content"])))
            if obs["id"] not in fresh and shared and shared * 3 >= len(wanted) * 2:
                scored.append((shared / len(wanted) + similarity(obs["content"], negated), obs))
        best = max((score for score, _ in scored), default=0.0)
        return [obs for score, obs in scored if score == best]

    def _expire_op(self, kind: str, fact: Doc) -> Doc:
        """The op ending ``fact`` now (never before it began), marked ``forgotten``
        when the user's forget or expire ends it."""
        op: Doc = {
            "op": kind,
            "id": fact["id"],
            "validTo": max(self.at, fact.get("validFrom") or self.at),
            "retiredAt": self.now,
        }
        if self.forgetting:
            op["forgotten"] = True
        return op

    def expire_obs(self, obs: Doc, *, superseded_by: str | None = None) -> None:
        if obs["id"] in self.expired or obs.get("validTo") is not None:
            return
        if any(obs is new for news in self.new_obs.values() for new in news):
            return  # never drop a fact this change adds
        self.expired.add(obs["id"])
        op = self._expire_op("expire_obs", obs)
        if superseded_by:
            op["supersededBy"] = superseded_by
        self.plan.ops.append(op)
        linked = self.graph.relations.get(obs["rel"]) if obs.get("rel") else None
        if linked is not None and linked.get("validTo") is None:
            self.expire_rel(linked)  # one statement, one lifetime

    def expiration(self, entity_name: str, content: str) -> None:
        entity = self.graph.entity_by_name(entity_name)
        if entity is None:
            self.plan.warnings.append(f"expiration names unknown entity {entity_name!r}; ignored")
            return
        fresh = {o["id"] for o in self.new_obs.get(entity["id"], [])}
        candidates = [o for o in self.current_obs(entity) if o["id"] not in fresh]
        key = content_key(content)
        exact = [o for o in candidates if content_key(o["content"]) == key]
        already = [o for o in entity.get("observations", ()) if o["id"] in self.expired]
        if not exact and any(content_key(o["content"]) == key for o in already):
            return  # superseded earlier in this change
        if exact:
            self.expire_obs(exact[0])
        else:
            scored = [(similarity(o["content"], content), o) for o in candidates]
            best = max(scored, key=lambda pair: pair[0], default=(0.0, None))
            if best[1] is not None and best[0] >= EXPIRE_SIMILARITY:
                self.expire_obs(best[1])
            else:
                self.plan.warnings.append(
                    f"expiration {content!r} matches no current fact of {entity['name']!r}"
                )
        for rel in list(self.graph.relations_of(entity["id"])):
            if rel["from"] != entity["id"] or rel.get("validTo") is not None:
                continue
            target = self.graph.entities.get(rel["to"])
            phrase = f"{rel['type'].replace('_', ' ')} {target['name'] if target else ''}"
            if similarity(phrase, content) >= 0.8:
                self.expire_rel(rel)

    # ---------------------------------------------------------------- relations
    def expire_rel(self, rel: Doc) -> None:
        if rel["id"] in self.expired:
            return
        self.expired.add(rel["id"])
        self.plan.ops.append(self._expire_op("expire_rel", rel))
        pair = self.graph.observation(rel["obs"]) if rel.get("obs") else None
        if pair is not None and pair[1].get("validTo") is None:
            self.expire_obs(pair[1])  # one statement, one lifetime

    def link(self) -> None:
        """Pair each new relation with the new observation of its source entity that
        states it ("works at Acme" and works_at → Acme): one fact to the user."""
        for op in self.plan.ops:
            if op["op"] != "rel":
                continue
            rel = op["rel"]
            target = self.graph.entity_name(rel["to"]) or next(
                (e["name"] for e in self.new_entities.values() if e["id"] == rel["to"]), None
            )
            if target is None:
                continue
            target_words = set(words(target))
            kind_words = {stem(w) for w in words(rel["type"].replace("_", " ")) if len(w) > 2}
            for obs in self.new_obs.get(rel["from"], []):
                if obs.get("rel"):
                    continue
                said = words(obs["content"])
                if target_words <= set(said) and (
                    not kind_words or kind_words & {stem(w) for w in said}
                ):
                    obs["rel"], rel["obs"] = rel["id"], obs["id"]
                    break

    def relate(self, source: str, target: str, type_: str, *, verbatim: bool = False) -> None:
        """Add ``source --type_--> target`` unless it is current. ``verbatim`` keeps the
        type as given and supersedes nothing (facts handed over as data, not extracted)."""
        relation_type = type_ if verbatim else "_".join(type_.lower().replace("-", " ").split())
        start = self.entity(source, "thing")
        end = self.entity(target, "thing")
        if (
            not verbatim
            and relation_type in PERSON_SUBJECT_RELATIONS
            and _person_like(end)
            and not _person_like(start)
        ):
            start, end = end, start  # "Clinic works_at Dana": small models swap the ends
        key = (start["id"], name_key(relation_type), end["id"])
        if key in self.new_rel_keys:
            return
        existing = self.graph.current_relation(*key)
        if existing is not None and existing["id"] not in self.expired:
            self.stated.append(existing["id"])
            return
        attribute = None if verbatim else SINGLE_VALUED_RELATIONS.get(relation_type)
        if attribute is not None:
            for rel in list(self.graph.relations_of(start["id"])):
                if (
                    rel["from"] == start["id"]
                    and rel.get("validTo") is None
                    and rel["to"] != end["id"]
                    and SINGLE_VALUED_RELATIONS.get(rel["type"]) == attribute
                ):
                    self.expire_rel(rel)
        doc: Doc = {
            "id": self.take_id("rel"),
            "from": start["id"],
            "to": end["id"],
            "type": relation_type,
            "source": self.source,
            "validFrom": self.at,
            "validTo": None,
            "recordedAt": self.now,
            "episode": self.episode_id,
        }
        self.new_rel_keys.add(key)
        self.stated.append(doc["id"])
        self.plan.ops.append({"op": "rel", "rel": doc})


def plan_extraction(
    graph: Graph,
    extraction: Extraction,
    *,
    at: str,
    now: str,
    source: str | None = None,
    episode: Mapping[str, Any] | None = None,
    observation_fields: Mapping[str, Any] | None = None,
    stored_episode: str | None = None,
) -> Plan:
    """The ops that apply ``extraction`` to ``graph`` (which is left unchanged).

    ``stored_episode`` names an episode already stored whose facts these are (a
    retried extraction): the facts point at it, and an ``extracted`` op records them.

    Args:
        graph: the current graph.
        extraction: a validated extraction reply.
        at: world time the text was said (``validFrom`` of new facts).
        now: the time memgraph records the change.
        source: who wrote it (an agent namespace or ``"main"``).
        episode: the episode record to store with the change; its ``id`` is
            allocated here when missing.
        observation_fields: extra fields for every new observation (category, tags).
    """
    planner = _Planner(graph, at=at, now=now, source=source, episode_id=stored_episode)
    record: Doc | None = None
    if episode is not None:
        record = dict(episode)
        record.setdefault("id", planner.take_id("episode"))
        planner.episode_id = record["id"]
        planner.plan.ops.append({"op": "episode", "episode": record})
    extra = dict(observation_fields or {})
    for item in extraction.entities:
        entity = planner.entity(item.name, item.type)
        for content in item.observations:
            planner.observe(entity, content, extra)
    for relation in extraction.relations:
        planner.relate(relation.source, relation.target, relation.type)
    for expiration in extraction.expirations:
        planner.expiration(expiration.entity_name, expiration.content)
    planner.link()
    # The facts the text states, not those it ends: a known fact a reply repeats and
    # then expires ("cracked one of the sides", ended by "going with mahogany for the
    # back and sides") is no fact of this text, whose words it shares.
    stated = [i for i in dict.fromkeys(planner.stated) if i not in planner.expired]
    if stored_episode is not None:
        planner.plan.ops.append({"op": "extracted", "episode": stored_episode, "facts": stated})
    if record is not None:
        # The facts the text states: once every one of them is expired, the text is
        # history too and recall stops showing it.
        record["facts"] = stated
        planner.plan.embed.append((record["id"], episode_embedding_text(record)))
    return planner.plan


EMBED_CHARS = 2_000
"""How much of a long text its episode vector reads (its start)."""


def episode_embedding_text(episode: Mapping[str, Any]) -> str:
    """What an episode's vector is made from: the speaker's name and the text (the
    start of a long one), as a transcript line reads."""
    speaker = episode.get("speaker")
    text = spoken_words(episode)[:EMBED_CHARS]  # a labelled line's label is its speaker
    return f"{speaker}: {text}" if speaker else text


def plan_facts(
    graph: Graph,
    entities: Sequence[tuple[str, str, Sequence[str]]],
    relations: Sequence[tuple[str, str, str]],
    *,
    at: str,
    now: str,
    source: str | None = None,
) -> Plan:
    """The ops that store facts handed over as data (``Memory.add_facts``), unchanged.

    ``entities`` are ``(name, type, observations)`` and ``relations`` are
    ``(from, to, type)``, already cleaned. Entities resolve by normalized name (an
    existing one keeps its type); observations and relations already current are
    skipped; relation types are kept as given; nothing is superseded.
    """
    planner = _Planner(graph, at=at, now=now, source=source, episode_id=None)
    for name, type_, observations in entities:
        entity = planner.entity(name, type_)
        for content in observations:
            planner.observe(entity, content, {}, supersede=False)
    for source_name, target_name, relation_type in relations:
        planner.relate(source_name, target_name, relation_type, verbatim=True)
    return planner.plan


def plan_forget(
    graph: Graph,
    *,
    observations: Sequence[tuple[str, str]] = (),
    relations: Sequence[tuple[str, str, str]] = (),
    ids: Sequence[str] = (),
    now: str,
) -> Plan:
    """Ops expiring facts: by ``(entity name, content)`` with a case-insensitive
    substring match, by ``(from, to, type)`` names, or by id (observation,
    relation, or entity: all its current facts and links). Nothing is erased.
    """
    planner = _Planner(graph, at=now, now=now, source=None, episode_id=None, forgetting=True)
    for entity_name, content in observations:
        entity = graph.entity_by_name(entity_name)
        needle = content_key(content)
        if entity is None or not needle:
            continue
        for obs in planner.current_obs(entity):
            if needle in content_key(obs["content"]):
                planner.expire_obs(obs)
    for source, target, type_ in relations:
        start, end = graph.entity_by_name(source), graph.entity_by_name(target)
        if start is None or end is None:
            continue
        rel = graph.current_relation(start["id"], "_".join(type_.lower().split()), end["id"])
        if rel is not None:
            planner.expire_rel(rel)
    for item_id in ids:
        if item_id in graph.relations:
            if graph.relations[item_id].get("validTo") is None:
                planner.expire_rel(graph.relations[item_id])
        elif item_id in graph.entities:
            entity = graph.entities[item_id]
            for obs in planner.current_obs(entity):
                planner.expire_obs(obs)
            for rel in list(graph.relations_of(item_id)):
                if rel.get("validTo") is None:
                    planner.expire_rel(rel)
        else:
            pair = graph.observation(item_id)
            if pair is not None:
                planner.expire_obs(pair[1])
    return planner.plan
