"""Server time of POST /api/entmax for 64 scores: `python -m bench.entmax_api [--requests N]`.

Requests go through the whole app in-process (Starlette's TestClient): routing, pydantic
validation, models.entmax, then JSON or the HTML fragment. A thin ASGI wrapper times each
request from the moment the app receives it to its last byte, so the client's own overhead is
left out: `wall` is elapsed time, `cpu` the process CPU time spent meanwhile (the client thread is
blocked then, so this is the server's work, and it does not grow when other processes share the
CPU). `compute` times app.entmax.service.compute_entmax alone. Target: p50 ≤ 5 ms.
Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import random
import time
import warnings
from collections.abc import Callable

import torch
from starlette.exceptions import StarletteDeprecationWarning

# Starlette's TestClient still wraps httpx and says so on import; the warning is not about us.
warnings.filterwarnings("ignore", category=StarletteDeprecationWarning)

from fastapi.testclient import TestClient  # noqa: E402
from starlette.types import ASGIApp, Receive, Scope, Send  # noqa: E402

from app.entmax.requests import EntmaxRequest  # noqa: E402
from app.entmax.service import compute_entmax  # noqa: E402
from app.main import create_app  # noqa: E402

N_SCORES = 64
ALPHAS = (1.0, 1.5, 2.0, 1.37, 3.0)  # 1.37 and 3.0 take the general root-finding path
TARGET_MS = 5.0
WARMUP = 20


class ServerTimer:
    """ASGI wrapper: wall and CPU milliseconds of every HTTP request the app serves."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.wall: list[float] = []
        self.cpu: list[float] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        wall, cpu = time.perf_counter(), time.process_time()
        await self.app(scope, receive, send)
        self.wall.append((time.perf_counter() - wall) * 1000)
        self.cpu.append((time.process_time() - cpu) * 1000)

    def reset(self) -> None:
        self.wall.clear()
        self.cpu.clear()


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def repeat(call: Callable[[], object], times: int) -> list[float]:
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300, help="timed requests per row")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = random.Random(args.seed)
    scores = [round(rng.gauss(0, 1.5), 4) for _ in range(N_SCORES)]
    labels = [f"w{i}" for i in range(N_SCORES)]

    timer = ServerTimer(create_app())
    rows = []
    with TestClient(timer) as client:
        for alpha in ALPHAS:
            body = {"scores": scores, "alpha": alpha}
            requests = {
                "JSON": lambda body=body: client.post("/api/entmax", json=body),
                "fragment": lambda body=body: client.post(
                    "/api/entmax", json={**body, "labels": labels}, headers={"HX-Request": "1"}
                ),
            }
            for name, call in requests.items():
                assert call().status_code == 200
                repeat(call, WARMUP)
                timer.reset()
                repeat(call, args.requests)
                rows.append((alpha, name, list(timer.wall), list(timer.cpu)))
            request = EntmaxRequest(**body)
            repeat(lambda request=request: compute_entmax(request), WARMUP)
            wall = repeat(lambda request=request: compute_entmax(request), args.requests)
            rows.append((alpha, "compute", wall, None))

    load = os.getloadavg()[0]
    print(
        f"POST /api/entmax, {N_SCORES} scores (seed {args.seed}), {args.requests} requests per "
        f"row after {WARMUP} warm-up; torch threads 1; load average {load:.1f} on "
        f"{os.cpu_count()} CPUs\n"
    )
    print("| α | timed | wall p50 ms | wall p95 ms | cpu p50 ms | p50 ≤ 5 ms |")
    print("|---|---|---:|---:|---:|---|")
    for alpha, name, wall, cpu in rows:
        p50 = percentile(wall, 0.5)
        cpu_p50 = "" if cpu is None else f"{percentile(cpu, 0.5):.2f}"
        print(
            f"| {alpha:g} | {name} | {p50:.2f} | {percentile(wall, 0.95):.2f} | {cpu_p50} | "
            f"{'yes' if p50 <= TARGET_MS else 'NO'} |"
        )


if __name__ == "__main__":
    main()
