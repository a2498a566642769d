"""REINFORCE with the greedy-rollout baseline (Kool, van Hoof and Welling 2019, Algorithm 1),
for the attention model of `models.attention_routing`, scaled to one CPU thread.

The gradient of the expected tour length L(π) is estimated from sampled tours,

    ∇L(θ) ≈ (1/B) Σ_i (L(π_i) − b(s_i)) ∇ log p_θ(π_i | s_i),

where the baseline b(s) is the length of the *greedy* tour of a frozen copy of the policy on
the same instance: an instance that is hard for both costs no more than one that is easy for
both, so the estimate has low variance without a learned critic. At the end of each epoch the
candidate and the baseline policy decode a fixed evaluation set greedily; the baseline takes
the candidate's weights only if the candidate is better under a one-sided paired t-test at
α = 5 %, and then a new evaluation set is drawn (so the test does not overfit one set).
As in the paper, the first epoch uses an exponential moving average of the batch cost
(β = 0.8) as the baseline instead, since a random policy's greedy tours are no useful yardstick.

Scaled down from the paper (batch 512, 2,500 steps an epoch, 100 epochs): the defaults here are
the schedule measured for one CPU thread (see `TrainConfig`); everything else is the paper's
(Adam, lr 10⁻⁴, gradient norm clipped at 1, 10,000 baseline-evaluation instances, α = 5 %).

Data: cities uniform in the unit square from seeded torch Generators; batch k (and the sampling
of its tours) depends only on (seed, n, k), so a resumed run replays nothing and continues
exactly. The full state is saved atomically to data/attention-routing/<run>/state.pt every few
minutes, at each epoch end and on SIGTERM; the learning curve goes to curve.json beside it.

    python -m models.attention_routing_train --n 20 --run tsp20           # start
    python -m models.attention_routing_train --n 20 --run tsp20 --resume  # continue
    python -m models.attention_routing_train --reference --n 20           # optimal reference
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import signal
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file
from scipy.stats import ttest_rel

from models.attention_routing import AttentionModel, Config
from models.checkpoints import CHECKPOINT_DIR, read_manifest, save_checkpoint

RUN_DIR = Path("data/attention-routing")
# A step, with the evaluation and save at an epoch's end, takes seconds on this CPU; a gap of
# over 10 minutes between two steps is a pause, and the run's wall time counts 10 minutes of it.
PAUSE_S = 600.0
# independent instance streams; "test" is drawn only by the results tables (models.evaluate)
STREAMS = {"train": 1, "baseline-eval": 2, "curve": 3, "test": 4}


@dataclass
class TrainConfig:
    n: int = 20
    # one thread does ~300 TSP20 instances/s (sample + baseline rollout + backward) on an idle
    # core and ~140/s on a shared one, so 256 × 500 steps is an epoch of 7–15 minutes and the
    # baseline can be replaced several times an hour
    batch_size: int = 256
    epoch_steps: int = 500
    epochs: int = 100
    lr: float = 1e-4
    max_grad_norm: float = 1.0
    seed: int = 1234
    baseline_eval_count: int = 10_000
    alpha: float = 0.05  # one-sided paired t-test level for replacing the baseline
    warmup_epochs: int = 1  # epochs with the moving-average baseline
    ema_beta: float = 0.8
    curve_count: int = 1000  # fixed validation set for the learning curve
    validate_every: int = 125  # steps between curve points within an epoch
    save_every_s: float = 300.0


def stream_generator(stream: str, *keys: int) -> torch.Generator:
    """A torch Generator for one instance stream, seeded from (stream, *keys)."""
    state = np.random.SeedSequence([STREAMS[stream], *keys]).generate_state(1, dtype=np.uint64)
    return torch.Generator().manual_seed(int(state[0]))


def random_cities(generator: torch.Generator, count: int, n: int) -> torch.Tensor:
    """Cities uniform in the unit square (count, n, 2)."""
    return torch.rand(count, n, 2, generator=generator)


def curve_set(n: int, count: int, stream: str = "curve") -> torch.Tensor:
    """The fixed validation cities of the learning curve, the same for every run at this n;
    or, with stream "test", the results tables' instances, which no run ever sees."""
    return random_cities(stream_generator(stream, n, count), count, n)


