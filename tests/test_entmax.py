"""models/entmax.py against the reference `entmax` package, plus gradients, masks and losses."""

from __future__ import annotations

import entmax as reference
import pytest
import torch
import torch.nn.functional as F

from models import entmax as entmax_module
from models.entmax import (
    entmax,
    entmax15,
    entmax15_loss,
    entmax_loss,
    entmax_with_tau,
    sparsemax,
    sparsemax_loss,
)
from tests.entmax_backends import each_backend  # noqa: F401 (autouse: every test on both)

ALPHAS = [1.0, 1.01, 1.25, 1.5, 1.75, 2.0, 3.0]
TOL = {torch.float64: 1e-6, torch.float32: 1e-5}
SMALL_SHAPES = [(1, 1), (1, 2), (2, 1), (3, 5), (4, 7, 3), (2, 3, 4, 5), (16, 100), (5, 257)]


def reference_entmax(x: torch.Tensor, alpha: float, dim: int) -> torch.Tensor:
    """The reference package's mapping, evaluated in float64 on the given (possibly float32) scores.

    In float32 the reference's own bisection is off by up to 1.5e-5 near the support boundary at
    α = 3 (p ∝ u^0.5 amplifies the rounding of τ), so float32 results are compared with the
    reference's float64 answer for the same float32 inputs.
    """
    return _reference_entmax(x.double(), alpha, dim).to(x.dtype)


def _reference_entmax(x: torch.Tensor, alpha: float, dim: int) -> torch.Tensor:
    if alpha == 1:
        return torch.softmax(x, dim)
    if alpha == 1.5:
        return reference.entmax15(x, dim=dim)
    if alpha == 2:
        return reference.sparsemax(x, dim=dim)
    return reference.entmax_bisect(x, alpha, dim=dim, n_iter=60)


def assert_close(ours: torch.Tensor, ref: torch.Tensor, dtype: torch.dtype) -> None:
    assert ours.shape == ref.shape
    assert not torch.isnan(ours).any()
    torch.testing.assert_close(ours, ref, atol=TOL[dtype], rtol=TOL[dtype])


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("shape", SMALL_SHAPES)
def test_agrees_with_reference_on_every_dim(shape, alpha, dtype):
    gen = torch.Generator().manual_seed(hash((shape, alpha)) % 2**31)
    x = torch.randn(shape, generator=gen, dtype=dtype) * 2
    for dim in range(-len(shape), len(shape)):
        assert_close(entmax(x, alpha, dim=dim), reference_entmax(x, alpha, dim), dtype)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("alpha", [1.25, 1.5, 2.0])
def test_general_path_agrees_with_exact_reference(alpha, dtype):
    """A tensor α takes the Newton solver even at 1.5 and 2; it must match the sort-based one."""
    x = torch.randn(32, 300, generator=torch.Generator().manual_seed(1), dtype=dtype)
    ours = entmax(x, torch.tensor(alpha, dtype=dtype))
    assert_close(ours, reference_entmax(x, alpha, -1), dtype)


@pytest.mark.parametrize(
    ("shape", "alpha"),
    [((64, 32000), 1.5), ((8, 32000), 2.0), ((8, 32000), 1.25), ((256, 1000), 1.5),
     ((64, 1000), 2.0), ((64, 1000), 1.75), ((3000, 30), 1.5), ((500, 30), 3.0)],
)  # fmt: skip
def test_agrees_with_reference_on_large_float32(shape, alpha):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(2)) * 3
    assert_close(entmax(x, alpha), reference_entmax(x, alpha, -1), torch.float32)


@pytest.mark.parametrize("alpha", [1.3, 1.5, 2.0, 3.0])
@pytest.mark.parametrize("width", [64, 65])
def test_whole_row_and_pooled_paths_meet(width, alpha):
    """Rows of up to 64 entries are solved whole (sorted in blocks of rows), longer ones pooled."""
    x = torch.randn(300, width, generator=torch.Generator().manual_seed(10), dtype=torch.float64)
    x[::7, ::3] = float("-inf")
    assert_close(entmax(x, alpha), reference_entmax(x, alpha, -1), torch.float64)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("scale", [1e-5, 1e4])
