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
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.autograd import Function

__all__ = [
    "entmax",
    "entmax15",
    "entmax15_loss",
    "entmax_loss",
    "entmax_with_tau",
    "sparsemax",
    "sparsemax_loss",
]

_NEWTON_MAX_ITERS = 200


# ---------------------------------------------------------------------------------------------
# Layout helpers: every solver below works on a 2-D (rows, d) tensor, reducing over the last dim.


def _to_rows(x: Tensor, dim: int) -> Tensor:
    """(..., d at `dim`, ...) -> (rows, d); a view when `dim` is already last."""
    return x.movedim(dim, -1).reshape(-1, x.shape[dim])


def _from_rows(rows: Tensor, like: Tensor, dim: int) -> Tensor:
    moved_shape = like.movedim(dim, -1).shape
    return rows.reshape(moved_shape).movedim(-1, dim)


def _check_finite_rows(row_max: Tensor) -> None:
    if bool(torch.isneginf(row_max).any()):
        raise ValueError(
            "entmax: a row has every score equal to -inf, so no probability distribution exists; "
            "leave at least one entry unmasked in every row"
        )


# ---------------------------------------------------------------------------------------------
# Thresholds τ. Each returns τ with shape (rows, 1), in the module's convention.


def _sparsemax_tau(z: Tensor) -> Tensor:
    r"""Sort-based sparsemax threshold (Martins & Astudillo 2016, Algorithm 1).

    With $z_{(1)} \ge \dots \ge z_{(d)}$, the support size is
    $k = \max\{k : 1 + k z_{(k)} > \sum_{j \le k} z_{(j)}\}$ and
    $\tau = (\sum_{j \le k} z_{(j)} - 1) / k$.
    """
    srt = torch.sort(z, dim=-1, descending=True).values  # (rows, d)
    rho = torch.arange(1, z.shape[-1] + 1, dtype=z.dtype, device=z.device)
    csum = srt.cumsum(-1) - 1
    k = (rho * srt > csum).sum(-1, keepdim=True)  # (rows, 1)
    return csum.gather(-1, k - 1) / k.to(z.dtype)


def _entmax15_tau(zt: Tensor) -> Tensor:
    r"""Sort-based exact 1.5-entmax threshold on $\tilde z = z/2$ (Peters et al. 2019, Alg. 2).

    For each prefix of the sorted scores of size k, the candidate threshold solves
    $\sum_{j \le k} (\tilde z_{(j)} - \tau)^2 = 1$:
    $\tau_k = M_k - \sqrt{(1 - k S_k)/k}$ with the prefix mean $M_k$ and variance $S_k$;
    the support size is the largest k with $\tau_k \le \tilde z_{(k)}$.
    """
    srt = torch.sort(zt, dim=-1, descending=True).values  # (rows, d)
    rho = torch.arange(1, zt.shape[-1] + 1, dtype=zt.dtype, device=zt.device)
    mean = srt.cumsum(-1) / rho
    mean_sq = (srt * srt).cumsum(-1) / rho
    ss = rho * (mean_sq - mean * mean)
    delta = (1 - ss) / rho
    tau = mean - torch.sqrt(delta.clamp_min(0))
    k = (tau <= srt).sum(-1, keepdim=True)  # (rows, 1)
    return tau.gather(-1, k - 1)


def _entmax_tau(zt: Tensor, alpha: Tensor) -> Tensor:
    r"""α-entmax threshold: safeguarded Newton on $h(\tau) = \lVert[\tilde z - \tau]_+\rVert_\beta$.

    With $\beta = 1/(\alpha-1)$ the normalisation $\sum_i [\tilde z_i - \tau]_+^\beta = 1$ is
    $h(\tau) = 1$. For α ≤ 2 the β-norm is convex and decreasing in τ, so Newton steps started
    from the lower end of the bracket $[\max \tilde z - 1, \max \tilde z - d^{1-\alpha}]$ climb
    monotonically to the root; for α > 2 a step leaving the bracket is replaced by bisection.
    `zt` is (rows, d) with its row maximum at 0; `alpha` is (rows, 1).
    """
    beta = 1 / (alpha - 1)
    d = zt.shape[-1]
    lo = torch.full_like(alpha, -1.0)
    hi = -torch.pow(torch.full_like(alpha, 1.0 / d), alpha - 1)
    tau = lo.clone()
    tol = 8 * torch.finfo(zt.dtype).eps
    for _ in range(_NEWTON_MAX_ITERS):
        u = (zt - tau).clamp_min(0)  # (rows, d)
        u_pow = u.pow(beta)
        s = u_pow.sum(-1, keepdim=True)
        h = s.pow(alpha - 1)
        # dh/dτ = -s^{1/β - 1} Σ u^{β-1}; the u = 0 terms are 0, not 0^{negative}.
        ds = torch.where(u > 0, u_pow / u, 0).sum(-1, keepdim=True)
        slope = s.pow(alpha - 2) * ds
        above = h >= 1
        lo = torch.where(above, tau, lo)
        hi = torch.where(above, hi, tau)
        step = tau + (h - 1) / slope
        inside = (step > lo) & (step < hi)
        new_tau = torch.where(inside, step, (lo + hi) / 2)
        done = ((h - 1).abs() <= tol) | (hi - lo <= tol * (1 + tau.abs()))
        if bool(done.all()):
            break
        tau = torch.where(done, tau, new_tau)
    return tau


