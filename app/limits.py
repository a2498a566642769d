"""Limits that protect the workers: request body size, a per-client rate on /api/*, and the
malloc arenas each worker keeps (the torch thread count is app.settings' and is set in
app.serving).

Both middlewares are plain ASGI, so they act before FastAPI reads or parses anything. The rate
limiter keeps its buckets in process memory: it is a soft guard against one runaway client, not a
quota. With N workers (or N replicas) each keeps its own buckets, so a client that the load
balancer spreads over them gets up to N times the configured rate.
"""

from __future__ import annotations

import ctypes
import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from fastapi import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.asgi import HttpMiddleware

API_PREFIX = "/api/"


async def send_json_error(
    send: Send, status: int, detail: str, headers: dict[str, str] | None = None
) -> None:
    body = json.dumps({"detail": detail}).encode()
    raw_headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    raw_headers += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": body})


def too_large_sentence(limit: int, size: int | None = None) -> str:
    """`size` is the declared length; a chunked body is refused before its end is known."""
    if size is None:
        told = f"is over {limit:,} bytes, the most this server accepts"
    else:
        told = f"is {size:,} bytes; this server accepts at most {limit:,} bytes"
    return f"The request body {told}. Send fewer points or values, or a shorter text."


class BodySizeLimit(HttpMiddleware):
    """413 for a body over `max_bytes`: at once when Content-Length says so, otherwise as soon
    as the streamed body passes the limit (chunked uploads carry no length)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        super().__init__(app)
        self.max_bytes = max_bytes

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await send_json_error(send, 413, too_large_sentence(self.max_bytes, declared))
            return

        received = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    # FastAPI re-raises HTTPException from body reading; the app's handler
                    # turns it into the same JSON 413 as above.
                    raise HTTPException(413, too_large_sentence(self.max_bytes))
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except HTTPException as exc:
            # Routes outside FastAPI's body reading (e.g. a raw endpoint) end up here.
            if exc.status_code != 413 or started:
                raise
            await send_json_error(send, 413, str(exc.detail))


def _content_length(scope: Scope) -> int | None:
    for key, value in scope["headers"]:
        if key == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


@dataclass
class TokenBucket:
    tokens: float
    updated: float


class RateLimiter:
    """Token buckets keyed by client: each holds up to `burst` tokens (one per request, more
    for a costly model call, see app.compute) and refills at `rate_per_s`. Used from the event
    loop and from the threads that run model calls, hence the lock."""

    # Past this many clients, buckets that have refilled completely are dropped: a full
    # bucket is the same as no bucket, so forgetting it changes no decision.
    PRUNE_AT = 10_000

    def __init__(
        self, rate_per_s: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate_per_s = rate_per_s
        self.burst = burst
        self.clock = clock
        self.buckets: dict[str, TokenBucket] = {}
        self._lock = threading.Lock()

    def acquire(self, client: str, tokens: float = 1.0) -> float:
        """Take `tokens` (one request's cost; at most the burst) for `client`: 0.0 if allowed,
        else seconds until that many are available."""
        tokens = min(tokens, float(self.burst))
        with self._lock:
            return self._take(client, tokens)

    def _take(self, client: str, tokens: float) -> float:
        now = self.clock()
        bucket = self.buckets.get(client)
        if bucket is None:
            if len(self.buckets) >= self.PRUNE_AT:
                self._prune(now)
            bucket = self.buckets[client] = TokenBucket(float(self.burst), now)
        else:
            elapsed = max(0.0, now - bucket.updated)
            bucket.tokens = min(float(self.burst), bucket.tokens + elapsed * self.rate_per_s)
            bucket.updated = now
        if bucket.tokens >= tokens:
            bucket.tokens -= tokens
            return 0.0
        return (tokens - bucket.tokens) / self.rate_per_s

    def _prune(self, now: float) -> None:
        full_after = self.burst / self.rate_per_s
        self.buckets = {
            client: bucket
            for client, bucket in self.buckets.items()
            if now - bucket.updated < full_after
        }


class RateLimit(HttpMiddleware):
    """429 with Retry-After on /api/* for a client over its rate. Pages and static files are
    not limited: they are cheap and cached, and a page view must never fail."""

    def __init__(self, app: ASGIApp, limiter: RateLimiter) -> None:
        super().__init__(app)
        self.limiter = limiter

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"].startswith(API_PREFIX):
            client = scope.get("client")
            wait_s = self.limiter.acquire(client[0] if client else "unknown")
            if wait_s > 0:
                retry_after = max(1, math.ceil(wait_s))
                detail = (
                    "Too many requests from your address in a short time; "
                    f"wait {retry_after} s and try again."
                )
                await send_json_error(send, 429, detail, {"Retry-After": str(retry_after)})
                return
        await self.app(scope, receive, send)


# glibc's mallopt parameter for the number of malloc arenas (malloc.h).
M_ARENA_MAX = -8
MALLOC_ARENAS = 2


def release_free_memory() -> bool:
    """Hand the heap's free pages back to the system (glibc's malloc_trim): after a burst of
    large decodes the freed memory otherwise stays with the worker. False where libc is not
    glibc."""
    try:
        return bool(ctypes.CDLL("libc.so.6").malloc_trim(0))
    except (OSError, AttributeError):
        return False


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas for this process. By default glibc gives each busy thread
    its own arena (up to 8 per core) and keeps their freed pages, so a worker that ran a few
    large decodes on different threads stays large when idle (measured: 478 MB idle, 820-860 MB
    after a storm and 5 s of rest; with two arenas 660 MB). False where libc is not glibc."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(M_ARENA_MAX, arenas))
    except (OSError, AttributeError):
        return False
