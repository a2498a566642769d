"""The app as deployed: one `python -m app.serve --uds … --workers 2` instance behind Debian's
nginx running deploy/nginx.conf (only its port, root and upstream sockets changed), all on this
machine.

Checks the headers readers get, nginx's per-address rate limit (which a forged
X-Forwarded-For does not escape), static files served by nginx with their cache headers, and a
worker killed while traffic runs: only requests in flight may fail, and the supervisor starts a
new worker. Without nginx (`make test` installs it) those tests are skipped with that reason.

The app-only test at the end starts `app.serve` on TCP without a proxy and checks that a client
on the same machine cannot pick its own address with X-Forwarded-For. tests/test_proxy_*.py
cover nginx's own answers and retries, several instances, the metrics and the proxy's socket.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from app.assets import PLOTLY_URL, SCRIPTS
from app.security import SECURITY_HEADERS
from bench.nginx import STARTUP_S, Instance, nginx_binary, running_nginx, start_instance

ROOT = Path(__file__).resolve().parent.parent
needs_nginx = pytest.mark.skipif(
    nginx_binary() is None,
    reason="nginx is not installed here; `make test` installs it (apt-get install nginx)",
)
ENTMAX_BODY = {"scores": [0.5, 1.0, 2.0], "alpha": 1.5}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def no_checkpoints(tmp: Path) -> dict[str, str]:
    """An empty checkpoint folder: nothing to load, so an instance starts in seconds (these
    tests are about serving, not models)."""
    checkpoints = tmp / "no-checkpoints"
    checkpoints.mkdir(exist_ok=True)
    return {"PAPERTRACE_CHECKPOINT_DIR": str(checkpoints)}


def assert_security_headers(answer: httpx.Response) -> None:
    """The app's security headers, each once and with the app's value (app/security.py)."""
    for name, value in SECURITY_HEADERS.items():
        assert answer.headers.get_list(name) == [value], (name, answer.headers.get_list(name))


@dataclass
class Stack:
    url: str  # nginx
    app: Instance


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("proxy")
    # The app's own rate limit is off so every 429 seen here is nginx's.
    env = {**no_checkpoints(tmp), "PAPERTRACE_RATE_LIMIT": "0"}
    app = start_instance(tmp, "app", "--workers", "2", env=env)
    try:
        app.wait_until_started(2)
        with running_nginx(tmp, free_port(), [app.socket]) as url:
            yield Stack(url, app)
    finally:
        app.stop()


@needs_nginx
def test_pages_through_nginx_carry_the_apps_headers(stack: Stack) -> None:
    answer = httpx.get(
        f"{stack.url}/", headers={"Accept-Encoding": "gzip", "X-Forwarded-For": "203.0.113.7"}
    )
    assert answer.status_code == 200
    assert_security_headers(answer)  # the app's, and nginx adds no second copy
    assert answer.headers["content-encoding"] == "gzip"
    assert answer.headers["server"] == "nginx"  # server_tokens off: no version
    # nginx's $request_id becomes the app's request id, and the app logs the address nginx
    # saw (loopback), not the one the client claimed.
    request_id = answer.headers["x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", request_id)
    assert answer.headers.get_list("x-request-id") == [request_id]
    time.sleep(0.2)
    line = next(line for line in stack.app.log.read_text().splitlines() if request_id in line)
    assert "client=127.0.0.1 " in line and "203.0.113.7" not in line


@needs_nginx
def test_nginx_serves_static_files_with_cache_headers(stack: Stack) -> None:
    gzip = {"Accept-Encoding": "gzip"}
    css = httpx.get(f"{stack.url}/static/css/site.css", headers=gzip)
    htmx = httpx.get(f"{stack.url}{SCRIPTS['htmx']}", headers=gzip)
    plotly = httpx.get(f"{stack.url}{PLOTLY_URL}", headers=gzip)
    assert css.status_code == htmx.status_code == plotly.status_code == 200
    assert css.headers["cache-control"] == "no-cache" and "etag" in css.headers
    for answer in (css, htmx, plotly):  # from disk (nginx's headers) and from the app (plotly)
        assert_security_headers(answer)
    for versioned in (htmx, plotly):
        assert versioned.headers.get_list("cache-control") == [
            "public, max-age=31536000, immutable"
        ]
        assert versioned.headers["content-encoding"] == "gzip"
    revalidated = httpx.get(
        f"{stack.url}/static/css/site.css", headers={"If-None-Match": css.headers["etag"]}
    )
    assert revalidated.status_code == 304
    # Files in static/ came from disk; plotly.js (not a file there) from the app.
    time.sleep(0.2)
    log = stack.app.log.read_text()
    assert "path=/static/css/site.css" not in log and f"path={PLOTLY_URL}" in log


@needs_nginx
def test_nginx_limits_the_api_per_address_whatever_x_forwarded_for_says(stack: Stack) -> None:
    time.sleep(2.5)  # let the bucket refill after the other tests

    def call(i: int) -> httpx.Response:
        headers = {"X-Forwarded-For": f"198.51.100.{i % 250}"}
        return client.post(f"{stack.url}/api/entmax", json=ENTMAX_BODY, headers=headers)

    with httpx.Client(timeout=10) as client:
        answers = [call(i) for i in range(120)]
    statuses = Counter(answer.status_code for answer in answers)
    assert statuses[200] >= 40 and statuses[429] > 0, statuses
    assert set(statuses) == {200, 429}, statuses
    refused = next(answer for answer in answers if answer.status_code == 429)
    assert refused.headers["retry-after"] == "1"
    assert "wait 1 s" in refused.json()["detail"]
    assert_security_headers(refused)
    time.sleep(2.5)
    assert httpx.post(f"{stack.url}/api/entmax", json=ENTMAX_BODY).status_code == 200


@needs_nginx
def test_a_killed_worker_loses_only_requests_in_flight(stack: Stack) -> None:
    time.sleep(2.5)
    before = stack.app.workers()
    assert len(before) == 2
    clients = 6
    statuses: list[int | str] = []
    lock = threading.Lock()
    stop_at = time.monotonic() + 6.0

    def reader(index: int) -> None:
        with httpx.Client(timeout=10) as client:
            while time.monotonic() < stop_at:
                path = ("/", "/healthz", "/papers/pointer-networks")[index % 3]
                try:
                    status: int | str = client.get(f"{stack.url}{path}").status_code
                except httpx.TransportError as exc:
                    status = type(exc).__name__
                with lock:
                    statuses.append(status)
                time.sleep(0.02)

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    time.sleep(2.0)
    os.kill(before[0], signal.SIGKILL)
    killed_at = len(statuses)
    for thread in threads:
        thread.join()

    failed = [status for status in statuses if status != 200]
    assert len(statuses) > 100, "too little traffic to tell"
    assert all(status == 200 for status in statuses[:killed_at]), Counter(statuses)
    # at most one request per client can have been in the killed worker
    assert len(failed) <= clients, Counter(statuses)
    assert all(status == 200 for status in statuses[-30:]), "traffic did not recover"
    # the supervisor replaces the worker
    deadline = time.monotonic() + STARTUP_S
    while len(stack.app.workers()) < 2 or before[0] in stack.app.workers():
        assert time.monotonic() < deadline, "the killed worker was not replaced"
        time.sleep(0.5)


def test_a_client_cannot_choose_its_address_without_a_trusted_proxy(tmp_path: Path) -> None:
    """TCP, no --forwarded-allow-ips: X-Forwarded-For from localhost is ignored, so distinct
    forged addresses share one rate-limit bucket (uvicorn alone would trust 127.0.0.1)."""
    port = free_port()
    log = tmp_path / "app.log"
    env = {
        **os.environ,
        **no_checkpoints(tmp_path),
        "PAPERTRACE_RATE_LIMIT": "1",
        "PAPERTRACE_RATE_BURST": "5",
    }
    command = [sys.executable, "-m", "app.serve", "--port", str(port)]
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=out)
    app = Instance(process, tmp_path / "none.sock", log)
    try:
        app.wait_until_started(1)
        with httpx.Client(timeout=10) as client:
            statuses = [
                client.post(
                    f"http://127.0.0.1:{port}/api/entmax",
                    json=ENTMAX_BODY,
                    headers={"X-Forwarded-For": f"192.0.2.{i}"},
                ).status_code
                for i in range(12)
            ]
    finally:
        app.stop()
    assert statuses[:5] == [200] * 5
    assert statuses.count(429) >= 5, statuses
    assert "192.0.2." not in log.read_text()
