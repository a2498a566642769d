r"""α-entmax and sparsemax as compiled CPU kernels (numba), forward and backward.

The same mathematics as `models/entmax.py`, which stays the readable reference and the fallback:

$$p_i = \left[(\alpha-1) z_i - \tau\right]_+^{1/(\alpha-1)}, \qquad \sum_i p_i = 1,$$

with τ the threshold on the scaled scores $\tilde z = (\alpha-1) z$ (Peters, Niculae & Martins
2019, eq. 10). The kernels work on NumPy arrays of shape (rows, d), float32 or float64, and
compute in float64.

Why this gets to softmax's cost. Softmax reads a row twice (max, then exp-and-sum) and writes it
once. A row of α-entmax needs about the same:

1. **One gathering pass** finds the row maximum m and keeps the *candidates*: entries with
   $\tilde z_i - \tilde m > -1$. The largest entry alone reaches mass 1 at τ = m̃ − 1, so τ is
   never lower and nothing else can be in the support. On typical rows a few dozen entries
   survive, whatever d is.
2. **τ on the candidates only**, by iterations that start from that lower bound and stay below
   the root, so the set $S = \{i : \tilde z_i > \tau\}$ always contains the support and shrinks
   towards it. The threshold is *certified*, not just converged, where a closed form exists:
   - α = 2 (Michelot 1986): $\tau_S = (\sum_S \tilde z - 1)/|S|$; when $S$ no longer changes,
     τ is exact.
   - α = 1.5 (Peters et al. 2019, Alg. 2 without the sort): $\tau_S = M_S - \sqrt{1/|S| -
     \mathrm{Var}_S}$, accepted when $S = \{i : \tilde z_i > \tau_S\}$, which makes it the root;
     otherwise one Newton step on $\sum_i [\tilde z_i - \tau]_+^2 = 1$ (convex, so it stays below).
   - other α: Newton on the β-norm $\lVert[\tilde z - \tau]_+\rVert_\beta = 1$, β = 1/(α−1)
     (convex for α ≤ 2; bracketed by bisection for α > 2), to 8 ulp.
3. **One output pass** writes zeros and the support values.

Backward (Peters et al. 2019, Prop. 2): with $g_i = p_i^{2-\alpha}$ on the support,
$\bar z = g \odot (\bar p - \sum_j g_j \bar p_j / \sum_j g_j)$: two passes over a row.

Rows are split over threads with `prange` when the caller asks for more than one; the kernels
are cached on disk (`cache=True`) and `warm_up()` compiles them ahead of the first request.
"""

from __future__ import annotations

import functools
import logging
import math

import numba
import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.extending import intrinsic

SPARSEMAX, ENTMAX15, GENERAL = 0, 1, 2
_MAX_ITERS = 200
_TOL = 8 * np.finfo(np.float64).eps
_PARALLEL_MIN_ENTRIES = 1 << 15  # below this, a parallel launch costs more than it saves

# A parallel kernel may be entered from several Python threads at once (a server's thread pool):
# only the OpenMP and TBB layers allow that.
numba.config.THREADING_LAYER = "threadsafe"


def kind_of(alpha: float) -> int:
    return SPARSEMAX if alpha == 2 else ENTMAX15 if alpha == 1.5 else GENERAL


# ---------------------------------------------------------------------------------------------
# u^β for general α, written out so that a loop of them vectorises (libm's exp and log do not).


@intrinsic
def _as_bits(typingctx, x):
    """The IEEE-754 bits of a float64, as an int64."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


@intrinsic
def _from_bits(typingctx, b):
    """The float64 whose IEEE-754 bits are the int64 b."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10  # ln 2 in two parts
_LOG2E = 1.4426950408889634
_SQRT2 = 1.4142135623730951
_MANTISSA, _ONE_BITS = 0x000FFFFFFFFFFFFF, 0x3FF0000000000000
_ROUND = 6755399441055744.0  # 1.5 · 2^52: adding and subtracting it rounds to an integer


