from __future__ import annotations

import pytest

from memgraph.llm_calls.parsing import ReplyError, parse_json_reply


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
