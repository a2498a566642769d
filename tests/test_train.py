import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from models import train as training
from models.checkpoints import CheckpointError, load_model, read_manifest
from models.pointer import greedy
from models.recipe import TrainDefaults
from models.recipes import get_recipe
from models.train import learning_rate, parse_args, run_plan, schedule_progress, train

ROOT = Path(__file__).resolve().parent.parent
TINY = "pointer-sort-tiny"


def _check_checkpoint(out: Path, steps: int, world: int) -> None:
    entry = read_manifest(out)[TINY]
    assert entry["steps"] == steps and entry["world_size"] == world
    assert entry["family"] == "pointer" and entry["task"] == "sort"
    assert (out / entry["file"]).stat().st_size == entry["size_bytes"]
    model, loaded = load_model(TINY, out)
    assert loaded["sha256"] == entry["sha256"]
    trace = greedy(model, torch.rand(1, 6).numpy())[0]
    assert sorted(trace.order) == list(range(6))


def test_tiny_training_run_writes_a_loadable_checkpoint(tmp_path: Path) -> None:
    out, resume = tmp_path / "ck", tmp_path / "resume"
    args = [TINY, "--steps", "12", "--validate-every", "5", "--out", str(out)]
    entry = train([*args, "--resume-dir", str(resume)])
    assert entry is not None and entry["metrics"]["accuracy_n8"] >= 0.0
    assert [h["step"] for h in entry["validation_history"]] == [5, 10, 12]
    assert entry["resumes"] == []  # never interrupted
    _check_checkpoint(out, steps=12, world=1)
    assert not list(resume.glob("*"))  # a finished run leaves no resume state


def test_resume_continues_from_the_saved_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, resume = tmp_path / "ck", tmp_path / "resume"
    common = ["--validate-every", "4", "--out", str(out), "--resume-dir", str(resume)]
    train([TINY, "--steps", "8", *common])
    # pretend the run was cut after step 8 of 12: a saved resume state is picked up
    assert not list(resume.glob("*"))
    from models.train import save_resume

    recipe = get_recipe(TINY)
    model, _ = load_model(TINY, out)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    recipe.loss(model, next(recipe.batches(16, 0, 0, 0))).backward()
    optimizer.step()
    save_resume(resume, TINY, model, optimizer, {"step": 8, "elapsed_s": 1.0, "history": []})
    rates = []
    real_step = training.optimizer_step
    monkeypatch.setattr(
        training, "optimizer_step", lambda *args: rates.append(args[5]) or real_step(*args)
    )
    entry = train([TINY, "--steps", "12", "--resume", *common])
    # a state with its moments (or one saved before snapshots existed) does not warm up again
    warmup, lr = recipe.defaults.warmup, recipe.defaults.lr
    assert rates[0] == pytest.approx(learning_rate(lr, 8, warmup, 8 / 12))
    assert entry is not None and entry["steps"] == 12
    assert [h["step"] for h in entry["validation_history"]] == [12]
    assert entry["resumes"] == [{"step": 8, "optimizer_moments": True}]


