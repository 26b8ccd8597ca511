"""The reference memory server's view of a memory: nine operations, its shapes, bounded reads.

``@modelcontextprotocol/server-memory`` keeps a graph of entities (``name``,
``entityType``, ``observations``) and relations (``from``, ``to``,
``relationType``). :class:`ReferenceGraph` answers its nine operations on a
:class:`memgraph.Memory`, with the same argument and result shapes, so a client
swaps servers without touching its prompts. The differences are the point:

* Writes go through ``Memory`` (journaled, locked): two servers on one scope
  lose nothing. Entities, observations and relations are stored as given
  (:meth:`memgraph.Memory.add_facts`), without the LLM.
* Deletes expire: the facts leave every answer, ``history`` keeps them. An
  entity that never held a fact has no history to keep and is erased.
* ``read_graph`` answers a page at a time (``nextCursor``), ``search_nodes``
  and ``open_nodes`` at most one page; a page holds at most
  :data:`PAGE_ENTITIES` entities and about :data:`PAGE_CHARS` characters of
  JSON. Answers that fit are exactly the reference's ``{entities, relations}``.
* ``search_nodes`` ranks with memgraph's search (names, types, keywords,
  meaning) instead of matching substrings.
* Names resolve as everywhere in memgraph: ``alice`` is ``Alice``.

An entity is in this view until it is deleted, and again once something new is
learned about it. Deleting one expires its facts and records the deletion as
a fact that was true for no time (:data:`DELETED_MARKER`), so ``history``
shows when it happened; re-creating one with no observations records
:data:`CREATED_MARKER` the same way. Neither ever shows in a read.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

if sys.version_info >= (3, 12):
    from typing import NotRequired, TypedDict
else:  # the MCP SDK reads result types through pydantic, which needs these below 3.12
    from typing_extensions import NotRequired, TypedDict

from memgraph import Entity, Memory, NotFound, Relation

__all__ = [
    "CREATED_MARKER",
    "DELETED",
    "DELETED_MARKER",
    "MAX_BATCH",
    "MAX_CHARS",
    "PAGE_CHARS",
    "PAGE_ENTITIES",
    "AddedObservations",
    "CreatedEntities",
    "CreatedRelations",
    "GraphPage",
    "ObservationResults",
    "ReferenceEntity",
    "ReferenceGraph",
    "ReferenceRelation",
    "Status",
]

PAGE_ENTITIES = 100
"""Entities in one page of ``read_graph`` (a caller may ask for fewer, or up to 500)."""

MAX_PAGE_ENTITIES = 500

PAGE_CHARS = 40_000
"""About how many characters of JSON one read answers with (some 10,000 tokens)."""

SEARCH_HITS = 200
"""Ranked facts ``search_nodes`` reads to find its entities."""

MAX_BATCH = 1_000
"""Items one write call accepts (entities, relations, names or deletions)."""

MAX_CHARS = 1_000_000
"""Characters of text one write call accepts, all strings together."""

DELETED_MARKER = "[deleted from the knowledge graph]"
"""The expired fact that records an entity's deletion in its history."""

CREATED_MARKER = "[added to the knowledge graph]"
"""The expired fact that records the re-creation of a deleted entity with no observations."""

MARKERS = frozenset({DELETED_MARKER, CREATED_MARKER})

DELETED = {
    "entities": "Entities deleted successfully",
    "observations": "Observations deleted successfully",
    "relations": "Relations deleted successfully",
}
"""The reference server's messages for its three deletes."""


class ReferenceEntity(TypedDict):
    """An entity of the reference graph."""

    name: str
    entityType: str
    observations: list[str]


ReferenceRelation = TypedDict("ReferenceRelation", {"from": str, "to": str, "relationType": str})


class AddedObservations(TypedDict):
    """What ``add_observations`` added to one entity."""

    entityName: str
    addedObservations: list[str]


class GraphPage(TypedDict):
    """The reference's ``{entities, relations}``; ``nextCursor`` and ``note`` only when
    the answer was cut to a page."""

    entities: list[ReferenceEntity]
    relations: list[ReferenceRelation]
    nextCursor: NotRequired[str]
    note: NotRequired[str]


