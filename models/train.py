"""One training loop for every model family in this repository.

    python -m models.train <recipe> [--steps N] [--batch-size B] [--lr LR] [--seed S]
                                    [--time-budget MIN] [--resume] [--out checkpoints]
                                    [--init-from checkpoints/<name>.safetensors]
    torchrun --nproc_per_node 2 -m models.train <recipe> ...   # DDP, gloo backend on CPU

Recipes are registered by name in `models/recipes.py`; what a recipe must provide is written
in `models/recipe.py`.

The loop: Adam with linear warm-up then cosine decay, gradient-norm clipping, periodic
validation, a tqdm bar with loss, throughput and ETA. With a time budget the schedule follows
whichever runs out first, steps or minutes, so a run always finishes its decay on time.
Resume state (weights and optimizer, as safetensors plus json) is written at every validation;
`--resume` continues from it. Only rank 0 validates and writes. `--snapshot-to DIR` copies the
resume state without its optimizer moments (a third of its size: small enough for git) and
exits; resumed from such a snapshot, Adam starts its moments afresh and the learning rate warms
up again over REWARM_STEPS steps, so a run outlives the machine it started on.

`--init-from` starts from trained weights instead of random ones (a fine-tune): the optimizer
moments, warm-up and schedule start afresh, and the manifest entry records where the weights
came from under "init_from" (their checkpoint name and sha256).
"""

import argparse
import json
import math
import os
import shlex
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from safetensors.torch import load_file, save_file
from torch import nn
from tqdm import tqdm

from models.checkpoints import read_manifest, save_checkpoint, sha256_file
from models.recipe import Recipe, TrainDefaults
from models.recipes import get_recipe


def learning_rate(base: float, step: int, warmup: int, progress: float) -> float:
    """Linear warm-up, then cosine decay to 5% of the base rate as progress goes 0 -> 1."""
    if step < warmup:
        return base * (step + 1) / warmup
    return base * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(progress, 1.0))))


REWARM_STEPS = 200  # after a resume without optimizer moments (see --snapshot-to)


def rewarm_factor(steps_since_resume: int) -> float:
    """The learning rate's multiplier after a resume without optimizer moments: a linear ramp
    over REWARM_STEPS steps while Adam's fresh moments settle, then 1."""
    return min(1.0, (steps_since_resume + 1) / REWARM_STEPS)


def _resume_paths(directory: Path, name: str) -> tuple[Path, Path]:
    return directory / f"{name}.resume.safetensors", directory / f"{name}.resume.json"


def _read_resume(directory: Path, name: str) -> tuple[dict[str, torch.Tensor], dict] | None:
    """(tensors, info) of a saved resume state, or None when there is none."""
    tensor_path, json_path = _resume_paths(directory, name)
    if not (tensor_path.exists() and json_path.exists()):
        return None
    return load_file(tensor_path), json.loads(json_path.read_text())


def snapshot_resume(directory: Path, name: str, destination: Path) -> Path:
    """Copy the run's resume state into `destination` without the optimizer moments; returns
    the weights file written."""
    if destination.resolve() == directory.resolve():
        raise ValueError("--snapshot-to must name another directory than --resume-dir.")
    saved = _read_resume(directory, name)
    if saved is None:
        raise FileNotFoundError(f"No resume state for {name} in {directory}.")
    tensors, info = saved
    weights = {k: v for k, v in tensors.items() if k.startswith("model.")}
    out_tensors, out_json = _resume_paths(destination, name)
    destination.mkdir(parents=True, exist_ok=True)
    save_file(weights, out_tensors)
    out_json.write_text(json.dumps({**info, "optimizer_moments": False}, indent=2))
    return out_tensors


def save_resume(
    directory: Path, name: str, model: nn.Module, optimizer: torch.optim.Optimizer, info: dict
) -> None:
    """Weights and optimizer moments as safetensors; step counters and groups as json."""
    directory.mkdir(parents=True, exist_ok=True)
    tensors = {f"model.{k}": v.detach().contiguous() for k, v in model.state_dict().items()}
    opt = optimizer.state_dict()
    for index, state in opt["state"].items():
        for key, value in state.items():
            tensors[f"optim.{index}.{key}"] = torch.as_tensor(value).contiguous()
    tensor_path, json_path = _resume_paths(directory, name)
    save_file(tensors, tensor_path)
    json_path.write_text(json.dumps({**info, "param_groups": opt["param_groups"]}, indent=2))


