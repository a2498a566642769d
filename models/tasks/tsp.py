"""Planar symmetric travelling salesman: instances, exact and classical solvers, metrics.

Solvers, from exact to rough:
- `held_karp_batch`: exact dynamic programming over subsets, vectorised over subsets and over
  a batch of instances; O(n² 2ⁿ) time, so used up to n ≈ 13 for many instances;
- `ortools_tour`: Google OR-Tools routing with guided local search under a time limit; the
  near-optimal label solver for training (Apache-2.0; imported only when called, since it is a
  data-generation dependency, not a runtime one);
- `two_opt`, `nearest_neighbour`, `farthest_insertion`, `christofides` (networkx): the
  classical baselines of the paper's Table 2.

A tour is a list of city indices visiting each city once; its length closes the cycle.
The canonical form starts at city 0 and goes towards the smaller-indexed of city 0's two
neighbours, so every cycle has exactly one target sequence.
"""

import itertools

import numpy as np

from models.tasks import InvalidInstance, check_finite, instance_rng

HELD_KARP_MAX_N = 12  # exact reference at request time up to here (a few ms)


def random_points(rng: np.random.Generator, batch: int, n: int) -> np.ndarray:
    """Cities uniform in the unit square, shape (batch, n, 2)."""
    return rng.random((batch, n, 2))


MIN_SEPARATION = 1e-9  # far below a click; a tour of such points has no meaningful length


def validate_points(points: np.ndarray) -> np.ndarray:
    """Return the cities as a float array (n, 2), or raise InvalidInstance saying what is wrong."""
    points = np.asarray(points, dtype=np.float64)
    if points.ndim != 2 or points.shape[1] != 2:
        raise InvalidInstance("Points must be a list of [x, y] pairs.")
    check_finite(points, "coordinate")
    if len(points) < 3:
        raise InvalidInstance(f"A tour needs at least 3 points; got {len(points)}.")
    _, first, counts = np.unique(points, axis=0, return_index=True, return_counts=True)
    if np.any(counts > 1):
        i = int(first[np.argmax(counts > 1)])
        same = [j for j in range(len(points)) if np.array_equal(points[j], points[i])]
        raise InvalidInstance(
            f"Points {same[0] + 1} and {same[1] + 1} (counting from 1) are the same point; "
            "remove or move one of them."
        )
    gaps = distances(points) + np.eye(len(points))
    if gaps.min() < MIN_SEPARATION:  # distinct, but their distance rounds away to (almost) 0
        i, j = sorted(np.unravel_index(int(np.argmin(gaps)), gaps.shape))
        raise InvalidInstance(
            f"Points {i + 1} and {j + 1} (counting from 1) are closer than "
            f"{MIN_SEPARATION:g}; move them apart."
        )
    return points


def distances(points: np.ndarray) -> np.ndarray:
    """Euclidean distance matrix (..., n, n)."""
    return np.linalg.norm(points[..., :, None, :] - points[..., None, :, :], axis=-1)


def tour_length(points: np.ndarray, tour: list[int] | np.ndarray) -> float:
    """Length of the closed tour."""
    p = np.asarray(points, dtype=np.float64)[np.asarray(tour)]
    return float(np.linalg.norm(p - np.roll(p, -1, axis=0), axis=1).sum())


def is_valid_tour(tour: list[int], n: int) -> bool:
    return sorted(tour) == list(range(n))


def canonical_tour(tour: list[int] | np.ndarray) -> list[int]:
    """Rotate to start at city 0; go towards the smaller-indexed neighbour of city 0."""
    tour = [int(c) for c in tour]
    start = tour.index(0)
    tour = tour[start:] + tour[:start]
    if len(tour) > 2 and tour[-1] < tour[1]:
        tour = [0, *tour[:0:-1]]
    return tour


def brute_force(points: np.ndarray) -> list[int]:
    """Optimal tour by trying every permutation (for tests; n ≤ 9)."""
    d = distances(np.asarray(points, dtype=np.float64))
    n = len(d)
    best, best_len = None, np.inf
    for rest in itertools.permutations(range(1, n)):
        tour = (0, *rest)
        length = sum(d[tour[i], tour[(i + 1) % n]] for i in range(n))
        if length < best_len - 1e-12:
            best, best_len = tour, length
    return canonical_tour(best)


