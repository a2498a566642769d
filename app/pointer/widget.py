"""pointer-board and pointer-worked-example: figures rendered from the trained models.

Both run the real model on the server when the page renders, so the page shows a meaningful
figure before any script runs. A board draws the state in the page address (its request's
fields under its key, app/pointer/url_state.py), validated by the board's request model, so a
shared link, or the board's own form submitted without script, shows that figure; with script,
htmx asks GET /api/pointer/{task}/board/{key} for each new state and swaps the answer in
(app/pointer/router.py), drawn by the same code (app/pointer/board.py). A page render prices
the address's board before decoding it (`board_address`, planned with the page by app.widgets):
a decode too heavy for a page is drawn greedily, and one the page has no room or no time for
draws the address's inputs without an answer, each with a sentence and the board's button.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from app.errors import error_sentence
from app.pointer.board import live_context
from app.pointer.export import TITLES, board_takeaway, decoder_name
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
    ValuesBoard,
)
from app.pointer.service import board_learning, solve, task_models, trained_sizes
from app.pointer.url_state import board_fields, figure_id, inputs_text, url_keys
from app.pointer.views import mapping_label, worked_example_context
from app.pointer.your_turn import picks
from app.registry import ModelUnavailable
from app.widgets import (
    AddressState,
    PageFigure,
    WidgetEnv,
    WidgetError,
    register_widget,
)
from models.errors import InvalidInput
from models.pointer_run import SERVED, decoders_of, is_attention_model

# The deep-dive's worked example (prose numbering P1..P5): hull P1 P2 P4 P5, P3 inside.
FIVE_POINTS = [[0.15, 0.20], [0.85, 0.10], [0.50, 0.45], [0.90, 0.80], [0.20, 0.85]]
FIVE_VALUES = [0.62, 0.15, 0.87, 0.40, 0.05]
BOARD_KEY = re.compile(r"[a-z][a-z0-9-]{0,20}")
DECODER_OPTIONS = {  # the board's decoder menu
    "greedy": "greedy",
    "beam": "beam search",
    "sample": "best of k samples",
    "symmetric": "symmetric (8 · n greedy)",
}


def unavailable(task: Task, exc: ModelUnavailable) -> WidgetError:
    return WidgetError(exc.sentence, f"python -m models.train {exc.name}")


def solve_on_page(
    env: WidgetEnv, task: Task, board: Board, check: Callable[[], None] | None = None
) -> PointerTrace:
    try:
        return solve(env.registry, task, board, check, remember=True)
    except ModelUnavailable as exc:
        raise unavailable(task, exc) from exc


def board_state(board: Board) -> AddressState:
    """A board's state from the address, priced, with greedy as its light decode."""
    greedy = board.model_copy(update={"decoder": "greedy"})
    noun = "values" if isinstance(board, ValuesBoard) else "points"
    return AddressState(
        state=board,
        tokens=board.cost(),
        light=greedy,
        light_tokens=greedy.cost(),
        asked=f"{decoder_name(board)} over {len(board.inputs())} inputs",
        shown="greedy decoding",
        run=f"Run {decoder_name(board)}",
        noun="drawing",
        unrun=f"its {noun} without the model's answer",
    )


def reader_sentence(exc: ValidationError | InvalidInput) -> str:
    if isinstance(exc, ValidationError):
        return error_sentence(exc.errors()[0], reader=True)
    return str(exc)


def board_params(params: Mapping[str, Any]) -> tuple[Task, str, dict[str, Any]]:
    """The board's task, key and defaults (its example, its model) from the widget's params;
    WidgetError for params the page's author must fix."""
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
    return task, key, {INPUTS[task]: example, "model": model}


def board_address(params: Mapping[str, Any], env: WidgetEnv) -> AddressState:
    """The board's state in the page address, validated by its request model over the board's
    defaults and priced (app.widgets plans the page with it)."""
    task, key, defaults = board_params(params)
    fields = board_fields(task, key, params.get("url_state") or {})
    if fields is None:
        return AddressState()
    try:
        return board_state(BOARDS[task].model_validate(defaults | fields))
    except ValidationError as exc:
        return AddressState(problem=f"{reader_sentence(exc)} The board shows its example instead.")


def page_state(
    env: WidgetEnv, task: Task, defaults: dict[str, Any], figure: PageFigure
) -> tuple[Board, PointerTrace | None, str | None, str | None]:
    """(state, answer, sentence when there is no answer, note on the drawing) for what the
    page render runs for the board (`figure`, app.widgets); an address that cannot be drawn
    shows the example, and says why. The state stays the address's when the page runs a
    lighter decode or none (the note says which), so the board's next answer is the
    address's own."""
    problem = figure.address.problem
    if (board := figure.address.state) is not None:
        try:
            if figure.drawn is None:  # nothing runs: the reader's inputs, undecoded
                return board, None, None, figure.note
            return board, solve_on_page(env, task, figure.drawn, env.check), None, figure.note
        except InvalidInput as exc:
            problem = f"{exc} The board shows its example instead."
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
    address=board_address,
)
def pointer_board_context(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    task, key, defaults = board_params(params)
    example, model = defaults[INPUTS[task]], defaults["model"]
    alphas = [] if model else [v.alpha for v in task_models(env.registry, task).variants]
    figure = params.get("page_figure") or PageFigure()
    board, result, error, note = page_state(env, task, defaults, figure)
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
        # the address's decode, when the page ran a lighter one or none (app.widgets.allot)
        "run_shared": figure.run if figure.note else None,
        "takeaway": board_takeaway(env.page, task, key, figure.drawn or board, result),
        "learning": board_learning(task, board.model, board.snapshot),
        **live_context(
            key,
            task,
            board.inputs(),
            result,
            error,
            board.step - 1,
            note,
            trained_sizes(env.registry, result.model.name) if result else None,
            picks(board),
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
