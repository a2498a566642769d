"""The pointer-network API: convex hull, travelling salesman and sorting, one decode per call.

JSON by default; with an `HX-Request` header the same response object comes back as the
board's HTML fragment (templates/partials/pointer/result.html).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request

from app.compute import Budget, compute_budget, pointer_cost, stops_answered
from app.pointer_service import READER_ERRORS, solve, task_models
from app.pointer_views import result_context
from app.schemas.pointer import (
    HullResponse,
    PointerTrace,
    PointsRequest,
    SortResponse,
    Task,
    TaskModels,
    TspResponse,
    ValuesRequest,
)
from app.services import ModelUnavailable
from models.pointer_run import hypotheses

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


def request_cost(body: PointsRequest | ValuesRequest) -> int:
    """Rate-limit tokens and gate share: inputs × the hypotheses the decoder carries."""
    inputs = len(body.points) if isinstance(body, PointsRequest) else len(body.values)
    return pointer_cost(inputs, hypotheses(body.decoder, body.beam_width, body.samples))


PointsBudget = Annotated[Budget, Depends(compute_budget(PointsRequest, request_cost))]
ValuesBudget = Annotated[Budget, Depends(compute_budget(ValuesRequest, request_cost))]


def respond(
    request: Request, task: Task, body: PointsRequest | ValuesRequest, budget: Budget
) -> Any:
    try:
        with stops_answered(budget):
            result: PointerTrace = solve(request.app.state.registry, task, body, budget.check)
    except ModelUnavailable as exc:
        raise HTTPException(
            status_code=503, detail=f"The {task} model is unavailable: {exc.reason}."
        ) from exc
    except READER_ERRORS as exc:
        raise HTTPException(status_code=422, detail=str(exc)) from exc
    if request.headers.get("HX-Request") == "true":
        return request.app.state.templates.TemplateResponse(
            request, "partials/pointer/result.html", result_context(result)
        )
    return result


@router.post("/hull", response_model=HullResponse, responses=ERRORS)
def convex_hull(body: PointsRequest, request: Request, budget: PointsBudget) -> Any:
    """Decode the convex hull of the points: vertices counter-clockwise, beside the exact hull
    (monotone chain)."""
    return respond(request, "hull", body, budget)


@router.post("/tsp", response_model=TspResponse, responses=ERRORS)
def travelling_salesman(body: PointsRequest, request: Request, budget: PointsBudget) -> Any:
    """Decode a closed tour through the points, beside Held–Karp (n ≤ 12, exact) or the best of
    two classical tours polished by 2-opt."""
    return respond(request, "tsp", body, budget)


@router.post("/sort", response_model=SortResponse, responses=ERRORS)
def sort_values(body: ValuesRequest, request: Request, budget: ValuesBudget) -> Any:
    """Decode the values in ascending order; `alpha: 1.5` uses the sparse (1.5-entmax)
    pointer."""
    return respond(request, "sort", body, budget)


@router.get("/models", response_model=list[TaskModels])
def models(request: Request) -> list[TaskModels]:
    """Each task's checkpoints, by the α of their pointer, and whether they can be served."""
    registry = request.app.state.registry
    return [task_models(registry, task) for task in ("hull", "tsp", "sort")]
