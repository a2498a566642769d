"""Request errors a reader can cause, as one sentence that says what to change.

FastAPI's default 422 body is a list of pydantic error objects; every API here promises
`{"detail": "<sentence>"}` instead, so the page can show it as is. The sentence names the field
(as a JSON path, e.g. `points[2][0]`) and the limit it broke. A request from one of the
page's widgets (it sends `HX-Request: true`) gets the same sentence in the reader's terms
instead: "Point 3's x", counting from 1 as the board and the coordinates box do.

The app's exception handlers live here too, one per kind of failure:
  a reader's input the model cannot take   422, the exception's own sentence
                                           (models.errors.InvalidInput, whatever the family)
  a model that cannot be served            503, `ModelUnavailable.sentence`
  a decode stopped by its budget           its status (503 over time, 499 client gone)
  anything else (a bug)                    500, logged with the request id; the reader gets
                                           a sentence naming that id, never the message
Routes raise; they never catch to build an answer themselves.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from app.compute import ComputeStopped
from app.registry import ModelUnavailable
from models.errors import InvalidInput

logger = logging.getLogger("papertrace.errors")


SERVER_ERROR = (
    "The server failed on this request; it is logged under the X-Request-ID {request_id}. "
    "Try again later."
)


def field_path(loc: Sequence[str | int]) -> str:
    """("body", "points", 2, 0) -> "points[2][0]"; the leading "body"/"query" is dropped."""
    parts = list(loc)
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    path = ""
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


# What a widget calls each request field; list items are counted from 1.
READER_FIELDS = {
    "points": "the list of points",
    "values": "the list of values",
    "scores": "the list of scores",
    "labels": "the list of words",
    "alpha": "α",
    "inference_alpha": "the decoding α",
    "beam_width": "the beam width",
    "decoder": "the decoder",
    "model": "the model",
    "lemma": "the word",
    "features": "the features",
    "text": "the sentence",
}
READER_ITEMS = {"points": "Point", "values": "Value", "scores": "Score", "labels": "Word"}


def reader_field(loc: Sequence[str | int]) -> str:
    """("body", "points", 2, 0) -> "Point 3's x"; ("body", "beam_width") -> "the beam width"."""
    parts = list(loc)
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    if not parts:
        return ""
    name, rest = str(parts[0]), parts[1:]
    if rest and isinstance(rest[0], int) and name in READER_ITEMS:
        item = f"{READER_ITEMS[name]} {rest[0] + 1}"
        if len(rest) > 1 and rest[1] in (0, 1):
            return f"{item}'s {'xy'[int(rest[1])]}"
        return item
    return READER_FIELDS.get(name, name.replace("_", " "))


def error_sentence(error: dict[str, Any], reader: bool = False) -> str:
    """One pydantic error -> a sentence: JSON paths for API clients, the page's own words
    for a reader (`reader=True`)."""
    kind = error.get("type", "")
    ctx = error.get("ctx") or {}
    loc = error.get("loc", ())
    field = field_path(loc)
    if reader and field:
        name = reader_field(loc)
        return _capitalised(_sentence(kind, ctx, error, name, error.get("input")))
    return _sentence(kind, ctx, error, f"`{field}`" if field else "", error.get("input"))


def _capitalised(sentence: str) -> str:
    return sentence[:1].upper() + sentence[1:]


def _sentence(kind: str, ctx: dict[str, Any], error: dict[str, Any], field: str, value: Any) -> str:
    """The sentence for one error; `field` is already quoted or worded for its audience."""
    if kind == "json_invalid":
        return f"The request body is not valid JSON ({ctx.get('error', 'parse error')})."
    if kind == "missing":
        if not field:
            return "The request needs a JSON body."
        quoted = field.startswith("`")
        return f"The request needs a {field} field." if quoted else f"Give {field}."
    if kind == "extra_forbidden":
        return f"{field} is not a field this endpoint knows; remove it."
    if kind == "too_short":
        return f"{field} needs at least {ctx.get('min_length')} items; it has {len(value)}."
    if kind == "too_long":
        count = len(value) if hasattr(value, "__len__") else ctx.get("actual_length")
        return f"{field} takes at most {ctx.get('max_length')} items; it has {count}."
    if kind == "string_too_long":
        return f"{field} must have at most {ctx.get('max_length')} characters; it has {len(value)}."
    if kind == "string_too_short":
        return f"{field} must have at least {ctx.get('min_length')} characters."
    if kind in ("float_type", "float_parsing", "int_type", "int_parsing"):
        return f"{field} must be a number; got {value!r}."
    if kind == "finite_number":
        return f"{field} must be a finite number, not {value!r}."
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        words = {
            "greater_than_equal": ("at least", "ge"),
            "greater_than": ("greater than", "gt"),
            "less_than_equal": ("at most", "le"),
            "less_than": ("less than", "lt"),
        }[kind]
        return f"{field} must be {words[0]} {ctx.get(words[1])}; got {value!r}."
    if kind == "literal_error":
        return f"{field} must be {ctx.get('expected')}; got {value!r}."
    if kind == "value_error":
        # a validator's own sentence, without pydantic's "Value error, " prefix
        return str(ctx.get("error", error.get("msg", "")))
    message = str(error.get("msg", "invalid value")).rstrip(".")
    return f"{field}: {message}." if field else f"{message}."


async def validation_error_handler(request: Request, exc: RequestValidationError) -> JSONResponse:
    if request.method == "POST" and (wrong_type := not_json(request)) is not None:
        return wrong_type
    errors = list(exc.errors())
    reader = request.headers.get("HX-Request") == "true"
    detail = error_sentence(errors[0], reader) if errors else "The request is not valid."
    if len(errors) > 1:
        detail += f" ({len(errors) - 1} more problem{'s' if len(errors) > 2 else ''} after that.)"
    return JSONResponse(status_code=422, content={"detail": detail})


def unparseable_body(exc: StarletteHTTPException) -> JSONResponse | None:
    """FastAPI answers a JSON body it cannot parse for a reason other than syntax (not UTF-8,
    a number with more digits than Python converts, nesting deeper than the parser's stack)
    with a bare 400 "There was an error parsing the body"; the reader gets a 422 sentence
    instead. None for any other exception."""
    cause = exc.__cause__
    if exc.status_code != 400 or cause is None:
        return None
    if isinstance(cause, UnicodeDecodeError):
        problem = f"it is not UTF-8 text (byte {cause.start})"
    elif isinstance(cause, RecursionError):
        problem = "it is nested too deeply; send flat lists of numbers"
    elif isinstance(cause, ValueError) and "digits" in str(cause):
        problem = "it has a number with thousands of digits; send ordinary numbers"
    else:
        problem = "the server could not parse it"
    detail = f"The request body is not valid JSON: {problem}."
    return JSONResponse(status_code=422, content={"detail": detail})


def not_json(request: Request) -> JSONResponse | None:
    """415 for a body sent as something other than JSON (a form, plain text); None when the
    request says JSON or says nothing (FastAPI then parses it as JSON)."""
    content_type = request.headers.get("content-type")
    if content_type is None:
        return None
    media_type = content_type.split(";")[0].strip().lower()
    if media_type == "application/json" or media_type.endswith("+json"):
        return None
    detail = (
        f"The request body is {media_type or 'of no type'}; this endpoint takes JSON: send it "
        "with `Content-Type: application/json`."
    )
    return JSONResponse(status_code=415, content={"detail": detail})


# Methods a route here may serve; an Allow header names those that match the path.
CANDIDATE_METHODS = ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT")


def allowed_methods(request: Request) -> str:
    """The methods some route serves at this path, for a 405's `Allow` header: Starlette
    names only the first route that matched the path, and GET and HEAD are separate routes
    here."""
    routes = request.app.router.routes
    methods = [
        method
        for method in CANDIDATE_METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] == Match.FULL for route in routes
        )
    ]
    return ", ".join(sorted(methods))


def method_not_allowed(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    """405 with a sentence; `Allow` as the routes say, else as the raiser set it (static
    files, whose mount takes every method)."""
    allow = allowed_methods(request) or (exc.headers or {}).get("Allow", "")
    detail = f"{request.method} is not allowed here; this address answers {allow}."
    return JSONResponse(status_code=405, content={"detail": detail}, headers={"Allow": allow})


async def reader_error_handler(request: Request, exc: Exception) -> JSONResponse:
    return JSONResponse(status_code=422, content={"detail": str(exc)})


async def model_unavailable_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ModelUnavailable)
    return JSONResponse(status_code=503, content={"detail": exc.sentence})


async def compute_stopped_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ComputeStopped)
    return JSONResponse(status_code=exc.status, content={"detail": exc.detail}, headers=exc.headers)


def request_id(request: Request) -> str:
    """The id app.observability.AccessLog gave this request ("-" outside that middleware)."""
    return str(getattr(request.state, "request_id", "-"))


async def server_error_handler(request: Request, exc: Exception) -> JSONResponse:
    """A bug: logged with the request id and the traceback; the reader gets the id only.
    (app.security.SecurityHeaders usually has sent this answer already; the log is the point.)"""
    rid = request_id(request)
    logger.error(
        "request_id=%s unhandled %s on %s %s",
        rid,
        type(exc).__name__,
        request.method,
        request.url.path,
        exc_info=exc,
    )
    return JSONResponse(status_code=500, content={"detail": SERVER_ERROR.format(request_id=rid)})


def install_error_handlers(app: FastAPI) -> None:
    """Every handler above."""
    app.add_exception_handler(RequestValidationError, validation_error_handler)
    app.add_exception_handler(InvalidInput, reader_error_handler)
    app.add_exception_handler(ModelUnavailable, model_unavailable_handler)
    app.add_exception_handler(ComputeStopped, compute_stopped_handler)
    app.add_exception_handler(Exception, server_error_handler)
