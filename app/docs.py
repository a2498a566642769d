"""/docs: Swagger UI for the JSON API, served from static/vendor (no CDN) and started by
static/js/api-docs.js (no inline script), so it works offline and under the site's CSP."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

router = APIRouter()

SWAGGER_VERSION = "5.35.0"


@router.get("/docs", response_class=HTMLResponse, include_in_schema=False)
def api_docs(request: Request) -> HTMLResponse:
    return request.app.state.templates.TemplateResponse(
        request,
        "api-docs.html",
        {
            "openapi_url": request.app.openapi_url,
            "swagger_js": f"/static/vendor/swagger-ui-bundle-{SWAGGER_VERSION}.js",
            "swagger_css": f"/static/vendor/swagger-ui-{SWAGGER_VERSION}.css",
        },
    )
