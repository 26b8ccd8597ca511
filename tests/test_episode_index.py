"""The episode index: BM25F postings of remembered texts, saved and reloaded whole."""

from __future__ import annotations

import zlib
from collections.abc import Callable

import numpy as np
import pytest

from memgraph.retrieval.episode_index import (
    CONTEXT_GAP_MS,
    OLDER_MAGICS,
    EpisodeIndex,
    OlderIndexFormat,
    episode_terms,
)

MINUTE = 60_000


def chat(*turns: tuple[str, str]) -> EpisodeIndex:
    """One conversation's ``(speaker, text)`` turns a minute apart, as e-1, e-2, ..."""
    index = EpisodeIndex()
    for n, (speaker, text) in enumerate(turns):
        index.add(f"e-{n + 1}", text, at_ms=n * MINUTE, speaker=speaker, conversation="c")
    return index


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


def test_a_turn_speaks_to_the_other_speaker_of_its_exchange() -> None:
    index = dialogue()
    index.add("e-6", "and you?", at_ms=CONTEXT_GAP_MS * 2 + MINUTE, speaker="Ana", conversation="d")
    assert index.addressee("e-2") == "Marcus"  # the speaker before
    assert index.addressee("e-3") == "Dana"
    assert index.addressee("e-1") == "Dana"  # the first turn: the one who answers it
    assert index.addressee("e-4") is None  # alone in its exchange
    assert index.addressee("e-6") is None  # the same speaker going on
    assert EpisodeIndex.decode(index.encode()).addressee("e-3") == "Dana"


def test_texts_holding_any_of_some_words_are_found_among_those_asked_about() -> None:
    index = dialogue()
    within = np.ones(len(index), dtype=bool)
    found = index.holding_any(episode_terms("Stripe leaving"), within)
    assert set(found) == {"e-1", "e-3"}  # their own words, not only their context
    within[index.ordinal["e-3"]] = False
    assert set(index.holding_any(episode_terms("Stripe leaving"), within)) == {"e-1"}
    index.remove(["e-1"])
    assert index.holding_any(episode_terms("leaving"), np.ones(len(index), dtype=bool)) == {}


def test_a_turn_speaks_of_whom_the_turns_before_it_name_but_a_note_does_not() -> None:
    index = dialogue()
    index.add("n-1", "Alice prefers green tea", at_ms=CONTEXT_GAP_MS * 4, conversation="n")
    index.add("n-2", "Dana works in Porto", at_ms=CONTEXT_GAP_MS * 4 + MINUTE, conversation="n")
    for saved in (index, EpisodeIndex.decode(index.encode())):
        sanjay = saved.mentioning([episode_terms("Sanjay")])
        # "where's he going?" goes on from "Sanjay told me he's leaving"
        assert [saved.ids[o] for o in np.flatnonzero(sanjay)] == ["e-1", "e-2", "e-3"]
        alice = saved.mentioning([episode_terms("Alice")])
        assert [saved.ids[o] for o in np.flatnonzero(alice)] == ["n-1"]
        assert saved.holding([episode_terms("Alice")])[saved.ordinal["n-2"]]  # its context


def test_a_verb_is_found_in_any_of_its_forms() -> None:
    index = EpisodeIndex()
    index.add("e-1", "I made a bowl with my own hands", at_ms=0, conversation="a")
    index.add("e-2", "we make pizza on fridays", at_ms=CONTEXT_GAP_MS * 2, conversation="b")
    index.add("e-3", "the kids loved it", at_ms=CONTEXT_GAP_MS * 4, conversation="c")
    assert {e for e, _ in index.search(episode_terms("What did Melanie make?"))} >= {
        "e-1",
        "e-2",
    }
    assert "e-2" in dict(index.search(episode_terms("who made pizza")))


def test_the_turns_after_one_stop_where_its_conversation_breaks_off() -> None:
    index = dialogue()
    assert index.turns_after("e-1", 2) == ["e-2", "e-3"]
    assert index.turns_after("e-1", 1) == ["e-2"]
    # "a new day" begins after a long gap: it answers nothing said before it
    assert index.turns_after("e-2", 4) == ["e-3"]
    assert index.turns_after("e-5", 3) == []


