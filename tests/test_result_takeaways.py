"""The "In short" sentences under our results tables are true by construction: each states the
direction and size of the difference it describes, checked here on tables where ours is below,
equal to and above the number it is compared with, and on the shipped results (at most 40 words).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from app.result_takeaways import (
    TAKEAWAYS,
    TakeawayError,
    column,
    copy,
    hull,
    inflection,
    inflection_full,
    number,
    points,
    sort,
    span,
    sparse_pointer,
    sparse_tsp,
    sparsity,
    takeaway,
    translation,
    translation_data,
    translation_live,
    tsp,
    tsp_baselines,
    tsp_encoders,
    tsp_reference_check,
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


@pytest.mark.parametrize(
    ("ours", "paper", "sentence"),
    [
        # a 13-point lead is a 13-point lead, never "within 3 points"
        (["95.0%"], ["82.0%"], "Our beam-8 accuracy is 13.0 points above the paper's at n = 5."),
        (["82.0%"], ["95.0%"], "Our beam-8 accuracy is 13.0 points below the paper's at n = 5."),
        # a difference that rounds to 0.0 points is equality, on either side
        (
            ["92.04%", "86.96%"],
            ["92.0%", "87.0%"],
            "Our beam-8 accuracy is equal to the paper's at n = 5 and 10.",
        ),
        (["92.06%"], ["92.0%"], "Our beam-8 accuracy is 0.1 points above the paper's at n = 5."),
    ],
)
def test_the_hull_sentence_states_the_size_of_a_lead(
    ours: list[str], paper: list[str], sentence: str
) -> None:
    assert hull(hull_table(ours, paper)) == sentence


@pytest.mark.parametrize(
    ("ours", "sentence"),
    [
        (
            ["3.80 (+0.1%)", "5.90 (+3%)"],
            "Our beam-8 tours are shorter than the paper's at n = 20 and 50 (5.90 against 7.66 "
            "at n = 50).",
        ),
        (
            ["3.88 (+1%)", "7.66 (+30%)"],
            "Our beam-8 tours are within 1% of the paper's at n = 20 and 50 (7.66 against 7.66 "
            "at n = 50).",
        ),
        (
            ["4.20 (+9%)", "8.00 (+40%)"],
            "Our beam-8 tours are longer than the paper's at n = 20 and 50 (8.00 against 7.66 "
            "at n = 50).",
        ),
        (
            ["3.80 (+0.1%)", "8.00 (+40%)"],
            "Our beam-8 tours are shorter than the paper's at n = 20 and longer at n = 50 (8.00 "
            "against 7.66 at n = 50).",
        ),
    ],
)
def test_the_tsp_sentence_reads_whole(ours: list[str], sentence: str) -> None:
    assert tsp(tsp_table(ours, ["3.88", "7.66"])) == sentence


@pytest.mark.parametrize(
    ("ours", "verdict"),
    [
        ("98.9", "shorter than"),
        ("99", "within 1% of"),  # exactly 1% shorter is still within 1%
        ("100", "within 1% of"),
        ("101", "within 1% of"),  # exactly 1% longer is still within 1%
        ("101.1", "longer than"),
    ],
)
def test_the_tsp_sentence_puts_the_one_percent_band_where_it_says(ours: str, verdict: str) -> None:
    table = {"columns": ["tested n", "ours beam 8", "paper Ptr-Net"], "rows": [["20", ours, "100"]]}
    assert tsp(table).startswith(f"Our beam-8 tours are {verdict} the paper's at n = 20 (")


ENCODERS = ["tested n", "instances", "reference length", "LSTM encoder, greedy"]
SERVED_ENCODER = "self-attention encoder + REINFORCE, greedy"


def encoders_table(attention: list[str], labels_only: list[str] | None = None) -> dict:
    lstm = ["2.882 (+0.49%)", "3.895 (+2.10%)", "6.167 (+7.61%)"]
    rows = [
        [n, "1000", "1", b, *([] if labels_only is None else [c]), a]
        for n, a, b, c in zip(["10", "20", "50"], attention, lstm, labels_only or lstm, strict=True)
    ]
    extra = [] if labels_only is None else ["self-attention encoder, labels only, greedy"]
    return {"columns": [*ENCODERS, *extra, SERVED_ENCODER], "rows": rows}


@pytest.mark.parametrize(
    ("attention", "verdict"),
    [
        (
            ["2.870 (+0.09%)", "3.834 (+0.48%)", "5.996 (+4.63%)"],
            "shorter than the LSTM's at every n",
        ),
        (
            ["2.882 (+0.49%)", "3.895 (+2.10%)", "5.996 (+4.63%)"],
            "shorter than the LSTM's at n = 50",
        ),
        (["2.882 (+0.49%)", "3.895 (+2.10%)", "6.167 (+7.61%)"], "no shorter than the LSTM's"),
        (["2.900 (+1.10%)", "3.990 (+4.60%)", "6.500 (+13.4%)"], "no shorter than the LSTM's"),
    ],
)
def test_the_encoders_sentence_says_where_the_attention_model_is_shorter(
    attention: list[str], verdict: str
) -> None:
    """Shorter at every n, at some, and equal or longer everywhere (which is never "shorter")."""
    gaps = [a.split(" ")[1].strip("()") for a in attention]
    assert tsp_encoders(encoders_table(attention)) == (
        f"The self-attention model's greedy tours are {verdict} (gap to the reference): "
        f"{gaps[1]} against +2.10% at n = 20, {gaps[2]} against +7.61% at n = 50."
    )


def test_the_encoders_sentence_adds_the_model_before_reinforce_where_the_table_has_it() -> None:
    attention = ["2.870 (+0.09%)", "3.834 (+0.48%)", "5.996 (+4.63%)"]
    labels = ["2.870 (+0.08%)", "3.849 (+0.89%)", "6.132 (+7.00%)"]
    assert tsp_encoders(encoders_table(attention, labels)).endswith(
        "+4.63% against +7.61% at n = 50 (before REINFORCE: +7.00%)."
    )


BASELINES = ["tested n", "instances", "nearest neighbour", "2-opt", "OR-Tools", "reference"]


@pytest.mark.parametrize(
    ("gaps", "best", "worst"),
    [
        (
            ["+21.53%", "+2.73%", "+0.44%"],
            "OR-Tools comes closest to the reference (+0.44%)",
            "nearest neighbour is furthest from it (+21.53%)",
        ),
        (
            ["+0.10%", "+2.73%", "+0.44%"],
            "nearest neighbour comes closest to the reference (+0.10%)",
            "2-opt is furthest from it (+2.73%)",
        ),
        # a method below the reference (a shorter tour than it) is the closest, not the furthest
        (
            ["+1.00%", "−0.20%", "+0.44%"],
            "2-opt comes closest to the reference (−0.20%)",
            "nearest neighbour is furthest from it (+1.00%)",
        ),
    ],
)
def test_the_baselines_sentence_names_the_closest_and_furthest_method(
    gaps: list[str], best: str, worst: str
) -> None:
    rows = [
        ["10", "1000", "3.184 (+11.04%)", "2.878 (+0.36%)", "exact", "2.868"],  # not the last n
        ["20", "1000", "4.454 (+16.74%)", "3.872 (+1.49%)", "exact", "3.815"],
        ["50", "1000", *(f"6.000 ({gap})" for gap in gaps), "5.731"],
    ]
    assert tsp_baselines({"columns": BASELINES, "rows": rows}) == f"At n = 50, {best} and {worst}."


def test_the_baselines_sentence_compares_methods_only() -> None:
    """An exact solver's "exact" has no gap to rank, and the paper's numbers, the reference and
    the row's n and count are not methods, whatever they hold in parentheses."""
    columns = [
        "tested n",
        "instances",
        "nearest neighbour",
        "2-opt",
        "OR-Tools",
        "reference (method)",
        "paper A1",
    ]
    last = [
        "50 (largest)",
        "1000 (1 seed)",
        "6.964 (+21.53%)",
        "5.887 (+2.73%)",
        "exact",
        "5.731 (+0.00%)",
        "5.79 (−0.1%)",
    ]
    assert tsp_baselines({"columns": columns, "rows": [last]}) == (
        "At n = 50 (largest), 2-opt comes closest to the reference (+2.73%) and nearest "
        "neighbour is furthest from it (+21.53%)."
    )
    no_gaps = [["50", "1000", "exact", "exact", "exact"]]
    assert takeaway("pointer", "tsp-baselines", {"columns": columns[:5], "rows": no_gaps}) is None
    # a row short of a cell no longer matches its columns: no sentence rather than a wrong one
    short = {"columns": columns, "rows": [last[:-1]]}
    assert takeaway("pointer", "tsp-baselines", short) is None


