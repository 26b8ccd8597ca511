"""The approximate (IVF) vector index: exact scores, coverage, persistence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memgraph import Memory
from memgraph.ivf import CoarseIndex
from memgraph.vectors import VectorIndex, normalize_rows


def clustered(count: int, dim: int = 32, clusters: int = 20, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((clusters, dim))
    rows = centers[rng.integers(0, clusters, count)] + 0.1 * rng.standard_normal((count, dim))
    return normalize_rows(rows)


def test_training_is_deterministic_and_covers_every_row() -> None:
    rows = clustered(3000)
    first, second = CoarseIndex.train(rows), CoarseIndex.train(rows)
    assert first.covered == 3000
    assert np.array_equal(first.labels, second.labels)
    assert sorted(np.concatenate(first.lists()).tolist()) == list(range(3000))


def test_approximate_search_returns_exact_scores_of_the_rows_it_visits() -> None:
    rows = clustered(4000)
    index = VectorIndex("m")
    index.add([f"obs-{i}" for i in range(4000)], rows)
    exact = index.search(rows[7], 10)
    index.coarse = CoarseIndex.train(index.rows(0, 4000))
    approximate = index.search(rows[7], 10)
    assert approximate[0] == ("obs-7", pytest.approx(1.0, abs=1e-5))
    found = dict(approximate)
    for obs_id, score in exact:
        if obs_id in found:
            assert found[obs_id] == pytest.approx(score, abs=1e-5)
    overlap = len(set(found) & {obs_id for obs_id, _ in exact})
    assert overlap >= 8  # clustered data: the nearest lists hold the true neighbours


def test_rows_added_after_training_are_searched_too() -> None:
    rows = clustered(3000)
    index = VectorIndex("m")
    index.add([f"obs-{i}" for i in range(2000)], rows[:2000])
    index.coarse = CoarseIndex.train(index.rows(0, 2000))
    index.add([f"obs-{i}" for i in range(2000, 3000)], rows[2000:])
    assert index.coarse.covered == 3000  # new rows are assigned to lists as they come
    assert index.search(rows[2500], 1)[0][0] == "obs-2500"
    index.discard(["obs-2500"])
    assert all(obs_id != "obs-2500" for obs_id, _ in index.search(rows[2500], 5))


def test_the_index_is_saved_at_checkpoints_and_loaded_with_the_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memgraph.core

    monkeypatch.setattr(memgraph.core, "IVF_MIN_ROWS", 50)
    texts = [f"Person{i} works at Company{i % 7} on project {i % 13}." for i in range(120)]
    with Memory(tmp_path / "mem", scope="s", provider="mock") as memory:
        memory.remember_many(texts)
        assert memory.wait_for_index(30)
        assert memory._vectors is not None and memory._vectors.coarse is not None
        memory.checkpoint()
    assert (tmp_path / "mem" / "s" / "vectors.ivf.npz").exists()
    with Memory(tmp_path / "mem", scope="s", provider="mock") as memory:
        memory.recall("company", rerank=False)
        assert memory._vectors is not None and memory._vectors.coarse is not None
        assert memory._training is None  # loaded, not retrained
        assert "works at Company3" in memory.recall("where does person10 work", rerank=False)


def test_a_model_change_drops_the_saved_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memgraph.providers.mock import HashEmbedder, MockChatModel

    import memgraph.core
    from memgraph import Provider

    monkeypatch.setattr(memgraph.core, "IVF_MIN_ROWS", 50)
    texts = [f"Person{i} works at Company{i % 7}." for i in range(80)]
    with Memory(tmp_path / "mem", scope="s", provider="mock") as memory:
        memory.remember_many(texts)
        assert memory.wait_for_index(30)
        memory.checkpoint()
    ivf = tmp_path / "mem" / "s" / "vectors.ivf.npz"
    assert ivf.exists()
    other = Provider("other", MockChatModel(), HashEmbedder(64))
    with Memory(tmp_path / "mem", scope="s", provider=other) as memory:
        memory.recall("company", rerank=False)  # re-embeds every fact with the new model
        assert memory.wait_for_index(30)
        vectors = memory._vectors
        assert vectors is not None and vectors.model == "mock-hash-64"
        coarse = vectors.coarse
        assert coarse is None or coarse.centroids.shape[1] == 64
        memory.checkpoint()  # the first checkpoint rewrites every vector in the new space
    if ivf.exists():  # only an index of the new vectors may remain
        with np.load(ivf) as saved:
            assert saved["centroids"].shape[1] == 64
