r"""α-entmax, sparsemax and their Fenchel–Young losses, exact, in plain PyTorch.

α-entmax (Peters, Niculae & Martins 2019, eq. 9) maps scores $z \in \mathbb{R}^d$ to

$$\alpha\text{-entmax}(z) = \operatorname*{argmax}_{p \in \Delta^d} p^\top z + H^T_\alpha(p),
\qquad H^T_\alpha(p) = \frac{1}{\alpha(\alpha-1)} \sum_j \left(p_j - p_j^\alpha\right),$$

whose solution is a thresholded power (their eq. 10):

$$p_i = \left[(\alpha-1) z_i - \tau\right]_+^{1/(\alpha-1)},
\qquad \tau \text{ such that } \sum_i p_i = 1.$$

Convention for τ, used everywhere in this module: τ is the threshold on the *scaled* scores
$\tilde z = (\alpha-1) z$, exactly as written above. For sparsemax (α = 2) this is the familiar
$p = [z - \tau]_+$; for 1.5-entmax it is $p = [z/2 - \tau]_+^2$; for softmax (α = 1), where the
formula degenerates, τ is the log-partition $\log \sum_j e^{z_j}$ so that $p = e^{z - \tau}$.
The support is $\{i : p_i > 0\} = \{i : \tilde z_i > \tau\}$.

α = 1 is softmax, α = 2 is sparsemax (Martins & Astudillo 2016); every α > 1 gives sparse
outputs. Scores equal to -inf (masks) get probability exactly 0.

Two implementations of the same maths: this module's torch code is the readable reference and
runs wherever the compiled kernels cannot (no numba, a GPU tensor, a per-row or learned α);
`models/entmax_kernels.py` holds numba kernels that the public functions use on CPU tensors,
float32 or float64, with one α for every row. `set_backend("torch")` turns them off.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.autograd import Function

try:
    from models import entmax_kernels as _kernels
except ImportError:  # numba missing: the torch path does everything
    _kernels = None

__all__ = [
    "entmax",
    "entmax15",
    "entmax15_loss",
    "entmax_loss",
    "entmax_with_tau",
    "set_backend",
    "sparsemax",
    "sparsemax_loss",
    "warm_up",
]

_NEWTON_MAX_ITERS = 200
_NEWTON_BOUND_ITERS = 3  # steps on the levels that only need a lower bound


# ---------------------------------------------------------------------------------------------
# Layout helpers: every solver below works on a 2-D (rows, d) tensor, reducing over the last dim.


def _is_last(x: Tensor, dim: int) -> bool:
    return dim in (-1, x.dim() - 1)


def _to_rows(x: Tensor, dim: int) -> Tensor:
    """(..., d at `dim`, ...) -> (rows, d); a view when `dim` is already last."""
    if _is_last(x, dim):
        return x.reshape(-1, x.shape[-1])
    return x.movedim(dim, -1).reshape(-1, x.shape[dim])


def _from_rows(rows: Tensor, like: Tensor, dim: int) -> Tensor:
    if _is_last(like, dim):
        return rows.reshape(like.shape)
    return rows.reshape(like.movedim(dim, -1).shape).movedim(-1, dim)


_ALL_MASKED = (
    "entmax: a row has every score equal to -inf, so no probability distribution exists; "
    "leave at least one entry unmasked in every row"
)


def _check_finite_rows(row_max: Tensor) -> None:
    if row_max.numel() and float(row_max.min()) == -torch.inf:
        raise ValueError(_ALL_MASKED)


# ---------------------------------------------------------------------------------------------
# Exact thresholds on a small candidate set. `v` is (rows, k) float64 in units of
# z̃ = (α-1)(z - max z), so every row's maximum is 0 and τ ∈ [-1, 0); -inf pads unused slots.
# `lower` is a lower bound on τ (None: the universal one, max z̃ - 1 = -1); the sort-based
# solvers do not need it. Each solver returns τ as (rows, 1); with `final` False, any lower
# bound on τ will do (it only prunes the next level), which lets Newton stop early.
#
# On this CPU a call on rows of a few dozen entries costs a few µs per tensor operation,
# whatever the size, so the solvers keep operations few: no python loops over rows, no
# synchronising reads except Newton's stopping test, masked compares rather than indexing.


_SORT_CHUNK = 8192  # entries per torch.sort call: larger CPU sorts cost ~3× more per entry


def _sort_descending(v: Tensor) -> Tensor:
    """Rows of v sorted in decreasing order, sorted a block of rows at a time (see _SORT_CHUNK)."""
    rows_per_chunk = max(1, _SORT_CHUNK // max(1, v.shape[-1]))
    if v.shape[0] <= rows_per_chunk:
        return torch.sort(v, dim=-1, descending=True).values
    out = torch.empty_like(v)
    for chunk, dest in zip(v.split(rows_per_chunk), out.split(rows_per_chunk), strict=True):
        indices = torch.empty_like(dest, dtype=torch.long)
        torch.sort(chunk, dim=-1, descending=True, out=(dest, indices))
    return out


def _inverse_ranks(k: int, dtype: torch.dtype) -> Tensor:
    """(1, 1/2, ..., 1/k), cached: it is made on every call otherwise."""
    key = (k, dtype)
    if key not in _INVERSE_RANKS:
        _INVERSE_RANKS[key] = 1 / torch.arange(1, k + 1, dtype=dtype)
    return _INVERSE_RANKS[key]


_INVERSE_RANKS: dict[tuple[int, torch.dtype], Tensor] = {}


def _sparsemax_tau(v: Tensor, lower: Tensor | None = None, final: bool = True) -> Tensor:
    """Sparsemax threshold of the rows of v (rows, k); see `_sparsemax_tau_sorted`."""
    return _sparsemax_tau_sorted(_sort_descending(v))


def _sparsemax_tau_sorted(srt: Tensor) -> Tensor:
    r"""Sort-based sparsemax threshold (Martins & Astudillo 2016, Algorithm 1).

    With $z_{(1)} \ge \dots \ge z_{(k)}$ (the rows of `srt`), each prefix gives the threshold
    $\tau_j = (\sum_{i \le j} z_{(i)} - 1) / j$ that would make it the support, and
    $\tau = \tau_s$ for the support size $s = \max\{j : z_{(j)} > \tau_j\}$. Every prefix sums to
    1 at its own $\tau_j$, so $\sum_i [z_i - \tau_j]_+ \ge 1$ and $\tau_j \le \tau$: the threshold
    is simply $\tau = \max_j \tau_j$, with no search for s.
    """
    inv_rank = _inverse_ranks(srt.shape[-1], srt.dtype)
    return ((srt.cumsum(-1) - 1) * inv_rank).amax(-1, keepdim=True)


def _entmax15_tau(v: Tensor, lower: Tensor | None = None, final: bool = True) -> Tensor:
    """1.5-entmax threshold of the rows of v (rows, k); see `_entmax15_tau_sorted`."""
    return _entmax15_tau_sorted(_sort_descending(v))


def _entmax15_tau_sorted(srt: Tensor) -> Tensor:
    r"""Sort-based exact 1.5-entmax threshold (Peters et al. 2019, Algorithm 2).

    For each prefix of size j of the sorted $\tilde z$ (the rows of `srt`), the threshold that
    would make it the support solves $\sum_{i \le j} (\tilde z_{(i)} - \tau)^2 = 1$:
    $\tau_j = M_j - \sqrt{1/j - S_j}$, with the prefix mean $M_j$ and variance
    $S_j = \overline{\tilde z^2}_j - M_j^2$. A prefix is consistent when
    $\tau_j \le \tilde z_{(j)}$; then $\sum_i [\tilde z_i - \tau_j]_+^2 \ge 1$, so
    $\tau_j \le \tau$, with equality at the support size: $\tau$ is the largest consistent
    $\tau_j$. `srt` should be relative to the row maximum, against cancellation in $S_j$.
    """
    inv_rank = _inverse_ranks(srt.shape[-1], srt.dtype)
    mean = srt.cumsum(-1) * inv_rank
    mean_sq = (srt * srt).cumsum(-1) * inv_rank
    # -inf padding makes NaN here (inf - inf); NaN fails the consistency test below
    tau = mean - torch.addcmul(inv_rank - mean_sq, mean, mean).clamp_min_(0).sqrt_()
    return torch.where(tau <= srt, tau, -torch.inf).amax(-1, keepdim=True)


def _newton_tau(
    v: Tensor, alpha: Tensor | float, lower: Tensor | None = None, final: bool = True
) -> Tensor:
    r"""α-entmax threshold by Newton's method on $h(\tau) = \lVert[\tilde z - \tau]_+\rVert_\beta$.

    With $\beta = 1/(\alpha-1)$, the normalisation $\sum_i [\tilde z_i - \tau]_+^\beta = 1$ reads
    $h(\tau) = 1$, and $h'(\tau) = -h^{1-\beta} \sum_i [\tilde z_i - \tau]_+^{\beta-1}$. For α ≤ 2
    the β-norm is convex and decreasing in τ, so Newton steps from a lower bound climb
    monotonically to the root and every iterate is itself a lower bound: not `final`, a few
    steps are enough. For α > 2 see `_bracketed_newton_tau`. `alpha` is a float or (rows, 1).
    """
    if not isinstance(alpha, float):
        convex = bool((alpha <= 2).all())
    else:
        convex = alpha <= 2
    if not convex:
        return _bracketed_newton_tau(v, torch.as_tensor(alpha, dtype=v.dtype), lower, final)
    beta = 1 / (alpha - 1)
    tau = v.new_full((v.shape[0], 1), -1.0) if lower is None else lower
    # u^(β-1) is 0 at u = 0 for α < 2; at α = 2 (u^0 = 1) only entries with u > 0 count
    smooth = alpha < 2 if isinstance(alpha, float) else bool((alpha < 2).all())
    tol = 8 * torch.finfo(v.dtype).eps
    for _ in range(_NEWTON_MAX_ITERS if final else _NEWTON_BOUND_ITERS):
        u = (v - tau).clamp_min_(0)  # (rows, k)
        u_pow_m1 = u.pow(beta - 1) if smooth else torch.where(u > 0, u.pow(beta - 1), 0)
        s = (u_pow_m1 * u).sum(-1, keepdim=True)  # Σ u^β
        h = s.pow(alpha - 1)
        step = (h - 1) * s / (h * u_pow_m1.sum(-1, keepdim=True))  # (h - 1) / -h'
        tau = tau + step
        if float(step.abs().max()) <= tol:
            break
    return tau


def _bracketed_newton_tau(
    v: Tensor, alpha: Tensor, lower: Tensor | None = None, final: bool = True
) -> Tensor:
    r"""Newton on $h(\tau) = 1$ for α > 2, safeguarded by bisection.

    For β < 1 the β-norm is no longer convex, so a Newton step can overshoot; the bracket
    $[\max \tilde z - 1,\ \max \tilde z - k^{1-\alpha}]$, narrowed at every step, catches those
    steps and replaces them by bisection. Not `final`: a few steps, then the lower end of the
    bracket.
    """
    alpha = alpha.expand(v.shape[0], 1)
    beta = 1 / (alpha - 1)
    lo = torch.full_like(alpha, -1.0) if lower is None else lower
    hi = -torch.pow(torch.full_like(alpha, 1.0 / v.shape[-1]), alpha - 1)
    tau = lo.clone()
    tol = 8 * torch.finfo(v.dtype).eps
    for _ in range(_NEWTON_MAX_ITERS if final else _NEWTON_BOUND_ITERS):
        u = (v - tau).clamp_min(0)  # (rows, k)
        u_pow_m1 = torch.where(u > 0, u.pow(beta - 1), 0)
        s = torch.linalg.vecdot(u_pow_m1, u).unsqueeze(-1)  # Σ u^β
        h = s.pow(alpha - 1)
        slope = s.pow(alpha - 2) * u_pow_m1.sum(-1, keepdim=True)  # -dh/dτ
        above = h >= 1
        lo = torch.where(above, tau, lo)
        hi = torch.where(above, hi, tau)
        step = tau + (h - 1) / slope
        inside = (step > lo) & (step < hi)
        new_tau = torch.where(inside, step, (lo + hi) / 2)
        done = ((h - 1).abs() <= tol) | (hi - lo <= tol)
        if bool(done.all()):
            break
        tau = torch.where(done, tau, new_tau)
    return tau if final else lo


# ---------------------------------------------------------------------------------------------
# Finding the support without sorting a row.
#
# Any subset of the scores has a threshold no larger than the full row's (fewer terms in
# Σ[z̃ - τ]_+^β need a lower τ to reach 1). So the threshold of the block maxima is a lower
# bound on τ, and only entries above it can be in the support: blocks whose maximum is below
# it are skipped whole. Pooling recursively (8 or 16 entries per block) until a row has at
# most _LEAF entries, each level hands the next a tight bound and a few candidates, and the exact
# solvers above run on (rows, ~support size) instead of (rows, d). Only the max-pooling of
# the first level reads the whole input. Rows of at most _DENSE_MAX entries (attention over a
# sentence, pointers over a few dozen inputs) skip all this: one sort of the whole row at
# α = 2 or 1.5 (`_sorted_forward`), Newton on the whole row otherwise.

_LEAF = 32
_DENSE_MAX = 64
_Solver = Callable[[Tensor, Tensor | None, bool], Tensor]  # (v, lower, final) -> τ
_DENSE_FRACTION = 0.5  # above this share of candidate blocks, scan the whole row
_MARGIN = 1e-9  # slack on the lower bound, in units of z̃, against rounding


def _pool(z: Tensor) -> tuple[Tensor, Tensor]:
    """Max-pool (rows, n) over strided blocks so that about _LEAF blocks remain.

    Returns the scores padded with -inf to a whole number of blocks, and the block maxima
    (rows, g); block j holds the entries j, j+g, j+2g, ...
    """
    n = z.shape[-1]
    # Entries per block, a power of two (blocks are pooled by halving): 16 on long rows, where
    # fewer levels matter more than gathering a few more candidates, else 8, or fewer to stop
    # near _LEAF.
    factor = min(16 if n > 2048 else 8, 1 << (-(-n // _LEAF) - 1).bit_length())
    g = -(-n // factor)
    padded = F.pad(z, (0, g * factor - n), value=-torch.inf) if g * factor > n else z
    pooled = padded
    while pooled.shape[-1] > g:  # halving keeps j, j+g, j+2g, ... in the same column
        half = pooled.shape[-1] // 2
        pooled = torch.maximum(pooled[:, :half], pooled[:, half:])
    return padded, pooled


def _pack(keep: Tensor, tensors: list[Tensor], fills: list[float]) -> tuple[list[Tensor], Tensor]:
    """Move each row's kept entries to the front: (rows, n) -> (rows, max kept), order kept.

    Returns the packed tensors (padded with `fills`) and the number kept per row (rows, 1).
    """
    counts = keep.sum(-1, keepdim=True)
    width = int(counts.max())
    slot = torch.where(keep, keep.cumsum(-1) - 1, width)  # dropped entries go to a spare slot
    packed = []
    for tensor, fill in zip(tensors, fills, strict=True):
        buffer = torch.full((keep.shape[0], width + 1), fill, dtype=tensor.dtype)
        packed.append(buffer.scatter_(1, slot, tensor)[:, :width])
    return packed, counts


def _candidates(
    padded: Tensor, block_max: Tensor, row_max: Tensor, scale: Tensor | float, lower: Tensor
) -> tuple[Tensor, Tensor]:
    """Entries above the lower bound, packed as (rows, k) values in z̃ units and their columns."""
    rows, g = block_max.shape
    factor = padded.shape[-1] // g
    # The bound in units of z and in the scores' dtype, rounded down so no candidate is lost.
    threshold = (row_max + (lower - _MARGIN) / scale).to(padded.dtype)  # (rows, 1)
    threshold = torch.nextafter(threshold, threshold.new_tensor(-torch.inf))
    open_blocks = block_max > threshold  # (rows, g)
    if int(open_blocks.sum()) > _DENSE_FRACTION * open_blocks.numel():
        # Most blocks hold a candidate (a wide support): scan every entry instead.
        cols = torch.arange(padded.shape[-1]).expand(rows, -1)
        vals = padded
    else:
        (blocks,), counts = _pack(open_blocks, [torch.arange(g).expand(rows, g)], [0])
        cols = (blocks.unsqueeze(-1) + g * torch.arange(factor)).flatten(1)  # (rows, blocks*factor)
        vals = padded.gather(1, cols)
        unused = torch.arange(blocks.shape[-1]) >= counts  # (rows, blocks)
        vals.masked_fill_(unused.repeat_interleave(factor, dim=1), -torch.inf)
    (vals, cols), _ = _pack(vals > threshold, [vals, cols], [-torch.inf, 0])
    return (vals.to(torch.float64) - row_max) * scale, cols


def _solve(
    z: Tensor, scale: Tensor | float, solver: _Solver
) -> tuple[Tensor, Tensor, Tensor | None, Tensor]:
    """Threshold of every row of z (rows, n).

    Returns τ (rows, 1) and the candidates v (rows, k) it was solved on (both float64, in units
    of z̃ relative to the row maximum), their columns in z (None: all n columns, in order) and
    the row maximum (float64).
    """
    levels = [z]
    pooled = []
    while levels[-1].shape[-1] > (_DENSE_MAX if not pooled else _LEAF):
        padded, block_max = _pool(levels[-1])
        pooled.append(padded)
        levels.append(block_max)
    row_max = levels[-1].amax(-1, keepdim=True).to(torch.float64)  # (rows, 1)
    _check_finite_rows(row_max)
    v = (levels[-1].to(torch.float64) - row_max) * scale
    columns = None
    tau = solver(v, None, not pooled)
    for level, (padded, block_max) in enumerate(zip(pooled[::-1], levels[:0:-1], strict=True)):
        v, columns = _candidates(padded, block_max, row_max, scale, tau)
        tau = solver(v, tau, level == len(pooled) - 1)
    return tau, v, columns, row_max


def _unpack(values: Tensor, columns: Tensor | None, like: Tensor) -> Tensor:
    """Dense (rows, n) tensor with `values` at `columns` and 0 elsewhere."""
    values = values.to(like.dtype)
    if columns is None:
        return values
    # Padding slots hold 0 at column 0: adding them leaves the true entry there intact.
    return torch.zeros_like(like).scatter_add_(1, columns, values)


@dataclass
class _Sparse:
    """The nonzero part of a batch of distributions: p_v (rows, k) at `columns` (None: all)."""

    p_v: Tensor
    columns: Tensor | None

    def gather(self, dense: Tensor) -> Tensor:
        dense = dense.to(self.p_v.dtype)
        return dense if self.columns is None else dense.gather(1, self.columns)


def _sparse_forward(
    z: Tensor, alpha: Tensor | float, newton: bool = False
) -> tuple[Tensor, Tensor, _Sparse]:
    """(p, τ, sparse p) for α > 1 on (rows, d); α a float or a (rows, 1) tensor.

    A float α of 2 or 1.5 takes the sort-based solver unless `newton` asks for the general one.
    """
    if z.shape[0] == 0:
        empty = torch.zeros_like(z)
        return empty, z.new_zeros((0, 1)), _Sparse(empty.to(torch.float64), None)
    if not newton and alpha in (1.5, 2.0) and z.shape[-1] <= _DENSE_MAX:
        return _sorted_forward(z, alpha)
    z = z.contiguous()
    # z̃ = scale * z; a python float where possible keeps the small ops cheap
    scale = alpha - 1 if isinstance(alpha, float) else alpha.to(torch.float64) - 1
    if isinstance(alpha, float) and alpha == 2 and not newton:
        tau, v, columns, row_max = _solve(z, scale, _sparsemax_tau)
        p_v = (v - tau).clamp_min(0)
    elif isinstance(alpha, float) and alpha == 1.5 and not newton:
        tau, v, columns, row_max = _solve(z, scale, _entmax15_tau)
        p_v = (v - tau).clamp_min(0).square()
    else:
        tau, v, columns, row_max = _solve(
            z, scale, lambda v, lower, final: _newton_tau(v, scale + 1, lower, final)
        )
        p_v = (v - tau).clamp_min(0).pow(1 / scale)
        p_v = p_v / p_v.sum(-1, keepdim=True)
    tau_abs = (tau + scale * row_max).to(z.dtype)
    return _unpack(p_v, columns, z), tau_abs, _Sparse(p_v, columns)


def _sorted_forward(z: Tensor, alpha: float) -> tuple[Tensor, Tensor, _Sparse]:
    """`_sparse_forward` for short rows at α = 2 or 1.5: sort each whole row once.

    On rows of a few dozen scores the cost is the number of tensor operations, not their size,
    so this path keeps them few.
    """
    z_tilde = z.to(torch.float64)  # (rows, d)
    if alpha == 1.5:
        z_tilde = z_tilde * 0.5
    srt = _sort_descending(z_tilde)
    row_max = srt[:, :1]
    _check_finite_rows(row_max)
    if alpha == 2:
        # (Σ z - 1) / j loses nothing to cancellation: no need to centre the scores
        tau = _sparsemax_tau_sorted(srt)
        p_v = (z_tilde - tau).clamp_min_(0)
    else:
        tau = _entmax15_tau_sorted(srt - row_max) + row_max
        p_v = (z_tilde - tau).clamp_min_(0).square_()
    return p_v.to(z.dtype), tau.to(z.dtype), _Sparse(p_v, None)


# ---------------------------------------------------------------------------------------------
# Forward passes on (rows, d): each returns (p, τ) with τ of shape (rows, 1).


def _softmax_rows(z: Tensor) -> tuple[Tensor, Tensor]:
    tau = torch.logsumexp(z, -1, keepdim=True)
    _check_finite_rows(tau)
    return torch.exp(z - tau), tau


def _mapping_rows(z: Tensor, alpha: float) -> tuple[Tensor, Tensor]:
    if alpha == 1:
        return _softmax_rows(z)
    p, tau, _ = _sparse_forward(z, alpha)
    return p, tau


# ---------------------------------------------------------------------------------------------
# Autograd functions on (rows, d); outputs (p, τ) with τ not differentiable. The backward
# passes work on the packed support only and scatter the result.


def _forward_keeping_support(ctx, z: Tensor, alpha: float) -> tuple[Tensor, Tensor]:
    """(p, τ) for a closed-form Function's forward; its backward reads the support."""
    p, tau, sparse = _sparse_forward(z, alpha)
    ctx.sparse = sparse
    ctx.mark_non_differentiable(tau)
    return p, tau