def reference_check(rows: list[list[str]]) -> dict:
    columns = ["tour", "tested n", "instances", "mean length (gap to optimal)", "optimal tours"]
    return {"columns": columns, "rows": rows}


def test_the_reference_check_names_our_decoder_with_the_most_optimal_tours() -> None:
    rows = [
        ["OR-Tools", "20", "100", "3.848 (+0.03%)", "97.0%"],
        ["best solver tour (the TSP table's reference)", "20", "100", "3.848 (+0.01%)", "99.0%"],
        ["ours greedy", "20", "100", "3.871 (+0.62%)", "51.0%"],
        ["ours best of 128 samples", "20", "100", "3.850 (+0.07%)", "88.0%"],
    ]
    assert tsp_reference_check(reference_check(rows)) == (
        "The TSP table's reference averages +0.01% against the optimum at n = 20; our best "
        "decoder (ours best of 128 samples) finds the optimal tour for 88.0% of the instances."
    )
    rows[2][4] = "90.0%"  # greedy now finds more optimal tours than sampling
    assert "(ours greedy) finds the optimal tour for 90.0%" in tsp_reference_check(
        reference_check(rows)
    )
    # without the best-solver row, OR-Tools is the reference
    assert "averages +0.03% against" in tsp_reference_check(reference_check(rows[:1] + rows[2:]))
    assert takeaway("pointer", "tsp-reference-check", reference_check(rows[2:])) is None


