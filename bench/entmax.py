"""Benchmark models/entmax.py against torch.softmax and the reference `entmax` package.

    .venv/bin/python -m bench.entmax [--threads N] [--clock wall|cpu] [--rounds R] [--shapes ...]

Runs everything in one process, float32 on the CPU, forward and forward+backward, and prints
a Markdown table of medians with ratios to softmax and to the reference's counterpart. "ours"
is the default path (the compiled kernels of models/entmax_kernels.py); "ours, torch path" is
the same function with `set_backend("torch")`, the pure-PyTorch reference implementation. The
methods are timed in turn, R rounds over all of them; each reported time is the lowest of its
R medians, so that a burst of load from other processes on a shared machine hits every method
alike and is mostly filtered out. `--clock cpu` times with the process's CPU clock instead of
the wall clock: on a machine shared with other busy processes it leaves out the time this one
spends waiting for a core (with several threads it adds up their CPU time).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import entmax as reference
import torch
from torch.utils import benchmark

from models.entmax import entmax, entmax15, set_backend, sparsemax, warm_up

Mapping = Callable[[torch.Tensor], torch.Tensor]

GENERAL_15 = 1.5 + 1e-12  # α = 1.5 through the general-α solver instead of the closed form


def on_torch_path(mapping: Mapping) -> Mapping:
    def run(x: torch.Tensor) -> torch.Tensor:
        previous = set_backend("torch")
        try:
            return mapping(x)
        finally:
            set_backend(previous)

    return run


# name -> (mapping, name of the reference counterpart or None)
METHODS: dict[str, tuple[Mapping, str | None]] = {
    "torch.softmax": (lambda x: torch.softmax(x, -1), None),
    "ref entmax15": (lambda x: reference.entmax15(x, dim=-1), None),
    "ref sparsemax": (lambda x: reference.sparsemax(x, dim=-1), None),
    "ref entmax_bisect α=1.3": (lambda x: reference.entmax_bisect(x, 1.3), None),
    "ours entmax15": (entmax15, "ref entmax15"),
    "ours sparsemax": (sparsemax, "ref sparsemax"),
    "ours entmax α=1.3": (lambda x: entmax(x, 1.3), "ref entmax_bisect α=1.3"),
    "ours entmax α=1.5 (general solver)": (lambda x: entmax(x, GENERAL_15), None),
    "ours entmax α=1.75": (lambda x: entmax(x, 1.75), None),
    "ours entmax15, torch path": (on_torch_path(entmax15), "ref entmax15"),
    "ours sparsemax, torch path": (on_torch_path(sparsemax), "ref sparsemax"),
    "ours entmax α=1.3, torch path": (
        on_torch_path(lambda x: entmax(x, 1.3)),
        "ref entmax_bisect α=1.3",
    ),
}


def median_seconds(fn: Callable[[], object], min_time: float, clock: Callable[[], float]) -> float:
    timer = benchmark.Timer(stmt="fn()", globals={"fn": fn}, timer=clock)
    return timer.blocked_autorange(min_run_time=min_time).median


def forward(mapping: Mapping, x: torch.Tensor) -> Callable[[], None]:
    @torch.no_grad()
    def run() -> None:
        mapping(x)

    return run


def forward_backward(mapping: Mapping, x: torch.Tensor, grad: torch.Tensor) -> Callable[[], None]:
    leaf = x.clone().requires_grad_()

    def run() -> None:
        mapping(leaf).backward(grad)
        leaf.grad = None

    return run


def format_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    parser.add_argument("--min-time", type=float, default=0.5, help="seconds per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="rounds over all methods")
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    parser.add_argument("--shapes", default="64x30,4096x64,256x1000,256x4000,64x32000")
    parser.add_argument("--methods", default="", help="comma-separated names (default: all)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    methods = {
        name: METHODS[name]
        for name in (args.methods.split(",") if args.methods else METHODS)
        if name in METHODS
    }
    warm_up()
    shapes = [tuple(int(n) for n in s.split("x")) for s in args.shapes.split(",")]
    clock = time.perf_counter if args.clock == "wall" else time.process_time

    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, float32, CPU, "
        f"{args.clock} clock, best of {args.rounds} medians\n"
    )
    print("| shape | pass | method | median | × softmax | speed-up over reference |")
    print("|---|---|---|---|---|---|")
    generator = torch.Generator().manual_seed(0)
    for shape in shapes:
        x = torch.randn(shape, generator=generator)
        grad = torch.randn(shape, generator=generator)
        for pass_name in ("forward", "forward+backward"):
            runs = {
                name: forward(mapping, x)
                if pass_name == "forward"
                else forward_backward(mapping, x, grad)
                for name, (mapping, _) in methods.items()
            }
            times = dict.fromkeys(methods, float("inf"))
            for _ in range(args.rounds):
                for name, run in runs.items():
                    times[name] = min(times[name], median_seconds(run, args.min_time, clock))
            for name, (_, counterpart) in methods.items():
                ratio = times[name] / times["torch.softmax"]
                known = counterpart in times
                speedup = f"{times[counterpart] / times[name]:.1f}×" if known else ""
                print(
                    f"| {shape[0]}×{shape[1]} | {pass_name} | {name} | "
                    f"{format_time(times[name])} | {ratio:.2f} | {speedup} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
