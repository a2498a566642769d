"""Cache headers for static files, and plotly.js compressed once instead of per request.

A file whose name carries its version (`htmx-2.0.11.min.js`, `plotly-4.1.1.min.js`) never
changes under that name, so browsers may keep it for a year without asking. Every other file
(site.css, the widgets' scripts) is revalidated on each use: the ETag makes that a 304.

A `Range` no byte of the file can satisfy, or one that is not a byte range at all, gets a 416
with `Content-Range: bytes */size` and a sentence saying what to ask for (Starlette answers
those with an empty 416 or a bare 400); a range in another unit is ignored, as RFC 9110 says,
and the whole file is served.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import re
from pathlib import Path

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.staticfiles import NotModifiedResponse, StaticFiles
from starlette.types import Receive, Scope, Send

VERSIONED_NAME = re.compile(r"-\d+\.\d+\.\d+(?:[.-][0-9A-Za-z]+)*\.(?:js|css)$")
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


def cache_control_for(name: str) -> str:
    return IMMUTABLE if VERSIONED_NAME.search(name) else REVALIDATE


# One range of a `Range: bytes=…` header: first-last, first- or -suffix, in ASCII digits of an
# ordinary size (a first byte of 4,301 digits is no byte of any file here).
BYTE_RANGE = re.compile(r"(?:([0-9]{1,18})-([0-9]{0,18})|-([0-9]{1,18}))")
MAX_SHOWN_RANGE = 40


def range_problem(value: str, size: int) -> str | None:
    """Why `Range: value` cannot be served from a file of `size` bytes, as a sentence; None
    when it can (or is in a unit other than bytes, which the server ignores)."""
    unit, equals, ranges = value.partition("=")
    if equals and unit.strip().lower() != "bytes":
        return None
    shown = value if len(value) <= MAX_SHOWN_RANGE else f"{value[:MAX_SHOWN_RANGE]}…"
    last_byte = f"bytes 0 to {size - 1}" if size else "no bytes"
    parts = [part.strip() for part in ranges.split(",")] if equals else []
    if not any(parts):
        return (
            f"The Range header “{shown}” is not a byte range; write it as bytes=first-last "
            f"(e.g. bytes=0-99) within the file's {last_byte}, or leave it out."
        )
    for part in filter(None, parts):
        match = BYTE_RANGE.fullmatch(part)
        if match is None or (match[2] and int(match[2]) < int(match[1])):
            return (
                f"The Range header “{shown}” has a range that is not first-last with "
                f"first ≤ last (“{part[:MAX_SHOWN_RANGE]}”); ask for bytes=first-last within "
                f"the file's {last_byte}, or leave Range out."
            )
        if (match[1] is not None and int(match[1]) >= size) or (match[3] and not int(match[3])):
            return (
                f"The Range header “{shown}” asks for bytes this file does not have: it has "
                f"{size:,} bytes ({last_byte}). Ask for a range within them, or leave Range out."
            )
    return None


class RangeCheckedFileResponse(FileResponse):
    """A FileResponse that answers a Range it cannot serve with a 416 and our sentence, and
    ignores one in a unit it does not know."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request_headers = Headers(scope=scope)
        value = request_headers.get("range")
        if value is not None and self.status_code == 200 and self.range_applies(request_headers):
            size = self.stat_result.st_size if self.stat_result else os.stat(self.path).st_size
            problem = range_problem(value, size)
            if problem is not None:
                await refuse_range(problem, size)(scope, receive, send)
                return
            unit, equals, _ = value.partition("=")
            if equals and unit.strip().lower() != "bytes":  # another unit: ignored
                headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"range"]
                scope = {**scope, "headers": headers}
        await super().__call__(scope, receive, send)

    def range_applies(self, request_headers: Headers) -> bool:
        """False when an If-Range names another version of the file: the Range is then
        ignored and the whole file served (FileResponse itself ignores it for other methods
        than GET and HEAD, which StaticFiles refuses before)."""
        if_range = request_headers.get("if-range")
        if if_range is None:
            return True
        if if_range.startswith("W/"):
            return False
        return if_range in (self.headers.get("etag"), self.headers.get("last-modified"))


def refuse_range(problem: str, size: int) -> Response:
    return Response(
        json.dumps({"detail": problem}, ensure_ascii=False),
        status_code=416,
        media_type="application/json",
        headers={"Content-Range": f"bytes */{size}"},
    )


class CachedStaticFiles(StaticFiles):
    """StaticFiles (ETag, Last-Modified, 304s) plus a Cache-Control header per file name, and
    a sentence for a Range the file cannot satisfy."""

    def file_response(
        self,
        full_path: str | os.PathLike[str],
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        response: Response = RangeCheckedFileResponse(
            full_path, status_code=status_code, stat_result=stat_result
        )
        if self.is_not_modified(response.headers, Headers(scope=scope)):
            response = NotModifiedResponse(response.headers)
        response.headers["Cache-Control"] = cache_control_for(os.fspath(full_path))
        return response


@functools.lru_cache(maxsize=4)
def _gzip_file(path: Path, mtime_ns: int) -> bytes:
    return gzip.compress(path.read_bytes(), compresslevel=9, mtime=0)


class PrecompressedFile:
    """A large, versioned file (plotly.js, ~4.8 MB) served gzip-compressed from memory.

    Compressing it per request would cost a worker a few hundred milliseconds of CPU per page
    view; compressed once per process (at start-up, see app.serving.warm_up), it costs nothing
    after."""

    def __init__(self, path: Path, media_type: str, cache_control: str = IMMUTABLE) -> None:
        self.path = path
        self.media_type = media_type
        self.cache_control = cache_control

    def gzipped(self) -> bytes:
        return _gzip_file(self.path, self.path.stat().st_mtime_ns)

    def response(self, request: Request) -> Response:
        """Gzip bytes for clients that accept gzip (every browser), the file as is otherwise.
        uvicorn leaves the body out of HEAD answers itself."""
        headers = {"Cache-Control": self.cache_control, "Vary": "Accept-Encoding"}
        if "gzip" not in request.headers.get("accept-encoding", ""):
            return RangeCheckedFileResponse(self.path, media_type=self.media_type, headers=headers)
        headers["Content-Encoding"] = "gzip"
        return Response(self.gzipped(), media_type=self.media_type, headers=headers)
