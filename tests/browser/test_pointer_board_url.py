"""A shared pointer-board address in Chromium, with script off and on: the server draws the shared
points at the shared step; with script, a note about the server's drawing goes once the board
has its own answer, and "Example" still brings back the example."""

from __future__ import annotations

from playwright.sync_api import Browser, expect

from tests.browser.conftest import ARTIFACTS, TrackedPage
from tests.browser.test_pointer_board import (
    PAGE,
    pytestmark,  # noqa: F401 (skip without the trained pointer checkpoints)
    wait_for_answer,
)

SCREENSHOTS = ARTIFACTS / "screenshots"
SIX = "0.1,0.15;0.8,0.1;0.45,0.4;0.9,0.75;0.55,0.6;0.15,0.85"


def test_without_script_the_server_draws_the_shared_board(
    browser: Browser, live_server: str
) -> None:
    for width, height in ((1280, 800), (390, 844)):
        context = browser.new_context(
            viewport={"width": width, "height": height},
            base_url=live_server,
            java_script_enabled=False,
        )
        page = context.new_page()
        page.goto(f"{PAGE}?hull={SIX}&hull-decoder=beam4&hull-step=2")
        board = page.locator("#pointer-board-hull")
        expect(board.locator("[data-layer=points] .pb-point")).to_have_count(6)
        expect(board.locator("[data-step-label]")).to_contain_text("Step 2 of")
        expect(board.locator("[data-decoder]")).to_have_value("beam")
        expect(board.locator("[data-beam-width]")).to_have_value("4")
        expect(board.locator("[data-beam-width]")).to_be_visible()
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        board.locator("[data-board-svg]").scroll_into_view_if_needed()
        board.screenshot(path=SCREENSHOTS / f"pointer-board-shared-nojs-{width}.png")
        context.close()


def test_without_script_the_form_submits_to_a_server_drawing(
    browser: Browser, live_server: str
) -> None:
    """The board is a form whose fields are the address's keys: Apply asks the page again."""
    context = browser.new_context(base_url=live_server, java_script_enabled=False)
    page = context.new_page()
    page.goto(PAGE)
    board = page.locator("#pointer-board-tsp")
    board.locator(".pb-typed summary").click()
    board.locator("[data-typed]").fill("0.1, 0.1\n0.9, 0.2\n0.5, 0.9\n0.5, 0.4\n0.2, 0.6\n0.8, 0.7")
    board.locator("[data-decoder]").select_option("beam")
    board.locator("[data-beam-width]").fill("3")
    board.get_by_role("button", name="Apply").click()
    page.wait_for_url("**tsp-decoder=beam**")
    board = page.locator("#pointer-board-tsp")
    expect(board.locator("[data-layer=points] .pb-point")).to_have_count(6)
    expect(board.locator(".pb-summary")).to_contain_text("beam search, width 3")
    expect(board.locator("[data-layer=arrows] .pb-arrow")).not_to_have_count(0)
    expect(page.locator("#pointer-board-hull [data-layer=points] .pb-point")).to_have_count(5)
    context.close()


def test_with_script_the_note_goes_and_example_resets(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    tracked_page.goto(f"{PAGE}?hull=0.1,0.2;0.5,x;0.9,0.1")
    board = page.locator("#pointer-board-hull")
    note = board.locator("[data-url-note]")
    expect(note).to_contain_text("The board shows its example instead.")
    board.scroll_into_view_if_needed()
    board.get_by_role("button", name="Random").click()
    wait_for_answer(page, board, 10)
    expect(note).to_be_hidden()  # it spoke of the server's drawing, now replaced
    tracked_page.goto(f"{PAGE}?hull={SIX}&hull-step=3")
    board.scroll_into_view_if_needed()
    wait_for_answer(page, board, 6)
    expect(board.locator("[data-step]")).to_have_value("3")  # counted from 1, as the address
    board.get_by_role("button", name="Example").click()
    wait_for_answer(page, board, 5)
    tracked_page.assert_clean()
