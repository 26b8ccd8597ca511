"""``memgraph import``: formats, speakers, bad input, progress, and resuming after a kill."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from memgraph import InvalidInput, Memory, ProviderUnavailable
from memgraph.cli import cli
from memgraph.importing import ImportOptions, detect_format, import_file
from memgraph.importing.chat_log import read_chat
from memgraph.importing.display import ProgressDisplay
from memgraph.importing.formats import read_messages, read_openai, read_text
from memgraph.speakers import speaker_name
from tests.openai_server import OpenAITestServer
from tests.test_bulk import CountingChat, provider


def write_jsonl(path: Path, messages: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages))
    return path


def import_keys(memory: Memory) -> Counter[int]:
    """How many episodes carry each import item number."""
    return Counter(
        e.metadata["import"]["item"] for e in memory.iter_episodes() if "import" in e.metadata
    )


# ----------------------------------------------------------------------- readers
def test_jsonl_messages_keep_role_speaker_and_time() -> None:
    text = (
        '{"role": "user", "content": "I work at Acme.", "at": "2024-05-01T09:00:00Z"}\n'
        "\n"
        '{"speaker": "Ann", "content": "I live in Rome.", "id": 7}\n'
    )
    records = read_messages(text, "chat.jsonl")
    assert [(r.index, r.where, r.role, r.speaker, r.at) for r in records] == [
        (0, "line 1", "user", None, "2024-05-01T09:00:00.000Z"),
        (1, "line 3", None, "Ann", None),
    ]


def test_an_openai_export_reads_arrays_objects_and_text_parts() -> None:
    messages = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": [{"type": "text", "text": "I like tea."}]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
        {"role": "assistant", "content": "Noted."},
    ]
    for data in (messages, {"messages": messages}):
        records = read_openai(orjson.dumps(data).decode(), "export.json")
        assert [(r.index, r.role, r.text) for r in records] == [
            (0, "system", "You are helpful."),
            (1, "user", "I like tea."),
            (3, "assistant", "Noted."),
        ]


def test_plain_text_is_one_record_per_paragraph() -> None:
    records = read_text("Alice works at Acme.\nShe likes tea.\n\n  \nBob lives in Rome.\n", "n.txt")
    assert [(r.text, r.where) for r in records] == [
        ("Alice works at Acme.\nShe likes tea.", "paragraph 1 (line 1)"),
        ("Bob lives in Rome.", "paragraph 2 (line 5)"),
    ]


def test_a_transcript_is_one_record_per_message_with_its_speaker() -> None:
    text = "Dana: how was the race?\nMarcus: 2:06!\nand my knee held up\n\nDana: yay\n"
    records = read_chat(text, "chat.txt")
    assert [(r.index, r.where, r.speaker, r.text, r.at) for r in records] == [
        (0, "line 1", "Dana", "how was the race?", None),
        (1, "line 2", "Marcus", "2:06!\nand my knee held up", None),
        (2, "line 5", "Dana", "yay", None),
    ]


def test_a_whatsapp_export_keeps_each_message_s_time_and_leaves_notices_out() -> None:
    android = (
        "12/31/23, 9:15 PM - Messages and calls are end-to-end encrypted.\n"
        '12/31/23, 9:15 PM - Dana changed the subject to "Trip: Lisbon"\n'
        "12/31/23, 9:15 PM - Maria Lopez: I joined a gym last week\n"
        "1/2/24, 8:01 AM - John: <Media omitted>\n"
        "1/2/24, 12:02 AM - John: kickboxing for me\n"
    )
    records = read_chat(android, "wa.txt")
    assert [(r.speaker, r.text, r.at) for r in records] == [
        ("Maria Lopez", "I joined a gym last week", "2023-12-31T21:15:00.000Z"),
        ("John", "kickboxing for me", "2024-01-02T00:02:00.000Z"),
    ]
    ios = "[31.12.23, 21:15:02] Maria: hi\n[01.01.24, 09:00:00] John: hey\n"
    assert [r.at for r in read_chat(ios, "wa.txt")] == [
        "2023-12-31T21:15:02.000Z",
        "2024-01-01T09:00:00.000Z",
    ]
    day_first = "2/1/24, 10:00 - Ana: hola\n25/1/24, 10:00 - Ana: otra vez\n"
    assert [r.at[:10] for r in read_chat(day_first, "wa.txt") if r.at] == [
        "2024-01-02",
        "2024-01-25",
    ]
    logged = "[2024-03-05 14:30] Dana: the cast is off\n2024-03-05T14:31:10 Leo: finally\n"
    assert [r.at for r in read_chat(logged, "log.txt")] == [
        "2024-03-05T14:30:00.000Z",
        "2024-03-05T14:31:10.000Z",
    ]


_NAMES = st.sampled_from(["Dana", "Marcus", "Ana Lima", "Dr. Ortiz", "user", "assistant"])
_WORDS = (
    st.text(
        st.characters(categories=["L", "N", "Zs"], include_characters=".,!?'"),
        min_size=1,
        max_size=40,
    )
    .map(str.strip)
    .filter(bool)
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_NAMES, _WORDS, st.booleans()), min_size=2, max_size=12))
def test_any_transcript_reads_back_message_by_message(
    said: list[tuple[str, str, bool]],
) -> None:
    lines = []
    for number, (name, words, stamped) in enumerate(said):
        stamp = f"[2024-03-05 14:{number:02d}] " if stamped else ""
        lines.append(f"{stamp}{name}: {words}")
    text = "\n".join(lines) + "\n"
    assert detect_format(text, "chat.txt") == "chat"
    records = read_chat(text, "chat.txt")
    assert [(r.speaker, r.text) for r in records] == [
        (speaker_name(name), words) for name, words, _ in said
    ]
    assert [r.at is not None for r in records] == [stamped for _, _, stamped in said]
    assert [r.index for r in records] == list(range(len(said)))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Dear diary,\nDana: hi\n", "line 1 starts no message"),
        ("13/13/23, 9:15 PM - Dana: hi\n13/13/23, 9:16 PM - Leo: hi\n", "line 1: the time stamp"),
    ],
)
def test_a_chat_log_that_is_not_one_is_refused_naming_the_line(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        read_chat(text, "chat.txt")
    path = tmp_path / "chat.txt"
    path.write_text(text)
    args = ["--dir", str(tmp_path / "mem"), "import", "--format", "chat", str(path)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and message in result.output, result.output
    if "stamp" in message:  # recognised as a chat log from its stamps, then refused
        result = CliRunner().invoke(cli, [*args[:3], str(path)])
        assert result.exit_code == 2 and message in result.output, result.output
    assert not (tmp_path / "mem" / "default").exists()


def test_a_chat_log_is_imported_one_episode_per_message(tmp_path: Path) -> None:
    path = tmp_path / "chat.txt"
    path.write_text(
        "Maria: I finally joined a gym last week.\nJohn: Nice! Which one?\n"
        "Maria: The Iron Temple. I go three times a week.\n"
    )
    result = CliRunner().invoke(cli, ["--dir", str(tmp_path / "mem"), "import", str(path)])
    assert result.exit_code == 0, result.output
    assert "as chat" in result.output and "3 new" in result.output
    with Memory(tmp_path / "mem", "default", provider="mock") as memory:
        said = [(e.speaker, e.text) for e in memory.iter_episodes()]
        assert said == [
            ("Maria", "I finally joined a gym last week."),
            ("John", "Nice! Which one?"),
            ("Maria", "The Iron Temple. I go three times a week."),
        ]
        assert "three times a week" in memory.recall("How often does Maria go to the gym?")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"role": "user", "content": "hi"}\n', "messages"),
        ('[{"role": "user", "content": "hi"}]', "openai"),
        ('{\n  "messages": [{"role": "user", "content": "hi"}]\n}', "openai"),
        ("Dear diary,\nI moved to Rome.\n", "text"),
        ("Dana: how was the race?\nMarcus: 2:06!\n", "chat"),
        ("12/31/23, 9:15 PM - Dana: happy new year\n12/31/23, 9:16 PM - Leo: you too\n", "chat"),
        ("[31.12.23, 21:15:02] Dana: happy new year\n[31.12.23, 21:16:00] Leo: you too\n", "chat"),
        ("Note: buy milk.\nThe rest of the day was quiet.\n", "text"),
    ],
)
def test_the_format_is_recognised_from_the_content(text: str, expected: str) -> None:
    assert detect_format(text, "f") == expected


def test_the_reference_mcp_memory_file_is_recognised_and_named() -> None:
    line = '{"type": "entity", "name": "Alice", "entityType": "person", "observations": []}\n'
    with pytest.raises(InvalidInput, match="use --format mcp-jsonl"):
        detect_format(line, "memory.json")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '{"role": "user", "content": "ok"}\n{"role": "user", "content": \n',
            "line 2: not valid JSON",
        ),
        ('{"role": "user", "content": "ok"}\n\n{"role": "user"}\n', "line 3: the message has no"),
        ('{"role": "user", "content": "  "}\n', "line 1: the message's 'content' is empty"),
        ('{"role": "user", "content": "x", "at": "soon"}\n', "line 1: 'at' is not a time"),
    ],
)
def test_bad_input_names_the_line_exits_2_and_imports_nothing(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text(content)
    result = CliRunner().invoke(cli, ["--dir", str(tmp_path / "mem"), "import", str(path)])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not (tmp_path / "mem" / "default").exists()


# ----------------------------------------------------------------- speakers, roles
def test_roles_become_speakers_and_assistant_turns_are_kept_without_a_model_call(
    tmp_path: Path,
) -> None:
    path = write_jsonl(
        tmp_path / "chat.jsonl",
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "I work at Acme."},
            {"role": "assistant", "content": "Acme makes anvils."},
            {"role": "user", "speaker": "Bo", "content": "I live in Oslo."},
        ],
    )
    chat = CountingChat()
    with Memory(tmp_path / "mem", "s", provider=provider(chat)) as memory:
        report = import_file(memory, path, options=ImportOptions(speaker_user="Ann"))
        episodes = sorted(memory.iter_episodes(), key=lambda e: e.metadata["import"]["item"])
        names = {e.name for e in memory.entities()}
    assert [(e.speaker, e.metadata["role"]) for e in episodes] == [
        ("Ann", "user"),
        ("assistant", "assistant"),
        ("Bo", "user"),
    ]
    assert chat.calls == 2  # the assistant's turn is context, not a source of facts
    assert "Acme" in names and "anvils" not in " ".join(names).lower()
    assert (report.imported, report.left_out, report.already, report.failed) == (3, 1, 0, 0)


def test_assistant_turns_can_be_extracted_or_skipped(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "I work at Acme."},
        {"role": "assistant", "content": "Bob lives in Oslo."},
    ]
    path = write_jsonl(tmp_path / "chat.jsonl", messages)
    for policy, calls, stored in (("extract", 2, 2), ("skip", 1, 1)):
        chat = CountingChat()
        with Memory(tmp_path / policy, "s", provider=provider(chat)) as memory:
            import_file(memory, path, options=ImportOptions(assistant=policy))
            assert len(list(memory.iter_episodes())) == stored
        assert chat.calls == calls


# ------------------------------------------------------------------------ resuming
def test_running_an_import_again_imports_nothing_twice(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "chat.jsonl",
        [{"role": "user", "content": f"Person{i} likes tea."} for i in range(12)],
    )
    chat = CountingChat(fail_at=8, error=ProviderUnavailable("the model went away"))
    with Memory(tmp_path / "mem", "s", provider=provider(chat)) as memory:
        with pytest.raises(ProviderUnavailable):
            import_file(memory, path, options=ImportOptions(concurrency=1))
        assert len(import_keys(memory)) == 7
    seen: list[tuple[int, int]] = []
    with Memory(tmp_path / "mem", "s", provider="mock") as memory:
        again = import_file(
            memory, path, options=ImportOptions(progress=lambda d, t: seen.append((d, t)))
        )
        assert (again.imported, again.already) == (5, 7)
        assert import_keys(memory) == Counter(range(12))
        third = import_file(memory, path)
        assert (third.imported, third.already) == (0, 12)
        assert import_keys(memory) == Counter(range(12))
    assert seen[0] == (7, 12) and seen[-1] == (12, 12)


def test_an_import_killed_mid_way_continues_and_stores_every_item_once(tmp_path: Path) -> None:
    total = 600
    path = write_jsonl(
        tmp_path / "chat.jsonl",
        [{"role": "user", "content": f"Person{i} works at Company{i}."} for i in range(total)],
    )
    root = tmp_path / "mem"
    with OpenAITestServer() as server:
        server.chat_delay = 0.02  # a model answering in 20 ms, four calls at once
        env = {
            **os.environ,
            "MEMGRAPH_PROVIDER": "openai",
            "MEMGRAPH_BASE_URL": server.base_url,
        }
        command = [sys.executable, "-m", "memgraph", "--dir", str(root), "--scope", "s"]
        command += ["import", str(path), "--concurrency", "4"]
        first = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        journal = root / "s" / "journal.jsonl"
        deadline = time.monotonic() + 60
        while not (journal.exists() and journal.read_bytes().count(b"\n") >= 1):
            assert first.poll() is None, first.communicate()[1].decode()
            assert time.monotonic() < deadline, "no chunk was committed within 60 s"
            time.sleep(0.01)
        first.send_signal(signal.SIGKILL)
        first.communicate()
        assert first.returncode == -signal.SIGKILL
        with Memory(root, "s", provider="mock") as memory:
            stored = sum(import_keys(memory).values())
        assert 0 < stored < total
        second = subprocess.run(command, env=env, capture_output=True, timeout=120)
        assert second.returncode == 0, second.stderr.decode()
        assert f"{stored} imported by an earlier run" in second.stdout.decode()
    with Memory(root, "s", provider="mock") as memory:
        assert import_keys(memory) == Counter(range(total))


def test_ctrl_c_stops_saying_how_to_continue(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "chat.jsonl",
        [{"role": "user", "content": f"Person{i} likes tea."} for i in range(2000)],
    )
    root = tmp_path / "mem"
    with OpenAITestServer() as server:
        server.chat_delay = 0.02
        env = {**os.environ, "MEMGRAPH_PROVIDER": "openai", "MEMGRAPH_BASE_URL": server.base_url}
        command = [sys.executable, "-m", "memgraph", "--dir", str(root), "--scope", "s"]
        command += ["import", str(path), "--concurrency", "2"]
        run = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        journal = root / "s" / "journal.jsonl"
        deadline = time.monotonic() + 60
        while not (journal.exists() and journal.read_bytes().count(b"\n") >= 1):
            assert run.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=60)
    assert run.returncode == 130, err.decode()
    assert "run the same command again to continue" in err.decode()
    with Memory(root, "s", provider="mock") as memory:
        assert 0 < sum(import_keys(memory).values()) < 2000


# ------------------------------------------------------------------------ progress
def test_progress_is_plain_lines_with_rate_and_eta_when_not_a_terminal() -> None:
    stream = io.StringIO()
    display = ProgressDisplay(stream, tty=False, interval=0)
    display(0, 1000)
    display._first = (display._first[0] - 10, 0) if display._first else None  # 10 s ago
    display(300, 1000)
    display.close()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "imported 0/1000"
    assert lines[1].startswith("imported 300/1000 (30/s, ETA 2")


def test_progress_is_a_bar_on_a_terminal() -> None:
    stream = io.StringIO()
    display = ProgressDisplay(stream, tty=True)
    display(0, 10)
    display(10, 10)
    display.close()
    assert "10/10" in stream.getvalue() and "item/s" in stream.getvalue()


def test_the_command_imports_text_and_prints_a_summary(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("Alice works at Acme.\n\nBob lives in Rome.\n")
    args = ["--dir", str(tmp_path / "mem"), "import", str(path)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "imported notes.txt as text" in result.output and "2 new" in result.output
    again = CliRunner().invoke(cli, [*args, "--json"])
    assert orjson.loads(again.stdout)["already"] == 2


def test_a_whole_file_importer_plugs_into_the_format_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memgraph.importing import FORMATS, external, register_format

    monkeypatch.setattr("memgraph.importing.runner.FORMATS", dict(FORMATS))
    seen: list[Path] = []

    def import_lines(memory: Memory, path: Path) -> None:
        seen.append(path)
        memory.remember_many(path.read_text().splitlines())

    register_format("lines", external(import_lines, "lines"))
    path = tmp_path / "facts.lines"
    path.write_text("Alice works at Acme.\nBob likes jazz.\n")
    with Memory(tmp_path / "mem", "s", provider="mock") as memory:
        report = import_file(memory, path, format="lines")
    assert seen == [path] and report.format == "lines" and report.facts == 2


def test_a_reference_memory_file_is_recognised_and_imported_with_its_format(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memory.json"
    path.write_text('{"type":"entity","name":"Alice","entityType":"person","observations":[]}')
    args = ["--dir", str(tmp_path / "mem"), "import", str(path)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and "use --format mcp-jsonl" in result.output
    result = CliRunner().invoke(cli, [*args, "--format", "mcp-jsonl"])
    assert result.exit_code == 0, result.output
    with Memory(tmp_path / "mem", "default", provider="mock") as memory:
        assert [e.name for e in memory.entities()] == ["Alice"]
