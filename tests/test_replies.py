"""Replies small models get wrong: lenient parsing and repairs, cut-off replies, clear failures."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from memgraph.providers.mock import ScriptedChatModel, parse_known

from memgraph.llm_calls.ask import ask_json
from memgraph.llm_calls.coerce import coerce_reply
from memgraph.llm_calls.extract import (
    Expiration,
    ExtractedEntity,
    ExtractedRelation,
    Extraction,
    TurnContext,
    extract,
    misplaced_expirations_as_facts,
    validate_extraction,
    without_copied_facts,
    without_previous_turn_facts,
    without_unfounded_expirations,
    without_unfounded_relations,
)
from memgraph.llm_calls.parsing import ReplyError, parse_json_reply
from memgraph.llm_calls.prompts import (
    EXTRACT_SCHEMA,
    FORGET_SCHEMA,
    extract_message,
    read_tag,
    render_known,
    schema_example,
    structured_fallback_instruction,
)
from memgraph.llm_calls.provider import Completion, JsonSchema, Usage

SCHEMA = EXTRACT_SCHEMA.schema
EMPTY = {"entities": [], "relations": [], "expirations": []}


def one_entity(name: str, *observations: str) -> str:
    """An extraction reply, as JSON, of one person and these facts."""
    entity = {"name": name, "type": "person", "observations": list(observations)}
    return json.dumps({**EMPTY, "entities": [entity]})


ALICE = {
    "entities": [{"name": "Alice", "type": "person", "observations": ["likes tea"]}],
    "relations": [],
    "expirations": [],
}


def completion(text: str, finish_reason: str = "stop", tokens: int = 40) -> Completion:
    return Completion(text, usage=Usage(10, tokens), finish_reason=finish_reason)


def ask(*replies: Any) -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel({"extract": list(replies)})
    return extract(model, "Alice likes tea.", known="", said_at="2026-01-01T00:00:00Z"), model


# ------------------------------------------------------------------- parsing
def test_trailing_commas_are_tolerated_outside_strings() -> None:
    reply = '{"entities": [{"name": "A, B", "observations": ["x",],},], "relations": [],}'
    assert parse_json_reply(reply) == {
        "entities": [{"name": "A, B", "observations": ["x"]}],
        "relations": [],
    }


def test_doubled_template_braces_are_read_as_one_object() -> None:
    assert parse_json_reply('{{"name": "get_weather", "arguments": {"city": "Paris"}}}') == {
        "name": "get_weather",
        "arguments": {"city": "Paris"},
    }


def test_a_parse_error_names_the_json_problem_and_where_it_is() -> None:
    with pytest.raises(ReplyError) as caught:
        parse_json_reply('Here you go: {"entities": [{"name": "Alice" "type": "person"}]}')
    message = str(caught.value)
    assert "Expecting ',' delimiter at line 1, column 32 of the object" in message
    assert '"Alice" "type"' in message


def test_an_unclosed_object_is_reported_as_incomplete() -> None:
    with pytest.raises(ReplyError, match="not complete"):
        parse_json_reply('{"entities": [{"name": "Alice", "observations": ["likes')


def test_prose_without_json_is_quoted_in_the_error() -> None:
    with pytest.raises(ReplyError, match=r"holds no JSON object \(it reads 'I found Alice\.'\)"):
        parse_json_reply("I found Alice.")


# ------------------------------------------------------------------ coercion
def test_a_schema_echo_around_the_data_is_unwrapped() -> None:
    echo = {"type": "object", "properties": {"entities": ALICE["entities"]}, "relations": []}
    assert coerce_reply(echo, SCHEMA) == {"entities": ALICE["entities"], "relations": []}


def test_a_schema_echo_without_values_is_refused_with_a_clear_problem() -> None:
    echo = {"type": "object", "properties": dict(SCHEMA["properties"])}
    with pytest.raises(ReplyError, match=r"reply\.entities repeats the JSON schema"):
        coerce_reply(echo, SCHEMA)


def test_a_string_for_a_list_of_strings_becomes_a_one_item_list() -> None:
    reply = {"entities": [{"name": "Alice", "type": "person", "observations": "likes tea"}]}
    assert coerce_reply(reply, SCHEMA)["entities"][0]["observations"] == ["likes tea"]


def test_an_empty_object_or_null_for_a_list_becomes_an_empty_list() -> None:
    assert coerce_reply({"entities": {}, "relations": None}, SCHEMA) == {
        "entities": [],
        "relations": [],
    }


def test_a_dict_keyed_by_name_becomes_a_list_of_named_objects() -> None:
    reply = {
        "entities": {
            "Alice": {"type": "person", "observations": ["likes tea"]},
            "Bob": ["works at Acme"],
        }
    }
    assert coerce_reply(reply, SCHEMA)["entities"] == [
        {"name": "Alice", "type": "person", "observations": ["likes tea"]},
        {"name": "Bob", "observations": ["works at Acme"]},
    ]


def test_a_single_object_for_a_list_becomes_a_one_item_list() -> None:
    reply = {"relations": {"from": "Alice", "to": "Acme", "type": "works_at"}}
    assert coerce_reply(reply, SCHEMA)["relations"] == [
        {"from": "Alice", "to": "Acme", "type": "works_at"}
    ]


def test_placeholders_copied_from_the_example_count_as_empty() -> None:
    example = schema_example(EXTRACT_SCHEMA)
    extraction = validate_extraction(coerce_reply(example, SCHEMA))
    assert extraction == Extraction(), "nothing of the example survives"


def test_a_decorated_id_is_read_as_the_allowed_value() -> None:
    schema = {
        "type": "object",
        "properties": {"ids": {"type": "array", "items": {"type": "string", "enum": ["obs-3"]}}},
    }
    assert coerce_reply({"ids": ["[obs-3]", "/obs-72"]}, schema) == {"ids": ["obs-3", "/obs-72"]}


def test_a_wrong_type_that_no_repair_fits_is_still_rejected() -> None:
    with pytest.raises(TypeError):
        validate_extraction(coerce_reply({"entities": [{"name": 7}]}, SCHEMA))


# ------------------------------------------------------------------ ask_json
def test_a_usable_reply_has_no_failure() -> None:
    answer, model = ask(json.dumps(ALICE))
    assert answer.value is not None and answer.failure is None
    assert answer.calls == 1 and len(model.calls) == 1


def test_the_repair_request_quotes_the_real_parse_error_and_shows_the_shape() -> None:
    broken = '{"entities": [{"name": "Alice" "type": "person"}]}'
    answer, model = ask(broken, json.dumps(ALICE))
    assert answer.value is not None and answer.calls == 2
    repair = model.calls[1].last_user
    assert "Expecting ',' delimiter at line 1, column 32" in repair
    assert json.dumps(schema_example(EXTRACT_SCHEMA), separators=(",", ":")) in repair
    assert model.calls[1].messages[-2] == {"role": "assistant", "content": broken}


def test_a_reply_unusable_twice_fails_as_unusable_with_the_last_reply(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="memgraph"):
        answer, _ = ask("I found nothing.", "Still nothing, sorry.")
    assert answer.value is None and answer.failure is not None
    assert answer.failure.kind == "unusable"
    assert answer.failure.reply == "Still nothing, sorry."
    assert str(answer.failure).startswith("model reply unusable: extract reply: the reply holds")
    assert "model reply unusable" in caplog.text


def test_a_cut_off_reply_is_asked_again_with_more_room_and_never_repaired() -> None:
    half = json.dumps(ALICE)[:40]
    answer, model = ask(completion(half, "length", tokens=700), json.dumps(ALICE))
    assert answer.value is not None and answer.value.entities[0].name == "Alice"
    second = model.calls[1]
    assert second.options["max_tokens"] == 1400, "twice the tokens the cut-off reply used"
    assert second.messages == model.calls[0].messages, "the same request, no repair prompt"
    assert "cut off" in answer.problems[0]


def test_a_reply_cut_off_twice_fails_as_truncated_without_inventing_the_rest() -> None:
    half = json.dumps(ALICE)[:40]
    answer, model = ask(completion(half, "length", 500), completion(half, "length", 1024))
    assert answer.value is None and answer.failure is not None
    assert answer.failure.kind == "truncated"
    assert "cut off at the token limit after 1024 tokens" in answer.failure.message
    assert len(model.calls) == 2, "no repair request for a cut-off reply"


def test_a_cut_off_reply_that_reports_no_usage_is_not_asked_again() -> None:
    answer, model = ask(completion('{"entities": [', "length", tokens=0))
    assert answer.failure is not None and answer.failure.kind == "truncated"
    assert len(model.calls) == 1


def test_options_reach_every_call() -> None:
    model = ScriptedChatModel({"rerank": ["nope", '{"ids": []}']})
    schema = JsonSchema("memgraph_rerank", {"type": "object"})
    ask_json(model, "s", "u", schema, lambda d: d, options={"temperature": 0})
    assert [call.options for call in model.calls] == [{"temperature": 0}] * 2


# ------------------------------------------------------------------- prompts
def test_the_fallback_instruction_shows_an_example_object_not_the_schema() -> None:
    text = structured_fallback_instruction(FORGET_SCHEMA)
    assert '"entityName":"<name>"' in text
    assert "additionalProperties" not in text and '"type":"object"' not in text


def test_a_third_party_schema_gets_an_example_derived_from_it() -> None:
    schema = JsonSchema(
        "tasks",
        {
            "type": "object",
            "properties": {
                "tasks": {"type": "array", "items": {"type": "string"}},
                "priority": {"type": "string", "enum": ["low", "high"]},
                "done": {"type": "boolean"},
            },
        },
    )
    assert schema_example(schema) == {"tasks": ["<task>"], "priority": "<low|high>", "done": False}


def test_the_known_block_is_labelled_as_reference_and_rendered_one_line_per_entity() -> None:
    known = "Alice Chen (person):\n  - drinks tea\n  - works_at → Acme\nAcme (organization):"
    message = extract_message("Alice drinks coffee now.", known, "now")
    assert "never repeat these facts" in message.split("<known>")[0]
    assert read_tag(message, "known") == (
        "Alice Chen (person): already stored: drinks tea; works_at → Acme\nAcme (organization)"
    )


def test_the_mock_provider_reads_the_rendered_known_block() -> None:
    known = "Alice Chen (person):\n  - drinks tea\n  - works_at → Acme"
    [entity] = parse_known(render_known(known))
    assert (entity.name, entity.facts, entity.relations) == (
        "Alice Chen",
        ["drinks tea"],
        [("works_at", "Acme")],
    )


def test_the_fallback_for_extraction_carries_a_worked_example() -> None:
    text = structured_fallback_instruction(EXTRACT_SCHEMA)
    assert "Example. Known:" in text and '"observations":["is learning Go"]' in text
    assert "Example. Known:" not in structured_fallback_instruction(FORGET_SCHEMA)


# ------------------------------------------------------ copies of known facts
KNOWN = "Alice Chen (person):\n  - drinks green tea\n  - works_at → Acme\nAcme (organization):"


def test_a_known_fact_copied_onto_another_entity_is_left_out() -> None:
    reply = Extraction(
        (
            ExtractedEntity("Dana", "person", ("Alice drinks green tea", "moved to Porto")),
            ExtractedEntity("Alice Chen", "person", ("drinks green tea",)),
        ),
        (ExtractedRelation("Alice Chen", "Acme", "works_at"),),
    )
    kept, copied = without_copied_facts(reply, KNOWN, "Dana moved to Porto.")
    assert [e.observations for e in kept.entities] == [("moved to Porto",), ()]
    assert kept.relations == ()
    assert copied == ["Alice drinks green tea", "drinks green tea", "Alice Chen works_at → Acme"]


def test_a_relation_nothing_in_the_text_founds_is_left_out() -> None:
    people = (
        ExtractedEntity("Mei-hua", "person", ()),
        ExtractedEntity("Chloe", "person", ()),
        ExtractedEntity("Melbourne", "city", ()),
        ExtractedEntity("Acme", "organization", ()),
    )
    reply = Extraction(
        people,
        (
            ExtractedRelation("Mei-hua", "Chloe", "lives_in"),  # lives in a person
            ExtractedRelation("Chloe", "Mei-hua", "manages"),  # the prompt's example type
            ExtractedRelation("Chloe", "Mei-hua", "friend_of"),
            ExtractedRelation("Chloe", "Melbourne", "lives_in"),  # "is in Melbourne"
            ExtractedRelation("Chloe", "Acme", "works_at"),  # "is at Acme"
            ExtractedRelation("Chloe", "Mei-hua", "granddaughter_of"),
            ExtractedRelation("Mei-hua", "Chloe", "mother_of"),  # said as "Mum"
        ),
    )
    text = "Chloe, Mum says my granddaughter is in Melbourne now, she is at Acme"
    kept, dropped = without_unfounded_relations(reply, text)
    assert [r.type for r in kept.relations] == [
        "lives_in",
        "works_at",
        "granddaughter_of",
        "mother_of",
    ]
    assert dropped == ["Mei-hua lives_in Chloe", "Chloe manages Mei-hua", "Chloe friend_of Mei-hua"]
    assert kept.entities == people
    # an entity the reply does not list is of the type memory knows it by
    reply = Extraction((), (ExtractedRelation("Mei-hua", "Mrs Kuo", "lives_in"),))
    known = "Mrs Kuo (person):\n  - is a tai-chi friend of Mei-hua"
    assert without_unfounded_relations(reply, "I clean the apartment", known)[0].relations == ()
    assert without_unfounded_relations(reply, "I clean the apartment")[0].relations != ()


def test_a_rendered_line_copied_with_its_names_changed_keeps_only_what_the_text_says() -> None:
    known = (
        "Chloe (person):\n  - is a tai-chi friend of Mei-hua\n  - is a friend of Mei-hua"
        "\n  - lives in Melbourne"
    )
    text = "Only on stairs. I clean the whole apartment for new year, maybe too much squatting."
    line = (
        "is a tai-chi friend of Chloe; is a friend of Chloe; lives in Melbourne; teaches → Su-ling"
    )
    reply = Extraction((ExtractedEntity("Mei-hua", "person", (line,)),))
    kept, copied = without_copied_facts(reply, known, text)
    assert kept.entities[0].observations == ()
    assert copied == [line]
    said = "is a friend of Chloe; lives in Melbourne; cleans the whole apartment for new year"
    reply = Extraction((ExtractedEntity("Mei-hua", "person", (said,)),))
    kept, _ = without_copied_facts(reply, known, text)
    assert kept.entities[0].observations == ("cleans the whole apartment for new year",)


def test_a_known_fact_the_text_states_again_is_kept() -> None:
    reply = Extraction(
        (ExtractedEntity("Alice Chen", "person", ("drinks green tea",)),),
        (ExtractedRelation("Alice Chen", "Acme", "works_at"),),
    )
    kept, copied = without_copied_facts(reply, KNOWN, "Alice still drinks green tea at Acme.")
    assert kept == reply and copied == []


def test_extraction_reports_the_copies_it_left_out() -> None:
    reply = one_entity("Dana", "Alice drinks green tea", "is a nurse")
    model = ScriptedChatModel({"extract": [reply]})
    answer = extract(model, "Dana is a nurse.", known=KNOWN, said_at="2026-01-01T00:00:00Z")
    assert answer.value is not None and answer.value.entities[0].observations == ("is a nurse",)
    assert answer.failure is None
    assert answer.problems == [
        "left out 1 fact(s) the model copied from the known facts without the text stating "
        "them: 'Alice drinks green tea'"
    ]


def test_extraction_leaves_out_a_fact_that_only_asks() -> None:
    reply = one_entity("Marcus", "how about you, Duluth right?", "is moving to Duluth")
    model = ScriptedChatModel({"extract": [reply]})
    text = "I'm moving to Duluth in May. how about you, staying in Chicago?"
    answer = extract(model, text, known="", speaker="Marcus", said_at="2026-01-01T00:00:00Z")
    assert answer.value is not None
    assert answer.value.entities[0].observations == ("is moving to Duluth",)
    assert answer.problems == ["left out 1 fact(s) that only ask: 'how about you, Duluth right?'"]


# ------------------------------------------------------ unfounded expirations
def test_an_expiration_the_text_gives_no_reason_for_is_left_out() -> None:
    reply = Extraction(
        (ExtractedEntity("Alice Chen", "person", ("is learning Rust",)),),
        expirations=(Expiration("Alice Chen", "is a senior engineer at Acme"),),
    )
    kept, unfounded = without_unfounded_expirations(reply, "Alice is learning Rust on weekends.")
    assert kept.expirations == () and kept.entities == reply.entities
    assert unfounded == ["is a senior engineer at Acme"]


@pytest.mark.parametrize(
    "text",
    [
        "Alice no longer works at Acme.",
        "Alice moved to Globex.",
        "Alice doesn't work at Acme anymore.",
        "Alice left Acme.",
        "Alice, senior engineer at Acme until today, starts at Globex.",
    ],
)
def test_an_expiration_with_a_change_in_the_text_is_kept(text: str) -> None:
    reply = Extraction(expirations=(Expiration("Alice Chen", "is a senior engineer at Acme"),))
    kept, unfounded = without_unfounded_expirations(reply, text)
    assert kept == reply and unfounded == []


@pytest.mark.parametrize(
    ("text", "expired"),
    [
        (
            "What does Dad even do all day at that shipping company, he never tells me",
            "arrived safely",
        ),
        (
            "Clinic is near Zhongshan station, MRT 4 stops. Auntie Chen come with me.",
            "is 76 years old",
        ),
        ("Haha no rush. Thank you Ama", "is sleeping"),
    ],
)
def test_an_expiration_only_a_word_said_of_anything_allows_is_left_out(
    text: str, expired: str
) -> None:
    # "never", "stops", "no": words a small model's stray expirations slip through on
    reply = Extraction(expirations=(Expiration("Chloe", expired),))
    kept, unfounded = without_unfounded_expirations(reply, text)
    assert kept.expirations == () and unfounded == [expired]


def test_a_rendered_line_of_known_facts_as_an_expiration_is_judged_fact_by_fact() -> None:
    # "every day" shares only a word said of anything with "all day"
    line = "misses Mei-hua every day; from Geelong; arrived safely, landed Wednesday morning"
    reply = Extraction(expirations=(Expiration("Chloe", line),))
    text = "What does Dad even do all day at that shipping company, he never tells me"
    kept, unfounded = without_unfounded_expirations(reply, text)
    assert kept.expirations == () and len(unfounded) == 3
    kept, _ = without_unfounded_expirations(reply, "Never been to Geelong, Ama!")
    assert kept.expirations == (Expiration("Chloe", "from Geelong"),)


@pytest.mark.parametrize(
    ("text", "expired", "stated"),
    [
        ("I'm not at Acme now.", "works at Acme", ()),
        ("Now I live in Berlin.", "lives in Toronto", ("lives in Berlin",)),
        ("She never calls anymore.", "calls every Sunday", ()),
    ],
)
def test_an_expiration_sharing_a_word_with_the_change_is_kept(
    text: str, expired: str, stated: tuple[str, ...]
) -> None:
    reply = Extraction(
        (ExtractedEntity("Dana", "person", stated),) if stated else (),
        expirations=(Expiration("Dana", expired),),
    )
    kept, unfounded = without_unfounded_expirations(reply, text)
    assert kept == reply and unfounded == []


def test_extraction_reports_the_expirations_it_left_out() -> None:
    reply = {
        "entities": [],
        "relations": [],
        "expirations": [{"entityName": "Bob", "observationContent": "manages payments"}],
    }
    model = ScriptedChatModel({"extract": [json.dumps(reply)]})
    answer = extract(model, "Bob is allergic to peanuts.", known="", said_at="2026-01-01T00:00Z")
    assert answer.value is not None and answer.value.expirations == ()
    assert answer.problems == [
        "left out 1 expiration(s) the text gives no reason for: 'manages payments'"
    ]


def test_a_reply_of_nothing_but_copies_is_asked_again_without_the_known_facts() -> None:
    copy = one_entity("Alice Chen", "drinks green tea")
    fixed = one_entity("Alice", "learns Rust")
    model = ScriptedChatModel({"extract": [copy, fixed]})
    answer = extract(model, "Alice learns Rust.", known=KNOWN, said_at="2026-01-01T00:00:00Z")
    assert answer.value is not None and answer.value.entities[0].observations == ("learns Rust",)
    assert answer.calls == 2 and len(answer.usage) == 2
    assert read_tag(model.calls[0].last_user, "known") != ""
    assert read_tag(model.calls[1].last_user, "known") == "", "no known facts to copy"
    assert len(model.calls[1].messages) == 2, "a fresh request, not a repair"
    assert answer.problems == [
        "the reply only repeated facts already in memory ('drinks green tea'); "
        "asked again without them"
    ]


def test_an_expiration_naming_no_known_fact_but_stating_the_text_becomes_a_fact() -> None:
    reply = Extraction(
        (ExtractedEntity("Bob Martinez", "person", ("has a daughter",)),),
        expirations=(
            Expiration("Emma", "started primary school in September"),
            Expiration("Bob Martinez", "manages payments"),
        ),
    )
    text = "Bob's daughter Emma started primary school in September."
    known = "Bob Martinez (person):\n  - manages payments"
    result, moved = misplaced_expirations_as_facts(reply, known, text)
    assert result.entities == (
        ExtractedEntity("Bob Martinez", "person", ("has a daughter",)),
        ExtractedEntity("Emma", "thing", ("started primary school in September",)),
    )
    assert result.expirations == (Expiration("Bob Martinez", "manages payments"),)
    assert moved == ["Emma: started primary school in September"]


def test_an_expiration_of_a_known_fact_stays_an_expiration() -> None:
    reply = Extraction(expirations=(Expiration("Alice Chen", "works at Acme"),))
    known = "Alice Chen (person):\n  - works at Acme"
    result, moved = misplaced_expirations_as_facts(reply, known, "Alice no longer works at Acme.")
    assert result == reply and moved == []


def test_a_loose_expiration_in_a_text_about_a_change_is_not_turned_into_a_fact() -> None:
    reply = Extraction(expirations=(Expiration("Alice Chen", "works at Acme Corporation"),))
    known = "Alice Chen (person):\n  - is a senior engineer at Acme Corp"
    result, moved = misplaced_expirations_as_facts(reply, known, "Alice no longer works at Acme.")
    assert result == reply and moved == []


def test_a_new_word_in_the_clause_that_says_why_does_not_make_an_ending_a_new_state() -> None:
    ending = Expiration("User", "is lactose intolerant, the new tests were negative")
    text = "I'm no longer lactose intolerant, the new tests were negative"
    reply = Extraction(expirations=(ending,))
    assert misplaced_expirations_as_facts(reply, "", text) == (reply, [])
    # a new state said first still moves ("now works at Porto Clinic")
    news = Extraction(expirations=(Expiration("User", "now works at Porto Clinic, since May"),))
    _, moved = misplaced_expirations_as_facts(news, "", "I left Acme, now I work at Porto Clinic")
    assert moved == ["User: now works at Porto Clinic, since May"]


def test_a_whole_rendered_known_line_copied_as_one_fact_is_left_out() -> None:
    line = "is learning Rust; drinks green tea"
    reply = Extraction((ExtractedEntity("Alice Chen", "person", (line, "leads Helios")),))
    known = "Alice Chen (person):\n  - is learning Rust\n  - drinks green tea"
    kept, copied = without_copied_facts(reply, known, "Helios is led by Alice.")
    assert kept.entities[0].observations == ("leads Helios",)
    assert copied == [line]


def test_copies_and_then_nothing_is_an_unusable_reply_so_the_text_waits_for_reextract() -> None:
    copy = {
        "entities": [
            {"name": "Alice Chen", "type": "person", "observations": ["drinks green tea"]}
        ],
        "relations": [],
        "expirations": [],
    }
    empty = {"entities": [], "relations": [], "expirations": []}
    model = ScriptedChatModel({"extract": [json.dumps(copy), json.dumps(empty)]})
    text = "Alice is learning Rust on weekends."
    answer = extract(model, text, known=KNOWN, said_at="2026-01-01T00:00:00Z")
    assert answer.value is None and answer.failure is not None
    assert answer.failure.kind == "unusable"
    assert "only repeated facts already in memory" in answer.problems[-1]
    assert "stated nothing" in answer.problems[-1]


@pytest.mark.parametrize(
    "content",
    ["moved to Porto and now works at Porto Children's Clinic", "now works at Porto Clinic"],
)
def test_an_expiration_stating_the_new_state_becomes_a_fact_even_when_the_text_says_it_changed(
    content: str,
) -> None:
    reply = Extraction(expirations=(Expiration("Dana Whitfield", content),))
    known = "Dana Whitfield (person):\n  - works as a nurse at Lisbon General Hospital"
    text = "Dana moved to Porto and now works at Porto Children's Clinic."
    result, moved = misplaced_expirations_as_facts(reply, known, text)
    assert result.expirations == ()
    assert result.entities == (ExtractedEntity("Dana Whitfield", "thing", (content,)),)
    assert moved == [f"Dana Whitfield: {content}"]


@pytest.mark.parametrize("content", ["works at Lisbon General", "lives in Lisbon"])
def test_an_unmatched_expiration_of_an_old_state_stays_an_expiration(content: str) -> None:
    reply = Extraction(expirations=(Expiration("Dana Whitfield", content),))
    text = "Dana no longer works at Lisbon General and moved from Lisbon to Porto."
    result, moved = misplaced_expirations_as_facts(reply, "", text)
    assert result == reply and moved == []


def test_copies_beside_an_unfounded_expiration_are_asked_again_without_the_known_facts() -> None:
    copy = {
        "entities": [
            {"name": "Alice Chen", "type": "person", "observations": ["drinks green tea"]}
        ],
        "relations": [],
        "expirations": [{"entityName": "Alice Chen", "observationContent": "drinks green tea"}],
    }
    fixed = {
        "entities": [
            {"name": "Alice", "type": "person", "observations": ["is learning Rust on weekends"]}
        ],
        "relations": [],
        "expirations": [],
    }
    model = ScriptedChatModel({"extract": [json.dumps(copy), json.dumps(fixed)]})
    text = "Alice is learning Rust on weekends."
    answer = extract(model, text, known=KNOWN, said_at="2026-01-01T00:00:00Z")
    assert answer.value is not None
    assert answer.value.entities[0].observations == ("is learning Rust on weekends",)
    assert answer.calls == 2


def test_facts_copied_from_the_previous_turn_are_left_out_and_the_text_asked_again() -> None:
    copy = {
        "entities": [
            {
                "name": "Bob Martinez",
                "type": "person",
                "observations": ["manages the payments team at Acme Corp"],
            }
        ],
        "relations": [],
        "expirations": [],
    }
    fixed = {
        "entities": [
            {"name": "Alice", "type": "person", "observations": ["is learning Rust on weekends"]}
        ],
        "relations": [],
        "expirations": [],
    }
    model = ScriptedChatModel({"extract": [json.dumps(copy), json.dumps(fixed)]})
    answer = extract(
        model,
        "Alice is learning Rust on weekends.",
        known=KNOWN,
        said_at="2026-01-01T00:00:00Z",
        turn=TurnContext(previous="User: Bob Martinez manages the payments team at Acme Corp."),
    )
    assert answer.value is not None
    assert [e.observations for e in answer.value.entities] == [("is learning Rust on weekends",)]
    assert "manages the payments team at Acme Corp" in answer.problems[0]


@pytest.mark.parametrize(
    ("previous", "text", "fact"),
    [
        ("Assistant: Do you like sushi?", "Yes.", ("User", "likes sushi")),
        ("Bob: I moved to Porto.", "Me too!", ("User", "moved to Porto")),
        ("Bob: User, do you like sushi?", "Yes.", ("User", "likes sushi")),
    ],
)
def test_a_fact_the_text_states_through_the_previous_turn_is_kept(
    previous: str, text: str, fact: tuple[str, str]
) -> None:
    reply = Extraction((ExtractedEntity(fact[0], "person", (fact[1],)),))
    kept, copied = without_previous_turn_facts(reply, previous, text, speaker="User")
    assert kept == reply and copied == []


def test_known_facts_joined_with_and_are_a_copy() -> None:
    reply = Extraction(
        (ExtractedEntity("Alice Chen", "person", ("drinks green tea and works at Acme",)),)
    )
    known = "Alice Chen (person):\n  - drinks green tea\n  - works at Acme"
    kept, copied = without_copied_facts(reply, known, "Alice is learning Rust.")
    assert kept.entities[0].observations == () and copied == ["drinks green tea and works at Acme"]


def test_copies_asked_again_and_copied_again_keep_the_text_for_reextract() -> None:
    copy = {
        "entities": [
            {"name": "Alice Chen", "type": "person", "observations": ["drinks green tea"]}
        ],
        "relations": [],
        "expirations": [],
    }
    model = ScriptedChatModel({"extract": [json.dumps(copy), json.dumps(copy)]})
    text = "Alice is learning Rust on weekends."
    answer = extract(model, text, known=KNOWN, said_at="2026-01-01T00:00:00Z")
    assert answer.value is None and answer.failure is not None
    assert "stated nothing" in answer.failure.message


def test_a_rendered_line_copied_with_a_new_fact_keeps_only_the_new_fact() -> None:
    known = "Marcus (person):\n  - is talking to Dana\n  - understands the invoicing code"
    said = "switched to days in December thank god, nights were destroying her"
    reply = Extraction(
        (
            ExtractedEntity(
                "Marcus",
                "person",
                (f"is talking to Dana; understands the invoicing code; {said}",),
            ),
        ),
        (),
    )
    kept, copied = without_copied_facts(reply, known, f"Jordan {said}.")
    assert [e.observations for e in kept.entities] == [(said,)]
    assert copied == ["is talking to Dana; understands the invoicing code"]


def test_a_known_part_the_text_says_again_stays_in_its_line() -> None:
    known = "Marcus (person):\n  - is talking to Dana\n  - understands the invoicing code"
    line = "understands the invoicing code; is leaving for Stripe"
    reply = Extraction((ExtractedEntity("Marcus", "person", (line,)),), ())
    kept, copied = without_copied_facts(
        reply, known, "Marcus understands the invoicing code and is leaving for Stripe."
    )
    assert [e.observations for e in kept.entities] == [(line,)] and copied == []
