"""pointer-board and pointer-worked-example: first figures rendered from the trained models.

Both run the real model on the server when the page renders, so the page shows a meaningful
figure before any script runs; the board's script then takes over from the same data.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from app.errors import error_sentence
from app.pointer_service import CHECKPOINTS, solve, task_models
from app.pointer_views import board_figure, result_context, worked_example_context
from app.schemas.pointer import (
    MAX_BEAM_WIDTH,
    MAX_INPUTS,
    MAX_SAMPLES,
    HullResponse,
    PointerResponse,
    PointsRequest,
    Task,
    ValuesRequest,
)
from app.services import ModelRegistry, ModelUnavailable
from app.widgets import WidgetEnv, WidgetError, register_widget

# The deep-dive's worked example (prose numbering P1..P5): hull P1 P2 P4 P5, P3 inside.
FIVE_POINTS = [[0.15, 0.20], [0.85, 0.10], [0.50, 0.45], [0.90, 0.80], [0.20, 0.85]]
FIVE_VALUES = [0.62, 0.15, 0.87, 0.40, 0.05]
TITLES = {"hull": "Convex hull", "tsp": "Travelling salesman", "sort": "Sorting"}
VARIANT_LABELS = {"softmax": "softmax (dense)", "entmax15": "1.5-entmax (sparse)"}
BOARD_KEY = re.compile(r"[a-z][a-z0-9-]{0,20}")


def run_model(registry: ModelRegistry, task: Task, request: Any) -> PointerResponse:
    try:
        return solve(registry, task, request)
    except ModelUnavailable as exc:
        raise WidgetError(
            f"The {TITLES[task].lower()} model is unavailable: {exc.reason}.",
            f"python -m models.train {exc.name}",
        ) from exc
    except ValueError as exc:
        raise WidgetError(str(exc)) from exc


def parse_request(task: Task, inputs: Any) -> PointsRequest | ValuesRequest:
    try:
        if task == "sort":
            return ValuesRequest(values=inputs)
        return PointsRequest(points=inputs)
    except ValidationError as exc:
        raise WidgetError(error_sentence(exc.errors()[0], reader=True)) from exc


@register_widget(
    "pointer-board", needs={"plotly", "js/pointer-board.js", "css/pointer.css"}, pure=True
)
def pointer_board_context(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    task = params.get("task")
    if task not in CHECKPOINTS:
        raise WidgetError("pointer-board needs `task:` hull, tsp or sort.")
    # The key names this board in the page's URL and ids; two boards of one task need `id:`.
    key = str(params.get("id", task))
    if not BOARD_KEY.fullmatch(key):
        raise WidgetError("pointer-board `id:` must be a short lowercase name, e.g. hull-2.")
    inputs = params.get("values" if task == "sort" else "points")
    inputs = inputs or (FIVE_VALUES if task == "sort" else FIVE_POINTS)
    result = run_model(env.registry, task, parse_request(task, inputs))
    variants = [v.variant for v in task_models(env.registry, task).variants if v.available]
    config = {
        "task": task,
        "key": key,
        "api": f"/api/pointer/{task}",
        "inputs": inputs,
        "variants": variants,
        "min_inputs": 2 if task == "sort" else 3,
        "max_inputs": MAX_INPUTS,
        "max_beam_width": MAX_BEAM_WIDTH,
        "max_samples": MAX_SAMPLES,
    }
    return {
        "board_id": f"pointer-board-{key}",
        "task": task,
        "title": TITLES[task],
        "config": config,
        "inputs": inputs,
        "variants": [(v, VARIANT_LABELS.get(v, v)) for v in variants],
        "figure": board_figure(inputs, result),
        **result_context(result),
    }


@register_widget("pointer-worked-example", needs={"css/pointer.css"})
def worked_example_context_provider(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    points = params.get("points") or FIVE_POINTS
    result = run_model(env.registry, "hull", parse_request("hull", points))
    assert isinstance(result, HullResponse)
    return worked_example_context(points, result)
