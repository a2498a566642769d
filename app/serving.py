"""How the app is served: the middleware stack in one place, and the start-up warm-up.

Outermost first, the stack is
  AccessLog        request id in and out, one log line per request (sees every status)
  metrics          Prometheus latency histogram per route, 413s and 429s included
  SecurityHeaders  CSP, nosniff, Referrer-Policy, frame-ancestors, on every response
  CORS             only when $PAPERTRACE_CORS_ORIGINS lists origins
  GZip             HTML, JSON, JS and CSS over ~1 KB
  BodySizeLimit    413 before any parsing
  RateLimit        429 + Retry-After per client IP on /api/*
so a request refused by a limit still gets an id, a log line, a metric and the headers.
"""

from __future__ import annotations

import gc
from typing import Any

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool
from starlette.middleware.gzip import GZipMiddleware

from app.compute import ComputeGate
from app.limits import (
    API_PREFIX,
    BodySizeLimit,
    RateLimit,
    RateLimiter,
    limit_malloc_arenas,
    release_free_memory,
)
from app.observability import AccessLog, configure_logging, install_metrics
from app.security import SecurityHeaders, allow_cross_origin
from app.settings import ServingSettings
from app.static_cache import PrecompressedFile
from models.entmax import warm_up as compile_entmax_kernels
from models.threads import set_intra_op_threads

# Level 6: a deep-dive page comes out within 1% of level 9 (19.0 vs 18.9 KB) for a fraction
# of the CPU per request.
GZIP_LEVEL = 6


def install_serving(app: FastAPI, settings: ServingSettings) -> None:
    """Add the middleware stack (see the module docstring) and document the limits' answers."""
    configure_logging()
    app.state.serving = settings
    app.state.compute_gate = ComputeGate(settings.compute_capacity)
    app.state.rate_limiter = None
    if settings.rate_limited:
        limiter = app.state.rate_limiter = RateLimiter(settings.rate_per_s, settings.rate_burst)
        app.add_middleware(RateLimit, limiter=limiter)
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(
        GZipMiddleware, minimum_size=settings.gzip_min_bytes, compresslevel=GZIP_LEVEL
    )
    allow_cross_origin(app, settings.cors_origins)
    app.add_middleware(SecurityHeaders)
    install_metrics(app)
    app.add_middleware(AccessLog)
    _document_limits(app, settings)


def _document_limits(app: FastAPI, settings: ServingSettings) -> None:
    """Add the limits' answers (413, 415, 429) to every /api/* operation in the OpenAPI
    schema."""
    build_schema = app.openapi
    too_large = {
        "description": f"The body is over {settings.max_body_bytes:,} bytes; "
        '`{"detail": "<sentence>"}`'
    }
    not_json = {
        "description": 'The body was sent as something other than JSON; `{"detail": "<sentence>"}`'
    }
    too_many = {
        "description": "Too many requests from this client; wait `Retry-After` seconds. "
        '`{"detail": "<sentence>"}`'
    }

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = build_schema()
        for path, operations in schema.get("paths", {}).items():
            if not path.startswith(API_PREFIX):
                continue
            for method, operation in operations.items():
                responses = operation.setdefault("responses", {})
                if method == "post":
                    responses.setdefault("413", too_large)
                    responses.setdefault("415", not_json)
                if settings.rate_limited:
                    responses.setdefault("429", too_many)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented extension point


async def warm_up(app: FastAPI, settings: ServingSettings, *large_files: PrecompressedFile) -> None:
    """Start-up work, so the first reader pays for none of it: torch threads, the entmax kernels
    compiled, every manifest model loaded and verified (a failing one is disabled and logged;
    start-up goes on), and the large static files compressed."""
    set_intra_op_threads(settings.torch_threads)  # the settings own the count; set it once
    limit_malloc_arenas()
    await run_in_threadpool(compile_entmax_kernels)
    await run_in_threadpool(app.state.registry.warm)
    for large_file in large_files:
        await run_in_threadpool(large_file.gzipped)
    freeze_start_up_objects()
    release_free_memory()  # what parsing the checkpoints and reference files left behind


def freeze_start_up_objects() -> None:
    """Put what start-up made (modules, models, the reference files' entries: about 300,000
    objects, all kept for the worker's life) out of the garbage collector's reach. Before, each
    full collection walked them all and held every thread of the worker for about 180 ms: under
    the storm of bench/load.py that was /healthz's p99 (150 ms; 49 ms with the freeze)."""
    gc.collect()
    gc.freeze()