@pytest.mark.parametrize(
    ("greedy", "beam", "sentence"),
    [
        (
            ["94.9%", "99%", "99%"],
            ["94.9%", "99%", "99%"],
            "Greedy decoding sorts fewer than 95% of the sequences exactly at n = 5 and 99.0% "
            "at n = 20; beam 8 changes nothing at any n.",
        ),
        (
            ["99%", "95.0%", "96%"],  # exactly 95% is "at least 95%"
            ["99.04%", "94.96%", "96%"],  # differences that round to 0.0 change nothing
            "Greedy decoding sorts at least 95% of the sequences exactly up to n = 20 and 96.0% "
            "at n = 20; beam 8 changes nothing at any n.",
        ),
        (
            ["99%", "95.0%", "90%"],
            ["99.5%", "96.0%", "93%"],
            "Greedy decoding sorts at least 95% of the sequences exactly up to n = 10 and 90.0% "
            "at n = 20; beam 8 changes it by +0.5 to +3.0 points.",
        ),
        (
            ["99%", "97%", "96%"],
            ["99.3%", "96.7%", "96.2%"],  # changes under half a point are changes
            "Greedy decoding sorts at least 95% of the sequences exactly up to n = 20 and 96.0% "
            "at n = 20; beam 8 changes it by −0.3 to +0.3 points.",
        ),
    ],
)
def test_the_sorting_sentence_below_at_and_above_95_percent(
    greedy: list[str], beam: list[str], sentence: str
) -> None:
    table = {
        "columns": ["tested n", "accuracy (greedy)", "accuracy (beam 8)"],
        "rows": [[n, g, b] for n, g, b in zip(["5", "10", "20"], greedy, beam, strict=True)],
    }
    assert sort(table) == sentence


