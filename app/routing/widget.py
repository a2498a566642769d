"""routing-attention and routing-reinforce: the attention model's figures, drawn on the server
from its answer for the state in the page address (keys `attn-…` and `rl-…`, validated by the
figure's request model and priced before any work by the page's plan, app.widgets: a state
too heavy for a page shows the example with a sentence and a button, the form keeping the
state), so the page shows them before any script runs. htmx asks
GET /api/routing/{attention,reinforce} for each new state; static/js/routing-attention.js
only redraws the attention lines for the city under the pointer or the keyboard focus."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from app import widgets
from app.answer_cache import ANSWERS
from app.errors import error_sentence
from app.pointer.url_state import inputs_text
from app.registry import ModelUnavailable
from app.routing import service
from app.routing.export import routing_takeaway
from app.routing.requests import (
    HEADS,
    LAYERS,
    MAX_ROLLOUTS,
    AttentionAnswer,
    AttentionFigure,
    ReinforceAnswer,
    ReinforceFigure,
)
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
        "points_text": inputs_text(figure.points),
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
        "points_text": inputs_text(figure.points),
    }


Schema = type[AttentionFigure] | type[ReinforceFigure]
View = Callable[[Any, Any], dict[str, Any]]


def from_address(schema: Schema, prefix: str, address: Mapping[str, str]) -> widgets.AddressState:
    """The figure's state in the page address, validated by its request model over the
    example's cities and priced (app.widgets plans the page with it), or why an address that
    cannot be drawn was not."""
    fields = {
        name.removeprefix(f"{prefix}-"): value
        for name, value in address.items()
        if name.startswith(f"{prefix}-")
    }
    if not fields:
        return widgets.AddressState()
    try:
        figure = schema.model_validate({"points": EXAMPLE} | fields)
    except ValidationError as exc:
        problem = error_sentence(exc.errors()[0], reader=True)
        return widgets.AddressState(problem=f"{problem} The figure shows its example instead.")
    cities = f"{len(figure.points)} cities"
    if isinstance(figure, ReinforceFigure):
        asked, run = (
            f"{figure.samples} sampled tours over {cities}",
            f"Sample {figure.samples} tours",
        )
    else:
        asked, run = f"the encoder's attention over {cities}", "Draw the attention"
    return widgets.AddressState(state=figure, tokens=figure.cost(), asked=asked, run=run)


def address_reader(schema: Schema, prefix: str) -> widgets.AddressReader:
    def read(params: Mapping[str, Any], env: widgets.WidgetEnv) -> widgets.AddressState:
        return from_address(schema, prefix, params.get("url_state") or {})

    return read


def url_keys(schema: Schema, prefix: str) -> set[str]:
    return {f"{prefix}-{name}" for name in schema.model_fields}


def page_answer(env: widgets.WidgetEnv, compute: Any, figure: Any) -> Any:
    try:
        return compute(env.registry, figure)
    except ModelUnavailable as exc:
        raise widgets.WidgetError(
            exc.sentence, f"python -m models.attention_routing_train --export {exc.name}"
        ) from exc


def page_figure(
    params: Mapping[str, Any], env: widgets.WidgetEnv, schema: Schema, compute: Any, view: View
) -> dict[str, Any]:
    """What the page render runs for the figure (params["page_figure"], app.widgets): the
    address's state, or the example (its answer kept from an earlier render, ANSWERS) with
    the sentence that says why; the form keeps a state the page did not run (`controls`), so
    the sentence's button asks the API for it."""
    planned: widgets.PageFigure = params.get("page_figure") or widgets.PageFigure()
    problem = planned.address.problem
    if planned.drawn is not None:
        try:
            figure = planned.drawn
            drawn = taken_away(env, view(figure, page_answer(env, compute(env.check), figure)))
            return controls(drawn, figure)
        except InvalidInput as exc:
            problem = f"{exc} The figure shows its example instead."
    example = schema(points=EXAMPLE)
    answer = ANSWERS.get(env.registry, example, lambda: page_answer(env, compute(None), example))
    drawn = taken_away(env, view(example, answer)) | {"problem": problem or planned.note}
    if planned.note and planned.address.state is not None:
        return controls(drawn, planned.address.state) | {"page_run": planned.run}
    return controls(drawn, example)


def taken_away(env: widgets.WidgetEnv, view: dict[str, Any]) -> dict[str, Any]:
    """The view with its take-away block (app/figure_export.py) for the page it is on."""
    made = routing_takeaway(env.page, view["figure"], view["answer"], view["figure_id"])
    return view | {"takeaway": made}


def controls(view: dict[str, Any], state: Any) -> dict[str, Any]:
    """The form's values: `state`'s layer, head, city or samples, seed, and its cities."""
    points = "".join(f"{x:g}, {y:g}\n" for x, y in state.points)
    return view | {"controls": state, "controls_points": points}


def attention_compute(check: Any) -> Callable[[Any, AttentionFigure], AttentionAnswer]:
    def compute(registry: Any, figure: AttentionFigure) -> AttentionAnswer:
        if check is not None:  # one forward pass of the encoder: checked before it starts
            check()
        return service.attention(registry.get, figure)

    return compute


def reinforce_compute(check: Any) -> Callable[[Any, ReinforceFigure], ReinforceAnswer]:
    def compute(registry: Any, figure: ReinforceFigure) -> ReinforceAnswer:
        return service.reinforce(registry.get, figure, check)

    return compute


def register_figure(name: str, schema: Any, prefix: str, compute: Any, view: Any) -> None:
    """Widget `name`: the figure drawn for its state in the page address (keys `prefix-…`)."""

    def context(params: Mapping[str, Any], env: widgets.WidgetEnv) -> dict[str, Any]:
        return page_figure(params, env, schema, compute, view)

    widgets.register_widget(
        name,
        needs={"htmx", "js/hx-widgets.js", "js/routing-attention.js", "css/routing.css"},
        pure=True,
        url_keys=url_keys(schema, prefix),
        address=address_reader(schema, prefix),
    )(context)


register_figure("routing-attention", AttentionFigure, ATTENTION, attention_compute, attention_view)
register_figure("routing-reinforce", ReinforceFigure, REINFORCE, reinforce_compute, reinforce_view)
