"""The Pointer Networks page before the reader does anything: what it weighs on the wire, and no
plotly.js: the server draws the heatmaps. How soon its DOM is ready is a measurement, not a
test: `bench/widget_latency.py` reports it against the index page's."""

from __future__ import annotations

from playwright.sync_api import Browser, expect

from tests.browser.test_pointer_board import (
    PAGE,
    pytestmark,  # noqa: F401 (skip without the trained pointer checkpoints)
)

MAX_BYTES_BEFORE_INTERACTION = 600_000  # gzip, on the wire
BYTES_ON_THE_WIRE = """() => {
    const nav = performance.getEntriesByType("navigation")[0];
    const files = performance.getEntriesByType("resource");
    return nav.transferSize + files.reduce((sum, f) => sum + f.transferSize, 0);
}"""


def test_the_page_is_light_and_its_heatmaps_need_no_plotly(
    browser: Browser, live_server: str
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=live_server)
    page = context.new_page()  # a fresh context: an empty browser cache
    plotly: list[str] = []
    page.on("request", lambda r: plotly.append(r.url) if "/plotly-" in r.url else None)
    page.goto(PAGE, wait_until="load")
    expect(page.locator("#pointer-board-hull [data-heatmap] svg rect").first).to_be_attached()
    sent = page.evaluate(BYTES_ON_THE_WIRE)
    context.close()
    assert plotly == [], "plotly.js loaded"
    assert 10_000 < sent <= MAX_BYTES_BEFORE_INTERACTION
