"""axe-core (vendored from the npm registry: tests/browser/vendor/) run in Chromium against
every page, light and dark, at 1280 and 390 px: no serious or critical accessibility
violation."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from tests.browser.test_site import PAGES

AXE = Path(__file__).parent / "vendor" / "axe-core-4.14.1.min.js"
BLOCKING = ("serious", "critical")


@pytest.fixture(scope="module")
def page_at(browser: Browser, live_server: str) -> Iterator[Callable[[str, int], Page]]:
    """One load per page and width, with axe injected, shared by its light and dark test: the
    scheme is a media feature the stylesheet alone reads (no script asks for it), so switching
    it restyles the page as a fresh load would; the width is not (site.js reads it on load)."""
    contexts: dict[tuple[str, int], BrowserContext] = {}

    def load(name: str, width: int) -> Page:
        if (name, width) not in contexts:
            # axe is injected as an inline script, which the site's CSP (rightly) refuses
            context = browser.new_context(
                viewport={"width": width, "height": 800 if width > 800 else 844},
                base_url=live_server,
                bypass_csp=True,
                reduced_motion="reduce",
            )
            page = context.new_page()
            page.goto(PAGES[name])
            page.wait_for_load_state("networkidle")
            page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
            contexts[name, width] = context
        return contexts[name, width].pages[0]

    yield load
    for context in contexts.values():
        context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])  # a desktop and a phone
@pytest.mark.parametrize("name", [name for name in PAGES if name != "not-found"])
def test_no_serious_accessibility_violations(
    page_at: Callable[[str, int], Page], name: str, scheme: Literal["light", "dark"], width: int
) -> None:
    page = page_at(name, width)
    page.emulate_media(color_scheme=scheme)
    assert page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches") == (scheme == "dark")
    violations = page.evaluate(
        """async () => (await axe.run(document, { resultTypes: ["violations"] })).violations
            .map(v => ({ id: v.id, impact: v.impact, help: v.help,
                         nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ")) }))"""
    )
    blocking = [v for v in violations if v["impact"] in BLOCKING]
    assert blocking == [], blocking
