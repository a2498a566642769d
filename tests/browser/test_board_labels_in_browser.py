"""The pointer board's numbers in Chromium: a hundred random points and near-equal values on the
sorting line show numbers that never overlap (measured with the browser's own text boxes); the
server places them exactly as app/pointer/board_labels.py says; a hidden number shows on focus.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Locator, Page

from app.pointer.board_labels import LINE_ROWS, end_mark_boxes, place_end_mark, place_point_labels
from app.pointer.views import board_xy
from tests.browser.conftest import ARTIFACTS, TrackedPage
from tests.browser.test_pointer_board import (
    FRAME,
    PAGE,
    board_points,
    pytestmark,  # noqa: F401 (skip without the trained pointer checkpoints)
    wait_for_answer,
)

SCREENSHOTS = ARTIFACTS / "screenshots"

SHOWN_BOXES = """(svg) => [...svg.querySelectorAll("[data-layer=points] .pb-point text")]
    .filter((text) => getComputedStyle(text).visibility !== "hidden")
    .map((text) => {
        const box = text.getBBox();
        return [box.x, box.y, box.x + box.width, box.y + box.height];
    })"""


def overlapping(boxes: list[list[float]]) -> list[tuple[int, int]]:
    return [
        (i, j)
        for i, a in enumerate(boxes)
        for j, b in enumerate(boxes[i + 1 :], start=i + 1)
        if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
    ]


def random_board(page: Page, board: Locator, n: int) -> dict:
    board.scroll_into_view_if_needed()
    board.locator("[data-random-n]").fill(str(n))
    board.get_by_role("button", name="Random").press("Enter")  # a key, so focus rings show
    return wait_for_answer(page, board, n)


@pytest.mark.parametrize("width", [1280, 390])
def test_a_hundred_points_show_numbers_that_never_overlap(
    tracked_page: TrackedPage, width: int
) -> None:
    page = tracked_page.page
    page.set_viewport_size({"width": width, "height": 800 if width == 1280 else 844})
    tracked_page.goto(PAGE)
    board = page.locator("#pointer-board-hull")
    random_board(page, board, 100)
    svg = board.locator("[data-board-svg]")
    shown = svg.evaluate(SHOWN_BOXES)
    end = svg.evaluate(
        """(svg) => { const b = svg.querySelector(".pb-end text").getBBox();
            return [b.x, b.y, b.x + b.width, b.y + b.height]; }"""
    )
    assert overlapping([*shown, end]) == []
    assert 20 < len(shown) < 100  # thinned out, not emptied

    # the script's spots are the server's rule, number for number
    coords = [board_xy(x, y) for x, y in board_points(page, "hull")]  # rounded as drawn
    end_boxes = end_mark_boxes(FRAME, place_end_mark(coords, FRAME))  # clear of the points
    expected = place_point_labels(coords, FRAME, end_boxes)
    drawn = svg.evaluate(
        """(svg) => [...svg.querySelectorAll("[data-layer=points] .pb-point text")].map((t) => ({
            dx: Number(t.getAttribute("dx")), dy: Number(t.getAttribute("dy")),
            anchor: t.getAttribute("text-anchor"), crowded: t.classList.contains("is-crowded"),
        }))"""
    )
    assert drawn == expected

    # a hidden number shows while its point has the keyboard focus
    crowded = next(i for i, spot in enumerate(expected) if spot["crowded"])
    mark = svg.locator(f"[data-index='{crowded}']")
    mark.focus()
    visibility = mark.evaluate("(m) => getComputedStyle(m.querySelector('text')).visibility")
    assert visibility == "visible"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    svg.screenshot(path=SCREENSHOTS / f"pointer-board-hull-100-{width}.png")
    tracked_page.assert_clean()


def test_near_equal_values_stack_their_numbers(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    tracked_page.goto(PAGE)
    board = page.locator("#pointer-board-sort")
    board.scroll_into_view_if_needed()
    board.locator(".pb-typed summary").click()
    board.locator("[data-typed]").fill("0.5, 0.501, 0.502, 0.9, 0.1")
    board.get_by_role("button", name="Apply").click()
    wait_for_answer(page, board, 5)
    svg = board.locator("[data-board-svg]")
    shown = svg.evaluate(SHOWN_BOXES)
    assert len(shown) == 5 and overlapping(shown) == []
    rows = svg.evaluate(
        """(svg) => [...svg.querySelectorAll("[data-layer=points] .pb-point text")]
            .map((t) => Number(t.getAttribute("y")))"""
    )
    assert rows == [*LINE_ROWS, LINE_ROWS[0], LINE_ROWS[0]]
    svg.screenshot(path=SCREENSHOTS / "pointer-board-sort-near-equal-1280.png")
    tracked_page.assert_clean()


def test_forty_values_leave_the_output_slots_readable(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    tracked_page.goto(PAGE)
    board = page.locator("#pointer-board-sort")
    random_board(page, board, 40)
    svg = board.locator("[data-board-svg]")
    slots = svg.evaluate(
        """(svg) => [...svg.querySelectorAll(".pb-slot")].map((slot) => {
            const c = slot.querySelector("circle").getBBox();
            const t = slot.querySelector("text");
            const b = t && t.getBBox();
            return {
                circle: [c.x, c.y, c.x + c.width, c.y + c.height],
                text: b ? [b.x, b.y, b.x + b.width, b.y + b.height] : null,
                title: slot.querySelector("title").textContent,
            };
        })"""
    )
    assert len(slots) == 40
    assert overlapping([slot["circle"] for slot in slots]) == []
    numbers = [slot["text"] for slot in slots if slot["text"] is not None]
    assert overlapping(numbers) == []
    assert 10 <= len(numbers) < 40  # thinned, not emptied
    assert slots[0]["title"].startswith("output 1: input ")
    assert overlapping(svg.evaluate(SHOWN_BOXES)) == []
    svg.screenshot(path=SCREENSHOTS / "pointer-board-sort-40-1280.png")
    tracked_page.assert_clean()
