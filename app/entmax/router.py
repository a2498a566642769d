"""α-entmax over HTTP: POST /api/entmax answers JSON (or, for htmx, the result fragment);
GET /api/entmax/figure is the playground form's round trip (app.entmax.widget
draws it)."""

from __future__ import annotations

import math

from fastapi import APIRouter, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, ValidationError

from app.entmax.requests import MAX_LABEL_CHARS, EntmaxRequest, EntmaxResponse
from app.entmax.service import compute_entmax
from app.entmax.widget import (
    EXAMPLES,
    PlaygroundState,
    example_matching,
    playground_view,
    url_state_of,
)
from app.responses import back_to_page, respond, wants_fragment

router = APIRouter(prefix="/api", tags=["entmax"])

# The playground form's field names (templates/partials/widgets/entmax-playground.html).
TEXT, SCORE, ALPHA, EXAMPLE = "entmax-text", "entmax-score", "entmax-alpha", "entmax-example"


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


def number(raw: str) -> float | str:
    """A form field as a number; left as text (pydantic then says it is not one) otherwise."""
    try:
        value = float(raw)
    except ValueError:
        return raw
    return value if math.isfinite(value) else raw


@router.get("/entmax/figure", include_in_schema=False)
def entmax_figure(request: Request) -> Response:
    """The playground's figure for its form's fields: bars, statistics and the example menu
    (and the score rows when the sentence or the example changed). Without script the form
    lands here itself and is sent back to its page, which draws the same state."""
    query = request.query_params
    text, raw_scores = query.get(TEXT, ""), query.getlist(SCORE)
    if not wants_fragment(request):
        state = {"entmax-text": text, "entmax-scores": ",".join(raw_scores)}
        return back_to_page(
            request, {**state, "entmax-alpha": query.get(ALPHA)}, "#entmax-playground"
        )
    trigger = request.headers.get("HX-Trigger-Name")
    example = next((e for e in EXAMPLES if e.key == query.get(EXAMPLE)), None)
    if trigger == EXAMPLE and example is not None:
        text, scores = example.text, list(example.scores)
    else:
        tokens = text.split()
        given = [number(raw) for raw in raw_scores]
        scores = [given[i] if i < len(given) else 0.0 for i in range(len(tokens))]
    alpha = number(query.get(ALPHA, ""))
    try:
        EntmaxRequest(
            scores=scores, alpha=alpha, labels=[t[:MAX_LABEL_CHARS] for t in text.split()]
        )
    except ValidationError as exc:  # worded for the reader by app.errors
        raise RequestValidationError(exc.errors()) from exc
    floats = [float(score) for score in scores]
    state = PlaygroundState(text, floats, float(alpha), example_matching(text, floats))
    view = playground_view(state)
    view["rows"] = trigger in (TEXT, EXAMPLE)
    view["example_chosen"] = trigger == EXAMPLE and example is not None
    return respond(
        request, view["result"], "partials/entmax/figure.html", view, url_state_of(state)
    )
