"""Recall hands back the right fact first, for the right person, once, with its date.

Behaviour tests of the issues a new user met on realistic chats (the offline mock
provider): the quality benchmark (``python -m bench.quality``) measures the same on
long conversations.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from memgraph.providers.mock import HashEmbedder, MockChatModel, ScriptedChatModel
from memgraph.providers.mock.chat import _candidates, _tagged

from memgraph import Memory
from memgraph.cli import cli
from memgraph.engine.reading import _asks_briefly
from memgraph.graph.graph import Graph
from memgraph.llm_calls.provider import Provider
from memgraph.retrieval import ranking as tiers
from memgraph.retrieval import recall_text
from memgraph.retrieval.recall_text import NOTHING_SAID
from memgraph.speakers import split_speaker, spoken_words
from memgraph.text import WORD_FORMS, index_terms
from tests.conftest import load_fixture

CHAT = load_fixture("conversations/priya.json")
DATED = re.compile(r"^  - \[\d{1,2} [A-Z][a-z]+ \d{4}\] ")


def facts(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("  - ")]


@pytest.fixture
def priya(tmp_path: Path) -> Memory:
    memory = Memory(tmp_path / "mem", "priya", provider="mock")
    for turn in CHAT["turns"]:
        memory.remember(turn["text"], at=turn["at"])
    return memory


def test_a_month_of_chat_answers_nine_of_ten_questions_in_the_first_three_lines(
    priya: Memory,
) -> None:
    answered = []
    for item in CHAT["questions"]:
        text = priya.recall(item["question"])
        first = " ".join(facts(text)[:3]).lower()
        stale = [
            old for cue, old in CHAT["stale"].items() if cue.lower() in item["question"].lower()
        ]
        if item["answer"].lower() in first and not any(
            old.lower() in text.lower() for old in stale
        ):
            answered.append(item["question"])
    assert len(answered) >= 9, answered
    priya.close()


def test_each_fact_prints_once_with_the_day_it_was_said(priya: Memory) -> None:
    text = priya.recall("Where do I work?")
    lines = facts(text)
    assert lines and all(DATED.match(line) for line in lines if "→" not in line)
    assert "works at Zalando" in lines[0] or "works at Zalando" in lines[1]
    assert "→" not in text  # the relation works_at → Zalando is the same statement
    assert len(lines) == len(set(lines))
    priya.close()


def test_a_move_and_a_correction_leave_no_old_value_behind(priya: Memory) -> None:
    assert "Berlin" in priya.recall("Where do I live now?")
    assert "Toronto" not in priya.recall("Where do I live now?")
    lisbon = priya.recall("When is my trip to Lisbon?")
    assert "November 21" in lisbon and "November 14" not in lisbon
    history = [o.content for o in priya.history("User").observations if not o.current]
    assert "lives in Toronto" in history  # superseded, kept in history
    priya.close()


def test_small_talk_and_sentence_openers_make_no_entities(priya: Memory) -> None:
    names = {e.name for e in priya.entities()}
    assert not names & {"Honestly", "Quick", "Haha", "Big", "Cool", "Thanks", "Hi"}
    assert {"Kavya", "Elena", "Biscuit", "Zalando", "Berlin"} <= names
    priya.close()


def test_forgetting_a_preference_removes_it_and_its_relation_from_recall(
    tmp_path: Path,
) -> None:
    with Memory(tmp_path / "mem", "alice", provider="mock") as memory:
        memory.remember("Alice is a senior engineer. She prefers TypeScript and mentors Bob.")
        assert "TypeScript" in memory.recall("alice typescript")
        changes = memory.forget("alice's preference for typescript")
        assert [r.type for r in changes.expired_relations] == ["prefers"]
        assert "TypeScript" not in memory.recall("alice typescript")
        assert "TypeScript" not in memory.recall("What does Alice prefer?")


def test_forgetting_a_job_from_the_command_line_leaves_no_works_at_line(tmp_path: Path) -> None:
    runner = CliRunner()
    base = ["--dir", str(tmp_path / "mem"), "--scope", "alice", "--provider", "mock"]
    assert runner.invoke(cli, [*base, "remember", "Alice works at Acme."]).exit_code == 0
    assert runner.invoke(cli, [*base, "forget", "alice's job at acme"]).exit_code == 0
    recalled = runner.invoke(cli, [*base, "recall", "where does alice work"])
    assert "Acme" not in recalled.stdout


def test_an_entity_whose_facts_were_all_forgotten_shows_no_empty_heading(
    tmp_path: Path,
) -> None:
    with Memory(tmp_path / "mem", "dana", provider="mock") as memory:
        memory.remember("I live in Toronto and I work at Acme as a designer.", speaker="Dana")
        assert "works at Acme" in memory.recall("Acme")
        memory.forget("Dana's job at Acme")
        assert "Acme" not in memory.recall("Acme")
        assert "Acme" not in memory.recall("Where does Dana work?")
        assert "Acme" in memory.history("Dana").observations[-1].content
    with Memory(tmp_path / "mem", "dana", provider="mock") as memory:
        # forgotten, not changed by a later text: the whole text is history, saved so
        assert "Acme" not in memory.recall("Where does Dana work?")
        assert "Toronto" in memory.recall("Where does Dana live?")


def test_a_text_one_of_whose_facts_changed_is_found_for_the_rest(tmp_path: Path) -> None:
    # a small model drew a wrong fact from the turn, and a later turn put it right
    stated = {
        "entities": [
            {
                "name": "Mei-hua",
                "type": "person",
                "observations": ["lives with Chloe", "sees the doctor on Friday"],
            }
        ],
        "relations": [],
        "expirations": [],
    }
    put_right = {
        "entities": [
            {"name": "Mei-hua", "type": "person", "observations": ["lives alone in Taipei"]}
        ],
        "relations": [],
        "expirations": [{"entityName": "Mei-hua", "observationContent": "lives with Chloe"}],
    }
    chat = ScriptedChatModel([stated, put_right], fallback=MockChatModel())
    provider = Provider("scripted", chat, HashEmbedder(64))
    with Memory(tmp_path / "mem", "chat", provider=provider) as memory:
        memory.remember(
            "Chloe, I see the doctor on Friday. Dr Tsai at Mackay hospital.", speaker="Mei-hua"
        )
        changed = memory.remember("No no, I live alone in Taipei! Chloe lives in Melbourne")
        assert [o.content for o in changed.expired_observations] == ["lives with Chloe"]
        found = memory.search("Which hospital is Dr Tsai at?", k=3)
        assert found[0].episode is not None and "Mackay" in found[0].episode.text
        assert "Mackay" in memory.recall("Which hospital is Dr Tsai at?")
        # asked in the words of what changed, the text is history
        lives = memory.recall("Where does Mei-hua live?")
        assert "Taipei" in lives and "with Chloe" not in lives and "Mackay" not in lives


def test_a_text_one_of_whose_facts_was_superseded_is_not_quoted_for_it(tmp_path: Path) -> None:
    with Memory(tmp_path / "mem", "dana", provider="mock") as memory:
        memory.remember(
            "I live in Toronto and I work at Acme as a designer.",
            speaker="Dana",
            at="2025-01-05T10:00:00Z",
        )
        memory.remember(
            "Actually I moved to Berlin last month.", speaker="Dana", at="2025-06-05T10:00:00Z"
        )
    with Memory(tmp_path / "mem", "dana", provider="mock") as memory:  # from the saved flags
        lives = memory.recall("Where does Dana live?")
        assert "Berlin" in lives and "Toronto" not in lives
        assert all(hit.episode is None for hit in memory.search("Toronto", episodes=True))
        assert "works at Acme" in memory.recall("Where does Dana work?")


def test_two_named_speakers_keep_their_own_facts(tmp_path: Path) -> None:
    said = [
        ("Maria", "I joined a gym last week, finally!"),
        ("John", "For sure. I'm training for a marathon in October."),
        ("Maria", "Cool"),
    ]
    with Memory(tmp_path / "mem", "chat", provider="mock") as memory:
        for index, (speaker, text) in enumerate(said):
            memory.remember(text, speaker=speaker, at=f"2023-05-{index + 8:02d}T10:00:00Z")
        gym = memory.recall("When did Maria join a gym?")
        assert gym.startswith("Maria (person):")
        assert "the week before 8 May 2023" in facts(gym)[0]
        assert "marathon" not in gym and "Cool" not in gym
        john = {o.content for o in memory.entity("John").observations}
        assert any("marathon" in fact for fact in john)
        assert "User" not in {e.name for e in memory.entities()}


def test_an_abstention_question_is_told_its_neighbours_facts_are_not_the_answer(
    tmp_path: Path,
) -> None:
    with Memory(tmp_path / "mem", "chat", provider="mock") as memory:
        memory.remember("My cat Miso hid in the closet all day.", speaker="Dana")
        memory.remember("Ha, classic. How was the interview?", speaker="Marcus")
        memory.remember("Chidi got the job at the architecture firm!", speaker="Dana")
        text = memory.recall("What is the name of Chidi's cat?")
    # Dana's cat is no answer about Chidi: recall says so before what it found
    assert text.splitlines()[0] == (
        "(Nothing remembered says this about Chidi; the nearest matches follow.)"
    )


def test_a_question_dated_to_a_day_is_judged_on_what_was_said_then(tmp_path: Path) -> None:
    said = [
        (
            "Deborah",
            "2023-04-09T10:00:00Z",
            "Hey Jolene! I went to an art show with a friend, stunning paintings.",
        ),
        (
            "Jolene",
            "2023-04-09T10:05:00Z",
            "Sounds amazing! I spent the whole weekend on my thesis.",
        ),
        (
            "Jolene",
            "2023-06-20T18:00:00Z",
            "Went to a comedy show with my friend Anna last night, so funny!",
        ),
        ("Deborah", "2023-06-20T18:05:00Z", "Love that, Anna sounds like a great friend."),
    ]
    with Memory(tmp_path / "mem", "chat", provider="mock") as memory:
        for speaker, at, text in said:
            memory.remember(text, speaker=speaker, at=at)
        that_day = memory.recall("Which show did Jolene go to with a friend on 9 April 2023?")
        that_month = memory.recall("Which show did Jolene go to with a friend in June 2023?")
    # on 9 April only Deborah went to a show: Jolene's comedy show was in June
    assert that_day.startswith("(Nothing remembered says this about Jolene")
    assert not that_month.startswith("(Nothing") and "comedy show" in that_month


def test_context_injection_finds_what_recall_finds(tmp_path: Path) -> None:
    from memgraph import llm, memory, set_memory_id

    with Memory(tmp_path / "mem", "u", provider="mock") as direct:
        direct.remember("I'm allergic to peanuts.")
        direct.remember("I live in Lisbon and work at Acme.")
    set_memory_id("u")
    questions = ["What do you know about me?", "Do I have any allergies?", "Where do I live?"]
    with memory(dir=tmp_path / "mem", provider="mock", approve=True):
        injected = {q: llm(q, memory=True).context for q in questions}
    with Memory(tmp_path / "mem", "u", provider="mock") as direct:
        for question in questions:
            recalled = facts(direct.recall(question))
            assert recalled, question
            assert set(recalled) <= set(facts(injected[question])), question


SANJAY = [
    ("Marcus", "hey, unrelated, Sanjay told me he's leaving"),
    ("Dana", "NO. Sanjay?? where's he going"),
    ("Marcus", "Stripe. He got an offer he couldn't turn down apparently"),
    ("Dana", "ugh, good for him"),
]


def remember_dialogue(
    memory: Memory, said: list[tuple[str | None, str]], *, daily: bool = False
) -> None:
    """Remember each ``(speaker, text)`` a minute apart, or a day apart when ``daily``
    (``None``: no speaker given)."""
    for index, (speaker, text) in enumerate(said):
        minute = f"2024-01-19T{10 + index // 60:02d}:{index % 60:02d}:00Z"
        at = f"2025-04-{index + 1:02d}T10:00:00Z" if daily else minute
        memory.remember(text, speaker=speaker, at=at)


def recalled(
    tmp_path: Path, said: list[tuple[str, str]], *questions: str, daily: bool = False
) -> list[str]:
    """What recall answers each of ``questions`` after the dialogue ``said`` (its turns
    a day apart when ``daily``)."""
    with Memory(tmp_path / "mem", "chat", provider="mock") as memory:
        remember_dialogue(memory, said, daily=daily)
        return [memory.recall(question) for question in questions]


def searched(tmp_path: Path, said: list[tuple[str, str]], question: str, *, k: int) -> list[str]:
    """The texts of the remembered messages among search's first ``k`` hits for
    ``question`` after the dialogue ``said``."""
    with Memory(tmp_path / "mem", "chat", provider="mock") as memory:
        remember_dialogue(memory, said)
        hits = memory.search(question, k=k)
    return [h.episode.text for h in hits if h.episode is not None]


class _KeepsInOrder(MockChatModel):
    """The mock in every call but the re-ranker's, which keeps, in ``order``, the
    candidates of each ``(word, kind)``: "obs" a fact, "episode" a message."""

    def __init__(self, order: list[tuple[str, str]]) -> None:
        super().__init__()
        self.order = order

    def _rerank(self, messages: Any) -> dict[str, Any]:
        listed = _candidates(_tagged(messages, "candidates") or "")
        return {
            "ids": [
                cid
                for word, kind in self.order
                for cid, text in listed
                if cid.startswith(kind) and word in text.lower()
            ]
        }


def test_recall_shows_facts_and_messages_in_the_order_the_re_ranker_kept(
    tmp_path: Path,
) -> None:
    said = [
        ("Dana", "I adopted a greyhound named Kuma"),
        ("Marcus", "omg. what's he like?"),
        ("Dana", "Kuma sleeps all day, he's a couch potato"),
        ("Dana", "I also started pottery classes on tuesdays"),
    ]
    order = [("greyhound", "obs"), ("couch potato", "episode"), ("pottery", "obs")]
    provider = Provider("mock", _KeepsInOrder(order), HashEmbedder())
    with Memory(tmp_path / "mem", "chat", provider=provider) as memory:
        remember_dialogue(memory, said)
        text = memory.recall("What does Dana do with Kuma and on tuesdays?")
    lines = text.splitlines()
    at = {word: next(n for n, line in enumerate(lines) if word in line) for word, _ in order}
    # the message the re-ranker kept second comes between Dana's facts it kept first
    # and third; the third follows under her name again
    assert at["greyhound"] < at["couch potato"] < at["pottery"], text
    assert lines[at["pottery"] - 1] == "Dana (person):", text
    assert lines.count("Dana (person):") == 2, text


def test_an_entity_s_facts_ranked_below_a_message_follow_it() -> None:
    from memgraph.retrieval.ranking import Candidate

    dana = {"id": "entity-1", "name": "Dana", "type": "person"}
    name, kuma, pottery = (Candidate(dana, None), Candidate(dana, {}), Candidate(dana, {}))
    message = Candidate(dana, None, episode="episode-9")
    place = {id(c): at for at, c in enumerate([kuma, message, pottery])}
    first, rest = recall_text._split(recall_text._Block(dana, 0, [kuma, pottery]), place, 1)
    assert (first.place, first.facts, first.more) == (0, [kuma], False)
    assert (rest.place, rest.facts, rest.more) == (2, [pottery], True)  # no relations again
    # only the name ranked above the message: the whole block, relations too, goes below
    place = {id(c): at for at, c in enumerate([name, message, kuma])}
    (moved,) = recall_text._split(recall_text._Block(dana, 0, [kuma]), place, 1)
    assert (moved.place, moved.facts, moved.more) == (2, [kuma], False)


def test_a_turn_that_only_asks_ranks_below_the_one_that_tells(tmp_path: Path) -> None:
    said = [
        ("Ifeoma", "Also! I have news. I got an offer from Little Steps, the pediatric clinic"),
        ("Chidi", "YES. take it"),
        ("Ifeoma", "I said yes! start date at Little Steps is the 17th"),
        ("Chidi", "we found a flat in Fitzroy North"),
        ("Ifeoma", "Is work far from there?"),
    ]
    texts = searched(tmp_path, said, "Where does Ifeoma work now?", k=5)
    assert texts.index("Is work far from there?") > texts.index(said[2][1]), texts
    # a question about what was asked still finds the question first
    (asked, *_) = searched(tmp_path / "asked", said, "What did Ifeoma ask about work?", k=5)
    assert asked == "Is work far from there?"


BJORN = ("Marcus", "Bjorn chewed my boots again. 110 pounds of Bernese mountain dog")
DOG_AND_RACE = [
    BJORN,
    ("Dana", "lol. Miso hid in the closet all day"),
    ("Marcus", "how was the race?"),
    ("Dana", "I finished the Chicago half in 2:06!"),
]
"""Marcus's dog and Dana's race: a question about Dana's dog is about someone else's."""


def test_an_answer_is_found_through_the_question_it_answers(tmp_path: Path) -> None:
    with Memory(tmp_path / "mem", "chat", provider="mock") as memory:
        remember_dialogue(memory, SANJAY)
        lines = memory.recall("Which company did Sanjay leave for?").splitlines()
        question = lines.index("  - [19 January 2024] Dana: NO. Sanjay?? where's he going")
        answer = next(i for i, line in enumerate(lines) if "Marcus: Stripe." in line)
        if answer == question + 1:  # right after the question: it needs no quote of it
            assert "in reply to" not in lines[answer]
        else:
            assert 'in reply to Dana: "NO. Sanjay?? where\'s he going"' in lines[answer]


def test_a_cheer_is_shown_with_the_news_it_cheers(tmp_path: Path) -> None:
    said = [
        ("Liam", "The Sparks had their first game yesterday. Lost 14-6"),
        ("Megan", "aw next time!"),
        ("Liam", "We WON btw. Yesterday. 11-9"),
        ("Megan", "Yesss! First win!"),
    ]
    [text] = recalled(tmp_path, said, "When did the Sparks win their first game?")
    cheer = next(line for line in text.splitlines() if "Yesss! First win!" in line)
    # it holds the question's words ("first win"), yet only the news says when
    assert 'in reply to Liam: "We WON btw. Yesterday' in cheer


def test_a_cheer_calling_out_a_name_is_shown_with_the_news(tmp_path: Path) -> None:
    said = [("Megan", "5 distinctions!!!"), ("Liam", "JESSE!!! Amazing!")]
    [text] = recalled(tmp_path, said, "How many distinctions did Jesse get?")
    assert 'JESSE!!! Amazing! (in reply to Megan: "5 distinctions!!!")' in text


def test_the_re_ranker_reads_a_reply_with_the_turns_it_answers(tmp_path: Path) -> None:
    chat = ScriptedChatModel({"rerank": [{"ids": []}]}, fallback=MockChatModel())
    with Memory(tmp_path / "mem", "chat", provider="mock") as memory:
        remember_dialogue(memory, SANJAY)
    with Memory(tmp_path / "mem", "chat", provider=Provider("s", chat, HashEmbedder())) as memory:
        memory.recall("Which company did Sanjay leave for?")
    prompt = "\n".join(m["content"] for m in chat.calls_for("rerank")[0].messages)
    assert (
        "Marcus (19 January 2024): Stripe. He got an offer he couldn't turn down apparently "
        '(in reply to Dana: "NO. Sanjay?? where\'s he going")'
    ) in prompt


def test_a_question_shown_without_its_answer_brings_the_answer_along(tmp_path: Path) -> None:
    said = [
        ("Wren", "a board game café in Toronto emailed asking to use the app for lending"),
        ("Tariq", "wait seriously?? which one?"),
        ("Wren", "it's called The Rolling Die. the owner's a guy named Farid"),
    ]
    text, alone = recalled(tmp_path, said, "Which café emailed Wren?", "Did Tariq ask which one?")
    lines = text.splitlines()
    asked = next(line for line in lines if "Tariq: wait seriously?? which one?" in line)
    answer = next(line for line in lines if "Wren: it's called The Rolling Die" in line)
    # the answer quotes the question it answers, unless it is shown right after it
    assert lines.index(answer) == lines.index(asked) + 1 or answer.endswith(
        '(in reply to Tariq: "wait seriously?? which one?")'
    )
    # the question alone brings its answer along
    assert "The Rolling Die" in alone


def test_a_message_a_short_fact_was_drawn_from_still_shows_what_the_fact_left_out(
    tmp_path: Path,
) -> None:
    with Memory(tmp_path / "mem", "chat", provider="mock") as memory:
        memory.remember(
            "I joined a ukulele group!! The Saguaro Strummers. We meet Thursday evenings "
            "at the Himmel Park library",
            speaker="Rosa",
            at="2022-09-06T10:00:00Z",
        )
        assert "Saguaro Strummers" in memory.recall("What is the name of Rosa's ukulele group?")


def test_a_short_answer_is_read_with_what_its_speaker_said_just_before(tmp_path: Path) -> None:
    said = [
        ("Marcus", "HALF MARATHONER!!!"),
        ("Dana", "I'M A HALF MARATHONER"),
        ("Dana", "2:06:41!!! under my goal!!"),
        ("Marcus", "you were flying at mile 12"),
    ]
    (text,) = recalled(tmp_path, said, "What was Dana's finishing time in the half marathon?")
    line = next(line for line in text.splitlines() if "Dana: 2:06:41" in line)
    # the same speaker going on: quoted as what it follows, not as a reply
    assert line.endswith('(after Dana: "I\'M A HALF MARATHONER")') or (
        "I'M A HALF MARATHONER" in text.splitlines()[text.splitlines().index(line) - 1]
    )


def test_a_yes_is_shown_with_the_question_it_answers(tmp_path: Path) -> None:
    said = [
        ("Marcus", "nice, you still go in on Tuesdays and Thursdays right?"),
        ("Dana", "yep, same in-office days"),
        ("Marcus", "I've got news too, kind of a big one"),
    ]
    (text,) = recalled(tmp_path, said, "Which days does Dana work in the office?")
    assert "Tuesdays and Thursdays" in text  # a weekly habit: no date is put after it
    assert "Tuesdays (" not in text


def test_a_superseded_text_is_never_quoted_as_context(tmp_path: Path) -> None:
    with Memory(tmp_path / "mem", "u", provider="mock") as memory:
        memory.remember("Alice works at Acme.", speaker="Alice", at="2024-01-19T10:00:00Z")
        memory.remember("Alice has a cat called Tom.", speaker="Alice", at="2024-01-19T10:01:00Z")
        acme = next(o for o in memory.entity("Alice").observations if "Acme" in o.content)
        memory.expire(acme.id)
        text = memory.recall("where does alice work?")
    assert "Acme" not in text


def test_a_named_place_or_event_is_searched_in_the_texts(tmp_path: Path) -> None:
    with Memory(tmp_path / "mem", "chat", provider="mock") as memory:
        memory.remember(
            "I'm doing Christmas with my brother Tomás in El Paso this year",
            speaker="Rosa",
            at="2022-12-22T23:24:00Z",
        )
        memory.remember("that sounds lovely", speaker="Evelyn", at="2022-12-22T23:25:00Z")
        assert memory.entity("Christmas")  # the extractor made it an entity of its own
        assert "El Paso" in memory.recall("Where did Rosa spend Christmas 2022?")


def test_a_question_about_someone_elses_thing_says_nothing_is_remembered_of_them(
    tmp_path: Path,
) -> None:
    said = DOG_AND_RACE
    theirs, not_hers = recalled(
        tmp_path, said, "What breed is Marcus's dog?", "What breed is Dana's dog?"
    )
    assert "Bernese" in theirs and not theirs.startswith(NOTHING_SAID)
    # the dog is Marcus's: recall says so first, then shows what it found
    assert not_hers.splitlines()[0] == (
        "(Nothing remembered says this about Dana; the nearest matches follow.)"
    )


def test_a_transcript_line_reads_like_a_turn_remembered_with_its_speaker(tmp_path: Path) -> None:
    said = DOG_AND_RACE
    questions = ("What breed is Marcus's dog?", "What breed is Dana's dog?", "How was the race?")
    with Memory(tmp_path / "lines", "chat", provider="mock") as memory:
        remember_dialogue(memory, [(None, f"{speaker}: {text}") for speaker, text in said])
        stored = [episode.text for episode in memory.iter_episodes()]
        as_lines = [memory.recall(question) for question in questions]
    assert stored == [f"{speaker}: {text}" for speaker, text in said]  # kept as remembered
    assert as_lines == recalled(tmp_path, said, *questions)
    assert "Marcus: how was the race?" in as_lines[2]
    assert "Marcus: Marcus:" not in as_lines[2]


def test_a_transcript_remembered_as_one_text_is_read_line_by_line_for_whose_words(
    tmp_path: Path,
) -> None:
    said = DOG_AND_RACE
    with Memory(tmp_path / "mem", "chat", provider="mock") as memory:
        memory.remember("\n".join(f"{who}: {text}" for who, text in said), at="2024-01-19")
        his, hers = (
            memory.recall(q) for q in ("What breed is Marcus's dog?", "What breed is Dana's dog?")
        )
    assert "Bernese" in his and not his.startswith(NOTHING_SAID), his
    assert hers.startswith(NOTHING_SAID), hers  # the dog is on Marcus's line, not hers


def test_where_someone_works_now_is_found_in_the_words_such_news_comes_in(
    tmp_path: Path,
) -> None:
    said = [
        ("Emi", "I had an interview last week at a different firm. Calloway Studio."),
        ("Hiroshi", "That is wonderful. Good luck."),
        ("Emi", "I have news!! Calloway offered me the job! I start the monday after next"),
        ("Hiroshi", "I am very proud of you."),
    ]
    (text,) = recalled(tmp_path, said, "Where does Emi work now?")
    assert "Calloway offered me the job" in text


def test_how_old_someone_is_is_found_in_their_texts_that_say_an_age(tmp_path: Path) -> None:
    # "I'm 45 Luis" holds no word of the question but the asker's name
    said = [
        ("Luis", "Dan's got a physio on speed dial lol"),
        ("Dan", "I'm 45 Luis, I have a physio, a chiropractor and a guy who does cupping"),
        ("Maya", "Anyway Dan how's the training? Did the old bike help?"),
        ("Dan", "Good! Did 11 on Sunday, the old legs felt easy"),
        ("Luis", "My old coach used to say that"),
    ]
    (text,) = recalled(tmp_path, said, "How old is Dan?")
    assert not text.startswith(NOTHING_SAID), text
    assert "I'm 45 Luis" in text


def test_an_age_said_long_before_many_texts_with_numbers_is_still_found(tmp_path: Path) -> None:
    said = [("Dan", "I'm 45 Luis, I have a physio, a chiropractor and a guy who does cupping")]
    said += [("Dan", f"Did {n} miles on Sunday at {n % 3 + 8}:40 pace") for n in range(1, 80)]
    (text,) = recalled(tmp_path, said, "How old is Dan?")
    assert "I'm 45 Luis" in text, text


def test_a_relative_s_age_is_one_said_of_that_relative(tmp_path: Path) -> None:
    said = [
        ("Dana", "how's your mom doing btw? you mentioned the hip"),
        ("Marcus", "She's getting a hip replacement in March. My mom is 74 and stubborn"),
        ("Dana", "my mom is the same, she won't slow down"),
        ("Marcus", "ha, moms"),
        ("Dana", "and my dad turns 70 next week, we're doing a party"),
    ]
    mother, father, marcus = recalled(
        tmp_path,
        said,
        "How old is Dana's mother?",
        "How old is Dana's father?",
        "How old is Marcus's mom?",
    )
    assert mother.startswith(NOTHING_SAID), mother
    assert not father.startswith(NOTHING_SAID), father
    assert not marcus.startswith(NOTHING_SAID), marcus


def test_where_someone_lives_now_is_found_in_the_words_a_move_is_told_in(
    tmp_path: Path,
) -> None:
    said = [
        ("Gwen", "Moving day is Friday, the van is booked and I am not ready"),
        ("Priyanka", "You'll be fine! Send pics"),
        ("Gwen", "Keys at half past three, and my first night in Penarth on a mattress"),
        ("Priyanka", "Welcome home!!"),
        ("Gwen", "Still unpacking boxes. I've found the kettle, which is all that matters"),
    ]
    (text,) = recalled(tmp_path, said, "Which town does Gwen live in now?", daily=True)
    assert "Penarth" in " ".join(facts(text)[:3]), text


def test_a_reply_that_says_next_to_nothing_gives_its_line_to_the_turn_it_answers(
    tmp_path: Path,
) -> None:
    said = [
        ("Rosa", "Don Pancho came out of his winter box yesterday and ate half a strawberry"),
        ("Evelyn", "🧡"),
        ("Rosa", "he's very slow still"),
    ]
    (text,) = recalled(tmp_path, said, "When did Don Pancho come out of his winter box?")
    assert "strawberry" in text
    assert "Evelyn: 🧡" not in text


def test_a_question_someone_asked_does_not_make_the_topic_theirs(tmp_path: Path) -> None:
    said = [
        ("Dana", "I finished the Chicago half in 2:06!"),
        BJORN,
        ("Dana", "omg what breed is a dog that big??"),
        ("Marcus", "a Bernese, like I said lol"),
    ]
    (text,) = recalled(tmp_path, said, "What breed is Dana's dog?")
    assert text.startswith(NOTHING_SAID), text


def test_what_is_said_to_someone_is_theirs_not_the_speakers(tmp_path: Path) -> None:
    said = [
        ("Ifeoma", "Pepper ignored me for two whole days and then slept on my face"),
        ("Chidi", "that cat has a vendetta against you"),
        ("Ifeoma", "she really does"),
        ("Chidi", "I got the job at Halden & Price!"),
        ("Ifeoma", "I start at Little Steps on Monday"),
    ]
    chidis, ifeomas = recalled(
        tmp_path, said, "What is the name of Chidi's cat?", "What is the name of Ifeoma's cat?"
    )
    # "that cat ... against you": Chidi speaks of Ifeoma's cat, not of one of his
    assert chidis.startswith(NOTHING_SAID), chidis
    assert "vendetta" in ifeomas and not ifeomas.startswith(NOTHING_SAID)


def test_a_fact_telling_of_someone_who_never_speaks_as_him_may_be_his(tmp_path: Path) -> None:
    said = [
        ("Maggie", "Graham loved the sea. It would have been his 70th birthday today."),
        ("Ada", "Oh Maggie. Thinking of you. What will you do?"),
        ("Maggie", "I'm going to sit on the harbour wall where we scattered his ashes."),
        ("Ada", "That sounds perfect"),
    ]
    (text,) = recalled(tmp_path, said, "Where were Graham's ashes scattered?")
    # "his ashes", on Maggie's entity: Graham never speaks, so they may well be his
    assert "harbour wall" in text and not text.startswith(NOTHING_SAID), text


def test_what_someone_else_says_to_the_person_is_theirs(tmp_path: Path) -> None:
    said = [
        ("Rosa", "I'm home and I miss you already"),
        ("Evelyn", "the cat misses you too. he slept on your suitcase all week"),
    ]
    (text,) = recalled(tmp_path, said, "What slept on Rosa's suitcase?")
    assert "suitcase" in text and not text.startswith(NOTHING_SAID), text


def test_a_relative_only_someone_else_spoke_of_is_not_theirs(tmp_path: Path) -> None:
    said = [
        ("Marcus", "her sister lives in Evanston, we're visiting for the weekend"),
        ("Dana", "omg yes please come cheer at the finish"),
        ("Marcus", "we will. Jordan is making a sign"),
        ("Dana", "I finished the Chicago half in 2:06!"),
    ]
    (text,) = recalled(tmp_path, said, "Where does Dana's sister live?")
    assert text.startswith(NOTHING_SAID), text
    said.append(("Dana", "my sister moved to Austin last year, she loves it"))
    (text,) = recalled(tmp_path / "again", said, "Where does Dana's sister live?")
    assert "Austin" in text and not text.startswith(NOTHING_SAID), text


def test_a_name_that_only_calls_someone_does_not_make_the_text_theirs(tmp_path: Path) -> None:
    said = [
        ("Emi", "jiji!! I was waiting for an update"),
        ("Hiroshi", "Emi. The cataract surgery was Tuesday and it went well."),
        ("Emi", "that's such a relief"),
    ]
    hers, his = recalled(
        tmp_path, said, "When was Emi's cataract surgery?", "When was Hiroshi's cataract surgery?"
    )
    assert hers.startswith(NOTHING_SAID), hers
    assert "Tuesday" in his and not his.startswith(NOTHING_SAID), his


def test_a_speaker_s_own_words_outrank_a_reply_that_calls_them_by_name(tmp_path: Path) -> None:
    said = [
        ("Maria", "Hi John, long time no see! How have you been?"),
        ("John", "Busy! These days kickboxing twice a week is my main exercise, after work."),
        ("Maria", "Wow, John! I really need more exercise."),
        ("John", "You should come along sometime."),
        ("John", "I work as a nurse at the hospital now."),
    ]
    with Memory(tmp_path / "mem", "chat", provider="mock") as memory:
        remember_dialogue(memory, said)
        texts = [
            hit.episode.text
            for hit in memory.search("What does John do for exercise?", k=5, episodes=True)
            if hit.kind == "episode" and hit.episode is not None
        ]
    his = texts.index(said[1][1])
    hers = texts.index(said[2][1])
    assert his < hers, texts


def test_news_asked_about_shows_the_question_and_its_reply(tmp_path: Path) -> None:
    said = [
        ("Tariq", "I have a dog! well, on saturday I will"),
        ("Wren", "WHAT?? which one?"),
        ("Tariq", "a retired racing greyhound named Juniper"),
        ("Wren", "I'm so happy for you"),
    ]
    (text,) = recalled(tmp_path, said, "When did Tariq get a dog?")
    line = next(line for line in text.splitlines() if "I have a dog!" in line)
    assert 'answered by Wren: "WHAT?? which one?" then Tariq: "a retired racing greyhound' in line


@pytest.mark.parametrize(
    "question",
    [
        "What happened to Biscuit?",
        "What's going on with Biscuit?",
        "Any news about Biscuit?",
        "Give me an update on Biscuit",
    ],
)
def test_asking_for_someone_s_news_finds_what_was_said_of_them(
    tmp_path: Path, question: str
) -> None:
    said = [
        ("Lena", "I started the new job today, senior analyst at Helix Bank"),
        ("Omar", "congrats!!! how's the team?"),
        ("Lena", "btw how's Biscuit? still limping?"),
        ("Omar", "much better, the vet said it was just a sprain. he's back to stealing socks"),
        ("Lena", "haha good boy"),
    ]
    (text,) = recalled(tmp_path, said, question)
    assert "just a sprain" in "\n".join(facts(text)[:3]), text
    assert "Helix Bank" not in text


def test_a_question_in_words_never_said_gets_what_is_remembered_of_them(
    tmp_path: Path,
) -> None:
    said = [
        ("Ravi", "count me out this week, my sister is visiting from Chennai"),
        ("Sam", "oh nice, how long is Anjali staying?"),
        ("Ravi", "two weeks. she's here for a conference in Seattle then back home"),
        ("Sam", "I got into the MBA program, I start in August"),
    ]
    why, blood = recalled(
        tmp_path, said, "Why is Anjali in the US?", "What is Anjali's blood type?"
    )
    # no text says "US": what is remembered of Anjali answers it, in other words
    assert not why.startswith(NOTHING_SAID), why
    lines = facts(why)
    assert any("conference in Seattle" in line for line in lines[:3]), why
    # but a thing of hers that no text ever names is said to be unremembered
    assert blood.startswith(NOTHING_SAID), blood


def test_a_thing_of_theirs_asked_in_words_never_said_is_no_note(tmp_path: Path) -> None:
    said = [
        ("Anneke", "How is the writing going? Is the defence date fixed?"),
        ("Sung-min", "ugh prof Cho wants chapter 3 rewritten before the thesis defence haha"),
        ("Anneke", "My daughter Sanne had a baby girl on Saturday! Mother and baby are well."),
        ("Sung-min", "congratulations grandma!!"),
    ]
    phd, born = recalled(
        tmp_path,
        said,
        "Who supervises Sung-min's PhD?",
        "When was Anneke's granddaughter born?",
        daily=True,
    )
    # a PhD is "the thesis", a granddaughter "a baby girl": the texts say them in
    # other words, so what is found is no guess about someone else
    assert not phd.startswith(NOTHING_SAID) and "Cho" in phd, phd
    assert not born.startswith(NOTHING_SAID) and "baby girl" in born, born


def test_an_event_asked_in_words_never_said_is_answered_without_a_note(tmp_path: Path) -> None:
    said = [
        ("Priyanka", "Any news from Ffion??"),
        ("Gwen", "Thursday morning, at 4:12! Nine days early. A little girl."),
        ("Priyanka", "Congratulations Nain! Tell me everything"),
        ("Gwen", "Elin Rose weighed seven pounds two ounces. Ffion is shattered."),
    ]
    born, surname = recalled(
        tmp_path, said, "When was Elin born?", "What is Elin's surname?", daily=True
    )
    # "born" is said in other words ("a little girl", "weighed"): no nearest guess
    assert not born.startswith(NOTHING_SAID), born
    assert "Elin Rose" in born, born
    assert surname.startswith(NOTHING_SAID), surname  # nobody ever said one


def test_what_the_user_no_longer_is_leaves_recall(tmp_path: Path) -> None:
    with Memory(tmp_path / "mem", provider="mock") as memory:
        memory.remember("Hi! I'm Marta. I just moved to Lyon for work.", at="2025-01-06T09:00")
        memory.remember("I work as a UX designer at a startup called Flowbit.", at="2025-01-06")
        memory.remember(
            "I'm lactose intolerant, so please don't suggest recipes with milk or cheese.",
            at="2025-01-20T19:00",
        )
        memory.remember(
            "I'm no longer lactose intolerant apparently, the new tests were negative!",
            at="2025-02-20T09:00",
        )
        lactose = memory.recall("Am I lactose intolerant?")
        name = memory.recall("What is my name?")
    assert "please do not suggest recipes" not in lactose, lactose
    assert "no longer lactose intolerant" in lactose
    assert "name is Marta" in facts(name)[0], name


MEI = [
    ("Kofi", "I can own the schema changes, Mei has the API side"),  # Mei: a thing, here
    ("Mei", "yep. we're going with Postgres 16"),
    ("Kofi", "Mei said the API docs are done, her brother is visiting though"),
    ("Mei", "heads up, I'm out next week for my brother's wedding in Accra"),
    ("Dana", "congrats to him! Kofi can you cover API reviews?"),
]


def test_a_speaker_named_before_they_spoke_is_still_whose_texts_not_what(
    tmp_path: Path,
) -> None:
    (text,) = recalled(tmp_path, MEI, "Which database is Mei going with?", daily=True)
    assert "Postgres 16" in text
    assert "wedding" not in text  # "mei" is in every text of hers: it says whose, not which


def test_my_brother_s_wedding_is_the_wedding_of_their_brother(tmp_path: Path) -> None:
    (text,) = recalled(tmp_path, MEI, "Where was Mei's brother's wedding?", daily=True)
    assert not text.startswith(NOTHING_SAID), text
    assert "wedding in Accra" in facts(text)[0]


def test_words_asking_for_news_are_not_what_is_asked() -> None:
    assert tiers.analyze(Graph(), "What happened to Biscuit?").terms == ("biscuit",)
    assert tiers.analyze(Graph(), "What's new with Omar?").terms == ("omar",)
    # the rest of the question still is
    assert "job" in tiers.analyze(Graph(), "What happened to John's job in 2023?").terms
    assert "new" in tiers.analyze(Graph(), "What new hobby did Omar pick up?").terms


def test_a_reply_that_ends_with_a_short_question_asks_what_the_news_left_out() -> None:
    assert _asks_briefly({"text": "where??"})
    # an assistant's reply: a sentence of sympathy, then the question
    assert _asks_briefly(
        {
            "text": "Oh no, that's a shame, but better to know now. What new dates are you looking at?"
        }
    )
    assert not _asks_briefly({"text": "Sounds good. I'll book it then."})
    assert not _asks_briefly(
        {"text": "I think we should talk about the plan for tomorrow and the day after, right?"}
    )


def test_a_yes_is_shown_with_its_question_even_when_its_facts_are_shown(
    tmp_path: Path,
) -> None:
    said = [
        ("Dana", "and then Miso sat on my chest when I got home and I couldn't move"),
        ("Marcus", "Miso is the cat?"),
        (
            "Dana",
            "yes, my grey tabby. she's 6 and a total menace "
            "[shared image: a grey tabby cat sprawled across a purple yoga mat]",
        ),
        ("Marcus", "a menace with a yoga mat"),
    ]
    (text,) = recalled(tmp_path, said, "What is the name of Dana's cat?")
    assert "yes, my grey tabby" in text and 'in reply to Marcus: "Miso is the cat?"' in text, text


FRIENDS = [
    ("Caroline", "Hey Mel! Good to see you! How have you been?"),
    ("Melanie", "Hey Caroline! I'm swamped with the kids & work. What's up with you?"),
    ("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful."),
    ("Melanie", "Wow, that's cool Caroline! What happened that was so awesome?"),
    ("Caroline", "The transgender stories were so inspiring! I was so thankful for the support."),
    (
        "Melanie",
        "I ran a charity race for mental health last Saturday. "
        "It made me realize how important self-care is.",
    ),
    ("Caroline", "That's awesome, Mel! What did you take away from it?"),
    ("Melanie", "My kids loved the pottery workshop we did. I made a bowl with my own hands."),
    ("Caroline", "I'm keen on counseling and mental health jobs, I want to help people like me."),
    ("Melanie", "You'd be a great counselor! Your empathy is amazing."),
]


@pytest.mark.parametrize(
    ("whose", "not_whose", "asked"),
    [
        ("Melanie", "Caroline", "What did {} realize after the charity race?"),
        ("Caroline", "Melanie", "What career path is {} interested in?"),
        ("Melanie", "Caroline", "What did {} make at the pottery workshop?"),
        ("Caroline", "Melanie", "When did {} go to the LGBTQ support group?"),
    ],
)
def test_each_friend_s_facts_are_theirs_and_not_the_other_s(
    tmp_path: Path, whose: str, not_whose: str, asked: str
) -> None:
    theirs, not_theirs = recalled(tmp_path, FRIENDS, asked.format(whose), asked.format(not_whose))
    assert theirs and not theirs.startswith(NOTHING_SAID), theirs
    assert not_theirs.startswith(NOTHING_SAID), not_theirs


def test_a_question_s_verb_finds_the_text_in_another_tense(tmp_path: Path) -> None:
    (text,) = recalled(tmp_path, FRIENDS, "What did Melanie make?")
    assert "I made a bowl" in text and not text.startswith(NOTHING_SAID), text


def test_a_fact_that_misses_the_asked_verb_does_not_hide_its_message(tmp_path: Path) -> None:
    # "kids loved the pottery workshop" matches the workshop, not "make": the
    # message that says "I made a bowl" is shown, near the top.
    (text,) = recalled(tmp_path, FRIENDS, "What did Melanie make at the pottery workshop?")
    assert any("I made a bowl" in line for line in text.splitlines()[:3]), text


def test_a_fact_in_another_tense_of_the_asked_verb_matches(tmp_path: Path) -> None:
    with Memory(tmp_path / "mem", "notes", provider="mock") as memory:
        memory.remember("Dana built a treehouse for her nephew.")
        memory.remember("Dana planted tomatoes and basil in the garden.")
        hits = memory.search("What did Dana build?", k=3)
    assert hits and hits[0].observation is not None, hits
    assert "built" in hits[0].observation.content, hits


def test_a_reply_about_the_past_shows_the_day_before_not_the_coming_one(tmp_path: Path) -> None:
    with Memory(tmp_path / "mem", "chat", provider="mock") as memory:
        memory.remember("happy belated again 🎂", speaker="Tariq", at="2023-11-05T18:00:00Z")
        memory.remember(
            "lol did you have a good birthday though?", speaker="Tariq", at="2023-11-05T18:01:00Z"
        )
        memory.remember(
            "the best. dinner at Fet-Fisk on friday and then drinks with everyone",
            speaker="Wren",
            at="2023-11-05T18:02:00Z",
        )
        text = memory.recall("When did Wren have dinner at Fet-Fisk?")
    assert "friday (3 November 2023)" in text, text


def test_a_turn_quoted_before_a_reply_shows_the_day_its_own_line_shows() -> None:
    said = {
        "id": "ep-2",
        "speaker": "Wren",
        "at": "2023-11-05T18:02:00Z",
        "text": "the best. dinner at Fet-Fisk on friday",
    }
    quoted = recall_text.reply_context([said], [], answers_past=lambda e: e == "ep-2")
    assert quoted == 'in reply to Wren: "the best. dinner at Fet-Fisk on friday (3 November 2023)"'


def test_a_clipped_word_finds_the_full_one() -> None:
    assert "vet" in WORD_FORMS[index_terms("veterinary")[0]]
    assert "tech" in WORD_FORMS[index_terms("technician")[0]]
    assert index_terms("mother")[0] in WORD_FORMS["mom"]
    # a grandchild is the grandkids' one, whichever the question says
    assert index_terms("grandkids")[0] in WORD_FORMS[index_terms("grandchild")[0]]
    assert index_terms("grandchildren")[0] in WORD_FORMS[index_terms("grandkid")[0]]
    assert index_terms("manager")[0] in WORD_FORMS["boss"]
    assert "op" in WORD_FORMS[index_terms("operation")[0]]
    # a shift pattern is a rota, a roster, a rotation
    assert index_terms("rotation")[0] in WORD_FORMS[index_terms("rota")[0]]
    # a photo, a picture and a pic are one thing, whichever the question says
    assert index_terms("picture")[0] in WORD_FORMS[index_terms("photo")[0]]
    assert index_terms("photo")[0] in WORD_FORMS[index_terms("picture")[0]]
    # "my mate" is a friend; "my gf" a girlfriend
    assert index_terms("mate")[0] in WORD_FORMS[index_terms("friend")[0]]
    assert "gf" in WORD_FORMS[index_terms("girlfriend")[0]]
    # "with his colleagues": "some workmates", "a coworker"
    assert index_terms("workmates")[0] in WORD_FORMS[index_terms("colleagues")[0]]
    assert index_terms("coworker")[0] in WORD_FORMS[index_terms("colleague")[0]]


def test_a_derived_noun_finds_its_base_but_not_the_other_way(tmp_path: Path) -> None:
    (apprentice,) = index_terms("apprentice")
    assert apprentice in WORD_FORMS[index_terms("apprenticeship")[0]]
    assert index_terms("friendship")[0] not in WORD_FORMS.get(index_terms("friend")[0], ())
    with Memory(tmp_path / "mem", "s", provider="mock") as memory:
        memory.remember(
            "41. started as an apprentice in 81 at a firm in hindmarsh", speaker="Graham"
        )
        memory.remember("the garden's looking great this week", speaker="Graham")
        text = memory.recall("In which suburb did Graham begin his apprenticeship?")
    assert "hindmarsh" in text and not text.startswith(NOTHING_SAID), text


def test_a_formal_question_word_finds_the_everyday_one_not_the_other_way(
    tmp_path: Path,
) -> None:
    assert index_terms("land")[0] in WORD_FORMS[index_terms("arrive")[0]]
    assert index_terms("arrive")[0] not in WORD_FORMS.get(index_terms("land")[0], ())
    with Memory(tmp_path / "mem", "s", provider="mock") as memory:
        memory.remember("we finally landed thursday, it's like a sauna here", speaker="Liam")
        for filler in ("the new flat has a pool", "work starts monday", "miss you all"):
            memory.remember(filler, speaker="Liam")
        hits = memory.search("When did Liam arrive in Singapore?", k=1, episodes=True)
    assert hits and hits[0].episode is not None and "landed" in hits[0].episode.text


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        ("discharged", "home"),
        ("resign", "quit"),
        ("resigned", "notice"),
        ("engaged", "proposed"),
        ("died", "passed"),
        ("injured", "hurt"),
        ("vacation", "holiday"),
        ("relocated", "moved"),
        ("accommodation", "flat"),
        ("split", "broke"),
        ("born", "baby"),
        ("begin", "started"),
        ("withdraw", "pulled"),
        ("pay", "bought"),
        ("swallowed", "ate"),
        ("gift", "gave"),
        ("visit", "trip"),
        ("repair", "fixed"),
        ("see", "saw"),
        ("find", "found"),
        ("supervised", "supervisor"),
        ("give", "present"),
        ("agent", "realtor"),
    ],
)
def test_a_formal_word_finds_what_a_chat_says_for_it(asked: str, said: str) -> None:
    (term,) = index_terms(asked)
    (everyday,) = index_terms(said)
    assert everyday in WORD_FORMS[term]
    assert term not in WORD_FORMS.get(everyday, ())  # "went home" asks for no discharge


def test_a_birth_is_found_where_a_chat_says_born_or_baby() -> None:
    (birth,), (born,), (baby,) = index_terms("birth"), index_terms("born"), index_terms("baby")
    # "What was Asha's weight at birth?": "she was born at 3.2 kilos", "the baby weighed"
    assert born in WORD_FORMS[birth] and baby in WORD_FORMS[birth]
    assert birth not in WORD_FORMS.get(baby, ())  # "the baby's cold" asks for no birth


def test_a_wedding_and_getting_married_find_each_other() -> None:
    (wedding,), (married,) = index_terms("wedding"), index_terms("married")
    assert married in WORD_FORMS[wedding] and wedding in WORD_FORMS[married]


def test_a_discharge_is_found_in_the_words_a_patient_says(tmp_path: Path) -> None:
    with Memory(tmp_path / "mem", "s", provider="mock") as memory:
        memory.remember(
            "They kept me two nights to watch and I came home yesterday.",
            speaker="Rui",
            at="2024-06-12T10:00:00Z",
        )
        for filler in ("the tomatoes are red now", "the hospital food was terrible"):
            memory.remember(filler, speaker="Rui", at="2024-06-12T10:05:00Z")
        hits = memory.search("When was Rui discharged from the hospital?", k=1, episodes=True)
    assert hits and hits[0].episode is not None and "came home" in hits[0].episode.text


def test_a_message_with_a_sentence_no_shown_fact_holds_is_not_covered() -> None:
    message = {
        "text": "my bachelor thing is next weekend, omar's planning it. cannon beach, just us"
    }
    fact = set(index_terms("bachelor thing is next weekend, omar's planning it"))
    assert not recall_text._covered(Graph(), message, fact)
    assert recall_text._covered(Graph(), message, fact | set(index_terms("cannon beach")))


def test_a_word_said_for_the_asked_one_counts_as_theirs(tmp_path: Path) -> None:
    said = [
        ("Rachel", "how's the new job?? first week!"),
        ("Kevin", "good so far! my manager carla is very intense but in a good way"),
        ("Rachel", "my boss never texts after 5, I'm spoiled"),
    ]
    (text,) = recalled(tmp_path, said, "Who is Kevin's boss?")
    assert not text.startswith(NOTHING_SAID) and "carla" in text, text


def test_a_thing_the_text_says_is_someone_else_s_is_not_theirs(tmp_path: Path) -> None:
    said = [
        ("Joanna", "how did the kids' workshop go?"),
        (
            "Malik",
            "So good. One little girl painted her grandma's cat and then gave it to me, "
            "I almost cried.",
        ),
        ("Joanna", "stop that's adorable. my cat Pickles would never sit for a portrait"),
    ]
    malik, joanna = recalled(
        tmp_path, said, "What is the name of Malik's cat?", "What is the name of Joanna's cat?"
    )
    assert malik.startswith(NOTHING_SAID), malik
    assert "Pickles" in joanna and not joanna.startswith(NOTHING_SAID), joanna


def test_a_question_naming_a_day_prefers_what_was_said_that_day(tmp_path: Path) -> None:
    with Memory(tmp_path / "mem", "chat", provider="mock") as memory:
        for day, text in [
            ("2023-09-02", "Here's a painting I did of the lake at dawn."),
            ("2023-10-13", "Here's one I did last week, a painting of the sunset."),
            ("2023-11-20", "Finished a painting of my kids at the beach today."),
        ]:
            memory.remember(text, speaker="Melanie", at=f"{day}T14:00:00Z")
        hits = memory.search("What painting did Melanie show on October 13, 2023?", k=3)
    assert hits and hits[0].episode is not None and "sunset" in hits[0].episode.text, hits


def test_a_chat_with_an_assistant_keeps_the_user_s_facts_on_the_user(tmp_path: Path) -> None:
    chat = [
        ("user", "Can you suggest a dinner? Also I'm vegetarian, so no meat please."),
        ("assistant", "Try a chickpea curry with spinach, or a mushroom risotto."),
        ("user", "I adopted a cat from the shelter today! Her name is Mochi."),
        ("assistant", "Congratulations on adopting Mochi! You'll need a litter box and a carrier."),
    ]
    with Memory(str(tmp_path), scope="chat", provider="mock") as memory:
        memory.remember_many([{"text": chat[0][1], "speaker": "USER "}])
        for speaker, text in chat[1:]:
            memory.remember(text, speaker=speaker)
        assert {e.name for e in memory.entities()} >= {"User"}
        assert "user" not in {e.name for e in memory.entities()}
        assert "vegetarian" in memory.recall("What diet do I follow?")
        assert "Mochi" in memory.recall("What is my cat's name?")


def test_a_name_said_the_turn_before_the_one_that_says_what_it_names(tmp_path: Path) -> None:
    chat = [
        ("Ifeoma", "Chidiii are you still up? I know it's late there"),
        ("Chidi", "lol it's 11:40, I'm in bed. why are you awake so early?"),
        ("Ifeoma", "Pepper knocked a glass off my nightstand at 5am and now I'm wide awake"),
        ("Chidi", "that cat has a vendetta against you"),
        ("Ifeoma", "Honestly. Anyway we put the deposit down on the venue yesterday!"),
    ]
    with Memory(str(tmp_path), scope="siblings", provider="mock") as memory:
        remember_dialogue(memory, chat)
        assert "Pepper" in memory.recall("What is the name of Ifeoma's cat?")


def test_a_sentence_that_ends_before_a_colon_is_not_a_speaker_label() -> None:
    assert split_speaker("Fair. Try: “If it would help, I can send a draft.”")[0] is None
    assert split_speaker("Dr. Okafor: her weight is fine")[0] == "Dr. Okafor"
    assert split_speaker("J. Smith: hello")[0] == "J. Smith"


def test_a_label_is_left_out_of_the_words_only_when_it_names_the_speaker() -> None:
    line = {"text": "Melanie: Wow, that's cool!", "speaker": "Melanie"}
    assert spoken_words(line) == "Wow, that's cool!"
    assert spoken_words({**line, "speaker": "Caroline"}) == line["text"]
    assert spoken_words({"text": "Note: call the vet", "speaker": None}) == "Note: call the vet"
    assert spoken_words({"text": "user: I moved", "speaker": "User"}) == "I moved"


def test_a_turn_with_no_word_of_its_own_is_not_found_by_its_speaker_s_name(
    tmp_path: Path,
) -> None:
    said = [
        ("Dana", "so I have a work thing I want your opinion on"),
        ("Marcus", "you should"),
        ("Marcus", "?"),
        ("Marcus", "I accepted an offer, engineering manager at Carebridge"),
    ]
    texts = searched(tmp_path, said, "Where does Marcus work now?", k=10)
    assert texts and "you should" not in texts and "?" not in texts


def test_where_someone_works_now_is_answered_by_the_news_not_by_the_word_work(
    tmp_path: Path,
) -> None:
    said = [
        ("Wren", "work has been so busy this month"),
        ("Tariq", "same, I have a work offsite on the 8th"),
        ("Wren", "any news from you?"),
        ("Tariq", "not really. you?"),
        ("Wren", "Brightpath made me an offer. senior product designer. I'm going to take it"),
        ("Tariq", "congrats!!"),
        ("Wren", "yes, that works for me"),
        ("Wren", "it's weird at work without you"),
        ("Wren", "I'm working from home on fridays"),
    ]
    texts = searched(tmp_path, said, "Where does Wren work now?", k=5)
    assert any("Brightpath" in text for text in texts), texts


def test_a_weekday_answering_a_bare_when_after_news_is_the_one_gone(tmp_path: Path) -> None:
    with Memory(tmp_path / "mem", "s", provider="mock") as memory:
        memory.remember("we got engaged!!", speaker="Ellie", at="2025-07-07T08:30:00Z")
        memory.remember("ELLIE!!! when??", speaker="Freya", at="2025-07-07T08:31:00Z")
        memory.remember(
            "Thursday night! he asked at the beach", speaker="Ellie", at="2025-07-07T08:32:00Z"
        )
        text = memory.recall("When did Ellie get engaged?")
    assert "Thursday (3 July 2025)" in text and "10 July" not in text, text


SAM_AND_EVAN = [
    ("2023-11-28T20:00:00Z", "Sam", "Hey Evan! Work has been hectic, three deadlines this week."),
    ("2023-11-28T20:01:00Z", "Evan", "Oof. Hang in there, buddy."),
    ("2023-11-28T20:02:00Z", "Sam", "I'm thinking of getting a bike for the commute."),
    ("2023-12-05T20:00:00Z", "Sam", "Good news: I went to a Weight Watchers meeting yesterday!"),
    ("2023-12-05T20:01:00Z", "Evan", "Nice one, how did it go?"),
    ("2023-12-05T20:02:00Z", "Sam", "Really motivating. Everyone was so supportive."),
    ("2023-12-12T20:00:00Z", "Sam", "The bike arrived, a blue one, and I love it."),
    ("2023-12-12T20:01:00Z", "Evan", "Sweet! Where are you riding first?"),
    ("2023-12-12T20:02:00Z", "Sam", "Along the river probably, then the coffee place."),
    ("2023-12-19T20:00:00Z", "Sam", "Haven't slept much, the neighbours had a party."),
]


def test_a_question_about_a_day_finds_the_text_that_speaks_of_that_day(tmp_path: Path) -> None:
    # no word of the question is in the answer: "yesterday", said on 5 December, is the day
    with Memory(tmp_path / "mem", "chat", provider="mock") as memory:
        for at, speaker, text in SAM_AND_EVAN:
            memory.remember(text, speaker=speaker, at=at)
        hits = memory.search("What was Sam doing on December 4, 2023?", k=2)
        assert any("Weight Watchers" in said(hit) for hit in hits)
        # what Sam said in a week asked about tells what he was up to then
        hits = memory.search("What was Sam up to in the week of 12 December 2023?", k=3)
        assert any("blue one" in said(hit) for hit in hits)


def said(hit: Any) -> str:
    """A hit's words: its text's, or its fact's."""
    if hit.episode is not None:
        return str(hit.episode.text)
    return str(hit.observation.content) if hit.observation is not None else ""


