"""The sparse seq2seq widgets in Debian Chromium: type a lemma, drag α, watch the output support
fall; type a sentence, see its heatmap; compare mode; the state in the URL; screenshots.

The live server serves checkpoints/ (or $PAPERTRACE_CHECKPOINT_DIR): the shipped models.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.browser.conftest import ARTIFACTS, TrackedPage

PAGE = "/papers/sparse-seq2seq"
INFLECT = "#seq2seq-inflect"
TRANSLATE = "#seq2seq-translate"
SCREENSHOTS = ARTIFACTS / "screenshots"
# A decode on a CPU shared with other jobs can take a few seconds.
FIGURE_MS = 30_000


def open_widget(tracked_page: TrackedPage, selector: str, query: str = "") -> Locator:
    tracked_page.goto(f"{PAGE}{query}")
    widget = tracked_page.page.locator(selector)
    expect(widget).to_have_attribute("data-s2s-ready", "true", timeout=FIGURE_MS)
    widget.scroll_into_view_if_needed()
    return widget


def figure(widget: Locator) -> Locator:
    return widget.locator("[data-s2s-single] [data-s2s-result]")


def wait_for_figure(widget: Locator, alpha: str, source: str) -> Locator:
    """The single figure once it shows `alpha` for `source` (its heatmap's column labels joined,
    SentencePiece's word marks as spaces)."""
    widget.page.wait_for_function(
        """([root, alpha, source]) => {
            const result = root.querySelector("[data-s2s-single] [data-s2s-result]");
            if (!result || root.classList.contains("htmx-request")) return false;  // htmx busy
            if (result.dataset.alpha !== alpha) return false;
            const labels = [...result.querySelectorAll(".s2s-col-label")].map((t) => t.textContent);
            return labels.join("").replaceAll("\u2581", " ").trim() === source;
        }""",
        arg=[widget.element_handle(), alpha, source],
        timeout=FIGURE_MS,
    )
    return figure(widget)


def drag_slider(page: Page, slider: Locator, start: float, end: float) -> None:
    """Press at `start` (0-1 along the track) and drag to `end` with the mouse."""
    box = slider.bounding_box()
    assert box is not None
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + 2 + (box["width"] - 4) * start, y)
    page.mouse.down()
    for step in range(1, 11):
        fraction = start + (end - start) * step / 10
        page.mouse.move(box["x"] + 2 + (box["width"] - 4) * fraction, y)
    page.mouse.up()


def query_state(page: Page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(page.url).query).items()}


def test_dragging_alpha_from_1_to_2_makes_the_output_support_fall(
    tracked_page: TrackedPage,
) -> None:
    page = tracked_page.page
    widget = open_widget(tracked_page, INFLECT)
    widget.locator("input[name=lemma]").fill("walk")
    widget.locator("select[name=language]").select_option("en")
    widget.locator("select[name=features]").select_option("V;PST")
    slider = widget.locator("[data-s2s-alpha-slider]")
    # the answer for the new input may move the controls: drag once it is in
    wait_for_figure(widget, "1.5", "<en><V><PST>walk")

    drag_slider(page, slider, 0.5, 0.0)
    softmax = wait_for_figure(widget, "1.0", "<en><V><PST>walk")
    expect(widget.locator("[data-s2s-readout]")).to_contain_text("α = 1 (softmax)")
    softmax_support = float(softmax.get_attribute("data-mean-output-support"))

    drag_slider(page, slider, 0.0, 1.0)
    sparsemax = wait_for_figure(widget, "2.0", "<en><V><PST>walk")
    sparse_support = float(sparsemax.get_attribute("data-mean-output-support"))
    assert sparse_support < softmax_support, (softmax_support, sparse_support)
    shown = float(sparsemax.locator("[data-s2s-output-support]").inner_text())
    assert shown == sparse_support

    state = query_state(page)
    assert state["inflect.lemma"] == "walk" and state["inflect.alpha"] == "2"
    assert state["inflect.features"] == "V;PST"
    tracked_page.assert_clean()


def test_typing_go_with_the_past_tense_shows_the_verdict(tracked_page: TrackedPage) -> None:
    widget = open_widget(tracked_page, INFLECT)
    widget.locator("input[name=lemma]").fill("fight")
    wait_for_figure(widget, "1.5", "<en><V><PST>fight")
    widget.locator("input[name=lemma]").fill("go")
    widget.locator("select[name=features]").select_option("V;PST")
    result = wait_for_figure(widget, "1.5", "<en><V><PST>go")
    verdict = result.locator("[data-s2s-verdict]")
    expect(verdict).to_be_visible()
    expect(verdict).to_have_attribute("data-split", "train")
    expect(verdict.locator(".s2s-reference")).to_have_text("went")
    best = result.locator(".s2s-best .s2s-hyp-text").inner_text()
    mark = "✓" if best.startswith("went") else "✗"
    expect(verdict.locator(".s2s-verdict-line")).to_contain_text(mark)
    expect(verdict.locator(".s2s-split")).to_contain_text("training")
    tracked_page.assert_clean()


