"""The rule-based English extractor behind the mock provider's extract phase."""

from __future__ import annotations

from typing import Any

import pytest
from memgraph.providers.mock.rules import KnownEntity, extract, parse_known

EMPTY: dict[str, Any] = {"entities": [], "relations": [], "expirations": []}


def entity(result: dict[str, Any], name: str) -> dict[str, Any]:
    matches = [e for e in result["entities"] if e["name"] == name]
    assert len(matches) == 1, result
    found: dict[str, Any] = matches[0]
    return found


def rel(source: str, type_: str, target: str) -> dict[str, str]:
    return {"from": source, "to": target, "type": type_}


def test_a_copula_sentence_becomes_an_is_observation_of_a_person() -> None:
    assert extract("Alice is a senior engineer.") == {
        "entities": [{"name": "Alice", "type": "person", "observations": ["is a senior engineer"]}],
        "relations": [],
        "expirations": [],
    }


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("My rent is $1,450 a month.", "rent is $1,450 a month"),
        ("I finished in 2:11:40, legs are dead.", "finished in 2:11:40, legs are dead"),
    ],
)
def test_a_number_keeps_its_comma_and_colons(text: str, fact: str) -> None:
    assert entity(extract(text), "User")["observations"] == [fact]


def test_a_company_description_types_the_company_and_links_its_place() -> None:
    assert extract("Acme is a robotics company based in Berlin") == {
        "entities": [
            {
                "name": "Acme",
                "type": "organization",
                "observations": ["is a robotics company based in Berlin"],
            },
            {"name": "Berlin", "type": "place", "observations": []},
        ],
        "relations": [rel("Acme", "based_in", "Berlin")],
        "expirations": [],
    }


def test_a_verb_and_its_object_become_an_observation() -> None:
    result = extract("Alice prefers TypeScript.")
    assert entity(result, "Alice") == {
        "name": "Alice",
        "type": "person",
        "observations": ["prefers TypeScript"],
    }
    assert result["relations"] == [rel("Alice", "prefers", "TypeScript")]


def test_working_at_a_named_place_adds_a_works_at_relation_to_an_organization() -> None:
    assert extract("Alice works at Acme.") == {
        "entities": [
            {"name": "Alice", "type": "person", "observations": ["works at Acme"]},
            {"name": "Acme", "type": "organization", "observations": []},
        ],
        "relations": [rel("Alice", "works_at", "Acme")],
        "expirations": [],
    }


def test_two_jobs_said_one_after_the_other_both_produce_works_at_relations() -> None:
    first = extract("Alice works at Acme.")
    second = extract("Alice works at Globex.", "Alice (person)\n  - works at Acme")
    assert first["relations"] == [rel("Alice", "works_at", "Acme")]
    assert second["relations"] == [rel("Alice", "works_at", "Globex")]
    assert entity(second, "Alice")["observations"] == ["works at Globex"]
    assert entity(second, "Globex")["type"] == "organization"


def test_a_possessive_subject_keeps_the_possessed_attribute() -> None:
    assert extract("Alice's favourite colour is blue.") == {
        "entities": [
            {"name": "Alice", "type": "person", "observations": ["favourite colour is blue"]}
        ],
        "relations": [],
        "expirations": [],
    }


@pytest.mark.parametrize("name", ["Alice", "Bob"])
def test_my_name_is_becomes_a_name_fact_of_the_user(name: str) -> None:
    assert extract(f"My name is {name}.") == {
        "entities": [{"name": "User", "type": "person", "observations": [f"name is {name}"]}],
        "relations": [],
        "expirations": [],
    }


@pytest.mark.parametrize(
    "text",
    ["Hi! I'm Marta. I just moved here.", "I'm Marta, nice to meet you!", "I'm Marta Ruiz"],
)
def test_a_speaker_introducing_themselves_gives_their_name(text: str) -> None:
    (user,) = [e for e in extract(text)["entities"] if e["name"] == "User"]
    assert user["observations"][0] in ("name is Marta", "name is Marta Ruiz")
    assert not [e for e in extract(text)["entities"] if e["name"].startswith("Marta")]


