"""The everyday words of a question's kind of answer ("she's a pediatric dentist")."""

from __future__ import annotations

from pathlib import Path

from memgraph import Memory
from memgraph.answer_kinds import answer_cues, asks_name
from memgraph.retrieval.recall_text import NOTHING_SAID
from memgraph.text import index_terms
from tests.test_recall_quality import recalled, searched


def test_a_question_of_a_known_kind_gets_the_words_its_answers_come_in() -> None:
    assert set(index_terms("dentist teacher nurse")) <= set(
        answer_cues("What does Naomi do for work?")
    )
    assert set(index_terms("greyhound kelpie")) <= set(answer_cues("What breed is Kuma?"))
    assert "splint" in answer_cues("What injury did Dana get while training?")
    # "I have bought the Skoda": a car is often said by its make alone
    assert set(index_terms("skoda vauxhall peugeot")) <= set(
        answer_cues("How much did Alasdair pay for his new car?")
    )
    # where someone works is often said with what they do there
    assert "engin" in answer_cues("And where does she work?")
    assert set(index_terms("engaged fiance")) <= set(
        answer_cues("What is Hannah's relationship to Chidi now?")
    )
    # where someone lives is told as "we got the Crows Nest flat", "moved on
    # Saturday": words that judge a text, not ones search looks for
    asked = "Which suburb does Ada live in now?"
    assert "flat" not in answer_cues(asked)
    assert set(index_terms("flat moved lease")) <= set(answer_cues(asked, judging=True))
    assert "flat" in answer_cues("Where does Dana live?", judging=True)
    assert "flat" not in answer_cues("Where did Dana travel last summer?", judging=True)
    # "the dog" finds the texts about someone's dog, but tells no breed; and "a lab"
    # or "maine" (of "maine coon") are said of much else
    breed = "What breed is Nadia's dog?"
    assert "dog" in answer_cues(breed) and "dog" not in answer_cues(breed, judging=True)
    assert "retriev" in answer_cues(breed, judging=True)
    assert not {"lab", "main", "west", "staff"} & set(answer_cues(breed, judging=True))
    assert "dog" in answer_cues("Does Dev have any pets?", judging=True)
    # a dog's breed tells no bird's type
    assert "chihuahua" in answer_cues("What kind of dog does Audrey have?", judging=True)
    assert "chihuahua" not in answer_cues("Which type of bird mesmerizes Audrey?", judging=True)
    # a food pantry or a food truck is a place, not a food asked for
    assert "ramen" in answer_cues("What food does Lucía like?")
    assert "ramen" not in answer_cues("Which day does Lucía volunteer at a food pantry?")
    assert "ramen" not in answer_cues("Where does Dana park her food truck?")


def test_a_colour_question_gets_the_names_of_colours_but_a_why_question_not() -> None:
    assert {"green", "teal"} <= set(answer_cues("What colour are the tiles in the kitchen?"))
    assert "purpl" in answer_cues("What color did Nate choose for his hair?")
    assert "green" not in answer_cues("Why did Melanie use colors in her pottery?")


def test_an_exercise_question_gets_the_names_of_workouts() -> None:
    cues = set(answer_cues("What exercises has John done?"))
    assert set(index_terms("yoga kickboxing circuit")) <= cues
    assert set(index_terms("pilates")) <= set(answer_cues("How does Maria stay fit?"))
    martial = set(answer_cues("What martial arts has John done?"))
    assert set(index_terms("kickboxing taekwondo")) <= martial


def test_an_injury_or_a_school_is_asked_in_other_words_too() -> None:
    assert set(index_terms("sprained wrist")) <= set(answer_cues("What did Jess injure?"))
    assert set(index_terms("mba program")) <= set(answer_cues("Which school is Sam going to?"))
    # "still Primary 4 at Brightway Academy", "she's at uni in Leeds"
    cues = set(answer_cues("At which school does Nkechi work?"))
    assert set(index_terms("academy uni")) <= cues


def test_a_technology_question_gets_the_names_of_tools() -> None:
    cues = set(answer_cues("Which database is Mei going with?"))
    assert set(index_terms("postgres mysql")) <= cues
    assert "django" in answer_cues("Which web framework did Tariq pick for the backend?")


