"""Who may name the reader's address: only the proxy, on its own Unix socket.

nginx reaches `app.serve --uds` over a socket that only the app's user and group may open, and
there the app believes X-Forwarded-For. On any TCP listener it does not, whoever connects: a
local client that forges the header at the app's own port shares one rate-limit bucket with
every other connection from its address. Trusting an address instead
(`--forwarded-allow-ips 127.0.0.1`) would trust every process on the machine; app.serve
refuses it.
"""

from __future__ import annotations

import argparse
import socket
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.security import ForwardedBySocket, forwarded_address
from app.serve import SOCKET_MODE, build_config, remote_proxies, unix_listener
from bench.nginx import Instance, start_instance
from tests.own_loop import run_on_own_loop
from tests.test_hardening_proxy import ENTMAX_BODY, free_port, no_checkpoints


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Instance, int]]:
    """One worker listening on the proxy's socket and on a TCP port, with a tight rate limit:
    five requests at once per address, then one a second."""
    tmp = tmp_path_factory.mktemp("trust")
    port = free_port()
    env = {**no_checkpoints(tmp), "PAPERTRACE_RATE_LIMIT": "1", "PAPERTRACE_RATE_BURST": "5"}
    instance = start_instance(tmp, "app", "--port", str(port), env=env)
    try:
        instance.wait_until_started(1)
        yield instance, port
    finally:
        instance.stop()


def test_the_proxys_socket_is_open_to_the_apps_user_and_group_only(
    app: tuple[Instance, int],
) -> None:
    instance, _ = app
    mode = instance.socket.stat().st_mode
    assert stat.S_ISSOCK(mode)
    assert stat.S_IMODE(mode) == SOCKET_MODE == 0o660  # uvicorn's own --uds makes it 0666


def test_on_the_proxys_socket_each_forwarded_address_has_its_own_limit(
    app: tuple[Instance, int],
) -> None:
    instance, _ = app
    with instance.client(timeout=10) as client:
        statuses = [
            client.post(
                "/api/entmax",
                json=ENTMAX_BODY,
                headers={"X-Forwarded-For": f"198.51.100.{i}", "X-Forwarded-Proto": "https"},
            ).status_code
            for i in range(12)
        ]
    assert statuses == [200] * 12  # twelve readers, one request each
    # the access line is written as the answer leaves: give the last one a moment to land
    wanted = [f"client=198.51.100.{i} " for i in range(12)]
    deadline = time.monotonic() + 5
    while not all(w in instance.log.read_text() for w in wanted) and time.monotonic() < deadline:
        time.sleep(0.05)
    log = instance.log.read_text()
    assert all(w in log for w in wanted), [w for w in wanted if w not in log]


def test_a_local_client_forging_x_forwarded_for_at_the_apps_port_is_limited_like_any_other(
    app: tuple[Instance, int],
) -> None:
    instance, port = app
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
        statuses = [
            client.post(
                "/api/entmax", json=ENTMAX_BODY, headers={"X-Forwarded-For": f"192.0.2.{i}"}
            ).status_code
            for i in range(12)
        ]
    # one bucket for all twelve: the burst of five, then refusals (a token a second comes back)
    assert statuses[:5] == [200] * 5
    assert statuses.count(429) >= 5, statuses
    assert "192.0.2." not in instance.log.read_text()


@pytest.mark.parametrize(
    "proxies", ["127.0.0.1", "10.0.0.2,127.0.0.1", "127.0.0.0/8", "0.0.0.0/0", "::1", "::/0"]
)
def test_trusting_this_machine_by_address_is_refused(proxies: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="includes this machine"):
        remote_proxies(proxies)
    with pytest.raises(SystemExit):
        build_config(["--forwarded-allow-ips", proxies])


@pytest.mark.parametrize("proxies", ["*", "nginx", "10.0.0.300"])
def test_a_proxy_must_be_an_address_or_a_network(proxies: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="not an address or a network"):
        remote_proxies(proxies)


def test_proxies_on_other_machines_are_trusted_on_tcp() -> None:
    config = build_config(["--forwarded-allow-ips", "10.0.0.2, 10.0.1.0/24"])
    assert config.proxy_headers is True and config.forwarded_allow_ips == "10.0.0.2,10.0.1.0/24"


