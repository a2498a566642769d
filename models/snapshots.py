"""Watch a model learn: a short rerun of a served recipe that keeps its weights at log-spaced
steps, so a figure can run the reader's own input through every stage of training.

    python -m models.snapshots run pointer-hull --steps 3000          # 16 snapshots
    python -m models.snapshots run seq2seq-inflect-full-a1.5 --steps 2000 --count 16

The rerun is the recipe's own training (models/train.py's model, batches, loss, learning-rate
schedule over the recipe's full step count, gradient clipping and seed), stopped after
`--steps`: its first steps are those of a full run of the recipe. At each snapshot step (step
0, the random weights, then log-spaced to the last step, so the early fast changes are seen)
the recipe validates the model, and the weights are kept compactly: every matrix as int8 with
one float16 scale per row (w ≈ scale · q, |q| ≤ 127), vectors as float16 — a quarter of the
float32 size. The snapshots, their steps, the smoothed training loss and the validation
metrics go to checkpoints/snapshots/<recipe>/ (one safetensors file a snapshot and a
snapshots.json with each file's sha256). A snapshot is then a checkpoint named
"<recipe>@<step>": models.checkpoints.load_model (and the server's registry) reads it back
into the recipe's model; a request names it by its step (`named`).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save_file
from torch import nn

from models.checkpoints import CHECKPOINT_DIR, SNAPSHOT_SCALE, sha256_file, snapshot_record
from models.errors import InvalidInput

SNAPSHOT_DIR = CHECKPOINT_DIR / "snapshots"


def snapshot_steps(last: int, count: int) -> list[int]:
    """Step 0 and `count - 1` steps log-spaced from 1 to `last` (distinct, increasing)."""
    steps: list[int] = [0]
    for value in np.geomspace(1, last, count - 1):
        step = max(int(round(value)), steps[-1] + 1)
        steps.append(min(step, last))
    return sorted(set(steps))


def compact(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Weights as int8 rows with a float16 scale each (matrices) or float16 (the rest)."""
    kept: dict[str, torch.Tensor] = {}
    for name, tensor in state.items():
        tensor = tensor.detach().float()
        if tensor.ndim < 2:
            kept[name] = tensor.half()
            continue
        rows = tensor.reshape(tensor.shape[0], -1)
        scale = rows.abs().amax(dim=1).clamp_min(1e-12) / 127.0
        kept[name] = torch.round(rows / scale[:, None]).to(torch.int8).reshape(tensor.shape)
        kept[name + SNAPSHOT_SCALE] = scale.half()
    return kept


def snapshot_name(recipe_name: str, step: int) -> str:
    return f"{recipe_name}@{step}"


def kept_steps(recipe_name: str | None) -> list[int]:
    """The steps a recipe's snapshot run kept ([] for none, or no recipe)."""
    found = snapshot_record(recipe_name) if recipe_name else None
    return [kept["step"] for kept in found["snapshots"]] if found else []


class UnknownSnapshot(InvalidInput):
    """A `snapshot` step no snapshot run kept."""


def named(recipe_name: str | None, step: int, what: str) -> str:
    """The snapshot name of `recipe_name`'s run at `step`; UnknownSnapshot (a sentence saying
    which steps exist) when the run did not keep it or `what` (e.g. "tsp") has no run."""
    steps = kept_steps(recipe_name)
    if not steps:
        raise UnknownSnapshot(
            f"The {what} model's training kept no snapshots; leave `snapshot` out."
        )
    if step not in steps:
        raise UnknownSnapshot(
            f"The {what} model's training kept snapshots at steps "
            f"{', '.join(str(s) for s in steps)}; set `snapshot` to one of them."
        )
    return snapshot_name(str(recipe_name), step)


def run(recipe_name: str, steps: int, count: int, directory: Path = SNAPSHOT_DIR) -> dict:
    """Rerun the recipe's first `steps` steps, keeping `count` snapshots (see the module)."""
    from models.recipes import get_recipe  # training only: the server never imports these
    from models.train import learning_rate, optimizer_step

    recipe = get_recipe(recipe_name)
    defaults = recipe.defaults
    torch.manual_seed(defaults.seed)
    model = recipe.build_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=defaults.lr)
    batches = recipe.batches(defaults.batch_size, defaults.seed, 0, 0)
    folder = directory / recipe_name
    folder.mkdir(parents=True, exist_ok=True)
    wanted = snapshot_steps(steps, count)
    kept: list[dict] = []
    smoothed: float | None = None
    started = time.time()
    for step in range(steps + 1):
        if step in wanted:
            kept.append(keep(recipe, model, folder, step, smoothed))
            print(json.dumps(kept[-1]), f"{time.time() - started:.0f} s", flush=True)
        if step == steps:
            break
        lr = learning_rate(defaults.lr, step, defaults.warmup, step / defaults.steps)
        value = optimizer_step(recipe, model, model, optimizer, batches, lr)
        smoothed = value if smoothed is None else 0.98 * smoothed + 0.02 * value
    entry = {
        "recipe": recipe_name,
        "family": recipe.family,
        "task": recipe.task,
        "config": asdict(recipe.config),  # as models/train.py writes it to the manifest
        "steps": steps,
        "schedule_steps": defaults.steps,
        "batch_size": defaults.batch_size,
        "seed": defaults.seed,
        "storage": "matrices int8 with a float16 scale per row, vectors float16",
        "wall_time_s": round(time.time() - started, 1),
        "command": f"python -m models.snapshots run {recipe_name} --steps {steps} --count {count}",
        "snapshots": kept,
    }
    (folder / "snapshots.json").write_text(json.dumps(entry, indent=1) + "\n")
    return entry


def keep(recipe, model: nn.Module, folder: Path, step: int, loss: float | None) -> dict:
    metrics = recipe.validate(model)
    path = folder / f"step-{step:06d}.safetensors"
    save_file(compact(model.state_dict()), path)
    return {
        "step": step,
        "file": path.name,
        "sha256": sha256_file(path),
        "loss": None if loss is None else round(loss, 5),
        "metrics": {k: round(float(v), 5) for k, v in metrics.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    start = sub.add_parser("run", help="rerun a recipe's first steps with snapshots")
    start.add_argument("recipe")
    start.add_argument("--steps", type=int, required=True)
    start.add_argument("--count", type=int, default=16)
    start.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    entry = run(args.recipe, args.steps, args.count)
    print(f"{len(entry['snapshots'])} snapshots in {entry['wall_time_s'] / 60:.1f} min")


if __name__ == "__main__":
    main()
