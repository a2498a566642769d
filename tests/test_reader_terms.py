"""What a first-time reader reads: error sentences in the page's words, no "-0.00%", one
takeaway under each of our results tables, and punctuation that stays with its formula."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.content import render_markdown
from app.main import app
from app.pointer.views import percent_text
from app.result_takeaways import TAKEAWAYS, takeaway

RESULTS = Path(__file__).resolve().parents[1] / "content" / "results"
WIDGET = {"HX-Request": "true"}
FIVE = [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6], [1.3, 0.1], [0.2, 0.9]]


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(app)


@pytest.mark.parametrize(
    ("path", "body", "api", "reader"),
    [
        ("/api/pointer/hull", {"points": FIVE}, "`points[3][0]`", "Point 4's x must be at most"),
        (
            "/api/pointer/tsp",
            {"points": FIVE[:3] + [[0.5, 0.5], [0.2, 0.9]], "decoder": "beam", "beam_width": 40},
            "`beam_width` must be at most 16",
            "The beam width must be at most 16",
        ),
        ("/api/entmax", {"scores": [1.0, "x"], "alpha": 1.5}, "`scores[1]`", "Score 2 must be a"),
        ("/api/pointer/sort", {"values": [0.1]}, "`values`", "The list of values needs at least"),
        (
            "/api/entmax",
            {"scores": [1.0, 2.0], "labels": ["x" * 70, "y"], "alpha": 1.5},
            "`labels[0]`",
            "Word 1 must have at most 64 characters; it has 70.",
        ),
    ],
)
def test_widgets_get_errors_in_the_readers_terms(
    client: TestClient, path: str, body: dict, api: str, reader: str
) -> None:
    from_api = client.post(path, json=body)
    from_widget = client.post(path, json=body, headers=WIDGET)
    assert from_api.status_code == from_widget.status_code == 422
    assert api in from_api.json()["detail"]
    detail = from_widget.json()["detail"]
    assert detail.startswith(reader), detail
    assert "`" not in detail and "[" not in detail and "_" not in detail, detail


def test_a_gap_that_rounds_to_zero_has_no_sign() -> None:
    assert percent_text(-1e-9) == "0.00%"
    assert percent_text(-1e-9, signed=True) == "0.00%"
    assert percent_text(-0.0123, signed=True) == "-1.23%"
    assert percent_text(0.0123, signed=True) == "+1.23%"


@pytest.mark.parametrize(("source", "table_id"), sorted(TAKEAWAYS))
def test_each_of_our_tables_has_a_takeaway_from_its_numbers(source: str, table_id: str) -> None:
    table = json.loads((RESULTS / f"{source}.json").read_text())["tables"][table_id]
    sentence = takeaway(source, table_id, table)
    assert sentence is not None and sentence.endswith("."), sentence
    assert "-0.0" not in sentence and "nan" not in sentence.lower()


def test_takeaways_follow_the_numbers() -> None:
    table = {
        "columns": ["tested n", "accuracy (beam 8)", "paper accuracy"],
        "rows": [["5", "92.0%", "92.0%"], ["200", "10.8%", "22.1%"]],
    }
    assert takeaway("pointer", "hull", table) == (
        "Our beam-8 accuracy is equal to the paper's at n = 5; 11.3 points below it at n = 200."
    )
    table["rows"][1][1] = "25.0%"  # above is said as above, never "within"
    assert "2.9 points above the paper's at n = 200" in takeaway("pointer", "hull", table)
    assert takeaway("pointer", "hull", {"columns": ["renamed"], "rows": [["1"]]}) is None
    live = {
        "columns": ["model", "α", "BLEU, v1 test set", "BLEU, v2 test set", "500 …, exact"],
        "rows": [
            ["big + replay", "1.5", "24.5", "30.1", "93.4%"],
            ["big", "1.5", "24.9", "30.6", "84.0%"],
            ["v1", "1", "13.1", "—", "40.0%"],
            ["v1", "1.5", "14.3", "—", "38.3%"],
        ],
    }
    assert takeaway("seq2seq", "translation-live", live) == (
        "Best BLEU on the v1 test sentences: α = 1.5 among the v1 models (14.3, +1.2 against "
        "softmax)."
    )


def test_punctuation_after_inline_math_does_not_wrap_alone() -> None:
    (html,), _ = render_markdown("The map $f$: it works; $g$ too.")
    assert '<span class="math-glue"><span class="math inline">' in html
    assert "</math></span>:</span> it works" in html
    assert "</math></span> too." in html


def test_heatmap_legends_do_not_say_darker(client: TestClient) -> None:
    # dark mode draws larger weights lighter, so "darker = larger" would be false there
    html = client.get("/papers/sparse-seq2seq").text
    assert "the stronger the colour, the larger" in html
    assert "darker" not in html.lower()


def _playground(html: str) -> str:
    return html[html.index("data-entmax-playground") :]


def test_a_shared_address_is_drawn_by_the_server(client: TestClient) -> None:
    query = "?entmax-text=go+home+now&entmax-scores=1,2,0.5&entmax-alpha=1"
    figure = _playground(client.get(f"/papers/sparse-seq2seq{query}").text)
    assert 'value="go home now" spellcheck' in figure
    assert "data-entmax-alpha-value>1.00<" in figure
    assert "<strong data-entmax-support>3</strong> of 3" in figure  # softmax: no zeros
    assert '<option value="custom" hidden selected>' in figure
    sparse = _playground(client.get("/papers/sparse-seq2seq?entmax-alpha=2").text)
    assert "data-entmax-alpha-value>2.00<" in sparse
    assert "<strong data-entmax-support>2</strong> of 7" in sparse


def test_a_broken_shared_address_says_what_is_wrong(client: TestClient) -> None:
    figure = _playground(
        client.get("/papers/sparse-seq2seq?entmax-text=a+b&entmax-scores=1,x").text
    )
    # the request model's sentence, naming the word as the rows show it
    assert "The score of “b” (word 2) must be a number; got &#39;x&#39;." in figure
    assert 'value="the cat sat on the mat ." spellcheck' in figure  # the default figure
    # a word too long for a label is drawn (its label cut to what the API takes), not refused
    figure = _playground(client.get(f"/papers/sparse-seq2seq?entmax-text={'x' * 70}").text)
    assert "data-entmax-error data-hx-error hidden>" in figure
    assert f'<span class="token" title="{"x" * 70}">' in figure


def test_try_this_links_carry_the_figure_state() -> None:
    from app.widgets import WidgetError
    from app.widgets.try_this import try_this_context

    step = {"do": "Set α to 2", "set": {"entmax-alpha": 2}, "look": "two words are left."}
    other = {"do": "Type", "set": {"entmax-text": "a b", "entmax-alpha": 1}, "look": "ties."}
    context = try_this_context({"target": "entmax-playground", "steps": [step, other]}, None)
    assert context == {
        "target": "entmax-playground",
        "steps": [
            {
                "do": "Set α to 2",
                "look": "two words are left.",
                "href": "?entmax-alpha=2#entmax-playground",
            },
            {
                "do": "Type",
                "look": "ties.",
                "href": "?entmax-text=a+b&entmax-alpha=1#entmax-playground",
            },
        ],
    }
    for bad in ({"target": "x", "steps": [step]}, {"target": "Bad Id", "steps": [step, step]}):
        with pytest.raises(WidgetError):
            try_this_context(bad, None)
    # a page author's broken step is named by its place, counted from 1
    for broken, sentence in (
        ({"do": "x", "set": {}}, "Step 2 of try-this needs `do:`, `set:` and `look:`."),
        ("just text", "Step 2 of try-this needs `do:`, `set:` and `look:`."),
        (
            {**step, "set": "entmax-alpha=2"},
            "Step 2 of try-this: `set:` maps the figure's address keys to values.",
        ),
        (
            {**step, "set": {"Alpha!": 2}},
            "Step 2 of try-this: `set:` maps the figure's address keys to values.",
        ),
    ):
        with pytest.raises(WidgetError) as caught:
            try_this_context({"target": "entmax-playground", "steps": [step, broken]}, None)
        assert str(caught.value) == sentence


def test_the_sparse_tsp_takeaway_reads_the_largest_n() -> None:
    columns = ["pointer", "tested n", "greedy (gap to reference)", "mean support size"]
    rows = [
        ["softmax", "10", "2.882 (+0.49%)", "6.00"],
        ["softmax", "20", "3.895 (+2.10%)", "11.00"],
        ["entmax15", "10", "2.880 (+0.43%)", "1.30"],
        ["entmax15", "20", "3.887 (+1.89%)", "1.57"],
    ]
    sentence = takeaway("pointer", "sparse-tsp", {"columns": columns, "rows": rows})
    assert sentence == (
        "At n = 20 the sparse pointer's greedy tours are +1.89% above the reference against "
        "+2.10% for softmax, while a step keeps 1.57 cities in its support against 11.00."
    )
    assert takeaway("pointer", "sparse-tsp", {"columns": columns, "rows": rows[:2]}) is None


def test_the_inflection_full_takeaway_compares_the_widget_models_with_the_high_ones() -> None:
    test = "test accuracy (7-language average)"
    rows = [
        ["full + 2 replays", "1.5", "95.5%"],
        ["full + 2 replays", "2", "95.0%"],
        ["full + replay", "1.5", "94.3%"],  # an earlier round: the first row of an α counts
        ["full", "1", "96.6%"],
        ["high", "1", "94.2%"],
        ["high", "1.5", "94.3%"],
        ["high", "2", "93.0%"],
    ]
    sentence = takeaway(
        "seq2seq", "inflection-full", {"columns": ["setting", "α", test], "rows": rows}
    )
    assert sentence == (
        "Held out, the widget's models reach 96.6% (softmax), 95.5% (1.5-entmax) and 95.0% "
        "(sparsemax), 1.2 to 2.4 points above the high models; 1.5-entmax is −1.1 points against "
        "softmax."
    )


def test_the_tsp_encoders_takeaway_says_where_attention_is_shorter() -> None:
    columns = ["tested n", "instances", "reference length"]
    columns += ["LSTM encoder, greedy", "self-attention encoder, greedy"]
    rows = [
        ["10", "1000", "2.868", "2.882 (+0.49%)", "2.870 (+0.08%)"],
        ["20", "1000", "3.816", "3.895 (+2.08%)", "3.849 (+0.87%)"],
        ["50", "1000", "5.735", "6.100 (+6.36%)", "6.132 (+6.92%)"],
    ]
    sentence = takeaway("pointer", "tsp-encoders", {"columns": columns, "rows": rows})
    assert sentence == (
        "The self-attention model's greedy tours are shorter than the LSTM's at n = 10 and 20 "
        "(gap to the reference): +0.87% against +2.08% at n = 20, +6.92% against +6.36% at "
        "n = 50."
    )


def test_the_tsp_encoders_takeaway_names_the_model_before_reinforce() -> None:
    columns = ["tested n", "instances", "reference length", "LSTM encoder, greedy"]
    columns += ["self-attention encoder, labels only, greedy"]
    columns += ["self-attention encoder + REINFORCE, greedy"]
    rows = [
        ["20", "1000", "3.816", "3.895 (+2.08%)", "3.849 (+0.87%)", "3.838 (+0.58%)"],
        ["50", "1000", "5.735", "6.100 (+6.36%)", "6.132 (+6.92%)", "6.010 (+4.80%)"],
    ]
    sentence = takeaway("pointer", "tsp-encoders", {"columns": columns, "rows": rows})
    assert sentence == (
        "The self-attention model's greedy tours are shorter than the LSTM's at every n (gap to "
        "the reference): +0.58% against +2.08% at n = 20, +4.80% against +6.36% at n = 50 "
        "(before REINFORCE: +6.92%)."
    )
