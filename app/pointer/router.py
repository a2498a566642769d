"""The pointer-network API: convex hull, travelling salesman and sorting, one decode per call,
and the board's htmx round trip.

POST /api/pointer/{task} answers JSON, or with an `HX-Request` header the same trace as the
answer's HTML fragment (templates/partials/pointer/result.html). GET
/api/pointer/{task}/board/{key} takes a board's state as the page address spells it (the keys
of app/pointer/url_state.py, which the board's form sends) and answers the board's figure with
its other live parts out of band, and the page address to show (`HX-Replace-Url`). Errors are
app/errors.py's: a reader's input 422, a missing model 503, a bug 500.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import HTMLResponse

from app.compute import Budget, compute_budget, pointer_cost, priced_budget, stops_answered
from app.pointer.board import live_context
from app.pointer.requests import (
    HullResponse,
    PointsRequest,
    SortResponse,
    Task,
    TaskModels,
    TspResponse,
    ValuesRequest,
)
from app.pointer.service import solve, solve_board, task_models
from app.pointer.url_state import BoardState, address, board_state
from app.pointer.views import result_context
from app.responses import page_url, respond
from models.errors import InvalidInput

router = APIRouter(prefix="/api/pointer", tags=["pointer networks"])

ERRORS: dict[int | str, dict[str, Any]] = {
    422: {"description": "Unusable input; `detail` is a sentence saying what to change."},
    429: {
        "description": "Over this address's rate; a request costs more the more inputs and "
        "the wider the beam. Wait `Retry-After` seconds."
    },
    503: {
        "description": "The task's checkpoint is missing or corrupt, the worker is busy "
        "(`Retry-After` says when to try again), or the decode passed its time limit; "
        "`detail` says which."
    },
}
BoardKey = Annotated[str, Path(pattern=r"^[a-z][a-z0-9-]{0,20}$")]


PointsBudget = Annotated[Budget, Depends(compute_budget(PointsRequest))]
ValuesBudget = Annotated[Budget, Depends(compute_budget(ValuesRequest))]


def answer(
    request: Request, task: Task, body: PointsRequest | ValuesRequest, budget: Budget
) -> Any:
    with stops_answered(budget):
        result = solve(request.app.state.registry, task, body, budget.check)
    return respond(request, result, "partials/pointer/result.html", result_context(result))


@router.post("/hull", response_model=HullResponse, responses=ERRORS)
def convex_hull(body: PointsRequest, request: Request, budget: PointsBudget) -> Any:
    """Decode the convex hull of the points: vertices counter-clockwise, beside the exact hull
    (monotone chain)."""
    return answer(request, "hull", body, budget)


@router.post("/tsp", response_model=TspResponse, responses=ERRORS)
def travelling_salesman(body: PointsRequest, request: Request, budget: PointsBudget) -> Any:
    """Decode a closed tour through the points, beside Held–Karp (n ≤ 12, exact) or the best of
    two classical tours polished by 2-opt."""
    return answer(request, "tsp", body, budget)


@router.post("/sort", response_model=SortResponse, responses=ERRORS)
def sort_values(body: ValuesRequest, request: Request, budget: ValuesBudget) -> Any:
    """Decode the values in ascending order; `alpha: 1.5` uses the sparse (1.5-entmax)
    pointer."""
    return answer(request, "sort", body, budget)


@router.get("/models", response_model=list[TaskModels])
def models(request: Request) -> list[TaskModels]:
    """Each task's checkpoints, by the α of their pointer, and whether they can be served."""
    registry = request.app.state.registry
    return [task_models(registry, task) for task in ("hull", "tsp", "sort")]


# ---- the board's round trip ----


def requested_board(request: Request) -> tuple[Task, str, BoardState]:
    """The board's state from the query; InvalidInput (422) when the inputs do not parse."""
    task, key = request.path_params["task"], request.path_params["key"]
    registry = request.app.state.registry
    alphas = [v.alpha for v in task_models(registry, task).variants]
    try:
        state = board_state(task, key, dict(request.query_params), alphas)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from exc
    return task, key, state if state is not None else BoardState([])


async def board_cost(request: Request) -> int:
    try:
        _, _, state = requested_board(request)
    except InvalidInput:
        return 1
    return pointer_cost(len(state.inputs), state.hypotheses())


BoardBudget = Annotated[Budget, Depends(priced_budget(board_cost))]


@router.get("/{task}/board/{key}", response_class=HTMLResponse, include_in_schema=False)
def board(task: Task, key: BoardKey, request: Request, budget: BoardBudget) -> HTMLResponse:
    """The board `key` of `task` drawn for the state in the query: its figure, then the step
    line, the sentence (when the inputs cannot be decoded) and the answer's details, each
    swapped in by id."""
    _, _, state = requested_board(request)
    with stops_answered(budget):
        result, error = solve_board(request.app.state.registry, task, state, budget.check)
    step = state.step if result is None else min(state.step, len(result.steps) - 1)
    context = live_context(key, task, state.inputs, result, error, step)
    response = request.app.state.templates.TemplateResponse(
        request, "partials/pointer/board-update.html", context
    )
    current = request.headers.get("HX-Current-URL")
    drawn = BoardState(**{**state.__dict__, "step": step})
    if current and (url := page_url(current, address(key, task, drawn))):
        response.headers["HX-Replace-Url"] = url
    return response