def test_a_reply_to_a_question_about_the_past_is_marked() -> None:
    index = EpisodeIndex()
    index.add("e-1", "did you have a good birthday?", at_ms=0, speaker="Tariq", conversation="c")
    index.add("e-2", "the best. dinner on friday", at_ms=MINUTE, speaker="Wren", conversation="c")
    index.add("e-3", "and drinks after", at_ms=2 * MINUTE, speaker="Wren", conversation="c")
    for saved in (index, EpisodeIndex.decode(index.encode())):
        assert saved.after_past_question("e-2")
        assert not saved.after_past_question("e-3")  # the same speaker going on
        assert not saved.after_past_question("e-1")


def test_a_turn_with_no_word_of_its_own_borrows_none_from_the_turn_before() -> None:
    index = chat(
        ("Dana", "I have a work thing to ask you"),
        ("Marcus", "you should"),
        ("Marcus", "Shoot."),
        ("Marcus", "DANA"),
    )
    for saved in (index, EpisodeIndex.decode(index.encode())):
        assert saved.says_nothing("e-2")  # stop words and the speaker's name only
        assert saved.says_nothing("e-4")  # the other speaker's name only
        assert not saved.says_nothing("e-3") and not saved.says_nothing("e-1")
        found = dict(saved.search(episode_terms("work")))
        assert "e-1" in found and "e-2" not in found


def test_a_new_session_opened_by_the_other_speakers_name_says_nothing() -> None:
    day = 24 * 60 * MINUTE
    index = EpisodeIndex()
    index.add("e-1", "the bridge opens friday", at_ms=0, speaker="Kwame", conversation="c")
    index.add("e-2", "ok!", at_ms=MINUTE, speaker="Lena", conversation="c")
    # days later, nothing before it to read it with: still only a speaker's name
    index.add("e-3", "KWAME", at_ms=5 * day, speaker="Lena", conversation="c")
    index.add("e-4", "thanks kwame!!", at_ms=9 * day, speaker="Lena", conversation="c")
    index.add("e-5", "KWAME the exam", at_ms=12 * day, speaker="Lena", conversation="c")
    for saved in (index, EpisodeIndex.decode(index.encode())):
        assert saved.says_nothing("e-3")
        assert saved.only_reacts("e-4")
        assert not saved.says_nothing("e-5") and not saved.only_reacts("e-5")


def test_near_context_leaves_out_a_word_only_the_turn_two_before_holds() -> None:
    index = chat(
        ("Dana", "My cat Miso hid all day"),
        ("Marcus", "Ha, classic. How was the interview?"),
        ("Dana", "Chidi got the job!"),
        ("Marcus", "Another cat, a kitten"),
    )
    cat = episode_terms("cat")
    assert "e-3" in dict(index.search(cat))  # the turn two before it, at a low weight
    near = dict(index.search(cat, near_context=True))
    assert "e-3" not in near and {"e-1", "e-2", "e-4"} <= set(near)


def test_a_turn_of_few_words_of_its_own_is_flagged() -> None:
    index = chat(
        ("Kwame", "The permit finally came through for the flyover"),
        ("Lena", "the date"),
        ("Lena", "i approve, Kwame"),
        ("Lena", "[shared image: a cat] lol"),
        ("Lena", "jonas and i are officially together"),
    )
    for saved in (index, EpisodeIndex.decode(index.encode())):
        assert saved.few_words("e-2") and saved.few_words("e-3")  # names do not count
        assert not saved.few_words("e-4")  # a photo says more than its words
        assert not saved.few_words("e-1") and not saved.few_words("e-5")


def test_the_share_of_texts_saying_a_word_counts_their_own_words_only() -> None:
    index = chat(
        ("Nadia", "Kwame proposed!"),
        ("Diego", "no way, how"),
        ("Nadia", "in a kayak"),
        ("Diego", "Kwame and Sophie!!"),
    )
    (kwame,) = episode_terms("Kwame")
    for saved in (index, EpisodeIndex.decode(index.encode())):
        assert saved.share_saying(kwame) == 0.5  # e-2 holds it only as the turn before
        assert saved.share_saying("unheard") == 0.0


