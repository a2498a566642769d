"""routing-attention and routing-reinforce: the attention model's figures, drawn on the server
from its answer for the state in the page address (keys `attn-…` and `rl-…`, validated by the
figure's request model), so the page shows them before any script runs. htmx asks
GET /api/routing/{attention,reinforce} for each new state; static/js/routing-attention.js
only redraws the attention lines for the city under the pointer or the keyboard focus."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from app.errors import error_sentence
from app.registry import ModelUnavailable
from app.routing import service
from app.routing.requests import (
    HEADS,
    LAYERS,
    MAX_ROLLOUTS,
    AttentionAnswer,
    AttentionFigure,
    ReinforceAnswer,
    ReinforceFigure,
)
from app.widgets import WidgetEnv, WidgetError, register_widget
from models.errors import InvalidInput

ATTENTION, REINFORCE = "attn", "rl"  # the figures' keys in the page address
EXAMPLE = [  # 20 cities, the model's training size: some sampled tours beat the greedy one
    [0.13, 0.26],
    [0.77, 0.57],
    [0.13, 0.44],
    [0.48, 0.19],
    [0.71, 0.15],
    [0.40, 0.52],
    [0.44, 0.58],
    [0.71, 0.91],
    [0.31, 0.63],
    [0.68, 0.31],
    [0.05, 0.93],
    [0.32, 0.33],
    [0.85, 0.58],
    [0.47, 0.75],
    [0.08, 0.69],
    [0.39, 0.13],
    [0.64, 0.89],
    [0.24, 0.62],
    [0.32, 0.72],
    [0.70, 0.25],
]
SIZE = 400  # the SVG's side, in its own units
MARGIN = 24


def xy(point: tuple[float, float]) -> tuple[float, float]:
    """A city's place in the SVG (y up, as on the TSP board)."""
    scale = SIZE - 2 * MARGIN
    return round(MARGIN + point[0] * scale, 1), round(SIZE - MARGIN - point[1] * scale, 1)


def cities(points: list[tuple[float, float]]) -> list[dict[str, Any]]:
    return [{"number": i + 1, "x": xy(p)[0], "y": xy(p)[1]} for i, p in enumerate(points)]


def attention_view(figure: AttentionFigure, answer: AttentionAnswer) -> dict[str, Any]:
    drawn = cities(figure.points)
    row = answer.weights[figure.city - 1]
    strongest = sorted(range(len(row)), key=lambda j: -row[j])[:3]
    return {
        "figure_id": "routing-attention",
        "figure": figure,
        "answer": answer,
        "cities": drawn,
        "focus": drawn[figure.city - 1],
        "lines": [
            {"x": c["x"], "y": c["y"], "width": round(0.5 + 12 * w, 2), "weight": w}
            for c, w in zip(drawn, row, strict=True)
        ],
        "strongest": [(j + 1, row[j]) for j in strongest],
        "layers": range(1, LAYERS + 1),
        "heads": range(1, HEADS + 1),
        "points_text": "".join(f"{x:g}, {y:g}\n" for x, y in figure.points),
    }


def path(points: list[tuple[float, float]], order: list[int]) -> str:
    corners = [xy(points[i]) for i in order]
    return "M" + " L".join(f"{x},{y}" for x, y in corners) + " Z"


def reinforce_view(figure: ReinforceFigure, answer: ReinforceAnswer) -> dict[str, Any]:
    spread = max(abs(s.advantage) for s in answer.samples) or 1.0
    ranked = sorted(enumerate(answer.samples, 1), key=lambda pair: pair[1].length)
    best = ranked[0][1]
    return {
        "figure_id": "routing-reinforce",
        "figure": figure,
        "answer": answer,
        "cities": cities(figure.points),
        "baseline_path": path(figure.points, answer.baseline.order),
        "best_path": path(figure.points, best.order),
        "best": best,
        "rows": [
            {
                "number": number,
                "tour": tour,
                "share": round(50 * abs(tour.advantage) / spread, 2),  # of the bar's half width
                "direction": "up"
                if tour.advantage < 0
                else "down"
                if tour.advantage > 0
                else "none",
            }
            for number, tour in ranked
        ],
        "improved": sum(tour.advantage < 0 for tour in answer.samples),
        "max_samples": MAX_ROLLOUTS,
        "points_text": "".join(f"{x:g}, {y:g}\n" for x, y in figure.points),
    }


def from_address(
    schema: type[AttentionFigure] | type[ReinforceFigure], prefix: str, address: Mapping[str, str]
) -> tuple[Any, str | None]:
    """The figure's state in the page address (its example when there is none), and why an
    address that cannot be drawn was not."""
    fields = {
        name.removeprefix(f"{prefix}-"): value
        for name, value in address.items()
        if name.startswith(f"{prefix}-")
    }
    if fields:
        try:
            return schema.model_validate({"points": EXAMPLE} | fields), None
        except ValidationError as exc:
            problem = error_sentence(exc.errors()[0], reader=True)
            return schema(points=EXAMPLE), f"{problem} The figure shows its example instead."
    return schema(points=EXAMPLE), None


def url_keys(schema: type[AttentionFigure] | type[ReinforceFigure], prefix: str) -> set[str]:
    return {f"{prefix}-{name}" for name in schema.model_fields}


def page_answer(env: WidgetEnv, compute: Any, figure: Any) -> Any:
    try:
        return compute(env.registry, figure)
    except ModelUnavailable as exc:
        raise WidgetError(
            exc.sentence, f"python -m models.attention_routing_train --export {exc.name}"
        ) from exc


@register_widget(
    "routing-attention",
    needs={"htmx", "js/hx-widgets.js", "js/routing-attention.js", "css/routing.css"},
    pure=True,
    url_keys=url_keys(AttentionFigure, ATTENTION),
)
def routing_attention_context(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    figure, problem = from_address(AttentionFigure, ATTENTION, params.get("url_state") or {})
    try:
        answer = page_answer(env, service.attention, figure)
    except InvalidInput as exc:
        figure, problem = (
            AttentionFigure(points=EXAMPLE),
            f"{exc} The figure shows its example instead.",
        )
        answer = page_answer(env, service.attention, figure)
    return attention_view(figure, answer) | {"problem": problem}


@register_widget(
    "routing-reinforce",
    needs={"htmx", "js/hx-widgets.js", "js/routing-attention.js", "css/routing.css"},
    pure=True,
    url_keys=url_keys(ReinforceFigure, REINFORCE),
)
def routing_reinforce_context(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    figure, problem = from_address(ReinforceFigure, REINFORCE, params.get("url_state") or {})

    def compute(registry: Any, state: ReinforceFigure) -> ReinforceAnswer:
        return service.reinforce(registry, state, None)

    try:
        answer = page_answer(env, compute, figure)
    except InvalidInput as exc:
        figure, problem = (
            ReinforceFigure(points=EXAMPLE),
            f"{exc} The figure shows its example instead.",
        )
        answer = page_answer(env, compute, figure)
    return reinforce_view(figure, answer) | {"problem": problem}
