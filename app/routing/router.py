"""The attention model's figures over HTTP: GET /api/routing/attention (the encoder's
attention weights of one layer and head) and GET /api/routing/reinforce (k sampled tours
against the greedy-rollout baseline). JSON, or for htmx the figure drawn from the same answer
(app/routing/widget.py), the page address following with the figure's `#id`."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from app.compute import Budget, compute_budget, stops_answered
from app.registry import Registry
from app.responses import respond
from app.routing import service
from app.routing.requests import AttentionAnswer, AttentionFigure, ReinforceAnswer, ReinforceFigure
from app.routing.widget import ATTENTION, REINFORCE, attention_view, reinforce_view

router = APIRouter(prefix="/api/routing", tags=["attention model"])
ERRORS: dict[int | str, dict[str, Any]] = {
    422: {"description": "Unusable input; `detail` is a sentence saying what to change."},
    429: {"description": "Over this address's rate. Wait `Retry-After` seconds."},
    503: {"description": "The model is unavailable, or the worker is busy; `detail` says which."},
}
AttentionBudget = Annotated[Budget, Depends(compute_budget(AttentionFigure, "query"))]
ReinforceBudget = Annotated[Budget, Depends(compute_budget(ReinforceFigure, "query"))]


@router.get("/attention", response_model=AttentionAnswer, responses=ERRORS)
def encoder_attention(
    figure: Annotated[AttentionFigure, Query()],
    request: Request,
    registry: Registry,
    budget: AttentionBudget,
) -> Any:
    """How much each city's head reads every other city, in one layer of the encoder."""
    with stops_answered(budget):
        answer = service.attention(registry, figure)
    context = attention_view(figure, answer)
    address, anchor = figure.address(ATTENTION), f"#{context['figure_id']}"
    return respond(request, answer, "partials/routing/attention.html", context, address, anchor)


@router.get("/reinforce", response_model=ReinforceAnswer, responses=ERRORS)
def reinforce_step(
    figure: Annotated[ReinforceFigure, Query()],
    request: Request,
    registry: Registry,
    budget: ReinforceBudget,
) -> Any:
    """k tours sampled from the policy for the cities, each with its advantage over the greedy
    rollout: the weight REINFORCE gives its log-probability's gradient."""
    with stops_answered(budget):
        answer = service.reinforce(registry, figure, budget.check)
    context = reinforce_view(figure, answer)
    address, anchor = figure.address(REINFORCE), f"#{context['figure_id']}"
    return respond(request, answer, "partials/routing/reinforce.html", context, address, anchor)
