"""Regression tests for issue 16 ("hardening, part two"), one or more per defect found by
probing the site as an attacker and an operator would: liveness behind busy model threads,
honest readiness, bounded metrics, odd slugs, Allow, parse errors, server paths in messages,
Host reflection, Permissions-Policy, forwarded addresses, and bounded work per request
(concurrency, cost-weighted rate, deadline, disconnect). The deployment behind nginx is in
tests/test_hardening_proxy.py.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import json
import logging
import re
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import anyio.to_thread
import pytest
import torch
from fastapi import Depends, FastAPI, HTTPException
from fastapi.testclient import TestClient
from pydantic import BaseModel, Field
from starlette.requests import Request

from app.compute import (
    Budget,
    ComputeGate,
    ComputeStopped,
    PricedRequest,
    _watch_disconnect,
    compute_budget,
    pointer_cost,
    priced_budget,
    query_fields,
    text_cost,
)
from app.main import create_app
from app.registry import public_reason
from app.serve import build_config
from models.checkpoints import build_model
from models.pointer import beam_search as pointer_beam_search
from models.pointer import greedy
from models.seq2seq import Config, Seq2Seq
from models.seq2seq import beam_search as seq2seq_beam_search
from tests.own_loop import run_on_own_loop

FIXTURE_CONTENT = Path(__file__).parent / "fixtures" / "content"
SORT_BODY = {"values": [0.3, 0.1, 0.2, 0.5]}
ENTMAX_BODY = {"scores": [0.5, 1.0, 2.0], "alpha": 1.5}


@pytest.fixture
def client(checkpoints: Path) -> Iterator[TestClient]:
    with TestClient(create_app(FIXTURE_CONTENT, checkpoints)) as test_client:
        yield test_client


def serve(checkpoints: Path) -> TestClient:
    """The site over tiny_checkpoints' one sort model, which it serves."""
    return TestClient(create_app(FIXTURE_CONTENT, checkpoints, served=("pointer-sort",)))


# ---- 1. liveness does not wait for the model threads ----


@contextmanager
def pool_blocked(client: TestClient) -> Iterator[None]:
    """The app's thread pool shrunk to one thread, and that thread busy until the block ends."""
    release = threading.Event()

    @client.app.get("/test-block")
    def block() -> dict[str, str]:
        release.wait(10)
        return {"status": "released"}

    def set_pool(threads: int) -> None:
        anyio.to_thread.current_default_thread_limiter().total_tokens = threads

    client.portal.call(set_pool, 1)
    blocked = threading.Thread(target=client.get, args=("/test-block",))
    blocked.start()
    time.sleep(0.3)
    try:
        yield
    finally:
        release.set()
        blocked.join()
        client.portal.call(set_pool, 40)


def test_healthz_answers_while_every_pool_thread_is_busy(client: TestClient) -> None:
    """/healthz runs on the event loop: with the only pool thread blocked it answers at once,
    while a sync route waits."""
    with pool_blocked(client):
        started = time.perf_counter()
        health = client.get("/healthz")
        assert health.status_code == 200
        assert time.perf_counter() - started < 1.0
        waiting = threading.Thread(target=client.get, args=("/readyz",))
        waiting.start()
        waiting.join(timeout=0.5)
        assert waiting.is_alive(), "the sync /readyz should wait for the blocked thread"
    waiting.join()


def test_start_up_objects_are_out_of_the_collectors_reach(checkpoints: Path) -> None:
    """A full garbage collection walks every tracked object while holding the GIL, so every
    thread of the worker stops for it. Start-up makes a few hundred thousand long-lived
    objects (modules, models, reference entries); left tracked, each full collection paused the
    worker for ~180 ms, the /healthz p99 of the storm bench. After start-up they are frozen."""
    with serve(checkpoints) as started:  # (tests/conftest.py unfreezes after each test)
        assert started.get("/healthz").status_code == 200
        assert gc.get_freeze_count() > 100_000
        assert len(gc.get_objects()) < gc.get_freeze_count() / 10


# ---- 2. readiness tells the truth ----


