"""`python -m app.serve`: the app's worker processes and the sockets they listen on.

    # one instance behind nginx on this machine (deploy/nginx.conf, README "Deploying")
    python -m app.serve --uds /run/papertrace/app-1.sock --workers 2 --metrics-port 9461
    # on its own, for development
    python -m app.serve --port 8000

Listeners, all bound here before the workers start and shared by them:

- `--uds PATH`, the proxy's Unix socket, mode 0660: only the app's user and its group (nginx's
  user is made a member) may open it, so every connection on it is the proxy, and there alone
  the proxy's X-Forwarded-For names the reader (app.security.ForwardedBySocket). uvicorn's own
  `--uds` socket is 0666: any local process could pose as the proxy.
- `--host`/`--port`, TCP (127.0.0.1:8000 unless `--uds` is given alone). X-Forwarded-For is
  ignored there unless `--forwarded-allow-ips` names a proxy on another machine; a loopback
  address is refused, since trusting it would trust every process on this one.
- `--metrics-port`, /metrics on a TCP listener of its own (loopback unless `--metrics-host`),
  the only place it answers (app.observability). Workers count in files under
  $PROMETHEUS_MULTIPROC_DIR (`--metrics-dir`, emptied at start-up; by default a fresh temporary
  folder, removed at exit), so whichever worker answers a scrape reports the sum over all of
  them. Without `--metrics-port`, /metrics answers nowhere.

uvicorn has no timeout for reading a request's head or body (its one timer closes a connection
left idle after a response: `timeout_keep_alive`). nginx guards both (client_header_timeout,
client_body_timeout; it reads a whole body before it opens the upstream connection), and the
public listener is the socket only nginx may open.

One fix to uvicorn's supervisor: with `--workers N` (and under gunicorn's uvicorn worker)
uvicorn releases older than the one installed here bound the listening socket with its protocol
field at 0. Accepted connections inherit that, and asyncio only turns Nagle's algorithm off
(TCP_NODELAY) for sockets that say they are TCP, so on Linux every response after the first on a
keep-alive connection waited ~40 ms for the client's delayed ACK (uvicorn issue #3149; measured
here: 44 ms per request with 2 workers against 1-2 ms with one). pyproject.toml allows those
releases, so TCP listeners here are made as TCP.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import logging
import os
import shutil
import signal
import socket
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import uvicorn
from uvicorn.supervisors import Multiprocess

from app.security import ForwardedBySocket

# Longer than the proxy keeps an idle connection to us (deploy/nginx.conf: 30 s), so the proxy,
# not the app, closes it: otherwise a POST can race the close and get a 502.
KEEP_ALIVE_S = 75
# A stopped or restarted instance finishes the requests it holds (a model call stops at its
# 2 s deadline; nginx gives up after 10 s) before its workers exit.
GRACEFUL_SHUTDOWN_S = 10
# The largest request head h11 buffers. nginx passes heads of up to 4 × 8 KB
# (large_client_header_buffers) and refuses longer ones itself, with its sentence.
MAX_HEAD_BYTES = 48 * 1024
SOCKET_MODE = 0o660
DEFAULT_PORT = 8000
log = logging.getLogger("uvicorn.error")


def tcp_listener(host: str, port: int) -> socket.socket:
    """A listening TCP socket that says it is TCP (see the module docstring), for the workers."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.set_inheritable(True)
    return listener


