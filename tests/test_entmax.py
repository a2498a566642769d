"""models/entmax.py against the reference `entmax` package, plus gradients, masks and losses."""

from __future__ import annotations

import entmax as reference
import pytest
import torch
import torch.nn.functional as F

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
