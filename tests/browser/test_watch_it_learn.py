"""Watch it learn (issue 42), in Debian Chromium: on the hull and TSP boards and the inflection and
translation widgets, the reader ticks the box and moves the training slider with the keyboard;
the figure decodes the same input with each snapshot (the hull's first pointer distribution goes
from flat to sharp), the caption and the curve's marker follow, and the address keeps the step."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from models import snapshots
from models.pointer_run import SNAPSHOTS
from models.seq2seq_run import SNAPSHOTS as SEQ2SEQ_SNAPSHOTS
from tests.browser.conftest import TrackedPage
from tests.browser.test_pointer_board import PAGE, SCREENSHOTS

pytestmark = pytest.mark.skipif(
    not all(snapshots.kept_steps(r) for r in [*SNAPSHOTS.values(), *SEQ2SEQ_SNAPSHOTS.values()]),
    reason="the snapshot runs are not in checkpoints/snapshots",
)
FIVE = "0.1,0.1;0.9,0.15;0.85,0.9;0.15,0.8;0.5,0.5;0.3,0.6;0.7,0.3"


def board_result(page: Page, board_id: str, model: str) -> dict:
    """The board's answer once it is the named model's."""
    page.wait_for_function(
        """([id, model]) => {
            const board = document.getElementById(id);
            const block = board.querySelector("[data-result-json]");
            return block && !board.classList.contains("htmx-request")
                && JSON.parse(block.textContent).model.name === model;
        }""",
        arg=[board_id, model],
        timeout=30_000,
    )
    return json.loads(page.locator(f"#{board_id} [data-result-json]").text_content() or "{}")


def test_the_hull_board_learns_under_the_slider(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    steps = snapshots.kept_steps(SNAPSHOTS["hull"])
    tracked_page.goto(f"{PAGE}?hull-points={FIVE}#pointer-board-hull")
    board = page.locator("#pointer-board-hull")
    board.locator("[data-learning-on]").focus()
    page.keyboard.press("Space")
    slider = board.locator("[data-learning-slider]")
    expect(slider).to_be_enabled()
    last = board_result(page, "pointer-board-hull", f"pointer-hull@{steps[-1]}")
    slider.focus()
    page.keyboard.press("Home")
    first = board_result(page, "pointer-board-hull", "pointer-hull@0")
    expect(board.locator(".learning-caption")).to_contain_text("Step 0 of")
    assert "hull-snapshot=0" in page.url
    assert max(first["steps"][0]["distribution"]) < max(last["steps"][0]["distribution"])
    for _ in range(5):
        page.keyboard.press("ArrowRight")  # the slider keeps the focus through the answers
    board_result(page, "pointer-board-hull", f"pointer-hull@{steps[5]}")
    expect(board.locator(".learning-caption")).to_contain_text(f"Step {steps[5]:,} of")
    expect(board.locator(".learning-marker")).to_have_count(1)
    board.screenshot(path=str(SCREENSHOTS / "watch-it-learn-hull.png"))
    board.locator("[data-learning-on]").uncheck()
    board_result(page, "pointer-board-hull", "pointer-hull")
    assert "hull-snapshot" not in page.url
    tracked_page.assert_clean()


def test_the_tsp_board_learns_under_the_slider(tracked_page: TrackedPage) -> None:
    """The TSP board's default model is another; the slider swaps in the pointer-tsp run's
    snapshots, the early tour longer than the late one on the reader's cities."""
    page = tracked_page.page
    steps = snapshots.kept_steps(SNAPSHOTS["tsp"])
    tracked_page.goto(f"{PAGE}?tsp-points={FIVE}#pointer-board-tsp")
    board = page.locator("#pointer-board-tsp")
    board.locator("[data-learning-on]").check()
    last = board_result(page, "pointer-board-tsp", f"pointer-tsp@{steps[-1]}")
    board.locator("[data-learning-slider]").focus()
    for _ in range(len(steps) - 3):
        page.keyboard.press("ArrowLeft")
    early = board_result(page, "pointer-board-tsp", f"pointer-tsp@{steps[2]}")
    expect(board.locator(".learning-caption")).to_contain_text("longer than the optimal tour")
    assert f"tsp-snapshot={steps[2]}" in page.url
    assert early["length"] >= last["length"]
    board.screenshot(path=str(SCREENSHOTS / "watch-it-learn-tsp.png"))
    tracked_page.assert_clean()


SEQ2SEQ_WIDGETS = {  # task -> (the page address, the widget's id, its prefix)
    "inflection": (
        "/papers/sparse-seq2seq?inflect.lemma=go&inflect.language=en&inflect.features=V;PST"
        "#seq2seq-inflect",
        "seq2seq-inflect",
        "inflect",
    ),
    "translation": (
        "/papers/sparse-seq2seq?translate.text=Could+not+open+the+file.#seq2seq-translate",
        "seq2seq-translate",
        "translate",
    ),
}


@pytest.mark.parametrize("task", sorted(SEQ2SEQ_WIDGETS))
def test_a_seq2seq_widget_learns_under_the_slider(tracked_page: TrackedPage, task: str) -> None:
    page = tracked_page.page
    address, widget_id, prefix = SEQ2SEQ_WIDGETS[task]
    steps = snapshots.kept_steps(SEQ2SEQ_SNAPSHOTS[task])
    tracked_page.goto(address)
    widget = page.locator(f"#{widget_id}")
    widget.locator("[data-learning-on]").check()
    caption = widget.locator(".learning-caption")
    expect(caption).to_contain_text(f"Step {steps[-1]:,} of", timeout=30_000)
    widget.locator("[data-learning-slider]").focus()
    page.keyboard.press("Home")
    expect(caption).to_contain_text("Step 0 of", timeout=30_000)
    early = widget.locator(".s2s-best .s2s-hyp-text").inner_text()
    assert f"{prefix}.snapshot=0" in page.url
    page.keyboard.press("End")
    expect(caption).to_contain_text(f"Step {steps[-1]:,} of", timeout=30_000)
    late = widget.locator(".s2s-best .s2s-hyp-text").inner_text()
    assert early != late
    widget.screenshot(path=str(SCREENSHOTS / f"watch-it-learn-{task}.png"))
    tracked_page.assert_clean()
