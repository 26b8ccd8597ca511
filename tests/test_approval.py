"""Approval: direct memory actions ask; handlers, policies and approve=True answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memgraph import (
    ApprovalRequired,
    ChangeSet,
    Decision,
    Thread,
    approval_handler,
    disable_memory,
    enable_memory,
    forget,
    is_memory_active,
    llm,
    memory,
    preapprove,
    recall,
    remember,
    set_approval_handler,
    set_memory_id,
)
from memgraph.cli import cli
from memgraph.conversation.context import current_target
from tests.memory_state import fresh_memory_state  # noqa: F401


@pytest.fixture
def active(tmp_path: Path) -> Path:
    enable_memory(dir="mem", approve=True)
    set_memory_id("alice")
    return tmp_path / "mem" / "alice"


def test_a_direct_action_without_approval_raises_with_its_action_and_data(active: Path) -> None:
    with pytest.raises(ApprovalRequired) as caught:
        remember("Alice works at Acme.")
    assert caught.value.action == "remember"
    assert caught.value.data["content"] == "Alice works at Acme."
    assert caught.value.data["scope"] == "alice"
    assert caught.value.data["dir"] == str(active.parent.resolve())
    assert not active.exists()


def test_an_application_can_ask_a_person_and_call_again(active: Path) -> None:
    try:
        remember("Alice works at Acme.")
    except ApprovalRequired as request:
        assert request.action == "remember"  # ... show request.data to a person, who says yes
        remember(request.data["content"], approve=True)
    assert "Acme" in recall("where does alice work", approve=True)


@pytest.mark.parametrize("action", ["recall", "forget"])
def test_recall_and_forget_ask_too(active: Path, action: str) -> None:
    call = recall if action == "recall" else forget
    with pytest.raises(ApprovalRequired) as caught:
        call("alice")
    assert caught.value.action == action
    assert caught.value.data["query"] == "alice"


def test_a_handler_receives_the_action_and_its_data_and_decides(active: Path) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    def ask(action: str, data: dict[str, Any]) -> Decision:
        seen.append((action, data))
        return Decision.APPROVE

    with approval_handler(ask):
        remember("Alice works at Acme.")
    assert seen[0][0] == "remember" and seen[0][1]["content"] == "Alice works at Acme."
    with pytest.raises(ApprovalRequired):
        remember("Alice lives in Paris.")  # the block is over


def test_a_rejected_action_changes_nothing(active: Path) -> None:
    with approval_handler(lambda action, data: Decision.REJECT):
        assert remember("Alice works at Acme.") == ChangeSet()
        assert recall("alice") == ""
        assert forget("alice") == ChangeSet()
        assert not enable_memory(dir="other")
    assert not active.exists()
    target = current_target()
    assert target is not None and target.dir.name == "mem"


def test_handlers_nest_and_none_passes_the_question_outwards(active: Path) -> None:
    calls: list[str] = []

    def outer(action: str, data: dict[str, Any]) -> bool:
        calls.append("outer")
        return False

    def inner(action: str, data: dict[str, Any]) -> None:
        calls.append("inner")

    with approval_handler(outer), approval_handler(inner):
        assert remember("Alice works at Acme.") == ChangeSet()
    assert calls == ["inner", "outer"]


def test_the_global_handler_applies_everywhere_and_blocks_win_over_it(active: Path) -> None:
    assert set_approval_handler(lambda action, data: True) is None
    remember("Alice works at Acme.")
    with approval_handler(lambda action, data: False):
        assert forget("alice's job") == ChangeSet()
    assert "Acme" in recall("where does alice work")


def test_a_policy_preapproves_only_the_named_actions(active: Path) -> None:
    with approval_handler(preapprove("recall")):
        assert recall("alice") == ""
        with pytest.raises(ApprovalRequired):
            remember("Alice works at Acme.")
    with approval_handler(preapprove("*")):
        remember("Alice works at Acme.")


def test_a_policy_refuses_unknown_action_names() -> None:
    with pytest.raises(ValueError, match="unknown memory action 'remeber'"):
        preapprove("remeber")


def test_a_handler_must_answer_with_a_decision() -> None:
    enable_memory(dir="mem", approve=True)
    with approval_handler(lambda action, data: "yes"), pytest.raises(TypeError):  # type: ignore[arg-type,return-value]
        recall("alice")


def test_enable_and_disable_memory_ask_for_approval(tmp_path: Path) -> None:
    with pytest.raises(ApprovalRequired) as caught:
        enable_memory(dir="mem")
    assert caught.value.action == "enable_memory"
    assert caught.value.data["dir"] == str(tmp_path / "mem")
    assert not is_memory_active()
    enable_memory(dir="mem", approve=True)
    with pytest.raises(ApprovalRequired) as caught:
        disable_memory()
    assert caught.value.action == "disable_memory"
    assert is_memory_active()


def test_the_memory_block_asks_on_entering_and_a_rejected_block_keeps_what_was_there(
    tmp_path: Path,
) -> None:
    with pytest.raises(ApprovalRequired), memory(dir="mem"):
        pytest.fail("the block must not run unapproved")
    with approval_handler(lambda action, data: False), memory(dir="mem") as block:
        assert not block.changed
        assert not is_memory_active()


def test_memory_off_asks_nothing() -> None:
    assert remember("Alice works at Acme.") == ChangeSet()
    assert recall("alice") == ""


def test_the_automatic_paths_never_ask(active: Path) -> None:
    def refuse(action: str, data: dict[str, Any]) -> bool:
        raise AssertionError(f"{action} asked for approval")

    enable_memory(dir="mem", approve=True, autoExtract={"interval": 1}, compaction={"threshold": 3})
    set_approval_handler(refuse)
    with Thread() as thread:
        llm("Alice works at Acme.", memory=True, thread=thread)
        reply = llm("Alice lives in Paris.", memory=True, thread=thread)
        assert reply.extracted is not None
        assert reply.compaction is not None
        assert "Acme" in llm("where does alice work?", memory=True).context


def test_the_cli_counts_the_command_as_approval(tmp_path: Path) -> None:
    set_approval_handler(lambda action, data: Decision.REJECT)
    runner = CliRunner()
    result = runner.invoke(cli, ["remember", "Alice works at Acme.", "--dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["recall", "where does alice work", "--dir", str(tmp_path)])
    assert "Acme" in result.output
