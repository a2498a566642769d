"""Pointer API latency: server time p50/p95 per task, size and decoder.

    .venv/bin/python bench/pointer_api.py [--repeats 40] [--tasks hull tsp sort]
                                          [--checkpoint-dir checkpoints]
                                          [--tsp-models attention-routing-tsp20]

Each request is a fresh random instance (seeded), sent through the app in-process
(TestClient), after a warm-up that loads the checkpoints. Two numbers per cell:
- server: the response's `server_ms` (decode + reference solver + scoring);
- request: the whole HTTP round trip in-process (validation, the above, JSON encoding).
Targets (issue 5): n = 50 greedy p50 ≤ 30 ms, beam 8 p50 ≤ 150 ms; (issue 17) best of 128
samples p50 ≤ 250 ms; (issue 41) the attention model at n = 50, greedy ≤ 40 ms and symmetric
≤ 250 ms. A model is asked for by the request's `model` field, with the decoders it offers.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings
from pathlib import Path

import numpy as np

warnings.filterwarnings("ignore", message=".*httpx.*")
# one client sends every request: no per-address rate limit, and no deadline cutting a slow
# decode short on a busy machine (this measures time, it does not enforce it)
os.environ.setdefault("PAPERTRACE_RATE_LIMIT", "0")
os.environ.setdefault("PAPERTRACE_COMPUTE_DEADLINE_S", "60")

from fastapi.testclient import TestClient  # noqa: E402

from app.main import ROOT, create_app  # noqa: E402
from models import pointer_run  # noqa: E402

SIZES = (10, 20, 50)
# (decoder, beam width or samples); each model is measured with those it offers
DECODERS = (("greedy", 1), ("beam", 8), ("sample", 128), ("symmetric", 1))


def percentile(samples: list[float], q: float) -> float:
    return float(np.percentile(samples, q))


def body(task: str, model: str, n: int, decoder: str, width: int, rng: np.random.Generator) -> dict:
    inputs = rng.random(n) if task == "sort" else rng.random((n, 2))
    field = "values" if task == "sort" else "points"
    size = {"samples": width} if decoder == "sample" else {"beam_width": width}
    return {field: inputs.round(6).tolist(), "decoder": decoder, "model": model, **size}


def measure(
    client: TestClient, task: str, model: str, repeats: int, rng: np.random.Generator
) -> list:
    """(task, model, n, decoder, width, server ms, request ms) rows for one served model."""
    rows = []
    offered = [(d, w) for d, w in DECODERS if d in pointer_run.decoders_of(model)]
    for _ in range(3):  # load the checkpoint, warm the allocator
        client.post(f"/api/pointer/{task}", json=body(task, model, 20, "greedy", 1, rng))
    for n in SIZES:
        for decoder, width in offered:
            server, request = [], []
            for _ in range(repeats):
                payload = body(task, model, n, decoder, width, rng)
                start = time.perf_counter()
                response = client.post(f"/api/pointer/{task}", json=payload)
                request.append((time.perf_counter() - start) * 1000)
                response.raise_for_status()
                server.append(response.json()["server_ms"])
            rows.append((task, model, n, decoder, width, server, request))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--tasks", nargs="+", default=["hull", "tsp", "sort"])
    parser.add_argument("--checkpoint-dir", type=Path, default=ROOT / "checkpoints")
    parser.add_argument(
        "--tsp-models",
        nargs="+",
        default=[],
        help="measure TSP once per served checkpoint named here (default: the task's default)",
    )
    args = parser.parse_args()

    rng = np.random.default_rng(2015)
    rows = []
    with TestClient(create_app(checkpoint_dir=args.checkpoint_dir)) as client:
        for task in args.tasks:
            for name in (args.tsp_models if task == "tsp" else []) or pointer_run.SERVED[task][:1]:
                rows += measure(client, task, name, args.repeats, rng)

    print(f"Pointer API, {args.repeats} fresh instances per row (times in ms)\n")
    print("| task | model | n | decoder | server p50 | server p95 | request p50 | request p95 |")
    print("|---|---|---:|---|---:|---:|---:|---:|")
    for task, model, n, decoder, width, server, request in rows:
        name = decoder if decoder in ("greedy", "symmetric") else f"{decoder} {width}"
        print(
            f"| {task} | {model} | {n} | {name} | {statistics.median(server):.1f} | "
            f"{percentile(server, 95):.1f} | {statistics.median(request):.1f} | "
            f"{percentile(request, 95):.1f} |"
        )


if __name__ == "__main__":
    main()
