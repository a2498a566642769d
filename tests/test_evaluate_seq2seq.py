"""The seq2seq result tables: how records become the sparsity row and the step-count notes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models import evaluate_seq2seq as ev
from models.checkpoints import MANIFEST_NAME


def record(single: bool, exact: bool, ambiguous: bool = False, steps: int = 2) -> dict:
    return {
        "single": single,
        "exact": exact,
        "ambiguous": ambiguous,
        "steps": steps,
        "attention_support": steps,  # one source position per step
        "output_support": 3 * steps,  # three types per step
        "source_len": 4,
    }


def test_sparsity_row_averages_per_step_and_per_input() -> None:
    records = [record(True, True), record(False, True), record(False, False, ambiguous=True)]
    row = ev._sparsity_row("inflection (high)", 1.5, {"records": records, "vocab_size": 86})
    assert row == [
        "inflection (high)",
        "1.5",
        "1.00 of 4.00",
        "3.00 of 86",
        "33.3%",
        "66.7%",
        "0.0% of 1",  # the one ambiguous cell kept more than one sequence
    ]


def test_a_dense_attention_support_equals_the_source_length_as_printed() -> None:
    # softmax attends to every position: support and length are the same per-step average
    records = [
        {
            **record(False, False, steps=steps),
            "source_len": length,
            "attention_support": steps * length,
        }
        for steps, length in [(13, 13), (20, 14), (7, 12)]
    ]
    row = ev._sparsity_row("translation EN→DE", 1, {"records": records, "vocab_size": 4000})
    support, length = row[2].split(" of ")
    assert support == length, row[2]


def test_ambiguous_column_is_a_dash_without_such_cells() -> None:
    assert ev._ambiguous_single([record(True, True)]) == "—"
    # records cached before the field existed count as unambiguous
    assert ev._ambiguous_single([{"single": True}]) == "—"
    assert ev._ambiguous_single([record(True, True, ambiguous=True)]) == "100.0% of 1"


@pytest.fixture
def manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    def write(steps: dict[str, int]) -> None:
        entries = {name: {"steps": n} for name, n in steps.items()}
        (tmp_path / MANIFEST_NAME).write_text(json.dumps(entries))

    monkeypatch.setattr(ev, "CHECKPOINT_DIR", tmp_path)
    return write


def test_each_replay_round_of_the_full_models_names_its_own_checkpoint() -> None:
    """The inflection-full table's settings map to the recipes' names (models/recipes.py)."""
    from models.recipes import RECIPES

    names = {s: ev.model_name("inflection", 1.5, s) for s in ev.FULL_TABLE_SETTINGS}
    assert names == {
        "full + 8 replays": "seq2seq-inflect-full-a1.5-replay8",
        "full + 7 replays": "seq2seq-inflect-full-a1.5-replay7",
        "full + 6 replays": "seq2seq-inflect-full-a1.5-replay6",
        "full + 5 replays": "seq2seq-inflect-full-a1.5-replay5",
        "full + 4 replays": "seq2seq-inflect-full-a1.5-replay4",
        "full + 3 replays": "seq2seq-inflect-full-a1.5-replay3",
        "full + 2 replays": "seq2seq-inflect-full-a1.5-replay2",
        "full + replay": "seq2seq-inflect-full-a1.5-replay",
        "full": "seq2seq-inflect-full-a1.5",
        "high": "seq2seq-inflect-a1.5",
    }
    assert set(names.values()) <= set(RECIPES)
    assert ev.model_name("inflection", 2.0, "full + 2 replays") in RECIPES


def test_mcnemar_p_is_the_exact_two_sided_binomial_tail() -> None:
    assert ev.mcnemar_p(0, 0) == 1.0
    assert ev.mcnemar_p(5, 5) == 1.0
    assert ev.mcnemar_p(10, 0) == pytest.approx(2 / 2**10)
    assert ev.mcnemar_p(0, 10) == ev.mcnemar_p(10, 0)
    # 8 against 2: P(X <= 2) for X ~ Binomial(10, 1/2) is 56/1024, doubled
    assert ev.mcnemar_p(8, 2) == pytest.approx(112 / 1024)


def test_paired_sentence_counts_the_cells_only_one_model_gets_right() -> None:
    def records(*correct: bool) -> list[dict]:
        return [{"correct": c} for c in correct]

    softmax = records(True, True, True, False, False)
    sparse = records(True, False, False, True, False)
    sentence = ev._paired_sentence({1.0: softmax, 1.5: sparse})
    assert "same 5 test cells" in sentence
    assert "2 right only with softmax and 1 only with α = 1.5 (exact McNemar p = 1.00)" in sentence
    assert ev._paired_sentence({1.5: sparse}) == ""


def test_steps_sentence_says_when_every_alpha_trained_equally(manifest) -> None:
    names = [ev.model_name("translation", a) for a in ev.ALPHAS]
    manifest(dict.fromkeys(names, 7000))
    assert ev._steps_sentence(names) == "every α 7,000 steps"
    manifest(dict(zip(names, (7000, 913, 2095), strict=True)))
    assert ev._steps_sentence(names) == "1: 7,000 steps, 1.5: 913 steps, 2: 2,095 steps"


def test_the_translation_live_table_puts_the_widget_models_beside_the_v1_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = {
        "seq2seq-translate-big-a1.5": {"steps": 44000, "wall_time_s": 5 * 3600},
        "seq2seq-translate-a1": {"steps": 7000, "wall_time_s": 1080},
    }
    (tmp_path / MANIFEST_NAME).write_text(json.dumps(entries))
    monkeypatch.setattr(ev, "CHECKPOINT_DIR", tmp_path)
    results = {
        ("translation", "seq2seq-translate-big-a1.5"): {
            "corpus": "v2",
            "bleu": 31.26,
            "bleu_v1_test": 24.04,
        },
        ("frequent", "seq2seq-translate-big-a1.5"): {"exact": 0.912},
        ("translation", "seq2seq-translate-a1"): {"bleu": 13.14},  # cached before "corpus"
        ("frequent", "seq2seq-translate-a1"): {"exact": 0.4},
    }
    monkeypatch.setattr(ev, "model_results", lambda task, name, limit: results[task, name])
    monkeypatch.setattr(
        ev.translation,
        "build_corpus",
        lambda corpus: {"train": [None] * 3, "dev": [None], "test": [None] * 2},
    )
    table = ev.translation_live_table(0)
    assert table is not None
    assert table["rows"] == [
        ["big", "1.5", "24.0", "31.3", "91.2%", "44,000", "5.0 h"],
        ["v1", "1", "13.1", "—", "40.0%", "7,000", "0.3 h"],
    ]
    assert len(table["columns"]) == len(table["rows"][0])


def test_without_a_big_model_there_is_no_translation_live_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / MANIFEST_NAME).write_text(json.dumps({"seq2seq-translate-a1": {"steps": 1}}))
    monkeypatch.setattr(ev, "CHECKPOINT_DIR", tmp_path)
    assert ev.translation_live_table(0) is None
