"""One way every route answers: the response object as JSON, or, for htmx, the HTML fragment
drawn from that same object.

A request from htmx carries `HX-Request: true` and gets `template` rendered with `context`;
any other client gets `result` as JSON (FastAPI validates it against the route's
`response_model`). A fragment may also move the page address: `url_state` maps query keys to
values (None removes a key), applied to the page the request came from (`HX-Current-URL`) and
sent back as `HX-Replace-Url` ending in the figure's `#id` (`anchor`), so a shared link
reproduces the figure and opens scrolled to it. A widget's form
submitted without script (no `HX-Request`) is sent back to its page with that state in the
address (`back_to_page`), where the server draws the same figure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic import BaseModel

UrlState = Mapping[str, str | None]


def error_responses(price: str, unavailable: str) -> dict[int | str, dict[str, Any]]:
    """The refusals a model route documents in /docs: what makes a request cost more (`price`)
    and why its model may be unavailable."""
    return {
        422: {"description": "Unusable input; `detail` is a sentence saying what to change."},
        429: {"description": f"Over this address's rate{price}. Wait `Retry-After` seconds."},
        503: {
            "description": f"{unavailable}, the worker is busy (`Retry-After` says when to try "
            "again), or the decode passed its time limit; `detail` says which."
        },
    }


def wants_fragment(request: Request) -> bool:
    return request.headers.get("HX-Request") == "true"


def page_url(current: str, url_state: UrlState) -> str | None:
    """`current` (an absolute or relative URL) as a path and query with `url_state` applied;
    None when there is no current page to speak of. Scheme and host are dropped: the answer
    can only move the address within this site."""
    parts = urlsplit(current)
    if not parts.path.startswith("/"):
        return None
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    for key, value in url_state.items():
        if value is None:
            query.pop(key, None)
        else:
            query[key] = value
    encoded = urlencode(query, safe=",;")  # lists stay readable in the address bar
    return parts.path + (f"?{encoded}" if encoded else "")


def respond(
    request: Request,
    result: BaseModel,
    template: str,
    context: Mapping[str, Any],
    url_state: UrlState | None = None,
    anchor: str = "",
) -> BaseModel | HTMLResponse:
    """JSON (`result`) or, for htmx, `template` rendered with `context`; see the module."""
    if not wants_fragment(request):
        return result
    response = request.app.state.templates.TemplateResponse(request, template, dict(context))
    current = request.headers.get("HX-Current-URL")
    if url_state is not None and current and (url := page_url(current, url_state)):
        response.headers["HX-Replace-Url"] = url + anchor
    return response


def back_to_page(request: Request, url_state: UrlState, anchor: str) -> RedirectResponse:
    """303 to the page the form was on (its `Referer`, else the library) with `url_state` in
    the address and `anchor` (e.g. "#entmax-playground") after it."""
    url = page_url(request.headers.get("referer") or "/", url_state) or "/"
    return RedirectResponse(url + anchor, status_code=303)
