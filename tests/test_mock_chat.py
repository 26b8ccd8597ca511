"""MockChatModel: every memgraph prompt answered offline and deterministically."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from memgraph.providers.mock import (
    HashEmbedder,
    MockChatModel,
    ScriptedChatModel,
    mock_provider,
)

from memgraph.errors import ConfigError
from memgraph.llm_calls.prompts import (
    EXTRACT_SCHEMA,
    EXTRACT_SYSTEM,
    FORGET_SCHEMA,
    FORGET_SYSTEM,
    MERGE_SCHEMA,
    MERGE_SYSTEM,
    RERANK_SCHEMA,
    RERANK_SYSTEM,
    SUMMARIZE_SCHEMA,
    SUMMARIZE_SYSTEM,
    extract_message,
    forget_message,
    merge_message,
    rerank_message,
    summarize_message,
)
from memgraph.llm_calls.provider import ChatModel, JsonSchema, ProviderSettings, resolve_provider


def ask(system: str, user: str, schema: JsonSchema) -> Any:
    completion = MockChatModel().complete(
        [{"role": "system", "content": system}, {"role": "user", "content": user}], schema=schema
    )
    return json.loads(completion.text)


def test_the_mock_chat_model_satisfies_the_chat_model_protocol() -> None:
    assert isinstance(MockChatModel(), ChatModel)
    assert MockChatModel().model == "mock"


def test_extract_runs_the_rule_extractor_on_the_text_and_known_tags() -> None:
    message = extract_message(
        "Alice no longer works at Acme. She joined Globex.",
        "Alice (person):\n  - works at Acme\n  - works_at → Acme",
        "2024-05-01T10:00:00Z",
    )
    assert ask(EXTRACT_SYSTEM, message, EXTRACT_SCHEMA) == {
        "entities": [
            {"name": "Alice", "type": "person", "observations": ["joined Globex"]},
            {"name": "Globex", "type": "organization", "observations": []},
        ],
        "relations": [{"from": "Alice", "to": "Globex", "type": "joined"}],
        "expirations": [{"entityName": "Alice", "observationContent": "works at Acme"}],
    }


def test_a_bare_day_is_extracted_as_the_day_the_prompt_lists_as_named_before() -> None:
    text = "Sofia's recital got moved to the 14th"
    said = "2025-03-02T10:00:00Z"  # alone, "the 14th" would be 14 March
    listed = extract_message(text, "", said, days_named="14 April 2025; 2 May 2025")
    assert "Days named before: 14 April 2025; 2 May 2025" in listed
    facts = str(ask(EXTRACT_SYSTEM, listed, EXTRACT_SCHEMA))
    assert "the 14th (14 April 2025)" in facts
    alone = str(ask(EXTRACT_SYSTEM, extract_message(text, "", said), EXTRACT_SCHEMA))
    assert "the 14th (14 March 2025)" in alone
    assert "Days named before" not in extract_message(text, "", said)


def test_extract_of_small_talk_is_empty() -> None:
    message = extract_message("Thanks, bye!", "", "2024-05-01T10:00:00Z")
    assert ask(EXTRACT_SYSTEM, message, EXTRACT_SCHEMA) == {
        "entities": [],
        "relations": [],
        "expirations": [],
    }


def test_rerank_keeps_overlapping_candidates_best_first() -> None:
    message = rerank_message(
        "What language does Alice prefer?",
        [
            ("obs-1", "Alice (person): works at Acme"),
            ("obs-2", "Bob (person): likes tea"),
            ("obs-3", "Alice (person): prefers TypeScript"),
            ("entity-4", "Paris (place)"),
        ],
    )
    # Alice's job shares her name but nothing of what is asked about her: left out
    assert ask(RERANK_SYSTEM, message, RERANK_SCHEMA) == {"ids": ["obs-3"]}


def test_rerank_weighs_the_order_it_was_handed_among_relevant_candidates() -> None:
    listed = [(f"obs-{i}", f"Nate (person): went to the pier on day {i}") for i in range(30)]
    listed[0] = ("obs-first", "Nate (person): has had them for 3 years now, turtles rock")
    listed.append(("obs-last", "Nate (person): long time no see, how long has it been, turtles"))
    message = rerank_message("How long has Nate had his turtles?", listed)
    ids = ask(RERANK_SYSTEM, message, RERANK_SCHEMA)["ids"]
    # one shared word more does not outweigh being listed first by the tiers before
    assert ids[:2] == ["obs-first", "obs-last"]
    # nor does being listed keep a candidate that shares nothing asked
    assert "obs-3" not in ids


def test_rerank_prefers_the_latest_message_for_a_question_about_now() -> None:
    listed = [
        ("episode-1", "Kevin (3 February 2024): we locked the wedding venue, Bramble Hill"),
        ("episode-2", "Kevin (16 June 2024): new wedding venue is Cedar Hollow"),
    ]
    now = rerank_message("Where is Kevin's wedding venue now?", listed)
    assert ask(RERANK_SYSTEM, now, RERANK_SCHEMA)["ids"] == ["episode-2", "episode-1"]
    # without "now", the order it was handed stands between equals
    first = rerank_message("Where was Kevin's wedding venue?", listed)
    assert ask(RERANK_SYSTEM, first, RERANK_SCHEMA)["ids"] == ["episode-1", "episode-2"]


def test_rerank_puts_a_message_that_only_asks_below_one_that_tells() -> None:
    listed = [
        ("episode-1", 'Ifeoma (26 August 2023): is work far from there? (answered by Chidi: "no")'),
        ("episode-2", "Ifeoma (27 August 2023): work is fine, the clinic is busy"),
    ]
    where = rerank_message("How is Ifeoma's work?", listed)
    assert ask(RERANK_SYSTEM, where, RERANK_SCHEMA)["ids"] == ["episode-2", "episode-1"]
    # unless the question asks what was asked
    asked = rerank_message("What did Ifeoma ask about work?", listed)
    assert ask(RERANK_SYSTEM, asked, RERANK_SCHEMA)["ids"] == ["episode-1", "episode-2"]


BIRD_CLUB = [
    ("episode-1", "Maggie (7 October 2025): the bird club outings sound lovely"),
    ("episode-2", "Maggie (15 November 2025): I'm officially a member of the bird club now"),
    ("episode-3", "Maggie (25 October 2025): our bird club outing was last Sunday"),
]
MUGS = [
    ("episode-1", "Rohan (25 March 2025): Little Bird Coffee asked for 40 custom mugs"),
    ("episode-2", "Rohan (30 June 2025): Little Bird posted the mugs on Instagram"),
    ("episode-3", "Rohan (25 March 2025): $32 a mug. Neha says that's too low"),
]
CATS = [
    ("episode-1", "Joanna (7 March 2024): the cats are finally getting along (7 March 2024)"),
    ("episode-2", "Joanna (9 March 2024): we have three cats now, Pickles adopted a friend"),
]


@pytest.mark.parametrize(
    ("listed", "asking", "answering", "other", "first"),
    [
        # a message that says when, for a question about when
        (BIRD_CLUB, "When did Maggie go on a bird club outing?", "episode-3",
         "How were Maggie's bird club outings?", "episode-1"),
        # one stating a sum, for a question asking how much
        (MUGS, "How much is Rohan charging per mug?", "episode-3",
         "What is Rohan doing with the mugs?", "episode-1"),
        # one saying a number (not the days its dates were resolved to), for how many
        (CATS, "How many cats does Joanna have?", "episode-2",
         "Are Joanna's cats getting along?", "episode-1"),
    ],
)  # fmt: skip
def test_rerank_puts_a_message_of_the_answer_s_shape_first(
    listed: list[tuple[str, str]], asking: str, answering: str, other: str, first: str
) -> None:
    asked = rerank_message(asking, listed)
    assert ask(RERANK_SYSTEM, asked, RERANK_SCHEMA)["ids"][0] == answering
    # a question that does not ask for that shape keeps the order it was handed between equals
    not_asked = rerank_message(other, listed)
    assert ask(RERANK_SYSTEM, not_asked, RERANK_SCHEMA)["ids"][0] == first


def test_listed_weight_halves_at_the_tenth_place() -> None:
    from memgraph.providers.mock.chat import LISTED_FIRST, LISTED_HALF, listed_weight

    assert listed_weight(0) == LISTED_FIRST
    assert listed_weight(LISTED_HALF) == pytest.approx(LISTED_FIRST / 2)
    assert listed_weight(5) > listed_weight(6)


def test_rerank_maps_first_person_questions_to_the_user_entity() -> None:
    message = rerank_message(
        "Where do I live?",
        [("obs-1", "Bob (person): lives in Rome"), ("obs-2", "User (person): lives in Paris")],
    )
    assert ask(RERANK_SYSTEM, message, RERANK_SCHEMA) == {"ids": ["obs-2", "obs-1"]}


def test_rerank_with_nothing_relevant_keeps_nothing() -> None:
    message = rerank_message(
        "What is the weather like on Mars?", [("obs-1", "Alice (person): likes tea")]
    )
    assert ask(RERANK_SYSTEM, message, RERANK_SCHEMA) == {"ids": []}


def test_forget_picks_the_fact_and_the_relation_the_request_names() -> None:
    message = forget_message(
        "Forget that Alice works at Acme",
        [
            ("obs-1", "Alice (person): works at Acme"),
            ("obs-2", "Alice (person): prefers TypeScript"),
            ("obs-3", "Acme (organization): is a robotics company"),
            ("rel-4", "Alice works_at → Acme"),
        ],
    )
    assert ask(FORGET_SYSTEM, message, FORGET_SCHEMA) == {
        "observations": [{"entityName": "Alice", "content": "works at Acme"}],
        "relations": [{"from": "Alice", "to": "Acme", "type": "works_at"}],
    }


def test_forgetting_everything_about_someone_takes_all_their_facts() -> None:
    message = forget_message(
        "forget everything about Bob",
        [
            ("obs-1", "Alice (person): works at Acme"),
            ("obs-2", "Bob (person): likes tea"),
            ("rel-3", "Alice mentors → Bob"),
        ],
    )
    assert ask(FORGET_SYSTEM, message, FORGET_SCHEMA) == {
        "observations": [{"entityName": "Bob", "content": "likes tea"}],
        "relations": [{"from": "Alice", "to": "Bob", "type": "mentors"}],
    }


def test_forget_prefers_the_closest_fact_and_returns_nothing_for_unrelated_requests() -> None:
    candidates = [
        ("obs-1", "User (person): lives in Paris"),
        ("obs-2", "User (person): likes Paris cafés"),
    ]
    closest = ask(
        FORGET_SYSTEM, forget_message("forget that I live in Paris", candidates), FORGET_SCHEMA
    )
    assert closest["observations"] == [{"entityName": "User", "content": "lives in Paris"}]
    unrelated = ask(FORGET_SYSTEM, forget_message("forget my dentist", candidates), FORGET_SCHEMA)
    assert unrelated == {"observations": [], "relations": []}


def test_summarize_keeps_informative_sentences_within_the_limit() -> None:
    conversation = "\n".join(
        [
            "user: Hi!",
            "assistant: Hello! How can I help?",
            "user: My name is Alice and I work at Acme.",
            "assistant: Nice to meet you.",
            "user: We decided to ship the beta on March 3.",
        ]
    )
    summary = ask(SUMMARIZE_SYSTEM, summarize_message(conversation), SUMMARIZE_SCHEMA)["summary"]
    assert summary == (
        "User: My name is Alice and I work at Acme. We decided to ship the beta on March 3."
    )
    long = "\n".join(f"user: Alice met Bob {i} times in Berlin on day {i}." for i in range(100))
    bounded = ask(SUMMARIZE_SYSTEM, summarize_message(long), SUMMARIZE_SCHEMA)["summary"]
    assert 0 < len(bounded) <= 600


def test_merge_joins_summaries_without_repeating_sentences() -> None:
    message = merge_message(
        "User: My name is Alice. I work at Acme.", "I work at Acme. We ship on Friday."
    )
    assert ask(MERGE_SYSTEM, message, MERGE_SCHEMA) == {
        "summary": "User: My name is Alice. I work at Acme. We ship on Friday."
    }
    long = " ".join(f"Fact number {i} is here." for i in range(100))
    merged = ask(MERGE_SYSTEM, merge_message(long, "The newest fact."), MERGE_SCHEMA)["summary"]
    assert len(merged) <= 600
    assert merged.endswith("The newest fact.")


def test_an_unknown_schema_gets_an_empty_reply_of_its_shape() -> None:
    schema = JsonSchema(
        "custom_thing",
        {
            "type": "object",
            "properties": {"items": {"type": "array"}, "label": {"type": "string"}},
        },
    )
    assert ask("system", "anything", schema) == {"items": [], "label": ""}


CONTEXT = (
    "Relevant context from memory:\nAlice (person):\n  - prefers TypeScript\n"
    "  - works_at → Acme\n  - is a senior engineer\nBob (person):\n  - likes tea\n"
    "User (person):\n  - works at Globex\n  - works_at → Globex\n  - name is Dana\n"
    "  - Rex dog_of → User\n  - lives in Lisbon\n  - studies French\n"
    "Texts these facts came from:\n  - 2025-01-02: Alice (person): said hello"
)


def chat(said: str, context: str | None = CONTEXT) -> str:
    system = [{"role": "system", "content": context}] if context else []
    return MockChatModel().complete([*system, {"role": "user", "content": said}]).text


@pytest.mark.parametrize(
    ("said", "answer"),
    [
        ("Which language does Alice prefer?", "Alice prefers TypeScript."),
        ("Where does Alice work?", "Alice works at Acme."),
        ("Where do I work?", "You work at Globex."),
        ("What is my name?", "Your name is Dana."),
        ("Where do I live?", "You live in Lisbon."),
        ("Which language do I study?", "You study French."),
        (
            "Tell me about Alice",
            "Alice prefers TypeScript, works at Acme and is a senior engineer.",
        ),
        ("What is the weather like on Mars?", "I don't know that; nothing I remember answers it."),
    ],
)
def test_plain_chat_answers_a_question_from_the_memory_context_in_a_sentence(
    said: str, answer: str
) -> None:
    assert chat(said) == answer


def test_plain_chat_without_a_relevant_memory_says_it_does_not_know() -> None:
    assert chat("Where do I work?", None) == "I don't know that; nothing I remember answers it."
    assert chat("Who said hello?") == "I don't know that; nothing I remember answers it."


def test_plain_chat_greets_and_acknowledges_statements_in_the_second_person() -> None:
    completion = MockChatModel().complete([{"role": "user", "content": "hello there"}])
    assert completion.text == "Hello! How can I help?"
    assert completion.finish_reason == "stop"
    assert completion.usage.prompt_tokens == 3
    assert completion.usage.completion_tokens == 7
    assert (
        chat("I work at Acme and my dog is Rex.") == "Noted: you work at Acme and your dog is Rex."
    )
    assert chat("Hi, I'm Alice.") == "Hello! Noted: you're Alice."


def test_naming_a_tool_returns_a_deterministic_tool_call() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
            },
        }
    ]
    asked = [{"role": "user", "content": "please call get_weather for Paris"}]
    completion = MockChatModel().complete(asked, tools=tools)
    assert completion.text == ""
    assert completion.finish_reason == "tool_calls"
    assert completion.tool_calls == (
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        },
    )
    answered = [
        *asked,
        completion.as_message(),
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]
    assert MockChatModel().complete(answered, tools=tools).text == "(mock) Tool result: sunny"


def test_acomplete_is_the_async_twin() -> None:
    messages = [{"role": "user", "content": "hi"}]
    result = asyncio.run(MockChatModel().acomplete(messages))
    assert result == MockChatModel().complete(messages)


def test_the_mock_provider_is_registered_and_configurable() -> None:
    provider = resolve_provider("mock")
    assert provider.name == "mock"
    assert isinstance(provider.chat, MockChatModel)
    assert isinstance(provider.embedder, HashEmbedder)
    assert provider.embedder.model == "mock-hash-384"
    small = mock_provider(ProviderSettings(options={"dimension": 64}))
    assert isinstance(small.embedder, HashEmbedder) and small.embedder.dimension == 64
    scripted = resolve_provider("mock:scripted")
    assert isinstance(scripted.chat, ScriptedChatModel)
    assert (
        scripted.chat.complete([{"role": "user", "content": "hi"}]).text == "Hello! How can I help?"
    )


@pytest.mark.parametrize("dimension", ["384", 2, False])
def test_a_bad_dimension_option_is_a_config_error(dimension: object) -> None:
    with pytest.raises(ConfigError):
        mock_provider(ProviderSettings(options={"dimension": dimension}))


def test_the_mock_re_ranker_reads_a_quoted_turn_at_half_weight() -> None:
    from memgraph.providers.mock.chat import overlap_terms, relevance

    query = overlap_terms("Which company did Sanjay leave for?")
    own = relevance(query, "Marcus (19 January 2024): Sanjay is leaving for a company")
    quoted = relevance(
        query,
        'Marcus (19 January 2024): Stripe (in reply to Dana: "which company is Sanjay leaving for")',
    )
    silent = relevance(query, "Marcus (19 January 2024): Stripe")
    assert own > quoted > silent == 0.0


def test_the_mock_re_ranker_needs_more_than_first_person_on_both_sides() -> None:
    from memgraph.providers.mock.chat import overlap_terms, relevance

    query = overlap_terms("Where do I live now?")
    assert relevance(query, "User (1 May 2024): I work at Acme as a data engineer.") == 0.0
    assert relevance(query, "User (1 May 2024): I live in Berlin now.") > 0.0
