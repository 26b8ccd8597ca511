"""The episode tier's lexical index: BM25F over remembered texts.

Every remembered text (an episode) is a document made of two fields: its own
words (with the speaker's name, as a transcript line reads) and, at half
weight, the words of the turn just before it in the same conversation, so an
answer such as "A golden retriever, his name's Max" is found by a question
about a dog that only the previous turn named. Terms are Snowball stems of the
content words (:func:`episode_terms`).

Scores are BM25 (k1 = 1.2, b = 0.3) divided by the query's total IDF weight,
so a score is the share of the query an episode answers, in [0, 1], directly
comparable with the fact tier's keyword share. Query terms that no episode
holds weigh as much as the rarest term that does: an unknown word in a query
still counts as unanswered.

The index has a saved part, loaded from bytes (``episodes.idx``) as flat
arrays read in place (ids as numbers, terms as their sorted text, sources and
speakers as codes into a table of their values), and a part added since in
Python containers. :meth:`EpisodeIndex.encode` writes both as one new saved part.
"""

from __future__ import annotations

import math
import re
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
import orjson

from memgraph.chatter import CAPTION, REACTION_CHARS, REACTION_WORDS, only_asks
from memgraph.dates import (
    DAY_NAMES,
    asks_about_past,
    asks_when_alone,
    mentions,
    tells_past,
)
from memgraph.id_column import IdColumn, StringSequence, id_column
from memgraph.retrieval.corrections import corrected_terms
from memgraph.retrieval.nicknames import FirstNames, called_names
from memgraph.text import WORD_FORMS, index_terms, name_key, words

__all__ = [
    "CONTEXT_GAP_MS",
    "EpisodeIndex",
    "OlderIndexFormat",
    "conversation_key",
    "episode_terms",
]

K1 = 1.2
B = 0.3
"""Length normalisation, lower than the usual 0.75: chat turns are short and
their lengths vary little in meaning, so "KWAME!!! it's beautiful" should not
outweigh a long turn that holds the same word and the answer."""
CONTEXT_WEIGHTS = (0.65, 0.3)
"""Weights of the turn before an episode and of the one before that. They sum to
less than 1, the weight of a text's own word: a word only the context holds is
never read as the text's own (``holding(context=False)``)."""
FOLLOW_UP_WEIGHTS = (0.45, 0.5)
"""The same, when the turn before is a bare follow-up question ("Moved?? To when?"
after "Elif's wedding moved"): the answer speaks of the topic of the turn before
that as much as of the question."""
NEAR_CONTEXT = min(CONTEXT_WEIGHTS[0], FOLLOW_UP_WEIGHTS[0])
"""The least weight of a word the turn just before holds (or, after a bare follow-up
question, the turn before that)."""
FOLLOW_UP_TERMS = 3
"""At most this many words of its own (besides the speakers' names) make a question a
bare follow-up."""
CONTEXT_GAP_MS = 6 * 3600 * 1000
"""Turns further apart than this are not each other's context."""
CALLED_REPLIES = 2
"""How many replies by one speaker to a turn calling someone by a word make the word
a name of theirs."""
CALLS_KEPT = 4
"""How many of the words a speaker's run of turns calls someone by wait for a reply."""
RECENT_TURNS = 8
"""How many turns back a correction's value ("not the 20th") is looked for."""
MAGIC = b"MGEPIDXF"
OLDER_MAGICS = (
    b"MGEPIDX2",
    b"MGEPIDX3",
    b"MGEPIDX4",
    b"MGEPIDX5",
    b"MGEPIDX6",
    b"MGEPIDX7",
    b"MGEPIDX8",
    b"MGEPIDX9",
    b"MGEPIDXA",
    b"MGEPIDXB",
    b"MGEPIDXC",
    b"MGEPIDXD",
    b"MGEPIDXE",
)
"""Formats rebuilt from the episodes on open (format 4 lacks the flags of questions
and of turns that say nothing, format 6 the flag of turns that only react, format A
reads a turn that is only a speaker's name as saying something when it opens a session,
format B lacks the names speakers are called by, format C reads a correction's context
from the turn just before it only, format D stems "busy" as "business", format E
reads "Go Jesse!" as calling the speaker who answers it)."""
TIMED = 1
UPDATE = 2
FOLLOWS = 4
"""Flag: the episode indexed just before this one is its context (the turn it answers)."""
AFTER_PAST = 8
"""Flag: the episode answers another speaker's question about the past ("did you have a
good birthday?"): a date it leaves without a tense is a past one."""
SAYS_NOTHING = 16
"""Flag: the text has no word of its own besides the names of the exchange's
speakers ("you should", "WE DID IT!!!", "TARIQ"): it takes no words from the turn
before, and its vector, near any question that names its speaker, is no evidence."""
ASKS_ONLY = 32
"""Flag: every sentence of the text is a question ("Is work far from there?", "When
do you start?"): it asks about something, it does not say it."""
REACTS_ONLY = 64
"""Flag: the text only reacts ("Agreed!", "Thanks!", "haha bye"): its vector, near a
question by its speaker's name alone, is no evidence (its words, with those of the
turn it answers, still are: "yes!" after "did you get the job?")."""
NAMES_SOMETHING = 128
"""Flag: the text calls someone or something by a name (a capitalised word within
a sentence that is not a speaker's: "Côr Seren started up again", "my sister
Layla"): what a question asking a name is answered by."""
FEW_WORDS = 256
"""Flag: the text has at most ``FEW_WORDS_MAX`` words of its own besides the names of
those who speak ("the date", "NOOO", "i approve"): its vector is mostly its
speaker's name, near any question that names them, so it is no evidence."""
FEW_WORDS_MAX = 2
COMMON_SHARE = 0.05
"""A word more than this share of the texts hold is too common to single one out."""
COMMON_FLOOR = 50
"""A word so few texts hold is never too common, however few texts there are."""
NEGLIGIBLE_IDF = 0.01
"""A word of so little weight (one over 99% of the texts hold) cannot reorder them:
it is not scored when the query has another word that can."""
SAID_WITHIN_BONUS = 0.3
"""What an episode said on the day (or in the month) a question names gains."""
ADDRESSEE_REACH = 6
"""How many turns away the speaker a turn addresses is looked for."""

Floats = npt.NDArray[np.float32]


TURN_CHARS = 600
"""How much of the last turn's text is kept as the next turn's context."""


class OlderIndexFormat(ValueError):
    """A saved episode index in an older format: rebuild it from the episodes."""


class _Turn(NamedTuple):
    conversation: str
    at_ms: int
    terms: tuple[str, ...]
    speaker: str | None
    text: str
    other: str | None  # the speaker before this turn's speaker, in the conversation
    before: tuple[str, ...] = ()  # the previous turn's own terms
    # a bare "when??" right after another speaker's news of the past ("we got engaged!!")
    asks_when_news: bool = False
    # the words it, or its speaker's turns just before it, call someone by ("hey shiv!")
    calls: tuple[str, ...] = ()
    # the own terms of the turns before ``before``, newest first: what a correction
    # ("wait, the 27th not the 20th") may put right
    earlier: tuple[tuple[str, ...], ...] = ()


def episode_terms(text: str) -> list[str]:
    """The terms the episode tier indexes and looks up: the engine's index terms
    (content words reduced to their Snowball stems, so "adoption" finds "adopt")."""
    return index_terms(text)


def _number(item_id: str) -> int:
    _, _, number = item_id.rpartition("-")
    return int(number) if number.isdigit() else -1


def conversation_key(doc: dict[str, Any]) -> str:
    """Which conversation an episode belongs to: its source plus its thread, if any."""
    metadata = doc.get("metadata") or {}
    thread = metadata.get("thread") if isinstance(metadata, dict) else None
    return f"{doc.get('source') or ''}\x00{thread or ''}"


def _says_something(own: Sequence[str], name_terms: set[str]) -> bool:
    """Whether a turn has a word of its own besides the names of the conversation's
    speakers (``name_terms``: "you should", "?", "WE DID IT!!!" and "TARIQ" have none)."""
    return not set(own) <= name_terms


