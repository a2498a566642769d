"""Result tables of Kool, van Hoof & Welling (2019), "Attention, Learn to Solve Routing
Problems!": `python -m models.evaluate attention-routing`.

- `tsp` (the paper's Table 1): each served attention model on 1,000 instances of the "test"
  stream (models/attention_routing_train.py: no run ever sees them) with its exact Held–Karp
  reference (`--reference --set test`), decoded greedily, by sampling 1,280 tours and keeping
  the shortest (the paper's sampling row), and with `symmetric` (greedy from every start city
  in each of the 8 images of the unit square; beyond the paper) — beside the paper's numbers.
  Each model's lengths and times are kept in data/eval/attention-routing/ under its sha256 and
  the thread count.
- `permutation`: the same cities listed in another order. The attention model reads a set, so
  its first pointer distribution moves with the cities and its tour is the same cycle; the
  Pointer Network with the paper's LSTM encoder reads a sequence and changes its mind.
- `training`: the learning curve of each served model (greedy gap to the optimum on the
  curve set, every epoch end), how far it is from the paper's schedule, and the steps that a
  power law fitted to the curve projects for the paper's greedy gap.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import torch

from models.attention_routing import AttentionModel, symmetric
from models.attention_routing_train import curve_set, load_reference
from models.checkpoints import load_model, read_manifest
from models.eval_cache import cached_results
from models.evaluate_pointer import length_text
from models.pointer import PointerNet, greedy
from models.pointer_run import SERVED, is_attention_model
from models.tasks import tsp

TEST_COUNT = 1000
SAMPLES = 1280  # the paper's sampling row
PAPER = {  # Table 1, the attention model with the rollout baseline: (length, gap to Concorde)
    20: {"greedy": ("3.85", "0.34%"), "sampling": ("3.84", "0.08%"), "optimal": "3.84"},
    50: {"greedy": ("5.80", "1.76%"), "sampling": ("5.73", "0.52%"), "optimal": "5.70"},
    100: {"greedy": ("8.12", "4.53%"), "sampling": ("7.94", "2.26%"), "optimal": "7.76"},
}
PAPER_EPOCHS, PAPER_EPOCH_INSTANCES = 100, 2500 * 512
PERMUTATION_COUNT = 200
LSTM_POINTER = "pointer-tsp"  # the paper's Pointer Network architecture, trained on TSP 5–20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tables", default="tsp,permutation,training")
    parser.add_argument("--count", type=int, default=TEST_COUNT, help="test instances per row")
    parser.add_argument("--threads", type=int, default=1)


def served_models() -> list[tuple[int, str]]:
    """(trained n, checkpoint) of every served attention model, by n, from the manifest."""
    manifest = read_manifest()
    names = [name for name in SERVED["tsp"] if is_attention_model(name)]
    return sorted((manifest[name]["data"]["n_range"][0], name) for name in names)


@torch.inference_mode()
def decoded_lengths(model: AttentionModel, points: torch.Tensor) -> dict[str, tuple[float, float]]:
    """decoder -> (mean tour length, ms per instance) over the instances (count, n, 2)."""
    found = {}
    started = time.perf_counter()
    greedy_lengths = torch.cat([model.decode(p).lengths for p in points.split(500)])
    found["greedy"] = greedy_lengths, time.perf_counter() - started
    started = time.perf_counter()
    generator = torch.Generator().manual_seed(0)
    sampled = []
    for instance in points:
        draws = model.decode(instance[None], "sample", rollouts=SAMPLES, generator=generator)
        sampled.append(draws.lengths.min())
    found["sampling"] = torch.stack(sampled), time.perf_counter() - started
    started = time.perf_counter()
    best = torch.cat([symmetric(model, p).lengths for p in points.split(25)])
    found["symmetric"] = best, time.perf_counter() - started
    count = len(points)
    return {k: (float(v.mean()), 1000 * s / count) for k, (v, s) in found.items()}


def tsp_table(count: int) -> dict:
    rows = []
    for n, name in served_models():
        optimal = load_reference(n, count, "test")
        if optimal is None:
            raise SystemExit(
                f"no reference for the {count} test instances at n = {n}: run `python -m "
                f"models.attention_routing_train --reference --set test --n {n} "
                f"--curve-count {count}` first"
            )
        found = cached_results(
            "attention-routing",
            name,
            f"{count}-tsp-{torch.get_num_threads()}threads",  # the times depend on the threads
            lambda n=n, name=name: decoded_lengths(
                load_model(name)[0].eval(), curve_set(n, count, "test")
            ),
            f"decoding {count} test instances greedily, by sampling and with symmetric",
        )
        reference = float(optimal.mean())
        paper = PAPER.get(n)
        rows.append(
            [
                str(n),
                str(count),
                "Held–Karp (exact)" if n <= 20 else "OR-Tools, 2 s",
                f"{reference:.3f}",
                *(length_text(found[k][0], reference) for k in ("greedy", "sampling", "symmetric")),
                " / ".join(f"{found[k][1]:.1f}" for k in ("greedy", "sampling", "symmetric")),
                paper["optimal"] if paper else "—",
                f"{paper['greedy'][0]} (+{paper['greedy'][1]})" if paper else "—",
                f"{paper['sampling'][0]} (+{paper['sampling'][1]})" if paper else "—",
                name,
            ]
        )
        print(f"tsp n={n}: {rows[-1]}", flush=True)
    return {
        "caption": "TSP (Table 1): mean tour length of our attention models, each trained and "
        "tested on its own n, with the gap to the optimal tour on the same instances, beside "
        "the paper's attention model (rollout baseline; gaps to Concorde).",
        "columns": [
            "n",
            "instances",
            "reference",
            "optimal length",
            "ours greedy",
            f"ours sampling {SAMPLES:,}",
            "ours symmetric (8 · n greedy)",
            "ms per instance (greedy / sampling / symmetric)",
            "paper optimal",
            "paper greedy",
            f"paper sampling {SAMPLES:,}",
            "checkpoint",
        ],
        "rows": rows,
        "note": f"Sampling draws {SAMPLES:,} tours per instance from the policy and keeps the "
        "shortest, as the paper does; symmetric runs greedy from every start city in each of "
        "the 8 rotations and reflections of the unit square and keeps the shortest (8 · n "
        "rollouts; the multi-start idea of POMO, Kwon et al. 2020, applied at decode time "
        "only). Times are one CPU thread, all instances of a row batched as the code does; "
        "the paper timed a GPU.",
    }


def first_distribution(model: PointerNet | AttentionModel, points: np.ndarray) -> np.ndarray:
    """The first step's pointer distribution over the cities (n,)."""
    if isinstance(model, AttentionModel):
        cities = torch.as_tensor(points[None], dtype=torch.float32)
        return model.decode(cities, record=True).step_probs[0, 0].numpy()
    return greedy(model, points[None])[0].distributions[0]


