"""The ASGI app: `uvicorn app.main:app`. `create_app()` wires content, templates, static files,
the model registry and every router (the families' in app/pointer, app/seq2seq, app/entmax;
the pages, health checks and API docs at app/ root)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import Response
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.assets import PLOTLY_JS, PLOTLY_URL, STATIC_DIR
from app.content import ContentLibrary
from app.docs import router as docs_router
from app.entmax.router import router as entmax_router
from app.errors import (
    http_error,
    install_error_handlers,
    method_not_allowed,
    unparseable_body,
)
from app.health import router as health_router
from app.pages import router as pages_router
from app.pointer.router import router as pointer_router
from app.registry import ModelRegistry
from app.routing.router import router as routing_router
from app.seq2seq.router import router as seq2seq_router
from app.serving import install_serving, warm_up
from app.settings import ServingSettings
from app.static_cache import CachedStaticFiles, PrecompressedFile
from app.widgets import WidgetEnv, WidgetRenderer, load_providers
from models import pointer_run, seq2seq_run

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES_DIR = ROOT / "templates"

ROUTERS: tuple[APIRouter, ...] = (
    docs_router,
    entmax_router,
    health_router,
    pages_router,
    pointer_router,
    routing_router,
    seq2seq_router,
)
"""Every router, in the order the app includes them."""


def default_content_dir() -> Path:
    return Path(os.environ.get("PAPERTRACE_CONTENT_DIR", ROOT / "content"))


def served_checkpoints() -> tuple[str, ...]:
    """What start-up loads and /readyz answers for: every family's SERVED table."""
    return pointer_run.served_names() + seq2seq_run.served_names()


def create_app(
    content_dir: Path | None = None,
    checkpoint_dir: Path | None = None,
    served: tuple[str, ...] | None = None,
) -> FastAPI:
    """The site. `content_dir` (or $PAPERTRACE_CONTENT_DIR) lets tests serve fixture papers;
    `checkpoint_dir` (or $PAPERTRACE_CHECKPOINT_DIR) lets them serve other checkpoints, and
    `served` (default `served_checkpoints()`) says which of those start-up loads."""
    content_dir = content_dir or default_content_dir()
    checkpoint_dir = checkpoint_dir or Path(
        os.environ.get("PAPERTRACE_CHECKPOINT_DIR", ROOT / "checkpoints")
    )
    serving = ServingSettings.from_env()
    plotly_file = PrecompressedFile(PLOTLY_JS, media_type="text/javascript")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.library.load()  # broken content files are logged now, not at first visit
        await warm_up(app, serving, plotly_file)
        yield

    app = FastAPI(
        title="PaperTrace",
        summary="Interactive deep-dives into ML papers: read the paper, run the model.",
        lifespan=lifespan,
        # app/docs.py serves Swagger UI from static/vendor; FastAPI's own pages load it
        # from a CDN with an inline script, which the CSP (app/security.py) refuses.
        docs_url=None,
        redoc_url=None,
    )
    attach_state(
        app, content_dir, checkpoint_dir, served_checkpoints() if served is None else served
    )
    serve_plotly(app, plotly_file)
    app.mount("/static", CachedStaticFiles(directory=STATIC_DIR), name="static")
    include_routers(app)
    install_error_handlers(app)  # after the routers: their families declared reader errors
    install_not_found_page(app)
    install_serving(app, serving)
    return app


def attach_state(
    app: FastAPI, content_dir: Path, checkpoint_dir: Path, served: tuple[str, ...]
) -> None:
    """What routes and widgets reach through `app.state`: the papers, the model registry, the
    templates and the widget renderer."""
    templates = Jinja2Templates(directory=TEMPLATES_DIR)
    registry = ModelRegistry(checkpoint_dir, served)
    load_providers()
    app.state.library = ContentLibrary(content_dir)
    app.state.registry = registry
    app.state.templates = templates
    app.state.render_widget = WidgetRenderer(
        templates.env, WidgetEnv(results_dir=content_dir / "results", registry=registry)
    )


def serve_plotly(app: FastAPI, plotly_file: PrecompressedFile) -> None:
    @app.get(PLOTLY_URL, include_in_schema=False)
    @app.head(PLOTLY_URL, include_in_schema=False)
    def plotly_js(request: Request) -> Response:
        return plotly_file.response(request)


def include_routers(app: FastAPI) -> None:
    """The routers of `ROUTERS`, in that order."""
    for router in ROUTERS:
        app.include_router(router)


def install_not_found_page(app: FastAPI) -> None:
    """A page that does not exist gets the 404 page; the API and every other status keep their
    JSON answers, worded by app.errors for an unreadable body and a wrong method."""
    templates = app.state.templates

    @app.exception_handler(StarletteHTTPException)
    async def not_found_page(request: Request, exc: StarletteHTTPException) -> Response:
        if (unreadable := unparseable_body(exc)) is not None:
            return unreadable
        if exc.status_code == 405:
            return method_not_allowed(request, exc)
        if exc.status_code < 200 or exc.status_code in (204, 304):  # no body allowed
            return await http_exception_handler(request, exc)
        path = request.url.path
        if exc.status_code != 404 or path == "/api" or path.startswith("/api/"):
            return http_error(request, exc)  # JSON, with our sentence for a bare status
        return templates.TemplateResponse(
            request, "404.html", {"path": request.url.path}, status_code=404
        )


app = create_app()
