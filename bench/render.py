"""Server-side rendering cost and page weight of each deep-dive.

    .venv/bin/python bench/render.py [--repeats 200]

Cold: the Markdown (and its LaTeX) is parsed from scratch. Cached: the parsed page is reused
(file unchanged), so a request costs the widgets, the page template and the HTTP layer.
Measured two ways: calling app.content directly, and a full GET through Starlette's TestClient
(an upper bound on server time: it includes the in-process HTTP client). Page weight counts the
HTML plus every stylesheet and script the page links, with and without plotly.js.
Target: cached render <= 5 ms per page.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
warnings.filterwarnings("ignore", message=".*httpx.*")  # TestClient's deprecation notice
logging.disable(logging.CRITICAL)  # access and model-registry logs would bury the table

from fastapi.testclient import TestClient  # noqa: E402
from starlette.types import ASGIApp  # noqa: E402

from app.assets import PLOTLY_URL  # noqa: E402
from app.content import ContentLibrary, parse_paper, render_body  # noqa: E402
from app.main import create_app, default_content_dir  # noqa: E402

TARGET_MS = 5.0
COLD_REPEATS = 5


def timed_ms(action: Callable[[], object], repeats: int) -> list[float]:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        action()
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return samples


def p95(samples: list[float]) -> float:
    return sorted(samples)[int(0.95 * (len(samples) - 1))]


def asgi_get_ms(app: ASGIApp, path: str, repeats: int) -> list[float]:
    """Server time alone: the ASGI app called in-process, from request to last body byte."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"bench")],
        "client": ("127.0.0.1", 1),
        "server": ("bench", 80),
    }

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def run() -> list[float]:
        samples = []
        for _ in range(repeats):
            status: list[int] = []

            async def send(message: dict[str, object], status: list[int] = status) -> None:
                if message["type"] == "http.response.start":
                    status.append(int(message["status"]))

            start = time.perf_counter_ns()
            await app(dict(scope), receive, send)
            samples.append((time.perf_counter_ns() - start) / 1e6)
            if status != [200]:
                raise RuntimeError(f"GET {path} answered {status}")
        return samples

    return asyncio.run(run())


def cold_http_ms(slug: str) -> list[float]:
    samples = []
    for _ in range(COLD_REPEATS):
        # Without `with`, the lifespan does not pre-parse the library: the first GET is cold.
        client = TestClient(create_app())
        start = time.perf_counter_ns()
        response = client.get(f"/papers/{slug}")
        samples.append((time.perf_counter_ns() - start) / 1e6)
        response.raise_for_status()
    return samples


def page_weight(client: TestClient, slug: str) -> dict[str, int]:
    html = client.get(f"/papers/{slug}").text
    css = re.findall(r'<link rel="stylesheet" href="([^"]+)"', html)
    scripts = re.findall(r'<script src="([^"]+)"', html)
    plotly_bytes = len(client.get(PLOTLY_URL).content)
    js = sum(len(client.get(src).content) for src in scripts if src != PLOTLY_URL)
    weight = {
        "html": len(html.encode()),
        "css": sum(len(client.get(href).content) for href in css),
        "js": js,
        "plotly": plotly_bytes,
        "loads_plotly": int(PLOTLY_URL in scripts),
    }
    weight["without_plotly"] = weight["html"] + weight["css"] + weight["js"]
    weight["with_plotly"] = weight["without_plotly"] + plotly_bytes
    return weight


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200, help="cached samples per page")
    args = parser.parse_args()

    content_dir = default_content_dir()
    library = ContentLibrary(content_dir)
    papers = library.papers()
    if not papers:
        sys.exit(f"no papers in {content_dir}")

    with TestClient(create_app()) as client:
        render_widget = client.app.state.render_widget
        rows = []
        for paper in papers:
            slug, url = paper.slug, f"/papers/{paper.slug}"

            def cold_render(path: Path = paper.path) -> None:
                render_body(parse_paper(path), render_widget)

            def cached_render(slug: str = slug) -> None:
                render_body(library.get(slug), render_widget)

            def cached_get(url: str = url) -> None:
                client.get(url).raise_for_status()

            cold = timed_ms(cold_render, COLD_REPEATS)
            warm = timed_ms(cached_render, args.repeats)
            server = asgi_get_ms(client.app, url, args.repeats)
            http = timed_ms(cached_get, args.repeats)
            rows.append(
                (slug, cold, warm, server, cold_http_ms(slug), http, page_weight(client, slug))
            )

    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"Server-side render, ms (cold: median of {COLD_REPEATS}; cached: {args.repeats} runs)")
    print(f"  machine: {os.cpu_count()} CPUs, load average {load} (other work inflates times)")
    print("  content: app.content parse + render_body; server: the ASGI app called in-process;")
    print("  TestClient: a full GET through the in-process HTTP client (adds client overhead)")
    header = (
        f"{'page':<18} {'cold content':>12} {'cached content':>14} {'cached server':>13} "
        f"{'p95':>6} {'cold GET':>9} {'cached GET':>10}  target: cached server"
    )
    print(header)
    print("-" * len(header))
    for slug, cold, warm, server, cold_http, http, _ in rows:
        cached = statistics.median(server)
        verdict = "ok" if cached <= TARGET_MS else "MISSED"
        print(
            f"{slug:<18} {statistics.median(cold):>12.1f} {statistics.median(warm):>14.2f} "
            f"{cached:>13.2f} {p95(server):>6.2f} {statistics.median(cold_http):>9.1f} "
            f"{statistics.median(http):>10.2f}  {verdict} (<= {TARGET_MS:g} ms)"
        )

    print("\nPage weight, KiB (HTML + linked CSS + JS)")
    header = (
        f"{'page':<18} {'HTML':>7} {'CSS':>6} {'JS':>6} {'total':>7} "
        f"{'plotly.js':>10} {'+plotly':>9}  page loads plotly"
    )
    print(header)
    print("-" * len(header))
    for slug, *_, weight in rows:
        kib = {key: value / 1024 for key, value in weight.items()}
        print(
            f"{slug:<18} {kib['html']:>7.1f} {kib['css']:>6.1f} {kib['js']:>6.1f} "
            f"{kib['without_plotly']:>7.1f} {kib['plotly']:>10.1f} {kib['with_plotly']:>9.1f}  "
            f"{'yes' if weight['loads_plotly'] else 'no'}"
        )


if __name__ == "__main__":
    main()
