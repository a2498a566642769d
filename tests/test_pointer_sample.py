"""The sample decoder (best of k samples from the pointer's distribution): valid outputs only,
seeded and reproducible, bounded, never worse than greedy on a fixed set, and its API."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient

from app.main import ROOT, create_app
from app.pointer.requests import BestOfK, PointerModelInfo, TspReference, TspResponse
from app.pointer.views import best_of_k_rows
from models.checkpoints import load_model, read_manifest
from models.pointer import (
    MAX_SAMPLES,
    Config,
    PointerNet,
    best_of,
    greedy,
    inverse_cdf,
    sample,
)
from models.pointer_run import SERVED, best_of_k_curve, hull_score, sort_score, tsp_score
from models.tasks import hull, tsp

SHIPPED = ROOT / "checkpoints"
TSP_MODEL = SERVED["tsp"][0]
CONFIGS = {
    "hull": Config(hidden=16, end_position=True, glimpse_residual=True, input_order="x"),
    "tsp": Config(hidden=16, glimpse_residual=True, embedding_skip=True),
    "sort": Config(hidden=16, input_dim=1),
    "sort-entmax15": Config(hidden=16, input_dim=1, pointer="entmax15"),
}


def untrained(name: str) -> PointerNet:
    torch.manual_seed(0)
    return PointerNet(CONFIGS[name])


def instance(name: str, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.random(n) if CONFIGS[name].input_dim == 1 else rng.random((n, 2))


# ---- the decoder itself (untrained models: validity must not depend on training) ----


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_every_sample_is_a_valid_output(name: str) -> None:
    model, n = untrained(name), 9
    for trace in sample(model, instance(name, n), 64, seed=1):
        if model.config.end_position:
            assert trace.chosen[-1] == n and n not in trace.chosen[:-1]
            assert len(trace.order) >= model.config.min_before_end
            assert len(set(trace.order)) == len(trace.order)
            assert set(trace.order) <= set(range(n))
        else:
            assert sorted(trace.order) == list(range(n))
        # each choice had nonzero probability where it was made, and a chosen input is
        # masked (probability exactly zero) at every later step
        for step, choice in enumerate(trace.chosen):
            assert trace.distributions[step, choice] > 0
            assert np.all(trace.distributions[step + 1 :, choice] == 0) or choice == n
        assert np.isfinite(trace.log_prob) and trace.log_prob <= 0


def test_the_same_seed_draws_the_same_samples() -> None:
    model, points = untrained("tsp"), instance("tsp", 12)
    first = [t.chosen for t in sample(model, points, 32, seed=7)]
    again = [t.chosen for t in sample(model, points, 32, seed=7)]
    other = [t.chosen for t in sample(model, points, 32, seed=8)]
    assert first == again
    assert first != other
    # the first k of a larger draw are a draw of k with the same seed
    assert [t.chosen for t in sample(model, points, 8, seed=7)] == first[:8]


def test_inverse_cdf_draws_in_proportion_and_never_a_zero() -> None:
    probs = torch.tensor([[0.0, 0.5, 0.0, 0.25, 0.25, 0.0]])
    edges = torch.tensor([0.0, 0.4999, 0.5, 0.7499, 0.75, 1.0 - 2**-24])
    drawn = inverse_cdf(probs.expand(6, -1), edges).tolist()
    assert drawn == [1, 1, 3, 3, 4, 4]
    uniforms = torch.rand(20000, generator=torch.Generator().manual_seed(0))
    counts = torch.bincount(inverse_cdf(probs.expand(20000, -1), uniforms), minlength=6)
    assert counts[[0, 2, 5]].tolist() == [0, 0, 0]
    assert (counts / 20000).tolist() == pytest.approx([0, 0.5, 0, 0.25, 0.25, 0], abs=0.015)


@pytest.mark.parametrize("count", [0, MAX_SAMPLES + 1])
def test_the_sample_count_is_bounded(count: int) -> None:
    with pytest.raises(ValueError, match=f"between 1 and {MAX_SAMPLES}"):
        sample(untrained("tsp"), instance("tsp", 5), count)


def test_best_of_keeps_the_cheapest_and_a_running_minimum() -> None:
    model, points = untrained("tsp"), instance("tsp", 10)
    traces = sample(model, points, 40, seed=0)
    lengths = [tsp.tour_length(points, t.order) for t in traces]
    best, running = best_of(traces, lambda order: tsp.tour_length(points, order))
    assert tsp.tour_length(points, best.order) == min(lengths)
    assert running == list(np.minimum.accumulate(lengths))
    curve = best_of_k_curve(running, tsp_score(points))
    assert [point.k for point in curve] == [1, 2, 4, 8, 16, 32, 40]
    assert [point.value for point in curve] == [running[k - 1] for k in (1, 2, 4, 8, 16, 32, 40)]


def test_task_scores_rank_what_the_reader_is_promised() -> None:
    square = np.array([[0.1, 0.1], [0.9, 0.1], [0.9, 0.9], [0.1, 0.9], [0.3, 0.6]])
    area = hull_score(square)
    assert area.cost([0, 1, 2, 3]) < area.cost([0, 1, 2, 4]) < area.cost([0, 1, 2])
    assert area.cost([0, 2, 1, 3]) == np.inf and area.value(np.inf) is None  # self-crossing
    assert area.value(area.cost([0, 1, 2, 3])) == pytest.approx(0.64)
    tour = tsp_score(square)
    assert tour.cost([0, 1, 2, 3, 4]) < tour.cost([0, 2, 1, 3, 4])
    assert tour.cost([0, 1, 2, 3, 4]) == tour.cost([0, 4, 3, 2, 1])  # the same cycle reversed
    ascending = sort_score(np.array([0.3, 0.1, 0.2, 0.2]))
    assert ascending.cost([1, 2, 3, 0]) == 0 and ascending.cost([0, 1, 2, 3]) == 1
    assert ascending.cost([0, 3, 2, 1]) == 2


# ---- the trained models ----


def test_best_of_64_is_never_worse_than_greedy_on_a_fixed_set() -> None:
    """TSP: the shortest of 64 samples beats or ties greedy on each of 12 fixed instances;
    hull: the largest simple sampled polygon covers at least greedy's area when greedy's is
    simple."""
    if TSP_MODEL not in read_manifest(SHIPPED) or "pointer-hull" not in read_manifest(SHIPPED):
        pytest.skip("needs the shipped checkpoints")
    model, _ = load_model(TSP_MODEL, SHIPPED)
    rng = np.random.default_rng(2015)
    for n in (8, 10, 12, 15, 20, 25) * 2:
        points = rng.random((n, 2))
        greedy_length = tsp.tour_length(points, greedy(model, points[None])[0].order)
        score = tsp_score(points)
        best, _ = best_of(sample(model, points, 64, seed=0), score.cost)
        assert tsp.tour_length(points, best.order) <= greedy_length + 1e-9
    model, _ = load_model("pointer-hull", SHIPPED)
    for n in (10, 20, 50) * 2:
        points = rng.random((n, 2))
        greedy_order = greedy(model, points[None])[0].order
        score = hull_score(points)
        best, _ = best_of(sample(model, points, 64, seed=0), score.cost)
        if hull.is_simple_polygon(points, greedy_order):
            assert score.cost(best.order) <= score.cost(greedy_order)


# ---- the API ----


@pytest.fixture(scope="module")
def api() -> Iterator[TestClient]:
    if any(name not in read_manifest(SHIPPED) for name in (TSP_MODEL, "pointer-hull")):
        pytest.skip("needs the shipped checkpoints")
    with TestClient(create_app(checkpoint_dir=SHIPPED)) as client:
        yield client


POINTS = np.random.default_rng(5).random((14, 2)).round(4).tolist()


def post(api: TestClient, task: str, **body: object) -> dict:
    response = api.post(f"/api/pointer/{task}", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_api_sample_keeps_the_shortest_tour_and_reports_the_curve(api: TestClient) -> None:
    result = post(api, "tsp", points=POINTS, decoder="sample", samples=48, seed=11)
    assert (result["decoder"], result["samples"], result["beam_width"]) == ("sample", 48, 1)
    assert result["valid"] and sorted(result["order"]) == list(range(14))
    curve = result["best_of_k"]
    assert [p["k"] for p in curve] == [1, 2, 4, 8, 16, 32, 48]
    values = [p["value"] for p in curve]
    assert values == sorted(values, reverse=True)  # the best so far only improves
    assert result["length"] == pytest.approx(values[-1])
    again = post(api, "tsp", points=POINTS, decoder="sample", samples=48, seed=11)
    assert again["order"] == result["order"] and again["best_of_k"] == curve
    greedy_result = post(api, "tsp", points=POINTS)
    assert greedy_result["samples"] == 1 and greedy_result["best_of_k"] is None


def test_api_sample_hull_and_sort(api: TestClient) -> None:
    result = post(api, "hull", points=POINTS, decoder="sample", samples=16)
    values = [p["value"] for p in result["best_of_k"]]
    known = [v for v in values if v is not None]
    assert known == sorted(known)  # the largest area so far only grows
    if result["valid"]:
        assert result["area"] == pytest.approx(values[-1])
    ordered = post(api, "sort", values=[0.4, 0.1, 0.3, 0.2], decoder="sample", samples=8)
    assert ordered["best_of_k"][-1]["value"] == 0 or not ordered["correct"]
    assert ordered["correct"] == (ordered["best_of_k"][-1]["value"] == 0)


@pytest.mark.parametrize(
    ("body", "phrase"),
    [
        ({"samples": 0}, "`samples` must be at least 1"),
        ({"samples": MAX_SAMPLES + 1}, f"`samples` must be at most {MAX_SAMPLES}"),
        ({"samples": 2.5}, "`samples`"),
        ({"seed": -1}, "`seed` must be at least 0"),
        ({"decoder": "sampling"}, "'greedy', 'beam', 'sample' or 'symmetric'"),
    ],
)
def test_bad_sample_requests_get_a_sentence(api: TestClient, body: dict, phrase: str) -> None:
    response = api.post("/api/pointer/tsp", json={"points": POINTS, "decoder": "sample", **body})
    assert response.status_code == 422
    assert phrase in response.json()["detail"]


def test_the_board_fragment_shows_the_best_of_k(api: TestClient) -> None:
    response = api.post(
        "/api/pointer/tsp",
        json={"points": POINTS, "decoder": "sample", "samples": 8},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    html = response.text
    assert "best of 8 samples from the pointer" in html
    assert html.count('<tr><th scope="row">') == 4  # k = 1, 2, 4, 8
    greedy_html = api.post(
        "/api/pointer/tsp", json={"points": POINTS}, headers={"HX-Request": "true"}
    ).text
    assert "pb-best-of-k" not in greedy_html


def test_best_of_k_rows_measure_the_distance_from_the_reference() -> None:
    result = tsp_response(
        [BestOfK(k=1, value=4.4), BestOfK(k=2, value=4.1), BestOfK(k=4, value=3.9)], 4.0
    )
    rows = best_of_k_rows(result)
    assert [r["distance"] for r in rows] == ["+10.00%", "+2.50%", "-2.50%"]
    assert [r["width"] for r in rows] == [100.0, 25.0, 0.0]


def tsp_response(curve: list[BestOfK], reference_length: float) -> TspResponse:
    """A TspResponse built directly, without a model."""
    return TspResponse(
        task="tsp",
        n=4,
        decoder="sample",
        beam_width=1,
        samples=curve[-1].k,
        best_of_k=curve,
        order=[0, 1, 2, 3],
        steps=[],
        valid=True,
        correct=True,
        gap=0.0,
        model=PointerModelInfo(name="pointer-tsp", alpha=1.0, sha256="0"),
        server_ms=1.0,
        length=curve[-1].value,
        reference=TspReference(
            order=[0, 1, 2, 3], method="test", optimal=False, length=reference_length
        ),
    )
