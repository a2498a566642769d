"""The attention model of Kool, van Hoof and Welling (ICLR 2019), "Attention, Learn to Solve
Routing Problems!", for the planar TSP, readable top to bottom.

Encoder: a linear embedding of each city's coordinates, h⁽⁰⁾_i = W x_i + b, then N = 3 layers of

    ĥ_i = BN(h_i + MHA_i(h_1, …, h_n)),    h'_i = BN(ĥ_i + FF(ĥ_i))

(8 heads, d = 128, FF with one ReLU hidden layer of 512). No positional information enters, so
the embeddings are a function of the *set* of cities: listing them in another order permutes
the embeddings and changes nothing else. The graph embedding is their mean, h̄ = (1/n) Σ_i h_i.

Decoder, at step t, with π_1 the first and π_{t-1} the last city visited so far:

    context      h_(c) = [h̄ ; h_{π_1} ; h_{π_{t-1}}]       (learned v^f, v^l at t = 1)
    glimpse      q = W_Q h_(c),  one 8-head attention over the unvisited cities → h'_(c)
    compatibility u_j = C · tanh( (W_Q' h'_(c))ᵀ (W_K' h_j) / √d ),  C = 10,  −∞ if visited
    policy       p(π_t = j | s, π_<t) = softmax(u)_j

Keys and values depend only on the cities, so they are computed once per instance
(`precompute`) and every decoding step is a few small matrix products — the paper's trick that
makes a step O(n) instead of re-encoding.

Decoders: `decode(..., "greedy")`, `decode(..., "sample")`, and `symmetric`: greedy from every
start city over the 8 rotations/reflections of the unit square, keeping the shortest tour
(beyond the paper; the multi-start idea of POMO, Kwon et al. 2020).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import ClassVar

import numpy as np
import torch
from torch import nn

from models.pointer import MAX_SAMPLES, Trace

# (B, n) probabilities of the next city -> (B,) the cities drawn
Sampler = Callable[[torch.Tensor], torch.Tensor]


@dataclass
class Config:
    embed_dim: int = 128  # d
    heads: int = 8
    layers: int = 3  # N
    ff_hidden: int = 512
    tanh_clip: float = 10.0  # C
    # the policy is a softmax over the compatibilities: a dense pointer, as with α = 1
    alpha: ClassVar[float] = 1.0

    def __post_init__(self) -> None:
        if self.embed_dim % self.heads:
            raise ValueError(f"embed_dim {self.embed_dim} must be divisible by heads {self.heads}")

    def to_dict(self) -> dict:
        return asdict(self)


def _uniform_(weight: torch.Tensor, fan: int) -> None:
    """The reference implementation's init, U(−1/√fan, 1/√fan)."""
    bound = 1.0 / math.sqrt(fan)
    nn.init.uniform_(weight, -bound, bound)


def split_heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    """(B, n, d) -> (B, heads, n, d / heads)"""
    return x.view(*x.shape[:-1], heads, x.shape[-1] // heads).transpose(-3, -2)


class MultiHeadAttention(nn.Module):
    """MHA(q, h) = Σ_m W^O_m softmax(Q_m K_mᵀ / √d_k) V_m, with d_k = d / heads."""

    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads, self.d_k = heads, d // heads
        self.query, self.key, self.value = (nn.Linear(d, d, bias=False) for _ in range(3))
        self.out = nn.Linear(d, d, bias=False)
        for proj in (self.query, self.key, self.value):
            _uniform_(proj.weight, self.d_k)
        _uniform_(self.out.weight, d)

    def weights(self, h: torch.Tensor) -> torch.Tensor:
        """(B, heads, n, n): how much each city's head reads every city."""
        q, k = (split_heads(proj(h), self.heads) for proj in (self.query, self.key))
        return torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.d_k), dim=-1)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        v = split_heads(self.value(h), self.heads)
        heads = (self.weights(h) @ v).transpose(-3, -2).reshape(h.shape)  # (B, n, d)
        return self.out(heads)