def test_a_name_given_for_the_role_just_spoken_of_names_that_person() -> None:
    result = extract("My sister lives in Pune. Her name is Kavya.", speaker="Anya")
    assert entity(result, "Kavya")["observations"] == ["lives in Pune"]
    assert {"from": "Kavya", "to": "Anya", "type": "sister_of"} in result["relations"]
    asked = extract("have you met my new roommate? her name is Priyanka", speaker="Nadia")
    assert {"from": "Priyanka", "to": "Nadia", "type": "roommate_of"} in asked["relations"]
    # with no role spoken of just before, the pronoun names nobody
    assert extract("Her name is Kavya.", speaker="Anya")["entities"] == []


def test_a_single_capitalised_word_without_an_introduction_is_no_name() -> None:
    assert entity(extract("I'm Canadian."), "User")["observations"] == ["is Canadian"]


def test_a_new_name_expires_the_known_name() -> None:
    result = extract("My name is Bob.", "User (person)\n  - name is Alice")
    assert entity(result, "User")["observations"] == ["name is Bob"]
    assert result["expirations"] == [{"entityName": "User", "observationContent": "name is Alice"}]


def test_first_person_facts_are_conjugated_to_the_third_person() -> None:
    assert extract("I live in Paris.") == {
        "entities": [
            {"name": "User", "type": "person", "observations": ["lives in Paris"]},
            {"name": "Paris", "type": "place", "observations": []},
        ],
        "relations": [rel("User", "lives_in", "Paris")],
        "expirations": [],
    }
    assert entity(extract("I love hiking"), "User")["observations"] == ["loves hiking"]


def test_an_irregular_past_stays_past_and_dates_the_day_before() -> None:
    result = extract("I fell on the ice on Tuesday", said_at="2022-12-22T23:14:00Z")
    # "fell" is not the verb "to fell": the Tuesday is the one before, not the next
    assert entity(result, "User")["observations"] == [
        "fell on the ice on Tuesday (20 December 2022)"
    ]


def test_am_and_have_become_is_and_has() -> None:
    result = extract("I'm a vegetarian and I have two cats.")
    assert entity(result, "User")["observations"] == ["is a vegetarian", "has two cats"]


def test_a_pronoun_carries_over_to_the_last_named_person() -> None:
    result = extract("Alice works at Acme. She mentors Bob.")
    assert entity(result, "Alice")["observations"] == ["works at Acme", "mentors Bob"]
    assert rel("Alice", "mentors", "Bob") in result["relations"]
    assert entity(result, "Bob")["type"] == "person"


def test_a_pronoun_without_a_name_in_the_text_refers_to_the_first_known_entity() -> None:
    result = extract("She mentors Bob.", "Alice (person)\n  - works at Acme")
    assert entity(result, "Alice")["observations"] == ["mentors Bob"]
    assert result["relations"] == [rel("Alice", "mentors", "Bob")]


def test_two_named_people_are_linked_by_their_verb_phrase() -> None:
    result = extract("Alice mentors Bob. Bob reports to Carol.")
    assert result["relations"] == [
        rel("Alice", "mentors", "Bob"),
        rel("Bob", "reports_to", "Carol"),
    ]
    assert [e["type"] for e in result["entities"]] == ["person", "person", "person"]


def test_no_longer_expires_the_matching_known_fact_without_adding_one() -> None:
    known = "Alice (person)\n  - works at Acme"
    assert extract("Alice no longer works at Acme", known) == {
        "entities": [],
        "relations": [],
        "expirations": [{"entityName": "Alice", "observationContent": "works at Acme"}],
    }


def test_no_longer_without_a_known_fact_expires_the_unnegated_phrase() -> None:
    result = extract("Alice no longer works at Acme.")
    assert result["expirations"] == [{"entityName": "Alice", "observationContent": "works at Acme"}]
    assert result["entities"] == []


def test_no_longer_ends_only_its_own_clause() -> None:
    known = "User (person)\n  - is lactose intolerant, so no milk please"
    said = "I'm no longer lactose intolerant apparently, the new tests were negative!"
    assert extract(said, known) == {
        "entities": [],
        "relations": [],
        "expirations": [
            {"entityName": "User", "observationContent": "is lactose intolerant, so no milk please"}
        ],
    }
    assert extract(said)["expirations"] == [
        {"entityName": "User", "observationContent": "is lactose intolerant apparently"}
    ]


