"""A fast, deterministic provider for the benchmark, and a clock of its own time.

The benchmark measures the *engine*, so the provider must cost next to
nothing and its time must be known: :class:`ProviderClock` accumulates the
wall and CPU time spent inside :class:`BenchChat` and :class:`BenchEmbedder`,
and a scenario reports ``engine time = wall time - provider time`` (and the
same for process CPU time).

* :class:`BenchChat` answers an extraction call with the reply scripted for
  the text inside the prompt's ``<text>`` tags (a dict lookup), and can keep
  the prompts it receives so their tokens can be counted afterwards.
* :class:`BenchEmbedder` is a lexical random-vector embedder: every stemmed
  word maps (through ``blake2b``, so every process agrees) to a dense random
  vector, a text is the normalized sum of its words. Texts that share words
  are similar, so tier 2 finds real neighbours, at any dimension.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from memgraph.llm_calls.prompts import read_tag
from memgraph.llm_calls.provider import Completion, JsonSchema, Message, Provider, Usage
from memgraph.text import STOP_WORDS, stem

__all__ = ["BenchChat", "BenchEmbedder", "ProviderClock", "bench_provider"]

_WORD = re.compile(r"[a-z0-9]+")
_EMPTY_EXTRACTION = b'{"entities": [], "relations": [], "expirations": []}'
_PHASE_DEFAULTS = {
    "rerank": '{"ids": []}',
    "forget": '{"observations": [], "relations": []}',
    "summarize": '{"summary": ""}',
    "merge": '{"summary": ""}',
}


class ProviderClock:
    """Seconds spent inside the provider, and how many calls it took."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.cpu = 0.0  # process CPU seconds spent inside the provider
        self.chat_calls = 0
        self.embed_calls = 0
        self.embedded_texts = 0

    def snapshot(self) -> float:
        return self.seconds


class BenchEmbedder:
    """Deterministic lexical embeddings: the normalized sum of a dense random vector per word.

    Every stemmed word gets a standard-normal vector seeded by its ``blake2b``
    hash (stop words weigh 0.3), so texts sharing words are similar, unrelated
    texts score near 0 (± 1/sqrt(dimension)), vectors are dense like a real
    model's, and every process computes the same vector for the same text.

    Args:
        dimension: vector length (384 and 1536 in the suite).
        clock: where to add the time spent embedding.
    """

    def __init__(self, dimension: int, clock: ProviderClock | None = None) -> None:
        self.dimension = dimension
        self.model = f"bench-hash-{dimension}"
        self.clock = clock or ProviderClock()
        self._ids: dict[str, int] = {}
        self._words = np.zeros((256, dimension), np.float32)

    def _word(self, word: str) -> int:
        found = self._ids.get(word)
        if found is None:
            seed = int.from_bytes(
                hashlib.blake2b(stem(word).encode(), digest_size=8).digest(), "little"
            )
            vector = np.random.default_rng(seed).standard_normal(self.dimension, dtype=np.float32)
            found = len(self._ids)
            if found == self._words.shape[0]:
                self._words = np.concatenate([self._words, np.zeros_like(self._words)])
            self._words[found] = vector * (0.3 if word in STOP_WORDS else 1.0)
            self._ids[word] = found
        return found

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """A ``(len(texts), dimension)`` float32 array of unit rows."""
        started, cpu = time.perf_counter(), time.process_time()
        try:
            return self._embed(texts)
        finally:
            self.clock.seconds += time.perf_counter() - started
            self.clock.cpu += time.process_time() - cpu
            self.clock.embed_calls += 1
            self.clock.embedded_texts += len(texts)

    def _embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self.dimension), np.float32)
        words: list[int] = []
        starts: list[int] = []
        rows: list[int] = []
        known = self._ids  # most words are known: no call for them
        for row, text in enumerate(texts):
            ids = [known[w] if w in known else self._word(w) for w in _WORD.findall(text.lower())]
            if ids:
                rows.append(row)
                starts.append(len(words))
                words.extend(ids)
        if rows:
            out[np.asarray(rows, np.intp)] = segment_sums(
                self._words, np.asarray(words, np.intp), np.asarray(starts, np.intp)
            )
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0.0] = 1.0
        out /= norms
        return out