class _SparsemaxFunction(Function):
    r"""Sparsemax with its closed-form Jacobian (Martins & Astudillo 2016, eq. 11).

    $$J = \operatorname{diag}(s) - \frac{s s^\top}{|S|}, \qquad s_i = [p_i > 0],$$
    so $\bar z = s \odot (\bar p - \tfrac{1}{|S|}\sum_{j \in S} \bar p_j)$.
    """

    @staticmethod
    def forward(ctx, z: Tensor) -> tuple[Tensor, Tensor]:
        return _forward_keeping_support(ctx, z, 2.0)

    @staticmethod
    def backward(ctx, grad_p: Tensor, grad_tau: Tensor) -> Tensor:
        sparse = ctx.sparse
        support = (sparse.p_v > 0).to(sparse.p_v.dtype)
        g = sparse.gather(grad_p) * support
        g -= support * (g.sum(-1, keepdim=True) / support.sum(-1, keepdim=True))
        return _unpack(g, sparse.columns, grad_p)


def _entmax_vjp(gppr: Tensor, grad_p: Tensor) -> Tensor:
    r"""$J \bar p$ for the symmetric $J = \operatorname{diag}(g) - g g^\top / \sum_j g_j$."""
    gx = gppr * grad_p
    q = gx.sum(-1, keepdim=True) / gppr.sum(-1, keepdim=True)
    return gx - q * gppr