def test_extreme_scales(scale, alpha, dtype):
    x = torch.randn(8, 50, generator=torch.Generator().manual_seed(3), dtype=dtype) * scale
    ours = entmax(x, alpha)
    assert torch.isfinite(ours).all()
    assert_close(ours, reference_entmax(x, alpha, -1), dtype)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("alpha", ALPHAS)
def test_ties(alpha, dtype):
    x = torch.randint(-2, 3, (20, 12), generator=torch.Generator().manual_seed(4)).to(dtype)
    x[0] = 1.0  # a row of identical scores: the uniform distribution
    ours = entmax(x, alpha)
    torch.testing.assert_close(ours[0], torch.full((12,), 1 / 12, dtype=dtype))
    assert_close(ours, reference_entmax(x, alpha, -1), dtype)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("alpha", ALPHAS)
def test_masked_entries_get_exact_zero(alpha, dtype):
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(10, 40, generator=gen, dtype=dtype) * 3
    mask = torch.rand(10, 40, generator=gen) < 0.5
    mask[:, 0] = False  # every row keeps one entry
    mask[1, 1:] = True  # one row with a single unmasked entry
    x = x.masked_fill(mask, float("-inf"))
    ours = entmax(x, alpha)
    assert (ours[mask] == 0).all()
    torch.testing.assert_close(ours[1, 0], torch.tensor(1.0, dtype=dtype))
    assert_close(ours, reference_entmax(x, alpha, -1), dtype)


@pytest.mark.parametrize("alpha", [*ALPHAS, torch.tensor(1.3)])
def test_all_masked_row_raises(alpha):
    x = torch.randn(3, 5)
    x[1] = float("-inf")
    with pytest.raises(ValueError, match="every score equal to -inf"):
        entmax(x, alpha)


@pytest.mark.parametrize("alpha", [1.0, 1.3, 1.5, 2.0])
def test_empty_batch(alpha):
    for width in (10, 1000):
        x = torch.empty(0, width, requires_grad=True)
        p = entmax(x, alpha)
        assert p.shape == (0, width)
        p.sum().backward()
        assert x.grad.shape == (0, width)


def test_alpha_below_one_raises():
    with pytest.raises(ValueError, match="alpha must be >= 1"):
        entmax(torch.randn(2, 3), 0.5)
    with pytest.raises(ValueError, match="alpha must be >= 1"):
        entmax(torch.randn(2, 3), torch.tensor([[0.9], [1.5]]))


def softmax_by_hand(x: torch.Tensor, dim: int) -> torch.Tensor:
    """exp(x - max) / sum in float64: shares no code with entmax or torch.softmax."""
    e = torch.exp(x.double() - x.double().amax(dim, keepdim=True))
    return e / e.sum(dim, keepdim=True)


def test_alpha_one_is_exactly_softmax():
    x = torch.randn(7, 33) * 4
    assert torch.equal(entmax(x, 1.0), torch.softmax(x, -1))  # the promise: bit for bit
    assert torch.equal(entmax(x, 1.0, dim=0), torch.softmax(x, 0))
    for alpha in (1.0, torch.tensor(1.0)):
        for dim in (0, 1):
            torch.testing.assert_close(
                entmax(x, alpha, dim=dim).double(), softmax_by_hand(x, dim), rtol=1e-6, atol=1e-8
            )


def test_named_mappings_match_the_reference():
    """sparsemax and entmax15 are entmax at 2 and 1.5, so the reference package judges them."""
    x = torch.randn(6, 20, dtype=torch.float64) * 2
    torch.testing.assert_close(sparsemax(x), reference.sparsemax(x, dim=-1), rtol=0, atol=1e-12)
    torch.testing.assert_close(entmax15(x, dim=0), reference.entmax15(x, dim=0), rtol=0, atol=1e-12)
    assert ((sparsemax(x) == 0).any(-1)).all()  # scores this spread leave some out


