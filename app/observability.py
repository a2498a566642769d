"""What an operator sees: one access-log line per request with a request id, and Prometheus
metrics at /metrics with a latency histogram per route (on app.serve's metrics listener only).

The request id comes from the client's `X-Request-ID` when it is a short token (a load balancer
usually sets one), else a fresh one; it goes back in the response's `X-Request-ID`, so a reader's
bug report and the log line can be matched.
"""

from __future__ import annotations

import logging
import os
import re
import time
import uuid

from fastapi import FastAPI, HTTPException, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest, multiprocess
from prometheus_fastapi_instrumentator import Instrumentator, metrics
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.asgi import HttpMiddleware
from app.limits import send_json_error
from app.security import SECURITY_HEADERS

ACCESS_LOGGER = "papertrace.access"
REQUEST_ID_HEADER = "X-Request-ID"
SAFE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
# Seconds; fine enough to tell a 5 ms entmax call from a 60 ms translation.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
# Method names a client may make up are folded into one label value, as unmatched paths are
# (handler "none"): each distinct label value is a new series, and /metrics must not grow
# with junk traffic.
KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
OTHER_METHOD = "other"

access_log = logging.getLogger(ACCESS_LOGGER)


def configure_logging() -> None:
    """Give the app's loggers a stderr handler when nobody configured logging: uvicorn sets up
    only its own loggers, and without this the access log and model errors would be lost."""
    app_logger = logging.getLogger("papertrace")
    if not app_logger.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
        for name in ("papertrace", "app"):
            logger = logging.getLogger(name)
            logger.addHandler(handler)
            logger.setLevel(logging.INFO)


def request_id_from(scope: Scope) -> str:
    for key, value in scope["headers"]:
        if key == b"x-request-id":
            candidate = value.decode("latin-1")
            if SAFE_REQUEST_ID.fullmatch(candidate):
                return candidate
            break
    return uuid.uuid4().hex


class AccessLog(HttpMiddleware):
    """Outermost middleware: assigns the request id, times the request and logs
    `request_id client method path route status ms`. The client is the reader's address (the
    proxy's X-Forwarded-For when the server trusts that proxy, see app/serve.py); the route is
    the template (`/papers/{slug}`), so log lines group the way the metrics do."""

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        request_id = request_id_from(scope)
        scope.setdefault("state", {})["request_id"] = request_id
        started = time.perf_counter()
        status = 500  # if the app raises before answering, the server sends a 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message)[REQUEST_ID_HEADER] = request_id
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            route = scope.get("route")
            client = scope.get("client")
            access_log.info(
                "request_id=%s client=%s method=%s path=%s route=%s status=%d ms=%.1f",
                request_id,
                client[0] if client else "-",
                scope["method"],
                scope["path"],
                getattr(route, "path", "-"),
                status,
                (time.perf_counter() - started) * 1000,
            )


def install_metrics(app: FastAPI) -> None:
    """/metrics in Prometheus text format: request counts and a latency histogram per route.

    Each app records into a registry of its own, so tests can build many apps in one process.
    Under app.serve ($PROMETHEUS_MULTIPROC_DIR, a fresh folder each start) every worker writes
    its numbers to files there and a scrape, whichever worker answers it, reads them all: the
    sum over workers, those that died included, so a counter never goes back. With a metrics
    port (`app.state.serving.metrics_port`, see app.settings) /metrics answers only there, and
    anywhere else it is the page that does not exist."""
    registry = CollectorRegistry()
    instrumentator = Instrumentator(
        excluded_handlers=["/metrics"],
        should_group_untemplated=True,  # every unmatched path is handler="none"
        registry=registry,
    )
    record = metrics.default(latency_lowr_buckets=LATENCY_BUCKETS, registry=registry)

    def record_with_bounded_labels(info: metrics.Info) -> None:
        if info.method not in KNOWN_METHODS:
            info.method = OTHER_METHOD
        record(info)

    instrumentator.add(record_with_bounded_labels)
    instrumentator.instrument(app)
    metrics_port = app.state.serving.metrics_port

    @app.get("/metrics", include_in_schema=False)
    def metrics_text(request: Request) -> Response:
        if metrics_port is not None and listener_port(request.scope) != metrics_port:
            raise HTTPException(404)
        return Response(generate_latest(scraped(registry)), media_type=CONTENT_TYPE_LATEST)

    if metrics_port is not None:
        app.add_middleware(MetricsListenerOnly, port=metrics_port)


def scraped(registry: CollectorRegistry) -> CollectorRegistry:
    """What a scrape reports: every worker's files in multiprocess mode, else this registry."""
    if "PROMETHEUS_MULTIPROC_DIR" not in os.environ:
        return registry
    every_worker = CollectorRegistry()
    multiprocess.MultiProcessCollector(every_worker)
    return every_worker


def listener_port(scope: Scope) -> int | None:
    """The port of the listener the request came in on (None on a Unix socket)."""
    server = scope.get("server")
    return server[1] if server else None


class MetricsListenerOnly(HttpMiddleware):
    """The metrics port answers /metrics and nothing else: it is not a second way into the site
    around its proxy."""

    def __init__(self, app: ASGIApp, port: int) -> None:
        super().__init__(app)
        self.port = port

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if listener_port(scope) == self.port and scope["path"] != "/metrics":
            detail = "This port serves the metrics at /metrics only; readers use the site's proxy."
            await send_json_error(send, 404, detail, SECURITY_HEADERS)
            return
        await self.app(scope, receive, send)
