"""The pointer family's entry point, without HTTP: plain Python in, one rounded trace out, the
checkpoint picked by α, and the reader's errors as sentences."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from models.errors import InvalidInput
from models.pointer import Config, PointerNet
from models.pointer_run import (
    HullResponse,
    PointerRequest,
    ServedPointer,
    SortResponse,
    TspResponse,
    UnknownAlpha,
    checkpoints,
    four_digits,
    resolve,
    run,
)
from models.tasks import InvalidInstance

CONFIGS = {
    "pointer-hull": Config(hidden=8, end_position=True, glimpse_residual=True, input_order="x"),
    "pointer-tsp": Config(hidden=8, glimpse_residual=True, embedding_skip=True),
    "pointer-tsp-attention-rl2": Config(
        hidden=8, glimpse_residual=True, embedding_skip=True, encoder="attention", heads=2
    ),
    "pointer-sort": Config(hidden=8, input_dim=1),
    "pointer-sort-entmax15": Config(hidden=8, input_dim=1, pointer="entmax15"),
}
FIVE = [[0.15, 0.20], [0.85, 0.10], [0.50, 0.45], [0.90, 0.80], [0.20, 0.85]]


def load(name: str) -> ServedPointer:
    """Untrained stand-ins: the contract does not depend on what the weights learned."""
    torch.manual_seed(0)
    return ServedPointer(name, PointerNet(CONFIGS[name]), "0" * 64, train_steps=0)


def test_alpha_picks_the_checkpoint_and_none_means_the_trained_default() -> None:
    assert checkpoints("sort") == {1.0: "pointer-sort", 1.5: "pointer-sort-entmax15"}
    assert resolve("sort", None) == (1.0, "pointer-sort")
    assert resolve("sort", 1.5) == (1.5, "pointer-sort-entmax15")
    assert resolve("hull", 1) == (1.0, "pointer-hull")
    with pytest.raises(UnknownAlpha, match=r"α = 2; set `alpha` to 1 or 1.5"):
        resolve("sort", 2.0)


def test_a_sort_trace_names_its_model_by_alpha() -> None:
    dense = run(PointerRequest("sort", [0.62, 0.15, 0.87, 0.4, 0.05]), load)
    sparse = run(PointerRequest("sort", [0.62, 0.15, 0.87, 0.4, 0.05], alpha=1.5), load)
    assert isinstance(dense, SortResponse) and isinstance(sparse, SortResponse)
    assert (dense.model.name, dense.model.alpha) == ("pointer-sort", 1.0)
    assert (sparse.model.name, sparse.model.alpha) == ("pointer-sort-entmax15", 1.5)
    assert dense.reference.order == [4, 1, 3, 0, 2]
    assert sorted(dense.order) == list(range(5)) and dense.n == 5


def test_the_trace_is_rounded_once_to_four_significant_digits() -> None:
    trace = run(PointerRequest("hull", FIVE, decoder="beam", beam_width=3), load)
    assert isinstance(trace, HullResponse)
    assert (trace.end_index, trace.beam_width, trace.samples) == (5, 3, 1)
    for step in trace.steps:
        assert len(step.distribution) == 6
        for p in step.distribution:
            assert p == 0 or float(f"{p:.4g}") == p
        assert step.support_size == sum(p > 0 for p in step.distribution)
    assert trace.reference.order == [0, 1, 3, 4]
    assert four_digits(np.array([1.23456e-7, 0.0, 0.987654])).tolist() == [1.235e-7, 0.0, 0.9877]


def test_the_sample_decoder_reports_its_best_of_k_curve() -> None:
    trace = run(PointerRequest("tsp", FIVE, decoder="sample", samples=6, seed=2), load)
    assert isinstance(trace, TspResponse)
    assert [point.k for point in trace.best_of_k or []] == [1, 2, 4, 6]
    assert trace.samples == 6 and trace.valid
    assert math.isclose(trace.best_of_k[-1].value, trace.length, rel_tol=1e-9)


@pytest.mark.parametrize(
    ("request_", "phrase"),
    [
        (PointerRequest("hull", [[0.1, 0.1], [0.5, 0.5], [0.9, 0.9]]), "straight line"),
        (PointerRequest("tsp", FIVE, alpha=1.5), "set `alpha` to 1"),
    ],
)
def test_a_reader_error_is_a_sentence(request_: PointerRequest, phrase: str) -> None:
    with pytest.raises(InvalidInput, match=phrase) as caught:
        run(request_, load)
    assert isinstance(caught.value, (InvalidInstance, UnknownAlpha))
    assert str(caught.value).endswith(".")


def test_the_loader_is_asked_only_for_the_resolved_checkpoint() -> None:
    asked: list[str] = []

    def counting(name: str) -> ServedPointer:
        asked.append(name)
        return load(name)

    run(PointerRequest("sort", [0.3, 0.1], alpha=1.5), counting)
    assert asked == ["pointer-sort-entmax15"]