def test_with_a_socket_there_is_no_tcp_listener_unless_asked_for(tmp_path: Path) -> None:
    path = str(tmp_path / "app.sock")
    alone = build_config(["--uds", path])
    assert alone.proxy_socket == path and alone.tcp is False
    both = build_config(["--uds", path, "--port", "8123"])
    assert both.tcp is True and both.port == 8123
    plain = build_config([])
    assert plain.proxy_socket is None and plain.tcp is True and plain.port == 8000


def test_forwarded_headers_are_believed_on_the_socket_only() -> None:
    seen: list[tuple[object, object]] = []

    async def app(scope: dict, receive: object, send: object) -> None:
        seen.append((scope["client"], scope["scheme"]))

    middleware = ForwardedBySocket(app, "/run/papertrace/app-1.sock")
    headers = [(b"x-forwarded-for", b"203.0.113.9, 198.51.100.4"), (b"x-forwarded-proto", b"https")]
    for server in (("/run/papertrace/app-1.sock", None), ("127.0.0.1", 8000), None):
        scope = {
            "type": "http",
            "server": server,
            "client": ("127.0.0.1", 5000) if server else None,
            "scheme": "http",
            "headers": headers,
        }
        run_on_own_loop(middleware(scope, None, None))
    # the last entry is the one the proxy added; elsewhere nothing changes
    assert seen == [
        (("198.51.100.4", 0), "https"),
        (("127.0.0.1", 5000), "http"),
        (None, "http"),
    ]


@pytest.mark.parametrize(
    ("header", "address"),
    [
        ("198.51.100.4", "198.51.100.4"),
        (" 2001:db8::1 ", "2001:db8::1"),
        ("evil, 198.51.100.4", "198.51.100.4"),
        ("203.0.113.9,198.51.100.4", "198.51.100.4"),  # no space after the comma
        ("203.0.113.9, 192.0.2.1, 198.51.100.4", "198.51.100.4"),  # two proxies before
        ("198.51.100.4, evil", None),
        ("", None),
        (None, None),
        ("unix:socket", None),
    ],
)
def test_the_forwarded_address_is_the_last_entry_when_it_is_an_address(
    header: str | None, address: str | None
) -> None:
    assert forwarded_address(header) == address


def test_a_socket_left_by_a_killed_instance_is_replaced_a_live_one_is_not(tmp_path: Path) -> None:
    path = str(tmp_path / "app.sock")
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(path)
    stale.close()  # the file stays, nobody listens: what SIGKILL leaves
    live = unix_listener(path)
    try:
        live.listen()
        assert stat.S_IMODE(Path(path).stat().st_mode) == 0o660
        with pytest.raises(SystemExit, match="Another server is listening"):
            unix_listener(path)
    finally:
        live.close()
    not_a_socket = tmp_path / "notes.txt"
    not_a_socket.write_text("keep me")
    with pytest.raises(SystemExit, match="is not a socket"):
        unix_listener(str(not_a_socket))
    assert not_a_socket.read_text() == "keep me"


def test_the_socket_passes_the_proxys_scheme_and_the_connection_on() -> None:
    """Plain http from the proxy is believed too (an https listener behind a plain proxy), and
    the request's receive and send reach the app unchanged."""
    seen: list[object] = []

    async def app(scope: dict, receive: object, send: object) -> None:
        seen.extend([scope["scheme"], receive, send])

    async def receive() -> dict:
        return {}

    async def send(message: dict) -> None:
        return None

    middleware = ForwardedBySocket(app, "/run/papertrace/app-1.sock")
    for proto, scheme in ((b"http", "http"), (b"ftp", "https"), (b" https ", "https")):
        seen.clear()
        scope = {
            "type": "http",
            "server": ("/run/papertrace/app-1.sock", None),
            "client": None,
            "scheme": "https",
            "headers": [(b"x-forwarded-proto", proto)],
        }
        run_on_own_loop(middleware(scope, receive, send))
        assert seen == [scheme, receive, send]