@pytest.mark.parametrize("alpha", [1.0, 1.3, 1.5, 2.0, 2.5])
def test_tau_reproduces_probabilities(alpha):
    x = torch.randn(4, 6, 9, dtype=torch.float64)
    x[0, 0, :4] = float("-inf")
    p, tau = entmax_with_tau(x, alpha, dim=1)
    assert tau.shape == (4, 1, 9)
    if alpha == 1:
        expected = torch.exp(x - tau)
    else:
        expected = ((alpha - 1) * x - tau).clamp_min(0) ** (1 / (alpha - 1))
    torch.testing.assert_close(p, expected)
    finite = torch.isfinite(x)
    if alpha == 1:
        assert torch.equal(p > 0, finite)  # softmax: every finite score is in the support
    else:
        assert torch.equal(p > 0, (alpha - 1) * x > tau)  # exactly the scores above τ
        assert ((p > 0).sum(1) < finite.sum(1)).any()  # and τ leaves some finite ones out


def test_per_row_alpha_tensor():
    x = torch.randn(4, 3, 10, dtype=torch.float64)
    alpha = torch.tensor([1.0, 1.2, 1.5, 2.0], dtype=torch.float64).view(4, 1, 1)
    ours = entmax(x, alpha)
    for i, a in enumerate(alpha.flatten().tolist()):
        torch.testing.assert_close(ours[i], reference_entmax(x[i], a, -1))
    # the shape of x without `dim` is accepted too
    torch.testing.assert_close(entmax(x, alpha.view(4, 1)), ours)


# --- gradients --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mapping",
    [sparsemax, entmax15, lambda x: entmax(x, 1.0), lambda x: entmax(x, 1.25),
     lambda x: entmax(x, 1.75), lambda x: entmax(x, 3.0), lambda x: entmax(x, 1.5, dim=0)],
)  # fmt: skip
def test_gradcheck_mappings(mapping):
    x = torch.randn(5, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(6))
    x[0, :3] = float("-inf")
    assert torch.autograd.gradcheck(mapping, (x.requires_grad_(),))


def test_backward_is_zero_outside_support():
    x = torch.randn(6, 30, dtype=torch.float64, requires_grad=True)
    for mapping in (sparsemax, entmax15, lambda t: entmax(t, 1.3)):
        p = mapping(x)
        (grad,) = torch.autograd.grad((p * torch.randn_like(p)).sum(), x)
        assert (grad[p == 0] == 0).all()
        # rows of J sum to zero: the gradient of sum(p) is 0
        (grad_sum,) = torch.autograd.grad(mapping(x).sum(), x)
        torch.testing.assert_close(grad_sum, torch.zeros_like(grad_sum))


@pytest.mark.parametrize("alpha_shape", [(), (5, 1)])
def test_gradcheck_alpha(alpha_shape):
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(5, 7, dtype=torch.float64, generator=gen).requires_grad_()
    alpha = (
        1.1 + 1.8 * torch.rand(alpha_shape, dtype=torch.float64, generator=gen)
    ).requires_grad_()
    assert torch.autograd.gradcheck(lambda x, a: entmax(x, a), (x, alpha))


def test_alpha_gradient_matches_reference():
    x = torch.randn(6, 11, dtype=torch.float64)
    w = torch.randn(6, 11, dtype=torch.float64)
    ours = torch.full((6, 1), 1.4, dtype=torch.float64, requires_grad=True)
    theirs = torch.full((6, 1), 1.4, dtype=torch.float64, requires_grad=True)
    (entmax(x, ours) * w).sum().backward()
    (reference.entmax_bisect(x, theirs, n_iter=60) * w).sum().backward()
    torch.testing.assert_close(ours.grad, theirs.grad)


def test_alpha_gradient_at_one_is_the_limit():
    """At α = 1 exactly the closed form is 0/0; the limit formula must match finite differences."""
    x = torch.randn(4, 9, dtype=torch.float64)
    w = torch.randn(4, 9, dtype=torch.float64)
    alpha = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    (entmax(x, alpha) * w).sum().backward()

    def one_sided(h: float) -> torch.Tensor:
        return ((entmax(x, 1 + h) - torch.softmax(x, -1)) * w).sum() / h

    h = 1e-4
    richardson = 2 * one_sided(h) - one_sided(2 * h)  # cancels the O(h) error
    torch.testing.assert_close(alpha.grad, richardson, atol=1e-6, rtol=1e-6)


# --- losses -------------------------------------------------------------------------------------

