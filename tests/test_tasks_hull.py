import numpy as np
import pytest
from scipy.spatial import ConvexHull

from models.tasks import hull


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
        ([[0, 0], [1, 0], [0, 0], [1, 1]], "Points 0 and 2 are the same point"),
        ([[0, 0], [0.5, 0.5], [1, 1]], "one straight line"),
        ([[0, 0], [1, float("nan")], [1, 1]], "finite number"),
        ([[0, 0], [1, float("inf")], [1, 1]], "finite number"),
        ([[0, 0, 0], [1, 0, 0], [1, 1, 0]], "[x, y] pairs"),
    ],
)
def test_degenerate_input_is_refused_with_a_sentence(points: list, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
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