@pytest.mark.parametrize(
    ("sparse_gap", "softmax_gap"),
    [("+1.89%", "+2.10%"), ("+2.10%", "+2.10%"), ("+3.00%", "+2.10%")],
)
def test_the_sparse_tsp_sentence_carries_both_gaps_at_the_numerically_largest_n(
    sparse_gap: str, softmax_gap: str
) -> None:
    columns = ["pointer", "tested n", "greedy (gap to reference)", "mean support size"]
    rows = [
        ["softmax", "20", "3.895 (+0.50%)", "11.00"],
        ["softmax", "100", f"8.000 ({softmax_gap})", "51.00"],  # "100" < "20" as text
        ["entmax15", "20", "3.887 (+0.40%)", "1.57"],
        ["entmax15", "100", f"8.100 ({sparse_gap})", "2.50"],
    ]
    assert sparse_tsp({"columns": columns, "rows": rows}) == (
        f"At n = 100 the sparse pointer's greedy tours are {sparse_gap} above the reference "
        f"against {softmax_gap} for softmax, while a step keeps 2.50 cities in its support "
        "against 51.00."
    )


def test_the_inflection_sentence_signs_each_settings_average() -> None:
    columns = ["setting", "language", "α = 1", "α = 1.5", "1.5 − 1"]
    rows = [
        ["high", "en", "96.8%", "97.2%", "+0.4"],  # a language row: not an average
        ["high", "average", "94.2%", "94.3%", "+0.1"],
        ["medium", "average", "80.0%", "80.0%", "+0.0"],
        ["low", "average", "50.0%", "48.8%", "-1.2"],
    ]
    assert inflection({"columns": columns, "rows": rows}) == (
        "Averaged over the languages, 1.5-entmax against softmax is +0.1 in the high setting, "
        "±0.0 in the medium setting and −1.2 in the low setting (accuracy points); the paper "
        "reports gains of about one point, up to 2.5 with little data."
    )


@pytest.mark.parametrize(
    ("bleu", "sentence"),
    [
        (
            ["13.1", "14.3", "11.2"],
            "α = 1.5 gives the best BLEU (14.3, +1.2 over softmax) and α = 2 the lowest (11.2); "
            "the paper's best was also 1.5-entmax.",
        ),
        (
            ["14.3", "13.1", "11.2"],
            "α = 1 gives the best BLEU (14.3) and α = 2 the lowest (11.2); in the paper "
            "1.5-entmax was best.",
        ),
        (
            ["13.1", "11.2", "14.3"],
            "α = 2 gives the best BLEU (14.3) and α = 1.5 the lowest (11.2); in the paper "
            "1.5-entmax was best.",
        ),
    ],
)
def test_the_translation_sentence_names_the_best_and_the_lowest_alpha(
    bleu: list[str], sentence: str
) -> None:
    table = {
        "columns": ["α (attention and output)", "BLEU"],
        "rows": [[a, b] for a, b in zip(["1", "1.5", "2"], bleu, strict=True)],
    }
    assert translation(table) == sentence


def test_the_corpus_sentence_gives_the_ratio_of_training_pairs() -> None:
    columns = ["corpus", "packages", "train", "one-word training sources"]
    rows = [["v1", "58", "52,751", "0"], ["v2", "256", "168,155", "13,941"]]
    assert translation_data({"columns": columns, "rows": rows}) == (
        "Corpus v2 has 3.2 times v1's training pairs (168,155 from 256 packages against 52,751 "
        "from 58), 13,941 of them one-word labels."
    )
    rows[1][2] = "52,751"
    assert translation_data({"columns": columns, "rows": rows}).startswith("Corpus v2 has 1.0 ")
    assert takeaway("seq2seq", "translation-data", {"columns": columns, "rows": rows[:1]}) is None


def test_the_widget_models_sentence_says_from_when_they_are_on_both_sides() -> None:
    sentence = inflection_full(
        full_table({"1": "95.0%", "1.5": "93.0%"}, {"1": "94.0%", "1.5": "94.0%"})
    )
    assert "reach 95.0% (softmax) and 93.0% (1.5-entmax), 1.0 points from the high models" in (
        sentence
    )
    assert sentence.endswith("1.5-entmax is −2.0 points against softmax.")


def test_sparsity_names_the_most_and_the_least_exact_sparse_model() -> None:
    table = {
        "columns": ["model", "α", "beam 5 exact"],
        "rows": [
            ["inflection", "1", "0.0%"],
            ["inflection", "2", "96.4%"],
            ["translation", "1.5", "0.2%"],
            ["paper inflection", "2", "99.9%"],  # the paper's rows are not ours
        ],
    }
    assert sparsity(table) == (
        "Beam 5 is never exact under softmax; with sparse α it is exact for up to 96.4% of the "
        "test inputs (inflection, α = 2) and 0.2% for translation at α = 1.5."
    )