@njit(cache=True, inline="always", error_model="numpy")
def _pow(u, beta):
    r"""$u^\beta = e^{\beta \log u}$ for a normal u > 0, to a few ulp (u^β below e^{-700} is
    returned as e^{-700}).

    $\log u = e \ln 2 + \log m$ with $u = 2^e m$, $m \in [\sqrt{1/2}, \sqrt 2)$, and
    $\log m = 2\,\mathrm{atanh}\, s = 2(s + s^3/3 + \dots)$, $s = (m-1)/(m+1)$, $|s| < 0.172$;
    then $e^x = 2^j e^r$ with $j = \mathrm{round}(x / \ln 2)$, $|r| \le \ln 2 / 2$, and $e^r$ by
    its Taylor series to $r^{13}/13!$.
    """
    bits = _as_bits(u)
    e = float((bits >> 52) - 1023)
    m = _from_bits((bits & _MANTISSA) | _ONE_BITS)
    big = m > _SQRT2
    m = 0.5 * m if big else m
    e = e + 1.0 if big else e
    s = (m - 1.0) / (m + 1.0)
    z = s * s
    series = 2.0 + z * (
        2.0 / 3
        + z
        * (
            2.0 / 5
            + z
            * (
                2.0 / 7
                + z
                * (
                    2.0 / 9
                    + z
                    * (
                        2.0 / 11
                        + z
                        * (
                            2.0 / 13
                            + z * (2.0 / 15 + z * (2.0 / 17 + z * (2.0 / 19 + z * (2.0 / 21))))
                        )
                    )
                )
            )
        )
    )
    x = beta * (e * _LN2_HI + (s * series + e * _LN2_LO))
    x = x if x > -700.0 else -700.0
    j = (x * _LOG2E + _ROUND) - _ROUND
    r = (x - j * _LN2_HI) - j * _LN2_LO
    exp_r = 1.0 + r * (
        1.0
        + r
        * (
            1.0 / 2
            + r
            * (
                1.0 / 6
                + r
                * (
                    1.0 / 24
                    + r
                    * (
                        1.0 / 120
                        + r
                        * (
                            1.0 / 720
                            + r
                            * (
                                1.0 / 5040
                                + r
                                * (
                                    1.0 / 40320
                                    + r
                                    * (
                                        1.0 / 362880
                                        + r
                                        * (
                                            1.0 / 3628800
                                            + r
                                            * (
                                                1.0 / 39916800
                                                + r * (1.0 / 479001600 + r / 6227020800)
                                            )
                                        )
                                    )
                                )
                            )
                        )
                    )
                )
            )
        )
    )
    return exp_r * _from_bits((np.int64(j) + 1023) << 52)


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _power_sums(v, k, tau, beta, power):
    """power[i] = [v_i - τ]₊^β for i < k; returns (Σ u^β, Σ u^(β-1), Σ u^(β-2)) over u > 0."""
    for i in range(k):
        x = v[i] - tau
        p = _pow(x if x > 0 else 1.0, beta)
        power[i] = p if x > 0 else 0.0
    return _moments(v, k, tau, power)


@njit(cache=True, error_model="numpy", fastmath={"reassoc", "nsz", "contract"})
def _moments(v, k, tau, power):
    total, slope, curve = 0.0, 0.0, 0.0
    for i in range(k):
        x = v[i] - tau
        inverse = 1.0 / x if x > 0 else 0.0
        p = power[i]
        total += p
        slope += p * inverse
        curve += p * inverse * inverse
    return total, slope, curve


# ---------------------------------------------------------------------------------------------
# Thresholds on the candidates v (k,), in units of z̃ relative to the row maximum: v ∈ (-1, 0].


# The loops are branch-free (a mask multiplies instead of an `if`), so LLVM vectorises them; the
# fast-math flags only allow reordering the sums (no NaN or inf reaches them: v ∈ (-1, 0]).
_REORDER = {"reassoc", "nsz", "contract"}


@njit(cache=True, fastmath=_REORDER)
def _sums(v, k, tau):
    """(n, Σ v, Σ v²) over S = {i < k : v_i > τ}, branch-free so that it vectorises."""
    n, s1, s2 = 0.0, 0.0, 0.0
    for i in range(k):
        x = v[i]
        y = x if x > tau else 0.0
        n += 1.0 if x > tau else 0.0
        s1 += y
        s2 += y * y
    return n, s1, s2


@njit(cache=True, fastmath=_REORDER)
def _total(x, k):
    """Σ x[:k], in vector lanes (a plain loop adds one term after another: a chain of latencies)."""
    total = 0.0
    for i in range(k):
        total += x[i]
    return total


@njit(cache=True, fastmath=_REORDER)
def _count_above(v, k, t):
    """How many of v[:k] exceed t (a sum of 0/1, which vectorises where a minimum does not)."""
    n = 0.0
    for i in range(k):
        n += 1.0 if v[i] > t else 0.0
    return n


@njit(cache=True, inline="always")
def _sparsemax_step(v, k, mass, tau):
    """(τ', done): one step of Michelot's iteration from a lower bound τ. On S = {v > τ} ⊇
    support, τ_S = (Σ_S v - mass)/|S| is again a lower bound, and larger; when S stops changing
    (the same sums give the same τ_S), τ is the root."""
    n, total, _squares = _sums(v, k, tau)
    return _sparsemax_update(mass, tau, n, total)