@pytest.mark.parametrize(
    ("manifest", "problem"),
    [(None, "is missing"), ("{not json", "cannot be read"), ("[1, 2]", "not an object")],
)
def test_readyz_is_503_without_a_usable_manifest_and_says_why(
    checkpoints: Path, manifest: str | None, problem: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = checkpoints / "manifest.json"
    if manifest is None:
        path.unlink()
    else:
        path.write_text(manifest)
    caplog.set_level(logging.ERROR)
    with serve(checkpoints) as client:
        ready = client.get("/readyz")
        client.get("/readyz")
        sort = client.post("/api/pointer/sort", json=SORT_BODY)
    assert ready.status_code == 503
    assert ready.json()["status"] == "no models"
    assert problem in ready.json()["manifest"]
    assert sort.status_code == 503
    logged = [r.getMessage() for r in caplog.records if "no models can be served" in r.getMessage()]
    assert len(logged) == 1 and problem in logged[0]  # at start-up, once


def test_readyz_is_503_for_an_empty_manifest(checkpoints: Path) -> None:
    (checkpoints / "manifest.json").write_text("{}")
    with serve(checkpoints) as client:
        ready = client.get("/readyz")
    assert ready.status_code == 503 and ready.json()["manifest"] == (
        "checkpoints/manifest.json lists no models"
    )
    assert ready.headers["Retry-After"] == "60"  # every 503 says when to come back


@pytest.mark.parametrize("fault", ["missing", "corrupt"])
def test_models_endpoint_reports_what_the_registry_can_serve(checkpoints: Path, fault: str) -> None:
    weights = checkpoints / "pointer-sort.safetensors"
    if fault == "missing":
        weights.unlink()
    else:
        weights.write_bytes(weights.read_bytes()[:-8] + b"corrupt!")
    with serve(checkpoints) as client:
        listed = client.get("/api/pointer/models").json()
        ready = client.get("/readyz")
    sort = next(
        variant for task in listed if task["task"] == "sort" for variant in task["variants"]
    )
    assert sort["alpha"] == 1 and sort["available"] is False
    assert sort["reason"] == ready.json()["unavailable"]["pointer-sort"]
    assert ready.status_code == 503


# ---- 3. metrics stay the same size under junk traffic ----


def test_made_up_methods_and_paths_add_no_metric_series(client: TestClient) -> None:
    # the series for made-up methods and unmatched paths exist from here on
    client.request("BREW", "/")
    client.request("BREW", "/no/such/page")
    client.get("/no/such/page")
    before = len(client.get("/metrics").text)
    for i in range(300):
        client.request(f"JUNK{i}", f"/junk/{i}")
        client.get(f"/nothing-here-{i}")
    after = client.get("/metrics").text
    assert len(after) <= before * 1.1, (before, len(after))
    assert "JUNK" not in after and "nothing-here" not in after
    assert 'method="other"' in after and 'handler="none"' in after


# ---- 4. long or odd slugs are 404s with the usual headers ----


@pytest.mark.parametrize("slug", ["a" * 253, "a" * 5000, "..%2f..%2fetc", "A-Paper", "-x", "%00"])
def test_long_or_odd_slugs_are_404(client: TestClient, slug: str) -> None:
    answer = client.get(f"/papers/{slug}")
    assert answer.status_code == 404
    assert "content-security-policy" in answer.headers and "x-request-id" in answer.headers


def test_an_unhandled_error_is_a_500_with_the_headers(checkpoints: Path) -> None:
    app = create_app(FIXTURE_CONTENT, checkpoints)

    @app.get("/test-bug")
    def bug() -> None:
        raise RuntimeError("a bug")

    with TestClient(app, raise_server_exceptions=False) as client:
        answer = client.get("/test-bug")
    assert answer.status_code == 500
    assert "content-security-policy" in answer.headers and "x-request-id" in answer.headers
    assert "X-Request-ID" in answer.json()["detail"] and "a bug" not in answer.text


# ---- 6. Allow lists the methods the path really has ----


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("OPTIONS", "/healthz", "GET, HEAD"),
        ("DELETE", "/papers/alpha-paper", "GET, HEAD"),
        ("GET", "/api/entmax", "POST"),
        ("PUT", "/readyz", "GET, HEAD"),
        ("POST", "/static/css/site.css", "GET, HEAD"),
    ],
)
def test_405_lists_every_allowed_method(
    client: TestClient, method: str, path: str, allow: str
) -> None:
    answer = client.request(method, path)
    assert answer.status_code == 405
    assert answer.headers["allow"] == allow
    assert allow in answer.json()["detail"]


