"""Containers that decode a checkpoint on demand: the graph of a large scope opens
without parsing every entity, and indexes load as flat arrays.

:class:`LazyDocs` maps ids to documents decoded from the checkpoint's bytes on
first access (then kept, so every reader sees and mutates one object).
:class:`PostingIndex` maps index terms to sets of ids; its saved part is a
compressed-sparse-row array of ordinals, and a term's set is built the first
time the term is read or changed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from memgraph.id_column import IdColumn

__all__ = ["LazyDocs", "NameMap", "PostingIndex", "Postings"]

V = TypeVar("V")
Ordinals = npt.NDArray[np.int32]


class LazyDocs(MutableMapping[str, V]):
    """``id -> value`` where saved values are decoded on first access.

    ``ids`` are the saved keys in order; ``decode(ordinal)`` returns the value of
    ``ids[ordinal]``. New keys keep insertion order after the saved ones, and
    iterating keys never decodes anything. Saved keys held as an
    :class:`~memgraph.id_column.IdColumn` are found without a dict of strings.
    """

    def __init__(self, ids: Sequence[str], decode: Callable[[int], V]) -> None:
        self._ids = ids
        self._ordinal, self._find = _positions(ids)
        self._decode = decode
        self._values: dict[str, V] = {}
        self._gone: set[str] = set()
        self._new: dict[str, None] = {}
        self._decoding = threading.Lock()

    def ordinal(self, key: str) -> int | None:
        """The saved position of ``key`` (None for keys added since loading)."""
        return self._find(key)

    def saved_ordinal(self, key: str) -> int | None:
        """The saved position of ``key`` if it is saved and not deleted since."""
        ordinal = self._find(key)
        return None if ordinal is None or key in self._gone else ordinal

    def loaded(self, key: str) -> V | None:
        """The value of ``key`` if it is already decoded (or new), without decoding."""
        return self._values.get(key)

    def put_decoded(self, key: str, value: V) -> None:
        """Record a saved key's value decoded by someone else (no decode later)."""
        self._values[key] = value

    def put_decoded_many(self, items: Mapping[str, V]) -> None:
        """:meth:`put_decoded` for many keys."""
        self._values.update(items)

    def decoded_items(self) -> Iterator[tuple[str, V]]:
        """The values decoded or added so far."""
        return iter(list(self._values.items()))

    def added(self) -> list[str]:
        """Keys added since loading, in order."""
        return list(self._new)

    def removed(self) -> set[str]:
        """Saved keys deleted since loading (every other saved key is present)."""
        return self._gone

    def loaded_count(self) -> int:
        """How many values are decoded or added (held in memory)."""
        return len(self._values)

    def get(self, key: str, default: Any = None) -> Any:
        value = self._values.get(key)
        if value is not None:
            return value
        ordinal = self._find(key)
        if ordinal is None or key in self._gone:
            return default
        with self._decoding:  # two threads must not make two objects of one record
            value = self._values.get(key)
            if value is None:
                value = self._values[key] = self._decode(ordinal)
        return value

    def __getitem__(self, key: str) -> V:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return value  # type: ignore[no-any-return]

    def __contains__(self, key: object) -> bool:
        if key in self._values:
            return True
        return type(key) is str and self._find(key) is not None and key not in self._gone

    def __setitem__(self, key: str, value: V) -> None:
        self._values[key] = value
        if self._find(key) is not None:
            self._gone.discard(key)
        else:
            self._new[key] = None

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        self._values.pop(key, None)
        if self._find(key) is not None:
            self._gone.add(key)
        else:
            del self._new[key]

    def rebase(self, ids: Sequence[str]) -> None:
        """Treat every key as saved, at its position in ``ids`` (the saved keys in
        order, then the keys added since): a checkpoint was written in that order.
        Values already decoded or added stay as they are."""
        if self._gone or len(ids) != len(self._ids) + len(self._new):
            raise ValueError("the new saved keys do not extend the old ones")
        if isinstance(ids, IdColumn) or self._ordinal is None:
            self._ordinal, self._find = _positions(ids)
        else:
            start = len(self._ids)
            self._ordinal.update(zip(self._new, range(start, start + len(self._new)), strict=True))
        self._ids = ids
        self._new = {}

    def __iter__(self) -> Iterator[str]:
        gone = self._gone
        for key in self._ids:
            if key not in gone:
                yield key
        yield from list(self._new)

    def __len__(self) -> int:
        return len(self._ids) - len(self._gone) + len(self._new)

    def __bool__(self) -> bool:
        return len(self) > 0


_MISSING: Any = object()


class NameMap(MutableMapping[str, str]):
    """``name key -> entity id`` over a checkpoint's names (the first entity holding a
    name wins, as when adding them one by one), plus the changes since. The saved
    part maps names to positions: no entity id becomes a string until asked for."""

    def __init__(self, name_keys: Sequence[str], ids: Sequence[str]) -> None:
        count = len(name_keys)
        self._saved = dict(zip(reversed(name_keys), range(count - 1, -1, -1), strict=True))
        self._ids = ids
        self._changed: dict[str, str | None] = {}  # None: removed

    def get(self, key: str, default: Any = None) -> Any:
        if key in self._changed:
            changed = self._changed[key]
            return default if changed is None else changed
        ordinal = self._saved.get(key)
        return default if ordinal is None else self._ids[ordinal]

    def __getitem__(self, key: str) -> str:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return str(found)

    def __setitem__(self, key: str, value: str) -> None:
        self._changed[key] = value

    def __delitem__(self, key: str) -> None:
        if self.get(key) is None:
            raise KeyError(key)
        self._changed[key] = None

    def __iter__(self) -> Iterator[str]:
        changed = self._changed
        for key in self._saved:
            if changed.get(key, key) is not None:
                yield key
        for key, value in list(changed.items()):
            if value is not None and key not in self._saved:
                yield key

    def __len__(self) -> int:
        return sum(1 for _key in self)