LOSSES = [
    (sparsemax_loss, lambda **kw: reference.SparsemaxLoss(**kw), 2.0),
    (entmax15_loss, lambda **kw: reference.Entmax15Loss(**kw), 1.5),
    (
        lambda x, y, **kw: entmax_loss(x, y, 1.25, **kw),
        lambda **kw: reference.EntmaxBisectLoss(alpha=1.25, n_iter=60, **kw),
        1.25,
    ),
]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize(("ours", "theirs", "alpha"), LOSSES)
def test_losses_agree_with_reference(ours, theirs, alpha, dtype):
    gen = torch.Generator().manual_seed(8)
    x = torch.randn(40, 25, generator=gen, dtype=dtype) * 2
    y = torch.randint(0, 25, (40,), generator=gen)
    y[::7] = 3  # the index ignored below
    for ours_red, their_red in [("none", "none"), ("sum", "sum"), ("mean", "elementwise_mean")]:
        got = ours(x, y, reduction=ours_red, ignore_index=3)
        want = theirs(reduction=their_red, ignore_index=3)(x, y)
        assert_close(got, want, dtype)


def test_softmax_loss_is_cross_entropy():
    x = torch.randn(10, 6, dtype=torch.float64)
    y = torch.randint(0, 6, (10,))
    y[2] = -100
    torch.testing.assert_close(entmax_loss(x, y, 1.0), F.cross_entropy(x, y))


@pytest.mark.parametrize("alpha", [1.0, 1.25, 1.5, 2.0])
def test_gradcheck_losses(alpha):
    gen = torch.Generator().manual_seed(9)
    x = torch.randn(2, 3, 6, dtype=torch.float64, generator=gen)
    x[0, 0, 4:] = float("-inf")
    y = torch.randint(0, 4, (2, 3), generator=gen)
    y[1, 2] = -100
    for reduction in ("none", "sum", "mean"):
        assert torch.autograd.gradcheck(
            lambda t, r=reduction: entmax_loss(t, y, alpha, reduction=r),
            (x.clone().requires_grad_(),),
        )


@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0, 1.3])
def test_loss_gradient_is_p_minus_onehot_and_masks_are_finite(alpha):
    x = torch.randn(12, 30, dtype=torch.float64)
    mask = torch.rand(12, 30) < 0.6
    y = torch.randint(0, 30, (12,))
    mask[torch.arange(12), y] = False
    x = x.masked_fill(mask, float("-inf")).requires_grad_()
    loss = entmax_loss(x, y, alpha, reduction="sum")
    assert torch.isfinite(loss)
    (grad,) = torch.autograd.grad(loss, x)
    expected = entmax(x.detach(), alpha) - F.one_hot(y, 30).to(x.dtype)
    torch.testing.assert_close(grad, expected)
    assert (grad[mask] == 0).all()


def test_loss_ignores_fully_masked_padding_rows():
    x = torch.randn(3, 5)
    x[2] = float("-inf")
    y = torch.tensor([1, 4, -100])
    loss = entmax15_loss(x, y, reduction="none")
    assert loss[2] == 0 and torch.isfinite(loss).all()
    torch.testing.assert_close(entmax15_loss(x, y), loss[:2].mean())
    all_ignored = entmax15_loss(x, torch.full((3,), -100))
    assert all_ignored == 0


def test_loss_rejects_bad_arguments():
    with pytest.raises(ValueError, match="reduction"):
        sparsemax_loss(torch.randn(2, 3), torch.tensor([0, 1]), reduction="avg")
    with pytest.raises(ValueError, match="targets of shape"):
        sparsemax_loss(torch.randn(2, 3), torch.tensor([0, 1, 2]))


# ---- α = 1 given as a tensor, and long rows ----
# Through the public API only (so these hold for any implementation behind it): the gradient
# w.r.t. the scores when α = 1 is given as a tensor (alone, or per row next to other α values),
# and every backward pass on rows longer than 64 entries, where the forward pass pools the scores
# before solving (gradcheck above uses rows of 8 and 30). Gradients are checked against torch's
# own softmax, the reference `entmax` package, and finite differences, on each backend.


LONG = [65, 100, 300, 1000]  # past the 64 entries up to which rows are solved whole