def test_not_anymore_and_stopped_also_expire_known_facts() -> None:
    known = "User (person)\n  - lives in Paris"
    assert extract("I don't live in Paris anymore.", known)["expirations"] == [
        {"entityName": "User", "observationContent": "lives in Paris"}
    ]
    designer = "Alice (person)\n  - works at Acme as a designer"
    assert extract("Alice stopped working at Acme.", designer)["expirations"] == [
        {"entityName": "Alice", "observationContent": "works at Acme as a designer"}
    ]


def test_moving_expires_the_known_home() -> None:
    result = extract("I moved to Berlin.", "User (person)\n  - lives in Paris")
    assert entity(result, "User")["observations"] == ["moved to Berlin"]
    assert result["relations"] == [rel("User", "moved_to", "Berlin")]
    assert result["expirations"] == [{"entityName": "User", "observationContent": "lives in Paris"}]


def test_and_joined_clauses_share_their_subject() -> None:
    result = extract("Alice is an engineer and prefers TypeScript")
    assert entity(result, "Alice")["observations"] == ["is an engineer", "prefers TypeScript"]
    assert entity(result, "Alice")["type"] == "person"


def test_and_between_objects_does_not_split_the_clause() -> None:
    result = extract("Alice likes tea and coffee.")
    assert entity(result, "Alice")["observations"] == ["likes tea and coffee"]


def test_a_role_at_an_organization_is_a_works_at_relation() -> None:
    result = extract("Alice is a senior engineer at Acme and lives in Berlin.")
    assert entity(result, "Alice")["observations"] == [
        "is a senior engineer at Acme",
        "lives in Berlin",
    ]
    assert result["relations"] == [
        rel("Alice", "works_at", "Acme"),
        rel("Alice", "lives_in", "Berlin"),
    ]
    assert entity(result, "Berlin")["type"] == "place"


def test_organization_suffixes_and_roles_type_entities() -> None:
    hired = extract("Acme Inc hired Alice in 2020.")
    assert entity(hired, "Acme Inc")["type"] == "organization"
    assert entity(hired, "Alice")["type"] == "person"
    ceo = extract("Carol is the CEO of Globex.")
    assert ceo["relations"] == [rel("Carol", "ceo_of", "Globex")]
    assert entity(ceo, "Globex")["type"] == "organization"


def test_someone_who_talks_asks_or_decides_is_a_person() -> None:
    for text in (
        "Mandy has been talking about Porto all week.",
        "Priya asked about the flights.",
        "Tunde decided to run the half.",
    ):
        result = extract(text)
        name = text.split()[0]
        assert entity(result, name)["type"] == "person", text


def test_known_entities_keep_their_exact_name_and_type() -> None:
    result = extract("Alice joined ACME last week.", "Acme (client)\n  - is a customer")
    assert result["relations"] == [rel("Alice", "joined", "Acme")]
    assert entity(result, "Acme")["type"] == "client"
    lowercase = extract("alice likes tea", "Alice (person)\n  - works at Acme")
    assert entity(lowercase, "Alice")["observations"] == ["likes tea"]


def test_a_first_name_alone_refers_back_to_the_full_name() -> None:
    result = extract("Alice Smith is a doctor. Alice lives in Oslo.")
    assert entity(result, "Alice Smith")["observations"] == ["is a doctor", "lives in Oslo"]


def test_compound_subjects_each_get_the_fact() -> None:
    result = extract("Alice and Bob work at Acme.")
    assert entity(result, "Alice")["observations"] == ["works at Acme"]
    assert entity(result, "Bob")["observations"] == ["works at Acme"]
    assert result["relations"] == [rel("Alice", "works_at", "Acme"), rel("Bob", "works_at", "Acme")]


def test_my_relative_with_a_name_becomes_a_person_linked_to_the_user() -> None:
    result = extract("My sister Carol lives in Rome.")
    assert entity(result, "Carol")["observations"] == ["lives in Rome"]
    assert rel("Carol", "sister_of", "User") in result["relations"]


