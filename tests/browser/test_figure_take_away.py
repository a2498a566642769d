"""Figures that go with the reader (issue 42), in Debian Chromium: "your turn" on the TSP and
hull boards, by keyboard and by clicks, scored against the model and the exact answer; every
live figure's take-away block; the exported SVG opened alone, with no network and no page
styles, draws what the page draws; the "Run it yourself" script read off the page after the
reader changed the figure prints what the board shows."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from playwright.sync_api import Browser, expect

from app.main import ROOT
from tests.browser.conftest import TrackedPage
from tests.browser.test_pointer_board import (
    PAGE,
    SCREENSHOTS,
    click_at,
    pytestmark,  # noqa: F401 (skip without the trained pointer checkpoints)
    wait_for_answer,
)

FIVE = "0.1,0.1;0.9,0.15;0.85,0.9;0.15,0.8;0.5,0.5"  # a quadrilateral and its centre
LIVE = {  # every page's live figures: their take-away blocks
    "/papers/pointer-networks": ["pb-hull", "pb-tsp", "pb-sort"],
    "/papers/sparse-seq2seq": ["entmax-playground", "seq2seq-inflect", "seq2seq-translate"],
    "/papers/attention-routing": [
        "pb-am",
        "pb-ptr",
        "pb-lstm",
        "routing-attention",
        "routing-reinforce",
    ],
}


def test_your_turn_on_the_tsp_board_by_keyboard(tracked_page: TrackedPage) -> None:
    """Turn it on, pick the five cities with Tab and Enter, undo one with Backspace: the model's
    tour stays hidden until the last pick, then the verdict names the winner and the table
    has a row per step."""
    page = tracked_page.page
    tracked_page.goto(f"{PAGE}?tsp-points={FIVE}#pointer-board-tsp")
    board = page.locator("#pointer-board-tsp")
    turn = board.locator("[data-turn]")
    turn.focus()
    page.keyboard.press("Space")
    expect(board.locator(".pb-verdict")).to_contain_text("pick the first point", timeout=30_000)
    assert board.locator("[data-board-svg]").get_attribute("class").count("is-hiding") == 1
    for number in (1, 2, 5, 4):
        point = board.locator(f"[data-board-svg] [data-index='{number - 1}']")
        point.focus()
        page.keyboard.press("Enter")
        expect(board.locator(".pb-verdict")).to_contain_text(
            f"{[1, 2, 5, 4].index(number) + 1} picked", timeout=30_000
        )
    board.locator("[data-board-svg] [data-index='3']").focus()
    page.keyboard.press("Backspace")  # undo the 4
    expect(board.locator(".pb-verdict")).to_contain_text("3 picked", timeout=30_000)
    assert "tsp-mine=1,2,5" in page.url and page.url.endswith("#pointer-board-tsp")
    expect(board.locator("[data-layer='model']")).to_be_hidden()
    board.locator("[data-board-svg] [data-index='2']").focus()
    page.keyboard.press("Enter")
    # the answer redraws the board: the next point is focused on the board it drew
    expect(board.locator(".pb-verdict")).to_contain_text("4 picked", timeout=30_000)
    board.locator("[data-board-svg] [data-index='3']").focus()
    page.keyboard.press("Enter")
    expect(board.locator(".pb-verdict")).to_have_text(
        re.compile(r"^(You win|The model wins|A tie)\."), timeout=30_000
    )
    expect(board.locator("[data-layer='model']")).to_be_visible()
    rows = board.locator(".pb-your-score tbody tr")
    expect(rows).to_have_count(5)
    assert "tsp-mine=1,2,5,3,4" in page.url
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    board.screenshot(path=str(SCREENSHOTS / "your-turn-tsp.png"))
    tracked_page.assert_clean()


def test_your_turn_on_the_hull_board_by_clicks(tracked_page: TrackedPage) -> None:
    """Clicking the four corners around the hull wins or ties (the model finds this hull
    too); a click on the empty board adds no point on your turn."""
    page = tracked_page.page
    tracked_page.goto(f"{PAGE}?hull-points={FIVE}&hull-turn=1#pointer-board-hull")
    board = page.locator("#pointer-board-hull")
    svg = board.locator("[data-board-canvas]")
    expect(board.locator(".pb-verdict")).to_contain_text("pick the first point")
    click_at(page, svg, 0.3, 0.6)  # empty board: nothing happens
    page.wait_for_timeout(300)
    assert "hull-mine" not in page.url
    for x, y in ((0.1, 0.1), (0.9, 0.15), (0.85, 0.9), (0.15, 0.8)):
        click_at(page, svg, x, y)
        page.wait_for_timeout(100)
    line = board.locator(".pb-verdict")
    expect(line).to_contain_text("Your polygon is the exact hull", timeout=30_000)
    text = line.inner_text()
    assert text.startswith(("You win.", "A tie."))
    assert board.locator("[data-board-svg] .pb-point").count() == 5  # no point was added
    tracked_page.assert_clean()


def test_every_live_figure_has_its_take_away_block(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    for path, figures in LIVE.items():
        tracked_page.goto(path)
        for figure in figures:
            block = page.locator(f"#{figure}-take-away")
            for name in ("Download SVG", "Download PNG", "Copy link"):
                expect(block.get_by_role("link", name=name)).to_have_count(1)
            block.locator("summary", has_text="Cite").click()
            expect(block.locator(f"#{figure}-take-away-cite")).to_contain_text("@misc{")
            block.locator("summary", has_text="Run it yourself").click()
            expect(block.locator(f"#{figure}-take-away-run")).to_contain_text("print(")
    tracked_page.assert_clean()


def test_copy_link_copies_the_figure_address(browser: Browser, live_server: str) -> None:
    context = browser.new_context(base_url=live_server)
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.goto(f"{PAGE}?tsp-points={FIVE}")
    block = page.locator("#pb-tsp-take-away")
    block.get_by_role("link", name="Copy link").click()
    expect(block.get_by_role("link", name="Copied")).to_have_count(1)
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith(live_server + PAGE + "?") and copied.endswith("#pointer-board-tsp")
    assert "tsp-points=0.1,0.1;0.9,0.15" in copied
    block.locator("summary", has_text="Cite").click()
    block.get_by_role("button", name="Copy the citation").click()
    cited = page.evaluate("navigator.clipboard.readText()")
    assert cited.startswith("@inproceedings{")
    assert f"\\url{{{live_server}{PAGE}?" in cited  # the server's path, made absolute here
    context.close()


def test_the_exported_svg_alone_draws_what_the_page_draws(
    tracked_page: TrackedPage, browser: Browser
) -> None:
    """The downloaded SVG, opened in a fresh context that reaches no network and has no page
    styles, holds the same paths and points as the board on the page, in the same colours."""
    page = tracked_page.page
    tracked_page.goto(f"{PAGE}?tsp-points={FIVE}&tsp-step=3")
    board = page.locator("#pointer-board-tsp")
    link = page.locator("#pb-tsp-take-away").get_by_role("link", name="Download SVG")
    with page.expect_download() as download:
        link.click()
    svg = open(download.value.path(), encoding="utf-8").read()  # noqa: SIM115
    drawn = board.locator("[data-board-svg]")

    def shapes(scope) -> dict:
        return scope.evaluate(
            """(svg) => {
                const paths = {};
                for (const cls of ["pb-model", "pb-reference"]) {
                    const el = svg.querySelector(`path.${cls}`);
                    const style = getComputedStyle(el);
                    paths[cls] = [el.getAttribute("d"), style.stroke, style.strokeDasharray];
                }
                const points = [...svg.querySelectorAll(".pb-point circle:not(.pb-grab)")]
                    .map((c) => [c.getAttribute("cx"), c.getAttribute("cy"),
                                 getComputedStyle(c).fill]);
                return { paths, points };
            }"""
        )

    on_page = shapes(drawn)
    alone = browser.new_context(offline=True)
    fresh = alone.new_page()
    fresh.set_content(svg)
    exported = shapes(fresh.locator("svg svg.pb-svg"))
    assert exported == on_page
    fresh.screenshot(path=str(SCREENSHOTS / "exported-tsp.png"))
    alone.close()


def test_the_script_on_the_page_prints_what_the_board_shows(tracked_page: TrackedPage) -> None:
    """After the reader draws random cities, the board's script (read off the page) prints
    the order the board's answer has."""
    page = tracked_page.page
    tracked_page.goto(PAGE)
    board = page.locator("#pointer-board-tsp")
    board.scroll_into_view_if_needed()
    board.locator("[data-random-n]").fill("9")
    board.get_by_role("button", name="Random").click()
    result = wait_for_answer(page, board, 9)
    source = page.locator("#pb-tsp-take-away-run").text_content()
    assert "inputs=" in source and source.count("[") > 9
    done = subprocess.run(
        [sys.executable, "-c", source],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    printed = dict(line.split(": ", 1) for line in done.stdout.strip().splitlines())
    assert json.loads(printed["order"]) == result["order"]
    assert printed["correct"] == str(result["correct"])
    tracked_page.assert_clean()
