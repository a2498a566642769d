"""POST /api/entmax: α-entmax of a score vector, as JSON or as the playground's HTML fragment."""

from __future__ import annotations

from fastapi import APIRouter, Header, Request
from fastapi.responses import HTMLResponse

from app.entmax_service import compute_entmax
from app.schemas.entmax import EntmaxRequest, EntmaxResponse

router = APIRouter(prefix="/api", tags=["entmax"])

FRAGMENT = "partials/entmax/result.html"


@router.post(
    "/entmax",
    response_model=EntmaxResponse,
    summary="α-entmax of a score vector",
    responses={
        200: {"content": {"text/html": {}}, "description": "JSON, or with `HX-Request` HTML"},
        422: {"description": '`{"detail": "<a sentence saying what to change>"}`'},
    },
)
def entmax_endpoint(
    body: EntmaxRequest,
    request: Request,
    hx_request: str | None = Header(None, include_in_schema=False),
) -> EntmaxResponse | HTMLResponse:
    """entmax_α(scores): the probabilities, the support size and the threshold τ."""
    result = compute_entmax(body)
    if hx_request is None:
        return result
    return request.app.state.templates.TemplateResponse(
        request,
        FRAGMENT,
        {"result": result, "labels": body.labels, "alpha": body.alpha},
    )
