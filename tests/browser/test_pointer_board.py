"""The pointer boards on the Pointer Networks deep-dive, in Debian Chromium.

Clicks points onto the hull board, waits for the server's answer, checks that the polygons
drawn are the ones the API returns (and the true hull of the clicked points), replays the
decoding with the step slider, edits points (drag, right-click, Delete key), restores a board
from its URL, uses the TSP and sorting boards (a value dragged along the sorting line moves
in the answer), and saves screenshots at desktop and phone width.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from app.main import ROOT
from models.checkpoints import read_manifest
from models.pointer_run import SERVED
from models.tasks import hull
from tests.browser.conftest import ARTIFACTS, TrackedPage

SCREENSHOTS = ARTIFACTS / "screenshots"
PAGE = "/papers/pointer-networks"
FRAME, PAD = 400, 24  # the board's SVG frame (app/pointer/views.py)
NAMES = {name for names in SERVED.values() for name in names}
CHECKPOINT_DIR = Path(os.environ.get("PAPERTRACE_CHECKPOINT_DIR", ROOT / "checkpoints"))

pytestmark = pytest.mark.skipif(
    not NAMES <= read_manifest(CHECKPOINT_DIR).keys(),
    reason="the pointer checkpoints are not trained (python -m models.train pointer-hull …)",
)

# Six clicks: a quadrilateral and two points inside it, far enough apart to click cleanly.
CLICKS = [(0.1, 0.15), (0.8, 0.1), (0.45, 0.4), (0.9, 0.75), (0.55, 0.6), (0.15, 0.85)]


def click_at(
    page: Page, svg: Locator, x: float, y: float, tap: bool = False, aside: bool = False
) -> None:
    svg.scroll_into_view_if_needed()  # a board with its take-away block is taller than 900 px
    box = svg.bounding_box()
    assert box is not None
    cx = box["x"] + (PAD + x * (FRAME - 2 * PAD)) / FRAME * box["width"]
    cy = box["y"] + (FRAME - PAD - y * (FRAME - 2 * PAD)) / FRAME * box["height"]
    if aside:
        # a board the browser drew at random may hold a point right there: a click on it would
        # select that point instead of adding one, so step aside to the nearest empty spot
        cx, cy = page.evaluate(
            """([cx, cy]) => {
                for (let r = 0; r < 200; r += 6) {
                    for (let a = 0; a < (r ? 16 : 1); a++) {
                        const x = cx + r * Math.cos((a * Math.PI) / 8);
                        const y = cy + r * Math.sin((a * Math.PI) / 8);
                        const hit = document.elementFromPoint(x, y);
                        if (!hit?.closest("[data-index]")) return [x, y];
                    }
                }
                return [cx, cy];
            }""",
            [cx, cy],
        )
    if tap:
        page.touchscreen.tap(cx, cy)
    else:
        page.mouse.click(cx, cy)


def drag(page: Page, start: tuple[float, float], end: tuple[float, float], steps: int = 8) -> None:
    """Press at `start`, move to `end` in `steps` moves and let go, all in one task of the page:
    a long press (550 ms without moving removes a point) cannot fire between the press and the
    first move, however long the test's driver takes between two calls on a busy machine."""
    page.evaluate(
        """([x0, y0, x1, y1, steps]) => {
            const target = document.elementFromPoint(x0, y0);
            const fire = (type, x, y) => target.dispatchEvent(new PointerEvent(type, {
                pointerId: 1, pointerType: "mouse", isPrimary: true, button: 0,
                buttons: type === "pointerup" ? 0 : 1, clientX: x, clientY: y,
                bubbles: true, cancelable: true, composed: true,
            }));
            fire("pointerdown", x0, y0);
            for (let i = 1; i <= steps; i++) {
                fire("pointermove", x0 + ((x1 - x0) * i) / steps, y0 + ((y1 - y0) * i) / steps);
            }
            fire("pointerup", x1, y1);
        }""",
        [*start, *end, steps],
    )