# ---- 8. unparseable bodies and wrong content types ----


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ('{"scores": [' + "9" * 4400 + '], "alpha": 1.5}', "thousands of digits"),
        ("[" * 1000 + "]" * 1000, "nested too deeply"),
        (b'{"scores": [1, 2], "alpha": 1.5, "labels": ["\xff"]}', "not UTF-8"),
    ],
)
def test_unparseable_json_is_a_422_sentence(client: TestClient, body: str, words: str) -> None:
    answer = client.post("/api/entmax", content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == 422
    assert words in answer.json()["detail"]


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/plain", json.dumps(ENTMAX_BODY)),
        ("application/x-www-form-urlencoded", "scores=1&alpha=1.5"),
    ],
)
def test_a_body_that_is_not_json_is_a_415_sentence(
    client: TestClient, content_type: str, body: str
) -> None:
    answer = client.post("/api/entmax", content=body, headers={"Content-Type": content_type})
    assert answer.status_code == 415
    assert "Content-Type: application/json" in answer.json()["detail"]


def test_wrong_content_types_are_documented(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    assert "415" in schema["paths"]["/api/entmax"]["post"]["responses"]


# ---- 9. no server paths, no ".." ----


def test_unavailable_models_never_show_server_paths(checkpoints: Path) -> None:
    (checkpoints / "pointer-sort.safetensors").unlink()
    with serve(checkpoints) as client:
        detail = client.post("/api/pointer/sort", json=SORT_BODY).json()["detail"]
        ready = client.get("/readyz").text
        models = client.get("/api/pointer/models").text
    for text in (detail, ready, models):
        assert str(checkpoints) not in text and "/work" not in text and "/tmp" not in text
    assert detail.endswith(".") and not detail.endswith("..")
    assert "pointer-sort.safetensors" in detail


def test_public_reason_cuts_paths_to_file_names() -> None:
    reason = public_reason("Checkpoint file /srv/app/checkpoints/x.safetensors is missing.")
    assert reason == "Checkpoint file x.safetensors is missing"
    relative = "content/results/demo.json has no table “absent”."
    assert public_reason(relative) == relative.rstrip(".")


# ---- 10. redirects do not reflect Host; Permissions-Policy everywhere ----


def test_redirects_are_relative_whatever_the_host(client: TestClient) -> None:
    answer = client.get("/static", headers={"Host": "evil.example"}, follow_redirects=False)
    assert answer.is_redirect
    assert answer.headers["location"] == "/static/"


@pytest.mark.parametrize("path", ["/", "/healthz", "/static/css/site.css", "/nope"])
def test_every_answer_has_a_permissions_policy(client: TestClient, path: str) -> None:
    policy = client.get(path).headers["permissions-policy"]
    assert "camera=()" in policy and "geolocation=()" in policy and "microphone=()" in policy


# ---- 5. forwarded addresses are trusted only from named proxies ----


def test_forwarded_headers_are_off_unless_proxies_are_named() -> None:
    plain = build_config([])
    assert plain.proxy_headers is False
    behind = build_config(["--forwarded-allow-ips", "10.0.0.2"])
    assert behind.proxy_headers is True and behind.forwarded_allow_ips == "10.0.0.2"


def test_the_app_keeps_idle_connections_longer_than_the_proxy() -> None:
    """nginx must close an idle upstream connection first: a POST sent on one the app has just
    closed is a 502 nginx does not retry."""
    conf = (Path(__file__).parents[1] / "deploy" / "nginx.conf").read_text()
    upstream = conf[conf.index("upstream papertrace {") :]
    upstream = upstream[: upstream.index("}")]
    proxy_idle_s = int(re.search(r"keepalive_timeout (\d+)s;", upstream)[1])
    assert build_config([]).timeout_keep_alive > proxy_idle_s


# ---- bounded work: concurrency, cost, deadline, disconnect ----


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [("POST", "/api/pointer/sort", SORT_BODY), ("GET", "/api/entmax/figure.svg", None)],
)  # the second route is made by add_export_route
def test_a_full_worker_answers_503_with_retry_after_at_once(
    client: TestClient, method: str, path: str, body: dict | None
) -> None:
    """Whatever the route asks for besides its price (the registry, the request), the refusal
    needs no thread: a route with a dependency run in the thread pool waited for one here."""

    def send() -> Any:
        return client.request(method, path, json=body)

    gate = client.app.state.compute_gate
    gate.in_flight = gate.capacity  # as if that much model work were running
    try:
        with pool_blocked(client):
            started = time.perf_counter()
            busy = send()
            assert time.perf_counter() - started < 1.0
    finally:
        gate.in_flight = 0
    assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
    assert "busy" in busy.json()["detail"]
    assert send().status_code == 200


