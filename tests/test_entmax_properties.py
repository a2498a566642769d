"""Property tests for models/entmax.py: what must hold for every input, not just sampled ones."""

from __future__ import annotations

import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from models.entmax import entmax, entmax_loss
from tests.entmax_backends import each_backend  # noqa: F401 (autouse: every test on both)

SETTINGS = settings(max_examples=60, deadline=None)

finite = st.floats(min_value=-30, max_value=30, allow_nan=False, width=64)
alphas = st.one_of(st.sampled_from([1.0, 1.5, 2.0]), st.floats(min_value=1.0, max_value=4.0))


@st.composite
def score_rows(draw, max_rows: int = 4, max_len: int = 40) -> torch.Tensor:
    n = draw(st.integers(1, max_len))
    rows = draw(st.integers(1, max_rows))
    values = draw(st.lists(finite, min_size=rows * n, max_size=rows * n))
    return torch.tensor(values, dtype=torch.float64).view(rows, n)


@SETTINGS
@given(x=score_rows(), alpha=alphas)
def test_rows_are_distributions(x, alpha):
    p = entmax(x, alpha)
    assert (p >= 0).all()
    torch.testing.assert_close(p.sum(-1), torch.ones(x.shape[0], dtype=x.dtype))


@SETTINGS
@given(x=score_rows(), alpha=alphas, data=st.data())
def test_permutation_equivariant(x, alpha, data):
    perm = torch.tensor(data.draw(st.permutations(range(x.shape[-1]))))
    torch.testing.assert_close(entmax(x[:, perm], alpha), entmax(x, alpha)[:, perm])


@SETTINGS
@given(x=score_rows())
def test_alpha_one_is_softmax(x):
    assert torch.equal(entmax(x, 1.0), torch.softmax(x, -1))  # the promise: bit for bit
    e = torch.exp(x - x.amax(-1, keepdim=True))  # and softmax by hand, sharing no code
    by_hand = e / e.sum(-1, keepdim=True)
    torch.testing.assert_close(entmax(x, 1.0), by_hand)
    torch.testing.assert_close(entmax(x, torch.tensor(1.0, dtype=x.dtype)), by_hand)


@SETTINGS
@given(x=score_rows(max_len=20), alpha=st.floats(min_value=1.2, max_value=4.0), data=st.data())
def test_loss_is_zero_exactly_when_gold_wins_by_the_margin(x, alpha, data):
    """L_α(z; y) = 0 iff z_y ≥ z_j + 1/(α-1) for every j ≠ y (Peters et al. 2019, §3)."""
    assume(x.shape[-1] >= 2)
    rows = x.shape[0]
    classes = st.integers(0, x.shape[-1] - 1)
    y = torch.tensor(data.draw(st.lists(classes, min_size=rows, max_size=rows)))
    # margin as a multiple of 1/(α-1). Values within 10% of the boundary, and α near 1, are left
    # out: there the loss is positive but scales like the shortfall to the power 1/(α-1), which
    # underflows float64.
    factor = data.draw(st.one_of(st.floats(0.0, 0.9), st.floats(1.0, 3.0)))
    others = x.scatter(1, y.unsqueeze(1), -torch.inf).amax(-1)
    x = x.scatter(1, y.unsqueeze(1), (others + factor / (alpha - 1)).unsqueeze(1))
    loss = entmax_loss(x, y, alpha, reduction="none")
    # the loss is a difference of terms as large as the scores: its rounding error grows with
    # them (a margin of exactly 1/(α-1) over 16.0 gave -1.7e-11)
    scale = 1 + float(x[x.isfinite()].abs().max())
    assert (loss >= -1e-11 * scale).all()
    if factor >= 1:
        assert (loss.abs() <= 1e-9).all()
    else:
        assert (loss > 0).all()
