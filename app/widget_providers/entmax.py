"""entmax-playground and entmax-family-figures: their server-rendered defaults and figures.

The playground's first render is a real result (the default sentence at α = 1.5); the family
figures are computed here with models.entmax and drawn as SVG on the server
(app/entmax_figures.py), so they need no script at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from app.entmax_figures import SIMPLEX_H, SIMPLEX_W, curve_figure, simplex_figures
from app.entmax_service import compute_entmax, family_figures
from app.schemas.entmax import EntmaxRequest
from app.widgets import WidgetEnv, register_widget

DEFAULT_ALPHA = 1.5
SLIDER = {"min": 1.0, "max": 4.0, "step": 0.01}
# The score bars span ±SCORE_SPAN when dragged; typed scores may go beyond it.
SCORE_SPAN = 4.0


@dataclass(frozen=True)
class Example:
    key: str
    title: str
    text: str
    scores: list[float]


EXAMPLES = (
    Example(
        "attention",
        "Attention: the decoder is about to write “tapis”",
        "the cat sat on the mat .",
        [0.2, 1.4, 0.5, 0.8, 0.3, 2.0, -0.5],
    ),
    Example(
        "next-word",
        "Output: the word after “I drank a cup of”",
        "tea coffee water milk soup ink sand",
        [3.0, 2.8, 2.2, 1.9, 1.2, -0.5, -1.5],
    ),
    Example(
        "ties",
        "Ties: equal scores keep equal shares at every α",
        "north south east west",
        [1.0, 1.0, 1.0, 1.0],
    ),
)

CURVE_LABELS = {1.0: "α = 1 (softmax)", 2.0: "α = 2 (sparsemax)"}
SUPPORT_NAMES = {3: "inside", 2: "on an edge", 1: "at a corner"}


def alpha_label(alpha: float) -> str:
    return CURVE_LABELS.get(alpha, f"α = {alpha:g}")


@register_widget(
    "entmax-playground", needs={"js/entmax-playground.js", "css/entmax.css"}, pure=True
)
def entmax_playground_context(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    example = EXAMPLES[0]
    tokens = example.text.split()
    request = EntmaxRequest(scores=example.scores, alpha=DEFAULT_ALPHA, labels=tokens)
    return {
        "examples": EXAMPLES,
        "example": example,
        "tokens": tokens,
        "scores": example.scores,
        "alpha": DEFAULT_ALPHA,
        "result": compute_entmax(request),
        "labels": tokens,
        "slider": SLIDER,
        "config": {
            "examples": [asdict(e) for e in EXAMPLES],
            "default": example.key,
            "alpha": DEFAULT_ALPHA,
            "scoreSpan": SCORE_SPAN,
            "endpoint": "/api/entmax",
        },
    }


@register_widget("entmax-family-figures", needs={"css/entmax.css"}, pure=True)
def entmax_family_context(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    """Both figures drawn on the server as SVG: they read the same with or without script."""
    figures = family_figures()
    total = len(figures.simplex_scores)
    labels = [alpha_label(image.alpha) for image in figures.simplex]
    counts_rows = [
        [alpha_label(image.alpha)]
        + [f"{image.counts[k]} ({100 * image.counts[k] / total:.0f}%)" for k in (3, 2, 1)]
        for image in figures.simplex
    ]
    return {
        "curve": curve_figure(figures, [alpha_label(c.alpha) for c in figures.curves]),
        "simplex": simplex_figures(figures, labels),
        "simplex_size": (SIMPLEX_W, SIMPLEX_H),
        "panels": labels,
        "counts_columns": ["α"] + [f"{name} ({k} nonzero)" for k, name in SUPPORT_NAMES.items()],
        "counts_rows": counts_rows,
        "grid_size": total,
    }
