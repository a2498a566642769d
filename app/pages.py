"""HTML pages: the library and the deep-dives.

A deep-dive whose address holds figures' states (a shared figure) runs models while it
renders, so it takes the API's path: the states are read and priced first, for all figures at
once (app.widgets: `WidgetRenderer.plan`, within the page's allowance), the page's tokens go
through app.compute's door (`page_budget`: the client's rate limit, the worker's gate, the
deadline, the disconnect watch) on the event loop, and the page renders in a thread under
that budget. A page the door refuses is shed as an API call is, with its status (429 or 503)
and Retry-After, but its body is still the page: every figure draws its example (answers
kept from earlier renders, no model work), with a sentence saying why and a button that asks
the API for the link's state. A reader who follows a shared link in a crowd reads the paper
at once and sees why the figure is not theirs; the crowd costs the worker no model work; and
a proxy, a monitor or a crawler sees the overload for what it is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from app import model_cards
from app.assets import page_assets
from app.compute import ComputeStopped, page_budget
from app.content import ContentLibrary, Paper, WidgetCall, WidgetRenderer, render_body
from app.figure_export import figure_page
from app.registry import Registry
from app.widgets import PagePlan, WidgetEnv, WidgetError, widget_needs
from app.widgets.results_table import load_results

router = APIRouter()

# Figures that run a model; the first one on a page is what "Skip to the live model" reaches.
LIVE_WIDGETS = frozenset(
    {"pointer-board", "entmax-playground", "seq2seq-inflect", "seq2seq-translate"}
)
LIVE_ANCHOR = "live-model"


def get_and_head(path: str, **kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register GET (documented) and HEAD (hidden from /docs) for one handler."""

    def decorator(handler: Callable[..., Any]) -> Callable[..., Any]:
        router.head(path, include_in_schema=False, **kwargs)(handler)
        return router.get(path, **kwargs)(handler)

    return decorator


def _library(request: Request) -> ContentLibrary:
    return request.app.state.library


@get_and_head("/", response_class=HTMLResponse)
def library_page(request: Request, tag: str | None = None) -> HTMLResponse:
    library = _library(request)
    papers = library.papers(tag=tag or None)
    return request.app.state.templates.TemplateResponse(
        request,
        "index.html",
        {
            "papers": papers,
            "tags": library.tags(),
            "active_tag": tag or None,
            "assets": page_assets({"htmx"}),  # the tag links are boosted
        },
    )


@get_and_head(
    "/papers/{slug}",
    response_class=HTMLResponse,
    responses={404: {"description": "No paper with this slug (an HTML page says so)"}},
)
async def paper_page(request: Request, slug: str) -> Response:
    paper, plan = await run_in_threadpool(read_page, request, slug)
    async with page_budget(request, plan.tokens) as admitted:
        if isinstance(admitted, HTTPException):  # shed: the examples, with the refusal's status
            plan, status, headers = plan.refused(admitted), admitted.status_code, admitted.headers
        else:
            plan, status, headers = plan.under(admitted.check), 200, None
        try:
            response = await run_in_threadpool(render_page, request, paper, plan, status)
        except ComputeStopped as stop:  # the client left: nobody reads the page
            raise HTTPException(stop.status, stop.detail, headers=stop.headers) from stop
    response.headers.update(headers or {})
    return response


def read_page(request: Request, slug: str) -> tuple[Paper, PagePlan]:
    """The paper, and what its render runs for the figures' states in the address."""
    paper = _library(request).get(slug)
    if paper is None:
        raise HTTPException(status_code=404, detail=f"No paper called “{slug}”.")
    plan = request.app.state.render_widget.plan(paper.widgets, request.query_params)
    return paper, replace(plan, page=figure_page(request, str(request.url)))


def render_page(request: Request, paper: Paper, plan: PagePlan, status: int = 200) -> Response:
    live = first_live_widget(paper)
    body = render_body(paper, page_renderer(request, live, plan))
    return request.app.state.templates.TemplateResponse(
        request,
        "paper.html",
        {
            "paper": paper,
            "meta": paper.meta,
            "body": body,
            "assets": page_assets(widget_needs(paper.widgets)),
            "live_anchor": LIVE_ANCHOR if live is not None else None,
        },
        status_code=status,
    )


def page_tokens(app: Any, path: str, query: Mapping[str, str]) -> int:
    """The price of a page render of `path` (/papers/<slug>) with `query`: what its plan
    runs (bench/prices.py, tests/test_prices.py)."""
    paper = app.state.library.get(path.rstrip("/").rsplit("/", 1)[-1])
    if paper is None:
        raise KeyError(path)
    return app.state.render_widget.plan(paper.widgets, query).tokens


@get_and_head(
    "/papers/{slug}/models",
    response_class=HTMLResponse,
    responses={404: {"description": "No paper with this slug, or one without served models"}},
)
def model_cards_page(request: Request, slug: str, registry: Registry) -> HTMLResponse:
    """A model card for every checkpoint the paper's figures serve, built from the manifest,
    its lineage and the results JSON."""
    paper = _library(request).get(slug)
    if paper is None or slug not in model_cards.PAPER_SOURCES:
        raise HTTPException(status_code=404, detail=f"No model cards for “{slug}”.")
    source = model_cards.PAPER_SOURCES[slug]
    env = WidgetEnv(results_dir=_library(request).directory / "results", registry=registry)
    try:
        results, results_problem = load_results(source, env), None
    except WidgetError as exc:
        results, results_problem = {}, str(exc)
    manifest = registry.manifest()
    return request.app.state.templates.TemplateResponse(
        request,
        "model-cards.html",
        {
            "paper": paper,
            "meta": paper.meta,
            "cards": model_cards.build_cards(slug, manifest, results, registry.checkpoint_dir),
            "missing": model_cards.missing(slug, manifest),
            "results_problem": results_problem,
            "generated_by": results.get("generated_by"),
            "assets": page_assets(set()),
        },
    )


def first_live_widget(paper: Paper) -> WidgetCall | None:
    return next((call for call in paper.widgets if call.name in LIVE_WIDGETS), None)


def page_renderer(
    request: Request, live: WidgetCall | None, plan: PagePlan | None = None
) -> WidgetRenderer:
    """The app's widget renderer for this request: widgets see the address's query (a shared
    figure) and draw what `plan` runs for it, and the skip link's target sits just before the
    first live figure."""
    render, query = request.app.state.render_widget, request.query_params

    def render_for_page(call: WidgetCall) -> str:
        html = render(call, query, plan)
        if call is live:
            return f'<div id="{LIVE_ANCHOR}" class="live-anchor" tabindex="-1"></div>{html}'
        return html

    return render_for_page