class _Entmax15Function(Function):
    r"""Exact 1.5-entmax with its closed-form Jacobian (Peters et al. 2019, Prop. 2).

    With $g_i = \sqrt{p_i}$ (zero outside the support),
    $$J = \operatorname{diag}(g) - \frac{g g^\top}{\sum_j g_j}.$$
    """

    @staticmethod
    def forward(ctx, z: Tensor) -> tuple[Tensor, Tensor]:
        return _forward_keeping_support(ctx, z, 1.5)

    @staticmethod
    def backward(ctx, grad_p: Tensor, grad_tau: Tensor) -> Tensor:
        sparse = ctx.sparse
        grad_v = _entmax_vjp(sparse.p_v.sqrt(), sparse.gather(grad_p))
        return _unpack(grad_v, sparse.columns, grad_p)


class _EntmaxAlphaFunction(Function):
    r"""α-entmax for α > 1 (one α per row), differentiable in the scores and in α.

    Scores (Peters et al. 2019, Prop. 2): with $g_i = p_i^{2-\alpha}$ on the support,
    $J = \operatorname{diag}(g) - g g^\top / \sum_j g_j$.

    α (Correia, Niculae & Martins 2019, Prop. 1): with $\tilde p = g / \sum_j g_j$ and the
    Shannon terms $s_i = p_i \log p_i$ (0 off the support),
    $$\frac{\partial p_i}{\partial \alpha} = \frac{p_i - \tilde p_i}{(\alpha-1)^2}
      - \frac{s_i - \tilde p_i \sum_j s_j}{\alpha - 1}.$$
    """

    @staticmethod
    def forward(ctx, z: Tensor, alpha: Tensor, same_alpha: float | None) -> tuple[Tensor, Tensor]:
        # One α for every row (`same_alpha`) lets the solver use python floats for α and β.
        p, tau, sparse = _sparse_forward(z, alpha if same_alpha is None else same_alpha, True)
        ctx.sparse = sparse
        ctx.save_for_backward(alpha)
        ctx.mark_non_differentiable(tau)
        return p, tau

    @staticmethod
    def backward(ctx, grad_p: Tensor, grad_tau: Tensor) -> tuple[Tensor, Tensor | None, None]:
        sparse = ctx.sparse
        (alpha,) = ctx.saved_tensors
        alpha64 = alpha.to(torch.float64)
        p = sparse.p_v
        grad_v = sparse.gather(grad_p)
        support = p > 0
        gppr = torch.where(support, p.pow(2 - alpha64), 0)
        grad_z = _unpack(_entmax_vjp(gppr, grad_v), sparse.columns, grad_p)
        grad_alpha = None
        if ctx.needs_input_grad[1]:
            shannon = torch.where(support, p * torch.log(torch.where(support, p, 1)), 0)
            ent = shannon.sum(-1, keepdim=True)
            skewed = gppr / gppr.sum(-1, keepdim=True)
            dp = (p - skewed) / (alpha64 - 1) ** 2 - (shannon - skewed * ent) / (alpha64 - 1)
            grad_alpha = (grad_v * dp).sum(-1, keepdim=True).to(alpha.dtype)
        return grad_z, grad_alpha, None


