"""Seeded, reproducible workloads: texts with their scripted extraction replies, and queries.

Two generators, both stateful iterators (``take(k)`` continues where the last
call stopped, so the timed ``remember`` calls of a scenario add *new* facts to
a scope built from the first items):

* :class:`FactsWorkload`, the issue's peer workload: every text introduces one
  person (one entity) with two observations and one relation to a person
  introduced earlier. ``n`` observations = ``n / 2`` texts.
* :class:`ConversationWorkload`, shaped like real conversations: 30 % of the
  texts add two facts to the one ``User`` entity (which grows to thousands of
  observations), 70 % add two facts about a small person entity (a friend, a
  colleague; a third of them recur) linked to ``User``.

Every reply is guaranteed to add exactly what it says: names are unique,
observation contents never repeat on an entity and never state a
single-valued attribute, so the engine's planner keeps every fact and the
store-level seed path (:mod:`bench.build`) reproduces the same graph.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ConversationWorkload",
    "FactsWorkload",
    "Item",
    "Workload",
    "make_workload",
]

MASK64 = (1 << 64) - 1


def _mix(seed: int, index: int, salt: int = 0) -> int:
    """splitmix64 of (seed, index, salt): cheap, stable across processes and Python versions."""
    x = (
        seed * 0x9E3779B97F4A7C15 + index * 0xBF58476D1CE4E5B9 + salt * 0x94D049BB133111EB
    ) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def _split(text: str, sep: str | None = None) -> tuple[str, ...]:
    return tuple(text.split(sep))


class _Picker:
    """Successive pseudo-random choices derived from one (seed, index)."""

    def __init__(self, seed: int, index: int) -> None:
        self.seed, self.index, self.salt = seed, index, 0

    def below(self, n: int) -> int:
        self.salt += 1
        return _mix(self.seed, self.index, self.salt) % n

    def pick(self, values: tuple[str, ...]) -> str:
        return values[self.below(len(values))]

    def chance(self, percent: int) -> bool:
        return self.below(100) < percent


_SYLLABLES = _split(
    "ka ri mo ta len vi sor na el dru fen ga hal ir jo ke lu mar nel or pa qui ros sa tor "
    "ul ven wen xa yor zel bri cam dor est fal gor hes ith jun"
)
ROLES = _split(
    "data engineer|product manager|designer|site reliability engineer|backend developer|"
    "frontend developer|security analyst|data scientist|engineering manager|tech lead|"
    "qa engineer|mobile developer|platform engineer|researcher|technical writer|"
    "support engineer|solutions architect|ml engineer|database administrator|analyst",
    "|",
)
TOOLS = _split(
    "Rust Go TypeScript Python Kotlin Elixir Haskell Scala Swift Ruby Java Clojure Julia "
    "Zig OCaml Erlang Postgres Redis Kafka Terraform Kubernetes React Vue Svelte Django "
    "Rails Spark Airflow Flink Grafana"
)
DOMAINS = _split(
    "payments search billing analytics onboarding logistics pricing fraud-detection "
    "recommendations notifications identity reporting inventory messaging compliance "
    "forecasting telemetry checkout scheduling translation"
)
CITIES = _split(
    "Lisbon Oslo Nairobi Lima Hanoi Krakow Montreal Osaka Tbilisi Porto Seville Tallinn "
    "Accra Quito Bergen Ghent Leipzig Cork Lyon Turin Brno Riga Split Malmo Aarhus Bilbao "
    "Graz Utrecht Tartu Bologna Kyoto Busan Taipei Cebu Perth Hobart Dunedin Recife Cusco "
    "Mendoza Oaxaca Halifax Boise Tucson Duluth Asheville Savannah Spokane Madison Eugene"
)
_ADJECTIVES = _split(
    "amber azure brisk cobalt copper crimson dusky ember fallow gilded granite hollow indigo "
    "ivory jade lunar misty north obsidian onyx polar quiet rapid russet silver solar tawny "
    "umber velvet winter"
)
_NOUNS = _split(
    "falcon harbor lantern meadow orchard otter quarry raven summit tundra willow beacon "
    "canyon delta ember fjord glacier heron island juniper kestrel lagoon marble nebula "
    "oasis pine reef sparrow thistle vale"
)
ACTIVITIES = _split(
    "hiking|kayaking|birdwatching|rock climbing|sailing|cycling|surfing|skiing|baking|"
    "pottery|photography|trail running|snorkelling|camping|gardening|salsa dancing|"
    "stargazing|fishing|bouldering|swimming|yoga|painting|woodworking|chess|cooking classes|"
    "wine tasting|museum visits|jazz concerts|board games|karaoke|paddleboarding|"
    "horse riding|scuba diving|ice skating|tennis|volunteering|foraging|sketching|"
    "open water swimming|street food tours",
    "|",
)
FOODS = _split(
    "ramen|dim sum|tacos al pastor|pho|sourdough pizza|shakshuka|pierogi|ceviche|"
    "bibimbap|falafel|paella|injera|khachapuri|laksa|poke|gnocchi|katsu curry|empanadas|"
    "baklava|churros|masala dosa|banh mi|goulash|arepas|okonomiyaki|tagine|gyoza|"
    "risotto|hummus|pad thai|pastel de nata|kimchi stew|borscht|feijoada|jollof rice|"
    "moussaka|ramen burgers|fish tacos|miso soup|dumplings",
    "|",
)
TOPICS = _split(
    "astronomy|medieval history|urban planning|mycology|behavioural economics|jazz|"
    "typography|marine biology|stoic philosophy|climate science|architecture|"
    "cryptography|linguistics|chess openings|game design|nutrition|volcanoes|"
    "ancient Rome|photography|beekeeping|robotics|poetry|sleep science|origami|"
    "cartography|neuroscience|permaculture|film noir|sailing navigation|calligraphy",
    "|",
)
ITEMS = _split(
    "backpack|camera lens|tent|rain jacket|pair of boots|kayak paddle|thermos|headlamp|"
    "sketchbook|bike helmet|wetsuit|yoga mat|telescope|chess set|cast iron pan|"
    "field guide|water filter|sleeping bag|drone|tripod|notebook|compass|daypack|"
    "climbing rope|snorkel|travel mug|pocket knife|hammock|pair of skis|e-reader",
    "|",
)
MONTHS = _split(
    "January February March April May June July August September October November December"
)
YEARS = tuple(str(y) for y in range(2010, 2025))
RELATIVES = ("friend", "sister", "brother", "colleague", "neighbour", "cousin", "manager", "coach")
BUSINESSES = _split(
    "bakery|bike shop|coffee roastery|bookshop|design studio|yoga studio|food truck|"
    "tattoo parlour|plant nursery|record store|climbing gym|ceramics studio|brewery|"
    "tailoring shop|language school",
    "|",
)
SKILLS = _split(
    "Japanese|the cello|woodturning|Portuguese|sign language|welding|the banjo|"
    "watercolour|Korean|sailing|glassblowing|Italian|the harp|bookbinding|Swahili",
    "|",
)
RELATION_TYPES = (
    ("mentors", "mentors"),
    ("collaborates_with", "collaborates with"),
    ("reviews_code_for", "reviews code for"),
    ("knows", "knows"),
)


def _vocabulary(seed: int) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    rng = random.Random(seed)
    pairs = [a + b for a in _SYLLABLES for b in _SYLLABLES]
    triples = [a + b + c for a in _SYLLABLES for b in _SYLLABLES[:20] for c in _SYLLABLES]
    first = tuple(w.capitalize() for w in rng.sample(pairs, 400))
    last = tuple(w.capitalize() for w in rng.sample(triples, 3000))
    projects = tuple(
        f"{a} {n}" for a, n in rng.sample([(a, n) for a in _ADJECTIVES for n in _NOUNS], 300)
    )
    return first, last, projects


_NAME_SPACE = 400 * 3000
_NAME_STRIDE = 7919  # prime, coprime with _NAME_SPACE: i -> i * stride is a bijection


@dataclass(frozen=True)
class Item:
    """One text to remember and the extraction reply the scripted model gives for it."""

    text: str
    reply: dict[str, Any]
    observations: int  # observations the reply adds


class Workload:
    """Common surface of the generators."""

    name = "workload"

    def __init__(self, seed: int = 7) -> None:
        self.seed = seed
        self.first, self.last, self.projects = _vocabulary(seed)
        self.position = 0  # items generated so far
        self.observations = 0  # observations those items add

    def _name(self, number: int) -> tuple[str, str]:
        k = (number * _NAME_STRIDE) % _NAME_SPACE
        first, last = self.first[k % 400], self.last[k // 400]
        return f"{first} {last}", first

    def _next(self) -> Item:
        raise NotImplementedError

    def take(self, count: int) -> list[Item]:
        """The next ``count`` items."""
        return [self._next() for _ in range(count)]

    def until(self, observations: int) -> Iterator[Item]:
        """Items until the scope holds ``observations`` observations."""
        while self.observations < observations:
            yield self._next()

    def queries(self, count: int) -> list[tuple[str, str]]:
        """``count`` seeded ``(kind, query)`` pairs about what was generated so far."""
        raise NotImplementedError

    def one_sentence(self, number: int) -> Item:
        """A fresh one-sentence text about existing entities (for the prompt-size target)."""
        raise NotImplementedError


class FactsWorkload(Workload):
    """The peer's workload: one person, two observations and one relation per text."""

    name = "facts"

    def __init__(self, seed: int = 7) -> None:
        super().__init__(seed)
        self._fields: list[tuple[int, int, int, int, int, int]] = []

    def _next(self) -> Item:
        i = self.position
        p = _Picker(self.seed, i)
        project, role, tool, domain, city = (
            p.below(len(self.projects)),
            p.below(len(ROLES)),
            p.below(len(TOOLS)),
            p.below(len(DOMAINS)),
            p.below(len(CITIES)),
        )
        rel = p.below(len(RELATION_TYPES))
        self._fields.append((project, role, tool, domain, city, rel))
        name, first = self._name(i)
        obs1 = f"joined the {self.projects[project]} project as a {ROLES[role]} in {CITIES[city]}"
        obs2 = f"prefers {TOOLS[tool]} for {DOMAINS[domain]} work"
        text = f"{name} {obs1}. {first} {obs2}."
        relations = []
        if i > 0:
            other, _ = self._name(p.below(i))
            rel_type, phrase = RELATION_TYPES[rel]
            text += f" {first} {phrase} {other}."
            relations.append({"from": name, "to": other, "type": rel_type})
        reply = {
            "entities": [{"name": name, "type": "person", "observations": [obs1, obs2]}],
            "relations": relations,
            "expirations": [],
        }
        self.position += 1
        self.observations += 2
        return Item(text, reply, 2)

    def queries(self, count: int) -> list[tuple[str, str]]:
        rng = random.Random(self.seed * 31 + self.position)
        out: list[tuple[str, str]] = []
        for n in range(count):
            j = rng.randrange(self.position)
            project, role, tool, domain, city, _ = self._fields[j]
            name, first = self._name(j)
            if n % 2 == 0:
                out.append(
                    (
                        "topical",
                        rng.choice(
                            (
                                f"who joined the {self.projects[project]} project",
                                f"which {ROLES[role]}s prefer {TOOLS[tool]}",
                                f"people in {CITIES[city]} working on {DOMAINS[domain]}",
                                f"{TOOLS[tool]} for {DOMAINS[domain]} work",
                            )
                        ),
                    )
                )
            else:
                out.append(
                    (
                        "name",
                        rng.choice(
                            (
                                f"what do we know about {name}",
                                f"{name}'s role and projects",
                                f"who does {name} work with",
                                f"what does {first} {name.split()[1]} prefer",
                            )
                        ),
                    )
                )
        return out

    def one_sentence(self, number: int) -> Item:
        rng = random.Random(self.seed * 97 + number)
        a = rng.randrange(self.position)
        b = (a + 1 + rng.randrange(max(self.position - 1, 1))) % self.position
        name, _ = self._name(a)
        other, _ = self._name(b)
        project = self.projects[rng.randrange(len(self.projects))]
        text = f"{name} now mentors {other} on the {project} project."
        reply = {
            "entities": [
                {
                    "name": name,
                    "type": "person",
                    "observations": [f"mentors {other} on the {project} project"],
                }
            ],
            "relations": [],
            "expirations": [],
        }
        return Item(text, reply, 1)