def grads(fn, *inputs: torch.Tensor, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """Gradients of <fn(*inputs), w> for a fixed random w, w.r.t. every input."""
    leaves = [t.detach().clone().requires_grad_(True) for t in inputs]
    out = fn(*leaves)
    w = torch.randn(out.shape, dtype=out.dtype, generator=torch.Generator().manual_seed(seed))
    return torch.autograd.grad((out * w).sum(), leaves)


# ---- α = 1 as a tensor ----


@pytest.mark.parametrize("alpha_requires_grad", [False, True])
def test_gradient_at_alpha_one_as_a_tensor_is_softmax_gradient(alpha_requires_grad: bool) -> None:
    x = torch.randn(4, 9, dtype=torch.float64) * 3
    alpha = torch.tensor(1.0, dtype=torch.float64, requires_grad=alpha_requires_grad)
    (ours,) = grads(lambda z: entmax(z, alpha), x)
    (expected,) = grads(lambda z: torch.softmax(z, -1), x)
    torch.testing.assert_close(ours, expected, atol=1e-12, rtol=1e-10)
    (as_float,) = grads(lambda z: entmax(z, 1.0), x)
    torch.testing.assert_close(as_float, expected, atol=1e-12, rtol=1e-10)


def test_gradient_of_softmax_rows_in_a_per_row_alpha_batch() -> None:
    x = torch.randn(4, 12, dtype=torch.float64) * 2
    alpha = torch.tensor([[1.0], [1.5], [1.0], [2.0]], dtype=torch.float64)
    (ours,) = grads(lambda z: entmax(z, alpha), x)
    (soft,) = grads(lambda z: torch.softmax(z, -1), x)
    torch.testing.assert_close(ours[[0, 2]], soft[[0, 2]], atol=1e-12, rtol=1e-10)
    (e15,) = grads(lambda z: reference.entmax15(z, dim=-1), x)
    (sp,) = grads(lambda z: reference.sparsemax(z, dim=-1), x)
    torch.testing.assert_close(ours[1], e15[1], atol=1e-10, rtol=1e-8)
    torch.testing.assert_close(ours[3], sp[3], atol=1e-10, rtol=1e-8)


def test_gradcheck_at_alpha_one_as_a_tensor() -> None:
    x = torch.randn(3, 7, dtype=torch.float64, requires_grad=True)
    alpha = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    # α stays a tensor at exactly 1 (finite differences in α would leave the domain α ≥ 1)
    assert torch.autograd.gradcheck(lambda z: entmax(z, alpha), (x,))


# ---- long rows ----


def long_scores(d: int, seed: int) -> torch.Tensor:
    """Rows with a clear head (a few large scores) and a long tail, like trained logits."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(3, d, dtype=torch.float64, generator=g)
    x[:, : d // 20 + 2] += 3 * torch.rand(3, d // 20 + 2, dtype=torch.float64, generator=g)
    return x[:, torch.randperm(d, generator=g)]


@pytest.mark.parametrize("d", LONG)
@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (sparsemax, lambda z: reference.sparsemax(z, dim=-1)),
        (entmax15, lambda z: reference.entmax15(z, dim=-1)),
        (lambda z: entmax(z, 1.3), lambda z: reference.entmax_bisect(z, 1.3, n_iter=60)),
        (lambda z: entmax(z, 2.5), lambda z: reference.entmax_bisect(z, 2.5, n_iter=60)),
    ],
    ids=["sparsemax", "entmax15", "alpha1.3", "alpha2.5"],
)
def test_long_row_score_gradients_match_the_reference(d: int, ours, theirs) -> None:  # type: ignore[no-untyped-def]
    x = long_scores(d, seed=d)
    p = ours(x)
    assert ((p > 0).sum(-1) < d).all()  # sparse rows: the pooled path has work to do
    torch.testing.assert_close(grads(ours, x)[0], grads(theirs, x)[0], atol=1e-9, rtol=1e-7)


@pytest.mark.parametrize("d", LONG)
def test_long_row_alpha_tensor_gradients_match_the_reference(d: int) -> None:
    x = long_scores(d, seed=d + 1)
    alpha = torch.tensor([[1.2], [1.6], [2.2]], dtype=torch.float64)
    ours = grads(lambda z, a: entmax(z, a), x, alpha)
    theirs = grads(lambda z, a: reference.entmax_bisect(z, a, n_iter=60), x, alpha)
    torch.testing.assert_close(ours[0], theirs[0], atol=1e-9, rtol=1e-7)
    torch.testing.assert_close(ours[1], theirs[1], atol=1e-9, rtol=1e-7)


@pytest.mark.parametrize("d", [80])
def test_gradcheck_on_long_rows(d: int) -> None:
    x = long_scores(d, seed=7).requires_grad_(True)
    alpha = torch.tensor([[1.4], [1.5], [2.0]], dtype=torch.float64, requires_grad=True)
    for fn in (sparsemax, entmax15, lambda z: entmax(z, 1.75)):
        assert torch.autograd.gradcheck(fn, (x,), atol=1e-6)
    assert torch.autograd.gradcheck(lambda z, a: entmax(z, a), (x, alpha), atol=1e-6)


@pytest.mark.parametrize("d", LONG)
def test_long_row_loss_gradients_match_the_reference(d: int) -> None:
    x = long_scores(d, seed=d + 2)
    y = torch.tensor([0, d // 2, d - 1])
    cases = [
        (sparsemax_loss, reference.SparsemaxLoss(reduction="none")),
        (entmax15_loss, reference.Entmax15Loss(reduction="none")),
    ]
    for ours, theirs in cases:
        expected = grads(lambda z, loss=theirs: loss(z, y), x)[0]
        got = grads(lambda z, loss=ours: loss(z, y, reduction="none"), x)[0]
        torch.testing.assert_close(got, expected, atol=1e-9, rtol=1e-7)
    ours_alpha = grads(lambda z: entmax_loss(z, y, 1.3, reduction="none"), x)[0]
    theirs_alpha = reference.EntmaxBisectLoss(alpha=1.3, n_iter=60, reduction="none")
    torch.testing.assert_close(
        ours_alpha, grads(lambda z: theirs_alpha(z, y), x)[0], atol=1e-9, rtol=1e-7
    )


# ---- dispatch, dtypes, edge shapes and the loss's refusals ----


def test_the_named_mappings_match_the_reference_on_the_last_dim_without_grad() -> None:
    """entmax15 and sparsemax on the last dim with no gradient to record take the kernels'
    shortcut (on the compiled backend); nothing else in this file reaches it."""
    torch.manual_seed(0)
    x = torch.randn(2, 5, 33, dtype=torch.float64) * 3
    for ours, theirs in ((entmax15, reference.entmax15), (sparsemax, reference.sparsemax)):
        torch.testing.assert_close(ours(x), theirs(x, dim=-1), atol=1e-12, rtol=0)
        torch.testing.assert_close(ours(x, dim=2), theirs(x, dim=-1), atol=1e-12, rtol=0)


@pytest.mark.parametrize("alpha", [1.5, 2.0, 1.3])
@pytest.mark.parametrize("d", [5, 40, 64, 65, 300])
def test_float32_scores_are_solved_in_float64(alpha: float, d: int) -> None:
    """Rounding only at the end: a float32 input gives the float64 answer rounded to float32
    (solving in float32 is off by up to 20 ulps on these rows)."""
    gen = torch.Generator().manual_seed(d)
    torch.manual_seed(0)
    x = torch.randn(16, d, generator=gen) * torch.rand(16, 1, generator=gen) * 20
    p, tau = entmax_with_tau(x, alpha)
    p64, tau64 = entmax_with_tau(x.double(), alpha)
    assert p.dtype == tau.dtype == torch.float32
    eps = torch.finfo(torch.float32).eps
    torch.testing.assert_close(p, p64.float(), atol=eps, rtol=0)
    torch.testing.assert_close(tau, tau64.float(), atol=0, rtol=4 * eps)


def test_alpha_per_row_of_a_matrix() -> None:
    """α of shape (rows,) for scores (rows, d): one α per row, as for any other rank."""
    torch.manual_seed(0)
    x = torch.randn(3, 11, dtype=torch.float64)
    alpha = torch.tensor([1.25, 1.5, 2.0], dtype=torch.float64)
    expected = torch.stack([reference.entmax_bisect(x[i], alpha[i].item()) for i in range(3)])
    torch.testing.assert_close(entmax(x, alpha), expected, atol=1e-6, rtol=0)


def test_a_float64_alpha_tensor_keeps_float32_scores_float32() -> None:
    torch.manual_seed(0)
    x = torch.randn(4, 9)
    for alpha in (torch.tensor(1.5, dtype=torch.float64), torch.full((4, 1), 1.7).double()):
        p, tau = entmax_with_tau(x, alpha)
        assert p.dtype == tau.dtype == torch.float32


@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0, 1.7])
def test_tau_of_a_single_entry_dim(alpha: float) -> None:
    x = torch.tensor([[1.9], [-1.2], [0.3]], dtype=torch.float64)
    p, tau = entmax_with_tau(x, alpha)
    torch.testing.assert_close(p, torch.ones_like(x), atol=1e-12, rtol=0)
    assert tau.shape == (3, 1)
    scale = alpha - 1 if alpha != 1 else 1.0
    # p = [(α-1)x - τ]^(1/(α-1)) = 1, so τ = (α-1)x - 1; at α = 1, τ = logsumexp = x
    torch.testing.assert_close(tau, x if alpha == 1 else scale * x - 1)


def test_all_masked_rows_are_refused_by_the_loss_with_the_sentence() -> None:
    x = torch.tensor([[0.0, 1.0], [-torch.inf, -torch.inf]], dtype=torch.float64)
    for alpha in (1.5, 2.0, 1.3):
        with pytest.raises(ValueError, match="every score equal to -inf"):
            entmax_loss(x, torch.tensor([1, 0]), alpha)


def test_the_loss_refusals_say_what_is_wrong() -> None:
    torch.manual_seed(0)
    x = torch.randn(2, 3, 5)
    with pytest.raises(ValueError, match=r"^entmax_loss: alpha must be >= 1, got 0.5$"):
        entmax_loss(x, torch.zeros(2, 3, dtype=torch.long), 0.5)
    with pytest.raises(
        ValueError,
        match=r"^entmax_loss: scores \(2, 3, 5\) need targets of shape \(2, 3\), got \(2,\)$",
    ):
        entmax_loss(x, torch.zeros(2, dtype=torch.long), 1.5)


@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0])
def test_the_mean_over_one_kept_position_is_its_loss(alpha: float) -> None:
    torch.manual_seed(0)
    x = torch.randn(3, 4, dtype=torch.float64)
    target = torch.tensor([-100, 2, -100])
    alone = entmax_loss(x[1:2], target[1:2], alpha, reduction="sum")
    torch.testing.assert_close(entmax_loss(x, target, alpha), alone)


@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0])
def test_ignored_positions_with_a_single_class(alpha: float) -> None:
    """The stand-in target of an ignored position must be a class that exists: 0."""
    torch.manual_seed(0)
    x = torch.randn(3, 1, dtype=torch.float64)
    loss = entmax_loss(x, torch.tensor([0, -100, 0]), alpha, reduction="none")
    torch.testing.assert_close(loss, torch.zeros(3, dtype=torch.float64))


def test_alpha_gradient_at_softmax_stays_finite_where_probabilities_underflow() -> None:
    """Softmax of [0, -1000] is exactly [1, 0]: the zero must not enter log(p)^2."""
    x = torch.tensor([[0.0, -1000.0, -3.0]], dtype=torch.float64)
    alpha = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    (grad_alpha,) = torch.autograd.grad((entmax(x, alpha) * torch.tensor([1.0, 2, 3])).sum(), alpha)
    assert torch.isfinite(grad_alpha)
    # the two-entry answer: the underflowed entry adds nothing
    two = torch.tensor([[0.0, -3.0]], dtype=torch.float64)
    alpha2 = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    (expected,) = torch.autograd.grad((entmax(two, alpha2) * torch.tensor([1.0, 3])).sum(), alpha2)
    torch.testing.assert_close(grad_alpha, expected)


def test_each_backend_runs_its_own_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled backend hands every float32/float64 call with α > 1 to the kernels, the
    torch backend none: a dispatch slip would still give right answers (the other path), so
    only the calls tell it."""
    kernels = entmax_module._kernels
    if kernels is None:
        pytest.skip("numba is not installed")
    calls: list[str] = []
    for name in ("forward", "backward", "fenchel_young"):
        real = getattr(kernels, name)
        monkeypatch.setattr(
            kernels, name, lambda *a, _real=real, _name=name: calls.append(_name) or _real(*a)
        )
    torch.manual_seed(0)
    x = torch.randn(3, 7, dtype=torch.float64)
    for scores in (x, x.float()):
        entmax(scores, 1.5), sparsemax(scores), entmax15(scores), entmax(scores, 1.3)
    entmax(x, torch.tensor(1.7, dtype=torch.float64))  # one α as a tensor, no gradient
    leaf = x.clone().requires_grad_(True)
    entmax(leaf, 1.3).sum().backward()  # the autograd function: forward and backward
    entmax_loss(leaf, torch.tensor([0, 1, 2]), 1.5).backward()
    entmax(x, 1.0), entmax(x.half(), 1.5)  # softmax and float16 never reach the kernels
    expected = ["forward"] * 9 + ["forward", "backward", "fenchel_young"]
    assert calls == (expected if entmax_module._backend == "compiled" else [])


@pytest.mark.parametrize("alpha", [1.5, 2.0, 1.3])
def test_no_rows_give_no_thresholds(alpha: float) -> None:
    p, tau = entmax_with_tau(torch.zeros(0, 5, dtype=torch.float64), alpha)
    assert p.shape == (0, 5) and tau.shape == (0, 1)


@pytest.mark.parametrize("alpha", [2.25, 2.5, 2.9])
def test_alpha_between_two_and_three_matches_the_reference(alpha: float) -> None:
    """Past sparsemax the root finder leaves the smooth regime (1/(α-1) - 1 < 0): entries
    below τ must not enter its slope."""
    torch.manual_seed(0)
    x = torch.randn(6, 40, dtype=torch.float64) * 2
    expected = reference.entmax_bisect(x, alpha, n_iter=200)
    torch.testing.assert_close(entmax(x, alpha), expected, atol=1e-8, rtol=0)
    per_row = torch.full((6, 1), alpha, dtype=torch.float64)
    torch.testing.assert_close(entmax(x, per_row), expected, atol=1e-8, rtol=0)


def test_set_backend_says_what_it_accepts(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(
        ValueError, match=r"^entmax backend must be one of \('compiled', 'torch'\), got 'gpu'$"
    ):
        entmax_module.set_backend("gpu")
    previous = entmax_module.set_backend("torch")
    assert entmax_module.set_backend(previous) == "torch"
    monkeypatch.setattr(entmax_module, "_kernels", None)
    with pytest.raises(
        ValueError, match=r"^the compiled entmax backend needs numba: pip install numba$"
    ):
        entmax_module.set_backend("compiled")
    entmax_module.set_backend("torch")  # the torch path needs nothing


def test_a_softmax_row_keeps_its_alpha_gradient_in_a_mixed_batch() -> None:
    """∂p/∂α of a row with α = 1 is the same whether the other rows are softmax or not."""
    torch.manual_seed(0)
    x = torch.randn(2, 6, dtype=torch.float64)
    weights = torch.randn(2, 6, dtype=torch.float64)

    def alpha_grad(alphas: list[float]) -> torch.Tensor:
        alpha = torch.tensor([[a] for a in alphas], dtype=torch.float64, requires_grad=True)
        ((entmax(x, alpha) * weights).sum()).backward()
        return alpha.grad[0]

    mixed, alone = alpha_grad([1.0, 1.5]), alpha_grad([1.0, 1.0])
    assert float(alone.abs()) > 1e-3
    torch.testing.assert_close(mixed, alone)


def test_an_alpha_below_one_is_refused_with_the_sentence() -> None:
    x = torch.randn(2, 4)
    for alpha in (torch.tensor([[0.5], [1.5]]), torch.tensor(0.9)):
        with pytest.raises(ValueError, match=r"^entmax: every alpha must be >= 1$"):
            entmax(x, alpha)
