"""Request errors a reader can cause, as one sentence that says what to change.

FastAPI's default 422 body is a list of pydantic error objects; every API here promises
`{"detail": "<sentence>"}` instead, so the page can show it as is. The sentence names the field
(as a JSON path, e.g. `points[2][0]`, with the item counted from 1 beside it: "point 3's x")
and the limit it broke, in our words for every kind of error pydantic reports (never its own
"Input should be …"), repeating at most a few dozen characters of what was sent. A request
from one of the page's widgets (it sends `HX-Request: true`) gets the same sentence in the
reader's terms instead: "Point 3's x", counting from 1 as the board and the coordinates box do.

The app's exception handlers live here too, one per kind of failure:
  a reader's input the model cannot take   422, the exception's own sentence
                                           (models.errors.InvalidInput, whatever the family)
  a model that cannot be served            503, `ModelUnavailable.sentence`, Retry-After
  a decode stopped by its budget           its status (503 over time, 499 client gone)
  an HTTPException                         its status and sentence (`http_error`); Starlette's
                                           bare phrase ("Not Found" for an /api address no
                                           route has) becomes ours; a 503 says Retry-After
  anything else (a bug)                    500, logged with the request id; the reader gets
                                           a sentence naming that id, never the message
Routes raise; they never catch to build an answer themselves.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from app.compute import BUSY_RETRY_AFTER_S, ComputeStopped
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
    "language": "the language",
    "samples": "the number of samples",
    "seed": "the seed",
    "step": "the step",
    "city": "the city",
    "layer": "the layer",
    "head": "the head",
    "mode": "the mode",
    "turn": "your turn",
    "mine": "your answer",
}
READER_ITEMS = {
    "points": "Point",
    "values": "Value",
    "scores": "Score",
    "labels": "Word",
    "mine": "Your pick",
}


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
    """One pydantic error -> a sentence: JSON paths for API clients (with the item counted
    from 1 beside a list index), the page's own words for a reader (`reader=True`)."""
    kind = error.get("type", "")
    ctx = error.get("ctx") or {}
    loc = error.get("loc", ())
    field = field_path(loc)
    if reader:  # a model-wide validator's sentence (no field) is worded for readers too
        name = reader_field(loc) if field else ""
        sentence = _sentence(kind, ctx, error, name, error.get("input"), loc)
        return _capitalised(in_reader_terms(sentence))
    sentence = _sentence(kind, ctx, error, f"`{field}`" if field else "", error.get("input"), loc)
    return counted_from_one(sentence, loc) if kind != "value_error" else sentence


def _capitalised(sentence: str) -> str:
    return sentence[:1].upper() + sentence[1:]


def counted_from_one(sentence: str, loc: Sequence[str | int]) -> str:
    """An API sentence about a list item says which item a reader would call it: "`points[2][0]`
    must be at most 1; got 1.5 (point 3's x, counting from 1)." """
    parts = list(loc)
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    if len(parts) < 2 or not isinstance(parts[1], int) or not sentence.endswith("."):
        return sentence
    item = reader_field(loc)
    if parts[0] not in READER_ITEMS:
        item = f"item {parts[1] + 1}"
    return f"{sentence[:-1]} ({item[:1].lower()}{item[1:]}, counting from 1)."


BACKTICKED = re.compile(r"`([a-z_]+)`")


def in_reader_terms(sentence: str) -> str:
    """A validator's or a model's sentence, written for the API (`beam_width`), in the page's
    words (the beam width)."""
    return BACKTICKED.sub(lambda m: READER_FIELDS.get(m[1], m[1].replace("_", " ")), sentence)


MAX_SHOWN = 40  # characters of a refused value a sentence repeats


def shown(value: Any) -> str:
    """A refused value as a sentence repeats it: short, whatever was sent."""
    try:
        text = repr(value)
    except ValueError:  # an int with more digits than Python turns into text
        return "a number with thousands of digits"
    if len(text) <= MAX_SHOWN:
        return text
    size = len(value) if isinstance(value, str) else len(text)
    return f"{text[:24]}… ({size:,} characters)"