def test_search_with_texts_lists_each_text_once_and_without_them_each_fact(
    tmp_path: Path,
) -> None:
    with Memory(tmp_path / "mem", "chat", provider="mock") as memory:
        memory.remember(
            "I work at Feedzai. I live in Lisbon. My sister Ana is a nurse.",
            speaker="Dana",
            at="2024-06-01T10:00:00Z",
        )
        memory.remember("Nice, I love Lisbon!", speaker="Marcus", at="2024-06-01T10:01:00Z")
        with_texts = memory.search("Where does Dana work and live?", k=10, episodes=True)
        facts = memory.search("Where does Dana work and live?", k=10)
    sources = [hit.episode.id for hit in with_texts if hit.episode is not None]
    assert len(sources) == len(set(sources)) == 2  # Dana's text once, then Marcus's
    assert {"works at Feedzai", "lives in Lisbon"} <= {
        hit.observation.content for hit in facts if hit.observation is not None
    }


def test_someone_who_never_speaks_is_answered_by_texts_that_call_them_mom(tmp_path: Path) -> None:
    said = [
        ("Kristen", "my mom Carol turns 70 next month, we're planning a party"),
        ("Tasha", "how fun! Lily started kindergarten btw"),
        ("Kristen", "already?? send pics"),
        ("Tasha", "[shared image: a small girl with a huge backpack] first day"),
        ("Kristen", "so cute. ugh, mom had a fall on her back step on Saturday"),
        ("Tasha", "oh no!! is she ok?"),
        ("Kristen", "bruised. and the cardiologist put her on a blood thinner, apixaban 5 mg"),
        ("Tasha", "glad she's ok. our dog Biscuit would have knocked her flat"),
    ]
    prescribed, named = recalled(
        tmp_path, said, "Which blood thinner was Carol prescribed?", "What is Carol's dog called?"
    )
    # Carol never speaks: "her", "mom" are her; no text need name her to answer
    assert "apixaban" in prescribed and not prescribed.startswith(NOTHING_SAID), prescribed
    # but a name is said as itself: no text naming her names a dog of hers
    assert named.startswith(NOTHING_SAID), named


