"""The sparse seq2seq widgets never leave a reader stuck (issue 38, items 2, 5 and 7), in Debian
Chromium against the shipped models: a refused input is shown beside the controls that caused
it and never makes the next good input fail; the browser never cuts or blocks what was typed;
an input outside what the model learned gets a one-line note; verdicts see through typography;
compare columns break lines between words and say why the α slider is off.
"""

from __future__ import annotations

import re

from playwright.sync_api import Locator, expect

from tests.browser.conftest import TrackedPage
from tests.browser.test_seq2seq_widget import (
    FIGURE_MS,
    INFLECT,
    SCREENSHOTS,
    TRANSLATE,
    open_widget,
    wait_for_figure,
)

STALE = re.compile(r"\bis-stale\b")


def refused_requests_only(tracked_page: TrackedPage) -> None:
    """Chromium logs every 4xx answer itself; those are the point here, nothing else may fail."""
    assert all("status of 422" in error for error in tracked_page.console_errors)
    assert tracked_page.foreign_requests == []


def inflect_source(widget: Locator, lemma: str) -> str:
    """The heatmap's columns for `lemma` under the widget's chosen language and features."""
    language = widget.locator("select[name=language]").input_value()
    features = widget.locator("select[name=features]").input_value()
    tags = "".join(f"<{tag}>" for tag in features.split(";"))
    return f"<{language}>{tags}{lemma}"


# --- item 2: a refusal never sticks --------------------------------------------------------


def test_a_refused_lemma_does_not_make_the_next_language_and_word_fail(
    tracked_page: TrackedPage,
) -> None:
    widget = open_widget(tracked_page, INFLECT)
    lemma = widget.locator("input[name=lemma]")
    status = widget.locator("[data-s2s-status]")
    lemma.fill("walk up")
    expect(status).to_contain_text("one word, without spaces", timeout=FIGURE_MS)
    # the last good figure stays, dimmed, and the line says so
    expect(status).to_contain_text("The dimmed figure below is for the last input that worked")
    expect(widget).to_have_class(STALE)
    single = widget.locator("[data-s2s-single]")
    assert float(single.evaluate("(el) => getComputedStyle(el).opacity")) < 1
    # the refusal sits right under the row of inputs that holds the lemma, above the examples
    inputs = widget.locator(".s2s-inputs").bounding_box()
    line = status.bounding_box()
    examples = widget.locator(".s2s-examples").bounding_box()
    assert inputs and line and examples
    assert 0 <= line["y"] - (inputs["y"] + inputs["height"]) <= 24, (inputs, line)
    assert line["y"] + line["height"] <= examples["y"], (line, examples)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    widget.screenshot(path=SCREENSHOTS / "seq2seq-dead-end-refused-lemma.png")

    # a new language brings its own cells although the lemma is still refused
    widget.locator("select[name=language]").select_option("de")
    features = widget.locator("select[name=features]")
    expect(features.locator("option[value='N;NOM;PL']")).to_have_count(1, timeout=FIGURE_MS)
    expect(features.locator("option[value='V;PST']")).to_have_count(0)
    expect(status).to_contain_text("one word, without spaces", timeout=FIGURE_MS)
    expect(status).not_to_contain_text("not a cell")

    # and the next good word is drawn at once
    lemma.fill("Haus")
    wait_for_figure(widget, "1.5", inflect_source(widget, "Haus"))
    expect(status).to_be_hidden()
    expect(widget).not_to_have_class(STALE)
    widget.screenshot(path=SCREENSHOTS / "seq2seq-dead-end-recovered.png")
    refused_requests_only(tracked_page)


# --- item 5: nothing is cut or blocked, and what lies outside training is said ----------------