class _SoftmaxAlphaFunction(Function):
    r"""Softmax as α-entmax at α = 1, with the derivative of α-entmax in α at α = 1.

    Expanding $H^T_{1+\epsilon} = H^S + \epsilon\,(\sum_j p_j \log p_j - \tfrac12 \sum_j p_j
    \log^2 p_j) + O(\epsilon^2)$ and differentiating the optimality condition gives
    $$\left.\frac{\partial p_i}{\partial \alpha}\right|_{\alpha=1}
      = \frac{p_i}{2}\Big(\sum_j p_j \log^2 p_j - \log^2 p_i\Big).$$
    """

    @staticmethod
    def forward(ctx, z: Tensor, alpha: Tensor) -> tuple[Tensor, Tensor]:
        p, tau = _softmax_rows(z)
        ctx.save_for_backward(p)
        ctx.mark_non_differentiable(tau)
        return p, tau

    @staticmethod
    def backward(ctx, grad_p: Tensor, grad_tau: Tensor) -> tuple[Tensor, Tensor | None]:
        (p,) = ctx.saved_tensors
        gp = grad_p * p
        grad_z = gp - p * gp.sum(-1, keepdim=True)
        grad_alpha = None
        if ctx.needs_input_grad[1]:
            support = p > 0
            log_sq = torch.where(support, torch.log(torch.where(support, p, 1)) ** 2, 0)
            dp = p / 2 * ((p * log_sq).sum(-1, keepdim=True) - log_sq)
            grad_alpha = (grad_p * dp).sum(-1, keepdim=True)
        return grad_z, grad_alpha