class CreatedEntities(TypedDict):
    """``create_entities``' answer."""

    entities: list[ReferenceEntity]


class CreatedRelations(TypedDict):
    """``create_relations``' answer."""

    relations: list[ReferenceRelation]


class ObservationResults(TypedDict):
    """``add_observations``' answer."""

    results: list[AddedObservations]


class Status(TypedDict):
    """The reference's answer to a delete."""

    success: bool
    message: str


@dataclass(frozen=True)
class _Node:
    """An entity as the reference sees it: its current observations and relations."""

    entity: Entity
    relations: tuple[Relation, ...]

    def item(self) -> ReferenceEntity:
        return {
            "name": self.entity.name,
            "entityType": self.entity.type,
            "observations": [
                o.content for o in self.entity.current_observations if o.content not in MARKERS
            ],
        }


def _key(text: str) -> str:
    """Case-, width- and whitespace-insensitive form of a name, type or content."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _number(item_id: str) -> int:
    _, _, number = item_id.rpartition("-")
    return int(number) if number.isdigit() else 0


def _relation(relation: Relation) -> ReferenceRelation:
    return {"from": relation.from_name, "to": relation.to_name, "relationType": relation.type}


def _size(value: Any) -> int:
    return len(orjson.dumps(value))


def _text(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{field} must be a string, got {type(value).__name__}")
    return value


def _items(value: object, field: str) -> list[Any]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(f"{field} must be an array, got {type(value).__name__}")
    items = list(value)
    if len(items) > MAX_BATCH:
        raise ValueError(f"{field} has {len(items):,} items, over the {MAX_BATCH:,} of one call")
    return items


def _fields(value: object, field: str, names: Sequence[str]) -> list[Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"{field} must be an object, got {type(value).__name__}")
    missing = [name for name in names if name not in value]
    if missing:
        raise ValueError(f"{field} lacks {', '.join(map(repr, missing))}")
    return [value[name] for name in names]


def _check_size(*parts: Iterable[str]) -> None:
    total = sum(len(text) for part in parts for text in part)
    if total > MAX_CHARS:
        raise ValueError(
            f"the call carries {total:,} characters of text, over the {MAX_CHARS:,} of one call; "
            "split it into several calls"
        )


class ReferenceGraph:
    """The nine operations of the reference memory server over one :class:`~memgraph.Memory`.

    Arguments arrive in the reference's JSON shapes (mappings and lists) and are
    checked before anything is written: a bad argument raises and changes
    nothing.

    Raises (every method):
        TypeError, ValueError: an argument has the wrong shape or size.
        NotFound: a write names an entity that is not in the graph.
        StoreError: the store failed; nothing was written.
    """

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    # -------------------------------------------------------------- the view
    def _node(self, entity: Entity) -> _Node | None:
        """``entity`` as a node of the reference graph, or ``None`` when it is not in it."""
        current = tuple(r for r in self.memory.history(entity.name).relations if r.current)
        if current or any(o.content not in MARKERS for o in entity.current_observations):
            return _Node(entity, current)
        markers = [o for o in entity.observations if o.content in MARKERS]
        if markers and max(markers, key=lambda o: _number(o.id)).content == DELETED_MARKER:
            return None  # deleted, and nothing learned about it since
        return _Node(entity, ())  # all its facts expired, but it was never deleted

    def _visible(self, entity: Entity) -> bool:
        """Whether ``entity`` is in the graph (without reading its relations when it can)."""
        if any(o.content not in MARKERS for o in entity.current_observations):
            return True
        return self._node(entity) is not None

    def _find(self, name: str) -> _Node | None:
        try:
            entity = self.memory.entity(name)
        except NotFound:
            return None
        return self._node(entity)

    def _nodes(self) -> list[_Node]:
        """Every node, oldest entity first."""
        found = (self._node(e) for e in sorted(self.memory.entities(), key=lambda e: _number(e.id)))
        return [node for node in found if node is not None]

    def _page(
        self, nodes: Sequence[_Node], *, limit: int, own_relations: bool
    ) -> tuple[GraphPage, int]:
        """As many ``nodes`` as fit a page, and how many did.

        ``own_relations`` lists each relation with the node it starts from (so
        pages never repeat one); otherwise every relation touching a node
        shows, once.
        """
        entities: list[ReferenceEntity] = []
        relations: list[ReferenceRelation] = []
        seen: set[str] = set()
        notes: list[str] = []
        used = 0
        for node in nodes[:limit]:
            item = node.item()
            links = [
                r
                for r in node.relations
                if r.id not in seen and (not own_relations or r.from_id == node.entity.id)
            ]
            cost = _size(item) + sum(_size(_relation(r)) for r in links)
            if entities and used + cost > PAGE_CHARS:
                break
            if cost > PAGE_CHARS:
                item, links, cut = _fit(item, links)
                notes.append(cut)
                cost = PAGE_CHARS
            entities.append(item)
            for link in links:
                seen.add(link.id)
                relations.append(_relation(link))
            used += cost
        page: GraphPage = {"entities": entities, "relations": relations}
        if notes:
            page["note"] = " ".join(notes)
        return page, len(entities)

    # ----------------------------------------------------------------- reads
    def everything(self) -> tuple[list[ReferenceEntity], list[ReferenceRelation]]:
        """The whole graph, unbounded (for exports, not for a model's context)."""
        nodes = self._nodes()
        relations = [
            _relation(r) for node in nodes for r in node.relations if r.from_id == node.entity.id
        ]
        return [node.item() for node in nodes], relations

    def read_graph(self, cursor: str | None = None, limit: int | None = None) -> GraphPage:
        """The graph, one page at a time, oldest entity first.

        Args:
            cursor: the ``nextCursor`` of the previous page; ``None`` for the first.
            limit: entities per page (1 to 500, default :data:`PAGE_ENTITIES`).

        Raises:
            ValueError: a cursor this method did not hand out, or a bad limit.
        """
        size = PAGE_ENTITIES if limit is None else limit
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= 500:
            raise ValueError(f"limit must be between 1 and {MAX_PAGE_ENTITIES}, got {limit!r}")
        after = 0
        if cursor:
            if not re.fullmatch(r"entity-\d+", cursor):
                raise ValueError(f"cursor {cursor!r} is not one read_graph returned")
            after = _number(cursor)
        entities = sorted(
            (e for e in self.memory.entities() if _number(e.id) > after),
            key=lambda e: _number(e.id),
        )
        visible = [e for e in entities if self._visible(e)]
        nodes = [n for n in map(self._node, visible[:size]) if n is not None]
        page, shown = self._page(nodes, limit=size, own_relations=True)
        if shown < len(visible):
            page["nextCursor"] = nodes[shown - 1].entity.id
            more = f"Showing {shown} of {len(visible)} remaining entities."
            page["note"] = " ".join(
                [more, page.get("note", ""), "Call read_graph with this cursor for the next page."]
            ).replace("  ", " ")
        return page

    def search_nodes(self, query: str) -> GraphPage:
        """The entities most relevant to ``query`` (memgraph's ranking), with the
        relations touching them; at most one page. An empty query reads the first
        page of the graph, as the reference's substring match returns everything."""
        text = _text(query, "query")
        if not text.strip():
            return self.read_graph()
        nodes: dict[str, _Node | None] = {}
        for hit in self.memory.search(text, k=SEARCH_HITS):
            if hit.entity is not None and hit.entity.id not in nodes:
                nodes[hit.entity.id] = self._node(hit.entity)
        found = [node for node in nodes.values() if node is not None]
        page, shown = self._page(found, limit=PAGE_ENTITIES, own_relations=False)
        if shown < len(found):
            page["note"] = " ".join(
                [
                    f"The {shown} best of {len(found)} matching entities.",
                    page.get("note", ""),
                    "Refine the query, or open_nodes for specific names.",
                ]
            ).replace("  ", " ")
        return page

    def open_nodes(self, names: Sequence[str]) -> GraphPage:
        """The named entities (unknown names are left out) with the relations touching them."""
        wanted = [_text(name, f"names[{i}]") for i, name in enumerate(_items(names, "names"))]
        nodes: dict[str, _Node] = {}
        for name in wanted:
            node = self._find(name)
            if node is not None:
                nodes.setdefault(node.entity.id, node)
        found = list(nodes.values())
        page, shown = self._page(found, limit=len(found), own_relations=False)
        if shown < len(found):
            left = ", ".join(node.entity.name for node in found[shown:])
            page["note"] = " ".join(
                [f"Not shown, to keep the answer small: {left}.", page.get("note", "")]
            ).strip()
        return page

    # ---------------------------------------------------------------- writes
    def create_entities(self, entities: Sequence[Mapping[str, Any]]) -> list[ReferenceEntity]:
        """Create the entities not already in the graph; returns those it created.

        An entity whose name is taken is ignored, as by the reference server
        (use ``add_observations`` to extend it).
        """
        given: list[ReferenceEntity] = []
        for index, raw in enumerate(_items(entities, "entities")):
            where = f"entities[{index}]"
            name, type_, observations = _fields(raw, where, ("name", "entityType", "observations"))
            contents = [
                _text(c, f"{where}.observations[{i}]")
                for i, c in enumerate(_items(observations, f"{where}.observations"))
            ]
            given.append(
                {
                    "name": _text(name, f"{where}.name"),
                    "entityType": _text(type_, f"{where}.entityType"),
                    "observations": contents,
                }
            )
        _check_size(
            (e["name"] for e in given),
            (e["entityType"] for e in given),
            (c for e in given for c in e["observations"]),
        )
        created: dict[str, ReferenceEntity] = {}
        for item in given:
            if _key(item["name"]) not in created and self._find(item["name"]) is None:
                created[_key(item["name"])] = item
        revived = {  # deleted entities coming back with nothing to say: mark their return
            key
            for key, item in created.items()
            if not any(c.strip() for c in item["observations"]) and self._exists(item["name"])
        }
        changes = self.memory.add_facts(
            (e["name"], e["entityType"], [CREATED_MARKER] if k in revived else e["observations"])
            for k, e in created.items()
        )
        markers = [o.id for o in changes.added_observations if o.content == CREATED_MARKER]
        if markers:
            self.memory.expire(*markers)
        return list(created.values())

    def _exists(self, name: str) -> bool:
        try:
            self.memory.entity(name)
        except NotFound:
            return False
        return True

    def create_relations(self, relations: Sequence[Mapping[str, Any]]) -> list[ReferenceRelation]:
        """Create the relations not already current; returns those it created.

        Raises:
            NotFound: an end is not an entity of the graph (nothing is created).
        """
        given = self._relations(relations)
        for relation in given:
            for end in (relation["from"], relation["to"]):
                if self._find(end) is None:
                    raise NotFound(
                        f"Entity with name {end} not found; create it with create_entities first"
                    )
        changes = self.memory.add_facts(
            relations=[(r["from"], r["to"], r["relationType"]) for r in given]
        )
        added = {
            (_key(r.from_name), _key(r.to_name), _key(r.type)) for r in changes.added_relations
        }
        created: dict[tuple[str, str, str], ReferenceRelation] = {}
        for relation in given:
            key = (_key(relation["from"]), _key(relation["to"]), _key(relation["relationType"]))
            if key in added:
                created.setdefault(key, relation)
        return list(created.values())

    def add_observations(
        self, observations: Sequence[Mapping[str, Any]]
    ) -> list[AddedObservations]:
        """Add observations to existing entities; returns what each entity gained.

        Raises:
            NotFound: an entity is not in the graph (nothing is added).
        """
        given: list[tuple[str, list[str], _Node]] = []
        for index, raw in enumerate(_items(observations, "observations")):
            where = f"observations[{index}]"
            name, contents = _fields(raw, where, ("entityName", "contents"))
            name = _text(name, f"{where}.entityName")
            texts = [
                _text(c, f"{where}.contents[{i}]")
                for i, c in enumerate(_items(contents, f"{where}.contents"))
            ]
            node = self._find(name)
            if node is None:
                raise NotFound(f"Entity with name {name} not found")
            given.append((name, texts, node))
        _check_size((name for name, _, _ in given), (c for _, texts, _ in given for c in texts))
        changes = self.memory.add_facts(
            (node.entity.name, node.entity.type, texts) for _, texts, node in given
        )
        added: dict[str, set[str]] = {}
        for obs in changes.added_observations:
            added.setdefault(obs.entity_id, set()).add(_key(obs.content))
        results: list[AddedObservations] = []
        for name, texts, node in given:
            fresh = added.get(node.entity.id, set())
            shown = []
            for text in texts:
                if _key(text) in fresh:
                    fresh.discard(_key(text))  # reported once, by the first item that added it
                    shown.append(text)
            results.append({"entityName": name, "addedObservations": shown})
        return results

    def delete_entities(self, names: Sequence[str]) -> Status:
        """Delete entities and their relations: their facts expire (history keeps them)."""
        wanted = [_text(n, f"entityNames[{i}]") for i, n in enumerate(_items(names, "entityNames"))]
        doomed: dict[str, _Node] = {}
        for name in wanted:
            node = self._find(name)
            if node is not None:
                doomed.setdefault(node.entity.id, node)
        if doomed:  # the marker first: if the expiry fails, the entity already reads as deleted
            self.memory.add_facts(
                (node.entity.name, node.entity.type, [DELETED_MARKER]) for node in doomed.values()
            )
            self.memory.expire(*doomed)
        return {"success": True, "message": DELETED["entities"]}

    def delete_observations(self, deletions: Sequence[Mapping[str, Any]]) -> Status:
        """Delete observations (by exact content) from entities: they expire."""
        expire: list[str] = []
        for index, raw in enumerate(_items(deletions, "deletions")):
            where = f"deletions[{index}]"
            name, contents = _fields(raw, where, ("entityName", "observations"))
            name = _text(name, f"{where}.entityName")
            doomed = {
                _key(_text(c, f"{where}.observations[{i}]"))
                for i, c in enumerate(_items(contents, f"{where}.observations"))
            }
            node = self._find(name)
            if node is not None:
                expire += [
                    o.id for o in node.entity.current_observations if _key(o.content) in doomed
                ]
        if expire:
            self.memory.expire(*dict.fromkeys(expire))
        return {"success": True, "message": DELETED["observations"]}

    def delete_relations(self, relations: Sequence[Mapping[str, Any]]) -> Status:
        """Delete relations: they expire."""
        expire: list[str] = []
        for relation in self._relations(relations):
            node = self._find(relation["from"])
            if node is None:
                continue
            wanted = (_key(relation["from"]), _key(relation["to"]), _key(relation["relationType"]))
            expire += [
                r.id
                for r in node.relations
                if (_key(r.from_name), _key(r.to_name), _key(r.type)) == wanted
            ]
        if expire:
            self.memory.expire(*dict.fromkeys(expire))
        return {"success": True, "message": DELETED["relations"]}

    @staticmethod
    def _relations(relations: Sequence[Mapping[str, Any]]) -> list[ReferenceRelation]:
        given: list[ReferenceRelation] = []
        for index, raw in enumerate(_items(relations, "relations")):
            where = f"relations[{index}]"
            start, end, type_ = _fields(raw, where, ("from", "to", "relationType"))
            given.append(
                {
                    "from": _text(start, f"{where}.from"),
                    "to": _text(end, f"{where}.to"),
                    "relationType": _text(type_, f"{where}.relationType"),
                }
            )
        _check_size(*((r["from"], r["to"], r["relationType"]) for r in given))
        return given


def _fit(
    item: ReferenceEntity, links: list[Relation]
) -> tuple[ReferenceEntity, list[Relation], str]:
    """One entity too large for a page, cut to fit: its newest observations and
    relations, each kind in half the page."""
    half = PAGE_CHARS // 2
    kept: list[str] = []
    used = _size({**item, "observations": []})
    for content in reversed(item["observations"]):
        used += len(orjson.dumps(content)) + 1
        if used > half:
            break
        kept.append(content)
    kept.reverse()
    shown: list[Relation] = []
    used = 0
    for link in reversed(links):
        used += _size(_relation(link)) + 1
        if used > half:
            break
        shown.append(link)
    shown.reverse()
    note = (
        f"{item['name']} is too large for one answer: showing its newest {len(kept)} of "
        f"{len(item['observations'])} observations and {len(shown)} of {len(links)} relations."
    )
    return {**item, "observations": kept}, shown, note