def test_the_gate_fits_light_calls_beside_heavy_ones() -> None:
    gate = ComputeGate(64)
    with gate.admit(32), gate.admit(31), gate.admit(1):
        with pytest.raises(HTTPException) as full:
            with gate.admit(1):
                pass
        assert full.value.status_code == 503 and full.value.headers == {"Retry-After": "1"}
    assert gate.in_flight == 0
    with gate.admit(100):  # larger than the whole gate: runs alone
        with pytest.raises(HTTPException):
            with gate.admit(1):
                pass


def test_the_gate_hands_memory_back_when_a_burst_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """Freed decode memory goes back to the system when the gate falls idle (a storm of large
    translations left a worker at 847 MB instead of 481), at most once a second."""
    import app.compute
    import app.limits

    trims: list[float] = []
    monkeypatch.setattr(app.compute, "release_free_memory", lambda: trims.append(1.0))
    gate = ComputeGate(64)
    with gate.admit(32):
        with gate.admit(1):
            pass
        assert trims == []  # not while a call still runs
    assert trims == [1.0]
    with gate.admit(1):
        pass
    assert trims == [1.0]  # within the second: no second trim
    gate._trimmed_at -= app.compute.TRIM_EVERY_S
    with gate.admit(1):
        pass
    assert len(trims) == 2
    assert isinstance(app.limits.release_free_memory(), bool)


