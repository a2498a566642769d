"""The Pointer Networks page before the reader does anything: what it weighs on the wire, how
soon its DOM is ready on loopback, and no plotly.js: the server draws the heatmaps.

DOMContentLoaded is the best of five fresh loads: this machine is shared, and one slow load
says more about the neighbours than about the page."""

from __future__ import annotations

from playwright.sync_api import Browser, expect

from tests.browser.test_pointer_board import (
    PAGE,
    pytestmark,  # noqa: F401 (skip without the trained pointer checkpoints)
)

MAX_BYTES_BEFORE_INTERACTION = 600_000  # gzip, on the wire
MAX_DOM_CONTENT_LOADED_MS = 500
TIMING = """() => {
    const nav = performance.getEntriesByType("navigation")[0];
    const files = performance.getEntriesByType("resource");
    return {
        dcl: nav.domContentLoadedEventEnd - nav.startTime,
        bytes: nav.transferSize + files.reduce((sum, f) => sum + f.transferSize, 0),
    };
}"""


def test_the_page_is_light_and_its_heatmaps_need_no_plotly(
    browser: Browser, live_server: str
) -> None:
    loads = []
    for _ in range(6):  # the first warms the server's caches; each has a fresh browser cache
        context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=live_server)
        page = context.new_page()
        plotly: list[str] = []
        page.on(
            "request", lambda r, seen=plotly: seen.append(r.url) if "/plotly-" in r.url else None
        )
        page.goto(PAGE, wait_until="load")
        loads.append(page.evaluate(TIMING))
        expect(page.locator("#pointer-board-hull [data-heatmap] svg rect").first).to_be_attached()
        assert plotly == [], "plotly.js loaded"
        context.close()
    loads = loads[1:]
    print("pointer page:", [f"{t['dcl']:.0f} ms, {t['bytes']:,} B" for t in loads])
    assert min(t["dcl"] for t in loads) <= MAX_DOM_CONTENT_LOADED_MS
    assert max(t["bytes"] for t in loads) <= MAX_BYTES_BEFORE_INTERACTION
