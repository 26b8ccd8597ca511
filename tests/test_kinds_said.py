"""Whether an answer of the kind a question asks for was said."""

from __future__ import annotations

import pytest

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
    STREET,
    STUDY,
    KindOfAnswer,
    kind_asked,
)


def test_each_kind_is_told_by_the_question_s_wording() -> None:
    assert kind_asked("What breed is Isla's dog?") is BREED
    assert kind_asked("What does Riaan do for a living?") is JOB
    assert kind_asked("What does Precious's son Mtho do for work?") is JOB
    assert kind_asked("What is Ana's job?") is JOB
    assert kind_asked("Which airline did Priya fly to Mexico City?") is AIRLINE
    assert kind_asked("What instrument does Leah play in her band?") is INSTRUMENT
    assert kind_asked("What car does Evelyn drive?") is CAR
    assert kind_asked("What make of car did Hamish sell?") is CAR
    # where someone works, or what they do at a weekend, asks for none of them
    assert kind_asked("Where does Dan work?") is None
    assert kind_asked("What does Dan do on Sundays?") is None
    assert kind_asked("What is the name of Isla's dog?") is None


def test_a_breed_is_named_by_its_name_or_its_shape() -> None:
    assert BREED.said_in(["her dog. a kelpie. very smart, slightly unhinged"])
    assert BREED.said_in(["beagles are just garbage disposals with ears"])
    assert BREED.said_in(["he's a staffie, he'll be grand"])
    # one the list does not hold, said as a mix or a cross
    assert BREED.said_in(["Shelter thinks he's a Kooikerhondje mix, about 2"])
    assert BREED.said_in(["Collie cross, about four years old"])
    # the dog spoken of, its breed never said
    assert not BREED.said_in(["Bonnie's on new tablets for her joints", "walked the dog"])
    # words a breed's name shares with everyday ones are not breeds
    assert not BREED.said_in(["the staff were great", "Jack's in York"])


def test_a_job_is_named_by_its_name_or_its_shape() -> None:
    assert JOB.said_in(["a younger brother, Euan, he's a fisherman out of Oban"])
    assert JOB.said_in(["he teaches geography. secondary school in Cabra"])
    assert JOB.said_in(["A jeweller from Kottayam town, Mathew Chacko"])
    assert JOB.said_in(["she's a florist now, loves it"])
    assert not JOB.said_in(["Riaan's lovely, we met at Femke's birthday", "he works a lot"])
    assert JOB.said_in(["both nurses on the same ward now"])


def test_a_job_word_is_a_whole_word_not_a_stem() -> None:
    # "pottery", "office", "bakery", "manage": not a potter, an officer, a baker, a manager
    assert not JOB.said_in(["Noémie is making me take pottery classes with her"])
    assert not JOB.said_in(["back in the office on Monday", "a bakery downstairs"])
    assert not JOB.said_in(["we'll manage somehow"])