def test_a_relative_the_question_calls_by_name_is_remembered_by_it(tmp_path: Path) -> None:
    said = [
        ("Tom", "Aoife's sister Niamh had the baby on Wednesday! A little boy, Cian"),
        ("Halina", "oh how wonderful!!! congratulations to everybody!"),
        ("Tom", "Cian is tiny and very loud. Declan calls him the foreman"),
    ]
    (text,) = recalled(tmp_path, said, "When was Aoife's nephew Cian born?")
    # no text says "nephew": Cian is said by his name
    assert "Cian" in text and not text.startswith(NOTHING_SAID), text


def test_a_relative_spoken_of_but_never_named_has_no_name_remembered(tmp_path: Path) -> None:
    said = [
        ("Tasha", "my parents are doing easter in Sarasota w/ my sister so we're all yours"),
        ("Kristen", "yay! I'll make the zucchini bread"),
        ("Tasha", "my sister says hi btw, she wants the recipe"),
    ]
    (text,) = recalled(tmp_path, said, "What is the name of Tasha's sister?")
    # "Sarasota" is where they go, not her name
    assert text.startswith(NOTHING_SAID), text
    said.append(("Tasha", "oh and my sister Layla is flying in on Friday"))
    (text,) = recalled(tmp_path / "again", said, "What is the name of Tasha's sister?")
    assert "Layla" in text and not text.startswith(NOTHING_SAID), text


