"""The attention model (Kool et al. 2019) and its REINFORCE trainer: decoding gives valid tours,
the model reads a set, the symmetries keep lengths, the symmetric decoder never loses to greedy,
the baseline is replaced by the paper's rule, and a resumed run takes exactly the same step."""

from __future__ import annotations

import math
from dataclasses import asdict
from types import SimpleNamespace

import pytest
import torch

from models.attention_routing import (
    AttentionModel,
    Config,
    greedy_trace,
    sample_traces,
    square_symmetries,
    symmetric,
    symmetric_trace,
    tour_lengths,
)
from models.attention_routing_train import (
    TrainConfig,
    Trainer,
    export,
    random_cities,
    stream_generator,
)
from models.checkpoints import load_model, update_manifest
from models.errors import InvalidInput
from models.pointer_run import PointerRequest, ServedPointer, resolve, run
from models.tasks import tsp

TINY = Config(embed_dim=16, heads=2, layers=2, ff_hidden=32)


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny tensors: a second intra-op thread only waits on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def tiny_model(seed: int = 0) -> AttentionModel:
    torch.manual_seed(seed)
    return AttentionModel(TINY).eval()


def cities(count: int, n: int, seed: int = 0) -> torch.Tensor:
    return random_cities(torch.Generator().manual_seed(seed), count, n)


def tiny_trainer(tmp_path, **overrides) -> Trainer:
    config = TrainConfig(
        n=8, batch_size=16, epoch_steps=3, baseline_eval_count=64, curve_count=16, **overrides
    )
    return Trainer(config, tmp_path, TINY)


def is_permutation(tours: torch.Tensor) -> bool:
    n = tours.shape[1]
    return bool((tours.sort(dim=1).values == torch.arange(n)).all())


@pytest.mark.parametrize("mode", ["greedy", "sample"])
def test_decoding_visits_every_city_once(mode):
    model, points = tiny_model(), cities(32, 10)
    with torch.no_grad():
        out = model.decode(points, mode, generator=torch.Generator().manual_seed(1), record=True)
    assert out.tours.shape == (32, 10) and out.lengths.shape == (32,)
    assert is_permutation(out.tours)
    assert torch.allclose(out.lengths, tour_lengths(points, out.tours))
    # the recorded distributions are the ones chosen from: visited cities get exactly zero
    probs = out.step_probs  # (B, n, n)
    assert torch.allclose(probs.sum(-1), torch.ones(32, 10), atol=1e-5)
    for t in range(1, 10):
        assert (probs[:, t].gather(1, out.tours[:, :t]) == 0).all()
    chosen = probs.gather(2, out.tours[..., None]).squeeze(-1)
    assert torch.allclose(out.log_probs, chosen.log().sum(1), atol=1e-4)


