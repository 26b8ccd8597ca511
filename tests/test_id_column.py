"""IdColumn: ids held as numbers behave like a list of strings with a dict of positions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memgraph.graph.lazy import LazyDocs, NameMap, PostingIndex, Postings
from memgraph.graph.saved import RelationEnds
from memgraph.id_column import (
    IdColumn,
    id_column,
    joined_columns,
    joined_ids,
    parse_numbers,
    split_id,
)

_PREFIXES = ["obs-", "episode-", "e", "rel-"]
_ids = st.lists(
    st.tuples(st.sampled_from(_PREFIXES), st.integers(0, 10**18 - 1)).map(
        lambda pair: f"{pair[0]}{pair[1]}"
    ),
    min_size=1,
    max_size=40,
)
_probes = st.one_of(
    _ids.map(lambda ids: ids[0]),
    st.sampled_from(["obs-01", "obs-", "obs-x", "episode-", "e-1", "", "rel-1.0", "obs-١"]),
    st.tuples(st.sampled_from(_PREFIXES), st.integers(0, 50)).map(lambda p: f"{p[0]}{p[1]}"),
)


@settings(max_examples=300, deadline=None)
@given(_ids, st.lists(_probes, max_size=8))
def test_a_column_reads_and_finds_ids_like_a_list_and_a_dict(
    ids: list[str], probes: list[str]
) -> None:
    column = id_column(ids)
    assert isinstance(column, IdColumn)
    assert list(column) == ids and column.tolist() == ids and len(column) == len(ids)
    assert [column[i] for i in range(-len(ids), len(ids))] == ids + ids
    positions = dict(zip(ids, range(len(ids)), strict=True))  # the last of a repeat wins
    for probe in [*ids, *probes]:
        assert column.position(probe) == positions.get(probe)
        assert (probe in column) == (probe in positions)
    other = id_column(probes) if probes else None
    if isinstance(other, IdColumn):
        expected = [positions.get(p, -1) for p in probes]
        assert column.positions_of(other).tolist() == expected


@given(_ids, _ids)
def test_an_extended_column_equals_the_joined_lists(saved: list[str], more: list[str]) -> None:
    column = id_column(saved)
    joined = joined_ids(column, more)
    assert list(joined) == saved + more
    assert list(joined_ids(saved, more)) == saved + more


def test_ids_that_are_not_a_prefix_and_a_number_stay_a_list() -> None:
    assert id_column(["a", "b"]) == ["a", "b"] and not isinstance(id_column(["a"]), IdColumn)
    assert not isinstance(id_column(["x-1", "y"]), IdColumn)
    column = id_column(["obs-1", "obs-2"])
    assert isinstance(column, IdColumn)
    assert joined_ids(column, ["no number here"]) == ["obs-1", "obs-2", "no number here"]


def test_leading_zeros_and_other_digits_are_not_ids_of_the_column() -> None:
    column = IdColumn(["obs-"], [0, 7, 10])
    assert column.position("obs-0") == 0 and column.position("obs-10") == 2
    for probe in ("obs-00", "obs-07", "obs-٧", "obs-+7", "obs- 7", "Obs-7", "obs-7 "):
        assert column.position(probe) is None
    assert split_id("obs-" + "1" * 19, ["obs-"]) is None  # beyond an int64's sure digits
    assert parse_numbers(["obs-1", "obs-02"], "obs-") is None
    assert parse_numbers(["obs-1", "obs-22"], "obs-").tolist() == [1, 22]


def test_sparse_numbers_are_found_without_a_table_as_large_as_the_highest() -> None:
    column = IdColumn(["x"], [5, 10**15, 7])
    assert column.position(f"x{10**15}") == 1 and column.position("x6") is None
    assert column.positions_of(IdColumn(["x"], [7, 8, 10**15])).tolist() == [2, -1, 1]


def test_a_slice_and_a_take_are_columns_of_the_picked_ids() -> None:
    column = id_column(["obs-1", "episode-4", "obs-9"])
    assert isinstance(column, IdColumn)
    assert column[1:].tolist() == ["episode-4", "obs-9"]
    assert column.take(np.array([2, 0])).tolist() == ["obs-9", "obs-1"]
    assert column.with_prefix("episode-").tolist() == [False, True, False]
    with pytest.raises(ValueError):
        column.index("obs-2")
    assert column.index("obs-9") == 2


def test_lazy_docs_over_a_column_find_saved_keys_and_keep_new_ones() -> None:
    column = IdColumn(["ent-"], [1, 2, 3])
    docs: LazyDocs[str] = LazyDocs(column, lambda ordinal: f"doc {ordinal}")
    assert docs["ent-2"] == "doc 1" and "ent-4" not in docs and docs.get("ent-02") is None
    docs["ent-4"] = "new"
    del docs["ent-1"]
    assert list(docs) == ["ent-2", "ent-3", "ent-4"] and len(docs) == 3
    docs2: LazyDocs[str] = LazyDocs(IdColumn(["ent-"], [1, 2]), lambda o: f"doc {o}")
    docs2["ent-9"] = "new"
    docs2.rebase(IdColumn(["ent-"], [1, 2, 9]))
    assert docs2.ordinal("ent-9") == 2 and docs2.added() == []


def test_a_name_map_prefers_the_first_saved_holder_and_records_changes() -> None:
    names = NameMap(["ada", "bob", "ada"], IdColumn(["ent-"], [1, 2, 3]))
    assert names.get("ada") == "ent-1" and names["bob"] == "ent-2" and names.get("cy") is None
    names.setdefault("ada", "ent-9")
    assert names["ada"] == "ent-1"
    names["cy"] = "ent-4"
    del names["bob"]
    assert "bob" not in names and sorted(names) == ["ada", "cy"] and len(names) == 2
    with pytest.raises(KeyError):
        del names["bob"]


def test_relation_ends_read_entity_ids_and_dangling_names() -> None:
    entity_ids = IdColumn(["ent-"], [1, 2])
    ordinals = np.array([0, -1, 1], dtype=np.int64)
    ends = RelationEnds(ordinals, entity_ids, {"1": ["ent-1", "gone"]}, 1)
    assert (
        list(ends) == ["ent-1", "gone", "ent-2"]
        and ends[-2] == "gone"
        and ends[1:]
        == [
            "gone",
            "ent-2",
        ]
    )


def test_a_posting_index_answers_membership_without_building_a_saved_term() -> None:
    saved = Postings(["smith", "jones"], np.array([0, 3, 4]), np.array([0, 1, 2, 1], np.int32))
    index = PostingIndex(saved, IdColumn(["ent-"], [1, 2, 3]))
    assert "smith" in index and "nobody" not in index
    assert index._sets == {}  # decided from the saved counts
    index.discard("jones", "ent-2")
    assert "jones" not in index
    index.add("jones", "ent-9")
    assert "jones" in index and index["smith"] == {"ent-1", "ent-2", "ent-3"}


def test_a_column_read_often_keeps_a_dict_and_answers_the_same() -> None:
    column = IdColumn(["obs-"], np.arange(0, 3000, 3))
    answers = [column.position(f"obs-{n}") for n in range(3000)]
    assert column._complete  # a thousand ids parsed: far more than 1/64 of them
    assert [column.position(f"obs-{n}") for n in range(3000)] == answers
    assert answers[3] == 1 and answers[4] is None and column.position("obs-03") is None


def test_a_joined_column_keeps_what_the_first_found_and_the_later_of_a_repeat() -> None:
    first = IdColumn(["obs-"], np.arange(0, 3000, 3))
    for n in range(3000):
        first.position(f"obs-{n}")
    assert first._complete
    joined = joined_columns(first, IdColumn(["obs-"], [3, 9000]))
    assert joined._complete and joined.position("obs-3") == 1000
    assert joined.position("obs-9000") == 1001 and joined.position("obs-6") == 2
    partly = IdColumn(["obs-"], [1, 2])
    assert partly.position("obs-1") == 0
    again = joined_columns(partly, IdColumn(["obs-"], [1]))
    assert again.position("obs-1") == 2 and again.position("obs-2") == 1


def test_columns_equal_when_their_ids_are_equal_however_they_are_held() -> None:
    single = IdColumn(["obs-"], [1, 2])
    assert single == IdColumn(["obs-"], [1, 2], [0, 0]) == ["obs-1", "obs-2"]
    listed = ["obs-1", "obs-2"]  # a list on the left: the column answers for it
    assert listed == single and single != IdColumn(["obs-"], [1, 3])
    mixed = IdColumn(["obs-", "episode-"], [1, 2], [0, 1])
    assert mixed == IdColumn(["episode-", "obs-"], [1, 2], [1, 0])
    assert mixed != IdColumn(["obs-", "episode-"], [1, 2], [0, 0])
