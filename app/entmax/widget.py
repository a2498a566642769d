"""entmax-playground and entmax-family-figures: their server-rendered defaults and figures.

The playground's state is its request, app.entmax.requests.PlaygroundRequest: the form's
fields, the query of GET /api/entmax/figure and, as `entmax-text`, `entmax-scores` and
`entmax-alpha`, the page address, which the first render validates with the same model (the
default sentence at α = 1.5 without one; `playground_address` reads it for the page's plan,
app.widgets). The family figures are computed here with
models.entmax and drawn as SVG on the server (app/entmax/figures.py), so they need no script.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from app.entmax.export import playground_takeaway
from app.entmax.figures import SIMPLEX_H, SIMPLEX_W, curve_figure, simplex_figures
from app.entmax.requests import EXAMPLES, PLAYGROUND_PREFIX, SLIDER, PlaygroundRequest
from app.entmax.service import compute_entmax, family_figures
from app.errors import error_sentence
from app.figure_export import FigurePage
from app.widgets import AddressState, PageFigure, WidgetEnv, register_widget

__all__ = ["EXAMPLES", "playground_view"]

# The score bars span ±SCORE_SPAN when dragged; typed scores may go beyond it.
SCORE_SPAN = 4.0


CURVE_LABELS = {1.0: "α = 1 (softmax)", 2.0: "α = 2 (sparsemax)"}
SUPPORT_NAMES = {3: "inside", 2: "on an edge", 1: "at a corner"}


def alpha_label(alpha: float) -> str:
    return CURVE_LABELS.get(alpha, f"α = {alpha:g}")


def score_percent(score: float) -> float:
    """Where a score sits on its bar, 0-100 (the bar spans ±SCORE_SPAN, centre 0)."""
    clipped = max(-SCORE_SPAN, min(SCORE_SPAN, score)) if math.isfinite(score) else 0.0
    return round(50 + clipped / SCORE_SPAN * 50, 2)


def score_bar(score: float, p: float) -> dict[str, Any]:
    return {
        "value": f"{score:.12g}",
        "left": min(50.0, score_percent(score)),
        "width": round(abs(score_percent(score) - 50), 2),
        "clipped": abs(score) > SCORE_SPAN,
        "out": p == 0,
    }


# The playground's state costs a page what it costs the API beyond the door's one token
# (/api/entmax and its figure take no other): nothing. α-entmax of the most scores it takes
# (512), with their bars, is ~10 ms of CPU (bench/prices.py), no model runs, so the page
# draws it whatever the compute gate holds.
PLAYGROUND_TOKENS = 0


def playground_address(params: Mapping[str, Any], env: WidgetEnv) -> AddressState:
    """The playground's state in the page address, validated by its request model and priced
    (app.widgets plans the page with it)."""
    address = params.get("url_state") or {}
    if not address:
        return AddressState()
    fields = {key.removeprefix(PLAYGROUND_PREFIX): value for key, value in address.items()}
    try:
        figure = PlaygroundRequest.model_validate(fields)
    except ValidationError as exc:
        return AddressState(problem=error_sentence(exc.errors()[0], reader=True))
    return AddressState(
        state=figure, tokens=PLAYGROUND_TOKENS, asked=f"α-entmax of {len(figure.scores)} scores"
    )


def playground_view(
    figure: PlaygroundRequest, problem: str | None = None, page: FigurePage | None = None
) -> dict[str, Any]:
    """What the playground's templates draw for one figure request: the page's first render
    and every htmx answer of GET /api/entmax/figure (`page`: the page it is on, for its
    take-away block)."""
    result = compute_entmax(figure)
    threshold = result.score_threshold
    cut = threshold is not None and abs(threshold) <= SCORE_SPAN
    return {
        "examples": EXAMPLES,
        "example": figure.matching_example(),
        "text": figure.text,
        "tokens": figure.text.split(),
        "scores": figure.scores,
        "score_bars": [
            score_bar(score, p)
            for score, p in zip(figure.scores, result.probabilities, strict=True)
        ],
        "cut": score_percent(threshold) if cut and threshold is not None else None,
        "alpha": figure.alpha,
        "result": result,
        "labels": figure.text.split(),
        "slider": SLIDER,
        "url_problem": problem,
        "config": {"scoreSpan": SCORE_SPAN},
        "figure": figure,
        "takeaway": playground_takeaway(page, figure),
    }


@register_widget(
    "entmax-playground",
    needs={"htmx", "js/hx-widgets.js", "js/entmax-playground.js", "css/entmax.css"},
    pure=True,
    url_keys=[f"{PLAYGROUND_PREFIX}{name}" for name in ("text", "scores", "alpha")],
    address=playground_address,
)
def entmax_playground_context(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    """The default example at α = 1.5, or the figure a shared address describes (the default,
    with the sentence that says what was wrong, when it does not validate), as the page's plan
    has it (params["page_figure"], app.widgets)."""
    planned: PageFigure = params.get("page_figure") or PageFigure()
    if planned.drawn is not None:
        return playground_view(planned.drawn, page=env.page)
    problem = planned.address.problem or planned.note
    return playground_view(PlaygroundRequest(), problem, env.page)


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
