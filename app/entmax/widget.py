"""entmax-playground and entmax-family-figures: their server-rendered defaults and figures.

The playground's first render is a real result (the default sentence at α = 1.5); the family
figures are computed here with models.entmax and drawn as SVG on the server
(app/entmax/figures.py), so they need no script at all.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from app.entmax.figures import SIMPLEX_H, SIMPLEX_W, curve_figure, simplex_figures
from app.entmax.requests import MAX_LABEL_CHARS, EntmaxRequest
from app.entmax.service import compute_entmax, family_figures
from app.errors import error_sentence
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


URL_KEYS = {"text": "entmax-text", "scores": "entmax-scores", "alpha": "entmax-alpha"}


@dataclass(frozen=True)
class PlaygroundState:
    text: str
    scores: list[float]
    alpha: float
    example: Example | None  # None: the reader's own sentence


def state_from_url(url_state: Mapping[str, str]) -> PlaygroundState:
    """What static/js/entmax-playground.js would show for this address: the sentence, one
    score per word (missing ones 0), α clamped to the slider. ValueError for a score that is
    not a number."""
    example = EXAMPLES[0]
    text, scores = example.text, list(example.scores)
    if URL_KEYS["text"] in url_state:
        text = url_state[URL_KEYS["text"]]
        raw = url_state.get(URL_KEYS["scores"], "")
        given = [] if raw == "" else [_score(part) for part in raw.split(",")]
        scores = [given[i] if i < len(given) else 0.0 for i in range(len(text.split()))]
    alpha = DEFAULT_ALPHA
    try:
        alpha = float(url_state.get(URL_KEYS["alpha"], DEFAULT_ALPHA))
    except ValueError:
        pass
    if not math.isfinite(alpha):
        alpha = DEFAULT_ALPHA
    alpha = min(max(alpha, SLIDER["min"]), SLIDER["max"])
    return PlaygroundState(text, scores, alpha, example_matching(text, scores))


def _score(part: str) -> float:
    try:
        return float(part) if part.strip() else 0.0
    except ValueError:
        raise ValueError(
            f"The shared address has a score that is not a number: “{part}”."
        ) from None


def example_matching(text: str, scores: list[float]) -> Example | None:
    return next((e for e in EXAMPLES if (e.text, e.scores) == (text, scores)), None)


def score_percent(score: float) -> float:
    """Where a score sits on its bar, 0-100 (the bar spans ±SCORE_SPAN, centre 0)."""
    clipped = max(-SCORE_SPAN, min(SCORE_SPAN, score)) if math.isfinite(score) else 0.0
    return round(50 + clipped / SCORE_SPAN * 50, 2)


def playground_view(state: PlaygroundState, problem: str | None = None) -> dict[str, Any]:
    """What the playground's templates draw for one state: the page's first render and every
    htmx answer of GET /api/entmax/figure."""
    tokens = state.text.split()
    labels = [token[:MAX_LABEL_CHARS] for token in tokens]
    request = EntmaxRequest(scores=state.scores, alpha=state.alpha, labels=labels)
    result = compute_entmax(request)
    threshold = result.score_threshold
    cut = threshold is not None and abs(threshold) <= SCORE_SPAN
    return {
        "examples": EXAMPLES,
        "example": state.example,
        "text": state.text,
        "tokens": tokens,
        "scores": state.scores,
        "score_bars": [
            {
                "value": f"{score:.12g}",
                "left": min(50.0, score_percent(score)),
                "width": round(abs(score_percent(score) - 50), 2),
                "clipped": abs(score) > SCORE_SPAN,
                "out": p == 0,
            }
            for score, p in zip(state.scores, result.probabilities, strict=True)
        ],
        "cut": score_percent(threshold) if cut and threshold is not None else None,
        "alpha": state.alpha,
        "result": result,
        "labels": tokens,
        "slider": SLIDER,
        "url_problem": problem,
        "config": {"scoreSpan": SCORE_SPAN},
    }


def url_state_of(state: PlaygroundState) -> dict[str, str | None]:
    """The page-address keys that reproduce `state` (what the script used to write)."""
    return {
        URL_KEYS["text"]: state.text,
        URL_KEYS["scores"]: ",".join(f"{score:.12g}" for score in state.scores),
        URL_KEYS["alpha"]: f"{state.alpha:g}",
    }


@register_widget(
    "entmax-playground",
    needs={"htmx", "js/hx-widgets.js", "js/entmax-playground.js", "css/entmax.css"},
    pure=True,
    url_keys=URL_KEYS.values(),
)
def entmax_playground_context(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    """The default example at α = 1.5, or the figure a shared address describes."""
    problem = None
    try:
        state = state_from_url(params.get("url_state") or {})
        return playground_view(state)
    except ValidationError as exc:
        problem = error_sentence(exc.errors()[0], reader=True)
    except ValueError as exc:
        problem = str(exc)
    # the default figure, with the sentence that says what was wrong
    default = PlaygroundState(
        EXAMPLES[0].text, list(EXAMPLES[0].scores), DEFAULT_ALPHA, EXAMPLES[0]
    )
    return playground_view(default, problem)


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
