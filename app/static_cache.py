"""Cache headers for static files, and plotly.js compressed once instead of per request.

A file whose name carries its version (`htmx-2.0.11.min.js`, `plotly-4.1.1.min.js`) never
changes under that name, so browsers may keep it for a year without asking. Every other file
(site.css, the widgets' scripts) is revalidated on each use: the ETag makes that a 304.
"""

from __future__ import annotations

import functools
import gzip
import os
import re
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

VERSIONED_NAME = re.compile(r"-\d+\.\d+\.\d+(?:[.-][0-9A-Za-z]+)*\.(?:js|css)$")
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


def cache_control_for(name: str) -> str:
    return IMMUTABLE if VERSIONED_NAME.search(name) else REVALIDATE


class CachedStaticFiles(StaticFiles):
    """StaticFiles (ETag, Last-Modified, 304s) plus a Cache-Control header per file name."""

    def file_response(
        self,
        full_path: str | os.PathLike[str],
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
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
            return FileResponse(self.path, media_type=self.media_type, headers=headers)
        headers["Content-Encoding"] = "gzip"
        return Response(self.gzipped(), media_type=self.media_type, headers=headers)