def test_concurrent_calls_over_the_cap_are_refused_while_one_runs(
    checkpoints: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAPERTRACE_COMPUTE_CAPACITY", "1")  # one light call fills it
    inside, release = threading.Event(), threading.Event()
    import models.pointer_run as pointer_service

    real_greedy = pointer_service.greedy

    def slow_greedy(*args: object, **kwargs: object) -> object:
        inside.set()
        release.wait(10)
        return real_greedy(*args, **kwargs)

    monkeypatch.setattr(pointer_service, "greedy", slow_greedy)
    with serve(checkpoints) as client:
        first: list[int] = []
        worker = threading.Thread(
            target=lambda: first.append(
                client.post("/api/pointer/sort", json=SORT_BODY).status_code
            )
        )
        worker.start()
        assert inside.wait(10)
        second = client.post("/api/pointer/sort", json=SORT_BODY)
        release.set()
        worker.join()
        third = client.post("/api/pointer/sort", json=SORT_BODY)
    assert first == [200] and third.status_code == 200
    assert second.status_code == 503 and second.headers["retry-after"] == "1"


def test_costly_requests_use_more_of_the_rate_limit(
    checkpoints: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAPERTRACE_RATE_LIMIT", "0.5")
    monkeypatch.setenv("PAPERTRACE_RATE_BURST", "10")
    monkeypatch.setenv("PAPERTRACE_COMPUTE_DEADLINE_S", "60")  # cost, not time, is tested
    heavy = {"values": [i / 100 for i in range(100)], "decoder": "beam", "beam_width": 16}
    assert pointer_cost(100, 16) == 8 and pointer_cost(4, 1) == 1
    assert pointer_cost(100, 256) == 81 and pointer_cost(20, 256) == 17
    with serve(checkpoints) as client:
        first = client.post("/api/pointer/sort", json=heavy)
        second = client.post("/api/pointer/sort", json=heavy)
        light = [client.post("/api/pointer/sort", json=SORT_BODY).status_code for _ in range(2)]
    assert first.status_code == 200
    assert second.status_code == 429 and "costs 8" in second.json()["detail"]
    assert int(second.headers["retry-after"]) >= 1
    assert light == [200, 429]  # 10 − 8 − 1 (the refused one's entry) leaves 1


def test_a_decode_past_its_deadline_is_stopped_with_a_503(
    checkpoints: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import models.pointer_run as pointer_service

    steps: list[int] = []
    real_greedy = pointer_service.greedy

    def slow_check_greedy(model, inputs, check=None):  # noqa: ANN001, ANN202
        def slow_check() -> None:
            steps.append(1)
            time.sleep(0.02)
            check()

        return real_greedy(model, inputs, slow_check)

    monkeypatch.setattr(pointer_service, "greedy", slow_check_greedy)
    values = {"values": [i / 100 for i in range(100)]}
    with serve(checkpoints) as client:
        client.post("/api/pointer/sort", json=SORT_BODY)  # first-call costs out of the way
        steps.clear()
        serving = client.app.state.serving
        client.app.state.serving = dataclasses.replace(serving, compute_deadline_s=0.05)
        started = time.perf_counter()
        answer = client.post("/api/pointer/sort", json=values)
        elapsed = time.perf_counter() - started
    assert answer.status_code == 503
    assert "within 0.05 s" in answer.json()["detail"]
    assert answer.headers["Retry-After"] == "1"  # every 503 says when to come back
    assert len(steps) < 20 and elapsed < 1.0  # stopped early, not after all 100 steps


def test_budget_stops_when_the_client_disconnects() -> None:
    async def scenario() -> Budget:
        messages = [
            {"type": "http.request", "body": b"{}", "more_body": False},
            {"type": "http.disconnect"},
        ]

        async def receive() -> dict[str, Any]:
            if messages:
                return messages.pop(0)
            await asyncio.sleep(10)
            raise AssertionError("unreachable")

        app = type("App", (), {})()
        app.state = type("State", (), {})()
        app.state.serving = type("Serving", (), {"compute_deadline_s": 5.0})()
        app.state.compute_gate = ComputeGate(1)
        app.state.rate_limiter = None
        request = Request({"type": "http", "app": app, "headers": []}, receive)

        async def one_token(request: Request) -> int:
            return 1

        budgets = priced_budget(one_token)(request)
        budget = await budgets.__anext__()
        await asyncio.sleep(0.05)
        with pytest.raises(StopAsyncIteration):
            await budgets.__anext__()
        return budget

    budget = run_on_own_loop(scenario())
    with pytest.raises(ComputeStopped) as stopped:
        budget.check()
    assert stopped.value.status == 499


def stop_after(steps: int) -> tuple[list[int], object]:
    calls: list[int] = []

    def check() -> None:
        calls.append(1)
        if len(calls) > steps:
            raise ComputeStopped(503, "stop")

    return calls, check


def test_pointer_decoders_call_check_between_steps() -> None:
    torch.manual_seed(0)
    model = build_model("pointer", {"input_dim": 1, "hidden": 8})
    values = torch.rand(1, 30)
    calls, check = stop_after(3)
    with pytest.raises(ComputeStopped):
        greedy(model, values, check)
    assert len(calls) == 4
    calls, check = stop_after(3)
    with pytest.raises(ComputeStopped):
        pointer_beam_search(model, values[0], width=4, check=check)
    assert len(calls) == 4
    calls, check = stop_after(1000)
    greedy(model, values, check)
    assert len(calls) == 30  # one per output position


def test_seq2seq_beam_search_calls_check_between_steps() -> None:
    torch.manual_seed(0)
    model = Seq2Seq(Config(7, 7, emb_dim=8, hidden=12, attn_alpha=1.0, out_alpha=1.0)).eval()
    calls, check = stop_after(2)
    with pytest.raises(ComputeStopped):
        seq2seq_beam_search(model, [3, 4, 5], width=3, max_len=20, check=check)
    assert len(calls) == 3


def test_text_cost_grows_with_length_and_beam() -> None:
    assert text_cost(10, 1) == 1
    assert text_cost(200, 16) == 32


# ---- 7. the schema says what validation accepts ----


def test_the_schema_lists_model_names_languages_and_distinct_points(client: TestClient) -> None:
    from app.pointer.requests import POINT_ALPHAS, VALUE_ALPHAS
    from models.pointer_run import checkpoints
    from models.tasks.inflection import LANGUAGES

    assert set(checkpoints("hull")) | set(checkpoints("tsp")) == set(POINT_ALPHAS)
    assert set(checkpoints("sort")) == set(VALUE_ALPHAS)
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    points = schemas["PointsRequest"]["properties"]
    # the trained α values, each within resolve's tolerance (a range of floats), or null
    for request, trained in (("PointsRequest", [1.0]), ("ValuesRequest", [1.0, 1.5])):
        *ranges, null = schemas[request]["properties"]["alpha"]["anyOf"]
        assert null == {"type": "null"}
        assert [(r["minimum"], r["maximum"]) for r in ranges] == [
            pytest.approx((alpha, alpha), abs=2e-9) for alpha in trained
        ]
    assert points["points"]["uniqueItems"] is True
    assert schemas["InflectRequest"]["properties"]["language"]["enum"] == list(LANGUAGES)
    assert points["beam_width"]["type"] == "integer"


def test_a_whole_number_written_as_a_float_is_an_integer(client: TestClient) -> None:
    """JSON Schema calls 15.0 an integer; so does the API. 15.5, "15" and true are not."""
    body = {**SORT_BODY, "decoder": "beam", "beam_width": 3.0}
    answer = client.post("/api/pointer/sort", json=body)
    assert answer.status_code == 200 and answer.json()["beam_width"] == 3
    for bad in (3.5, "3", True):
        refused = client.post("/api/pointer/sort", json={**body, "beam_width": bad})
        assert refused.status_code == 422, bad


# ---- response size: what a reader can see, the rest summarised ----


def test_the_largest_translation_fragment_stays_under_a_megabyte(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """30 five-letter nonsense words (200 characters) with beam 16: the tokenizer cuts them
    into ~140 pieces and α = 1 decodes ~240 steps; drawn whole that was a 7 MB fragment."""
    monkeypatch.setenv("PAPERTRACE_COMPUTE_DEADLINE_S", "60")
    monkeypatch.setenv("PAPERTRACE_RATE_LIMIT", "0")
    words = ["qzxkv", "wjrtp", "mbfhy", "gdlsn", "ckupe", "vyoaz"]
    text = " ".join(words[i % len(words)] + "abcdef"[i % 6] for i in range(30))[:200]
    with TestClient(create_app(FIXTURE_CONTENT)) as client:
        if client.app.state.registry.unavailable_reason("seq2seq-translate-a1") is not None:
            pytest.skip("the α = 1 translation checkpoint is not installed")
        body = {"text": text, "beam_width": 16, "alpha": 1.0}
        fragment = client.post("/api/seq2seq/translate", json=body, headers={"HX-Request": "true"})
        full = client.post("/api/seq2seq/translate", json=body).json()
    assert fragment.status_code == 200
    assert len(fragment.content) < 1_000_000
    assert "the JSON answer" in fragment.text
    for part, count in (("output", len(full["steps"])), ("source", len(full["source_tokens"]))):
        # only what was cut is named: "the first 48 of 163 source tokens"
        assert (f"the first 48 of {count} {part} tokens" in fragment.text) is (count > 48), part


def test_widget_error_boxes_never_show_server_paths(tmp_path: Path) -> None:
    """A results file the server cannot read (here a folder where the file should be, whose
    OSError names the absolute path): the box names the file, not where it lives."""
    content = tmp_path / "content"
    shutil.copytree(FIXTURE_CONTENT, content)
    results = content / "results"
    results.mkdir(exist_ok=True)
    shutil.rmtree(results / "pointer.json", ignore_errors=True)
    (results / "pointer.json").unlink(missing_ok=True)
    (results / "pointer.json").mkdir()
    front = (FIXTURE_CONTENT / "alpha-paper.md").read_text(encoding="utf-8").split("\n---\n")[0]
    widget = "```widget\nname: results-table\nsource: pointer\ntable: hull\n```\n"
    (content / "tables.md").write_text(f"{front}\n---\n\n## Tables\n\n{widget}", "utf-8")
    with TestClient(create_app(content, tmp_path / "no-checkpoints")) as client:
        page = client.get("/papers/tables")
    assert page.status_code == 200
    assert "is unreadable" in page.text and "pointer.json" in page.text
    assert str(tmp_path) not in page.text


# --- the door's price, built at test time (a mutant of compute_budget must be the one running) --


class Sized(PricedRequest):
    n: int = Field(1, ge=1)

    def cost(self) -> int:
        return self.n


class Unpriced(BaseModel):
    n: int = 1


class RecordingLimiter:
    """A rate limit that records what it is asked and answers with a fixed wait."""

    def __init__(self, wait_s: float = 0.0) -> None:
        self.asked: list[tuple[str, int]] = []
        self.wait_s = wait_s

    def acquire(self, client: str, tokens: int) -> float:
        self.asked.append((client, tokens))
        return self.wait_s


def extra(request: Request) -> int:
    """A route's own addition to the price, read off the request (as an export's is)."""
    return 3 if request.url.path == "/query" else 0


def priced_app(limiter: RecordingLimiter) -> TestClient:
    app = FastAPI()
    app.state.serving = type("Serving", (), {"compute_deadline_s": 5.0})()
    app.state.compute_gate = ComputeGate(100)
    app.state.rate_limiter = limiter

    @app.post("/body")
    def body(_: Sized, b: Annotated[Budget, Depends(compute_budget(Sized))]) -> dict:
        return {}

    @app.get("/query")
    def query(b: Annotated[Budget, Depends(compute_budget(Sized, "query", extra))]) -> dict:
        return {}

    @app.post("/unpriced")
    def unpriced(_: Unpriced, b: Annotated[Budget, Depends(compute_budget(Unpriced))]) -> dict:
        return {}

    return TestClient(app)


def test_a_route_is_priced_from_its_body_or_its_query_plus_its_extra() -> None:
    """The door (app.limits) took one token; the route's price takes the rest: the request's
    cost() from the JSON body or the query, plus the route's extra. A request the model
    refuses, or one that runs no model, costs the door's token only."""
    limiter = RecordingLimiter()
    client = priced_app(limiter)
    assert client.post("/body", json={"n": 5}).status_code == 200
    assert limiter.asked == [("testclient", 4)]
    assert client.get("/query?n=7").status_code == 200
    assert limiter.asked[-1] == ("testclient", 9)  # 7 + 3 for the route, less the door's 1
    limiter.asked.clear()
    client.get("/query?n=7&n=8")  # a key given twice is a list: not an int, so unpriced
    client.post("/body", json={"n": 0})  # refused: FastAPI answers the 422 next
    client.post("/body", json={"n": 1})  # one token: the door's
    client.post("/unpriced", json={"n": 9})  # no cost(): one token
    assert limiter.asked == []


@pytest.mark.parametrize(("wait_s", "retry_after"), [(0.5, "1"), (2.2, "3")])
def test_a_request_over_the_clients_rate_is_a_429_that_says_when_to_come_back(
    wait_s: float, retry_after: str
) -> None:
    answer = priced_app(RecordingLimiter(wait_s)).post("/body", json={"n": 5})
    assert answer.status_code == 429 and answer.headers["Retry-After"] == retry_after
    assert answer.json()["detail"] == (
        f"This request costs 5 requests' worth of the rate limit and your address has used its "
        f"share; wait {retry_after} s, or ask for less (a narrower beam, fewer inputs, a shorter "
        "text)."
    )


def test_the_query_as_a_route_reads_it() -> None:
    scope = {"type": "http", "query_string": b"a=1&b=2&a=3&c=", "headers": []}
    assert query_fields(Request(scope)) == {"a": ["1", "3"], "b": "2", "c": ""}


def test_a_stop_says_why_and_only_a_disconnect_sets_it() -> None:
    gone = Budget(deadline_s=5.0)
    gone.client_gone.set()
    with pytest.raises(ComputeStopped) as stopped:
        gone.check()
    assert (stopped.value.status, str(stopped.value)) == (499, "The client closed the connection.")
    late = Budget(deadline_s=0.5, started=time.monotonic() - 1)
    with pytest.raises(ComputeStopped) as over:
        late.check()
    assert (
        str(over.value)
        == over.value.detail
        == (
            "The model could not finish within 0.5 s; try a narrower beam, fewer inputs or a "
            "shorter text, or try again when the site is less busy."
        )
    )
    Budget(deadline_s=0.5).check()  # within its time: no stop

    async def watch() -> bool:
        async def receive() -> dict[str, Any]:
            if not sent:
                sent.append(1)
                return {"type": "http.request", "body": b"", "more_body": True}
            await asyncio.sleep(10)
            raise AssertionError("unreachable")

        sent: list[int] = []
        budget = Budget(deadline_s=5.0)
        task = asyncio.create_task(_watch_disconnect(Request({"type": "http"}, receive), budget))
        await asyncio.sleep(0.05)
        task.cancel()
        return budget.client_gone.is_set()

    assert run_on_own_loop(watch()) is False  # more body is no goodbye
