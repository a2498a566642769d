"""nginx's own answers, and when it sends a request a second time.

deploy/nginx.conf (as bench/nginx.py runs it) in front of stand-in instances on Unix sockets: a
socket nobody listens on (502), one that takes a request and never answers (504), and a pair
that shares one memory, so that an instance can fail the first delivery of a request and
answer the second. Each of nginx's refusals must be the app's kind of answer: JSON with a
sentence under /api/, a small page elsewhere, with the app's security headers; and only
requests that are safe to repeat may be repeated.
"""

from __future__ import annotations

import socket
import socketserver
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bench.nginx import running_nginx
from tests.test_hardening_proxy import ENTMAX_BODY, assert_security_headers, free_port, needs_nginx

pytestmark = needs_nginx


class StandIn(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """An upstream instance on a Unix socket. `mode` "hang" reads requests and never answers;
    "crash-once" closes the connection without answering the first time it receives a path
    with /crash-once/ in it (counted in `deliveries`, which a pair of stand-ins may share), and
    answers 200 `ok` to everything else."""

    daemon_threads = True

    def __init__(self, path: Path, mode: str, deliveries: Counter[str]) -> None:
        self.mode = mode
        self.deliveries = deliveries
        self.lock = threading.Lock()
        super().__init__(str(path), StandInHandler)


class StandInHandler(socketserver.StreamRequestHandler):
    server: StandIn

    def handle(self) -> None:
        while request := self.read_request():
            method, path = request
            with self.server.lock:
                self.server.deliveries[f"{method} {path}"] += 1
                first = self.server.deliveries[f"{method} {path}"] == 1
            if self.server.mode == "hang":
                time.sleep(30)
                return
            if "/crash-once/" in path and first:
                return  # the connection closes with no answer, as when an instance dies
            self.wfile.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"
            )

    def read_request(self) -> tuple[str, str] | None:
        line = self.rfile.readline()
        if not line:
            return None
        method, path, _ = line.decode("latin-1").split(" ", 2)
        length = 0
        while (header := self.rfile.readline()) not in (b"\r\n", b""):
            name, _, value = header.decode("latin-1").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        self.rfile.read(length)
        return method, path


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The stand-ins' sockets, and a folder for each nginx."""
    folder = tmp_path_factory.mktemp("nginx-errors")
    for name in ("nobody", "hanging", "pair"):
        (folder / name).mkdir()
    return folder


@pytest.fixture(scope="module")
def stand_ins(folder: Path) -> Iterator[dict[str, StandIn]]:
    shared: Counter[str] = Counter()
    servers = {
        "hang": StandIn(folder / "hang.sock", "hang", Counter()),
        "first": StandIn(folder / "first.sock", "crash-once", shared),
        "second": StandIn(folder / "second.sock", "crash-once", shared),
    }
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers.values()]
    for thread in threads:
        thread.start()
    yield servers
    for server in servers.values():
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def nobody(folder: Path) -> Iterator[str]:
    """nginx whose one instance is down (its socket refuses connections)."""
    dead = folder / "dead.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(dead))
    listener.close()
    with running_nginx(folder / "nobody", free_port(), [dead], wait_for_app=False) as url:
        yield url


def assert_apps_kind_of_answer(answer: httpx.Response, status: int, sentence: str) -> None:
    assert answer.status_code == status, answer.text
    assert_security_headers(answer)
    assert answer.headers["x-request-id"]
    if answer.request.url.path.startswith("/api/"):
        assert answer.headers["content-type"] == "application/json"
        assert answer.json() == {"detail": sentence}
    else:
        assert answer.headers["content-type"] == "text/html; charset=utf-8"
        assert f"<p>{sentence}</p>" in answer.text
        assert f'<p class="status-code">{status}</p>' in answer.text
        assert '<link rel="stylesheet" href="/static/css/site.css">' in answer.text
    assert "nginx" not in answer.text


NO_INSTANCE = "No instance of the site answered this request. Wait a few seconds and try again."


@pytest.mark.parametrize("path", ["/", "/papers/pointer-networks", "/api/pointer/models"])
def test_no_instance_answering_is_a_sentence_not_nginxs_page(nobody: str, path: str) -> None:
    answer = httpx.get(f"{nobody}{path}")
    assert_apps_kind_of_answer(answer, 502, NO_INSTANCE)
    assert "retry-after" not in answer.headers


