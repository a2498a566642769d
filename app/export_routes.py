"""The download route every figure has beside its live route: GET <path>.svg or <path>.png,
with the figure's state as its query (the same request model the live figure reads), priced by
`export_budget` (the figure's price, plus the rasterising for a PNG) and answered by
`exported` for the page the download was asked from (app/figure_export.py).

No `from __future__ import annotations` here: FastAPI reads the route's parameter types from
the function `add_export_route` builds.
"""

from collections.abc import Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel

from app.compute import Budget, stops_answered
from app.figure_export import Draw, export_budget, exported
from app.registry import ModelRegistry, Registry

# (registry, figure, check) -> the figure drawn for a page: runs the model inside the budget
Drawing = Callable[[ModelRegistry, Any, Callable[[], None]], Draw]


def add_export_route(
    router: APIRouter,
    path: str,
    schema: type[BaseModel],
    drawing: Drawing,
    filename: Callable[[Any], str],
) -> None:
    """GET <path>.{svg,png} on `router`: `schema` from the query, `drawing` run within the
    price, the file named `filename(figure)` (.svg or .png added)."""
    cost = Annotated[Budget, Depends(export_budget(schema))]

    def export(
        kind: Literal["svg", "png"],
        figure: Annotated[schema, Query()],  # type: ignore[valid-type]
        request: Request,
        registry: Registry,
        budget: cost,  # type: ignore[valid-type]
    ) -> Response:
        with stops_answered(budget):
            draw = drawing(registry, figure, budget.check)
        return exported(request, kind, filename(figure), draw)

    export.__doc__ = f"The figure of GET {router.prefix}{path} as a self-contained SVG, or PNG."
    router.get(f"{path}.{{kind}}", include_in_schema=False, response_model=None)(export)