def test_medication_jewellery_subjects_and_housemates_have_words_of_their_own() -> None:
    assert "mg" in answer_cues("Which medicine did Halina's cardiologist put her on?")
    assert "earring" in answer_cues("What jewellery did Halina give Maura?")
    assert "housem" in answer_cues("Who does Nadia live with now?")
    assert "ranger" in answer_cues("What does Maddie do for a living?")
    assert "pharmac" in answer_cues("Where does Aoife work?")
    assert "chem" in answer_cues("What subject does Mei's husband Jonah teach?")


def test_a_question_of_no_known_kind_gets_none() -> None:
    assert answer_cues("When did Rosa get home from Maine?") == []
    assert answer_cues("Where does Dana live now?") == []


def test_a_person_s_occupation_is_found_in_other_words(tmp_path: Path) -> None:
    said = [
        ("Evelyn", "Naomi set a date! June 10th, in Vermont"),
        ("Rosa", "finally! tell her congratulations"),
        ("Evelyn", "she's a pediatric dentist, so the kids at the wedding will have great teeth"),
        ("Rosa", "lol"),
        ("Evelyn", "Walt is building an arbor for the ceremony. it's a lot of work"),
        ("Rosa", "the kiln repair guy says it will work again"),
        ("Evelyn", "my eyes work now, I can read the small print"),
        ("Rosa", "back to work at the library on Monday"),
    ]
    (text,) = recalled(tmp_path, said, "What does Naomi do for work?")
    assert not text.startswith(NOTHING_SAID), text
    messages = text.split("Related messages:")[1].splitlines()
    # first, before the texts that only hold the question's own word
    assert "pediatric dentist" in messages[1], text


def noted(tmp_path: Path, notes: list[str], question: str, *, rerank: bool = True) -> str:
    """What recall answers ``question`` after ``notes`` were remembered, one by one."""
    with Memory(tmp_path / "mem", "u", provider="mock") as memory:
        for note in notes:
            memory.remember(note)
        return memory.recall(question, rerank=rerank)


ALICE = [
    "Alice Chen is a senior engineer at Acme Corp in Berlin.",
    "Alice prefers green tea over coffee.",
]


def test_what_someone_drinks_is_found_in_what_they_prefer(tmp_path: Path) -> None:
    notes = [*ALICE, "Alice is learning Rust on weekends."]
    text = noted(tmp_path, notes, "What does Alice drink?")
    assert "green tea" in text and not text.startswith(NOTHING_SAID), text


def test_a_note_after_one_about_someone_is_not_about_them(tmp_path: Path) -> None:
    notes = [
        *ALICE,
        "Dana moved to Porto and now works at Porto Children's Clinic.",
        "Alice is learning Rust on weekends.",
    ]
    text = noted(tmp_path, notes, "Where does Alice work?", rerank=False)
    messages = text.split("Related messages:")[1] if "Related messages:" in text else text
    first = messages.strip().splitlines()[0]
    assert "Porto" not in first, text


def test_a_question_about_a_diet_gets_the_words_diets_are_said_in() -> None:
    assert set(index_terms("vegetarian vegan gluten")) <= set(
        answer_cues("What diet does Priya follow?")
    )
    assert "vegetarian" in answer_cues("Does she have any dietary restrictions?")


def test_what_someone_does_on_an_occasion_is_not_their_occupation() -> None:
    assert "dentist" in answer_cues("What does Naomi do?")
    assert "dentist" not in answer_cues("What does Melanie do with her family on hikes?")


def test_a_person_s_trade_is_their_occupation_but_a_trade_fair_is_not() -> None:
    assert "carpent" in answer_cues("What is Jonas's trade?")
    assert "carpent" in answer_cues("Which trade is Felix training in?")
    assert "carpent" not in answer_cues("When is Jonas's trade fair?")
    assert "carpent" not in answer_cues("Did the trade deal pass?")


def test_a_job_application_or_interview_is_not_an_occupation() -> None:
    (engineer,) = index_terms("engineer")
    assert engineer in answer_cues("What is Bea's new job?")
    asked = "What task did Bea have to do in the practical round of her job application?"
    assert engineer not in answer_cues(asked)
    assert engineer not in answer_cues("What did Sam say about his job interview?")