def test_a_turn_that_only_reacts_is_flagged_and_keeps_the_words_of_the_turn_before() -> None:
    index = chat(
        ("Dana", "did you get the job at Acme?"),
        ("Marcus", "Yes!! Thanks, Dana!"),
        ("Marcus", "I start at Acme on Monday"),
        ("Dana", "[shared image: a cake] yay"),
    )
    for saved in (index, EpisodeIndex.decode(index.encode())):
        assert saved.only_reacts("e-2") and not saved.says_nothing("e-2")
        assert not saved.only_reacts("e-3") and not saved.only_reacts("e-1")
        assert not saved.only_reacts("e-4")  # a photo says something
        # "yes!!" answers the question before it: found by its words
        assert "e-2" in dict(saved.search(episode_terms("job")))


def test_the_answer_to_a_bare_follow_up_holds_the_topic_of_the_turn_before_it() -> None:
    def indexed(follow_up: str) -> EpisodeIndex:
        return chat(
            ("Yusuf", "wedding update: Elif's wedding moved"),
            ("Malia", follow_up),
            ("Yusuf", "it's the 20th of June now"),
        )

    bare = dict(indexed("Moved?? To when?").search(episode_terms("Elif wedding date")))
    # told, not asked: the turn before it keeps its usual, smaller weight
    told = dict(indexed("Moved. To June.").search(episode_terms("Elif wedding date")))
    assert bare["e-3"] > told["e-3"] > 0.0


def test_a_correction_reads_the_turn_that_said_what_it_puts_right() -> None:
    said = [
        ("Lena", "written part of the master exam is 12 november"),
        ("Lena", "practical is 25-27 january, 3 days"),
        ("Kwame", "Good, now we have a timeline. No Valheim in November."),
        ("Lena", "wait no, it's the 14th not the 12th. a SATURDAY ugh"),
    ]
    index = chat(*said)
    found = dict(index.search(episode_terms("written master exam")))
    assert found.get("e-4", 0.0) > 0.0  # the turn three before is its context
    # "not the 12th" without anything said of the 12th: no context borrowed from afar
    plain = chat(*said[1:3], ("Lena", "wait no, it's the 14th not the 12th. a SATURDAY ugh"))
    assert "e-3" not in dict(plain.search(episode_terms("written master exam")))
    # the turns before the last one are saved: a correction after a reload finds them
    saved = EpisodeIndex.decode(chat(*said[:3]).encode())
    saved.add("e-4", said[3][1], at_ms=3 * MINUTE, speaker="Lena", conversation="c")
    reloaded = dict(saved.search(episode_terms("written master exam")))
    assert reloaded["e-4"] == pytest.approx(found["e-4"])


def test_a_text_that_calls_something_by_a_name_is_flagged() -> None:
    index = EpisodeIndex()
    said = [
        ("Bronwen", "I'm still going to choir. Côr Seren started up again in September."),
        ("Kofi", "Hey Bronwen, how was choir?"),
        ("Bronwen", "Lovely. Monday was busy. I sat down for half of it."),
        ("Kofi", "[shared image: the Gower] nice"),
    ]
    for n, (who, text) in enumerate(said):
        index.add(f"e-{n + 1}", text, at_ms=n * MINUTE, speaker=who, conversation="c")
    for saved in (index, EpisodeIndex.decode(index.encode())):
        assert saved.names_something("e-1")
        # a speaker called by name, a weekday at a sentence's start, a caption: no name
        assert not any(saved.names_something(e) for e in ("e-2", "e-3", "e-4"))


def test_the_context_survives_saving_and_a_purge_of_the_turn_before_drops_it() -> None:
    index = dialogue()
    assert EpisodeIndex.decode(index.encode()).context_of("e-3") == "e-2"
    index.remove(["e-2"])
    assert index.context_of("e-3") is None
    saved = EpisodeIndex.decode(index.encode())
    assert saved.context_of("e-3") is None
    assert saved.context_of("e-2") is None