def test_a_turn_or_fact_of_a_word_or_two_is_not_found_by_its_speakers_name(
    tmp_path: Path,
) -> None:
    said = [
        ("Kwame", "The permit for the flyover finally came through"),
        ("Lena", "NOOO way"),
        ("Lena", "i approve"),
        ("Lena", "jonas and i are official now, together since sunday"),
        ("Kwame", "That is wonderful news, Lena."),
    ]
    texts = searched(tmp_path, said, "Who is Lena's boyfriend?", k=10)
    # their vectors are near any question naming Lena, for the name alone
    assert "NOOO way" not in texts and "i approve" not in texts, texts


def test_a_question_naming_someone_rarely_spoken_of_searches_their_name(
    tmp_path: Path,
) -> None:
    topics = ["thesis", "rent", "bus", "gym", "pop quiz", "rain", "exam question", "train"]
    said: list[tuple[str | None, str]] = [
        (speaker, f"the {topic} thing on day {day} was a mess again")
        for day in range(1, 7)
        for topic in topics
        for speaker in ("Nadia", "Diego")
    ]
    said.insert(40, ("Nadia", "My brother Kwame proposed to Sophie last night, in a kayak!"))
    # "kwame" in one text of 97: the topic itself, not a speaker's name in every text
    texts = searched(tmp_path, said, "How did Kwame pop the question?", k=3)
    assert any("kayak" in t for t in texts), texts