def held_karp_batch(points: np.ndarray) -> np.ndarray:
    """Optimal tours (batch, n) for cities (batch, n, 2), in canonical form.

    dp[S, j] is the shortest path that starts at city 0, visits exactly the cities in subset
    S of {1..n-1}, and ends at j ∈ S. Subsets are processed by size, so each layer reads only
    the finished layer below it, and all subsets of a size are updated at once.
    """
    points = np.asarray(points, dtype=np.float64)
    batch, n, _ = points.shape
    if n <= 3:
        return np.array([canonical_tour(range(n)) for _ in range(batch)])
    d = distances(points)  # (batch, n, n)
    m = n - 1  # cities 1..n-1 are bits 0..m-1
    full = 1 << m
    dp = np.full((batch, full, m), np.inf)
    parent = np.zeros((batch, full, m), dtype=np.int8)
    for j in range(m):
        dp[:, 1 << j, j] = d[:, 0, j + 1]
    subsets = np.arange(full)
    sizes = np.array([bin(s).count("1") for s in subsets])
    inner = d[:, 1:, 1:]  # (batch, m, m)
    for size in range(2, m + 1):
        layer = subsets[sizes == size]
        for j in range(m):
            with_j = layer[(layer >> j) & 1 == 1]
            without_j = with_j ^ (1 << j)
            cand = dp[:, without_j, :] + inner[:, None, :, j]  # (batch, subsets, m)
            best = cand.argmin(axis=-1)
            parent[:, with_j, j] = best
            dp[:, with_j, j] = np.take_along_axis(cand, best[..., None], axis=-1)[..., 0]
    last = (dp[:, full - 1, :] + d[:, 1:, 0]).argmin(axis=-1)  # (batch,)
    rows = np.arange(batch)
    subset = np.full(batch, full - 1)
    tours = np.zeros((batch, n), dtype=np.int64)
    for position in range(n - 1, 0, -1):
        tours[:, position] = last + 1
        previous = parent[rows, subset, last]
        subset = subset ^ (1 << last)
        last = previous.astype(np.int64)
    return np.array([canonical_tour(t) for t in tours])


def held_karp(points: np.ndarray) -> list[int]:
    """Optimal tour of one instance (n, 2)."""
    return [int(c) for c in held_karp_batch(validate_points(points)[None])[0]]


def nearest_neighbour(points: np.ndarray, start: int = 0) -> list[int]:
    """Greedy: always go to the closest unvisited city."""
    d = distances(np.asarray(points, dtype=np.float64))
    n = len(d)
    tour, visited = [start], np.zeros(n, dtype=bool)
    visited[start] = True
    for _ in range(n - 1):
        row = np.where(visited, np.inf, d[tour[-1]])
        tour.append(int(row.argmin()))
        visited[tour[-1]] = True
    return canonical_tour(tour)


def farthest_insertion(points: np.ndarray) -> list[int]:
    """Insert the city farthest from the partial tour where it lengthens the tour least."""
    d = distances(np.asarray(points, dtype=np.float64))
    n = len(d)
    a, b = np.unravel_index(d.argmax(), d.shape)
    tour = [int(a), int(b)]
    # each city's distance to the partial tour: 0 for the cities in it (no two are the same
    # point), so the farthest city is never one of them
    gap = np.minimum(d[a], d[b])
    for _ in range(n - 2):
        city = int(gap.argmax())
        nxt = np.roll(tour, -1)
        increase = d[tour, city] + d[city, nxt] - d[tour, nxt]
        tour.insert(int(increase.argmin()) + 1, city)
        gap = np.minimum(gap, d[city])
    return canonical_tour(tour)