def test_a_snapshot_without_moments_resumes_with_a_fresh_warm_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--snapshot-to` keeps the weights and the step, drops Adam's moments; resuming from it
    restarts the moments and warms the rate up again from near zero."""
    out, resume, snapshot = tmp_path / "ck", tmp_path / "resume", tmp_path / "snapshot"
    recipe = get_recipe(TINY)
    model = recipe.build_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    recipe.loss(model, next(recipe.batches(16, 0, 0, 0))).backward()
    optimizer.step()
    earlier = {"step": 4, "optimizer_moments": True}  # this run was resumed once before
    info = {"step": 8, "elapsed_s": 1.0, "history": [], "resumes": [earlier]}
    training.save_resume(resume, TINY, model, optimizer, info)
    assert train([TINY, "--resume-dir", str(resume), "--snapshot-to", str(snapshot)]) is None
    tensors = load_file(snapshot / f"{TINY}.resume.safetensors")
    assert tensors and all(key.startswith("model.") for key in tensors)
    saved = json.loads((snapshot / f"{TINY}.resume.json").read_text())
    assert saved["step"] == 8 and saved["optimizer_moments"] is False

    rates = []
    real_step = training.optimizer_step
    monkeypatch.setattr(
        training,
        "optimizer_step",
        lambda *args: rates.append(args[5]) or real_step(*args),
    )
    common = ["--validate-every", "4", "--out", str(out), "--lr", "1e-3"]
    entry = train([TINY, "--steps", "12", "--resume", "--resume-dir", str(snapshot), *common])
    assert entry is not None and entry["steps"] == 12
    assert len(rates) == 4
    # the manifest says where Adam's moments started afresh, and a resume state carries that on
    assert entry["resumes"] == [earlier, {"step": 8, "optimizer_moments": False}]
    first = learning_rate(1e-3, 8, recipe.defaults.warmup, 8 / 12) / training.REWARM_STEPS
    assert rates[0] == pytest.approx(first)
    with pytest.raises(ValueError, match="another directory"):
        training.snapshot_resume(snapshot, TINY, snapshot)


def test_the_rewarm_ramps_to_one_and_stays_there() -> None:
    ramp = training.REWARM_STEPS
    assert training.rewarm_factor(0) == pytest.approx(1 / ramp)
    assert training.rewarm_factor(ramp // 2 - 1) == pytest.approx(0.5)
    assert training.rewarm_factor(ramp - 1) == training.rewarm_factor(10 * ramp) == 1.0


def test_checkpoint_errors_are_clear(tmp_path: Path) -> None:
    out = tmp_path / "ck"
    train([TINY, "--steps", "2", "--out", str(out), "--resume-dir", str(tmp_path / "r")])
    with pytest.raises(CheckpointError, match="No checkpoint named 'nope'"):
        load_model("nope", out)
    weights = out / f"{TINY}.safetensors"
    weights.write_bytes(weights.read_bytes()[:-1] + b"\0")
    with pytest.raises(CheckpointError, match="does not match its manifest"):
        load_model(TINY, out)
    weights.unlink()
    with pytest.raises(CheckpointError, match="missing"):
        load_model(TINY, out)


def test_learning_rate_schedule() -> None:
    assert learning_rate(1.0, 0, 10, 0.0) == pytest.approx(0.1)
    assert learning_rate(1.0, 10, 10, 0.0) == pytest.approx(1.0)
    assert learning_rate(1.0, 500, 10, 1.0) == pytest.approx(0.05)


def test_an_explicit_step_count_turns_off_the_recipes_time_budget() -> None:
    defaults = TrainDefaults(steps=100, batch_size=8, lr=1e-3, time_budget_min=5.0)
    plan = run_plan(parse_args([TINY]), defaults)
    assert (plan.steps, plan.budget_min, plan.seed) == (100, 5.0, defaults.seed)
    plan = run_plan(parse_args([TINY, "--steps", "10", "--seed", "0"]), defaults)
    assert (plan.steps, plan.budget_min, plan.seed) == (10, None, 0)
    plan = run_plan(parse_args([TINY, "--steps", "10", "--time-budget", "2"]), defaults)
    assert (plan.steps, plan.budget_min) == (10, 2.0)


def test_the_schedule_follows_steps_or_minutes_whichever_is_further() -> None:
    defaults = TrainDefaults(steps=100, batch_size=8, lr=1e-3, time_budget_min=5.0)
    budgeted = run_plan(parse_args([TINY]), defaults)
    assert schedule_progress(10, 0.0, budgeted, world=1) == 0.1
    assert schedule_progress(10, 150.0, budgeted, world=1) == 0.5  # half of 5 minutes
    steps_only = run_plan(parse_args([TINY, "--steps", "100"]), defaults)
    assert schedule_progress(10, 1e6, steps_only, world=1) == 0.1


def test_tiny_training_under_torchrun(tmp_path: Path) -> None:
    out = tmp_path / "ck"
    torchrun = Path(sys.executable).parent / "torchrun"
    command = [
        str(torchrun),
        "--nproc_per_node",
        "2",
        "--standalone",
        "-m",
        "models.train",
        TINY,
        "--steps",
        "6",
        "--validate-every",
        "3",
        "--out",
        str(out),
        "--resume-dir",
        str(tmp_path / "resume"),
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    _check_checkpoint(out, steps=6, world=2)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest[TINY]["instances_seen"] == 6 * 16 * 2
