"""Shared fixtures: canned payloads from fixtures/, and offline providers."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.postgres_server import postgres_dsn  # noqa: F401  (the session fixture, for every module)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    # A suite started as a background job ignores Ctrl-C, and every process it starts
    # would inherit that: the tests that press Ctrl-C on a subprocess need it heard.
    signal.signal(signal.SIGINT, signal.default_int_handler)


def fixture_path(name: str) -> Path:
    """The path of a file under fixtures/."""
    return FIXTURES / name


def load_fixture(name: str) -> Any:
    """A JSON fixture under fixtures/, parsed."""
    return orjson.loads(fixture_path(name).read_bytes())


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No test sees the developer's keys, provider choice or memory directory."""
    for name in (
        "OPENAI_API_KEY",
        "MEMGRAPH_PROVIDER",
        "MEMGRAPH_DIR",
        "MEMGRAPH_SCOPE",
        "MEMGRAPH_STORE",
        "MEMGRAPH_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEMGRAPH_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("MEMGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    yield
