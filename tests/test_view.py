"""The graph view without a browser: its data, the page's safety, ``Memory.view()`` and the CLI.

What the page does when it runs is tested in a real browser in
``test_view_browser.py``.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
import stat
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from memgraph import Memory
from memgraph.cli import cli
from memgraph.view import GraphView, build_payload, render_html
from tests.view_scope import (
    BEFORE_GLOBEX,
    HOSTILE_FACT,
    HOSTILE_NAME,
    HOSTILE_TEXT,
    SCOPE,
    open_story,
)

DATA_BLOCK = re.compile(
    r'<script id="memgraph-data" type="application/json">(.*?)</script>', re.DOTALL
)


@pytest.fixture
def story(tmp_path: Path) -> Any:
    with open_story(tmp_path / "mem") as memory:
        yield memory


def embedded(page: str) -> Any:
    """The JSON the page carries, read back the way the page's script reads it."""
    found = DATA_BLOCK.search(page)
    assert found is not None
    return orjson.loads(found.group(1))


def group(pattern: str, text: str) -> str:
    """The first group of ``pattern``'s first match in ``text`` (which must match)."""
    found = re.search(pattern, text, re.DOTALL)
    assert found is not None, pattern
    return found.group(1)


def facts_of(payload: dict[str, Any], name: str) -> dict[str, list[Any]]:
    index = next(n for n, e in enumerate(payload["entities"]) if e[0] == name)
    return {f[1]: f for f in payload["facts"] if f[0] == index}


# ------------------------------------------------------------------------ data
def test_the_payload_keeps_expired_facts_with_their_dates_and_source_texts(story: Memory) -> None:
    payload = build_payload(story)

    alice = facts_of(payload, "Alice")
    acme, globex = alice["works at Acme"], alice["works at Globex"]
    assert acme[2:4] == [BEFORE_GLOBEX, "2024-06-01T00:00:00.000Z"]
    assert globex[2:4] == ["2024-06-01T00:00:00.000Z", None]
    assert payload["episodes"][globex[5]][1] == "Alice works at Globex now."
    assert payload["episodes"][acme[5]][1] == "Alice works at Acme."
    works_at = [r for r in payload["relations"] if r[2] == "works_at"]
    assert sorted(r[4] is None for r in works_at) == [False, True, True, True]  # Acme ended
    assert payload["total"] == {"entities": 9, "relations": len(payload["relations"])}


def test_the_payload_names_types_and_sources_most_frequent_first(story: Memory) -> None:
    payload = build_payload(story)

    assert payload["sources"] == ["main", "slack"]
    assert payload["types"][0] in {"person", "organization"}
    bob = facts_of(payload, "Bob")
    assert {payload["sources"][f[4]] for f in bob.values()} == {"slack"}


def test_beyond_the_cap_the_most_connected_entities_stay(story: Memory) -> None:
    payload = build_payload(story, max_entities=2)

    assert [e[0] for e in payload["entities"]] == ["Alice", "Bob"]
    assert payload["total"]["entities"] == 9
    assert [(r[0], r[1], r[2]) for r in payload["relations"]] == [(0, 1, "mentors")]


def test_a_cap_below_one_is_refused(story: Memory) -> None:
    with pytest.raises(ValueError, match="max_entities"):
        story.view(max_entities=0)


def test_an_empty_scope_gives_a_page_with_nothing_on_it(tmp_path: Path) -> None:
    with Memory(tmp_path / "mem", scope="empty", provider="mock", config={}) as memory:
        page = memory.view()

    assert (page.entities, page.total_entities, page.relations) == (0, 0, 0)
    assert embedded(page.html)["entities"] == []
    assert not (tmp_path / "mem" / "empty").exists()  # reading created nothing


# ---------------------------------------------------------------------- safety
def test_hostile_names_and_texts_cannot_close_the_data_block(story: Memory) -> None:
    page = story.view().html

    assert page.count("</script>") == 2  # the data block's end and the script's end
    assert "<!--" not in page
    assert "<img" not in page
    payload = embedded(page)
    assert HOSTILE_NAME in [e[0] for e in payload["entities"]]
    assert HOSTILE_FACT in facts_of(payload, HOSTILE_NAME)
    assert HOSTILE_TEXT in [e[1] for e in payload["episodes"]]


