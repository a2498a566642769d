"""Fault and limit tests: each fault a deployment can meet gives its documented behaviour.

Missing or corrupt checkpoint, broken content file, oversized body, rate limit hit; plus the
headers every response carries, the request id and access log, metrics, compression and cache
headers, and the start-up warm-up.
"""

from __future__ import annotations

import inspect
import json
import logging
import re
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from fastapi import HTTPException
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from pydantic import ValidationError

from app.assets import PLOTLY_URL, SCRIPTS, STATIC_DIR
from app.content import render_markdown
from app.limits import (
    BodySizeLimit,
    RateLimit,
    RateLimiter,
    limit_malloc_arenas,
    release_free_memory,
)
from app.main import ROUTERS, TEMPLATES_DIR, create_app
from app.security import CONTENT_SECURITY_POLICY, SecurityHeaders, relative_location
from app.seq2seq.requests import MAX_LEMMA_CHARS, InflectRequest
from app.serve import TcpListenerConfig
from app.settings import ServingSettings
from tests.own_loop import run_on_own_loop

FIXTURE_CONTENT = Path(__file__).parent / "fixtures" / "content"
SORT_BODY = {"values": [0.3, 0.1, 0.2, 0.5]}
ENTMAX_BODY = {"scores": [0.5, 1.0, 2.0], "alpha": 1.5}
SECURITY_HEADERS = ("content-security-policy", "x-content-type-options", "referrer-policy")


def serve(checkpoints: Path, content: Path = FIXTURE_CONTENT) -> TestClient:
    """The site over `checkpoints` (tiny_checkpoints' one sort model), which it serves."""
    served = ("pointer-sort",)
    return TestClient(create_app(content_dir=content, checkpoint_dir=checkpoints, served=served))


def disabled_lines(caplog: pytest.LogCaptureFixture, name: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith(f"model {name} ")]


# ---- integrity: checkpoints ----


def test_models_are_loaded_and_verified_at_start_up(checkpoints: Path) -> None:
    with serve(checkpoints) as client:
        assert client.app.state.registry.loaded() == ["pointer-sort"]
        ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {
        "status": "ready",
        "loaded": ["pointer-sort"],
        "unavailable": {},
        "manifest": None,
    }


@pytest.mark.parametrize("fault", ["missing", "corrupt"])
def test_a_bad_checkpoint_disables_its_model_only(
    fault: str, checkpoints: Path, caplog: pytest.LogCaptureFixture
) -> None:
    weights = checkpoints / "pointer-sort.safetensors"
    if fault == "missing":
        weights.unlink()
    else:
        data = bytearray(weights.read_bytes())
        data[-1] ^= 0xFF  # one flipped bit in the last tensor: the sha256 no longer matches
        weights.write_bytes(bytes(data))
    caplog.set_level(logging.INFO)
    with serve(checkpoints) as client:
        ready = client.get("/readyz")
        answers = [client.post("/api/pointer/sort", json=SORT_BODY) for _ in range(3)]
        page = client.get("/papers/alpha-paper")
        entmax = client.post("/api/entmax", json=ENTMAX_BODY)
        assert client.get("/healthz").status_code == 200

    assert ready.status_code == 503
    assert ready.json()["status"] == "degraded"
    reason = ready.json()["unavailable"]["pointer-sort"]
    assert ("missing" if fault == "missing" else "does not match its manifest") in reason
    for answer in answers:
        assert answer.status_code == 503
        assert answer.json()["detail"].startswith("The model “pointer-sort” is unavailable")
    # One clear line at start-up; readers' requests neither repeat it nor re-hash the file.
    lines = disabled_lines(caplog, "pointer-sort")
    assert len(lines) == 1, lines
    assert "disabled" in lines[0] and reason in lines[0]
    assert page.status_code == 200
    assert entmax.status_code == 200


def test_a_widget_says_its_model_is_unavailable(checkpoints: Path, tmp_path: Path) -> None:
    content = tmp_path / "content"
    content.mkdir()
    front = (FIXTURE_CONTENT / "alpha-paper.md").read_text(encoding="utf-8").split("\n---\n")[0]
    widget = "```widget\nname: pointer-board\ntask: sort\n```\n"
    (content / "sorting.md").write_text(f"{front}\n---\n\n## Sorting\n\n{widget}", "utf-8")
    (checkpoints / "pointer-sort.safetensors").unlink()
    with serve(checkpoints, content) as client:
        page = client.get("/papers/sorting")
    assert page.status_code == 200
    assert "unavailable" in page.text