@pytest.mark.parametrize(
    "text",
    [
        "Hi!",
        "Hello there, how are you?",
        "Thanks!",
        "Thank you so much!",
        "Sounds good!",
        "ok",
        "What is my name?",
        "Where does Alice work?",
        "Tell me about Alice.",
        "The weather is nice today.",
        "I am fine, thanks.",
        "",
    ],
)
def test_greetings_questions_and_small_talk_produce_nothing(text: str) -> None:
    assert extract(text) == EMPTY


@pytest.mark.parametrize(
    "text",
    [
        "Feels great!",
        "I hear you, Evan.",
        "I am so proud of you, Evan!",
        "I will give it a shot.",
        "Sorry to hear about that.",
        "I can help you get started.",
        "I am looking forward to it.",
        "I am always here to support you.",
        "I will keep you posted!",
        "Sorry to hear about what happened.",
        "Your help means a lot.",
    ],
)
def test_a_reaction_in_a_conversation_is_no_fact(text: str) -> None:
    result = extract(text, speaker="Sam", addressee="Evan")
    assert not any(e.get("observations") for e in result["entities"])


def test_something_said_to_the_listener_is_a_fact_when_it_says_enough() -> None:
    result = extract("I will send you the recipes.", speaker="Sam", addressee="Evan")
    assert entity(result, "Sam")["observations"] == ["will send Evan the recipes"]
    result = extract("I love your paintings of the lake.", speaker="Sam", addressee="Evan")
    assert entity(result, "Sam")["observations"] == ["loves Evan's paintings of the lake"]


def test_a_clause_about_the_listener_after_a_comma_or_and_is_theirs() -> None:
    text = "Ha, we'll get an Airbnb, you have one bedroom and a dog who eats butter"
    result = extract(text, speaker="Camille", addressee="Dre")
    assert entity(result, "Dre")["observations"] == ["has one bedroom and a dog who eats butter"]
    assert entity(result, "Camille")["observations"] == ["will get an Airbnb"]
    result = extract("we went hiking and you stayed home", speaker="Camille", addressee="Dre")
    assert entity(result, "Dre")["observations"] == ["stayed home"]


def test_i_inside_a_fact_is_the_speaker_with_its_verb_agreeing() -> None:
    result = extract("Ingrid thinks I've lost it.", speaker="Marcus", addressee="Dana")
    assert entity(result, "Ingrid")["observations"] == ["thinks Marcus has lost it"]
    result = extract("Renee asked if I want to be tech lead.", speaker="Dana")
    assert entity(result, "Renee")["observations"] == ["asked if Dana wants to be tech lead"]
    result = extract("I will send more pics when I am home.", speaker="Ifeoma")
    assert entity(result, "Ifeoma")["observations"] == ["will send more pics when they are home"]


def test_a_name_that_only_calls_the_addressee_is_not_part_of_the_fact() -> None:
    result = extract("I adopted a puppy named Shadow, Evan.", speaker="Sam", addressee="Evan")
    assert entity(result, "Sam")["observations"] == ["adopted a puppy named Shadow"]
    result = extract("I live in Paris, France.", speaker="Sam", addressee="Evan")
    assert entity(result, "Sam")["observations"] == ["lives in Paris, France"]


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("I gotta look after my health.", "has to look after their health"),
        ("We all make mistakes.", "all make mistakes"),
        ("I wanna learn the cello.", "wants to learn the cello"),
    ],
)
def test_a_word_that_is_no_verb_is_not_conjugated(text: str, fact: str) -> None:
    assert entity(extract(text, speaker="Sam"), "Sam")["observations"] == [fact]


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("I finally finished the canoe lol", "finally finished the canoe"),
        ("I start at Calloway on Monday btw!", "starts at Calloway on Monday"),
    ],
)
def test_chat_filler_at_the_end_of_a_fact_is_dropped(text: str, fact: str) -> None:
    assert entity(extract(text, speaker="Sam"), "Sam")["observations"] == [fact]


def test_a_greeting_before_a_fact_is_ignored() -> None:
    result = extract("Hi, I'm Alice and I work at Acme.")
    assert entity(result, "User")["observations"] == ["name is Alice", "works at Acme"]
    assert result["relations"] == [rel("User", "works_at", "Acme")]


