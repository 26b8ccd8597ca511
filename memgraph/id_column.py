"""Record ids held as numbers: a large scope opens without making a string per id.

Every id memgraph makes is a prefix and a counter (``ent-12``, ``obs-340``,
``episode-7``). A saved table of 100k such ids costs about 15 ms to turn into
strings and as much again to put in a dict, on every open. :class:`IdColumn`
keeps them as one integer array per table instead: an id becomes a string only
when it is read, and finding an id's position parses its number and looks it up
in an array built on first use (a column read often enough keeps a dict of its
ids instead, as a list would have had from the start).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import overload

import numpy as np
import numpy.typing as npt

__all__ = [
    "IdColumn",
    "StringSequence",
    "as_column",
    "id_column",
    "joined_columns",
    "joined_ids",
    "parse_numbers",
    "split_id",
]

Numbers = npt.NDArray[np.int64]
MAX_DIGITS = 18  # an int64 holds every number of up to 18 digits
MAX_PREFIXES = 16  # more prefixes than this and the ids stay strings
DIGITS = "0123456789"
DICT_AFTER = 64  # a dict of every id once 1/64 of them were parsed one by one
DENSE_SLACK = 16  # a direct table (4 bytes a number) while the highest is below 16x the count


def split_id(key: str, prefixes: Sequence[str]) -> tuple[int, int] | None:
    """``(prefix index, number)`` when ``key`` is one of ``prefixes`` followed by a
    number of 1 to 18 digits without leading zeros, else None."""
    for code, prefix in enumerate(prefixes):
        if key.startswith(prefix):
            digits = key[len(prefix) :]
            if (
                digits.isdigit()
                and digits.isascii()
                and len(digits) <= MAX_DIGITS
                and (digits[0] != "0" or len(digits) == 1)
            ):
                return code, int(digits)
    return None


class _Lookup:
    """number -> position of the last id holding it, for the ids of one prefix."""

    __slots__ = ("_order", "_read", "_sorted", "_table")

    def __init__(self, numbers: Numbers, positions: npt.NDArray[np.int64]) -> None:
        self._table: npt.NDArray[np.int32] | None = None
        self._read: memoryview | None = None  # the table, read an entry at a time
        self._sorted: Numbers | None = None
        self._order: npt.NDArray[np.int64] | None = None
        if not len(numbers):
            self._table = np.zeros(0, np.int32)
            self._read = self._table.data
            return
        if bool(np.all(numbers[1:] > numbers[:-1])):  # ids made in order: nothing to sort
            unique, last = numbers, positions
        else:  # where a number repeats (a replaced vector), its last position wins
            order = np.argsort(numbers, kind="stable")  # equal numbers keep their order
            ordered = numbers[order]
            ends = np.append(np.flatnonzero(ordered[1:] != ordered[:-1]), len(ordered) - 1)
            unique, last = ordered[ends], positions[order[ends]]
        top = int(unique[-1])
        if top < DENSE_SLACK * len(unique) + 1024 and len(numbers) < 2**31:
            table = np.full(top + 1, -1, np.int32)
            table[unique] = last
            self._table, self._read = table, table.data
        else:
            self._sorted, self._order = unique, last

    def find(self, number: int) -> int:
        read = self._read
        if read is not None:
            return int(read[number]) if number < len(read) else -1
        assert self._sorted is not None and self._order is not None
        at = int(np.searchsorted(self._sorted, number))
        if at < len(self._sorted) and int(self._sorted[at]) == number:
            return int(self._order[at])
        return -1

    def find_many(self, numbers: Numbers) -> npt.NDArray[np.int64]:
        table = self._table
        if table is not None:
            found = np.full(len(numbers), -1, np.int64)
            inside = (numbers >= 0) & (numbers < len(table))
            found[inside] = table[numbers[inside]]
            return found
        assert self._sorted is not None and self._order is not None
        at = np.searchsorted(self._sorted, numbers)
        at[at >= len(self._sorted)] = 0
        hit = self._sorted[at] == numbers if len(self._sorted) else np.zeros(len(numbers), bool)
        return np.where(hit, self._order[at], -1)


class StringSequence(Sequence[str]):
    """A read-only sequence of strings made when read: a subclass gives ``__len__``,
    ``_item`` (the string at a position, counted from 0) and ``tolist`` (every
    string at once, the fast way); a slice is a list."""

    __slots__ = ()

    def _item(self, index: int) -> str:
        raise NotImplementedError

    def tolist(self) -> list[str]:
        """Every string, in order."""
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return self.tolist()[index]
        size = len(self)
        if not -size <= index < size:
            raise IndexError(f"position {index} of {size}")
        return self._item(index + size if index < 0 else index)

    def __iter__(self) -> Iterator[str]:
        return iter(self.tolist())

    def __reversed__(self) -> Iterator[str]:
        return reversed(self.tolist())


class IdColumn(Sequence[str]):
    """A read-only sequence of ids, each one of a few prefixes and a number.

    ``numbers[i]`` is the number of the i-th id and ``codes[i]`` the index of its
    prefix in ``prefixes`` (None: every id has the first prefix). Reading an item
    makes its string; :meth:`position` finds an id without a dict of strings.
    """

    __slots__ = ("_complete", "_found", "_lookups", "_misses", "codes", "numbers", "prefixes")

    def __init__(
        self,
        prefixes: Sequence[str],
        numbers: npt.ArrayLike,
        codes: npt.ArrayLike | None = None,
    ) -> None:
        self.prefixes = tuple(prefixes)
        self.numbers: Numbers = np.asarray(numbers, dtype=np.int64).reshape(-1)
        self.codes: npt.NDArray[np.uint8] | None = (
            None if codes is None else np.asarray(codes, dtype=np.uint8).reshape(-1)
        )
        if self.codes is not None and len(self.codes) != len(self.numbers):
            raise ValueError("an IdColumn needs one prefix code per number")
        if not self.prefixes:
            raise ValueError("an IdColumn needs at least one prefix")
        self._lookups: list[_Lookup] | None = None
        self._found: dict[str, int] = {}  # ids found so far: a read asks about the same ones
        self._misses = 0  # lookups that had to parse an id
        self._complete = False  # whether ``_found`` holds every id

    # ------------------------------------------------------------ sequence
    def __len__(self) -> int:
        return len(self.numbers)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> IdColumn: ...

    def __getitem__(self, index: int | slice) -> str | IdColumn:
        if isinstance(index, slice):
            codes = None if self.codes is None else self.codes[index]
            return IdColumn(self.prefixes, self.numbers[index], codes)
        number = int(self.numbers[index])
        code = 0 if self.codes is None else int(self.codes[index])
        return f"{self.prefixes[code]}{number}"

    def __iter__(self) -> Iterator[str]:
        return iter(self.tolist())

    def __reversed__(self) -> Iterator[str]:
        return reversed(self.tolist())

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.position(key) is not None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, IdColumn):
            if self.prefixes != other.prefixes:
                return self.tolist() == other.tolist()
            return bool(
                np.array_equal(self.numbers, other.numbers)
                and np.array_equal(self._codes(), other._codes())
            )
        if isinstance(other, (list, tuple)):
            return self.tolist() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable-looking, like a list

    def _codes(self) -> npt.NDArray[np.uint8]:
        """Each id's prefix code (all 0 when there is one prefix)."""
        return np.zeros(len(self), np.uint8) if self.codes is None else self.codes

    def __repr__(self) -> str:
        shown = ", ".join(repr(i) for i in self[:3])
        more = ", ..." if len(self) > 3 else ""
        return f"IdColumn([{shown}{more}], {len(self)} ids)"

    def index(self, value: object, start: int = 0, stop: int | None = None) -> int:
        found = self.position(value) if isinstance(value, str) else None
        if found is None or found < start or (stop is not None and found >= stop):
            raise ValueError(f"{value!r} is not in the column")
        return found

    def tolist(self) -> list[str]:
        """Every id as a string, in order."""
        if self.codes is None:
            prefix = self.prefixes[0]
            return [f"{prefix}{n}" for n in self.numbers.tolist()]
        prefixes = self.prefixes
        return [
            f"{prefixes[c]}{n}"
            for c, n in zip(self.codes.tolist(), self.numbers.tolist(), strict=True)
        ]

    # -------------------------------------------------------------- lookup
    def _tables(self) -> list[_Lookup]:
        lookups = self._lookups
        if lookups is None:
            positions = np.arange(len(self.numbers), dtype=np.int64)
            if self.codes is None:
                lookups = [_Lookup(self.numbers, positions)]
                lookups += [_Lookup(self.numbers[:0], positions[:0])] * (len(self.prefixes) - 1)
            else:
                lookups = []
                for code in range(len(self.prefixes)):
                    mine = self.codes == code
                    lookups.append(_Lookup(self.numbers[mine], positions[mine]))
            self._lookups = lookups
        return lookups

    def position(self, key: str) -> int | None:
        """The position of ``key`` (its last, if it repeats), or None."""
        found = self._found.get(key)
        if found is not None or self._complete:
            return found
        self._misses += 1
        if self._misses * DICT_AFTER >= len(self.numbers):
            # A column read this much belongs to a long-lived reader: it keeps a dict
            # of every id from now on (~0.3 µs an id once, against ~1 µs a parse). A
            # short-lived one (a command, the first query after open) never builds it.
            self._found = dict(zip(self.tolist(), range(len(self.numbers)), strict=True))
            self._complete = True
            return self._found.get(key)
        parts = split_id(key, self.prefixes)
        if parts is None:
            return None
        found = self._tables()[parts[0]].find(parts[1])
        if found < 0:
            return None
        self._found[key] = found
        return found

    def _inherit(self, first: IdColumn, second: IdColumn) -> None:
        """Keep what ``first`` found, this column being ``first`` then ``second`` (a
        checkpoint's ids after the last one's): a long-lived reader keeps its dict."""
        if not first._found:
            return
        found = dict(first._found)
        added = zip(second.tolist(), range(len(first), len(self)), strict=True)
        if first._complete:
            found.update(added)  # a repeated id: its later position wins
        else:
            for key, _position in added:
                found.pop(key, None)
        self._found, self._complete, self._misses = found, first._complete, first._misses

    def positions_of(self, other: IdColumn) -> npt.NDArray[np.int64]:
        """The position in this column of each id of ``other`` (-1: absent), at once."""
        found = np.full(len(other), -1, np.int64)
        tables = self._tables()
        for code, prefix in enumerate(other.prefixes):
            if prefix not in self.prefixes:
                continue
            mine = tables[self.prefixes.index(prefix)]
            if other.codes is None:
                return mine.find_many(other.numbers) if code == 0 else found
            rows = other.codes == code
            found[rows] = mine.find_many(other.numbers[rows])
        return found

    def with_prefix(self, prefix: str) -> npt.NDArray[np.bool_]:
        """Which ids have ``prefix``."""
        if prefix not in self.prefixes:
            return np.zeros(len(self), bool)
        mask: npt.NDArray[np.bool_] = self._codes() == self.prefixes.index(prefix)
        return mask

    def take(self, rows: npt.ArrayLike) -> IdColumn:
        """The ids at positions ``rows``, as a column."""
        picked = np.asarray(rows, dtype=np.int64)
        codes = None if self.codes is None else self.codes[picked]
        return IdColumn(self.prefixes, self.numbers[picked], codes)

    def extended(self, more: Iterable[str]) -> Sequence[str]:
        """This column followed by ``more``: a column when :func:`as_column` can read
        ``more`` as one, else a list of strings."""
        extra = list(more)
        if not extra:
            return self
        column = as_column(extra)
        if column is None:
            return [*self.tolist(), *extra]
        return joined_columns(self, column)


