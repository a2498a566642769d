"""The α-entmax family figures' geometry: where each curve point, saturation dot, tick and
simplex marker lands in the SVG, checked against coordinates worked out by hand."""

from __future__ import annotations

import pytest

from app.entmax.figures import (
    MARKER,
    SIMPLEX_CORNERS,
    SimplexMarker,
    curve_figure,
    simplex_figures,
    simplex_point,
)
from models.sparse_mapping import FamilyCurve, FamilyFigures, SimplexImage, family_figures

# the plot area of the 600 × 330 frame: x from 56 to 584, y from 282 (p = −0.04) to 12 (p = 1.04)


def figures(curves: list[FamilyCurve], simplex: list[SimplexImage] | None = None) -> FamilyFigures:
    return FamilyFigures(
        t=[-2.0, 0.123, 2.0], curves=curves, simplex_scores=[], simplex=simplex or []
    )


def test_a_curve_maps_score_to_x_and_probability_to_y_rounded_to_a_tenth() -> None:
    curve = FamilyCurve(alpha=1.0, p_first=[0.0, 0.3333, 1.0], saturates_at=None)
    drawn = curve_figure(figures([curve]), ["softmax"])
    # t = −2 is the left edge, t = 2 the right, 0.123 lies 2.123/4 of the way (336.236 → 336.2);
    # p = 0 sits 0.04/1.08 of the height above the bottom, p = 1 as far below the top
    assert drawn.lines == [("softmax", "56.0,272.0 336.2,188.7 584.0,22.0")]
    assert (drawn.width, drawn.height) == (600, 330)
    assert drawn.plot == (56, 12, 584, 282)
    assert drawn.dots == []  # softmax never reaches 0 or 1


def test_each_curve_keeps_its_own_label_in_order() -> None:
    flat = FamilyCurve(alpha=1.0, p_first=[0.5, 0.5, 0.5], saturates_at=None)
    rising = FamilyCurve(alpha=1.5, p_first=[0.0, 0.5, 1.0], saturates_at=None)
    drawn = curve_figure(figures([flat, rising]), ["α = 1", "α = 1.5"])
    assert [label for label, _ in drawn.lines] == ["α = 1", "α = 1.5"]
    assert drawn.lines[0][1] == "56.0,147.0 336.2,147.0 584.0,147.0"
    assert drawn.lines[1][1] == "56.0,272.0 336.2,147.0 584.0,22.0"


def test_a_sparse_curve_gets_a_dot_where_p1_first_hits_zero_and_one() -> None:
    curves = [
        FamilyCurve(alpha=1.0, p_first=[0.1, 0.5, 0.9], saturates_at=None),
        FamilyCurve(alpha=2.0, p_first=[0.0, 0.56, 1.0], saturates_at=1.0),
        FamilyCurve(alpha=1.5, p_first=[0.0, 0.6, 1.0], saturates_at=2.0),  # at the edge: drawn
        FamilyCurve(alpha=1.25, p_first=[0.1, 0.5, 0.9], saturates_at=4.0),  # off the plot
    ]
    drawn = curve_figure(figures(curves), ["1", "2", "1.5", "1.25"])
    assert drawn.dots == [
        (1, 188.0, 272.0),  # t = −1: p₁ = 0
        (1, 452.0, 22.0),  # t = 1: p₁ = 1
        (2, 56.0, 272.0),
        (2, 584.0, 22.0),
    ]


def test_the_axes_tick_every_whole_score_with_a_true_minus_and_three_probabilities() -> None:
    curve = FamilyCurve(alpha=1.0, p_first=[0.1, 0.5, 0.9], saturates_at=None)
    drawn = curve_figure(figures([curve]), ["softmax"])
    assert [(tick.position, tick.text) for tick in drawn.x_ticks] == [
        (56.0, "−2"),
        (188.0, "−1"),
        (320.0, "0"),
        (452.0, "1"),
        (584.0, "2"),
    ]
    assert [(tick.position, tick.text) for tick in drawn.y_ticks] == [
        (272.0, "0"),
        (147.0, "0.5"),
        (22.0, "1"),
    ]


