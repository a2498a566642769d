"""Sparse seq2seq API latency: server time p50/p95 per task and α, beam 5.

    .venv/bin/python bench/seq2seq_api.py [--repeats 30] [--checkpoint-dir checkpoints]

Requests go through the app in-process (TestClient) after a warm-up that loads each
checkpoint; every α that GET /api/seq2seq/options lists as available is measured. Inputs cycle
through 12-character lemmas (five languages) and 12-word sentences from the translation test
split. Two numbers per cell:
- server: the response's `server_ms` (beam search and the per-step trace);
- request: the whole HTTP round trip in-process (validation, the above, JSON encoding).
Targets (issue 7): inflection p50 ≤ 50 ms, translation p50 ≤ 150 ms (server time).
"""

from __future__ import annotations

import argparse
import itertools
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

BEAM = 5
TARGET_MS = {"inflect": 50.0, "translate": 150.0}
LEMMAS = (  # 12 characters each
    {"lemma": "overestimate", "language": "en", "features": "V;PST"},
    {"lemma": "photographer", "language": "en", "features": "N;PL"},
    {"lemma": "Sonnenschirm", "language": "de", "features": "N;DAT;PL"},
    {"lemma": "déconseiller", "language": "fr", "features": "V;IND;PRS;3;PL"},
    {"lemma": "reconsiderar", "language": "es", "features": "V;IND;FUT;1;SG"},
)
SENTENCES = (  # 12 words each, from the held-out test split
    "Apply list of forbidden characters to the beginning and end of lines",
    "Connect to your online accounts and decide what to use them for",
    "Increase to make the eraser drag behind, as if slowed by inertia",
    "Maximal scale of refinement points to be used for the interpolation mesh",
)


def inputs(task: str) -> itertools.cycle:
    if task == "inflect":
        return itertools.cycle(LEMMAS)
    return itertools.cycle({"text": text} for text in SENTENCES)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--checkpoint-dir", type=Path, default=ROOT / "checkpoints")
    args = parser.parse_args()

    rows, missing = [], []
    with TestClient(create_app(checkpoint_dir=args.checkpoint_dir)) as client:
        options = client.get("/api/seq2seq/options").json()
        measured = [
            (task, model, {})
            for task, key in (("inflect", "inflection"), ("translate", "translation"))
            for model in options[key]["models"]
        ] + [("translate", m, {"copy_model": True}) for m in options["translation"]["copy_models"]]
        for task, model, extra in measured:
            alpha = model["alpha"]
            if not model["available"]:
                missing.append(f"{model['name']} ({model['reason']})")
                continue
            source = inputs(task)
            fields = {"alpha": alpha, **extra}
            for _ in range(3):  # load the checkpoint, warm the allocator
                client.post(f"/api/seq2seq/{task}", json={**next(source), **fields})
            server, request, steps = [], [], []
            for _ in range(args.repeats):
                payload = {**next(source), **fields, "beam_width": BEAM}
                start = time.perf_counter()
                response = client.post(f"/api/seq2seq/{task}", json=payload)
                request.append((time.perf_counter() - start) * 1000)
                response.raise_for_status()
                result = response.json()
                server.append(result["server_ms"])
                steps.append(len(result["steps"]))
            label = f"{task} (copy model)" if extra else task
            rows.append((label, alpha, server, request, statistics.mean(steps)))

    print(f"Sparse seq2seq API, beam {BEAM}, {args.repeats} requests per row (times in ms)\n")
    print(
        "| task | α | output steps (mean) | server p50 | server p95 | request p50 "
        "| request p95 | target p50 |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for task, alpha, server, request, steps in rows:
        p50 = statistics.median(server)
        target = TARGET_MS[task.split()[0]]
        verdict = "met" if p50 <= target else "missed"
        print(
            f"| {task} | {alpha:g} | {steps:.1f} | {p50:.1f} | {np.percentile(server, 95):.1f} | "
            f"{statistics.median(request):.1f} | {np.percentile(request, 95):.1f} | "
            f"≤ {target:.0f} ({verdict}) |"
        )
    if missing:
        print("\nNot measured: " + "; ".join(missing))


if __name__ == "__main__":
    main()
