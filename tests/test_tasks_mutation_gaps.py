"""Task code that real bugs slipped past: hull simplicity, 2-opt's local optimum, and the
translation cleaning rules. Each test here fails on a bug that the older tests let through."""

from __future__ import annotations

import re

import numpy as np
import pytest

from models.tasks import hull, tsp
from models.tasks.translation import SentencePair, clean_pair

# ---- hull: the zero-area guard ----


@pytest.mark.parametrize(
    "points",
    [
        [[0.0, 0.0], [0.5, 0.0], [1.0, 0.0]],  # on the x axis
        [[0.1, 0.2], [0.4, 0.5], [0.9, 1.0]],  # on a slanted line
    ],
)
def test_a_collinear_triangle_is_not_a_simple_polygon(points: list) -> None:
    """Its three edges are pairwise adjacent, so only the area test can refuse it."""
    points = np.array(points)
    assert not hull.is_simple_polygon(points, [0, 1, 2])
    result = hull.score(np.vstack([points, [[0.5, 0.9]]]), [0, 1, 2])
    assert not result.simple and np.isnan(result.coverage)


def test_a_thin_but_real_triangle_is_simple() -> None:
    points = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, 1e-6]])  # area 5e-7
    assert hull.is_simple_polygon(points, [0, 1, 2])
    assert hull.polygon_area(points, [0, 1, 2]) == pytest.approx(5e-7)


def test_touching_and_crossing_edges_are_told_apart() -> None:
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=float)
    assert hull.is_simple_polygon(square, [0, 1, 2, 3])
    assert hull.is_simple_polygon(square, [3, 2, 1, 0])  # clockwise is simple too
    assert not hull.is_simple_polygon(square, [0, 2, 1, 3])  # crossing diagonals
    # a vertex that lies on a non-adjacent edge: the edges touch without crossing
    dart = np.array([[0, 0], [2, 0], [1, 1], [1, 0], [1, 2]], dtype=float)
    assert not hull.is_simple_polygon(dart, [0, 1, 2, 3, 4])
    # two collinear edges that overlap, with the others well apart
    overlap = np.array([[0, 0], [2, 0], [2, 1], [1, 0], [3, 0], [3, -1]], dtype=float)
    assert not hull.is_simple_polygon(overlap, [0, 1, 2, 3, 4, 5])