def test_a_relative_named_through_a_speaker_is_asked_about_not_the_speaker(
    tmp_path: Path,
) -> None:
    said = [
        ("Mercy", "Anjali has joined a dental clinic in Bangalore. She is a dentist"),
        ("Annamma", "wow a dentist in the family"),
        ("Mercy", "Jijo drives me everywhere now. Rosamma says I should pay him a salary"),
        ("Annamma", "lol he is a good boy"),
        (
            "Mercy",
            "I remember Liza doing the same for the nursing entrance. She went into banking!",
        ),
        ("Annamma", "lol and now she's a manager. life"),
    ]
    question = "What line of work did Mercy's daughter Liza end up in?"
    hits = searched(tmp_path, said, question, k=3)
    # Liza's news, not Mercy's own words of work ("pay him a salary")
    assert hits[0] == "lol and now she's a manager. life", hits
    assert not any("Jijo" in text for text in hits), hits


def test_news_of_the_job_asked_about_counts_more_than_other_job_news(tmp_path: Path) -> None:
    said = [
        ("Chloe", "Got the job!! The lab hired me, I start Monday, they offered me a contract"),
        ("Mei-hua", "Very good! You work hard"),
        ("Chloe", "Dave cut my Sundays, so I only do Saturdays at the café in Fitzroy now"),
        ("Mei-hua", "Less money but more study"),
    ]
    hits = searched(tmp_path, said, "Does Chloe still work at the café in Fitzroy?", k=2)
    # the lab's news says nothing of the café: it is no longer found as well as it
    assert hits and "café" in hits[0], hits
    assert not any("lab" in text for text in hits), hits