@torch.inference_mode()
def greedy_lengths(model: AttentionModel, points: torch.Tensor, chunk: int = 2000) -> torch.Tensor:
    """Greedy tour lengths (count,) in eval mode (batch norm from running statistics)."""
    was_training = model.training
    model.eval()
    lengths = torch.cat(
        [model.decode(points[i : i + chunk]).lengths for i in range(0, len(points), chunk)]
    )
    model.train(was_training)
    return lengths


def atomic_write(path: Path, write) -> None:
    """Write through a temporary file and rename it, so a crash never leaves half a file. The
    temporary name keeps the suffix (numpy would otherwise append its own)."""
    tmp = path.with_name(f".{path.name}")
    write(tmp)
    os.replace(tmp, path)


# --- the optimal reference of the curve set --------------------------------------------------


def reference_path(n: int, count: int, stream: str = "curve") -> Path:
    name = (
        f"reference-tsp{n}-{count}" if stream == "curve" else f"reference-{stream}-tsp{n}-{count}"
    )
    return RUN_DIR / f"{name}.npz"


def compute_reference(n: int, count: int, chunk: int = 8, stream: str = "curve") -> Path:
    """Optimal (Held–Karp, n ≤ 20) or OR-Tools tours of a set, cached under data/.

    Held–Karp takes about a second per TSP20 instance on an idle core, so the tours found so
    far are kept in a partial file after every chunk, and a rerun continues from it."""
    from models.tasks.tsp import held_karp_batch, ortools_tour, tour_length

    points = curve_set(n, count, stream).double().numpy()
    exact = n <= 20
    path = reference_path(n, count, stream)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial.npy")
    tours = list(np.load(partial)) if partial.exists() else []
    start = time.time()
    for lo in range(len(tours), count, chunk):
        batch = points[lo : lo + chunk]
        tours.extend(held_karp_batch(batch) if exact else [ortools_tour(p, 2000) for p in batch])
        atomic_write(partial, lambda p: np.save(p, np.array(tours)))
        print(f"reference {len(tours)}/{count}  {time.time() - start:.0f} s", flush=True)
    lengths = np.array([tour_length(p, t) for p, t in zip(points, tours, strict=True)])
    method = "held-karp (exact)" if exact else "or-tools guided local search, 2 s"
    atomic_write(
        path,
        lambda p: np.savez(p.open("wb"), tours=np.array(tours), lengths=lengths, method=method),
    )
    partial.unlink()
    print(f"mean optimal length {lengths.mean():.4f} ({method}) -> {path}", flush=True)
    return path


def fill_curve_gaps(curve: list[dict], optimum: float | None) -> None:
    """Each point's gap to the curve set's mean optimal length. Without the reference file,
    the optimum is read back from points that carry a gap (a run continued from a shipped
    checkpoint has its curve, scored against the same set's Held–Karp optima)."""
    if optimum is None:
        known = [p for p in curve if p.get("val_gap_pct") is not None]
        if not known:
            return
        point = known[-1]
        optimum = point["val_greedy"] / (1 + point["val_gap_pct"] / 100)
    for point in curve:
        if point.get("val_gap_pct") is None:
            point["val_gap_pct"] = round(100 * (point["val_greedy"] / optimum - 1), 3)
            point["optimal_mean"] = round(optimum, 5)


def load_reference(n: int, count: int, stream: str = "curve") -> np.ndarray | None:
    path = reference_path(n, count, stream)
    return np.load(path)["lengths"] if path.exists() else None


# --- training --------------------------------------------------------------------------------