class BatchNorm(nn.BatchNorm1d):
    """Batch norm over the feature axis of (B, n, d): every city of every instance is a sample."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x.reshape(-1, x.shape[-1])).view(x.shape)


class EncoderLayer(nn.Module):
    def __init__(self, config: Config) -> None:
        super().__init__()
        d = config.embed_dim
        self.attention = MultiHeadAttention(d, config.heads)
        self.norm1, self.norm2 = BatchNorm(d), BatchNorm(d)
        self.ff = nn.Sequential(
            nn.Linear(d, config.ff_hidden), nn.ReLU(), nn.Linear(config.ff_hidden, d)
        )

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        h = self.norm1(h + self.attention(h))
        return self.norm2(h + self.ff(h))


@dataclass
class Precomputed:
    """What the decoder needs from the encoder, computed once per instance; the keys are
    stored transposed, so that every rollout of an instance multiplies them in place."""

    embeddings: torch.Tensor  # (B, n, d)
    fixed_query: torch.Tensor  # (B, d): the graph embedding's part of the glimpse query
    glimpse_key_t: torch.Tensor  # (B, heads, d_k, n)
    glimpse_value: torch.Tensor  # (B, heads, n, d_k)
    logit_key_t: torch.Tensor  # (B, d, n)


@dataclass
class Decoded:
    tours: torch.Tensor  # (B, n) city indices
    lengths: torch.Tensor  # (B,) closed-tour lengths
    log_probs: torch.Tensor  # (B,) log p(tour); carries the gradient when sampled in training
    step_probs: torch.Tensor | None = None  # (B, n, n): the distribution each step chose from
    rollout: torch.Tensor | None = None  # symmetric: (B,) image · n + start city of the best


class AttentionModel(nn.Module):
    def __init__(self, config: Config | None = None) -> None:
        super().__init__()
        self.config = config = config or Config()
        d = config.embed_dim
        self.embed = nn.Linear(2, d)
        self.encoder = nn.ModuleList(EncoderLayer(config) for _ in range(config.layers))
        # v^f and v^l: stand-ins for the first and last city before any is chosen
        self.placeholder = nn.Parameter(torch.empty(2 * d).uniform_(-1, 1))
        self.project_graph = nn.Linear(d, d, bias=False)
        self.project_step = nn.Linear(2 * d, d, bias=False)  # [h_first; h_last] part of the query
        self.project_nodes = nn.Linear(d, 3 * d, bias=False)  # glimpse key, value; logit key
        self.project_glimpse = nn.Linear(d, d, bias=False)  # W^O of the glimpse heads

    @classmethod
    def from_config(cls, config: dict) -> AttentionModel:
        """The model a manifest entry's config describes (models.checkpoints.build_model)."""
        return cls(Config(**config))

    def encode(self, points: torch.Tensor) -> torch.Tensor:
        """Cities (B, n, 2) -> node embeddings (B, n, d)."""
        h = self.embed(points)
        for layer in self.encoder:
            h = layer(h)
        return h

    def encoder_attention(self, points: torch.Tensor) -> torch.Tensor:
        """(layers, B, heads, n, n): the attention weights of every encoder layer's heads."""
        h, found = self.embed(points), []
        for layer in self.encoder:
            found.append(layer.attention.weights(h))
            h = layer(h)
        return torch.stack(found)

    def precompute(self, embeddings: torch.Tensor) -> Precomputed:
        heads = self.config.heads
        glimpse_key, glimpse_value, logit_key = self.project_nodes(embeddings).chunk(3, dim=-1)
        return Precomputed(
            embeddings=embeddings,
            fixed_query=self.project_graph(embeddings.mean(dim=1)),
            glimpse_key_t=split_heads(glimpse_key, heads).transpose(-1, -2).contiguous(),
            glimpse_value=split_heads(glimpse_value, heads).contiguous(),
            logit_key_t=logit_key.transpose(-1, -2).contiguous(),
        )

    def step_log_probs(
        self,
        pre: Precomputed,
        first: torch.Tensor | None,
        last: torch.Tensor | None,
        visited: torch.Tensor,
    ) -> torch.Tensor:
        """log p(next city) (B·R, n) of R rollouts per instance, rollout-major within each of
        the B instances, given the first and last city so far (B·R,) and visited (B·R, n)."""
        batch, n, d = pre.embeddings.shape
        rows = visited.shape[0] // batch
        if first is None:
            step_context = self.placeholder.expand(batch * rows, 2 * d)
        else:
            instance = torch.arange(batch).repeat_interleave(rows)
            step_context = torch.cat(
                [pre.embeddings[instance, first], pre.embeddings[instance, last]], dim=-1
            )
        query = pre.fixed_query.repeat_interleave(rows, dim=0) + self.project_step(step_context)
        heads, d_k = pre.glimpse_key_t.shape[1], pre.glimpse_key_t.shape[2]
        q = query.view(batch, rows, heads, d_k).transpose(1, 2)  # (B, heads, R, d_k)
        compat = q @ pre.glimpse_key_t / math.sqrt(d_k)  # (B, heads, R, n)
        compat = compat.masked_fill(visited.view(batch, 1, rows, n), float("-inf"))
        glimpse = torch.softmax(compat, dim=-1) @ pre.glimpse_value  # (B, heads, R, d_k)
        glimpse = self.project_glimpse(glimpse.transpose(1, 2).reshape(batch, rows, d))
        logits = (glimpse @ pre.logit_key_t).view(batch * rows, n) / math.sqrt(d)
        logits = self.config.tanh_clip * torch.tanh(logits)
        return torch.log_softmax(logits.masked_fill(visited, float("-inf")), dim=-1)

    def decode(
        self,
        points: torch.Tensor,
        mode: str = "greedy",
        *,
        rollouts: int = 1,
        start: torch.Tensor | None = None,
        generator: torch.Generator | None = None,
        record: bool = False,
        sampler: Sampler | None = None,
        check: Callable[[], None] | None = None,
    ) -> Decoded:
        """Build `rollouts` tours per instance of `points` (B, n, 2), greedily or by sampling,
        all from one encoding of each instance; tours (B·rollouts, n), an instance's together.

        `start` (B·rollouts,) forces the first city; `sampler` replaces `torch.multinomial`
        when sampling; `check`, if given, is called before each step and raises to abandon the
        decode (a deadline, a client gone).
        """
        if mode not in ("greedy", "sample"):
            raise ValueError(f"mode must be 'greedy' or 'sample', got {mode!r}")
        pre = self.precompute(self.encode(points))
        batch, n, _ = pre.embeddings.shape
        visited = torch.zeros(batch * rollouts, n, dtype=torch.bool)
        first = last = None
        chosen, log_prob, probs = [], points.new_zeros(batch * rollouts), []
        for t in range(n):
            if check is not None:
                check()
            step = self.step_log_probs(pre, first, last, visited)  # (B, n)
            if t == 0 and start is not None:
                city = start
            elif mode == "greedy":
                city = step.argmax(dim=-1)
            elif sampler is not None:
                city = sampler(step.exp())
            else:
                city = torch.multinomial(step.exp(), 1, generator=generator).squeeze(-1)
            log_prob = log_prob + step.gather(1, city[:, None]).squeeze(-1)
            if record:
                probs.append(step.exp().detach())
            visited = visited.scatter(1, city[:, None], True)
            first = city if first is None else first
            last = city
            chosen.append(city)
        tours = torch.stack(chosen, dim=1)
        step_probs = torch.stack(probs, dim=1) if record else None
        lengths = tour_lengths(points.repeat_interleave(rollouts, dim=0), tours)
        return Decoded(tours, lengths, log_prob, step_probs)