CANCELLED = [
    ("2025-10-26T09:00:00Z", "Chloe", "Booked my flight home! Landing at Taoyuan on 28 November"),
    ("2025-10-26T09:01:00Z", "Mei", "Only one month. I count the days"),
    ("2025-11-16T10:00:00Z", "Chloe", "Small change, China Airlines cancelled the 28th"),
    ("2025-11-16T10:01:00Z", "Mei", "Oh no! When now?"),
    ("2025-11-16T10:02:00Z", "Chloe", "I land on 30 November instead, same time"),
]


@pytest.mark.parametrize("bulk", [False, True])
def test_a_bare_day_is_read_as_the_day_the_conversation_named_before(
    tmp_path: Path, bulk: bool
) -> None:
    # "the 28th" said on 16 November in the past tense is the 28 November said three
    # weeks before, not 28 October: in recall's quote of the message and in its fact
    with Memory(tmp_path, provider="mock") as memory:
        if bulk:
            memory.remember_many(
                [{"text": text, "at": at, "speaker": who} for at, who, text in CANCELLED]
            )
        else:
            for at, who, text in CANCELLED:
                memory.remember(text, at=at, speaker=who)
        text = memory.recall("Which flight did China Airlines cancel?")
    assert "cancelled the 28th (28 November 2025)" in text
    assert "(28 October" not in text


