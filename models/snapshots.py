"""Watch a model learn: a short rerun of a served recipe that keeps its weights at log-spaced
steps, so a figure can run the reader's own input through every stage of training.

    python -m models.snapshots run pointer-hull --steps 3000          # 16 snapshots
    python -m models.snapshots run seq2seq-inflect-full-a1.5 --steps 2000 --count 16

The rerun is the recipe's own training (models/train.py's model, batches, loss, learning-rate
schedule over the recipe's full step count, gradient clipping and seed), stopped after
`--steps`: its first steps are those of a full run of the recipe. At each snapshot step (step
0, the random weights, then log-spaced to the last step, so the early fast changes are seen)
the weights are kept compactly, as the change since the previous snapshot: each matrix row's
change as integers in [-7, 7] (two to a byte) times one float16 scale, and each vector as
float16 — an eighth of the float32 size. The change is taken from the previous snapshot as it
will be read back, not as it was trained, so rounding errors do not add up along the run: a
snapshot is off from the trained weights by at most half a step of its own change's scale.
The recipe then validates the weights as they will be read back, so a snapshot's metrics are
those of the model a reader sees. The snapshots, their steps, the smoothed training loss and
the validation metrics go to checkpoints/snapshots/<recipe>/ (one safetensors file a snapshot
and a snapshots.json with each file's sha256). A snapshot is then a checkpoint named
"<recipe>@<step>": models.checkpoints.load_model (and the server's registry) reads it back
into the recipe's model, adding the run's files up to that step; a request names it by its
step (`named`).
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save_file
from torch import nn

from models.checkpoints import (
    CHECKPOINT_DIR,
    SNAPSHOT_LEVELS,
    SNAPSHOT_SCALE,
    apply_snapshot,
    sha256_file,
    snapshot_record,
)
from models.errors import InvalidInput

SNAPSHOT_DIR = CHECKPOINT_DIR / "snapshots"


def snapshot_steps(last: int, count: int) -> list[int]:
    """Step 0 and `count - 1` steps log-spaced from 1 to `last` (distinct, increasing)."""
    steps: list[int] = [0]
    for value in np.geomspace(1, last, count - 1):
        step = max(int(round(value)), steps[-1] + 1)
        steps.append(min(step, last))
    return sorted(set(steps))


def encode(
    state: dict[str, torch.Tensor], previous: dict[str, torch.Tensor]
) -> dict[str, torch.Tensor]:
    """The snapshot file of `state` after the read-back weights `previous` (zeros for the
    first): each matrix row's change packed as two 4-bit integers a byte with a float16 scale,
    vectors as float16. models.checkpoints.apply_snapshot(previous, file) reads it back."""
    kept: dict[str, torch.Tensor] = {}
    for name, tensor in state.items():
        tensor = tensor.detach().float()
        if tensor.ndim < 2:
            kept[name] = tensor.half()
            continue
        change = (tensor - previous[name]).reshape(tensor.shape[0], -1)
        scale = (change.abs().amax(dim=1) / SNAPSHOT_LEVELS).half()
        scale = torch.where(scale > 0, scale, torch.finfo(torch.float16).tiny)  # unchanged: q 0
        q = torch.round(change / scale.float()[:, None]).clamp(-SNAPSHOT_LEVELS, SNAPSHOT_LEVELS)
        q = (q + SNAPSHOT_LEVELS + 1).to(torch.uint8)
        if q.shape[1] % 2:
            q = torch.cat([q, torch.full_like(q[:, :1], SNAPSHOT_LEVELS + 1)], dim=1)
        kept[name] = q[:, 0::2] | (q[:, 1::2] << 4)
        kept[name + SNAPSHOT_SCALE] = scale
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
    read_back = {name: torch.zeros_like(value) for name, value in model.state_dict().items()}
    smoothed: float | None = None
    started = time.time()
    for step in range(steps + 1):
        if step in wanted:
            record, read_back = keep(recipe, model, read_back, folder, step, smoothed)
            kept.append(record)
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
        "storage": STORAGE,
        "wall_time_s": round(time.time() - started, 1),
        "command": f"python -m models.snapshots run {recipe_name} --steps {steps} --count {count}",
        "snapshots": kept,
    }
    (folder / "snapshots.json").write_text(json.dumps(entry, indent=1) + "\n")
    return entry


STORAGE = (
    "each file: the change of every matrix row since the previous snapshot as read back, in "
    f"integers of [-{SNAPSHOT_LEVELS}, {SNAPSHOT_LEVELS}] (4 bits) with a float16 scale per "
    "row; vectors float16"
)


def keep(
    recipe,
    model: nn.Module,
    previous: dict[str, torch.Tensor],
    folder: Path,
    step: int,
    loss: float | None,
) -> tuple[dict, dict[str, torch.Tensor]]:
    """Write the snapshot of `model` at `step`; its record (metrics of the weights as read
    back) and those weights."""
    path = folder / f"step-{step:06d}.safetensors"
    kept = encode(model.state_dict(), previous)
    save_file(kept, path)
    read_back = apply_snapshot(previous, kept)
    served = copy.deepcopy(model)
    served.load_state_dict(read_back)
    metrics = recipe.validate(served)
    return {
        "step": step,
        "file": path.name,
        "sha256": sha256_file(path),
        "loss": None if loss is None else round(loss, 5),
        "metrics": {k: round(float(v), 5) for k, v in metrics.items()},
    }, read_back


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
