"""The attention-routing page's live figures in a real browser: the attention model's board
(and its symmetric decoder), the permutation test, the Pointer Network side by side through
one link, the encoder-attention view and the REINFORCE step."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.conftest import TrackedPage

PAGE = "/papers/attention-routing"


def test_the_attention_models_board_decodes_symmetrically(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    tracked_page.goto(f"{PAGE}#pointer-board-am")
    board = page.locator("#pointer-board-am")
    decoder = board.locator("[data-decoder]")
    expect(decoder.locator("option")).to_have_text(
        ["greedy", "best of k samples", "symmetric (8 · n greedy)"]
    )
    decoder.select_option("symmetric")
    expect(board.locator("[data-result]")).to_contain_text("symmetric: the shortest of 80 greedy")
    assert "am-decoder=symmetric" in page.url and "am-model=attention-routing-tsp20" in page.url
    assert page.url.endswith("#pointer-board-am")
    tracked_page.assert_clean()


def test_relisting_the_cities_moves_the_lstm_pointer_and_not_the_attention_model(
    tracked_page: TrackedPage,
) -> None:
    page = tracked_page.page
    tracked_page.goto(PAGE)
    links = page.locator(".try-this a[href*='lstm-points']")
    lstm, am = page.locator("#pb-lstm-step-label"), page.locator("#pb-am-step-label")
    links.nth(0).click()
    expect(lstm).to_contain_text("chose 1 ")  # the first listed city
    expect(am).to_contain_text("chose 8 ")  # the city at (0.42, 0.25)
    links.nth(1).click()
    expect(lstm).to_contain_text("chose 1 ")  # the first listed again: another city
    expect(am).to_contain_text("chose 3 ")  # the same city, now listed third
    tracked_page.assert_clean()


def test_one_link_puts_the_same_cities_on_both_boards(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    tracked_page.goto(PAGE)
    page.locator(".try-this a[href*='ptr-points']").first.click()
    for key in ("ptr", "am"):
        expect(page.locator(f"#pointer-board-{key} .pb-point")).to_have_count(20)
    tracked_page.assert_clean()


def test_the_encoder_attention_follows_the_pointer_and_the_controls(
    tracked_page: TrackedPage,
) -> None:
    page = tracked_page.page
    tracked_page.goto(f"{PAGE}#routing-attention")
    figure = page.locator("#routing-attention")
    first_line = figure.locator("[data-lines] line").first
    start = first_line.get_attribute("x1")
    figure.locator("[data-city-number='5'] circle").hover()  # redrawn in place, from city 5
    city5 = figure.locator("[data-city-number='5'] circle").get_attribute("cx")
    assert first_line.get_attribute("x1") == city5 != start
    figure.locator(
        "[data-city-number='5'] circle"
    ).click()  # chosen: the readout and address follow
    expect(figure.locator("[data-readout]")).to_contain_text("city 5 reads")
    figure.locator("[data-layer]").select_option("1")
    expect(figure.locator("[data-readout]")).to_contain_text("Layer 1, head 1: city 5")
    assert "attn-layer=1" in page.url and "attn-city=5" in page.url
    figure.locator("[data-city-number='2']").focus()  # the keyboard reaches every city
    assert first_line.get_attribute("x1") == figure.locator(
        "[data-city-number='2'] circle"
    ).get_attribute("cx")
    tracked_page.assert_clean()


def test_a_reinforce_step_resamples_and_refuses_visibly(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    tracked_page.goto(f"{PAGE}#routing-reinforce")
    figure = page.locator("#routing-reinforce")
    rows = figure.locator(".routing-bars tbody tr")
    expect(rows).to_have_count(16)
    before = rows.all_inner_texts()
    figure.locator("input[name='rl-seed']").fill("7")
    figure.locator("input[name='rl-seed']").press("Enter")
    expect(rows.first).not_to_have_text(before[0])
    page.wait_for_url(re.compile(r"rl-seed=7.*#routing-reinforce$"))
    figure.locator("input[name='rl-samples']").fill("500")
    figure.locator("input[name='rl-samples']").press("Enter")
    error = figure.locator("[data-hx-error]")
    expect(error).to_contain_text("must be at most 64; got 500")
    expect(figure).to_have_class("widget routing-figure is-stale")
    figure.locator("input[name='rl-samples']").fill("4")
    figure.locator("input[name='rl-samples']").press("Enter")
    expect(rows).to_have_count(4)
    expect(error).to_be_hidden()
    # Chromium logs the refused (422) response itself; nothing else may go wrong
    assert all("status of 422" in error for error in tracked_page.console_errors)
    assert tracked_page.foreign_requests == []