@pytest.mark.parametrize(
    ("points", "message"),
    [
        ([[0, 0, 0], [1, 0, 0], [1, 1, 0]], "Points must be a list of [x, y] pairs."),
        (
            [[0, 0], [1, float("nan")], [1, 1]],
            "Every coordinate must be a finite number; found NaN or infinity.",
        ),
        (
            [[0, 0], [1, 0], [1, 0], [1, 1]],  # the repeated point is not the smallest one
            "Points 1 and 2 are the same point (1, 0); remove or move one of them.",
        ),
        (
            [[0, 1], [1, 2], [2, 3]],  # a line that misses the origin
            "All points lie on one straight line, so they enclose no area; "
            "move one point off the line.",
        ),
        (
            [[0, 0], [1, 1], [2, 2 + 1e-13]],  # off the line by far less than a pixel
            "All points lie on one straight line, so they enclose no area; "
            "move one point off the line.",
        ),
    ],
)
def test_each_refusal_is_the_whole_sentence(points: list, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        hull.validate_points(np.array(points, dtype=float))
    assert str(refused.value) == message


def test_validated_points_are_floats() -> None:
    points = hull.validate_points([[0, 0], [3, 0], [0, 4]])
    assert points.dtype == np.float64 and points.shape == (3, 2)


def test_monotone_chain_on_a_grid_full_of_ties_matches_scipy() -> None:
    """Integer points share x and y values and lie on common lines: ties in the sort and
    collinear hull points, which random points never produce."""
    from scipy.spatial import ConvexHull

    rng = np.random.default_rng(19)
    grid = np.array([[x, y] for x in range(5) for y in range(5)], dtype=float)
    for _ in range(40):
        points = grid[rng.choice(25, size=int(rng.integers(5, 12)), replace=False)]
        if np.linalg.matrix_rank(points - points[0]) < 2:
            continue
        vertices = [int(v) for v in ConvexHull(points).vertices]
        start = vertices.index(min(vertices))
        assert hull.convex_hull_order(points) == vertices[start:] + vertices[:start]


def touch_exactly(a, b, c, d) -> bool:  # type: ignore[no-untyped-def]
    """Whether segments ab and cd share a point, in exact rational arithmetic."""
    from fractions import Fraction

    a, b, c, d = ([Fraction(int(v)) for v in p] for p in (a, b, c, d))
    r = [b[0] - a[0], b[1] - a[1]]
    s = [d[0] - c[0], d[1] - c[1]]
    q = [c[0] - a[0], c[1] - a[1]]
    denominator = r[0] * s[1] - r[1] * s[0]
    if denominator != 0:  # the lines cross at one point: is it on both segments?
        t = (q[0] * s[1] - q[1] * s[0]) / denominator
        u = (q[0] * r[1] - q[1] * r[0]) / denominator
        return 0 <= t <= 1 and 0 <= u <= 1
    if q[0] * r[1] - q[1] * r[0] != 0:
        return False  # parallel lines, apart
    # one line: project on it and compare the intervals
    rr = r[0] * r[0] + r[1] * r[1]
    t0 = (q[0] * r[0] + q[1] * r[1]) / rr
    t1 = t0 + (s[0] * r[0] + s[1] * r[1]) / rr
    return max(min(t0, t1), 0) <= min(max(t0, t1), 1)


def test_segment_contact_matches_exact_arithmetic_on_a_grid() -> None:
    """Every contact the polygon test decides with: crossings, T-junctions, shared ends,
    collinear overlaps, containment and collinear gaps, against an exact oracle."""
    rng = np.random.default_rng(7)
    seen = {True: 0, False: 0}
    for _ in range(3000):
        a, b, c, d = rng.integers(0, 4, size=(4, 2)).astype(float)
        if (a == b).all() or (c == d).all():
            continue
        expected = touch_exactly(a, b, c, d)
        assert hull._segments_touch(a, b, c, d) == expected, (a, b, c, d)
        seen[expected] += 1
    assert min(seen.values()) > 300


def test_collinear_segments_are_told_apart() -> None:
    def touch(*points: tuple[float, float]) -> bool:
        return hull._segments_touch(*(np.array(p, dtype=float) for p in points))

    assert touch((0, 0), (4, 0), (1, 0), (6, 0))  # c inside ab
    assert touch((0, 0), (4, 0), (6, 0), (3, 0))  # d inside ab
    assert touch((1, 0), (2, 0), (0, 0), (4, 0))  # ab inside cd
    assert touch((0, 0), (2, 2), (2, 2), (3, 3))  # end to end, on a slant
    assert not touch((0, 0), (1, 0), (2, 0), (3, 0))  # a gap along the line
    assert not touch((0, 0), (1, 1), (2, 2), (3, 3))
    assert not touch((0, 0), (0, 1), (0, 2), (0, 3))  # vertical, with a gap


def test_an_asymmetric_bow_tie_is_not_simple() -> None:
    """Its two lobes differ in area, so the signed area is not zero: only the crossing of
    the second and the last edge refuses it."""
    points = np.array([[0, 0], [3, 0], [0, 1], [1, 2]], dtype=float)
    assert hull.polygon_area(points, [0, 1, 2, 3]) > 0.1
    assert not hull.is_simple_polygon(points, [0, 1, 2, 3])


def test_coverage_is_a_ratio_of_areas() -> None:
    square = np.array([[0, 0], [2, 0], [2, 2], [0, 2], [1, 0.5]])  # hull area 4
    dented = hull.score(square, [0, 4, 1, 2, 3])
    assert dented.simple and dented.coverage == pytest.approx((4 - 0.5) / 4)


def test_a_polygon_with_other_vertices_is_not_the_hull() -> None:
    assert not hull.same_polygon([1, 2, 4], [0, 1, 2])
    assert not hull.same_polygon([0, 1, 2, 3, 1], [0, 1, 2, 3])


def test_the_validation_set_is_its_own_fixed_stream() -> None:
    small, large = hull.validation_set(10, 4), hull.validation_set(10, 9)
    assert small.shape == (4, 10, 2) and large.shape == (9, 10, 2)
    np.testing.assert_array_equal(small, large[:4])  # more instances extend, never reshuffle
    assert ((0 <= large) & (large < 1)).all()
    training, _ = hull.training_batch(np.random.default_rng(0), 4, 10)
    assert not np.isclose(small, training).any()
    assert not np.isclose(small[:, :5], hull.validation_set(5, 4)).all()  # one stream per n
    assert not np.isclose(small, tsp.validation_set(10, 4)).any()  # and one per task
    # the instances the recorded validation curves were measured on (checkpoints/manifest.json)
    np.testing.assert_allclose(large[0, 0], [0.7743024855, 0.0293938776], atol=1e-10)


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


# ---- translation cleaning: percent signs and mid-word accelerators ----


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("Download is 50% complete", "Download zu 50% abgeschlossen"),
        ("The battery is at 100%", "Der Akku ist bei 100%"),
        ("Zoom to 200%, then print", "Auf 200% vergrößern, dann drucken"),
        ("Used space (90%) is high", "Belegter Platz (90%) ist hoch"),
    ],
)
def test_a_percent_sign_after_a_number_is_kept(source: str, target: str) -> None:
    assert clean_pair(source, target) == SentencePair(source, target)


@pytest.mark.parametrize(
    ("source", "target", "expected"),
    [
        ("Open the _file", "Datei ö&ffnen", SentencePair("Open the file", "Datei öffnen")),
        (
            "Select A_ll items",
            "A&lle auswählen",
            SentencePair("Select All items", "Alle auswählen"),
        ),
        ("Sa~ve the page", "Seite speic~hern", SentencePair("Save the page", "Seite speichern")),
    ],
)
def test_a_mid_word_accelerator_is_removed(
    source: str, target: str, expected: SentencePair
) -> None:
    assert clean_pair(source, target) == expected


def test_an_ampersand_between_words_is_not_an_accelerator() -> None:
    pair = clean_pair("Copy & paste the text", "Text kopieren & einfügen")
    assert pair == SentencePair("Copy & paste the text", "Text kopieren & einfügen")


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
