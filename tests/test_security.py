"""Security: owner-only files, API keys that never leak, scopes that never see each
other, and rule conditions that can never run code."""

# The ``openai_server`` fixture is imported; test arguments of that name shadow it.
# ruff: noqa: F811

from __future__ import annotations

import contextlib
import logging
import os
import stat
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memgraph import (
    ConditionError,
    InvalidScope,
    Memory,
    MissingCredentials,
    NotFound,
    ProviderError,
    recall,
    remember,
    set_memory_id,
)
from memgraph import memory as memory_block
from memgraph.admin.doctor import repair_scope
from memgraph.cli import cli
from memgraph.faces.conditions import parse_condition
from memgraph.llm_calls.provider import Provider, resolve_provider
from tests.memory_state import fresh_memory_state  # noqa: F401
from tests.openai_server import (  # noqa: F401
    OpenAITestServer,
    closing_provider,
    openai_server,
)

KEY = "sk-CANARY-7d1e4c9a0b3f5e2d8c6a"


# --------------------------------------------------------------------------- permissions
@pytest.fixture
def open_umask() -> Iterator[None]:
    """Run with umask 0: memgraph must not rely on the caller's umask for privacy."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


def modes(top: Path) -> dict[str, int]:
    found = {}
    for directory, dirs, files in os.walk(top):
        for name in dirs + files:
            path = os.path.join(directory, name)
            found[os.path.relpath(path, top)] = stat.S_IMODE(os.lstat(path).st_mode)
    return found


def test_every_file_and_directory_memgraph_creates_is_owner_only_whatever_the_umask(
    tmp_path: Path, open_umask: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    top = tmp_path / "created"
    root = top / "nested" / "memory"  # memgraph creates every level
    with Memory(root, "alice", provider="mock") as memory:
        for i in range(3):
            memory.remember(f"Person{i} works at Company{i}.")
        memory.kv.remember("colour", "blue")
        memory.note("prefers short answers", category="preference", tags=["style"])
        memory.create_progress("plan", ["one", "two"])
        memory.complete_step("plan", "one", result={"ok": True})
        memory.add_rule("cap", "must", "discount <= 0.2", "pricing")
        memory.checkpoint()  # graph.json, episodes.jsonl, vectors.npy, vectors.json
        memory.remember("Alice likes tea.")  # a new journal after the checkpoint
        memory.save_summary({"summary": "private", "messagesSummarized": 2})
        memory.purge(containing="Person2")  # rewrites every file
    (root / "alice" / "summary.json").write_bytes(b"{damaged")
    report = repair_scope(root, "alice", "mock")  # makes a backup, rewrites files
    assert report.ok and report.backup
    monkeypatch.setenv("MEMGRAPH_STATE_DIR", str(top / "state" / "dir"))
    with Memory.named("notebook", provider="mock") as named:
        named.kv.remember("k", 1)
    found = modes(top)
    names = {Path(p).name for p in found}
    assert {"graph.json", "journal.jsonl", "episodes.jsonl", "vectors.npy", "vectors.json"} <= names
    assert {".lock", "nested", "state"} <= names and report.backup.split("/")[-1] in names
    loose = {path: oct(mode) for path, mode in found.items() if mode not in (0o700, 0o600)}
    assert not loose, f"not owner-only: {loose}"
    for path, mode in found.items():
        expected = 0o700 if (top / path).is_dir() else 0o600
        assert mode == expected, (path, oct(mode))


def test_an_export_written_by_the_cli_is_owner_only(tmp_path: Path, open_umask: None) -> None:
    root = tmp_path / "memory"
    with Memory(root, "alice", provider="mock") as memory:
        memory.remember("Alice works at Acme.")
    out = tmp_path / "alice.json"
    args = ["--dir", str(root), "--scope", "alice", "export", "-o", str(out)]
    assert CliRunner().invoke(cli, args).exit_code == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


# --------------------------------------------------------------------------- API keys
class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def openai(server: OpenAITestServer) -> Provider:
    return resolve_provider(
        "openai:gpt-4o-mini",
        base_url=server.base_url,
        api_key=KEY,
        max_retries=2,
        options={"sleep": Sleeps()},
    )


def leaks(*texts: object) -> list[str]:
    return [str(text)[:200] for text in texts if KEY in str(text)]


def every_file_under(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())


def test_the_api_key_never_appears_in_logs_errors_exports_or_files(
    tmp_path: Path, openai_server: OpenAITestServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger: memgraph, openai, httpx
    root = tmp_path / "memory"
    echo = f"Incorrect API key provided: {KEY}"
    provider = openai(openai_server)
    errors: list[ProviderError] = []
    with closing_provider(provider), Memory(root, "alice", provider=provider) as memory:
        memory.remember("Alice works at Acme.")  # the server's minimal valid reply
        openai_server.enqueue_error("chat", 429, headers={"Retry-After": "1"}, body=echo)
        memory.remember("Bob likes jazz.")  # retried, logged
        for script in (
            [(401, echo)],
            [(503, echo)] * 3,
            [(429, echo)] * 3,
            [(400, echo)],
        ):
            for status, body in script:
                openai_server.enqueue_error("chat", status, body=body)
            with pytest.raises(ProviderError) as caught:
                memory.remember("Carol likes chess.")
            errors.append(caught.value)
        exports = [memory.export("json"), memory.export("graphml")]
        shown = [repr(memory), repr(provider), repr(provider.chat), repr(provider.embedder)]
        shown += [repr(memory.config), memory.recall("alice"), str(memory.memory_summary())]
    assert [type(e).__name__ for e in errors] == [
        "MissingCredentials",
        "ProviderUnavailable",
        "ProviderUnavailable",
        "BadResponse",
    ]
    assert "retrying" in caplog.text
    messages = [str(e) for e in errors] + [repr(e) for e in errors]
    messages += [getattr(e, "raw", "") for e in errors]
    assert not leaks(caplog.text, *messages, *shown)
    assert not leaks(*exports, every_file_under(root))


def test_the_cli_never_prints_the_api_key(
    tmp_path: Path, openai_server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("MEMGRAPH_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("MEMGRAPH_PROVIDER", "openai")
    openai_server.enqueue_error("chat", 401, body=f"Incorrect API key provided: {KEY}")
    base = ["--dir", str(tmp_path / "memory"), "--scope", "alice"]
    failed = CliRunner().invoke(cli, [*base, "remember", "Alice works at Acme."])
    assert failed.exit_code == 3 and "HTTP 401" in failed.output
    worked = CliRunner().invoke(cli, [*base, "remember", "Alice works at Acme."])
    exported = CliRunner().invoke(cli, [*base, "export"])
    assert worked.exit_code == 0 and exported.exit_code == 0
    assert not leaks(failed.output, worked.output, exported.output)


def test_a_traceback_of_a_provider_error_never_shows_the_api_key(
    tmp_path: Path, openai_server: OpenAITestServer
) -> None:
    openai_server.enqueue_error("chat", 401, body=f"Incorrect API key provided: {KEY}")
    with (
        closing_provider(openai(openai_server)) as provider,
        Memory(tmp_path / "memory", "alice", provider=provider) as memory,
        pytest.raises(MissingCredentials) as caught,
    ):
        memory.remember("Alice works at Acme.")
    error = caught.value
    assert not leaks("".join(traceback.format_exception(type(error), error, None)))


# --------------------------------------------------------------------------- scope isolation
SECRET = "zanzibar-42"


@pytest.fixture
def scopes(tmp_path: Path) -> Path:
    """Scope bob holds a secret and a bit of everything; scope alice holds a little."""
    root = tmp_path / "memory"
    with Memory(root, "bob", provider="mock") as bob:
        bob.remember(f"Bob's locker code is {SECRET}.")
        bob.remember("Bob works at Initech.")
        bob.kv.remember("shared-key", SECRET)
        bob.note(f"Bob's pin is {SECRET}", category="context", tags=["secret"])
        bob.create_progress("plan", ["step"])
        bob.add_rule("bob-rule", "must", "amount < 10", "pricing")
        bob.save_summary({"summary": f"Bob said {SECRET}", "messagesSummarized": 2})
        bob.checkpoint()
        bob.remember("Bob likes jazz.")
    with Memory(root, "alice", provider="mock") as alice:
        alice.remember("Alice works at Acme.")
    return root


def bob_ids(root: Path) -> list[str]:
    with Memory(root, "bob", provider="mock") as bob:
        ids = [e.id for e in bob.entities()]
        ids += [o.id for e in bob.entities() for o in e.observations]
        ids += [e.id for e in bob.iter_episodes()]
    return ids


def snapshot(path: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_a_memory_on_one_scope_can_neither_read_nor_change_another(scopes: Path) -> None:
    bob_before = snapshot(scopes / "bob")
    ids = bob_ids(scopes)
    seen: list[Any] = []
    with Memory(scopes, "alice", provider="mock") as alice:
        seen += [alice.recall(f"bob locker code {SECRET}"), alice.recall("where does bob work")]
        seen += [alice.search(f"{SECRET} bob initech jazz", k=50, episodes=True)]
        seen += [alice.entities(), alice.stats(), list(alice.iter_episodes())]
        seen += [alice.export("json"), alice.export("graphml"), alice.known_information()]
        seen += [alice.notes(tags="secret"), alice.notes(search=SECRET), alice.memory_summary()]
        seen += [alice.kv.recall("shared-key"), alice.kv.keys(), alice.kv.history("shared-key")]
        seen += [alice.get_rules(), alice.summary(), alice.as_of("2100-01-01").entities()]
        seen += [[alice.episode(i) for i in ids if i.startswith("episode-")]]
        for name in ("Bob", "Initech"):
            with pytest.raises(NotFound):
                alice.entity(name)
            with pytest.raises(NotFound):
                alice.history(name)
        with pytest.raises(NotFound):
            alice.progress("plan")
        with pytest.raises(NotFound):
            alice.expire_entity("Bob")
        with pytest.raises(NotFound):
            alice.remove_rule("bob-rule")
        # Writes through every public door, aimed at bob's data:
        assert not alice.forget(f"bob's locker code {SECRET}").expired_observations
        assert alice.purge(containing=SECRET) == {
            "entities": 0,
            "observations": 0,
            "relations": 0,
            "episodes": 0,
        }
        with pytest.raises(NotFound):
            alice.purge(entity="Bob")
        for item in ids:  # ids are per-scope: bob's ids name alice's items or nothing
            with contextlib.suppress(NotFound):
                alice.expire(item)
        alice.kv.forget("shared-key")
        alice.kv.remember("shared-key", "alice's own value")
        alice.remember("Bob is Alice's colleague.")  # alice's own Bob, not bob's
        alice.note("alice's note", category="context")
        alice.save_summary({"summary": "alice's summary", "messagesSummarized": 1})
        alice.checkpoint()
    assert not [str(s)[:200] for s in seen if SECRET in str(s) or "Initech" in str(s)]
    assert snapshot(scopes / "bob") == bob_before, "scope bob is byte-identical"
    alice_files = b"".join(snapshot(scopes / "alice").values())
    assert SECRET.encode() not in alice_files and b"Initech" not in alice_files
    with Memory(scopes, "bob", provider="mock") as bob:
        assert bob.kv.recall("shared-key") == SECRET
        assert [o.content for o in bob.entity("Bob").current_observations][:2] == [
            f"locker code is {SECRET}",
            "works at Initech",
        ]


def test_the_module_level_api_keeps_scopes_apart(scopes: Path) -> None:
    bob_before = snapshot(scopes / "bob")
    with memory_block(dir=str(scopes), provider="mock", approve=True):
        set_memory_id("alice")
        assert SECRET not in recall(f"bob locker code {SECRET}", approve=True)
        remember(f"Alice heard the code {SECRET[:4]}.", approve=True)
        with pytest.raises(InvalidScope):
            set_memory_id("../bob")
    assert snapshot(scopes / "bob") == bob_before


# --------------------------------------------------------------------------- rule conditions
PAYLOADS = [
    "__import__('os').system('touch {sentinel}')",
    "open('{sentinel}', 'w')",
    "eval('1') == 1",
    "exec('import os')",
    "().__class__.__bases__[0].__subclasses__()",
    "a.__class__.__init__.__globals__",
    "lambda: 1",
    "[x for x in (1, 2)]",
    "1 if true else 2",
    "a; import os",
    "a\nimport os",
    "f'{{a}}' == 'x'",
    "b'x' == 'x'",
    "a[0] == 1",
    "a ** 2 > 1",
    "a @ b",
    "a := 1",
    "{{'a': 1}} == a",
    "globals()",
    "__builtins__",
    "import os",
    "a.__dict__ == 1",
]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_rule_condition_can_never_run_code(tmp_path: Path, payload: str) -> None:
    sentinel = tmp_path / "pwned"
    condition = payload.format(sentinel=sentinel)
    with Memory(tmp_path / "memory", "alice", provider="mock") as memory:
        try:
            memory.add_rule("evil", "must", condition, "pricing")
        except ConditionError:
            pass  # refused at add time
        else:  # it parsed as plain data lookups: evaluating it runs nothing either
            context = {"a": {"__class__": 1, "__dict__": 1}, "__builtins__": 1}
            with contextlib.suppress(ConditionError):
                memory.check_rules("pricing", context)
    assert not sentinel.exists()


class Tripwire:
    """A context value whose operators would record being called."""

    called = False

    def __lt__(self, other: object) -> bool:
        Tripwire.called = True
        return True

    __gt__ = __le__ = __ge__ = __add__ = __mul__ = __lt__  # type: ignore[assignment]


@pytest.mark.parametrize("condition", ["a < 1", "a >= 'x'", "a + 1 > 0", "a * 2 > 0", "-a < 0"])
def test_a_condition_never_calls_operators_of_unexpected_context_values(condition: str) -> None:
    Tripwire.called = False
    with pytest.raises(ConditionError):
        parse_condition(condition).evaluate({"a": Tripwire()})
    assert not Tripwire.called


@pytest.mark.parametrize("condition", ["9" * 400 + " / 1 > 0", "9" * 400 + " + 0.5 > 0"])
def test_arithmetic_overflow_in_a_condition_is_a_condition_error(condition: str) -> None:
    with pytest.raises(ConditionError):
        parse_condition(condition).evaluate({})