@pytest.mark.parametrize("selector", [INFLECT, TRANSLATE])
def test_the_first_render_shows_a_right_and_a_wrong_answer(
    tracked_page: TrackedPage, selector: str
) -> None:
    widget = open_widget(tracked_page, selector)
    for mark in ("right", "wrong"):
        expect(widget.locator(f".s2s-mark-{mark}").first).to_be_visible()
    expect(figure(widget).locator("[data-s2s-verdict] .s2s-split")).to_be_visible()
    tracked_page.assert_clean()


def test_typing_a_sentence_draws_its_heatmap(tracked_page: TrackedPage) -> None:
    widget = open_widget(tracked_page, TRANSLATE)
    sentence = "Could not save the selected image."
    widget.locator("textarea[name=text]").fill(sentence)
    result = wait_for_figure(widget, "1.5", sentence)
    labels = result.locator(".s2s-col-label").all_text_contents()
    rows = result.locator(".s2s-row-label").count()
    assert rows >= 2
    assert result.locator(".s2s-heatmap-svg rect title").count() == rows * len(labels)
    expect(result.locator(".s2s-nbest-item")).not_to_have_count(0)
    assert query_state(tracked_page.page)["translate.text"] == sentence
    tracked_page.assert_clean()


def test_inference_time_alpha_is_labelled_and_explained(tracked_page: TrackedPage) -> None:
    page = tracked_page.page
    widget = open_widget(tracked_page, INFLECT)
    widget.locator("input[name=mode][value=inference]").check()
    slider = widget.locator("input[name=inference_alpha]")
    expect(slider).to_be_visible()
    drag_slider(page, slider, 0.5, 0.9)
    result = figure(widget)
    expect(result.locator(".s2s-note")).to_contain_text("trained with α = 1.5", timeout=FIGURE_MS)
    expect(widget.locator("[data-s2s-readout]")).to_contain_text("inference-time α")
    assert query_state(page)["inflect.mode"] == "inference"
    tracked_page.assert_clean()


def test_compare_mode_puts_three_alphas_side_by_side_and_survives_a_reload(
    tracked_page: TrackedPage,
) -> None:
    page = tracked_page.page
    widget = open_widget(tracked_page, INFLECT)
    widget.locator(".s2s-example", has_text="Standplatz").click()
    widget.locator("input[name=compare]").check()
    columns = widget.locator(".s2s-compare-column")
    expect(columns).to_have_count(3, timeout=FIGURE_MS)
    alphas = [c.locator("[data-s2s-result]").get_attribute("data-alpha") for c in columns.all()]
    assert alphas == ["1.0", "1.5", "2.0"]
    expect(widget.locator("[data-s2s-single]")).to_be_hidden()

    page.reload()
    widget = page.locator(INFLECT)
    expect(widget.locator(".s2s-compare-column")).to_have_count(3, timeout=FIGURE_MS)
    expect(widget.locator("input[name=lemma]")).to_have_value("Standplatz")
    expect(widget.locator("select[name=features]")).to_have_value("N;NOM;PL")
    expect(widget.locator("input[name=compare]")).to_be_checked()
    tracked_page.assert_clean()


def test_an_unknown_character_shows_the_servers_sentence(tracked_page: TrackedPage) -> None:
    widget = open_widget(tracked_page, INFLECT)
    widget.locator("input[name=lemma]").fill("w4lk")
    status = widget.locator("[data-s2s-status]")
    expect(status).to_contain_text("never saw: 4", timeout=FIGURE_MS)
    widget.locator("input[name=lemma]").fill("walk")
    expect(status).to_be_hidden(timeout=FIGURE_MS)
    # Chromium logs the 422 response itself; nothing else may go wrong
    assert all("status of 422" in error for error in tracked_page.console_errors)
    assert tracked_page.foreign_requests == []