def test_a_restored_checkpoint_is_served_without_a_restart(
    checkpoints: Path, tiny_checkpoints: Path
) -> None:
    (checkpoints / "pointer-sort.safetensors").unlink()
    with serve(checkpoints) as client:
        assert client.post("/api/pointer/sort", json=SORT_BODY).status_code == 503
        shutil.copy(tiny_checkpoints / "pointer-sort.safetensors", checkpoints)
        assert client.post("/api/pointer/sort", json=SORT_BODY).status_code == 200
        assert client.get("/readyz").status_code == 200


# ---- integrity: content ----


def test_a_broken_content_file_is_reported_at_start_up_and_skipped(
    checkpoints: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert "broken-paper.md" in {p.name for p in FIXTURE_CONTENT.glob("*.md")}
    with serve(checkpoints) as client:
        messages = [r.getMessage() for r in caplog.records]
        logged_at_start = [m for m in messages if "broken-paper" in m]
        assert client.get("/papers/broken-paper").status_code == 404
        assert client.get("/papers/alpha-paper").status_code == 200
        library = client.get("/")
    assert len(logged_at_start) == 1 and "skipping" in logged_at_start[0]
    assert library.status_code == 200 and "broken" not in library.text.lower()


def test_raw_html_in_markdown_is_escaped() -> None:
    segments, _ = render_markdown(
        'Text <script>alert(1)</script> and <img src=x onerror="alert(2)">\n\n'
        "<div onclick=alert(3)>block</div>\n"
    )
    html = "".join(s for s in segments if isinstance(s, str))
    assert "<script>" not in html and "<img" not in html and "<div" not in html
    assert "&lt;script&gt;" in html and "&lt;div onclick" in html


# ---- limits ----


@pytest.fixture
def small_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAPERTRACE_MAX_BODY_BYTES", "1000")
    monkeypatch.setenv("PAPERTRACE_RATE_LIMIT", "1")
    monkeypatch.setenv("PAPERTRACE_RATE_BURST", "3")


def test_an_oversized_body_is_refused_before_parsing(small_limits: None, checkpoints: Path) -> None:
    big = {"scores": [1.0] * 400, "alpha": 1.5}  # ~2.4 KB
    with serve(checkpoints) as client:
        declared = client.post("/api/entmax", json=big)
        # A chunked upload carries no Content-Length: the streamed bytes are counted.
        streamed = client.post(
            "/api/entmax",
            content=iter([b'{"scores": [', b"1.0, " * 300, b'1.0], "alpha": 1.5}']),
            headers={"Content-Type": "application/json"},
        )
        small = client.post("/api/entmax", json=ENTMAX_BODY)
    for answer in (declared, streamed):
        assert answer.status_code == 413
        assert "1,000 bytes" in answer.json()["detail"]
        assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert small.status_code == 200


def test_the_body_limit_also_guards_endpoints_outside_fastapi() -> None:
    async def reads_everything(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    sent: list[dict] = []
    chunks = iter([b"x" * 600, b"x" * 600])

    async def receive() -> dict:
        return {"type": "http.request", "body": next(chunks), "more_body": True}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/raw", "headers": []}
    middleware = BodySizeLimit(reads_everything, max_bytes=1000)
    run_on_own_loop(middleware(scope, receive, send))
    assert sent[0]["status"] == 413


def test_the_rate_limit_answers_429_with_retry_after(small_limits: None, checkpoints: Path) -> None:
    with serve(checkpoints) as client:
        answers = [client.post("/api/entmax", json=ENTMAX_BODY) for _ in range(4)]
        pages = [client.get("/papers/alpha-paper") for _ in range(5)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    refused = answers[-1]
    assert int(refused.headers["retry-after"]) >= 1
    assert refused.json()["detail"].startswith("Too many requests")
    assert all(p.status_code == 200 for p in pages)  # only /api/* is limited


def test_the_rate_limit_can_be_switched_off(
    monkeypatch: pytest.MonkeyPatch, checkpoints: Path
) -> None:
    monkeypatch.setenv("PAPERTRACE_RATE_LIMIT", "0")
    monkeypatch.setenv("PAPERTRACE_RATE_BURST", "1")
    with serve(checkpoints) as client:
        answers = [client.post("/api/entmax", json=ENTMAX_BODY) for _ in range(5)]
        assert all(a.status_code == 200 for a in answers)
        assert "429" not in str(client.get("/openapi.json").json()["paths"]["/api/entmax"])


def test_limits_are_documented_in_the_schema(checkpoints: Path) -> None:
    with serve(checkpoints) as client:
        responses = client.get("/openapi.json").json()["paths"]["/api/entmax"]["post"]["responses"]
    assert {"413", "429"} <= responses.keys()


def test_the_bucket_refills_at_the_configured_rate() -> None:
    now = [0.0]
    limiter = RateLimiter(rate_per_s=2, burst=2, clock=lambda: now[0])
    assert [limiter.acquire("a") for _ in range(2)] == [0.0, 0.0]
    assert limiter.acquire("a") == pytest.approx(0.5)
    assert limiter.acquire("b") == 0.0  # clients are independent
    now[0] = 0.5
    assert limiter.acquire("a") == 0.0


@pytest.mark.parametrize(
    ("variable", "value"),
    [("PAPERTRACE_RATE_LIMIT", "fast"), ("PAPERTRACE_MAX_BODY_BYTES", "0")],
)
def test_a_bad_setting_stops_start_up_with_its_name(variable: str, value: str) -> None:
    with pytest.raises(ValueError, match=f"\\${variable}"):
        ServingSettings.from_env({variable: value})


def test_inference_runs_off_the_event_loop() -> None:
    """Plain `def` endpoints run in the threadpool; an `async def` one would block the loop."""
    api_routes = [
        route
        for router in ROUTERS
        for route in router.routes
        if isinstance(route, APIRoute) and route.path.startswith("/api/")
    ]
    assert len(api_routes) >= 5
    for route in api_routes:
        assert not inspect.iscoroutinefunction(route.endpoint), f"{route.path} is async"


def test_torch_threads_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, checkpoints: Path
) -> None:
    """torch reads the setting when a thread first uses it, so a fresh thread (like each of
    the threadpool's) shows what the workers get."""
    before = torch.get_num_threads()
    monkeypatch.setenv("PAPERTRACE_TORCH_THREADS", "2")
    seen: list[int] = []
    try:
        with serve(checkpoints):
            thread = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))
            thread.start()
            thread.join()
    finally:
        torch.set_num_threads(before)
    assert seen == [2]


