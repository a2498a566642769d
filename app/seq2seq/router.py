"""The sparse seq2seq API: inflect a word, translate a sentence, list the options.

A request with the `HX-Request` header gets the HTML fragment (rendered from the same response
object); any other request gets JSON. GET /api/seq2seq/{inflect,translate}/figure is the
widgets' form round trip: htmx gets the figure (one result or the compared α values) with the
α readout and, for an example or a new language, the inputs out of band; a form submitted
without script is sent back to its page, drawn for it.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, ValidationError

from app.compute import Budget, compute_budget, priced_budget, text_cost
from app.numbers import MAX_BEAM_WIDTH
from app.registry import Registry
from app.responses import back_to_page, respond, wants_fragment
from app.seq2seq import service
from app.seq2seq.morphology_labels import feature_labels, language_name
from app.seq2seq.requests import (
    InflectRequest,
    InflectResponse,
    OptionsResponse,
    Task,
    TranslateRequest,
    TranslateResponse,
)
from app.seq2seq.widget import (
    URL_PREFIX,
    WIDGET_ID,
    figure_view,
    form_state,
    nearest_cell,
)
from models.seq2seq_run import run

router = APIRouter(prefix="/api/seq2seq", tags=["sparse seq2seq"])


InflectBudget = Annotated[Budget, Depends(compute_budget(InflectRequest))]
TranslateBudget = Annotated[Budget, Depends(compute_budget(TranslateRequest))]

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
    response = run(payload, registry.get, budget.check)
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


async def figure_price(request: Request) -> int:
    """A figure's tokens: as for the POST routes, times the compared α values."""
    query = request.query_params
    text = query.get("text") or query.get("lemma") or ""
    try:
        beam = min(max(int(query.get("beam_width") or 5), 1), MAX_BEAM_WIDTH)
    except ValueError:
        beam = 1
    columns = len(service.COMPARE_ALPHAS) if query.get("compare") == "on" else 1
    return text_cost(len(text), beam) * columns


FigureBudget = Annotated[Budget, Depends(priced_budget(figure_price))]


def figure(request: Request, task: Task, registry: Registry, budget: Budget) -> Response:
    form = dict(request.query_params)
    new_language = request.headers.get("HX-Trigger-Name") == "language"
    if task == "inflection" and new_language and "language" in form:
        cells = service.options(registry).inflection.features.get(form["language"], [])
        form["features"] = nearest_cell(form.get("features", ""), cells)
    state, alphas = form_state(registry, task, form)
    if not wants_fragment(request):
        return back_to_page(request, state.url_state(), f"#{WIDGET_ID[task]}")
    try:
        drawn = figure_view(registry, state, alphas, budget.check)
    except ValidationError as exc:  # worded for the reader by app.errors
        raise RequestValidationError(exc.errors()) from exc
    context: dict[str, Any] = {
        "widget_id": WIDGET_ID[task],
        "endpoint": f"/api/seq2seq/{URL_PREFIX[task]}/figure",
        "state": state,
        "figure": drawn,
        "readout": state.readout(),
        "inputs": "example" in request.query_params
        or request.headers.get("HX-Trigger-Name") == "language",
        "beam_max": MAX_BEAM_WIDTH,
    }
    if context["inputs"] and task == "inflection":
        options = service.options(registry).inflection
        context |= {
            "options": options,
            "language_names": {code: language_name(code) for code in options.languages},
            "feature_labels": feature_labels(options.features),
        }
    elif context["inputs"]:
        context["options"] = service.options(registry).translation
    views = [drawn["single"]] if drawn["single"] else [c["view"] for c in drawn["columns"]]
    body = next(view["result"] for view in views if view is not None)
    return respond(request, body, "partials/seq2seq/figure-answer.html", context, state.url_state())


@router.get("/inflect/figure", include_in_schema=False)
def inflect_figure(request: Request, registry: Registry, budget: FigureBudget) -> Response:
    """The inflection widget's figure for its form's fields."""
    return figure(request, "inflection", registry, budget)


@router.get("/translate/figure", include_in_schema=False)
def translate_figure(request: Request, registry: Registry, budget: FigureBudget) -> Response:
    """The translation widget's figure for its form's fields."""
    return figure(request, "translation", registry, budget)
