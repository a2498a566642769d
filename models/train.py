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
`--resume` continues from it. Only rank 0 validates and writes.

`--init-from` starts from trained weights instead of random ones (a fine-tune): the optimizer
moments, warm-up and schedule start afresh, and the manifest entry records where the weights
came from and how long they had trained, under "init_from".
"""

import argparse
import json
import math
import os
import shlex
import sys
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from safetensors.torch import load_file, save_file
from torch import nn
from tqdm import tqdm

from models.checkpoints import read_manifest, save_checkpoint, sha256_file
from models.recipes import get_recipe


def learning_rate(base: float, step: int, warmup: int, progress: float) -> float:
    """Linear warm-up, then cosine decay to 5% of the base rate as progress goes 0 -> 1."""
    if step < warmup:
        return base * (step + 1) / warmup
    return base * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(progress, 1.0))))


def _resume_paths(directory: Path, name: str) -> tuple[Path, Path]:
    return directory / f"{name}.resume.safetensors", directory / f"{name}.resume.json"


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
    tensor_path, json_path = _resume_paths(directory, name)
    if not (tensor_path.exists() and json_path.exists()):
        return None
    tensors = load_file(tensor_path)
    info = json.loads(json_path.read_text())
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
    info: dict[str, Any] = {"file": str(path), "sha256": sha256_file(path)}
    for name, entry in read_manifest(path.parent).items():
        if entry.get("file") == path.name and entry.get("sha256") == info["sha256"]:
            info["checkpoint"] = name
            info |= {k: entry.get(k) for k in ("steps", "instances_seen", "wall_time_s")}
            info["earlier_init_from"] = entry.get("init_from")
    return info


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
    return parser.parse_args(argv)


def train(argv: list[str] | None = None) -> dict | None:
    """Run one training; returns the manifest entry on rank 0."""
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    rank, world = _distributed()
    recipe = get_recipe(args.recipe)
    d = recipe.defaults
    steps = args.steps or d.steps
    batch_size = args.batch_size or d.batch_size
    lr = args.lr or d.lr
    seed = d.seed if args.seed is None else args.seed
    budget_min = args.time_budget if args.time_budget is not None else d.time_budget_min
    if args.steps is not None and args.time_budget is None:
        budget_min = None  # an explicit step count is a request for exactly that many
    validate_every = args.validate_every or d.validate_every
    resume_dir = Path(args.resume_dir)

    torch.manual_seed(seed)  # same initial weights on every rank
    model = recipe.build_model()
    init_from = initial_weights(model, Path(args.init_from)) if args.init_from else None
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    start_step, elapsed_before, history = 0, 0.0, []
    if args.resume:
        info = load_resume(resume_dir, recipe.name, model, optimizer)
        if info is not None:
            start_step, elapsed_before, history = info["step"], info["elapsed_s"], info["history"]
            init_from = info.get("init_from", init_from)
    trainable = model
    if world > 1:
        trainable = nn.parallel.DistributedDataParallel(model)
    batches = recipe.batches(batch_size, seed, rank, start_step)

    bar = tqdm(
        total=steps,
        initial=start_step,
        disable=rank != 0,
        mininterval=1.0 if sys.stderr.isatty() else 30.0,
        desc=recipe.name,
        unit="step",
    )
    started = time.time()
    step, progress, smoothed = start_step, 0.0, None
    while step < steps and progress < 1.0:
        elapsed = elapsed_before + time.time() - started
        progress = step / steps
        if budget_min:
            progress = max(progress, elapsed / (60 * budget_min))
        if world > 1:  # rank 0's clock decides, so every rank stops at the same step
            shared = torch.tensor([progress])
            dist.broadcast(shared, 0)
            progress = float(shared)
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(lr, step, d.warmup, progress)
        model.train()
        loss = recipe.loss(trainable, next(batches))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), d.clip)
        optimizer.step()
        step += 1
        value = loss.item()
        smoothed = value if smoothed is None else 0.98 * smoothed + 0.02 * value
        rate = (step - start_step) * batch_size * world / max(time.time() - started, 1e-9)
        bar.set_postfix(
            loss=f"{smoothed:.4f}", inst_s=f"{rate:.0f}", progress=f"{progress:.0%}", refresh=False
        )
        bar.update(1)
        if rank == 0 and step % validate_every == 0:
            metrics = recipe.validate(model)
            history.append({"step": step, "loss": round(smoothed, 5), **metrics})
            bar.write(f"step {step}: loss {smoothed:.4f} " + json.dumps(metrics))
            elapsed = elapsed_before + time.time() - started
            info = {"step": step, "elapsed_s": elapsed, "history": history, "init_from": init_from}
            save_resume(resume_dir, recipe.name, model, optimizer, info)
    bar.close()
    wall = elapsed_before + time.time() - started
    entry = None
    if rank == 0:
        if history and history[-1]["step"] == step:
            metrics = {k: v for k, v in history[-1].items() if k not in ("step", "loss")}
        else:
            metrics = recipe.validate(model)
            history.append({"step": step, "loss": round(smoothed or 0.0, 5), **metrics})
        print(f"final step {step}: " + json.dumps(metrics), flush=True)
        entry = save_checkpoint(
            model,
            recipe.name,
            {
                "family": recipe.family,
                "task": recipe.task,
                "config": asdict(recipe.config),
                "parameters": sum(p.numel() for p in model.parameters()),
                "seed": seed,
                "init_from": init_from,
                "data": recipe.data_description(),
                "steps": step,
                "batch_size": batch_size,
                "world_size": world,
                "instances_seen": step * batch_size * world,
                "optimizer": {
                    "name": "Adam",
                    "lr": lr,
                    "schedule": f"linear warm-up {d.warmup} steps, cosine decay to 5%",
                    "grad_clip_norm": d.clip,
                    "note": getattr(recipe, "optimizer_note", None),
                },
                "time_budget_min": budget_min,
                "wall_time_s": round(wall, 1),
                "threads_per_process": args.threads,
                "metrics": metrics,
                "validation_history": history,
                "command": "python -m models.train " + shlex.join(argv or sys.argv[1:]),
                "torch": torch.__version__,
                "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            },
            Path(args.out),
        )
        for path in _resume_paths(resume_dir, recipe.name):
            path.unlink(missing_ok=True)  # finished: the checkpoint supersedes it
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()
    return entry


if __name__ == "__main__":
    train()
