"""Pointer board interaction latency in Chromium: a click on the hull board until the new hull
is drawn.

    .venv/bin/python bench/pointer_board_latency.py [--clicks 30] [--url http://127.0.0.1:8000]

Without --url it starts its own uvicorn (one worker) on a free loopback port. Each click adds a
point at a seeded random spot of the hull board (from the 5-point example up to 5 + clicks
points); the time runs from the click's pointerdown event to the first animation frame after
the board shows the answer for the new points (its result block names n + 1 inputs and no
request is in flight), so it covers the script, the request, the server's decode and drawing,
the swap and the paint. The measurement reads only the result block and the board's busy
class, so it also times an older board script (pass that server's --url).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.load import ROOT, uvicorn_server  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
PAGE = "/papers/pointer-networks"
FRAME, PAD = 400, 24
# Resolves with the milliseconds from the next pointerdown on the board to the frame after
# its answer for `n` inputs is on screen.
ARM = """(n) => {
    const board = document.querySelector("#pointer-board-hull");
    window.__latency = new Promise((resolve) => {
        let start = null;
        const mark = (e) => { start = e.timeStamp; };
        board.addEventListener("pointerdown", mark, { capture: true, once: true });
        const done = () => {
            const block = board.querySelector("[data-result-json]");
            const classes = board.classList;
            const busy = classes.contains("htmx-request") || classes.contains("is-busy");
            return start !== null && !busy && block && JSON.parse(block.textContent).n === n;
        };
        new MutationObserver((_, observer) => {
            if (!done()) return;
            observer.disconnect();
            requestAnimationFrame(() => resolve(performance.now() - start));
        }).observe(board, {
            subtree: true, childList: true, attributes: true, characterData: true,
        });
    });
}"""


def measure(url: str, clicks: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url + PAGE)
        board = page.locator("#pointer-board-hull")
        board.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        times = []
        for i in range(clicks):
            page.evaluate(ARM, 6 + i)
            frame = board.locator(".pb-hit").bounding_box()
            assert frame is not None
            x, y = rng.uniform(0.05, 0.6), rng.uniform(0.05, 0.95)  # clear of the END corner
            page.mouse.click(frame["x"] + x * frame["width"], frame["y"] + y * frame["height"])
            times.append(page.evaluate("window.__latency"))
            page.wait_for_timeout(150)
        browser.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clicks", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--url", help="a running server; default: start one")
    args = parser.parse_args()
    if args.url:
        times = measure(args.url.rstrip("/"), args.clicks, args.seed)
    else:
        with uvicorn_server(1, ROOT / "logs" / "bench-board-latency-server.log") as url:
            times = measure(url, args.clicks, args.seed)
    quartiles = statistics.quantiles(times, n=20)
    print(
        f"click → hull redrawn over {len(times)} clicks (6 to {5 + len(times)} points): "
        f"p50 {statistics.median(times):.0f} ms, p95 {quartiles[18]:.0f} ms, "
        f"min {min(times):.0f} ms, max {max(times):.0f} ms"
    )


if __name__ == "__main__":
    main()
