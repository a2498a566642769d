"""Pointer Network (Vinyals, Fortunato and Jaitly, 2015), readable top to bottom.

An LSTM encoder reads the inputs (2-D points or 1-D values); an LSTM decoder emits, at each
step i, a distribution over the input positions through additive attention used as a pointer:

    u_j^i = vᵀ tanh(W₁ e_j + W₂ d_i),    p(C_i | C_<i, P) = mapping(u^i)

where `mapping` is softmax (the paper), 1.5-entmax or sparsemax (Peters et al., 2019), so a
sparse pointer can be compared with the dense one. Optional glimpse (Bello et al., 2016): one
attention read over the encoder states replaces d_i as the pointer's query, or is added to it
(`glimpse_residual`). Two options that make geometric tasks learn much faster on a small
budget: `embedding_skip` adds each input's embedding to its encoder state, and `input_order="x"`
lets the encoder read the points sorted by x (Vinyals et al., 2016, "Order Matters").

Positions already chosen are masked (score −∞) with a fresh mask tensor at every step. The hull
task adds a learned "end" encoder vector at index n; pointing at it ends the output, and it is
allowed only once `min_before_end` inputs have been chosen.

Training uses teacher forcing: the decoder inputs are known, so every step is computed in one
batched pass (`forward`). Decoding (`greedy`, `beam_search`) runs step by step under
`torch.inference_mode()` and returns a `Trace` holding the distributions it chose from.
"""

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IGNORE_INDEX = -100
# The pointer mapping by name (as checkpoints store it) and as α-entmax's α, the one knob the
# API and the seq2seq family speak: 1 softmax, 1.5 1.5-entmax, 2 sparsemax.
POINTER_ALPHAS = {"softmax": 1.0, "entmax15": 1.5, "sparsemax": 2.0}
POINTER_MAPPINGS = tuple(POINTER_ALPHAS)


@dataclass
class Config:
    input_dim: int = 2  # 2 for points, 1 for values
    hidden: int = 128
    bidirectional: bool = True  # the inputs are a set: let every encoding see all of them
    glimpse: bool = True
    # add the glimpse read to the decoder state instead of replacing it, so the pointer's
    # query keeps the decoder state while the (initially uniform) glimpse learns to focus
    glimpse_residual: bool = False
    # add the input embedding to the encoder outputs: the pointer then sees each input's
    # position directly, not only through the LSTM
    embedding_skip: bool = False
    end_position: bool = False  # hull: a learned end-of-output position at index n
    min_before_end: int = 3
    pointer: str = "softmax"  # softmax | entmax15 | sparsemax
    input_order: str = "given"  # "x": the encoder reads points sorted by x (see encode)
    # "attention": self-attention layers instead of the LSTM (Kool et al. 2019): every input's
    # encoding is computed from all the others at once, with no reading order to learn around
    encoder: str = "lstm"
    encoder_layers: int = 3  # attention encoder only
    heads: int = 8  # attention encoder only

    def __post_init__(self) -> None:
        if self.pointer not in POINTER_MAPPINGS:
            raise ValueError(f"pointer must be one of {POINTER_MAPPINGS}, got {self.pointer!r}")
        if self.input_order not in ("given", "x"):
            raise ValueError(f"input_order must be 'given' or 'x', got {self.input_order!r}")
        if self.encoder not in ("lstm", "attention"):
            raise ValueError(f"encoder must be 'lstm' or 'attention', got {self.encoder!r}")
        if self.encoder == "attention" and self.input_order != "given":
            raise ValueError("the attention encoder reads a set: input_order must be 'given'")

    @property
    def alpha(self) -> float:
        """The pointer mapping's α (1 softmax, 1.5 1.5-entmax, 2 sparsemax)."""
        return POINTER_ALPHAS[self.pointer]


