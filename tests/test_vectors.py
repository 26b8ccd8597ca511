"""The vector index: exact cosine top-k over a checkpointed base and a growable tail."""

from __future__ import annotations

import numpy as np
import pytest

from memgraph.id_column import MAX_PREFIXES, IdColumn, as_column
from memgraph.retrieval import vectors as vectors_module
from memgraph.retrieval.vectors import VectorIndex, normalize_rows


def unit(*values: float) -> np.ndarray:
    return normalize_rows(np.array(values, np.float32))[0]


def index_of(vectors: dict[str, list[float]], model: str = "m") -> VectorIndex:
    index = VectorIndex(model)
    index.add(list(vectors), np.array(list(vectors.values()), np.float32))
    return index


def brute_force(index: VectorIndex, query: np.ndarray, live: set[str]) -> list[tuple[str, float]]:
    rows = index.rows(0, len(index))
    scored = {}
    for row, obs_id in enumerate(index.ids()):
        if obs_id in live and index.row(obs_id) == row:
            scored[obs_id] = float(rows[row] @ unit(*query))
    return sorted(scored.items(), key=lambda pair: -pair[1])


def test_rows_are_stored_normalized_as_float32() -> None:
    index = index_of({"a": [3, 4], "zero": [0, 0]})
    rows = index.rows(0, 2)
    assert rows.dtype == np.float32
    assert rows[0].tolist() == pytest.approx([0.6, 0.8])
    assert rows[1].tolist() == [0.0, 0.0]
    assert index.dimension == 2 and len(index) == 2


def test_search_returns_the_top_k_by_cosine_best_first() -> None:
    index = index_of({"east": [1, 0], "north": [0, 1], "northeast": [1, 1], "west": [-1, 0]})
    hits = index.search(np.array([2.0, 0.2]), k=2)
    assert [obs_id for obs_id, _ in hits] == ["east", "northeast"]
    assert hits[0][1] == pytest.approx(float(unit(1, 0) @ unit(2, 0.2)), abs=1e-6)
    assert hits[0][1] >= hits[1][1]


def test_search_applies_the_threshold() -> None:
    index = index_of({"east": [1, 0], "north": [0, 1], "northeast": [1, 1]})
    hits = index.search(np.array([1.0, 0.0]), k=10, threshold=0.5)
    assert [obs_id for obs_id, _ in hits] == ["east", "northeast"]
    assert all(score >= 0.5 for _, score in hits)


def test_search_with_k_larger_than_the_index_returns_every_live_row() -> None:
    index = index_of({"a": [1, 0], "b": [0, 1]})
    assert {obs_id for obs_id, _ in index.search(np.array([1.0, 1.0]), k=50)} == {"a", "b"}


def test_search_of_an_empty_index_or_a_wrong_dimension_finds_nothing() -> None:
    assert VectorIndex("m").search(np.array([1.0, 0.0]), k=3) == []
    index = index_of({"a": [1, 0]})
    assert index.search(np.array([1.0, 0.0, 0.0]), k=3) == []
    assert index.search(np.array([1.0, 0.0]), k=0) == []


def test_discarded_rows_are_masked_and_can_be_revived() -> None:
    index = index_of({"east": [1, 0], "northeast": [1, 1], "north": [0, 1]})
    index.discard(["east", "unknown"])
    assert [obs_id for obs_id, _ in index.search(np.array([1.0, 0.0]), k=3)] == [
        "northeast",
        "north",
    ]
    index.revive(["east"])
    assert index.search(np.array([1.0, 0.0]), k=1)[0][0] == "east"


def test_a_masked_row_is_never_returned_even_with_a_negative_threshold() -> None:
    index = index_of({"east": [1, 0], "west": [-1, 0]})
    index.discard(["west"])
    assert [obs_id for obs_id, _ in index.search(np.array([1.0, 0.0]), k=5, threshold=-1.0)] == [
        "east"
    ]


def test_set_live_makes_exactly_those_rows_searchable() -> None:
    index = index_of({"a": [1, 0], "b": [1, 0.1], "c": [1, 0.2]})
    index.set_live(["b", "nope"])
    assert [obs_id for obs_id, _ in index.search(np.array([1.0, 0.0]), k=3)] == ["b"]
    index.set_live(["a", "c"])
    assert {obs_id for obs_id, _ in index.search(np.array([1.0, 0.0]), k=3)} == {"a", "c"}