def test_a_turn_that_only_asks_is_marked() -> None:
    said = [
        "Is work far from there?",
        "AHHH! Congrats!! When do you start?",
        "how was the race? did you finish? [shared image: a medal on a table]",
        "When do you start? I start Monday.",
        "I got an offer from Little Steps",
    ]
    index = EpisodeIndex()
    for n, text in enumerate(said, start=1):
        index.add(f"e-{n}", text, at_ms=n * MINUTE, speaker="Ifeoma", conversation="c")
    for saved in (index, EpisodeIndex.decode(index.encode())):
        assert saved.asks_only("e-1")
        assert not saved.asks_only("e-2")  # "Congrats!!" says something
        assert saved.asks_only("e-3")  # a shared image's caption says nothing of its own
        assert not saved.asks_only("e-4") and not saved.asks_only("e-5")


@pytest.mark.parametrize("magic", OLDER_MAGICS)
def test_an_index_saved_in_an_older_format_asks_to_be_rebuilt(magic: bytes) -> None:
    data = bytearray(dialogue().encode())
    data[:8] = magic
    with pytest.raises(OlderIndexFormat):
        EpisodeIndex.decode(bytes(data))


def test_a_damaged_index_is_refused() -> None:
    data = bytearray(dialogue().encode())
    data[-3] ^= 1
    with pytest.raises(ValueError, match="checksum"):
        EpisodeIndex.decode(bytes(data))


def _blobs(data: bytes) -> list[bytes]:
    body, blobs, offset = data[16:], [], 0
    while offset < len(body):
        size = int.from_bytes(body[offset : offset + 8], "little")
        blobs.append(body[offset + 8 : offset + 8 + size])
        offset += 8 + size + -size % 8
    return blobs


def _sealed(data: bytes, blobs: list[bytes]) -> bytes:
    body = b"".join(len(b).to_bytes(8, "little") + b + bytes(-len(b) % 8) for b in blobs)
    return data[:8] + zlib.crc32(body).to_bytes(4, "little") + bytes(4) + body


@pytest.mark.parametrize(("column", "width"), [(12, 8), (13, 8), (14, 1), (15, 2), (16, 8)])
def test_an_index_whose_columns_disagree_in_length_is_refused(column: int, width: int) -> None:
    """A column cut short (e.g. flags written a byte each, read two) is refused, so the
    index is rebuilt, rather than read past its end at the first search."""
    data = dialogue().encode()
    blobs = _blobs(data)
    blobs[column] = blobs[column][:-width]  # one row short
    with pytest.raises(ValueError, match="sizes disagree"):
        EpisodeIndex.decode(_sealed(data, blobs))
    assert EpisodeIndex.decode(_sealed(data, _blobs(data))).ids == dialogue().ids


WORDS = [
    "internationalization",
    "internationalist",
    "internationally",
    "international",
    "intern",
    "café",
    "naïve",
    "Zürich",
    "kayak",
    "tent",
    "tea",
]


