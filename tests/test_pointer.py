import itertools
from pathlib import Path

import numpy as np
import pytest
import torch

from models.pointer import (
    IGNORE_INDEX,
    Config,
    PointerNet,
    beam_candidates,
    beam_search,
    closed_tour_lengths,
    either_direction_loss,
    greedy,
    pointer_loss,
    sampled_tours,
    tour_reinforce_loss,
)
from models.recipes import get_recipe
from models.tasks import hull, tsp


def _model(**overrides: object) -> PointerNet:
    torch.manual_seed(0)
    return PointerNet(Config(hidden=16, **overrides))


TASK_CONFIGS = {
    "hull": {
        "end_position": True,
        "glimpse_residual": True,
        "embedding_skip": True,
        "input_order": "x",
    },
    "tsp": {"glimpse_residual": True, "embedding_skip": True},
    "tsp-attention": {
        "glimpse_residual": True,
        "embedding_skip": True,
        "encoder": "attention",
        "encoder_layers": 2,
        "heads": 2,
    },
    "sort": {"input_dim": 1},
    "sort-entmax15": {"input_dim": 1, "pointer": "entmax15"},
    "sort-sparsemax": {"input_dim": 1, "pointer": "sparsemax"},
}


def _instances(config: Config, batch: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(n)
    return rng.random((batch, n)) if config.input_dim == 1 else rng.random((batch, n, 2))


@pytest.mark.parametrize("task", TASK_CONFIGS)
def test_greedy_trace_shapes_and_no_repeats(task: str) -> None:
    model = _model(**TASK_CONFIGS[task])
    n, end = 9, model.config.end_position
    traces = greedy(model, _instances(model.config, 5, n))
    assert len(traces) == 5
    for trace in traces:
        steps = len(trace.chosen)
        assert trace.distributions.shape == (steps, n + int(end))
        assert len(trace.support_sizes) == steps
        assert len(set(trace.chosen)) == steps  # no index chosen twice
        np.testing.assert_allclose(trace.distributions.sum(axis=1), 1.0, atol=1e-5)
        picked = trace.distributions[np.arange(steps), trace.chosen]
        assert trace.log_prob == pytest.approx(float(np.log(picked).sum()), abs=1e-4)
        assert trace.support_sizes == [int((d > 0).sum()) for d in trace.distributions]
        if end:
            assert trace.chosen[-1] == n and n not in trace.order and len(trace.order) >= 3
            assert all(d[n] == 0 for d in trace.distributions[:3])  # end closed until 3 chosen
        else:
            assert sorted(trace.order) == list(range(n))
        for i, d in enumerate(trace.distributions):  # chosen inputs get exactly zero later
            assert all(d[c] == 0 for c in trace.chosen[:i])
        assert [s["chosen"] for s in trace.steps()] == trace.chosen


def test_sparse_pointer_has_exact_zeros_and_smaller_support() -> None:
    model = _model(**TASK_CONFIGS["sort-sparsemax"])
    with torch.no_grad():
        model.pointer.v.mul_(50)  # sharp scores, so the sparse mapping leaves some out
    trace = greedy(model, _instances(model.config, 1, 12))[0]
    still_open = [12 - i for i in range(12)]  # masking alone leaves these many nonzero
    assert any(s < o for s, o in zip(trace.support_sizes, still_open, strict=True))
    open_zeros = [
        (i, j)
        for i, d in enumerate(trace.distributions)
        for j in range(12)
        if j not in trace.chosen[:i] and d[j] == 0.0
    ]
    assert open_zeros  # an input not chosen yet gets exactly zero


@pytest.mark.parametrize("task", ["hull", "tsp", "sort"])
def test_beam_is_at_least_as_probable_as_greedy(task: str) -> None:
    model = _model(**TASK_CONFIGS[task])
    for instance in _instances(model.config, 6, 8):
        g = greedy(model, instance[None])[0]
        b = beam_search(model, instance, width=4)
        assert b.log_prob >= g.log_prob - 1e-4
        assert b.distributions.shape == (len(b.chosen), g.distributions.shape[1])
        assert len(set(b.chosen)) == len(b.chosen)
        assert beam_search(model, instance, width=1).chosen == g.chosen


def test_beam_rescoring_picks_the_shortest_candidate_tour() -> None:
    model = _model()
    points = _instances(model.config, 1, 8)[0]
    candidates = beam_candidates(model, points, width=6)
    assert len(candidates) == 6
    assert [c.log_prob for c in candidates] == sorted(
        (c.log_prob for c in candidates), reverse=True
    )
    best = beam_search(model, points, width=6, rescore=lambda o: tsp.tour_length(points, o))
    assert tsp.tour_length(points, best.order) == min(
        tsp.tour_length(points, c.order) for c in candidates
    )


def test_decoding_leaves_the_step_mask_untouched(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each step gets a fresh mask: none is changed after the step has used it."""
    model = _model()
    seen: list[tuple[torch.Tensor, torch.Tensor]] = []
    original = PointerNet.step

    def recording_step(self, memory, dec_in, state, mask):  # type: ignore[no-untyped-def]
        seen.append((mask, mask.clone()))
        return original(self, memory, dec_in, state, mask)

    monkeypatch.setattr(PointerNet, "step", recording_step)
    greedy(model, _instances(model.config, 3, 7))
    beam_search(model, _instances(model.config, 1, 7)[0], width=3)
    assert len(seen) == 14
    assert all(torch.equal(mask, copy) for mask, copy in seen)


def test_teacher_forcing_masks_match_decoding() -> None:
    """The training scores equal the step-by-step scores along the same choices."""
    model = _model(**TASK_CONFIGS["hull"])
    points = np.random.default_rng(0).random((1, 10, 2))
    trace = greedy(model, points)[0]
    targets = torch.tensor([trace.chosen])
    with torch.no_grad():
        probs = torch.softmax(model(torch.tensor(points, dtype=torch.float32), targets), -1)
    np.testing.assert_allclose(probs[0].numpy(), trace.distributions, atol=1e-5)


@pytest.mark.parametrize("mapping", ["softmax", "entmax15", "sparsemax"])
def test_losses_are_finite_with_masks_and_padding(mapping: str) -> None:
    model = _model(**{**TASK_CONFIGS["hull"], "pointer": mapping})
    points, targets = hull.training_batch(np.random.default_rng(0), 6, 10)
    assert (targets == IGNORE_INDEX).any()  # hull sizes differ, so rows are padded
    targets = torch.tensor(targets)
    scores = model(torch.tensor(points, dtype=torch.float32), targets)
    loss = pointer_loss(mapping, scores, targets)
    loss.backward()
    assert torch.isfinite(loss)
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


def test_input_order_x_does_not_depend_on_the_given_order() -> None:
    model = _model(**TASK_CONFIGS["hull"])
    points = np.random.default_rng(3).random((12, 2))
    perm = np.random.default_rng(4).permutation(12)
    a = greedy(model, points[None])[0]
    b = greedy(model, points[perm][None])[0]
    assert [int(perm[i]) for i in b.order] == a.order


def test_the_attention_encoder_reads_a_set() -> None:
    """Self-attention has no reading order: relabelling the cities relabels the encodings and
    the greedy tour, and leaves the decoder's first state as it was."""
    model = _model(**TASK_CONFIGS["tsp-attention"])
    points = np.random.default_rng(5).random((10, 2))
    perm = np.random.default_rng(6).permutation(10)
    with torch.no_grad():
        a = model.encode(torch.tensor(points[None], dtype=torch.float32))
        b = model.encode(torch.tensor(points[perm][None], dtype=torch.float32))
    torch.testing.assert_close(b.enc[0], a.enc[0][perm], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(b.state[0], a.state[0], atol=1e-5, rtol=1e-5)
    first, second = greedy(model, points[None])[0], greedy(model, points[perm][None])[0]
    assert [int(perm[i]) for i in second.order] == first.order
    with pytest.raises(ValueError, match="reads a set"):
        Config(encoder="attention", input_order="x")


def test_either_direction_loss_scores_a_tour_and_its_reverse_as_one_answer() -> None:
    """The loss is −log(P(tour) + P(reversed)) per step: the same for either direction given,
    below the cross-entropy of each direction alone, and equal to a direct computation."""
    model = _model(**TASK_CONFIGS["tsp"])
    n = 8
    points = torch.tensor(_instances(model.config, 4, n), dtype=torch.float32)
    tours = torch.tensor(
        [tsp.canonical_tour(np.random.default_rng(i).permutation(n)) for i in range(4)]
    )
    reverse = torch.cat([tours[:, :1], tours[:, 1:].flip(1)], dim=1)
    assert not torch.equal(tours, reverse)
    with torch.no_grad():
        loss = either_direction_loss(model, points, tours)
        assert torch.allclose(loss, either_direction_loss(model, points, reverse))

        def log_p(targets: torch.Tensor) -> torch.Tensor:
            probs = torch.softmax(model(points, targets), -1).gather(2, targets[..., None])
            return probs[..., 0].log().sum(1)  # (B,)

        direct = -torch.logaddexp(log_p(tours), log_p(reverse)).mean() / n
        assert torch.allclose(loss, direct, atol=1e-5)
        for targets in (tours, reverse):
            assert loss < pointer_loss("softmax", model(points, targets), targets)


def test_sampled_tours_are_permutations_with_the_lengths_of_the_tsp_module() -> None:
    model = _model(**TASK_CONFIGS["tsp"])
    points = torch.tensor(_instances(model.config, 3, 7), dtype=torch.float32)
    torch.manual_seed(1)
    tours = sampled_tours(model, points, 5)
    assert tours.shape == (3, 5, 7)
    lengths = closed_tour_lengths(points, tours)
    for b in range(3):
        for k in range(5):
            order = tours[b, k].tolist()
            assert sorted(order) == list(range(7))
            expected = tsp.tour_length(points[b].double().numpy(), order)
            assert lengths[b, k].item() == pytest.approx(expected, rel=1e-5)


def test_reinforce_steps_shorten_the_sampled_tours() -> None:
    """A few REINFORCE steps on fixed instances lower the mean length of fresh samples."""
    model = _model(**TASK_CONFIGS["tsp"])
    points = torch.tensor(_instances(model.config, 8, 7), dtype=torch.float32)

    def mean_sampled_length() -> float:
        torch.manual_seed(123)
        return closed_tour_lengths(points, sampled_tours(model, points, 64)).mean().item()

    before = mean_sampled_length()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    torch.manual_seed(0)
    for _ in range(30):
        optimizer.zero_grad()
        tour_reinforce_loss(model, points, 8).backward()
        optimizer.step()
    assert mean_sampled_length() < 0.95 * before


def test_a_reinforce_recipe_draws_fresh_cities_and_needs_no_labels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """REINFORCE's reward is the tour's length, so its batches are fresh uniform cities at the
    recipe's n, reproducible from (seed, rank, step) and different across ranks and steps;
    no label file is read (there is none in this working directory)."""
    monkeypatch.chdir(tmp_path)
    recipe = get_recipe("pointer-tsp-attention-rl2")
    first = list(itertools.islice(recipe.batches(4, 7, 0, 0), 3))
    assert all(b.shape == (4, 20, 2) and b.dtype == torch.float32 for b in first)
    assert all(0 <= float(b.min()) and float(b.max()) < 1 for b in first)
    assert not torch.equal(first[0], first[1])
    again = next(recipe.batches(4, 7, 0, 1))  # a resumed run picks up at its step
    assert torch.equal(again, first[1])
    assert not torch.equal(next(recipe.batches(4, 7, 1, 0)), first[0])  # another rank
    assert "fresh cities" in recipe.data_description()["source"]
    torch.manual_seed(0)
    model = PointerNet(recipe.config)
    loss = recipe.loss(model, first[0])
    loss.backward()
    assert all(p.grad is not None for p in model.pointer.parameters())