# ---------------------------------------------------------------------------------------------
# Forward passes on (rows, d): each returns (p, τ) with τ of shape (rows, 1).


def _softmax_rows(z: Tensor) -> tuple[Tensor, Tensor]:
    tau = torch.logsumexp(z, -1, keepdim=True)
    _check_finite_rows(tau)
    return torch.exp(z - tau), tau


def _sparsemax_rows(z: Tensor) -> tuple[Tensor, Tensor]:
    row_max = z.amax(-1, keepdim=True)
    _check_finite_rows(row_max)
    tau = _sparsemax_tau(z - row_max) + row_max
    return (z - tau).clamp_min(0), tau


def _entmax15_rows(z: Tensor) -> tuple[Tensor, Tensor]:
    row_max = z.amax(-1, keepdim=True)
    _check_finite_rows(row_max)
    zt = (z - row_max) / 2
    tau = _entmax15_tau(zt)
    return (zt - tau).clamp_min(0).square(), tau + row_max / 2


def _entmax_rows(z: Tensor, alpha: Tensor) -> tuple[Tensor, Tensor]:
    """General α > 1; `alpha` is (rows, 1)."""
    row_max = z.amax(-1, keepdim=True)
    _check_finite_rows(row_max)
    zt = (z - row_max) * (alpha - 1)
    tau = _entmax_tau(zt, alpha)
    p = (zt - tau).clamp_min(0).pow(1 / (alpha - 1))
    return p / p.sum(-1, keepdim=True), tau + row_max * (alpha - 1)


def _mapping_rows(z: Tensor, alpha: float) -> tuple[Tensor, Tensor]:
    if alpha == 1:
        return _softmax_rows(z)
    if alpha == 2:
        return _sparsemax_rows(z)
    if alpha == 1.5:
        return _entmax15_rows(z)
    return _entmax_rows(z, z.new_full((z.shape[0], 1), alpha))


# ---------------------------------------------------------------------------------------------
# Autograd functions on (rows, d); outputs (p, τ) with τ not differentiable.


class _SparsemaxFunction(Function):
    r"""Sparsemax with its closed-form Jacobian (Martins & Astudillo 2016, eq. 11).

    $$J = \operatorname{diag}(s) - \frac{s s^\top}{|S|}, \qquad s_i = [p_i > 0],$$
    so $\bar z = s \odot (\bar p - \tfrac{1}{|S|}\sum_{j \in S} \bar p_j)$.
    """

    @staticmethod
    def forward(ctx, z: Tensor) -> tuple[Tensor, Tensor]:
        p, tau = _sparsemax_rows(z)
        ctx.save_for_backward(p)
        ctx.mark_non_differentiable(tau)
        return p, tau

    @staticmethod
    def backward(ctx, grad_p: Tensor, grad_tau: Tensor) -> Tensor:
        (p,) = ctx.saved_tensors
        support = p > 0
        g = torch.where(support, grad_p, 0)
        mean = g.sum(-1, keepdim=True) / support.sum(-1, keepdim=True)
        return torch.where(support, g - mean, 0)


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
        p, tau = _entmax15_rows(z)
        ctx.save_for_backward(p)
        ctx.mark_non_differentiable(tau)
        return p, tau

    @staticmethod
    def backward(ctx, grad_p: Tensor, grad_tau: Tensor) -> Tensor:
        (p,) = ctx.saved_tensors
        return _entmax_vjp(p.sqrt(), grad_p)


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
    def forward(ctx, z: Tensor, alpha: Tensor) -> tuple[Tensor, Tensor]:
        p, tau = _entmax_rows(z, alpha)
        ctx.save_for_backward(p, alpha)
        ctx.mark_non_differentiable(tau)
        return p, tau

    @staticmethod
    def backward(ctx, grad_p: Tensor, grad_tau: Tensor) -> tuple[Tensor, Tensor | None]:
        p, alpha = ctx.saved_tensors
        support = p > 0
        gppr = torch.where(support, p.pow(2 - alpha), 0)
        grad_z = _entmax_vjp(gppr, grad_p)
        grad_alpha = None
        if ctx.needs_input_grad[1]:
            shannon = torch.where(support, p * torch.log(torch.where(support, p, 1)), 0)
            ent = shannon.sum(-1, keepdim=True)
            skewed = gppr / gppr.sum(-1, keepdim=True)
            dp = (p - skewed) / (alpha - 1) ** 2 - (shannon - skewed * ent) / (alpha - 1)
            grad_alpha = (grad_p * dp).sum(-1, keepdim=True)
        return grad_z, grad_alpha


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
# Public mappings.