def unix_listener(path: str) -> socket.socket:
    """The proxy's socket at `path`, created 0660 (no moment when others may connect); a
    socket left by an instance that was killed is replaced, a live one is not."""
    replace_stale_socket(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    umask = os.umask(0o777 & ~SOCKET_MODE)
    try:
        listener.bind(path)
    finally:
        os.umask(umask)
    listener.set_inheritable(True)
    return listener


def replace_stale_socket(path: str) -> None:
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise SystemExit(f"{path} exists and is not a socket; choose another --uds path.")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(path)
        except ConnectionRefusedError:
            os.unlink(path)  # nobody listens: left by an instance that did not exit cleanly
            return
    raise SystemExit(f"Another server is listening on {path}; stop it or choose another --uds.")


class TcpListenerConfig(uvicorn.Config):
    def bind_socket(self) -> socket.socket:
        if self.uds is not None or self.fd is not None:
            return super().bind_socket()
        return tcp_listener(self.host, self.port)


class ServeConfig(TcpListenerConfig):
    """uvicorn's configuration plus this module's listeners: the proxy's socket (whose
    connections' forwarded headers are believed), the TCP one and the metrics one."""

    def __init__(
        self,
        *args: Any,
        proxy_socket: str | None = None,
        tcp: bool = True,
        metrics_host: str = "127.0.0.1",
        metrics_port: int | None = None,
        metrics_dir: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.proxy_socket = proxy_socket
        self.tcp = tcp
        self.metrics_host = metrics_host
        self.metrics_port = metrics_port
        self.metrics_dir = metrics_dir

    def load(self) -> None:
        super().load()
        if self.proxy_socket is not None:
            self.loaded_app = ForwardedBySocket(self.loaded_app, self.proxy_socket)

    def listeners(self) -> list[socket.socket]:
        """Every listener, bound; if one cannot be, those already bound are closed again."""
        wanted: list[tuple[str, Callable[[], socket.socket]]] = []
        if self.proxy_socket is not None:
            path = self.proxy_socket
            wanted.append((f"unix socket {path} (mode 0660)", lambda: unix_listener(path)))
        if self.tcp:
            wanted.append((f"http://{self.host}:{self.port}", self.bind_socket))
        if self.metrics_port is not None:
            host, port = self.metrics_host, self.metrics_port
            wanted.append((f"http://{host}:{port}/metrics", lambda: tcp_listener(host, port)))
        sockets: list[socket.socket] = []
        for where, bind in wanted:
            try:
                sockets.append(bind())
            except OSError as exc:
                close_listeners(sockets, self.proxy_socket)
                raise SystemExit(f"Cannot listen on {where}: {exc.strerror or exc}.") from None
            log.info("Listening on %s", where)
        return sockets


def close_listeners(sockets: list[socket.socket], proxy_socket: str | None) -> None:
    for listener in sockets:
        listener.close()
    if proxy_socket is not None and sockets:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(proxy_socket)


def remote_proxies(value: str) -> str:
    """--forwarded-allow-ips: addresses or networks of proxies on other machines."""
    entries = [entry.strip() for entry in value.split(",") if entry.strip()]
    for entry in entries:
        try:
            network = ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{entry!r} is not an address or a network (e.g. 10.0.0.2 or 10.0.0.0/24)."
            ) from None
        loopback = ipaddress.ip_network("127.0.0.0/8" if network.version == 4 else "::1/128")
        if network.overlaps(loopback):  # type: ignore[arg-type]  # same version, checked above
            raise argparse.ArgumentTypeError(
                f"{entry} includes this machine: every local process could then claim any "
                "address and slip past the rate limit. For nginx on this machine use --uds."
            )
    return ",".join(entries)


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument(
        "--port",
        type=int,
        default=None,
        help=f"TCP port; default {DEFAULT_PORT}, or none when --uds is given",
    )
    parser.add_argument(
        "--uds",
        default=None,
        help="the Unix socket a reverse proxy on this machine connects to (nginx: "
        "`server unix:PATH`); only its connections' X-Forwarded-For is believed",
    )
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--forwarded-allow-ips",
        type=remote_proxies,
        default="",
        help="comma-separated addresses of reverse proxies on other machines whose "
        "X-Forwarded-For is believed on the TCP listener. Default: none.",
    )
    parser.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        help="serve /metrics on this port (and nowhere else); default: no metrics",
    )
    parser.add_argument("--metrics-host", default="127.0.0.1")
    parser.add_argument(
        "--metrics-dir",
        default=None,
        help="folder for the workers' metric files, emptied at start-up "
        "(default: a new temporary folder, removed at exit)",
    )
    return parser


def build_config(argv: list[str] | None = None) -> ServeConfig:
    args = argument_parser().parse_args(argv)
    proxy_socket = os.path.abspath(args.uds) if args.uds else None
    trusted = args.forwarded_allow_ips
    return ServeConfig(
        "app.main:app",
        host=args.host,
        port=DEFAULT_PORT if args.port is None else args.port,
        workers=args.workers,
        access_log=False,  # the app logs each request itself (app/observability.py)
        timeout_keep_alive=KEEP_ALIVE_S,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
        # uvicorn on its own trusts X-Forwarded-For from 127.0.0.1; here only the proxies named
        # on the command line are (the proxy's socket is ForwardedBySocket's).
        proxy_headers=bool(trusted),
        forwarded_allow_ips=trusted or None,
        proxy_socket=proxy_socket,
        tcp=proxy_socket is None or args.port is not None,
        metrics_host=args.metrics_host,
        metrics_port=args.metrics_port,
        metrics_dir=args.metrics_dir,
    )


@contextlib.contextmanager
def metrics_environment(config: ServeConfig) -> Iterator[None]:
    """What the workers read at start-up (app.settings, prometheus_client): the metrics port,
    0 for none, and the folder their counters go to, with nothing left from an earlier run."""
    os.environ["PAPERTRACE_METRICS_PORT"] = str(config.metrics_port or 0)
    if config.metrics_port is None:
        os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
        yield
        return
    if config.metrics_dir is None:
        folder = Path(tempfile.mkdtemp(prefix="papertrace-metrics-"))
    else:
        folder = Path(config.metrics_dir)
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob("*.db"):
            stale.unlink()
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(folder)
    try:
        yield
    finally:
        if config.metrics_dir is None:
            shutil.rmtree(folder, ignore_errors=True)


def exit_cleanly(signum: int, frame: object) -> None:
    raise SystemExit(0)


def main(argv: list[str] | None = None) -> None:
    config = build_config(argv)
    # uvicorn shuts down on SIGTERM, then raises it again under the handler it found: this one,
    # so the socket and the metrics folder below are removed before the process ends.
    signal.signal(signal.SIGTERM, exit_cleanly)
    with metrics_environment(config):
        sockets = config.listeners()
        try:
            if config.workers > 1:
                Multiprocess(config, sockets=sockets).run()
            else:
                uvicorn.Server(config).run(sockets=sockets)
        finally:
            close_listeners(sockets, config.proxy_socket)


if __name__ == "__main__":
    main()
