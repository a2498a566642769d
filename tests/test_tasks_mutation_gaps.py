"""Task code that real bugs slipped past: hull simplicity, 2-opt's local optimum, and the
translation cleaning rules. Each test here fails on a bug that the older tests let through."""

from __future__ import annotations

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
