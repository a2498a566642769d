"""The ASGI app: `uvicorn app.main:app`. `create_app()` wires content, templates, static files,
the model registry and every router in app/routes."""

from __future__ import annotations

import importlib
import os
import pkgutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import Response
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException

from app import routes as routes_package
from app.assets import PLOTLY_JS, PLOTLY_URL, STATIC_DIR
from app.content import ContentLibrary
from app.errors import install_error_handlers, method_not_allowed, unparseable_body
from app.services import ModelRegistry
from app.serving import install_serving, warm_up
from app.settings import ServingSettings
from app.static_cache import CachedStaticFiles, PrecompressedFile
from app.widgets import WidgetEnv, WidgetRenderer, load_providers

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES_DIR = ROOT / "templates"


def default_content_dir() -> Path:
    return Path(os.environ.get("PAPERTRACE_CONTENT_DIR", ROOT / "content"))


def create_app(
    content_dir: Path | None = None,
    checkpoint_dir: Path | None = None,
) -> FastAPI:
    """The site. `content_dir` (or $PAPERTRACE_CONTENT_DIR) lets tests serve fixture papers;
    `checkpoint_dir` (or $PAPERTRACE_CHECKPOINT_DIR) lets them serve other checkpoints."""
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
        # app/routes/docs.py serves Swagger UI from static/vendor; FastAPI's own pages load it
        # from a CDN with an inline script, which the CSP (app/security.py) refuses.
        docs_url=None,
        redoc_url=None,
    )
    attach_state(app, content_dir, checkpoint_dir)
    serve_plotly(app, plotly_file)
    app.mount("/static", CachedStaticFiles(directory=STATIC_DIR), name="static")
    include_routers(app)
    install_error_handlers(app)  # after the routers: their families declared reader errors
    install_not_found_page(app)
    install_serving(app, serving)
    return app


def attach_state(app: FastAPI, content_dir: Path, checkpoint_dir: Path) -> None:
    """What routes and widgets reach through `app.state`: the papers, the model registry, the
    templates and the widget renderer."""
    templates = Jinja2Templates(directory=TEMPLATES_DIR)
    registry = ModelRegistry(checkpoint_dir)
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
    """Each module in app/routes contributes one APIRouter named `router`."""
    for module in pkgutil.iter_modules(routes_package.__path__):
        router_module = importlib.import_module(f"{routes_package.__name__}.{module.name}")
        app.include_router(router_module.router)


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
        if exc.status_code != 404 or request.url.path.startswith("/api/"):
            return await http_exception_handler(request, exc)
        return templates.TemplateResponse(
            request, "404.html", {"path": request.url.path}, status_code=404
        )


app = create_app()
