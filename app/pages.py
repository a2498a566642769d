"""HTML pages: the library and the deep-dives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from app import model_cards
from app.assets import page_assets
from app.content import ContentLibrary, Paper, WidgetCall, WidgetRenderer, render_body
from app.widgets import WidgetEnv, WidgetError, widget_needs
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
def paper_page(request: Request, slug: str) -> HTMLResponse:
    paper = _library(request).get(slug)
    if paper is None:
        raise HTTPException(status_code=404, detail=f"No paper called “{slug}”.")
    live = first_live_widget(paper)
    body = render_body(paper, page_renderer(request, live))
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
    )


@get_and_head(
    "/papers/{slug}/models",
    response_class=HTMLResponse,
    responses={404: {"description": "No paper with this slug, or one without served models"}},
)
def model_cards_page(request: Request, slug: str) -> HTMLResponse:
    """A model card for every checkpoint the paper's figures serve, built from the manifest,
    its lineage and the results JSON."""
    paper = _library(request).get(slug)
    if paper is None or slug not in model_cards.PAPER_SOURCES:
        raise HTTPException(status_code=404, detail=f"No model cards for “{slug}”.")
    registry = request.app.state.registry
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


def page_renderer(request: Request, live: WidgetCall | None) -> WidgetRenderer:
    """The app's widget renderer for this request: widgets see the address's query (a shared
    figure), and the skip link's target sits just before the first live figure."""
    render, query = request.app.state.render_widget, request.query_params

    def render_for_page(call: WidgetCall) -> str:
        html = render(call, query)
        if call is live:
            return f'<div id="{LIVE_ANCHOR}" class="live-anchor" tabindex="-1"></div>{html}'
        return html

    return render_for_page
