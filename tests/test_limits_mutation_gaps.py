"""Limits at their edges, where off-by-one bugs hide: a lemma of exactly the maximum length, a
body of exactly the cap, which rate-limit buckets pruning forgets, and the exact set of
security headers (the older header test checks only a subset)."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from fastapi import HTTPException
from fastapi.testclient import TestClient
from pydantic import ValidationError

from app.limits import (
    BodySizeLimit,
    RateLimit,
    RateLimiter,
    limit_malloc_arenas,
    release_free_memory,
)
from app.main import create_app
from app.schemas.seq2seq import MAX_LEMMA_CHARS, InflectRequest
from app.security import CONTENT_SECURITY_POLICY

FIXTURE_CONTENT = Path(__file__).parent / "fixtures" / "content"

# ---- the lemma length ----


def test_a_lemma_of_exactly_the_maximum_length_is_accepted() -> None:
    assert MAX_LEMMA_CHARS == 40
    lemma = "a" * 40
    request = InflectRequest(lemma=f"  {lemma} ", language="en", features="V;PST")
    assert request.lemma == lemma  # the surrounding spaces do not count
    with pytest.raises(ValidationError, match="1-40 characters; it has 41"):
        InflectRequest(lemma="a" * 41, language="en", features="V;PST")
    assert InflectRequest(lemma="a", language="en", features="V;PST").lemma == "a"
    with pytest.raises(ValidationError, match="it has 0"):
        InflectRequest(lemma="   ", language="en", features="V;PST")


# ---- the body cap ----


def send_body(chunks: list[bytes], declared: int | None, max_bytes: int = 1000) -> int:
    """Status of a request whose body arrives in `chunks`, through BodySizeLimit."""

    async def app(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    messages = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks)
    ]
    pending = iter(messages)
    sent: list[dict] = []

    async def receive() -> dict:
        return next(pending)

    async def send(message: dict) -> None:
        sent.append(message)

    headers = [] if declared is None else [(b"content-length", str(declared).encode())]
    scope = {"type": "http", "method": "POST", "path": "/api/x", "headers": headers}
    middleware = BodySizeLimit(app, max_bytes=max_bytes)
    with ThreadPoolExecutor(max_workers=1) as pool:  # an event loop of its own
        pool.submit(asyncio.run, middleware(scope, receive, send)).result()
    return sent[0]["status"]


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
def test_a_body_of_exactly_the_cap_is_accepted_and_one_byte_more_is_not(declared: bool) -> None:
    exact = [b"x" * 600, b"x" * 400]
    over = [b"x" * 600, b"x" * 401]
    assert send_body(exact, 1000 if declared else None) == 204
    assert send_body(over, 1001 if declared else None) == 413


# ---- pruning the rate limiter's buckets ----


def test_pruning_forgets_full_buckets_and_keeps_a_drained_client_drained() -> None:
    now = [0.0]
    limiter = RateLimiter(rate_per_s=1, burst=2, clock=lambda: now[0])
    limiter.PRUNE_AT = 3
    for idle in ("idle-1", "idle-2"):
        assert limiter.acquire(idle) == 0.0
    now[0] = 2.0
    assert [limiter.acquire("busy") for _ in range(2)] == [0.0, 0.0]
    assert limiter.acquire("busy") == pytest.approx(1.0)  # drained: one token in a second
    now[0] = 3.5  # the idle buckets are full again (2 s); "busy" has refilled 1.5 tokens
    assert limiter.acquire("newcomer") == 0.0  # a fourth client: pruning runs
    assert len(limiter.buckets) == 2  # the two idle clients were forgotten
    assert limiter.acquire("busy") == 0.0
    assert limiter.acquire("busy") == pytest.approx(0.5)  # no fresh burst for "busy"
    assert limiter.acquire("idle-1") == 0.0  # a forgotten client starts full, as it was


# ---- every security header, with its value ----


@pytest.mark.parametrize("path", ["/", "/healthz", "/papers/nothing-here"])
def test_every_security_header_is_sent_with_its_value(path: str, tmp_path: Path) -> None:
    expected = {
        "content-security-policy": CONTENT_SECURITY_POLICY,
        "x-content-type-options": "nosniff",
        "referrer-policy": "strict-origin-when-cross-origin",
        "x-frame-options": "DENY",
        "cross-origin-opener-policy": "same-origin",
        "permissions-policy": (
            "accelerometer=(), camera=(), geolocation=(), gyroscope=(), magnetometer=(), "
            "microphone=(), payment=(), usb=()"
        ),
    }
    app = create_app(content_dir=FIXTURE_CONTENT, checkpoint_dir=tmp_path)
    with TestClient(app) as client:
        headers = client.get(path).headers
    assert {name: headers.get(name) for name in expected} == expected


# ---- the middlewares' answers, byte by byte ----


def exchange(middleware, scope: dict, chunks: list[bytes] = (b"",)) -> list[dict]:  # type: ignore[no-untyped-def]
    """What an ASGI middleware sends for one request whose body arrives in `chunks`."""
    messages = iter(
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks)
    )
    sent: list[dict] = []

    async def receive() -> dict:
        return next(messages)

    async def send(message: dict) -> None:
        sent.append(message)

    with ThreadPoolExecutor(max_workers=1) as pool:  # an event loop of its own
        pool.submit(asyncio.run, middleware({"type": "http", **scope}, receive, send)).result()
    return sent


async def answer_204(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 204, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def test_a_declared_oversized_body_gets_the_whole_json_answer_with_its_size() -> None:
    sent = exchange(
        BodySizeLimit(answer_204, max_bytes=1000),
        {"method": "POST", "path": "/api/x", "headers": [(b"content-length", b"5000")]},
    )
    start, body = sent
    detail = (
        "The request body is 5,000 bytes; this server accepts at most 1,000 bytes. "
        "Send fewer points or values, or a shorter text."
    )
    expected = json.dumps({"detail": detail}).encode()
    assert start == {
        "type": "http.response.start",
        "status": 413,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(expected)).encode()),
        ],
    }
    assert body == {"type": "http.response.body", "body": expected}


def test_a_streamed_oversized_body_is_refused_with_the_sentence_for_an_unknown_size() -> None:
    async def raw_reader(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
        while (await receive()).get("more_body"):  # not FastAPI: the 413 reaches the middleware
            pass

    sent = exchange(
        BodySizeLimit(raw_reader, max_bytes=1000),
        {"method": "POST", "path": "/api/x", "headers": []},
        [b"x" * 800, b"x" * 800],
    )
    assert sent[0]["status"] == 413
    assert json.loads(sent[1]["body"]) == {
        "detail": "The request body is over 1,000 bytes, the most this server accepts. "
        "Send fewer points or values, or a shorter text."
    }


def test_a_refusal_after_the_answer_started_is_not_answered_twice() -> None:
    async def reads_after_starting(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
        await send({"type": "http.response.start", "status": 200, "headers": []})
        while (await receive()).get("more_body"):
            pass

    with pytest.raises(HTTPException) as refused:
        exchange(
            BodySizeLimit(reads_after_starting, max_bytes=1000),
            {"method": "POST", "path": "/api/x", "headers": []},
            [b"x" * 800, b"x" * 800],
        )
    assert refused.value.status_code == 413


def test_other_http_errors_pass_through_the_body_limit() -> None:
    async def not_found(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
        raise HTTPException(404, "no such thing")

    with pytest.raises(HTTPException) as passed:
        exchange(BodySizeLimit(not_found, max_bytes=1000), {"path": "/api/x", "headers": []})
    assert passed.value.status_code == 404


def test_the_rate_limit_counts_per_address_not_per_connection() -> None:
    limiter = RateLimiter(rate_per_s=10, burst=1)
    middleware = RateLimit(answer_204, limiter=limiter)

    def status(client: tuple[str, int] | None) -> int:
        scope = {"method": "GET", "path": "/api/x", "headers": [], "client": client}
        return exchange(middleware, scope)[0]["status"]

    assert status(("10.0.0.1", 50000)) == 204
    assert status(("10.0.0.1", 50001)) == 429  # a new port is the same reader
    assert status(("10.0.0.2", 50000)) == 204  # another address has its own bucket
    assert sorted(limiter.buckets) == ["10.0.0.1", "10.0.0.2"]
    assert status(None) == 204  # no client address: one shared bucket
    assert status(None) == 429
    assert "unknown" in limiter.buckets


def test_a_429_says_when_to_come_back_in_whole_seconds() -> None:
    now = [0.0]
    limiter = RateLimiter(rate_per_s=10, burst=1, clock=lambda: now[0])
    middleware = RateLimit(answer_204, limiter=limiter)
    scope = {"method": "GET", "path": "/api/x", "headers": [], "client": ("10.0.0.1", 1)}
    exchange(middleware, scope)
    start, body = exchange(middleware, scope)  # 0.1 s to wait: rounded up to 1 s
    detail = "Too many requests from your address in a short time; wait 1 s and try again."
    expected = json.dumps({"detail": detail}).encode()
    assert start["status"] == 429
    assert start["headers"] == [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(expected)).encode()),
        (b"retry-after", b"1"),
    ]
    assert body["body"] == expected
    assert exchange(middleware, {**scope, "path": "/papers/x"})[0]["status"] == 204  # pages: free


def test_pruning_waits_until_a_bucket_has_refilled_completely() -> None:
    now = [0.0]
    limiter = RateLimiter(rate_per_s=2, burst=4, clock=lambda: now[0])  # full after 2 s
    limiter.PRUNE_AT = 2
    assert limiter.acquire("a") == 0.0 and limiter.acquire("b") == 0.0
    now[0] = 1.9
    limiter.acquire("c")  # pruning runs: neither bucket has refilled yet
    assert sorted(limiter.buckets) == ["a", "b", "c"]
    now[0] = 2.0
    limiter.acquire("d")  # a and b have just refilled (2 s): forgotten; c has 1.9 s to go
    assert sorted(limiter.buckets) == ["c", "d"]


def test_freed_memory_goes_back_and_arenas_are_capped_on_glibc() -> None:
    if (
        not Path("/lib/x86_64-linux-gnu/libc.so.6").exists()
        and not Path("/usr/lib/x86_64-linux-gnu/libc.so.6").exists()
    ):
        pytest.skip("glibc only")
    assert limit_malloc_arenas() is True
    garbage = [bytes(2048) for _ in range(20_000)]  # 40 MB of heap, then freed
    del garbage
    assert release_free_memory() is True