def _ids_at(ids: Sequence[str], ordinals: Ordinals) -> list[str]:
    """The ids at these saved positions."""
    if isinstance(ids, IdColumn):
        return ids.take(ordinals).tolist()
    return [ids[o] for o in ordinals.tolist()]


def _positions(ids: Sequence[str]) -> tuple[dict[str, int] | None, Callable[[str], int | None]]:
    """How to find a saved key's position: a dict of the keys (the last of a repeated
    key wins), or for an :class:`IdColumn` none and the column's own lookup."""
    if isinstance(ids, IdColumn):
        return None, ids.position
    ordinal = dict(zip(ids, range(len(ids)), strict=True))
    return ordinal, ordinal.get


class Postings:
    """A saved term -> ordinals table in compressed-sparse-row form."""

    def __init__(self, terms: Sequence[str], offsets: npt.NDArray[np.int64], ordinals: Ordinals):
        self.terms = terms
        self.row: dict[str, int] = dict(zip(terms, range(len(terms)), strict=True))
        self.offsets = offsets
        self.ordinals = ordinals

    def of(self, term: str) -> Ordinals | None:
        row = self.row.get(term)
        if row is None:
            return None
        return self.ordinals[self.offsets[row] : self.offsets[row + 1]]


class PostingIndex:
    """``term -> set of ids``: saved postings plus the changes since, built per term.

    ``ids`` turns a saved ordinal into its id. Reading a term builds its set
    once; a change to a term nobody has read is kept aside until it is.
    """

    def __init__(self, saved: Postings | None = None, ids: Sequence[str] | None = None) -> None:
        self._saved = saved
        self._ids = ids
        self._sets: dict[str, set[str]] = {}
        self._added: dict[str, set[str]] = {}  # for saved terms not built yet
        self._removed: dict[str, set[str]] = {}
        self._building = threading.Lock()

    def _set(self, term: str) -> set[str] | None:
        found = self._sets.get(term)
        if found is None and self._saved is not None:
            ordinals = self._saved.of(term)
            if ordinals is not None:
                with self._building:  # built once, with the changes kept aside
                    found = self._sets.get(term)
                    if found is None:
                        ids = self._ids
                        assert ids is not None
                        found = set(_ids_at(ids, ordinals))
                        found |= self._added.pop(term, set())
                        found -= self._removed.pop(term, set())
                        self._sets[term] = found
        return found

    def _pending(self, term: str) -> bool:
        """Whether ``term`` is saved but its set is not built yet."""
        return term not in self._sets and self._saved is not None and term in self._saved.row

    def get(self, term: str, default: Any = None) -> Any:
        found = self._set(term)
        return default if found is None else found

    def __getitem__(self, term: str) -> set[str]:
        found = self._set(term)
        if found is None:
            raise KeyError(term)
        return found

    def __contains__(self, term: object) -> bool:
        if not isinstance(term, str):
            return False
        if self._pending(term):  # decided without building a frequent term's set
            assert self._saved is not None
            saved = self._saved.of(term)
            removed = self._removed.get(term, set())
            if saved is not None and len(saved) > len(removed):
                return True
            if self._added.get(term, set()) - removed:
                return True
        return bool(self._set(term))

    def count(self, term: str) -> int:
        """How many ids hold ``term``, without building its set when it is saved.

        Exact when ids added since loading were not already saved under the term
        (true of new facts and entities, the only ids ever added).
        """
        found = self._sets.get(term)
        if found is not None or self._saved is None:
            return len(found) if found is not None else 0
        ordinals = self._saved.of(term)
        saved = 0 if ordinals is None else len(ordinals)
        return saved + len(self._added.get(term, ())) - len(self._removed.get(term, ()))

    def add(self, term: str, item: str) -> None:
        if self._pending(term):
            self._added.setdefault(term, set()).add(item)
            removed = self._removed.get(term)
            if removed:
                removed.discard(item)
        else:
            self._sets.setdefault(term, set()).add(item)

    def add_many(self, term: str, items: Iterable[str]) -> None:
        """:meth:`add` of many ids to one term."""
        if self._pending(term):
            self._added.setdefault(term, set()).update(items)
            removed = self._removed.get(term)
            if removed:
                removed.difference_update(self._added[term])
        else:
            self._sets.setdefault(term, set()).update(items)

    def discard(self, term: str, item: str) -> None:
        if self._pending(term):
            self._removed.setdefault(term, set()).add(item)
            self._added.get(term, set()).discard(item)
        else:
            found = self._sets.get(term)
            if found is not None:
                found.discard(item)

    def rebased(self, saved: Postings, ids: Sequence[str]) -> PostingIndex:
        """This index over newer saved postings that include every change so far."""
        index = PostingIndex(saved, ids)
        index._sets = self._sets
        return index

    @property
    def saved(self) -> Postings | None:
        return self._saved

    @classmethod
    def from_sets(cls, table: dict[str, set[str]]) -> PostingIndex:
        index = cls()
        index._sets = table
        return index

    def items(self) -> Iterator[tuple[str, set[str]]]:
        """Every term with its ids (builds every saved term's set)."""
        if self._saved is not None:
            for term in self._saved.terms:
                self._set(term)
        for term, found in list(self._sets.items()):
            if found:
                yield term, found