def test_a_table_whose_columns_changed_shows_without_a_takeaway() -> None:
    assert takeaway("pointer", "hull", {"columns": ["tested n"], "rows": [["5"]]}) is None
    assert takeaway("pointer", "no-such-table", {"columns": [], "rows": []}) is None


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


def shipped_table(source: str, table_id: str) -> dict:
    return json.loads((ROOT / "content/results" / f"{source}.json").read_text())["tables"][table_id]


@pytest.mark.parametrize(("source", "table_id"), sorted(TAKEAWAYS))
def test_every_shipped_takeaway_is_written_and_short(source: str, table_id: str) -> None:
    table = shipped_table(source, table_id)
    keys = SHOWN_ROWS.get((source, table_id))
    if keys:
        table = {
            **table,
            "rows": [r for k in keys for r in table["rows"] if ", ".join(r[:2]) == k],
        }
    sentence = TAKEAWAYS[(source, table_id)](table)
    assert len(sentence.split()) <= 40, sentence


COPY_COLUMNS = [
    "model",
    "α",
    "copy fidelity",
    "copy fidelity, corpus pairs",
    "copy fidelity, templates",
    "BLEU, v2 test set",
    "500 most frequent training sources, exact",
    "training steps",
]


@pytest.mark.parametrize(
    ("copy_row", "bleu_verb", "frequent_verb"),
    [
        (["95.0%", "27.9", "91.0%"], "rises", "rise"),
        (["60.8%", "27.4", "90.8%"], "holds", "hold"),
        (["50.0%", "26.0", "80.0%"], "falls", "fall"),
    ],
)
def test_the_copy_sentence_puts_fidelity_before_and_after_and_says_which_way_the_rest_went(
    copy_row: list[str], bleu_verb: str, frequent_verb: str
) -> None:
    """Above, equal to and below the generate-only model: fidelity reads parent → copy, BLEU
    and the frequent sources say whether they rose, held or fell."""
    fidelity, bleu, frequent = copy_row
    table = {
        "columns": COPY_COLUMNS,
        "rows": [
            ["generate only", "1.5", "60.8%", "83.3%", "45.6%", "27.4", "90.8%", "48,000"],
            ["copy", "1.5", fidelity, "88.2%", "90.5%", bleu, frequent, "+6,000"],
        ],
    }
    assert copy(table) == (
        f"Copy fidelity, parent → copy model, at α = 1.5: 60.8% → {fidelity}; "
        f"BLEU {bleu_verb} at α = 1.5; frequent sources {frequent_verb} at α = 1.5."
    )


def test_the_copy_sentence_groups_the_alphas_by_which_way_each_measure_went() -> None:
    def pair(alpha: str, bleu: tuple[str, str], frequent: tuple[str, str]) -> list[list[str]]:
        return [
            ["generate only", alpha, "50.0%", "1%", "1%", bleu[0], frequent[0], "48,000"],
            ["copy", alpha, "90.0%", "1%", "1%", bleu[1], frequent[1], "+1"],
        ]

    rows = [
        *pair("1", ("25.0", "26.0"), ("91.0%", "89.0%")),
        *pair("1.5", ("27.0", "28.0"), ("90.0%", "94.0%")),
        *pair("2", ("24.0", "24.5"), ("89.0%", "89.0%")),
    ]
    assert copy({"columns": COPY_COLUMNS, "rows": rows}) == (
        "Copy fidelity, parent → copy model, at α = 1, 1.5 and 2: 50.0% → 90.0%, "
        "50.0% → 90.0%, 50.0% → 90.0%; BLEU rises at every α; frequent sources fall at α = 1, "
        "rise at 1.5, hold at 2."
    )


def test_a_copy_table_without_a_pair_has_no_sentence() -> None:
    table = {"columns": COPY_COLUMNS, "rows": [["copy", "1.5", *["1%"] * 5, "+1"]]}
    assert takeaway("seq2seq", "copy", table) is None


