"""Security headers on every response, CORS closed unless origins are listed, and the reader's
address believed from X-Forwarded-For only on the proxy's own socket.

The Content-Security-Policy names no remote origin and allows no inline script: pages load only
their own files, pass data to scripts in `<script type="application/json">` blocks (which CSP
does not execute) and bind events in static/js. Styles allow 'unsafe-inline' because plotly.js
writes its SVG styles into a `<style>` element and style attributes at run time; no script
can be injected through a style.
"""

from __future__ import annotations

import ipaddress
import json

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from starlette.datastructures import URL, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.asgi import HttpMiddleware

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)

PERMISSIONS_POLICY = ", ".join(
    f"{feature}=()"
    for feature in (
        "accelerometer",
        "camera",
        "geolocation",
        "gyroscope",
        "magnetometer",
        "microphone",
        "payment",
        "usb",
    )
)

SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "strict-origin-when-cross-origin",
    # frame-ancestors above is the modern form; this covers browsers that predate it.
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    # The site uses no device, sensor or payment API; neither may anything embedded in it.
    "Permissions-Policy": PERMISSIONS_POLICY,
}


class SecurityHeaders(HttpMiddleware):
    """Adds SECURITY_HEADERS to every HTTP response that does not set them itself, makes
    redirects relative (the app only redirects within itself), and turns an unhandled error
    into a 500 that carries the headers too."""

    def __init__(self, app: ASGIApp, headers: dict[str, str] = SECURITY_HEADERS) -> None:
        super().__init__(app)
        self.headers = headers

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = MutableHeaders(scope=message)
                for name, value in self.headers.items():
                    headers.setdefault(name, value)
                if "location" in headers:
                    headers["location"] = relative_location(headers["location"])
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception:
            # A bug, not a reader's error: answer 500 with the headers (and, outside, the
            # request id) instead of Starlette's bare page, then let the server log it.
            if not started:
                detail = (
                    "The server failed on this request; it is logged under the X-Request-ID "
                    "of this answer. Try again later."
                )
                await send_with_headers(
                    {
                        "type": "http.response.start",
                        "status": 500,
                        "headers": [(b"content-type", b"application/json")],
                    }
                )
                body = json.dumps({"detail": detail}).encode()
                await send({"type": "http.response.body", "body": body})
            raise


def relative_location(location: str) -> str:
    """A redirect to this site as a path, never an absolute URL built from the request's Host
    header (which a client chooses: a cache could then send readers elsewhere)."""
    url = URL(location)
    if not url.scheme and not url.netloc:
        return location
    return url.path + (f"?{url.query}" if url.query else "")


def allow_cross_origin(app: FastAPI, origins: tuple[str, ...]) -> None:
    """CORS for the listed origins only (from $PAPERTRACE_CORS_ORIGINS); none by default, so
    browsers keep other sites from reading the API's answers."""
    if origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Content-Type", "HX-Request", "X-Request-ID"],
            expose_headers=["X-Request-ID", "Retry-After"],
        )


class ForwardedBySocket(HttpMiddleware):
    """The reader's address and scheme from the proxy's X-Forwarded-For and X-Forwarded-Proto,
    believed only for connections that arrived on the proxy's Unix socket (`app.serve --uds`).

    Only nginx's user may open that socket (mode 0660, see app/serve.py), so a connection on it
    is the proxy; on every TCP listener the headers are ignored, whoever connects. Trusting an
    address instead (`--forwarded-allow-ips 127.0.0.1` for nginx on the same machine) trusts
    every local process, and any of them could name its own address to escape the rate limit.
    nginx sets the header to the one address it saw; were it to append instead, the last entry
    is still the one it added."""

    def __init__(self, app: ASGIApp, socket_path: str) -> None:
        super().__init__(app)
        self.listener = (socket_path, None)  # uvicorn's scope["server"] on a Unix socket

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if tuple(scope.get("server") or ()) == self.listener:
            forwarded_for = proto = None
            for key, value in scope["headers"]:
                if key == b"x-forwarded-for":
                    forwarded_for = value.decode("latin-1")
                elif key == b"x-forwarded-proto":
                    proto = value.decode("latin-1").strip()
            if (address := forwarded_address(forwarded_for)) is not None:
                scope["client"] = (address, 0)
            if proto in ("http", "https"):
                scope["scheme"] = proto
        await self.app(scope, receive, send)


def forwarded_address(header: str | None) -> str | None:
    """The address the proxy added (the header's last entry), or None when it is not one."""
    if not header:
        return None
    try:
        return str(ipaddress.ip_address(header.rsplit(",", 1)[-1].strip()))
    except ValueError:
        return None
