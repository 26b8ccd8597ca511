"""The graph view's cost: building the page, its size, and how it runs in a real browser.

``python -m bench.view`` (from the repository root) builds scopes of the
seeded ``facts`` workload with 1,000, 5,000 and 20,000 entities (the last to
measure the cap) and one of the ``conversation`` workload with about 5,000
entities around a single hub (``User``, linked to everyone); each is seeded at
the store level, then 10 % of its entities lose a fact through
``Memory.expire``, so the time slider has history to show. For each it:

* times ``Memory.view()`` (median of 3, the scope already open; wall and CPU
  time, the latter less sensitive to other load on the machine), split into
  reading the scope (``build_payload``) and writing the page (``render_html``);
* writes the page and reports its size;
* with Chromium at ``/usr/bin/chromium`` and Playwright installed (the ``dev``
  extra), opens the page headless (software rendering, ``--disable-gpu``) and
  reports: load to first frame, the layout's time to settle, ms per layout
  tick, frames/s while it settles, the script's ms per full redraw, and
  frames/s when every frame redraws everything, while the view pans (frames
  shift a snapshot, as the page does until the camera stops) and while a node
  is dragged (up to 2,000 entities a drag also runs the layout). Frames are
  driven by animation frames inside the page, so rasterizing counts and
  Playwright's round trips do not. Last, the time a search selection and a
  time-slider move take to update the page (the script's part; the drawing
  follows in the next frame).

Options: ``--sizes 1k,5k,20k`` (facts workload), ``--workloads
facts,conversation``, ``--no-browser``, ``--out DIR`` (keeps the
pages; default a temporary directory). It measures and prints a markdown
table; it does not gate.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.build import open_memory, seed_scope
from bench.scripted import bench_provider
from bench.workload import make_workload
from memgraph.view import build_payload, render_html

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Waits in the page (the page's CSP forbids the string evaluation wait_for_function uses).
SETTLED = """() => new Promise((resolve) => {
    const check = () => window.memgraphView.settled() ? resolve(true) : requestAnimationFrame(check);
    check();
})"""
EXPIRED_SHARE = 10  # percent of facts expired, so the page has history
FACTS_PER_ENTITY = {"facts": 2.0, "conversation": 4.37}  # observations per entity, measured


def _size(text: str) -> int:
    text = text.strip().lower()
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("km")) * scale)


def build(root: Path, entities: int, workload_name: str = "facts") -> str:
    """A scope of about ``entities`` entities.

    ``facts``: people with two facts each and one link to an earlier one;
    ``conversation``: one ``User`` hub linked to everyone else, holding about
    a quarter of all facts.
    """
    scope = f"view-{workload_name}-{entities}"
    provider, _chat, embedder, _clock = bench_provider(32)
    workload = make_workload(workload_name)
    per_entity = FACTS_PER_ENTITY[workload_name]
    seed_scope(root, scope, workload.until(int(per_entity * entities)), embedder)
    with open_memory(root, scope, provider) as memory:
        ids = [
            obs.id
            for n, entity in enumerate(memory.entities())
            for obs in entity.observations[:1]
            if n % (100 // EXPIRED_SHARE) == 0
        ]
        memory.expire(*ids)
    return scope


def time_build(root: Path, scope: str, repeat: int = 3) -> dict[str, Any]:
    provider, *_ = bench_provider(32)
    with open_memory(root, scope, provider) as memory:
        memory.entities()  # the scope is open and loaded, as in a running program
        totals, cpus, reads, renders = [], [], [], []
        html = ""
        for _ in range(repeat):
            started = time.perf_counter()
            payload = build_payload(memory)
            read = time.perf_counter()
            html = render_html(payload)
            done = time.perf_counter()
            reads.append(read - started)
            renders.append(done - read)
            started, cpu = time.perf_counter(), time.process_time()
            page = memory.view()
            totals.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu)
        stats = memory.stats()
    return {
        "entities": stats["entities"],
        "shown": page.entities,
        "facts": stats["observations"],
        "relations": stats["relations"],
        "view_s": statistics.median(totals),
        "view_cpu_s": statistics.median(cpus),
        "read_s": statistics.median(reads),
        "render_s": statistics.median(renders),
        "bytes": len(page.html.encode()),
        "html": html,
    }


def measure_browser(path: Path) -> dict[str, Any]:
    """Open ``path`` in headless Chromium and read the page's own counters."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="memgraph-bench-chromium-")
    try:
        with sync_playwright() as playwright:
            context = playwright.chromium.launch_persistent_context(
                profile,
                executable_path=str(CHROMIUM),
                headless=True,
                args=CHROMIUM_FLAGS[1:],
                viewport={"width": 1400, "height": 900},
            )
            try:
                page = context.new_page()
                errors: list[str] = []
                page.on("pageerror", lambda error: errors.append(str(error)))
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                page.goto(path.as_uri())
                page.wait_for_selector("body[data-ready=true]", timeout=120_000)
                ready_ms = page.evaluate("performance.now()")
                page.evaluate(SETTLED)
                layout = page.evaluate("window.memgraphView.stats()")
                redraw_ms = page.evaluate("window.memgraphView.timeDraws(30)")
                pan_fps = page.evaluate("window.memgraphView.panFrames(60)")
                full_fps = page.evaluate("window.memgraphView.panFrames(60, true)")
                drag_fps = page.evaluate("window.memgraphView.dragFrames(60)")
                page.evaluate(SETTLED)
                name = page.evaluate("window.memgraphView.visibleNames()[0]")
                select_ms = page.evaluate(
                    """(name) => {
                        const box = document.getElementById('search');
                        const t0 = performance.now();
                        box.value = name;
                        box.dispatchEvent(new Event('input'));
                        box.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter'}));
                        return performance.now() - t0;
                    }""",
                    name,
                )
                slider_ms = page.evaluate(
                    """() => {
                        const slider = document.getElementById('time');
                        const t0 = performance.now();
                        slider.value = String(Math.floor(Number(slider.max) / 2));
                        slider.dispatchEvent(new Event('input'));
                        return performance.now() - t0;
                    }"""
                )
                return {
                    "ready_ms": ready_ms,
                    "settled_ms": layout["settledAfterMs"],
                    "ms_per_tick": layout["msPerTick"],
                    "layout_fps": layout["fps"],
                    "redraw_ms": redraw_ms,
                    "pan_fps": pan_fps,
                    "full_fps": full_fps,
                    "drag_fps": drag_fps,
                    "select_ms": select_ms,
                    "slider_ms": slider_ms,
                    "errors": errors,
                }
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.view", description=__doc__)
    parser.add_argument("--sizes", default="1k,5k,20k", help="entities per scope")
    parser.add_argument(
        "--workloads", default="facts,conversation", help="facts, conversation (a hub)"
    )
    parser.add_argument("--no-browser", action="store_true", help="skip the Chromium part")
    parser.add_argument("--out", type=Path, help="keep the scopes and pages here")
    args = parser.parse_args(argv)
    root = args.out or Path(tempfile.mkdtemp(prefix="memgraph-bench-view-"))
    root.mkdir(parents=True, exist_ok=True)
    browser = not args.no_browser and CHROMIUM.exists()
    if not args.no_browser and not browser:
        print(f"(no Chromium at {CHROMIUM}: browser columns skipped)")
    rows = []
    try:
        runs = [
            (workload, _size(size))
            for workload in args.workloads.split(",")
            for size in (args.sizes.split(",") if workload == "facts" else ["5k"])
        ]
        for workload, size in runs:
            scope = build(root, size, workload)
            result = time_build(root, scope)
            result["workload"] = workload
            page = root / f"memgraph-{scope}.html"
            page.write_text(result.pop("html"), encoding="utf-8")
            if browser:
                result.update(measure_browser(page))
            rows.append(result)
            print(result, flush=True)
    finally:
        if args.out is None:
            shutil.rmtree(root, ignore_errors=True)
    print()
    print(
        "| workload | entities (shown) | facts | relations | Memory.view() s (read + render) "
        "| view CPU s | page MB "
        "| first frame ms | layout settles ms | ms/tick | fps settling | ms/redraw (script) | fps redrawing all | fps panning "
        "| fps dragging | search→select ms | slider ms |"
    )
    print(
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    )
    for r in rows:
        cells = [
            r["workload"],
            f"{r['entities']:,} ({r['shown']:,})",
            f"{r['facts']:,}",
            f"{r['relations']:,}",
            f"{r['view_s']:.3f} ({r['read_s']:.3f} + {r['render_s']:.3f})",
            f"{r['view_cpu_s']:.3f}",
            f"{r['bytes'] / 1e6:.2f}",
        ]
        if "ready_ms" in r:
            cells += [
                f"{r['ready_ms']:.0f}",
                f"{r['settled_ms']:.0f}",
                f"{r['ms_per_tick']:.2f}",
                f"{r['layout_fps']:.0f}",
                f"{r['redraw_ms']:.1f}",
                f"{r['full_fps']:.0f}",
                f"{r['pan_fps']:.0f}",
                f"{r['drag_fps']:.0f}",
                f"{r['select_ms']:.1f}",
                f"{r['slider_ms']:.1f}",
            ]
        else:
            cells += ["-"] * 10
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
