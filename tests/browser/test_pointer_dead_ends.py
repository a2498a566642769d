"""The pointer boards never leave a reader stuck (issue 38), in Debian Chromium: an input outside
what the server takes is refused in place and the next good one answers; a shared link whose
decoder the page render cannot run says so before its figure and runs it on request; a refused
answer dims the last figure and labels it; an answer beyond the model's trained sizes says so;
on a phone a swipe across the board scrolls the page and the board fits one screen with large
targets; the END mark and the sorting line's numbers stay readable."""

from __future__ import annotations

import json
import random
import re
import time

from playwright.sync_api import Browser, BrowserContext, Locator, Page, Route, expect

from models.checkpoints import ancestry, read_manifest
from models.pointer_run import SERVED
from tests.browser.conftest import TrackedPage
from tests.browser.test_pointer_board import (
    CHECKPOINT_DIR,
    PAGE,
    SCREENSHOTS,
    board_points,
    click_at,
    pytestmark,  # noqa: F401 (skip without the trained pointer checkpoints)
    wait_for_answer,
)

PHONE = {"width": 390, "height": 844}


def random_points(n: int, seed: int) -> str:
    rng = random.Random(seed)
    return ";".join(f"{rng.random():.3f},{rng.random():.3f}" for _ in range(n))


def wait_for_result(page: Page, board: Locator, condition: str) -> dict:
    """The board's result once `condition` (JS, of `r`, the result's JSON) holds."""
    page.wait_for_function(
        f"""(board) => {{
            const block = board.querySelector("[data-result-json]");
            if (board.classList.contains("htmx-request") || !block) return false;
            const r = JSON.parse(block.textContent);
            return {condition};
        }}""",
        arg=board.element_handle(),
        timeout=30_000,
    )
    return json.loads(board.locator("[data-result-json]").text_content() or "{}")


def vertical_gap(a: Locator, b: Locator) -> float:
    """Pixels between two boxes one above the other (0 when they overlap vertically)."""
    first, second = a.bounding_box(), b.bounding_box()
    assert first is not None and second is not None
    top = max(first["y"], second["y"])
    bottom = min(first["y"] + first["height"], second["y"] + second["height"])
    return max(0.0, top - bottom)


def change(field: Locator, value: str) -> None:
    field.fill(value)
    field.dispatch_event("change")


def trained_sizes(name: str) -> tuple[int, int]:
    """The smallest and largest n the checkpoint, and the weights it was fine-tuned from, were
    trained on: from the manifest (an earlier version of a continued run names no sizes)."""
    entry = read_manifest(CHECKPOINT_DIR)[name]
    chain = [entry, *ancestry(entry, CHECKPOINT_DIR)]
    ranges = [e["data"]["n_range"] for e in chain if "n_range" in e.get("data", {})]
    return min(r[0] for r in ranges), max(r[1] for r in ranges)


# ---- 1: inputs outside the server's range are refused in place; the board recovers ----


def test_an_input_out_of_range_is_refused_in_place_and_the_board_recovers(
    tracked_page: TrackedPage,
) -> None:
    page = tracked_page.page
    tracked_page.goto(PAGE)
    board = page.locator("#pointer-board-hull")
    canvas = board.locator("[data-board-canvas]")
    error = board.locator("[data-error]")
    board.scroll_into_view_if_needed()
    config = json.loads(board.locator("[data-board-config]").text_content() or "{}")
    limit = config["max_inputs"]
    # the prose that says a Ptr-Net runs on 500 points says where the boards stop
    claim = page.locator("[data-prose] p", has_text="on 500")
    expect(claim).to_contain_text(f"up to {limit} points")

    n = board.locator("[data-random-n]")
    n.fill("200")
    board.get_by_role("button", name="Random").click()
    expect(error).to_be_visible()
    expect(error).to_contain_text(str(limit))
    assert vertical_gap(error, n) < 60, "the sentence sits by the n box"
    expect(board.locator("[data-layer=points] [data-index]")).to_have_count(5)
    board.screenshot(path=str(SCREENSHOTS / "pointer-board-n-200-1280.png"))
    click_at(page, canvas, 0.6, 0.3)  # a click right after adds a point
    wait_for_answer(page, board, 6)
    expect(error).to_be_hidden()
    n.fill("12")
    board.get_by_role("button", name="Random").click()
    wait_for_answer(page, board, 12)

    # too many typed points: refused by the server, and a click then adds to the board drawn
    board.locator(".pb-typed summary").click()
    board.locator("[data-typed]").fill(random_points(limit + 1, 1).replace(";", "\n"))
    board.get_by_role("button", name="Apply").click()
    expect(error).to_contain_text(f"at most {limit}")
    click_at(page, canvas, 0.5, 0.5, aside=True)  # the board is random
    wait_for_answer(page, board, 13)
    expect(error).to_be_hidden()
    # refused again, then another control answers for the board as drawn
    board.locator("[data-typed]").fill(random_points(limit + 1, 2).replace(";", "\n"))
    board.get_by_role("button", name="Apply").click()
    expect(error).to_contain_text(f"at most {limit}")
    decoder = board.locator("[data-decoder]")
    decoder.select_option("beam")
    wait_for_result(page, board, "r.decoder === 'beam' && r.n === 13")
    expect(error).to_be_hidden()

    # a k the server refuses: its sentence by the k box; the greedy decoder, which reads no k,
    # answers; a good k answers again
    decoder.select_option("sample")
    wait_for_result(page, board, "r.decoder === 'sample' && r.n === 13")
    samples = board.locator("[data-samples]")
    change(samples, str(config["max_samples"] + 44))
    expect(error).to_contain_text(f"at most {config['max_samples']}")
    assert vertical_gap(error, samples) < 60, "the sentence sits by the k box"
    decoder.select_option("greedy")
    wait_for_result(page, board, "r.decoder === 'greedy' && r.n === 13")
    expect(error).to_be_hidden()
    decoder.select_option("sample")
    expect(error).to_contain_text(f"at most {config['max_samples']}")
    change(samples, "16")
    wait_for_result(page, board, "r.samples === 16")
    expect(error).to_be_hidden()
    click_at(page, canvas, 0.3, 0.7, aside=True)
    wait_for_answer(page, board, 14)