def test_what_something_is_called_finds_where_its_name_is_given(tmp_path: Path) -> None:
    said = [
        ("Sam", "ok truck update. I have a NAME. Breaded & Buttered"),
        ("Leah", "called at lunch. Dad answered and handed Mom the phone"),
        ("Curt", "a guy called Gary fixed the combine"),
    ]
    texts = searched(tmp_path, said, "What is Sam's food truck called?", k=1)
    assert texts == ["ok truck update. I have a NAME. Breaded & Buttered"]


def test_finally_asks_which_value_not_about_something_final(tmp_path: Path) -> None:
    said = [
        ("Leah", "party's at the farm. in the new barn. like we planned"),
        ("Curt", "Landlord finally got someone out on Monday to fix the boiler"),
        ("Sam", "the Lions hall fell through"),
    ]
    texts = searched(tmp_path, said, "Where was the party finally held?", k=1)
    assert texts == ["party's at the farm. in the new barn. like we planned"]


def test_a_sum_said_three_turns_after_what_it_paid_for_answers_for_it(tmp_path: Path) -> None:
    # in a group chat two friends react before the sum is said
    said = [
        (
            "Priyanka",
            "after we got home Chai ate one of Arjun's socks so I spent last night at the emergency vet",
        ),
        ("Dana", "WHAT"),
        ("Marcus", "oh no is she ok??"),
        ("Priyanka", "she's fine!! they made her throw it up. $600 later lol"),
        ("Dana", "my rent went up again, 1,450 now"),
    ]
    (text,) = recalled(tmp_path, said, "How much did Chai's emergency vet visit cost?")
    assert not text.startswith(NOTHING_SAID) and "$600" in text