@pytest.mark.parametrize("width", [1280, 390])
def test_screenshots(tracked_page: TrackedPage, width: int) -> None:
    page = tracked_page.page
    page.set_viewport_size({"width": width, "height": 900})
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    widget = open_widget(tracked_page, INFLECT)
    widget.locator(".s2s-example", has_text="vertex").click()
    wait_for_figure(widget, "1.5", "<en><N><PL>vertex")  # the example's inputs are in
    drag_slider(page, widget.locator("[data-s2s-alpha-slider]"), 0.5, 1.0)
    wait_for_figure(widget, "2.0", "<en><N><PL>vertex")
    widget.screenshot(path=SCREENSHOTS / f"seq2seq-inflect-{width}.png")
    widget.locator("input[name=compare]").check()
    expect(widget.locator(".s2s-compare-column")).to_have_count(3, timeout=FIGURE_MS)
    widget.screenshot(path=SCREENSHOTS / f"seq2seq-inflect-compare-{width}.png")
    translate = page.locator(TRANSLATE)
    translate.scroll_into_view_if_needed()
    example = translate.locator(".s2s-example").last
    example.click()
    wait_for_figure(translate, "1.5", example.get_attribute("data-text"))
    translate.screenshot(path=SCREENSHOTS / f"seq2seq-translate-{width}.png")
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    tracked_page.assert_clean()


def test_languages_and_features_read_in_words(tracked_page: TrackedPage) -> None:
    widget = open_widget(tracked_page, INFLECT)
    language = widget.locator("select[name=language]")
    expect(language.locator("option[value=ro]")).to_have_text("Romanian")
    expect(language.locator("option[value=pt]")).to_have_text("Portuguese")
    features = widget.locator("select[name=features]")
    expect(features.locator("option[value='V;PST']")).to_have_text("past tense · V;PST")
    # the cells the script fills in after a language change read in words too
    language.select_option("es")
    cell = features.locator("option[value='V;SBJV;PST;3;SG']")
    expect(cell).to_have_text("3rd person singular subjunctive past · V;SBJV;PST;3;SG")
    # the longest labels still fit a phone
    page = tracked_page.page
    page.set_viewport_size({"width": 390, "height": 844})
    language.select_option("fr")
    features.select_option("V;SBJV;PST;IPFV;3;SG")
    controls = widget.locator("[data-s2s-form]")
    assert controls.evaluate("(form) => form.scrollWidth <= form.clientWidth")
    box = features.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 390
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    controls.screenshot(path=SCREENSHOTS / "seq2seq-inflect-labels-390.png")
    tracked_page.assert_clean()


def test_an_invalid_url_value_shows_the_error_and_no_default_figure(
    tracked_page: TrackedPage,
) -> None:
    widget = open_widget(tracked_page, INFLECT, "?inflect.lemma=walk&inflect.beam=50")
    status = widget.locator("[data-s2s-status]")
    expect(status).to_contain_text("beam width must be at most 16", timeout=FIGURE_MS)
    expect(status).to_contain_text("Nothing is drawn until the input is fixed.")
    expect(widget.locator("[data-s2s-single]")).to_be_hidden()
    expect(widget.locator("[data-s2s-compare]")).to_be_hidden()
    # fixing the value draws the reader's word
    widget.locator("input[name=beam_width]").fill("5")
    wait_for_figure(widget, "1.5", "<en><V><PST>walk")
    expect(status).to_be_hidden()
    # a later error keeps the reader's last figure, dimmed, and says so
    widget.locator("input[name=beam_width]").fill("50")
    expect(status).to_contain_text("the last input that worked", timeout=FIGURE_MS)
    expect(widget.locator("[data-s2s-single]")).to_be_visible()
    assert all("status of 422" in error for error in tracked_page.console_errors)


def edge_shadows(steps: Locator) -> tuple[float, float]:
    """Opacity of the step row's left and right scroll shadows."""
    left, right = steps.evaluate(
        """(list) => ["::before", "::after"].map(
            (edge) => getComputedStyle(list.parentElement, edge).opacity)"""
    )
    return float(left), float(right)


def test_a_short_output_has_no_scroll_shadow(tracked_page: TrackedPage) -> None:
    widget = open_widget(tracked_page, INFLECT)
    steps = figure(widget).locator(".s2s-step-list")
    # keep the first two cards: a row that fits
    steps.evaluate("(list) => { while (list.children.length > 2) list.lastElementChild.remove(); }")
    tracked_page.page.wait_for_function(
        "(list) => list.scrollWidth <= list.clientWidth", arg=steps.element_handle()
    )
    assert edge_shadows(steps) == (0.0, 0.0)


