"""The ``memgraph`` command line, end to end: real processes and in-process runs.

Everything runs offline: MEMGRAPH_PROVIDER and OPENAI_API_KEY are removed, so
the CLI falls back to the deterministic mock provider and says so once.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import networkx as nx
import orjson
import pytest
from click.testing import CliRunner, Result

from memgraph.cli import cli
from memgraph.llm_calls.resolve import OFFLINE_NOTICE
from memgraph.scope import SCOPE_RULE
from tests.openai_server import OpenAITestServer, openai_server  # noqa: F401

_DROPPED = ("OPENAI_API_KEY",)


def _offline_env() -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("MEMGRAPH_") and key not in _DROPPED
    }
    env["PYTHONUTF8"] = "1"
    return env


def run(tmp_path: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m memgraph --dir tmp_path/mem ARGS`` in a fresh, offline process."""
    return subprocess.run(
        [sys.executable, "-m", "memgraph", "--dir", str(tmp_path / "mem"), *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=_offline_env(),
        cwd=tmp_path,
        timeout=120,
        check=False,
    )


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An offline environment for in-process runs, working in ``tmp_path``."""
    for key in list(os.environ):
        if key.startswith("MEMGRAPH_") or key in _DROPPED:
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def invoke(*args: str, stdin: str | None = None) -> Result:
    """Run the CLI in-process against ``./mem`` (the working directory is ``tmp_path``)."""
    return CliRunner().invoke(cli, ["--dir", "mem", *args], input=stdin, catch_exceptions=False)


# ------------------------------------------------------------------ real processes
def test_a_second_process_recalls_what_the_first_remembered(tmp_path: Path) -> None:
    first = run(tmp_path, "remember", "Alice works at Acme.")
    assert first.returncode == 0, first.stderr
    assert "+ Alice (person): works at Acme" in first.stdout
    assert "+ Alice works_at → Acme" in first.stdout

    second = run(tmp_path, "recall", "where does Alice work?")
    assert second.returncode == 0, second.stderr
    assert "works at Acme" in second.stdout


def test_the_offline_notice_appears_exactly_once_on_stderr(tmp_path: Path) -> None:
    quiet = run(tmp_path, "remember", "Alice works at Acme.")
    verbose = run(tmp_path, "-v", "stats")

    assert quiet.returncode == 0
    assert quiet.stderr.count(OFFLINE_NOTICE) == 1
    assert quiet.stderr.strip() == OFFLINE_NOTICE
    assert verbose.stderr.count(OFFLINE_NOTICE) == 1
    assert "memgraph: memgraph:" not in verbose.stderr


def test_an_explicit_provider_runs_without_the_offline_notice(tmp_path: Path) -> None:
    result = run(tmp_path, "--provider", "mock", "remember", "Alice works at Acme.")

    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


def test_a_bad_scope_id_fails_with_exit_2_naming_the_rule_and_creates_no_files(
    tmp_path: Path,
) -> None:
    before = sorted(tmp_path.iterdir())
    result = run(tmp_path, "--scope", "../x", "remember", "Alice works at Acme.")

    assert result.returncode == 2
    assert result.stderr.startswith("error: invalid scope id '../x'")
    assert SCOPE_RULE in result.stderr
    assert "Traceback" not in result.stderr
    assert sorted(tmp_path.iterdir()) == before
    assert not (tmp_path / "x").exists()


def test_remember_reads_the_text_from_stdin(tmp_path: Path) -> None:
    dash = run(tmp_path, "remember", "-", stdin="Alice works at Acme.\n")
    bare = run(tmp_path, "remember", stdin="Bob lives in Paris.\n")
    assert dash.returncode == 0, dash.stderr
    assert bare.returncode == 0, bare.stderr

    listed = run(tmp_path, "entities")
    assert "Alice (person) — 1 current fact" in listed.stdout
    assert "Bob (person)" in listed.stdout


def test_remember_of_empty_text_exits_2_without_a_traceback(tmp_path: Path) -> None:
    result = run(tmp_path, "remember", "-", stdin="  \n")

    assert result.returncode == 2
    assert "error: text is empty" in result.stderr
    assert "Traceback" not in result.stderr


def test_search_with_episodes_shows_the_text_the_fact_came_from(tmp_path: Path) -> None:
    said = "Alice works at Acme. She enjoys climbing."
    assert run(tmp_path, "remember", said, "--source", "chat").returncode == 0

    result = run(tmp_path, "search", "Alice", "--episodes")

    assert result.returncode == 0, result.stderr
    assert "Alice (person): works at Acme" in result.stdout
    assert said in result.stdout


# ------------------------------------------------------------------- in-process
def test_scopes_never_see_each_other(offline: Path) -> None:
    assert invoke("--scope", "alice", "remember", "Alice works at Acme.").exit_code == 0
    assert invoke("--scope", "bob", "remember", "Bob likes tea.").exit_code == 0

    other = invoke("--scope", "bob", "recall", "where does Alice work?", "--no-rerank")
    assert other.exit_code == 0
    assert "Acme" not in other.stdout
    assert invoke("--scope", "bob", "entities").stdout == "Bob (person) — 1 current fact\n"
    assert "entities: 1" in invoke("--scope", "bob", "stats").stdout
    assert "Alice (person)" in invoke("--scope", "alice", "entities").stdout


def test_global_options_are_accepted_after_the_subcommand(offline: Path) -> None:
    invoke("remember", "Alice works at Acme.", "--scope", "team")

    found = invoke("recall", "Alice", "--scope", "team", "--no-rerank")
    missed = invoke("recall", "Alice", "--no-rerank")

    assert "works at Acme" in found.stdout
    assert missed.stdout == ""


def test_the_scope_can_come_from_the_environment(offline: Path) -> None:
    runner = CliRunner(env={"MEMGRAPH_SCOPE": "team"})
    runner.invoke(cli, ["--dir", "mem", "remember", "Alice works at Acme."])

    found = invoke("--scope", "team", "recall", "Alice", "--no-rerank")

    assert "works at Acme" in found.stdout
    assert invoke("recall", "Alice", "--no-rerank").stdout == ""


def test_forget_expires_a_fact_that_history_still_shows(offline: Path) -> None:
    invoke("remember", "Alice works at Acme.")

    forgot = invoke("forget", "Alice works at Acme")
    assert forgot.exit_code == 0
    assert "- expired: Alice: works at Acme" in forgot.stdout

    assert "works at Acme" not in invoke("recall", "Alice", "--no-rerank").stdout
    history = invoke("history", "Alice")
    assert history.exit_code == 0
    line = next(x for x in history.stdout.splitlines() if x.endswith("works at Acme"))
    assert "→ current" not in line
    assert "→ current" not in history.stdout


def test_history_marks_the_current_version_and_keeps_the_old_one(offline: Path) -> None:
    invoke("remember", "--at", "2024-01-01T00:00:00Z", "Alice works at Acme.")
    invoke("remember", "--at", "2025-01-01T00:00:00Z", "Alice no longer works at Acme.")

    lines = invoke("history", "Alice").stdout.splitlines()

    assert lines[0] == "Alice (person)"
    versions = [x for x in lines if "works at Acme" in x]
    assert versions and versions[0].strip().startswith("2024-01-01T00:00:00.000Z → 2025-01-01")


def test_json_output_parses_with_snake_case_keys(offline: Path) -> None:
    remembered = orjson.loads(invoke("--json", "remember", "Alice works at Acme.").stdout)
    assert remembered["added_entities"][0]["name"] in {"Alice", "Acme"}
    assert remembered["episode"]["text"] == "Alice works at Acme."
    assert remembered["added_relations"][0]["type"] == "works_at"

    hits = orjson.loads(invoke("search", "Alice", "--json", "--episodes").stdout)
    assert hits and hits[0]["entity"]["name"] == "Alice"
    assert isinstance(hits[0]["tiers"], list)
    assert hits[0]["episode"]["recorded_at"]

    stats = orjson.loads(invoke("--json", "stats").stdout)
    assert stats["entities"] == 2
    history = orjson.loads(invoke("--json", "history", "Alice").stdout)
    assert history["observations"][0]["valid_to"] is None
    recalled = orjson.loads(invoke("--json", "recall", "Alice", "--no-rerank").stdout)
    assert "works at Acme" in recalled["text"]


def test_export_writes_json_to_stdout_and_graphml_that_networkx_reads(offline: Path) -> None:
    invoke("remember", "Alice works at Acme.")

    document = orjson.loads(invoke("export").stdout)
    assert document["scope"] == "default"
    assert [e["text"] for e in document["episodes"]] == ["Alice works at Acme."]

    out = offline / "graph.graphml"
    assert invoke("export", "--format", "graphml", "--output", str(out)).exit_code == 0
    graph = nx.read_graphml(out)
    names = {data["name"] for _, data in graph.nodes(data=True)}
    assert {"Alice", "Acme"} <= names
    assert [d["type"] for _, _, d in graph.edges(data=True)] == ["works_at"]


def test_nothing_new_to_remember_is_said_when_a_fact_repeats(offline: Path) -> None:
    invoke("remember", "Alice works at Acme.")

    again = invoke("remember", "Alice works at Acme.")

    assert again.exit_code == 0
    assert again.stdout.strip() == "nothing new to remember"


def test_history_of_an_unknown_entity_exits_1_with_the_message(offline: Path) -> None:
    invoke("remember", "Alice works at Acme.")
    result = invoke("history", "Nobody")

    assert result.exit_code == 1
    assert "error: no entity named 'Nobody'" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("remember", "x", "--metadata", "{nope"), "not valid JSON"),
        (("remember", "x", "--metadata", "[1]"), "metadata must be a dict"),
        (("remember", "x", "--at", "yesterday"), "is not an ISO-8601 timestamp"),
        (("remember", ""), "text is empty"),
        (("--config", "bad.json", "stats"), "unknown key memory.colour"),
    ],
)
def test_bad_input_exits_2_with_a_message(
    offline: Path, args: tuple[str, ...], message: str
) -> None:
    (offline / "bad.json").write_text('{"memory": {"colour": "blue"}}')

    result = invoke(*args)

    assert result.exit_code == 2
    assert message in result.stderr


def test_an_unknown_provider_exits_3(offline: Path) -> None:
    result = invoke("--provider", "nosuch", "stats")

    assert result.exit_code == 3
    assert "error: unknown provider 'nosuch'" in result.stderr


def test_the_config_file_chooses_the_memory_directory(offline: Path) -> None:
    (offline / "agency.json").write_text('{"memory": {"dir": "from-config"}}')

    result = CliRunner().invoke(cli, ["--config", "agency.json", "remember", "Bob likes tea."])

    assert result.exit_code == 0, result.output
    assert (offline / "from-config" / "default").is_dir()


def test_a_damaged_store_exits_4_and_shows_the_traceback_only_with_verbose(
    offline: Path,
) -> None:
    (offline / "mem" / "default").mkdir(parents=True)
    (offline / "mem" / "default" / "graph.json").write_text("garbage")

    quiet = invoke("stats")
    verbose = invoke("-v", "stats")

    assert quiet.exit_code == verbose.exit_code == 4
    assert "error: " in quiet.stderr and "graph.json" in quiet.stderr
    assert "Traceback" not in quiet.stderr
    assert "Traceback" in verbose.stderr


def test_log_messages_carry_exactly_one_memgraph_prefix(
    offline: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memgraph.engine.memory import Memory

    original = Memory.stats

    def noisy_stats(self: Memory) -> dict[str, int]:
        logging.getLogger("memgraph").info("plain message")
        logging.getLogger("memgraph").warning("memgraph: prefixed message")
        return original(self)

    invoke("remember", "Alice works at Acme.")
    monkeypatch.setattr(Memory, "stats", noisy_stats)

    quiet = invoke("stats").stderr.splitlines()
    verbose = invoke("-v", "stats").stderr.splitlines()

    assert "memgraph: prefixed message" in quiet
    assert "memgraph: plain message" not in quiet
    assert "memgraph: plain message" in verbose
    assert verbose.count(OFFLINE_NOTICE) == 1


# ------------------------------------------------------- reads that find nothing
@pytest.mark.parametrize(
    "command",
    [
        ("recall", "where does Alice work?"),
        ("search", "Alice"),
        ("forget", "Alice's job"),
        ("entities",),
        ("history", "Alice"),
        ("export",),
        ("stats",),
    ],
)
def test_a_read_of_a_scope_that_does_not_exist_exits_1_naming_the_scopes_that_do(
    offline: Path, command: tuple[str, ...]
) -> None:
    invoke("--scope", "alice", "remember", "Alice works at Acme.")
    invoke("--scope", "team", "remember", "Bob works at Globex.")

    result = invoke("--scope", "alcie", *command)

    assert result.exit_code == 1
    assert result.stdout == ""
    error = result.stderr.splitlines()[-1]
    assert error.startswith("error: no scope 'alcie' in mem; existing scopes: alice, team.")
    assert not (offline / "mem" / "alcie").exists()


def test_a_read_in_a_directory_without_scopes_says_none_exist_yet(offline: Path) -> None:
    result = invoke("stats")

    assert result.exit_code == 1
    assert "existing scopes: none yet" in result.stderr


@pytest.mark.parametrize(
    "command",
    [("recall", ""), ("search", "  "), ("forget", ""), ("history", ""), ("remember", "")],
)
def test_an_empty_query_exits_2_everywhere(offline: Path, command: tuple[str, ...]) -> None:
    invoke("remember", "Alice works at Acme.")

    result = invoke(*command)

    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1].startswith("error: ")
    assert "empty" in result.stderr


def test_recall_and_search_say_when_nothing_relevant_is_remembered(offline: Path) -> None:
    invoke("remember", "Alice works at Acme.")

    recalled = invoke("recall", "what is the weather like on Mars?")
    searched = invoke("search", "weather on Mars")

    assert recalled.exit_code == searched.exit_code == 0
    assert recalled.stdout == searched.stdout == "(nothing relevant remembered)\n"
    assert orjson.loads(invoke("--json", "recall", "weather on Mars").stdout)["text"] == ""
    assert orjson.loads(invoke("--json", "search", "weather on Mars").stdout) == []


# ------------------------------------------------------------------------ demo
def test_the_demo_runs_in_a_temporary_directory_says_where_and_leaves_no_trace(
    tmp_path: Path,
) -> None:
    before = sorted(p.name for p in tmp_path.iterdir())

    def demo() -> subprocess.CompletedProcess[str]:
        env = {**_offline_env(), "MEMGRAPH_DIR": str(tmp_path / "mine")}
        command = [sys.executable, "-m", "memgraph", "demo"]
        return subprocess.run(
            command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False
        )

    first, second = demo(), demo()

    assert first.returncode == 0, first.stderr
    same = second.stdout.replace(str(Path(_demo_dir(second)).parent), "DIR")
    assert _TIMES.sub("T", first.stdout.replace(str(Path(_demo_dir(first)).parent), "DIR")) == (
        _TIMES.sub("T", same)
    )
    where = _demo_dir(first)
    assert where.endswith("/demo") and "memgraph-demo-" in where
    assert "a temporary directory, deleted when the demo ends" in first.stdout
    assert not Path(where).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nor in $MEMGRAPH_DIR
    assert re.search(
        r"recall: Where does Alice work\?\nAlice \(person\):\n  - \[\d{1,2} \w+ \d{4}\] works at Globex",
        first.stdout,
    )
    assert "(nothing relevant remembered)" in first.stdout


_TIMES = re.compile(r"\d{4}-\d\d-\d\dT[\d:.]+Z")


def _demo_dir(result: subprocess.CompletedProcess[str]) -> str:
    first_line = result.stdout.splitlines()[0]
    assert first_line.startswith("memory: ")
    return first_line.removeprefix("memory: ").split("  (")[0]


def test_the_demo_never_writes_the_default_scope_even_with_a_scope_in_the_environment(
    offline: Path,
) -> None:
    runner = CliRunner(env={"MEMGRAPH_SCOPE": "alice"})
    runner.invoke(cli, ["--dir", "mem", "remember", "Alice works at Initech."])

    kept = runner.invoke(cli, ["--dir", "mem", "demo"])

    assert kept.exit_code == 0, kept.output
    assert kept.stdout.startswith(f"memory: {Path('mem') / 'demo'}  (kept after the demo")
    assert sorted(p.name for p in (offline / "mem").iterdir()) == ["alice", "demo"]
    alice = invoke("--scope", "alice", "recall", "where does Alice work", "--no-rerank")
    assert "works at Initech" in alice.stdout and "Globex" not in alice.stdout


def test_the_demo_refuses_a_scope_that_already_holds_data(offline: Path) -> None:
    assert invoke("demo").exit_code == 0
    before = invoke("--scope", "demo", "export").stdout

    again = invoke("demo")
    named = invoke("demo", "--scope", "demo2")

    assert again.exit_code == 2
    assert "already holds data" in again.stderr
    assert invoke("--scope", "demo", "export").stdout == before
    assert named.exit_code == 0 and "memory: mem/demo2" in named.stdout


# ------------------------------------------------------------- no key, no model
def test_commands_that_need_no_model_work_without_the_api_key(
    offline: Path,
    openai_server: OpenAITestServer,  # noqa: F811 - the imported fixture
) -> None:
    extraction = {
        "entities": [{"name": "Alice", "type": "person", "observations": ["works at Acme"]}],
        "relations": [],
        "expirations": [],
    }
    openai_server.enqueue_chat(orjson.dumps(extraction).decode())
    local = {
        "memory": {"dir": "mem", "provider": {"name": "openai", "baseUrl": openai_server.base_url}}
    }
    (offline / "local.json").write_text(orjson.dumps(local).decode())
    wrote = CliRunner().invoke(cli, ["--config", "local.json", "remember", "Alice works at Acme."])
    assert wrote.exit_code == 0, wrote.output
    remote = {"memory": {"dir": "mem", "provider": {"name": "openai", "apiKeyEnv": "ACME_KEY"}}}
    (offline / "agency.json").write_text(orjson.dumps(remote).decode())

    for command in (["stats"], ["entities"], ["history", "Alice"], ["export"]):
        result = CliRunner().invoke(cli, command)
        assert result.exit_code == 0, (command, result.output)
    assert "Alice (person) — 1 current fact" in CliRunner().invoke(cli, ["entities"]).stdout
    needs_model = CliRunner().invoke(cli, ["remember", "Bob works at Globex."])

    assert needs_model.exit_code == 3
    assert "set the ACME_KEY environment variable" in needs_model.stderr
    assert "provider.apiKeyEnv" in needs_model.stderr
    assert "api_key_env" not in needs_model.stderr
