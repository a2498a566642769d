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


def test_steps_sentence_says_when_every_alpha_trained_equally(manifest) -> None:
    names = [ev.model_name("translation", a) for a in ev.ALPHAS]
    manifest(dict.fromkeys(names, 7000))
    assert ev._steps_sentence(names) == "every α 7,000 steps"
    manifest(dict(zip(names, (7000, 913, 2095), strict=True)))
    assert ev._steps_sentence(names) == "1: 7,000 steps, 1.5: 913 steps, 2: 2,095 steps"