def wait_for_answer(page: Page, board: Locator, n: int) -> dict:
    """The board's result once the server has answered for n inputs."""
    board.element_handle().wait_for_element_state("stable")
    page.wait_for_function(
        """([board, n]) => {
            const block = board.querySelector("[data-result-json]");
            return !board.classList.contains("htmx-request")
                && block && JSON.parse(block.textContent).n === n;
        }""",
        arg=[board.element_handle(), n],
        timeout=30_000,
    )
    return json.loads(board.locator("[data-result-json]").text_content() or "{}")


def path_vertices(d: str) -> list[tuple[float, float]]:
    """An SVG path "M x,y L x,y … Z" -> its vertices in unit-square coordinates."""
    pairs = re.findall(r"(-?[\d.]+),(-?[\d.]+)", d)
    span = FRAME - 2 * PAD
    return [
        (round((float(x) - PAD) / span, 3), round((FRAME - PAD - float(y)) / span, 3))
        for x, y in pairs
    ]


def board_points(page: Page, key: str) -> list[list[float]]:
    state = parse_qs(urlsplit(page.url).query)[f"{key}-points"][0]
    return [[float(v) for v in pair.split(",")] for pair in state.split(";")]


def test_hull_board_draws_the_api_hull(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    tracked_page.goto(PAGE)
    board = page.locator("#pointer-board-hull")
    svg = board.locator("[data-board-canvas]")  # holds the SVG each answer replaces
    board.scroll_into_view_if_needed()
    # the server's first drawing: the worked example, answered before any click
    expect(board.locator("[data-layer=points] [data-index]")).to_have_count(5)
    expect(board.locator(".pb-headline")).not_to_be_empty()

    board.get_by_role("button", name="Clear").click()
    expect(board.locator("[data-error]")).to_contain_text("Add at least 3 points")
    for x, y in CLICKS:
        click_at(page, svg, x, y)
    result = wait_for_answer(page, board, len(CLICKS))

    points = board_points(page, "hull")
    assert np.allclose(points, CLICKS, atol=0.004)  # clicks land where they were aimed
    api = page.request.post("/api/pointer/hull", data={"points": points}).json()
    assert result["order"] == api["order"]
    assert result["reference"]["order"] == api["reference"]["order"]
    assert api["reference"]["order"] == hull.convex_hull_order(np.array(points))

    drawn_hull = path_vertices(board.locator("path.pb-reference").get_attribute("d") or "")
    assert drawn_hull == [tuple(points[i]) for i in api["reference"]["order"]]
    drawn_model = path_vertices(board.locator("path.pb-model.is-whole").get_attribute("d") or "")
    assert drawn_model == [tuple(points[i]) for i in api["order"]]
    expect(board.locator(".pb-summary")).to_contain_text("Exact hull (monotone chain)")

    # replay: the slider's last step shows the last choice; halos, table row and heatmap follow
    steps = len(api["steps"])
    slider = board.locator("[data-step]")
    slider.focus()
    page.keyboard.press("End")
    last = api["steps"][-1]
    chosen = "END" if last["chosen"] == len(points) else str(last["chosen"] + 1)
    expect(board.locator("[data-step-label]")).to_contain_text(
        f"Step {steps} of {steps}: chose {chosen}"
    )
    expect(board.locator(f"tr[data-step-row='{steps - 1}']")).to_have_class("is-current")
    expect(board.locator("[data-layer=halos] .pb-halo")).to_have_count(len(points) + 1)
    zeros = sum(p == 0 for p in last["distribution"][: len(points)])
    expect(board.locator("[data-layer=halos] > .pb-halo.is-zero")).to_have_count(zeros)
    # the heatmap outlines the last step's row, whose zeros are hatched: one cell per position
    heatmap = board.locator("[data-heatmap]")
    expect(heatmap.locator(".pb-hm-row.is-current")).to_have_text(f"step {steps}")
    expect(heatmap.locator(".pb-hm-current")).to_be_visible()  # drawn after the row's class
    # the outline sits on its row's label (read in one go: the heatmap may be redrawn between
    # two reads while the last answers land)
    page.wait_for_function(
        """(board) => {
            const current = board.querySelector("[data-heatmap] .pb-hm-current");
            const label = board.querySelector("[data-heatmap] .pb-hm-row.is-current");
            if (!current || !label) return false;
            const a = current.getBoundingClientRect();
            const b = label.getBoundingClientRect();
            return a.height > 0 && Math.abs(a.y + a.height / 2 - (b.y + b.height / 2)) < 6;
        }""",
        arg=board.element_handle(),
        timeout=30_000,
    )
    expect(heatmap.locator(".pb-hm-column")).to_have_count(len(points) + 1)
    page.keyboard.press("Home")
    expect(board.locator("[data-step-label]")).to_contain_text(f"Step 1 of {steps}")
    assert "hull-step=1" in page.url

    # hovering a point outlines its heatmap column, and hovering a column marks its point
    board.locator("[data-layer=points] [data-index='2']").hover()
    expect(heatmap.locator("[data-column='2']")).to_have_class(re.compile("is-hovered"))
    expect(heatmap.locator(".pb-hm-column.is-hovered")).to_have_count(1)
    heatmap.locator("[data-column='4'] rect").hover()
    expect(board.locator("[data-layer=points] [data-index='4']")).to_have_class(
        re.compile("is-hovered")
    )
    expect(heatmap.locator("[data-column='2']")).not_to_have_class(re.compile("is-hovered"))

    # edit: drag point 3, remove point 5 with a right-click and point 1 with the Delete key
    box = svg.bounding_box()
    assert box is not None
    grab = board.locator("[data-index='2'] .pb-grab").bounding_box()
    assert grab is not None
    centre = (grab["x"] + grab["width"] / 2, grab["y"] + grab["height"] / 2)
    drag(page, centre, (box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.3))
    wait_for_answer(page, board, len(CLICKS))
    assert board_points(page, "hull")[2] != points[2]
    board.locator("[data-index='4'] .pb-grab").click(button="right")
    wait_for_answer(page, board, len(CLICKS) - 1)
    board.locator("[data-layer=points] [data-index='0']").focus()
    page.keyboard.press("Delete")
    after = wait_for_answer(page, board, len(CLICKS) - 2)
    assert len(board_points(page, "hull")) == len(CLICKS) - 2

    # the URL holds the board: a reload restores the points and the answer
    page.reload()
    restored = wait_for_answer(page, board, len(CLICKS) - 2)
    assert restored["order"] == after["order"]
    expect(board.locator("[data-layer=points] [data-index]")).to_have_count(len(CLICKS) - 2)
    tracked_page.assert_clean()


def test_typed_coordinates_and_errors(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    tracked_page.goto(PAGE)
    board = page.locator("#pointer-board-hull")
    board.locator(".pb-typed summary").click()
    board.locator("[data-typed]").fill("0.1, 0.1\n0.5, 0.5\n0.9, 0.9")
    board.get_by_role("button", name="Apply").click()
    expect(board.locator("[data-error]")).to_contain_text("straight line")
    board.locator("[data-typed]").fill("0.1, 0.1\n0.9, 0.2\n0.5, 0.9\n0.5, 0.4")
    board.get_by_role("button", name="Apply").click()
    result = wait_for_answer(page, board, 4)
    assert result["reference"]["order"] == [0, 1, 2]
    expect(board.locator("[data-error]")).to_be_hidden()
    # the board's answer draws the inputs with the sentence: no refused request to log
    assert tracked_page.console_errors == [] and tracked_page.foreign_requests == []


def test_tsp_and_sort_boards(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    tracked_page.goto(PAGE)
    tsp = page.locator("#pointer-board-tsp")
    tsp.scroll_into_view_if_needed()
    tsp.locator("[data-random-n]").fill("9")
    tsp.get_by_role("button", name="Random").click()
    result = wait_for_answer(page, tsp, 9)
    assert sorted(result["order"]) == list(range(9))
    tour = path_vertices(tsp.locator("path.pb-model.is-whole").get_attribute("d") or "")
    points = board_points(page, "tsp")
    assert tour == [tuple(points[i]) for i in result["order"]]
    expect(tsp.locator(".pb-summary")).to_contain_text("Held–Karp (exact)")
    tsp.locator("[data-decoder]").select_option("beam")
    beam = wait_for_answer(page, tsp, 9)
    assert beam["decoder"] == "beam" and beam["beam_width"] == 8
    assert "tsp-decoder=beam&" in page.url and "tsp-beam_width=8" in page.url
    tsp.screenshot(path=str(SCREENSHOTS / "pointer-board-tsp-1280.png"))

    sort = page.locator("#pointer-board-sort")
    sort.scroll_into_view_if_needed()
    sort.get_by_label("1.5-entmax (sparse)").check()
    sparse = wait_for_answer(page, sort, 5)
    assert sparse["model"]["alpha"] == 1.5
    support = sparse["steps"][0]["support_size"]
    expect(sort.locator("[data-step-label]")).to_contain_text(f"support {support} of 5")
    assert "sort-alpha=1.5" in page.url
    # a value typed in joins the line
    sort.locator(".pb-typed summary").click()
    sort.locator("[data-typed]").fill("0.3, 0.9, 0.1, 0.6, 0.45, 0.75")
    sort.get_by_role("button", name="Apply").click()
    wait_for_answer(page, sort, 6)
    expect(sort.locator("[data-layer=points] [data-index]")).to_have_count(6)
    # dragging the smallest value (0.1, input 3) to the line's right end makes it the largest
    sort.locator("[data-board-canvas]").scroll_into_view_if_needed()
    line = sort.locator("[data-board-canvas]").bounding_box()
    grab = sort.locator("[data-index='2'] .pb-grab").bounding_box()
    assert line is not None and grab is not None
    target = (PAD + 0.97 * (FRAME - 2 * PAD)) / FRAME  # 0.97 on the 0..1 line
    y = grab["y"] + grab["height"] / 2
    drag(page, (grab["x"] + grab["width"] / 2, y), (line["x"] + line["width"] * target, y))
    # the answer for the new values: the exact sort now ends with input 3
    page.wait_for_function(
        """(board) => {
            const block = board.querySelector("[data-result-json]");
            if (board.classList.contains("htmx-request") || !block) return false;
            const order = JSON.parse(block.textContent).reference.order;
            return order[order.length - 1] === 2;
        }""",
        arg=sort.element_handle(),
        timeout=30_000,
    )
    dragged = wait_for_answer(page, sort, 6)
    values = [float(v) for v in parse_qs(urlsplit(page.url).query)["sort-values"][0].split(",")]
    assert values[2] == pytest.approx(0.97, abs=0.01)
    assert dragged["order"] == dragged["reference"]["order"]  # the model sorts it last too
    sort.screenshot(path=str(SCREENSHOTS / "pointer-board-sort-1280.png"))
    # the hull board on the same page was not touched by any of this
    expect(page.locator("#pointer-board-hull [data-layer=points] [data-index]")).to_have_count(5)
    tracked_page.assert_clean()


def test_a_quick_drag_is_answered_where_it_was_released(tracked_page: TrackedPage) -> None:
    """Two moves and the release within a few milliseconds: the answer on the board is the one
    for where the value was let go, not for a point the drag passed through (htmx's throttle
    modifier, shared by all of a form's triggers, used to drop both the last move and the
    release)."""
    page = tracked_page.page
    tracked_page.goto(PAGE + "?sort=0.3,0.9,0.1,0.6#pointer-board-sort")  # a link made before
    sort = page.locator("#pointer-board-sort")
    sort.scroll_into_view_if_needed()
    wait_for_answer(page, sort, 4)
    line = sort.locator("[data-board-canvas]").bounding_box()
    grab = sort.locator("[data-index='2'] .pb-grab").bounding_box()
    assert line is not None and grab is not None
    y = grab["y"] + grab["height"] / 2
    at = lambda value: line["x"] + line["width"] * (PAD + value * (FRAME - 2 * PAD)) / FRAME  # noqa: E731
    # from 0.1 through about 0.53 (between 0.3 and 0.6: third of four) to 0.97 (the largest)
    drag(page, (grab["x"] + grab["width"] / 2, y), (at(0.97), y), steps=2)
    page.wait_for_timeout(300)  # every answer asked for is on its way or in
    wait_for_answer(page, sort, 4)
    answer = json.loads(sort.locator("[data-result-json]").text_content() or "{}")
    assert answer["reference"]["order"][-1] == 2, answer["reference"]["order"]
    query = parse_qs(urlsplit(page.url).query)
    values = [float(v) for v in query["sort-values"][0].split(",")]
    assert values[2] == pytest.approx(0.97, abs=0.01)
    assert "sort" not in query  # the answer wrote the address anew, in the request's fields
    tracked_page.assert_clean()


def test_the_step_chosen_last_stays_while_an_earlier_answer_comes_in(
    tracked_page: TrackedPage,
) -> None:
    """End, then Home before End's answer is back (a slow network): End's answer must not put
    the slider back on the last step, or the request that carries Home leaves with End's step
    and the reader's last key is lost."""
    page = tracked_page.page
    tracked_page.goto(PAGE + "#pointer-board-hull")
    board = page.locator("#pointer-board-hull")
    board.scroll_into_view_if_needed()
    steps = len(wait_for_answer(page, board, 5)["steps"])

    def slow(route):
        page.wait_for_timeout(400)
        route.continue_()

    page.route("**/api/pointer/hull/board/**", slow)
    slider = board.locator("[data-step]")
    slider.focus()
    page.keyboard.press("End")
    page.wait_for_timeout(100)  # End's request has left and is not answered yet
    page.keyboard.press("Home")
    page.wait_for_timeout(1500)  # both answers are in
    expect(slider).to_have_value("1")
    expect(board.locator("[data-step-label]")).to_contain_text(f"Step 1 of {steps}")
    page.unroute("**/api/pointer/hull/board/**")
    tracked_page.assert_clean()


def test_screenshots_desktop(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    tracked_page.goto(PAGE)
    board = page.locator("#pointer-board-hull")
    board.scroll_into_view_if_needed()
    wait_for_answer(page, board, 5)
    board.screenshot(path=str(SCREENSHOTS / "pointer-board-hull-1280.png"))
    example = page.locator(".pointer-worked-example")
    example.scroll_into_view_if_needed()
    example.screenshot(path=str(SCREENSHOTS / "pointer-worked-example-1280.png"))
    tracked_page.assert_clean()


def test_phone_touch(browser: Browser, live_server: str) -> None:
    context = browser.new_context(
        viewport={"width": 390, "height": 844},
        device_scale_factor=2,
        is_mobile=True,
        has_touch=True,
        base_url=live_server,
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(PAGE)
    board = page.locator("#pointer-board-hull")
    svg = board.locator("[data-board-canvas]")  # holds the SVG each answer replaces
    svg.scroll_into_view_if_needed()  # the whole board is taller than a phone's screen
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, "the board must not make the page scroll sideways"
    click_at(page, svg, 0.6, 0.2, tap=True)
    result = wait_for_answer(page, board, 6)
    assert result["n"] == 6
    board.screenshot(path=str(SCREENSHOTS / "pointer-board-hull-390.png"))
    example = page.locator(".pointer-worked-example")
    example.scroll_into_view_if_needed()
    example.screenshot(path=str(SCREENSHOTS / "pointer-worked-example-390.png"))
    page.locator("#pointer-board-sort").screenshot(
        path=str(SCREENSHOTS / "pointer-board-sort-390.png")
    )
    assert errors == []
    context.close()