def test_replacing_a_vector_returns_the_id_once_with_its_new_vector() -> None:
    index = index_of({"a": [1, 0], "b": [0, 1]})
    index.add(["a"], np.array([[0, 1]], np.float32))
    hits = index.search(np.array([0.0, 1.0]), k=5)
    assert [obs_id for obs_id, _ in hits] == ["a", "b"] or [obs_id for obs_id, _ in hits] == [
        "b",
        "a",
    ]
    assert all(score == pytest.approx(1.0) for _, score in hits)
    assert index.ids() == ["a", "b", "a"]
    assert index.row("a") == 2
    ids, matrix = index.live_rows()
    assert ids == ["b", "a"]
    assert matrix.tolist() == [[0.0, 1.0], [0.0, 1.0]]


def test_a_base_with_a_repeated_id_serves_only_its_latest_row() -> None:
    base = normalize_rows(np.array([[1, 0], [0, 1], [0.6, 0.8]], np.float32))
    index = VectorIndex("m", None, base, ["a", "b", "a"])
    hits = index.search(np.array([1.0, 0.0]), k=5)
    assert [obs_id for obs_id, _ in hits] == ["a", "b"]
    assert hits[0][1] == pytest.approx(0.6)
    ids, _ = index.live_rows()
    assert ids == ["b", "a"]


def test_rows_span_the_base_and_the_tail() -> None:
    base = normalize_rows(np.eye(3, dtype=np.float32))
    index = VectorIndex("m", None, base, ["x", "y", "z"])
    index.add(["p", "q"], np.array([[1, 1, 0], [0, 1, 1]], np.float32))
    every = index.rows(0, 5)
    assert every.shape == (5, 3)
    assert index.rows(1, 4).tolist() == every[1:4].tolist()
    assert index.rows(3, 5).tolist() == every[3:5].tolist()
    assert index.rows(0, 2).tolist() == base[:2].tolist()
    assert index.rows(5, 5).shape == (0, 3)
    assert index.ids() == ["x", "y", "z", "p", "q"]
    assert [obs_id for obs_id, _ in index.search(np.array([0.0, 1.0, 1.0]), k=1)] == ["q"]
    assert index.search(np.array([1.0, 0.0, 0.0]), k=1)[0][0] == "x"


def test_a_base_longer_than_its_ids_uses_only_the_named_rows() -> None:
    base = normalize_rows(np.eye(3, dtype=np.float32))
    index = VectorIndex("m", None, base, ["x", "y"])
    assert len(index) == 2
    assert index.rows(0, 2).shape == (2, 3)
    assert [obs_id for obs_id, _ in index.search(np.array([0.0, 0.0, 1.0]), k=5)] == ["x", "y"]


def test_the_tail_grows_past_its_initial_capacity() -> None:
    rng = np.random.default_rng(7)
    index = VectorIndex("m")
    matrix = rng.standard_normal((700, 8)).astype(np.float32)
    for start in range(0, 700, 100):
        index.add([f"obs-{i}" for i in range(start, start + 100)], matrix[start : start + 100])
    assert len(index) == 700
    assert np.allclose(index.rows(0, 700), normalize_rows(matrix), atol=1e-6)
    query = rng.standard_normal(8).astype(np.float32)
    live = {f"obs-{i}" for i in range(700)}
    index.discard([f"obs-{i}" for i in range(0, 700, 3)])
    live -= {f"obs-{i}" for i in range(0, 700, 3)}
    expected = brute_force(index, query, live)[:10]
    hits = index.search(query, k=10)
    assert [obs_id for obs_id, _ in hits] == [obs_id for obs_id, _ in expected]


def test_adding_vectors_of_another_dimension_is_refused() -> None:
    index = index_of({"a": [1, 0]})
    with pytest.raises(ValueError, match="dimension"):
        index.add(["b"], np.array([[1, 0, 0]], np.float32))
    with pytest.raises(ValueError, match="2 ids but 1 vectors"):
        index.add(["b", "c"], np.array([[1, 0]], np.float32))


