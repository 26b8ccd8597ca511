"""The someone-else check: whose a question's topic is, read from the texts found."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memgraph.answer_kinds import answer_cues
from memgraph.graph.graph import Graph
from memgraph.retrieval.never_named import (
    _ROLE_NAMED,
    Voice,
    body_asked,
    brand_asked,
    first_name_said,
    last_name_said,
    relative_named,
)
from memgraph.retrieval.possession import possessed
from memgraph.retrieval.ranking import LONG_QUESTION, Candidate, Query, answers_something
from memgraph.retrieval.support import (
    Support,
    Talk,
    _clauses,
    _how_much_theirs,
    _owner,
    _place_asked,
    _shares,
    support,
)
from memgraph.text import index_terms

DANA = {"id": "entity-1", "name": "Dana"}
MARCUS = {"id": "entity-2", "name": "Marcus"}


def ask(text: str, *, by_dana: bool = False) -> Query:
    """``text`` about Dana: naming her, or (``by_dana``) asked by her in the first
    person, so no word of it is her name."""
    return Query(
        text,
        tuple(dict.fromkeys(index_terms(text))),
        frozenset({DANA["id"]}),
        frozenset() if by_dana else frozenset({"dana"}),
        (frozenset({"dana"}),),
    )


def turns(*said: tuple[dict[str, str], str]) -> tuple[list[Candidate], dict[str, dict[str, str]]]:
    ranked = [Candidate(who, None, episode=f"episode-{n}") for n, (who, _) in enumerate(said)]
    docs = {
        f"episode-{n}": {"id": f"episode-{n}", "text": text} for n, (_, text) in enumerate(said)
    }
    return ranked, docs


def talk_between_dana_and_marcus(
    said: list[tuple[dict[str, str], str]], texts: dict[str, dict[str, str]]
) -> Talk:
    order = sorted(texts, key=lambda e: int(e.split("-")[1]))

    def addressee(episode: str) -> str:
        speaker = said[int(episode.split("-")[1])][0]
        return MARCUS["id"] if speaker is DANA else DANA["id"]

    def before(episode: str) -> list[tuple[str, str]]:
        at = order.index(episode)
        return [(e, texts[e]["text"]) for e in reversed(order[max(0, at - 2) : at])]

    return Talk(addressee, before)


def judged(
    question: str,
    said: list[tuple[dict[str, str], str]],
    *,
    frequency: Callable[[str], float] = lambda _term: 1.0,
    cues: Iterable[str] = (),
    by_dana: bool = False,
    graph: Graph | None = None,
    query: Query | None = None,
    talk: Callable[[dict[str, dict[str, str]]], Talk] | None = None,
    silent: Callable[[str], bool] = lambda _entity: False,
) -> Support | None:
    """What the someone-else check makes of ``question`` after the chat ``said``
    (``query``: the question as analyzed, when it names more than Dana; ``talk``:
    whom each turn speaks to, from the texts, when not between Dana and Marcus)."""
    ranked, docs = turns(*said)
    return support(
        graph or Graph(),
        ranked,
        query or ask(question, by_dana=by_dana),
        episode_docs=docs,
        frequency=frequency,
        talk=talk(docs) if talk else talk_between_dana_and_marcus(said, docs),
        cues=cues,
        silent=silent,
    )


def held(question: str, *said: tuple[dict[str, str], str]) -> tuple[float, float]:
    found = judged(question, list(said))
    assert found is not None
    return found.own, found.anyone


def test_the_day_a_question_names_is_not_its_topic() -> None:
    said = [
        (DANA, "It all started in August last year, when we met at a festival."),
        (MARCUS, "I got picked for a car mod workshop, so excited!"),
    ]
    own, anyone = held("What workshop did Dana get picked for on 11 August, 2023?", *said)
    # Dana's "August" says nothing of the workshop: only Marcus's text holds it
    assert own == 0.0 and anyone == 1.0


def test_a_topic_of_light_verbs_alone_is_no_one_s() -> None:
    # "Where did Claire spend Christmas?" with Christmas an entity: "spend" is all
    # that is asked, and "he spends his days at the mosque" is not it
    assert (
        judged("Where did Dana spend it?", [(MARCUS, "he spends his days at the mosque")]) is None
    )
    # "set off" (for a place that is an entity) is not Marcus's "set up"
    assert judged("When did Dana set off?", [(MARCUS, "I can set up my music room")]) is None
    # a word of its own beside the verb is still judged
    own, anyone = held(
        "Where did Dana spend her sabbatical?", (MARCUS, "I spent my sabbatical in Lisbon")
    )
    assert own == 0.0 and anyone == 1.0


def test_a_clause_said_to_someone_is_theirs() -> None:
    own, anyone = held(
        "What is the name of Dana's dog?",
        (DANA, "how's the dog? you have a dog now, right"),
        (MARCUS, "yes! she's a greyhound"),
    )
    assert own == 0.0 and anyone == 1.0
    own, _ = held(
        "What is the name of Dana's dog?",
        (MARCUS, "your dog is the best dog"),
        (DANA, "I know"),
    )
    assert own == 1.0


def test_in_a_clause_saying_i_and_you_the_nearest_person_before_the_topic_owns_it() -> None:
    # Marcus speaks of Dana's turtle: "you" is the nearest before it
    own, _ = held(
        "Why did Dana get a third turtle?",
        (MARCUS, "I bet last week you never thought you'd be getting a third turtle!"),
    )
    assert own == 1.0
    # "I" is nearest: Marcus's own turtle, however the clause goes on
    own, _ = held(
        "Why did Dana get a third turtle?",
        (MARCUS, "you know I got a third turtle"),
    )
    assert own == 0.0
    # "you" in another phrase of the clause says nothing of whose the topic is
    own, _ = held(
        "When did Dana sign the offer from Furrowline?",
        (MARCUS, "since you only heard it mumbled: Furrowline sent the offer and I signed it"),
    )
    assert own == 0.0


def test_a_plain_clause_after_the_speaker_speaks_of_their_own_is_theirs() -> None:
    # "I'm hooked on ... This is a great football game": Marcus's own game, though
    # Dana spoke of football just before
    own, anyone = held(
        "What football game does Dana play?",
        (DANA, "I love football, always have"),
        (MARCUS, "I'm hooked on FIFA 23 lately. It's the football game everyone plays"),
    )
    assert own < anyone


def test_a_clause_opening_with_he_or_she_does_not_go_on_from_the_speaker_s_own() -> None:
    # Marcus tells of Dana, whose name the turn before says: "I lent him my gloves"
    # is his own news, "He's been on the waiting list two years" is Dana's
    found = judged(
        "How long was Dana on the allotment waiting list?",
        [
            (MARCUS, "Dana's the new guy on plot 14, met him today"),
            (MARCUS, "I lent him my gloves. He's been on the waiting list two years apparently"),
        ],
    )
    assert found is not None and found.own > 0.0 and not found.about_someone_else


def test_praise_speaks_of_no_job() -> None:
    # Dana's "Great job" praises Marcus's race; only his own job is spoken of
    own, anyone = held(
        "What happened to Dana's job?",
        (DANA, "Great job on the race, I'm so proud!"),
        (MARCUS, "my job got cut last week, the whole team"),
    )
    assert own == 0.0 and anyone > 0.0


def test_a_kind_said_with_s_is_no_owner() -> None:
    # "the women's masters quad" is a kind of boat, not some women's: Dana's
    own, anyone = held(
        "How did Dana's quad place at the Head of the Vecht?",
        (DANA, "we entered the women's masters quad at the Head of the Vecht"),
    )
    assert own == anyone == 0.75  # all but "place"
    # "my friend's quad" is someone else's
    own, anyone = held(
        "How did Dana's quad place at the Head of the Vecht?",
        (DANA, "my friend's quad won the Head of the Vecht"),
    )
    assert own < anyone


def test_a_name_that_only_calls_someone_does_not_make_the_text_theirs() -> None:
    own, _ = held("When was Dana's surgery?", (MARCUS, "Dana. The surgery went well."))
    assert own == 0.0
    own, _ = held("When was Dana's surgery?", (MARCUS, "Dana's surgery went well."))
    assert own == 1.0


def test_a_plain_clause_after_a_turn_naming_them_is_theirs() -> None:
    own, _ = held(
        "When was Dana's knee replacement?",
        (MARCUS, "and Dana's knee?"),
        (DANA, "January 17. Full knee replacement."),
    )
    assert own == 1.0


def test_what_someone_says_they_do_not_have_or_do_is_not_theirs() -> None:
    # "Where did Dana get married?": her "not married yet" holds the word, not the
    # wedding; Marcus's is the only one spoken of
    found = judged(
        "Where did Dana get married?",
        [
            (DANA, "We're not married yet, together three years"),
            (MARCUS, "It's where I got married"),
        ],
    )
    assert found is not None and found.own == 0.0 and found.about_someone_else
    own, _ = held("Does Dana have a dog?", (DANA, "I haven't got a dog, just the cat"))
    assert own == 0.0
    # a denial reaches only its own phrase, and none is in a question, in a "not a"
    # or in "can't wait"
    for who, said in (
        (DANA, "it's not over, I signed up for the marathon again"),
        (MARCUS, "isn't that your marathon?"),
        (DANA, "I'm not a marathon runner but I signed up"),
        (DANA, "can't wait for the marathon"),
    ):
        own, _ = held("When is Dana's marathon?", (who, said))
        assert own == 1.0, said
    # a value of the answer's kind denied still tells of their own topic ("Not
    # Norway. ... the Azores instead")
    own, _ = held(
        "Where is Dana going on her honeymoon?",
        (DANA, "Not Norway for the honeymoon, we're going to the Azores"),
    )
    assert own == 1.0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([DANA, MARCUS]), st.text(max_size=80)), min_size=1, max_size=8
    ),
    st.text(min_size=1, max_size=60),
)
def test_whatever_is_said_the_shares_are_in_order(
    said: list[tuple[dict[str, str], str]], question: str
) -> None:
    found = judged(
        f"What is Dana's {question}?",
        said,
        frequency=lambda term: 1.0 + len(term) % 3,
        cues=index_terms("dog dentist"),
    )
    if found is not None:
        assert 0.0 <= found.own <= found.anyone <= 1.0 + 1e-9
        assert found.theirs is None or 0.0 <= found.theirs <= 1.0 + 1e-9


def test_their_name_in_a_turn_said_to_them_only_calls_them() -> None:
    own, anyone = held(
        "When was Dana's charity race?",
        (MARCUS, "Woohoo Dana! The charity race last Saturday was amazing."),
    )
    assert own == 0.0 and anyone == 1.0


def test_an_answer_echoing_the_other_speaker_s_question_is_its_speaker_s() -> None:
    # "running." answers "For walking or running?": the shoes are Marcus's own
    own, anyone = held(
        "Does Dana go running?",
        (DANA, "Love that purple color! For walking or running?"),
        (MARCUS, "These are for running."),
    )
    assert own == 0.0 and anyone == 1.0


def test_a_speaker_s_turns_in_a_row_go_on_from_their_own_words() -> None:
    # Dana's plain clause echoes the race she spoke of a turn before: hers, not Marcus's
    own, anyone = held(
        "Which trail race did Dana enter?",
        (MARCUS, "how was your week"),
        (DANA, "big news, I finally signed up for a race!!"),
        (DANA, "The Ngong Hills trail race, the 21k one."),
    )
    assert own == anyone > 0


def test_her_thing_is_theirs_when_the_question_says_it_so() -> None:
    # "her flat" is the mum's, as the question says it, not someone else's
    own, anyone = held(
        "When did Dana's mum have her fall at her flat?",
        (DANA, "bit of a rough week. Mum had a fall at her flat on Thursday"),
    )
    assert own == anyone == 1.0
    # said without the question's own "her", "her flat" is another's
    own, _ = held("When did Dana's mum fall at the flat?", (DANA, "Mum fell at her flat"))
    assert own < 1.0


def test_someone_else_holding_all_of_the_topic_outweighs_less_than_half_of_theirs() -> None:
    assert Support(own=0.4, anyone=1.0).about_someone_else
    assert not Support(own=0.6, anyone=1.0).about_someone_else
    assert Support(own=0.2, anyone=0.8).about_someone_else  # little of theirs, much more else
    # most of it else, theirs less
    assert Support(own=0.4, anyone=0.8, theirs=0.5).about_someone_else
    assert not Support(own=0.4, anyone=0.6).about_someone_else  # not clearly more
    assert not Support(own=0.2, anyone=0.45).about_someone_else  # nobody's holds most


def test_a_topic_someone_else_speaks_of_again_and_again_is_theirs_not_hers() -> None:
    # Dana's piano lessons hold half of "surfing lessons"; Marcus's hold all of it, twice
    his = [
        (MARCUS, "I've been taking surfing lessons since May"),
        (MARCUS, "my surf lesson today was brutal"),
    ]
    found = judged(
        "Why did Dana take up surfing lessons?", [(DANA, "my piano lessons start next week"), *his]
    )
    assert found is not None and found.own == 0.5 and found.anyone == 1.0
    assert found.theirs < 0.15 and found.about_someone_else
    # one text of hers holding all of it is as much hers as either of his
    found = judged(
        "Why did Dana take up surfing lessons?",
        [(DANA, "I booked surf lessons for June"), *his],
    )
    assert found is not None and found.theirs > 0.3 and not found.about_someone_else
    assert Support(own=1.0, anyone=1.0, theirs=0.1).about_someone_else
    assert not Support(own=1.0, anyone=1.0, theirs=0.25).about_someone_else
    assert Support(own=1.0, anyone=1.0, theirs=0.18).about_someone_else


def test_how_much_is_theirs_is_weighed_against_the_one_other_who_holds_most() -> None:
    weights = {"work": 1.0, "where": 0.0}
    everyone: list[tuple[set[str], bool | None]] = [({"work"}, True)]
    everyone += [({"work"}, False)] * 5
    # five others who each say where they work: where Dana works is no less hers
    assert _how_much_theirs(everyone, [None, "a", "b", "c", "d", "e"], weights) == 0.5
    # one other who says it five times
    assert _how_much_theirs(everyone, [None, "a", "a", "a", "a", "a"], weights) == 1 / 6
    assert _how_much_theirs([({"where"}, True)], [None], weights) == 1.0  # nothing held
    # five notes no one is known to have said are five holders, not one
    assert _how_much_theirs(everyone, [None] * 6, weights) == 0.5


def test_what_they_say_is_in_their_own_words_whatever_was_said_before() -> None:
    # Marcus spoke of customers first; Dana's plain clause echoes him, but the
    # question asks what Dana said.
    said = [
        (MARCUS, "I want my customers to feel at home in the shop."),
        (DANA, "Great goal! Creating a special experience for customers is the key."),
    ]
    own, anyone = held(
        "What did Dana say about creating a special experience for customers?", *said
    )
    assert own == 1.0 and anyone == 1.0
    own, _ = held("What did Dana think of the customers' experience?", *said)
    assert own == 1.0


def test_a_thing_said_to_be_the_addressee_s_is_theirs_even_beside_i() -> None:
    # "I love your turtles": the turtles are Marcus's, whoever loves them
    own, anyone = held("What does Dana love about turtles?", (DANA, "I love your turtles so much!"))
    assert own == 0.0 and anyone == 1.0


def test_a_later_mention_says_whose_the_thing_is_when_the_first_does_not() -> None:
    own, anyone = held(
        "What does Dana love about her turtles?",
        (DANA, "I never knew turtles could be so interesting until I met your turtles!"),
    )
    assert own == 0.0 and anyone == 1.0


def test_what_a_named_person_suggested_is_in_their_own_words() -> None:
    said = [
        (DANA, "any game recommendations for the Switch?"),
        (MARCUS, "Zelda is an awesome open-world game for the Switch."),
    ]
    own, anyone = held("What game did Dana suggest as an open-world game for the Switch?", *said)
    assert own < anyone
    # advice is said to the other, and is still the speaker's own words
    said = [
        (MARCUS, "I'm trying dairy-free baking but butter is the problem"),
        (DANA, "You can use coconut oil instead of butter in dairy-free baking"),
    ]
    found = judged("What substitution does Dana suggest for butter in dairy-free baking?", said)
    assert found is not None and found.own == found.anyone and not found.about_someone_else


def test_a_question_asking_what_someone_did_takes_it_that_they_did() -> None:
    # asked by Dana: what Marcus accomplished, not she
    own, anyone = held(
        "What did Dana accomplish at the retreat?",
        (DANA, "What did you accomplish at the retreat?"),
        (MARCUS, "I finished my engineering project there!"),
    )
    assert own == 0.0 and anyone == 1.0
    # asked of Dana: what she accomplished
    own, _ = held(
        "What did Dana accomplish at the retreat?",
        (MARCUS, "So what did you accomplish at the retreat?"),
        (DANA, "Loads, honestly."),
    )
    assert own == 1.0
    # a yes-or-no question takes nothing for granted
    own, anyone = held(
        "What did Dana accomplish at the retreat?",
        (MARCUS, "Did you accomplish anything at the retreat?"),
    )
    assert own == 0.0 and anyone == 0.0


def test_a_thing_the_user_asks_about_as_mine_is_theirs_only_where_it_is_theirs() -> None:
    # Dana is the one asking: "my brother" is hers, and "his brother" is not
    said = [(DANA, "Leo's away Saturday, his brother Sam could take him out")]
    found = judged("What is the name of my brother?", said, by_dana=True)
    assert found is not None and found.own == 0.0 and found.about_someone_else


def test_having_the_thing_asked_about_does_not_make_the_rest_of_the_topic_theirs() -> None:
    # Dana has a guitar, but the glowing design on one is Marcus's
    said = [
        (MARCUS, "I customized my guitar with a purple glow design, it was featured at the show"),
        (DANA, "I play my guitar every night"),
    ]
    found = judged("What design is featured on Dana's guitar?", said)
    assert found is not None and found.own < 0.5 and found.about_someone_else


def test_a_relative_not_said_to_be_anyone_s_is_not_theirs() -> None:
    # Dana wants to give kids a home: they are not her kids; Marcus's are his
    said = [
        (DANA, "My dream is to give a loving home to kids who need one."),
        (MARCUS, "my kids loved the beach this summer"),
    ]
    found = judged("How often does Dana go to the beach with her kids?", said)
    assert found is not None and found.own == 0.0 and found.about_someone_else
    # her own kids are hers
    said = [(DANA, "took my kids to the beach again, third time this month")]
    found = judged("How often does Dana go to the beach with her kids?", said)
    assert found is not None and found.own == found.anyone > 0.5
    assert not found.about_someone_else
    # and so are "the kids" in her own turn
    said = [(DANA, "Femke took the kids to the beach yesterday morning")]
    found = judged("How often does Dana go to the beach with her kids?", said)
    assert found is not None and found.own == found.anyone > 0.5
    assert not found.about_someone_else


def test_a_relative_only_ever_spoken_of_as_nobody_s_says_nothing_of_theirs() -> None:
    said = [(DANA, "He's 8 and wants a brother so badly. He says a sister would be acceptable")]
    found = judged("What does Dana's sister do?", said)
    assert found is not None and found.unowned and found.about_someone_else
    said = [(DANA, "my sister is a nurse in Evanston")]
    found = judged("What does Dana's sister do?", said)
    assert found is not None and not found.unowned and not found.about_someone_else
    # the kinship word alone in her own turn answers whose ("Marcus is your...?")
    said = [(DANA, "Sister! Sorry, I assume people know. She's a nurse")]
    found = judged("What does Dana's sister do?", said)
    assert found is not None and not found.unowned and not found.about_someone_else


def test_a_relative_is_judged_alone_however_much_else_of_theirs_holds_the_topic() -> None:
    # Dana's "stroke" text says nothing of her father; Marcus's dad had the stroke
    found = judged(
        "When did Dana's father have a stroke?",
        [(DANA, "I read a stroke recovery guide today"), (MARCUS, "my dad had a stroke on monday")],
    )
    assert found is not None and found.own == 0.0 and found.about_someone_else


def judged_facts(question: str, *facts: tuple[dict[str, str], str]) -> Support | None:
    """What the someone-else check makes of ``question`` from stored facts alone,
    each ``(entity, content)``."""
    ranked = [
        Candidate(who, {"id": f"obs-{n}", "content": content})
        for n, (who, content) in enumerate(facts)
    ]
    return support(Graph(), ranked, ask(question), episode_docs={}, frequency=lambda _term: 1.0)


def test_a_relative_a_fact_of_theirs_opens_with_is_theirs() -> None:
    # "My sister is a nurse" is stored as Dana's fact "sister is a nurse"
    facts = [(DANA, "sister is a nurse in Evanston"), (DANA, "wants to give kids a loving home")]
    found = judged_facts("What does Dana's sister do?", *facts)
    assert found is not None and found.own == 1.0 and not found.about_someone_else
    found = judged_facts("How old are Dana's kids?", *facts)
    assert found is not None and found.about_someone_else


def test_a_fact_of_theirs_about_someone_else_s_thing_is_not_theirs_for_it() -> None:
    # "I love your paintings" is stored as Dana's fact "loves Marcus's paintings"
    marcus = (MARCUS, "paints the lake at dawn")
    found = judged_facts(
        "What does Dana paint?", (DANA, "loves Marcus's paintings of the lake"), marcus
    )
    assert found is not None and found.own == 0.0 and found.about_someone_else
    # her own ("loves her paintings", "Dana's paintings") stays hers
    for content in ("loves her paintings of the lake", "sold Dana's paintings"):
        found = judged_facts("What does Dana paint?", (DANA, content), marcus)
        assert found is not None and found.own == 1.0, content


def test_a_question_naming_what_is_theirs_by_its_own_name_is_not_judged() -> None:
    # "Dana's sister Kavya": what is said of Kavya is said of the sister, whoever says it
    # Kavya typed a thing, as an extractor that never saw her speak may leave her
    graph = _graph((1, "Dana", "person"), (3, "Kavya", "thing"))
    query = _naming("When was Dana's sister Kavya born?", "Dana", "Kavya")
    ranked, docs = turns((MARCUS, "my sister was born in March, I remember the snow"))
    found = support(graph, ranked, query, episode_docs=docs, frequency=lambda _term: 1.0)
    assert found is None


def test_a_reaction_to_the_other_s_news_is_theirs() -> None:
    # congratulating, being sorry to hear, saying how it sounds: the news is Marcus's
    for reply in (
        "Wow, congrats on the promotion!",
        "Oops, sorry 'bout the promotion news.",
        "Keep up the great work on that promotion!",
        "The promotion sounds amazing.",
        "That's awesome news about the promotion.",
        "Hey Marcus, congrats on the promotion!",
    ):
        own, anyone = held(
            "What did Dana get promoted to?",
            (MARCUS, "Guess what, I made shift lead today"),
            (DANA, reply),
        )
        assert (own, anyone) == (0.0, 1.0), reply
    # a wish for the other's day is theirs too, unless it is one's own or one's kin's
    for wish in ("Happy birthday Marcus!", "happy belated bday!!", "have a great trip!"):
        own, anyone = held(
            "When is Dana's birthday trip?",
            (MARCUS, "off on my birthday trip tomorrow"),
            (DANA, wish),
        )
        assert (own, anyone) == (0.0, 1.0), wish
    own, _ = held(
        "When is Dana's birthday?",
        (MARCUS, "what's new?"),
        (DANA, "happy birthday to me, 40 today"),
    )
    assert own == 1.0
    # "I" said of the speaker's own stays theirs, reaction words or not
    own, _ = held(
        "What did Dana get promoted to?",
        (MARCUS, "how was your week?"),
        (DANA, "My promotion sounds amazing when I say it out loud"),
    )
    assert own == 1.0


def test_when_recently_or_lately_is_no_part_of_the_topic() -> None:
    own, anyone = held(
        "What did Dana recently get promoted to?",
        (DANA, "Lately I've been so tired, recently everything's a lot"),
        (MARCUS, "I got promoted to shift lead!"),
    )
    assert (own, anyone) == (0.0, 1.0)


def _graph(*entities: tuple[int, str, str]) -> Graph:
    graph = Graph()
    for number, name, kind in entities:
        entity = {"id": f"entity-{number}", "name": name, "type": kind, "source": "main"}
        graph.apply([{"op": "entity", "entity": {**entity, "createdAt": "2024-01-01T00:00:00Z"}}])
    return graph


def _naming(text: str, *names: str) -> Query:
    """``text`` naming the entities of :func:`_graph` numbered 1 and 3 by ``names``."""
    ids = frozenset(f"entity-{n}" for n in (1, 3)[: len(names)])
    groups = tuple(frozenset(name.lower().split()) for name in names)
    return Query(
        text, tuple(dict.fromkeys(index_terms(text))), ids, frozenset().union(*groups), groups
    )


def test_a_text_naming_a_thing_the_question_names_is_not_theirs_for_that() -> None:
    # "Nike" in Dana's congratulations names the company, not Dana
    question = "What deal did Dana sign with Nike?"
    found = judged(
        question,
        [(MARCUS, "I just signed a shoe deal with Nike"), (DANA, "That deal with Nike, wow!")],
        graph=_graph((1, "Dana", "person"), (3, "Nike", "organization")),
        query=_naming(question, "Dana", "Nike"),
    )
    assert found is not None and found.about_someone_else
    # "Dana's Nani": a text naming Nani is about what the question says is hers
    question = "When did Dana's Nani break her hip?"
    found = judged(
        question,
        [(DANA, "Nani fell yesterday. she's broken her hip")],
        graph=_graph((1, "Dana", "person"), (3, "Nani", "thing")),
        query=_naming(question, "Dana", "Nani"),
    )
    assert found is not None and found.own == 1.0


def test_a_plain_clause_after_the_speaker_s_own_is_the_speaker_s() -> None:
    # "It's a waterfall" goes on from "a photo I took", not from Dana's waterfalls
    own, anyone = held(
        "Where did Dana take a photo of a waterfall?",
        (DANA, "I love waterfalls so much"),
        (MARCUS, "here's a photo I took last week! It's a waterfall near Sedona."),
    )
    assert own < anyone == 1.0


def test_a_shared_photo_s_caption_is_the_sharer_s() -> None:
    own, anyone = held(
        "What did Dana see at the lake at sunset?",
        (DANA, "we spent the whole day at the lake"),
        (MARCUS, "[shared image: a canoe on a lake at sunset]"),
    )
    assert own < anyone
    # the words after a caption ("on your nan's couch") do not make it the addressee's
    question = "What kind of dog does Dana have?"
    found = judged(
        question,
        [
            (MARCUS, "how old is he now?"),
            (
                DANA,
                "Here is one that worked. [shared image: a black labrador asleep on a green "
                "couch] That is Bosun on your nan's couch where he is not supposed to be.",
            ),
        ],
        cues=answer_cues(question, judging=True),
    )
    assert found is not None and found.own == found.anyone > 0


def test_a_word_the_question_writes_in_lower_case_names_no_one() -> None:
    # an entity "Surgery" (from "Surgery went well!") is not named by "her eye surgery"
    question = "Which hospital did Dana have her eye surgery at?"
    said = [(MARCUS, "my eye surgery is at Mercy on Friday"), (DANA, "good luck!")]
    graph = _graph((1, "Dana", "person"), (3, "Surgery", "person"))
    found = judged(question, said, graph=graph, query=_naming(question, "Dana", "Surgery"))
    assert found is not None and found.about_someone_else
    # written with a capital, a second person named is still two people asked about
    question = "Which hospital did Dana and Surgery pick?"
    assert judged(question, said, graph=graph, query=_naming(question, "Dana", "Surgery")) is None
    # and a thing so named ("DOG", from "I WANT A DOG") leaves its word to the topic
    question = "What is the name of Dana's dog?"
    said = [(MARCUS, "my dog is called Bjorn"), (DANA, "I love Bjorn")]
    graph = _graph((1, "Dana", "person"), (3, "DOG", "thing"))
    found = judged(question, said, graph=graph, query=_naming(question, "Dana", "DOG"))
    assert found is not None and found.about_someone_else


def test_an_in_law_spoken_of_as_another_s_relative_is_not_someone_else_s() -> None:
    found = judged(
        "Which hotel did Dana's father-in-law suggest?",
        [(DANA, "Arjun's dad suggested a heritage hotel")],
    )
    assert found is not None and not found.about_someone_else


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(list("abcdefgh")),
        st.floats(min_value=0.01, max_value=10.0, allow_nan=False),
        min_size=1,
    ),
    st.randoms(use_true_random=False),
)
def test_the_shares_do_not_depend_on_the_order_words_come_in(
    weights: dict[str, float], shuffler: random.Random
) -> None:
    # a set's order changes from one process to the next: the judgement must not
    said = list(weights)
    parts: list[tuple[set[str], bool | None]] = [(set(said[::2]), True), (set(said), False)]
    reordered = list(weights.items())
    shuffler.shuffle(reordered)
    assert _shares(parts, weights) == _shares(parts, dict(reordered))


def test_how_the_thing_is_going_asks_about_the_addressee_s() -> None:
    for asked in ("how's the job hunt, I've been thinking about you", "how was the job fair?"):
        own, anyone = held(
            "How is Dana's job hunt going?",
            (MARCUS, "i applied to three places this week, the job hunt is brutal"),
            (DANA, asked),
        )
        assert (own, anyone) == (0.0, 1.0), asked


def test_a_word_that_ends_what_is_theirs_keeps_the_rest_of_it() -> None:
    # "go" ends "Dana's fall scents": what is hers is the scents, not the fall
    own, anyone = held(
        "When did Dana's fall scents go on sale?",
        (MARCUS, "I had a fall on the ice last week"),
        (DANA, "ouch!! you ok?"),
        (MARCUS, "yeah just a bruise"),
        (DANA, "shop's launching fall scents monday"),
    )
    assert own == anyone > 0.5
    # the verb before "at" ends it too: "Dana's brother work at" is her brother
    found = judged(
        "Which hospital does Dana's brother work at?",
        [(MARCUS, "my brother Casey is flying in from Denver"), (DANA, "work is so busy")],
    )
    assert found is not None and found.about_someone_else


def test_a_thing_they_are_named_as_having_done_by_a_pronoun_is_theirs() -> None:
    # "Elsa named it Birgit": "it" is the canoe of the turns before
    def spoken_to_chidi(docs: dict[str, dict[str, str]]) -> Talk:
        return Talk(
            lambda _episode: "entity-9",
            lambda episode: [(e, docs[e]["text"]) for e in sorted(docs) if e < episode][::-1][:2],
        )

    found = judged(
        "What did Dana name the canoe?",
        [
            (MARCUS, "the canoe is done, launch is Saturday"),
            (MARCUS, "OMG does it have a name?"),
            (MARCUS, "Dana named it Birgit"),
        ],
        talk=spoken_to_chidi,
    )
    assert found is not None and found.own == 1.0


def test_someone_who_never_speaks_is_told_of_as_mom_or_her() -> None:
    # Carol never speaks: Kristen's "Mom's appointment" may be hers, and is not
    # someone else's for want of her name
    def never_speaks(entity: str) -> bool:
        return entity == DANA["id"]

    found = judged(
        "When is Dana's appointment?",
        [
            (MARCUS, "Mom's appointment is Tuesday"),
            (MARCUS, "appointment is on the 11th, I'm going with her"),
        ],
        silent=never_speaks,
    )
    assert found is None or not found.about_someone_else
    # "my sister" still says whose: someone else's
    found = judged(
        "What does Dana's sister do?",
        [(MARCUS, "my sister is a nurse")],
        silent=never_speaks,
    )
    assert found is not None and found.about_someone_else


def test_a_question_typed_without_its_question_mark_is_nobody_s() -> None:
    # "whos the new boss" asks Marcus about his boss: Dana has none
    own, anyone = held(
        "Who is Dana's manager?",
        (DANA, "whos the new boss"),
        (MARCUS, "Sam is my boss now"),
    )
    assert own == 0.0 and anyone == 1.0
    # a sentence that only opens with "what" is no question
    own, _ = held("Who is Dana's boss?", (DANA, "what a week my boss quit"))
    assert own == 1.0


def naming(question: str, speaker: str, name: str) -> Callable[..., bool | None]:
    """Whether texts name the relative ``question`` asks of, in a chat where
    ``speaker`` speaks and ``name`` is a name memory holds."""
    asked = ask(question)

    def named(*texts: str) -> bool | None:
        return relative_named(
            asked, texts, known=lambda word: word == speaker, is_name=lambda w: w == name
        )

    return named


def test_a_relative_s_name_is_a_capitalised_word_near_the_kinship_word() -> None:
    named = naming("What is the name of Dana's sister?", "Marcus", "Layla")

    assert named("could you bring your sister? Layla would love it") is True
    assert named("my sister Layla moved to Denver") is True
    # a place, a month, a speaker, or a word said in lower case elsewhere is no name
    assert named("my sister lives in Denver now, since March") is False
    assert named("Marcus, my sister says hi", "really? really.") is False
    assert named("my sister is great. Really great", "really? really.") is False
    # a holiday, or another relative, is no name either
    assert named("he'd asked my sister the week before Christmas") is False
    assert named("my sister and Mum are coming") is False
    # whose relative it is ("Owen's mom"), or a word that opens a sentence and is
    # never written as a name inside one, is not the relative's name
    assert named("Owen's sister wants a string quartet") is False
    assert named("Big news though. The wedding moved! my sister can't travel") is False
    assert named("Big news though. my sister Layla can't travel") is True
    # a name opening the sentence after a short one about her is hers
    assert named("my sister is here! Layla arrived on Wednesday") is True
    assert named("my sister stays in town for a whole week. Layla arrived") is False
    # a word a chat capitalises where no full stop was typed names no one
    assert named("my sister comes tues Anyone up for drinks") is False
    assert named("baking a cake for my sister Aww she'll love it") is False
    # "Happy Mother's Day", "she bossed him around": no mother, no boss spoken of
    mother = ask("What is the name of Dana's mother?")
    assert (
        relative_named(mother, ["Happy Mother's Day Marcus, call Layla"], lambda _: False)
        is not True
    )
    boss = ask("What is the name of Dana's manager?")
    assert named_role(boss, "Layla's sister bossed him around for a year") is not True
    assert named_role(boss, "my manager Layla is lovely") is True
    # someone asked her name: the answer may follow in lower case ("yumiko 🙂")
    assert named("What's your sister's name? I want to write her a note") is None
    # no text speaks of a sister Dana is said to have: none is remembered
    assert named("the weather is great") is False
    # a niece or a cousin is often told of through another ("your sister's toddler")
    niece = ask("What is the name of Dana's niece?")
    assert relative_named(niece, ["the weather is great"], lambda _: False) is None
    assert relative_named(niece, ["my niece is three"], lambda _: False) is False
    # the question names the relative itself: it asks for something else of him
    nickname = ask("What nickname does Dana call her brother Teo?")
    assert relative_named(nickname, ["my brother is great"], lambda _: False) is None
    dog = ask("What is the name of Dana's dog?")
    assert relative_named(dog, ["my puppy Biscuit ate it"], lambda _: False) is True
    # a pet no text speaks of, of someone the question names, is none remembered
    assert relative_named(dog, ["the weather is great"], lambda _: False) is False


def test_a_relative_who_answers_who_someone_is_is_named_by_the_question() -> None:
    # "Who's Alfie?" "My grandson. He's 17": the grandson is named in the turn before
    grandson = ask("What is the name of Dana's grandson?")
    text = ["My grandson. He's 17 and would like you to know he is very strong."]
    assert relative_named(grandson, text, lambda _: False, asked_before=lambda: ["Who's Alfie?"])
    assert (
        relative_named(grandson, text, lambda _: False, asked_before=lambda: ["who's coming?"])
        is False
    )


def test_a_pet_only_ever_said_as_its_kind_is_never_named() -> None:
    dog = ask("What is the name of Dana's dog?")
    assert relative_named(dog, ["my dog"], lambda _: False) is False
    kitten = ask("What is the name of Dana's kitten?")
    assert relative_named(kitten, ["the cat is asleep"], lambda _: False) is False
    # but a pet is often called by its name alone, a sentence or a turn away from its
    # kind: the name may be its, left to the texts' other words
    bjorn = "Bjorn does the same with my boots. 110 pounds of mountain dog"
    is_bjorn = "Bjorn".__eq__
    assert relative_named(dog, [bjorn], lambda _: False, is_bjorn) is None
    asked_after = ask("What is the name of Dana's dog?")
    text = ["Sleeping. It's been warm. She's not a summer dog."]
    assert (
        relative_named(asked_after, text, lambda _: False, asked_before=lambda: ["how's Bonnie?"])
        is None
    )
    assert (
        relative_named(asked_after, text, lambda _: False, asked_before=lambda: ["how's work?"])
        is False
    )
    # asked after by a name in lower case ("how's pickles?")
    sink = ["tree's gone thank god. now she just sits in the sink. 14 lbs of cat"]
    cat = ask("What is the name of Dana's cat?")
    before = ["how's pickles, still terrorizing the christmas tree?"]
    assert relative_named(cat, sink, lambda _: False, asked_before=lambda: before) is None
    # named in the reply to the text that speaks of it
    wax = ["he tried pouring once and got wax on the cat 🙃"]
    assert relative_named(cat, wax, lambda _: False, replies=lambda: ["poor Waffles 😂"]) is None
    assert relative_named(cat, wax, lambda _: False, replies=lambda: ["oh no 😂"]) is False


def test_a_pet_said_to_be_the_other_speaker_s_is_not_theirs() -> None:
    cat = ask("What is the name of Dana's cat?")
    texts = [
        "Haha we do steal a goal sometimes. How's your cat btw?",
        "Hahaha classic cat. How was the flight?",
    ]
    voices = [Voice("Dana", "Anneke"), Voice("Dana", "Anneke")]
    before = ["", "Bolder is angry that I was gone."]

    def named(voices: list[Voice]) -> bool | None:
        return relative_named(
            cat, texts, lambda _: False, voices=voices, asked_before=lambda: before
        )

    # Dana asks after Anneke's cat: the cat named beside Dana's words is Anneke's
    assert named(voices) is False
    # the same words from Anneke, asking after Dana's cat, leave the name Dana's
    assert named([Voice("Anneke", "Dana"), Voice("Anneke", "Dana")]) is None
    # and one of Dana's own "my cat" keeps the name beside it hers
    mine = [*texts, "my cat hates the rain"]
    assert (
        relative_named(
            cat,
            mine,
            lambda _: False,
            voices=[*voices, Voice("Dana", None)],
            asked_before=lambda: [*before, ""],
        )
        is None
    )


def test_a_pet_they_ask_after_is_not_theirs() -> None:
    # Dana asks her son after his cat ("and the cat, the mouth is healed?")
    cat = ask("What is the name of Dana's cat?")
    texts = [
        "and the cat, the mouth is healed?",
        "hahaha a cat who steals is a healthy cat, my mother always said",
    ]
    before = ["", "He stole a slice of ham. Pierogi is back to normal"]

    def named(voices: list[Voice]) -> bool | None:
        return relative_named(
            cat, texts, lambda _: False, voices=voices, asked_before=lambda: before
        )

    assert named([Voice("Dana", "Tom"), Voice("Dana", "Tom")]) is False
    # asked after by her son, the cat named beside it may be hers
    assert named([Voice("Tom", "Dana"), Voice("Tom", "Dana")]) is None


def test_a_pet_another_s_household_has_is_not_theirs() -> None:
    cat = ask("What is the name of Dana's cat?")
    spoilt = ["I also have a very spoilt ginger cat called Fibonacci who sits on my marking"]

    def named(texts: list[str], voices: list[Voice]) -> bool | None:
        return relative_named(cat, texts, lambda _: False, voices=voices)

    # Thandiwe's cat, named beside her "I have": not Dana's
    assert named(spoilt, [Voice("Thandiwe", "Dana")]) is False
    # the same words from Dana: hers
    assert named(spoilt, [Voice("Dana", "Thandiwe")]) is True
    # "our cat", "we got a cat" say whose household too
    ours = ["our cat Mango knocked the tree over", "We got a cat. Her name is Mango"]
    assert named(ours[:1], [Voice("Thandiwe", "Dana")]) is False
    assert named(ours[1:], [Voice("Thandiwe", "Dana")]) is False
    assert named(ours[1:], [Voice("Dana", "Thandiwe")]) is True
    # a cat had only if something happens is no one's yet
    maybe = ["the landlord said it's fine if we got a cat, Mango would love it"]
    assert named(maybe, [Voice("Thandiwe", "Dana")]) is True


def test_a_pet_whose_name_they_ask_is_not_theirs() -> None:
    dog = ask("What is the name of Dana's dog?")
    texts = [
        "A DOG!!!! What's his name?! What's his story?! I need everything!!",
        "Retired racing greyhound. His racing name was Lightning Bolt.",
    ]
    voices = [Voice("Dana", "Nadia"), Voice("Nadia", "Dana")]
    assert relative_named(dog, texts, lambda _: False, voices=voices) is False
    # asking what to call their own dog is no question about another's
    own = ["We got a puppy!! What should we name him?", "Biscuit?? he looks like a Biscuit"]
    assert relative_named(dog, own, lambda _: False, voices=voices) is None


def test_a_question_about_a_pet_s_name_does_not_ask_the_name() -> None:
    meaning = ask("What does Dana's puppy's name mean in English?")
    assert relative_named(meaning, ["the weather is great"], lambda _: False) is None
    chose = ask("Who came up with the name of Dana's cat?")
    assert relative_named(chose, ["the weather is great"], lambda _: False) is None


def test_someone_asked_of_by_their_role_is_named_near_the_role_word() -> None:
    landlord = ask("What is the name of Dana's landlord in Leeds?")

    def named(*texts: str) -> bool | None:
        return relative_named(landlord, texts, known=lambda word: word == "Marcus")

    # the landlord is spoken of, never named: nothing remembered says the name
    assert named("our landlord is raising the rent again") is False
    assert named("our landlord Mr. Petrakis is raising the rent") is True
    # after "called", "named" or a title, a name in lower case is still a name
    assert named("the landlord's an old guy called jim") is True
    assert named("landlord sent dr okafor round, long story") is True
    # a speaker named near the role is no name of it
    assert named("Marcus, the landlord is at it again") is False
    # no text speaks of a landlord: left to the texts' other words (a role has
    # other words: "the PT", "our guy")
    assert named("the weather is great") is None
    # but a place no text speaks of by its kind has no name remembered
    tapas = ask("What is the name of the tapas bar in El Born Dana loved?")
    assert relative_named(tapas, ["the weather is great"], lambda _: False) is False
    assert relative_named(tapas, ["that tapas bar, Bar Cañete, so good"], lambda _: False)
    # the role may come after what the question says of it
    tailor = ask("What is the name of the Leeds tailor who sewed Dana's dress?")
    assert relative_named(tailor, ["the tailor was brilliant"], lambda _: False) is False
    cardiologist = ask("What is the first name of Papá's cardiologist?")
    assert relative_named(cardiologist, ["his cardiologist is strict"], lambda _: False) is False
    # "the fire chief's name", "Dana's tile guy": roles too
    chief = ask("What was the fire chief's name who came to Dana's barn fire?")
    assert named_role(chief, "the fire chief thinks it was the wiring") is False
    assert named_role(chief, "the fire chief, Dale Brandt, thinks it was the wiring") is True
    guy = ask("What is the name of Dana's tile guy?")
    assert named_role(guy, "the tile guy comes Monday") is False
    # "the shelter name of the cat" asks the cat's name, not the shelter's
    assert _ROLE_NAMED.search("What was the shelter name of the cat Dana adopted?") is None
    # a nationality describes the cardiologist; it does not name him
    assert named_role(cardiologist, "Nice cardiologist, Irish fella, very calm") is False
    assert named_role(cardiologist, "his cardiologist Dr Walsh is calm") is True
    # a place or a body is asked of by what it is, and named as people are
    shelter = ask("What is the name of the shelter where Dana adopted Dubu?")
    assert named_role(shelter, "got him from a shelter in Mapo") is False
    assert named_role(shelter, "the shelter is called Happy Paws") is True
    # what the question itself says of it is not its name
    restaurant = ask("What was the name of the Lebanese restaurant Dana went to?")
    assert named_role(restaurant, "that Lebanese restaurant was amazing") is False


def test_a_relative_s_name_is_in_the_sentence_that_speaks_of_them() -> None:
    mother = ask("What is Kwame's mother's name?")
    named = naming("What is Kwame's mother's name?", "Kwame", "Ama")

    # a name in another sentence, or another clause, is someone else's
    assert named("Efua did cry. So did my mother. Mr. Boateng spoke twice.") is False
    assert named("Kate's coming up from Wellington too, so Mum gets a break") is False
    assert named("my mom's jade plant 🌱 Noor has so many plants") is False
    # the same sentence, or the next one opening with the name or saying a name
    assert named("So did my mother Ama, she cried") is True
    assert named("my mother? Ama would love it") is True
    assert named("I met his mother. Her name is Ama") is True
    assert named("my mother. Mr. Boateng spoke") is False
    # "their mother" is the mother of others; names in any Latin letters count
    children = "The children were so happy to see their mother, Thandi would not let go"
    assert relative_named(mother, [children], lambda _: False, voices=[Voice("Ama", None)]) is False
    assert named("My mum Ayşe is cooking for 60 people") is True
    # "Mamá" is a mother, not a name
    assert named("the cardiologist cleared him. Mamá is thrilled") is False


def test_a_relative_or_role_named_in_the_turn_before_or_after() -> None:
    def named(question: str, text: str, *, after: str = "", before: str = "") -> bool | None:
        """Whether ``text`` names whom ``question`` asks of, with the turn ``after``
        it and the one ``before`` it."""
        return relative_named(
            ask(question),
            [text],
            lambda word: word == "Marcus",
            replies=lambda: [after],
            asked_before=lambda: [before],
        )

    baby = "What is the name of Solveig's baby?"
    # "The baby? Tell me!" answered with "her name is Frida"
    assert named(baby, "The baby? Tell me!", after="her name is Frida") is True
    assert named(baby, "The baby? Tell me!", after="soon!") is False
    contractor = "What is the name of the contractor working on Marcus's house?"
    # "who's Rick again?" "our contractor. very nice man"
    ours = "our contractor. very nice man"
    assert named(contractor, ours, before="who's Rick again?") is True
    assert named(contractor, ours, before="who is your guy?") is False
    cardiologist = "What is the name of Papá's cardiologist?"
    # "the cardiologist cleared him to drive" "Dr. Okafor?": a short reply naming him
    cleared = "the cardiologist cleared him to drive again last week"
    assert named(cardiologist, cleared, after="Dr. Okafor?") is True
    long_reply = "ok so the long story is that the new place is Dr. Okafor's old one"
    assert named(cardiologist, cleared, after=long_reply) is False


def test_a_relative_or_role_named_as_him_or_her_a_few_turns_later() -> None:
    def named(question: str, text: str, later: str) -> bool | None:
        """Whether ``text`` names whom ``question`` asks of, with what the person
        asked about said in the few turns ``later``."""
        return relative_named(
            ask(question), [text], lambda word: word == "Marcus", told_after=lambda: [later]
        )

    # "Daughter got into Edinburgh." ... "Probably. Her name is Emma, by the way."
    daughter = "What is Dana's daughter called?"
    assert named(daughter, "Daughter got into Edinburgh.", "Probably. Her name is Emma") is True
    assert named(daughter, "Daughter got into Edinburgh.", "Probably. Emma says hi") is False
    # "I finally saw a physio" ... "shin splints. his name is Marco"
    physio = "What is the name of the physio who treated Dana?"
    saw = "ok and the shin thing. I finally saw a physio"
    assert named(physio, saw, "shin splints. his name is Marco, he's great") is True
    assert named(physio, saw, "shin splints. no running for two weeks") is False
    # a role whose index term is no word of it ("nanny" is "nann")
    nanny = "What is the name of the nanny who looks after Dana's kids?"
    assert named(nanny, "we finally hired a nanny!", "she's lovely. her name is Rosa") is True


def test_someone_asked_of_by_their_role_is_named_in_the_sentence_that_speaks_of_them() -> None:
    landlord = ask("What is the name of Dana's landlord?")
    # a name in another sentence is not the landlord's; "Mr." ends no sentence
    assert named_role(landlord, "Give Pimenta a scratch. And tell that landlord to fix it") is False
    assert named_role(landlord, "our landlord Mr. Petrakis is raising the rent") is True
    # after a title, a name in the next sentence is theirs when theirs closes its own
    cardiologist = ask("What is the name of Dana's cardiologist?")
    finally_ = "i have the cardiologist date finally. 9th december, dr wiśniewska"
    assert named_role(cardiologist, finally_) is True
    plumber = "my landlady had a plumber there Monday morning! Mr Hughes would've taken weeks"
    assert named_role(ask("What is the name of Dana's landlady?"), plumber) is False
    # "you guys" is no guy; "he's a physio" says a job, not whose physio he is;
    # one of many, and one whose office is spoken of, are spoken of
    guy = ask("What is the name of Dana's tile guy?")
    assert named_role(guy, "Did you guys get hit by that storm? Ciarán was glued to it") is None
    physio = ask("What is the name of Dana's physiotherapist?")
    assert named_role(physio, "his name is Cian, he's a physio (the irony)") is None
    teacher = ask("What is the name of the PE teacher who coaches Dana's team?")
    assert named_role(teacher, "They've got their own coach, one of the PE teachers") is False
    surgeon = ask("What is the name of the surgeon who operated on Dana's knee?")
    assert named_role(surgeon, "The surgeon's office called. They moved it") is False
    assert (
        named_role(ask("What is the name of Dana's dispatcher?"), "the dispatcher is new") is False
    )


def test_the_role_asked_of_is_the_head_of_its_phrase() -> None:
    def role(question: str) -> str | None:
        found = _ROLE_NAMED.search(question)
        return None if found is None else next(g for g in found.groups() if g)

    assert role("What is the name of the physio clinic where Hannah works?") == "clinic"
    assert role("What was the name of Zofia's manager at the café?") == "manager"
    assert role("What is the name of the surgeon who operated on Rosa's knee?") == "surgeon"
    assert role("What is the name of Rosa's friend in Lisbon?") == "friend"


def test_a_sentence_saying_the_speaker_s_own_name_names_no_relative() -> None:
    mother = ask("What is Kwame's mother's name?")
    said = "Efua did cry. So did my mother. Mr. Boateng mentioned my name twice in his speech."
    assert relative_named(mother, [said], lambda _: False) is False
    then = "So did my mother. Then Boateng mentioned my name twice."
    assert relative_named(mother, [then], lambda _: False) is False
    assert relative_named(
        mother, ["So did my mother. Her name is Abena, by the way."], lambda _: False
    )


def test_an_is_after_a_relative_closes_its_sentence_as_a_short_one_would() -> None:
    supervisor = ask("What is the name of Dana's PhD supervisor?")
    lovely = "my supervisor's lovely though. Nkem is so calm about it"
    is_nkem = "Nkem".__eq__
    assert relative_named(supervisor, [lovely], lambda _: False, is_nkem) is True
    # a thing of theirs is not them ("my mom's jade plant 🌱 Noor has one too")
    mother = ask("What is the name of Dana's mother?")
    assert named_role(mother, "my mom's jade plant 🌱 Noor has one too") is False


def test_a_pet_said_to_be_yours_to_the_person_asked_by_name_is_theirs() -> None:
    dog = ask("What is the name of Dana's dog?")
    texts = ["Dana I have bad news and it involves your dog", "She's a very good dog"]
    # in a group chat, the turn may be taken to answer someone else
    voices = [Voice("Priya", "Tomasz"), Voice("Dana", "Tomasz")]
    before = ["", "Was Juniper good with Alfie?"]
    assert (
        relative_named(dog, texts, lambda _: False, voices=voices, asked_before=lambda: before)
        is None
    )


def named_role(question: Query, *texts: str, replies: Sequence[str] = ()) -> bool | None:
    """Whether ``texts`` (each answered by the turn of ``replies`` at its place) name
    whom or what ``question`` asks the name of, no one being a speaker."""
    return relative_named(question, texts, known=lambda _word: False, replies=lambda: replies)


def test_a_thing_s_name_or_a_place_near_a_relative_does_not_name_them() -> None:
    father = ask("What is Dana's father's name?")
    # "a Toyota Yaris" is a car, after "a"; a word said as a place elsewhere is a place
    assert named_role(father, "a Toyota Yaris. my dad came to look at it") is False
    assert named_role(father, "So, Manchester. dad is coming", "we live in Manchester") is False
    assert named_role(father, "my dad Angus is coming") is True
    # "outside Sintra" says where, as "in Sintra" does
    assert named_role(father, "my dad lives outside Sintra now") is False
    # "Arthur's Seat" is a place, whichever of its words
    sister = ask("What is the name of Dana's sister?")
    assert named_role(sister, "My sister made us climb Arthur's Seat at 7am") is False
    assert named_role(sister, "My sister Ailsa made us climb Arthur's Seat at 7am") is True


def test_a_late_relative_or_one_somewhere_is_still_the_relative_asked_about() -> None:
    never = ["the weather is great"]
    late = ask("What was the name of Dana's late husband?")
    assert relative_named(late, never, lambda _: False) is False
    assert relative_named(late, ["my husband Sipho could burn water"], lambda _: False) is True
    # "in Ghana" says where the grandmother is, it does not name her
    away = ask("What is the name of Dana's grandmother in Ghana?")
    assert relative_named(away, never, lambda _: False) is False


def test_a_pet_spoken_of_only_in_the_plural_is_nobody_s() -> None:
    # Marcus has a cat; Dana only said her new flat allows no cats
    said = [
        (DANA, "the landlord says no cats though, sadly"),
        (MARCUS, "my cat loves the windowsill"),
    ]
    found = judged("What is the name of Dana's cat?", said)
    assert found is not None and found.own == 0.0 and found.about_someone_else
    # "the cat" said by Dana is most often her own
    said = [(DANA, "the cat knocked my mic over"), (MARCUS, "my cat loves the windowsill")]
    found = judged("What is the name of Dana's cat?", said)
    assert found is not None and not found.about_someone_else


@pytest.mark.parametrize(
    ("danas", "nobodys"),
    [
        # Dana only wishes for a dog, or says she is no dog person; Marcus has one
        ("she wants a garden for a dog 👀", True),
        ("I've never been a dog person, so you'll have to work on me", True),
        # "I got a dog", "the dog" are a dog had
        ("I got a dog last week", False),
        ("the dog is asleep", False),
    ],
)
def test_a_pet_only_wished_for_or_said_of_people_is_nobody_s(danas: str, nobodys: bool) -> None:
    said = [(DANA, danas), (MARCUS, "my dog Biscuit loves the beach")]
    found = judged("What is the name of Dana's dog?", said)
    assert found is not None and found.about_someone_else is nobodys


def test_the_relative_of_someone_only_spoken_of_is_judged_too() -> None:
    # Jess never speaks and is no entity: the question still asks for her grandmother
    question = Query(
        "What is the name of Jess's grandmother?",
        tuple(index_terms("What is the name of Jess's grandmother?")),
        frozenset(),
        frozenset(),
        (),
    )
    said = ["jess's grandma made me wear her late husband's cardigan"]
    assert relative_named(question, said, lambda _: False) is False
    assert relative_named(question, ["her grandma Ruth is 90"], lambda _: False) is True


def test_a_partner_or_a_flatmate_is_told_of_like_a_relative() -> None:
    girlfriend = ask("What is the name of Dana's girlfriend?")
    assert relative_named(girlfriend, ["my girlfriend is a nurse"], lambda _: False) is False
    assert relative_named(girlfriend, ["my girlfriend Ana is a nurse"], lambda _: False) is True


def test_a_relative_said_to_be_mine_after_the_kinship_word_is_the_speaker_s() -> None:
    # "Speaking of sisters, mine is coming": Dana's sister, whatever Marcus said of his
    said = [
        (MARCUS, "my sister says it's a sign"),
        (DANA, "Speaking of sisters, mine is coming to stay, she flies in from Durban"),
    ]
    found = judged("Which city does Dana's sister live in?", said)
    assert found is not None and found.own == 1.0 and not found.about_someone_else
    # "a friend of yours" is the addressee's
    found = judged("Where does Dana's friend live?", [(MARCUS, "a friend of yours lives in Oslo")])
    assert found is not None and found.own == 1.0
    # a pronoun after a thing is no owner of it: "gave the dog his dinner"
    found = judged("What does Dana's dog eat?", [(MARCUS, "I gave the dog his dinner, he eats")])
    assert found is not None and found.own < 1.0


def test_her_relative_is_theirs_when_she_is_told_of() -> None:
    def to_someone_else(said: list[tuple[dict[str, str], str]]) -> Callable[..., Talk]:
        def talk(texts: dict[str, dict[str, str]]) -> Talk:  # never said to Dana
            return Talk(
                lambda _episode: "entity-9", talk_between_dana_and_marcus(said, texts).before
            )

        return talk

    # Dana never speaks: she is told of as "her", so "her husband" is hers
    said = [
        (MARCUS, "Kagiso, her husband, went pink and said nothing"),
        (MARCUS, "and my husband cried, of course"),
    ]
    found = judged(
        "Who is Dana's husband?",
        said,
        silent=lambda entity: entity == DANA["id"],
        talk=to_someone_else(said),
    )
    assert found is not None and found.own == 1.0 and not found.about_someone_else
    # Dana speaks too: "her husband" is hers after a turn naming her ("Dana told us
    # she's expecting!" ... "Kagiso, her husband, went pink"), else someone else's
    priya = {"id": "entity-3", "name": "Priya"}
    said = [
        (priya, "big news, Dana told us at lunch that she's expecting!"),
        (priya, "Kagiso, her husband, went pink and said nothing"),
        (MARCUS, "and my husband cried, of course"),
    ]
    found = judged("Who is Dana's husband?", said, talk=to_someone_else(said))
    assert found is not None and found.own == 1.0 and not found.about_someone_else
    found = judged("Who is Dana's husband?", said[1:], talk=to_someone_else(said[1:]))
    assert found is not None and found.own == 0.0 and found.about_someone_else


def test_the_name_near_someone_else_s_own_relative_is_not_theirs() -> None:
    # Marcus's "my sister Karin" names his sister; Dana's is only "her sister"
    said = [
        (MARCUS, "then my sister Karin flies in from Seattle"),
        (DANA, "my sister lives in Evanston, we're visiting"),
    ]
    found = judged("What is the name of Dana's sister?", said)
    assert found is not None and found.others == frozenset({"episode-0"})
    texts = [text for n, (_, text) in enumerate(said) if f"episode-{n}" not in found.others]
    question = ask("What is the name of Dana's sister?")
    assert relative_named(question, texts, known=lambda _: False) is False
    assert relative_named(question, [text for _, text in said], known=lambda _: False) is True


def test_a_last_name_is_known_from_a_full_name_or_a_name_written_out() -> None:
    keisha = ask("What is Keisha's last name?")
    # only her first name ever said: none is known
    assert (
        last_name_said(keisha, ["Keisha"], ["Keisha planned everything", "Keisha's tags"]) is False
    )
    assert last_name_said(keisha, ["Keisha"], ["I'm meeting Keisha Brown at 5"]) is True
    assert last_name_said(keisha, ["Keisha Brown"], []) is True
    assert last_name_said(keisha, ["Keisha"], ["Keisha's surname is Brown, Ty has both"]) is True
    # someone else's surname, or no last name asked: not judged here
    boss = ask("What is the surname of Lena's boss?")
    assert last_name_said(boss, ["Lena"], ["herr pichler again"]) is None
    assert last_name_said(ask("Where does Keisha live?"), ["Keisha"], []) is None
    # someone memory holds no entity for is judged by the name the question says
    assert last_name_said(keisha, [], ["Is Keisha going too?"]) is False
    assert last_name_said(keisha, [], ["Is Keisha Brown going too?"]) is True


def test_a_first_name_of_someone_called_by_title_is_known_from_a_name_written_out() -> None:
    okafor = ask("What is Mrs Okafor's first name?")
    said = ["Ilinca wanted to show Mrs Okafor her new pencil case", "Mrs Okafor is lovely"]
    assert first_name_said(okafor, said) is False
    assert first_name_said(okafor, [*said, "it's Grace Okafor on the letter"]) is True
    assert first_name_said(okafor, [*said, "her first name is Grace, apparently"]) is True
    # no title: a nickname's real name is said in words of its own ("Dre's real name")
    assert first_name_said(ask("What is Dre's real first name?"), said) is None


def test_a_name_said_to_be_the_thing_is_no_owner_of_it() -> None:
    question = ask("What is the name of Dana's collie?")
    collie = index_terms("collie")[0]
    assert _owner("Bran's the collie right?", collie, question) is None
    assert _owner("Marcus's collie is called Bran", collie, question) == "other"


def test_a_verb_in_ing_ends_what_the_question_says_is_theirs() -> None:
    assert possessed(ask("Where is Dana's dad living now?")) == ({"father"}, "father")
    assert possessed(ask("What is Dana's sister studying?")) == ({"sister"}, "sister")
    # a noun goes on after it: "training" is part of the plan
    things, head = possessed(ask("How long was Dana's marathon training plan?"))
    assert head == "plan" and len(things) == 3


def test_the_verb_after_a_relative_asked_with_did_ends_what_is_theirs() -> None:
    assert possessed(ask("When did Dana's dad visit England?")) == ({"father"}, "father")
    assert possessed(ask("How much did Dana's mother put toward it?")) == ({"mother"}, "mother")
    # two nouns before the verb stay one thing
    assert possessed(ask("When did Dana's yoga class start?"))[1] == index_terms("class")[0]


def test_a_word_saying_which_answer_is_asked_is_no_thing_of_theirs() -> None:
    # "finishing time" asks a time, "due date" a date: nothing else is hers
    assert possessed(ask("What was Dana's finishing time in the Bath Half?")) == (set(), None)
    assert possessed(ask("What was Dana's due date after her first scan?")) == (set(), None)
    # a noun before the answer's word is still hers
    assert possessed(ask("What is Dana's wedding date?")) == ({"wed"}, "wed")


def test_someone_s_family_is_them_told_of_as_we() -> None:
    assert possessed(ask("When does Dana's family fly out to Wellington?")) == (set(), None)
    # Dana's "we fly out" is hers, though Marcus speaks of "your family"
    found = judged(
        "When does Dana's family fly out to Wellington?",
        [
            (DANA, "we fly out to Wellington on 12 January"),
            (MARCUS, "sending love to you and your family"),
        ],
    )
    assert found is not None and not found.about_someone_else


def test_a_relative_of_someone_else_s_does_not_name_theirs() -> None:
    son = ask("What is the name of Dana's son?")
    by_marcus, by_dana = Voice("Marcus", "Dana"), Voice("Dana", "Marcus")

    def named(*said: tuple[Voice, str]) -> bool | None:
        return relative_named(
            son, [text for _, text in said], lambda _: False, voices=[v for v, _ in said]
        )

    # another's son ("Rosamma's son Jijo"), Marcus's own ("my son"), or Dana's "his
    # son" (someone else's: of her own she says "my") is no son of Dana's
    assert named((by_marcus, "Rosamma's son Jijo offered to drive me")) is False
    assert named((by_marcus, "my son Theo starts school")) is False
    assert named((by_dana, "his son Theo starts school")) is False
    # her own "my son", or Marcus's "your son", is hers
    assert named((by_dana, "my son Theo starts school")) is True
    assert named((by_marcus, "did your son Theo start school?")) is True
    # "your" said to someone else, unless the turn calls Dana by name
    assert named((Voice("Marcus", "Ifeoma"), "your son Theo is so tall")) is False
    assert named((Voice("Marcus", "Ifeoma"), "Dana! is your son Theo ok?")) is True
    # whose it is, unsaid: the name near it is taken as his
    assert named((by_marcus, "her son Theo starts school")) is True
    # a relative's relative ("your mother's sister") is not Dana's sister
    sister = ask("What is the name of Dana's sister?")
    said = ["Your mother's sister Lurdes telephoned"]
    assert relative_named(sister, said, lambda _: False, voices=[by_marcus]) is False
    # unless the question asks just that ("Dana's mother's sister")
    aunt = ask("What is the name of Dana's mother's sister?")
    assert relative_named(aunt, said, lambda _: False, voices=[by_marcus]) is True


def test_their_own_last_name_or_a_place_of_several_words_is_no_relative_s_name() -> None:
    guy = ask("What is the name of Dana's tile guy?")
    # "Dana Marchetti" is her own name, not the tile guy's
    assert named_role(guy, "one guy ghosted, and Dana Marchetti got a quote") is False
    husband = ask("What was the name of Dana's late husband?")
    assert named_role(husband, "I sat in a hospital in Cape Town, my husband so ill") is False


def test_a_pet_only_spoken_of_in_the_plural_leaves_theirs_unnamed() -> None:
    dog = ask("What is the name of Dana's dog?")
    # "really dangerous for dogs" speaks of no dog of hers
    assert named_role(dog, "grapes are really dangerous for dogs, said Biscuit") is False
    assert named_role(dog, "the dog is asleep, said Biscuit") is True
    dogs = ask("What are the names of Dana's dogs?")
    assert named_role(dogs, "the dogs are asleep, said Biscuit") is True


def test_words_to_the_addressee_that_say_nothing_is_theirs() -> None:
    cases = [
        # "like you said" and "thank you" do not make the boots or the hen do Marcus's
        (
            "What boots did Dana buy?",
            DANA,
            "Went to the shop and got fitted for boots like you said",
        ),
        (
            "When was Dana's hen weekend?",
            DANA,
            "Still recovering from the hen weekend 🥴 thank you both for coming",
        ),
        # the addressee's suggestion: what the speaker does with it is still theirs
        (
            "What does Dana do to keep busy during her break?",
            DANA,
            "Been reading that book you recommended and painting to keep busy",
        ),
        # thanks for a thing: the thing was the addressee's to give
        ("What flowers did Dana send?", MARCUS, "thank you for the flowers!! on the counter"),
    ]
    for question, who, text in cases:
        own, anyone = held(question, (who, text))
        assert own == anyone > 0, text


def test_someone_asked_of_by_their_role_is_named_in_the_reply_to_a_question() -> None:
    landlord = ask("What is the name of Dana's landlord in Dublin?")
    asked = ["Worth every cent. Is the landlord nice?"]
    assert relative_named(landlord, asked, lambda _: False) is False
    answered = ["Older guy called Declan who asked three questions about the cat"]
    assert relative_named(landlord, asked, lambda _: False, replies=lambda: answered) is True
    # the reply to a text that only speaks of the landlord names no landlord
    told = ["the landlord is putting the rent up again"]
    assert relative_named(landlord, told, lambda _: False, replies=lambda: answered) is False


def test_a_role_the_person_asked_about_asks_after_is_the_other_s() -> None:
    boss = ask("What is the name of Dana's boss?")
    said = ["That's gold. And the boss?", "the boss wants the rota by friday"]
    answers = ["Mrs Okafor, the head, is strict but fair", "ugh"]

    def named(asker: Voice) -> bool | None:
        voices = [asker, Voice("Dana", "Grace")]
        return relative_named(boss, said, lambda _: False, voices=voices, replies=lambda: answers)

    # Grace asks after Dana's boss: Dana's reply names her
    assert named(Voice("Grace", "Dana")) is True
    # Dana asks after Grace's boss: the name in Grace's reply is not Dana's boss's
    assert named(Voice("Dana", "Grace")) is False
    # her own question about her own boss still reads the reply
    mine = ["Guess who my new boss is?", "the boss wants the rota by friday"]
    voices = [Voice("Dana", "Grace"), Voice("Dana", "Grace")]
    assert relative_named(boss, mine, lambda _: False, voices=voices, replies=lambda: answers)


def test_a_role_with_a_sign_in_its_words_or_a_thing_of_theirs_beside_it_is_still_unnamed() -> None:
    consultant = ask("What is the name of the A&E consultant Dana admires?")
    assert named_role(consultant, "The consultant is amazing, she's so calm") is False
    vicar = ask("What is the name of the vicar at the church where the food bank is?")
    assert named_role(vicar, "the hall's roof is being fixed, the vicar just told me") is False
    physio = ask("What is the name of Dana's physio?")
    # "my Novablasts" are shoes: a thing of hers, no one the role is
    assert named_role(physio, "Physio said my Novablasts were done") is False
    assert named_role(physio, "Physio said Niall is off in May") is True
    # "Called it" in a short reply names no one
    see = "Please see a physio before it gets worse"
    assert named_role(physio, see, replies=["Ice it. Called it"]) is False


def test_a_place_asked_by_name_is_not_named_by_a_street_a_person_or_a_reply_s_first_word() -> None:
    restaurant = ask("What is the name of the Turkish restaurant where David washed dishes?")
    # a street after "on", whichever word of it
    assert named_role(restaurant, "Washing dishes at a restaurant on Witte de Withstraat") is False
    # a name after a title is a person's, not the restaurant's
    asked = "Haha. Still at the restaurant?"
    reply = "Actually, I'm leaving. Dr. Visser's group needs a student assistant"
    assert named_role(restaurant, asked, replies=[reply]) is False
    named = "It's called Anatolia, the owner is lovely"
    assert named_role(restaurant, asked, replies=[named]) is True
    # a reply's first word opens a sentence ("Smug Aoife")
    school = ask("What is the name of the secondary school where Aoife teaches?")
    said = ["Schools are out, so I felt smug"]
    replies = ["Smug Aoife"]
    assert relative_named(school, said, lambda w: w == "Aoife", replies=lambda: replies) is False


def test_a_thing_asked_by_name_is_named_where_it_is_spoken_of_or_in_the_reply() -> None:
    startup = ask("What is the name of the startup Dana worked at before Beaumont?")
    # spoken of, never named: nothing remembered says its name
    assert named_role(startup, "the startup can't sponsor my visa") is False
    assert named_role(startup, "the startup, Fernleaf, can't sponsor my visa") is True
    # a name far from the thing's word is someone's or something else's
    ship = ask("What was the name of the cruise ship Dana sailed on?")
    far = (
        "the cruise ship was enormous, eleven decks and a climbing wall, and the food was "
        "endless. Honestly the best bit was the sea days, Marek read three books"
    )
    assert named_role(ship, far) is False
    assert named_role(ship, "the cruise ship, the Aurora, was enormous") is True
    # a thing's name comes after "the" ("the Kharcha app") and is said alone in reply
    app = ask("What is the name of the app Dana works on?")
    assert named_role(app, "we launch split-bills in the Kharcha app") is True
    team = ask("What is the name of Dana's hockey team?")
    said = ["our team won again, 4-2"]
    assert relative_named(team, said, lambda _: False) is False
    replies = ["The Loose Pucks. Don't judge"]
    assert relative_named(team, said, lambda _: False, replies=lambda: replies) is True
    # never spoken of: left to the texts' other words; a pet is judged as a pet
    assert named_role(startup, "the weather is great") is None
    cat = ask("What is the name of the cat that moved in with Dana?")
    assert named_role(cat, "the cat sleeps on my bed") is None


def test_what_follows_a_reaction_to_their_news_is_theirs() -> None:
    # "YAYYY well done!! Officially a second-year PhD student": Dana's PhD, said by Marcus
    own, anyone = held(
        "When did Dana start her PhD?",
        (DANA, "The review panel said yes, I get to carry on!!"),
        (MARCUS, "YAYYY well done!! Officially a second-year PhD student"),
    )
    assert own == anyone > 0.0
    # once the speaker turns to their own news, what follows is theirs again
    own, anyone = held(
        "When did Dana start her PhD?",
        (DANA, "The review panel said yes, I get to carry on!!"),
        (MARCUS, "Well done!! My news: I start a PhD in May. Second one in the family"),
    )
    assert own == 0.0 and anyone > 0.0


def test_a_pet_spoken_of_as_a_kind_is_nobody_s_even_beside_i() -> None:
    question = ask("What is the name of Dana's cat?")

    def whose(text: str) -> bool | None:
        (said, owner), *_ = _clauses(
            text, ["cat"], MARCUS["id"], "episode-0", {DANA["id"]}, question, Talk(), head="cat"
        )
        assert said == {"cat"}
        return owner

    assert whose("Cats are so petty, I love it") is None
    assert whose("speaking of cats I saw Mochi") is None
    assert whose("I have two cats") is False  # Marcus's own


def test_a_name_said_to_be_the_relative_with_s_is_their_name() -> None:
    named = naming("What is the name of Dana's flatmate?", "Marcus", "Aoife")
    # "Aoife's the flatmate": "Aoife is", not whose flatmate
    assert named("Aoife's the Irish flatmate right? The one with the whiskey") is True
    assert named("Aoife's flatmate brought whiskey") is False


def test_a_pet_the_asked_person_asks_about_is_someone_else_s() -> None:
    cat = ask("What is the name of Dana's cat?")
    dana = [Voice("Dana", None)]
    # Dana asks after Joy's cat: no cat of hers is spoken of, and she is named as its owner
    joys = "How is Joy? Still has that cat that hates everyone?"
    assert relative_named(cat, [joys], lambda _: False, voices=dana) is False
    # her own cat, asked about with "my", is hers
    own = "Should I take my cat to the vet? I think Mochi hates everyone"
    assert relative_named(cat, [own], lambda _: False, voices=dana) is None


def test_the_kind_of_place_asked_for_is_not_the_topic() -> None:
    # the answer names the city ("Schiedam"); someone else's "the city is so loud"
    # does not make the question someone else's
    question = "Which city does Dana live in now?"
    found = judged(
        question,
        [
            (DANA, "We signed the lease for the Schiedam flat"),
            (MARCUS, "ugh the city is so loud, I can't live here much longer"),
        ],
        cues=answer_cues(question, judging=True),
    )
    assert found is not None and not found.about_someone_else
    assert _place_asked("In which neighbourhood does Chidi live?") == {"neighbourhood"}
    assert _place_asked("What did Dana do in the city?") == frozenset()


def test_a_pet_yet_to_come_or_in_another_s_photo_is_not_theirs() -> None:
    cat = ask("What is the name of Dana's cat?")
    dana = [Voice("Dana", "Jo")]
    # Dana plans a cat; the name beside it is the friend's who talks her into it
    plan = "Tunde's trying to convince me to get a cat now, by the way"
    assert relative_named(cat, [plan], lambda _: False, voices=dana) is False
    # a cat in the photo Jo shared is Jo's, not Dana's
    photo = "[shared image: two greyhounds on a dog bed, with a ginger cat glaring from the sofa]"
    assert relative_named(cat, [photo], lambda _: False, voices=[Voice("Jo", "Dana")]) is False
    # one in Dana's own photo is hers, named or not
    assert relative_named(cat, [photo + " poor Mochi"], lambda _: False, voices=dana) is True
    assert relative_named(cat, [photo], lambda _: False, voices=dana) is False
    assert relative_named(cat, ["We got a cat! Her name is Pickle"], lambda _: False, voices=dana)


def test_a_brand_is_a_name_said_of_the_thing() -> None:
    assert brand_asked("What brand is Dana's new gravel bike?") == "bike"
    assert brand_asked("What brand of double bass did Dana buy?") == "bass"
    assert brand_asked("What brand is the stroller Dana's coworkers bought?") == "stroller"
    assert brand_asked("What is the name of Dana's bike?") is None
    bike = ask("What brand is Dana's gravel bike?")
    dana = [Voice("Dana", "Marcus")]
    # the bike spoken of, no brand said
    unnamed = "Picked up the new gravel bike today, carbon, so fast"
    assert relative_named(bike, [unnamed], lambda _: False, voices=dana) is False
    assert relative_named(
        bike, ["Picked up a Canyon gravel bike today"], lambda _: False, voices=dana
    )
    # no bike spoken of: left to the other checks
    assert relative_named(bike, ["Rained all day"], lambda _: False, voices=dana) is None


def body_named(
    question: str, *texts: str, is_name: Callable[[str], bool] = lambda _word: False
) -> bool | None:
    """Whether ``texts``, each said by Dana to Marcus, name the body ``question`` asks
    which one of."""
    dana = [Voice("Dana", "Marcus")] * len(texts)
    return relative_named(ask(question), texts, lambda _word: False, is_name, voices=dana)


def test_which_company_or_school_asks_a_name_said_of_that_body() -> None:
    assert body_asked("Which company delivered the garden soil?") == index_terms("company")[0]
    assert body_asked("Which school do Dana's children go to?") == "school"
    assert body_asked("What company does Dana work for?") is not None
    assert body_asked("Which sixth form college did Dana apply to?") == "colleg"
    assert body_asked("What kind of company does Dana work for?") is None
    assert body_asked("What school subject does Dana like?") is None
    assert body_asked("Which of them is Dana's school?") is None
    soil = "Which company delivered the garden soil?"
    unnamed = "Quick correction on the soil: the company moved it to Saturday the 27th, 9am"
    assert body_named(soil, unnamed) is False
    assert body_named(soil, "we ordered it off Greenway, the company moved it to Saturday") is True
    # the children are not what is asked: the school is
    school = "Which school do Dana's children go to?"
    assert body_named(school, "the kids start back at school on Monday, Ayo is thrilled") is True
    assert body_named(school, "The kids love the school") is False
    # a name far from the body's word is someone's or something else's
    jumper = (
        "Has anyone seen a navy jumper? It was at school on Monday after PE, the kids say "
        "it was in the hall by the lockers, and Rory came home without it AGAIN"
    )
    assert body_named(school, jumper) is False
    # no body spoken of: left to the other checks
    assert body_named(soil, "Rained all day") is None
    # a body is named in another word for it, or beside what the question says of it
    university = "Which university did Dana go to?"
    assert body_named(university, "remember you getting the bus across campus at York 😂") is True
    assert body_named(university, "Campus was dead") is False
    # a body's own word is no name of it; another body the question asks of is read too
    master = "Which university is Dana doing her master's at?"
    hospital = "There's an opening at the University Hospital, I'm thinking of applying"
    assert body_named(master, hospital) is False
    leeds = "There's an opening at Leeds University, I'm thinking of applying"
    assert body_named(master, leeds) is True
    nursing = "Which university did Dana attend for nursing school?"
    roommate = "Dad, my roommate from nursing school came to Thanksgiving twice"
    assert body_named(nursing, roommate) is False
    # a hospital is said by a ward, an acronym or a nickname: not asked so
    assert body_asked("Which hospital does Dana work at?") is None
    # a chat in lower case names a school in lower case too: nothing to judge by
    sixth_form = "Which sixth form college did Dana apply to?"
    lower = ["yeah i applied to the college by the park", "interview is in march"]
    assert body_named(sixth_form, *lower) is None
    upper = ["Yeah, I applied to the college by the park", "Interview is in March"]
    assert body_named(sixth_form, *upper) is False
    job = "Which company offered Dana a graduate job?"
    offer = "Also the company emailed! Northwave offered me a place on their graduate scheme"
    northwave = "Northwave".__eq__  # a name memory holds
    assert body_named(job, offer, is_name=northwave) is True
    far = "Also the company emailed! I start the graduate scheme in May, up in Aberdeen"
    assert body_named(job, far, is_name=northwave) is False


def test_the_role_asked_by_name_comes_before_a_relative_said_after_it() -> None:
    # the physiotherapist's name is asked, not Dana's father's
    physio = ask("What is the name of the physiotherapist who treated Dana's father?")
    assert named_role(physio, "Physio three times a week at home now, my dad hates it") is False
    assert named_role(physio, "His physio Gemma is strict, my dad hates it") is True
    assert (
        named_role(ask("What are the names of Dana's new tenants?"), "the tenants moved in")
        is False
    )


def test_a_place_s_word_is_not_a_person_s_that_shares_its_stem() -> None:
    # "It's a consultancy" speaks of the place; "'s a" is no job said of someone
    consultancy = ask("What is the name of the consultancy Dana will work for?")
    texts = ["I'll tell you if I get it. It's a consultancy, data analyst role"]
    voices = [Voice("Dana", "Kasia")]
    assert relative_named(consultancy, texts, lambda _: False, voices=voices) is False
    named = ["It's a consultancy called Brightpath, data analyst role"]
    assert relative_named(consultancy, named, lambda _: False, voices=voices) is True


def test_a_place_said_by_its_kind_of_worker_is_judged_by_that_word() -> None:
    # "the vet clinic" is spoken of as "the vet"; "the physio clinic" as the clinic
    clinic = ask("What is the name of the vet clinic that operated on Dana's dog?")
    assert named_role(clinic, "the vet said the operation went well, he's sore") is False
    assert named_role(clinic, "so the vet, Dr Ahmed, said the operation went well") is True
    physio = ask("What is the name of the physio clinic where Dana works?")
    assert named_role(physio, "the clinic is busy, three physios off sick") is False


def test_a_pet_asked_as_theirs_is_judged_alone_however_much_else_is_theirs() -> None:
    # Dana adopted a cat at the rescue; only Marcus has a dog
    found = judged(
        "Which rescue did Dana adopt her dog from?",
        [
            (DANA, "I signed the adoption papers for Pierogi at the rescue on Thursday"),
            (MARCUS, "my dog hates cats, be warned"),
        ],
    )
    assert found is not None and found.about_someone_else
    found = judged(
        "Which rescue did Dana adopt her dog from?",
        [
            (DANA, "I signed the adoption papers for my dog at the rescue on Thursday"),
            (MARCUS, "my dog hates cats, be warned"),
        ],
    )
    assert found is not None and not found.about_someone_else


def test_what_a_friend_of_the_speaker_did_is_not_the_speaker_s() -> None:
    # Marcus adopted; Dana only told of a friend who did
    friend = (DANA, "Yeah, a buddy of mine adopted last year. It was a long process")
    own, anyone = held(
        "What did Dana find hard about the adoption process?",
        friend,
        (MARCUS, "the adoption process has been so hard for me, the home study especially"),
    )
    assert own == 0.0 and anyone > 0.0
    own, _ = held(
        "What did Dana find hard about the adoption process?",
        (DANA, "Yeah, I adopted last year. It was a long process"),
        (MARCUS, "the adoption process has been so hard for me, the home study especially"),
    )
    assert own > 0.0


def test_a_thing_of_a_relative_of_theirs_is_not_judged_alone() -> None:
    # the stroke is her father's, whom Marcus may speak of as his own ("my dad's
    # stroke" in a sibling's turn): it says nothing of whose Dana's travel is
    said = [
        (DANA, "I fly to Krakow tomorrow morning"),
        (MARCUS, "they moved him out of the stroke unit on Thursday"),
    ]
    found = judged("When did Dana travel to Krakow after her father's stroke?", said)
    assert found is not None and not found.about_someone_else
    # a relative asked about is still judged alone
    found = judged(
        "When did Dana's father have a stroke?",
        [(DANA, "I read a stroke recovery guide today"), (MARCUS, "my dad had a stroke on monday")],
    )
    assert found is not None and found.about_someone_else


def test_someone_else_s_text_holding_more_does_not_outweigh_a_topic_largely_theirs() -> None:
    assert Support(own=0.4, anyone=0.8, theirs=0.6).about_someone_else
    # most of what all the texts hold of the topic is theirs
    assert not Support(own=0.4, anyone=0.8, theirs=0.7).about_someone_else
    # a thing of theirs judged alone: only another's holding all of it outweighs
    assert not Support(own=0.4, anyone=0.8).about_someone_else
    assert Support(own=0.4, anyone=1.0).about_someone_else
    # however much is theirs, another's holding all of it outweighs less than half
    assert Support(own=0.4, anyone=1.0, theirs=0.9).about_someone_else


def test_the_name_of_what_is_asked_about_is_part_of_the_topic() -> None:
    # "Dana's plan for Broad Street": of the two names, Dana is whom it asks about
    # and the street what; Marcus's mum "planning a visit" holds none of the street
    graph = _graph((1, "Dana", "person"), (3, "Broad Street", "place"))
    query = _naming("What was Dana's plan for Broad Street?", "Dana", "Broad Street")
    ranked, docs = turns(
        (DANA, "I signed up for Broad Street in May, going under 1:25"),
        (MARCUS, "my mum's planning a visit in the fall"),
    )
    found = support(graph, ranked, query, episode_docs=docs, frequency=lambda _term: 1.0)
    assert found is not None and not found.about_someone_else
    assert found.own > 0.5


def test_a_long_question_is_not_judged_by_how_much_of_it_one_text_holds() -> None:
    # the answer to a question of many words is put together from several texts:
    # one holding a sixth of it still answers it; a short question needs more
    long = ask("By how much did Dana's final Ledgerline salary exceed the counteroffer?")
    short = ask("What is the name of Dana's cat?")
    assert len(long.content_terms) >= LONG_QUESTION > len(short.content_terms)
    text = Candidate(DANA, None, signals={"name": 1.0, "content": 0.15}, episode="episode-1")
    assert answers_something([text], long)
    assert not answers_something([text], short)
