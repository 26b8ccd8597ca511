"""The approximate (IVF) vector index: exact scores, coverage, persistence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memgraph import Memory
from memgraph.retrieval.ivf import CoarseIndex
from memgraph.retrieval.vectors import VectorIndex, normalize_rows


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
    after = [obs_id for obs_id, _ in index.search(rows[2500], 5)]
    assert len(after) == 5 and "obs-2500" not in after


def test_the_index_is_saved_at_checkpoints_and_loaded_with_the_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memgraph.engine.core

    monkeypatch.setattr(memgraph.engine.core, "IVF_MIN_ROWS", 50)
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

    import memgraph.engine.core
    from memgraph import Provider

    monkeypatch.setattr(memgraph.engine.core, "IVF_MIN_ROWS", 50)
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


def test_max_rows_caps_the_rows_visited_in_whole_lists() -> None:
    rows = clustered(4000)
    coarse = CoarseIndex.train(rows)
    sizes = sorted(len(found) for found in coarse.lists())
    visited = coarse.candidates(rows[11], max_rows=1)
    assert len(visited) <= sizes[-1]  # one list: the nearest
    assert 11 in visited.tolist()
    capped = coarse.candidates(rows[11], max_rows=150)  # under the 240 rows of 6%
    default = coarse.candidates(rows[11])  # about 6% of the rows
    nearest = coarse.probes(rows[11], max_rows=150)[0]
    assert len(capped) <= 150 or len(nearest) == 1  # within the cap, or the nearest list
    assert len(default) >= int(4000 * 0.06)
    assert set(capped.tolist()) <= set(default.tolist())
    assert np.all(np.diff(capped) > 0)  # ascending, as gather needs


def test_probes_of_many_queries_match_one_query_at_a_time() -> None:
    rows = clustered(3000)
    coarse = CoarseIndex.train(rows)
    together = coarse.probes(rows[:20], max_rows=400)
    for query, numbers in zip(rows[:20], together, strict=True):
        assert numbers.tolist() == coarse.probes(query, max_rows=400)[0].tolist()


def test_extending_keeps_labels_and_list_sizes_in_step() -> None:
    rows = clustered(3000)
    coarse = CoarseIndex.train(rows[:2000])
    coarse.lists()
    for start in range(2000, 2500, 7):  # many small appends, as writes do
        coarse.extend(rows[start : min(start + 7, 2500)])
    coarse.extend(rows[2500:3000])  # and a large one, as a bulk chunk does
    assert coarse.covered == 3000 and len(coarse.labels) == 3000
    fresh = CoarseIndex(coarse.centroids, coarse.labels)
    assert [found.tolist() for found in fresh.lists()] == [f.tolist() for f in coarse.lists()]
    assert sorted(np.concatenate(coarse.lists()).tolist()) == list(range(3000))
    assert coarse.probes(rows[5])[0].tolist() == fresh.probes(rows[5])[0].tolist()


def test_search_many_visits_the_same_rows_as_search() -> None:
    rows = clustered(4000)
    index = VectorIndex("m")
    index.add([f"obs-{i}" for i in range(4000)], rows)
    # Trained on a prefix (as a background build is): the other rows are visited
    # by every query.
    index.coarse = CoarseIndex.train(index.rows(0, 3500))
    index.discard(["obs-3", "obs-3600"])
    queries = rows[[3, 10, 3600, 3999]]
    for max_rows in (None, 200):
        many = index.search_many(queries, 8, 0.2, max_rows=max_rows)
        for query, found in zip(queries, many, strict=True):
            single = index.search(query, 8, 0.2, max_rows=max_rows)
            assert [i for i, _ in found] == [i for i, _ in single]
            assert "obs-3" not in dict(found) and "obs-3600" not in dict(found)


def test_dot_rows_is_the_matrix_vector_product() -> None:
    from memgraph.retrieval.ivf import dot_rows

    rng = np.random.default_rng(1)
    matrix = rng.standard_normal((300, 24)).astype(np.float32)
    vector = rng.standard_normal(24).astype(np.float32)
    result = dot_rows(matrix, vector)
    assert result.dtype == np.float32 and result.shape == (300,)
    assert np.allclose(result, matrix @ vector, atol=1e-4)


def _probes_one_by_one(
    coarse: CoarseIndex, queries: np.ndarray, fraction: float, max_rows: int | None
) -> list[list[int]]:
    """The lists to visit, as the rule says, one query at a time (the reference)."""
    sizes = np.array([len(found) for found in coarse.lists()])
    wanted = max(1, int(coarse.covered * fraction))
    cap = max_rows if max_rows is not None and max_rows < wanted else None
    result = []
    for query in queries:
        order = np.argsort(-(coarse.centroids @ query), kind="stable")
        held = np.cumsum(sizes[order])
        if cap is None:
            count = min(int(np.searchsorted(held, wanted)) + 1, len(order))
        else:
            count = max(1, int(np.searchsorted(held, cap, side="right")))
        result.append([int(n) for n in order[:count] if sizes[n] > 0])
    return result


@pytest.mark.parametrize("lists", [20, 200])  # 200 lists of ~15 rows: the nearest 32 fall short
@pytest.mark.parametrize("max_rows", [None, 1, 150])
def test_probes_of_a_batch_follow_the_rule_query_by_query(lists: int, max_rows: int | None) -> None:
    rows = clustered(3000, clusters=lists, seed=3)
    coarse = CoarseIndex(normalize_rows(rows[:: 3000 // lists][:lists]), np.zeros(0, np.int32))
    coarse.extend(rows)
    queries = clustered(40, clusters=lists, seed=4)
    fraction = 0.2 if lists == 200 else 0.06
    together = [found.tolist() for found in coarse.probes(queries, fraction, max_rows)]
    assert together == _probes_one_by_one(coarse, queries, fraction, max_rows)


def test_block_products_stay_exact_and_file_rows_as_a_matrix_product_would() -> None:
    """Bulk windows and chunks score rows against centroids with single-threaded
    products (no BLAS thread pool left spinning): same scores, same lists."""
    from memgraph.retrieval.ivf import SINGLE_THREAD_ROWS, _nearest, dot_block

    rows = clustered(3000)
    index = CoarseIndex.train(rows)
    block = rows[:500]
    assert np.allclose(dot_block(block, index.centroids), block @ index.centroids.T, atol=1e-5)
    assert np.array_equal(
        _nearest(block, index.centroids), np.argmax(block @ index.centroids.T, axis=1)
    )
    assert len(rows) <= SINGLE_THREAD_ROWS
    assert np.array_equal(_nearest(rows, index.centroids), index.labels)
    many = index.probes(rows[:300], max_rows=200)
    one_by_one = [index.probes(row, max_rows=200)[0] for row in rows[:300]]
    assert all(np.array_equal(a, b) for a, b in zip(many, one_by_one, strict=True))
    assert _nearest(rows[:0], index.centroids).shape == (0,)
    for dim in (7, 384, 1536):  # tiles of every size, rows and columns not a multiple
        rng = np.random.default_rng(dim)
        left, right = rng.random((61, dim), np.float32), rng.random((29, dim), np.float32)
        assert np.allclose(dot_block(left, right), left @ right.T, rtol=1e-5)
    assert dot_block(rows[:0], index.centroids).shape == (0, len(index.centroids))