def load_resume(
    directory: Path, name: str, model: nn.Module, optimizer: torch.optim.Optimizer
) -> dict | None:
    saved = _read_resume(directory, name)
    if saved is None:
        return None
    tensors, info = saved
    model.load_state_dict(
        {k.removeprefix("model."): v for k, v in tensors.items() if k.startswith("model.")}
    )
    state: dict[int, dict] = {}
    for key, value in tensors.items():
        if key.startswith("optim."):
            _, index, field = key.split(".", 2)
            state.setdefault(int(index), {})[field] = value
    optimizer.load_state_dict({"state": state, "param_groups": info.pop("param_groups")})
    return info


def initial_weights(model: nn.Module, path: Path) -> dict:
    """Load trained weights into the model; return what the manifest records about them.

    The architecture must match exactly (same config), so a wrong file fails loudly. When
    the file sits in a checkpoint directory, its manifest entry says how it was trained.
    """
    if not path.exists():
        raise SystemExit(f"--init-from: no weights file at {path}.")
    try:
        model.load_state_dict(load_file(path))
    except RuntimeError as error:
        raise SystemExit(f"--init-from: {path} does not fit this recipe's model: {error}") from None
    sha256 = sha256_file(path)
    for name, entry in read_manifest(path.parent).items():
        if entry.get("file") == path.name and entry.get("sha256") == sha256:
            # by reference: that entry (or, once its file is gone, checkpoints/lineage.json)
            # says how those weights were trained (models.checkpoints.ancestry)
            return {"checkpoint": name, "sha256": sha256}
    return {"file": str(path), "sha256": sha256}


def _distributed() -> tuple[int, int]:
    """(rank, world size); joins the gloo process group when launched by torchrun."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1 and not dist.is_initialized():
        dist.init_process_group("gloo")
    return (dist.get_rank(), world) if world > 1 else (0, 1)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Train a registered recipe.")
    parser.add_argument("recipe")
    parser.add_argument("--steps", type=int)
    parser.add_argument("--batch-size", type=int)
    parser.add_argument("--lr", type=float)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--time-budget", type=float, help="minutes; the schedule fits inside")
    parser.add_argument("--validate-every", type=int)
    parser.add_argument("--resume", action="store_true", help="continue from the resume state")
    parser.add_argument("--out", default="checkpoints", help="checkpoint directory")
    parser.add_argument("--resume-dir", default="data/resume")
    parser.add_argument(
        "--init-from", help="trained weights (.safetensors) to fine-tune instead of random ones"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads per process")
    parser.add_argument(
        "--snapshot-to",
        type=Path,
        help="copy the resume state, without optimizer moments, into this directory and exit",
    )
    return parser.parse_args(argv)


@dataclass(frozen=True)
class RunPlan:
    """The numbers one run uses: the recipe's defaults, overridden from the command line."""

    steps: int
    batch_size: int
    lr: float
    seed: int
    budget_min: float | None  # the schedule fits in this many minutes; None: steps only
    validate_every: int


def run_plan(args: argparse.Namespace, defaults: TrainDefaults) -> RunPlan:
    budget_min = args.time_budget if args.time_budget is not None else defaults.time_budget_min
    if args.steps is not None and args.time_budget is None:
        budget_min = None  # an explicit step count is a request for exactly that many
    return RunPlan(
        steps=args.steps or defaults.steps,
        batch_size=args.batch_size or defaults.batch_size,
        lr=args.lr or defaults.lr,
        seed=defaults.seed if args.seed is None else args.seed,
        budget_min=budget_min,
        validate_every=args.validate_every or defaults.validate_every,
    )