def test_an_airline_an_instrument_or_a_car_is_named() -> None:
    assert AIRLINE.said_in(["Qantas to Dallas and then a little hop to Houston"])
    assert AIRLINE.said_in(["Yes! Qatar Airways, Lagos to Manchester through Doha"])
    assert not AIRLINE.said_in(["I fly on the 16th. Kraków to Dublin. Alone"])
    # how someone did in a contest or a test is said only once it happened
    assert kind_asked("Did Theo win his Young Chef heat?") is OUTCOME
    assert kind_asked("How did Maisie do in the bouldering competition?") is OUTCOME
    assert kind_asked("Who won the biggest onion class?") is OUTCOME
    assert kind_asked("How did the party go?") is None
    assert not OUTCOME.said_in(["The heat's on 8 November. Wish me luck!"])
    assert OUTCOME.said_in(["Third in the sack race. He's demanding a rematch"])
    assert OUTCOME.said_in(["Amara came third in the under-10 section"])
    assert OUTCOME.said_in(["Kathleen won guess the bump"])
    assert OUTCOME.said_in(["19 out of 27 got a 5 or above in the mocks"])
    # which team won, whether someone passed, where a team placed, a score or a result
    assert kind_asked("Which team won the charity tournament at Scotstoun?") is OUTCOME
    assert kind_asked("Did Joy pass her G1 test?") is OUTCOME
    assert kind_asked("Where did Bea's Science Olympics team place in 2025?") is OUTCOME
    assert kind_asked("What was the result of Mere's glucose tolerance test?") is OUTCOME
    assert kind_asked("Where did the reunion hike end up taking place?") is None
    assert kind_asked("Where did Tom come from?") is None
    assert OUTCOME.said_in(["They lost 24-19 but he scored a try!!"])
    assert OUTCOME.said_in(["Not guilty. I cried in the car park"])
    assert not OUTCOME.said_in(["I'm off 2-3 weeks, then back on nights"])
    # a "won't" or a habit is no outcome
    assert not OUTCOME.said_in(["yeah i won't decide till after the AM2"])
    assert not OUTCOME.said_in(["She's 9 and she beats me every time"])
    # a people, a country or a name is an airline only after a word of flying
    assert not AIRLINE.said_in(["there's a great Turkish bakery downstairs"])
    assert not AIRLINE.said_in(["Ana says eat a pastel de nata for her"])
    assert AIRLINE.said_in(["we flew Turkish via Istanbul"])
    assert AIRLINE.said_in(["Turkish Airlines, through Istanbul"])
    assert INSTRUMENT.said_in(["Viola. The instrument everyone forgets exists"])
    assert not INSTRUMENT.said_in(["she has choir rehearsal until 5", "I lost my keys"])
    assert CAR.said_in(["2019 corolla hybrid. silver. 48,000 on the clock"])
    assert CAR.said_in(["Bought a 2017 Ferrari yesterday, you'd approve"])
    # a year before any word is no car ("2019 and"), nor is a car seat
    assert not CAR.said_in(["since 2019 and still going", "And a car seat also"])


def test_a_finishing_time_is_said_as_a_clock_or_a_duration() -> None:
    assert kind_asked("What was Dana's finishing time in the half marathon?") is FINISH_TIME
    assert FINISH_TIME.said_in(["I finished the 10K!!! 58:12. my goal was under an hour"])
    assert FINISH_TIME.said_in(["just under four hours, I'll take it"])
    assert FINISH_TIME.said_in(["4h12 in the end, legs destroyed"])
    # "Ah" is no "a h", and a distance is no time
    assert not FINISH_TIME.said_in(["Ah more time to prepare at least", "ran 10k on sunday"])
    # nor a pace, nor how long something went on
    assert not FINISH_TIME.said_in(["5:38/km average", "we rowed round the bay for an hour"])
    assert FINISH_TIME.said_in(["did it in 52 mins"])


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        # a race's time in other words
        ("What was Marcus's half marathon time?", FINISH_TIME),
        ("What was Sam's time in the Manchester half marathon?", FINISH_TIME),
        ("What was Kenji's swim time at the Issaquah Sprint triathlon?", FINISH_TIME),
        ("What was Dana's time in Berlin like?", None),
        ("What time is Dana's flight?", None),
        # what someone studies is a field; what is asked of a study that is no field is not
        ("What did Meera study at university?", STUDY),
        ("What is Chidi studying?", STUDY),
        ("What did Walt major in at college?", STUDY),
        ("What did Ingrid study for her master's degree in Edinburgh?", STUDY),
        ("What language is Tessa studying at night class?", None),
        ("What animal does Sung-min study for his PhD?", None),
        # a PhD's or a thesis's subject is a topic of its own ("perovskite solar cells")
        ("What does Tomasz study for his PhD?", None),
        ("What is Aiko studying for her dissertation?", None),
        ("What did Ingrid read on the plane?", None),
        # a birthday's day; not an event on it ("the 70th birthday party")
        ("When is Hazel's birthday?", BIRTHDAY),
        ("When is Priya's mother's bday?", BIRTHDAY),
        ("When was Ngozi's father's 70th birthday party?", None),
        ("What did Dana get for her birthday?", None),
    ],
)
def test_the_kind_a_question_asks_in_other_words(question: str, kind: KindOfAnswer | None) -> None:
    assert kind_asked(question) is kind


