"""The α-entmax family figures as SVG geometry, drawn on the server (no script, no plotting
library): the two-class curves and one three-class simplex per α. Templates only print what
this module prepares (templates/partials/widgets/entmax-family-figures.html).

Coordinates are SVG user units; colours and dashes come from CSS classes, so dark mode and
the page's visual language apply.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from models.sparse_mapping import FamilyFigures

# the curves: a 600 × 330 frame with room for the axes' labels
CURVE_W, CURVE_H = 600, 330
CURVE_LEFT, CURVE_RIGHT, CURVE_TOP, CURVE_BOTTOM = 56, 16, 12, 48
P_RANGE = (-0.04, 1.04)
P_TICKS = (0.0, 0.5, 1.0)

# one simplex: an equilateral triangle, p₁ at the top, p₂ bottom left, p₃ bottom right
SIMPLEX_W, SIMPLEX_H = 220, 206
SIMPLEX_SIDE = 180
SIMPLEX_CORNERS = (
    (SIMPLEX_W / 2, 14.0),
    (SIMPLEX_W / 2 - SIMPLEX_SIDE / 2, 14.0 + SIMPLEX_SIDE * math.sqrt(3) / 2),
    (SIMPLEX_W / 2 + SIMPLEX_SIDE / 2, 14.0 + SIMPLEX_SIDE * math.sqrt(3) / 2),
)
MARKER = {3: 2.2, 2: 3.0, 1: 4.2}  # half-size by support: the rarer, the larger


@dataclass(frozen=True)
class Tick:
    position: float
    text: str


@dataclass(frozen=True)
class CurveFigure:
    width: int
    height: int
    plot: tuple[float, float, float, float]  # left, top, right, bottom
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    lines: list[tuple[str, str]]  # (label, "x,y x,y …")
    dots: list[tuple[int, float, float]]  # (curve index, x, y): where p₁ first hits 0 or 1


@dataclass(frozen=True)
class SimplexMarker:
    support: int  # 3 inside (a circle), 2 on an edge (a diamond), 1 at a corner (a square)
    x: float
    y: float
    size: float  # half the marker's width


@dataclass(frozen=True)
class SimplexFigure:
    label: str
    outline: str
    corners: list[tuple[float, float, str]]  # label positions of p₁, p₂, p₃
    markers: list[SimplexMarker]


def _scale(value: float, low: float, high: float, start: float, end: float) -> float:
    return round(start + (value - low) / (high - low) * (end - start), 1)


def curve_figure(figures: FamilyFigures, labels: Sequence[str]) -> CurveFigure:
    left, top = CURVE_LEFT, CURVE_TOP
    right, bottom = CURVE_W - CURVE_RIGHT, CURVE_H - CURVE_BOTTOM
    t_low, t_high = figures.t[0], figures.t[-1]

    def x(t: float) -> float:
        return _scale(t, t_low, t_high, left, right)

    def y(p: float) -> float:
        return _scale(p, *P_RANGE, bottom, top)

    lines = [
        (label, " ".join(f"{x(t)},{y(p)}" for t, p in zip(figures.t, curve.p_first, strict=True)))
        for label, curve in zip(labels, figures.curves, strict=True)
    ]
    dots = [
        (i, x(sign * curve.saturates_at), y(1.0 if sign > 0 else 0.0))
        for i, curve in enumerate(figures.curves)
        if curve.saturates_at is not None and curve.saturates_at <= t_high
        for sign in (-1, 1)
    ]
    x_ticks = [Tick(x(t), f"{t:g}".replace("-", "−")) for t in range(int(t_low), int(t_high) + 1)]
    y_ticks = [Tick(y(p), f"{p:g}") for p in P_TICKS]
    return CurveFigure(CURVE_W, CURVE_H, (left, top, right, bottom), x_ticks, y_ticks, lines, dots)


def simplex_point(p: Sequence[float]) -> tuple[float, float]:
    """A distribution over three classes -> its place in the triangle (barycentric)."""
    x = sum(weight * corner[0] for weight, corner in zip(p, SIMPLEX_CORNERS, strict=True))
    y = sum(weight * corner[1] for weight, corner in zip(p, SIMPLEX_CORNERS, strict=True))
    return round(x, 1), round(y, 1)


def simplex_figures(figures: FamilyFigures, labels: Sequence[str]) -> list[SimplexFigure]:
    (ax, ay), (bx, by), (cx, cy) = SIMPLEX_CORNERS
    outline = f"M{ax},{ay} L{bx:.1f},{by:.1f} L{cx:.1f},{cy:.1f} Z"
    corners = [
        (ax, ay - 3, "p₁"),
        (bx - 4, round(by + 14, 1), "p₂"),
        (cx + 4, round(cy + 14, 1), "p₃"),
    ]
    panels = []
    for label, image in zip(labels, figures.simplex, strict=True):
        markers = {}
        for p, support in zip(image.p, image.support, strict=True):
            x, y = simplex_point(p)
            marker = SimplexMarker(support, x, y, MARKER[support])
            markers.setdefault((x, y, support), marker)  # one mark where several coincide
        # draw the interior first, then edges, then corners, so the rare marks stay on top
        ordered = sorted(markers.values(), key=lambda m: -m.support)
        panels.append(SimplexFigure(label, outline, corners, ordered))
    return panels