def schedule_progress(step: int, elapsed_s: float, plan: RunPlan, world: int) -> float:
    """How far through its schedule the run is (1 ends it): by steps or by the time budget,
    whichever is further. Under DDP rank 0's clock decides, so every rank stops at one step."""
    progress = step / plan.steps
    if plan.budget_min:
        progress = max(progress, elapsed_s / (60 * plan.budget_min))
    if world > 1:
        shared = torch.tensor([progress])
        dist.broadcast(shared, 0)
        progress = float(shared)
    return progress


@dataclass
class RunState:
    """Where a run stands: what a resume state restores and what the loop moves on."""

    step: int = 0
    elapsed_before_s: float = 0.0  # wall time of the earlier runs this one resumes
    history: list[dict] = field(default_factory=list)  # one entry per validation
    init_from: dict | None = None
    smoothed_loss: float | None = None
    # every resume so far, with whether Adam's moments came back (a snapshot's do not)
    resumes: list[dict] = field(default_factory=list)

    @property
    def rewarm(self) -> bool:
        """Resumed without optimizer moments: warm the rate up again."""
        return bool(self.resumes) and not self.resumes[-1]["optimizer_moments"]


def prepare(
    recipe: Recipe, plan: RunPlan, args: argparse.Namespace, resume_dir: Path
) -> tuple[nn.Module, torch.optim.Optimizer, RunState]:
    """The model (random, fine-tuned from --init-from, or resumed), its optimizer and the
    state the loop starts from."""
    torch.manual_seed(plan.seed)  # same initial weights on every rank
    model = recipe.build_model()
    state = RunState(
        init_from=initial_weights(model, Path(args.init_from)) if args.init_from else None
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=plan.lr)
    if args.resume:
        info = load_resume(resume_dir, recipe.name, model, optimizer)
        if info is not None:
            state.step, state.elapsed_before_s = info["step"], info["elapsed_s"]
            state.history = info["history"]
            state.init_from = info.get("init_from", state.init_from)
            state.resumes = [
                *info.get("resumes", []),
                {"step": state.step, "optimizer_moments": info.get("optimizer_moments", True)},
            ]
    return model, optimizer, state


def optimizer_step(
    recipe: Recipe,
    model: nn.Module,
    trainable: nn.Module,
    optimizer: torch.optim.Optimizer,
    batches: Iterator[Any],
    lr: float,
) -> float:
    """One update at learning rate `lr` with the gradient norm clipped; returns the loss."""
    for group in optimizer.param_groups:
        group["lr"] = lr
    model.train()
    loss = recipe.loss(trainable, next(batches))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), recipe.defaults.clip)
    optimizer.step()
    return loss.item()


def run_loop(
    recipe: Recipe,
    plan: RunPlan,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    state: RunState,
    resume_dir: Path,
    rank: int,
    world: int,
) -> float:
    """Train until the schedule ends, validating and saving the resume state on rank 0 every
    `validate_every` steps; returns the run's wall time including earlier resumed runs."""
    trainable = nn.parallel.DistributedDataParallel(model) if world > 1 else model
    start_step = state.step
    batches = recipe.batches(plan.batch_size, plan.seed, rank, start_step)
    bar = tqdm(
        total=plan.steps,
        initial=start_step,
        disable=rank != 0,
        mininterval=1.0 if sys.stderr.isatty() else 30.0,
        desc=recipe.name,
        unit="step",
    )
    started = time.time()
    progress = 0.0
    while state.step < plan.steps and progress < 1.0:
        elapsed = state.elapsed_before_s + time.time() - started
        progress = schedule_progress(state.step, elapsed, plan, world)
        lr = learning_rate(plan.lr, state.step, recipe.defaults.warmup, progress)
        if state.rewarm:
            lr *= rewarm_factor(state.step - start_step)
        value = optimizer_step(recipe, model, trainable, optimizer, batches, lr)
        state.step += 1
        smoothed = (
            value if state.smoothed_loss is None else 0.98 * state.smoothed_loss + 0.02 * value
        )
        state.smoothed_loss = smoothed
        rate = (
            (state.step - start_step) * plan.batch_size * world / max(time.time() - started, 1e-9)
        )
        bar.set_postfix(
            loss=f"{smoothed:.4f}", inst_s=f"{rate:.0f}", progress=f"{progress:.0%}", refresh=False
        )
        bar.update(1)
        if rank == 0 and state.step % plan.validate_every == 0:
            metrics = recipe.validate(model)
            state.history.append({"step": state.step, "loss": round(smoothed, 5), **metrics})
            bar.write(f"step {state.step}: loss {smoothed:.4f} " + json.dumps(metrics))
            elapsed = state.elapsed_before_s + time.time() - started
            info = {
                "optimizer_moments": True,
                "step": state.step,
                "elapsed_s": elapsed,
                "history": state.history,
                "init_from": state.init_from,
                "resumes": state.resumes,
            }
            save_resume(resume_dir, recipe.name, model, optimizer, info)
    bar.close()
    return state.elapsed_before_s + time.time() - started