def test_user_prefixed_lines_are_read_and_assistant_lines_skipped() -> None:
    text = (
        "user: I live in Paris\nassistant: I will remember that Bob likes tea.\nuser: I love jazz"
    )
    result = extract(text)
    assert [e["name"] for e in result["entities"]] == ["User", "Paris"]
    assert entity(result, "User")["observations"] == ["lives in Paris", "loves jazz"]


def test_parse_known_reads_headers_facts_and_relations() -> None:
    known = "Alice (person)\n  - works at Acme\n  - works_at → Acme\nAcme (organization)\n"
    assert parse_known(known) == [
        KnownEntity("Alice", "person", ["works at Acme"], [("works_at", "Acme")]),
        KnownEntity("Acme", "organization", [], []),
    ]
    assert parse_known("") == []


def names_in(result: dict[str, Any]) -> set[str]:
    return {e["name"] for e in result["entities"]}


def test_i_m_in_a_lowercase_chat_is_the_speaker_not_a_person_a_pronoun_means() -> None:
    # The turn before holds no name but "I'm", capitalised mid-sentence.
    result = extract(
        "she's doing everything, pills, ice, meals",
        speaker="Kevin",
        previous="mom's exhausted, honestly I'm trying to take over nights",
    )
    assert not {"I'm", "I"} & names_in(result), result


def test_a_shouted_word_or_an_acronym_of_the_turn_before_is_no_one_she_means() -> None:
    for previous in (
        "Your sister is in the middle of her AS exams, poor thing",
        "they moved her to the ICU overnight",
    ):
        result = extract("lol she gets so scary in exam mode", speaker="Kofi", previous=previous)
        assert not {"AS", "ICU"} & names_in(result), result
    # a name the turn before says is still whom "she" means
    result = extract(
        "she starts at Leeds in September", speaker="Kofi", previous="how is Ama doing"
    )
    assert "Ama" in names_in(result), result


@pytest.mark.parametrize(
    "text",
    [
        "Ha, no, that was my mom! She's been knitting nonstop since the party.",
        "Ooh, that's actually a good idea.",
        "Go put your feet up, you earned it.",
        "Closing is set for December 15, so we move around the holidays.",
    ],
)
def test_interjections_commands_and_doings_that_start_a_sentence_are_not_names(
    text: str,
) -> None:
    assert not {"Ha", "Ooh", "Go", "Closing"} & names_in(extract(text, speaker="Joanna")), text


def test_a_holiday_is_an_event_a_pronoun_never_points_at() -> None:
    result = extract(
        "We spent Christmas at my parents'. He proposed to Simone on the roof.",
        speaker="Malik",
    )
    assert entity(result, "Christmas")["type"] == "event", result
    assert all("proposed" not in o for o in entity(result, "Christmas")["observations"]), result


def test_a_name_that_calls_the_one_spoken_to_is_not_the_subject() -> None:
    result = extract(
        "Hey Maria, I'm so excited to tell you I started a weekend yoga class!",
        speaker="John",
    )
    assert names_in(result) == {"John"}, result
    assert entity(result, "John")["observations"][0].startswith("is so excited"), result
    # a name with an appositive stays the subject
    assert "Maria" in names_in(extract("Maria, my sister, lives in Paris.", speaker="John"))


def test_the_short_form_of_the_addressee_s_name_calls_her() -> None:
    said = "Oh Pri, the greyhound is gorgeous! What's his name?"
    result = extract(said, speaker="Gwen", addressee="Priyanka")
    assert "Pri" not in names_in(result), result
    # in the reply, "him" is not Pri: the name called the one now speaking
    reply = extract(
        "Biscuit! We got him from a rescue last month", speaker="Priyanka", previous=said
    )
    assert names_in(reply) == {"Priyanka"}, reply
    assert not reply["relations"], reply


def test_an_adverb_that_opens_a_sentence_is_not_a_name() -> None:
    result = extract("Thanks! Really glad to have you as a friend.", speaker="Caroline")
    assert "Really" not in names_in(result), result