def segment_sums(
    table: npt.NDArray[np.float32], ids: npt.NDArray[np.intp], starts: npt.NDArray[np.intp]
) -> npt.NDArray[np.float32]:
    """Per segment of ``ids`` (``starts`` increasing, no segment empty), the sum of its rows
    of ``table``: ``np.add.reduceat(table[ids], starts)`` bit for bit, about ten times
    faster on a few hundred texts. ``reduceat`` adds a segment's first row to numpy's
    pairwise sum of the others, one column and segment at a time; here the segments of one
    length are summed together in that same order, a whole row at a time."""
    counts = np.diff(starts, append=len(ids))
    out = np.empty((len(starts), table.shape[1]), table.dtype)
    for length in np.unique(counts).tolist():
        rows = np.flatnonzero(counts == length)
        block = table[ids[starts[rows][:, None] + np.arange(length)]]
        out[rows] = block[:, 0] if length == 1 else block[:, 0] + _pairwise_sum(block[:, 1:])
    return out


def _pairwise_sum(rows: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """``(k, n, d) -> (k, d)``: the sum over axis 1 in the order of numpy's pairwise
    summation (``pairwise_sum`` in its loops: sequential below 8 terms, 8 running sums
    up to 128, else two halves split at a multiple of 8)."""
    n = rows.shape[1]
    if n < 8:
        total = rows[:, 0].copy()
        for i in range(1, n):
            total += rows[:, i]
        return total
    if n <= 128:
        whole = n - n % 8
        partial = rows[:, 0:8].copy()
        for i in range(8, whole, 8):
            partial += rows[:, i : i + 8]
        p = [partial[:, j] for j in range(8)]
        total = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]))
        for i in range(whole, n):
            total += rows[:, i]
        return total
    half = n // 2
    half -= half % 8
    return _pairwise_sum(rows[:, :half]) + _pairwise_sum(rows[:, half:])


class BenchChat:
    """A chat model that replays the extraction scripted for each text.

    Unknown texts get an empty extraction (counted in :attr:`misses`); other
    phases get an empty reply of their shape.
    """

    def __init__(self, clock: ProviderClock | None = None, model: str = "bench-scripted") -> None:
        self.model = model
        self.clock = clock or ProviderClock()
        self._replies: dict[str, bytes] = {}
        self.misses = 0
        self.prompts: list[tuple[str, str]] | None = None  # (system, user) when capturing

    def script(self, items: Iterable[Any]) -> None:
        """Register the replies of workload items (anything with ``text`` and ``reply``)."""
        for item in items:
            self._replies[item.text] = orjson.dumps(item.reply)

    def forget_script(self) -> None:
        self._replies.clear()

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: JsonSchema | None = None,
        **options: Any,
    ) -> Completion:
        started, cpu = time.perf_counter(), time.process_time()
        try:
            user = str(messages[-1].get("content") or "") if messages else ""
            phase = schema.phase if schema is not None else "chat"
            if phase == "extract":
                if self.prompts is not None:
                    system = str(messages[0].get("content") or "") if len(messages) > 1 else ""
                    self.prompts.append((system, user))
                text = read_tag(user, "text")
                reply = self._replies.get(text) if text is not None else None
                if reply is None:
                    self.misses += 1
                    reply = _EMPTY_EXTRACTION
                body = reply.decode()
            else:
                body = _PHASE_DEFAULTS.get(phase, "{}")
            return Completion(text=body, model=self.model, usage=Usage(), finish_reason="stop")
        finally:
            self.clock.seconds += time.perf_counter() - started
            self.clock.cpu += time.process_time() - cpu
            self.clock.chat_calls += 1


def bench_provider(dimension: int) -> tuple[Provider, BenchChat, BenchEmbedder, ProviderClock]:
    """A provider whose chat and embedder share one clock."""
    clock = ProviderClock()
    chat = BenchChat(clock)
    embedder = BenchEmbedder(dimension, clock)
    return Provider("bench", chat=chat, embedder=embedder), chat, embedder, clock
