"""Metrics that add up: with two workers every scrape reports the sum over both, a counter never
goes back (not even when a worker dies and is replaced), each start begins from zero, and
/metrics answers on app.serve's metrics port only.

Before, each worker kept its own registry and scrapes alternated between them
(`http_requests_total` 1,806 ↔ 18,694), and /metrics was open on the app's port.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import ServingSettings
from bench.nginx import STARTUP_S, Instance, start_instance
from tests.test_hardening_proxy import ENTMAX_BODY, free_port, no_checkpoints

SCRAPES = 20
TOTAL = re.compile(r"^http_requests_total\{[^}]*\} ([0-9.e+]+)$", re.MULTILINE)


@dataclass
class Metered:
    folder: Path
    metrics_url: str
    metrics_dir: Path
    instance: Instance


def start_metered(folder: Path, metrics_port: int, metrics_dir: Path) -> Instance:
    env = {**no_checkpoints(folder), "PAPERTRACE_RATE_LIMIT": "0"}
    args = ["--workers", "2", "--metrics-port", str(metrics_port)]
    instance = start_instance(folder, "app", *args, "--metrics-dir", str(metrics_dir), env=env)
    instance.wait_until_started(2)
    return instance


@pytest.fixture(scope="module")
def metered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Metered]:
    folder = tmp_path_factory.mktemp("metrics")
    port = free_port()
    metrics_dir = folder / "metrics"
    instance = start_metered(folder, port, metrics_dir)
    state = Metered(folder, f"http://127.0.0.1:{port}/metrics", metrics_dir, instance)
    try:
        yield state
    finally:
        state.instance.stop()


def requests_total(metrics_url: str) -> float:
    text = httpx.get(metrics_url, timeout=10).text
    return sum(float(value) for value in TOTAL.findall(text))


def send(instance: Instance, count: int) -> None:
    """`count` requests, each on a new connection so both workers take some."""
    for i in range(count):
        with instance.client(timeout=10) as client:
            path = "/healthz" if i % 2 else "/api/entmax"
            answer = client.get(path) if i % 2 else client.post(path, json=ENTMAX_BODY)
            assert answer.status_code == 200


def wait_for_replacement(instance: Instance, killed: int) -> None:
    deadline = time.monotonic() + STARTUP_S
    while len(instance.workers()) < 2 or killed in instance.workers():
        assert time.monotonic() < deadline, "the killed worker was not replaced"
        time.sleep(0.2)
    instance.wait_until_started(3)


def test_counter_totals_are_the_sum_over_workers_and_never_go_back(metered: Metered) -> None:
    sent = 0
    totals = []
    for scrape in range(SCRAPES):
        if scrape == SCRAPES // 2:  # a worker dies; its counts must stay in the sum
            killed = metered.instance.workers()[0]
            os.kill(killed, signal.SIGKILL)
            wait_for_replacement(metered.instance, killed)
        send(metered.instance, 6)
        sent += 6
        totals.append(requests_total(metered.metrics_url))
        # the last request's count may land a moment after its answer
        assert sent - 1 <= totals[-1] <= sent, (scrape, sent, totals)
    assert totals == sorted(totals), totals
    time.sleep(0.2)
    assert requests_total(metered.metrics_url) == sent
    # one file of counts per worker that ever ran: two, then the replacement
    writers = {path.stem.rsplit("_", 1)[1] for path in metered.metrics_dir.glob("counter_*.db")}
    assert len(writers) == 3, writers


def test_metrics_answer_on_the_metrics_port_only(metered: Metered) -> None:
    with metered.instance.client(timeout=10) as client:
        on_socket = client.get("/metrics")
    assert on_socket.status_code == 404
    assert "There is no page here" in on_socket.text  # the page of any address that does not exist
    base = metered.metrics_url.removesuffix("/metrics")
    elsewhere = httpx.get(f"{base}/api/pointer/models", timeout=10)
    assert elsewhere.status_code == 404
    assert elsewhere.json()["detail"].startswith("This port serves the metrics at /metrics only")
    assert "content-security-policy" in elsewhere.headers
    scrape = httpx.get(metered.metrics_url, timeout=10)
    assert scrape.status_code == 200 and scrape.headers["content-type"].startswith("text/plain")
    assert "http_request_duration_seconds_bucket" in scrape.text


def test_each_start_counts_from_zero(metered: Metered) -> None:
    """A restart with the same --metrics-dir empties it first: nothing of the last run is
    added in (this test restarts the module's instance, so it runs last)."""
    assert requests_total(metered.metrics_url) > 0
    metered.instance.stop()
    assert metered.instance.process.returncode == 0
    assert not metered.instance.socket.exists()  # removed on the way out
    port = int(metered.metrics_url.rsplit(":", 1)[1].split("/")[0])
    metered.instance = start_metered(metered.folder, port, metered.metrics_dir)
    send(metered.instance, 4)
    time.sleep(0.2)
    assert requests_total(metered.metrics_url) == 4


def test_without_a_metrics_port_metrics_answer_nowhere(tmp_path: Path) -> None:
    """(One worker: a stopped instance removes its socket on this path too.)"""
    instance = start_instance(tmp_path, "app", env=no_checkpoints(tmp_path))
    try:
        instance.wait_until_started(1)
        with instance.client(timeout=10) as client:
            assert client.get("/metrics").status_code == 404
            assert client.get("/healthz").status_code == 200
    finally:
        instance.stop()
    assert instance.process.returncode == 0
    assert not instance.socket.exists()


@pytest.mark.parametrize(("port", "status"), [(9464, 200), (80, 404)])
def test_the_app_checks_the_listener_itself(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, port: int, status: int
) -> None:
    """In-process: the restriction is the app's, not only the proxy's (TestClient's listener
    is testserver:80 unless its base URL says otherwise)."""
    monkeypatch.setenv("PAPERTRACE_METRICS_PORT", "9464")
    app = create_app(checkpoint_dir=tmp_path, served=())
    client = TestClient(app, base_url=f"http://testserver:{port}")
    assert client.get("/metrics").status_code == status
    other = client.get("/healthz")
    assert other.status_code == (404 if port == 9464 else 200)


def test_the_metrics_port_setting_is_a_port_or_start_up_stops() -> None:
    assert ServingSettings.from_env({}).metrics_port is None
    assert ServingSettings.from_env({"PAPERTRACE_METRICS_PORT": " 9461 "}).metrics_port == 9461
    assert ServingSettings.from_env({"PAPERTRACE_METRICS_PORT": "0"}).metrics_port == 0
    for raw in ("abc", "70000", "80.5", "-1"):
        with pytest.raises(ValueError, match=r"\$PAPERTRACE_METRICS_PORT must"):
            ServingSettings.from_env({"PAPERTRACE_METRICS_PORT": raw})
