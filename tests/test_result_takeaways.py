"""The "In short" sentences under our results tables are true by construction: each states the
direction and size of the difference it describes, checked here on tables where ours is below,
equal to and above the number it is compared with, and on the shipped results (at most 40 words).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.result_takeaways import (
    TAKEAWAYS,
    hull,
    inflection_full,
    sort,
    sparse_pointer,
    sparsity,
    translation_live,
    tsp,
)

ROOT = Path(__file__).resolve().parent.parent


def hull_table(ours: list[str], paper: list[str]) -> dict:
    sizes = ["5", "10", "50"][: len(ours)]
    return {
        "columns": ["tested n", "accuracy (beam 8)", "paper accuracy"],
        "rows": [[n, a, b] for n, a, b in zip(sizes, ours, paper, strict=True)],
    }


@pytest.mark.parametrize(
    ("ours", "paper", "sentence"),
    [
        (
            ["95.5%", "92.2%", "80.8%"],
            ["92.0%", "87.0%", "69.6%"],
            "Our beam-8 accuracy is 3.5 to 11.2 points above the paper's at n = 5, 10 and 50.",
        ),
        (
            ["90.0%", "85.0%", "60.0%"],
            ["92.0%", "87.0%", "69.6%"],
            "Our beam-8 accuracy is 2.0 to 9.6 points below the paper's at n = 5, 10 and 50.",
        ),
        (
            ["92.0%", "90.0%", "60.0%"],
            ["92.0%", "87.0%", "69.6%"],
            "Our beam-8 accuracy is 3.0 points above the paper's at n = 10; equal to it at "
            "n = 5; 9.6 points below it at n = 50.",
        ),
    ],
)
def test_the_hull_sentence_says_above_equal_or_below(
    ours: list[str], paper: list[str], sentence: str
) -> None:
    assert hull(hull_table(ours, paper)) == sentence


def tsp_table(ours: list[str], paper: list[str]) -> dict:
    return {
        "columns": ["tested n", "ours beam 8", "paper Ptr-Net"],
        "rows": [[n, a, b] for n, a, b in zip(["20", "50"], ours, paper, strict=True)],
    }


@pytest.mark.parametrize(
    ("ours", "verdict"),
    [
        (["3.80 (+0.1%)", "5.90 (+3%)"], "shorter than the paper's at n = 20 and 50"),
        (["3.88 (+1%)", "7.66 (+30%)"], "within 1% of the paper's at n = 20 and 50"),
        (["4.20 (+9%)", "7.66 (+30%)"], "within 1% of the paper's at n = 50 and longer at n = 20"),
    ],
)
def test_the_tsp_sentence_says_shorter_equal_or_longer(ours: list[str], verdict: str) -> None:
    assert verdict in tsp(tsp_table(ours, ["3.88", "7.66"]))


def test_sorting_says_where_accuracy_stays_above_95_and_what_beam_changes() -> None:
    table = {
        "columns": ["tested n", "accuracy (greedy)", "accuracy (beam 8)"],
        "rows": [["5", "99%", "99%"], ["10", "90%", "92%"], ["20", "96%", "95%"]],
    }
    # n = 20 is above 95% again, but "up to" holds only through n = 5
    assert sort(table) == (
        "Greedy decoding sorts at least 95% of the sequences exactly up to n = 5 and 96.0% at "
        "n = 20; beam 8 changes it by −1.0 to +2.0 points."
    )


@pytest.mark.parametrize(
    ("sparse", "words"),
    [("99.0%", "+1.0 to +1.0 points"), ("98.0%", "±0.0 to ±0.0 points"), ("95.0%", "−3.0")],
)
def test_the_sparse_pointer_sentence_signs_its_difference(sparse: str, words: str) -> None:
    table = {
        "columns": ["pointer", "accuracy (greedy)", "mean support size", "candidates per step"],
        "rows": [["softmax", "98.0%", "6.00", "6.0"], ["entmax15", sparse, "1.01", "6.0"]],
    }
    assert words in sparse_pointer(table)


def test_sparsity_says_never_only_when_softmax_is_never_exact() -> None:
    table = {
        "columns": ["model", "α", "beam 5 exact"],
        "rows": [["inflection", "1", "0.5%"], ["inflection", "1.5", "92.0%"]],
    }
    assert "never" not in sparsity(table)
    assert "at most 0.5%" in sparsity(table)
    table["rows"][0][2] = "0.0%"
    assert sparsity(table).startswith("Beam 5 is never exact under softmax")


def full_table(full: dict[str, str], high: dict[str, str]) -> dict:
    rows = [["full + 2 replays", a, v] for a, v in full.items()]
    rows += [["high", a, v] for a, v in high.items()]
    return {"columns": ["setting", "α", "test accuracy (7-language average)"], "rows": rows}


@pytest.mark.parametrize(
    ("full", "expected"),
    [
        (
            {"1": "96.0%", "1.5": "97.0%"},
            "2.0 to 3.0 points above the high models; 1.5-entmax is +1.0 points against softmax.",
        ),
        ({"1": "94.0%", "1.5": "94.0%"}, "equal"),
        (
            {"1": "93.0%", "1.5": "92.0%"},
            "1.0 to 2.0 points below the high models; 1.5-entmax is −1.0 points against softmax.",
        ),
    ],
)
def test_the_widget_models_sentence_signs_both_differences(
    full: dict[str, str], expected: str
) -> None:
    sentence = inflection_full(full_table(full, {"1": "94.0%", "1.5": "94.0%"}))
    if expected == "equal":
        assert "0.0 points from the high models" in sentence and "±0.0 points" in sentence
    else:
        assert sentence.endswith(expected)


@pytest.mark.parametrize(
    ("sparse", "expected"),
    [
        ("27.6", "α = 1.5 among the big models (27.6, +2.4 against softmax)"),
        ("25.2", "α = 1 among the big models (25.2, softmax itself)"),
        ("24.0", "α = 1 among the big models (25.2, softmax itself)"),
    ],
)
def test_the_translation_sentence_names_the_best_alpha_per_model(
    sparse: str, expected: str
) -> None:
    table = {
        "columns": ["model", "α", "BLEU, v1 test set"],
        "rows": [["big", "1", "25.2"], ["big", "1.5", sparse]],
    }
    assert expected in translation_live(table)


SHOWN_ROWS = {  # the rows the pages show (content/*.md, `rows:`)
    ("seq2seq", "inflection-full"): [
        "full + 6 replays, 1",
        "full + 8 replays, 1.5",
        "full + 6 replays, 2",
        "high, 1",
        "high, 1.5",
        "high, 2",
    ],
    ("seq2seq", "translation-live"): [
        "big + replay, 1",
        "big + replay, 1.5",
        "big + replay, 2",
        "v1, 1",
        "v1, 1.5",
        "v1, 2",
    ],
}


@pytest.mark.parametrize(("source", "table_id"), sorted(TAKEAWAYS))
def test_every_shipped_takeaway_is_written_and_short(source: str, table_id: str) -> None:
    table = json.loads((ROOT / "content/results" / f"{source}.json").read_text())["tables"][
        table_id
    ]
    keys = SHOWN_ROWS.get((source, table_id))
    if keys:
        table = {
            **table,
            "rows": [r for k in keys for r in table["rows"] if ", ".join(r[:2]) == k],
        }
    sentence = TAKEAWAYS[(source, table_id)](table)
    assert len(sentence.split()) <= 40, sentence