def test_a_time_for_another_distance_is_another_race_s() -> None:
    half = "What was Ingrid's time in the Midnight Sun half marathon?"
    assert not FINISH_TIME.answers("I did the 10k in 52:40, my best ever", half)
    assert FINISH_TIME.answers("1:49:12!! half marathon done", half)
    assert FINISH_TIME.answers("1:49:12, legs gone", half)  # no distance said: may be it
    nadia = "What was Nadia's time in the Two Bays 28k?"
    assert not FINISH_TIME.answers("6:21:40 for the 56k", nadia)
    assert FINISH_TIME.answers("52:40 for the 10k", "What was Gus's finishing time?")


def test_a_time_only_hoped_for_is_no_time_run() -> None:
    asked = "What was Sam's time in the Manchester half marathon?"
    assert not FINISH_TIME.answers("if i hold something like that i'm under 4 hours", asked)
    assert not FINISH_TIME.answers("Aiming for 1:45 this time", asked)
    assert FINISH_TIME.answers("1:52:40!! goal was 1:45 but I'll take it", asked)
    # unless the question asks what was hoped for
    aim = "What finishing time was Wanjiru aiming for in her half marathon?"
    assert FINISH_TIME.answers("Aiming for 2:15 now, nothing crazy", aim)


def test_what_someone_studies_is_a_field() -> None:
    assert STUDY.said_in(["she's doing civil engineering at Monash"])
    assert STUDY.said_in(["first year of criminology, loving it"])
    assert not STUDY.said_in(["uni is so much work, I never sleep"])
    assert STUDY.said_in(["Priya is quizzing me, she's doing med so she knows it all"])
    # planning as a field, not as a verb
    assert STUDY.said_in(["a master's in urban planning, two years in Copenhagen"])
    assert not STUDY.said_in(["a bit about me 'not planning a future'"])


def test_a_job_word_said_as_a_verb_a_likeness_or_of_someone_else_at_work_is_none() -> None:
    assert not JOB.said_in(["Theo got takeout because we still can't cook"])
    assert not JOB.said_in(["she drags herself along like a little soldier"])
    assert not JOB.said_in(["the doctor moved the due date to the 14th"])
    assert not JOB.said_in(["Ready to pop. Midwife reckons it could be early"])
    assert JOB.said_in(["Nurse. Night shifts mostly, she says"])
    assert JOB.said_in(["works as a cook at Nando's"])
    assert JOB.said_in(["he's the manager now"])
    assert JOB.said_in(["I want to be a teacher"])
    assert JOB.said_in(["then she goes back to teaching"])


def test_a_mix_or_a_lab_is_a_breed_only_when_said_as_one() -> None:
    assert BREED.said_in(["she's a collie mix"])
    assert BREED.said_in(["a black lab, total sweetheart"])
    assert BREED.said_in(["some kind of huntaway cross"])
    assert not BREED.said_in(["a rotating roster, a mix of days and nights"])
    assert not BREED.said_in(["you all look the same in lab coats", "our skills lab"])


def test_a_birthday_is_said_with_its_day() -> None:
    assert BIRTHDAY.said_in(["her bday's June 12 so... should be fine??"])
    assert BIRTHDAY.said_in(["it's my birthday tomorrow!"])
    assert BIRTHDAY.said_in(["turns 23 on monday actually"])
    # a wish, a party or a turn of the road says no day
    assert not BIRTHDAY.said_in(["happy birthday!! 🎂"])
    assert not BIRTHDAY.said_in(["the birthday party was so fun"])
    assert not BIRTHDAY.said_in(["turn left on monday at the lights"])
    assert not BIRTHDAY.said_in(["a birthday picnic in the sun"])


def test_a_breed_is_not_a_people_a_language_or_a_likeness() -> None:
    assert not BREED.said_in(["I read my translation in English and Persian"])
    assert not BREED.said_in(["a Persian tradition, the table of seven things"])
    assert not BREED.said_in(["that's the most beagle thing I've ever heard"])
    assert BREED.said_in(["she's a Persian cat, fluffier than my carpet"])
    assert BREED.said_in(["Honestly she's a Siamese. Loud."])


