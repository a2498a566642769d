"""The pointer-network API: convex hull, travelling salesman and sorting, one decode per call,
and the board's htmx round trip.

POST /api/pointer/{task} answers JSON, or with an `HX-Request` header the same trace as the
answer's HTML fragment (templates/partials/pointer/result.html). GET
/api/pointer/{task}/board/{key} takes a board's state, its request with the step it shows
(PointsBoard, ValuesBoard), from the query and answers the board's figure with its other live
parts out of band, and the page address to show (`HX-Replace-Url`, app/pointer/url_state.py);
without `HX-Request`, the trace as JSON. Errors are app/errors.py's: a reader's input 422, a
missing model 503, a bug 500.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request

from app.compute import Budget, compute_budget, stops_answered
from app.export_routes import Drawing, add_export_route
from app.figure_export import Draw, figure_page
from app.pointer.board import live_context
from app.pointer.export import board_takeaway, export_svg
from app.pointer.requests import (
    Board,
    HullResponse,
    PointsBoard,
    PointsRequest,
    SortResponse,
    Task,
    TaskModels,
    TspResponse,
    ValuesBoard,
    ValuesRequest,
)
from app.pointer.service import board_learning, solve, task_models, trained_sizes
from app.pointer.url_state import address, figure_id
from app.pointer.views import result_context
from app.pointer.your_turn import picks
from app.registry import ModelRegistry, Registry
from app.responses import error_responses, respond, wants_fragment
from models.errors import InvalidInput

router = APIRouter(prefix="/api/pointer", tags=["pointer networks"])

ERRORS = error_responses(
    "; a request costs more the more inputs and the wider the beam",
    "The task's checkpoint is missing or corrupt",
)
BoardKey = Annotated[str, Path(pattern=r"^[a-z][a-z0-9-]{0,20}$")]


PointsBudget = Annotated[Budget, Depends(compute_budget(PointsRequest))]
ValuesBudget = Annotated[Budget, Depends(compute_budget(ValuesRequest))]


def answer(
    request: Request,
    registry: ModelRegistry,
    task: Task,
    body: PointsRequest | ValuesRequest,
    budget: Budget,
) -> Any:
    with stops_answered(budget):
        result = solve(registry, task, body, budget.check)
    return respond(request, result, "partials/pointer/result.html", result_context(result))


@router.post("/hull", response_model=HullResponse, responses=ERRORS)
def convex_hull(
    body: PointsRequest, request: Request, registry: Registry, budget: PointsBudget
) -> Any:
    """Decode the convex hull of the points: vertices counter-clockwise, beside the exact hull
    (monotone chain)."""
    return answer(request, registry, "hull", body, budget)


@router.post("/tsp", response_model=TspResponse, responses=ERRORS)
def travelling_salesman(
    body: PointsRequest, request: Request, registry: Registry, budget: PointsBudget
) -> Any:
    """Decode a closed tour through the points, beside Held–Karp (n ≤ 12, exact) or the best of
    two classical tours polished by 2-opt."""
    return answer(request, registry, "tsp", body, budget)


@router.post("/sort", response_model=SortResponse, responses=ERRORS)
def sort_values(
    body: ValuesRequest, request: Request, registry: Registry, budget: ValuesBudget
) -> Any:
    """Decode the values in ascending order; `alpha: 1.5` uses the sparse (1.5-entmax)
    pointer."""
    return answer(request, registry, "sort", body, budget)


@router.get("/models", response_model=list[TaskModels])
def models(registry: Registry) -> list[TaskModels]:
    """Each task's checkpoints, by the α of their pointer, and whether they can be served."""
    return [task_models(registry, task) for task in ("hull", "tsp", "sort")]


# ---- the board's round trip ----


def board_answer(
    request: Request, registry: ModelRegistry, task: Task, key: str, board: Board, budget: Budget
) -> Any:
    """The board's figure for its state, with its other live parts out of band and the page
    address to show. Inputs the model cannot take (too few, all on one line, …) are drawn
    with the sentence in an answer of their own (200: the browser logs no refused request;
    tests/browser/test_pointer_board.py::test_typed_coordinates_and_errors): the one place
    a reader's error is caught."""
    try:
        with stops_answered(budget):
            result = solve(registry, task, board, budget.check, remember=True)
        error = None
    except InvalidInput as exc:
        if not wants_fragment(request):
            raise
        result, error = None, str(exc)
    trained = trained_sizes(registry, result.model.name) if result is not None else None
    step = board.step - 1
    context = live_context(
        key, task, board.inputs(), result, error, step, trained=trained, mine=picks(board)
    )
    if result is not None:  # the step drawn, within the decode's
        board = board.model_copy(update={"step": context["current_step"] + 1})
    context["takeaway"] = board_takeaway(figure_page(request), task, key, board, result)
    context["learning"] = board_learning(task, board.model, board.snapshot)
    template = "partials/pointer/board-update.html"
    return respond(request, result, template, context, address(key, board), f"#{figure_id(key)}")


PointsQuery = Annotated[PointsBoard, Query()]
ValuesQuery = Annotated[ValuesBoard, Query()]
PointsCost = Annotated[Budget, Depends(compute_budget(PointsBoard, "query"))]
ValuesCost = Annotated[Budget, Depends(compute_budget(ValuesBoard, "query"))]
BOARD = {"response_model": None, "include_in_schema": False}


@router.get("/hull/board/{key}", **BOARD)
def hull_board(
    key: BoardKey, board: PointsQuery, request: Request, registry: Registry, budget: PointsCost
) -> Any:
    return board_answer(request, registry, "hull", key, board, budget)


@router.get("/tsp/board/{key}", **BOARD)
def tsp_board(
    key: BoardKey, board: PointsQuery, request: Request, registry: Registry, budget: PointsCost
) -> Any:
    return board_answer(request, registry, "tsp", key, board, budget)


@router.get("/sort/board/{key}", **BOARD)
def sort_board(
    key: BoardKey, board: ValuesQuery, request: Request, registry: Registry, budget: ValuesCost
) -> Any:
    return board_answer(request, registry, "sort", key, board, budget)


# ---- a board taken away (app/figure_export.py): the same state, drawn as one file ----


def board_drawing(task: Task) -> Drawing:
    """The board's figure at its step as a self-contained SVG, with the legend and a caption
    naming the paper, the checkpoint and its sha256, and the link."""

    def drawing(registry: ModelRegistry, board: Board, check: Callable[[], None]) -> Draw:
        result = solve(registry, task, board, check, remember=True)
        context = live_context(
            task, task, board.inputs(), result, None, board.step - 1, mine=picks(board)
        )
        shown = board.model_copy(update={"step": context["current_step"] + 1})
        figure = context["figure"]
        return lambda templates, page: export_svg(templates, page, task, shown, result, figure)

    return drawing


def board_filename(task: Task) -> Callable[[Board], str]:
    return lambda board: f"papertrace-{task}-{len(board.inputs())}"


for exported_task, board_schema in (
    ("hull", PointsBoard),
    ("tsp", PointsBoard),
    ("sort", ValuesBoard),
):
    add_export_route(
        router,
        f"/{exported_task}/figure",
        board_schema,
        board_drawing(exported_task),
        board_filename(exported_task),
    )