def _alpha_rows(alpha: Tensor, x: Tensor, dim: int) -> Tensor:
    """Broadcast α to one value per row of `_to_rows(x, dim)`: (rows, 1)."""
    alpha = alpha.to(dtype=x.dtype, device=x.device)
    if alpha.dim() == x.dim() - 1 and x.dim() > 1:
        alpha = alpha.unsqueeze(dim)
    keep_shape = list(x.shape)
    keep_shape[dim] = 1
    return _to_rows(alpha.expand(keep_shape), dim)


def entmax_with_tau(x: Tensor, alpha: float | Tensor, dim: int = -1) -> tuple[Tensor, Tensor]:
    r"""α-entmax along `dim` and its threshold τ.

    $$p_i = \left[(\alpha-1) x_i - \tau\right]_+^{1/(\alpha-1)}, \qquad \sum_i p_i = 1,$$
    with τ = log Σ exp(x) at α = 1. τ has the shape of `x` with `dim` reduced (kept as size 1);
    the support size is `(p > 0).sum(dim)`. `alpha` is a float ≥ 1 or a tensor broadcastable to
    `x` with `dim` of size 1 (or of the shape of `x` without `dim`); a tensor α that requires grad
    receives ∂loss/∂α. A python float 2 or 1.5 takes the exact sort-based path.
    """
    if not isinstance(alpha, Tensor):
        if alpha < 1:
            raise ValueError(f"entmax: alpha must be >= 1, got {alpha}")
        if alpha == 1:
            p, tau = _SoftmaxAlphaFunction.apply(_to_rows(x, dim), x.new_ones(()).view(1, 1))
        elif alpha == 2:
            p, tau = _SparsemaxFunction.apply(_to_rows(x, dim))
        elif alpha == 1.5:
            p, tau = _Entmax15Function.apply(_to_rows(x, dim))
        else:
            alpha_rows = x.new_full((1, 1), float(alpha)).expand(_to_rows(x, dim).shape[0], 1)
            p, tau = _EntmaxAlphaFunction.apply(_to_rows(x, dim), alpha_rows)
        return _from_rows(p, x, dim), _from_rows(tau, x.narrow(dim, 0, 1), dim)

    if bool((alpha < 1).any()):
        raise ValueError("entmax: every alpha must be >= 1")
    rows = _to_rows(x, dim)
    alpha_rows = _alpha_rows(alpha, x, dim)
    is_softmax = alpha_rows == 1
    if bool(is_softmax.all()):
        p, tau = _SoftmaxAlphaFunction.apply(rows, alpha_rows)
    elif not bool(is_softmax.any()):
        p, tau = _EntmaxAlphaFunction.apply(rows, alpha_rows)
    else:
        p_soft, tau_soft = _SoftmaxAlphaFunction.apply(rows, alpha_rows)
        safe_alpha = torch.where(is_softmax, 2, alpha_rows)
        p_ent, tau_ent = _EntmaxAlphaFunction.apply(rows, safe_alpha)
        p = torch.where(is_softmax, p_soft, p_ent)
        tau = torch.where(is_softmax, tau_soft, tau_ent)
    return _from_rows(p, x, dim), _from_rows(tau, x.narrow(dim, 0, 1), dim)


def entmax(x: Tensor, alpha: float | Tensor, dim: int = -1) -> Tensor:
    r"""α-entmax along `dim` (Peters et al. 2019, eq. 9–10), for any α ≥ 1.

    $$\alpha\text{-entmax}(x)_i = \left[(\alpha-1) x_i - \tau\right]_+^{1/(\alpha-1)}.$$
    α = 1 is exactly `torch.softmax`; see `entmax_with_tau` for the accepted α.
    """
    if not isinstance(alpha, Tensor) and alpha == 1:
        return torch.softmax(x, dim)
    return entmax_with_tau(x, alpha, dim)[0]


def sparsemax(x: Tensor, dim: int = -1) -> Tensor:
    r"""Sparsemax along `dim` (Martins & Astudillo 2016, eq. 2): $p = [x - \tau]_+$."""
    return entmax_with_tau(x, 2.0, dim)[0]


def entmax15(x: Tensor, dim: int = -1) -> Tensor:
    r"""Exact 1.5-entmax along `dim` (Peters et al. 2019, Alg. 2): $p = [x/2 - \tau]_+^2$."""
    return entmax_with_tau(x, 1.5, dim)[0]


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
    with gradient $p - e_y$. It is zero exactly when $x_y \ge x_j + 1/(\alpha-1)$ for all
    $j \ne y$ (then p is one-hot on y). `x` is (..., classes) and `target` (...) holds class
    indices; positions whose target equals `ignore_index` contribute 0. `reduction` is 'none'
    (shape of `target`), 'sum', or 'mean' (over the positions not ignored).
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
    return (
        loss.sum() / (y.numel() - int(ignored.sum()))
        if y.numel() > int(ignored.sum())
        else loss.sum()
    )


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