def test_a_question_asking_a_name() -> None:
    assert asks_name("What is the name of Ifeoma's cat?")
    assert asks_name("What's Keisha's last name?")
    assert asks_name("What did Dana name her dog?")
    assert asks_name("What nickname did Priya give her new car?")
    assert asks_name("What is Dani's son called?")
    assert not asks_name("Where does Dana live?")


def test_a_question_about_a_race_gets_the_words_races_are_said_in() -> None:
    assert set(index_terms("10k marathon")) <= set(
        answer_cues("What race did Priya register for in the spring?")
    )


def test_an_age_or_a_weight_is_found_in_the_words_it_is_said_in(tmp_path: Path) -> None:
    assert set(index_terms("turned pounds")) <= set(
        answer_cues("How old is Mateo now?") + answer_cues("How much does Juniper weigh?")
    )
    said = [
        ("Rosa", "Mateo turned 9 on Saturday! We FaceTimed all morning"),
        ("Evelyn", "nine! I remember when he was a baby. how is he doing in school?"),
        ("Rosa", "he is doing great, he is the oldest in his class though"),
        ("Evelyn", "old souls, those kids"),
        ("Rosa", "my old neighbor says he looks just like Frank"),
    ]
    (text,) = recalled(tmp_path, said, "How old is Mateo now?")
    assert "turned 9" in text.split("Related messages:")[-1].splitlines()[1], text


def test_a_breed_is_found_when_only_a_shared_photo_names_it(tmp_path: Path) -> None:
    said = [
        ("Freya", "how's the beast?"),
        (
            "Ellie",
            "ate half a stollen off the counter. Three years old and no sense whatsoever "
            "[shared image: a scruffy grey lurcher asleep on a sofa]",
        ),
        ("Freya", "sick as a dog this week, honestly"),
        ("Ellie", "aw no. rest up"),
    ]
    (text,) = recalled(tmp_path, said, "What breed of dog does Ellie have?")
    assert any("lurcher" in line for line in text.splitlines()[:3]), text


def test_asking_which_company_someone_works_for_is_an_occupation_question() -> None:
    cues = answer_cues("What company did Liam work for in Melbourne?")
    assert {"tester", "engin"} <= set(cues)


def test_someone_s_current_job_is_an_occupation_question() -> None:
    for question in ("What is Liam's current job?", "What was Joanna's job before that?"):
        assert "tester" in answer_cues(question), question


def test_a_job_that_is_a_piece_of_work_does_not_ask_for_an_employer() -> None:
    from memgraph.attributes import asked_attributes
    from memgraph.text import words

    assert asked_attributes(words("What is her new job?")) == {"employer"}
    assert asked_attributes(words("What is Marek's final price for the bathroom job?")) == set()


def test_work_that_is_a_shift_does_not_ask_for_an_employer() -> None:
    from memgraph.attributes import asked_attributes
    from memgraph.text import words

    assert asked_attributes(words("When did Darius work his final shift in A&E?")) == set()
    assert asked_attributes(words("When did Kristen work her last night shift?")) == set()
    assert asked_attributes(words("Does Kristen still work nights?")) == {"employer"}
    assert asked_attributes(words("Where does Darius work now?")) == {"employer"}


def test_news_of_a_transfer_or_promotion_says_where_someone_works() -> None:
    from memgraph.attributes import asked_attributes, attribute_cues
    from memgraph.text import words

    asked = asked_attributes(words("In which city is Kwame working now?"))
    assert asked == {"employer"}
    # "The transfer is confirmed. From November I will lead the site in Kumasi."
    assert {"transfer", "promoted"} <= set(attribute_cues(asked).split())


def test_a_travel_question_gets_the_names_of_places() -> None:
    cues = set(answer_cues("Which cities has Jon visited?"))
    assert set(index_terms("rome paris trip")) <= cues
    assert set(index_terms("spain england")) <= set(
        answer_cues("What European countries has Maria been to?")
    )
    assert "oregon" in answer_cues("What states has Maria vacationed at?")
    assert "japan" in answer_cues("Where did Dana travel to in July?")
    # where someone lives, or a city a question names, is asked in its own words
    assert "rome" not in answer_cues("In which city does Maggie live?")
    assert "rome" not in answer_cues("Where has Ana been working?")


