import re

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
        ([[0, 0], [1, 0], [1, 0]], "Points 2 and 3 (counting from 1) are the same point"),
        ([[0, 0], [1, 0], [float("inf"), 0]], "finite"),
        # distinct, but a tour through them has length 0 in floating point (a fuzzer's 500)
        ([[0, 0], [5e-324, 0], [0, 5e-324]], "Points 1 and 2 (counting from 1) are closer than"),
        ([[0.5, 0.5], [0.5 + 1e-12, 0.5], [0, 1]], "Points 1 and 2 (counting from 1) are closer"),
    ],
)
def test_degenerate_input_is_refused(points: list, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        tsp.reference_tour(np.array(points, dtype=float))


# ---- TSP: 2-opt ends at a local optimum ----


def shortest_two_opt_neighbour(points: np.ndarray, tour: list[int]) -> float:
    """The length of the shortest tour one 2-opt move (reversing tour[i+1..j]) reaches."""
    n, best = len(tour), np.inf
    for i in range(n - 1):
        for j in range(i + 2, n):
            if i == 0 and j == n - 1:
                continue  # the two edges share city tour[0]: reversing changes nothing
            moved = tour[: i + 1] + tour[i + 1 : j + 1][::-1] + tour[j + 1 :]
            best = min(best, tsp.tour_length(points, moved))
    return best


def test_after_two_opt_no_single_move_shortens_the_tour() -> None:
    rng = np.random.default_rng(19)
    for _ in range(30):
        points = rng.random((14, 2))
        start = [int(c) for c in rng.permutation(14)]
        tour = tsp.two_opt(points, start)
        assert tsp.is_valid_tour(tour, 14)
        assert tour == tsp.canonical_tour(tour)
        length = tsp.tour_length(points, tour)
        assert length < tsp.tour_length(points, start)  # a random tour is never 2-optimal
        assert shortest_two_opt_neighbour(points, tour) >= length - 1e-9


def test_two_opt_untangles_a_crossing() -> None:
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=float)
    assert tsp.two_opt(square, [0, 2, 1, 3]) == [0, 1, 2, 3]
    assert tsp.tour_length(square, tsp.two_opt(square, [0, 2, 1, 3])) == pytest.approx(4.0)


# ---- TSP: solvers, augmentation and the label cache ----


def circle_points(n: int, seed: int) -> tuple[np.ndarray, list[int]]:
    """n cities on a circle, in random order, and their tour around the circle (canonical)."""
    rng = np.random.default_rng(seed)
    angles = np.sort(rng.uniform(0, 2 * np.pi, n))
    order = rng.permutation(n)  # city order[k] sits at angle k
    points = np.empty((n, 2))
    points[order] = 0.5 + 0.4 * np.column_stack([np.cos(angles), np.sin(angles)])
    return points, tsp.canonical_tour(order)


@pytest.mark.parametrize("seed", range(6))
def test_farthest_insertion_and_nearest_neighbour_on_a_circle_go_around_it(seed: int) -> None:
    """Cities in convex position: the optimal tour is the circle's order; farthest insertion
    (each city between its neighbours on the circle) finds exactly that."""
    points, around = circle_points(11, seed)
    assert tsp.farthest_insertion(points) == around
    assert tsp.held_karp(points) == around
    assert tsp.reference_tour(points)[0] == around
    nearest = tsp.nearest_neighbour(points)
    assert tsp.is_valid_tour(nearest, 11) and nearest[0] == 0


def test_heuristics_visit_every_city_once_on_larger_instances() -> None:
    rng = np.random.default_rng(7)
    for n in (15, 40):
        points = rng.random((n, 2))
        inserted = tsp.farthest_insertion(points)
        assert tsp.is_valid_tour(inserted, n) and inserted == tsp.canonical_tour(inserted)
        # from another start the greedy tour differs; the default starts at city 0
        assert tsp.nearest_neighbour(points) == tsp.nearest_neighbour(points, start=0)
        assert tsp.nearest_neighbour(points, start=3) != tsp.nearest_neighbour(points)


def test_canonical_tour_turns_a_three_city_tour_towards_the_smaller_neighbour() -> None:
    assert tsp.canonical_tour([0, 2, 1]) == [0, 1, 2]
    assert tsp.canonical_tour([2, 0, 1]) == [0, 1, 2]
    assert tsp.canonical_tour([1, 0]) == [0, 1]


def test_reference_tour_beyond_held_karp_is_the_shorter_two_opt_tour() -> None:
    rng = np.random.default_rng(3)
    for _ in range(4):
        points = rng.random((tsp.HELD_KARP_MAX_N + 1, 2))
        tour, method, exact = tsp.reference_tour(points)
        candidates = [
            tsp.two_opt(points, tsp.farthest_insertion(points)),
            tsp.two_opt(points, tsp.nearest_neighbour(points)),
        ]
        assert tsp.tour_length(points, tour) == min(tsp.tour_length(points, t) for t in candidates)
        assert method == "best of farthest insertion + 2-opt and nearest neighbour + 2-opt"
        assert exact is False
    tour, method, exact = tsp.reference_tour(rng.random((tsp.HELD_KARP_MAX_N, 2)))
    assert (method, exact) == ("Held–Karp (exact)", True)


def test_held_karp_batch_of_three_cities_is_the_one_tour() -> None:
    tours = tsp.held_karp_batch(np.random.default_rng(0).random((2, 3, 2)))
    np.testing.assert_array_equal(tours, [[0, 1, 2], [0, 1, 2]])
    assert tsp.held_karp_batch(np.random.default_rng(0).random((2, 6, 2))).dtype == np.int64