@pytest.mark.parametrize(
    "make_id",
    [
        lambda n: f"episode-{n * 3 + 1}",  # made in order: found by a search of the numbers
        lambda n: f"episode-{(n * 7) % 40}",  # numbers out of order
        lambda n: f"{'ab'[n % 2]}-{n}",  # two prefixes
        lambda n: f"note {n:03d}",  # leading zeros: not numbers
        lambda n: f"x{n}y",  # no number at the end
    ],
)
def test_a_saved_index_finds_every_id_and_term_however_the_ids_are_made(
    make_id: Callable[[int], str],
) -> None:
    index = EpisodeIndex()

    def add(first: int, count: int) -> None:
        for n in range(first, first + count):
            text = " ".join(WORDS[(n * k) % len(WORDS)] for k in range(1, 4))
            speaker = None if n % 3 == 0 else f"Speaker {n % 4}"
            at_ms = n * 2 * CONTEXT_GAP_MS  # no context: the saved weights are the same
            index.add(make_id(n), text, at_ms=at_ms, speaker=speaker, source=f"s{n % 300}")

    add(0, 25)
    saved = EpisodeIndex.decode(index.encode())
    assert saved.ids == index.ids and saved.ordinal == index.ordinal
    for episode_id in index.ids:
        assert episode_id in saved
        assert saved.speaker_of(episode_id) == index.speaker_of(episode_id)
        assert saved.source_of(episode_id) == index.source_of(episode_id)
    for absent in ("episode-01", "episode-999", "a-99", "note 1", "", "x"):
        if absent not in index:
            assert absent not in saved and saved.ordinal.get(absent) is None
    assert saved.voices == index.voices
    assert _state(saved) == _state(index)
    for query in (*WORDS, "internationalism", "nothing", "Zurich"):
        terms = episode_terms(query)
        assert saved.search(terms) == index.search(terms)
        assert saved.search(terms, source="s7") == index.search(terms, source="s7")
    add(25, 15)  # added after loading, then saved with the loaded ones
    assert [index.ordinal[e] for e in index.ids] == list(range(40))
    before = _state(index)
    assert _state(EpisodeIndex.decode(index.encode())) == before


def test_a_source_of_many_is_kept_as_a_code_and_a_purge_drops_those_left_unused() -> None:
    index = EpisodeIndex()
    for n in range(600):
        index.add(f"e-{n}", f"tea number {n}", at_ms=n * MINUTE, source=f"s{n}", speaker="Ana")
    index.remove(["e-0", "e-599"])
    saved = EpisodeIndex.decode(index.encode())
    assert len(saved) == 598 and saved.source_of("e-1") == "s1"
    assert [e for e, _ in saved.search(episode_terms("tea"), source="s5")] == ["e-5"]
    assert saved.search(episode_terms("tea"), source="s0") == []
    assert saved.sources.values[0] == "s1" and len(saved.sources.values) == 598


def test_an_index_is_read_from_bytes_at_any_alignment() -> None:
    data = dialogue().encode()
    shifted = memoryview(b"x" + data)[1:]
    index = EpisodeIndex.decode(shifted)
    assert index.encode() == data
    assert dict(index.search(episode_terms("Sanjay going")))


def _state(index: EpisodeIndex) -> dict[str, object]:
    """Everything the index answers per kept episode and per term, for comparison."""
    kept = [e for o, e in enumerate(index.ids) if o not in index._removed]
    terms = sorted(set(index._rows) | set(index._vocab))
    return {
        "episodes": [
            (
                e,
                index.facts_of(e),
                index.at_of(e),
                index.timed(e),
                index.updates(e),
                index.context_of(e),
                index.speaker_of(e),
                index.location(e),
            )
            for e in kept
        ],
        "postings": {t: _postings(index, t) for t in terms},
        "holds": [(e, t) for e in kept for t in terms if index.holds(e, t)],
    }


def _postings(index: EpisodeIndex, term: str) -> list[tuple[str, int]]:
    """A term's postings as (episode, weighted tf as saved: twice the weight, rounded)."""
    found = index._postings(term)
    if found is None:
        return []
    ords, weights = found
    if index._saved:  # the saved part is searched by bisection: it must stay in order
        saved = ords[ords < index._saved]
        assert all(saved[1:] > saved[:-1])
    saved_tf = [min(int(np.rint(w * 2)), 255) for w in weights]
    return sorted(
        (index.ids[o], tf)
        for o, tf in zip(ords.tolist(), saved_tf, strict=True)
        if o not in index._removed and tf
    )