class Trainer:
    """The run's whole state, one REINFORCE step at a time; `state_dict` resumes it exactly."""

    def __init__(
        self, config: TrainConfig, run_dir: Path, model_config: Config | None = None
    ) -> None:
        self.config, self.run_dir = config, run_dir
        torch.manual_seed(config.seed)  # the initial weights
        self.model = AttentionModel(model_config)
        self.baseline = self.frozen_copy()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=config.lr)
        self.step = self.epoch = self.baseline_updates = 0
        self.ema: float | None = None  # warm-up baseline
        self.baseline_values: torch.Tensor | None = None  # baseline's greedy lengths on its set
        self.curve: list[dict] = []
        # every restart of the run: its step and whether Adam's moments came back (as
        # models/train.py records them)
        self.resumes: list[dict] = []
        self.wall_s = 0.0
        self.init_from: dict | None = None  # the checkpoint a warm-started run began from
        self.since_point = [0.0, 0]  # sum of sampled costs, steps, since the last curve point
        self.since_epoch = [0.0, 0]
        self.reference: np.ndarray | None = None
        self.curve_points = curve_set(config.n, config.curve_count)

    def frozen_copy(self) -> AttentionModel:
        baseline = copy.deepcopy(self.model).eval()
        baseline.requires_grad_(False)
        return baseline

    def batch(self, step: int) -> tuple[torch.Tensor, torch.Generator]:
        """Batch `step`'s cities and the generator its tours are then sampled with."""
        generator = stream_generator("train", self.config.seed, self.config.n, step)
        return random_cities(generator, self.config.batch_size, self.config.n), generator

    def baseline_eval_set(self) -> torch.Tensor:
        generator = stream_generator(
            "baseline-eval", self.config.seed, self.config.n, self.baseline_updates
        )
        return random_cities(generator, self.config.baseline_eval_count, self.config.n)

    def baseline_cost(self, points: torch.Tensor, cost: torch.Tensor) -> torch.Tensor:
        """b(s) per instance (B,): the moving average in warm-up, else the baseline's greedy
        tour of the same instance."""
        if self.epoch < self.config.warmup_epochs:
            mean = float(cost.mean())
            beta = self.config.ema_beta
            self.ema = mean if self.ema is None else beta * self.ema + (1 - beta) * mean
            return torch.full_like(cost, self.ema)
        with torch.inference_mode():
            return self.baseline.decode(points).lengths

    def train_step(self) -> dict:
        points, generator = self.batch(self.step)
        self.model.train()
        out = self.model.decode(points, "sample", generator=generator)
        cost = out.lengths.detach()  # (B,)
        advantage = cost - self.baseline_cost(points, cost)
        loss = (advantage * out.log_probs).mean()
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(
            self.model.parameters(), self.config.max_grad_norm
        )
        self.optimizer.step()
        self.step += 1
        for acc in (self.since_point, self.since_epoch):
            acc[0] += float(cost.mean())
            acc[1] += 1
        return {
            "cost": float(cost.mean()),
            "loss": float(loss.detach()),
            "grad_norm": float(grad_norm),
        }

    def update_baseline(self) -> dict:
        """End of epoch: replace the baseline if the candidate is significantly better."""
        points = self.baseline_eval_set()
        if self.baseline_values is None:
            self.baseline_values = greedy_lengths(self.baseline, points)
        candidate = greedy_lengths(self.model, points)
        result = {
            "candidate_mean": float(candidate.mean()),
            "baseline_mean": float(self.baseline_values.mean()),
            "p_value": None,
            "updated": False,
        }
        if result["candidate_mean"] < result["baseline_mean"]:
            test = ttest_rel(candidate.numpy(), self.baseline_values.numpy(), alternative="less")
            result["p_value"] = float(test.pvalue)
            if test.pvalue < self.config.alpha:
                self.baseline = self.frozen_copy()
                self.baseline_updates += 1
                self.baseline_values = greedy_lengths(self.baseline, self.baseline_eval_set())
                result["updated"] = True
        result["updates"] = self.baseline_updates
        return result

    def curve_point(self, epoch_end: bool, wall_s: float) -> dict:
        lengths = greedy_lengths(self.model, self.curve_points)
        total, steps = self.since_point
        point = {
            "step": self.step,
            "epoch": self.epoch,
            "epoch_end": epoch_end,
            "wall_s": round(wall_s, 1),
            "train_cost": round(total / steps, 5) if steps else None,
            "val_greedy": round(float(lengths.mean()), 5),
            "val_gap_pct": None,
        }
        self.since_point = [0.0, 0]
        if epoch_end:
            total, steps = self.since_epoch
            point["epoch_train_cost"] = round(total / steps, 5)
            point["baseline"] = self.update_baseline()
            self.since_epoch = [0.0, 0]
        self.curve.append(point)
        self.fill_gaps()
        return point

    def fill_gaps(self) -> None:
        """Gap to the optimum of every curve point, once the reference is cached (it may be
        computed while the run goes on)."""
        if self.reference is None:
            self.reference = load_reference(self.config.n, self.config.curve_count)
        optimum = None if self.reference is None else float(self.reference.mean())
        fill_curve_gaps(self.curve, optimum)

    def state_dict(self) -> dict:
        return {
            "train_config": asdict(self.config),
            "model_config": self.model.config.to_dict(),
            "model": self.model.state_dict(),
            "baseline": self.baseline.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "step": self.step,
            "epoch": self.epoch,
            "baseline_updates": self.baseline_updates,
            "baseline_values": self.baseline_values,
            "ema": self.ema,
            "curve": self.curve,
            "resumes": self.resumes,
            "init_from": self.init_from,
            "wall_s": self.wall_s,
            "since_point": self.since_point,
            "since_epoch": self.since_epoch,
            "torch_rng": torch.get_rng_state(),
        }

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.baseline.load_state_dict(state["baseline"])
        self.optimizer.load_state_dict(state["optimizer"])
        for key in (
            "step",
            "epoch",
            "baseline_updates",
            "baseline_values",
            "ema",
            "curve",
            "wall_s",
        ):
            setattr(self, key, state[key])
        self.since_point, self.since_epoch = list(state["since_point"]), list(state["since_epoch"])
        self.init_from = state.get("init_from")
        self.resumes = [*state.get("resumes", []), {"step": self.step, "optimizer_moments": True}]
        torch.set_rng_state(state["torch_rng"])

    @classmethod
    def continue_from(
        cls, name: str, config: TrainConfig, run_dir: Path, directory: Path = CHECKPOINT_DIR
    ) -> Trainer:
        """A new run that carries on from the shipped checkpoint `name` (when a run's state.pt
        is gone): its weights as policy and baseline, its step, epoch, wall time and curve; Adam
        starts afresh (the checkpoint has no moments), and the batches continue from its step."""
        entry = read_manifest(directory)[name]
        if entry["data"]["n_range"] != [config.n, config.n]:
            return cls.transfer_from(name, entry, config, run_dir, directory)
        trainer = cls(config, run_dir, Config(**entry["config"]))
        trainer.model.load_state_dict(load_file(directory / entry["file"]))
        trainer.baseline = trainer.frozen_copy()
        trainer.step, trainer.epoch = entry["steps"], entry["epochs_done"]
        trainer.baseline_updates, trainer.wall_s = entry["baseline_updates"], entry["wall_time_s"]
        trainer.curve = [
            {**point, "epoch_end": True, "continued_from": name}
            for point in entry["validation_history"]
        ]
        trainer.resumes = [
            *entry.get("resumes", []),
            {"step": entry["steps"], "optimizer_moments": False, "from": name},
        ]
        return trainer

    @classmethod
    def transfer_from(
        cls, name: str, entry: dict, config: TrainConfig, run_dir: Path, directory: Path
    ) -> Trainer:
        """A new run on another n that starts from checkpoint `name`'s weights (a warm start:
        the model has no n-specific parameter). Its steps, curve and epochs start at zero, and
        the greedy-rollout baseline is used from the first step: the warm-up's moving average
        exists because a random policy's greedy tours are no yardstick, and this one is not
        random. The manifest records the parent under `init_from`."""
        config.warmup_epochs = 0
        trainer = cls(config, run_dir, Config(**entry["config"]))
        trainer.model.load_state_dict(load_file(directory / entry["file"]))
        trainer.baseline = trainer.frozen_copy()
        trainer.init_from = {"checkpoint": name, "sha256": entry["sha256"]}
        return trainer

    @classmethod
    def resume(cls, run_dir: Path, epochs: int | None = None) -> Trainer:
        state = torch.load(run_dir / "state.pt", weights_only=True)
        config = TrainConfig(**state["train_config"])
        if epochs is not None:
            config.epochs = epochs
        trainer = cls(config, run_dir, Config(**state["model_config"]))
        trainer.load_state_dict(state)
        return trainer

    def save(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        state = self.state_dict()
        atomic_write(self.run_dir / "state.pt", lambda p: torch.save(state, p))
        curve = {
            "train_config": state["train_config"],
            "model_config": state["model_config"],
            "points": self.curve,
        }
        atomic_write(
            self.run_dir / "curve.json", lambda p: p.write_text(json.dumps(curve, indent=1))
        )

    def log(self, info: dict, steps_per_s: float) -> None:
        print(
            f"step {self.step} epoch {self.epoch} cost {info['cost']:.4f} "
            f"loss {info['loss']:+.4f} grad {info['grad_norm']:.3f} {steps_per_s:.2f} steps/s "
            f"wall {self.wall_s / 60:.1f} min",
            flush=True,
        )

    def run(self, max_hours: float | None = None, log_every: int = 50) -> None:
        """Train until `epochs` are done, `max_hours` of this process pass, or SIGTERM."""
        stop = []
        signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
        started = last_save = last_log = before = time.time()
        last_log_step = self.step
        while self.epoch < self.config.epochs and not stop:
            info = self.train_step()
            now = time.time()
            # a gap far longer than any step takes is a pause (the process stopped with
            # SIGSTOP, the machine suspended), not training
            self.wall_s += min(now - before, PAUSE_S)
            before = now
            if self.step % log_every == 0:
                self.log(info, (self.step - last_log_step) / (now - last_log))
                last_log, last_log_step = now, self.step
            epoch_end = self.step % self.config.epoch_steps == 0
            if epoch_end or self.step % self.config.validate_every == 0:
                point = self.curve_point(epoch_end, self.wall_s)
                print("curve", json.dumps(point), flush=True)
                if epoch_end:
                    self.epoch += 1
            if epoch_end or now - last_save > self.config.save_every_s:
                self.save()
                last_save = now
            if max_hours is not None and now - started > 3600 * max_hours:
                break
        self.save()
        print(
            f"stopped at step {self.step}, epoch {self.epoch}; state in {self.run_dir}", flush=True
        )


# --- export ----------------------------------------------------------------------------------


def checkpoint_entry(state: dict) -> dict:
    """The manifest entry of a run's state: config, schedule, data, metrics and curve (the
    file, size and sha256 are added by models.checkpoints.save_checkpoint)."""
    train = state["train_config"]
    ends = [p for p in state["curve"] if p["epoch_end"]]
    last = state["curve"][-1] if state["curve"] else {}
    n = train["n"]
    return {
        "family": "attention-routing",
        "task": "tsp",
        "config": state["model_config"],
        "parameters": sum(v.numel() for v in state["model"].values() if v.dtype.is_floating_point),
        "seed": train["seed"],
        "data": {
            "source": "fresh cities uniform in [0,1]² every batch; no labels",
            "n_range": [n, n],
            "loss": "REINFORCE on tour length; baseline: the greedy rollout of the best policy "
            "so far, replaced when a paired one-sided t-test on "
            f"{train['baseline_eval_count']:,} instances favours the policy (p < "
            f"{train['alpha']:g})"
            + (
                f"; an exponential moving average in the first {train['warmup_epochs']} epoch"
                if not state.get("init_from")
                else f"; warm-started from {state['init_from']['checkpoint']}, no warm-up epoch"
            ),
        },
        "steps": state["step"],
        "epochs_done": state["epoch"],
        "batch_size": train["batch_size"],
        "instances_seen": state["step"] * train["batch_size"],
        "optimizer": {
            "name": "Adam",
            "lr": train["lr"],
            "schedule": f"constant, gradients clipped to norm {train['max_grad_norm']:g}",
        },
        "wall_time_s": round(state["wall_s"], 1),
        "baseline_updates": state["baseline_updates"],
        "metrics": {
            f"val_greedy_n{n}": last.get("val_greedy"),
            f"val_gap_pct_n{n}": last.get("val_gap_pct"),
        },
        "validation_history": [
            {k: p.get(k) for k in ("step", "wall_s", "val_greedy", "val_gap_pct")}
            for p in (ends or state["curve"][-1:])
        ],
        "resumes": state.get("resumes", []),
        **({"init_from": state["init_from"]} if state.get("init_from") else {}),
        "command": f"python -m models.attention_routing_train --n {n} --run <run>"
        + (f" --init-from {state['init_from']['checkpoint']}" if state.get("init_from") else "")
        + "".join(
            f"; continued with --init-from {r['from']}"
            for r in state.get("resumes", [])
            if "from" in r
        )
        + "; then --run <run> --export <name>",
    }


def export(run_dir: Path, name: str, directory: Path = CHECKPOINT_DIR) -> dict:
    """The trained policy's weights (not the baseline's) as checkpoints/<name>.safetensors,
    with its manifest entry."""
    state = torch.load(run_dir / "state.pt", weights_only=True)
    model = AttentionModel(Config(**state["model_config"]))
    model.load_state_dict(state["model"])
    reference = load_reference(state["train_config"]["n"], state["train_config"]["curve_count"])
    fill_curve_gaps(state["curve"], None if reference is None else float(reference.mean()))
    return save_checkpoint(model, name, checkpoint_entry(state), directory)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--run", help="run name: state in data/attention-routing/<run>/")
    parser.add_argument("--resume", action="store_true", help="continue the run from its state.pt")
    parser.add_argument("--reference", action="store_true", help="compute a set's optimal tours")
    parser.add_argument(
        "--set", default="curve", choices=("curve", "test"), help="with --reference"
    )
    parser.add_argument("--export", metavar="NAME", help="write the run's policy to checkpoints/")
    parser.add_argument(
        "--init-from", metavar="NAME", help="start the run from a shipped checkpoint's weights"
    )
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-hours", type=float)
    defaults = TrainConfig()
    for field in (
        "batch_size",
        "epoch_steps",
        "epochs",
        "lr",
        "seed",
        "baseline_eval_count",
        "curve_count",
        "validate_every",
    ):
        value = getattr(defaults, field)
        parser.add_argument(
            f"--{field.replace('_', '-')}", type=type(value), default=None, help=f"default {value}"
        )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.reference:
        compute_reference(args.n, args.curve_count or defaults.curve_count, stream=args.set)
        return
    if not args.run:
        parser.error("--run is required for training")
    run_dir = RUN_DIR / args.run
    if args.export:
        entry = export(run_dir, args.export)
        print(f"exported step {entry['steps']} to checkpoints/{entry['file']}", flush=True)
        return
    if args.resume:
        trainer = Trainer.resume(run_dir, args.epochs)
        print(f"resumed {run_dir} at step {trainer.step}, epoch {trainer.epoch}", flush=True)
    else:
        if (run_dir / "state.pt").exists():
            parser.error(f"{run_dir}/state.pt exists: pass --resume, or choose another --run")
        chosen = {k: v for k, v in vars(args).items() if k in asdict(defaults) and v is not None}
        config = TrainConfig(**{**asdict(defaults), "n": args.n, **chosen})
        if args.init_from:
            trainer = Trainer.continue_from(args.init_from, config, run_dir)
        else:
            trainer = Trainer(config, run_dir)
    print("config", json.dumps(asdict(trainer.config)), flush=True)
    trainer.run(args.max_hours)


if __name__ == "__main__":
    main()