def test_the_places_someone_visited_are_found_without_the_word_city(tmp_path: Path) -> None:
    said = [
        ("Jon", "Hey Gina! Still working on my biz. Took a short trip last week to Rome."),
        ("Gina", "Wow, sounds amazing! Did you eat a lot?"),
        ("Jon", "So much pasta. I needed the break."),
        ("Gina", "The store is keeping me busy, we visited three suppliers this week"),
        ("Jon", "Thanks!"),
        ("Gina", "Agreed!"),
        ("Jon", "My studio is downtown, easy to get to for everyone in the city"),
    ]
    (text,) = recalled(tmp_path, said, "Which cities has Jon visited?")
    assert not text.startswith(NOTHING_SAID), text
    messages = text.split("Related messages:")[1].splitlines()
    assert "Rome" in "\n".join(messages[:3]), text


def test_a_turn_that_only_reacts_is_no_hit_by_its_speaker_s_name(tmp_path: Path) -> None:
    said = [
        ("Jon", "I lost my job at the bank, so I'm opening a dance studio."),
        ("Gina", "Wow, that's brave! My clothing store is keeping me busy"),
        ("Jon", "Agreed!"),
        ("Gina", "Any luck finding a spot for it?"),
        ("Jon", "I looked at a space downtown with great natural light."),
        ("Gina", "That sounds perfect for dancers"),
        ("Jon", "Thanks!"),
        ("Gina", "Bye!"),
        ("Jon", "Still working on my biz. Took a short trip last week to Rome."),
    ]
    texts = searched(tmp_path, said, "Which cities has Jon visited?", k=3)
    assert "Agreed!" not in texts and "Thanks!" not in texts, texts


def test_someone_s_position_is_their_job_unless_it_is_played_or_in_a_race() -> None:
    from memgraph.attributes import asked_attributes
    from memgraph.text import words

    question = "What is Tomás's current position at the restaurant?"
    assert "chef" in answer_cues(question)
    assert asked_attributes(words(question)) == {"employer"}
    for other in (
        "What position does Malia play in her netball team?",
        "What was Dana's position in the race?",
    ):
        assert "chef" not in answer_cues(other), other
        assert asked_attributes(words(other)) == set(), other
    # "Kenji, the tag tech": a short word for a job
    assert "tech" in answer_cues("What is Kenji's job on the expedition?")


def test_flatmates_who_do_something_are_not_asked_about() -> None:
    assert "roommat" in answer_cues("Who is Ciara's flatmate in the Rialto flat?")
    assert "roommat" in answer_cues("Who does Wren live with now?")
    assert "roommat" not in answer_cues("When did the flatmates hold the casting for Lena's room?")


def test_a_condition_set_is_no_illness() -> None:
    assert "asthma" in answer_cues("What heart condition was Rui diagnosed with?")
    assert "asthma" in answer_cues("What condition does Ana have?")
    assert "asthma" not in answer_cues(
        "What condition did the landlord set for allowing the flatmates to have a cat?"
    )


def test_doing_something_for_a_living_asks_a_job_not_where_someone_lives() -> None:
    from memgraph.attributes import asked_attributes
    from memgraph.text import words

    assert asked_attributes(words("What does Noor do for a living?")) == set()
    assert asked_attributes(words("What colour is the living room?")) == set()
    assert asked_attributes(words("Where is Noor living now?")) == {"residence"}
    assert asked_attributes(words("Who is Ada living with?")) == {"residence"}


def test_a_role_in_a_wedding_or_a_play_is_no_job() -> None:
    assert "bridesmaid" not in answer_cues("What role will Chloe have in her cousin's wedding?")
    assert "teacher" not in answer_cues("What role did Ana get in the school play?")
    (principal,) = index_terms("principal")
    assert principal in answer_cues("What role did Marcus accept at Carebridge?")
    assert principal in answer_cues("What does Karen do for a living?")


def test_the_words_that_ask_for_a_job_or_its_present_value() -> None:
    from memgraph.attributes import attribute_words

    asked = attribute_words({"employer"})
    assert set(index_terms("work job still now")) <= asked
    assert not set(index_terms("café fitzroy")) & asked