def two_opt(points: np.ndarray, tour: list[int]) -> list[int]:
    """Apply the best improving 2-opt move (reverse a segment) until none is left."""
    d = distances(np.asarray(points, dtype=np.float64))
    t = np.array(tour)
    n = len(t)
    while True:
        a, b = t, np.roll(t, -1)  # edge i is (a[i], b[i])
        # delta[i, j]: replace edges i and j by (a[i], a[j]) and (b[i], b[j])
        delta = d[a[:, None], a[None, :]] + d[b[:, None], b[None, :]] - d[a, b][:, None]
        delta = delta - d[a, b][None, :]
        delta = np.triu(delta, k=2)
        delta[0, n - 1] = 0.0  # edges 0 and n-1 are adjacent through the closing edge
        i, j = np.unravel_index(delta.argmin(), delta.shape)
        if delta[i, j] > -1e-10:
            return canonical_tour(t)
        t = np.concatenate([t[: i + 1], t[i + 1 : j + 1][::-1], t[j + 1 :]])


def christofides(points: np.ndarray) -> list[int]:
    """Christofides' 3/2-approximation (networkx)."""
    import networkx as nx
    from networkx.algorithms.approximation import christofides as nx_christofides

    d = distances(np.asarray(points, dtype=np.float64))
    graph = nx.from_numpy_array(d)
    cycle = nx_christofides(graph)  # closed: first node repeated at the end
    return canonical_tour(cycle[:-1])


def ortools_tour(points: np.ndarray, time_limit_ms: int = 30) -> list[int]:
    """Near-optimal tour from OR-Tools routing (guided local search under a time limit)."""
    from ortools.constraint_solver import pywrapcp, routing_enums_pb2

    d = distances(np.asarray(points, dtype=np.float64))
    scaled = np.rint(d * 1e7).astype(np.int64).tolist()  # the solver works in integers
    n = len(d)
    manager = pywrapcp.RoutingIndexManager(n, 1, 0)
    routing = pywrapcp.RoutingModel(manager)
    cost = routing.RegisterTransitMatrix(scaled)  # no Python callback in the search loop
    routing.SetArcCostEvaluatorOfAllVehicles(cost)
    params = pywrapcp.DefaultRoutingSearchParameters()
    params.first_solution_strategy = routing_enums_pb2.FirstSolutionStrategy.PATH_CHEAPEST_ARC
    params.local_search_metaheuristic = (
        routing_enums_pb2.LocalSearchMetaheuristic.GUIDED_LOCAL_SEARCH
    )
    params.time_limit.FromMilliseconds(time_limit_ms)
    solution = routing.SolveWithParameters(params)
    if solution is None:  # the limit ran out before a first solution (a busy machine)
        return ortools_tour(points, time_limit_ms=2 * time_limit_ms)
    index, tour = routing.Start(0), []
    while not routing.IsEnd(index):
        tour.append(manager.IndexToNode(index))
        index = solution.Value(routing.NextVar(index))
    return canonical_tour(tour)


def reference_tour(points: np.ndarray) -> tuple[list[int], str, bool]:
    """The best tour that is cheap to compute at request time: (tour, method, proven optimal).

    Exact Held–Karp up to HELD_KARP_MAX_N cities; beyond that the shorter of farthest
    insertion and nearest neighbour, each improved by 2-opt (no optimality proof). Christofides
    is left out here: networkx's matching makes it the slowest of the baselines.
    """
    points = validate_points(points)
    if len(points) <= HELD_KARP_MAX_N:
        return held_karp(points), "Held–Karp (exact)", True
    candidates = [
        two_opt(points, farthest_insertion(points)),
        two_opt(points, nearest_neighbour(points)),
    ]
    best = min(candidates, key=lambda t: tour_length(points, t))
    return best, "best of farthest insertion + 2-opt and nearest neighbour + 2-opt", False


def label_tour(points: np.ndarray) -> list[int]:
    """Training label: exact up to 12 cities, OR-Tools guided local search beyond."""
    if len(points) <= HELD_KARP_MAX_N:
        return held_karp(points)
    return ortools_tour(points, time_limit_ms=30)


