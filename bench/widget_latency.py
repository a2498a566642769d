"""Interaction latency of the live widgets in Chromium, each from the reader's input event to
the first animation frame after the server's answer for it is on screen (script, request,
server work, swap and paint):

- hull board: a click adds a point at a seeded random spot (from the 5-point example up to
  5 + n points) until the board shows the answer for the new points;
- α playground: an arrow key moves the α slider one step (0.01) until the bars are drawn for
  the new α;
- inflection widget: one more letter typed into the lemma until the figure shows the new lemma
  (this includes the widget's 200 ms pause after typing, by design).

Before them, how soon each deep-dive's DOM is ready (DOMContentLoaded, the best of five loads
with a fresh browser cache, after one that warms the server's caches), as a ratio against the
site's index page, the named baseline loaded the same way in the same run.

    .venv/bin/python bench/widget_latency.py [--repeats 30] [--url http://127.0.0.1:8000]

Without --url it starts its own uvicorn (one worker) on a free loopback port.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path

from playwright.sync_api import Browser, Page, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.chromium import launch  # noqa: E402
from bench.load import ROOT, uvicorn_server  # noqa: E402

POINTER_PAGE, SPARSE_PAGE = "/papers/pointer-networks", "/papers/sparse-seq2seq"
# Arms window.__latency: the milliseconds from the next `event` on the widget `selector` to
# the frame after it shows the answer: `kind` says what to look at, `value` what it must be.
ARM = """([selector, event, kind, value]) => {
    const root = document.querySelector(selector);
    const shown = {
        hull: () => JSON.parse(root.querySelector("[data-result-json]")?.textContent || "{}").n,
        alpha: () => Number(root.querySelector("#entmax-stats").dataset.alpha),
        lemma: () => [...root.querySelectorAll("[data-s2s-single] .s2s-col-label")]
            .map((t) => t.textContent).join("").replace(/^(<[^>]*>)+/, ""),
    }[kind];
    window.__latency = new Promise((resolve) => {
        setTimeout(() => resolve(null), 5000); // the input changed nothing (a click on a point)
        let start = null;
        const mark = (e) => { start = e.timeStamp; };
        root.addEventListener(event, mark, { capture: true, once: true });
        const done = () =>
            start !== null && !root.classList.contains("htmx-request") && shown() === value;
        new MutationObserver((_, observer) => {
            if (!done()) return;
            observer.disconnect();
            requestAnimationFrame(() => resolve(performance.now() - start));
        }).observe(root, { subtree: true, childList: true, attributes: true, characterData: true });
    });
}"""


def hull_clicks(page: Page, repeats: int, rng: random.Random) -> list[float]:
    board = page.locator("#pointer-board-hull")
    times: list[float] = []
    while len(times) < repeats:
        page.evaluate(ARM, ["#pointer-board-hull", "pointerdown", "hull", 6 + len(times)])
        frame = board.locator(".pb-hit").bounding_box()
        assert frame is not None
        x, y = rng.uniform(0.05, 0.6), rng.uniform(0.05, 0.95)  # clear of the END corner
        page.mouse.click(frame["x"] + x * frame["width"], frame["y"] + y * frame["height"])
        latency = page.evaluate("window.__latency")
        if latency is None:  # the click hit a point already there: try another spot
            page.keyboard.press("Escape")
            continue
        times.append(latency)
        page.wait_for_timeout(150)
    return times


def alpha_steps(page: Page, repeats: int) -> list[float]:
    slider = page.locator("#entmax-playground [data-entmax-alpha]")
    times = []
    for i in range(repeats):
        key = "ArrowRight" if (i // 20) % 2 == 0 else "ArrowLeft"  # stay inside [1, 2]
        target = round(float(slider.input_value()) + (0.01 if key == "ArrowRight" else -0.01), 2)
        page.evaluate(ARM, ["#entmax-playground", "keydown", "alpha", target])
        slider.press(key)
        times.append(page.evaluate("window.__latency"))
        page.wait_for_timeout(100)
    return times


def keystrokes(page: Page, repeats: int) -> list[float]:
    lemma = page.locator("#seq2seq-inflect input[name=lemma]")
    words = ["walk", "talk", "jump", "play", "look", "call", "work", "help"]
    times = []
    for i in range(repeats):
        word = words[i % len(words)]
        lemma.fill(word[:-1])
        page.wait_for_timeout(400)  # the answer for the shorter word
        page.evaluate(ARM, ["#seq2seq-inflect", "keydown", "lemma", word])
        lemma.press(word[-1])
        times.append(page.evaluate("window.__latency"))
    return times


DOM_READY = """() => {
    const nav = performance.getEntriesByType("navigation")[0];
    return nav.domContentLoadedEventEnd - nav.startTime;
}"""
PAGE_LOADS = 5


def dom_ready_ms(browser: Browser, url: str) -> float:
    """The best DOMContentLoaded of PAGE_LOADS loads of `url`, each in a fresh context (an
    empty browser cache), after one load that warms the server."""
    times = []
    for _ in range(PAGE_LOADS + 1):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.goto(url, wait_until="load")
        times.append(page.evaluate(DOM_READY))
        context.close()
    return min(times[1:])


def measure(url: str, repeats: int, seed: int) -> dict[str, list[float]]:
    rng = random.Random(seed)
    with sync_playwright() as playwright:
        browser = launch(playwright)
        baseline = dom_ready_ms(browser, url + "/")
        print(f"DOMContentLoaded, best of {PAGE_LOADS}: index page (baseline) {baseline:.0f} ms")
        for path in (POINTER_PAGE, SPARSE_PAGE):
            ready = dom_ready_ms(browser, url + path)
            print(f"  {path}: {ready:.0f} ms, {ready / baseline:.2f}× the baseline")
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url + POINTER_PAGE)
        page.locator("#pointer-board-hull").scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        results = {"click → hull redrawn": hull_clicks(page, repeats, rng)}
        page.goto(url + SPARSE_PAGE)
        page.locator("#entmax-playground").scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        results["α step → bars redrawn"] = alpha_steps(page, repeats)
        page.locator("#seq2seq-inflect").scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        results["keystroke → inflection figure"] = keystrokes(page, repeats)
        browser.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=30, help="interactions per widget")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--url", help="a running server; default: start one")
    args = parser.parse_args()
    if args.url:
        results = measure(args.url.rstrip("/"), args.repeats, args.seed)
    else:
        with uvicorn_server(1, ROOT / "logs" / "bench-widget-latency-server.log") as url:
            results = measure(url, args.repeats, args.seed)
    for name, times in results.items():
        p95 = statistics.quantiles(times, n=20)[18]
        print(
            f"{name} ({len(times)}): p50 {statistics.median(times):.0f} ms, p95 {p95:.0f} ms, "
            f"min {min(times):.0f} ms, max {max(times):.0f} ms"
        )


if __name__ == "__main__":
    main()
