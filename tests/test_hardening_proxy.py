"""The app as deployed: `python -m app.serve --workers 2` behind Debian's nginx running
deploy/nginx.conf (only its ports and root changed), all on loopback.

Checks the headers readers get, nginx's per-address rate limit (which a forged
X-Forwarded-For does not escape), static files served by nginx with their cache headers, and a
worker killed while traffic runs: only requests in flight may fail, and the supervisor starts a
new worker. Without nginx (`make test` installs it) those tests are skipped with that reason.

The app-only test at the end starts `app.serve` without a proxy and checks that a client on
the same machine cannot pick its own address with X-Forwarded-For.
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
from app.security import CONTENT_SECURITY_POLICY, PERMISSIONS_POLICY
from bench.nginx import nginx_binary, running_nginx

ROOT = Path(__file__).resolve().parent.parent
needs_nginx = pytest.mark.skipif(
    nginx_binary() is None,
    reason="nginx is not installed here; `make test` installs it (apt-get install nginx)",
)
STARTUP_S = 120
ENTMAX_BODY = {"scores": [0.5, 1.0, 2.0], "alpha": 1.5}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class App:
    process: subprocess.Popen[bytes]
    url: str
    log: Path

    def workers(self) -> list[int]:
        """Process ids of the uvicorn workers (spawned children running spawn_main)."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        pids = [int(pid) for pid in children.read_text().split()]
        return [pid for pid in pids if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]

    def wait_for_startups(self, count: int) -> None:
        deadline = time.monotonic() + STARTUP_S
        while self.log.read_text(errors="replace").count("Application startup complete") < count:
            assert self.process.poll() is None, self.log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, "the app did not start in time"
            time.sleep(0.2)


def start_app(tmp: Path, *args: str, env: dict[str, str] | None = None) -> App:
    """`python -m app.serve` on a free port with no checkpoints (nothing to load, so it
    starts in seconds; these tests are about serving, not models)."""
    port = free_port()
    checkpoints = tmp / "no-checkpoints"
    checkpoints.mkdir(exist_ok=True)
    log = tmp / f"app-{port}.log"
    environment = {
        **os.environ,
        "PAPERTRACE_CHECKPOINT_DIR": str(checkpoints),
        "OMP_NUM_THREADS": "1",
        **(env or {}),
    }
    command = [sys.executable, "-m", "app.serve", "--port", str(port), *args]
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=out, stderr=out)
    return App(process, f"http://127.0.0.1:{port}", log)


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class Stack:
    url: str  # nginx
    app: App


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("proxy")
    # The app's own rate limit is off so every 429 seen here is nginx's.
    app = start_app(
        tmp,
        "--workers",
        "2",
        "--forwarded-allow-ips",
        "127.0.0.1",
        env={"PAPERTRACE_RATE_LIMIT": "0"},
    )
    try:
        app.wait_for_startups(2)
        app_port = int(app.url.rsplit(":", 1)[1])
        with running_nginx(tmp, free_port(), app_port) as url:
            yield Stack(url, app)
    finally:
        stop(app.process)


@needs_nginx
def test_pages_through_nginx_carry_the_apps_headers(stack: Stack) -> None:
    answer = httpx.get(
        f"{stack.url}/", headers={"Accept-Encoding": "gzip", "X-Forwarded-For": "203.0.113.7"}
    )
    assert answer.status_code == 200
    assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert answer.headers["permissions-policy"] == PERMISSIONS_POLICY
    assert answer.headers["content-encoding"] == "gzip"
    assert answer.headers["server"] == "nginx"  # server_tokens off: no version
    # nginx's $request_id becomes the app's request id, and the app logs the address nginx
    # saw (loopback), not the one the client claimed.
    request_id = answer.headers["x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", request_id)
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
    assert css.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert css.headers["x-content-type-options"] == "nosniff"
    assert css.headers["permissions-policy"] == PERMISSIONS_POLICY
    for versioned in (htmx, plotly):
        assert versioned.headers["cache-control"] == "public, max-age=31536000, immutable"
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
    """No --forwarded-allow-ips: X-Forwarded-For from localhost is ignored, so distinct
    forged addresses share one rate-limit bucket (uvicorn alone would trust 127.0.0.1)."""
    app = start_app(tmp_path, env={"PAPERTRACE_RATE_LIMIT": "1", "PAPERTRACE_RATE_BURST": "5"})
    try:
        app.wait_for_startups(1)
        with httpx.Client(timeout=10) as client:
            statuses = [
                client.post(
                    f"{app.url}/api/entmax",
                    json=ENTMAX_BODY,
                    headers={"X-Forwarded-For": f"192.0.2.{i}"},
                ).status_code
                for i in range(12)
            ]
    finally:
        stop(app.process)
    assert statuses[:5] == [200] * 5
    assert statuses.count(429) >= 5, statuses
    assert "192.0.2." not in app.log.read_text()
