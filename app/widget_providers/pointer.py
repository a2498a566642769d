"""pointer-board and pointer-worked-example: first figures rendered from the trained models.

Both run the real model on the server when the page renders, so the page shows a meaningful
figure before any script runs; the board's script then takes over from the same data. A board
draws the state its script keeps in the page address (app/pointer_url_state.py), so a shared
link shows the shared figure without script too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pydantic import ValidationError

from app.errors import error_sentence
from app.pointer_service import solve, task_models
from app.pointer_url_state import BoardState, board_state, url_keys
from app.pointer_views import board_figure, mapping_label, result_context, worked_example_context
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


def parse_request(task: Task, inputs: Any, **options: Any) -> PointsRequest | ValuesRequest:
    try:
        if task == "sort":
            return ValuesRequest(values=inputs, **options)
        return PointsRequest(points=inputs, **options)
    except ValidationError as exc:
        raise WidgetError(error_sentence(exc.errors()[0], reader=True)) from exc


def shared_figure(
    env: WidgetEnv, task: Task, state: BoardState
) -> tuple[BoardState, PointerResponse, str | None]:
    """The decode a shared address asks for: the state drawn, the answer, and a sentence when
    the drawing differs from the address (greedy in place of a decode too heavy for the page)."""
    note = None
    if not state.fits_the_page():
        note = (
            f"This drawing uses greedy decoding: {state.decoder_label()} over "
            f"{len(state.inputs)} inputs is too heavy to run while the page loads; the board's "
            "script runs it once the page has loaded."
        )
        state = replace(state, decoder="greedy")
    request = parse_request(task, state.inputs, **state.request_fields())
    return state, run_model(env.registry, task, request), note


@register_widget(
    "pointer-board",
    needs={"plotly", "js/pointer-board.js", "css/pointer.css"},
    pure=True,
    url_keys=url_keys(),
)
def pointer_board_context(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    task = params.get("task")
    if task not in TITLES:
        raise WidgetError("pointer-board needs `task:` hull, tsp or sort.")
    # The key names this board in the page's URL and ids; two boards of one task need `id:`.
    key = str(params.get("id", task))
    if not BOARD_KEY.fullmatch(key):
        raise WidgetError("pointer-board `id:` must be a short lowercase name, e.g. hull-2.")
    example = params.get("values" if task == "sort" else "points")
    example = example or (FIVE_VALUES if task == "sort" else FIVE_POINTS)
    alphas = [v.alpha for v in task_models(env.registry, task).variants if v.available]
    state, result, note = BoardState(example), None, None
    try:
        shared = board_state(task, key, params.get("url_state") or {}, alphas)
        if shared is not None:
            shared = shared if shared.inputs is not None else replace(shared, inputs=example)
            state, result, note = shared_figure(env, task, shared)
    except (ValueError, WidgetError) as exc:  # the example, and why the address was not drawn
        state, result = BoardState(example), None
        note = f"{exc} The board shows its example instead."
    if result is None:
        result = run_model(env.registry, task, parse_request(task, example))
    inputs = state.inputs
    step = min(state.step, len(result.steps) - 1)
    config = {
        "task": task,
        "key": key,
        "api": f"/api/pointer/{task}",
        "example": example,
        "inputs": inputs,
        "alphas": alphas,
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
        "alphas": [(f"{a:g}", mapping_label(a)) for a in alphas],
        "state": replace(state, step=step),
        "url_note": note,
        "figure": board_figure(inputs, result, step),
        **result_context(result),
    }


@register_widget("pointer-worked-example", needs={"css/pointer.css"})
def worked_example_context_provider(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    points = params.get("points") or FIVE_POINTS
    result = run_model(env.registry, "hull", parse_request("hull", points))
    assert isinstance(result, HullResponse)
    return worked_example_context(points, result)
