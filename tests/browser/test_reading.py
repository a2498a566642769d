"""What a first read trips over, checked in Debian Chromium at desktop and phone width:
tables that fit or visibly scroll, a takeaway under each of our tables, a click exactly on
the sorting line, the boards' legend and focus ring, the contents after a jump or a fast
scroll, errors in the reader's words, the phone hint, and the skip link to the live model."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import TrackedPage
from tests.browser.test_pointer_board import FRAME, PAD, wait_for_answer

SLUGS = ["pointer-networks", "sparse-seq2seq"]
WIDTHS = {"desktop": (1280, 800), "phone": (390, 844)}


@pytest.fixture(params=list(WIDTHS))
def sized_page(
    request: pytest.FixtureRequest, browser: Browser, live_server: str
) -> Iterator[Page]:
    width, height = WIDTHS[request.param]
    context = browser.new_context(
        viewport={"width": width, "height": height}, base_url=live_server, reduced_motion="reduce"
    )
    yield context.new_page()
    context.close()


# For every table in the article: its box, whether it overflows its scroll box, whether the
# overflow is announced (a visible hint, a sticky first column), and the caption's box.
TABLE_REPORT = """() => {
  const column = document.querySelector('[data-prose]').getBoundingClientRect();
  const tables = document.querySelectorAll('.prose > .table-scroll table, .results-table table');
  return [...tables].map((table, i) => {
    const box = table.closest('.table-scroll');
    const hint = box.nextElementSibling;
    const first = table.querySelector('tbody tr > :first-child');
    const figure = table.closest('figure.results-table');
    const caption = figure && figure.querySelector('.table-caption').getBoundingClientRect();
    return {
      name: figure ? figure.id : `markdown table ${i + 1}`,
      results: Boolean(figure),
      overflows: box.scrollWidth > box.clientWidth + 1,
      boxRight: box.getBoundingClientRect().right,
      hinted: Boolean(hint && hint.matches('.scroll-hint') && !hint.hidden
        && hint.getBoundingClientRect().height > 0),
      sticky: getComputedStyle(first).position === 'sticky',
      captionInside: !caption
        || (caption.left >= column.left - 1 && caption.right <= column.right + 1),
      takeaway: figure ? (figure.querySelector('.table-takeaway')?.textContent || '') : null,
      columnRight: column.right,
      pageWidth: document.documentElement.scrollWidth,
    };
  });
}"""


@pytest.mark.parametrize("slug", SLUGS)
def test_every_table_fits_or_visibly_scrolls(sized_page: Page, slug: str) -> None:
    page = sized_page
    page.goto(f"/papers/{slug}")
    page.wait_for_load_state("load")
    width = page.viewport_size["width"]
    tables = page.evaluate(TABLE_REPORT)
    assert any(t["results"] for t in tables)
    for table in tables:
        assert table["pageWidth"] <= width, table  # nothing pushes the page sideways
        assert table["boxRight"] <= table["columnRight"] + 1, table
        assert table["captionInside"], table
        if table["results"]:
            assert table["takeaway"].startswith("In short:") and len(table["takeaway"]) > 40
            if width < 640:  # phones: rows are stacked cards, nothing scrolls
                assert not table["overflows"], table
        if table["overflows"]:
            assert table["hinted"] and table["sticky"], table


@pytest.mark.parametrize("slug", SLUGS)
def test_skip_link_reaches_the_live_model(tracked_page: TrackedPage, slug: str) -> None:
    page = tracked_page.page
    tracked_page.goto(f"/papers/{slug}")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(page.locator(":focus")).to_have_text("Skip to the live model")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    inside = page.evaluate(
        "() => document.activeElement.closest('.pointer-board, .entmax-playground, .s2s') !== null"
    )
    assert inside, page.evaluate("document.activeElement.outerHTML.slice(0, 200)")
    expect(page.locator(":focus")).to_be_in_viewport()
    tracked_page.assert_clean()


def test_contents_follow_a_jump_and_a_fast_scroll(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    page.set_viewport_size({"width": 1280, "height": 700})
    tracked_page.goto("/papers/sparse-seq2seq")
    anchors = page.locator(".prose h2[id], .prose h3[id]").evaluate_all("hs => hs.map(h => h.id)")
    target = anchors[len(anchors) * 3 // 4]
    # a jump by URL fragment: no click on the contents, no heading crossing a line
    page.evaluate("id => { location.hash = id; }", target)
    expect(page.locator(f".toc a[href='#{target}']")).to_have_attribute("aria-current", "location")
    # a fast scroll straight back up to just below an early heading
    early = anchors[2]
    page.evaluate(
        "id => scrollTo(0, scrollY + document.getElementById(id).getBoundingClientRect().top - 40)",
        early,
    )
    page.wait_for_function(
        """() => {
            const above = [...document.querySelectorAll('.prose h2[id], .prose h3[id]')]
                .filter(h => h.getBoundingClientRect().top <= innerHeight * 0.25);
            const current = document.querySelectorAll('.toc a[aria-current="location"]');
            return current.length === 1 && current[0].hash === '#' + above[above.length - 1].id;
        }""",
        timeout=5000,
    )
    # the active entry is inside the visible part of the sticky contents
    page.evaluate("id => { location.hash = id; }", anchors[-1])
    expect(page.locator(f".toc a[href='#{anchors[-1]}']")).to_have_attribute(
        "aria-current", "location"
    )
    visible = page.evaluate(
        """() => {
            const box = document.querySelector('[data-toc]').getBoundingClientRect();
            const entry = document.querySelector('.toc a[aria-current]').getBoundingClientRect();
            return entry.top >= box.top && entry.bottom <= box.bottom;
        }"""
    )
    assert visible
    tracked_page.assert_clean()


def test_a_click_exactly_on_the_sorting_line_adds_a_value(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    tracked_page.goto("/papers/pointer-networks")
    sort = page.locator("#pointer-board-sort")
    sort.locator("[data-board-canvas]").scroll_into_view_if_needed()
    wait_for_answer(page, sort, 5)
    axis = sort.locator(".pb-axis").bounding_box()
    svg = sort.locator("[data-board-svg]").bounding_box()
    assert axis is not None and svg is not None
    x = svg["x"] + (PAD + 0.33 * (FRAME - 2 * PAD)) / FRAME * svg["width"]
    y = axis["y"] + axis["height"] / 2  # the middle of the drawn line itself
    assert page.evaluate("([x, y]) => document.elementFromPoint(x, y).tagName", [x, y]) != "line"
    page.mouse.click(x, y)
    wait_for_answer(page, sort, 6)
    expect(sort.locator("[data-layer=points] [data-index]")).to_have_count(6)
    tracked_page.assert_clean()


def test_boards_have_a_legend_and_a_focus_ring_unlike_chosen(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    tracked_page.goto("/papers/pointer-networks")
    for board in page.locator(".pointer-board").all():
        legend = board.locator(".pb-legend")
        expect(legend).to_be_visible()
        for words in ("model's answer", "exact answer", "probability", "exactly 0", "chosen"):
            expect(legend).to_contain_text(words)
        svg, box = board.locator("[data-board-svg]").bounding_box(), legend.bounding_box()
        assert svg is not None and box is not None
        assert box["y"] >= svg["y"] + svg["height"] - 1  # below the figure, not over it
    hull = page.locator("#pointer-board-hull")
    hull.locator("[data-layer=points] [data-index]").first.focus()
    page.keyboard.press("ArrowRight")  # a key press makes the focus ring :focus-visible
    ring = hull.locator("[data-layer=points] [data-index]:focus .pb-grab")
    focus = ring.evaluate("e => getComputedStyle(e).stroke")
    chosen = hull.locator(".pb-legend .pb-key-chosen").evaluate("e => getComputedStyle(e).fill")
    assert focus not in ("none", chosen), (focus, chosen)


def test_widget_errors_count_from_one_in_the_readers_words(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    tracked_page.goto("/papers/pointer-networks")
    board = page.locator("#pointer-board-hull")
    board.locator(".pb-typed summary").click()
    board.locator("[data-typed]").fill("0.1, 0.1\n0.9, 0.2\n0.5, 0.9\n1.3, 0.4\n0.2, 0.6")
    board.get_by_role("button", name="Apply").click()
    error = board.locator("[data-error]")
    expect(error).to_contain_text("Point 4's x must be at most 1")
    assert "[" not in (error.text_content() or "") and "`" not in (error.text_content() or "")


def test_phone_hint_speaks_of_taps(browser: Browser, live_server: str) -> None:
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, base_url=live_server, has_touch=True, is_mobile=True
    )
    page = context.new_page()
    page.goto("/papers/pointer-networks")
    hint = page.locator("#pointer-board-hull [data-hint]")
    expect(hint.locator(".pb-hint-touch")).to_be_visible()
    expect(hint.locator(".pb-hint-mouse")).to_be_hidden()
    assert "right-click" not in hint.inner_text().lower()
    context.close()


def test_without_script_the_figures_are_drawn_and_the_address_is_honoured(
    browser: Browser, live_server: str
) -> None:
    context = browser.new_context(
        viewport={"width": 1280, "height": 800}, base_url=live_server, java_script_enabled=False
    )
    page = context.new_page()
    page.goto("/papers/sparse-seq2seq?entmax-alpha=2")
    curves = page.locator("[data-entmax-curves] polyline")
    expect(curves).to_have_count(5)
    for curve in curves.all():
        box = curve.bounding_box()
        assert box is not None and box["width"] > 100 and box["height"] > 20, box
    expect(page.locator("[data-entmax-simplex] svg")).to_have_count(5)
    playground = page.locator("[data-entmax-playground]")
    expect(playground.locator("[data-entmax-alpha-value]")).to_have_text("2.00")
    expect(playground.locator("[data-entmax-support]")).to_have_text("2")
    context.close()


def test_play_and_pause_do_not_move_the_slider(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    tracked_page.goto("/papers/pointer-networks")
    board = page.locator("#pointer-board-hull")
    board.scroll_into_view_if_needed()
    wait_for_answer(page, board, 5)
    play, slider = board.locator("[data-play]"), board.locator("[data-step]")
    before = (play.bounding_box(), slider.bounding_box())
    play.click()
    expect(play).to_have_text("Pause")
    after = (play.bounding_box(), slider.bounding_box())
    assert before[0]["width"] == after[0]["width"] and before[1]["x"] == after[1]["x"]
    tracked_page.assert_clean()


def test_try_this_sets_the_figure_up_and_scrolls_to_it(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    tracked_page.goto("/papers/sparse-seq2seq")
    steps = page.locator(".try-this").first.locator("a")
    expect(steps).to_have_count(4)
    steps.nth(2).click()  # α = 2
    playground = page.locator("#entmax-playground")
    expect(playground.locator("[data-entmax-alpha-value]")).to_have_text("2.00")
    expect(playground.locator("[data-entmax-support]")).to_have_text("2")
    expect(playground).to_be_in_viewport()

    tracked_page.goto("/papers/pointer-networks")
    page.locator(".try-this").first.locator("a").nth(1).click()  # point 3 outside the hull
    board = page.locator("#pointer-board-hull")
    page.wait_for_function(  # the server's answer for the moved point: a five-vertex hull
        """(board) => {
            const block = board.querySelector("[data-result-json]");
            return block && JSON.parse(block.textContent).reference.order.length === 5;
        }""",
        arg=board.element_handle(),
        timeout=30_000,
    )
    result = wait_for_answer(page, board, 5)
    assert result["steps"][0]["support_size"] == 5
    expect(board.locator("[data-step-label]")).to_contain_text("Step 1 of")
    tracked_page.assert_clean()
