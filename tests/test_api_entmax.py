"""POST /api/entmax (JSON and htmx fragment), its 422s, and the two entmax widgets' first render."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from html.parser import HTMLParser

import entmax as reference
import httpx
import pytest
import torch
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from app.entmax.figures import SIMPLEX_CORNERS, simplex_point
from app.entmax.requests import MAX_ABS_SCORE, MAX_SCORES
from app.entmax.service import family_figures
from app.entmax.widget import EXAMPLES
from app.main import create_app
from models.sparse_mapping import FAMILY_ALPHAS

URL = "/api/entmax"
HX = {"HX-Request": "true"}
SCORES = [0.2, 1.4, 0.5, 0.8, 0.3, 2.0, -0.5]


@pytest.fixture(scope="module")
def api() -> Iterator[TestClient]:
    with TestClient(create_app()) as client:
        yield client


def reference_entmax(scores: list[float], alpha: float) -> list[float]:
    x = torch.tensor([scores], dtype=torch.float64)
    if alpha == 1:
        p = torch.softmax(x, dim=-1)
    elif alpha == 1.5:
        p = reference.entmax15(x, dim=-1)
    elif alpha == 2:
        p = reference.sparsemax(x, dim=-1)
    else:
        p = reference.entmax_bisect(x, alpha=alpha, dim=-1, n_iter=200)
    return p[0].tolist()


# ---- the JSON answer ----


@pytest.mark.parametrize("alpha", [1.0, 1.01, 1.25, 1.5, 1.8, 2.0, 3.0, 4.0, 10.0])
def test_probabilities_match_the_reference_package(api: TestClient, alpha: float) -> None:
    response = api.post(URL, json={"scores": SCORES, "alpha": alpha})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"probabilities", "support_size", "tau", "score_threshold"}
    expected = reference_entmax(SCORES, alpha)
    assert body["probabilities"] == pytest.approx(expected, abs=1e-6)
    assert math.fsum(body["probabilities"]) == pytest.approx(1, abs=1e-12)
    assert body["support_size"] == sum(p > 0 for p in body["probabilities"])


@pytest.mark.parametrize("alpha", [1.25, 1.5, 2.0, 3.7])
def test_tau_is_the_threshold_of_the_closed_form(api: TestClient, alpha: float) -> None:
    body = api.post(URL, json={"scores": SCORES, "alpha": alpha}).json()
    tau = body["tau"]
    rebuilt = [max((alpha - 1) * z - tau, 0) ** (1 / (alpha - 1)) for z in SCORES]
    assert body["probabilities"] == pytest.approx(rebuilt, abs=1e-9)
    assert body["score_threshold"] == pytest.approx(tau / (alpha - 1))
    kept = [z > body["score_threshold"] for z in SCORES]
    assert kept == [p > 0 for p in body["probabilities"]]


def test_alpha_one_is_softmax_with_tau_the_log_partition(api: TestClient) -> None:
    body = api.post(URL, json={"scores": SCORES, "alpha": 1}).json()
    assert body["support_size"] == len(SCORES)
    assert body["tau"] == pytest.approx(math.log(sum(math.exp(z) for z in SCORES)))
    assert body["score_threshold"] is None


def test_support_falls_as_alpha_grows(api: TestClient) -> None:
    sizes = [
        api.post(URL, json={"scores": SCORES, "alpha": alpha}).json()["support_size"]
        for alpha in (1.0, 1.5, 2.0, 4.0)
    ]
    assert sizes == [7, 4, 2, 1]


def test_limits_are_inclusive(api: TestClient) -> None:
    for body in (
        {"scores": [0.5], "alpha": 1},
        {"scores": [MAX_ABS_SCORE, -MAX_ABS_SCORE], "alpha": 10},
        {"scores": [float(i % 7) for i in range(MAX_SCORES)], "alpha": 1.5},
    ):
        response = api.post(URL, json=body)
        assert response.status_code == 200, (body, response.text)
        assert len(response.json()["probabilities"]) == len(body["scores"])


@settings(max_examples=60, deadline=None)
@given(
    scores=st.lists(
        st.floats(-MAX_ABS_SCORE, MAX_ABS_SCORE, allow_nan=False), min_size=1, max_size=40
    ),
    alpha=st.floats(1, 10),
)
def test_every_valid_request_gets_a_distribution(
    api: TestClient, scores: list[float], alpha: float
) -> None:
    response = api.post(URL, json={"scores": scores, "alpha": alpha})
    assert response.status_code == 200, response.text
    body = response.json()
    assert all(p >= 0 for p in body["probabilities"])
    assert math.fsum(body["probabilities"]) == pytest.approx(1, abs=1e-9)
    assert 1 <= body["support_size"] <= len(scores)
    assert math.isfinite(body["tau"])


# ---- errors a reader can cause ----

BAD_BODIES = {
    "no scores field": ({"alpha": 1.5}, "`scores`"),
    "no alpha field": ({"scores": [1.0]}, "`alpha`"),
    "empty scores": ({"scores": [], "alpha": 1.5}, "at least 1"),
    "too many scores": ({"scores": [0.0] * (MAX_SCORES + 1), "alpha": 1.5}, "at most 512"),
    "alpha below 1": ({"scores": [1.0, 2.0], "alpha": 0.99}, "at least 1"),
    "alpha above 10": ({"scores": [1.0, 2.0], "alpha": 10.01}, "at most 10"),
    "negative alpha": ({"scores": [1.0, 2.0], "alpha": -2}, "at least 1"),
    "huge score": ({"scores": [1.0, 1e7], "alpha": 1.5}, "`scores[1]`"),
    "score as a string": ({"scores": [1.0, "2"], "alpha": 1.5}, "`scores[1]`"),
    "score as a boolean": ({"scores": [True], "alpha": 1.5}, "`scores[0]`"),
    "score null": ({"scores": [1.0, None], "alpha": 1.5}, "`scores[1]`"),
    "nested score": ({"scores": [[1.0]], "alpha": 1.5}, "`scores[0]`"),
    "scores a number": ({"scores": 3.0, "alpha": 1.5}, "`scores`"),
    "scores a string": ({"scores": "1 2 3", "alpha": 1.5}, "`scores`"),
    "alpha as a string": ({"scores": [1.0], "alpha": "1.5"}, "`alpha`"),
    "alpha a list": ({"scores": [1.0], "alpha": [1.5]}, "`alpha`"),
    "labels of the wrong length": (
        {"scores": [1.0, 2.0], "alpha": 1.5, "labels": ["a"]},
        "one label per score",
    ),
    "label too long": ({"scores": [1.0], "alpha": 1.5, "labels": ["x" * 65]}, "`labels[0]`"),
    "unknown field": ({"scores": [1.0], "alpha": 1.5, "temperature": 2}, "`temperature`"),
    "body a list": ([1.0, 2.0], "object"),
}

# JSON has no NaN or Infinity, but Python's parser (which FastAPI uses) accepts them.
BAD_RAW_BODIES = {
    "NaN score": ('{"scores": [1.0, NaN], "alpha": 1.5}', "finite"),
    "infinite score": ('{"scores": [Infinity, 1.0], "alpha": 1.5}', "finite"),
    "minus infinite score": ('{"scores": [-Infinity], "alpha": 1.5}', "finite"),
    "NaN alpha": ('{"scores": [1.0], "alpha": NaN}', "finite"),
    "infinite alpha": ('{"scores": [1.0], "alpha": Infinity}', "finite"),
    "malformed JSON": ('{"scores": [1.0, "alpha": 1.5}', "not valid JSON"),
    "empty body": ("", "JSON body"),
}


def assert_sentence(response: httpx.Response, fragment: str) -> None:
    assert response.status_code == 422, response.text
    detail = response.json()["detail"]
    assert isinstance(detail, str), detail
    assert re.fullmatch(r"\S.*[.)]", detail), detail
    assert fragment.lower() in detail.lower(), detail


@pytest.mark.parametrize(("body", "fragment"), BAD_BODIES.values(), ids=BAD_BODIES.keys())
def test_bad_input_is_a_422_sentence(api: TestClient, body: object, fragment: str) -> None:
    assert_sentence(api.post(URL, json=body), fragment)
    # The fragment endpoint answers a sentence too, never an HTML page, in the page's words
    # (no JSON paths: "Score 2", not `scores[1]`).
    from_page = api.post(URL, json=body, headers=HX)
    words = fragment if "`" not in fragment else ""
    assert_sentence(from_page, words)
    assert "`" not in from_page.json()["detail"] or "`" in words


@pytest.mark.parametrize(("raw", "fragment"), BAD_RAW_BODIES.values(), ids=BAD_RAW_BODIES.keys())
def test_bad_raw_json_is_a_422_sentence(api: TestClient, raw: str, fragment: str) -> None:
    headers = {"Content-Type": "application/json"}
    assert_sentence(api.post(URL, content=raw, headers=headers), fragment)


# ---- the htmx fragment ----


class FragmentParser(HTMLParser):
    """Collects the bars (class, text) and the stats attributes of a fragment."""

    def __init__(self) -> None:
        super().__init__()
        self.bars: list[dict[str, str]] = []
        self.stats: dict[str, str] = {}
        self.slots: list[str] = []
        self._value = False
        self._label = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {key: value or "" for key, value in attrs}
        if "data-entmax-slot" in attributes:
            self.slots.append(attributes["data-entmax-slot"])
        classes = attributes.get("class", "").split()
        if "entmax-stats" in classes:
            self.stats = attributes
        if "entmax-bar" in classes:
            self.bars.append({"class": attributes["class"], "value": "", "label": ""})
        self._value = "prob-value" in classes
        self._label = "visually-hidden" in classes

    def handle_data(self, data: str) -> None:
        if self._value and self.bars:
            self.bars[-1]["value"] += data.strip()
        if self._label and self.bars:
            self.bars[-1]["label"] += data.strip()


def fragment(api: TestClient, body: dict) -> FragmentParser:
    response = api.post(URL, json=body, headers=HX)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/html")
    parser = FragmentParser()
    parser.feed(response.text)
    return parser


def test_fragment_renders_the_same_result_as_bars(api: TestClient) -> None:
    body = {"scores": SCORES, "alpha": 1.5, "labels": "the cat sat on the mat .".split()}
    result = api.post(URL, json=body).json()
    parsed = fragment(api, body)
    assert parsed.slots == ["stats", "bars"]
    assert parsed.stats["data-support-size"] == str(result["support_size"]) == "4"
    assert float(parsed.stats["data-score-threshold"]) == pytest.approx(result["score_threshold"])
    assert parsed.stats["data-alpha"] == "1.5"
    assert [bar["label"] for bar in parsed.bars] == [f"{t}:" for t in body["labels"]]
    for bar, p in zip(parsed.bars, result["probabilities"], strict=True):
        if p == 0:
            assert "is-zero" in bar["class"].split() and bar["value"] == "0"
        else:
            assert "is-zero" not in bar["class"].split()
            assert float(bar["value"]) == pytest.approx(p, abs=5e-4)


def test_fragment_shows_tiny_probabilities_as_nonzero(api: TestClient) -> None:
    parsed = fragment(api, {"scores": [0.0, -10.0], "alpha": 1})
    assert parsed.stats["data-score-threshold"] == ""  # softmax has no cut-off
    tiny = parsed.bars[1]
    assert "is-zero" not in tiny["class"] and tiny["value"] == "4.5e-05"
    assert parsed.bars[0]["label"] == "item 1:"


# ---- the widgets' first render ----


@pytest.fixture(scope="module")
def deep_dive(api: TestClient) -> str:
    response = api.get("/papers/sparse-seq2seq")
    assert response.status_code == 200
    return response.text


def json_block(html: str, attribute: str) -> dict:
    match = re.search(rf'<script type="application/json" {attribute}>(.*?)</script>', html, re.S)
    assert match, attribute
    return json.loads(match.group(1))


def test_playground_renders_a_real_default(deep_dive: str) -> None:
    assert 'data-widget="entmax-playground"' not in deep_dive  # no error box
    assert 'value="1.5" data-entmax-alpha' in deep_dive
    assert "<strong data-entmax-support>4</strong> of 7" in deep_dive
    assert deep_dive.count('class="entmax-bar is-zero"') == 3
    # htmx asks the server for each figure; the examples live on the server (EXAMPLES)
    assert 'hx-get="/api/entmax/figure" hx-trigger="input changed" aria-valuetext' in deep_dive
    assert '<option value="attention" selected>' in deep_dive
    for example in EXAMPLES:
        assert len(example.text.split()) == len(example.scores)
    assert json_block(deep_dive, "data-entmax-config") == {"scoreSpan": 4.0}
    assert '<link rel="stylesheet" href="/static/css/entmax.css">' in deep_dive
    assert '<script src="/static/js/entmax-playground.js" defer></script>' in deep_dive


def test_family_figures_are_drawn_from_the_servers_numbers(deep_dive: str) -> None:
    assert 'data-widget="entmax-family-figures"' not in deep_dive
    figures = family_figures()
    t = figures.t
    assert t[0] == -3 and t[-1] == 3
    softmax, sparsemax = figures.curves[0], figures.curves[FAMILY_ALPHAS.index(2.0)]
    assert all(0 < p < 1 for p in softmax.p_first)
    for x, p in zip(t, sparsemax.p_first, strict=True):
        assert p == pytest.approx(min(max((x + 1) / 2, 0), 1), abs=1e-4)
    assert sparsemax.saturates_at == 1
    for image in figures.simplex:
        assert len(image.p) == len(figures.simplex_scores) == len(image.support)
        for p, size in zip(image.p, image.support, strict=True):
            assert sum(p) == pytest.approx(1, abs=1e-3)
            assert size == sum(v > 0 for v in p) or min(p) < 1e-4  # rounding for the plot
    supports = [set(image.support) for image in figures.simplex]
    assert supports[0] == {3} and 1 in supports[-1]
    # drawn on the server: one polyline per α, one triangle per α, and no plotting library
    assert deep_dive.count('<polyline class="entmax-line') == len(FAMILY_ALPHAS)
    assert deep_dive.count('class="entmax-triangle"') == len(FAMILY_ALPHAS)
    assert "/static/vendor/plotly-" not in deep_dive


def test_the_simplex_puts_a_distribution_at_its_barycentre() -> None:
    for corner, p in zip(SIMPLEX_CORNERS, ([1, 0, 0], [0, 1, 0], [0, 0, 1]), strict=True):
        assert simplex_point(p) == pytest.approx(corner, abs=0.1)
    middle = [sum(c[i] for c in SIMPLEX_CORNERS) / 3 for i in (0, 1)]
    assert simplex_point([1 / 3, 1 / 3, 1 / 3]) == pytest.approx(middle, abs=0.1)


# --- the playground's request model in the reader's terms ----------------------------------


def test_a_refused_score_names_its_word_and_plain_numbers() -> None:
    from app.entmax.requests import MAX_SCORES, plain_number, score_refusal

    assert plain_number(1e9) == "1,000,000,000" and plain_number(2.5) == "2.5"
    assert plain_number(1e15) == "1e+15" and plain_number(-3.0) == "-3"  # no run of 16 digits
    words = ["the", "cat"]
    too_high = {"loc": ("scores", 1), "type": "less_than_equal", "input": "2e6"}
    assert score_refusal(too_high, words) == (
        "The score of “cat” (word 2) must be at most 1,000,000; it is 2,000,000."
    )
    beyond = {"loc": ("scores", 2), "type": "float_parsing", "input": "x"}
    assert score_refusal(beyond, words) == "The score of “” (word 3) must be a number; got 'x'."
    many = {"loc": ("scores",), "type": "too_long", "input": [0] * 600}
    assert score_refusal(many, words) == (
        f"The sentence has 600 words; the playground takes at most {MAX_SCORES}."
    )
    for other in (
        {"loc": ("labels",), "type": "too_long", "input": []},  # not the scores
        {"loc": ("text", 0), "type": "string_type", "input": 1},  # not the scores either
        {"loc": ("scores", "x"), "type": "float_parsing", "input": "x"},  # no word index
        {"type": "value_error"},  # about the whole request
    ):
        assert score_refusal(other, words) is None


def test_the_scores_follow_the_words_of_the_sentence() -> None:
    from app.entmax.requests import PlaygroundRequest

    fill = PlaygroundRequest.scores_for_words
    assert fill({"text": "a b c", "scores": "1"})["scores"] == ["1", 0.0, 0.0]  # missing: 0
    assert fill({"text": "a b", "scores": ""})["scores"] == [0.0, 0.0]  # an empty box: none
    assert fill({"text": "a", "scores": [4, 5]})["scores"] == [4]  # extra ones dropped
    odd = fill({"text": 5, "scores": "1,2"})  # a text that is no string reads as no words
    assert odd["scores"] == [] and odd["labels"] == []