def random_symmetry(rng: np.random.Generator, points: np.ndarray) -> np.ndarray:
    """One of the 8 symmetries of the unit square applied to (batch, n, 2) points.

    Distances are unchanged, so an optimal tour stays optimal; used for augmentation.
    """
    out = points[..., ::-1] if rng.random() < 0.5 else points
    if rng.random() < 0.5:
        out = out * np.array([-1.0, 1.0]) + np.array([1.0, 0.0])
    if rng.random() < 0.5:
        out = out * np.array([1.0, -1.0]) + np.array([0.0, 1.0])
    return np.ascontiguousarray(out)


def training_batch(
    rng: np.random.Generator, batch: int, n: int, labels: dict[int, tuple[np.ndarray, np.ndarray]]
) -> tuple[np.ndarray, np.ndarray]:
    """A batch of labelled instances of size n, augmented, with canonical target tours.

    Each instance gets one of the square's 8 symmetries and a random relabelling of its
    cities; both keep the labelled tour optimal (or as good), so a cached label set of a
    few thousand instances per size serves many epochs without repeating an input.
    """
    points, tours = labels[n]
    pick = rng.integers(0, len(points), size=batch)
    points = random_symmetry(rng, points[pick].astype(np.float64))
    perm = np.argsort(rng.random((batch, n)), axis=1)  # new city i is old city perm[i]
    inverse = np.argsort(perm, axis=1)
    points = np.take_along_axis(points, perm[..., None], axis=1)
    relabelled = np.take_along_axis(inverse, tours[pick], axis=1)
    return points, np.array([canonical_tour(t) for t in relabelled])


def validation_set(n: int, count: int) -> np.ndarray:
    """Fixed validation cities (count, n, 2), from the validation stream."""
    return random_points(instance_rng("validation", 2, n), count, n)


LABEL_DIR = "data/tsp-labels"
LABEL_EXACT_MAX_N = 14  # batched Held–Karp is still a few ms per instance here


def generate_label_round(round_index: int, sizes: range, per_size: int) -> dict[str, np.ndarray]:
    """One round of training labels: `per_size` instances for every n in `sizes`."""
    arrays = {}
    for n in sizes:
        points = random_points(instance_rng("train", 2, round_index, n), per_size, n)
        if n <= LABEL_EXACT_MAX_N:
            tours = held_karp_batch(points)
        else:
            tours = np.array([ortools_tour(p, time_limit_ms=30) for p in points])
        arrays[f"points_{n}"] = points.astype(np.float32)
        arrays[f"tours_{n}"] = tours.astype(np.int64)
    return arrays


def load_labels(directory: str = LABEL_DIR) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """All cached label rounds, merged: n -> (points (k, n, 2), tours (k, n))."""
    from pathlib import Path

    merged: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
    for path in sorted(Path(directory).glob("round_*.npz")):
        with np.load(path) as data:
            for key in data.files:
                if key.startswith("points_"):
                    n = int(key.split("_")[1])
                    merged.setdefault(n, []).append((data[key], data[f"tours_{n}"]))
    if not merged:
        raise FileNotFoundError(
            f"No TSP labels in {directory}; run `python -m models.tasks.tsp --rounds 10` first."
        )
    return {
        n: (np.concatenate([p for p, _ in parts]), np.concatenate([t for _, t in parts]))
        for n, parts in merged.items()
    }


def main() -> None:
    """Generate and cache training labels round by round (each round is usable at once)."""
    import argparse
    import time
    from pathlib import Path

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--per-size", type=int, default=500)
    parser.add_argument("--min-n", type=int, default=5)
    parser.add_argument("--max-n", type=int, default=20)
    parser.add_argument("--out", default=LABEL_DIR)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for r in range(args.rounds):
        path = out / f"round_{r:03d}.npz"
        if path.exists():
            continue
        start = time.time()
        arrays = generate_label_round(r, range(args.min_n, args.max_n + 1), args.per_size)
        np.savez(out / f"tmp_{r:03d}.npz", **arrays)
        (out / f"tmp_{r:03d}.npz").rename(path)  # appears whole or not at all
        print(f"round {r}: {time.time() - start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
