"""The sparse seq2seq API: inflect a word, translate a sentence, list the options.

A request with the `HX-Request` header gets the HTML fragment the widget swaps in (rendered
from the same response object); any other request gets JSON.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel

from app import seq2seq_service as service
from app.compute import Budget, compute_budget, text_cost
from app.responses import respond
from app.schemas.seq2seq import (
    InflectRequest,
    InflectResponse,
    OptionsResponse,
    TranslateRequest,
    TranslateResponse,
)
from app.services import Registry

router = APIRouter(prefix="/api/seq2seq", tags=["sparse seq2seq"])



def request_cost(payload: InflectRequest | TranslateRequest) -> int:
    """Rate-limit tokens and gate share: characters × beam width."""
    text = payload.text if isinstance(payload, TranslateRequest) else payload.lemma
    return text_cost(len(text), payload.beam_width)


InflectBudget = Annotated[Budget, Depends(compute_budget(InflectRequest, request_cost))]
TranslateBudget = Annotated[Budget, Depends(compute_budget(TranslateRequest, request_cost))]

ERRORS = {
    422: {"description": "A sentence saying what to change in the request"},
    429: {
        "description": "Over this address's rate; a request costs more the longer the text "
        "and the wider the beam. Wait `Retry-After` seconds."
    },
    503: {
        "description": "The model for this α is not trained yet or its checkpoint is broken, "
        "the worker is busy (`Retry-After` says when to try again), or the decode passed its "
        "time limit"
    },
}


def answer(
    request: Request, payload: InflectRequest | TranslateRequest, registry: Registry, budget: Budget
) -> BaseModel | HTMLResponse:
    """The family's Trace as JSON, or as the figure for htmx. A reader's error, a missing
    model or a stopped decode is answered by app.errors' handlers."""
    response = service.run(registry, payload, budget.check)
    compact = request.query_params.get("compact") == "1"
    view = service.result_view(response, compact)
    return respond(request, response, "partials/seq2seq/result.html", view)


@router.post("/inflect", response_model=InflectResponse, responses=ERRORS)
def inflect(
    request: Request, payload: InflectRequest, registry: Registry, budget: InflectBudget
) -> BaseModel | HTMLResponse:
    """Inflect a lemma: the n-best forms and, per output character, attention and output
    distributions with their support sizes; beside them the lexicon's forms for the cell, the
    lemma's split and whether the best form is right."""
    return answer(request, payload, registry, budget)


@router.post("/translate", response_model=TranslateResponse, responses=ERRORS)
def translate(
    request: Request, payload: TranslateRequest, registry: Registry, budget: TranslateBudget
) -> BaseModel | HTMLResponse:
    """Translate an English sentence to German: the n-best and the per-subword trace; when the
    sentence is in the corpus, its translation there, its split and whether the best matches."""
    return answer(request, payload, registry, budget)


@router.get("/options", response_model=OptionsResponse)
def options(registry: Registry) -> OptionsResponse:
    """Languages, feature cells per language, trained α values and the examples."""
    return service.options(registry)
