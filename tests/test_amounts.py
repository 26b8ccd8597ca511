"""Questions that ask for a sum of money, and the texts that state one."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgraph import Memory
from memgraph.retrieval.amounts import sums_of_it, topic_of_amount
from memgraph.retrieval.recall_text import NOTHING_SAID
from memgraph.sums import asks_amount, paid_as, payment_asked, states_amount, states_the_sum_asked
from memgraph.text import index_terms
from tests.test_recall_quality import recalled, remember_dialogue


@pytest.mark.parametrize(
    "question",
    [
        "How much rent does Meera pay in Bengaluru?",
        "How much did Arjun pay for the engagement ring?",
        "roughly how much did the flights cost?",
        "What salary came with Tolu's Kestrel offer?",
        "What interest rate is Dre paying on his loan?",
        "What was the asking price for Hiroshi's house?",
        "What did Pri and Dev's kitchen renovation end up costing?",
        "What was the cost of the trip?",
        "What did the repairs come to in total?",
    ],
)
def test_a_question_asking_a_sum(question: str) -> None:
    assert asks_amount(question)


@pytest.mark.parametrize(
    "question",
    [
        "How much does Dana weigh?",
        "How much time did the drive take?",
        "How much weight did Sam lose?",
        "How much did Jess enjoy the concert?",
        "What did Arjun buy for Meera?",
        "What reasons did Gerry give for holding back part of Ciara's deposit?",
        "What did she give up at the cost of her health?",
        "What did Alasdair's neighbour Bill use to do for work?",
        "What does Gareth's wife Pat knit for the children who come to the food bank?",
    ],
)
def test_a_question_asking_something_else(question: str) -> None:
    assert not asks_amount(question)


@pytest.mark.parametrize(
    "text",
    [
        "Engineer came Thursday and it was £1,800 to fix",
        "Senior PM on the payments team, £72k, and they're sponsoring the visa",
        "the extension closed. 1.2 million",
        "made like $640 lol",
        "six grand for the lot",
        "rent is 1450 a month",
        "a 4.5% fixed rate",
        "she charges 30 an hour",
        "they're paying three months' salary",
        "I got 8 weeks' severance",
        "the adoption was free",
        "38,000 rupees",
        "Vet was R1,450",  # rand
        "NZ$90 a week",
        "₩620,000 for the flight",
        "300 złoty for one tooth 😭",  # a currency's name or sign after the number
        "the change cost 230 zł",
        "paid 1200 kr for the ferry",
        "20 baht for a mango",
    ],
)
def test_a_text_stating_a_sum(text: str) -> None:
    assert states_amount(text)


@pytest.mark.parametrize(
    "text",
    [
        "we sold it in 2019",
        "the rent went up in May",
        "I paid 2 years ago",
        "ran 10 miles on Sunday",
        "the flights were expensive",
        "the r2 unit is broken",
        "ran 18k on sunday. my left shin is making noises",
        "we walked 28k steps on saturday",
        "Did 28k on Sunday along the lake. It was -12 with the wind",
        "First real run yesterday! 5k very slow, no pain at all",
        "I submitted the mushroom game. 40k words, two days early",
        "the clutch isn't worth fixing on a 2011 Transit with 190,000 miles on it",
        "I can do 5k without dying. Barely.",
        "Did an easy 5k Thursday, no pain",
        "signed up for a 10k in May",
    ],
)
def test_a_text_stating_no_sum(text: str) -> None:
    assert not states_amount(text)


def test_the_topic_of_a_sum_keeps_what_it_was_for() -> None:
    topic = topic_of_amount(index_terms("How much rent does Meera pay in Bengaluru?"))
    assert set(index_terms("rent Bengaluru")) <= topic
    assert not set(index_terms("much pay")) & topic


OVEN = [
    ("Ellie", "awful. The deck oven died on Tuesday, right in the middle of the morning bake"),
    ("Freya", "oh no! what happened"),
    ("Ellie", "the element went. Engineer came Thursday and it was £1,800 to fix"),
    ("Freya", "the van is booked for the 14th, it cost me £35"),
    ("Ellie", "my new flat is tiny but the rent is fine, and I love the view of the canal"),
]


def test_a_sum_said_two_turns_after_what_it_was_for_answers(tmp_path: Path) -> None:
    (text,) = recalled(tmp_path, OVEN, "How much did the repair of Ellie's oven cost?")
    assert "1,800" in text and not text.startswith(NOTHING_SAID), text


def test_a_sum_nobody_stated_is_said_to_be_missing(tmp_path: Path) -> None:
    # the rent is spoken of, and another sum (the van's) is stated: neither answers
    (text,) = recalled(tmp_path, OVEN, "How much rent does Ellie pay for her new flat?")
    assert text.startswith(NOTHING_SAID), text
    assert "rent" in text  # the nearest matches still follow


def test_a_sum_said_the_way_rent_is_paid_is_the_rent(tmp_path: Path) -> None:
    said = [
        ("Omar", "I'm moving next month btw, found a place in Leith"),
        ("Lena", "omg finally!! how much is it?"),
        ("Omar", "950 a month. one bed, tiny kitchen, but there's a view of the water"),
    ]
    (text,) = recalled(tmp_path, said, "How much is Omar's new rent?")
    assert "950 a month" in text and not text.startswith(NOTHING_SAID), text


def test_the_answer_to_how_much_is_read_with_what_was_asked_about(tmp_path: Path) -> None:
    # the sum asked for is in the turn answering the question, which says no "oven"
    said = [
        ("Duarte", "The technician laughed. A repair would cost almost as much as a new oven"),
        ("Inês", "How much is new?"),
        ("Duarte", "The one I like is 8,500 euros. Plus installation"),
        ("Inês", "When is Tomás's school play?"),
        ("Duarte", "End of June. He's a tree"),
    ]
    with Memory(tmp_path, "chat", provider="mock") as memory:
        remember_dialogue(memory, said)
        graph, indexed = memory._sync(), memory._episodes_indexed()
        first, _, _, asked, _ = indexed.ids
        joined = memory._with_answers(graph, {first: said[0][1], asked: said[3][1]}, indexed)
    assert joined[first].endswith(
        "How much is new?\nThe one I like is 8,500 euros. Plus installation"
    )
    assert joined[asked] == said[3][1]  # answered, but not asked for a sum
    topic = topic_of_amount(index_terms("How much did the new oven Duarte wanted cost?"))
    assert sums_of_it(joined, topic, lambda _e: ())
    assert not sums_of_it({first: said[0][1]}, topic, lambda _e: ())


@pytest.mark.parametrize(
    ("words", "text", "paid"),
    [
        ("rent", "950 a month. one bed", True),
        ("rent", "£180 pw plus bills", True),
        ("salary", "£72k and they sponsor the visa", True),
        ("hourly rate", "a raise from $29 to $34 an hour", True),
        ("rent", "flights were 230 euros return", False),
        ("salary", "950 a month", False),
    ],
)
def test_a_sum_is_said_the_way_its_kind_is_paid(words: str, text: str, paid: bool) -> None:
    assert paid_as(set(index_terms(words)), text) is paid


def test_a_sum_answers_for_what_the_turns_before_it_speak_of() -> None:
    oven = index_terms("repair oven")
    before = {"e3": [("e2", "oh no! what happened"), ("e1", "the deck oven died on Tuesday")]}
    texts = {"e3": "Engineer came Thursday and it was £1,800 to fix"}
    assert sums_of_it(texts, oven, lambda e: before.get(e, []))
    assert not sums_of_it(texts, index_terms("rent flat"), lambda e: before.get(e, []))
    assert sums_of_it({"e9": "950 a month, one bed"}, index_terms("rent"), lambda e: [])
    assert not sums_of_it({"e9": "the rent is fine"}, index_terms("rent"), lambda e: [])


def test_a_sum_of_the_kind_asked_is_said_with_its_word() -> None:
    asked = "How much is the monthly HOA fee on Lucía's Ballard condo?"
    assert payment_asked(asked) == frozenset(index_terms("fee"))
    topic = topic_of_amount(index_terms(asked))
    price = {"e1": "we got the Ballard condo for $474k!!"}
    # the condo's price is no fee
    assert sums_of_it(price, topic, lambda e: [])
    assert not sums_of_it(price, topic, lambda e: [], of_kind=payment_asked(asked))
    fee = {"e2": "HOA fee on the condo is $410 a month, ouch"}
    assert sums_of_it(fee, topic, lambda e: [], of_kind=payment_asked(asked))
    # a sum of several asks no one kind
    assert not payment_asked("How much did the flight cost altogether, including the fee?")
    # a salary may be said by the month, gross or net
    assert paid_as(set(index_terms("salary")), "€2,900 a month gross")


def test_a_share_is_no_payment_unless_a_change_is_asked() -> None:
    rent = "How much rent does Tunde pay?"
    assert not states_the_sum_asked("We're in a Rent Pressure Zone. It's 2% max", rent)
    assert states_the_sum_asked("rent's €1,632 from July, up 2%", rent)
    assert states_the_sum_asked("It's 2% max", "How much did Tunde's rent go up?")


def test_a_share_said_of_the_rent_does_not_answer_how_much_it_is(tmp_path: Path) -> None:
    said = [
        ("Rosa", "did everyone get a letter from the landlord yesterday?"),
        ("Felix", "Yes. 6% from July. Ouch"),
        ("Tunde", "He can't do that. We're in a Rent Pressure Zone. It's 2% max"),
    ]
    (answer,) = recalled(tmp_path, said, "How much rent does Tunde pay?")
    assert answer.startswith(NOTHING_SAID)


def test_a_share_answers_no_sum_asked_of_any_kind(tmp_path: Path) -> None:
    # "100%." agrees; it is no price of the house
    said = [
        ("Rosa", "so did you and Dan end up buying the house on Elm Road?"),
        ("Tunde", "100%. keys on Friday, the house is ours"),
    ]
    (answer,) = recalled(tmp_path, said, "How much did Tunde pay for the house on Elm Road?")
    assert answer.startswith(NOTHING_SAID)
    said = [*said[:1], ("Tunde", "yes! £310k for the house in the end, keys on Friday")]
    (answer,) = recalled(tmp_path / "paid", said, "How much did Tunde pay for the house?")
    assert not answer.startswith(NOTHING_SAID)


def test_a_salary_may_be_said_as_pay() -> None:
    asked = "What is Larissa's starting salary in her current role?"
    topic = topic_of_amount(index_terms(asked))
    said = {"e1": "the pay is so much better, around €38,000 to start in the role"}
    assert sums_of_it(said, topic, lambda e: [], of_kind=payment_asked(asked))
    # a price in the same words is still no salary
    price = {"e2": "the new role means a car, €38,000 for the one I want"}
    assert not sums_of_it(price, topic, lambda e: [], of_kind=payment_asked(asked))