def _few_words(own: Sequence[str], name_terms: set[str], text: str) -> bool:
    """Whether a turn has at most :data:`FEW_WORDS_MAX` words of its own besides the
    speakers' names (``name_terms``), and shares no photo."""
    return len(set(own) - name_terms) <= FEW_WORDS_MAX and not CAPTION.search(text)


def _only_reacts(text: str, name_words: set[str]) -> bool:
    """Whether ``text`` is a short reaction ("Agreed!", "Thanks, Gina!", "bye!!"): all
    its words, besides the speakers' names (``name_words``), are words of reacting."""
    if len(text) > REACTION_CHARS or CAPTION.search(text):
        return False
    return set(words(text)) - REACTION_WORDS <= name_words


_INNER_CAPITAL = re.compile(r"(?<![.!?:\]\n])(?<![.!?:]\s)(?<![.!?:]\s\s)(?<=\S\s)\b[A-Z][\w'’-]+")
_NOT_A_NAME = DAY_NAMES | frozenset(
    ["i", "i'm", "i've", "i'll", "i'd", "im", "ok", "okay", "omg", "lol", "tv"]
)


def _names_something(text: str, name_words: set[str]) -> bool:
    """Whether ``text`` holds a capitalised word inside a sentence that is not one of
    the speakers' names (``name_words``) nor a day's name or "I"."""
    for match in _INNER_CAPITAL.finditer(CAPTION.sub(" ", text)):
        word = match.group().lower()
        if word not in _NOT_A_NAME and word.split("'")[0] not in name_words:
            return True
    return False


def _bare_follow_up(turn: _Turn, name_terms: set[str]) -> bool:
    """Whether ``turn`` only asks, in a few words of its own besides the speakers'
    names (``name_terms``) ("Moved?? To when?", "which one?"), about what the turn
    before it said."""
    if not turn.before or not only_asks(turn.text):
        return False
    return len(set(turn.terms) - name_terms) <= FOLLOW_UP_TERMS


def _corrected_turn(last: _Turn, text: str) -> tuple[str, ...] | None:
    """The own terms of the turn before ``text`` that said the value ``text`` puts
    right ("wait no, it's the 27th not the 20th" → the turn that said the 20th),
    when it is not the turn just before (already its context) and holds more words
    than the value."""
    value = set(corrected_terms(text))
    if not value or value <= set(last.terms):
        return None
    for terms in (last.before, *last.earlier):
        if value <= set(terms):
            return terms if set(terms) - value else None
    return None


def _weighted_terms(
    own: Sequence[str],
    contexts: Sequence[Sequence[str]],
    context_weights: tuple[float, float] = CONTEXT_WEIGHTS,
) -> tuple[dict[str, float], float]:
    weights: dict[str, float] = {}
    for term in own:
        weights[term] = weights.get(term, 0.0) + 1.0
    length = float(len(own))
    for weight, context in zip(context_weights, contexts, strict=False):
        for term in context:
            weights[term] = weights.get(term, 0.0) + weight
        length += weight * len(context)
    return weights, length


class _Grow:
    """A numpy array that grows by doubling (appends are amortized O(1))."""

    def __init__(self, dtype: Any, values: npt.ArrayLike = ()) -> None:
        initial = np.asarray(values, dtype=dtype)
        self._data = np.array(initial, dtype=dtype, copy=True)
        self._size = len(initial)

    def append(self, value: float) -> None:
        if self._size == len(self._data):
            self._reserve(1)
        self._data[self._size] = value
        self._size += 1

    def extend(self, values: npt.ArrayLike) -> None:
        """Append every one of ``values`` (a sequence or a scalar repeated ``count``)."""
        count = len(values)  # type: ignore[arg-type]
        if self._size + count > len(self._data):
            self._reserve(count)
        self._data[self._size : self._size + count] = values
        self._size += count

    def _reserve(self, count: int) -> None:
        size = max(16, 2 * len(self._data), self._size + count)
        bigger = np.empty(size, dtype=self._data.dtype)
        bigger[: self._size] = self._data[: self._size]
        self._data = bigger

    def view(self) -> npt.NDArray[Any]:
        return self._data[: self._size]

    def __len__(self) -> int:
        return self._size


class _Ids(StringSequence):
    """The episodes' ids in index order: the saved ones (an :class:`IdColumn` when each
    is a prefix and a number, found without a dict of strings), then those added."""

    def __init__(self, saved: Sequence[str] = ()) -> None:
        self.saved = saved
        self._added: list[str] = []
        self._where: dict[str, int] = {}  # the added ids and the saved ones found so far
        self._listed = not saved  # whether the saved ids are in ``_where``

    def __len__(self) -> int:
        return len(self.saved) + len(self._added)

    def _item(self, index: int) -> str:
        saved = len(self.saved)
        return self.saved[index] if index < saved else self._added[index - saved]

    def tolist(self) -> list[str]:
        return [*self.saved, *self._added]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.position(key) is not None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def append(self, episode_id: str) -> None:
        self._where[episode_id] = len(self)
        self._added.append(episode_id)

    def position(self, key: str) -> int | None:
        """Where ``key`` is in the index, or None."""
        found = self._where.get(key)
        if found is not None or self._listed:
            return found
        saved = self.saved
        if not isinstance(saved, IdColumn):
            self._where = {**dict(zip(saved, range(len(saved)), strict=True)), **self._where}
            self._listed = True
            return self._where.get(key)
        found = saved.position(key)
        if found is not None:
            self._where[key] = found  # a read asks about the same ids again: one dict hit
        return found

    def joined(self) -> Sequence[str]:
        """Every id, as a column when each is a prefix and a number, else a list."""
        if isinstance(self.saved, IdColumn):
            return self.saved.extended(self._added)
        return id_column([*self.saved, *self._added])


class _Ordinals(Mapping[str, int]):
    """An episode id -> its place in the index (:attr:`EpisodeIndex.ordinal`)."""

    __slots__ = ("_ids",)

    def __init__(self, ids: _Ids) -> None:
        self._ids = ids

    def __getitem__(self, key: str) -> int:
        found = self._ids.position(key) if isinstance(key, str) else None
        if found is None:
            raise KeyError(key)
        return found

    def get(self, key: str, default: Any = None) -> Any:
        found = self._ids.position(key) if isinstance(key, str) else None
        return default if found is None else found

    def __contains__(self, key: object) -> bool:
        return key in self._ids

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)


class _Coded(NamedTuple):
    """A column of a few distinct values (sources, speakers): the values and, per
    episode, the index of its value."""

    values: list[str | None]
    codes: npt.NDArray[np.integer[Any]]


class _Values:
    """Per episode, one of a few values (its source, its speaker), kept as a code."""

    def __init__(self, coded: _Coded | None = None) -> None:
        self.values: list[str | None] = list(coded.values) if coded is not None else []
        self._code = {value: code for code, value in enumerate(self.values)}
        self.codes = _Grow(np.int32, coded.codes if coded is not None else ())

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, ordinal: int) -> str | None:
        return self.values[int(self.codes.view()[ordinal])]

    def append(self, value: str | None) -> None:
        code = self._code.get(value)
        if code is None:
            code = self._code[value] = len(self.values)
            self.values.append(value)
        self.codes.append(code)

    def equal(self, value: str | None) -> npt.NDArray[np.bool_]:
        """Per episode: whether its value is ``value``."""
        code = self._code.get(value)
        if code is None:
            return np.zeros(len(self), dtype=bool)
        equal: npt.NDArray[np.bool_] = self.codes.view() == code
        return equal

    def kept(self, kept: npt.NDArray[np.int64]) -> _Coded:
        """The values of the ``kept`` episodes, without those no kept episode has."""
        codes = self.codes.view()[kept]
        used = np.bincount(codes, minlength=len(self.values)) > 0
        renumber = np.cumsum(used, dtype=np.int64) - 1
        values = [value for value, use in zip(self.values, used.tolist(), strict=True) if use]
        return _Coded(values, renumber[codes].astype("<i4"))


HEAD_BYTES = 8
"""A term's head: its first 8 bytes (UTF-8, zero-padded) read as a big-endian number.
Heads sort as the terms do."""