# ---------------------------------------------------------------------------------------------
# The compiled kernels (models/entmax_kernels.py) behind the same interface.

_BACKENDS = ("compiled", "torch")
_backend = "compiled" if _kernels is not None else "torch"


def set_backend(name: str) -> str:
    """Choose "compiled" (numba kernels, the default when numba is installed) or "torch" for
    every later call; returns the previous choice."""
    global _backend
    if name not in _BACKENDS:
        raise ValueError(f"entmax backend must be one of {_BACKENDS}, got {name!r}")
    if name == "compiled" and _kernels is None:
        raise ValueError("the compiled entmax backend needs numba: pip install numba")
    previous, _backend = _backend, name
    return previous


def warm_up() -> None:
    """Compile the kernels now (or load them from numba's disk cache), so no caller pays the JIT."""
    if _kernels is not None:
        _kernels.warm_up()


_KERNEL_DTYPES = (torch.float32, torch.float64)


def _compiled(x: Tensor) -> bool:
    """Whether the kernels can take these rows: CPU, float32 or float64."""
    return _backend == "compiled" and x.is_cpu and x.dtype in _KERNEL_DTYPES


_threads = torch.get_num_threads


def _kernel_rows(z: Tensor):
    """The rows as the C-contiguous NumPy array the kernels read (a view where possible)."""
    rows = z.detach() if z.requires_grad else z
    return (rows if rows.is_contiguous() else rows.contiguous()).numpy()


