"""The site in Debian Chromium: navigation, MathML, the contents, offline, screenshots."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from app.content import ContentLibrary
from app.main import default_content_dir
from tests.browser.conftest import ARTIFACTS, TrackedPage

PAPERS = ContentLibrary(default_content_dir()).papers()
SLUGS = [paper.slug for paper in PAPERS]
SCREENSHOTS = ARTIFACTS / "screenshots"
PAGES = {"library": "/", **{slug: f"/papers/{slug}" for slug in SLUGS}, "not-found": "/papers/x"}


def test_library_links_to_every_paper(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    tracked_page.goto("/")
    cards = page.locator(".paper-card .paper-title a")
    expect(cards).to_have_count(len(PAPERS))
    for paper in PAPERS:
        page.get_by_role("link", name=paper.meta.title, exact=True).click()
        expect(page).to_have_url(re.compile(f"/papers/{paper.slug}$"))
        expect(page.locator("h1")).to_have_text(paper.meta.title)
        page.go_back()
        expect(page.locator("h1")).to_have_text("Read the paper, run the model")
    tracked_page.assert_clean()


def test_a_fresh_context_builds_no_address_bar_popup(
    browser: Browser, tracked_page: TrackedPage
) -> None:
    """bench/chromium.py turns off the omnibox popup's WebUI, which Chromium otherwise builds
    for every new context (about 1 core-second each, two thirds of a test's page load here)."""
    session = browser.new_browser_cdp_session()
    tracked_page.goto("/")
    targets = session.send("Target.getTargets")["targetInfos"]
    assert [target["url"] for target in targets if "omnibox" in target["url"]] == []
    assert [target["type"] for target in targets].count("page") >= 1
    session.detach()


@pytest.mark.parametrize("slug", SLUGS)
def test_math_is_mathml_and_visible(tracked_page: TrackedPage, slug: str) -> None:
    page = tracked_page.page
    tracked_page.goto(f"/papers/{slug}")
    for selector in ("math[display='inline']", "math[display='block']"):
        formula = page.locator(f".prose {selector}").first
        formula.scroll_into_view_if_needed()
        expect(formula).to_be_visible()
        box = formula.bounding_box()
        assert box is not None and box["width"] > 4 and box["height"] > 4, (selector, box)
        rendering = formula.evaluate(
            "m => [m.namespaceURI, getComputedStyle(m).display, m.firstElementChild.tagName]"
        )
        # Chromium lays MathML out natively only for elements in the MathML namespace.
        assert rendering[0] == "http://www.w3.org/1998/Math/MathML"
        assert "math" in rendering[1] or rendering[1] == "block", rendering
    assert page.locator(".math-error").count() == 0
    tracked_page.assert_clean()


@pytest.mark.parametrize("slug", SLUGS)
def test_contents_links_move_to_their_section(tracked_page: TrackedPage, slug: str) -> None:
    page = tracked_page.page
    tracked_page.goto(f"/papers/{slug}")
    links = page.locator(".toc a")
    anchors = [href.removeprefix("#") for href in links.evaluate_all("as => as.map(a => a.hash)")]
    assert len(anchors) >= 3
    for anchor in anchors:
        page.locator(f".toc a[href='#{anchor}']").click()
        expect(page).to_have_url(re.compile(f"#{re.escape(anchor)}$"))
        arrived = page.evaluate(
            """id => {
                const top = document.getElementById(id).getBoundingClientRect().top;
                const atBottom = scrollY + innerHeight >= document.documentElement.scrollHeight - 2;
                return (top >= -2 && top <= 80) || (atBottom && top >= 0 && top < innerHeight);
            }""",
            anchor,
        )
        assert arrived, anchor
        expect(page.locator(f".toc a[href='#{anchor}']")).to_have_attribute(
            "aria-current", "location"
        )
    tracked_page.assert_clean()


@pytest.mark.parametrize("slug", SLUGS)
def test_contents_track_the_section_being_read(tracked_page: TrackedPage, slug: str) -> None:
    page = tracked_page.page
    tracked_page.goto(f"/papers/{slug}")
    headings = page.locator(".prose h2[id]")
    first = headings.first.get_attribute("id")
    middle = headings.nth(headings.count() // 2).get_attribute("id")
    # Scrolling (not clicking the contents) must move the highlight to the last heading
    # above the reading line, a quarter of the way down the window.
    page.evaluate("id => document.getElementById(id).scrollIntoView()", middle)
    page.wait_for_function(
        """() => {
            const line = innerHeight * 0.25;
            const above = [...document.querySelectorAll('.prose h2[id], .prose h3[id]')]
                .filter(h => h.getBoundingClientRect().top <= line);
            const current = document.querySelectorAll('.toc a[aria-current="location"]');
            return current.length === 1 && above.length > 0
                && current[0].hash === '#' + above[above.length - 1].id;
        }""",
        timeout=5000,
    )
    expect(page.locator(".toc a[aria-current='location']")).not_to_have_attribute(
        "href", f"#{first}"
    )
    tracked_page.assert_clean()


def test_tag_filter_works_in_place(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    tracked_page.goto("/")
    tag = PAPERS[0].meta.tags[0]
    page.locator(f".tag-filter a[data-tag='{tag}']").click()
    expect(page).to_have_url(re.compile(r"\?tag="))
    tagged = sum(tag in paper.meta.tags for paper in PAPERS)
    expect(page.locator(".paper-card:not([hidden])")).to_have_count(tagged)
    page.locator(".tag-filter a[data-tag='']").click()
    expect(page.locator(".paper-card:not([hidden])")).to_have_count(len(PAPERS))
    tracked_page.assert_clean()


def test_bibtex_can_be_copied(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    tracked_page.goto(f"/papers/{SLUGS[0]}")
    page.get_by_role("button", name="Copy BibTeX").click()
    expect(page.get_by_role("button", name="Copied")).to_be_visible()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith("@") and PAPERS[0].meta.bibtex.strip() == copied
    tracked_page.assert_clean()


def test_keyboard_focus_is_visible(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    tracked_page.goto("/")
    page.keyboard.press("Tab")
    focused = page.locator(":focus")
    expect(focused).to_have_text("Skip to content")
    expect(focused).to_be_in_viewport()
    assert focused.evaluate("e => getComputedStyle(e).outlineStyle") != "none"


def test_not_found_page_leads_home(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    response = page.goto(f"{tracked_page.base_url}/papers/no-such-paper")
    assert response is not None and response.status == 404
    page.get_by_role("link", name="Back to the library").click()
    expect(page).to_have_url(f"{tracked_page.base_url}/")
    # The only console error is Chromium reporting the 404 of the page itself.
    assert len(tracked_page.console_errors) == 1
    assert "404" in tracked_page.console_errors[0]
    assert tracked_page.foreign_requests == []


def _no_horizontal_overflow(page: Page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= innerWidth")


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("name", list(PAGES))
def test_screenshot(tracked_page: TrackedPage, name: str, width: int) -> None:
    page = tracked_page.page
    page.set_viewport_size({"width": width, "height": 900})
    tracked_page.goto(PAGES[name])
    page.evaluate("document.fonts.ready")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{name}-{width}.png")  # the first screen
    assert _no_horizontal_overflow(page), f"{name} scrolls sideways at {width} px"
    assert tracked_page.foreign_requests == []
    if name != "not-found":
        tracked_page.assert_clean()


@pytest.mark.parametrize("name", list(PAGES))
def test_screenshot_dark(browser: Browser, live_server: str, name: str) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="dark")
    page = context.new_page()
    page.goto(f"{live_server}{PAGES[name]}")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{name}-1280-dark.png")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(21, 23, 27)"
    context.close()