def greedy_cycle(model: PointerNet | AttentionModel, points: np.ndarray) -> list[int]:
    if isinstance(model, AttentionModel):
        tour = model.decode(torch.as_tensor(points[None], dtype=torch.float32)).tours[0]
        return tsp.canonical_tour(tour.tolist())
    return tsp.canonical_tour(greedy(model, points[None])[0].order)


@torch.inference_mode()
def permutation_table(count: int = PERMUTATION_COUNT) -> dict:
    """For each model: how far its first pointer distribution moves (total variation, after
    mapping positions back to cities) and how often its greedy tour changes as a cycle, when
    the same cities are listed in a random other order."""
    rng = np.random.default_rng(2019)
    models = [(LSTM_POINTER, "Pointer Network, LSTM encoder (the paper's)")]
    models += [(SERVED["tsp"][0], "Pointer Network, self-attention encoder (the TSP board's)")]
    models += [(name, "attention model (Kool et al.)") for _, name in served_models()]
    instances = curve_set(20, count, "test").numpy().astype(np.float32)
    orders = [rng.permutation(20) for _ in range(count)]
    rows = []
    for name, label in models:
        model = load_model(name)[0].eval()
        moved, changed = [], 0
        for points, order in zip(instances, orders, strict=True):
            before = first_distribution(model, points)
            after = first_distribution(model, points[order])
            back = np.empty_like(after)
            back[order] = after  # the probability of each city, wherever it was listed
            moved.append(0.5 * np.abs(before - back).sum())
            tour = greedy_cycle(model, points)
            reordered = greedy_cycle(model, points[order])
            relabelled = tsp.canonical_tour([int(order[i]) for i in reordered])
            changed += tour != relabelled  # canonical: the same cycle either way round
        rows.append(
            [
                label,
                name,
                str(count),
                f"{np.mean(moved):.4f}",
                f"{np.max(moved):.4f}",
                f"{100 * changed / count:.1f}%",
            ]
        )
        print(f"permutation {name}: {rows[-1]}", flush=True)
    return {
        "caption": "The same 20 cities listed in a random other order: how far each model's "
        "first pointer distribution moves, and how often its greedy tour changes.",
        "columns": [
            "model",
            "checkpoint",
            "instances",
            "mean total variation, first step",
            "largest total variation",
            "greedy tour changes",
        ],
        "rows": rows,
        "note": "Total variation is half the L1 distance between the first step's distributions "
        "over the cities, with the reordered listing mapped back to the same cities (0: the "
        "same distribution; 1: disjoint). A changed tour is a different cycle (direction "
        "ignored). The attention model's differences are float rounding.",
    }