def test_she_s_been_is_she_has_been() -> None:
    result = extract("My sister Ana loves Lisbon. She's been there twice.", speaker="Melanie")
    assert "has been there twice" in entity(result, "Ana")["observations"], result


@pytest.mark.parametrize(
    ("speaker", "text", "junk"),
    [
        ("Priya", "I GOT THE JOB!!!! they want me to start in june", {"THE JOB", "GOT THE JOB"}),
        ("Priya", "the party was a HIT. Leo had NO idea.", {"NO", "HIT"}),
        ("Priya", "Many Chicago buildings allow cats.", {"Many Chicago"}),
        ("Priya", "Mon-Tue pack the kitchen. Sat rest.", {"Sat", "Mon-Tue"}),
        (
            "Priya",
            "Fair. Try: “I'm happy to send a partial version by Friday.”",
            {"Fair. Try", "Try"},
        ),
        ("Melanie", "Caroline! I love your painting.", {"Caroline!"}),
        ("Melanie", "It'd be great to see you. That`d be fun too.", {"It'd", "That`d", "That'd"}),
        ("Melanie", "Must be nice out there. Gonna try it tomorrow.", {"Must", "Gonna"}),
        ("Melanie", "Life is good lately. Kids are at camp.", {"Life", "Kids"}),
    ],
)
def test_shouting_punctuation_contractions_chat_words_and_instructions_make_no_names(
    speaker: str, text: str, junk: set[str]
) -> None:
    assert not junk & names_in(extract(text, speaker=speaker)), text


@pytest.mark.parametrize(
    ("text", "junk"),
    [
        (
            "Creativity is key for me. Thankfully the gallery liked it.",
            {"Creativity", "Thankfully"},
        ),
        ("Books are my escape.", {"Books"}),
        ("Jazz is my thing. I listen to jazz every night.", {"Jazz"}),
        ("Music keeps me going. Yoga too.", {"Music", "Yoga"}),
        ("Exploring Japan was amazing.", {"Exploring", "Exploring Japan"}),
        ("Anyway I have NEWS. Three of us signed up.", {"NEWS", "Three"}),
        ("Surgery went well last Tuesday! He's home, on a walker.", {"Surgery"}),
        ("Paper got accepted!! Finally.", {"Paper"}),
        ("Bye Dre, talk soon.", {"Bye", "Bye Dre"}),
        ("Merci Dre! You're the best.", {"Merci", "Merci Dre"}),
        ("Poor Walter got sick again.", {"Poor", "Poor Walter"}),
        ("Already signed! No more law firm.", {"Already"}),
        ("Almost there. Just one more exam.", {"Almost", "Just"}),
    ],
)
def test_common_words_that_open_a_sentence_are_not_names(text: str, junk: set[str]) -> None:
    assert not junk & names_in(extract(text, speaker="Caroline")), text


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Tully has already claimed the couch.", "Tully"),
        ("Kelly moved to Denver.", "Kelly"),
        ("Florence is my aunt.", "Florence"),
        ("Emily loves jazz.", "Emily"),
    ],
)
def test_names_with_the_endings_of_common_words_stay_names(text: str, name: str) -> None:
    assert name in names_in(extract(text, speaker="Chidi")), text


def test_a_known_thing_is_not_named_by_the_same_word_in_lower_case() -> None:
    known = "Nature (thing)\n  - is so calming"
    result = extract("I love being out in nature.", known, speaker="Melanie")
    assert "Nature" not in names_in(result), result


def test_an_acronym_alone_is_still_a_name() -> None:
    assert "SQL" in names_in(extract("We use SQL at work.", speaker="Priya"))


def test_everyday_verbs_make_facts() -> None:
    result = extract("Fernway offered me the senior data analyst role.", speaker="Priya")
    assert entity(result, "Fernway")["observations"] == [
        "offered Priya the senior data analyst role"
    ], result


def test_an_assistant_s_words_make_no_facts_as_its_labelled_lines_do() -> None:
    drafted = "I'm excited to apply for the Senior Data Analyst role at Fernway."
    assert extract(drafted, speaker="assistant") == EMPTY
    assert extract(f"assistant: {drafted}") == EMPTY