# ---- 3: a shared decoder the page render cannot run ----


def test_a_shared_heavy_decoder_says_so_before_the_figure_and_runs_on_request(
    tracked_page: TrackedPage,
) -> None:
    page = tracked_page.page
    query = f"hull-points={random_points(50, 5)}&hull-decoder=sample&hull-samples=64"
    tracked_page.goto(f"{PAGE}?{query}#pointer-board-hull")
    board = page.locator("#pointer-board-hull")
    top = board.evaluate("(b) => b.getBoundingClientRect().top")
    padding = page.evaluate("parseFloat(getComputedStyle(document.documentElement).scrollPadding)")
    assert abs(top - padding) < 2, f"the link opens scrolled to the board (its top at {top} px)"
    # the board keeps the sender's settings, so the next answer is the sender's decoder
    expect(board.locator("[data-decoder]")).to_have_value("sample")
    expect(board.locator("[data-samples]")).to_have_value("64")
    note = board.locator("[data-url-note]")
    expect(note).to_be_visible()
    expect(note).to_contain_text("best of 64 samples")
    expect(note).to_contain_text("greedy")
    note_box, canvas_box = note.bounding_box(), board.locator("[data-board-svg]").bounding_box()
    assert note_box is not None and canvas_box is not None
    assert note_box["y"] + note_box["height"] <= canvas_box["y"], "said before the figure"
    board.screenshot(path=str(SCREENSHOTS / "pointer-board-shared-heavy-1280.png"))
    note.get_by_role("button", name="Run best of 64 samples").click()
    result = wait_for_result(page, board, "r.decoder === 'sample'")
    assert result["samples"] == 64 and result["n"] == 50
    expect(note).to_be_hidden()
    assert page.url.endswith("#pointer-board-hull")
    tracked_page.assert_clean()


# ---- 4: a refused answer dims the last figure and labels it ----