def parse_numbers(ids: Sequence[str], prefix: str) -> Numbers | None:
    """The numbers of ``ids`` when each is ``prefix`` followed by a number of 1 to 18
    digits without leading zeros, else None: a few array operations per digit
    place instead of a parse per id."""
    if not ids:
        return np.zeros(0, np.int64)
    joined = _Joined.of(ids)
    if joined is None or not prefix.isascii():
        return None
    prefix_bytes = prefix.encode("ascii")
    for offset, byte in enumerate(prefix_bytes):
        if (joined.byte_at(joined.starts + offset) != byte).any():
            return None
    return joined.numbers(joined.starts, joined.lengths, len(prefix_bytes))


class _Joined:
    """Ids joined by NULs as ASCII bytes, with where each starts and how long it is."""

    def __init__(self, raw: npt.NDArray[np.uint8], starts: Numbers, lengths: Numbers) -> None:
        self.raw, self.starts, self.lengths = raw, starts, lengths

    @classmethod
    def of(cls, ids: Sequence[str]) -> _Joined | None:
        """None when an id is not ASCII or holds a NUL."""
        text = "\x00".join(ids)
        if not text.isascii():
            return None
        raw = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        ends = np.flatnonzero(raw == 0)
        if len(ends) != len(ids) - 1:
            return None
        starts = np.concatenate([np.zeros(1, np.int64), ends + 1])
        return cls(raw, starts, np.append(ends, len(raw)) - starts)

    def byte_at(self, at: Numbers) -> npt.NDArray[np.uint8]:
        """The byte at each position (0 past the end)."""
        inside = at < len(self.raw)
        found = np.zeros(len(at), np.uint8)
        found[inside] = self.raw[at[inside]]
        return found

    def numbers(self, starts: Numbers, lengths: Numbers, width: int) -> Numbers | None:
        """The numbers after a ``width``-byte prefix of the ids at ``starts``, or None
        when one is not 1 to 18 digits without a leading zero."""
        digits = lengths - width
        if not len(digits):
            return np.zeros(0, np.int64)
        shortest, longest = int(digits.min()), int(digits.max())
        if shortest < 1 or longest > MAX_DIGITS:
            return None
        first = starts + width
        raw = self.raw
        if ((raw[first] == 48) & (digits > 1)).any():  # a leading zero
            return None
        numbers = np.zeros(len(first), dtype=np.int64)
        for place in range(longest):  # one digit of every id long enough per step
            live = slice(None) if place < shortest else digits > place
            digit = raw[first[live] + place].astype(np.int64) - 48
            if ((digit < 0) | (digit > 9)).any():
                return None
            numbers[live] = numbers[live] * 10 + digit
        return numbers