def test_saving_keeps_every_answer_across_saved_and_added_parts() -> None:
    """Encoding merges the saved postings and facts with those added since (and with
    facts recorded again, and purges) without changing any answer."""
    index = EpisodeIndex()
    words = ["tea", "coffee", "Oslo", "Rust", "moved", "Monday", "kayak", "tent"]

    def add(first: int, count: int) -> None:
        for n in range(first, first + count):
            text = " ".join(words[(n * k) % len(words)] for k in range(1, 4))
            facts = None if n % 5 == 0 else [f"obs-{n}", f"rel-{n + 1000}"][: 1 + n % 2]
            index.add(
                f"e-{n}", text, at_ms=n * MINUTE, speaker="Ana", conversation="c", facts=facts
            )

    add(0, 30)
    before = _state(index)
    index = EpisodeIndex.decode(index.encode())
    assert _state(index) == before
    add(30, 25)  # a saved part and an added part
    before = _state(index)
    index = EpisodeIndex.decode(index.encode())
    assert _state(index) == before
    add(55, 10)
    index.set_facts("e-3", ["obs-9000"])  # a saved episode's facts recorded again
    index.set_facts("e-60", [])
    before = _state(index)
    index = EpisodeIndex.decode(index.encode())
    assert _state(index) == before
    assert index.facts_of("e-3") == (9000,)
    add(65, 5)
    index.remove(["e-7", "e-66"])
    before = _state(index)
    index = EpisodeIndex.decode(index.encode())
    assert _state(index) == before


