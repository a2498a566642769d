"""The sample decoder on the TSP board, in Debian Chromium: choosing "best of k samples" sends
`decoder: "sample"` with k, shows the best of k at k = 1, 2, 4, …, and keeps k in the URL."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from models.checkpoints import read_manifest
from tests.browser.conftest import TrackedPage
from tests.browser.test_pointer_board import (
    CHECKPOINT_DIR,
    NAMES,
    PAGE,
    SCREENSHOTS,
    wait_for_answer,
)

pytestmark = pytest.mark.skipif(
    not NAMES <= read_manifest(CHECKPOINT_DIR).keys(),
    reason="the pointer checkpoints are not trained (python -m models.train pointer-hull …)",
)


def test_tsp_board_best_of_k_samples(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    tracked_page.goto(PAGE)
    board = page.locator("#pointer-board-tsp")
    board.scroll_into_view_if_needed()
    board.locator("[data-random-n]").fill("12")
    board.get_by_role("button", name="Random").click()
    wait_for_answer(page, board, 12)
    expect(board.locator("[data-samples-label]")).to_be_hidden()
    board.locator("[data-decoder]").select_option("sample")
    expect(board.locator("[data-samples-label]")).to_be_visible()
    board.locator("[data-samples]").fill("16")
    board.locator("[data-samples]").dispatch_event("change")
    page.wait_for_function(
        """(board) => {
            const block = board.querySelector("[data-result-json]");
            return block && JSON.parse(block.textContent).samples === 16
                && !board.classList.contains("htmx-request");
        }""",
        arg=board.element_handle(),
        timeout=30_000,
    )
    result = wait_for_answer(page, board, 12)
    assert result["decoder"] == "sample" and sorted(result["order"]) == list(range(12))
    assert [p["k"] for p in result["best_of_k"]] == [1, 2, 4, 8, 16]
    rows = board.locator(".pb-best-of-k tbody tr")
    expect(rows).to_have_count(5)
    expect(rows.last).to_contain_text(f"{result['best_of_k'][-1]['value']:.4f}")
    expect(board.locator(".pb-summary")).to_contain_text("best of 16 samples")
    assert "tsp-decoder=sample&" in page.url and "tsp-samples=16" in page.url
    board.screenshot(path=str(SCREENSHOTS / "pointer-board-tsp-sample-1280.png"))
    # the URL restores the decoder and k
    page.goto(page.url.split("#")[0])
    restored = wait_for_answer(page, page.locator("#pointer-board-tsp"), 12)
    assert restored["decoder"] == "sample" and restored["samples"] == 16
    assert restored["order"] == result["order"]  # seeded: the same samples again
