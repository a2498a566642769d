"""axe-core (vendored from the npm registry: tests/browser/vendor/) run in Chromium against
every page, light and dark, at 1280 and 390 px: no serious or critical accessibility
violation."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser

from tests.browser.test_site import PAGES

AXE = Path(__file__).parent / "vendor" / "axe-core-4.14.1.min.js"
BLOCKING = ("serious", "critical")


@pytest.mark.parametrize("width", [1280, 390])  # a desktop and a phone
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("name", [name for name in PAGES if name != "not-found"])
def test_no_serious_accessibility_violations(
    browser: Browser, live_server: str, name: str, scheme: str, width: int
) -> None:
    # axe is injected as an inline script, which the site's CSP (rightly) refuses
    context = browser.new_context(
        viewport={"width": width, "height": 800 if width > 800 else 844},
        color_scheme=scheme,
        base_url=live_server,
        bypass_csp=True,
        reduced_motion="reduce",
    )
    page = context.new_page()
    page.goto(PAGES[name])
    page.wait_for_load_state("networkidle")
    page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    violations = page.evaluate(
        """async () => (await axe.run(document, { resultTypes: ["violations"] })).violations
            .map(v => ({ id: v.id, impact: v.impact, help: v.help,
                         nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ")) }))"""
    )
    context.close()
    blocking = [v for v in violations if v["impact"] in BLOCKING]
    assert blocking == [], blocking