def test_a_capitalised_lemma_is_lower_cased_with_a_note(tracked_page: TrackedPage) -> None:
    widget = open_widget(tracked_page, INFLECT)
    widget.locator("input[name=lemma]").fill("walk")  # the first figure is the example "go"
    wait_for_figure(widget, "1.5", "<en><V><PST>walk")
    widget.locator("input[name=lemma]").fill("Go")
    result = wait_for_figure(widget, "1.5", "<en><V><PST>go")
    note = result.locator("[data-s2s-input-note]")
    expect(note).to_contain_text("“Go”")
    expect(note).to_contain_text("lower-case")
    expect(result.locator("[data-s2s-verdict]")).to_have_attribute("data-split", "train")
    expect(widget.locator("[data-s2s-status]")).to_be_hidden()
    refused_requests_only(tracked_page)


def test_an_over_long_lemma_or_sentence_is_refused_in_words_never_cut(
    tracked_page: TrackedPage,
) -> None:
    page = tracked_page.page
    widget = open_widget(tracked_page, INFLECT)
    lemma = widget.locator("input[name=lemma]")
    lemma.fill("")
    lemma.focus()
    page.keyboard.insert_text("a" * 200)  # a paste
    assert len(lemma.input_value()) == 200
    expect(widget.locator("[data-s2s-status]")).to_contain_text(
        "1-40 characters; it has 200", timeout=FIGURE_MS
    )

    translate = page.locator(TRANSLATE)
    translate.scroll_into_view_if_needed()
    text = translate.locator("textarea[name=text]")
    sentence = " ".join(["Please"] + ["remember"] * 30)  # 31 words, 276 characters
    text.fill("")
    text.focus()
    page.keyboard.insert_text(sentence)
    assert text.input_value() == sentence
    expect(translate.locator("[data-s2s-status]")).to_contain_text(
        f"it has 31 words and {len(sentence)} characters", timeout=FIGURE_MS
    )
    refused_requests_only(tracked_page)


def test_the_browsers_own_validation_never_blocks_a_request(tracked_page: TrackedPage) -> None:
    """Decode with a beam the server refuses: the request goes, and the server says why."""
    page = tracked_page.page
    widget = open_widget(tracked_page, INFLECT)
    widget.locator("input[name=beam_width]").fill("50")
    status = widget.locator("[data-s2s-status]")
    expect(status).to_contain_text("beam width must be at most 16", timeout=FIGURE_MS)
    with page.expect_response(lambda r: "/api/seq2seq/inflect/figure" in r.url) as answer:
        widget.locator(".s2s-example", has_text="fight").click()
    assert answer.value.status == 422
    expect(status).to_contain_text("beam width must be at most 16")
    refused_requests_only(tracked_page)


def test_inputs_outside_the_training_data_get_a_beyond_training_note(
    tracked_page: TrackedPage,
) -> None:
    page = tracked_page.page
    translate = open_widget(tracked_page, TRANSLATE)
    sentence = "Connection refused by server 192.168.0.1"
    translate.locator("textarea[name=text]").fill(sentence)
    result = wait_for_figure(translate, "1.5", sentence)
    note = result.locator("[data-s2s-beyond]")
    expect(note).to_contain_text("Beyond training")
    expect(note).to_contain_text("“192.168.0.1”")
    for seen in ("Connection", "refused", "server"):
        expect(note).not_to_contain_text(seen)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    translate.screenshot(path=SCREENSHOTS / "seq2seq-dead-end-beyond-training.png")

    inflect = page.locator(INFLECT)
    inflect.scroll_into_view_if_needed()
    inflect.locator("input[name=lemma]").fill("blorft")
    result = wait_for_figure(inflect, "1.5", "<en><V><PST>blorft")
    expect(result.locator("[data-s2s-beyond]")).to_contain_text("“blorft”")
    # a word the model trained on gets no such note
    inflect.locator("input[name=lemma]").fill("walk")
    result = wait_for_figure(inflect, "1.5", "<en><V><PST>walk")
    expect(result.locator("[data-s2s-beyond]")).to_have_count(0)
    tracked_page.assert_clean()


# --- item 7: typography, whole words, and the α slider in compare mode -----------------------


