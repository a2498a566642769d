"""POST /api/entmax: α-entmax of a score vector, as JSON or as the playground's HTML fragment."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel

from app.entmax_service import compute_entmax
from app.responses import respond
from app.schemas.entmax import EntmaxRequest, EntmaxResponse

router = APIRouter(prefix="/api", tags=["entmax"])


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