class _CompiledEntmaxFunction(Function):
    r"""α-entmax for one float α > 1 by the compiled kernels. The backward is
    $\bar z = g \odot (\bar p - \sum_j g_j \bar p_j / \sum_j g_j)$ with $g = p^{2-\alpha}$ on
    the support."""

    @staticmethod
    def forward(ctx, z: Tensor, alpha: float) -> tuple[Tensor, Tensor]:
        p, tau, masked = _kernels.forward(_kernel_rows(z), alpha, _threads())
        if masked:
            raise ValueError(_ALL_MASKED)
        p = torch.from_numpy(p)
        ctx.save_for_backward(p)
        ctx.alpha = alpha
        tau = torch.from_numpy(tau.reshape(-1, 1))
        ctx.mark_non_differentiable(tau)
        return p, tau

    @staticmethod
    def backward(ctx, grad_p: Tensor, grad_tau: Tensor) -> tuple[Tensor, None]:
        (p,) = ctx.saved_tensors
        return _kernel_backward(p, grad_p, ctx.alpha), None


def _kernel_backward(p: Tensor, grad_p: Tensor, alpha: float) -> Tensor:
    """The kernels' backward along the last dim of p (any shape)."""
    d = p.shape[-1]
    grad = grad_p.detach().to(p.dtype).contiguous().numpy().reshape(-1, d)
    grad_z = _kernels.backward(p.numpy().reshape(-1, d), grad, alpha, _threads())
    return torch.from_numpy(grad_z.reshape(p.shape))


def _kernel_forward(x: Tensor, alpha: float) -> Tensor:
    """α-entmax along the last dim of x (any shape) by the kernels: a view in, a view out."""
    z = _kernel_rows(x)
    p, _, masked = _kernels.forward(z.reshape(-1, z.shape[-1]), alpha, _threads())
    if masked:
        raise ValueError(_ALL_MASKED)
    return torch.from_numpy(p.reshape(z.shape))


class _CompiledProbabilitiesFunction(Function):
    """`entmax` by the kernels when a gradient is recorded: one autograd node with one output,
    where the (p, τ) path records two reshapes and a τ nobody asked for. On short rows that
    bookkeeping costs more than the mapping itself."""

    @staticmethod
    def forward(ctx, x: Tensor, alpha: float) -> Tensor:
        p = _kernel_forward(x, alpha)
        ctx.save_for_backward(p)
        ctx.alpha = alpha
        return p

    @staticmethod
    def backward(ctx, grad_p: Tensor) -> tuple[Tensor, None]:
        (p,) = ctx.saved_tensors
        return _kernel_backward(p, grad_p, ctx.alpha), None


def _kernel_probabilities(x: Tensor, alpha: float, dim: int) -> Tensor | None:
    """α-entmax of `x` along its last dim straight from the kernels, or None where this shortcut
    does not apply (another dim or backend).

    On short rows the mapping itself takes a few µs, as long as the tensor bookkeeping around
    it; this path keeps that to a view in, a view out, and one autograd node.
    """
    if (
        _backend != "compiled"
        or not x.is_cpu
        or x.dtype not in _KERNEL_DTYPES
        or x.dim() == 0
        or dim not in (-1, x.dim() - 1)
    ):
        return None
    if x.requires_grad and torch.is_grad_enabled():
        return _CompiledProbabilitiesFunction.apply(x, alpha)
    return _kernel_forward(x, alpha)


# ---------------------------------------------------------------------------------------------
# Public mappings.


def _alpha_rows(alpha: Tensor, x: Tensor, dim: int) -> Tensor:
    """Broadcast α to one value per row of `_to_rows(x, dim)`: (rows, 1)."""
    alpha = alpha.to(dtype=x.dtype, device=x.device)
    if alpha.dim() == x.dim() - 1 and x.dim() > 1:
        alpha = alpha.unsqueeze(dim)
    keep_shape = list(x.shape)
    keep_shape[dim] = 1
    return _to_rows(alpha.expand(keep_shape), dim)


