"""The strict Content-Security-Policy in Chromium: every page, its figures (plotly included)
and the API docs run without a single policy violation."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from app.content import ContentLibrary
from app.main import default_content_dir
from app.security import CONTENT_SECURITY_POLICY
from tests.browser.conftest import ARTIFACTS, TrackedPage

SLUGS = [paper.slug for paper in ContentLibrary(default_content_dir()).papers()]
# A violation raises a DOM event; report it as a console error, which tracked pages collect.
REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) =>
  console.error(`CSP violation: ${event.violatedDirective} blocked ${event.blockedURI}`));
"""


def visit_every_part(tracked_page: TrackedPage, path: str) -> None:
    page = tracked_page.page
    page.add_init_script(REPORT_VIOLATIONS)
    response = page.goto(f"{tracked_page.base_url}{path}")
    assert response is not None
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    # Figures draw when they scroll into view; walk down the page so every one draws.
    height = page.evaluate("document.body.scrollHeight")
    for top in range(0, height + 900, 600):
        page.evaluate(f"window.scrollTo(0, {top})")
        page.wait_for_timeout(60)
    page.wait_for_load_state("networkidle")


@pytest.mark.parametrize("slug", SLUGS)
def test_deep_dives_draw_under_the_policy(tracked_page: TrackedPage, slug: str) -> None:
    visit_every_part(tracked_page, f"/papers/{slug}")
    # the server-drawn SVG figures: the entmax family, the pointer heatmaps
    expect(tracked_page.page.locator("svg.entmax-svg, svg.pb-heatmap-svg").first).to_be_attached()
    tracked_page.assert_clean()


def test_the_library_loads_under_the_policy(tracked_page: TrackedPage) -> None:
    visit_every_part(tracked_page, "/")
    tracked_page.assert_clean()


def test_the_not_found_page_loads_under_the_policy(tracked_page: TrackedPage) -> None:
    visit_every_part(tracked_page, "/papers/no-such-paper")
    # Chromium reports the 404 status itself as a console error; nothing else may appear.
    others = [e for e in tracked_page.console_errors if "status of 404" not in e]
    assert others == []
    assert tracked_page.foreign_requests == []


def test_api_docs_work_offline_under_the_policy(tracked_page: TrackedPage) -> None:
    visit_every_part(tracked_page, "/docs")
    page = tracked_page.page
    expect(page.locator(".swagger-ui .opblock").first).to_be_visible()
    expect(page.get_by_text("/api/entmax", exact=True).first).to_be_visible()
    (ARTIFACTS / "screenshots").mkdir(parents=True, exist_ok=True)
    page.screenshot(path=ARTIFACTS / "screenshots" / "api-docs.png")
    tracked_page.assert_clean()
