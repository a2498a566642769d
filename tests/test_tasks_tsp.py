import numpy as np
import pytest

from models.tasks import tsp


@pytest.mark.parametrize("n", [4, 5, 6, 7, 8])
def test_held_karp_matches_brute_force(n: int) -> None:
    points = np.random.default_rng(n).random((6, n, 2))
    for p, tour in zip(points, tsp.held_karp_batch(points), strict=True):
        assert tsp.is_valid_tour(list(tour), n)
        assert tsp.tour_length(p, tour) == pytest.approx(tsp.tour_length(p, tsp.brute_force(p)))


def test_canonical_tour_is_unique_per_cycle() -> None:
    tour = [3, 1, 0, 4, 2]
    rotations = [tour[i:] + tour[:i] for i in range(5)]
    forms = {tuple(tsp.canonical_tour(t)) for t in rotations + [r[::-1] for r in rotations]}
    assert forms == {(0, 1, 3, 2, 4)}  # from 0 towards its smaller neighbour (1, not 4)


def test_heuristics_are_valid_and_no_better_than_optimal() -> None:
    rng = np.random.default_rng(1)
    for p in rng.random((5, 10, 2)):
        best = tsp.tour_length(p, tsp.held_karp(p))
        nn_tour = tsp.nearest_neighbour(p)
        for tour in [
            nn_tour,
            tsp.farthest_insertion(p),
            tsp.two_opt(p, nn_tour),
            tsp.christofides(p),
            tsp.reference_tour(p)[0],
        ]:
            assert tsp.is_valid_tour(tour, 10)
            assert tsp.tour_length(p, tour) >= best - 1e-9
        assert tsp.tour_length(p, tsp.two_opt(p, nn_tour)) <= tsp.tour_length(p, nn_tour) + 1e-9


def test_reference_tour_is_exact_up_to_the_held_karp_limit() -> None:
    p = np.random.default_rng(2).random((9, 2))
    tour, method, optimal = tsp.reference_tour(p)
    assert optimal and "Held" in method
    assert tsp.tour_length(p, tour) == pytest.approx(tsp.tour_length(p, tsp.brute_force(p)))
    big = np.random.default_rng(3).random((20, 2))
    tour, _, optimal = tsp.reference_tour(big)
    assert not optimal and tsp.is_valid_tour(tour, 20)


def test_ortools_label_solver_finds_the_optimum_on_small_instances() -> None:
    pytest.importorskip("ortools")
    for p in np.random.default_rng(4).random((3, 9, 2)):
        tour = tsp.ortools_tour(p, time_limit_ms=50)
        assert tsp.tour_length(p, tour) == pytest.approx(tsp.tour_length(p, tsp.held_karp(p)))


def test_augmented_batch_keeps_labels_optimal() -> None:
    points = np.random.default_rng(5).random((4, 7, 2))
    labels = {7: (points, tsp.held_karp_batch(points))}
    batch_points, tours = tsp.training_batch(np.random.default_rng(6), 16, 7, labels)
    for p, tour in zip(batch_points, tours, strict=True):
        assert list(tour) == tsp.canonical_tour(tour)
        assert tsp.tour_length(p, tour) == pytest.approx(tsp.tour_length(p, tsp.brute_force(p)))


@pytest.mark.parametrize(
    ("points", "message"),
    [
        ([[0, 0], [1, 1]], "at least 3 points; got 2"),
        ([[0, 0], [1, 0], [1, 0]], "Points 1 and 2 are the same point"),
        ([[0, 0], [1, 0], [float("inf"), 0]], "finite"),
        # distinct, but a tour through them has length 0 in floating point (a fuzzer's 500)
        ([[0, 0], [5e-324, 0], [0, 5e-324]], "Points 0 and 1 are closer than 1e-09"),
        ([[0.5, 0.5], [0.5 + 1e-12, 0.5], [0, 1]], "Points 0 and 1 are closer than 1e-09"),
    ],
)
def test_degenerate_input_is_refused(points: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tsp.reference_tour(np.array(points, dtype=float))
