"""The README's chat-with-memory example remembers across process restarts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "chat.py"


def chat(cwd: Path, *lines: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMGRAPH_", "OPENAI_"))}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_chat_example_recalls_facts_from_an_earlier_run(tmp_path: Path) -> None:
    first = chat(tmp_path, "Hi, my name is Alice.", "I work at Acme.", "I live in Lyon.")
    assert first.count("agent: ") == 3
    assert (tmp_path / ".memgraph-chat" / "me").is_dir()
    second = chat(tmp_path, "Where do I work?", "Where do I live?")
    answers = second.splitlines()
    assert "Acme" in answers[0]
    assert "Lyon" in answers[1]


def test_the_chat_example_starts_with_an_empty_memory(tmp_path: Path) -> None:
    answer = "agent: I don't know that; nothing I remember answers it.\n"
    assert chat(tmp_path, "Where do I work?") == answer


def test_quit_and_exit_end_the_conversation_instead_of_going_to_the_model(
    tmp_path: Path,
) -> None:
    said = chat(tmp_path, "I work at Acme.", "quit", "I live in Lyon.")
    assert said == "agent: Noted: you work at Acme.\n"
    assert chat(tmp_path, "Exit") == ""
    assert chat(tmp_path, "Where do I live?") == (
        "agent: I don't know that; nothing I remember answers it.\n"
    )
    assert chat(tmp_path, "Where do I work?") == "agent: You work at Acme.\n"


def test_ctrl_c_ends_the_conversation_without_a_traceback_and_keeps_what_was_said(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMGRAPH_", "OPENAI_"))}
    process = subprocess.Popen(
        [sys.executable, str(EXAMPLE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("I work at Acme.\n")
    process.stdin.flush()
    assert process.stdout.readline() == "agent: Noted: you work at Acme.\n"
    process.send_signal(signal.SIGINT)  # the example now waits for the next line
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert out == "\n"  # the line the prompt was on is ended, nothing else
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert chat(tmp_path, "Where do I work?") == "agent: You work at Acme.\n"


def readme_chat_loop() -> str:
    readme = (EXAMPLE.parent.parent / "README.md").read_text()
    section = readme[readme.index("## Chat with memory") :]
    return section[section.index("```python\n") + 10 : section.index("```\n")]


def test_the_readme_chat_loop_remembers_across_restarts(tmp_path: Path) -> None:
    script = tmp_path / "loop.py"
    script.write_text(readme_chat_loop())

    def run(*lines: str) -> str:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMGRAPH_", "OPENAI_"))}
        done = subprocess.run(
            [sys.executable, str(script)],
            input="\n".join([*lines, ""]) + "\n",  # an empty line ends the loop
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    run("I work at Acme.")
    assert "Acme" in run("Where do I work?")
