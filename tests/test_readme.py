"""The README's Python examples run verbatim, offline, as a new user would run them.

Every ```python block of README.md is written to a file in a fresh directory
and run in its own process with no provider configured and no API key (so on
the offline mock), its ``input()`` answered from stdin. Each block is known
here by the heading it sits under; a new block fails the test until it gets an
entry. A block whose framework needs a model (the OpenAI Agents SDK's) runs
after a prelude that puts the SDK's own scripted model in place of OpenAI's.
The shell blocks are left out: "Set up" and "Development" are the
commands that build and test this checkout, "Command line" needs a scope the
reader made and a PostgreSQL DSN (its commands are tested in test_cli.py), and
"Scaling out on PostgreSQL" needs a database server.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from memgraph import Memory

README = Path(__file__).resolve().parent.parent / "README.md"


@dataclass(frozen=True)
class Example:
    """How to run one README block: what to type, and what must come out."""

    stdin: str = ""
    check: Callable[[str, Path], None] | None = None
    requires: str | None = None  # a module the block imports that is an optional extra
    prelude: str = ""  # code run before the block, in the same file


def blocks() -> dict[str, str]:
    """The Python blocks of the README by the heading they sit under (numbered if several)."""
    found: dict[str, str] = {}
    heading, fence, code = "", "", []
    for line in README.read_text(encoding="utf-8").splitlines(keepends=True):
        if fence:
            if line.rstrip() == "```":
                if fence == "python":
                    key, n = heading, 1
                    while key in found:
                        n += 1
                        key = f"{heading} #{n}"
                    found[key] = "".join(code)
                fence, code = "", []
            else:
                code.append(line)
        elif line.startswith("```"):
            fence = line[3:].strip() or "text"
        elif line.startswith("#"):
            heading = line.lstrip("#").strip()
    return found


def run(code: str, cwd: Path, stdin: str = "") -> str:
    script = cwd / "example.py"
    script.write_text(code, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMGRAPH_", "OPENAI_"))}
    done = subprocess.run(
        [sys.executable, str(script)],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def quickstart(out: str, cwd: Path) -> None:
    recalled = out.split("\n0.")[0]  # then the search hits, then the history
    assert re.match(r"Alice \(person\):\n  - \[\d{1,2} \w+ \d{4}\] works at Globex", recalled)
    assert "works at Acme" not in recalled
    history = [line for line in out.splitlines() if line[:2] == "20" and " → " in line]
    assert any(x.endswith(" prefers TypeScript") and "current" not in x for x in history)


def conversation(out: str, cwd: Path) -> None:
    lines = out.splitlines()
    answer = lines.index("Related messages:") + 1
    # the answer first, with the question it answers
    assert lines[answer].startswith("  - [19 January 2024] Marcus: Stripe.")
    assert lines[answer].endswith('(in reply to Dana: "NO. Sanjay?? where\'s he going")')


def chat_loop(out: str, cwd: Path) -> None:
    assert out == "you: agent: Noted: you work at Acme.\nyou: "
    again = run(blocks()["Chat with memory"], cwd, "Where do I work?\n\n")
    assert again == "you: agent: You work at Acme.\nyou: "


def approval(out: str, cwd: Path) -> None:
    assert re.match(
        r"remember 'Alice prefers tea.'\? Alice \(person\):\n  - \[\d{1,2} \w+ \d{4}\] prefers tea",
        out,
    )
    with Memory(cwd / "mem", "alice", provider="mock") as alice:
        assert [e.name for e in alice.entities()] == ["Alice"]
    assert not (cwd / "mem" / "default").exists()


def notes(out: str, cwd: Path) -> None:
    again = run(blocks()["Notes, progress, rules, key/values and time travel"], cwd)
    with Memory.named("support-agent", dir=cwd / ".memgraph", provider="mock") as memory:
        assert sorted(n.content for n in memory.notes(from_="*")) == [
            "API is slow on Mondays",
            "draft done",
        ]
        assert {e.name for e in memory.entities()} == {"Notes"}
    assert "facts by category: learning: 1, context: 1" in out
    assert "facts by category: learning: 1, context: 1" in again


def bulk_import(out: str, cwd: Path) -> None:
    assert out.splitlines()[0] == "0/3" and out.splitlines()[-1] == "3/3"
    with Memory(cwd / "mem", "alice", provider="mock") as alice:
        said = [(e.speaker, e.text) for e in alice.iter_episodes()]
    assert ("Alice", "I moved to Rome.") in said and ("assistant", "Nice!") in said


def scripted_agent_model(*steps: str) -> str:
    """A prelude that answers every Agents SDK model request from a script instead of
    OpenAI: each step either calls a tool (``"tool_name {json arguments}"``) or, for
    ``"echo"``, replies with the output of the last tool call."""
    return f"""\
