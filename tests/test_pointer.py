import itertools
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from models.checkpoints import CHECKPOINT_DIR, load_model, read_manifest
from models.entmax import entmax15, sparsemax
from models.pointer import (
    IGNORE_INDEX,
    Config,
    Memory,
    PointerNet,
    Trace,
    as_inputs,
    beam_candidates,
    beam_search,
    best_of,
    closed_tour_lengths,
    either_direction_loss,
    greedy,
    inverse_cdf,
    pointer_loss,
    pointer_mapping,
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


# ---- beam search's early stop and the sparse pointer's own mapping, on the shipped models ----
# Checked on a scripted toy model whose answer is known and on the shipped checkpoints.
# - Beam search stops once the best finished hypothesis beats every live one. Stopping when it
#   beats only the *worst* live one returns a worse answer; untrained models cannot show it
#   (their first finished hypothesis always wins), so a scripted model and the shipped hull
#   model do.
# - A sparse pointer must decode with its own mapping: a step whose support is smaller than the
#   inputs still open, with exact zeros, and distributions equal to entmax15 of the scores.


def shipped(name: str) -> PointerNet:
    if name not in read_manifest(CHECKPOINT_DIR):
        pytest.skip(f"{name} is not trained in this checkout")
    model, _ = load_model(name)
    return model


# ---- beam search: the early stop never changes the answer ----


class ScriptedPointer(PointerNet):
    """A pointer whose next distribution is looked up from the choices made so far.

    Position j is encoded as the one-hot vector e_j, so the decoder input names the previous
    choice; the decoder state carries the earlier ones (choice + 1 in slot t). Unlisted
    histories get equal scores. Input n is the end marker, open after one choice.
    """

    def __init__(self, n: int, table: dict[tuple[int, ...], dict[int, float]]) -> None:
        config = Config(hidden=n + 1, bidirectional=False, glimpse=False, end_position=True)
        config.min_before_end = 1
        super().__init__(config)
        self.n, self.table = n, table
        with torch.no_grad():
            self.go.zero_()

    def encode(self, inputs: torch.Tensor) -> Memory:
        eye = torch.eye(self.n + 1)[None]
        zeros = torch.zeros(1, 1, self.n + 1)
        return Memory(eye, eye, None, (zeros, zeros))

    def step(
        self, memory: Memory, dec_in: torch.Tensor, state: tuple, mask: torch.Tensor
    ) -> tuple[torch.Tensor, tuple]:
        h, c = state
        h = h.expand(1, dec_in.shape[0], -1).clone()
        scores = torch.zeros(mask.shape)
        for row in range(dec_in.shape[0]):
            history = [int(v) - 1 for v in h[0, row] if v > 0]
            if dec_in[row].any():
                history.append(int(dec_in[row].argmax()))
                h[0, row, len(history) - 1] = history[-1] + 1
            for position, p in self.table.get(tuple(history), {}).items():
                scores[row, position] = math.log(p)
        return scores.masked_fill(mask, -math.inf), (h, c.expand_as(h))


END = 3
# Greedy takes 0 then ends (0.5 × 0.6 = 0.30); the best output is 1, 0, end
# (0.4 × 0.9 × 0.95 = 0.342). With width 3, when [0, end] finishes the live hypotheses are
# [1, 0] (log 0.36, better than 0.30) and [0, 1] (log 0.15, worse): the search must go on.
TABLE = {
    (): {0: 0.5, 1: 0.4, 2: 0.1},
    (0,): {END: 0.6, 1: 0.3, 2: 0.1},
    (1,): {0: 0.9, 2: 0.05, END: 0.05},
    (1, 0): {END: 0.95, 2: 0.05},
    (0, 1): {END: 0.5, 2: 0.5},
}


def test_scripted_model_follows_its_table() -> None:
    model = ScriptedPointer(3, TABLE)
    trace = greedy(model, np.zeros((1, 3, 2)))[0]
    assert trace.chosen == [0, END]
    np.testing.assert_allclose(trace.distributions[1], [0, 0.3, 0.1, 0.6], rtol=1e-6)


def test_beam_goes_on_while_a_live_hypothesis_beats_the_best_finished_one() -> None:
    model = ScriptedPointer(3, TABLE)
    best = beam_search(model, np.zeros((3, 2)), width=3)
    assert best.chosen == [1, 0, END]
    assert best.log_prob == pytest.approx(math.log(0.4 * 0.9 * 0.95), abs=1e-6)
    finished = [c.chosen for c in beam_candidates(model, np.zeros((3, 2)), width=3)]
    assert finished[0] == [1, 0, END] and [0, END] in finished


def best_log_prob_without_early_stop(model: PointerNet, instance: np.ndarray, width: int) -> float:
    """The same beam (the `width` best expansions of the live hypotheses at every step, finished
    ones leave the beam) run until no hypothesis is left alive, one hypothesis at a time."""
    x = as_inputs(np.asarray(instance)[None], model.config.input_dim)
    n, end = x.shape[1], int(model.config.end_position)
    mapping = pointer_mapping(model.config.pointer)
    memory = model.encode(x)
    live = [(0.0, [], memory.state, model.go[None])]
    best = -math.inf
    with torch.inference_mode():
        while live:
            grown = []
            for log_prob, chosen, state, dec_in in live:
                mask = torch.zeros(1, n + end, dtype=torch.bool)
                mask[0, chosen] = True
                if end and len(chosen) < model.config.min_before_end:
                    mask[0, n] = True
                scores, next_state = model.step(memory, dec_in, state, mask)
                log_p = torch.log(mapping(scores))[0].double()
                grown += [
                    (log_prob + float(log_p[j]), chosen + [j], next_state)
                    for j in range(n + end)
                    if math.isfinite(float(log_p[j]))
                ]
            grown.sort(key=lambda g: -g[0])
            live = []
            for log_prob, chosen, state in grown[:width]:
                if (end and chosen[-1] == n) or (not end and len(chosen) == n):
                    best = max(best, log_prob)
                else:
                    live.append((log_prob, chosen, state, memory.enc[0, chosen[-1]][None]))
    return best


def test_reference_beam_agrees_on_the_scripted_model() -> None:
    model = ScriptedPointer(3, TABLE)
    reference = best_log_prob_without_early_stop(model, np.zeros((3, 2)), width=3)
    assert reference == pytest.approx(math.log(0.342), abs=1e-6)


def test_early_stop_never_changes_the_best_log_probability_of_the_shipped_hull_model() -> None:
    model = shipped("pointer-hull")
    rng = np.random.default_rng(19)
    for n in (8, 12):
        for points in rng.random((20, n, 2)):
            beam = beam_search(model, points, width=4)
            reference = best_log_prob_without_early_stop(model, points, width=4)
            assert beam.log_prob == pytest.approx(reference, abs=1e-4)


# ---- the sparse pointer decodes with its own mapping ----


def live_zero_steps(distributions: np.ndarray, chosen: list[int]) -> list[int]:
    """Steps where an input not chosen yet gets probability exactly 0."""
    n = distributions.shape[1]
    return [
        i
        for i, d in enumerate(distributions)
        if any(d[j] == 0 for j in range(n) if j not in chosen[:i])
    ]


def test_shipped_sparse_pointer_has_exact_zeros_among_the_open_inputs() -> None:
    model = shipped("pointer-sort-entmax15")
    values = np.random.default_rng(19).random((4, 10))
    for instance, trace in zip(values, greedy(model, values), strict=True):
        open_counts = [10 - i for i in range(10)]
        assert any(s < o for s, o in zip(trace.support_sizes, open_counts, strict=True))
        assert live_zero_steps(trace.distributions, trace.chosen)
        # the distributions are entmax15 of the model's scores, not softmax of them
        with torch.no_grad():
            scores = model(as_inputs(instance[None], 1), torch.tensor([trace.chosen]))[0]
        # (float32 scores from a batch of 4 and of 1 differ in the last bits: atol 1e-5, far
        # below the tenths that separate softmax from 1.5-entmax here)
        np.testing.assert_allclose(trace.distributions, entmax15(scores).numpy(), atol=1e-5)
        # the zeros are 1.5-entmax's, not an underflow: softmax of the same scores (float64)
        # keeps every open input above zero, though a trained model's gaps make some tiny
        open_zeros = (torch.tensor(trace.distributions) == 0) & torch.isfinite(scores)
        assert (torch.softmax(scores.double(), -1)[open_zeros] > 0).all()


@pytest.mark.parametrize("pointer", ["entmax15", "sparsemax"])
def test_toy_sparse_pointer_has_exact_zeros_among_the_open_inputs(pointer: str) -> None:
    torch.manual_seed(0)
    model = PointerNet(Config(input_dim=1, hidden=16, pointer=pointer))
    with torch.no_grad():
        model.pointer.v.mul_(100)  # scores a few units apart: far from softmax underflow
    instances = np.random.default_rng(12).random((3, 12))
    for instance, trace in zip(instances, greedy(model, instances), strict=True):
        assert live_zero_steps(trace.distributions, trace.chosen)
        with torch.no_grad():
            scores = model(as_inputs(instance[None], 1), torch.tensor([trace.chosen]))[0]
        mapping = {"entmax15": entmax15, "sparsemax": sparsemax}[pointer]
        expected = mapping(scores.double()).float().numpy()
        np.testing.assert_allclose(trace.distributions, expected, atol=1e-4)
        softmax = torch.softmax(scores.double(), -1).numpy()
        assert (softmax[np.isfinite(scores.numpy())] > 1e-30).all()  # softmax has no zeros here


# ---- the shipped models, pinned: any change to the network's arithmetic moves these ----

GOLDEN_INSTANCES = {  # np.random.default_rng(2026), in this order
    "pointer-hull": (3, 12, 2),
    "pointer-tsp": (3, 10, 2),
    "pointer-sort": (3, 40),  # 40 values: the models are sure of shorter lists (log p ≈ 0)
    "pointer-sort-entmax15": (3, 40),
    "pointer-tsp-attention": (3, 10, 2),
    "pointer-tsp-attention-rl": (3, 10, 2),  # left the tree; its draw keeps the next ones'
    "pointer-tsp-attention-rl2": (3, 10, 2),
}
ASCENDING = "ascending"  # the order that sorts the instance's values (np.argsort)
GOLDEN = {  # greedy orders, their log-probabilities, the teacher-forced loss of those choices
    "pointer-hull": (
        [[9, 11, 3, 5, 7, 2, 0], [11, 7, 4, 5, 3, 1, 10, 2], [10, 8, 5, 9, 7]],
        [-2.2038, -1.9933, -1.5164],
        0.248413,
    ),
    "pointer-tsp": (
        [
            [0, 1, 9, 5, 3, 6, 2, 4, 7, 8],
            [0, 1, 5, 9, 8, 4, 6, 3, 2, 7],
            [0, 1, 6, 5, 2, 3, 8, 7, 4, 9],
        ],
        [-0.0551, -1.4397, -1.3695],
        0.095473,
    ),
    "pointer-sort": (
        ASCENDING,
        [-0.0181, -0.0063, -0.0002],
        0.000205,
    ),
    "pointer-sort-entmax15": (
        ASCENDING,
        [0.0, -0.014, -0.2908],
        0.000896,
    ),
    "pointer-tsp-attention": (  # trained with either direction right: it may start anywhere
        [
            [3, 7, 0, 9, 2, 1, 8, 5, 6, 4],
            [8, 6, 4, 5, 0, 3, 1, 7, 2, 9],
            [5, 3, 4, 6, 7, 1, 9, 2, 0, 8],
        ],
        [-2.4015, -2.818, -2.4774],
        0.256561,
    ),
    "pointer-tsp-attention-rl2": (  # two more REINFORCE runs: surer still
        [
            [5, 4, 2, 7, 3, 6, 9, 8, 1, 0],
            [5, 0, 3, 2, 6, 8, 1, 4, 9, 7],
            [6, 1, 9, 5, 2, 7, 0, 8, 4, 3],
        ],
        [-0.0006, -0.0009, -0.0607],
        0.002074,
    ),
}


def test_shipped_models_decode_and_score_as_recorded() -> None:
    """The served checkpoints on fixed instances: greedy orders, log-probabilities and the
    teacher-forced loss (padded hull targets included). Recorded from these checkpoints; a
    retrained model needs new values (its sha256 changes in checkpoints/manifest.json)."""
    rng = np.random.default_rng(2026)
    instances = {name: rng.random(shape) for name, shape in GOLDEN_INSTANCES.items()}
    for name, (orders, log_probs, loss) in GOLDEN.items():
        if orders == ASCENDING:
            orders = [np.argsort(values).tolist() for values in instances[name]]
        model = shipped(name)
        traces = greedy(model, instances[name])
        assert [t.order for t in traces] == orders, name
        assert [t.log_prob for t in traces] == pytest.approx(log_probs, abs=2e-3), name
        longest = max(len(t.chosen) for t in traces)
        targets = torch.tensor(
            [t.chosen + [IGNORE_INDEX] * (longest - len(t.chosen)) for t in traces]
        )
        with torch.no_grad():
            scores = model(as_inputs(instances[name], model.config.input_dim), targets)
        recorded = pointer_loss(model.config.pointer, scores, targets)
        assert float(recorded) == pytest.approx(loss, rel=2e-3, abs=1e-5), name
        for trace in traces:
            steps = trace.steps()
            assert [s["chosen"] for s in steps] == trace.chosen
            assert [s["support_size"] for s in steps] == trace.support_sizes
            assert np.allclose([s["distribution"] for s in steps], trace.distributions)


def test_a_trace_with_mismatched_records_is_refused() -> None:
    trace = Trace(
        order=[0], chosen=[0, 1], distributions=np.eye(2)[:1], support_sizes=[1], log_prob=0.0
    )
    with pytest.raises(ValueError):
        trace.steps()


def test_fresh_parameters_follow_the_papers_initialisation() -> None:
    """Vinyals et al.: parameters uniform in [-0.08, 0.08] (the learned first decoder input
    and end vector); the attention vector v uniform in ±1/√hidden."""
    torch.manual_seed(0)
    model = PointerNet(Config(input_dim=2, hidden=256, end_position=True))
    for vector in (model.go, model.end):
        assert vector.abs().max() <= 0.08 and vector.min() < -0.06 and vector.max() > 0.06
    bound = 1 / math.sqrt(256)
    v = model.pointer.v
    assert v.abs().max() <= bound and v.min() < -0.8 * bound and v.max() > 0.8 * bound
    assert model.pointer.w_ref.bias is None


def test_config_errors_name_what_is_allowed() -> None:
    with pytest.raises(ValueError, match="pointer must be one of .*got 'relu'"):
        Config(input_dim=2, hidden=8, pointer="relu")
    with pytest.raises(ValueError, match="input_order must be 'given' or 'x', got 'y'"):
        Config(input_dim=2, hidden=8, input_order="y")


def test_as_inputs_adds_the_feature_axis_only_to_values() -> None:
    assert as_inputs(np.zeros((3, 4)), 1).shape == (3, 4, 1)
    assert as_inputs(np.zeros((3, 4, 1)), 1).shape == (3, 4, 1)
    assert as_inputs(np.zeros((3, 4, 2)), 2).shape == (3, 4, 2)


def test_beam_search_passes_the_budget_check_down() -> None:
    torch.manual_seed(0)
    model = PointerNet(Config(input_dim=2, hidden=16))
    calls = []
    beam_search(
        model, np.random.default_rng(0).random((6, 2)), width=3, check=lambda: calls.append(1)
    )
    assert calls

    def stop() -> None:
        raise TimeoutError("budget spent")

    with pytest.raises(TimeoutError):
        beam_search(model, np.random.default_rng(0).random((6, 2)), width=3, check=stop)


def test_inverse_cdf_draws_by_mass_and_never_a_zero() -> None:
    probs = torch.tensor([[0.3, 0.7, 0.0, 0.0], [1.0, 3.0, 0.0, 0.0]])  # the second not normalised
    # u = 1 is the rounding edge: the cumulative sum reaches the total at the last open position
    assert inverse_cdf(probs, torch.tensor([1.0, 1.0])).tolist() == [1, 1]
    assert inverse_cdf(probs, torch.tensor([0.29, 0.24])).tolist() == [0, 0]
    assert inverse_cdf(probs, torch.tensor([0.31, 0.26])).tolist() == [1, 1]  # 0.26 of 4 > 1


def test_best_of_prefers_the_more_probable_of_equally_good_answers() -> None:
    def trace(order: list[int], log_prob: float) -> Trace:
        return Trace(order, order, np.zeros((len(order), 3)), [3] * len(order), log_prob)

    reverse, forward = trace([0, 2, 1], -2.0), trace([0, 1, 2], -0.5)  # one tour, both ways
    best, running = best_of([reverse, forward, trace([1, 0, 2], -0.1)], lambda o: 1.0 + (o[0] == 1))
    assert best is forward
    assert running == [1.0, 1.0, 1.0]


def test_a_model_without_glimpse_and_its_config_round_trip() -> None:
    torch.manual_seed(0)
    model = PointerNet(Config(input_dim=1, hidden=8, glimpse=False))
    (trace,) = greedy(model, np.random.default_rng(0).random((1, 5)))
    assert sorted(trace.order) == list(range(5))
    assert np.allclose(trace.distributions.sum(axis=1), 1.0, atol=1e-5)
    assert model.config_dict()["glimpse"] is False
    assert PointerNet.from_config(model.config_dict()).config == model.config
