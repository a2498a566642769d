"""More than one machine, played by two `app.serve` instances on their own sockets behind one
nginx running deploy/nginx.conf: any instance answers any request alike, nginx's per-address
limit holds across them, and when one instance dies under traffic only the requests it held are
lost (a POST it held gets a 502 with a sentence; everything after goes to the other).

bench/load.py --instances 2 --kill-after S measures the same with the 50-reader load.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from bench.nginx import Instance, running_nginx, start_instance
from tests.test_hardening_proxy import ENTMAX_BODY, free_port, needs_nginx, no_checkpoints

pytestmark = needs_nginx
CLIENTS = 6


@dataclass
class Pair:
    url: str  # nginx, without its rate limit (every test client is 127.0.0.1)
    limited_url: str  # nginx as deployed
    instances: list[Instance]


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    tmp = tmp_path_factory.mktemp("instances")
    env = {**no_checkpoints(tmp), "PAPERTRACE_RATE_LIMIT": "0"}
    instances = [start_instance(tmp, name, env=env) for name in ("a", "b")]
    try:
        for instance in instances:
            instance.wait_until_started(1)
        sockets = [instance.socket for instance in instances]
        (tmp / "open").mkdir()
        (tmp / "limited").mkdir()
        with (
            running_nginx(tmp / "open", free_port(), sockets, rate_limit=False) as url,
            running_nginx(tmp / "limited", free_port(), sockets) as limited_url,
        ):
            yield Pair(url, limited_url, instances)
    finally:
        for instance in instances:
            instance.stop()


def comparable(answer: httpx.Response) -> tuple[int, str, bytes]:
    return answer.status_code, answer.headers["content-type"], answer.content


def test_either_instance_answers_any_request_alike(pair: Pair) -> None:
    """Nothing a request needs lives in one instance: the same requests, sent to each
    instance's socket directly, get the same answers (request ids aside)."""
    requests = [
        ("POST", "/api/entmax", ENTMAX_BODY, {}),
        ("POST", "/api/entmax", ENTMAX_BODY, {"HX-Request": "true"}),
        ("GET", "/api/pointer/models", None, {}),
        ("GET", "/papers/pointer-networks", None, {}),
        ("GET", "/nope", None, {}),
    ]
    answers = []
    for instance in pair.instances:
        with instance.client(timeout=10) as client:
            answers.append(
                [
                    comparable(client.request(method, path, json=body, headers=headers))
                    for method, path, body, headers in requests
                ]
            )
    assert answers[0] == answers[1]
    assert [status for status, _, _ in answers[0]] == [200, 200, 200, 200, 404]


def test_nginx_spreads_requests_over_both_instances(pair: Pair) -> None:
    def served() -> list[int]:
        return [instance.log.read_text().count("path=/healthz ") for instance in pair.instances]

    before = served()
    with httpx.Client(base_url=pair.url, timeout=10) as client:
        for _ in range(20):
            assert client.get("/healthz").status_code == 200
    time.sleep(0.2)
    spread = [after - earlier for after, earlier in zip(served(), before, strict=True)]
    assert sum(spread) == 20 and min(spread) >= 5, spread


def test_the_per_address_limit_holds_across_instances(pair: Pair) -> None:
    """The app's own limit is off here: whatever refuses is nginx's one zone for the address,
    however the requests are spread (and forged addresses do not escape it)."""
    with httpx.Client(base_url=pair.limited_url, timeout=10) as client:
        started = time.monotonic()
        statuses = Counter(
            client.post(
                "/api/entmax", json=ENTMAX_BODY, headers={"X-Forwarded-For": f"192.0.2.{i}"}
            ).status_code
            for i in range(150)
        )
        elapsed = time.monotonic() - started
    # a burst of 40, then 20 a second
    assert 40 <= statuses[200] <= 40 + 20 * elapsed + 2, (statuses, elapsed)
    assert set(statuses) == {200, 429}, statuses


@dataclass
class Traffic:
    # (method, started, ended, status or the transport error's name)
    records: list[tuple[str, float, float, int | str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def read_and_write(url: str, index: int, stop_at: float, traffic: Traffic) -> None:
    """One reader: pages, health checks and API calls (POST) in turn, 20 ms apart."""
    with httpx.Client(base_url=url, timeout=10) as client:
        step = index
        while time.monotonic() < stop_at:
            kind = step % 3
            step += 1
            started = time.monotonic()
            try:
                if kind == 0:
                    method, status = "POST", client.post("/api/entmax", json=ENTMAX_BODY)
                else:
                    method, status = "GET", client.get(("/", "/healthz")[kind - 1])
                outcome: int | str = status.status_code
                if outcome == 502:
                    assert status.json()["detail"].startswith("No instance of the site answered")
            except httpx.TransportError as exc:
                outcome = type(exc).__name__
            with traffic.lock:
                traffic.records.append((method, started, time.monotonic(), outcome))
            time.sleep(0.02)


def test_killing_one_instance_loses_only_the_requests_it_held(pair: Pair) -> None:
    """Runs last: it kills instance a (every process of it, as when a machine goes down)."""
    traffic = Traffic()
    stop_at = time.monotonic() + 6.0
    threads = [
        threading.Thread(target=read_and_write, args=(pair.url, i, stop_at, traffic))
        for i in range(CLIENTS)
    ]
    for thread in threads:
        thread.start()
    time.sleep(2.0)
    killed_at = time.monotonic()
    pair.instances[0].kill()
    dead_at = time.monotonic()  # its sockets are closed: connections to it are refused now
    for thread in threads:
        thread.join()

    records = traffic.records
    failed = [record for record in records if record[3] != 200]
    assert len(records) > 150, "too little traffic to tell"
    # Every loss was in flight: sent before the instance was gone (a connection the kernel
    # queued for the dying process counts), still unanswered when it was killed. At most one
    # per reader.
    assert all(started <= dead_at and ended >= killed_at for _, started, ended, _ in failed), (
        failed,
        killed_at,
        dead_at,
    )
    assert len(failed) <= CLIENTS, failed
    # A GET it held was sent to the other instance instead, unless its answer had begun to
    # reach the reader (nginx cannot retry a half-sent answer: the connection is cut, never a
    # 502 page)
    assert all(
        method == "POST" or outcome == "RemoteProtocolError" for method, _, _, outcome in failed
    ), failed
    after = [record for record in records if record[1] > dead_at]
    assert len(after) > 100 and all(record[3] == 200 for record in after)
    assert pair.instances[1].process.poll() is None
    assert Path(pair.instances[0].socket).exists()  # SIGKILL left it: nginx sees refusals
