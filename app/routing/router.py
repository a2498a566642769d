"""The attention model's figures over HTTP: GET /api/routing/attention (the encoder's
attention weights of one layer and head) and GET /api/routing/reinforce (k sampled tours
against the greedy-rollout baseline). JSON, or for htmx the figure drawn from the same answer
(app/routing/widget.py), the page address following with the figure's `#id`.

Both routes are made by `figure_route` (no `from __future__ import annotations` here: FastAPI
reads the route's parameter types from the function the factory builds)."""

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel

from app.compute import Budget, compute_budget, stops_answered
from app.export_routes import add_export_route
from app.figure_export import Draw, figure_page
from app.registry import ModelRegistry, Registry
from app.responses import error_responses, respond
from app.routing import service
from app.routing.export import export_svg, routing_takeaway
from app.routing.requests import (
    AttentionAnswer,
    AttentionFigure,
    CitiesFigure,
    ReinforceAnswer,
    ReinforceFigure,
)
from app.routing.widget import ATTENTION, REINFORCE, attention_view, reinforce_view

router = APIRouter(prefix="/api/routing", tags=["attention model"])
ERRORS = error_responses("", "The attention model's checkpoint is missing or corrupt")


def figure_route(
    name: str,
    schema: type[CitiesFigure],
    answer_model: type[BaseModel],
    compute: Callable[..., BaseModel],
    view: Callable[..., dict[str, Any]],
    prefix: str,
    summary: str,
) -> None:
    """GET /api/routing/<name>: the figure's state from the query, priced and gated, answered
    by `compute`, drawn by `view` for htmx into partials/routing/<name>.html."""
    budget_of = Annotated[Budget, Depends(compute_budget(schema, "query"))]

    def route(
        figure: Annotated[schema, Query()], request: Request, registry: Registry, budget: budget_of
    ) -> Any:
        with stops_answered(budget):
            answer = compute(registry, figure, budget.check)
        context = view(figure, answer)
        page = figure_page(request)
        context["takeaway"] = routing_takeaway(page, figure, answer, context["figure_id"])
        address, anchor = figure.address(prefix), f"#{context['figure_id']}"
        return respond(request, answer, f"partials/routing/{name}.html", context, address, anchor)

    def drawing(registry: ModelRegistry, figure: CitiesFigure, check: Callable[[], None]) -> Draw:
        context = view(figure, compute(registry, figure, check))
        return lambda templates, page: export_svg(templates, page, context)

    def filename(figure: CitiesFigure) -> str:
        return f"papertrace-{name}-{len(figure.points)}"

    route.__doc__ = summary
    router.get(f"/{name}", response_model=answer_model, responses=ERRORS, name=name)(route)
    add_export_route(router, f"/{name}", schema, drawing, filename)


figure_route(
    "attention",
    AttentionFigure,
    AttentionAnswer,
    lambda registry, figure, check: service.attention(registry.get, figure),
    attention_view,
    ATTENTION,
    "How much each city's head reads every other city, in one layer of the encoder.",
)
figure_route(
    "reinforce",
    ReinforceFigure,
    ReinforceAnswer,
    lambda registry, figure, check: service.reinforce(registry.get, figure, check),
    reinforce_view,
    REINFORCE,
    "k tours sampled from the policy for the cities, each with its advantage over the greedy "
    "rollout: the weight REINFORCE gives its log-probability's gradient.",
)
