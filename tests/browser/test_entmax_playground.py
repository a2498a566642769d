"""The α playground and the family figures in Debian Chromium, on the sparse-seq2seq deep-dive."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.browser.conftest import ARTIFACTS, TrackedPage

PAGE = "/papers/sparse-seq2seq"
PLAYGROUND = "[data-entmax-playground]"
SCREENSHOTS = ARTIFACTS / "screenshots"
# First load parses plotly.js; on a CPU shared with other jobs that can take seconds.
READY_MS = 30_000


def open_playground(tracked_page: TrackedPage, query: str = "") -> Page:
    tracked_page.goto(f"{PAGE}{query}")
    page = tracked_page.page
    widget = page.locator(PLAYGROUND)
    expect(widget).to_have_attribute("data-ready", "true", timeout=READY_MS)
    widget.scroll_into_view_if_needed()
    return page


def open_family_figures(page: Page) -> Locator:
    family = page.locator(".entmax-family")
    family.scroll_into_view_if_needed()  # drawn on the server: nothing to wait for
    return family


def support(page: Page) -> int:
    return int(page.locator(f"{PLAYGROUND} [data-entmax-support]").inner_text())


def test_dragging_alpha_makes_the_support_fall(tracked_page: TrackedPage) -> None:
    page = open_playground(tracked_page, "?entmax-alpha=1")
    expect(page.locator(f"{PLAYGROUND} [data-entmax-support]")).to_have_text("7")
    slider = page.locator(f"{PLAYGROUND} [data-entmax-alpha]")
    box = slider.bounding_box()
    assert box is not None
    y = box["y"] + box["height"] / 2
    left, right = box["x"] + 8, box["x"] + box["width"] - 8  # thumb centres at 1.0 and 4.0

    page.mouse.move(left, y)
    page.mouse.down()
    seen: list[tuple[float, int]] = []
    steps = 12
    for step in range(1, steps + 1):
        page.mouse.move(left + (right - left) * step / steps, y, steps=3)
        alpha = float(page.locator(f"{PLAYGROUND} [data-entmax-alpha-value]").inner_text())
        # The button is still down: the server's answer for this α must arrive mid-drag.
        page.wait_for_function(
            """alpha => Number(document.querySelector(
                '[data-entmax-playground] .entmax-stats').dataset.alpha) === alpha""",
            arg=alpha,
            timeout=5000,
        )
        seen.append((alpha, support(page)))
    page.mouse.up()

    alphas = [alpha for alpha, _ in seen]
    supports = [size for _, size in seen]
    assert alphas == sorted(alphas) and alphas[-1] == 4.0, seen
    assert supports == sorted(supports, reverse=True), seen  # never grows as α grows
    assert supports[-1] == 1, seen
    mid_drag = [size for alpha, size in seen[:-1] if 1 < size < 7]
    assert mid_drag, f"no intermediate support size while dragging: {seen}"
    tracked_page.assert_clean()


def test_keyboard_steps_update_alpha_by_hundredths(tracked_page: TrackedPage) -> None:
    page = open_playground(tracked_page)
    slider = page.locator(f"{PLAYGROUND} [data-entmax-alpha]")
    slider.focus()
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    expect(page.locator(f"{PLAYGROUND} [data-entmax-alpha-value]")).to_have_text("1.55")
    expect(page.locator(f"{PLAYGROUND} .entmax-stats")).to_have_attribute("data-alpha", "1.55")
    tracked_page.assert_clean()


def test_exact_zeros_look_different_from_small_values(tracked_page: TrackedPage) -> None:
    page = open_playground(tracked_page)
    bars = page.locator(f"{PLAYGROUND} .entmax-bar")
    zero = page.locator(f"{PLAYGROUND} .entmax-bar.is-zero").first
    small = bars.filter(has_text=re.compile(r"^\s*\S+:\s*0\.00\d\s*$"))
    expect(zero.locator(".prob-value")).to_have_text("0")
    expect(small).to_have_count(1)  # "sat" at α = 1.5: 0.005
    zero_track = zero.locator(".prob-track").evaluate(
        "t => [getComputedStyle(t).borderTopStyle, getComputedStyle(t, '::before').content,"
        " t.querySelector('svg') === null]"
    )
    small_track = small.locator(".prob-track").evaluate(
        "t => [getComputedStyle(t).borderTopStyle, getComputedStyle(t, '::before').width]"
    )
    assert zero_track == ["dashed", "none", True]
    assert small_track[0] != "dashed" and float(small_track[1].removesuffix("px")) >= 2
    tracked_page.assert_clean()


def test_typed_and_dragged_scores_go_into_a_shareable_url(
    tracked_page: TrackedPage,
) -> None:
    page = open_playground(tracked_page)
    before = support(page)
    first_score = page.locator(f"{PLAYGROUND} .score-input").first
    first_score.fill("3.5")
    expect(page.locator(f"{PLAYGROUND} [data-entmax-support]")).not_to_have_text(str(before))

    # Drag the last word's bar past its right end: it takes the top of the bar's range.
    span = page.locator(f"{PLAYGROUND} [data-entmax-config]").evaluate(
        "block => JSON.parse(block.textContent).scoreSpan"
    )
    track = page.locator(f"{PLAYGROUND} .score-track").last
    box = track.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] + 20, box["y"] + box["height"] / 2, steps=5)
    page.mouse.up()
    expect(page.locator(f"{PLAYGROUND} .score-input").last).to_have_value(f"{span:g}")
    last_bar = page.locator(f"{PLAYGROUND} .entmax-bar").last
    expect(last_bar).not_to_have_class(re.compile("is-zero"))

    # the address keeps lists readable (app.responses.page_url leaves commas as they are)
    page.wait_for_url(re.compile(rf"entmax-scores=3\.5(%2C|,).*(%2C|,){span:g}(&|$)"))
    shared = page.url
    query = parse_qs(urlsplit(shared).query)
    assert query["entmax-text"] == ["the cat sat on the mat ."]
    assert query["entmax-alpha"] == ["1.5"]
    probabilities = page.locator(f"{PLAYGROUND} .prob-value").all_inner_texts()

    other = tracked_page.page.context.new_page()
    other.goto(shared)
    expect(other.locator(PLAYGROUND)).to_have_attribute("data-ready", "true", timeout=READY_MS)
    expect(other.locator(f"{PLAYGROUND} .score-input").first).to_have_value("3.5")
    expect(other.locator(f"{PLAYGROUND} [data-entmax-example]")).to_have_value("custom")
    expect(other.locator(f"{PLAYGROUND} .prob-value")).to_have_text(probabilities)
    other.close()
    tracked_page.assert_clean()


def test_a_typed_sentence_gets_one_score_per_word(tracked_page: TrackedPage) -> None:
    page = open_playground(tracked_page)
    text = page.locator(f"{PLAYGROUND} [data-entmax-text]")
    text.fill("sparse maps drop what scores low")
    expect(page.locator(f"{PLAYGROUND} .score-input")).to_have_count(6)
    expect(page.locator(f"{PLAYGROUND} .entmax-bar")).to_have_count(6)
    expect(page.locator(f"{PLAYGROUND} .entmax-stats")).to_have_attribute("data-n", "6")

    page.locator(f"{PLAYGROUND} [data-entmax-example]").select_option("next-word")
    expect(page.locator(f"{PLAYGROUND} .token").first).to_have_text("tea")
    expect(page.locator(f"{PLAYGROUND} .entmax-bar")).to_have_count(7)
    tracked_page.assert_clean()


def test_bad_input_shows_the_servers_sentence(tracked_page: TrackedPage) -> None:
    page = open_playground(tracked_page)
    page.locator(f"{PLAYGROUND} .score-input").nth(2).fill("")
    error = page.locator(f"{PLAYGROUND} [data-entmax-error]")
    expect(error).to_be_visible()
    # the word, and the reader's count, from 1
    expect(error).to_have_text("Give the score of “sat” (word 3) a number.")
    page.locator(f"{PLAYGROUND} .score-input").nth(2).fill("1")
    expect(error).to_be_hidden()
    # Chromium logs every 4xx response; that one was the point of this test.
    rejected = [e for e in tracked_page.console_errors if "status of 422" in e]
    assert rejected, tracked_page.console_errors
    tracked_page.console_errors = [e for e in tracked_page.console_errors if e not in rejected]
    tracked_page.assert_clean()


def test_a_score_out_of_range_is_named_by_its_word(tracked_page: TrackedPage) -> None:
    """The refusal names the word the reader typed into, counted as the rows are, and the
    limit in plain digits (not a float's repr)."""
    page = open_playground(tracked_page)
    page.locator(f"{PLAYGROUND} .score-input").nth(2).fill("1000000000")
    error = page.locator(f"{PLAYGROUND} [data-entmax-error]")
    expect(error).to_contain_text("The score of “sat” (word 3) must be at most 1,000,000")
    expect(error).to_contain_text("1,000,000,000")
    expect(error).not_to_contain_text("1000000.0")
    page.locator(f"{PLAYGROUND} .score-input").nth(2).fill("0.5")
    expect(error).to_be_hidden()
    rejected = [e for e in tracked_page.console_errors if "status of 422" in e]
    tracked_page.console_errors = [e for e in tracked_page.console_errors if e not in rejected]
    tracked_page.assert_clean()


def test_family_figures_are_drawn(tracked_page: TrackedPage) -> None:
    tracked_page.goto(PAGE)
    family = open_family_figures(tracked_page.page)
    expect(family.locator("[data-entmax-curves] polyline")).to_have_count(5)
    expect(family.locator("[data-entmax-simplex] svg")).to_have_count(5)
    for curve in family.locator("[data-entmax-curves] polyline").all():
        box = curve.bounding_box()
        assert box is not None and box["width"] > 100, box
    # softmax keeps every grid point inside the triangle; sparsemax puts some on corners
    rows = family.locator(".entmax-counts tbody tr")
    expect(rows.first).to_contain_text("(0%)")
    tracked_page.assert_clean()


@pytest.mark.parametrize("width", [1280, 390])
def test_screenshots(tracked_page: TrackedPage, width: int) -> None:
    page = tracked_page.page
    page.set_viewport_size({"width": width, "height": 900})
    open_playground(tracked_page, "?entmax-alpha=1.5")
    expect(page.locator(f"{PLAYGROUND} .entmax-stats")).to_have_attribute("data-alpha", "1.5")
    overflow = page.evaluate(
        """sel => {
            const box = document.querySelector(sel).getBoundingClientRect();
            const page = document.documentElement.scrollWidth - innerWidth;
            return [box.left, innerWidth - box.right, page];
        }""",
        PLAYGROUND,
    )
    assert overflow[0] >= 0 and overflow[1] >= 0 and overflow[2] <= 0, overflow
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(PLAYGROUND).screenshot(path=SCREENSHOTS / f"entmax-playground-{width}.png")
    family = open_family_figures(page)
    family.screenshot(path=SCREENSHOTS / f"entmax-family-{width}.png")
    tracked_page.assert_clean()


def test_without_script_the_form_still_draws_the_figure(browser: Browser, live_server: str) -> None:
    """JS off: the form submits itself, the server sends the page back drawn for it."""
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{live_server}{PAGE}")
    widget = page.locator(PLAYGROUND)
    widget.locator("[data-entmax-text]").fill("sparse maps drop words")
    widget.get_by_role("button", name="Show").click()
    page.wait_for_url(re.compile(r"entmax-text=sparse\+maps\+drop\+words.*#entmax-playground"))
    expect(widget.locator(".score-input")).to_have_count(4)
    expect(widget.locator(".entmax-stats")).to_have_attribute("data-n", "4")
    context.close()