def test_a_body_over_64_kb_is_refused_with_the_apps_sentence(nobody: str) -> None:
    answer = httpx.post(f"{nobody}/api/entmax", content=b"1" * 70_000)
    sentence = (
        "The request body is over 65,536 bytes, the most this server accepts. Send fewer "
        "points or values, or a shorter text."
    )
    assert_apps_kind_of_answer(answer, 413, sentence)


def test_an_address_over_8_kb_is_refused_with_a_sentence(nobody: str) -> None:
    answer = httpx.get(f"{nobody}/papers/pointer-networks?board.points=" + "0.5," * 3000)
    sentence = (
        "The address is over 8,192 bytes, the most this server accepts. Use fewer points or "
        "a shorter text."
    )
    assert_apps_kind_of_answer(answer, 414, sentence)


def test_metrics_are_not_for_readers(nobody: str) -> None:
    answer = httpx.get(f"{nobody}/metrics")
    assert_apps_kind_of_answer(
        answer, 403, "This address is for the server's operators, not for readers."
    )


def test_nginxs_rate_limit_answers_like_the_apps(nobody: str) -> None:
    time.sleep(2.5)  # a full bucket: earlier tests spent some of it
    with httpx.Client(base_url=nobody, timeout=10) as client:
        # 20 a second after a burst of 40 (deploy/nginx.conf): 200 requests leave at least 30
        # refused unless they take over 6 s, however busy the machine is
        answers = [client.post("/api/entmax", json=ENTMAX_BODY) for _ in range(200)]
    statuses = Counter(answer.status_code for answer in answers)
    assert set(statuses) == {502, 429} and statuses[429] >= 30, statuses
    refused = next(answer for answer in answers if answer.status_code == 429)
    sentence = "Too many requests from your address in a short time; wait 1 s and try again."
    assert_apps_kind_of_answer(refused, 429, sentence)
    assert refused.headers["retry-after"] == "1"


def test_a_request_nginx_cannot_read_gets_a_page(nobody: str) -> None:
    port = int(nobody.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        raw.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n")
        reply = b""
        while chunk := raw.recv(65536):
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ")
    assert b"Content-Security-Policy: default-src 'self'" in head
    assert b"The server could not read this request" in body and b"nginx" not in body


def test_an_instance_that_takes_too_long_is_a_504_with_a_sentence(
    folder: Path, stand_ins: dict[str, StandIn]
) -> None:
    sockets = [Path(stand_ins["hang"].server_address)]
    with running_nginx(
        folder / "hanging", free_port(), sockets, read_timeout_s=1, wait_for_app=False
    ) as url:
        started = time.monotonic()
        page = httpx.get(f"{url}/", timeout=10)
        api = httpx.post(f"{url}/api/entmax", json=ENTMAX_BODY, timeout=10)
        elapsed = time.monotonic() - started
    sentence = (
        "The site took more than 10 s to answer, so the request was stopped. Try again, or ask "
        "for a smaller figure."
    )
    assert_apps_kind_of_answer(page, 504, sentence)
    assert_apps_kind_of_answer(api, 504, sentence)
    assert elapsed < 5


def test_nginx_sends_a_request_again_only_when_that_is_safe(
    folder: Path, stand_ins: dict[str, StandIn]
) -> None:
    """The first delivery of each /crash-once/ request fails as if its instance died holding
    it. A GET goes to the other instance and is answered; a POST is not sent again (the
    instance may have acted on it) and the reader gets a 502 with a sentence."""
    pair = [Path(stand_ins[name].server_address) for name in ("first", "second")]
    deliveries = stand_ins["first"].deliveries
    with running_nginx(folder / "pair", free_port(), pair, wait_for_app=False) as url:
        with httpx.Client(base_url=url, timeout=10) as client:
            page = client.get("/crash-once/page")
            api_get = client.get("/api/crash-once/get")
            posted = client.post("/api/crash-once/post", json=ENTMAX_BODY)
            plain_post = client.post("/api/plain", json=ENTMAX_BODY)
    assert page.status_code == 200 and page.text == "ok"
    assert api_get.status_code == 200
    assert deliveries["GET /crash-once/page"] == deliveries["GET /api/crash-once/get"] == 2
    assert_apps_kind_of_answer(posted, 502, NO_INSTANCE)
    assert deliveries["POST /api/crash-once/post"] == 1
    assert plain_post.status_code == 200 and deliveries["POST /api/plain"] == 1