def final_metrics(recipe: Recipe, model: nn.Module, state: RunState) -> dict:
    """The last validation's metrics, validating once more unless the last step just did."""
    if state.history and state.history[-1]["step"] == state.step:
        return {k: v for k, v in state.history[-1].items() if k not in ("step", "loss")}
    metrics = recipe.validate(model)
    state.history.append(
        {"step": state.step, "loss": round(state.smoothed_loss or 0.0, 5), **metrics}
    )
    return metrics


def manifest_fields(
    recipe: Recipe,
    model: nn.Module,
    plan: RunPlan,
    state: RunState,
    metrics: dict,
    wall_s: float,
    world: int,
    threads: int,
    command: str,
) -> dict:
    """What the manifest records about a finished run, besides the file itself."""
    d = recipe.defaults
    return {
        "family": recipe.family,
        "task": recipe.task,
        "config": asdict(recipe.config),
        "parameters": sum(p.numel() for p in model.parameters()),
        "seed": plan.seed,
        "init_from": state.init_from,
        "data": recipe.data_description(),
        "steps": state.step,
        "batch_size": plan.batch_size,
        "world_size": world,
        "instances_seen": state.step * plan.batch_size * world,
        "optimizer": {
            "name": "Adam",
            "lr": plan.lr,
            "schedule": f"linear warm-up {d.warmup} steps, cosine decay to 5%",
            "grad_clip_norm": d.clip,
            "note": getattr(recipe, "optimizer_note", None),
        },
        "time_budget_min": plan.budget_min,
        "wall_time_s": round(wall_s, 1),
        "threads_per_process": threads,
        "resumes": state.resumes,
        "metrics": metrics,
        "validation_history": state.history,
        "command": command,
        "torch": torch.__version__,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def train(argv: list[str] | None = None) -> dict | None:
    """Run one training; returns the manifest entry on rank 0."""
    args = parse_args(argv)
    if args.snapshot_to is not None:
        if int(os.environ.get("WORLD_SIZE", "1")) > 1:
            sys.exit("--snapshot-to copies files: run it with python, not torchrun")
        written = snapshot_resume(Path(args.resume_dir), args.recipe, args.snapshot_to)
        print(f"wrote {written} ({written.stat().st_size / 2**20:.1f} MiB)")
        return None
    torch.set_num_threads(args.threads)
    rank, world = _distributed()
    recipe = get_recipe(args.recipe)
    plan = run_plan(args, recipe.defaults)
    resume_dir = Path(args.resume_dir)
    model, optimizer, state = prepare(recipe, plan, args, resume_dir)
    wall_s = run_loop(recipe, plan, model, optimizer, state, resume_dir, rank, world)
    entry = None
    if rank == 0:
        metrics = final_metrics(recipe, model, state)
        print(f"final step {state.step}: " + json.dumps(metrics), flush=True)
        launcher = f"torchrun --nproc_per_node {world} -m" if world > 1 else "python -m"
        command = f"{launcher} models.train " + shlex.join(argv or sys.argv[1:])
        fields = manifest_fields(
            recipe, model, plan, state, metrics, wall_s, world, args.threads, command
        )
        entry = save_checkpoint(model, recipe.name, fields, Path(args.out))
        for path in _resume_paths(resume_dir, recipe.name):
            path.unlink(missing_ok=True)  # finished: the checkpoint supersedes it
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()
    return entry


if __name__ == "__main__":
    train()
