"""Whether a job said is the job of whom a question asks about."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgraph.retrieval.colours import names_a_colour
from memgraph.retrieval.kinds_said import (
    AIRLINE,
    BIRTHDAY,
    BREED,
    CAR,
    FINISH_TIME,
    GRADE,
    INSTRUMENT,
    JOB,
    OUTCOME,
    STUDY,
    KindOfAnswer,
)
from memgraph.retrieval.nicknames import FirstNames
from memgraph.retrieval.recall_text import NOTHING_SAID
from memgraph.retrieval.said_of import (
    COLOUR,
    SUM,
    Turn,
    asked_of,
    kin_asked,
    said_of,
    said_of_owner,
)
from memgraph.sums import states_amount
from tests.test_recall_quality import recalled

PEOPLE = {"Farida", "Gus", "Tom", "Sami", "Daniel", "Derek", "Elliot", "Ruth"}


def said_as(speaker: str, addressee: str, text: str, *before: str) -> Turn:
    """A turn said by ``speaker`` to ``addressee`` after the turns ``before``."""
    return Turn(speaker, addressee, text, lambda: before)


def job_of(person: str, *turns: Turn) -> bool:
    return said_of(lambda s: JOB.said_in([s]), person, turns, is_person=PEOPLE.__contains__)


def birthday_of(person: str, people: set[str], *turns: Turn) -> bool:
    """Whether ``turns`` say a birthday with its day of ``person`` (``people``: the
    capitalised words that name someone)."""
    return said_of(lambda s: BIRTHDAY.said_in([s]), person, turns, people.__contains__)


@pytest.mark.parametrize(
    ("question", "person"),
    [
        ("What does Tom do for work?", "Tom"),
        ("What does Farida's husband Tom do for a living?", "Tom"),
        ("What does Kasia's fiancé Piotr do for a living?", "Piotr"),
        ("What did Ruth's ex-husband Alan do for a living?", "Alan"),
        ("What is Thijs's job?", "Thijs"),
        ("What is Anouk's current job at the hospital?", "Anouk"),
        ("What job is Kiri moving to Wellington for?", "Kiri"),
        # a title or a relative's word before the name is not whom it asks about
        ("What does Uncle Rob do for a living?", "Rob"),
        ("What does Dr. Okafor do for work?", "Okafor"),
        # a relative: their word, said of them
        ("What does Kofi's dad do for a living?", "Kofi's dad"),
        ("What did Tessa's nan do for a living?", "Tessa's nan"),
        # no one, or someone described: left to the texts' other words
        ("What does Kofi's neighbour do for a living?", None),
        ("What does the mother of the architecture graduate Kemi do for a living?", None),
        ("What does the relative who dogsat Pickles in November do for a living?", None),
        ("Where does Tom work?", None),
    ],
)
def test_whom_a_job_question_asks_about(question: str, person: str | None) -> None:
    assert asked_of(JOB.name, question) == person


@pytest.mark.parametrize(
    ("kind", "question", "person"),
    [
        (INSTRUMENT, "What instrument does Marco play?", "Marco"),
        (INSTRUMENT, "What type of instrument does Caroline play?", "Caroline"),
        (AIRLINE, "What kind of airline did Sami fly with?", "Sami"),
        (CAR, "What type of car did Sam get after his old Prius broke down?", "Sam"),
        (CAR, "What car does Evelyn drive?", "Evelyn"),
        (AIRLINE, "Which airline did Gérard fly from Lyon to Porto?", "Gérard"),
        (AIRLINE, "Which airline did Farida's brother Sami book?", "Sami"),
        (AIRLINE, "Which airline did they fly?", None),
        (FINISH_TIME, "What was Gus's finishing time in the Leeds 10K?", "Gus"),
        (FINISH_TIME, "What finishing time was Wanjiru aiming for in her half?", "Wanjiru"),
        (FINISH_TIME, "What was Sam's time in the Manchester half marathon?", "Sam"),
        (STUDY, "What did Meera study at university?", "Meera"),
        (STUDY, "What is Bea's brother Tiago studying?", "Tiago"),
        (FINISH_TIME, "What was Marcus's half marathon time?", "Marcus"),
    ],
)
def test_whom_an_instrument_car_airline_or_time_question_asks_about(
    kind: KindOfAnswer, question: str, person: str | None
) -> None:
    assert asked_of(kind.name, question) == person


def test_an_airline_said_in_another_s_own_turn_is_theirs() -> None:
    qatar = said_as("Tobenna", "Amara", "Qatar moved my flight. I'm now leaving Lagos on Sunday")
    people = PEOPLE.__contains__
    assert said_of(lambda s: AIRLINE.said_in([s]), "Tobenna", [qatar], people)
    assert not said_of(lambda s: AIRLINE.said_in([s]), "Amara", [qatar], people)


def test_a_job_in_a_sentence_naming_them_is_theirs() -> None:
    assert job_of("Daniel", said_as("Ruth", "Gus", "Daniel's a physiotherapist now"))
    assert job_of("Derek", said_as("Gus", "Ruth", "Derek from plot 24 helped. Retired postman."))
    assert job_of("Tom", said_as("Farida", "Gus", "tom's a plumber now lol"))  # in lower case
    # another's name in the sentence: another's job
    assert not job_of("Tom", said_as("Farida", "Gus", "Sami's a pharmacist in Didsbury"))


def test_a_job_in_the_first_or_second_person_is_the_speaker_s_or_the_addressee_s() -> None:
    assert job_of("Farida", said_as("Farida", "Gus", "I had to organise it as lead nurse"))
    assert not job_of("Tom", said_as("Farida", "Gus", "I had to organise it as lead nurse"))
    assert job_of("Farida", said_as("Gus", "Farida", "congrats, you're lead nurse now!"))
    assert not job_of("Tom", said_as("Gus", "Farida", "congrats, you're lead nurse now!"))


def test_a_sentence_opening_on_someone_of_theirs_is_that_person_s() -> None:
    # "my manager", "your dad": of them, not of the speaker or the addressee
    assert not job_of("Farida", said_as("Farida", "Gus", "My brother's a nurse in Leeds"))
    assert not job_of(
        "Farida", said_as("Farida", "Gus", "Started Monday. My new manager is a nurse")
    )
    assert not job_of("Gus", said_as("Farida", "Gus", "your dad was a postman, wasn't he?"))
    assert not job_of("Farida", said_as("Farida", "Gus", "Busy week, and my mum is a nurse so"))
    # the speaker's own "I" beside them, or no one of theirs: the speaker's
    assert job_of("Farida", said_as("Farida", "Gus", "My friend and I are both nurses"))
    assert job_of("Farida", said_as("Farida", "Gus", "My new job is lead nurse"))


def test_he_or_she_is_whom_the_text_or_a_turn_before_last_named() -> None:
    sami = said_as(
        "Farida",
        "Gus",
        "Yeah he's a pharmacist in Didsbury now",
        "Is he still at the pharmacy?",
        "Sami does what he can but he works crazy hours",
    )
    assert job_of("Sami", sami)
    assert not job_of("Tom", sami)
    asked = said_as("Ruth", "Gus", "He's a physiotherapist", "What does Daniel do?")
    assert job_of("Daniel", asked)
    # no one named before: it may be them when they are spoken of, in any case, in the
    # text or the turns before it, or it is their own turn
    assert job_of("Tom", said_as("Farida", "Gus", "he's a plumber, loves it", "how's tom?"))
    assert job_of("Tom", said_as("Farida", "Gus", "his name's tom. he's a plumber, loves it"))
    # and a sum in their own turn after "he" is theirs to pay ("He's sent me the bill")
    bill = said_as("Graham", "Kasia", "Great. He's sent me the bill, £180", "the glazier came")
    assert said_of(states_amount, "Graham", [bill], is_person=PEOPLE.__contains__)
    # but not someone no turn near it speaks of ("She's our small animal vet")
    vet = said_as(
        "Aroha", "Malakai", "Haha yes. She's our small animal vet", "the dog with the fishhook?"
    )
    assert not job_of("Losana", vet)
    assert not job_of("Tom", said_as("Farida", "Gus", "he's a plumber, loves it"))
    # a place after "at" or a direction is no one ("north Bristol")
    tolu = said_as(
        "Seun",
        "Ingrid",
        "Tolu and I want a place. She's a pharmacist at Southmead so north Bristol would suit her",
    )
    with_places = PEOPLE | {"Southmead", "Bristol", "Tolu"}
    assert said_of(lambda s: JOB.said_in([s]), "Tolu", [tolu], is_person=with_places.__contains__)
    # a place the sentence names is no one, even one memory took for a person
    lagos = said_as(
        "Farida",
        "Gus",
        "Yep, still in Lagos, he's a doctor at a big teaching hospital there",
        "Is he still in Lagos?",
        "My brother Sami does nights constantly",
    )
    with_lagos = PEOPLE | {"Lagos"}
    assert said_of(lambda s: JOB.said_in([s]), "Sami", [lagos], is_person=with_lagos.__contains__)


def test_a_bare_job_is_of_whom_the_turn_answers_or_else_the_speaker_s_own() -> None:
    answer = said_as("Ruth", "Gus", "Forensic accountant. We met at a dinner party", "And Elliot?")
    assert job_of("Elliot", answer)
    own = said_as("Gus", "Farida", "First job is mixing an album for a fado singer")
    assert not job_of("Tom", own)
    nurse = said_as("Farida", "Gus", "Being a vet nurse makes it worse honestly")
    assert job_of("Farida", nurse)
    assert not job_of("Tom", nurse)


CHAT = [
    ("Gus", "How's work? Still at the practice?"),
    ("Farida", "Being a vet nurse makes it worse honestly, kennel cough everywhere"),
    ("Gus", "And Tom? Still loving the new house?"),
    ("Farida", "Tom's obsessed with the garden. He built a shed on Saturday"),
    ("Gus", "Ha. And Sami?"),
    ("Farida", "He's a pharmacist in Didsbury now, manages the whole branch"),
]


def test_recall_says_when_only_someone_else_s_job_is_remembered(tmp_path: Path) -> None:
    tom, sami = recalled(
        tmp_path,
        CHAT,
        "What does Farida's husband Tom do for work?",
        "What does Farida's brother Sami do for a living?",
    )
    assert tom.startswith(NOTHING_SAID), tom
    assert "vet nurse" in tom  # the nearest matches still follow
    assert "pharmacist" in sami and not sami.startswith(NOTHING_SAID), sami


def test_how_someone_did_is_said_of_them() -> None:
    asked = "How did Rory do in the sack race at sports day?"
    assert asked_of(OUTCOME.name, asked) == "Rory"
    assert asked_of(OUTCOME.name, "Did Joy pass her G1 test?") == "Joy"
    assert asked_of(OUTCOME.name, "What place did Imani finish in at the marathon?") == "Imani"
    did = lambda sentence: OUTCOME.answers(sentence, asked)  # noqa: E731
    people = {"Rory", "Aoife", "Declan", "Maeve"}.__contains__
    # a bare answer: of whom the turn it answers spoke
    third = said_as("Aoife", "Declan", "Third in the sack race!", "How did Rory get on?")
    assert said_of(did, "Rory", [third], people)
    maeve = said_as("Aoife", "Declan", "Maeve came third in the sack race", "How was it?")
    assert not said_of(did, "Rory", [maeve], people)


def test_a_short_name_for_a_speaker_is_not_judged() -> None:
    speakers = FirstNames({"tobenna okonkwo", "amara okonkwo"})
    assert speakers.begun_like("tobi")  # Tobenna, as memory cannot tell
    assert not speakers.begun_like("tobenna")
    assert not speakers.begun_like("kemi")  # nobody's: judged


def test_a_sum_after_their_own_words_is_theirs() -> None:
    ape = said_as(
        "Marco",
        "Ingrid",
        "A week ago I drove to Bagheria with Davide and bought the Ape. €4,800, the guy "
        "wouldn't go lower",
    )
    people = {"Marco", "Ingrid", "Davide"}.__contains__
    assert said_of(states_amount, "Marco", [ape], people)
    assert not said_of(states_amount, "Ingrid", [ape], people)
    # "she" after the speaker's own words is still not the speaker
    physio = said_as("Arjun", "Wiktor", "way better than me. she's a physio", "her name is Maaike")
    assert said_of(lambda s: JOB.said_in([s]), "Maaike", [physio], {"Maaike"}.__contains__)


@pytest.mark.parametrize(
    ("question", "person"),
    [
        ("How much did Gus pay for his car?", "Gus"),
        ("How much rent does Mateus pay for his studio?", "Mateus"),
        ("How much money did Ren lend Teo to cover his rent?", "Ren"),
        ("How much does Priya currently pay each month as her share of the rent?", "Priya"),
        ("How much did the oven repair cost?", None),
    ],
)
def test_whom_a_sum_question_asks_about(question: str, person: str | None) -> None:
    assert asked_of(SUM, question) == person


def test_a_relative_is_asked_about_by_their_word_and_whose_they_are() -> None:
    assert kin_asked("Tessa's nan") == kin_asked("Tessa's grandmother") == ("tessa", "grandmoth")
    assert kin_asked("Kofi's mum") == ("kofi", "mother")
    assert kin_asked("Kofi's neighbour") is None
    # a grandparent in the family's own language
    for word in ("nonna", "abuela", "oma", "babcia", "mamie"):
        assert kin_asked(f"Tessa's {word}") == ("tessa", "grandmoth"), word
    assert kin_asked("Tessa's opa") == ("tessa", "grandfath")
    assert kin_asked("Tom") is None


def test_a_relative_s_job_is_said_with_their_word_and_their_owner() -> None:
    dad = "Olivier's father"
    assert job_of(dad, said_as("Camille", "Dre", "Olivier's dad is a retired electrician"))
    assert job_of(dad, said_as("Olivier", "Camille", "my dad was an electrician for 40 years"))
    assert job_of(dad, said_as("Camille", "Olivier", "your dad said he was an electrician?"))
    # someone else's father, or no father at all
    assert not job_of(dad, said_as("Camille", "Dre", "my dad is an electrician"))
    assert not job_of(dad, said_as("Camille", "Dre", "Sami's dad is an electrician"))
    assert not job_of(dad, said_as("Camille", "Dre", "I'm an electrician now, can you believe"))
    # "he" after the turn that spoke of him
    assert job_of(
        dad, said_as("Camille", "Dre", "he's an electrician", "Olivier's father came to lunch")
    )


def test_a_he_only_after_the_job_is_the_job_s_own() -> None:
    manager = said_as(
        "Claire",
        "Nadia",
        "New manager since December and he's obsessed with metrics",
        "Not sure yet, Tom's parents have offered us their spare rooms",
    )
    assert not job_of("Tom", manager)
    assert job_of("Tom", said_as("Claire", "Nadia", "he's a manager now", "Tom got promoted"))


def test_a_name_owning_a_relative_is_not_who_the_sentence_is_about() -> None:
    parents = said_as("Claire", "Nadia", "Builders started Monday and we're at Tom's parents'")
    assert not job_of("Tom", parents)
    assert job_of("Tom", said_as("Claire", "Nadia", "Tom's a builder, so he's in his element"))


def test_recall_says_when_only_another_race_s_time_is_remembered(tmp_path: Path) -> None:
    chat = [
        ("Marco", "How did the running go this summer?"),
        ("Ingrid", "I did the 10k in 52:40, my best ever"),
        ("Marco", "Amazing!"),
        ("Ingrid", "Next is the Midnight Sun half marathon. Ran it today, Håkon cheered"),
    ]
    half, ten = recalled(
        tmp_path,
        chat,
        "What was Ingrid's time in the Midnight Sun half marathon?",
        "What was Ingrid's time in the 10k?",
    )
    assert half.startswith(NOTHING_SAID), half
    assert "52:40" in ten and not ten.startswith(NOTHING_SAID), ten


def test_a_colour_asked_of_someone_s_thing_is_said_of_them() -> None:
    assert asked_of(COLOUR, "What colour was Rosie's cast?") == "Rosie"
    assert asked_of(COLOUR, "What colour is Mossy the pony?") is None
    boy = said_as(
        "Bridget",
        "Rosie",
        "He's fine, very proud of the blue cast actually",
        "How's Tom's arm?",
    )
    people = {"Tom", "Rosie", "Bridget"}.__contains__
    assert not said_of(names_a_colour, "Rosie", [boy], people)
    own = said_as("Rosie", "Bridget", "mine was bright pink, everyone signed it")
    assert said_of(names_a_colour, "Rosie", [own], people)


def test_of_several_named_in_a_sentence_the_answer_is_of_its_own_clause_s() -> None:
    plays = lambda sentence: INSTRUMENT.said_in([sentence])  # noqa: E731
    people = {"Priya", "Josh", "Chloe"}.__contains__
    josh = said_as("Chloe", "Mei", "Priya made me chai and Josh played a sad song on his guitar")
    assert not said_of(plays, "Priya", [josh], people)
    assert said_of(plays, "Josh", [josh], people)
    priya = said_as("Chloe", "Mei", "Josh made me chai and Priya played her guitar")
    assert said_of(plays, "Priya", [priya], people)


def test_a_pet_s_breed_is_said_by_its_owner_to_them_or_naming_them() -> None:
    breed = lambda sentence: BREED.said_in([sentence])  # noqa: E731
    assert asked_of(BREED.name, "What breed is Tomasz's dog Moss?") == "Tomasz"
    assert asked_of(BREED.name, "What breed of dog does Farhad own?") == "Farhad"
    # another's dog, "he" in their own turn: not Tomasz's
    yusra = said_as("Yusra", "Tomasz", "he's a 70 pound pit mix, basically made of butter")
    assert not said_of_owner(breed, "Tomasz", [yusra])
    assert said_of_owner(breed, "Yusra", [yusra])
    assert said_of_owner(breed, "Tomasz", [said_as("Yusra", "Tomasz", "your dog is a labrador??")])
    assert said_of_owner(breed, "Tomasz", [said_as("Yusra", "Ana", "Tomasz's collie mix is huge")])


def test_a_birthday_is_said_of_whom_the_question_asks() -> None:
    assert asked_of(BIRTHDAY.name, "When is Hazel's birthday?") == "Hazel"
    people = {"Hazel", "Owen", "Tasha"}
    owen = said_as("Tasha", "Kristen", "Owen's birthday is coming up, the 3rd")
    assert not birthday_of("Hazel", people, owen)
    assert birthday_of("Hazel", people, said_as("Tasha", "Kristen", "Hazel's bday is June 12"))


def test_a_clause_with_its_own_first_or_second_person_is_the_speaker_s_or_theirs() -> None:
    # Camille's PhD, in the clause after the one about Noémie
    text = "She wants to move back to Toronto, and I'm here for at least two more years of PhD"
    camille = said_as("Camille", "Ellie", text, "Poor Noémie, she's not even in the province")
    assert not job_of("Noémie", camille)
    assert job_of("Camille", camille)
    to_ellie = said_as("Camille", "Ellie", "She moved back to Toronto, and you're the nurse now")
    assert job_of("Ellie", to_ellie)
    # one clause: "she" still goes back to whom the turn before named
    assert job_of("Noémie", said_as("Camille", "Ellie", "she's a nurse", "Noémie moved back"))


def test_a_mark_is_said_of_whom_the_turn_calls_by_name_only_when_it_speaks_of_them() -> None:
    # "Dad," calls the one read to; the mark after it is the speaker's own
    results = said_as("David", "Joseph", "Dad, results are out. 7.5 in Port Economics!!")
    asked = "What mark did David get in his Port Economics exam?"
    assert asked_of(GRADE.name, asked) == "David"
    people = PEOPLE | {"Dad"}
    assert said_of(lambda s: GRADE.answers(s, asked), "David", [results], people.__contains__)
    dads = said_as("David", "Joseph", "Dad got 7.5 in Port Economics!!")
    assert not said_of(lambda s: GRADE.answers(s, asked), "David", [dads], people.__contains__)


def test_a_bare_mark_after_he_is_said_of_whom_he_is() -> None:
    asked = "What score did Liam get on his driving theory test?"
    passed = said_as(
        "Carol",
        "Aisha",
        "Oh I forgot to tell you! He passed on Tuesday! 47 out of 50 on the questions",
        "Wait Carol did Liam do his theory test?",
    )
    people = PEOPLE | {"Liam"}
    assert said_of(lambda s: GRADE.answers(s, asked), "Liam", [passed], people.__contains__)
    own = said_as("Carol", "Aisha", "Oh I forgot to tell you! 47 out of 50 on the questions")
    assert not said_of(lambda s: GRADE.answers(s, asked), "Liam", [own], people.__contains__)


def test_a_word_saying_the_answer_with_a_comma_after_it_ends_no_clause_before_it() -> None:
    people = {"Walter", "Maisie"}
    told = said_as("Walter", "Maisie", "Your birthday's on Friday, I'm told. Sixteen!")
    assert birthday_of("Maisie", people, told)
    assert not birthday_of("Walter", people, told)


def test_a_birthday_wish_is_said_of_whom_it_is_said_to() -> None:
    people = {"Walter", "Maisie"}
    wish = said_as("Maisie", "Walter", "happy birthday for yesterday grandad!!! 75!!!")
    assert birthday_of("Walter", people, wish)
    assert not birthday_of("Maisie", people, wish)
    own = said_as("Maisie", "Walter", "happy birthday to my mum for yesterday")
    assert not birthday_of("Walter", people, own)


def test_a_birthday_wish_tells_its_day_in_the_sentence_after_it() -> None:
    people = {"Walter", "Maisie", "Gwen"}
    wish = said_as("Maisie", "Walter", "Oh, and happy early birthday! Saturday isn't it?")
    assert birthday_of("Walter", people, wish)
    assert not birthday_of("Maisie", people, wish)
    # a sentence naming someone else, or saying "I", tells a day of its own
    gwen = said_as("Maisie", "Walter", "happy early birthday! Gwen arrives Saturday")
    assert not birthday_of("Walter", people, gwen)
    own = said_as("Maisie", "Walter", "happy early birthday! I'm off on Saturday")
    assert not birthday_of("Walter", people, own)
