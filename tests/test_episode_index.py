"""The episode index: BM25F postings of remembered texts, saved and reloaded whole."""

from __future__ import annotations

import pytest

from memgraph.retrieval.episode_index import (
    CONTEXT_GAP_MS,
    EpisodeIndex,
    OlderIndexFormat,
    episode_terms,
)

MINUTE = 60_000


def dialogue() -> EpisodeIndex:
    index = EpisodeIndex()
    index.add("e-1", "Sanjay told me he's leaving", at_ms=0, speaker="Marcus", conversation="c")
    index.add("e-2", "where's he going?", at_ms=MINUTE, speaker="Dana", conversation="c")
    index.add("e-3", "Stripe.", at_ms=2 * MINUTE, speaker="Marcus", conversation="c")
    index.add("e-4", "a new day", at_ms=CONTEXT_GAP_MS * 2, speaker="Dana", conversation="c")
    index.add("e-5", "other chat", at_ms=CONTEXT_GAP_MS * 2, speaker="Ana", conversation="d")
    return index


def test_a_turn_knows_the_turn_it_answers_and_finds_it_through_its_words() -> None:
    index = dialogue()
    assert index.context_of("e-3") == "e-2"
    assert index.context_of("e-1") is None  # the first turn
    assert index.context_of("e-4") is None  # hours later: a new exchange
    assert index.context_of("e-5") is None  # another conversation
    found = dict(index.search(episode_terms("Sanjay going")))
    assert "e-3" in found  # "Stripe." holds neither word: its context does


def test_the_context_survives_saving_and_a_purge_of_the_turn_before_drops_it() -> None:
    index = dialogue()
    assert EpisodeIndex.decode(index.encode()).context_of("e-3") == "e-2"
    index.remove(["e-2"])
    assert index.context_of("e-3") is None
    saved = EpisodeIndex.decode(index.encode())
    assert saved.context_of("e-3") is None
    assert saved.context_of("e-2") is None


def test_an_index_saved_in_the_older_format_asks_to_be_rebuilt() -> None:
    data = bytearray(dialogue().encode())
    data[:8] = b"MGEPIDX2"
    with pytest.raises(OlderIndexFormat):
        EpisodeIndex.decode(bytes(data))
