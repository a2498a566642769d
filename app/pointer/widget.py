"""pointer-board and pointer-worked-example: figures rendered from the trained models.

Both run the real model on the server when the page renders, so the page shows a meaningful
figure before any script runs. A board draws the state in the page address
(app/pointer/url_state.py), so a shared link, or the board's own form submitted without script,
shows that figure; with script, htmx asks GET /api/pointer/{task}/board/{key} for each new state
and swaps the answer in (app/pointer/router.py), drawn by the same code (app/pointer/board.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from app.pointer.board import live_context
from app.pointer.requests import (
    MAX_BEAM_WIDTH,
    MAX_INPUTS,
    MAX_SAMPLES,
    MIN_POINTS,
    MIN_VALUES,
    HullResponse,
    PointerTrace,
    PointsRequest,
    Task,
)
from app.pointer.service import solve, solve_board, task_models
from app.pointer.url_state import BoardState, board_state, inputs_text, url_keys
from app.pointer.views import mapping_label, worked_example_context
from app.registry import ModelRegistry, ModelUnavailable
from app.widgets import WidgetEnv, WidgetError, register_widget

# The deep-dive's worked example (prose numbering P1..P5): hull P1 P2 P4 P5, P3 inside.
FIVE_POINTS = [[0.15, 0.20], [0.85, 0.10], [0.50, 0.45], [0.90, 0.80], [0.20, 0.85]]
FIVE_VALUES = [0.62, 0.15, 0.87, 0.40, 0.05]
TITLES = {"hull": "Convex hull", "tsp": "Travelling salesman", "sort": "Sorting"}
BOARD_KEY = re.compile(r"[a-z][a-z0-9-]{0,20}")


def unavailable(task: Task, exc: ModelUnavailable) -> WidgetError:
    return WidgetError(exc.sentence, f"python -m models.train {exc.name}")


def solve_on_page(
    registry: ModelRegistry, task: Task, state: BoardState
) -> tuple[PointerTrace | None, str | None]:
    try:
        return solve_board(registry, task, state)
    except ModelUnavailable as exc:
        raise unavailable(task, exc) from exc


def light_enough(state: BoardState) -> tuple[BoardState, str | None]:
    """The state a page render decodes: greedy in place of a decode too heavy for it, with a
    sentence saying so."""
    if state.fits_the_page():
        return state, None
    note = (
        f"This drawing uses greedy decoding: {state.decoder_label()} over "
        f"{len(state.inputs)} inputs is too heavy to run while the page loads; change any "
        "setting, or press Apply, to run it."
    )
    return replace(state, decoder="greedy"), note


def page_state(
    env: WidgetEnv, task: Task, key: str, example: list, alphas: list[float], url_state: Any
) -> tuple[BoardState, PointerTrace | None, str | None, str | None]:
    """(state, answer, sentence when there is no answer, note on the drawing) for the page's
    address; an address that cannot be drawn shows the example, and says why."""
    try:
        shared = board_state(task, key, url_state or {}, alphas)
        problem = None
    except ValueError as exc:
        shared, problem = None, f"{exc} The board shows its example instead."
    if shared is not None:
        shared = shared if shared.inputs is not None else replace(shared, inputs=example)
        state, note = light_enough(shared)
        result, error = solve_on_page(env.registry, task, state)
        if result is not None:
            return state, result, None, note
        problem = f"{error} The board shows its example instead."
    state = BoardState(example)
    result, error = solve_on_page(env.registry, task, state)
    return state, result, error, problem


@register_widget(
    "pointer-board",
    needs={"htmx", "js/hx-widgets.js", "js/pointer-board.js", "css/pointer.css"},
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
    url_state = params.get("url_state")
    state, result, error, note = page_state(env, task, key, example, alphas, url_state)
    alpha = result.model.alpha if result else (state.alpha or 1.0)
    config = {
        "task": task,
        "key": key,
        "example": inputs_text(task, example),
        "min_inputs": MIN_VALUES if task == "sort" else MIN_POINTS,
        "max_inputs": MAX_INPUTS,
        "max_beam_width": MAX_BEAM_WIDTH,
        "max_samples": MAX_SAMPLES,
    }
    return {
        "board_id": f"pointer-board-{key}",
        "task": task,
        "title": TITLES[task],
        "config": config,
        "inputs_text": inputs_text(task, state.inputs),
        "alphas": [(f"{a:g}", mapping_label(a)) for a in alphas],
        "selected_alpha": f"{alpha:g}",
        "state": state,
        **live_context(key, task, state.inputs, result, error, state.step, note),
    }


@register_widget("pointer-worked-example", needs={"css/pointer.css"})
def worked_example_context_provider(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    points = params.get("points") or FIVE_POINTS
    try:
        result = solve(env.registry, "hull", PointsRequest(points=points))
    except ModelUnavailable as exc:
        raise unavailable("hull", exc) from exc
    assert isinstance(result, HullResponse)
    return worked_example_context(points, result)