def test_the_page_allows_only_its_own_script_and_style_and_no_network(story: Memory) -> None:
    page = story.view().html
    policy = html.unescape(group(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page))

    def digest(tag: str) -> str:
        body = group(rf"<{tag}>(.*?)</{tag}>", page)
        return "'sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() + "'"

    assert "default-src 'none'" in policy
    assert f"script-src {digest('script')};" in policy
    assert f"style-src {digest('style')};" in policy
    assert not re.search(r"https?://|<link|\bsrc=", DATA_BLOCK.sub("", page))


def test_render_html_fills_every_slot_once() -> None:
    page = render_html({"scope": "{{data}}", "entities": []})

    assert page.count("{{") == 2  # the scope's own text, in the title and in the data
    assert "<title>memgraph · {{data}}</title>" in page
    assert embedded(page) == {"scope": "{{data}}", "entities": []}


# ------------------------------------------------------------- Memory.view()
def test_memory_view_is_a_page_a_notebook_shows_in_a_sandboxed_frame(story: Memory) -> None:
    page = story.view()

    assert isinstance(page, GraphView)
    assert str(page) == page.html and page.html.startswith("<!DOCTYPE html>")
    frame = page._repr_html_()
    assert frame.startswith("<iframe srcdoc=") and 'sandbox="allow-scripts"' in frame
    assert "<script" not in frame  # the page is an escaped attribute, not markup
    assert html.unescape(group(r'srcdoc="([^"]*)"', frame)) == page.html


def test_save_writes_an_owner_only_file(story: Memory, tmp_path: Path) -> None:
    target = story.view().save(tmp_path / "graph.html")

    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


# ------------------------------------------------------------------------- CLI
def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, ["--dir", "mem", "--scope", SCOPE, *args])


def test_memgraph_view_writes_memgraph_scope_html_here_and_says_where(tmp_path: Path) -> None:
    open_story(tmp_path / "mem").close()

    result = invoke("view")

    target = tmp_path / f"memgraph-{SCOPE}.html"
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"wrote {target} — 9 entities, ")
    assert embedded(target.read_text(encoding="utf-8"))["scope"] == SCOPE


def test_memgraph_view_output_and_json_summary(tmp_path: Path) -> None:
    open_story(tmp_path / "mem").close()

    result = invoke("view", "-o", "out/graph.html", "--json", "--max-entities", "3")

    (tmp_path / "out").mkdir(exist_ok=True)
    assert result.exit_code == 1  # out/ does not exist: an OSError, reported, no traceback
    assert "\nerror: " in result.stderr and "Traceback" not in result.stderr
    result = invoke("view", "-o", "out/graph.html", "--json", "--max-entities", "3")
    assert result.exit_code == 0, result.output
    summary = orjson.loads(result.stdout)
    assert summary == {
        "path": str(tmp_path / "out" / "graph.html"),
        "entities": 3,
        "total_entities": 9,
        "relations": summary["relations"],
    }


def test_memgraph_view_open_hands_the_file_url_to_the_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url: opened.append(url) or True)

    result = invoke("view", "--open")

    assert result.exit_code == 0, result.output
    assert opened == [(tmp_path / f"memgraph-{SCOPE}.html").as_uri()]


def test_memgraph_view_exits_2_on_a_bad_scope_or_cap(tmp_path: Path) -> None:
    bad_scope = CliRunner().invoke(cli, ["--dir", "mem", "--scope", "../x", "view"])
    bad_cap = invoke("view", "--max-entities", "0")

    assert bad_scope.exit_code == 2 and "invalid scope id" in bad_scope.stderr
    assert bad_cap.exit_code == 2
    assert not list(tmp_path.glob("*.html"))


def test_memgraph_view_says_when_it_capped_the_entities(tmp_path: Path) -> None:
    open_story(tmp_path / "mem").close()

    result = invoke("view", "--max-entities", "2")

    assert result.exit_code == 0, result.output
    assert "— 2 entities (the most connected of 9), 1 relation\n" in result.stdout
