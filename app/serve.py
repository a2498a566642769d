"""`python -m app.serve --workers N`: uvicorn with N worker processes, minus a 40 ms stall.

With `--workers N` (and under gunicorn's uvicorn worker) uvicorn binds the listening socket
itself and leaves its protocol field at 0. Accepted connections inherit that, and asyncio only
turns Nagle's algorithm off (TCP_NODELAY) for sockets that say they are TCP, so on Linux every
response after the first on a keep-alive connection waits ~40 ms for the client's delayed ACK
(uvicorn issue #3149; measured here: 44 ms per request with 2 workers against 1-2 ms with one).
This launcher binds the same socket but records it as TCP, and otherwise runs uvicorn's own
multiprocess supervisor.

Behind a reverse proxy, name it with `--forwarded-allow-ips` (see `build_config`): the rate
limit and the access log then see the reader's address from the proxy's X-Forwarded-For.
"""

from __future__ import annotations

import argparse
import socket

import uvicorn
from uvicorn.supervisors import Multiprocess

KEEP_ALIVE_S = 75


class TcpListenerConfig(uvicorn.Config):
    def bind_socket(self) -> socket.socket:
        listener = super().bind_socket()
        if listener.family not in (socket.AF_INET, socket.AF_INET6):
            return listener
        # The same file descriptor, re-wrapped with proto = TCP; worker processes receive it
        # with that proto, so asyncio sets TCP_NODELAY on every connection they accept.
        return socket.socket(
            listener.family, listener.type, socket.IPPROTO_TCP, fileno=listener.detach()
        )


def build_config(argv: list[str] | None = None) -> TcpListenerConfig:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--forwarded-allow-ips",
        default="",
        help="comma-separated addresses of the reverse proxies in front (e.g. 127.0.0.1 for "
        "nginx on this machine); only their X-Forwarded-For and X-Forwarded-Proto are "
        "believed. Default: none, so every client is known by its own address.",
    )
    args = parser.parse_args(argv)
    trusted = args.forwarded_allow_ips.strip()
    return TcpListenerConfig(
        "app.main:app",
        host=args.host,
        port=args.port,
        workers=args.workers,
        access_log=False,  # the app logs each request itself (app/observability.py)
        # longer than a proxy keeps an idle connection to us (deploy/nginx.conf: 30 s), so the
        # proxy, not the app, closes it: otherwise a POST can race the close and get a 502
        timeout_keep_alive=KEEP_ALIVE_S,
        # uvicorn on its own trusts X-Forwarded-For from 127.0.0.1, so any local client could
        # claim any address and slip past the per-address rate limit; here only the proxies
        # named on the command line are trusted.
        proxy_headers=bool(trusted),
        forwarded_allow_ips=trusted or None,
    )


def main() -> None:
    config = build_config()
    if config.workers > 1:
        Multiprocess(config, sockets=[config.bind_socket()]).run()
    else:
        uvicorn.Server(config).run()


if __name__ == "__main__":
    main()