def number_text(value: Any) -> str:
    """A limit as a reader writes it: 1 for 1.0, 1000000 for 1e6."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


# What a list of each field holds, for "must be a list of …".
LIST_OF = {
    "points": "[x, y] pairs, e.g. [[0.1, 0.2], [0.8, 0.1], [0.5, 0.9]]",
    "values": "numbers, e.g. [0.6, 0.1, 0.9]",
    "scores": "numbers, e.g. [0.4, 1.2, 0.6]",
    "labels": "words (JSON strings), one per score",
}
NUMBER_KINDS = ("float_type", "float_parsing", "int_type", "int_parsing", "decimal_parsing")
OBJECT_KINDS = ("model_attributes_type", "model_type", "dict_type", "dataclass_type")
BOUNDS = {
    "greater_than_equal": ("at least", "ge"),
    "greater_than": ("greater than", "gt"),
    "less_than_equal": ("at most", "le"),
    "less_than": ("less than", "lt"),
}


# Sentences that need only the field, the value shown and pydantic's context
TEMPLATES = {
    "extra_forbidden": "{field} is not a field this endpoint knows; remove it.",
    "string_too_short": "{field} must have at least {min_length} characters.",
    "string_pattern_mismatch": "{field} must match the pattern {pattern}; got {got}.",
    "string_type": "{field} must be text (a JSON string); got {got}.",
    "string_unicode": "{field} must be text (a JSON string); got {got}.",
    "bool_type": "{field} must be true or false (1 or 0 in an address); got {got}.",
    "bool_parsing": "{field} must be true or false (1 or 0 in an address); got {got}.",
    "int_from_float": "{field} must be a whole number; got {got}.",
    "int_parsing_size": (
        "{field} must be a number of ordinary size; got one with thousands of digits."
    ),
    "finite_number": "{field} must be a finite number, not {got}.",
    "multiple_of": "{field} must be a multiple of {multiple_of}; got {got}.",
    "literal_error": "{field} must be {expected}; got {got}.",
    "enum": "{field} must be {expected}; got {got}.",
    "none_required": "{field} must be left out (or null); got {got}.",
    **dict.fromkeys(NUMBER_KINDS, "{field} must be a number; got {got}."),
}


def _sentence(
    kind: str,
    ctx: dict[str, Any],
    error: dict[str, Any],
    field: str,
    value: Any,
    loc: Sequence[str | int] = (),
) -> str:
    """The sentence for one error; `field` is already quoted or worded for its audience.
    Every kind of error a request here can meet has its own words; any other gets a sentence
    of ours too, never pydantic's message."""
    got = shown(value)
    if kind in TEMPLATES:
        words = {key: ctx.get(key) for key in ("min_length", "pattern", "expected")}
        multiple_of = number_text(ctx.get("multiple_of"))
        return TEMPLATES[kind].format(field=field, got=got, multiple_of=multiple_of, **words)
    if kind == "value_error":
        # a validator's own sentence, without pydantic's "Value error, " prefix
        return str(ctx.get("error", error.get("msg", "")))
    if kind in BOUNDS:
        words, key = BOUNDS[kind]
        return f"{field} must be {words} {number_text(ctx.get(key))}; got {got}."
    if kind in ("too_short", "too_long", "string_too_long"):
        return _length_sentence(kind, ctx, field, value)
    return _shape_sentence(kind, ctx, field, got, loc)


def _length_sentence(kind: str, ctx: dict[str, Any], field: str, value: Any) -> str:
    sized = hasattr(value, "__len__")
    if kind == "too_short":
        count = len(value) if sized else ctx.get("actual_length")
        return f"{field} needs at least {ctx.get('min_length')} items; it has {count}."
    if kind == "too_long":
        count = len(value) if sized else ctx.get("actual_length")
        return f"{field} takes at most {ctx.get('max_length')} items; it has {count}."
    count = len(value) if sized else "more"
    return f"{field} must have at most {ctx.get('max_length')} characters; it has {count}."


def _shape_sentence(
    kind: str, ctx: dict[str, Any], field: str, got: str, loc: Sequence[str | int]
) -> str:
    """Errors about the body's or a field's JSON shape."""
    if kind == "json_invalid":
        return f"The request body is not valid JSON ({ctx.get('error', 'parse error')})."
    if kind == "json_type":
        return "The request body must be JSON text: send an object of this endpoint's fields."
    if kind == "missing":
        if not field:
            return "The request needs a JSON body."
        quoted = field.startswith("`")
        return f"The request needs a {field} field." if quoted else f"Give {field}."
    if kind in OBJECT_KINDS:
        if not field:
            return (
                "The request body must be a JSON object of this endpoint's fields (/docs lists "
                f"them); got {got}."
            )
        return f"{field} must be a JSON object; got {got}."
    if kind == "list_type":
        if not field.startswith("`"):  # a reader's field is already "the list of points"
            return f"{field} must be a list; got {got}."
        name = next((str(part) for part in loc if isinstance(part, str) and part in LIST_OF), "")
        return f"{field} must be a list of {LIST_OF.get(name, 'values')}; got {got}."
    if kind == "tuple_type":
        pair = "a pair of numbers [x, y]" if field.startswith("`") else "two numbers, x and y"
        return f"{field} must be {pair}; got {got}."
    subject = field or "The request"
    return f"{subject} has a value this endpoint cannot use ({got}); /docs says what it takes."


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
    """The model's sentence; a widget's (`HX-Request`) in the page's words."""
    detail = str(exc)
    if request.headers.get("HX-Request") == "true":
        detail = _capitalised(in_reader_terms(detail))
    return JSONResponse(status_code=422, content={"detail": detail})


# A model that cannot be served stays so until someone fixes its checkpoint: come back later.
UNAVAILABLE_RETRY_AFTER_S = 60


async def model_unavailable_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ModelUnavailable)
    return JSONResponse(
        status_code=503,
        content={"detail": exc.sentence},
        headers={"Retry-After": str(UNAVAILABLE_RETRY_AFTER_S)},
    )


def http_error_sentence(request: Request, exc: StarletteHTTPException) -> str:
    """An HTTPException's detail, or ours where it carries only Starlette's status phrase
    ("Not Found" for an address no route has)."""
    detail = exc.detail
    try:
        phrase = HTTPStatus(exc.status_code).phrase
    except ValueError:  # a status of our own (499)
        phrase = None
    if not isinstance(detail, str) or detail != phrase:
        return str(detail)
    path = request.url.path
    path = path if len(path) <= 60 else f"{path[:50]}…"
    if exc.status_code == 404:
        return (
            f"There is no endpoint at {path}; the API's endpoints are listed at /docs "
            "(and in /openapi.json)."
        )
    return f"The request to {path} cannot be answered ({detail.lower()}); see /docs."


def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    """Any other HTTPException as JSON with a sentence; a 503 always says when to come back."""
    headers = dict(exc.headers or {})
    if exc.status_code == 503:
        headers.setdefault("Retry-After", str(BUSY_RETRY_AFTER_S))
    return JSONResponse(
        status_code=exc.status_code,
        content={"detail": http_error_sentence(request, exc)},
        headers=headers or None,
    )


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