def test_the_model_reads_a_set():
    """Listing the cities in another order permutes the first-step distribution, nothing more."""
    model, points = tiny_model(), cities(4, 9)
    perm = torch.randperm(9, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        before = model.decode(points, record=True).step_probs[:, 0]
        after = model.decode(points[:, perm], record=True).step_probs[:, 0]
    assert torch.allclose(after, before[:, perm], atol=1e-6)


def test_square_symmetries_keep_tour_lengths():
    points = cities(5, 12)
    images = square_symmetries(points)  # (8, B, n, 2)
    assert torch.equal(images[0], points)
    assert len({tuple(image[0, 0].tolist()) for image in images}) == 8
    assert ((images >= 0) & (images <= 1)).all()
    tours = torch.stack(
        [torch.randperm(12, generator=torch.Generator().manual_seed(i)) for i in range(5)]
    )
    lengths = torch.stack([tour_lengths(image, tours) for image in images])
    assert torch.allclose(lengths, lengths[0].expand(8, 5), atol=1e-5)


def test_symmetric_decoder_is_never_worse_than_greedy():
    model, points = tiny_model(), cities(6, 8)
    with torch.no_grad():
        greedy = model.decode(points)
        best = symmetric(model, points)
    assert is_permutation(best.tours)
    assert torch.allclose(best.lengths, tour_lengths(points, best.tours))
    assert (best.lengths <= greedy.lengths + 1e-5).all()
    assert (best.lengths < greedy.lengths - 1e-5).any()  # an untrained policy has room to gain


def test_training_streams_are_seeded():
    a = random_cities(stream_generator("train", 1234, 20, 7), 4, 20)
    b = random_cities(stream_generator("train", 1234, 20, 7), 4, 20)
    c = random_cities(stream_generator("train", 1234, 20, 8), 4, 20)
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_warm_up_baseline_is_the_moving_average(tmp_path):
    trainer = tiny_trainer(tmp_path)
    first = trainer.baseline_cost(None, torch.tensor([1.0, 3.0]))
    second = trainer.baseline_cost(None, torch.tensor([4.0, 6.0]))
    assert torch.allclose(first, torch.full((2,), 2.0))
    assert torch.allclose(second, torch.full((2,), 0.8 * 2.0 + 0.2 * 5.0))
    trainer.epoch = 1  # after warm-up: the frozen policy's greedy tour of each instance
    points = cities(3, 8)
    with torch.no_grad():
        expected = trainer.baseline.decode(points).lengths
    assert torch.equal(trainer.baseline_cost(points, torch.zeros(3)), expected)


def baseline_after_test(trainer: Trainer, shift: torch.Tensor) -> dict:
    """Pretend the baseline's lengths were the candidate's plus `shift`, then run the test."""
    from models.attention_routing_train import greedy_lengths

    trainer.baseline_values = greedy_lengths(trainer.model, trainer.baseline_eval_set()) + shift
    return trainer.update_baseline()


def test_baseline_is_replaced_only_when_significantly_worse(tmp_path):
    trainer = tiny_trainer(tmp_path)
    with torch.no_grad():
        for p in trainer.model.parameters():
            p.add_(0.1)  # the candidate now differs from the frozen baseline
    count = trainer.config.baseline_eval_count
    alternating = 0.1 * (-1.0) ** torch.arange(count)

    worse = baseline_after_test(trainer, -0.05 * torch.ones(count))  # candidate longer
    assert not worse["updated"] and worse["p_value"] is None

    noise = baseline_after_test(trainer, alternating + 1e-4)  # better by noise only
    assert not noise["updated"] and noise["p_value"] > trainer.config.alpha

    better = baseline_after_test(trainer, alternating + 0.05)
    assert better["updated"] and better["p_value"] < trainer.config.alpha
    assert trainer.baseline_updates == better["updates"] == 1
    for a, b in zip(trainer.model.parameters(), trainer.baseline.parameters(), strict=True):
        assert torch.equal(a, b)
    assert not any(p.requires_grad for p in trainer.baseline.parameters())


def test_resume_takes_exactly_the_same_next_step(tmp_path):
    trainer = tiny_trainer(tmp_path)
    for _ in range(4):  # past the warm-up epoch, so the rollout baseline is in play
        trainer.train_step()
    trainer.epoch = 1
    trainer.train_step()
    trainer.save()
    expected = trainer.train_step()
    resumed = Trainer.resume(tmp_path)
    assert resumed.step == 5 and resumed.epoch == 1
    assert resumed.train_step() == expected
    for a, b in zip(
        trainer.model.state_dict().values(), resumed.model.state_dict().values(), strict=True
    ):
        assert torch.equal(a, b)


def test_a_pause_between_steps_is_not_counted_as_training(tmp_path, monkeypatch):
    """A run stopped for an hour (SIGSTOP while the machine does other work) adds at most
    PAUSE_S to its wall time; the steps around it count in full."""
    from models import attention_routing_train

    trainer = tiny_trainer(tmp_path, epochs=1)  # three steps, then the run ends
    clock = iter([100.0, 102.0, 3702.0, 3705.0])  # the start, then after each step
    monkeypatch.setattr(attention_routing_train, "time", SimpleNamespace(time=lambda: next(clock)))
    trainer.wall_s = 50.0
    trainer.run()
    assert trainer.step == 3
    assert trainer.wall_s == 50.0 + 2.0 + attention_routing_train.PAUSE_S + 3.0
    assert attention_routing_train.PAUSE_S < 3600


def test_curve_points_and_export(tmp_path):
    trainer = tiny_trainer(tmp_path)
    for _ in range(3):
        trainer.train_step()
    point = trainer.curve_point(epoch_end=True, wall_s=1.0)
    assert point["step"] == 3 and math.isfinite(point["val_greedy"])
    assert set(point["baseline"]) == {
        "candidate_mean",
        "baseline_mean",
        "p_value",
        "updated",
        "updates",
    }
    trainer.save()
    entry = export(tmp_path, "attention-routing-tsp8", tmp_path / "checkpoints")
    assert entry["task"] == "tsp" and entry["steps"] == 3 and entry["data"]["n_range"] == [8, 8]
    model, _ = load_model("attention-routing-tsp8", tmp_path / "checkpoints")
    points = cities(4, 8)
    trainer.model.eval()
    with torch.no_grad():
        assert torch.equal(model.decode(points).tours, trainer.model.decode(points).tours)


def test_a_run_continues_from_a_shipped_checkpoint(tmp_path):
    """When a run's state is gone, its shipped weights carry it on: same policy, step, epoch
    and curve; a new point's gap comes from the optimum the shipped curve was scored against."""
    trainer = tiny_trainer(tmp_path / "first")
    for _ in range(3):
        trainer.train_step()
    trainer.curve_point(epoch_end=True, wall_s=1.0)
    trainer.epoch = 1
    trainer.save()
    checkpoints = tmp_path / "checkpoints"
    entry = export(tmp_path / "first", "attention-routing-tsp8", checkpoints)
    entry["validation_history"][-1]["val_gap_pct"] = 10.0  # as if scored against Held–Karp
    update_manifest(checkpoints, "attention-routing-tsp8", entry)

    config = TrainConfig(**{**asdict(trainer.config)})
    again = Trainer.continue_from("attention-routing-tsp8", config, tmp_path / "again", checkpoints)
    assert (again.step, again.epoch, again.baseline_updates) == (3, 1, trainer.baseline_updates)
    shipped, continued = trainer.model.state_dict(), again.model.state_dict()
    assert all(torch.equal(shipped[key], continued[key]) for key in shipped)
    again.train_step()
    point = again.curve_point(epoch_end=False, wall_s=2.0)
    optimum = entry["validation_history"][-1]["val_greedy"] / 1.1
    assert point["val_gap_pct"] == round(100 * (point["val_greedy"] / optimum - 1), 3)
    assert again.wall_s == entry["wall_time_s"] and len(again.curve) == 2
    assert again.resumes == [
        {"step": 3, "optimizer_moments": False, "from": "attention-routing-tsp8"}
    ]
    again.save()
    continued = export(tmp_path / "again", "attention-routing-tsp8-more", checkpoints)
    assert continued["resumes"] == again.resumes
    assert "continued with --init-from attention-routing-tsp8;" in continued["command"]


def test_a_checkpoint_of_another_n_warm_starts_a_fresh_run(tmp_path):
    """TSP50 from TSP20's weights: the policy and the baseline start as the parent, but steps,
    epochs and the curve start at zero, the rollout baseline is used from the first step, and
    the manifest names the parent under init_from."""
    trainer = tiny_trainer(tmp_path / "first")
    trainer.train_step()
    trainer.curve_point(epoch_end=True, wall_s=1.0)
    trainer.save()
    checkpoints = tmp_path / "checkpoints"
    parent = export(tmp_path / "first", "attention-routing-tsp8", checkpoints)

    config = TrainConfig(**{**asdict(trainer.config), "n": 10})
    warm = Trainer.continue_from("attention-routing-tsp8", config, tmp_path / "warm", checkpoints)
    assert (warm.step, warm.epoch, warm.curve, warm.resumes) == (0, 0, [], [])
    assert warm.config.warmup_epochs == 0
    shipped = trainer.model.state_dict()
    for model in (warm.model, warm.baseline):
        assert all(torch.equal(shipped[k], v) for k, v in model.state_dict().items())
    points = cities(4, 10)
    cost = torch.full((4,), 9.0)
    with torch.inference_mode():
        assert torch.equal(warm.baseline_cost(points, cost), warm.baseline.decode(points).lengths)
    warm.train_step()
    warm.curve_point(epoch_end=True, wall_s=1.0)
    warm.save()
    resumed = Trainer.resume(tmp_path / "warm")
    assert resumed.init_from == warm.init_from and resumed.config.warmup_epochs == 0
    entry = export(tmp_path / "warm", "attention-routing-tsp10", checkpoints)
    assert entry["init_from"] == {
        "checkpoint": "attention-routing-tsp8",
        "sha256": parent["sha256"],
    }
    assert entry["data"]["n_range"] == [10, 10] and entry["steps"] == 1
    assert "--n 10 --run <run> --init-from attention-routing-tsp8" in entry["command"]
    assert "no warm-up epoch" in entry["data"]["loss"]


# ---- served through the pointer family's one flow (models/pointer_run.py) ----


def test_the_traces_are_tours_with_the_distributions_they_chose_from():
    torch.manual_seed(3)
    model = AttentionModel(TINY).eval()
    where = cities(1, 9)[0].numpy()
    for trace in (greedy_trace(model, where), symmetric_trace(model, where)):
        assert sorted(trace.order) == list(range(9)) and trace.chosen == trace.order
        assert trace.distributions.shape == (9, 9)
        assert abs(trace.distributions.sum(axis=1) - 1).max() < 1e-5
        for step, city in enumerate(trace.order):  # visited cities have probability 0
            assert trace.distributions[step, city] > 0
            assert (trace.distributions[step, trace.order[:step]] == 0).all()
        assert trace.support_sizes == list(range(9, 0, -1))
    greedy, best = greedy_trace(model, where), symmetric_trace(model, where)
    assert tsp.tour_length(where, best.order) <= tsp.tour_length(where, greedy.order) + 1e-6


def test_more_samples_only_add_to_a_draw():
    torch.manual_seed(4)
    model = AttentionModel(TINY).eval()
    where = cities(1, 10)[0].numpy()
    few, more = sample_traces(model, where, 4, seed=7), sample_traces(model, where, 16, seed=7)
    assert [t.order for t in few] == [t.order for t in more[:4]]
    assert len({tuple(t.order) for t in more}) > 1  # a draw, not one tour repeated
    other = sample_traces(model, where, 16, seed=8)
    assert [t.order for t in other] != [t.order for t in more]


def test_run_serves_the_attention_model_and_refuses_what_it_cannot_decode():
    torch.manual_seed(5)
    served = ServedPointer("attention-routing-tsp20", AttentionModel(TINY).eval(), "0" * 64)
    points = cities(1, 12)[0].tolist()
    load = {"attention-routing-tsp20": served}.__getitem__
    for decoder in ("greedy", "sample", "symmetric"):
        request = PointerRequest("tsp", points, decoder, samples=8, model="attention-routing-tsp20")
        trace = run(request, load)
        assert trace.valid and trace.decoder == decoder and trace.model.alpha == 1.0
        assert len(trace.steps) == 12 and trace.gap is not None and trace.gap >= -1e-9
    with pytest.raises(InvalidInput, match="decodes greedy, sample, symmetric, not beam"):
        run(PointerRequest("tsp", points, "beam", model="attention-routing-tsp20"), load)
    with pytest.raises(InvalidInput, match="No model called “pointer-hull” serves the tsp"):
        resolve("tsp", None, "pointer-hull")
    with pytest.raises(InvalidInput, match="trained at α = 1, not 1.5"):
        resolve("tsp", 1.5, "attention-routing-tsp20")
    assert resolve("tsp", None) == (1.0, "pointer-tsp-attention-rl2")  # the default stays


def curve_of(gaps: dict[int, float]) -> list[dict]:
    return [{"step": step, "val_gap_pct": gap} for step, gap in gaps.items()]


def test_the_training_table_projects_a_falling_curve_to_the_papers_gap() -> None:
    from models.evaluate_attention_routing import projection_cell

    # gap = 100 · steps^−0.5 exactly: 0.5% at steps = 40,000
    curve = curve_of({100: 10.0, 400: 5.0, 1600: 2.5})
    assert projection_cell(curve, 0.5, 256) == "40,000 (exponent 0.50)"


def test_a_curve_too_flat_to_say_anything_gets_a_dash_with_its_reason() -> None:
    from models.evaluate_attention_routing import projection_cell

    # past 10× the paper's 128 million instances: 5 million steps of 256 is 1.28 billion
    limit_steps = 10 * 100 * 2500 * 512 / 256
    flat = curve_of({1000: 6.8, 2000: 6.4, 4000: 6.1})
    assert projection_cell(flat, 1.76, 256).startswith("— (too flat to project: exponent 0.08")
    steep = curve_of({1000: 6.8, 2000: 3.4, 4000: 1.7})  # halves with each doubling
    assert projection_cell(steep, 1.76, 256) == "3,864 (exponent 1.00)"
    assert 3864 < limit_steps
    rising = curve_of({1000: 2.0, 2000: 3.0, 4000: 4.0})
    assert projection_cell(rising, 1.76, 256) == "—"
    assert projection_cell(curve_of({1000: 2.0, 2000: 1.0}), 0.5, 256) == "—"  # two points