def test_an_index_saved_in_parts_encodes_as_one_built_at_once() -> None:
    """Saving merges the added postings into the saved ones (no re-sort of the saved
    part): the bytes equal those of the same episodes indexed in one go."""
    words = ["tea", "coffee", "Oslo", "Rust", "moved", "Monday", "kayak", "tent", "zebra"]

    def add(index: EpisodeIndex, first: int, count: int) -> None:
        for n in range(first, first + count):
            text = " ".join(words[(n * k + n // 7) % len(words)] for k in range(1, 5))
            index.add(f"e-{n}", text, at_ms=n * MINUTE, speaker="Ana", conversation="c")

    whole = EpisodeIndex()
    add(whole, 0, 90)
    parts = EpisodeIndex()
    for first in (0, 40, 41, 75):
        parts = EpisodeIndex.decode(parts.encode())
        add(parts, first, {0: 40, 40: 1, 41: 34, 75: 15}[first])
    assert parts.encode() == whole.encode()


def test_saving_an_index_that_only_grew_places_postings_as_the_general_merge() -> None:
    """With nothing removed, the added postings are placed after each row's saved ones
    by counting; the bytes equal those of the general merge (a search for each place)."""
    rng = np.random.default_rng(3)
    vocabulary = [f"w{n}" for n in range(60)]

    def add(index: EpisodeIndex, first: int, count: int) -> None:
        for n in range(first, first + count):
            picked = rng.choice(vocabulary[: 20 + n // 3], size=int(rng.integers(1, 9)))
            index.add(f"e-{n}", " ".join(picked), at_ms=n * MINUTE, conversation="c")

    index = EpisodeIndex()
    for first, count in ((0, 40), (40, 1), (41, 60), (101, 30)):
        add(index, first, count)
        data = index.encode()
        index._saved = 10**9  # no added part counts as "after the saved ones": general merge
        assert index.encode() == data
        index = EpisodeIndex.decode(data)
    assert len(index) == 131


def test_an_index_sealed_from_its_tables_is_the_index_its_bytes_decode_to() -> None:
    index = dialogue()
    index.set_facts("e-2", ["obs-7", "rel-9"])
    data = index.encode()
    index.add("e-6", "and you?", at_ms=CONTEXT_GAP_MS * 2 + MINUTE, speaker="Ana", conversation="d")
    index.remove(["e-4"])
    encoded, sealed = index.encode_sealed()
    data = index.encode()
    decoded = EpisodeIndex.decode(data)
    assert sealed.encode() == decoded.encode() == data
    assert sealed.ids == decoded.ids and sealed.ordinal == decoded.ordinal
    assert sealed._last == decoded._last and sealed.mark == decoded.mark
    assert sealed.added_postings == decoded.added_postings == 0
    for query in ("Sanjay going", "you", "Stripe leaving", "day"):
        terms = episode_terms(query)
        assert sealed.search(terms) == decoded.search(terms)
    assert sealed.facts_of("e-2") == decoded.facts_of("e-2")
    assert [sealed.addressee(e) for e in sealed.ids] == [decoded.addressee(e) for e in decoded.ids]
    # The encoding keeps what was sealed, whatever the sealed index learns since (it
    # may run in another thread).
    sealed.add("e-7", "later", at_ms=CONTEXT_GAP_MS * 3, speaker="Bo", conversation="d")
    sealed.locate("e-2", 99)
    assert encoded() == data


def test_the_context_weighs_less_than_a_word_of_the_text_itself() -> None:
    from memgraph.retrieval.episode_index import CONTEXT_WEIGHTS

    assert sum(CONTEXT_WEIGHTS) < 1.0
    index = EpisodeIndex()
    index.add("e-1", "did the kids like the memorial?", at_ms=0, speaker="Ana", conversation="a")
    index.add(
        "e-2", "what did the kids think of the memorial", at_ms=1, speaker="Ana", conversation="a"
    )
    index.add("e-3", "they were awestruck and humbled", at_ms=2, speaker="John", conversation="a")
    own = index.holding([["memor"]], context=False)
    assert not own[index.ordinal["e-3"]]
    assert index.holding([["memor"]], context=True)[index.ordinal["e-3"]]


def test_a_word_every_text_holds_does_not_reorder_them_and_alone_still_finds_them() -> None:
    index = EpisodeIndex()
    for n in range(300):
        city = "Oslo" if n % 30 == 0 else "Lima"
        index.add(f"e-{n}", f"Northwind office {n} in {city}", at_ms=n * CONTEXT_GAP_MS * 2)
    both = index.search(episode_terms("Northwind Oslo"), k=20)
    alone = index.search(episode_terms("Oslo"), k=20)
    assert [e for e, _ in both] == [e for e, _ in alone]
    assert {e for e, _ in both} == {f"e-{n}" for n in range(0, 300, 30)}
    assert len(index.search(episode_terms("Northwind"), k=20)) == 20


def test_the_texts_said_in_a_stretch_are_listed_by_speaker_in_order() -> None:
    index = EpisodeIndex()
    index.add("e-1", "before it", at_ms=0, speaker="Sam", conversation="c")
    index.add("e-2", "in it", at_ms=10 * MINUTE, speaker="Sam", conversation="c")
    index.add("e-3", "in it too", at_ms=11 * MINUTE, speaker="Evan", conversation="c")
    index.add("e-4", "in it, last", at_ms=12 * MINUTE, speaker="Sam", conversation="c")
    index.add("e-5", "after it", at_ms=20 * MINUTE, speaker="Sam", conversation="c")
    assert index.said_between(10 * MINUTE, 20 * MINUTE) == ["e-2", "e-3", "e-4"]
    assert index.said_between(10 * MINUTE, 20 * MINUTE, speakers=["Sam"]) == ["e-2", "e-4"]
    assert index.said_between(10 * MINUTE, 20 * MINUTE, speakers=["Ana"]) == []
    assert index.said_between(0, 30 * MINUTE, at_ms=11 * MINUTE) == ["e-1", "e-2", "e-3"]
    assert sorted(index.speaker_names()) == ["Evan", "Sam"]
    # the same once the index is in its saved form
    assert index.sealed().said_between(10 * MINUTE, 20 * MINUTE, speakers=["Sam"]) == ["e-2", "e-4"]
    # the first or the last few of them
    assert index.said_between(0, 30 * MINUTE, limit=2) == ["e-1", "e-2"]
    assert index.said_between(0, 30 * MINUTE, limit=2, last=True) == ["e-4", "e-5"]


def test_the_texts_said_in_a_stretch_can_be_those_that_say_when_or_that_tell() -> None:
    index = EpisodeIndex()
    index.add("e-1", "we went hiking yesterday", at_ms=0, speaker="Sam", conversation="c")
    index.add("e-2", "how was it?", at_ms=MINUTE, speaker="Evan", conversation="c")
    index.add("e-3", "muddy but great", at_ms=2 * MINUTE, speaker="Sam", conversation="c")
    assert index.said_between(0, 10 * MINUTE, timed=True) == ["e-1"]
    assert index.said_between(0, 10 * MINUTE, telling=True) == ["e-1", "e-3"]