def test_a_breed_of_another_animal_does_not_answer() -> None:
    dog = "What breed is Isla's dog?"
    cat = "What breed is Isla's cat?"
    photo = "[shared image: boxes with a ginger tabby cat sitting on top of one]"
    assert not BREED.answers(photo, dog)
    assert BREED.answers(photo, cat)
    assert not BREED.answers("a beagle mix, look at those ears", cat)
    assert BREED.answers("a beagle mix, look at those ears", dog)
    assert not BREED.answers("she's a Maine Coon, huge", dog)
    assert BREED.answers("she's a Maine Coon, huge", cat)
    # a question naming no animal takes either
    assert BREED.answers(photo, "What breed is Mango?")


def test_someone_s_someone_at_work_is_not_their_job() -> None:
    # the doctor is Priya's doctor, the midwife Danielle's: no job of theirs
    assert not JOB.said_in(["Priya's doctor doesn't want her flying that late"])
    assert not JOB.said_in(["just Jude and my midwife basically"])
    assert not JOB.said_in(["Anika is 9 and currently his 'nurse'"])
    # a contraction says what they are
    assert JOB.said_in(["she's a physio at the Queen Elizabeth"])
    assert JOB.said_in(["Tom's a plumber, he'll sort it"])
    assert JOB.said_in(["he's retired now, thank god"])
    assert JOB.said_in(["my job as a nurse is killing me"])


@pytest.mark.parametrize(
    "text",
    [
        "yes Friday. and... I PASSED. 81 percent. results came yesterday",
        "lol actually yeah. finished it in June, got a B+",
        "B in listening, reading and speaking. C+ in writing",
        "5.5 out of 9! Beat a guy rated 2050 in round 6",
        "got 84!!! best mark I've had all year",
        "lol. also passed fluid mech!! 8.2",
        "maths 7, english 6, art 8",
        "Got my first essay back! 68, which is a merit.",
        "Dad, results are out. 7.5 in Port Economics!!",
    ],
)
def test_a_mark_is_said_as_one(text: str) -> None:
    assert kind_asked("What grade did Dev get in his small business course?") is GRADE
    assert GRADE.said_in([text])


@pytest.mark.parametrize(
    "text",
    [
        "she got the grades! she's going to sheffield",
        "she cried after chemistry paper 1 but mum says she always does",
        "Yes! She's got a tournament next month. She's 9 and she beats me every time",
        "2 bedroom so I've got a flatmate",
        "got a parka. $640 but it's rated to minus 30",
        "Okay. How old will she be, 53?",
        "The exam is on the 24th, 3 hours long",
    ],
)
def test_a_number_that_counts_dates_or_names_something_is_no_mark(text: str) -> None:
    assert not GRADE.said_in([text])


def test_a_chore_s_half_an_hour_is_no_finishing_time() -> None:
    assert not FINISH_TIME.said_in(["He fixed the gate on the top field in half an hour."])
    assert FINISH_TIME.said_in(["i did it!!! bath half done 2:04:37"])
    assert FINISH_TIME.said_in(["Ran it in an hour and five minutes"])


def test_a_mark_in_another_subject_is_not_the_one_asked() -> None:
    asked = "What grade did David get in Transport Economics?"
    assert not GRADE.answers("7.5 in Port Economics!!", asked)
    assert GRADE.answers("7.5 in Transport Economics!!", asked)
    assert GRADE.answers("got 84!!! best mark I've had all year", asked)
    assert kind_asked("What did Aaron score in science in his board exams?") is GRADE
    assert kind_asked("What grade is Kevin's son in?") is None
    assert kind_asked("What grade does Laura teach?") is None


def test_a_street_is_said_by_its_word_or_after_on() -> None:
    assert kind_asked("What street is Józef's new flat in Kraków on?") is STREET
    assert kind_asked("On which road did Aroha crash her bike?") is STREET
    for text in (
        "it's called Marlow, on Gertrude St. modern australian",
        "that little shop on Pearl",
        "a flat just off Leland",
        "I bought my saz on Oranienstraße",
        "we found one on Rue Rachel",
        "we're on albert st now",
    ):
        assert STREET.said_in([text]), text
    for text in (
        "The way he said it though",
        "saw it on Instagram on Saturday",
        "my place is tiny but the new place has a garden",
        "No way!! by the way, the road was closed",
    ):
        assert not STREET.said_in([text]), text