class _Terms(Mapping[str, int]):
    """The saved part's terms, sorted, each mapped to its row (its place) without a
    dict: a binary search of their heads, then of the few terms sharing a head."""

    __slots__ = ("heads", "starts", "text")

    def __init__(
        self, text: bytes, starts: npt.NDArray[np.int64], heads: npt.NDArray[np.uint64]
    ) -> None:
        self.text = text  # the terms in order, each followed by "\n"
        self.starts = starts  # where each term starts, then len(text)
        self.heads = heads

    @classmethod
    def of(cls, terms: Sequence[str]) -> _Terms:
        """The sorted ``terms`` (none holds a newline)."""
        text = ("\n".join(terms) + "\n" if terms else "").encode("utf-8")
        raw = np.frombuffer(text, dtype=np.uint8)
        starts = np.zeros(len(terms) + 1, dtype=np.int64)
        starts[1:] = np.flatnonzero(raw == 10) + 1
        lengths = np.diff(starts) - 1
        padded = np.zeros((len(terms), HEAD_BYTES), dtype=np.uint8)
        for place in range(HEAD_BYTES):
            long_enough = np.flatnonzero(lengths > place)
            padded[long_enough, place] = raw[starts[long_enough] + place]
        heads = padded.view(">u8").reshape(-1).astype(np.uint64)
        return cls(text, starts, heads)

    def _term(self, row: int) -> bytes:
        return self.text[int(self.starts[row]) : int(self.starts[row + 1]) - 1]

    def get(self, term: str, default: Any = None) -> Any:
        raw = term.encode("utf-8", "surrogatepass")
        head = np.uint64(int.from_bytes(raw[:HEAD_BYTES].ljust(HEAD_BYTES, b"\0"), "big"))
        heads = self.heads
        low = int(heads.searchsorted(head))
        if low == len(heads) or heads[low] != head:
            return default
        high = int(heads.searchsorted(head, "right"))
        while low < high:
            middle = (low + high) // 2
            found = self._term(middle)
            if found == raw:
                return middle
            if found < raw:
                low = middle + 1
            else:
                high = middle
        return default

    def __getitem__(self, term: str) -> int:
        row = self.get(term)
        if row is None:
            raise KeyError(term)
        return int(row)

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and self.get(term) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.text.decode("utf-8").split("\n")[:-1])

    def __len__(self) -> int:
        return len(self.heads)


def _merged(
    parts_rows: list[npt.NDArray[np.int64]],
    parts_ords: list[npt.NDArray[np.int64]],
    parts_tfs: list[npt.NDArray[np.uint8]],
    keep: npt.NDArray[np.bool_],
    renumber: npt.NDArray[np.int64],
    count: int,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.uint8]]:
    """The postings of the saved part and the added one (if any), without removed
    episodes, ordered by (row, ordinal): the saved part is already in that order
    (its rows are re-labelled in the same order), so only the added part is sorted
    and then merged into it (linear in the saved postings, not a sort of them)."""
    sorted_parts = []
    for index, (rows, ords, tfs) in enumerate(zip(parts_rows, parts_ords, parts_tfs, strict=True)):
        alive = keep[ords]
        rows, ords, tfs = rows[alive], renumber[ords[alive]], tfs[alive]
        key = rows * (count + 1) + ords
        if index:  # the added part: in order of episodes, not of rows
            order = np.argsort(key, kind="stable")
            rows, ords, tfs, key = rows[order], ords[order], tfs[order], key[order]
        sorted_parts.append((rows, ords, tfs, key))
    rows, ords, tfs, key = sorted_parts[0]
    for more_rows, more_ords, more_tfs, more_key in sorted_parts[1:]:
        # Each (row, ordinal) pair is in one part only; ties would keep saved first.
        at = np.searchsorted(key, more_key, side="right")
        rows = np.insert(rows, at, more_rows)
        ords = np.insert(ords, at, more_ords)
        tfs = np.insert(tfs, at, more_tfs)
    return rows, ords, tfs


def _appended(
    terms: int,
    relabel: npt.NDArray[np.int64],
    counts: npt.NDArray[np.int64],
    saved_ords: npt.NDArray[np.int32],
    saved_tfs: npt.NDArray[np.uint8],
    added_rows: npt.NDArray[np.int64] | None,
    added_ords: npt.NDArray[np.int32] | None,
    added_tfs: npt.NDArray[np.uint8] | None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32], npt.NDArray[np.uint8]]:
    """:func:`_merged` when nothing was removed and every added episode comes after the
    saved ones (the common case): each row's added postings follow its saved ones, so
    their places are computed from the row counts instead of searched for. Returns the
    CSR ``indptr`` over ``terms`` rows and the postings' ordinals and weights."""
    saved_counts = np.zeros(terms, dtype=np.int64)
    saved_counts[relabel] = counts
    if added_rows is None or added_ords is None or added_tfs is None:
        indptr = np.zeros(terms + 1, dtype=np.int64)
        np.cumsum(saved_counts, out=indptr[1:])
        return indptr, saved_ords.astype(np.int32), saved_tfs.astype(np.uint8)
    order = np.argsort(added_rows, kind="stable")  # by row; episodes stay in order
    rows = added_rows[order]
    added_counts = np.bincount(rows, minlength=terms)
    indptr = np.zeros(terms + 1, dtype=np.int64)
    np.cumsum(saved_counts + added_counts, out=indptr[1:])
    first_added = np.zeros(terms + 1, dtype=np.int64)
    np.cumsum(added_counts, out=first_added[1:])
    rank = np.arange(len(rows), dtype=np.int64) - first_added[rows]
    is_added = np.zeros(int(indptr[-1]), dtype=bool)
    is_added[indptr[rows] + saved_counts[rows] + rank] = True
    ords = np.empty(len(is_added), dtype=np.int32)
    tfs = np.empty(len(is_added), dtype=np.uint8)
    ords[is_added] = added_ords[order]
    tfs[is_added] = added_tfs[order]
    is_saved = ~is_added
    ords[is_saved] = saved_ords
    tfs[is_saved] = saved_tfs
    return indptr, ords, tfs


def _idf(count: int, held: int) -> float:
    """BM25's inverse document frequency of a term ``held`` by that many of ``count`` texts."""
    return math.log(1.0 + (count - held + 0.5) / (held + 0.5))


@dataclass
class _Flat:
    """The tables of an index's saved part: what ``episodes.idx`` holds."""

    last: _Turn | None
    mark: int
    calls: dict[str, dict[str, int]]
    ids: Sequence[str]
    sources: _Coded
    speakers: _Coded
    terms: _Terms
    indptr: npt.NDArray[np.int64]
    ords: npt.NDArray[np.int32]
    tfs: npt.NDArray[np.uint8]
    lengths: npt.NDArray[np.float32]
    at: npt.NDArray[np.int64]
    loc: npt.NDArray[np.int64]
    facts_known: npt.NDArray[np.uint8]
    flags: npt.NDArray[np.uint16]
    facts_indptr: npt.NDArray[np.int64]
    facts_flat: npt.NDArray[np.int64]

    def encode(self) -> bytes:
        """``episodes.idx``: the magic, a CRC-32 of the body, 4 zero bytes, then the body:
        18 sized blobs, each padded to 8 bytes so that its array is read in place.

        The header names the ids' prefixes when the ids are numbers (else they are a
        JSON list) and the distinct sources and speakers (each episode's a code)."""
        ids = self.ids
        column = ids if isinstance(ids, IdColumn) else None
        header = {
            "count": len(ids),
            "terms": len(self.terms),
            "postings": len(self.ords),
            "last": list(self.last) if self.last is not None else None,
            "mark": self.mark,
            "calls": self.calls,
            "prefixes": list(column.prefixes) if column is not None else None,
            "sources": self.sources.values,
            "speakers": self.speakers.values,
        }
        blobs = [
            orjson.dumps(header),
            column.numbers.astype("<i8").tobytes() if column is not None else orjson.dumps(ids),
            column.codes.tobytes() if column is not None and column.codes is not None else b"",
            self.sources.codes.astype(_code_type(self.sources.values)).tobytes(),
            self.speakers.codes.astype(_code_type(self.speakers.values)).tobytes(),
            self.terms.text,
            self.terms.starts.astype("<i4").tobytes(),
            self.terms.heads.astype("<u8").tobytes(),
            self.indptr.astype("<i8").tobytes(),
            self.ords.astype("<i4").tobytes(),
            self.tfs.tobytes(),
            self.lengths.astype("<f4").tobytes(),
            self.at.astype("<i8").tobytes(),
            self.loc.astype("<i8").tobytes(),
            self.facts_known.astype(np.uint8).tobytes(),
            self.flags.tobytes(),
            self.facts_indptr.astype("<i8").tobytes(),
            self.facts_flat.astype("<i8").tobytes(),
        ]
        body = b"".join(struct.pack("<Q", len(b)) + b + bytes(-len(b) % 8) for b in blobs)
        return MAGIC + struct.pack("<I", zlib.crc32(body)) + bytes(4) + body