def pointer_mapping(name: str) -> Callable[[torch.Tensor], torch.Tensor]:
    """Scores (..., positions) -> probabilities; −∞ scores get exactly zero."""
    if name == "softmax":
        return lambda scores: torch.softmax(scores, dim=-1)
    from models import entmax

    return {"entmax15": entmax.entmax15, "sparsemax": entmax.sparsemax}[name]


def pointer_loss(name: str, scores: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean per-step loss matching the mapping: cross-entropy or the Fenchel–Young loss."""
    scores, targets = scores.reshape(-1, scores.shape[-1]), targets.reshape(-1)
    if name == "softmax":
        return F.cross_entropy(scores, targets, ignore_index=IGNORE_INDEX)
    from models import entmax

    loss = {"entmax15": entmax.entmax15_loss, "sparsemax": entmax.sparsemax_loss}[name]
    return loss(scores, targets, ignore_index=IGNORE_INDEX, reduction="mean")


def tour_log_probs(model: nn.Module, inputs: torch.Tensor, tours: torch.Tensor) -> torch.Tensor:
    """Teacher-forced log-probability (B,) of each whole output sequence (B, n) of a softmax
    pointer."""
    scores = model(inputs, tours)  # (B, n, N)
    return -F.cross_entropy(scores.transpose(1, 2), tours, reduction="none").sum(dim=1)


def either_direction_loss(
    model: nn.Module, inputs: torch.Tensor, targets: torch.Tensor
) -> torch.Tensor:
    """−log(P(tour) + P(reversed tour)), per decoder step, for a softmax pointer on tours that
    start at a fixed city (B, n): a cycle read backwards is the same answer, so the model may
    put its mass on either direction instead of learning which one the canonical form picks.

    With cities relabelled at random, the canonical direction (towards the smaller-indexed
    neighbour of city 0) is arbitrary; under cross-entropy that one choice cost the TSP model
    about a fifth of its loss per tour. Both directions go through the model in one batch.
    """
    reverse = torch.cat([targets[:, :1], targets[:, 1:].flip(1)], dim=1)
    both = torch.cat([targets, reverse])
    log_p = tour_log_probs(model, torch.cat([inputs, inputs]), both).view(2, -1)  # (dir, B)
    return -torch.logsumexp(log_p, dim=0).mean() / targets.shape[1]


@torch.no_grad()
def sampled_tours(model: nn.Module, inputs: torch.Tensor, samples: int) -> torch.Tensor:
    """`samples` tours (B, samples, n) per instance of cities (B, n, 2), each drawn step by
    step from a softmax pointer's distribution (training's batched counterpart of `sample`)."""
    batch, n, _ = inputs.shape
    x = inputs.repeat_interleave(samples, dim=0)
    memory = model.encode(x)
    state, dec_in = memory.state, model.go.expand(len(x), -1)
    mask = model.initial_mask(len(x), n)
    rows = torch.arange(len(x))
    chosen = []
    for _ in range(n):
        scores, state = model.step(memory, dec_in, state, mask)
        choice = torch.multinomial(torch.softmax(scores, dim=-1), 1)[:, 0]
        chosen.append(choice)
        mask = mask.scatter(1, choice[:, None], True)
        dec_in = memory.enc[rows, choice]
    return torch.stack(chosen, dim=1).view(batch, samples, n)


def closed_tour_lengths(inputs: torch.Tensor, tours: torch.Tensor) -> torch.Tensor:
    """Lengths (B, k) of the closed tours (B, k, n) through the cities (B, n, 2)."""
    k = tours.shape[1]
    cities = inputs[:, None].expand(-1, k, -1, -1).gather(2, tours[..., None].expand(-1, -1, -1, 2))
    return (cities - cities.roll(-1, dims=2)).norm(dim=-1).sum(dim=-1)


def tour_reinforce_loss(model: nn.Module, inputs: torch.Tensor, samples: int) -> torch.Tensor:
    """REINFORCE on tour length for a softmax pointer: draw `samples` tours per instance and
    push up the log-probability of each in proportion to how much shorter it is than the mean
    of the instance's other samples (the baseline; Kool et al., 2019, "Buy 4 REINFORCE
    samples"), relative to the mean length. Its gradient is that of the expected tour length,
    which the cross-entropy on optimal tours only approximates."""
    module = getattr(model, "module", model)  # sampling needs the model's steps, not DDP's call
    batch, n, _ = inputs.shape
    tours = sampled_tours(module, inputs, samples)  # (B, k, n)
    lengths = closed_tour_lengths(inputs, tours)
    baseline = (lengths.sum(dim=1, keepdim=True) - lengths) / (samples - 1)
    advantage = ((lengths - baseline) / lengths.mean()).view(-1)
    log_p = tour_log_probs(model, inputs.repeat_interleave(samples, dim=0), tours.view(-1, n))
    return (advantage * log_p).mean() / n


class AdditiveAttention(nn.Module):
    """u_j = vᵀ tanh(W_ref e_j + W_q q) for every query and every position."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.w_ref = nn.Linear(hidden, hidden, bias=False)
        self.w_query = nn.Linear(hidden, hidden)
        self.v = nn.Parameter(torch.empty(hidden).uniform_(-1, 1) / math.sqrt(hidden))

    def scores(self, ref: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        """ref (B, N, H) already through w_ref; query (B, T, H) -> scores (B, T, N)."""
        # tanh(z) = 2·sigmoid(2z) − 1, so vᵀtanh(z) = 2·vᵀsigmoid(2z) − Σv: the same scores
        # (to float rounding) in three passes over (B, T, N, H) instead of three plus a tanh
        # that on this CPU build is about ten times slower than sigmoid (measured: 5.5 vs
        # 0.55 ms on 128 × 51 × 128 floats, one thread); it dominated decoding time.
        q2 = 2 * self.w_query(query)
        z = torch.add(q2[:, :, None, :], ref[:, None, :, :], alpha=2).sigmoid_()
        return 2 * (z @ self.v) - self.v.sum()


@dataclass
class Memory:
    """What decoding needs from the encoder."""

    enc: torch.Tensor  # (B, N, H); N = n + 1 with the end position
    ref_pointer: torch.Tensor  # (B, N, H)
    ref_glimpse: torch.Tensor | None  # (B, N, H)
    state: tuple[torch.Tensor, torch.Tensor]  # decoder (h, c), each (1, B, H)


class PointerNet(nn.Module):
    def __init__(self, config: Config) -> None:
        super().__init__()
        self.config = config
        h = config.hidden
        self.embed = nn.Linear(config.input_dim, h)
        if config.encoder == "attention":
            layer = nn.TransformerEncoderLayer(
                h, config.heads, 4 * h, dropout=0.0, batch_first=True, norm_first=True
            )
            self.encoder = nn.TransformerEncoder(
                layer, config.encoder_layers, norm=nn.LayerNorm(h), enable_nested_tensor=False
            )
            self.initial_h = nn.Linear(h, h)  # the decoder's first state, from the mean encoding
            self.initial_c = nn.Linear(h, h)
        else:
            self.encoder = nn.LSTM(h, h, batch_first=True, bidirectional=config.bidirectional)
        if config.encoder == "lstm" and config.bidirectional:
            self.merge_outputs = nn.Linear(2 * h, h)
            self.merge_h = nn.Linear(2 * h, h)
            self.merge_c = nn.Linear(2 * h, h)
        self.decoder = nn.LSTM(h, h, batch_first=True)
        self.go = nn.Parameter(torch.empty(h).uniform_(-0.08, 0.08))  # first decoder input
        if config.end_position:
            self.end = nn.Parameter(torch.empty(h).uniform_(-0.08, 0.08))
        self.pointer = AdditiveAttention(h)
        if config.glimpse:
            self.glimpse = AdditiveAttention(h)

    def encode(self, inputs: torch.Tensor) -> Memory:
        """inputs (B, n, input_dim) -> encoder memory and the decoder's initial state.

        With input_order "x" the LSTM reads the points sorted by their first coordinate, and
        its states are put back in input order, so pointing, masks and targets still refer to
        input indices. The output does not depend on the order the reader gave the points in.
        """
        if self.config.input_order == "x":
            perm = inputs[..., 0].argsort(dim=1)  # (B, n)
            inputs = inputs.gather(1, perm[..., None].expand_as(inputs))
        embedded = self.embed(inputs)  # (B, n, H)
        if self.config.encoder == "attention":
            out = self.encoder(embedded)  # (B, n, H)
            mean = out.mean(dim=1)
            return self._memory(
                out, embedded, self.initial_h(mean)[None], self.initial_c(mean)[None]
            )
        out, (h, c) = self.encoder(embedded)  # out (B, n, H or 2H); h, c (dirs, B, H)
        if self.config.input_order == "x":
            back = perm.argsort(dim=1)[..., None]
            out = out.gather(1, back.expand_as(out))  # (B, n, H or 2H), in input order again
            embedded = embedded.gather(1, back.expand_as(embedded))
        if self.config.bidirectional:
            out = self.merge_outputs(out)
            h = self.merge_h(torch.cat([h[0], h[1]], dim=-1))[None]  # (1, B, H)
            c = self.merge_c(torch.cat([c[0], c[1]], dim=-1))[None]
        return self._memory(out, embedded, h, c)

    def _memory(
        self, out: torch.Tensor, embedded: torch.Tensor, h: torch.Tensor, c: torch.Tensor
    ) -> Memory:
        """The encodings (B, n, H) with the skip and end position added, and the references
        the two attentions read."""
        if self.config.embedding_skip:
            out = out + embedded
        if self.config.end_position:
            out = torch.cat([out, self.end.expand(out.shape[0], 1, -1)], dim=1)  # (B, n+1, H)
        ref_glimpse = self.glimpse.w_ref(out) if self.config.glimpse else None
        return Memory(out, self.pointer.w_ref(out), ref_glimpse, (h.contiguous(), c.contiguous()))

    def point(self, memory: Memory, dec: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Decoder states (B, T, H) and mask (B, T, N) (True = not allowed) -> scores (B, T, N)."""
        query = dec
        if self.config.glimpse:
            g = self.glimpse.scores(memory.ref_glimpse, dec).masked_fill(mask, -math.inf)
            read = torch.softmax(g, dim=-1) @ memory.ref_glimpse  # (B, T, H)
            query = dec + read if self.config.glimpse_residual else read
        return self.pointer.scores(memory.ref_pointer, query).masked_fill(mask, -math.inf)

    def initial_mask(self, batch: int, n: int) -> torch.Tensor:
        """(B, N) mask before any choice: only the end position (if any) is closed."""
        mask = torch.zeros(batch, n + int(self.config.end_position), dtype=torch.bool)
        if self.config.end_position:
            mask[:, n] = True
        return mask

    def forward(self, inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Teacher-forced scores (B, T, N) for targets (B, T) padded with IGNORE_INDEX."""
        batch, n, _ = inputs.shape
        memory = self.encode(inputs)
        valid = targets != IGNORE_INDEX  # (B, T)
        safe = targets.masked_fill(~valid, 0)
        # decoder input at step t is the encoding of the position chosen at step t-1
        chosen_enc = memory.enc.gather(1, safe[..., None].expand(-1, -1, memory.enc.shape[-1]))
        dec_in = torch.cat([self.go.expand(batch, 1, -1), chosen_enc[:, :-1]], dim=1)
        dec, _ = self.decoder(dec_in, memory.state)  # (B, T, H)
        positions = memory.enc.shape[1]
        picked = F.one_hot(safe, positions).bool() & valid[..., None]  # (B, T, N)
        mask = (picked.cumsum(dim=1) - picked.long()) > 0  # chosen at an earlier step
        if self.config.end_position:
            too_early = torch.arange(targets.shape[1]) < self.config.min_before_end
            mask = mask | (too_early[None, :, None] & (torch.arange(positions) == n))
        mask = mask & valid[..., None]  # padded steps: nothing masked, so no all −∞ row
        return self.point(memory, dec, mask)

    def step(
        self, memory: Memory, dec_in: torch.Tensor, state: tuple, mask: torch.Tensor
    ) -> tuple[torch.Tensor, tuple]:
        """One decoding step: dec_in (B, H), mask (B, N) -> scores (B, N), new state."""
        dec, state = self.decoder(dec_in[:, None], state)
        return self.point(memory, dec, mask[:, None])[:, 0], state

    @classmethod
    def from_config(cls, config: dict) -> "PointerNet":
        return cls(Config(**config))

    def config_dict(self) -> dict:
        return asdict(self.config)


@dataclass
class Trace:
    """What one decoding did, captured as it ran.

    `distributions[i]` is the distribution the choice at step i was made from (over the n
    inputs, plus the end position at index n for the hull); `chosen[i]` the index taken
    (the end marker included); `order` the chosen inputs without the end marker.
    """

    order: list[int]
    chosen: list[int]
    distributions: np.ndarray  # (steps, N) float32
    support_sizes: list[int]
    log_prob: float

    def steps(self) -> list[dict]:
        return [
            {"distribution": d.tolist(), "chosen": c, "support_size": s}
            for d, c, s in zip(self.distributions, self.chosen, self.support_sizes, strict=True)
        ]


def as_inputs(instances: np.ndarray | torch.Tensor, input_dim: int) -> torch.Tensor:
    """(B, n, d) or (B, n) for values -> float32 tensor (B, n, input_dim)."""
    x = torch.as_tensor(np.asarray(instances), dtype=torch.float32)
    return x[..., None] if input_dim == 1 and x.dim() == 2 else x


def _end_allowed(model: PointerNet, mask: torch.Tensor, steps_done: int, n: int) -> torch.Tensor:
    """A new mask with the end position opened once enough inputs have been chosen."""
    if not model.config.end_position or steps_done != model.config.min_before_end:
        return mask
    return mask & (torch.arange(mask.shape[1]) != n)


@torch.inference_mode()
def greedy(
    model: PointerNet,
    instances: np.ndarray | torch.Tensor,
    check: Callable[[], None] | None = None,
) -> list[Trace]:
    """Greedy decoding of a batch (B, n, d); one Trace per instance. `check`, if given, is
    called before each step and raises to abandon the decode (a deadline, a client gone)."""
    model.eval()
    x = as_inputs(instances, model.config.input_dim)
    batch, n, _ = x.shape
    mapping = pointer_mapping(model.config.pointer)
    memory = model.encode(x)
    state, dec_in = memory.state, model.go.expand(batch, -1)
    mask = model.initial_mask(batch, n)
    rows = torch.arange(batch)
    finished = torch.zeros(batch, dtype=torch.bool)
    probs_seen, chosen_seen = [], []
    for t in range(n + int(model.config.end_position)):
        if check is not None:
            check()
        scores, state = model.step(memory, dec_in, state, mask)
        probs = mapping(scores)  # (B, N)
        choice = scores.argmax(dim=-1)  # same as argmax of probs, without ties at zero
        probs_seen.append(probs)
        chosen_seen.append(choice)
        if model.config.end_position:
            finished = finished | (choice == n)
            if bool(finished.all()):
                break
        # scatter returns a new tensor; finished rows keep theirs so no row is all −∞
        mask = torch.where(finished[:, None], mask, mask.scatter(1, choice[:, None], True))
        mask = _end_allowed(model, mask, t + 1, n)
        dec_in = memory.enc[rows, choice]
    probs_all = torch.stack(probs_seen, dim=1)  # (B, steps, N)
    chosen_all = torch.stack(chosen_seen, dim=1)  # (B, steps)
    traces = []
    for b in range(batch):
        chosen = chosen_all[b].tolist()
        if model.config.end_position and n in chosen:
            chosen = chosen[: chosen.index(n) + 1]
        traces.append(_trace(probs_all[b, : len(chosen)], chosen, n))
    return traces


def _trace(probs: torch.Tensor, chosen: list[int], n: int) -> Trace:
    """Trace from the distributions (steps, N) actually chosen from."""
    picked = probs[torch.arange(len(chosen)), torch.tensor(chosen)]
    return Trace(
        order=[c for c in chosen if c != n],
        chosen=chosen,
        distributions=probs.float().numpy().copy(),
        support_sizes=(probs > 0).sum(dim=-1).tolist(),
        log_prob=float(torch.log(picked).sum()),
    )


@torch.inference_mode()
def beam_candidates(
    model: PointerNet,
    instance: np.ndarray | torch.Tensor,
    width: int = 8,
    check: Callable[[], None] | None = None,
) -> list[Trace]:
    """Beam search over valid outputs for one instance (n, d); hypotheses form one batch.

    Returns every finished hypothesis, highest log-probability first. Without an end position
    all hypotheses finish together after n steps; with one (hull), search stops once the best
    finished hypothesis beats every live one, since log-probabilities only fall. `check`, if
    given, is called before each step and raises to abandon the search.
    """
    model.eval()
    x = as_inputs(np.asarray(instance)[None], model.config.input_dim)
    n = x.shape[1]
    end = model.config.end_position
    mapping = pointer_mapping(model.config.pointer)
    memory = model.encode(x)
    state, dec_in = memory.state, model.go[None]
    mask = model.initial_mask(1, n)
    alive_score = torch.zeros(1)
    alive_chosen = torch.zeros(1, 0, dtype=torch.long)
    alive_probs = torch.zeros(1, 0, mask.shape[1])
    finished: list[tuple[float, list[int], torch.Tensor]] = []
    for t in range(n + int(end)):
        if check is not None:
            check()
        k = alive_score.shape[0]
        beam_memory = Memory(
            memory.enc.expand(k, -1, -1),
            memory.ref_pointer.expand(k, -1, -1),
            None if memory.ref_glimpse is None else memory.ref_glimpse.expand(k, -1, -1),
            memory.state,
        )
        scores, state = model.step(beam_memory, dec_in, state, mask)
        probs = mapping(scores)  # (k, N)
        total = (alive_score[:, None] + torch.log(probs)).flatten()  # (k * N,)
        count = min(width, int(torch.isfinite(total).sum()))
        top, flat = total.topk(count)
        parent, choice = flat // probs.shape[1], flat % probs.shape[1]
        chosen = torch.cat([alive_chosen[parent], choice[:, None]], dim=1)
        history = torch.cat([alive_probs[parent], probs[parent][:, None]], dim=1)
        done = (choice == n) if end else torch.full((count,), t == n - 1)
        for i in torch.nonzero(done).flatten().tolist():
            finished.append((float(top[i]), chosen[i].tolist(), history[i]))
        keep = ~done
        if not bool(keep.any()):
            break
        if max((f[0] for f in finished), default=-math.inf) >= float(top[keep].max()):
            break
        parent, choice = parent[keep], choice[keep]
        alive_score, alive_chosen, alive_probs = top[keep], chosen[keep], history[keep]
        state = (state[0][:, parent], state[1][:, parent])
        mask = mask[parent].scatter(1, choice[:, None], True)  # a new tensor per step
        mask = _end_allowed(model, mask, t + 1, n)
        dec_in = memory.enc[0, choice]
    finished.sort(key=lambda f: -f[0])
    return [_trace(history, chosen, n) for _, chosen, history in finished]


def beam_search(
    model: PointerNet,
    instance: np.ndarray | torch.Tensor,
    width: int = 8,
    rescore: Callable[[list[int]], float] | None = None,
    check: Callable[[], None] | None = None,
) -> Trace:
    """The most probable finished beam hypothesis, or with `rescore` (e.g. tour length) the
    finished hypothesis with the lowest rescore value. `check` as in `beam_candidates`."""
    candidates = beam_candidates(model, instance, width, check)
    if rescore is None:
        return candidates[0]
    return min(candidates, key=lambda trace: rescore(trace.order))


MAX_SAMPLES = 256


@torch.inference_mode()
def sample(
    model: PointerNet,
    instance: np.ndarray | torch.Tensor,
    count: int,
    seed: int = 0,
    check: Callable[[], None] | None = None,
) -> list[Trace]:
    """`count` outputs for one instance (n, d), each drawn step by step from the pointer's
    distribution, all in one batch; the same seed gives the same samples.

    A masked position has probability exactly zero, so every sample is a permutation (for the
    hull: distinct inputs, then the end marker). Sample i reads the i-th of MAX_SAMPLES
    uniforms drawn at each step, so a draw of k is the first k samples of a larger draw with
    the same seed: asking for more samples only adds to them. `check`, if given, is called
    before each step and raises to abandon the decode.
    """
    if not 1 <= count <= MAX_SAMPLES:
        raise ValueError(f"Draw between 1 and {MAX_SAMPLES} samples; got {count}.")
    model.eval()
    x = as_inputs(np.asarray(instance)[None], model.config.input_dim)
    n = x.shape[1]
    end = model.config.end_position
    mapping = pointer_mapping(model.config.pointer)
    generator = torch.Generator().manual_seed(seed)
    one = model.encode(x)
    memory = Memory(
        one.enc.expand(count, -1, -1),
        one.ref_pointer.expand(count, -1, -1),
        None if one.ref_glimpse is None else one.ref_glimpse.expand(count, -1, -1),
        (one.state[0].expand(-1, count, -1), one.state[1].expand(-1, count, -1)),
    )
    state, dec_in = memory.state, model.go.expand(count, -1)
    mask = model.initial_mask(count, n)
    finished = torch.zeros(count, dtype=torch.bool)
    probs_seen, chosen_seen = [], []
    for t in range(n + int(end)):
        if check is not None:
            check()
        scores, state = model.step(memory, dec_in, state, mask)
        probs = mapping(scores)  # (count, N)
        choice = inverse_cdf(probs, torch.rand(MAX_SAMPLES, generator=generator)[:count])
        probs_seen.append(probs)
        chosen_seen.append(choice)
        if end:
            finished = finished | (choice == n)
            if bool(finished.all()):
                break
        mask = torch.where(finished[:, None], mask, mask.scatter(1, choice[:, None], True))
        mask = _end_allowed(model, mask, t + 1, n)
        dec_in = one.enc[0, choice]
    probs_all = torch.stack(probs_seen, dim=1)  # (count, steps, N)
    chosen_all = torch.stack(chosen_seen, dim=1).tolist()  # count lists of steps
    traces = []
    for b, chosen in enumerate(chosen_all):
        if end and n in chosen:
            chosen = chosen[: chosen.index(n) + 1]
        traces.append(_trace(probs_all[b, : len(chosen)], chosen, n))
    return traces


def inverse_cdf(probs: torch.Tensor, uniforms: torch.Tensor) -> torch.Tensor:
    """One index per row of probs (rows, N), drawn with one uniform in [0, 1) per row: the
    first position whose cumulative probability exceeds it. A zero-probability position never
    raises the cumulative sum, so it is never drawn."""
    cdf = probs.cumsum(dim=-1)
    choice = (cdf <= uniforms[:, None] * cdf[:, -1:]).sum(dim=-1)
    last_open = (probs > 0).cumsum(dim=-1).argmax(dim=-1)  # where rounding could push past
    return torch.minimum(choice, last_open)


def best_of(traces: list[Trace], cost: Callable[[list[int]], float]) -> tuple[Trace, list[float]]:
    """The trace with the lowest cost (the most probable among equals), and the running best
    cost over the first 1, 2, …, k traces."""
    costs = [cost(trace.order) for trace in traces]
    best = min(range(len(traces)), key=lambda i: (costs[i], -traces[i].log_prob))
    return traces[best], np.minimum.accumulate(costs).tolist()