def test_the_served_curves_saturate_at_one_over_alpha_minus_one() -> None:
    served = family_figures()
    labels = [str(curve.alpha) for curve in served.curves]
    drawn = curve_figure(served, labels)
    # t runs from −3 to 3 over 528 units: α = 2 saturates at ±1, α = 4 at ±1/3, α = 1.5 at ±2;
    # α = 1.25 (at ±4) is off the plot and softmax never saturates
    x = {curve: 320.0 + 88.0 * t for curve, t in ((2, 1.0), (4, 1 / 3), (1.5, 2.0))}
    by_curve: dict[str, list[tuple[float, float]]] = {}
    for index, dot_x, dot_y in drawn.dots:
        by_curve.setdefault(labels[index], []).append((dot_x, dot_y))
    assert set(by_curve) == {"1.5", "2.0", "4.0"}
    for label, dots in by_curve.items():
        reach = x[float(label)] - 320.0
        assert dots == [
            (pytest.approx(320.0 - reach, abs=0.05), 272.0),
            (pytest.approx(320.0 + reach, abs=0.05), 22.0),
        ]


def test_a_distribution_sits_at_its_barycentre_rounded_to_a_tenth() -> None:
    top, left, right = SIMPLEX_CORNERS
    assert simplex_point([1.0, 0.0, 0.0]) == (110.0, 14.0)
    assert simplex_point([0.0, 1.0, 0.0]) == (20.0, 169.9)  # 14 + 180·√3/2 = 169.885
    assert simplex_point([0.0, 0.0, 1.0]) == (200.0, 169.9)
    assert simplex_point([0.5, 0.5, 0.0]) == (65.0, 91.9)  # the middle of the left edge
    assert simplex_point([0.0, 0.25, 0.75]) == (155.0, 169.9)
    assert simplex_point([0.1234, 0.4321, 0.4445]) == (111.1, 150.6)  # 111.116…, 150.648…
    assert top[0] == 110.0 and left[1] == right[1]


def test_a_simplex_panel_draws_the_triangle_its_corner_labels_and_one_mark_per_place() -> None:
    image = SimplexImage(
        alpha=1.5,
        p=[
            [1.0, 0.0, 0.0],  # a corner
            [0.5, 0.5, 0.0],  # an edge
            [0.2, 0.3, 0.5],  # inside
            [1.0, 0.0, 0.0],  # the same corner again: one mark
            [0.5, 0.5, 0.0],  # the same place with another support: its own mark
        ],
        support=[1, 2, 3, 1, 3],
        counts={3: 2, 2: 1, 1: 2},
    )
    (panel,) = simplex_figures(figures([], [image]), ["α = 1.5"])
    assert panel.label == "α = 1.5"
    assert panel.outline == "M110.0,14.0 L20.0,169.9 L200.0,169.9 Z"
    assert panel.corners == [(110.0, 11.0, "p₁"), (16.0, 183.9, "p₂"), (204.0, 183.9, "p₃")]
    assert panel.markers == [
        SimplexMarker(3, 128.0, 138.7, MARKER[3]),  # inside first, so the rarer marks stay on top
        SimplexMarker(3, 65.0, 91.9, MARKER[3]),
        SimplexMarker(2, 65.0, 91.9, MARKER[2]),
        SimplexMarker(1, 110.0, 14.0, MARKER[1]),
    ]
    assert MARKER[1] > MARKER[2] > MARKER[3]


def test_every_alpha_gets_its_own_panel_in_order() -> None:
    images = [
        SimplexImage(alpha=a, p=[[1 / 3, 1 / 3, 1 / 3]], support=[3], counts={3: 1})
        for a in (1.0, 2.0)
    ]
    panels = simplex_figures(figures([], images), ["softmax", "sparsemax"])
    assert [panel.label for panel in panels] == ["softmax", "sparsemax"]
    assert all(panel.markers == [SimplexMarker(3, 110.0, 117.9, MARKER[3])] for panel in panels)


def test_the_served_simplices_put_sparser_alphas_marks_on_edges_and_corners() -> None:
    served = family_figures()
    panels = simplex_figures(served, [str(image.alpha) for image in served.simplex])
    supports = {panel.label: {m.support for m in panel.markers} for panel in panels}
    assert supports["1.0"] == {3}  # softmax: every distribution inside the triangle
    assert supports["2.0"] == {1, 2, 3}
    for panel in panels:
        kinds = [m.support for m in panel.markers]
        assert kinds == sorted(kinds, reverse=True)
