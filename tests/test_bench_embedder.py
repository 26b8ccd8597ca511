"""The bench embedder's segment sums equal ``np.add.reduceat`` bit for bit, so its vectors
(and every benchmark answer that depends on them) are those of the plain code."""

from __future__ import annotations

import numpy as np

from bench.scripted import BenchEmbedder, segment_sums


def test_segment_sums_equal_reduceat_bit_for_bit() -> None:
    rng = np.random.default_rng(11)
    table = rng.standard_normal((500, 384), dtype=np.float32)
    for _ in range(300):
        lengths = rng.integers(1, 300 if rng.random() < 0.1 else 40, size=rng.integers(1, 60))
        ids = rng.integers(0, len(table), size=int(lengths.sum())).astype(np.intp)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.intp)
        expected = np.add.reduceat(table[ids], starts)
        assert segment_sums(table, ids, starts).tobytes() == expected.tobytes()


def test_embeddings_are_those_of_reduceat() -> None:
    embedder = BenchEmbedder(64)
    texts = ["Alice drinks tea", "", "a " * 200 + "b", "Bob, Carol and Dave met at the station"]
    got = embedder.embed(texts)
    for row, text in zip(got, texts, strict=True):
        alone = embedder.embed([text])[0]
        assert row.tobytes() == alone.tobytes()
    words = [embedder._word(w) for w in ["alice", "drinks", "tea"]]
    plain = np.add.reduceat(embedder._words[np.asarray(words)], np.asarray([0]))[0]
    assert np.array_equal(got[0], plain / np.linalg.norm(plain))