def test_similarities_score_the_named_rows_only() -> None:
    index = index_of({"east": [1, 0], "north": [0, 1], "northeast": [1, 1]})
    index.discard(["north"])  # expired facts still have a vector to compare
    scores = index.similarities(np.array([1.0, 0.0]), ["northeast", "north", "missing"])
    assert set(scores) == {"northeast", "north"}
    assert scores["northeast"] == pytest.approx(float(unit(1, 1) @ unit(1, 0)), abs=1e-6)
    assert scores["north"] == pytest.approx(0.0, abs=1e-6)
    assert VectorIndex("m").similarities(np.array([1.0]), ["a"]) == {}


def test_search_many_of_an_exact_index_matches_search() -> None:
    rng = np.random.default_rng(5)
    index = VectorIndex("m")
    index.add([f"obs-{i}" for i in range(200)], rng.standard_normal((200, 8)))
    index.discard(["obs-7"])
    queries = rng.standard_normal((70, 8))  # more than one block of 64
    many = index.search_many(queries, 4, 0.1)
    assert len(many) == 70
    for query, found in zip(queries, many, strict=True):
        assert [i for i, _ in found] == [i for i, _ in index.search(query, 4, 0.1)]
    assert index.search_many(np.zeros((0, 8)), 4) == []
    assert VectorIndex("m").search_many(queries, 4) == [[] for _ in range(70)]


def test_the_added_rows_grow_in_place_and_a_view_in_use_keeps_its_rows() -> None:
    """Growing the rows added since the checkpoint resizes them in place when nothing
    else holds them, and copies them when a view (a search reading them) is in use."""
    rng = np.random.default_rng(0)
    index = VectorIndex("m")
    added = []
    for batch in range(12):
        rows = rng.standard_normal((300, 8)).astype(np.float32)
        index.add([f"obs-{batch * 300 + n}" for n in range(300)], rows)
        added.append(rows / np.linalg.norm(rows, axis=1, keepdims=True))
    view = index.tail
    seen = view.copy()
    index.add([f"obs-x{n}" for n in range(5000)], rng.standard_normal((5000, 8)))
    assert np.array_equal(view, seen)  # the reader's rows are untouched
    assert np.allclose(index.tail[:3600], np.concatenate(added))
    assert index.search(added[0][5], 1)[0][0] == "obs-5"


def test_adding_batches_keeps_the_row_bookkeeping_of_adding_row_by_row() -> None:
    """Batches with replaced ids, repeated ids and episodes: the same rows, liveness and
    kinds as adding each id alone."""
    rng = np.random.default_rng(3)
    batched, single = VectorIndex("m"), VectorIndex("m")
    for _ in range(80):
        count = int(rng.integers(1, 30))
        ids = [f"{rng.choice(['obs-', 'episode-'])}{rng.integers(0, 200)}" for _ in range(count)]
        rows = rng.standard_normal((count, 8)).astype(np.float32)
        batched.add(ids, rows)
        for obs_id, row in zip(ids, rows, strict=True):
            single.add([obs_id], row[None])
    size = len(single)
    assert len(batched) == size
    assert [batched.row(i) for i in batched.ids()] == [single.row(i) for i in single.ids()]
    assert np.array_equal(batched._alive[:size], single._alive[:size])
    assert np.array_equal(batched._episode[:size], single._episode[:size])
    assert batched._episode[:size].any() and not batched._alive[:size].all()


# ------------------------------------------------------------------- ids held as a column
def test_ids_of_prefixes_and_numbers_become_a_column_and_others_do_not() -> None:
    mixed = as_column(["obs-3", "episode-1", "obs-6", "episode-4", "obs-10"])
    assert isinstance(mixed, IdColumn) and mixed.prefixes == ("obs-", "episode-")
    assert mixed.tolist() == ["obs-3", "episode-1", "obs-6", "episode-4", "obs-10"]
    single = as_column([f"obs-{n}" for n in range(5)])
    assert isinstance(single, IdColumn) and single.codes is None
    assert as_column([]) is None
    nested = as_column(["obs-1", "obs-x2", "e0", "episode-0"])  # a prefix inside another
    assert nested is not None and nested.prefixes == ("obs-", "obs-x", "e", "episode-")
    assert nested.tolist() == ["obs-1", "obs-x2", "e0", "episode-0"]
    for ids in (
        ["obs-1", "abc"],  # no number
        ["obs-1", "obs-01"],  # a leading zero
        ["obs-1", "obsé-2"],  # not ASCII
        ["obs-1", "obs\x00-2"],  # a NUL inside an id
        ["obs-1", "obs-1234567890123456789"],  # beyond 18 digits
        [f"p{n}-1" for n in range(MAX_PREFIXES + 1)],
    ):
        assert as_column(ids) is None, ids