def test_a_verdict_that_differs_only_in_typography_says_so(tracked_page: TrackedPage) -> None:
    widget = open_widget(tracked_page, TRANSLATE)
    widget.locator("textarea[name=text]").fill("Save as...")
    result = wait_for_figure(widget, "1.5", "Save as...")
    best = result.locator(".s2s-best .s2s-hyp-text").inner_text()
    assert best.startswith("Speichern unter ..."), best  # the corpus writes "Speichern unter …"
    verdict = result.locator("[data-s2s-verdict]")
    expect(verdict).to_have_attribute("data-correct", "true")
    expect(verdict.locator("[data-s2s-typography]")).to_contain_text("Only the typography differs")
    expect(result.locator(".s2s-best .s2s-mark-right")).to_have_count(1)
    tracked_page.assert_clean()


BROKEN_WORDS = """(root) => {
    const broken = [];
    const boxes = root.querySelectorAll(".s2s-hyp-text, .s2s-verdict-line, .s2s-compare-title");
    for (const box of boxes) {
        const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            for (const word of node.data.matchAll(/\\S+/g)) {
                const range = document.createRange();
                range.setStart(node, word.index);
                range.setEnd(node, word.index + word[0].length);
                const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
                if (lines.size > 1) broken.push(word[0]);
            }
        }
    }
    return broken;
}"""


def test_compare_columns_break_lines_between_words_only(tracked_page: TrackedPage) -> None:
    widget = open_widget(tracked_page, TRANSLATE)
    widget.locator("input[name=compare]").check()
    widget.locator("textarea[name=text]").fill("Permanently delete the selected files")
    columns = widget.locator(".s2s-compare-column [data-s2s-result]")
    expect(columns).to_have_count(3, timeout=FIGURE_MS)
    labels = columns.first.locator(".s2s-col-label")
    expect(labels.last).to_have_text(re.compile("files$"), timeout=FIGURE_MS)
    texts = widget.locator(".s2s-compare .s2s-hyp-text").all_inner_texts()
    assert any(len(word) >= 14 for text in texts for word in text.split()), texts
    assert widget.evaluate(BROKEN_WORDS) == []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    widget.screenshot(path=SCREENSHOTS / "seq2seq-dead-end-compare-words.png")
    tracked_page.assert_clean()


def test_in_compare_mode_the_alpha_slider_is_off_and_says_why(tracked_page: TrackedPage) -> None:
    widget = open_widget(tracked_page, INFLECT)
    slider = widget.locator("[data-s2s-alpha-slider]")
    expect(slider).to_be_visible()
    widget.locator("input[name=compare]").check()
    expect(widget.locator(".s2s-compare-column")).to_have_count(3, timeout=FIGURE_MS)
    expect(slider).to_be_hidden()
    why = widget.locator("[data-s2s-panel=trained] [data-s2s-compare-note]")
    expect(why).to_be_visible()
    expect(why).to_contain_text("one column per trained α (1, 1.5, 2)")
    expect(widget.locator("[data-s2s-readout]")).to_contain_text("side by side")
    # inference mode compares inference-time α values: its slider is off too, its base is not
    widget.locator("input[name=mode][value=inference]").check()
    expect(widget.locator("input[name=inference_alpha]")).to_be_hidden()
    expect(widget.locator("select[name=base_alpha]")).to_be_visible()
    inference_why = widget.locator("[data-s2s-panel=inference] [data-s2s-compare-note]")
    expect(inference_why).to_contain_text("one column per inference-time α")
    expect(inference_why).to_be_visible()
    widget.locator("input[name=mode][value=trained]").check()
    widget.locator("input[name=compare]").uncheck()
    expect(slider).to_be_visible()
    expect(why).to_be_hidden()
    expect(widget.locator("[data-s2s-readout]")).to_contain_text("(1.5-entmax): the model trained")
    expect(widget.locator("[data-s2s-single]")).to_be_visible(timeout=FIGURE_MS)
    tracked_page.assert_clean()