def test_a_refused_answer_dims_the_last_figure_and_says_so(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    tracked_page.goto(PAGE)
    tsp = page.locator("#pointer-board-tsp")
    tsp.scroll_into_view_if_needed()
    tsp.locator("[data-random-n]").fill("20")
    tsp.get_by_role("button", name="Random").click()
    wait_for_answer(page, tsp, 20)
    tsp.locator("[data-decoder]").select_option("sample")
    wait_for_result(page, tsp, "r.decoder === 'sample' && r.samples === 64")

    def over_time(route: Route) -> None:  # the answer of a decode past its deadline
        route.fulfill(
            status=503,
            headers={"Retry-After": "1", "Content-Type": "application/json"},
            body=json.dumps(
                {
                    "detail": "The model could not finish within 2 s; try a narrower beam, "
                    "fewer inputs or a shorter text, or try again when the site is less busy."
                }
            ),
        )

    page.route(re.compile(r"/api/pointer/tsp/board/tsp\?.*samples=256"), over_time)
    samples = tsp.locator("[data-samples]")
    change(samples, "256")
    error = tsp.locator("[data-error]")
    expect(error).to_contain_text("could not finish within 2 s")
    assert vertical_gap(error, samples) < 60, "the sentence sits by the k box"
    label = tsp.locator("[data-stale-label]")
    expect(label).to_be_visible()
    expect(label).to_contain_text("last answer")
    opacity = "(e) => Number(getComputedStyle(e).opacity)"
    assert tsp.locator("[data-board-canvas]").evaluate(opacity) < 0.6
    assert tsp.locator("[data-result]").evaluate(opacity) < 0.6
    tsp.screenshot(path=str(SCREENSHOTS / "pointer-board-tsp-refused-1280.png"))
    page.unroute(re.compile(r"/api/pointer/tsp/board/tsp\?.*samples=256"))
    change(samples, "32")
    wait_for_result(page, tsp, "r.samples === 32")
    expect(label).to_be_hidden()
    assert tsp.locator("[data-board-canvas]").evaluate(opacity) == 1


# ---- 5: answers beyond the model's trained sizes ----


def test_answers_beyond_the_trained_sizes_say_so(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    low, high = trained_sizes(SERVED["tsp"][0])
    tracked_page.goto(f"{PAGE}?tsp-points={random_points(high + 10, 2)}")
    tsp = page.locator("#pointer-board-tsp")
    beyond = tsp.locator("[data-beyond]")
    expect(beyond).to_be_visible()  # the page's own drawing
    expect(beyond).to_contain_text(f"{low}–{high}")
    expect(beyond).to_contain_text(str(high + 10))
    tsp.scroll_into_view_if_needed()
    tsp.locator("[data-random-n]").fill(str(high - 1))
    tsp.get_by_role("button", name="Random").click()
    wait_for_answer(page, tsp, high - 1)
    expect(beyond).to_be_hidden()
    tsp.locator("[data-random-n]").fill("50")
    tsp.get_by_role("button", name="Random").click()
    wait_for_answer(page, tsp, 50)
    expect(beyond).to_be_visible()
    expect(beyond).to_contain_text(f"{low}–{high}")
    tsp.screenshot(path=str(SCREENSHOTS / "pointer-board-tsp-beyond-1280.png"))

    hull = page.locator("#pointer-board-hull")
    hull_low, hull_high = trained_sizes(SERVED["hull"][0])
    expect(hull.locator("[data-beyond]")).to_be_hidden()  # the example's 5 points
    hull.scroll_into_view_if_needed()
    hull.locator("[data-random-n]").fill(str(hull_high + 10))
    hull.get_by_role("button", name="Random").click()
    wait_for_answer(page, hull, hull_high + 10)
    expect(hull.locator("[data-beyond]")).to_contain_text(f"{hull_low}–{hull_high}")
    tracked_page.assert_clean()


# ---- 6: the phone ----


def phone(browser: Browser, live_server: str) -> tuple[BrowserContext, Page]:
    context = browser.new_context(
        viewport=PHONE,
        device_scale_factor=2,
        is_mobile=True,
        has_touch=True,
        reduced_motion="reduce",
        base_url=live_server,
    )
    return context, context.new_page()


def touch_drag(page: Page, x: float, y: float, dx: float, dy: float, steps: int = 10) -> None:
    """One finger down at (x, y), moved by (dx, dy) in `steps`, lifted: real touch events."""
    cdp = page.context.new_cdp_session(page)

    def send(kind: str, at: tuple[float, float] | None) -> None:
        points = [] if at is None else [{"x": at[0], "y": at[1]}]
        cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

    send("touchStart", (x, y))
    for i in range(1, steps + 1):
        send("touchMove", (x + dx * i / steps, y + dy * i / steps))
        time.sleep(0.016)
    send("touchEnd", None)
    cdp.detach()


def test_phone_a_swipe_on_the_board_scrolls_and_a_tap_adds_a_point(
    browser: Browser, live_server: str
) -> None:
    context, page = phone(browser, live_server)
    page.goto(PAGE)
    board = page.locator("#pointer-board-hull")
    canvas = board.locator("[data-board-canvas]")
    canvas.evaluate("(c) => c.scrollIntoView({block: 'center', behavior: 'instant'})")
    wait_for_answer(page, board, 5)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url) if "/board/" in r.url else None)
    box = canvas.bounding_box()
    assert box is not None
    before = page.evaluate("scrollY")
    # a one-finger swipe up that starts on the empty board
    touch_drag(page, box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.75, 0, -220)
    page.wait_for_timeout(600)
    scrolled = page.evaluate("scrollY") - before
    assert scrolled > 100, f"the page scrolled {scrolled} px"
    assert requests == [], "the swipe asked for no answer"
    expect(board.locator("[data-layer=points] [data-index]")).to_have_count(5)

    canvas.evaluate("(c) => c.scrollIntoView({block: 'center', behavior: 'instant'})")
    click_at(page, canvas, 0.6, 0.3, tap=True)  # a tap adds a point
    wait_for_answer(page, board, 6)
    # a finger on a point still drags it, and the page stays put
    grab = board.locator("[data-index='2'] .pb-grab").bounding_box()
    assert grab is not None
    before, moved_from = page.evaluate("scrollY"), board_points(page, "hull")[2]
    touch_drag(page, grab["x"] + grab["width"] / 2, grab["y"] + grab["height"] / 2, 60, 40)
    page.wait_for_function(
        "(p) => !new URLSearchParams(location.search).get('hull-points').includes(p)",
        arg=f"{moved_from[0]:g},{moved_from[1]:g}",
        timeout=30_000,
    )
    wait_for_answer(page, board, 6)
    assert abs(page.evaluate("scrollY") - before) < 2
    x, y = board_points(page, "hull")[2]
    assert x > moved_from[0] and y < moved_from[1]
    context.close()