def test_random_points_and_the_square_symmetries() -> None:
    rng = np.random.default_rng(5)
    points = tsp.random_points(rng, 3, 7)
    assert points.shape == (3, 7, 2) and ((0 <= points) & (points < 1)).all()
    # an asymmetric set: the 8 symmetries of the square give 8 different images, each inside
    # the square and with every distance kept
    shape = np.array([[[0.1, 0.2], [0.7, 0.3], [0.4, 0.9]]])
    images = set()
    for _ in range(200):
        image = tsp.random_symmetry(rng, shape)
        assert ((0 <= image) & (image <= 1)).all()
        np.testing.assert_allclose(tsp.distances(image), tsp.distances(shape), atol=1e-12)
        images.add(tuple(np.round(image, 9).ravel()))
    assert len(images) == 8


def test_a_training_batch_from_one_labelled_instance() -> None:
    points = np.random.default_rng(2).random((1, 6, 2))
    labels = {6: (points, tsp.held_karp_batch(points))}
    batch, tours = tsp.training_batch(np.random.default_rng(0), 5, 6, labels)
    best = tsp.tour_length(points[0], tsp.held_karp(points[0]))
    for instance, tour in zip(batch, tours, strict=True):
        assert tsp.tour_length(instance, tour) == pytest.approx(best)  # still optimal
        assert list(tour) == tsp.held_karp(instance)  # and in canonical form


def test_validate_points_sentences() -> None:
    for bad in ([1.0, 2.0, 3.0], [[1.0, 2.0, 3.0]], [[[0.1, 0.2]]]):
        with pytest.raises(tsp.InvalidInstance) as refused:
            tsp.validate_points(bad)
        assert str(refused.value) == "Points must be a list of [x, y] pairs."
    with pytest.raises(tsp.InvalidInstance) as refused:
        tsp.validate_points([[0.1, 0.2], [float("nan"), 0.3], [0.5, 0.5]])
    assert str(refused.value) == "Every coordinate must be a finite number; found NaN or infinity."
    assert tsp.validate_points([[0, 0], [1, 0], [0, 1]]).dtype == np.float64


def test_label_tour_is_exact_up_to_held_karp_and_near_optimal_beyond() -> None:
    rng = np.random.default_rng(11)
    small = rng.random((tsp.HELD_KARP_MAX_N, 2))
    assert tsp.label_tour(small) == tsp.held_karp(small)
    large = rng.random((tsp.HELD_KARP_MAX_N + 2, 2))
    tour = tsp.label_tour(large)
    assert tsp.is_valid_tour(tour, len(large)) and tour == tsp.canonical_tour(tour)
    optimal = tsp.tour_length(large, tsp.held_karp_batch(large[None])[0])
    assert tsp.tour_length(large, tour) == pytest.approx(optimal, rel=1e-6)


FIRST_LABEL_POINT = [0.9368904232978821, 0.533416211605072]
LARGE_FIRST_POINT = [0.7929853101699025, 0.3070705586434591]


def test_the_tsp_validation_set_is_its_own_fixed_stream() -> None:
    small, large = tsp.validation_set(10, 3), tsp.validation_set(10, 6)
    np.testing.assert_array_equal(small, large[:3])
    assert not np.isclose(small[:, :5], tsp.validation_set(5, 3)).all()  # one stream per n
    # the instances the recorded validation curves were measured on (checkpoints/manifest.json)
    np.testing.assert_allclose(large[0, 0], LARGE_FIRST_POINT, atol=1e-10)


def test_label_rounds_are_cached_whole_and_load_back_merged(tmp_path, monkeypatch, capsys) -> None:
    out = tmp_path / "cache" / "tsp" / "labels"  # made with its parents
    with pytest.raises(FileNotFoundError, match="No TSP labels in"):
        tsp.load_labels(str(out))
    argv = ["tsp", "--rounds", "2", "--per-size", "2", "--min-n", "13", "--max-n", "15"]
    monkeypatch.setattr("sys.argv", [*argv, "--out", str(out)])
    tsp.main()
    assert sorted(p.name for p in out.iterdir()) == ["round_000.npz", "round_001.npz"]
    assert capsys.readouterr().out.count("round ") == 2
    stamp = (out / "round_000.npz").stat().st_mtime_ns
    tsp.main()  # rounds already there are kept, not redone
    assert (out / "round_000.npz").stat().st_mtime_ns == stamp and capsys.readouterr().out == ""
    (out / "round_001.npz").unlink()  # a later round lost: only it is made again
    tsp.main()
    assert (out / "round_001.npz").exists() and (out / "round_000.npz").stat().st_mtime_ns == stamp
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 1 and re.fullmatch(r"round 1: \d s", printed[0])
    labels = tsp.load_labels(str(out))
    assert sorted(labels) == [13, 14, 15]
    # the training stream's instances (the cached labels of older runs stay valid)
    np.testing.assert_allclose(labels[13][0][0, 0], FIRST_LABEL_POINT, atol=1e-6)
    validation = tsp.validation_set(15, 4)
    for n, (points, tours) in labels.items():
        assert points.shape == (4, n, 2) and points.dtype == np.float32
        assert tours.shape == (4, n) and tours.dtype == np.int64
        assert not np.isclose(points[0], points[2]).all()  # two rounds, two sets of instances
        for p, t in zip(points, tours, strict=True):
            assert list(t) == tsp.canonical_tour(t) and tsp.is_valid_tour(list(t), n)
            exact = tsp.held_karp_batch(p[None].astype(np.float64))[0]
            # Held–Karp labels up to LABEL_EXACT_MAX_N, OR-Tools (optimal on these) beyond
            assert tsp.tour_length(p, t) == pytest.approx(tsp.tour_length(p, exact), rel=1e-6)
        if n == 15:
            assert not np.isclose(points, validation).all(axis=(1, 2)).any()
