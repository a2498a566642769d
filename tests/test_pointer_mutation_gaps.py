"""Pointer decoding bugs the older tests let through, checked on a scripted toy model whose
answer is known and on the shipped checkpoints.

- Beam search stops once the best finished hypothesis beats every live one. Stopping when it
  beats only the *worst* live one returns a worse answer; untrained models cannot show it
  (their first finished hypothesis always wins), so a scripted model and the shipped hull
  model do.
- A sparse pointer must decode with its own mapping: a step whose support is smaller than the
  inputs still open, with exact zeros, and distributions equal to entmax15 of the scores.
"""

from __future__ import annotations

import math

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
    greedy,
    inverse_cdf,
    pointer_loss,
    pointer_mapping,
)


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
    "pointer-tsp-attention-rl": (3, 10, 2),
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
    "pointer-tsp-attention-rl": (  # its REINFORCE phase: surer, from any start city
        [
            [5, 2, 9, 7, 3, 6, 1, 0, 8, 4],
            [5, 4, 1, 3, 6, 8, 0, 9, 7, 2],
            [9, 8, 4, 5, 7, 6, 0, 3, 1, 2],
        ],
        [-0.5452, -1.0575, -1.0285],
        0.087706,
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