import json as _json
import os as _os
import sys as _sys

from agents.models.multi_provider import MultiProvider as _MultiProvider
from agents.testing import ModelStep as _Step
from agents.testing import ScriptedModel as _ScriptedModel
from agents.testing import assistant_message as _says
from agents.testing import function_call as _calls

_os.environ["PATH"] = _os.path.dirname(_sys.executable) + _os.pathsep + _os.environ["PATH"]
_os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "1"


def _echo(call):
    outputs = [i for i in call.input if i.get("type") == "function_call_output"]
    return [_says(str(outputs[-1]["output"]))]


def _step(number, step):
    if step == "echo":
        return _Step.respond(_echo)
    name, _, arguments = step.partition(" ")
    return [_calls(name, _json.loads(arguments), call_id=f"call-{{number}}")]


_model = _ScriptedModel([_step(n, s) for n, s in enumerate({list(steps)!r})])
_MultiProvider.get_model = lambda self, name: _model
"""


def mcp_agent(out: str, cwd: Path) -> None:
    assert "prefers tea" in out  # the reply echoes what the MCP remember tool stored
    with Memory(cwd / ".memgraph", "me", provider="mock") as me:
        assert "prefers tea" in me.recall("what do I prefer?")


def async_memory(out: str, cwd: Path) -> None:
    assert re.match(r"Alice \(person\):\n  - \[\d{1,2} \w+ \d{4}\] works at Acme", out)


def langgraph_graph(out: str, cwd: Path) -> None:
    reply, recalled = out.split("\n", 1)
    assert reply == "I work at Acme."
    assert re.match(r"User \(person\):\n  - \[\d{1,2} \w+ \d{4}\] works at Acme", recalled)


def langmem_tools(out: str, cwd: Path) -> None:
    (found,) = json.loads(out)
    assert found["value"] == {"content": "Alice prefers green tea."} and found["score"] > 0


def agents_session(out: str, cwd: Path) -> None:
    assert "works at Acme" in out  # the second session recalled what the first was told
    with Memory(cwd / "mem", "alice", provider="mock") as alice:
        episodes = list(alice.iter_episodes())
    said = [e for e in episodes if (e.metadata or {}).get("thread") == "monday"]
    assert [e.text for e in said if e.speaker == "User"] == ["I work at Acme."]  # the session
    assert any(e.text == "I work at Acme." for e in episodes if e not in said)  # the tool


EXAMPLES = {
    "Quickstart (Python)": Example(check=quickstart),
    "Conversations between people": Example(check=conversation),
    "Chat with memory": Example("I work at Acme.\n\n", chat_loop),
    "Chat with memory #2": Example("yes\n", approval),
    "Notes, progress, rules, key/values and time travel": Example(check=notes),
    "Import conversations": Example(check=bulk_import),
    "Use from an MCP client": Example(
        check=mcp_agent,
        requires="agents",
        prelude=scripted_agent_model('remember {"text": "I prefer tea."}', "echo"),
    ),
    "Use from asyncio": Example(check=async_memory),
    "Use from LangGraph": Example(check=langgraph_graph, requires="langgraph"),
    "Use from LangGraph #2": Example(check=langmem_tools, requires="langmem"),
    "Use from the OpenAI Agents SDK": Example(
        check=agents_session,
        requires="agents",
        prelude=scripted_agent_model(
            'remember {"text": "I work at Acme."}',
            "echo",
            'recall {"query": "where do I work?"}',
            "echo",
        ),
    ),
}


def test_every_python_block_of_the_readme_has_an_entry_here() -> None:
    assert sorted(blocks()) == sorted(EXAMPLES)


@pytest.mark.parametrize("heading", sorted(EXAMPLES))
def test_the_readme_example_runs_verbatim_offline(heading: str, tmp_path: Path) -> None:
    example = EXAMPLES[heading]
    if example.requires is not None:
        pytest.importorskip(example.requires, reason=f"needs the optional {example.requires!r}")
    out = run(example.prelude + blocks()[heading], tmp_path, example.stdin)
    if example.check is not None:
        example.check(out, tmp_path)
