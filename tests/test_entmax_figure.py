"""GET /api/entmax/figure: the playground form's round trip (htmx), and the same form submitted
without script, which lands back on the page drawn for it."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from markupsafe import escape

from app.main import create_app

PAGE = "/papers/sparse-seq2seq"
FORM = {"text": "the cat sat", "scores": ["1", "2", "0.5"], "alpha": "2", "example": "custom"}


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app()) as test_client:
        yield test_client


def htmx(trigger: str) -> dict[str, str]:
    return {
        "HX-Request": "true",
        "HX-Trigger-Name": trigger,
        "HX-Current-URL": f"http://testserver{PAGE}?other=1",
    }


def test_alpha_answers_the_bars_with_the_statistics_out_of_band(client: TestClient) -> None:
    answer = client.get("/api/entmax/figure", params=FORM, headers=htmx("alpha"))
    assert answer.status_code == 200
    html = answer.text
    assert html.lstrip().startswith('<ol class="entmax-bars" id="entmax-bars"')
    assert re.search(r'id="entmax-stats"[^>]*hx-swap-oob="true"', html)
    assert 'data-support-size="1"' in html and 'data-alpha="2.0"' in html
    assert 'id="entmax-scores"' not in html  # the rows stay: a score being typed keeps its caret
    assert answer.headers["HX-Replace-Url"] == (
        f"{PAGE}?other=1&entmax-text=the+cat+sat&entmax-scores=1,2,0.5&entmax-alpha=2"
        "#entmax-playground"  # a shared link opens at the figure
    )


def test_a_new_sentence_brings_its_score_rows(client: TestClient) -> None:
    form = {**FORM, "text": "the cat sat down"}
    html = client.get("/api/entmax/figure", params=form, headers=htmx("text")).text
    rows = re.search(r'<ol class="entmax-scores" id="entmax-scores"[^>]*hx-swap-oob="true"', html)
    assert rows and html.count('name="scores"') == 4
    assert html.count('<li class="entmax-bar') == 4  # the new word starts at score 0


def test_an_example_brings_its_sentence_and_scores(client: TestClient) -> None:
    # the menu sends itself and α (hx-include), so the example's sentence comes in
    form = {"example": "ties", "alpha": "2"}
    html = client.get("/api/entmax/figure", params=form, headers=htmx("example")).text
    assert re.search(r'id="entmax-text"[^>]*value="north south east west"', html)
    assert html.count('name="scores" value="1"') == 4
    assert re.search(r'<option value="ties" selected>', html)


def test_a_bad_score_is_a_422_in_the_readers_words(client: TestClient) -> None:
    form = {**FORM, "scores": ["1", "", "0.5"]}
    answer = client.get("/api/entmax/figure", params=form, headers=htmx("scores"))
    assert answer.status_code == 422
    assert answer.json()["detail"] == "Give the score of “cat” (word 2) a number."


@pytest.mark.parametrize(
    ("score", "sentence"),
    [
        ("1e9", "The score of “cat” (word 2) must be at most 1,000,000; it is 1,000,000,000."),
        ("-2e6", "The score of “cat” (word 2) must be at least -1,000,000; it is -2,000,000."),
        ("inf", "The score of “cat” (word 2) must be a finite number, not inf."),
        ("abc", "The score of “cat” (word 2) must be a number; got 'abc'."),
    ],
)
def test_a_score_out_of_range_is_named_by_its_word(
    client: TestClient, score: str, sentence: str
) -> None:
    """The word the reader typed into, counted from 1 as the rows are, and plain digits."""
    form = {**FORM, "scores": ["1", score, "0.5"]}
    answer = client.get("/api/entmax/figure", params=form, headers=htmx("scores"))
    assert answer.status_code == 422
    assert answer.json()["detail"] == sentence
    # a shared address with that score: the page says the same under the default figure
    address = {"entmax-text": FORM["text"], "entmax-scores": f"1,{score},0.5"}
    page = client.get(PAGE, params=address).text
    assert str(escape(sentence)) in page


def test_a_sentence_longer_than_the_playground_takes_says_so_in_words(client: TestClient) -> None:
    form = {**FORM, "text": " ".join(["word"] * 600), "scores": []}
    answer = client.get("/api/entmax/figure", params=form, headers=htmx("text"))
    assert answer.status_code == 422
    assert answer.json()["detail"] == (
        "The sentence has 600 words; the playground takes at most 512."
    )


def test_without_script_the_form_comes_back_as_the_page_drawn_for_it(client: TestClient) -> None:
    answer = client.get(
        "/api/entmax/figure",
        params=FORM,
        headers={"referer": f"http://testserver{PAGE}"},
        follow_redirects=False,
    )
    assert answer.status_code == 303
    location = answer.headers["location"]
    assert location.startswith(f"{PAGE}?") and location.endswith("#entmax-playground")
    page = client.get(location).text
    assert 'data-support-size="1"' in page and 'value="the cat sat"' in page


def test_an_address_written_before_the_figure_request_draws_the_same_figure(
    client: TestClient,
) -> None:
    """The page-address keys are the figure request's fields under `entmax-`: the same keys
    the playground wrote before, so an old link reads as it did."""
    old = client.get(f"{PAGE}?entmax-text=the+cat+sat&entmax-scores=1,2,0.5&entmax-alpha=2")
    answer = client.get("/api/entmax/figure", params=FORM, headers=htmx("alpha")).text
    playground = old.text[old.text.index("data-entmax-playground") :]
    assert 'value="the cat sat"' in playground
    for part in re.findall(r'<ol class="entmax-bars".*?</ol>', answer, re.S):
        assert part in playground
    assert 'data-support-size="1"' in playground and 'data-alpha="2.0"' in playground


def test_a_long_sentence_is_neither_cut_by_the_box_nor_refused(client: TestClient) -> None:
    """The box has no `maxlength` (the browser would cut a pasted sentence without a word);
    the server takes up to 512 words and says so beyond."""
    text = " ".join(f"word{i}" for i in range(90))  # 529 characters
    page = client.get(PAGE).text
    box = re.search(r'<input type="text" id="entmax-text"[^>]*>', page).group(0)
    assert "maxlength" not in box
    answer = client.get("/api/entmax/figure", params={**FORM, "text": text}, headers=htmx("text"))
    assert answer.status_code == 200
    assert "word89" in answer.text  # the 90th word has its bar: nothing was cut