@njit(cache=True, inline="always")
def _sparsemax_update(mass, tau, n, total):
    """`_sparsemax_step` from the sums over S = {v > τ}."""
    t = (total - mass) / n
    if not t > tau:
        return tau, True
    return t, False


@njit(cache=True)
def _sparsemax_tau(v, k, mass, tau):
    """τ with Σ[v - τ]₊ = mass (sparsemax at mass 1), from a lower bound `tau`."""
    for _ in range(_MAX_ITERS):
        tau, done = _sparsemax_step(v, k, mass, tau)
        if done:
            break
    return tau


@njit(cache=True, inline="always")
def _entmax15_step(v, k, tau):
    """(τ', done): one step towards the 1.5-entmax τ from a lower bound, on candidates that
    include every entry above it. The closed form on S = {v > τ} is the root when S is exactly
    the entries above it; otherwise a Newton step from below."""
    n, s1, s2 = _sums(v, k, tau)
    return _entmax15_update(v, k, tau, n, s1, s2)


@njit(cache=True, inline="always")
def _entmax15_closed_form(n, s1, s2):
    """The t with Σ_S (v - t)² = 1 and t below the mean of S, from the sums (n, Σ v, Σ v²)
    over S; -inf when there is none. It is the root when S = {v > t}."""
    mean = s1 / n
    disc = 1.0 / n - (s2 / n - mean * mean)
    return mean - math.sqrt(disc) if disc >= 0 else -np.inf


@njit(cache=True, inline="always")
def _entmax15_newton(tau, n, s1, s2):
    """A Newton step from below τ on the 2-norm ‖[v - τ]₊‖ = 1, from the sums over S = {v > τ}
    (convex, and nearly straight, so it takes about a quarter fewer steps than on
    Σ[v - τ]₊² = 1): with q = Σ_S (v - τ)², the norm is √q and its slope -Σ_S (v - τ) / √q."""
    q = s2 - 2.0 * tau * s1 + n * tau * tau
    norm = math.sqrt(q)
    return tau + (norm - 1.0) * q / (norm * (s1 - n * tau))


@njit(cache=True, inline="always")
def _entmax15_update(v, k, tau, n, s1, s2):
    """`_entmax15_step` from the sums (n, Σ v, Σ v²) over S = {v > τ}."""
    t = _entmax15_closed_form(n, s1, s2)
    if t >= tau and _count_above(v, k, t) == n:  # S = {v > t} (t ≥ τ): the root
        return t, True
    new = _entmax15_newton(tau, n, s1, s2)
    if new <= tau:
        return tau, True
    return new, False


@njit(cache=True)
def _entmax15_tau(v, k, tau):
    """Exact τ from a lower bound `tau`, on candidates that include every entry above it."""
    for _ in range(_MAX_ITERS):
        tau, done = _entmax15_step(v, k, tau)
        if done:
            break
    return tau


@njit(cache=True)
def _bound_steps(v, k, kind, steps):
    """A lower bound on τ from `steps` steps from -1 (Michelot's at α = 2, Newton's on the 2-norm
    at α = 1.5): each iterate is below the root, and no step is spent certifying it."""
    tau = -1.0
    for _ in range(steps):
        n, s1, s2 = _sums(v, k, tau)
        if kind == SPARSEMAX:
            new = (s1 - 1.0) / n
        else:
            new = _entmax15_newton(tau, n, s1, s2)
        if not new > tau:
            break
        tau = new
    return tau


@njit(cache=True)
def _tangent_bound(v, k, beta, rounds):
    r"""A lower bound on τ for β > 1 without a single power.

    $u^\beta$ is convex, so $u^\beta \ge \beta c^{\beta-1} u - (\beta-1) c^\beta$ for any c > 0
    (its tangent at c). Replacing $[u]_+^\beta$ by the tangent's positive part turns the
    normalisation into a sparsemax problem, $\sum_i [v_i - \sigma]_+ = 1 / (\beta c^{\beta-1})$,
    whose root $\sigma$ gives $\tau \ge \sigma - c(\beta-1)/\beta$. The bound is tight when the
    support's $u_i$ are near c; three rounds move c to about half the current $-\tau$.
    """
    bound, c = -1.0, 1.0
    for _ in range(rounds):
        slope = beta * c ** (beta - 1.0)
        if not slope > 0:  # c^(β-1) underflows (α near 1): no better bound from here
            break
        sigma = _sparsemax_tau(v, k, 1.0 / slope, -1.0 / slope)
        bound = max(bound, sigma - c * (beta - 1.0) / beta)
        c = -bound * (beta - 1.0) / beta
    return bound


