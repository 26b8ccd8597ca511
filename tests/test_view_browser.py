"""The graph view in a real browser: headless Chromium opens the generated file and we read it.

Chromium is Debian's ``chromium`` package at ``/usr/bin/chromium`` (or the
path in ``MEMGRAPH_TEST_CHROMIUM``), driven by Playwright for Python (the
``dev`` extra; Playwright's own browser download is never used). Without
them these tests are skipped saying why, except when ``MEMGRAPH_TEST_CHROMIUM``
is set (as ``.ci/run`` does): then a missing browser is a failure.

The page's screenshot lands in ``tests/output/view.png`` (git-ignored; CI
keeps it as an artifact).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memgraph import Memory
from tests.view_scope import BEFORE_GLOBEX, HOSTILE_FACT, HOSTILE_NAME, HOSTILE_TEXT, open_story

CHROMIUM = Path(os.environ.get("MEMGRAPH_TEST_CHROMIUM") or "/usr/bin/chromium")
OUTPUT = Path(__file__).resolve().parent / "output"
FLAGS = [  # --headless comes from Playwright's headless=True
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# The page's CSP forbids evaluating strings, which wait_for_function relies on; this waits in
# the page, one animation frame at a time, until the layout has settled.
SETTLED = """() => new Promise((resolve) => {
    const check = () => window.memgraphView.settled() ? resolve(true) : requestAnimationFrame(check);
    check();
})"""


def _missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (pip install -e '.[dev]')"
    if not os.access(CHROMIUM, os.X_OK):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run installs it)"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    missing = _missing()
    if missing and os.environ.get("MEMGRAPH_TEST_CHROMIUM"):
        pytest.fail(f"MEMGRAPH_TEST_CHROMIUM is set but {missing}")
    if missing:
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="memgraph-test-chromium-")
    try:
        with sync_playwright() as playwright:
            context = playwright.chromium.launch_persistent_context(
                profile,
                executable_path=str(CHROMIUM),
                headless=True,
                args=FLAGS,
                viewport={"width": 1280, "height": 800},
            )
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def story_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("view") / "mem"
    open_story(root).close()
    return root


@pytest.fixture(scope="module")
def page_file(story_dir: Path) -> Path:
    with open_story(story_dir) as memory:
        return memory.view().save(story_dir.parent / "story.html")


@pytest.fixture
def memory(story_dir: Path) -> Iterator[Memory]:
    with open_story(story_dir) as opened:
        yield opened


class Page:
    """One opened view, with the console errors and dialogs it produced."""

    def __init__(self, context: Any, path: Path) -> None:
        self.errors: list[str] = []
        self.page = context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on(
            "dialog", lambda dialog: (self.errors.append(dialog.message), dialog.dismiss())
        )
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("body[data-ready=true]")
        self.page.evaluate(SETTLED)

    def api(self, call: str, *args: Any) -> Any:
        return self.page.evaluate(f"(args) => window.memgraphView.{call}(...args)", list(args))

    def counts(self) -> dict[str, int]:
        return dict(self.api("counts"))

    def search(self, text: str) -> None:
        self.page.fill("#search", text)
        self.page.press("#search", "Enter")

    def facts(self, list_id: str = "facts") -> list[str]:
        return list(self.page.locator(f"#{list_id} li .content").all_text_contents())

    def set_time(self, moment: str | None) -> None:
        stops = self.api("stops")
        position = len(stops) if moment is None else stops.index(moment)
        self.page.locator("#time").fill(str(position))  # fires input, as a person dragging does

    def close(self) -> None:
        self.page.close()


@pytest.fixture
def view(browser: Any, page_file: Path) -> Iterator[Page]:
    opened = Page(browser, page_file)
    try:
        yield opened
        assert opened.errors == []  # no console errors, no dialogs
    finally:
        opened.close()


def test_the_page_draws_every_entity_and_current_relation(view: Page, memory: Memory) -> None:
    current = {
        relation.id
        for entity in memory.entities()
        for relation in memory.history(entity.name).relations
        if relation.current
    }

    assert view.counts()["nodes"] == len(memory.entities()) == 9
    assert view.counts()["edges"] == len(current)
    assert view.page.text_content("#counts").startswith("9 entities")
    assert view.page.locator("canvas#graph").bounding_box()["width"] > 500
    OUTPUT.mkdir(exist_ok=True)
    view.search("Alice")
    view.page.screenshot(path=str(OUTPUT / "view.png"))


def test_clicking_a_node_shows_its_facts_dates_and_the_text_each_came_from(view: Page) -> None:
    where = view.api("screenPosition", "Alice")
    view.page.mouse.click(where["x"], where["y"])

    assert view.page.text_content("#entity-name") == "Alice"
    assert "works at Globex" in view.facts()
    assert "works at Acme" not in view.facts()
    globex = view.page.locator("#facts li", has_text="works at Globex")
    assert globex.locator(".when").first.text_content() == (
        "2024-06-01 00:00:00 UTC → current · source main"
    )
    assert globex.locator("blockquote").text_content() == "Alice works at Globex now."
    assert view.facts("other-facts") == ["works at Acme"]  # superseded, kept aside
    assert "mentors → Bob" in view.page.text_content("#relations")


def test_the_search_box_selects_an_entity_and_a_relation_leads_to_its_neighbour(
    view: Page,
) -> None:
    view.search("bo")
    assert view.page.text_content("#entity-name") == "Bob"
    assert sorted(view.facts()) == ["lives in Paris", "works at Initech"]

    view.page.locator("#relations button", has_text="Paris").click()
    assert view.page.text_content("#entity-name") == "Paris"


def test_the_time_slider_shows_the_graph_as_of_a_past_moment(view: Page, memory: Memory) -> None:
    now = view.counts()
    view.search("Alice")

    view.set_time(BEFORE_GLOBEX)

    then = memory.as_of(BEFORE_GLOBEX)
    assert sorted(view.facts()) == sorted(o.content for o in then.entity("Alice").observations)
    assert "works at Acme" in view.facts() and "works at Globex" not in view.facts()
    assert "Facts as of 2024-02-01" in view.page.text_content("#facts-title")
    past = view.counts()
    assert past["edges"] < now["edges"]
    assert {e.name for e in then.entities()} <= set(view.api("visibleNames"))
    assert "Globex" not in view.api("visibleNames")

    view.set_time(None)
    assert view.counts() == now
    assert "works at Globex" in view.facts()


def test_type_and_source_filters_hide_what_they_untick(view: Page) -> None:
    everything = view.counts()

    view.page.locator("#sources input[data-name=slack]").uncheck()
    without_slack = view.counts()
    view.search("Bob")
    assert view.facts() == []  # Bob's facts all came from slack
    assert without_slack["facts"] == everything["facts"] - 2
    view.page.locator("#sources input[data-name=slack]").check()

    view.page.locator("#types input[data-name=organization]").uncheck()
    assert view.counts()["nodes"] == everything["nodes"] - 3  # Acme, Globex, Initech
    assert "Acme" not in view.api("visibleNames")


def test_wheel_zooms_background_drag_pans_and_a_dragged_node_stays_put(view: Page) -> None:
    box = view.page.locator("#graph").bounding_box()
    corner = (box["x"] + 8, box["y"] + 8)  # the layout leaves the edges empty
    before = view.api("camera")

    view.page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    view.page.mouse.wheel(0, -400)
    zoomed = view.api("camera")
    assert zoomed["k"] > before["k"] * 1.5

    view.page.mouse.move(*corner)
    view.page.mouse.down()
    view.page.mouse.move(corner[0] + 60, corner[1] + 40, steps=5)
    view.page.mouse.up()
    panned = view.api("camera")
    assert (panned["tx"] - zoomed["tx"], panned["ty"] - zoomed["ty"]) == (60, 40)

    start = view.api("screenPosition", "Bob")
    view.page.mouse.move(start["x"], start["y"])
    view.page.mouse.down()
    view.page.mouse.move(start["x"] + 50, start["y"] + 30, steps=5)
    view.page.mouse.up()
    view.page.evaluate(SETTLED)
    moved = view.api("screenPosition", "Bob")
    assert abs(moved["x"] - (start["x"] + 50)) < 1 and abs(moved["y"] - (start["y"] + 30)) < 1


def test_hostile_names_and_texts_show_as_text_and_never_run(view: Page) -> None:
    view.search("</script>")

    assert view.page.text_content("#entity-name") == HOSTILE_NAME
    assert view.facts() == [HOSTILE_FACT]
    view.search("Mallory")
    assert view.page.locator("#facts blockquote").text_content() == HOSTILE_TEXT
    assert view.page.evaluate("typeof window.__pwned") == "undefined"
    assert view.page.locator("#panel img, #panel script").count() == 0
