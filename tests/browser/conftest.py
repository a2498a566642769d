"""Real-browser fixtures, shared by every browser test.

- `live_server`: `uvicorn app.main:app` in a subprocess on a free loopback port (session).
- `browser`: one Debian Chromium for the whole session (Playwright never downloads one).
- `tracked_page`: a fresh page that records console errors, page errors, and every request
  to a host other than the app (those are aborted, so tests also prove the site is offline).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Route, sync_playwright

from bench.chromium import CHROMIUM, launch

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.browser)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_until_up(
    url: str, server: subprocess.Popen[bytes], log: Path, timeout_s: float = 120
) -> None:
    """Wait for /healthz; a server that dies or stays silent fails with its log's last lines."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(
                f"uvicorn exited with {server.returncode} before serving:\n{_tail(log)}"
            )
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"uvicorn did not answer {url}/healthz within {timeout_s} s:\n{_tail(log)}")


def _tail(log: Path, lines: int = 20) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


@pytest.fixture(scope="session")
def live_server() -> Iterator[str]:
    """Base URL of a real uvicorn serving app.main:app (content from $PAPERTRACE_CONTENT_DIR
    when set, else content/)."""
    port = _free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    command = [sys.executable, "-m", "uvicorn", "app.main:app", "--port", str(port)]
    worker = os.environ.get("PYTEST_XDIST_WORKER")  # one server per xdist worker, each its log
    log_name = f"live-server-{worker}.log" if worker else "live-server.log"
    log_path = ARTIFACTS / log_name
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [*command, "--host", "127.0.0.1"], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT
        )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_until_up(url, server, log_path)
            yield url
        finally:
            server.terminate()
            server.wait(timeout=10)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium package")
    with sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


@dataclass
class TrackedPage:
    page: Page
    base_url: str
    console_errors: list[str] = field(default_factory=list)
    foreign_requests: list[str] = field(default_factory=list)

    def goto(self, path: str) -> None:
        self.page.goto(f"{self.base_url}{path}")

    def assert_clean(self) -> None:
        assert self.console_errors == [], self.console_errors
        assert self.foreign_requests == [], self.foreign_requests


@pytest.fixture
def tracked_page(browser: Browser, live_server: str) -> Iterator[TrackedPage]:
    """A 1280×900 page, reduced motion (so anchor jumps are instant), with tracking on."""
    context = browser.new_context(
        viewport={"width": 1280, "height": 900}, reduced_motion="reduce", base_url=live_server
    )
    page = context.new_page()
    tracked = TrackedPage(page, live_server)
    app_host = urlsplit(live_server).netloc

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            tracked.console_errors.append(f"{message.text} at {message.location}")

    def on_request(route: Route) -> None:
        url = route.request.url
        if urlsplit(url).netloc == app_host or url.startswith(("data:", "blob:", "about:")):
            route.continue_()
        else:
            tracked.foreign_requests.append(url)
            route.abort()

    page.on("console", on_console)
    page.on("pageerror", lambda error: tracked.console_errors.append(f"page error: {error}"))
    context.route("**/*", on_request)
    yield tracked
    context.close()