@pytest.mark.parametrize("width", [1280, 390])
def test_step_cards_show_whole_tokens_and_scroll_with_a_cue(
    tracked_page: TrackedPage, width: int
) -> None:
    page = tracked_page.page
    page.set_viewport_size({"width": width, "height": 844 if width == 390 else 800})
    widget = open_widget(tracked_page, TRANSLATE)
    widget.locator(".s2s-example", has_text="online accounts").click()
    sentence = "Connect to your online accounts and decide what to use them for"
    steps = wait_for_figure(widget, "1.5", sentence).locator(".s2s-step-list")
    cut = steps.evaluate(
        """(list) => [...list.querySelectorAll(".s2s-step")].flatMap((card) => {
            const edge = card.getBoundingClientRect().right;
            return [...card.querySelectorAll(".s2s-bar-token")]
                .filter((t) => t.scrollWidth > t.clientWidth + 1
                    || t.getBoundingClientRect().right > edge)
                .map((t) => t.textContent);
        })"""
    )
    assert cut == []
    # more cards than fit: the row scrolls and a shadow shows on the side with more cards
    assert steps.evaluate("(list) => list.scrollWidth > list.clientWidth")
    assert edge_shadows(steps) == (0.0, 1.0)
    steps.evaluate("(list) => { list.scrollLeft = list.scrollWidth; }")
    page.wait_for_function(
        "(list) => getComputedStyle(list.parentElement, '::after').opacity === '0'",
        arg=steps.element_handle(),
    )
    assert edge_shadows(steps) == (1.0, 0.0)
    last_whole = steps.evaluate(
        """(list) => {
            const box = list.lastElementChild.getBoundingClientRect();
            const frame = list.getBoundingClientRect();
            return box.left >= frame.left - 1 && box.right <= frame.right + 1;
        }"""
    )
    assert last_whole
    steps.evaluate("(list) => { list.scrollLeft = 0; }")
    page.wait_for_function(
        "(list) => getComputedStyle(list.parentElement, '::after').opacity === '1'",
        arg=steps.element_handle(),
    )
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    steps.locator("xpath=..").screenshot(path=SCREENSHOTS / f"seq2seq-step-cards-{width}.png")
    tracked_page.assert_clean()


def test_the_copy_model_shows_where_it_points(tracked_page: TrackedPage) -> None:
    """Tick "copy model": the figure adds the pointer heatmap (exact zeros hatched) and each
    step card says how much went to pointing; the address keeps the choice across a reload."""
    page = tracked_page.page
    widget = open_widget(tracked_page, TRANSLATE)
    sentence = "Connection refused by server 192.168.0.1"
    widget.locator("textarea[name=text]").fill(sentence)
    wait_for_figure(widget, "1.5", sentence)
    expect(figure(widget).locator("[data-s2s-pointer]")).to_have_count(0)
    widget.locator("input[name=copy_model]").check()
    pointer = figure(widget).locator("[data-s2s-pointer]")
    expect(pointer).to_be_visible(timeout=FIGURE_MS)
    expect(figure(widget).locator(".s2s-model")).to_contain_text("seq2seq-translate-copy-a1.5")
    expect(widget.locator("[data-s2s-readout]")).to_contain_text("through its copy model")
    expect(figure(widget).locator(".s2s-best")).to_contain_text("192.168.0.1")
    masses = (
        figure(widget)
        .locator("[data-s2s-copy-mass]")
        .evaluate_all("cards => cards.map((card) => Number(card.dataset.s2sCopyMass))")
    )
    assert max(masses) > 0.5  # the address is pointed at
    assert min(masses) == 0  # and some words are generated with no mass on any position
    assert pointer.locator(".s2s-cell-zero").count() > pointer.locator(".s2s-cell").count()
    assert query_state(page)["translate.copy_model"] == "1"

    page.reload()
    widget = page.locator(TRANSLATE)
    expect(widget.locator("input[name=copy_model]")).to_be_checked()
    expect(figure(widget).locator("[data-s2s-pointer]")).to_be_visible(timeout=FIGURE_MS)

    widget.locator("input[name=copy_beside]").check()  # the generate-only model beside it
    columns = widget.locator(".s2s-compare-column")
    expect(columns).to_have_count(2, timeout=FIGURE_MS)
    titles = columns.locator(".s2s-compare-title").all_text_contents()
    assert titles == ["α = 1.5 (1.5-entmax)", "α = 1.5 (1.5-entmax), copy model"]
    expect(columns.nth(0).locator("[data-s2s-pointer]")).to_have_count(0)
    expect(columns.nth(1).locator("[data-s2s-pointer]")).to_have_count(1)
    assert query_state(page)["translate.copy_beside"] == "1"
    tracked_page.assert_clean()
