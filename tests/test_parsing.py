from __future__ import annotations

import time

import pytest

from memgraph.llm_calls.parsing import MAX_REPLY_CHARS, ReplyError, parse_json_reply, strip_thinking


def test_plain_json_object_is_parsed() -> None:
    assert parse_json_reply('{"a": 1}') == {"a": 1}


def test_code_fences_are_stripped() -> None:
    assert parse_json_reply('```json\n{"a": [1, 2]}\n```') == {"a": [1, 2]}


def test_prose_around_the_object_is_ignored() -> None:
    reply = 'Sure! Here is the result: {"entities": []} Hope that helps.'
    assert parse_json_reply(reply) == {"entities": []}


def test_think_blocks_are_removed_even_when_they_contain_braces() -> None:
    reply = '<think>maybe {"wrong": true} ... no</think>\n{"right": true}'
    assert parse_json_reply(reply) == {"right": True}


def test_braces_inside_strings_do_not_confuse_the_scanner() -> None:
    reply = 'text {"content": "a } tricky { string \\" quote"} tail'
    assert parse_json_reply(reply) == {"content": 'a } tricky { string " quote'}


@pytest.mark.parametrize("reply", ["", "   ", "not json at all", "[1, 2, 3]", '{"a": '])
def test_replies_without_an_object_raise_reply_error(reply: str) -> None:
    with pytest.raises(ReplyError):
        parse_json_reply(reply)


def test_huge_replies_are_refused() -> None:
    with pytest.raises(ReplyError, match="over"):
        parse_json_reply("{" + " " * 1_000_001 + "}")


def test_several_think_blocks_of_either_spelling_and_case_are_removed() -> None:
    reply = '<THINK>{"a": 1}</think> {"b": 2} <thinking>{"c": 3}</Thinking>'
    assert strip_thinking(reply) == ' {"b": 2} '
    assert parse_json_reply(reply) == {"b": 2}


def test_a_reply_that_starts_thinking_and_never_stops_holds_nothing() -> None:
    assert strip_thinking('  <think>still {"a": 1} thinking') == ""
    with pytest.raises(ReplyError, match="no JSON object"):
        parse_json_reply('<think>still {"a": 1} thinking')


def test_an_unclosed_think_after_the_answer_leaves_the_answer() -> None:
    assert parse_json_reply('{"a": 1} and then <think> I wonder') == {"a": 1}


@pytest.mark.parametrize("opener", ["<think>", "<thinking>", "<ThInK>"])
def test_a_reply_of_unclosed_think_openers_parses_in_linear_time(opener: str) -> None:
    # Stripping with a lazy regex rescanned to the end from every opener: 200k
    # characters took ~30 s, the 1 MB limit minutes. Linear parsing takes milliseconds.
    reply = opener * ((MAX_REPLY_CHARS - 20) // len(opener)) + '{"entities": []}'
    started = time.perf_counter()
    with pytest.raises(ReplyError):
        parse_json_reply(reply)
    assert time.perf_counter() - started < 1.0


def test_unclosed_openers_after_a_closed_block_parse_in_linear_time() -> None:
    reply = '<think>x</think>{"a": 1}' + "<think>" * 140_000
    started = time.perf_counter()
    assert parse_json_reply(reply) == {"a": 1}
    assert time.perf_counter() - started < 1.0