class _NoGradContext:
    """Stands in for autograd's ctx when no gradient is needed.

    `Function.apply` costs several µs per call, which is a large share of the time on short rows
    at inference; when nothing requires grad the forward is called directly with this instead.
    """

    def save_for_backward(self, *tensors: Tensor) -> None:
        pass

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        pass


def _apply(function: type[Function], *args: object) -> tuple[Tensor, Tensor]:
    if torch.is_grad_enabled() and any(isinstance(a, Tensor) and a.requires_grad for a in args):
        return function.apply(*args)
    return function.forward(_NoGradContext(), *args)


def _entmax_rows(x: Tensor, alpha: float | Tensor, dim: int) -> tuple[Tensor, Tensor]:
    """α-entmax of `x` along `dim` as (p, τ) on rows: (rows, d) and (rows, 1)."""
    rows = _to_rows(x, dim)
    if not isinstance(alpha, Tensor):
        if alpha < 1:
            raise ValueError(f"entmax: alpha must be >= 1, got {alpha}")
        if alpha == 1:
            return _apply(_SoftmaxAlphaFunction, rows, x.new_ones(()).view(1, 1))
        if _compiled(rows):
            return _apply(_CompiledEntmaxFunction, rows, float(alpha))
        if alpha == 2:
            return _apply(_SparsemaxFunction, rows)
        if alpha == 1.5:
            return _apply(_Entmax15Function, rows)
        # float64 keeps α exact; no gradient flows to a python float
        alpha_rows = torch.full((rows.shape[0], 1), float(alpha), dtype=torch.float64)
        return _apply(_EntmaxAlphaFunction, rows, alpha_rows, float(alpha))

    alpha_rows = _alpha_rows(alpha, x, dim)
    if alpha.numel() == 1:  # one α for all rows: decide on the python float
        same_alpha = smallest = float(alpha.detach())
        all_softmax = any_softmax = same_alpha == 1
    else:
        is_softmax = alpha_rows == 1
        all_softmax, any_softmax = bool(is_softmax.all()), bool(is_softmax.any())
        same_alpha = None
        smallest = float(alpha_rows.detach().min())
    if smallest < 1:
        raise ValueError("entmax: every alpha must be >= 1")
    if all_softmax:
        return _apply(_SoftmaxAlphaFunction, rows, alpha_rows)
    if same_alpha is not None and not alpha.requires_grad and _compiled(rows):
        return _apply(_CompiledEntmaxFunction, rows, same_alpha)
    if not any_softmax:
        return _apply(_EntmaxAlphaFunction, rows, alpha_rows, same_alpha)
    p_soft, tau_soft = _apply(_SoftmaxAlphaFunction, rows, alpha_rows)
    safe_alpha = torch.where(is_softmax, 2, alpha_rows)
    p_ent, tau_ent = _apply(_EntmaxAlphaFunction, rows, safe_alpha, None)
    return torch.where(is_softmax, p_soft, p_ent), torch.where(is_softmax, tau_soft, tau_ent)


def entmax_with_tau(x: Tensor, alpha: float | Tensor, dim: int = -1) -> tuple[Tensor, Tensor]:
    r"""α-entmax along `dim` and its threshold τ.

    $$p_i = \left[(\alpha-1) x_i - \tau\right]_+^{1/(\alpha-1)}, \qquad \sum_i p_i = 1,$$
    with τ = log Σ exp(x) at α = 1. τ has the shape of `x` with `dim` reduced (kept as size 1);
    the support size is `(p > 0).sum(dim)`. `alpha` is a float ≥ 1 or a tensor broadcastable to
    `x` with `dim` of size 1 (or of the shape of `x` without `dim`); a tensor α that requires grad
    receives ∂loss/∂α. A python float 2 or 1.5 takes the exact sort-based path.
    """
    p, tau = _entmax_rows(x, alpha, dim)
    return _from_rows(p, x, dim), _from_rows(tau, x.narrow(dim, 0, 1), dim)


def entmax(x: Tensor, alpha: float | Tensor, dim: int = -1) -> Tensor:
    r"""α-entmax along `dim` (Peters et al. 2019, eq. 9–10), for any α ≥ 1.

    $$\alpha\text{-entmax}(x)_i = \left[(\alpha-1) x_i - \tau\right]_+^{1/(\alpha-1)}.$$
    α = 1 is exactly `torch.softmax`; see `entmax_with_tau` for the accepted α.
    """
    if not isinstance(alpha, Tensor):
        if alpha == 1:
            p = torch.softmax(x, dim)
            # An all -inf row is NaN throughout; its first entry is enough to notice it.
            if bool(torch.isnan(p.select(dim, 0)).any()):
                raise ValueError(_ALL_MASKED)
            return p
        if alpha > 1 and (p := _kernel_probabilities(x, float(alpha), dim)) is not None:
            return p
    return _from_rows(_entmax_rows(x, alpha, dim)[0], x, dim)


def sparsemax(x: Tensor, dim: int = -1) -> Tensor:
    r"""Sparsemax along `dim` (Martins & Astudillo 2016, eq. 2): $p = [x - \tau]_+$."""
    p = _kernel_probabilities(x, 2.0, dim)
    return p if p is not None else _from_rows(_entmax_rows(x, 2.0, dim)[0], x, dim)


def entmax15(x: Tensor, dim: int = -1) -> Tensor:
    r"""Exact 1.5-entmax along `dim` (Peters et al. 2019, Alg. 2): $p = [x/2 - \tau]_+^2$."""
    p = _kernel_probabilities(x, 1.5, dim)
    return p if p is not None else _from_rows(_entmax_rows(x, 1.5, dim)[0], x, dim)