@pytest.mark.parametrize(("source", "table_id"), sorted(TAKEAWAYS))
def test_a_table_without_rows_shows_without_a_takeaway(source: str, table_id: str) -> None:
    """A results file whose table lost its rows: the page shows no sentence (not an error)."""
    columns = shipped_table(source, table_id)["columns"]
    assert takeaway(source, table_id, {"columns": columns}) is None
    assert takeaway(source, table_id, {"columns": columns, "rows": []}) is None


TSP_CHECK = ["tour", "tested n", "instances", "mean length (gap to optimal)", "optimal tours"]
SPARSE_TSP = ["pointer", "tested n", "greedy (gap to reference)", "mean support size"]
POINTER_COLUMNS = ["pointer", "accuracy (greedy)", "mean support size", "candidates per step"]
SPARSITY = ["model", "α", "beam 5 exact"]


@pytest.mark.parametrize(
    ("write", "table", "message"),
    [
        (
            tsp_baselines,
            {"columns": BASELINES, "rows": [["50", "1000", "6.1", "5.9", "5.8", "5.7"]]},
            "no method columns with gaps",
        ),
        (
            tsp_reference_check,
            {"columns": TSP_CHECK, "rows": [["ours greedy", "20", "100", "3.9 (+1.0%)", "40%"]]},
            "no reference row",
        ),
        (
            sparse_pointer,
            {
                "columns": POINTER_COLUMNS,
                "rows": [
                    ["softmax", "98.0%", "6.00", "6.0"],
                    ["entmax15", "99.0%", "1.01", "6.0"],
                    ["sparsemax", "97.0%", "1.00", "6.0"],
                ],
            },
            "expected one sparse row per softmax row",
        ),
        (sparse_tsp, {"columns": SPARSE_TSP, "rows": []}, "expected a softmax and a sparse row"),
        (
            sparse_tsp,
            {"columns": SPARSE_TSP, "rows": [["softmax", "50", "6.2 (+8%)", "51.00"]]},
            "expected a softmax and a sparse row at the largest n",
        ),
        (
            inflection,
            {"columns": ["setting", "language", "1.5 − 1"], "rows": [["high", "en", "+0.4"]]},
            "no average rows",
        ),
        (
            sparsity,
            {"columns": SPARSITY, "rows": [["inflection (high)", "1", "0.0%"]]},
            "expected softmax and sparse rows",
        ),
        (
            translation_data,
            {"columns": ["corpus", "packages", "train"], "rows": [["v1", "58", "52,751"]]},
            "expected corpus rows v1 and v2",
        ),
        (
            tsp_encoders,
            encoders_table(["2.870", "3.834", "5.996"]),
            "“3.834” has no gap in parentheses",
        ),
    ],
)
def test_a_takeaway_says_which_cells_its_table_lacks(
    write: Callable[[dict], str], table: dict, message: str
) -> None:
    """The error a developer reads when a regenerated table no longer fits its sentence."""
    with pytest.raises(TakeawayError) as caught:
        write(table)
    assert str(caught.value).startswith(message)


def test_without_n_20_the_encoders_sentence_quotes_the_smallest_n() -> None:
    table = encoders_table(["2.870 (+0.09%)", "3.834 (+0.48%)", "5.996 (+4.63%)"])
    for row, n in zip(table["rows"], ["5", "10", "50"], strict=True):
        row[0] = n
    assert tsp_encoders(table) == (
        "The self-attention model's greedy tours are shorter than the LSTM's at every n (gap to "
        "the reference): +0.09% against +0.49% at n = 5, +4.63% against +7.61% at n = 50."
    )


def test_the_sparse_pointer_sentence_names_the_sparse_pointer() -> None:
    table = {
        "columns": POINTER_COLUMNS,
        "rows": [
            ["softmax", "98.0%", "6.00", "6.0"],
            ["softmax", "90.0%", "11.00", "11.0"],
            ["1.5-entmax", "99.0%", "1.01", "6.0"],
            ["1.5-entmax", "92.5%", "1.20", "11.0"],
        ],
    }
    assert sparse_pointer(table) == (
        "Against softmax, the sparse pointer (1.5-entmax) is +1.0 to +2.5 points in accuracy, "
        "with non-zero probability on 1.01–1.20 inputs per step where softmax keeps all 6–11 "
        "candidates."
    )