def id_column(ids: Sequence[str]) -> Sequence[str]:
    """``ids`` as an :class:`IdColumn` when :func:`as_column` can, else unchanged."""
    column = as_column(ids)
    return ids if column is None else column


def as_column(ids: Sequence[str]) -> IdColumn | None:
    """``ids`` as an :class:`IdColumn` when each is one of at most ``MAX_PREFIXES``
    prefixes followed by a number (no leading zeros), else None: a few array
    operations over the joined ids per prefix instead of a parse per id."""
    if isinstance(ids, IdColumn):
        return ids
    if not ids:
        return None
    head = ids[0]
    prefix = head.rstrip(DIGITS)
    if not prefix or prefix == head:
        return None
    if ids[-1].startswith(prefix):  # likely one prefix throughout
        numbers = parse_numbers(ids, prefix)
        if numbers is not None:
            return IdColumn([prefix], numbers)
    return _mixed_column(ids)


def _mixed_column(ids: Sequence[str]) -> IdColumn | None:
    """:func:`as_column` of ids with several prefixes: found one at a time, each from
    the first id not yet matched, and the numbers of its ids parsed together."""
    joined = _Joined.of(ids)
    if joined is None:
        return None
    raw, starts, lengths = joined.raw, joined.starts, joined.lengths
    # Non-digit bytes so far: an id is a prefix and a number when none follow the prefix.
    count = np.int32 if len(raw) < 2**31 else np.int64
    other = np.concatenate([np.zeros(1, count), np.cumsum((raw < 48) | (raw > 57), dtype=count)])
    numbers = np.zeros(len(ids), np.int64)
    codes = np.zeros(len(ids), np.uint8)
    prefixes: list[str] = []
    left = np.arange(len(ids))
    while len(left):
        head = ids[int(left[0])]
        prefix = head.rstrip(DIGITS)
        if len(prefixes) == MAX_PREFIXES or not prefix or prefix == head:
            return None
        width = len(prefix)
        at, size = starts[left], lengths[left]
        mine = size > width
        for offset, byte in enumerate(prefix.encode("ascii")):
            mine &= joined.byte_at(at + offset) == byte
        mine &= other[at + size] - other[np.minimum(at + width, len(raw))] == 0
        rows = left[mine]
        parsed = joined.numbers(starts[rows], lengths[rows], width)
        if parsed is None:
            return None
        numbers[rows], codes[rows] = parsed, len(prefixes)
        prefixes.append(prefix)
        left = left[~mine]
    return IdColumn(prefixes, numbers, codes)


def joined_columns(first: IdColumn, second: IdColumn) -> IdColumn:
    """``first`` followed by ``second``, as one column."""
    prefixes = [*first.prefixes, *(p for p in second.prefixes if p not in first.prefixes)]

    def codes(column: IdColumn) -> npt.NDArray[np.uint8]:
        own = column._codes()
        return np.array([prefixes.index(p) for p in column.prefixes], np.uint8)[own]

    numbers = np.concatenate([first.numbers, second.numbers])
    if len(prefixes) == 1:
        joined = IdColumn(prefixes, numbers)
    else:
        joined = IdColumn(prefixes, numbers, np.concatenate([codes(first), codes(second)]))
    joined._inherit(first, second)
    return joined


def joined_ids(saved: Sequence[str], more: Sequence[str]) -> Sequence[str]:
    """``saved`` followed by ``more``, kept a column when ``saved`` is one."""
    if isinstance(saved, IdColumn):
        return saved.extended(more)
    return [*saved, *more]
