"""Training speed of registered translation recipes on their real batches, one thread.

    OMP_NUM_THREADS=1 .venv/bin/python bench/translation_recipe_speed.py \
        seq2seq-translate-a1.5 seq2seq-translate-big-a1.5 [--steps 200] [--batch-size B]

Builds each recipe (its corpus and tokenizers), then times whole optimiser steps as
`models.train` takes them (the recipe's own length-bucketed batches, loss, clipping and Adam),
with the process CPU clock and the wall clock. The recipes run one after another in the order
given, so on a busy machine list the baseline again at the end and compare ratios measured
within the same few minutes. Prints one line per recipe: steps/s by CPU time and by wall
time, and training pairs per wall-clock second.
"""

from __future__ import annotations

import argparse
import time

import torch

from models.recipes import get_recipe
from models.train import optimizer_step

WARM_UP_STEPS = 5  # the first steps warm caches and the allocator


def measure(name: str, steps: int, batch_size: int | None) -> dict:
    recipe = get_recipe(name)
    size = batch_size or recipe.defaults.batch_size
    torch.manual_seed(recipe.defaults.seed)
    model = recipe.build_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=recipe.defaults.lr)
    batches = recipe.batches(size, recipe.defaults.seed, 0, 0)
    for _ in range(WARM_UP_STEPS):
        optimizer_step(recipe, model, model, optimizer, batches, recipe.defaults.lr)
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(steps):
        optimizer_step(recipe, model, model, optimizer, batches, recipe.defaults.lr)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {
        "recipe": name,
        "batch_size": size,
        "parameters": sum(p.numel() for p in model.parameters()),
        "steps": steps,
        "steps_per_cpu_s": round(steps / cpu, 3),
        "steps_per_wall_s": round(steps / wall, 3),
        "pairs_per_wall_s": round(steps * size / wall, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recipes", nargs="+")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int)
    args = parser.parse_args()
    torch.set_num_threads(1)
    for name in args.recipes:
        print(measure(name, args.steps, args.batch_size), flush=True)


if __name__ == "__main__":
    main()