class ConversationWorkload(Workload):
    """Conversation-shaped: one ``User`` hub with thousands of facts, many small entities."""

    name = "conversation"

    def __init__(self, seed: int = 7) -> None:
        super().__init__(seed)
        self._user_facts: set[str] = set()
        self._user_topics: list[tuple[str, str]] = []  # (kind, phrase) for queries
        self._people: list[tuple[str, str, str]] = []  # (name, first, relative word)
        self._person_facts: dict[str, set[str]] = {}

    def _user_fact(self, p: _Picker) -> str:
        for _ in range(50):
            shape = p.below(5)
            city, month, year = p.pick(CITIES), p.pick(MONTHS), p.pick(YEARS)
            if shape == 0:
                activity = p.pick(ACTIVITIES)
                fact, topic = (
                    f"enjoyed {activity} in {city} in {month} {year}",
                    f"{activity} in {city}",
                )
            elif shape == 1:
                food = p.pick(FOODS)
                fact = f"tried {food} at a night market in {city} in {month} {year}"
                topic = f"{food} in {city}"
            elif shape == 2:
                subject = p.pick(TOPICS)
                fact = f"read a book about {subject} during a trip to {city} in {year}"
                topic = f"books about {subject}"
            elif shape == 3:
                subject = p.pick(TOPICS)
                fact, topic = (
                    f"signed up for a {subject} course that starts in {month} {year}",
                    f"{subject} course",
                )
            else:
                item, activity = p.pick(ITEMS), p.pick(ACTIVITIES)
                fact, topic = f"bought a {item} for {activity} in {city}", f"{item} for {activity}"
            if fact not in self._user_facts:
                self._user_facts.add(fact)
                self._user_topics.append(("topical", topic))
                return fact
        raise RuntimeError("conversation workload ran out of distinct user facts")

    def _person_fact(self, p: _Picker, name: str) -> str:
        seen = self._person_facts.setdefault(name, set())
        for _ in range(50):
            shape = p.below(5)
            if shape == 0:
                fact = f"loves {p.pick(FOODS)} and {p.pick(ACTIVITIES)}"
            elif shape == 1:
                fact = f"runs a small {p.pick(BUSINESSES)} in {p.pick(CITIES)}"
            elif shape == 2:
                fact = f"started learning {p.pick(SKILLS)} in {p.pick(YEARS)}"
            elif shape == 3:
                fact = f"recommended a book about {p.pick(TOPICS)}"
            else:
                fact = f"visited {p.pick(CITIES)} in {p.pick(MONTHS)} {p.pick(YEARS)}"
            if fact not in seen:
                seen.add(fact)
                return fact
        raise RuntimeError(f"conversation workload ran out of distinct facts for {name}")

    def _next(self) -> Item:
        i = self.position
        p = _Picker(self.seed + 1, i)
        if i == 0 or p.chance(30):
            a, b = self._user_fact(p), self._user_fact(p)
            text = f"I {a}. I also {b}."
            entities = [{"name": "User", "type": "person", "observations": [a, b]}]
            relations: list[dict[str, str]] = []
        else:
            if self._people and p.chance(35):
                name, first, relative = self._people[p.below(len(self._people))]
            else:
                name, first = self._name(600_000 + len(self._people))
                relative = p.pick(RELATIVES)
                self._people.append((name, first, relative))
            a, b = self._person_fact(p, name), self._person_fact(p, name)
            text = f"My {relative} {name} {a}, and {first} {b}."
            entities = [
                {"name": "User", "type": "person", "observations": []},
                {"name": name, "type": "person", "observations": [a, b]},
            ]
            relations = [{"from": "User", "to": name, "type": f"has_{relative}"}]
        self.position += 1
        self.observations += 2
        reply = {"entities": entities, "relations": relations, "expirations": []}
        return Item(text, reply, 2)

    def queries(self, count: int) -> list[tuple[str, str]]:
        rng = random.Random(self.seed * 37 + self.position)
        out: list[tuple[str, str]] = []
        hub = (
            "what does the user enjoy doing",
            "where has the user travelled",
            "what is the user planning",
            "which courses did the user sign up for",
        )
        for n in range(count):
            if n % 5 == 0:
                out.append(("user", rng.choice(hub)))
            elif n % 5 in (1, 3) and self._people:
                name, first, relative = rng.choice(self._people)
                out.append(
                    (
                        "name",
                        rng.choice(
                            (f"who is {name}", f"what do I know about my {relative} {first}")
                        ),
                    )
                )
            else:
                out.append(rng.choice(self._user_topics))
        return out

    def one_sentence(self, number: int) -> Item:
        rng = random.Random(self.seed * 101 + number)
        if self._people:
            name, _first, relative = rng.choice(self._people)
        else:
            name, relative = "Sam Doe", "friend"
        city, month, day = rng.choice(CITIES), rng.choice(MONTHS), 1 + rng.randrange(28)
        fact = f"had coffee with {name} in {city} on {month} {day}"
        text = f"I had coffee with my {relative} {name} in {city} today."
        reply = {
            "entities": [{"name": "User", "type": "person", "observations": [fact]}],
            "relations": [],
            "expirations": [],
        }
        return Item(text, reply, 1)


def make_workload(name: str, seed: int = 7) -> Workload:
    """The workload called ``name``: ``facts``, ``conversation``, or one of the shared-name
    workloads of :mod:`bench.names` (``numbered``, ``surname``, ``prefix``)."""
    if name == "facts":
        return FactsWorkload(seed)
    if name == "conversation":
        return ConversationWorkload(seed)
    from bench.names import NAME_WORKLOADS  # imports this module

    if name in NAME_WORKLOADS:
        return NAME_WORKLOADS[name](seed)
    known = ", ".join(["facts", "conversation", *NAME_WORKLOADS])
    raise ValueError(f"unknown workload {name!r}; use one of {known}")