def test_phone_the_board_and_play_fit_one_screen_with_large_targets(
    browser: Browser, live_server: str
) -> None:
    context, page = phone(browser, live_server)
    page.goto(PAGE)
    for key in ("hull", "tsp", "sort"):
        board = page.locator(f"#pointer-board-{key}")
        board.scroll_into_view_if_needed()
        top, play = board.bounding_box(), board.locator("[data-play]").bounding_box()
        assert top is not None and play is not None
        span = play["y"] + play["height"] - top["y"]
        assert span <= PHONE["height"], f"{key}: board top to Play is {span:.0f} px"
        targets = board.evaluate(
            """(board) => [...board.querySelectorAll(
                    "input, select, button, summary, textarea, .pb-grab")]
                .filter((e) => e.getClientRects().length
                    && getComputedStyle(e).visibility !== "hidden")
                .map((e) => { const r = e.getBoundingClientRect();
                    return [e.outerHTML.slice(0, 60), r.width, r.height]; })"""
        )
        small = [t for t in targets if min(t[1], t[2]) < 24]
        assert small == [], f"{key}: touch targets under 24 px: {small}"
    page.locator("#pointer-board-sort").screenshot(
        path=str(SCREENSHOTS / "pointer-board-sort-targets-390.png")
    )
    board = page.locator("#pointer-board-hull")
    board.scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / "pointer-board-hull-screen-390.png"))
    context.close()


# ---- 7: the END mark and the sorting line's numbers ----


def test_the_end_mark_keeps_clear_of_points_in_its_corner(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    corner = "0.1,0.1;0.5,0.2;0.3,0.7;0.95,0.95;0.93,0.9;0.97,0.92;0.9,0.97"
    tracked_page.goto(f"{PAGE}?hull-points={corner}#pointer-board-hull")
    svg = page.locator("#pointer-board-hull [data-board-svg]")
    overlaps = svg.evaluate(
        """(svg) => {
            const end = svg.querySelector(".pb-end text").getBBox();
            return [...svg.querySelectorAll("[data-layer=points] .pb-point circle:not(.pb-grab)")]
                .map((c) => c.getBBox())
                .filter((p) => p.x < end.x + end.width + 2 && end.x < p.x + p.width + 2
                    && p.y < end.y + end.height + 2 && end.y < p.y + p.height + 2).length;
        }"""
    )
    svg.screenshot(path=str(SCREENSHOTS / "pointer-board-hull-end-corner-1280.png"))
    assert overlaps == 0


def test_fifty_values_keep_their_numbers_off_each_other_and_out_of_piles(
    tracked_page: TrackedPage,
) -> None:
    page = tracked_page.page
    rng = random.Random(1)
    values = ",".join(f"{rng.random():.3f}" for _ in range(50))
    tracked_page.goto(f"{PAGE}?sort-values={values}#pointer-board-sort")
    svg = page.locator("#pointer-board-sort [data-board-svg]")
    shown = svg.evaluate(
        """(svg) => [...svg.querySelectorAll("[data-layer=points] .pb-point text")]
            .filter((t) => getComputedStyle(t).visibility !== "hidden")
            .map((t) => { const b = t.getBBox(); return [b.x, b.x + b.width]; })"""
    )
    svg.screenshot(path=str(SCREENSHOTS / "pointer-board-sort-50-1280.png"))
    stacked = [
        (a, b) for i, a in enumerate(shown) for b in shown[i + 1 :] if a[0] < b[1] and b[0] < a[1]
    ]
    assert stacked == [], "numbers stacked one above another over a crowded line"
    assert len(shown) >= 10  # thinned, not emptied
