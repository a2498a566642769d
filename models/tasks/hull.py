"""Planar convex hull: instances, the exact answer (monotone chain) and the paper's metrics.

The target sequence follows Vinyals et al. (2015): the hull's vertices counter-clockwise,
starting from the vertex with the lowest input index, then an end marker.

Metrics (Table 1 of the paper):
- accuracy: the output is the same polygon as the true hull (same cycle of vertices, in
  either direction, from any start);
- area coverage: for outputs that are simple polygons, area(output ∩ hull) / area(hull).
  Every vertex of the output is an input point and the hull is convex and contains all
  input points, so a simple output polygon lies inside the hull; the intersection is then
  the output polygon itself and coverage = |shoelace area(output)| / area(hull);
- failure rate: share of outputs that are not simple polygons (fewer than 3 vertices, a
  repeated vertex, or two non-adjacent edges that touch or cross).
"""

from dataclasses import dataclass

import numpy as np

from models.tasks import InvalidInstance, check_finite, instance_rng


def random_points(rng: np.random.Generator, batch: int, n: int) -> np.ndarray:
    """Points uniform in the unit square, shape (batch, n, 2)."""
    return rng.random((batch, n, 2))


def _cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))


def validate_points(points: np.ndarray) -> np.ndarray:
    """Return the points as a float array (n, 2), or raise InvalidInstance saying what is wrong."""
    points = np.asarray(points, dtype=np.float64)
    if points.ndim != 2 or points.shape[1] != 2:
        raise InvalidInstance("Points must be a list of [x, y] pairs.")
    check_finite(points, "coordinate")
    n = len(points)
    if n < 3:
        raise InvalidInstance(f"A convex hull needs at least 3 points; got {n}.")
    _, first, counts = np.unique(points, axis=0, return_index=True, return_counts=True)
    if np.any(counts > 1):
        i = int(first[np.argmax(counts > 1)])
        same = [j for j in range(n) if np.array_equal(points[j], points[i])]
        x, y = points[i]
        raise InvalidInstance(
            f"Points {same[0] + 1} and {same[1] + 1} (counting from 1) are the same point "
            f"({x:g}, {y:g}); "
            "remove or move one of them."
        )
    spans = points - points[0]
    if np.linalg.matrix_rank(spans, tol=1e-12) < 2:
        raise InvalidInstance(
            "All points lie on one straight line, so they enclose no area; "
            "move one point off the line."
        )
    return points


def convex_hull_order(points: np.ndarray) -> list[int]:
    """Indices of the hull vertices, counter-clockwise, starting at the lowest index.

    Andrew's monotone chain; points on a hull edge but not at a corner are not vertices.
    """
    pts = validate_points(points)
    order = sorted(range(len(pts)), key=lambda i: (pts[i, 0], pts[i, 1]))

    def half(indices: list[int]) -> list[int]:
        chain: list[int] = []
        for i in indices:
            while len(chain) >= 2 and _cross(pts[chain[-2]], pts[chain[-1]], pts[i]) <= 0:
                chain.pop()
            chain.append(i)
        return chain

    lower, upper = half(order), half(order[::-1])
    hull = lower[:-1] + upper[:-1]  # counter-clockwise from the leftmost point
    start = hull.index(min(hull))
    return hull[start:] + hull[:start]


def polygon_area(points: np.ndarray, order: list[int]) -> float:
    """Absolute shoelace area of the polygon visiting `points[order]`."""
    p = np.asarray(points, dtype=np.float64)[order]
    x, y = p[:, 0], p[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


def _segments_touch(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> bool:
    """Whether closed segments ab and cd share a point (collinear overlaps included)."""

    def orient(p: np.ndarray, q: np.ndarray, r: np.ndarray) -> int:
        value = _cross(p, q, r)
        return 0 if abs(value) < 1e-12 else (1 if value > 0 else -1)

    def on_segment(p: np.ndarray, q: np.ndarray, r: np.ndarray) -> bool:
        return min(p[0], q[0]) <= r[0] <= max(p[0], q[0]) and min(p[1], q[1]) <= r[1] <= max(
            p[1], q[1]
        )

    o1, o2, o3, o4 = orient(a, b, c), orient(a, b, d), orient(c, d, a), orient(c, d, b)
    if o1 != o2 and o3 != o4:
        return True
    return (
        (o1 == 0 and on_segment(a, b, c))
        or (o2 == 0 and on_segment(a, b, d))
        or (o3 == 0 and on_segment(c, d, a))
        or (o4 == 0 and on_segment(c, d, b))
    )


def is_simple_polygon(points: np.ndarray, order: list[int]) -> bool:
    """At least 3 distinct vertices, non-zero area, and no two non-adjacent edges touching."""
    k = len(order)
    if k < 3 or len(set(order)) != k:
        return False
    p = np.asarray(points, dtype=np.float64)[order]
    if polygon_area(p, list(range(k))) < 1e-15:
        return False
    for i in range(k):
        for j in range(i + 1, k):
            if j == i + 1 or (i == 0 and j == k - 1):
                continue  # adjacent edges share a vertex by construction
            if _segments_touch(p[i], p[(i + 1) % k], p[j], p[(j + 1) % k]):
                return False
    return True


def same_polygon(order: list[int], hull: list[int]) -> bool:
    """Same cycle of vertices, in either direction, from any start."""
    if len(order) != len(hull) or set(order) != set(hull):
        return False
    start = order.index(hull[0])
    rotated = order[start:] + order[:start]
    return rotated == hull or [rotated[0], *rotated[:0:-1]] == hull


@dataclass(frozen=True)
class HullScore:
    correct: bool
    simple: bool
    coverage: float  # NaN when the output is not a simple polygon


def score(points: np.ndarray, order: list[int], hull: list[int] | None = None) -> HullScore:
    """Accuracy, simplicity and area coverage of one output against the true hull."""
    hull = convex_hull_order(points) if hull is None else hull
    simple = is_simple_polygon(points, order)
    coverage = polygon_area(points, order) / polygon_area(points, hull) if simple else float("nan")
    return HullScore(correct=same_polygon(order, hull), simple=simple, coverage=coverage)


def target_sequences(points: np.ndarray) -> list[list[int]]:
    """Training targets for a batch (batch, n, 2): hull order then the end index n."""
    n = points.shape[1]
    return [convex_hull_order(p) + [n] for p in points]


def validation_set(n: int, count: int) -> np.ndarray:
    """Fixed validation points (count, n, 2), from the validation stream."""
    return random_points(instance_rng("validation", 0, n), count, n)


def training_batch(rng: np.random.Generator, batch: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Fresh points (batch, n, 2) and targets (batch, T) padded with -100 after the end."""
    points = random_points(rng, batch, n)
    targets = target_sequences(points)
    padded = np.full((batch, max(map(len, targets))), -100, dtype=np.int64)
    for row, target in zip(padded, targets, strict=True):
        row[: len(target)] = target
    return points, padded