# ---------------------------------------------------------------------------------------------
# Fenchel–Young losses (Blondel, Martins & Niculae 2020).


class _FenchelYoungLossFunction(Function):
    r"""$L_\alpha(z; y) = H^T_\alpha(p) + p^\top z - z_y$, $p = \alpha\text{-entmax}(z)$.

    $H^T_\alpha(p) = (1 - \sum_j p_j^\alpha) / (\alpha(\alpha-1))$, and at α = 1 the loss is the
    cross-entropy $\log \sum_j e^{z_j} - z_y$. The gradient is $\nabla_z L = p - e_y$.
    Masked scores (-inf) have $p_i = 0$ and contribute exactly 0 to $p^\top z$.
    """

    @staticmethod
    def forward(ctx, z: Tensor, target: Tensor, alpha: float) -> Tensor:
        if alpha != 1 and _compiled(z):  # the kernels give p and the loss in one pass
            classes = target.to(torch.int64).contiguous().numpy()
            p, loss, masked = _kernels.fenchel_young(_kernel_rows(z), classes, alpha, _threads())
            if masked:
                raise ValueError(_ALL_MASKED)
            p = torch.from_numpy(p)
            ctx.save_for_backward(p, target)
            return torch.from_numpy(loss)
        gold = z.gather(-1, target.unsqueeze(-1)).squeeze(-1)  # (rows,)
        p, tau = _mapping_rows(z, alpha)
        if alpha == 1:
            loss = tau.squeeze(-1) - gold
        else:
            # 0 * (-inf) would be NaN: masked scores have p = 0, so any finite stand-in works.
            finite_z = z.clamp_min(torch.finfo(z.dtype).min)
            entropy = (1 - _sum_pow(p, alpha)) / (alpha * (alpha - 1))
            loss = entropy + torch.linalg.vecdot(p, finite_z) - gold
        ctx.save_for_backward(p, target)
        return loss

    @staticmethod
    def backward(ctx, grad_loss: Tensor) -> tuple[Tensor, None, None]:
        p, target = ctx.saved_tensors
        grad = grad_loss.unsqueeze(-1) * p
        grad.scatter_add_(-1, target.unsqueeze(-1), -grad_loss.unsqueeze(-1))
        return grad, None, None


def _sum_pow(p: Tensor, alpha: float) -> Tensor:
    """Σ_j p_j^α per row, with cheap special cases for α = 2 and 1.5."""
    if alpha == 2:
        return torch.linalg.vecdot(p, p)
    if alpha == 1.5:
        return torch.linalg.vecdot(p, p.sqrt())
    return p.pow(alpha).sum(-1)


def entmax_loss(
    x: Tensor,
    target: Tensor,
    alpha: float,
    ignore_index: int = -100,
    reduction: str = "mean",
) -> Tensor:
    r"""Fenchel–Young α-entmax loss (Peters et al. 2019, §3; Blondel et al. 2020).

    $$L_\alpha(x; y) = (p - e_y)^\top x + H^T_\alpha(p), \qquad p = \alpha\text{-entmax}(x),$$
    with gradient $p - e_y$. For α > 1 it is zero exactly when $x_y \ge x_j + 1/(\alpha-1)$
    for all $j \ne y$ (then p is one-hot on y); at α = 1 it is the cross-entropy. `x` is
    (..., classes) and `target` (...) holds class indices; positions whose target equals
    `ignore_index` contribute 0. `reduction` is 'none' (shape of `target`), 'sum', or 'mean'
    (over the positions not ignored).
    """
    if reduction not in ("none", "sum", "mean"):
        raise ValueError(f"reduction must be 'none', 'sum' or 'mean', got {reduction!r}")
    if alpha < 1:
        raise ValueError(f"entmax_loss: alpha must be >= 1, got {alpha}")
    if x.shape[:-1] != target.shape:
        raise ValueError(
            f"entmax_loss: scores {tuple(x.shape)} need targets of shape {tuple(x.shape[:-1])}, "
            f"got {tuple(target.shape)}"
        )
    z = x.reshape(-1, x.shape[-1])  # (rows, classes)
    y = target.reshape(-1)  # (rows,)
    ignored = y == ignore_index
    any_ignored = bool(ignored.any())
    if any_ignored:
        # Ignored rows may be fully masked (padding); give them harmless scores.
        z = z.masked_fill(ignored.unsqueeze(-1), 0.0)
        y = y.masked_fill(ignored, 0)
    loss = _FenchelYoungLossFunction.apply(z, y, float(alpha))
    if any_ignored:
        loss = loss.masked_fill(ignored, 0.0)
    if reduction == "none":
        return loss.reshape(target.shape)
    if reduction == "sum":
        return loss.sum()
    kept = y.numel() - int(ignored.sum())
    # With every position ignored, the mean of nothing is taken as 0 rather than NaN.
    return loss.sum() / max(kept, 1)


def sparsemax_loss(
    x: Tensor, target: Tensor, ignore_index: int = -100, reduction: str = "mean"
) -> Tensor:
    r"""Sparsemax loss (Martins & Astudillo 2016, eq. 18): $L = \tfrac12(1 - \lVert p\rVert^2)
    + (p - e_y)^\top x$; see `entmax_loss`."""
    return entmax_loss(x, target, 2.0, ignore_index, reduction)


def entmax15_loss(
    x: Tensor, target: Tensor, ignore_index: int = -100, reduction: str = "mean"
) -> Tensor:
    r"""1.5-entmax Fenchel–Young loss: $L = \tfrac43(1 - \sum_j p_j^{3/2}) + (p - e_y)^\top x$;
    see `entmax_loss`."""
    return entmax_loss(x, target, 1.5, ignore_index, reduction)
