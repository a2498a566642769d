"""pointer-board and pointer-worked-example: figures rendered from the trained models.

Both run the real model on the server when the page renders, so the page shows a meaningful
figure before any script runs. A board draws the state in the page address (its request's
fields under its key, app/pointer/url_state.py), validated by the board's request model, so a
shared link, or the board's own form submitted without script, shows that figure; with script,
htmx asks GET /api/pointer/{task}/board/{key} for each new state and swaps the answer in
(app/pointer/router.py), drawn by the same code (app/pointer/board.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from app.compute import pointer_cost
from app.errors import error_sentence
from app.pointer.board import live_context
from app.pointer.requests import (
    BOARDS,
    INPUTS,
    MAX_BEAM_WIDTH,
    MAX_INPUTS,
    MAX_SAMPLES,
    MIN_POINTS,
    MIN_VALUES,
    Board,
    HullResponse,
    PointerTrace,
    PointsRequest,
    Task,
)
from app.pointer.service import solve, task_models, trained_sizes
from app.pointer.url_state import board_fields, figure_id, inputs_text, url_keys
from app.pointer.views import mapping_label, worked_example_context
from app.registry import ModelUnavailable
from app.widgets import WidgetEnv, WidgetError, register_widget
from models.errors import InvalidInput
from models.pointer_run import SERVED, decoders_of, is_attention_model

# The deep-dive's worked example (prose numbering P1..P5): hull P1 P2 P4 P5, P3 inside.
FIVE_POINTS = [[0.15, 0.20], [0.85, 0.10], [0.50, 0.45], [0.90, 0.80], [0.20, 0.85]]
FIVE_VALUES = [0.62, 0.15, 0.87, 0.40, 0.05]
TITLES = {"hull": "Convex hull", "tsp": "Travelling salesman", "sort": "Sorting"}
BOARD_KEY = re.compile(r"[a-z][a-z0-9-]{0,20}")
# The heaviest decode a page render runs: greedy over the largest board the API accepts.
PAGE_MAX_TOKENS = pointer_cost(MAX_INPUTS, 1)
DECODER_OPTIONS = {  # the board's decoder menu
    "greedy": "greedy",
    "beam": "beam search",
    "sample": "best of k samples",
    "symmetric": "symmetric (8 · n greedy)",
}
DECODER_NAMES = {  # formatted with the board's beam_width and samples
    "greedy": "greedy decoding",
    "beam": "beam search (width {beam_width})",
    "sample": "best of {samples} samples",
    "symmetric": "symmetric (8 · n greedy tours)",
}


def unavailable(task: Task, exc: ModelUnavailable) -> WidgetError:
    return WidgetError(exc.sentence, f"python -m models.train {exc.name}")


def solve_on_page(env: WidgetEnv, task: Task, board: Board) -> PointerTrace:
    try:
        return solve(env.registry, task, board, remember=True)
    except ModelUnavailable as exc:
        raise unavailable(task, exc) from exc


def decoder_name(board: Board) -> str:
    return DECODER_NAMES[board.decoder].format(beam_width=board.beam_width, samples=board.samples)


def light_enough(board: Board) -> tuple[Board, str | None]:
    """The state a page render decodes: greedy in place of a decode too heavy for it, with a
    sentence saying so, which the board shows above its drawing."""
    if board.cost() <= PAGE_MAX_TOKENS:
        return board, None
    note = (
        f"This link asks for {decoder_name(board)} over {len(board.inputs())} inputs, too "
        "heavy to run while the page loads: the drawing below is greedy decoding instead."
    )
    return board.model_copy(update={"decoder": "greedy"}), note


def reader_sentence(exc: ValidationError | InvalidInput) -> str:
    if isinstance(exc, ValidationError):
        return error_sentence(exc.errors()[0], reader=True)
    return str(exc)


def page_state(
    env: WidgetEnv, task: Task, key: str, defaults: dict[str, Any], address: Mapping[str, str]
) -> tuple[Board, PointerTrace | None, str | None, str | None]:
    """(state, answer, sentence when there is no answer, note on the drawing) for the page's
    address over the board's `defaults` (its example, its model); an address that cannot be
    drawn shows the example, and says why. The state stays the address's when its decode is
    too heavy for the page (light_enough), so the board's next answer is the address's own."""
    problem = None
    if (fields := board_fields(task, key, address)) is not None:
        try:
            board = BOARDS[task].model_validate(defaults | fields)
            drawn, note = light_enough(board)
            return board, solve_on_page(env, task, drawn), None, note
        except (ValidationError, InvalidInput) as exc:
            problem = f"{reader_sentence(exc)} The board shows its example instead."
    try:
        board = BOARDS[task].model_validate(defaults)
    except ValidationError as exc:
        raise WidgetError(f"pointer-board's example: {reader_sentence(exc)}") from exc
    try:
        return board, solve_on_page(env, task, board), None, problem
    except InvalidInput as exc:
        return board, None, str(exc), problem


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
    model = params.get("model")  # a served checkpoint of the task; None: chosen by α
    if model is not None and model not in SERVED[task]:
        raise WidgetError(f"pointer-board `model:` must be one of {', '.join(SERVED[task])}.")
    alphas = [] if model else [v.alpha for v in task_models(env.registry, task).variants]
    defaults = {INPUTS[task]: example, "model": model}
    url_state = params.get("url_state") or {}
    board, result, error, note = page_state(env, task, key, defaults, url_state)
    alpha = result.model.alpha if result else (board.alpha or 1.0)
    config = {
        "task": task,
        "key": key,
        "inputs_field": INPUTS[task],
        "example": inputs_text(example),
        "min_inputs": MIN_VALUES if task == "sort" else MIN_POINTS,
        "max_inputs": MAX_INPUTS,
        "max_beam_width": MAX_BEAM_WIDTH,
        "max_samples": MAX_SAMPLES,
    }
    return {
        "board_id": figure_id(key),
        "task": task,
        "title": TITLES[task],
        "config": config,
        "inputs_text": inputs_text(board.inputs()),
        "model": board.model,
        "attention_model": board.model is not None and is_attention_model(board.model),
        "decoders": [(d, DECODER_OPTIONS[d]) for d in decoders_of(board.model or SERVED[task][0])],
        "alphas": [(f"{a:g}", mapping_label(a)) for a in alphas],
        "selected_alpha": f"{alpha:g}",
        "state": board,
        # the address's decoder, when the page drew greedy in its place (light_enough)
        "run_shared": f"Run {decoder_name(board)}" if board.cost() > PAGE_MAX_TOKENS else None,
        **live_context(
            key,
            task,
            board.inputs(),
            result,
            error,
            board.step - 1,
            note,
            trained_sizes(env.registry, result.model.name) if result else None,
        ),
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
