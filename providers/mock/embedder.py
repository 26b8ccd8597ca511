"""Deterministic hashed embeddings with real lexical similarity.

:class:`HashEmbedder` needs no model and no network: every text becomes a
signed feature-hashing vector of its stemmed words, word bigrams and character
3/4-grams. Texts that share words score a clearly higher cosine than
unrelated texts, the same text always gets the same vector (in every process:
the hashes are ``blake2b``, never Python's salted ``hash()``), and a thousand
short texts embed in a few milliseconds.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from memgraph.text import STOP_WORDS, words

__all__ = ["HashEmbedder", "stem", "stems"]

_VOWELS = frozenset("aeiouy")

_WORD_WEIGHT = 1.0
_STOP_WEIGHT = 0.2
_BIGRAM_WEIGHT = 0.5
_CHAR_WEIGHT = 0.9

Vectors = npt.NDArray[np.float32]


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light, deterministic stem of one lower-case word.

    Strips a possessive ``'s``, plural ``-s``/``-es``/``-ies``, ``-ing`` and
    ``-ed`` (undoubling a final consonant) and a final silent ``e``, so that
    ``lives``, ``living``, ``lived`` and ``live`` all stem to ``liv``.
    """
    w = word.casefold()
    if w.endswith(("'s", "’s")):
        w = w[:-2]
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) > 4 and w.endswith("ied"):
        w = w[:-3] + "y"
    else:
        for suffix in ("ing", "ed"):
            base = w[: -len(suffix)]
            if w.endswith(suffix) and len(base) >= 3 and _VOWELS & set(base):
                w = w[:-1] if suffix == "ed" and base.endswith("e") else base
                if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz" + "aeiou":
                    w = w[:-1]
                break
    if len(w) > 3 and w.endswith("e") and not w.endswith("ee"):
        w = w[:-1]
    return w


def stems(text: str) -> list[str]:
    """Stems of the content words of ``text`` (stop words and one-letter words dropped)."""
    return [stem(w) for w in words(text) if len(w) > 1 and w not in STOP_WORDS]


def _hash(feature: str) -> int:
    return int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "big")


def _signed(features: Sequence[tuple[str, float]], dimension: int) -> tuple[list[int], list[float]]:
    indices: list[int] = []
    weights: list[float] = []
    for feature, weight in features:
        h = _hash(feature)
        indices.append(h % dimension)
        weights.append(weight if (h >> 63) & 1 else -weight)
    return indices, weights


@lru_cache(maxsize=131072)
def _token_features(token: str, dimension: int) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """Hashed unigram and character n-gram features of one token."""
    if token in STOP_WORDS or len(token) < 2:
        features = [("w:" + token, _STOP_WEIGHT)]
    else:
        padded = f"<{token}>"
        grams = [padded[i : i + n] for n in (3, 4) for i in range(len(padded) - n + 1)]
        each = _CHAR_WEIGHT / len(grams) ** 0.5
        features = [("w:" + stem(token), _WORD_WEIGHT)] + [("c:" + g, each) for g in grams]
    indices, weights = _signed(features, dimension)
    return tuple(indices), tuple(weights)


@lru_cache(maxsize=131072)
def _bigram_feature(left: str, right: str, dimension: int) -> tuple[int, float]:
    indices, weights = _signed([(f"b:{stem(left)} {stem(right)}", _BIGRAM_WEIGHT)], dimension)
    return indices[0], weights[0]


class HashEmbedder:
    """Deterministic, offline embeddings by signed feature hashing.

    Features per text: stemmed word unigrams (stop words down-weighted), bigrams
    of consecutive content words, and character 3/4-grams of each content word.
    Rows are L2-normalised float32; the empty text embeds as a zero row.

    Args:
        dimension: length of every vector (default 384).
    """

    def __init__(self, dimension: int = 384) -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 8:
            raise ValueError(f"dimension must be an int >= 8, got {dimension!r}")
        self.dimension = dimension
        self.model = f"mock-hash-{dimension}"

    def __repr__(self) -> str:
        return f"HashEmbedder(dimension={self.dimension})"

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``; returns a float32 array of shape ``(len(texts), dimension)``."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        dim = self.dimension
        indices: list[int] = []
        weights: list[float] = []
        counts: list[int] = []
        for text in texts:
            before = len(indices)
            tokens = words(text)
            content: list[str] = []
            for token in tokens:
                idx, wts = _token_features(token, dim)
                indices.extend(idx)
                weights.extend(wts)
                if token not in STOP_WORDS and len(token) > 1:
                    content.append(token)
            for left, right in itertools.pairwise(content):
                i, w = _bigram_feature(left, right, dim)
                indices.append(i)
                weights.append(w)
            counts.append(len(indices) - before)
        n = len(counts)
        if n == 0:
            return np.zeros((0, dim), dtype=np.float32)
        rows = np.repeat(np.arange(n, dtype=np.int64), counts)
        flat = rows * dim + np.asarray(indices, dtype=np.int64)
        summed = np.bincount(flat, weights=np.asarray(weights, dtype=np.float64), minlength=n * dim)
        matrix = summed.reshape(n, dim)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0.0] = 1.0
        vectors: Vectors = (matrix / norms).astype(np.float32)
        return vectors

    async def aembed(self, texts: Sequence[str]) -> Vectors:
        """Async twin of :meth:`embed` (it never blocks on I/O)."""
        return self.embed(texts)
