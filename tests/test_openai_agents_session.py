"""MemgraphSession and memory_tools with the OpenAI Agents SDK's own Runner, against
the SDK's scripted model: history survives a restart, conversations are extracted
into memory like a Thread, and facts told in one session are recalled in another."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents", reason="needs the optional 'openai-agents' extra")

from agents import Agent, Runner, RunResult, Session, SessionSettings, SQLiteSession
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call
from memgraph.providers.mock import HashEmbedder, MockChatModel, ScriptedChatModel

from memgraph import AsyncMemory, Memory, Provider, ProviderUnavailable
from memgraph.integrations.openai_agents import MemgraphSession, memory_tools


@pytest.fixture(autouse=True)
def _no_tracing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")


def run(agent: Agent[Any], text: str, session: Session) -> RunResult:
    return asyncio.run(Runner.run(agent, text, session=session))


def said(items: list[Any]) -> list[tuple[str, str]]:
    """(role, text) of the message items."""
    found = []
    for item in items:
        content = item.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content)
        found.append((item.get("role"), content))
    return found


def test_history_survives_a_restart_of_the_process(tmp_path: Path) -> None:
    first_run = textwrap.dedent(
        f"""
        import asyncio
        from agents import Agent, Runner
        from agents.testing import ScriptedModel, assistant_message
        from memgraph import AsyncMemory
        from memgraph.integrations.openai_agents import MemgraphSession

        async def main():
            async with AsyncMemory({str(tmp_path)!r}, "alice", provider="mock") as memory:
                model = ScriptedModel([[assistant_message("Hello Alice!")]])
                agent = Agent(name="assistant", model=model)
                session = MemgraphSession("chat-1", memory)
                await Runner.run(agent, "Hi, I'm Alice.", session=session)

        asyncio.run(main())
        """
    )
    subprocess.run(
        [sys.executable, "-c", first_run],
        check=True,
        timeout=120,
        env={"OPENAI_AGENTS_DISABLE_TRACING": "1", "PATH": ""},
    )

    async def second_run() -> tuple[ScriptedModel, list[Any]]:
        async with AsyncMemory(tmp_path, "alice", provider="mock") as memory:
            model = ScriptedModel([[assistant_message("You said hi earlier.")]])
            session = MemgraphSession("chat-1", memory)
            await Runner.run(
                Agent(name="assistant", model=model), "What did I say?", session=session
            )
            return model, await session.get_items()

    model, history = asyncio.run(second_run())
    call = model.calls[0]
    assert said(call.input) == [
        ("user", "Hi, I'm Alice."),
        ("assistant", "Hello Alice!"),
        ("user", "What did I say?"),
    ]
    assert said(history)[-1] == ("assistant", "You said hi earlier.") and len(history) == 4


def recall_then_answer(question: str) -> ScriptedModel:
    """A model that calls the recall tool, then answers with what it returned."""

    def answer(call: ModelCall) -> Any:
        outputs = [i for i in call.input if i.get("type") == "function_call_output"]
        return [assistant_message(f"From memory: {outputs[-1]['output']}")]

    return ScriptedModel(
        [
            [function_call("recall", {"query": question}, call_id="call-1")],
            ModelStep.respond(answer),
        ]
    )


def test_facts_told_in_one_session_are_recalled_in_another(tmp_path: Path) -> None:
    with Memory(tmp_path, "alice", provider="mock") as memory:
        telling = Agent(
            name="assistant",
            model=ScriptedModel([[assistant_message("Noted.")], [assistant_message("Nice.")]]),
            tools=memory_tools(memory),
        )
        first = MemgraphSession("monday", memory, extract_every=2)
        run(telling, "I work at Acme.", first)
        assert memory.entities() == []  # one user turn: not extracted yet
        run(telling, "I have a cat called Tom.", first)
        episodes = list(memory.iter_episodes())  # two turns: one episode per message
        assert [(e.speaker, e.text) for e in episodes] == [
            ("User", "I work at Acme."),
            ("assistant", "Noted."),
            ("User", "I have a cat called Tom."),
            ("assistant", "Nice."),
        ]
        assert {e.metadata["via"] for e in episodes} == {"conversation"}
        assert {e.metadata["thread"] for e in episodes} == {"monday"}
        assert len({tuple(e.metadata["items"]) for e in episodes}) == 4  # each its own item
        assert asyncio.run(first.flush()) == []  # never twice

    with Memory(tmp_path, "alice", provider="mock") as memory:  # another day, another run
        asking = Agent(
            name="assistant",
            model=recall_then_answer("where do I work?"),
            tools=memory_tools(memory),
        )
        result = run(asking, "Where do I work?", MemgraphSession("tuesday", memory))
        assert "works at Acme" in result.final_output


def test_the_agent_remembers_through_its_remember_tool(tmp_path: Path) -> None:
    def told(text: str) -> ScriptedModel:
        return ScriptedModel(
            [
                [function_call("remember", {"text": text}, call_id="c1")],
                ModelStep.respond(
                    lambda call: [assistant_message(call.input[-1]["output"])]  # echo the tool
                ),
            ]
        )

    async def main() -> list[str]:
        replies = []
        async with AsyncMemory(tmp_path, "alice", provider="mock") as memory:
            session = MemgraphSession("c", memory, extract_every=0)
            for text in [
                "Alice prefers green tea.",
                "Alice works at Acme.",
                "Alice works at Acme.",
            ]:
                agent = Agent(name="assistant", model=told(text), tools=memory_tools(memory))
                result = await Runner.run(agent, f"Remember: {text}", session=session)
                replies.append(str(result.final_output))
            assert "green tea" in await memory.recall("what does alice prefer?")
        return replies

    assert asyncio.run(main()) == [
        "Remembered: Alice: prefers green tea",
        "Remembered: Alice: works at Acme",  # the works_at link to Acme says nothing more
        "Nothing new: that was already known.",
    ]


def test_the_session_behaves_like_the_sdks_sqlite_session(tmp_path: Path) -> None:
    items: list[Any] = [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "two"},
        {"type": "function_call", "name": "f", "arguments": "{}", "call_id": "c"},
        {"type": "function_call_output", "call_id": "c", "output": "three"},
        {"role": "user", "content": [{"type": "input_text", "text": "four"}]},
    ]

    async def exercise(session: Session) -> list[Any]:
        seen: list[Any] = [await session.get_items()]
        await session.add_items([])
        await session.add_items(items[:2])
        await session.add_items(items[2:])
        seen += [await session.get_items(), await session.get_items(limit=2)]
        seen += [await session.get_items(limit=0), await session.get_items(limit=-1)]
        seen += [await session.pop_item(), await session.get_items()]
        await session.clear_session()
        seen += [await session.get_items(), await session.pop_item()]
        await session.add_items(items[:1])
        seen.append(await session.get_items())
        return seen

    async def main() -> tuple[list[Any], list[Any], list[Any]]:
        async with AsyncMemory(tmp_path, "s", provider="mock") as memory:
            ours = MemgraphSession("x", memory, extract_every=0)
            assert isinstance(ours, Session)
            limited = MemgraphSession("y", memory, session_settings=SessionSettings(limit=1))
            await limited.add_items(items)
            theirs = SQLiteSession("x", tmp_path / "sdk.db")
            return await exercise(ours), await exercise(theirs), await limited.get_items()

    ours, theirs, limited = asyncio.run(main())
    assert ours == theirs
    assert limited == items[-1:]


def test_a_failed_extraction_keeps_the_history_and_is_retried(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    chat = ScriptedChatModel(
        {"extract": [ProviderUnavailable("the model is down")]}, fallback=MockChatModel()
    )

    async def main() -> tuple[list[Any], list[str], list[str]]:
        provider = Provider("flaky", chat, HashEmbedder())
        async with AsyncMemory(tmp_path, "alice", provider=provider) as memory:
            async with MemgraphSession("s", memory, extract_every=1) as session:
                with caplog.at_level(logging.WARNING, logger="memgraph"):
                    await session.add_items([{"role": "user", "content": "I work at Acme."}])
                    await session.add_items([{"role": "assistant", "content": "Noted."}])
                failed = [e.text async for e in memory.iter_episodes()]
                await session.add_items(
                    [
                        {"role": "user", "content": "I live in Rome."},
                        {"role": "assistant", "content": "Nice."},
                    ]
                )
                history = await session.get_items()
            return history, failed, [e.text async for e in memory.iter_episodes()]

    history, failed, extracted = asyncio.run(main())
    assert said(history) == [
        ("user", "I work at Acme."),
        ("assistant", "Noted."),
        ("user", "I live in Rome."),
        ("assistant", "Nice."),
    ]
    assert failed == [] and "will be retried" in caplog.text
    assert extracted == ["I work at Acme.", "Noted.", "I live in Rome.", "Nice."]


def test_leaving_the_session_block_extracts_what_is_pending(tmp_path: Path) -> None:
    async def main() -> list[str]:
        async with AsyncMemory(tmp_path, "alice", provider="mock") as memory:
            async with MemgraphSession("s", memory) as session:  # every 5 turns
                await session.add_items([{"role": "user", "content": "I work at Acme."}])
                assert [e async for e in memory.iter_episodes()] == []
            return [e.text async for e in memory.iter_episodes()]

    assert asyncio.run(main()) == ["I work at Acme."]
    with pytest.raises(ValueError, match="session_id"):
        MemgraphSession("", AsyncMemory(tmp_path, "alice"))
    with pytest.raises(ValueError, match="extract_every"):
        MemgraphSession("s", AsyncMemory(tmp_path, "alice"), extract_every=-1)


def test_a_missing_sdk_names_the_extra_to_install() -> None:
    probe = (
        "import sys\n"
        "sys.modules['agents'] = None\n"
        "try:\n"
        "    import memgraph.integrations.openai_agents\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert "pip install 'memgraph-kg[openai-agents]'" in done.stdout


def test_a_cancelled_add_still_reports_only_after_its_write_is_settled(tmp_path: Path) -> None:
    async def main() -> list[Any]:
        async with AsyncMemory(tmp_path, "alice", provider="mock") as memory:
            session = MemgraphSession("s", memory, extract_every=0)
            adding = asyncio.create_task(
                session.add_items([{"role": "user", "content": "I work at Acme."}])
            )
            await asyncio.sleep(0)  # the write is under way
            adding.cancel()
            with pytest.raises(asyncio.CancelledError):
                await adding
            return await session.get_items()

    assert said(asyncio.run(main())) == [("user", "I work at Acme.")]