@njit(cache=True)
def _keep_above(v, index, k, bound):
    """Drop the candidates at or below a lower bound on τ; return how many remain."""
    bound -= 1e-9  # slack against rounding in the bound
    kept = 0
    for i in range(k):  # branch-free compaction, as in the gathering pass
        x = v[i]
        v[kept] = x
        index[kept] = index[i]
        kept += x > bound
    return kept


@njit(cache=True, error_model="numpy")
def _general_tau(v, k, alpha, tau, power):
    r"""τ from a lower bound by Halley's method on $F(\tau) = \sum_i [v_i - \tau]_+^\beta = 1$,
    β = 1/(α-1), kept inside a bracket that every evaluation narrows (a step that leaves it is
    replaced by bisection); `power` receives $[v - \tau]_+^\beta$ at (within 8 ulp of) the root.

    One evaluation gives $F$, $F' = -\beta \sum u^{\beta-1}$ and
    $F'' = \beta(\beta-1) \sum u^{\beta-2}$ (each from $u^\beta$ by a division), so a step costs one
    power per candidate and converges cubically: two or three steps from the tangent bound.
    """
    beta = 1.0 / (alpha - 1.0)
    lo, hi = tau, -((1.0 / k) ** (alpha - 1.0))  # F(lo) ≥ 1 ≥ F(hi)
    width = -(-k // _BLOCK) * _BLOCK  # whole vectors: a loop's scalar remainder costs more
    for i in range(k, width):  # (v and power have room for them)
        v[i] = -np.inf
    for _ in range(_MAX_ITERS):
        total, slope, curve = _power_sums(v, width, tau, beta, power)
        if not slope > 0:  # every u^(β-1) underflowed: τ is as close as float64 can tell
            break
        g = total - 1.0
        if g >= 0:
            lo = tau
        else:
            hi = tau
        d1 = -beta * slope
        d2 = beta * (beta - 1.0) * curve
        step = -2.0 * g * d1 / (2.0 * d1 * d1 - g * d2)
        if beta > 1.0 and abs(step) <= _TOL or abs(g) <= _TOL or hi - lo <= _TOL:
            break
        new = tau + step
        # For α > 2 (β < 1) F has an infinite slope where an entry enters the support, so a
        # tiny step does not mean a root: there, and outside the bracket, bisect instead.
        if not lo < new < hi or abs(step) <= _TOL:
            new = 0.5 * (lo + hi)
        tau = new
    return tau


# ---------------------------------------------------------------------------------------------
# Rows.


_BLOCK = 8  # entries per block of the first pass
# rounds of the tangent bound: near α = 1 the power curves more sharply and a third round pays
_TANGENT_ROUNDS_BELOW_1_4, _TANGENT_ROUNDS = 3, 2
_BOUND_STEPS = 2  # enough for a tight bound; more cost more than the blocks they close


@njit(cache=True, inline="always")
def _max2(a, b):
    return a if a > b else b


@njit(cache=True, inline="always")
def _row_max(z):
    """max z, as eight independent running maxima (a chain of d/8 compares, not d)."""
    d = z.shape[0]
    best = z[0]
    full = d // _BLOCK
    for b in range(full):
        s = b * _BLOCK
        low = _max2(_max2(z[s], z[s + 1]), _max2(z[s + 2], z[s + 3]))
        high = _max2(_max2(z[s + 4], z[s + 5]), _max2(z[s + 6], z[s + 7]))
        best = _max2(_max2(low, high), best)
    for t in range(full * _BLOCK, d):
        best = _max2(z[t], best)
    return float(best)


@njit(cache=True)
def _block_maxima(z, maxima):
    """maxima[b] = the maximum of block b; returns the row maximum.

    With w = d // 8, block b < w is the column {z[b], z[b + w], ..., z[b + 7w]}: the maxima are
    then elementwise maxima of eight contiguous slices, which vectorise in the input's own
    precision (contiguous blocks of 8 need a horizontal maximum each, at twice the cost). The
    last d - 8w entries, if any, form block w.
    """
    d = z.shape[0]
    w = d // _BLOCK
    for b in range(w):  # a tree of independent maxima, not a chain: the CPU overlaps them
        low = _max2(_max2(z[b], z[b + w]), _max2(z[b + 2 * w], z[b + 3 * w]))
        high = _max2(_max2(z[b + 4 * w], z[b + 5 * w]), _max2(z[b + 6 * w], z[b + 7 * w]))
        maxima[b] = _max2(low, high)
    if w < maxima.shape[0]:
        best = z[w * _BLOCK]
        for t in range(w * _BLOCK + 1, d):
            best = _max2(z[t], best)
        maxima[w] = best
    return _row_max(maxima)


_SHORT = 64  # rows up to this width skip the blocks (see _forward_row)


@njit(cache=True)
def _gather_short(z, scale, index, v):
    """(row max, -1, n): the n entries with z̃ above max z̃ - 1, for a short row."""
    row_max = z[0]
    for j in range(1, z.shape[0]):
        row_max = _max2(z[j], row_max)
    row_max = float(row_max)
    n = 0
    for j in range(z.shape[0]):
        x = scale * (z[j] - row_max)
        v[n] = x
        index[n] = j
        n += x > -1.0
    return row_max, -1.0, n


@njit(cache=True)
def _gather_whole_blocks(z, kind, alpha, index, v, block_max, block_v, block_index):
    """(row max, bound, n): a lower bound on τ from the block maxima, and in v[:n] (in units of
    z̃ relative to the maximum) the entries of every block whose maximum lies above it. The open
    blocks are listed without a branch and copied whole, fixed-length copies that vectorise; the
    τ steps then run branch-free over them. When more than half the blocks are open (a wide
    support, as at α near 1), one pass over the row keeps just the entries above the bound."""
    d = z.shape[0]
    scale = alpha - 1.0
    # α = 2 and 1.5 floor the values at -2 (never in the support); other α keep them as they
    # are, since the tangent bound's sparsemax problems may reach below -2
    floor = -np.inf if kind == GENERAL else -2.0
    blocks = (d + _BLOCK - 1) // _BLOCK
    row_max = float(_block_maxima(z, block_max[:blocks]))
    if row_max == -np.inf:
        return row_max, -1.0, 0
    for b in range(blocks):  # block maxima in units of z̃ relative to the maximum
        x = scale * (block_max[b] - row_max)
        block_v[b] = x if x > floor else floor
    if kind != GENERAL:
        bound = _bound_steps(block_v, blocks, kind, _BOUND_STEPS)
    elif alpha < 2.0:
        rounds = _TANGENT_ROUNDS_BELOW_1_4 if alpha < 1.4 else _TANGENT_ROUNDS
        bound = _tangent_bound(block_v, blocks, 1.0 / scale, rounds)
    else:
        bound = -1.0
    limit = bound - 1e-9  # slack against rounding in the bound
    opened = 0
    for b in range(blocks):  # the open blocks' numbers, listed without a branch to mispredict
        block_index[opened] = b
        opened += block_v[b] > limit
    n = 0
    if 2 * opened > blocks:  # a wide support: one pass that keeps only the entries above it
        for j in range(d):  # (branch-free compaction: write always, advance when kept)
            x = scale * (z[j] - row_max)
            v[n] = x
            index[n] = j
            n += x > limit
        return row_max, bound, n
    w = d // _BLOCK
    for i in range(opened):
        b = block_index[i]
        if b < w:  # a column: a fixed trip count the compiler unrolls
            for t in range(_BLOCK):
                x = scale * (z[b + t * w] - row_max)
                v[n + t] = x if x > floor else floor
                index[n + t] = b + t * w
            n += _BLOCK
        else:
            for t in range(w * _BLOCK, d):
                x = scale * (z[t] - row_max)
                v[n] = x if x > floor else floor
                index[n] = t
                n += 1
    return row_max, bound, n


@njit(cache=True, fastmath=_REORDER)
def _scaled_row(z, scale, row_max, v):
    """v = z̃ - max z̃ for the whole row, floored at -2 (τ ≥ -1, so such entries are never in the
    support, and a -inf score becomes a finite number the branch-free sums can add); returns
    `_sums(v, d, -1)`, the first τ step's sums, from the same pass."""
    n, s1, s2 = 0.0, 0.0, 0.0
    for j in range(z.shape[0]):
        x = scale * (z[j] - row_max)
        x = x if x > -2.0 else -2.0
        v[j] = x
        y = x if x > -1.0 else 0.0
        n += 1.0 if x > -1.0 else 0.0
        s1 += y
        s2 += y * y
    return n, s1, s2


@njit(cache=True, inline="always")
def _write_output(z, scale, row_max, tau, kind, out):
    """out = [z̃ - max z̃ - τ]₊ (α = 2) or its square (α = 1.5): one branch-free pass over the row,
    in the input's precision (a float32 row takes twice the entries per vector; its values
    differ from float64's by a rounding of z̃ - max z̃ ≤ 1 on the support, about 1e-7)."""
    real = z.dtype.type
    s, m, t, zero = real(scale), real(row_max), real(tau), real(0.0)
    if kind == SPARSEMAX:
        for j in range(z.shape[0]):
            u = s * (z[j] - m) - t
            out[j] = u if u > zero else zero
    else:
        for j in range(z.shape[0]):
            u = s * (z[j] - m) - t
            out[j] = u * u if u > zero else zero


@njit(cache=True, inline="always")
def _forward_row(z, kind, alpha, out, index, v, power, block_max, block_v, block_index):
    """Write α-entmax of the row z into out; return τ on z̃ = (α-1) z (NaN: every entry -inf)
    and n: the support is among the columns index[:n].

    (Rows up to _SHORT wide at α = 2 and 1.5 go to `_short_span` instead.) On longer rows: the
    threshold of any subset of the scores is at most the row's (fewer terms need a lower τ to
    reach mass 1). The first pass takes the maximum of every block of 8 entries (a column of the
    row read as 8 slices; see `_block_maxima`); the threshold of those maxima is a lower bound
    on τ, and only the blocks whose maximum lies above it can hold support entries: on typical
    rows a handful of blocks are read again.
    """
    d = z.shape[0]
    scale = alpha - 1.0
    if d <= _SHORT:  # general α only
        row_max, bound, n = _gather_short(z, scale, index, v)
    else:
        row_max, bound, n = _gather_whole_blocks(
            z, kind, alpha, index, v, block_max, block_v, block_index
        )
    if row_max == -np.inf:
        return np.nan, 0
    if kind == SPARSEMAX:
        tau = _sparsemax_tau(v, n, 1.0, bound)
    elif kind == ENTMAX15:
        tau = _entmax15_tau(v, n, bound)
    else:
        out[:] = 0
        # (a second tangent bound on these candidates costs more than the Halley steps it saves)
        n = _keep_above(v, index, n, bound)
        tau = _general_tau(v, n, alpha, bound, power)
        scale_out = 1.0 / _total(power, n)
        for i in range(n):  # power is 0 off the support: no branch needed
            out[index[i]] = power[i] * scale_out
        return tau + scale * row_max, n
    _write_output(z, scale, row_max, tau, kind, out)
    return tau + scale * row_max, n


@njit(cache=True)
def _fenchel_young_row(z, p, index, n, kind, alpha, target):
    r"""$L_\alpha(z; y) = (1 - \sum_j p_j^\alpha) / (\alpha(\alpha-1)) + p^\top z - z_y$, summed
    over the support (the columns index[:n] where p > 0)."""
    sum_pow, pz = 0.0, 0.0
    for i in range(n):
        j = index[i]
        pj = float(p[j])
        if pj > 0:
            pz += pj * z[j]
            if kind == SPARSEMAX:
                sum_pow += pj * pj
            elif kind == ENTMAX15:
                sum_pow += pj * math.sqrt(pj)
            else:
                sum_pow += math.exp(alpha * math.log(pj))
    return (1.0 - sum_pow) / (alpha * (alpha - 1.0)) + pz - z[target]


@njit(cache=True, fastmath=_REORDER)
def _backward_row(p, grad, kind, alpha, out):
    """out = J grad for the row p = α-entmax(z), J = diag(g) - g gᵀ / Σg, g = p^(2-α) on S.

    At α = 2 and 1.5 both passes are branch-free (g = [p > 0] or √p, 0 off the support), so
    they vectorise like softmax's backward; other α need a power on the support only.
    """
    total_g, total_gx = 0.0, 0.0
    for j in range(p.shape[0]):
        pj = p[j]
        if kind == SPARSEMAX:
            g = 1.0 * (pj > 0)
        elif kind == ENTMAX15:
            g = math.sqrt(pj)
        elif pj > 0:
            g = math.exp((2.0 - alpha) * math.log(pj))
        else:
            g = 0.0
        total_g += g
        total_gx += g * grad[j]
        out[j] = g
    q = total_gx / total_g
    for j in range(p.shape[0]):
        out[j] = out[j] * (grad[j] - q)


_LANES = 8  # short rows solved side by side (see _short_span)


@njit(cache=True, error_model="numpy")
def _short_span(z, kind, alpha, out, tau, start, stop, target, loss):
    """`_forward_span` for rows up to _SHORT wide at α = 2 and 1.5, solved on the whole row.

    Every pass over a row is branch-free and vectorised; what is left of a step is a few
    divisions and square roots per row, and their latency. So _LANES rows step together:
    each step makes the passes of every lane still running, then updates all lanes at once in
    loops over the lanes that vectorise (a division or square root for 4 lanes at a time, and
    no branch to mispredict).
    """
    d = z.shape[1]
    scale = alpha - 1.0
    v = np.empty((_LANES, d), np.float64)
    row_max = np.empty(_LANES, np.float64)
    lane_tau = np.full(_LANES, -1.0)
    n = np.empty(_LANES, np.float64)
    s1 = np.empty(_LANES, np.float64)
    s2 = np.empty(_LANES, np.float64)
    t = np.empty(_LANES, np.float64)  # the closed form on S (α = 1.5), or +inf
    above = np.empty(_LANES, np.float64)
    running = np.empty(_LANES, np.float64)  # 1.0 while a lane has not converged
    index = np.arange(d)
    masked = 0
    for first in range(start, stop, _LANES):
        lanes = min(_LANES, stop - first)
        for b in range(_LANES):
            r = first + b if b < lanes else first  # spare lanes repeat the first row
            row_max[b] = _row_max(z[r])
            lane_tau[b], running[b] = -1.0, 0.0
            n[b], s1[b], s2[b] = 1.0, 0.0, 0.0
            if row_max[b] != -np.inf and b < lanes:
                n[b], s1[b], s2[b] = _scaled_row(z[r], scale, row_max[b], v[b])
                running[b] = 1.0
        for _ in range(_MAX_ITERS):
            if kind == SPARSEMAX:
                for b in range(_LANES):  # Michelot's step; done when S stops changing
                    new = (s1[b] - 1.0) / n[b]
                    moved = running[b] > 0 and new > lane_tau[b]
                    lane_tau[b] = new if moved else lane_tau[b]
                    running[b] = 1.0 if moved else 0.0
            else:
                for b in range(_LANES):  # `_entmax15_update`, for every lane at once
                    root = _entmax15_closed_form(n[b], s1[b], s2[b])
                    t[b] = root if root >= lane_tau[b] and running[b] > 0 else np.inf
                for b in range(_LANES):
                    above[b] = _count_above(v[b], d, t[b]) if t[b] < np.inf else -1.0
                for b in range(_LANES):
                    found = above[b] == n[b]  # S = {v > t}: the root
                    tb = lane_tau[b]
                    new = _entmax15_newton(tb, n[b], s1[b], s2[b])
                    moved = running[b] > 0 and not found and new > tb
                    lane_tau[b] = t[b] if found else (new if moved else tb)
                    running[b] = 1.0 if moved else 0.0
            active = False
            for b in range(_LANES):
                if running[b] > 0:
                    active = True
                    n[b], s1[b], s2[b] = _sums(v[b], d, lane_tau[b])
            if not active:
                break
        for b in range(lanes):
            r = first + b
            if row_max[b] == -np.inf:
                tau[r] = np.nan
                masked += 1
                continue
            _write_output(z[r], scale, row_max[b], lane_tau[b], kind, out[r])
            tau[r] = lane_tau[b] + scale * row_max[b]
            if target.shape[0]:
                loss[r] = _fenchel_young_row(z[r], out[r], index, d, kind, alpha, target[r])
    return masked


@njit(cache=True)
def _forward_span(z, kind, alpha, out, tau, start, stop, target, loss):
    """Rows start..stop; returns how many of them are entirely -inf (their τ is NaN). With
    targets (loss mode: `target` has one class per row), also each row's Fenchel–Young loss."""
    d = z.shape[1]
    if kind != GENERAL and d <= _SHORT:
        return _short_span(z, kind, alpha, out, tau, start, stop, target, loss)
    index = np.empty(d, np.int64)
    v = np.empty(d + _BLOCK, np.float64)  # room to pad a row's candidates to whole vectors
    power = np.empty(d + _BLOCK if kind == GENERAL else 0, np.float64)
    block_v = np.empty((d + _BLOCK - 1) // _BLOCK, np.float64)
    block_max = np.empty(block_v.shape[0], z.dtype)  # maxima in the input's precision: exact
    block_index = np.empty(block_v.shape[0], np.int64)
    masked = 0
    for r in range(start, stop):
        t, n = _forward_row(
            z[r], kind, alpha, out[r], index, v, power, block_max, block_v, block_index
        )
        tau[r] = t
        if np.isnan(t):
            masked += 1
        elif target.shape[0]:
            loss[r] = _fenchel_young_row(z[r], out[r], index, n, kind, alpha, target[r])
    return masked


@njit(cache=True)
def _forward_serial(z, kind, alpha, out, tau, target, loss):
    return _forward_span(z, kind, alpha, out, tau, 0, z.shape[0], target, loss)


@njit(cache=True, parallel=True)
def _forward_parallel(z, kind, alpha, out, tau, target, loss, chunks):
    rows = z.shape[0]
    masked = 0
    for c in prange(chunks):
        start, stop = c * rows // chunks, (c + 1) * rows // chunks
        masked += _forward_span(z, kind, alpha, out, tau, start, stop, target, loss)
    return masked


@njit(cache=True)
def _backward_serial(p, grad, kind, alpha, out):
    for r in range(p.shape[0]):
        _backward_row(p[r], grad[r], kind, alpha, out[r])


@njit(cache=True, parallel=True)
def _backward_parallel(p, grad, kind, alpha, out):
    for r in prange(p.shape[0]):
        _backward_row(p[r], grad[r], kind, alpha, out[r])


# ---------------------------------------------------------------------------------------------
# Entry points on NumPy arrays.


def _threads_for(entries: int, rows: int, threads: int) -> int:
    if threads <= 1 or rows < 2 or entries < _PARALLEL_MIN_ENTRIES or not _parallel_works():
        return 1
    threads = min(threads, rows, numba.config.NUMBA_NUM_THREADS)
    if numba.get_num_threads() != threads:
        numba.set_num_threads(threads)
    return threads


_NO_TARGETS = np.empty(0, np.int64)


def forward(z: np.ndarray, alpha: float, threads: int = 1) -> tuple[np.ndarray, np.ndarray, int]:
    """(p, τ, masked) for α > 1 on C-contiguous rows z (rows, d): τ (rows,) in the dtype of z,
    and the number of rows whose every entry is -inf (their p is 0 and τ NaN)."""
    out = np.empty_like(z)
    tau = np.empty(z.shape[0], z.dtype)
    masked = _run_forward(z, alpha, threads, out, tau, _NO_TARGETS, tau)
    return out, tau, masked


def fenchel_young(
    z: np.ndarray, target: np.ndarray, alpha: float, threads: int = 1
) -> tuple[np.ndarray, np.ndarray, int]:
    """(p, loss, masked): α-entmax of the rows z (rows, d) and each row's Fenchel–Young loss
    against the class target (rows,) int64, in one pass; masked as in `forward`."""
    out = np.empty_like(z)
    loss = np.empty(z.shape[0], z.dtype)
    tau = np.empty(z.shape[0], z.dtype)
    masked = _run_forward(z, alpha, threads, out, tau, target, loss)
    return out, loss, masked


def _run_forward(z, alpha, threads, out, tau, target, loss) -> int:
    if not z.size:
        return 0
    kind = kind_of(alpha)
    workers = _threads_for(z.size, z.shape[0], threads)
    if workers > 1:
        return _forward_parallel(z, kind, float(alpha), out, tau, target, loss, workers)
    return _forward_serial(z, kind, float(alpha), out, tau, target, loss)


def backward(p: np.ndarray, grad: np.ndarray, alpha: float, threads: int = 1) -> np.ndarray:
    """J grad for the rows p = α-entmax(z) (rows, d), in the dtype of p."""
    out = np.empty_like(p)
    if p.size:
        kind = kind_of(alpha)
        if _threads_for(p.size, p.shape[0], threads) > 1:
            _backward_parallel(p, grad, kind, float(alpha), out)
        else:
            _backward_serial(p, grad, kind, float(alpha), out)
    return out


@functools.cache
def _parallel_works() -> bool:
    """Whether the parallel kernels run here (they need a thread-safe layer: OpenMP or TBB);
    compiles them for both dtypes on the first call. Without one, everything runs serially."""
    try:
        for dtype in (np.float32, np.float64):
            z = np.arange(6, dtype=dtype).reshape(2, 3)
            for alpha in (1.5, 2.0, 1.3):
                kind = kind_of(alpha)
                out, tau = np.empty_like(z), np.empty(2, dtype)
                _forward_parallel(z, kind, alpha, out, tau, _NO_TARGETS, tau, 1)
                _backward_parallel(out, np.ones_like(out), kind, alpha, np.empty_like(out))
    except Exception:  # numba raises its own errors when no threading layer loads
        logging.getLogger(__name__).warning("entmax kernels: no thread-safe layer; serial only")
        return False
    return True


def warm_up() -> None:
    """Compile (or load from the disk cache) every kernel for float32 and float64."""
    for dtype in (np.float32, np.float64):
        z = np.arange(6, dtype=dtype).reshape(2, 3)
        for alpha in (1.5, 2.0, 1.3):
            p, _, _ = forward(z, alpha)
            fenchel_young(z, np.zeros(2, np.int64), alpha)
            backward(p, np.ones_like(p), alpha)
    _parallel_works()
