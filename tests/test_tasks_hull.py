import re

import numpy as np
import pytest
from scipy.spatial import ConvexHull

from models.tasks import hull, tsp


@pytest.mark.parametrize("n", [3, 4, 5, 10, 50, 200])
def test_monotone_chain_matches_scipy(n: int) -> None:
    rng = np.random.default_rng(n)
    for points in rng.random((20, n, 2)):
        vertices = [int(v) for v in ConvexHull(points).vertices]  # counter-clockwise
        start = vertices.index(min(vertices))
        assert hull.convex_hull_order(points) == vertices[start:] + vertices[:start]


def test_collinear_edge_points_are_not_vertices() -> None:
    points = np.array([[0, 0], [0.5, 0], [1, 0], [1, 1], [0, 1], [0.4, 0.5]])
    assert hull.convex_hull_order(points) == [0, 2, 3, 4]


@pytest.mark.parametrize(
    ("points", "message"),
    [
        ([[0, 0], [1, 1]], "at least 3 points; got 2"),
        ([[0, 0], [1, 0], [0, 0], [1, 1]], "Points 1 and 3 (counting from 1) are the same point"),
        ([[0, 0], [0.5, 0.5], [1, 1]], "one straight line"),
        ([[0, 0], [1, float("nan")], [1, 1]], "finite number"),
        ([[0, 0], [1, float("inf")], [1, 1]], "finite number"),
        ([[0, 0, 0], [1, 0, 0], [1, 1, 0]], "[x, y] pairs"),
    ],
)
def test_degenerate_input_is_refused_with_a_sentence(points: list, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        hull.convex_hull_order(np.array(points, dtype=float))


def test_same_polygon_ignores_start_and_direction() -> None:
    assert hull.same_polygon([2, 3, 0, 1], [0, 1, 2, 3])
    assert hull.same_polygon([0, 3, 2, 1], [0, 1, 2, 3])
    assert not hull.same_polygon([0, 2, 1, 3], [0, 1, 2, 3])
    assert not hull.same_polygon([0, 1, 2], [0, 1, 2, 3])


def test_score_of_true_hull_and_of_failures() -> None:
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.25]])
    exact = hull.score(square, [0, 1, 2, 3])
    assert exact.correct and exact.simple and exact.coverage == pytest.approx(1.0)
    bow_tie = hull.score(square, [0, 2, 1, 3])  # crossing edges
    assert not bow_tie.simple and np.isnan(bow_tie.coverage)
    assert not hull.score(square, [0, 1, 1, 2]).simple  # repeated vertex
    assert not hull.score(square, [0, 1]).simple  # too short
    partial = hull.score(square, [0, 4, 1, 2, 3])  # simple, dented by the interior point
    assert partial.simple and not partial.correct
    assert partial.coverage == pytest.approx(1 - 0.125)


def test_training_batch_targets_end_with_the_end_index() -> None:
    points, targets = hull.training_batch(np.random.default_rng(0), 8, 12)
    assert points.shape == (8, 12, 2)
    for p, row in zip(points, targets, strict=True):
        target = [int(t) for t in row if t != -100]
        assert target[-1] == 12 and target[:-1] == hull.convex_hull_order(p)


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
            "Points 2 and 3 (counting from 1) are the same point (1, 0); remove or move one of "
            "them.",
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
