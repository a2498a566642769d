"""Watch it learn: what moving a figure's training slider costs, beside a normal decode.

    .venv/bin/python bench/snapshot_slider.py     # hull, TSP, sort, inflection, translation
    .venv/bin/python bench/snapshot_slider.py --rounds 5

In-process (TestClient, the app's whole stack), each figure's htmx round trip: one sweep of the
slider over every snapshot while each is loaded for the first time (first visit: the run's
files up to that step read, sha256-checked and added up, model built, decoded), then `--rounds`
sweeps with the snapshots loaded, against the trained model's decode of the same inputs (a
normal figure change) in the same run. Every request has inputs of its own (a point nudged,
another verb), so no answer comes from the answer cache: each is decoded. Reported: p50 and p95
milliseconds per request and the ratio of the loaded sweeps' p50 to the normal decode's. Target
(issue 42): p50 ≤ 50 ms for hull, sort and inflection (TSP and translation: the same budget as
their normal decode).
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
warnings.filterwarnings("ignore", message=".*httpx.*")

HX = {"HX-Request": "true", "HX-Current-URL": "http://testserver/papers/pointer-networks"}
VERBS = "go walk sing run take see eat swim write give come find think bring buy fly".split()
CELLS = ("V;PST", "V;V.PTCP;PST", "V;PRS;3;SG", "V;V.PTCP;PRS")
FIGURES = {  # figure -> (its round trip for request k, without the snapshot; the run's recipe)
    "hull": (
        lambda k: (
            "/api/pointer/hull/board/hull?points="
            f"0.1{k:04d},0.1;0.9,0.15;0.85,0.9;0.15,0.8;0.5,0.5;0.3,0.6;0.7,0.3;0.45,0.2;0.6,0.75"
            "&snapshot="
        ),
        "pointer-hull",
    ),
    "tsp": (
        lambda k: (
            "/api/pointer/tsp/board/tsp?points="
            f"0.1{k:04d},0.1;0.9,0.15;0.85,0.9;0.15,0.8;0.5,0.5;0.3,0.6;0.7,0.3;0.45,0.2;0.6,0.75"
            "&snapshot="
        ),
        "pointer-tsp",
    ),
    "sort": (
        lambda k: (
            f"/api/pointer/sort/board/sort?values=0.3{k:04d},0.9,0.1,0.6,0.45,0.75,0.05,"
            "0.5,0.8,0.2&snapshot="
        ),
        "pointer-sort",
    ),
    "inflection": (
        lambda k: (
            f"/api/seq2seq/inflect/figure?lemma={VERBS[k % len(VERBS)]}&language=en"
            f"&features={CELLS[k // len(VERBS) % len(CELLS)]}"
            "&snapshot="
        ),
        "seq2seq-inflect-full-a1.5",
    ),
    "translation": (
        lambda k: (
            f"/api/seq2seq/translate/figure?text=Could+not+{VERBS[k % len(VERBS)]}+file+"
            f"{k}.&snapshot="
        ),
        "seq2seq-translate-a1.5",
    ),
}


def timed(client, url: str) -> float:
    started = time.perf_counter()
    answer = client.get(url, headers=HX)
    assert answer.status_code == 200, (url, answer.status_code, answer.text[:200])
    return 1000 * (time.perf_counter() - started)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)
    from fastapi.testclient import TestClient

    from app.main import create_app
    from models import snapshots

    print(
        "| figure | snapshots | normal decode p50 ms | first visit p50 / p95 ms "
        "| loaded p50 / p95 ms | loaded p50 ÷ normal p50 |"
    )
    print("|---|---|---|---|---|---|")
    with TestClient(create_app()) as client:
        for name, (url, recipe) in FIGURES.items():
            steps = snapshots.kept_steps(recipe)
            count = len(steps) * args.rounds
            timed(client, url(999))  # the trained model, loaded and warm
            normal = [timed(client, url(k)) for k in range(count)]
            cold = [timed(client, f"{url(k)}{step}") for k, step in enumerate(steps)]
            warm = [
                timed(client, f"{url(k + len(steps))}{steps[k % len(steps)]}") for k in range(count)
            ]
            ratio = statistics.median(warm) / statistics.median(normal)
            print(
                f"| {name} | {len(steps)} | {statistics.median(normal):.1f} | "
                f"{statistics.median(cold):.1f} / {percentile(cold, 0.95):.1f} | "
                f"{statistics.median(warm):.1f} / {percentile(warm, 0.95):.1f} | {ratio:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
