"""α-entmax as plain numbers, for callers that hold no tensors (the web layer).

`run(scores, alpha)` maps one score vector and returns the distribution with its threshold;
`family_figures()` computes the two figures that introduce the family (two-class curves and a
three-class simplex per α). Both run in float64, which is exact enough for the ≤ 512 scores the
API accepts and cheap at that size. No checkpoint is involved: α-entmax is a fixed mapping.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from models.entmax import entmax, entmax_with_tau

FAMILY_ALPHAS = (1.0, 1.25, 1.5, 2.0, 4.0)
CURVE_T_RANGE = (-3.0, 3.0)
CURVE_POINTS = 241
SIMPLEX_SCORE_RANGE = (-3.0, 3.0)
SIMPLEX_GRID_SIDE = 21
# Enough digits for a plot; keeps the JSON data block in the page small.
PLOT_DIGITS = 4


@dataclass(frozen=True)
class Mapped:
    probabilities: list[float]  # entmax_α(scores); exactly 0 outside the support
    support_size: int
    tau: float  # threshold: p_i = [(α − 1)·score_i − τ]_+^(1/(α − 1)); log Σ exp at α = 1
    score_threshold: float | None  # τ / (α − 1), the score a support member exceeds; None at 1


def run(scores: Sequence[float], alpha: float) -> Mapped:
    """entmax_α(scores) with its threshold."""
    with torch.inference_mode():
        z = torch.tensor(scores, dtype=torch.float64)  # (n,)
        probabilities, tau = entmax_with_tau(z, alpha, dim=-1)  # (n,), (1,)
        support_size = int((probabilities > 0).sum())
    tau_value = float(tau.item())
    return Mapped(
        probabilities=probabilities.tolist(),
        support_size=support_size,
        tau=tau_value,
        score_threshold=None if alpha == 1 else tau_value / (alpha - 1),
    )


@dataclass(frozen=True)
class FamilyCurve:
    alpha: float
    p_first: list[float]  # entmax_α([t, 0])₁ at each t
    saturates_at: float | None  # t from which p₁ = 1 exactly: 1/(α − 1); None for softmax


@dataclass(frozen=True)
class SimplexImage:
    alpha: float
    p: list[list[float]]  # [p₁, p₂, p₃] per score vector
    support: list[int]  # nonzero coordinates per score vector: 3 inside, 2 edge, 1 corner
    counts: dict[int, int]  # support size -> how many score vectors have it


@dataclass(frozen=True)
class FamilyFigures:
    t: list[float]
    curves: list[FamilyCurve]
    simplex_scores: list[list[float]]  # the grid [z₁, z₂, 0] every panel maps
    simplex: list[SimplexImage]


def family_figures() -> FamilyFigures:
    """The two-class curves and the three-class simplices, rounded to PLOT_DIGITS."""
    with torch.inference_mode():
        t = torch.linspace(*CURVE_T_RANGE, CURVE_POINTS, dtype=torch.float64)  # (points,)
        two_class = torch.stack([t, torch.zeros_like(t)], dim=-1)  # (points, 2)
        curves = [
            FamilyCurve(
                alpha=alpha,
                p_first=_rounded(entmax(two_class, alpha, dim=-1)[:, 0]),
                saturates_at=None if alpha == 1 else 1 / (alpha - 1),
            )
            for alpha in FAMILY_ALPHAS
        ]

        # entmax is shift invariant, so fixing z₃ = 0 loses no generality.
        axis = torch.linspace(*SIMPLEX_SCORE_RANGE, SIMPLEX_GRID_SIDE, dtype=torch.float64)
        z1, z2 = torch.meshgrid(axis, axis, indexing="ij")
        grid = torch.stack([z1, z2, torch.zeros_like(z1)], dim=-1).reshape(-1, 3)  # (side², 3)
        simplex = []
        for alpha in FAMILY_ALPHAS:
            p = entmax(grid, alpha, dim=-1)  # (side², 3)
            support = (p > 0).sum(dim=-1)  # (side²,)
            simplex.append(
                SimplexImage(
                    alpha=alpha,
                    p=[_rounded(row) for row in p],
                    support=support.tolist(),
                    counts={k: int((support == k).sum()) for k in (3, 2, 1)},
                )
            )
    return FamilyFigures(
        t=_rounded(t),
        curves=curves,
        simplex_scores=[_rounded(row) for row in grid],
        simplex=simplex,
    )


def _rounded(values: torch.Tensor) -> list[float]:
    return [round(v, PLOT_DIGITS) for v in values.tolist()]