# ---- security headers and CORS ----


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/"),
        ("GET", "/papers/alpha-paper"),
        ("GET", "/papers/nothing-here"),
        ("GET", "/static/css/site.css"),
        ("GET", PLOTLY_URL),
        ("POST", "/api/entmax"),
        ("GET", "/healthz"),
        ("GET", "/docs"),
    ],
)
def test_every_response_carries_the_security_headers(
    method: str, path: str, checkpoints: Path
) -> None:
    with serve(checkpoints) as client:
        answer = client.request(method, path, json=ENTMAX_BODY if method == "POST" else None)
    for header in SECURITY_HEADERS:
        assert header in answer.headers, (path, header)
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["x-frame-options"] == "DENY"


def test_the_policy_names_no_remote_origin_and_allows_no_inline_script() -> None:
    directives = dict(d.split(" ", 1) for d in CONTENT_SECURITY_POLICY.split("; "))
    assert directives["script-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'"
    assert directives["object-src"] == "'none'"
    assert not re.search(r"https?:|\*|unsafe-eval", CONTENT_SECURITY_POLICY)


def test_templates_have_no_inline_script_or_handlers() -> None:
    """Inline code would need 'unsafe-inline'; JSON data blocks are not executed."""
    for path in TEMPLATES_DIR.rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        for tag in re.findall(r"<script\b[^>]*>", text):
            assert "src=" in tag or 'type="application/json"' in tag, (path, tag)
        assert not re.search(r"\son[a-z]+\s*=", text), path
        assert "javascript:" not in text, path
        assert not re.search(r"\sstyle\s*=", text), path
    for path in (STATIC_DIR / "js").glob("*.js"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\beval\(|new Function\(", text), path


def test_the_api_docs_load_nothing_remote(checkpoints: Path) -> None:
    with serve(checkpoints) as client:
        docs = client.get("/docs")
        assert docs.status_code == 200
        assets = re.findall(r'(?:src|href)="([^"]+)"', docs.text)
        assert assets and all(a.startswith("/") for a in assets), assets
        assert all(client.get(a).status_code == 200 for a in assets)
    assert "<script>" not in docs.text


def test_cors_is_closed_by_default(checkpoints: Path) -> None:
    origin = {"Origin": "https://elsewhere.example"}
    with serve(checkpoints) as client:
        simple = client.post("/api/entmax", json=ENTMAX_BODY, headers=origin)
        preflight = client.options(
            "/api/entmax", headers={**origin, "Access-Control-Request-Method": "POST"}
        )
    assert "access-control-allow-origin" not in simple.headers
    assert "access-control-allow-origin" not in preflight.headers


def test_cors_opens_only_to_listed_origins(
    monkeypatch: pytest.MonkeyPatch, checkpoints: Path
) -> None:
    monkeypatch.setenv("PAPERTRACE_CORS_ORIGINS", "https://course.example")
    with serve(checkpoints) as client:
        listed = client.post(
            "/api/entmax", json=ENTMAX_BODY, headers={"Origin": "https://course.example"}
        )
        other = client.post(
            "/api/entmax", json=ENTMAX_BODY, headers={"Origin": "https://elsewhere.example"}
        )
    assert listed.headers["access-control-allow-origin"] == "https://course.example"
    assert "access-control-allow-origin" not in other.headers
    assert listed.headers["access-control-expose-headers"] == "X-Request-ID, Retry-After"


def test_a_listed_origin_may_send_the_pages_requests_and_no_others(
    monkeypatch: pytest.MonkeyPatch, checkpoints: Path
) -> None:
    """The preflight allows what the widgets send (GET and POST; JSON, htmx's header, a
    request id) and refuses any other method or header."""
    monkeypatch.setenv("PAPERTRACE_CORS_ORIGINS", "https://course.example")
    asked = {"Origin": "https://course.example", "Access-Control-Request-Method": "POST"}
    with serve(checkpoints) as client:
        allowed = client.options(
            "/api/entmax",
            headers={**asked, "Access-Control-Request-Headers": "content-type, hx-request"},
        )
        get = client.options(
            "/api/entmax", headers={**asked, "Access-Control-Request-Method": "GET"}
        )
        delete = client.options(
            "/api/entmax", headers={**asked, "Access-Control-Request-Method": "DELETE"}
        )
        other_header = client.options(
            "/api/entmax", headers={**asked, "Access-Control-Request-Headers": "x-secret"}
        )
        request_id = client.options(
            "/api/entmax", headers={**asked, "Access-Control-Request-Headers": "x-request-id"}
        )
    assert allowed.status_code == get.status_code == request_id.status_code == 200
    assert allowed.headers["access-control-allow-methods"] == "GET, POST"
    assert allowed.headers["access-control-allow-headers"] == (
        "Accept, Accept-Language, Content-Language, Content-Type, HX-Request, X-Request-ID"
    )
    assert delete.status_code == other_header.status_code == 400


# ---- observability ----


@pytest.fixture
def client(checkpoints: Path) -> Iterator[TestClient]:
    with serve(checkpoints) as test_client:
        yield test_client


def test_request_ids_go_in_and_out_and_into_the_access_log(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="papertrace.access")
    given = client.get("/papers/alpha-paper", headers={"X-Request-ID": "lb-1234.abc"})
    made = client.get("/papers/alpha-paper", headers={"X-Request-ID": "bad id\twith spaces"})
    assert given.headers["x-request-id"] == "lb-1234.abc"
    assert re.fullmatch(r"[0-9a-f]{32}", made.headers["x-request-id"])
    line = next(r.getMessage() for r in caplog.records if "lb-1234.abc" in r.getMessage())
    assert "route=/papers/{slug}" in line and "status=200" in line
    assert re.search(r"ms=\d+\.\d", line)


def test_metrics_have_a_latency_histogram_per_route(client: TestClient) -> None:
    client.post("/api/entmax", json=ENTMAX_BODY)
    client.get("/papers/alpha-paper")
    metrics = client.get("/metrics").text
    for route in ("/api/entmax", "/papers/{slug}"):
        bucket = rf'http_request_duration_seconds_bucket\{{[^}}]*handler="{re.escape(route)}"'
        assert re.search(bucket + r'[^}]*le="0.05"', metrics), route


def test_health_is_alive_even_without_models(tmp_path: Path) -> None:
    with serve(tmp_path) as client:
        assert client.get("/healthz").json() == {"status": "ok"}
        ready = client.get("/readyz")
    # alive, but not ready: a replica with no models must not get the API's traffic
    assert ready.status_code == 503 and ready.json()["loaded"] == []


# ---- compression and caching ----


def test_html_json_and_scripts_are_compressed(client: TestClient) -> None:
    gzip = {"Accept-Encoding": "gzip"}
    page = client.get("/papers/alpha-paper", headers=gzip)
    plotly = client.get(PLOTLY_URL, headers=gzip)
    htmx = client.get(SCRIPTS["htmx"], headers=gzip)
    spec = client.get("/openapi.json", headers=gzip)
    tiny = client.get("/healthz", headers=gzip)
    for answer in (page, plotly, htmx, spec):
        assert answer.headers.get("content-encoding") == "gzip", answer.url
        assert "Accept-Encoding" in answer.headers["vary"]
    assert "content-encoding" not in tiny.headers  # under the ~1 KB minimum
    identity = client.get(PLOTLY_URL, headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in identity.headers
    assert identity.content == plotly.content  # httpx decoded the gzip copy


def test_versioned_files_are_cached_for_a_year_and_others_revalidated(client: TestClient) -> None:
    for path in (PLOTLY_URL, SCRIPTS["htmx"]):
        assert client.get(path).headers["cache-control"] == "public, max-age=31536000, immutable"
    css = client.get("/static/css/site.css")
    assert css.headers["cache-control"] == "no-cache"
    again = client.get("/static/css/site.css", headers={"If-None-Match": css.headers["etag"]})
    assert again.status_code == 304


def test_the_multi_worker_listener_is_marked_tcp_so_replies_are_not_delayed() -> None:
    """uvicorn issue #3149: without proto = TCP, asyncio leaves Nagle on for each connection."""
    config = TcpListenerConfig("app.main:app", host="127.0.0.1", port=0, workers=2)
    listener = config.bind_socket()
    try:
        assert listener.proto == socket.IPPROTO_TCP
        assert listener.get_inheritable()  # the worker processes receive it
    finally:
        listener.close()


# ---- limits at their edges, and every header with its value ----
# Where off-by-one bugs hide: a lemma of exactly the maximum length, a body of exactly the cap,
# which rate-limit buckets pruning forgets, the middlewares' answers byte by byte, and the exact
# set of security headers (the header test above checks only a subset).


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
    run_on_own_loop(middleware(scope, receive, send))
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

    run_on_own_loop(middleware({"type": "http", **scope}, receive, send))
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


# ---- the security middleware on its own, around bare ASGI apps ----


def run_asgi(app) -> list[dict]:  # noqa: ANN001
    """The messages a request to `app` wrapped in SecurityHeaders sends."""
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b""}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/", "headers": []}
    run_on_own_loop(SecurityHeaders(app)(scope, receive, send))
    return sent


def test_a_redirect_leaves_as_a_path_and_the_apps_own_headers_stay() -> None:
    async def redirect(scope: dict, receive: object, send) -> None:  # noqa: ANN001
        headers = [
            (b"location", b"http://evil.example/static/?a=1"),
            (b"content-security-policy", b"default-src 'none'"),
        ]
        await send({"type": "http.response.start", "status": 307, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    start = run_asgi(redirect)[0]
    headers = dict((k.decode(), v.decode()) for k, v in start["headers"])
    assert headers["location"] == "/static/?a=1"
    assert headers["content-security-policy"] == "default-src 'none'"  # set by the app: kept
    assert headers["x-frame-options"] == "DENY"


@pytest.mark.parametrize(
    ("location", "relative"),
    [
        ("/papers/x?y=1", "/papers/x?y=1"),
        ("/papers/x#figure", "/papers/x#figure"),  # already a path: left whole
        ("http://evil.example/papers/x", "/papers/x"),
        ("https://evil.example/papers/x?y=1#z", "/papers/x?y=1"),
        ("//evil.example/papers/x", "/papers/x"),
    ],
)
def test_a_location_is_made_a_path_on_this_site(location: str, relative: str) -> None:
    assert relative_location(location) == relative


def test_an_error_escaping_the_app_is_a_500_with_the_headers_then_raised() -> None:
    async def broken(scope: dict, receive: object, send: object) -> None:
        raise RuntimeError("a bug")

    messages: list[dict] = []

    async def send(message: dict) -> None:
        messages.append(message)

    scope = {"type": "http", "method": "GET", "path": "/", "headers": []}
    with pytest.raises(RuntimeError):
        run_on_own_loop(SecurityHeaders(broken)(scope, None, send))  # type: ignore[arg-type]
    start, body = messages
    assert start["type"] == "http.response.start" and start["status"] == 500
    headers = dict((k.decode(), v.decode()) for k, v in start["headers"])
    assert headers["content-type"] == "application/json" and "content-security-policy" in headers
    assert body == {
        "type": "http.response.body",
        "body": b'{"detail": "The server failed on this request; it is logged under the '
        b'X-Request-ID of this answer. Try again later."}',
    }

    async def half(scope: dict, receive: object, send) -> None:  # noqa: ANN001
        await send({"type": "http.response.start", "status": 200, "headers": []})
        raise RuntimeError("after the start")

    messages.clear()
    with pytest.raises(RuntimeError, match="after the start"):
        run_on_own_loop(SecurityHeaders(half)(scope, None, send))  # type: ignore[arg-type]
    assert [m["status"] for m in messages] == [200]  # no second start once one went out
