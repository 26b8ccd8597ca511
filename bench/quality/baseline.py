"""The lexical baseline: BM25 (``bm25s``) over a conversation's raw turns as transcript lines."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["BM25Turns", "stemmer_name"]


def _stemmer() -> tuple[Any, str]:
    """A PyStemmer English stemmer (bm25s calls its ``stemWords``), or ``None``."""
    try:
        stemmer = importlib.import_module("Stemmer")  # PyStemmer
    except ImportError:
        return None, "none (PyStemmer not installed)"
    return stemmer.Stemmer("english"), "PyStemmer english"


def stemmer_name() -> str:
    """Which stemmer the baseline uses, for the report."""
    return _stemmer()[1]


class BM25Turns:
    """BM25 over ``lines`` (one transcript line per turn), English stopwords, stemmed if possible.

    ``top(query, k)`` returns the ids of the best turns with a positive score, best first;
    ties keep transcript order, so the ranking is deterministic.
    """

    def __init__(self, ids: Sequence[str], lines: Sequence[str]) -> None:
        bm25s = importlib.import_module("bm25s")
        logging.getLogger("bm25s").setLevel(logging.WARNING)  # bm25s sets DEBUG on import
        self._bm25s: Any = bm25s
        self._ids = list(ids)
        self._stem, self.stemmer = _stemmer()
        self._retriever: Any = bm25s.BM25()
        self._retriever.index(self._tokens(list(lines)), show_progress=False)
        self._vocab: dict[str, int] = dict(self._retriever.vocab_dict)

    def _tokens(self, texts: list[str]) -> list[list[str]]:
        tokens: list[list[str]] = self._bm25s.tokenize(
            texts, stopwords="en", stemmer=self._stem, return_ids=False, show_progress=False
        )
        return tokens

    def top(self, query: str, k: int = 10) -> list[str]:
        terms = [t for t in self._tokens([query])[0] if t in self._vocab]
        if not terms:
            return []
        scores = np.asarray(self._retriever.get_scores(terms), dtype=np.float64)
        order = np.lexsort((np.arange(len(scores)), -scores))  # score desc, then position
        return [self._ids[i] for i in order[:k] if scores[i] > 0.0]