def projected_steps(curve: list[dict], target_pct: float) -> tuple[float, float] | None:
    """(steps, the fitted exponent) at which a power law gap = a · steps^−b, fitted to the
    curve's epoch ends, reaches `target_pct`; None with fewer than three points."""
    points = [(p["step"], p["val_gap_pct"]) for p in curve if p.get("val_gap_pct")]
    if len(points) < 3:
        return None
    steps, gaps = np.log([p[0] for p in points]), np.log([p[1] for p in points])
    slope, intercept = np.polyfit(steps, gaps, 1)
    if slope >= 0:
        return None
    return math.exp((math.log(target_pct) - intercept) / slope), -slope


PROJECTION_LIMIT = 10  # a projection past this many times the paper's schedule says nothing


def projection_cell(curve: list[dict], target_pct: float, batch_size: int) -> str:
    """The training table's projection: the steps a power law fitted to the curve needs for
    `target_pct`, or a dash with the reason when there is no fit or the curve is so flat that
    it points past PROJECTION_LIMIT times the paper's whole schedule."""
    projection = projected_steps(curve, target_pct)
    if projection is None:
        return "—"
    steps, exponent = projection
    if steps * batch_size > PROJECTION_LIMIT * PAPER_EPOCHS * PAPER_EPOCH_INSTANCES:
        return f"— (too flat to project: exponent {exponent:.2f})"
    return f"{steps:,.0f} (exponent {exponent:.2f})"


def training_table() -> dict:
    rows = []
    manifest = read_manifest()
    for n, name in served_models():
        entry = manifest[name]
        curve = entry["validation_history"]
        last = curve[-1]
        target = float(PAPER[n]["greedy"][1].rstrip("%")) if n in PAPER else None
        share = entry["instances_seen"] / (PAPER_EPOCHS * PAPER_EPOCH_INSTANCES)
        rows.append(
            [
                str(n),
                f"{entry['steps']:,}",
                f"{entry['batch_size']}",
                f"{entry['instances_seen']:,}",
                f"{100 * share:.2f}%",
                f"{entry['wall_time_s'] / 3600:.1f} h",
                f"{last['val_greedy']:.3f} (+{last['val_gap_pct']:.2f}%)"
                if last.get("val_gap_pct") is not None
                else f"{last['val_greedy']:.3f}",
                projection_cell(curve, target, entry["batch_size"]) if target else "—",
                name,
            ]
        )
    return {
        "caption": "How far each attention model trained, against the paper's schedule (100 "
        "epochs of 2,500 batches of 512 instances), and where its greedy curve points.",
        "columns": [
            "n",
            "steps",
            "batch",
            "instances seen",
            "share of the paper's",
            "wall time (one CPU core)",
            "greedy on the curve set (gap to optimal)",
            "steps projected for the paper's greedy gap",
            "checkpoint",
        ],
        "rows": rows,
        "note": "The curve set is 1,000 fixed instances scored at every epoch end against their "
        "Held–Karp optima; the test tables use other instances. The projection fits a power "
        "law, gap = a · steps^−b, to the epoch ends and solves it for the paper's greedy gap: "
        f"an extrapolation, not a promise; one past {PROJECTION_LIMIT}× the paper's schedule "
        "is a dash.",
    }


def evaluate(args: argparse.Namespace) -> dict[str, dict]:
    torch.set_num_threads(args.threads)
    wanted = set(args.tables.split(","))
    builders = {
        "tsp": lambda: tsp_table(args.count),
        "permutation": permutation_table,
        "training": training_table,
    }
    unknown = wanted - set(builders)
    if unknown:
        raise SystemExit(f"unknown tables {sorted(unknown)}; known: {sorted(builders)}")
    return {table: build() for table, build in builders.items() if table in wanted}