def test_the_copy_sentence_skips_an_alpha_without_a_copy_model() -> None:
    table = {
        "columns": COPY_COLUMNS,
        "rows": [
            ["generate only", "1", "55.0%", "80.0%", "40.0%", "27.0", "90.0%", "48,000"],
            ["generate only", "1.5", "60.8%", "83.3%", "45.6%", "27.4", "90.8%", "48,000"],
            ["copy", "1.5", "92.7%", "88.8%", "95.3%", "28.0", "94.2%", "+17,000"],
        ],
    }
    assert copy(table) == (
        "Copy fidelity, parent → copy model, at α = 1.5: 60.8% → 92.7%; BLEU rises at α = 1.5; "
        "frequent sources rise at α = 1.5."
    )


def test_a_cell_is_read_for_its_number_and_a_missing_one_is_named() -> None:
    with pytest.raises(TakeawayError, match="^“n/a” holds no number$"):
        number("n/a")
    with pytest.raises(TakeawayError, match="^no column “BLEU”$"):
        column({"columns": ["α"], "rows": [["1"]]}, "BLEU")


def test_a_difference_that_rounds_to_nothing_has_no_sign() -> None:
    assert [points(v) for v in (0.04, -0.04, 0.05, -1.26)] == ["±0.0", "±0.0", "+0.1", "−1.3"]
    assert span([0.96, 1.04]) == "1.0 points"  # the same at the precision shown
    assert span([-0.96, 1.14]) == "1.0 to 1.1 points"


INFLECTION_FULL = ["training set", "α", "test accuracy (7-language average)"]


def test_the_widget_models_sentence_names_an_unnamed_alpha_and_a_small_lead() -> None:
    table = {
        "columns": INFLECTION_FULL,
        "rows": [
            ["high", "1", "80.0%"],
            ["high", "1.33", "81.0%"],
            ["full + 6 replays", "1", "80.5%"],
            ["full + 6 replays", "1.33", "81.5%"],
        ],
    }
    assert inflection_full(table) == (
        "Held out, the widget's models reach 80.5% (softmax) and 81.5% (α = 1.33), 0.5 points "
        "above the high models."
    )
    without_softmax = {"columns": INFLECTION_FULL, "rows": table["rows"][1::2]}
    with pytest.raises(TakeawayError, match="^expected full and high rows for softmax and a "):
        inflection_full(without_softmax)


LIVE = ["model", "α", "BLEU, v1 test set"]


def test_the_live_translation_sentence_skips_a_model_without_softmax() -> None:
    rows = [
        ["v1", "1.5", "20.0"],
        ["v1", "2", "19.0"],
        ["big", "1", "25.0"],
        ["big", "1.5", "26.0"],
    ]
    assert translation_live({"columns": LIVE, "rows": rows}) == (
        "Best BLEU on the v1 test sentences: α = 1.5 among the big models (26.0, +1.0 against "
        "softmax)."
    )
    with pytest.raises(TakeawayError, match="^expected softmax and another α for some model$"):
        translation_live({"columns": LIVE, "rows": rows[:2]})


def test_the_copy_sentence_lists_each_alpha_and_needs_a_pair() -> None:
    generate = ["generate only", "1", "55.0%", "80.0%", "40.0%", "27.0", "90.0%", "48,000"]
    copy_row = ["copy", "1", "90.0%", "86.0%", "93.0%", "27.5", "93.0%", "+12,000"]
    rows = [
        generate,
        copy_row,
        [*generate[:1], "1.5", *generate[2:]],
        [*copy_row[:1], "1.5", *copy_row[2:]],
    ]
    assert copy({"columns": COPY_COLUMNS, "rows": rows}) == (
        "Copy fidelity, parent → copy model, at α = 1 and 1.5: 55.0% → 90.0%, 55.0% → 90.0%; "
        "BLEU rises at every α; frequent sources rise at every α."
    )
    with pytest.raises(TakeawayError, match="^expected a generate-only and a copy row at some α$"):
        copy({"columns": COPY_COLUMNS, "rows": [generate]})