def tour_lengths(points: torch.Tensor, tours: torch.Tensor) -> torch.Tensor:
    """Closed-tour lengths (B,) of tours (B, n) through points (B, n, 2)."""
    ordered = points.gather(1, tours[..., None].expand(*tours.shape, 2))  # (B, n, 2)
    return (ordered - ordered.roll(-1, dims=1)).norm(dim=-1).sum(dim=1)


def square_symmetries(points: torch.Tensor) -> torch.Tensor:
    """The 8 images (8, B, n, 2) of cities in the unit square under its rotations and
    reflections: optionally swap x and y, then optionally mirror each axis. All preserve
    distances, so a tour has the same length in every image; the identity comes first."""
    images = []
    for swap in (False, True):
        p = points.flip(-1) if swap else points
        for mirror_x in (False, True):
            for mirror_y in (False, True):
                x = 1 - p[..., 0] if mirror_x else p[..., 0]
                y = 1 - p[..., 1] if mirror_y else p[..., 1]
                images.append(torch.stack([x, y], dim=-1))
    return torch.stack(images)


def symmetric(
    model: AttentionModel, points: torch.Tensor, check: Callable[[], None] | None = None
) -> Decoded:
    """Greedy from every start city in each of the 8 images of the instance; the shortest tour.

    8·n greedy rollouts per instance, n per image from one encoding of it; lengths are
    measured on the original cities (the images keep distances). `log_probs` is that of the
    chosen rollout, with its forced first city; `rollout` is its image · n + start city.
    """
    batch, n, _ = points.shape
    images = square_symmetries(points).transpose(0, 1).reshape(batch * 8, n, 2)  # b, then image
    starts = torch.arange(n).repeat(batch * 8)  # each image's rollouts start at 0, 1, …, n − 1
    out = model.decode(images, rollouts=n, start=starts, check=check)
    tours = out.tours.view(batch, 8 * n, n)
    log_probs = out.log_probs.view(batch, 8 * n)
    lengths = tour_lengths(points.repeat_interleave(8 * n, dim=0), tours.reshape(-1, n))
    best = lengths.view(batch, 8 * n).argmin(dim=1)  # (B,)
    pick = torch.arange(batch)
    chosen = lengths.view(batch, 8 * n)[pick, best]
    return Decoded(tours[pick, best], chosen, log_probs[pick, best], rollout=best)


# ---- one reader's instance: the pointer family's Trace (models/pointer.py) ----


def as_trace(tour: torch.Tensor, probs: torch.Tensor, log_prob: float) -> Trace:
    """One decoded tour (n,) with the distributions (n, n) its steps chose from."""
    distributions = probs.numpy().astype(np.float32)
    return Trace(
        order=tour.tolist(),
        chosen=tour.tolist(),
        distributions=distributions,
        support_sizes=(distributions > 0).sum(axis=1).tolist(),
        log_prob=float(log_prob),
    )