def test_a_sum_for_the_thing_said_of_another_does_not_answer(tmp_path: Path) -> None:
    # Niamh's wetsuit has a price, and Dana a sum of her own for something else
    said = [
        ("Niamh", "Ok so... I bought a wetsuit 🙈 Second hand off DoneDeal, €145"),
        ("Dana", "haha amazing. sea swims all winter now?"),
        ("Niamh", "Siobhán talked me into it. Forty lengths on Saturday"),
        ("Dana", "the contractor still hasn't come back about the cabinets"),
        ("Niamh", "The cheek of him! Have you paid him much?"),
        ("Dana", "Deposit plus the first milestone, about $14k so far"),
    ]
    dana, niamh = recalled(
        tmp_path, said, "How much did Dana pay for her wetsuit?", "How much was Niamh's wetsuit?"
    )
    assert dana.startswith(NOTHING_SAID)
    assert not niamh.startswith(NOTHING_SAID) and "€145" in niamh


def test_a_colour_for_the_thing_said_of_another_does_not_answer(tmp_path: Path) -> None:
    # Sipho's cast is purple; Julien's only colour is his new jacket's
    said = [
        ("Thandiwe", "Sipho broke his wrist at rugby, poor boy"),
        ("Julien", "oh no. is it in a cast?"),
        ("Thandiwe", "Yes, Sipho's cast is purple, he says it makes him look tough"),
        ("Julien", "ha. he'll milk it"),
        ("Thandiwe", "When do you land?"),
        ("Julien", "thursday around 2pm"),
        ("Thandiwe", "I'll be there with a sign"),
        ("Julien", "I bought a red jacket for the trip btw, so look for that"),
    ]
    julien, sipho = recalled(
        tmp_path,
        said,
        "What colour was Julien's cast when he broke his wrist?",
        "What colour is Sipho's cast?",
    )
    assert julien.startswith(NOTHING_SAID)
    assert not sipho.startswith(NOTHING_SAID) and "purple" in sipho


def test_a_change_against_a_plan_is_found_in_the_words_of_the_change(tmp_path: Path) -> None:
    # "later than first planned ... end up" says what the wedding's move is measured
    # against: no text says it, and the move itself must still count as the answer
    said = [
        ("Kevin", "Jess and I set the wedding date. 14 September at the boathouse!"),
        ("Rachel", "omg finally!! I'm so happy for you both"),
        ("Kevin", "The boathouse flooded so the wedding moved to 12 October."),
        ("Rachel", "nooo. at least October is pretty"),
        ("Rachel", "Dad's knee surgery got moved too, to the 3rd."),
    ]
    (text,) = recalled(
        tmp_path,
        said,
        "How many weeks later than first planned did Kevin and Jess's wedding end up taking place?",
        daily=True,
    )
    assert not text.startswith(NOTHING_SAID)
    assert "12 October" in text and "14 September" in text


def test_what_a_change_is_measured_against_is_no_term_of_the_question() -> None:
    asked = index_terms(
        tiers.asked_words(
            "By how many weeks was Linda's knee replacement delayed from its first scheduled date?"
        )
    )
    assert "knee" in asked and "delay" in asked
    assert not {"week", "first", "schedul", "date"} & set(asked)
    # "end up" and a unit stay where no plan is measured against
    assert "end" in index_terms(tiers.asked_words("Which city did Chidi end up moving to?"))
    assert "day" in index_terms(tiers.asked_words("How many days did Sam spend in Rome?"))


def test_a_text_s_words_say_the_question_words_they_stand_for() -> None:
    from memgraph.text import as_asked

    assert "arriv" in as_asked(index_terms("Landed at Schiphol"))
    assert "arriv" not in as_asked(index_terms("she ran the race"))
    # whose a topic is reads a text's words so: "Landed" holds "When did David arrive?"
    from memgraph.retrieval.support import _split

    assert any("arriv" in said for _, said in _split("Yes! Landed at Schiphol last Sunday"))


def test_a_short_form_of_a_speaker_s_name_names_no_place(tmp_path: Path) -> None:
    # "Rhi" is Rhiannon, called so by Kofi: no name of the practice
    said = [
        ("Kofi", "oh wow! how do you feel?"),
        (
            "Rhiannon",
            "Weirdly calm. I've got a GP placement in Splott from December so I'll get a "
            "proper taste of it",
        ),
        ("Kofi", "that's a big decision Rhi, proud of you"),
        ("Rhiannon", "Thanks! The practice seems lovely"),
    ]
    (text,) = recalled(
        tmp_path,
        said,
        "What is the name of the GP practice in Splott where Rhiannon did her placement?",
    )
    assert text.startswith(NOTHING_SAID)


def test_a_speaker_s_relative_no_text_found_speaks_of_has_no_job_said(tmp_path: Path) -> None:
    said = [
        ("Nadia", "Terry, the van's booked in for Thursday. Dev, can you do the Aldi run?"),
        ("Dev", "Yes. I finish at the office at 5, I'm an accountant so Fridays are quiet"),
        ("Terry", "I'll drive then. Thirty years as a bus driver, I can handle a Transit"),
        ("Nadia", "Brilliant. I'm at work on reception at the surgery till 2 anyway"),
        ("Nadia", "Work is mad this week, the new system keeps crashing"),
    ]
    (text,) = recalled(tmp_path, said, "What does Nadia's husband do for work?")
    assert text.startswith(NOTHING_SAID)


def test_a_street_asked_for_is_one_a_text_says(tmp_path: Path) -> None:
    said = [
        ("Kiran", "how was the weekend? did the move go ok"),
        ("Tessa", "Exhausting. Dad drove the van down from Bendigo on Saturday"),
        ("Kiran", "legend. and the new job?"),
        ("Tessa", "Ok it's official, I handed the keys back this arvo. RIP Albert St 😭"),
        ("Kiran", "end of an era. that flat had the best parties"),
        ("Tessa", "Ha remember the one with the inflatable flamingo"),
    ]
    (shared,) = recalled(tmp_path / "a", said, "What street was the shared flat on?")
    # "St" is how a chat says "street"
    assert "Albert St" in shared and not shared.startswith(NOTHING_SAID)
    said = [
        ("Tessa", "Josh's new place is nice though, he's got a balcony"),
        ("Kiran", "is it close to the restaurant?"),
        ("Tessa", "10 min walk. He loves it, he moved in on Saturday"),
    ]
    (josh,) = recalled(tmp_path / "b", said, "What street is Josh's new place on?")
    assert josh.startswith(NOTHING_SAID), josh


def test_a_relative_named_as_her_a_few_turns_later(tmp_path: Path) -> None:
    said = [
        ("Kasia", "Hi Robert! How are you?"),
        ("Robert", "Fine. Busy."),
        ("Kasia", "ok, more details?"),
        ("Robert", "Daughter got into Edinburgh. Starts September."),
        ("Kasia", "Congratulations!! What will she study?"),
        ("Robert", "Marine biology."),
        ("Kasia", "That's so cool! Maybe because of the sailing?"),
        ("Robert", "Probably. Her name is Emma, by the way."),
    ]
    (robert,) = recalled(tmp_path, said, "What is Robert's daughter called?")
    assert "Emma" in robert and not robert.startswith(NOTHING_SAID), robert
