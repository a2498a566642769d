"""The sparse seq2seq API: inflect a word, translate a sentence, list the options.

A request with the `HX-Request` header gets the HTML fragment (rendered from the same response
object); any other request gets JSON. GET /api/seq2seq/{inflect,translate}/figure is the
widgets' form round trip: FastAPI reads the widget's figure request (InflectFigure,
TranslateFigure) from the query, and htmx gets the figure (one result or the compared α values)
with the α readout and, for an example, the inputs out of band; a form submitted without script
is sent back to its page, drawn for it. A new language first asks GET /api/seq2seq/inflect/cells
for its features menu alone, which then asks for the figure: a refused lemma never keeps the
old language's cells.

The two figure routes are made by `figure_route` (no `from __future__ import annotations` here:
FastAPI reads the route's parameter types from the function the factory builds).
"""

from collections.abc import Callable
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel

from app.compute import Budget, compute_budget
from app.export_routes import add_export_route
from app.figure_export import Draw, figure_page
from app.registry import ModelRegistry, Registry
from app.responses import back_to_page, error_responses, respond, wants_fragment
from app.seq2seq import service
from app.seq2seq.export import export_svg, responses, seq2seq_takeaway
from app.seq2seq.requests import (
    FigureOptions,
    InflectCells,
    InflectFigure,
    InflectRequest,
    InflectResponse,
    OptionsResponse,
    TranslateFigure,
    TranslateRequest,
    TranslateResponse,
)
from app.seq2seq.widget import (
    controls,
    figure_view,
    inflection_labels,
    language_cells,
    learning,
    names,
)
from models.seq2seq_run import run

router = APIRouter(prefix="/api/seq2seq", tags=["sparse seq2seq"])


InflectBudget = Annotated[Budget, Depends(compute_budget(InflectRequest))]
TranslateBudget = Annotated[Budget, Depends(compute_budget(TranslateRequest))]

ERRORS = error_responses(
    "; a request costs more the longer the text and the wider the beam",
    "The model for this α is not trained yet or its checkpoint is broken",
)


def answer(
    request: Request,
    payload: InflectRequest | TranslateRequest,
    registry: Registry,
    budget: Budget,
) -> BaseModel | Response:
    """The family's Trace as JSON, or as the figure for htmx: the result for a POST, the
    widget's figure (its columns, readout and maybe inputs) for a figure request. A reader's
    error, a missing model or a stopped decode is answered by app.errors' handlers."""
    if isinstance(payload, FigureOptions):
        return figure_answer(request, payload, registry, budget)
    response = run(payload, registry.get, budget.check)
    compact = request.query_params.get("compact") == "1"
    view = service.result_view(response, compact)
    return respond(request, response, "partials/seq2seq/result.html", view)


def figure_answer(
    request: Request, figure: FigureOptions, registry: Registry, budget: Budget
) -> BaseModel | Response:
    task = figure.TASK
    context = controls(task, figure)
    address = figure.address(context["prefix"])
    if not wants_fragment(request):
        return back_to_page(request, address, f"#{context['widget_id']}")
    drawn = figure_view(registry, figure, budget.check)
    made = seq2seq_takeaway(figure_page(request), figure, drawn)
    context |= {
        "figure": drawn,
        "inputs": figure.example is not None,
        "takeaway": made,
        "learning": learning(figure),
    }
    if context["inputs"]:
        options = service.options(registry)
        chosen = options.inflection if task == "inflection" else options.translation
        context["options"] = chosen
        if task == "inflection":
            context |= inflection_labels(chosen)
    body = responses(drawn)[0]  # the first column that answered: the JSON body
    anchor = f"#{context['widget_id']}"
    return respond(request, body, "partials/seq2seq/figure-answer.html", context, address, anchor)


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


@router.get("/inflect/cells", include_in_schema=False, response_model=None)
def inflect_cells(
    request: Request, asked: Annotated[InflectCells, Query()], registry: Registry
) -> BaseModel | Response:
    """The features menu for a newly chosen language (JSON: its cells and the one chosen); the
    menu asks for the figure as it arrives. No model runs, so nothing is priced."""
    options = service.options(registry).inflection
    cells = language_cells(options, asked)
    state = {"language": cells.language, "features": cells.chosen}
    context = {
        **names("inflection"),
        "state": state,
        "options": options,
        "follow": True,
        **inflection_labels(options),
    }
    return respond(request, cells, "partials/seq2seq/features-select.html", context)


def figure_route(path: str, schema: type[InflectFigure] | type[TranslateFigure]) -> None:
    """GET /api/seq2seq/<path>/figure: the widget's figure for its form's fields."""
    budget_of = Annotated[Budget, Depends(compute_budget(schema, "query"))]

    def route(
        request: Request, figure: Annotated[schema, Query()], registry: Registry, budget: budget_of
    ) -> BaseModel | Response:
        return answer(request, figure, registry, budget)

    def drawing(registry: ModelRegistry, figure: FigureOptions, check: Callable[[], None]) -> Draw:
        drawn = figure_view(registry, figure, check)
        return lambda templates, page: export_svg(templates, page, figure, drawn)

    route.__doc__ = f"The {schema.TASK} widget's figure for its form's fields."
    router.get(f"/{path}/figure", include_in_schema=False, response_model=None)(route)
    add_export_route(router, f"/{path}/figure", schema, drawing, lambda _: f"papertrace-{path}")


figure_route("inflect", InflectFigure)
figure_route("translate", TranslateFigure)