def cities_tensor(cities: np.ndarray) -> torch.Tensor:
    return torch.as_tensor(np.asarray(cities), dtype=torch.float32)[None]


@torch.inference_mode()
def greedy_trace(
    model: AttentionModel, cities: np.ndarray, check: Callable[[], None] | None = None
) -> Trace:
    out = model.eval().decode(cities_tensor(cities), record=True, check=check)
    return as_trace(out.tours[0], out.step_probs[0], out.log_probs[0])


@torch.inference_mode()
def encoder_attention(model: AttentionModel, cities: np.ndarray) -> np.ndarray:
    """(layers, heads, n, n) for one instance: row i of a head is what city i reads."""
    return model.eval().encoder_attention(cities_tensor(cities))[:, 0].numpy()


@dataclass
class Rollout:
    tour: list[int]
    length: float
    log_prob: float


@dataclass
class ReinforceView:
    """What one REINFORCE step would do with k tours sampled for one instance: each tour's
    advantage over the greedy-rollout baseline, L(π) − b(s), is the weight its log-probability
    gradient gets, negated (a shorter tour than the baseline is made more likely)."""

    baseline: Rollout  # the greedy tour of the policy (here the baseline policy itself)
    samples: list[Rollout]

    def advantages(self) -> list[float]:
        return [s.length - self.baseline.length for s in self.samples]


@torch.inference_mode()
def reinforce_view(
    model: AttentionModel,
    cities: np.ndarray,
    count: int,
    seed: int = 0,
    check: Callable[[], None] | None = None,
) -> ReinforceView:
    """k sampled tours and the greedy rollout for one instance (the same draws as
    `sample_traces` with this seed)."""
    points = cities_tensor(cities)
    greedy = model.eval().decode(points, check=check)
    draws = model.decode(
        points, "sample", rollouts=count, sampler=prefix_sampler(count, seed), check=check
    )
    rollouts = [
        Rollout(t.tolist(), float(length), float(lp))
        for t, length, lp in zip(draws.tours, draws.lengths, draws.log_probs, strict=True)
    ]
    baseline = Rollout(
        greedy.tours[0].tolist(), float(greedy.lengths[0]), float(greedy.log_probs[0])
    )
    return ReinforceView(baseline, rollouts)


def prefix_sampler(count: int, seed: int) -> Sampler:
    """Inverse-CDF draws where sample i reads the i-th of MAX_SAMPLES uniforms drawn at each
    step, so a draw of k is the first k samples of a larger draw with the same seed (as the
    Pointer Network's `models.pointer.sample`). A visited city has probability exactly zero
    and is never drawn."""
    generator = torch.Generator().manual_seed(seed)

    def draw(probs: torch.Tensor) -> torch.Tensor:
        uniforms = torch.rand(MAX_SAMPLES, generator=generator)[:count]
        cdf = probs.cumsum(dim=-1)
        city = torch.searchsorted(cdf, (uniforms * cdf[:, -1])[:, None], right=True)[:, 0]
        city = city.clamp(max=probs.shape[-1] - 1)
        return torch.where(probs.gather(1, city[:, None])[:, 0] > 0, city, probs.argmax(-1))

    return draw


@torch.inference_mode()
def sample_traces(
    model: AttentionModel,
    cities: np.ndarray,
    count: int,
    seed: int = 0,
    check: Callable[[], None] | None = None,
) -> list[Trace]:
    """`count` tours for one instance, drawn step by step from the policy, in one batch."""
    if not 1 <= count <= MAX_SAMPLES:
        raise ValueError(f"Draw between 1 and {MAX_SAMPLES} samples; got {count}.")
    sampler = prefix_sampler(count, seed)
    points = cities_tensor(cities)
    out = model.eval().decode(
        points, "sample", rollouts=count, record=True, sampler=sampler, check=check
    )
    return [
        as_trace(t, p, lp)
        for t, p, lp in zip(out.tours, out.step_probs, out.log_probs, strict=True)
    ]


@torch.inference_mode()
def symmetric_trace(
    model: AttentionModel, cities: np.ndarray, check: Callable[[], None] | None = None
) -> Trace:
    """`symmetric`'s tour, with the distributions of the rollout that found it: greedy from
    its start city in its image of the square (the same city indices as the reader's)."""
    points = cities_tensor(cities)
    image, start = divmod(int(symmetric(model.eval(), points, check=check).rollout[0]), len(cities))
    replay = square_symmetries(points)[image]
    out = model.decode(replay, start=torch.tensor([start]), record=True, check=check)
    return as_trace(out.tours[0], out.step_probs[0], out.log_probs[0])