def pair_of_indexes(monkeypatch: pytest.MonkeyPatch) -> tuple[VectorIndex, VectorIndex, list[str]]:
    """The same rows twice: base ids held as a column, and as a list (with a dict)."""
    rng = np.random.default_rng(11)
    ids = [f"{rng.choice(['obs-', 'episode-'])}{rng.integers(0, 300)}" for _ in range(600)]
    base = normalize_rows(rng.standard_normal((600, 8)).astype(np.float32))
    column = VectorIndex("m", None, base, ids)
    with monkeypatch.context() as patched:
        patched.setattr(vectors_module, "as_column", lambda ids: None)
        listed = VectorIndex("m", None, base, ids)
    added = [f"{rng.choice(['obs-', 'episode-'])}{rng.integers(200, 400)}" for _ in range(300)]
    rows = rng.standard_normal((300, 8)).astype(np.float32)
    for index in (column, listed):
        index.add(added, rows)
    return column, listed, [f"obs-{n}" for n in range(450)] + ["episode-5", "nope", "obs-007"]


def test_an_index_with_a_column_of_ids_behaves_as_one_with_a_list(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    column, listed, wanted = pair_of_indexes(monkeypatch)
    assert isinstance(column.base_ids, IdColumn) and isinstance(listed.base_ids, list)
    assert column.ids() == listed.ids()
    assert [column.row(i) for i in wanted] == [listed.row(i) for i in wanted]
    assert [i in column for i in wanted] == [i in listed for i in wanted]
    as_ids = as_column(wanted[:450])
    assert as_ids is not None
    for keys in (wanted, wanted[:450], as_ids, wanted[:10]):
        assert column.rows_of(keys).tolist() == listed.rows_of(keys).tolist()
        assert column.missing(keys) == listed.missing(keys)
        assert np.array_equal(column.mask_for(keys), listed.mask_for(keys))
    query = np.random.default_rng(2).standard_normal(8)
    assert column.similarities(query, wanted) == listed.similarities(query, wanted)
    for kind in (None, "facts", "episodes"):
        assert column.search(query, 20, kind=kind) == listed.search(query, 20, kind=kind)
    column.set_live(as_ids)
    listed.set_live(wanted[:450])
    assert column.search(query, 50) == listed.search(query, 50)
    column.discard(wanted[:100])
    listed.discard(wanted[:100])
    assert column.search(query, 50) == listed.search(query, 50)
    assert column.live_rows()[0] == listed.live_rows()[0]
    assert list(column.compact_ids()) == listed.ids()
    assert column.resident_bytes() < listed.resident_bytes()


def test_compact_ids_are_a_column_only_when_every_id_can_be_one() -> None:
    base = normalize_rows(np.eye(3, dtype=np.float32))
    index = VectorIndex("m", None, base, ["obs-1", "episode-2", "obs-3"])
    assert index.compact_ids() is index.base_ids
    index.add(["kv-7", "obs-4"], np.eye(3, dtype=np.float32)[:2])
    ids = index.compact_ids()
    assert isinstance(ids, IdColumn)
    assert ids.prefixes == ("obs-", "episode-", "kv-")
    assert ids.tolist() == ["obs-1", "episode-2", "obs-3", "kv-7", "obs-4"]
    index.add(["Alice"], np.eye(3, dtype=np.float32)[:1])
    assert index.compact_ids() == index.ids() and not isinstance(index.compact_ids(), IdColumn)
    fresh = index_of({"obs-1": [1, 0], "episode-1": [0, 1]})
    assert isinstance(fresh.compact_ids(), IdColumn)
    assert index_of({"a": [1, 0]}).compact_ids() == ["a"]
