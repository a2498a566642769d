"""α-entmax over HTTP: POST /api/entmax answers JSON (or, for htmx, the result fragment);
GET /api/entmax/figure is the playground form's round trip (app.entmax.widget
draws it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel

from app.entmax.export import export_svg
from app.entmax.requests import EntmaxRequest, EntmaxResponse, PlaygroundRequest
from app.entmax.service import compute_entmax
from app.entmax.widget import playground_view
from app.export_routes import add_export_route
from app.figure_export import Draw, figure_page
from app.registry import ModelRegistry
from app.responses import back_to_page, respond, wants_fragment

router = APIRouter(prefix="/api", tags=["entmax"])
ANCHOR = "#entmax-playground"  # the playground's figure id, where its address opens


@router.post(
    "/entmax",
    response_model=EntmaxResponse,
    summary="α-entmax of a score vector",
    responses={
        200: {"content": {"text/html": {}}, "description": "JSON, or with `HX-Request` HTML"},
        422: {"description": '`{"detail": "<a sentence saying what to change>"}`'},
    },
)
def entmax_endpoint(body: EntmaxRequest, request: Request) -> BaseModel | HTMLResponse:
    """entmax_α(scores): the probabilities, the support size and the threshold τ."""
    result = compute_entmax(body)
    context = {"result": result, "labels": body.labels, "alpha": body.alpha}
    return respond(request, result, "partials/entmax/result.html", context)


@router.get("/entmax/figure", include_in_schema=False, response_model=None)
def entmax_figure(
    request: Request, figure: Annotated[PlaygroundRequest, Query()]
) -> BaseModel | Response:
    """The playground's figure for its form's fields: bars, statistics and the example menu
    (and the score rows when the sentence or the example changed). The example menu sends
    itself and α, so its example's sentence and scores come in. Without script the form lands
    here itself and is sent back to its page, which draws the same figure."""
    if not wants_fragment(request):
        return back_to_page(request, figure.address(), ANCHOR)
    trigger = request.headers.get("HX-Trigger-Name")
    view = playground_view(figure, page=figure_page(request))
    view["rows"] = trigger in ("text", "example")
    view["example_chosen"] = trigger == "example" and view["example"] is not None
    figure_html = "partials/entmax/figure.html"
    return respond(request, view["result"], figure_html, view, figure.address(), ANCHOR)


def playground_drawing(
    registry: ModelRegistry, figure: PlaygroundRequest, check: Callable[[], None]
) -> Draw:
    """The playground's bars for an export (no model runs: α-entmax itself)."""
    view = playground_view(figure)
    return lambda templates, page: export_svg(templates, page, view)


def playground_filename(figure: PlaygroundRequest) -> str:
    return f"papertrace-entmax-{figure.alpha:g}"


add_export_route(
    router, "/entmax/figure", PlaygroundRequest, playground_drawing, playground_filename
)
