"""Limits at their edges, where off-by-one bugs hide: a lemma of exactly the maximum length, a
body of exactly the cap, which rate-limit buckets pruning forgets, and the exact set of
security headers (the older header test checks only a subset)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from app.limits import BodySizeLimit, RateLimiter
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
