"""The pointer family's entry point, without HTTP: plain Python in, one rounded trace out, the
checkpoint picked by α, and the reader's errors as sentences."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pytest
import torch

from models import attention_routing, pointer_run
from models.attention_routing import AttentionModel
from models.checkpoints import load_model
from models.errors import InvalidInput
from models.pointer import Config, PointerNet, Trace, beam_search, best_of, sample
from models.pointer_run import (
    Decoded,
    HullResponse,
    PointerRequest,
    SampleScore,
    ServedPointer,
    SortResponse,
    TspResponse,
    UnknownAlpha,
    UnknownModel,
    best_of_k_curve,
    checkpoints,
    decoders_of,
    four_digits,
    hull_score,
    hypotheses,
    is_attention_model,
    model_values,
    resolve,
    run,
    snapshot_steps,
    sort_score,
    tsp_score,
)
from models.tasks import InvalidInstance, hull, tsp
from tests.conftest import FakeClock

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
    assert (trace.samples, trace.beam_width) == (6, 1) and trace.valid
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


# ---- scoring and the trace's verdict fields, on outputs chosen by the test ----

SQUARE = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.5, 0.5]])


def test_the_hull_sample_score_ranks_simple_polygons_by_area() -> None:
    score = hull_score(SQUARE)
    assert score.cost([0, 1, 2, 3]) == -1.0 and score.value(-1.0) == 1.0
    assert score.cost([0, 1, 2]) == -0.5  # a triangle counts
    assert score.cost([2, 1, 0]) == -0.5  # drawn either way round
    assert score.cost([0, 1]) == math.inf and score.value(math.inf) is None
    assert score.cost([0, 2, 1, 3]) == math.inf  # a bow tie is not a simple polygon
    assert score.cost([1, 2, 3, 0]) == score.cost([0, 1, 2, 3])


def test_the_running_best_is_read_at_powers_of_two_and_at_the_last_draw() -> None:
    running = [5.0, 4.0, 4.0, 3.0, 3.0, 2.0, 2.0, 2.0]
    curve = best_of_k_curve(running, SampleScore(lambda order: 0.0))
    assert [(point.k, point.value) for point in curve] == [(1, 5.0), (2, 4.0), (4, 3.0), (8, 2.0)]
    hull_curve = best_of_k_curve([math.inf, -0.5, -1.0], hull_score(SQUARE))
    assert [(point.k, point.value) for point in hull_curve] == [(1, None), (2, 0.5), (3, 1.0)]


def test_snapshot_names_are_pointer_networks_and_the_decoders_follow_the_kind() -> None:
    assert not is_attention_model("pointer-tsp") and not is_attention_model("pointer-tsp@500")
    assert is_attention_model("attention-routing-tsp20")
    assert decoders_of("pointer-tsp") == ("greedy", "beam", "sample")
    assert decoders_of("attention-routing-tsp50") == ("greedy", "sample", "symmetric")


def test_a_hull_sample_keeps_the_largest_simple_polygon_drawn() -> None:
    trace = run(PointerRequest("hull", FIVE, decoder="sample", samples=12, seed=1), load)
    assert isinstance(trace, HullResponse)
    values = [point.value for point in trace.best_of_k or []]
    drawn = [value for value in values if value is not None]
    assert drawn == sorted(drawn) and all(value > 0 for value in drawn)
    if trace.valid:
        assert math.isclose(values[-1], trace.area, rel_tol=1e-9)


class Stop(Exception):
    pass


def stop() -> None:
    """A step check that stops the decode."""
    raise Stop


@pytest.mark.parametrize(
    ("request_", "loader"),
    [
        (PointerRequest("hull", FIVE), load),
        (PointerRequest("sort", [0.3, 0.1, 0.2]), load),
        *[
            (PointerRequest("tsp", FIVE, decoder=d, beam_width=3, samples=4), load)
            for d in ("greedy", "beam", "sample")
        ],
        *[
            (
                PointerRequest("tsp", FIVE, decoder=d, samples=4, model="attention-routing-tsp20"),
                "attention",
            )
            for d in ("greedy", "sample", "symmetric")
        ],
    ],
)
def test_the_step_check_reaches_every_decoder(request_: PointerRequest, loader: Any) -> None:
    with pytest.raises(Stop):
        run(request_, attention_stand_in if loader == "attention" else loader, check=stop)


def decoded_as(order: list[int]) -> Callable[..., Decoded]:
    """A decoder stand-in that answers with a fixed output (the verdict fields are the test)."""

    def decode(model: Any, inputs: np.ndarray, request: Any, score: Any, check: Any) -> Decoded:
        n = len(inputs)
        trace = Trace(
            order, order, np.full((len(order), n + 1), 1 / (n + 1)), [n] * len(order), 0.0
        )
        return Decoded(trace, 1, 1, None)

    return decode


def run_decoding_as(
    monkeypatch: pytest.MonkeyPatch, task: str, order: list[int], inputs: list[Any] = FIVE
) -> Any:
    """`run` with the decoder answering `order`, on a clock that reads 250 ms."""
    monkeypatch.setattr(pointer_run, "decode", decoded_as(order))
    monkeypatch.setattr(pointer_run, "time", FakeClock(10.0, 10.25))
    return run(PointerRequest(task, inputs), load)


@pytest.mark.parametrize(
    ("order", "valid", "correct", "area", "gap"),
    [
        ([0, 1, 3, 4], True, True, 0.47625, 0.0),
        ([0, 1, 3], True, False, 0.2475, 1 - 0.2475 / 0.47625),  # a triangle: its own area
        ([0, 1], False, False, 0.0, None),  # too few points for an area
        ([0, 3, 1, 4], False, False, None, None),  # crossing: no gap, whatever its area
    ],
)
def test_hull_verdicts_follow_the_decoded_polygon(
    monkeypatch: pytest.MonkeyPatch,
    order: list[int],
    valid: bool,
    correct: bool,
    area: float | None,
    gap: float | None,
) -> None:
    trace = run_decoding_as(monkeypatch, "hull", order)
    assert isinstance(trace, HullResponse)
    assert (trace.valid, trace.correct, trace.order) == (valid, correct, order)
    if area is not None:
        assert math.isclose(trace.area, area, rel_tol=1e-9, abs_tol=1e-12)
    assert gap is None if trace.gap is None else math.isclose(trace.gap, gap, abs_tol=1e-12)
    assert (trace.gap is None) == (gap is None)
    assert trace.server_ms == 250.0


@pytest.mark.parametrize(
    ("order", "valid", "correct", "ratio"),
    [
        ([0, 2, 1, 3, 4], True, True, 1.0),  # the optimal tour, as drawn by the reference
        ([0, 3, 1, 4, 2], True, False, None),  # a valid tour, longer
        ([0, 1, 3, 4, 4], False, False, None),  # a city twice: no gap, not correct
    ],
)
def test_tsp_verdicts_follow_the_decoded_tour(
    monkeypatch: pytest.MonkeyPatch,
    order: list[int],
    valid: bool,
    correct: bool,
    ratio: float | None,
) -> None:
    trace = run_decoding_as(monkeypatch, "tsp", order)
    assert isinstance(trace, TspResponse)
    assert (trace.valid, trace.correct) == (valid, correct)
    assert trace.reference.optimal
    assert math.isclose(trace.length, tsp.tour_length(np.array(FIVE), order), rel_tol=1e-12)
    if not valid:
        assert trace.gap is None
    else:
        assert math.isclose(trace.gap, trace.length / trace.reference.length - 1, abs_tol=1e-12)
        assert (trace.gap > 0.05) != correct
    if ratio is not None:
        assert math.isclose(trace.length, trace.reference.length * ratio, rel_tol=1e-9)
    assert trace.server_ms == 250.0


def attention_stand_in(name: str) -> ServedPointer:
    torch.manual_seed(0)
    model = AttentionModel(attention_routing.Config(embed_dim=16, heads=2, layers=1, ff_hidden=32))
    return ServedPointer(name, model, "0" * 64, train_steps=0)


SEVEN = [*FIVE, [0.55, 0.95], [0.05, 0.5]]


def test_the_attention_model_decodes_greedy_sample_and_symmetric() -> None:
    def tour(decoder: str, **fields: Any) -> TspResponse:
        request = PointerRequest(
            "tsp", SEVEN, decoder=decoder, model="attention-routing-tsp20", **fields
        )
        trace = run(request, attention_stand_in)
        assert isinstance(trace, TspResponse) and trace.valid
        assert (trace.model.name, trace.model.alpha) == ("attention-routing-tsp20", 1.0)
        assert len(trace.steps) == 7 and trace.beam_width == 1
        return trace

    greedy = tour("greedy")
    assert greedy.samples == 1 and greedy.best_of_k is None
    assert greedy.steps[0].support_size == 7  # the first city is a softmax over all of them

    sampled = tour("sample", samples=5, seed=3)
    assert sampled.samples == 5 and [point.k for point in sampled.best_of_k or []] == [1, 2, 4, 5]
    assert math.isclose(sampled.best_of_k[-1].value, sampled.length, rel_tol=1e-9)
    assert sampled.order == tour("sample", samples=5, seed=3).order  # the seed is the draw

    symmetric = tour("symmetric")
    assert symmetric.samples == 1 and symmetric.best_of_k is None
    model = attention_stand_in("attention-routing-tsp20").model
    assert symmetric.order == attention_routing.symmetric_trace(model, np.array(SEVEN)).order
    assert symmetric.length < greedy.length  # on these cities, another start does better


# cities where a tour's length and its reverse's differ in the 13th decimal place
REVERSIBLE = np.array(
    [
        [0.4761034968990149, 0.5298369271476612],
        [0.4513728836389701, 0.3337934214068816],
        [0.6045424836739276, 0.41695265934282655],
        [0.8205255268277644, 0.8682371468871806],
        [0.3379069891461307, 0.6917000287249011],
        [0.43077510359316307, 0.2434098202494015],
        [0.9894035426472247, 0.23811566968843023],
        [0.660294994672673, 0.7624535513714519],
        [0.6949042303156655, 0.08837085332274885],
        [0.2860617896865909, 0.6833652494768385],
    ]
)


def test_a_tour_drawn_backwards_scores_the_same() -> None:
    """So the sample decoder never counts the reverse of its best tour as an improvement."""
    order = [7, 6, 1, 2, 3, 4, 9, 0, 8, 5]
    backwards = [order[0], *order[:0:-1]]
    lengths = tsp.tour_length(REVERSIBLE, order), tsp.tour_length(REVERSIBLE, backwards)
    assert lengths[0] != lengths[1]  # floating point sums the legs in another order
    score = tsp_score(REVERSIBLE)
    assert score.cost(order) == score.cost(backwards)


def test_a_pointer_network_refuses_the_symmetric_decoder() -> None:
    with pytest.raises(UnknownModel) as caught:
        run(PointerRequest("tsp", FIVE, decoder="symmetric", model="pointer-tsp"), load)
    assert str(caught.value) == (
        "The Pointer Network decodes greedy, beam, sample, not symmetric; choose one of those, "
        "or another `model`."
    )


def test_the_search_is_the_requested_one() -> None:
    model, cities = load("pointer-tsp").model, np.array(SEVEN)
    tsp_request = partial(PointerRequest, "tsp", SEVEN, model="pointer-tsp")
    beam = run(tsp_request(decoder="beam", beam_width=2), load)
    assert beam.order == beam_search(model, cities, width=2).order
    score = tsp_score(cities)
    drawn = run(tsp_request(decoder="sample", samples=4, seed=5), load)
    assert drawn.order == best_of(sample(model, cities, 4, seed=5), score.cost)[0].order
    seed_0 = best_of(sample(model, cities, 4, seed=0), score.cost)[0].order
    assert seed_0 != drawn.order  # so the seed is what chose it


# a convex hull whose area, summed from another starting vertex, differs in the 13th place
ROTATABLE = np.array(
    [
        [0.6228554436567377, 0.6477486989871363],
        [0.9719568104180558, 0.9260642756120407],
        [0.7901314297646521, 0.49666814287763084],
        [0.3771652567408421, 0.12800332825843486],
        [0.13481040713224757, 0.3061835594206991],
        [0.4225743152862589, 0.04850379937815685],
        [0.0025728547748479214, 0.6602998262218086],
        [0.47889427080335123, 0.5123263626492736],
    ]
)


def test_a_polygon_from_another_start_vertex_scores_the_same() -> None:
    order = [1, 6, 4, 5, 2]
    rotated = [6, 4, 5, 2, 1]
    assert hull.polygon_area(ROTATABLE, order) != hull.polygon_area(ROTATABLE, rotated)
    score = hull_score(ROTATABLE)
    assert score.cost(order) == score.cost(rotated)


def test_each_decoder_is_priced_by_the_outputs_it_carries() -> None:
    assert [hypotheses(d, 8, 64, 50) for d in ("greedy", "beam", "sample", "symmetric")] == [
        1,
        8,
        64,
        50,
    ]


@pytest.mark.parametrize(
    ("values", "read", "rescaled"),
    [
        ([0.2, 0.9, 0.5], [0.2, 0.9, 0.5], False),
        ([0.0, 1.0, 0.5], [0.0, 1.0, 0.5], False),  # the training range, ends included
        ([0.7, 0.7], [0.7, 0.7], False),
        ([3.0, 3.0], [0.5, 0.5], True),  # all equal, outside the range: the middle
        ([-1.0, 3.0, 1.0], [0.0, 1.0, 0.5], True),
        ([0.5, 1.5], [0.0, 1.0], True),
        ([-0.5, 0.5], [0.0, 1.0], True),
    ],
)
def test_values_outside_the_training_range_are_mapped_into_it(
    values: list[float], read: list[float], rescaled: bool
) -> None:
    mapped, changed = model_values(np.array(values))
    assert mapped.tolist() == read and changed == rescaled


def test_the_sort_sample_score_counts_descents_not_ties() -> None:
    score = sort_score(np.array([3.0, 1.0, 2.0, 2.0]))
    assert score.cost([1, 2, 3, 0]) == 0.0  # 1, 2, 2, 3: sorted, ties kept
    assert score.cost([0, 1, 2, 3]) == 1.0  # 3 > 1
    assert score.cost([0, 2, 1, 3]) == 2.0  # 3 > 2 > 1


def test_a_sort_sample_keeps_the_output_with_fewest_descents() -> None:
    values = [0.62, 0.15, 0.87, 0.4, 0.05, 0.33]
    trace = run(PointerRequest("sort", values, decoder="sample", samples=8, seed=1), load)
    assert isinstance(trace, SortResponse)
    counts = [point.value for point in trace.best_of_k or []]
    assert counts == sorted(counts, reverse=True)
    assert counts[-1] == sort_score(np.array(values)).cost(trace.order)


def test_an_invalid_sort_output_has_no_gap(monkeypatch: pytest.MonkeyPatch) -> None:
    trace = run_decoding_as(monkeypatch, "sort", [1, 1, 0], [0.3, 0.1, 0.2])
    assert (trace.valid, trace.correct, trace.gap) == (False, False, None)
    assert trace.server_ms == 250.0


def test_a_snapshot_request_is_refused_in_words() -> None:
    step = snapshot_steps("hull")[0]
    with pytest.raises(InvalidInput) as caught:
        resolve("hull", None, "pointer-hull", step)
    assert str(caught.value) == "A snapshot is of one training run; leave `model` out with it."
    with pytest.raises(UnknownAlpha) as caught:
        resolve("hull", 1.5, None, step)
    assert str(caught.value) == (
        "The hull snapshots are of a pointer trained at α = 1; leave `alpha` out or set it to that."
    )
    with pytest.raises(InvalidInput, match="^The hull model's training kept snapshots at steps "):
        resolve("hull", None, None, 4)  # between the kept steps 3 and 6


def test_a_checkpoint_of_another_kind_is_not_served() -> None:
    with pytest.raises(TypeError, match="^x is neither a pointer network nor an attention model$"):
        ServedPointer.from_entry("x", object(), {"sha256": "0" * 64})


# ten cities where the shipped TSP pointer's beam of 2 and its beam of 8 end on other tours
WIDTH_MATTERS = [
    [0.72, 0.95], [0.72, 0.6], [0.28, 0.35], [0.03, 0.27], [0.59, 0.52],
    [0.12, 0.35], [0.55, 0.53], [0.14, 0.83], [0.86, 0.86], [0.64, 0.76],
]  # fmt: skip


def test_the_beam_is_as_wide_as_asked() -> None:
    model, entry = load_model("pointer-tsp")

    def shipped(name: str) -> ServedPointer:
        return ServedPointer.from_entry(name, model, entry)

    request = partial(PointerRequest, "tsp", WIDTH_MATTERS, decoder="beam", model="pointer-tsp")
    narrow, wide = run(request(beam_width=2), shipped), run(request(beam_width=8), shipped)
    assert narrow.order == beam_search(model, np.array(WIDTH_MATTERS), width=2).order
    assert narrow.order != wide.order


def test_a_named_model_is_served_at_its_own_alpha_only() -> None:
    assert resolve("tsp", None, "pointer-tsp") == (1.0, "pointer-tsp")
    assert resolve("tsp", 1.0, "attention-routing-tsp50") == (1.0, "attention-routing-tsp50")
    assert resolve("sort", 1.5, "pointer-sort-entmax15") == (1.5, "pointer-sort-entmax15")
    with pytest.raises(UnknownAlpha) as caught:
        resolve("tsp", 1.5, "pointer-tsp")
    assert str(caught.value) == (
        "The model pointer-tsp has a pointer trained at α = 1, not 1.5; leave `alpha` out or "
        "set it to that."
    )
    with pytest.raises(UnknownModel) as caught:
        resolve("tsp", None, "pointer-hull")
    assert str(caught.value) == (
        "No model called “pointer-hull” serves the tsp task; set `model` to "
        "pointer-tsp-attention-rl2 or attention-routing-tsp20 or pointer-tsp or "
        "attention-routing-tsp50, or leave it out for the default."
    )


def test_a_greedy_decode_is_one_output_of_one_hypothesis() -> None:
    trace = run(PointerRequest("hull", FIVE), load)
    assert (trace.decoder, trace.beam_width, trace.samples, trace.best_of_k) == (
        "greedy",
        1,
        1,
        None,
    )