class EpisodeIndex:
    """BM25F postings of episodes, with their ids, times, sources and speakers."""

    def __init__(self) -> None:
        self.ids = _Ids()
        self._at = _Grow(np.int64)
        self.sources = _Values()
        self.speakers = _Values()
        self.voices: set[str] = set()  # every speaker's name, as a name key (text.name_key)
        # a word turns call someone by -> the speakers who replied next -> how often
        self._calls: dict[str, dict[str, int]] = {}
        self._first_names: FirstNames | None = None
        self._voice_names: tuple[int, set[str], set[str]] = (0, set(), set())
        self._spoken = _Grow(np.bool_)  # per episode: whether it has a speaker
        self._lengths = _Grow(np.float32)
        self._length_total = 0.0
        # saved part: term -> row; rows' postings in flat arrays
        self._rows = _Terms.of([])
        self._indptr: npt.NDArray[np.int64] = np.zeros(1, dtype=np.int64)
        self._ords: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._tfs: npt.NDArray[np.uint8] = np.zeros(0, dtype=np.uint8)  # 2 × weighted tf
        self._saved = 0
        # added part: flat (term code, ordinal, weighted tf) triples
        self._vocab: dict[str, int] = {}
        self._add_codes = _Grow(np.int32)
        self._add_ords = _Grow(np.int32)
        self._add_tfs = _Grow(np.float32)
        # the last episode's own terms, conversation and time: the next one's context
        # The last episode: the next one's context (its conversation, time, terms,
        # speaker, text and the speaker before it).
        self._last: _Turn | None = None
        self._removed: set[int] = set()
        self._loc = _Grow(np.int64)  # where the store keeps each episode; -1 while pending
        # The facts each episode states, as id numbers (ids share one counter): saved
        # part in CSR arrays, added part in a dict; episodes from before facts were
        # recorded have none (-1 in the saved counts).
        self._facts_indptr: npt.NDArray[np.int64] = np.zeros(1, dtype=np.int64)
        self._facts_flat: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._facts_known = _Grow(np.bool_)
        # bit 1: the text says when something happened; bit 2: it says something changed
        self._flags = _Grow(np.uint16)
        self._range: tuple[int, int, int] | None = None
        self._facts_added: dict[int, tuple[int, ...]] = {}
        self.mark = 0  # the store's episodes up to this mark are indexed

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, episode_id: object) -> bool:
        return episode_id in self.ids

    @property
    def ordinal(self) -> Mapping[str, int]:
        """Each episode id's place in the index."""
        return _Ordinals(self.ids)

    # ------------------------------------------------------------------ adding
    def add(
        self,
        episode_id: str,
        text: str,
        *,
        at_ms: int,
        source: str | None = None,
        speaker: str | None = None,
        conversation: str = "",
        terms: list[str] | None = None,
        location: int = -1,
        facts: Sequence[str] | None = None,
    ) -> None:
        """Index one episode; an id already indexed only gets its ``location``."""
        if episode_id in self.ids:
            if location >= 0:
                self.locate(episode_id, location)
            return
        if terms is None:  # the text alone reads the same terms as " text" (and is memoized)
            terms = episode_terms(f"{speaker} {text}" if speaker else text)
        own = terms
        contexts: list[Sequence[str]] = []
        last = self.previous(conversation, at_ms)
        parties = (speaker, last.speaker, last.other) if last is not None else (speaker,)
        names = [name for name in parties if name]
        name_terms = {t for name in names for t in episode_terms(name)}
        name_words = {w for name in names for w in words(name)}
        voice_terms, voice_words = self._voices_said()
        # "KWAME", first thing in a new session: calling someone by name says nothing
        spoken_names = name_terms | voice_terms
        says = _says_something(own, spoken_names)
        context_weights = CONTEXT_WEIGHTS
        if last is not None and says:  # "you should" borrows no words from the turn before
            contexts = [last.terms, last.before]
            if _bare_follow_up(last, name_terms):
                context_weights = FOLLOW_UP_WEIGHTS
            put_right = _corrected_turn(last, text)
            if put_right is not None:  # "wait no, the 27th not the 20th": what said the 20th
                contexts = [last.terms, put_right]
                context_weights = FOLLOW_UP_WEIGHTS
        weights, length = _weighted_terms(own, contexts, context_weights)
        ordinal = len(self.ids)
        self.ids.append(episode_id)
        self._at.append(at_ms)
        self._loc.append(location)
        self._facts_known.append(facts is not None)
        timed, updates = mentions(text)
        # "did you have a good birthday?", or a bare "when??" right after news of the
        # past ("we got engaged!!" / "omg when??" / "saturday!")
        answers_past = (
            last is not None
            and last.speaker != speaker
            and (last.asks_when_news or asks_about_past(last.text))
        )
        self._flags.append(
            TIMED * timed
            | UPDATE * updates
            | FOLLOWS * (last is not None)
            | AFTER_PAST * answers_past
            | SAYS_NOTHING * (not says)
            | ASKS_ONLY * only_asks(text)
            | REACTS_ONLY * (says and _only_reacts(text, name_words | voice_words))
            | NAMES_SOMETHING * _names_something(text, name_words)
            | FEW_WORDS * _few_words(own, spoken_names, text)
        )
        if facts:
            self._facts_added[ordinal] = tuple(_number(f) for f in facts)
        self.sources.append(source)
        self.speakers.append(speaker)
        if speaker is not None:
            self.voices.add(name_key(speaker))
        self._spoken.append(speaker is not None)
        self._lengths.append(length)
        self._length_total += length
        vocab = self._vocab
        codes = []
        for term in weights:
            code = vocab.get(term)
            if code is None:
                code = vocab[term] = len(vocab)
            codes.append(code)
        self._add_codes.extend(codes)
        self._add_ords.extend([ordinal] * len(codes))
        self._add_tfs.extend(list(weights.values()))
        other = None
        if last is not None:
            other = last.speaker if last.speaker != speaker else last.other
        before = last.terms if last is not None else ()
        asks_when_news = (
            last is not None
            and last.speaker != speaker
            and asks_when_alone(text)  # cheap, and rare: the news is read only then
            and tells_past(last.text)
        )
        calls = tuple(called_names(text)) if speaker is not None else ()
        if calls and last is not None and last.speaker != speaker:
            # "Moss! I love it" after "I'm going to call him Moss": the dog's name said
            # again, not a call to whoever answers
            echoed = set(words(last.text))
            calls = tuple(word for word in calls if word not in echoed)
        if last is not None and last.speaker != speaker:
            if speaker is not None:  # "Shiv. The slides recording." answered by Siobhán
                for word in last.calls:
                    replied = self._calls.setdefault(word, {})
                    replied[speaker] = replied.get(speaker, 0) + 1
        elif last is not None:  # the same speaker goes on: whoever replies next is called
            calls = tuple(dict.fromkeys(calls + last.calls))[:CALLS_KEPT]
        self._last = _Turn(
            conversation,
            at_ms,
            tuple(own),
            speaker,
            text[:TURN_CHARS],
            other,
            before,
            asks_when_news,
            calls,
            ((last.before, *last.earlier)[:RECENT_TURNS] if last is not None else ()),
        )

    def _voices_said(self) -> tuple[set[str], set[str]]:
        """The index terms and the words of every speaker's name so far."""
        size, voice_terms, voice_words = self._voice_names
        if size != len(self.voices):
            voice_terms = {t for voice in self.voices for t in episode_terms(voice)}
            voice_words = {w for voice in self.voices for w in words(voice)}
            self._voice_names = (len(self.voices), voice_terms, voice_words)
        return voice_terms, voice_words

    def previous(self, conversation: str, at_ms: int) -> _Turn | None:
        """The last indexed turn, when it belongs to ``conversation`` and is recent
        enough before ``at_ms`` to be its context."""
        last = self._last
        if last is None or last.conversation != conversation:
            return None
        return last if 0 <= at_ms - last.at_ms <= CONTEXT_GAP_MS else None

    @property
    def added_postings(self) -> int:
        """Postings added since the saved part (they are searched by scanning)."""
        return len(self._add_codes)

    def sealed(self) -> EpisodeIndex:
        """The same index with everything in the flat saved form."""
        return EpisodeIndex._from_flat(self._flat())

    def locate(self, episode_id: str, location: int) -> None:
        """Record where the store keeps an episode (once it is checkpointed)."""
        ordinal = self.ids.position(episode_id)
        if ordinal is not None:
            self._loc.view()[ordinal] = location

    def location(self, episode_id: str) -> int | None:
        """Where the store keeps the episode (None: unknown id or not yet checkpointed)."""
        ordinal = self.ids.position(episode_id)
        if ordinal is None:
            return None
        found = int(self._loc.view()[ordinal])
        return found if found >= 0 else None

    def at_of(self, episode_id: str) -> int | None:
        """When the episode was said, in epoch milliseconds."""
        ordinal = self.ids.position(episode_id)
        return None if ordinal is None else int(self._at.view()[ordinal])

    def set_facts(self, episode_id: str, facts: Sequence[str]) -> None:
        """Record the facts an episode stated (extracted after it was stored)."""
        ordinal = self.ids.position(episode_id)
        if ordinal is not None:
            self._facts_known.view()[ordinal] = True
            self._facts_added[ordinal] = tuple(_number(f) for f in facts)

    def facts_of(self, episode_id: str) -> tuple[int, ...] | None:
        """Id numbers of the facts the episode stated (None: not recorded for it)."""
        ordinal = self.ids.position(episode_id)
        if ordinal is None or not self._facts_known.view()[ordinal]:
            return None
        return self._fact_list(ordinal)

    def _flagged(self, episode_id: str, flag: int) -> bool:
        ordinal = self.ids.position(episode_id)
        return ordinal is not None and bool(self._flags.view()[ordinal] & flag)

    def timed(self, episode_id: str) -> bool:
        """Whether the episode's text says when something happened."""
        return self._flagged(episode_id, TIMED)

    def updates(self, episode_id: str) -> bool:
        """Whether the episode's text says that something changed."""
        return self._flagged(episode_id, UPDATE)

    def says_nothing(self, episode_id: str) -> bool:
        """Whether the text has no word of its own besides its speakers' names."""
        return self._flagged(episode_id, SAYS_NOTHING)

    def only_reacts(self, episode_id: str) -> bool:
        """Whether the text only reacts ("Agreed!", "Thanks, Gina!")."""
        return self._flagged(episode_id, REACTS_ONLY)

    def few_words(self, episode_id: str) -> bool:
        """Whether the text has few words of its own (:data:`FEW_WORDS`)."""
        return self._flagged(episode_id, FEW_WORDS)

    def names_something(self, episode_id: str) -> bool:
        """Whether the text calls someone or something by a name of its own."""
        return self._flagged(episode_id, NAMES_SOMETHING)

    def asks_only(self, episode_id: str) -> bool:
        """Whether every sentence of the text is a question."""
        return self._flagged(episode_id, ASKS_ONLY)

    def after_past_question(self, episode_id: str) -> bool:
        """Whether the episode answers another speaker's question about the past."""
        return self._flagged(episode_id, AFTER_PAST)

    def context_of(self, episode_id: str) -> str | None:
        """The episode said just before this one in its conversation (the turn it
        answers or goes on from), when there is one and it is still kept."""
        ordinal = self.ids.position(episode_id)
        if ordinal is None or not self._flags.view()[ordinal] & FOLLOWS:
            return None
        if ordinal - 1 in self._removed:
            return None
        return self.ids[ordinal - 1]

    def latest(self, reach: int) -> list[str]:
        """Up to ``reach`` of the last episodes indexed, newest first, those still kept."""
        last = len(self.ids)
        return [
            self.ids[at]
            for at in range(last - 1, max(-1, last - 1 - reach), -1)
            if at not in self._removed
        ]

    def earlier(self, episode_id: str, reach: int) -> list[str]:
        """Up to ``reach`` episodes indexed before this one, nearest first, those
        still kept (of any conversation: the caller keeps its own)."""
        ordinal = self.ids.position(episode_id)
        if ordinal is None:
            return []
        found: list[str] = []
        for before in range(ordinal - 1, max(-1, ordinal - 1 - reach), -1):
            if before not in self._removed:
                found.append(self.ids[before])
        return found

    def reply_to(self, episode_id: str) -> str | None:
        """The episode said just after this one in its conversation (the turn that
        answers it), when there is one and it is still kept."""
        ordinal = self.ids.position(episode_id)
        if ordinal is None or ordinal + 1 >= len(self.ids) or ordinal + 1 in self._removed:
            return None
        if not self._flags.view()[ordinal + 1] & FOLLOWS or ordinal in self._removed:
            return None
        return self.ids[ordinal + 1]

    def turns_after(self, episode_id: str, count: int) -> list[str]:
        """The (at most ``count``) turns said after this one in its conversation, in
        order, each answering the one before (see :meth:`reply_to`)."""
        found: list[str] = []
        step = self.reply_to(episode_id)
        while step is not None and len(found) < count:
            found.append(step)
            step = self.reply_to(step)
        return found

    def recency(self, episode_id: str) -> float:
        """Where the episode falls between the first (0) and the latest (1) said."""
        ordinal = self.ids.position(episode_id)
        times = self._at.view()
        if ordinal is None or not len(times):
            return 0.0
        low, high = self._time_range()
        return 1.0 if high <= low else float(times[ordinal] - low) / float(high - low)

    def _time_range(self) -> tuple[int, int]:
        cached = self._range
        if cached is None or cached[2] != len(self.ids):
            times = self._at.view()
            cached = self._range = (int(times.min()), int(times.max()), len(self.ids))
        return cached[0], cached[1]

    def source_of(self, episode_id: str) -> str | None:
        ordinal = self.ids.position(episode_id)
        return None if ordinal is None else self.sources[ordinal]

    def holds(self, episode_id: str, term: str) -> bool:
        """Whether the episode's own words (or its context) hold ``term``."""
        ordinal = self.ids.position(episode_id)
        if ordinal is None:
            return False
        row = self._rows.get(term)
        if row is not None:
            start, stop = int(self._indptr[row]), int(self._indptr[row + 1])
            ords = self._ords[start:stop]
            at = int(np.searchsorted(ords, ordinal))
            if at < len(ords) and int(ords[at]) == ordinal:
                return True
        code = self._vocab.get(term)
        if code is None:
            return False
        codes, ords_added = self._add_codes.view(), self._add_ords.view()
        return bool(np.any((codes == code) & (ords_added == ordinal)))

    def holding(
        self,
        groups: Iterable[Iterable[str]],
        *,
        context: bool | npt.NDArray[np.bool_] = True,
    ) -> npt.NDArray[np.bool_]:
        """Per episode, in index order: whether its words (or, where ``context`` says
        so, for every episode or per episode, the turns before it) hold every term of
        one of ``groups``. One pass over each term's postings, however many episodes
        are then asked about."""
        count = len(self.ids)
        found = np.zeros(count, dtype=bool)
        for group in groups:
            held: npt.NDArray[np.bool_] | None = None
            for term in group:
                posting = self._postings(term)
                if posting is None:
                    held = None
                    break
                ords, tfs = posting
                if context is False:  # own words only (a posting with its own tf)
                    ords = ords[tfs >= 1.0]
                elif context is not True:  # context counts only where allowed
                    ords = ords[(tfs >= 1.0) | context[ords]]
                mask = np.zeros(count, dtype=bool)
                mask[ords] = True
                held = mask if held is None else held & mask
            if held is not None:
                found |= held
        return found

    def mentioning(self, groups: Iterable[Iterable[str]]) -> npt.NDArray[np.bool_]:
        """Per episode, in index order: whether it speaks of one of ``groups`` (each a
        name's terms): in its own words, or, for a turn of a conversation (one with a
        speaker), in the turns just before it ("she works at a vet clinic" after
        "how's Hannah?"). A note is about whom it names: remembered right after a
        note about Alice, "Dana moved to Porto" is not about her."""
        spoken: npt.NDArray[np.bool_] = self._spoken.view()
        return self.holding(groups, context=spoken)

    def holding_any(
        self,
        terms: Iterable[str],
        within: npt.NDArray[np.bool_],
        *,
        at_ms: int | None = None,
        source: str | None = None,
        most: float = COMMON_SHARE,
    ) -> dict[str, float]:
        """The episodes of ``within`` (a mask in index order) whose own words hold
        any of ``terms``, each with its BM25 score for those terms; ``at_ms`` and
        ``source`` as for :meth:`search`. A term more than ``most`` of the texts
        hold (and more than :data:`COMMON_FLOOR`) says little of any one and is
        skipped."""
        hidden = self._hidden(at_ms, source)
        if hidden is not None:
            within = within & ~hidden
        common = max(most * len(self.ids), COMMON_FLOOR)
        found: dict[int, float] = {}
        for term in dict.fromkeys(terms):
            posting = self._postings(term)
            if posting is None or len(posting[0]) > common:
                continue
            ords, tfs = posting
            keep = within[ords] & (tfs >= 1.0)
            scores = self._bm25(ords[keep], tfs[keep], len(ords))
            for ordinal, score in zip(ords[keep].tolist(), scores.tolist(), strict=True):
                found[ordinal] = found.get(ordinal, 0.0) + score
        return {self.ids[o]: w for o, w in found.items()}

    def _bm25(
        self, ords: npt.NDArray[np.int32], tfs: Floats, held_by: int
    ) -> npt.NDArray[np.floating[Any]]:
        """The BM25 scores of a term's postings (``held_by`` texts hold it)."""
        average = max(self._length_total / max(len(self.ids), 1), 1e-9)
        norm = K1 * (1.0 - B + B * self._lengths.view()[ords] / average)
        scores: npt.NDArray[np.floating[Any]] = (
            _idf(len(self.ids), held_by) * tfs * (K1 + 1.0) / (tfs + norm)
        )
        return scores

    def _hidden(self, at_ms: int | None, source: str | None) -> npt.NDArray[np.bool_] | None:
        """The episodes a read may not return, in index order: purged ones, ones said
        after ``at_ms``, ones of another ``source`` (``None``: none is hidden)."""
        if not self._removed and at_ms is None and source is None:
            return None
        count = len(self.ids)
        hidden = np.zeros(count, dtype=bool)
        if self._removed:
            hidden[list(self._removed)] = True
        if at_ms is not None:
            hidden |= self._at.view() > at_ms
        if source is not None:
            hidden |= ~self.sources.equal(source)
        return hidden

    def speaker_names(self) -> list[str]:
        """Every name a remembered text's speaker goes by."""
        return [name for name in self.speakers.values if name]

    def said_between(
        self,
        start_ms: int,
        end_ms: int,
        *,
        speakers: Iterable[str | None] | None = None,
        at_ms: int | None = None,
        source: str | None = None,
        timed: bool = False,
        telling: bool = False,
        limit: int | None = None,
        last: bool = False,
    ) -> list[str]:
        """The episodes said from ``start_ms`` (included) to ``end_ms`` (not), in the
        order they were remembered (the first ``limit``, or the last with ``last``);
        only those ``speakers`` said, when given (``None`` among them: the texts
        remembered without one); with ``timed``, only those that
        say when something happened; with ``telling``, none that only asks or says
        nothing of its own."""
        times = self._at.view()
        inside = (times >= start_ms) & (times < end_ms)
        flags = self._flags.view()
        if timed:
            inside &= (flags & TIMED) != 0
        if telling:
            inside &= (flags & (ASKS_ONLY | SAYS_NOTHING)) == 0
        if speakers is not None:
            inside &= self.said_by(speakers)
        hidden = self._hidden(at_ms, source)
        if hidden is not None:
            inside &= ~hidden
        found = np.flatnonzero(inside)
        if limit is not None:
            found = found[len(found) - limit :] if last else found[:limit]
        return [self.ids[o] for o in found.tolist()]

    def said_by(self, speakers: Iterable[str | None]) -> npt.NDArray[np.bool_]:
        """A mask in index order of the texts these speakers said (``None``: the texts
        remembered without one)."""
        said = np.zeros(len(self.speakers), dtype=bool)
        for name in speakers:
            said |= self.speakers.equal(name)
        return said

    def called(self, word: str) -> str | None:
        """The first name of the speaker the others call by ``word`` (lower case):
        at least :data:`CALLED_REPLIES` times a turn calling someone so ("Shiv.",
        "hey shiv!") was answered by them, and by them at least two times in three
        ("shiv" → "Siobhán"). ``None`` for a speaker's own name, a word that
        calls anyone ("Wow!", "thanks guys!"), or one that speaker says herself
        as often as half the others do: "JESSE!!!" and "Jesse? How was drop
        off?", each answered by Megan, speak of her son, whom she calls Jesse
        too (once, "it's Lu for me", is how a name is given)."""
        replied = self._calls.get(word)
        if not replied:
            return None
        name, count = max(replied.items(), key=lambda item: (item[1], item[0]))
        if count < CALLED_REPLIES or 3 * count < 2 * sum(replied.values()):
            return None
        if word in self._voices_said()[1]:
            return None
        terms = episode_terms(word)
        if terms:
            held = self.holding([terms], context=False)
            own = int(np.count_nonzero(held & self.speakers.equal(name)))
            if own >= CALLED_REPLIES and 2 * own >= int(np.count_nonzero(held)) - own:
                return None  # "Jesse's 17 now": said by the one "JESSE!!!" was answered by
        return name.split()[0]

    def heard(self, name: str | None) -> bool:
        """Whether someone of that name said any remembered text (is a speaker)."""
        return bool(name) and name_key(str(name)) in self.voices

    def names_a_speaker(self, word: str) -> bool:
        """Whether ``word`` names someone who speaks: their name, or the short form of
        a speaker's first name ("Rhi" of Rhiannon: :meth:`FirstNames.started_by`)."""
        return self.heard(word) or bool(self.first_names().started_by(word.lower()))

    def first_names(self) -> FirstNames:
        """The speakers' first names, sorted to read a short form of one in a question."""
        found = self._first_names
        if found is None or found.size != len(self.voices):
            found = self._first_names = FirstNames(self.voices)
        return found

    def speaker_of(self, episode_id: str) -> str | None:
        ordinal = self.ids.position(episode_id)
        return None if ordinal is None else self.speakers[ordinal]

    def addressee(self, episode_id: str, *, reach: int = ADDRESSEE_REACH) -> str | None:
        """Whom a turn speaks to: the nearest other speaker before it in its
        conversation (within ``reach`` turns), else the nearest one after it."""
        ordinal = self.ids.position(episode_id)
        if ordinal is None or self.speakers[ordinal] is None:
            return None
        own = self.speakers[ordinal]
        flags = self._flags.view()
        at = ordinal
        while at > 0 and ordinal - at < reach and flags[at] & FOLLOWS:
            at -= 1
            if self.speakers[at] not in (None, own):
                return self.speakers[at]
        at = ordinal + 1
        while at < len(self.ids) and at - ordinal <= reach and flags[at] & FOLLOWS:
            if self.speakers[at] not in (None, own):
                return self.speakers[at]
            at += 1
        return None

    def remove(self, episode_ids: Iterable[str]) -> None:
        """Hide episodes from search (a purge); :meth:`encode` drops them for good.
        The names speakers were called by are forgotten too: what was said to
        them is no longer known (a rebuild from the episodes counts them again)."""
        self._calls = {}
        for episode_id in episode_ids:
            ordinal = self.ids.position(episode_id)
            if ordinal is not None:
                self._removed.add(ordinal)

    # ------------------------------------------------------------------ search
    def _postings(self, term: str) -> tuple[npt.NDArray[np.int32], Floats] | None:
        row = self._rows.get(term)
        code = self._vocab.get(term)
        parts_o: list[npt.NDArray[np.int32]] = []
        parts_w: list[Floats] = []
        if row is not None:
            start, stop = int(self._indptr[row]), int(self._indptr[row + 1])
            parts_o.append(np.asarray(self._ords[start:stop], dtype=np.int32))
            parts_w.append(np.asarray(self._tfs[start:stop], dtype=np.float32) * 0.5)
        if code is not None:
            where = np.flatnonzero(self._add_codes.view() == code)
            parts_o.append(self._add_ords.view()[where])
            parts_w.append(self._add_tfs.view()[where])
        if not parts_o:
            return None
        if len(parts_o) == 1:
            return parts_o[0], parts_w[0]
        return np.concatenate(parts_o), np.concatenate(parts_w)

    def share_saying(self, term: str) -> float:
        """The share of the texts whose own words hold ``term``."""
        posting = self._postings(term)
        if posting is None or not len(self.ids):
            return 0.0
        return int(np.count_nonzero(posting[1] >= 1.0)) / len(self.ids)

    def holds_any(self, terms: Iterable[str]) -> bool:
        """Whether some text holds one of ``terms`` (or another word said for it)."""
        return any(
            self._postings(form) is not None
            for term in terms
            for form in (term, *WORD_FORMS.get(term, ()))
        )

    def _postings_in_any_form(self, term: str) -> tuple[npt.NDArray[np.int32], Floats] | None:
        """A term's postings, with those of its verb's other forms ("make" finds "I
        made a bowl"): one posting per episode, its term frequencies summed."""
        own = self._postings(term)
        others = [p for p in map(self._postings, WORD_FORMS.get(term, ())) if p is not None]
        if not others:
            return own
        parts = [own, *others] if own is not None else others
        ords = np.concatenate([p[0] for p in parts])
        tfs = np.concatenate([p[1] for p in parts])
        unique, inverse = np.unique(ords, return_inverse=True)
        summed = np.zeros(len(unique), dtype=np.float32)
        np.add.at(summed, inverse, tfs)
        return unique.astype(np.int32), summed

    def weight(self, term: str) -> float:
        """The term's inverse document frequency over the texts (BM25's); 0 for a
        term no text holds."""
        posting = self._postings(term)
        if posting is None:
            return 0.0
        return _idf(len(self.ids), len(posting[0]))  # one posting per text

    def search(
        self,
        query_terms: Sequence[str],
        *,
        k: int = 50,
        floor: float = 0.0,
        at_ms: int | None = None,
        source: str | None = None,
        said_within: tuple[int, int] | None = None,
        near_context: bool = False,
    ) -> list[tuple[str, float]]:
        """The ``k`` best episodes for ``query_terms`` as ``(id, share)``, best first.

        ``at_ms`` hides episodes said after that moment; ``source`` keeps only
        one source's episodes; an episode said within ``said_within`` (ms,
        start included, end not: the day or month a question names) that holds
        some of the terms gains ``SAID_WITHIN_BONUS``. With ``near_context``, a
        word only the turn two before holds does not count.
        """
        count = len(self.ids)
        unique = list(dict.fromkeys(query_terms))
        if not count or not unique:
            return []
        postings = {t: self._postings_in_any_form(t) for t in unique}
        known = [len(p[0]) for p in postings.values() if p is not None]
        if not known:
            return []
        rarest = min(known)

        total_weight = sum(
            _idf(count, len(p[0]) if p is not None else rarest) for p in postings.values()
        )
        if total_weight <= 0:
            return []
        scored = [p for p in postings.values() if p is not None]
        telling = [p for p in scored if _idf(count, len(p[0])) >= NEGLIGIBLE_IDF]
        scores = np.zeros(count, dtype=np.float32)
        for ords, tfs in telling or scored:  # "Northwind" in every office's note: skipped
            held_by = len(ords)
            if near_context:
                near = tfs >= NEAR_CONTEXT
                ords, tfs = ords[near], tfs[near]
            scores[ords] += self._bm25(ords, tfs, held_by)
        scores /= total_weight
        if said_within is not None:
            times = self._at.view()
            inside = (times >= said_within[0]) & (times < said_within[1]) & (scores > 0)
            scores[inside] += SAID_WITHIN_BONUS
        np.minimum(scores, 1.0, out=scores)
        hidden = self._hidden(at_ms, source)
        if hidden is not None:
            scores[hidden] = 0.0
        candidates = np.flatnonzero(scores > max(floor, 0.0))
        if len(candidates) > k:
            top = np.argpartition(-scores[candidates], k - 1)[:k]
            candidates = candidates[top]
        order = sorted(candidates.tolist(), key=lambda o: (-float(scores[o]), -o))
        return [(self.ids[o], float(scores[o])) for o in order]

    def _fact_list(self, ordinal: int) -> tuple[int, ...]:
        found = self._facts_added.get(ordinal)
        if found is not None:
            return found
        if ordinal + 1 < len(self._facts_indptr):
            start, stop = self._facts_indptr[ordinal], self._facts_indptr[ordinal + 1]
            return tuple(self._facts_flat[start:stop].tolist())
        return ()

    # ------------------------------------------------------------------ saved form
    def encode(self) -> bytes:
        """Everything indexed, as one saved part (removed episodes dropped)."""
        return self._flat().encode()

    def encode_sealed(self) -> tuple[Callable[[], bytes], EpisodeIndex]:
        """:meth:`encode` (as a function that may run in another thread: it keeps its
        own copy of what it encodes), and the index those bytes decode to
        (:meth:`sealed`), made from the same tables instead of parsing them back."""
        flat = self._flat()
        return flat.encode, EpisodeIndex._from_flat(flat)

    def _flat(self) -> _Flat:
        """Everything indexed, as the tables of one saved part (removed episodes dropped)."""
        count = len(self.ids)
        keep = np.ones(count, dtype=bool)
        if self._removed:
            keep[list(self._removed)] = False
        renumber = np.cumsum(keep, dtype=np.int64) - 1
        # The saved terms come in order: appended to them, the new ones sort in one merge.
        saved_terms = list(self._rows)  # in row order
        known = set(saved_terms)
        terms = sorted([*saved_terms, *(term for term in self._vocab if term not in known)])
        row_of = {term: row for row, term in enumerate(terms)}
        # saved postings, re-labelled with their rows in the new term order
        relabel = np.fromiter((row_of[t] for t in saved_terms), np.int64, len(saved_terms))
        counts = np.diff(self._indptr)
        added_rows = added_ords = added_tfs = None
        if len(self._add_codes):
            vocab_terms = sorted(self._vocab, key=self._vocab.__getitem__)
            code_rows = np.fromiter((row_of[t] for t in vocab_terms), np.int64, len(vocab_terms))
            added_rows = code_rows[self._add_codes.view()]
            added_ords = self._add_ords.view()
            weights = np.rint(self._add_tfs.view() * 2.0)
            added_tfs = np.minimum(weights, 255).astype(np.uint8)
        if not self._removed and (added_ords is None or int(added_ords.min()) >= self._saved):
            indptr, ords, tfs = _appended(
                len(terms),
                relabel,
                counts,
                self._ords,
                self._tfs,
                added_rows,
                added_ords,
                added_tfs,
            )
        else:
            parts_rows = [np.repeat(relabel, counts)]
            parts_ords = [self._ords.astype(np.int64)]
            parts_tfs = [self._tfs.astype(np.uint8)]
            if added_rows is not None and added_ords is not None and added_tfs is not None:
                parts_rows.append(added_rows)
                parts_ords.append(added_ords.astype(np.int64))
                parts_tfs.append(added_tfs)
            rows, merged, tfs = _merged(parts_rows, parts_ords, parts_tfs, keep, renumber, count)
            ords = merged.astype(np.int32)
            indptr = np.zeros(len(terms) + 1, dtype=np.int64)
            np.cumsum(np.bincount(rows, minlength=len(terms)), out=indptr[1:])
        kept = np.flatnonzero(keep)
        facts_indptr, facts_flat = self._kept_facts(kept)
        ids = self.ids.joined()
        if len(kept) < count:
            ids = ids.take(kept) if isinstance(ids, IdColumn) else [ids[o] for o in kept.tolist()]
        return _Flat(
            last=self._last,
            mark=self.mark,
            calls=self._calls,
            ids=ids,
            sources=self.sources.kept(kept),
            speakers=self.speakers.kept(kept),
            terms=_Terms.of(terms),
            indptr=indptr.astype("<i8", copy=False),
            ords=ords.astype("<i4", copy=False),
            tfs=tfs.astype(np.uint8, copy=False),
            lengths=self._lengths.view()[kept].astype("<f4"),
            at=self._at.view()[kept].astype("<i8"),
            loc=self._loc.view()[kept].astype("<i8"),
            facts_known=np.asarray(self._facts_known.view()[kept], dtype=np.uint8),
            flags=self._saved_flags(keep, kept),
            facts_indptr=facts_indptr.astype("<i8", copy=False),
            facts_flat=facts_flat.astype("<i8", copy=False),
        )

    def _kept_facts(
        self, kept: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """The facts of the ``kept`` episodes in CSR form (indptr, flat ids)."""
        saved = len(self._facts_indptr) - 1
        added = sorted(self._facts_added)
        if len(kept) == len(self.ids) and (not added or added[0] >= saved):
            # Nothing removed or re-recorded: the saved lists as they are, then the added.
            lists = [self._facts_added[o] for o in added]
            counts = np.zeros(len(kept), dtype=np.int64)
            counts[:saved] = np.diff(self._facts_indptr)
            counts[added] = [len(f) for f in lists]
            indptr = np.zeros(len(kept) + 1, dtype=np.int64)
            np.cumsum(counts, out=indptr[1:])
            tail = np.fromiter((n for f in lists for n in f), np.int64, int(counts[saved:].sum()))
            head = np.asarray(self._facts_flat[: int(self._facts_indptr[-1])], dtype=np.int64)
            flat = np.concatenate([head, tail])
            return indptr, flat
        fact_lists = [self._fact_list(int(o)) for o in kept]
        indptr = np.zeros(len(kept) + 1, dtype=np.int64)
        np.cumsum([len(f) for f in fact_lists], out=indptr[1:])
        flat = np.fromiter((n for f in fact_lists for n in f), np.int64, int(indptr[-1]))
        return indptr, flat

    def _saved_flags(
        self, keep: npt.NDArray[np.bool_], kept: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.uint16]:
        """The kept episodes' flags; one whose context is dropped loses ``FOLLOWS``."""
        flags = np.asarray(self._flags.view()[kept], dtype=np.uint16).copy()
        before_kept = np.zeros(len(kept), dtype=bool)
        inner = kept > 0
        before_kept[inner] = keep[kept[inner] - 1]
        flags[~before_kept] &= np.uint16(0xFFFF ^ FOLLOWS)
        saved: npt.NDArray[np.uint16] = flags
        return saved

    @classmethod
    def decode(cls, data: bytes | memoryview) -> EpisodeIndex:
        """The index saved by :meth:`encode`.

        Raises:
            ValueError: ``data`` is not a saved episode index or fails its checksum.
        """
        view = memoryview(data)
        if bytes(view[:8]) in OLDER_MAGICS:
            raise OlderIndexFormat("an episode index in an older format")
        if bytes(view[:8]) != MAGIC:
            raise ValueError("not an episode index")
        (crc,) = struct.unpack("<I", view[8:12])
        body = view[16:]
        if zlib.crc32(body) != crc:
            raise ValueError("episode index checksum mismatch")
        blobs: list[memoryview] = []
        offset = 0
        while offset < len(body):
            (size,) = struct.unpack("<Q", body[offset : offset + 8])
            blobs.append(body[offset + 8 : offset + 8 + size])
            offset += 8 + size + -size % 8
        if len(blobs) != 18:
            raise ValueError("episode index is incomplete")
        header = orjson.loads(bytes(blobs[0]))
        count = header["count"]
        flat = _Flat(
            last=_turn(header.get("last")),
            mark=int(header.get("mark") or 0),
            calls=header.get("calls") or {},
            ids=_saved_ids(header["prefixes"], blobs[1], blobs[2]),
            sources=_coded(header["sources"], blobs[3]),
            speakers=_coded(header["speakers"], blobs[4]),
            terms=_Terms(
                bytes(blobs[5]),
                _array(blobs[6], "<i4").astype(np.int64),
                _array(blobs[7], "<u8"),
            ),
            indptr=_array(blobs[8], "<i8"),
            ords=_array(blobs[9], "<i4"),
            tfs=_array(blobs[10], np.uint8),
            lengths=_array(blobs[11], "<f4"),
            at=_array(blobs[12], "<i8"),
            loc=_array(blobs[13], "<i8"),
            facts_known=_array(blobs[14], np.uint8),
            flags=_array(blobs[15], np.uint16),
            facts_indptr=_array(blobs[16], "<i8"),
            facts_flat=_array(blobs[17], "<i8"),
        )
        if (
            any(
                len(part) != count
                for part in (
                    flat.ids,
                    flat.lengths,
                    flat.sources.codes,
                    flat.speakers.codes,
                    flat.at,
                    flat.loc,
                    flat.facts_known,
                    flat.flags,
                )
            )
            or len(flat.facts_indptr) != count + 1
            or len(flat.facts_flat) != int(flat.facts_indptr[-1])
            or len(flat.indptr) != header["terms"] + 1
            or len(flat.terms) != header["terms"]
            or len(flat.terms.starts) != header["terms"] + 1
            or len(flat.ords) != header["postings"]
        ):
            raise ValueError("episode index sizes disagree")
        return cls._from_flat(flat)

    @classmethod
    def _from_flat(cls, flat: _Flat) -> EpisodeIndex:
        """The index whose saved part is ``flat`` and nothing added."""
        index = cls()
        index.ids = _Ids(flat.ids)
        index.sources = _Values(flat.sources)
        index.speakers = _Values(flat.speakers)
        index.voices = {name_key(speaker) for speaker in index.speakers.values if speaker}
        index._spoken = _Grow(np.bool_, ~index.speakers.equal(None))
        index._rows = flat.terms
        index._indptr = flat.indptr
        index._ords = flat.ords
        index._tfs = flat.tfs
        index._lengths = _Grow(np.float32, flat.lengths)
        index._at = _Grow(np.int64, flat.at)
        index._loc = _Grow(np.int64, flat.loc)
        index.mark = flat.mark
        index._calls = {word: dict(replied) for word, replied in flat.calls.items()}
        index._facts_known = _Grow(np.bool_, flat.facts_known.astype(bool))
        index._flags = _Grow(np.uint16, flat.flags)
        index._facts_indptr = flat.facts_indptr
        index._facts_flat = flat.facts_flat
        index._length_total = float(flat.lengths.sum(dtype=np.float64))
        index._saved = len(index.ids)
        index._last = flat.last
        return index


def _turn(saved: list[Any] | None) -> _Turn | None:
    """The last turn as the header saves it."""
    if not saved:
        return None
    conversation, at_ms, terms, speaker, text, other, before, asks_when_news, calls, earlier = saved
    return _Turn(
        conversation,
        int(at_ms),
        tuple(terms),
        speaker,
        text,
        other,
        tuple(before),
        bool(asks_when_news),
        tuple(calls),
        tuple(tuple(turn) for turn in earlier),
    )


def _saved_ids(prefixes: list[str] | None, numbers: memoryview, codes: memoryview) -> Sequence[str]:
    """The saved ids: a column of ``numbers`` (and prefix ``codes``, if any) when the
    header names their ``prefixes``, else a JSON list of strings."""
    if prefixes is None:
        ids: list[str] = orjson.loads(bytes(numbers))
        return ids
    coded = _array(codes, np.uint8) if len(codes) else None
    return IdColumn(prefixes, _array(numbers, "<i8"), coded)


def _code_type(values: Sequence[str | None]) -> str:
    """How a column of codes into ``values`` is saved: a byte each while they fit."""
    return "u1" if len(values) <= 256 else "<i4"


def _coded(values: list[str | None], codes: memoryview) -> _Coded:
    return _Coded(values, _array(codes, _code_type(values)))


def _array(blob: memoryview, dtype: npt.DTypeLike) -> npt.NDArray[Any]:
    """A blob's array, read in place when aligned (else copied once: numpy would
    copy an unaligned array at each search of it)."""
    array: npt.NDArray[Any] = np.frombuffer(blob, dtype=dtype)
    return array if array.flags.aligned else array.copy()
