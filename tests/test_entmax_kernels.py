"""The compiled kernels (models/entmax_kernels.py) against the torch path and the reference package.

The public functions take the kernels on CPU float tensors; `set_backend("torch")` gives the torch
path on the same inputs, so each test can compare the two.
"""

from __future__ import annotations

from contextlib import contextmanager

import entmax as reference
import numpy as np
import pytest
import torch

import models.entmax as entmax_module
from models import entmax_kernels
from models.entmax import entmax, entmax_loss, entmax_with_tau, set_backend

ALPHAS = [1.01, 1.25, 1.33, 1.5, 1.75, 2.0, 2.5, 3.0]
WIDTHS = [1, 2, 3, 7, 8, 9, 30, 64, 65, 257, 1000, 4099]
TOL = {torch.float64: 1e-12, torch.float32: 2e-6}


@contextmanager
def backend(name: str):
    previous = set_backend(name)
    try:
        yield
    finally:
        set_backend(previous)


def torch_path(x: torch.Tensor, alpha: float) -> tuple[torch.Tensor, torch.Tensor]:
    with backend("torch"):
        return entmax_with_tau(x, alpha)


def reference_entmax(x: torch.Tensor, alpha: float) -> torch.Tensor:
    x = x.double()
    if alpha == 1.5:
        return reference.entmax15(x, dim=-1)
    if alpha == 2:
        return reference.sparsemax(x, dim=-1)
    return reference.entmax_bisect(x, alpha, dim=-1, n_iter=80)


def assert_same(ours: torch.Tensor, theirs: torch.Tensor, dtype: torch.dtype) -> None:
    assert ours.dtype == dtype
    torch.testing.assert_close(ours, theirs.to(dtype), atol=TOL[dtype], rtol=TOL[dtype])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("alpha", ALPHAS)
def test_kernel_matches_torch_path_and_reference(alpha, dtype):
    gen = torch.Generator().manual_seed(int(alpha * 100))
    for width in WIDTHS:
        x = (torch.randn(6, width, generator=gen, dtype=torch.float64) * 3).to(dtype)
        p, tau = entmax_with_tau(x, alpha)
        p_torch, tau_torch = torch_path(x, alpha)
        assert_same(p, p_torch, dtype)
        torch.testing.assert_close(tau, tau_torch, atol=1e-5, rtol=1e-5)
        # the reference's bisection is accurate to ~1e-7 in float64
        torch.testing.assert_close(p.double(), reference_entmax(x, alpha), atol=1e-6, rtol=1e-6)


def adversarial_rows(dtype: torch.dtype) -> dict[str, torch.Tensor]:
    ascending = torch.linspace(-3, 3, 500, dtype=dtype)
    return {
        "all equal": torch.zeros(3, 50, dtype=dtype),
        "two-way tie at the top": torch.tensor([[5.0, 5.0, 1.0, 0.0, -1.0]], dtype=dtype),
        "ascending (every entry a candidate when first read)": ascending.unsqueeze(0),
        "descending": ascending.flip(0).unsqueeze(0),
        "huge scale": torch.randn(4, 300, dtype=torch.float64).to(dtype) * 1e6,
        "tiny scale": torch.randn(4, 300, dtype=torch.float64).to(dtype) * 1e-7,
        "one finite entry": torch.tensor([[-torch.inf, 2.0, -torch.inf, -torch.inf]], dtype=dtype),
        "masked half": torch.cat(
            [torch.randn(3, 40, dtype=dtype), torch.full((3, 40), -torch.inf, dtype=dtype)], 1
        ),
        "spike over a plateau": torch.cat(
            [torch.full((2, 1), 10.0, dtype=dtype), torch.ones(2, 2000, dtype=dtype)], 1
        ),
    }


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("alpha", [1.25, 1.5, 2.0, 3.0])
def test_adversarial_rows(alpha, dtype):
    for name, x in adversarial_rows(dtype).items():
        p = entmax(x, alpha)
        p_torch, _ = torch_path(x, alpha)
        assert torch.allclose(p.sum(-1).double(), torch.ones(len(x), dtype=torch.float64)), name
        assert_same(p, p_torch, dtype)
        assert bool((p[x == -torch.inf] == 0).all()), name


def test_ties_share_equally_and_masks_are_exact_zeros():
    x = torch.tensor([[3.0, 3.0, 3.0, -torch.inf, 0.0]])
    for alpha in (1.5, 2.0, 1.3):
        p = entmax(x, alpha)
        assert p[0, 0] == p[0, 1] == p[0, 2]
        assert p[0, 3] == 0


@pytest.mark.parametrize("alpha", [1.5, 2.0, 1.3])
def test_all_masked_row_raises(alpha):
    x = torch.randn(3, 70)
    x[1] = -torch.inf
    with pytest.raises(ValueError, match="every score equal to -inf"):
        entmax(x, alpha)


@pytest.mark.parametrize("alpha", [1.2, 1.5, 2.0, 2.5])
@pytest.mark.parametrize("width", [8, 30, 100])
def test_gradcheck_on_the_kernel_path(alpha, width):
    """Rows of 100 exercise the blocks of the first pass (the torch path's pooling starts at 64)."""
    x = (torch.randn(3, width, dtype=torch.float64) * 2).requires_grad_()
    assert torch.autograd.gradcheck(lambda z: entmax(z, alpha), (x,), eps=1e-6, atol=1e-5)


@pytest.mark.parametrize("alpha", [1.33, 1.5, 2.0])
def test_kernel_backward_equals_torch_path_backward(alpha):
    x = torch.randn(16, 500, dtype=torch.float64) * 3
    w = torch.randn(16, 500, dtype=torch.float64)
    grads = []
    for name in ("compiled", "torch"):
        leaf = x.clone().requires_grad_()
        with backend(name):
            (entmax(leaf, alpha) * w).sum().backward()
        grads.append(leaf.grad)
    torch.testing.assert_close(grads[0], grads[1], atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("alpha", [1.5, 2.0, 1.7])
def test_a_recorded_gradient_takes_one_kernel_node_for_any_leading_shape(alpha):
    """With a gradient to record, `entmax` on the last dim is one autograd node (no reshapes,
    no τ), for 1-D to 3-D inputs, with the torch path's gradient."""
    for shape in [(30,), (4, 30), (2, 3, 70)]:
        x = torch.randn(*shape, dtype=torch.float64) * 2
        w = torch.randn(*shape, dtype=torch.float64)
        grads = []
        for name in ("compiled", "torch"):
            leaf = x.clone().requires_grad_()
            with backend(name):
                p = entmax(leaf, alpha)
            if name == "compiled":
                assert type(p.grad_fn).__name__ == "_CompiledProbabilitiesFunctionBackward"
                assert p.grad_fn.next_functions[0][0].variable is leaf
            (p * w).sum().backward()
            grads.append(leaf.grad)
        torch.testing.assert_close(grads[0], grads[1], atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("alpha", [1.5, 2.0, 1.25])
def test_losses_on_both_paths_agree(alpha):
    x = torch.randn(40, 300, dtype=torch.float64) * 2
    y = torch.randint(0, 300, (40,))
    values = []
    for name in ("compiled", "torch"):
        leaf = x.clone().requires_grad_()
        with backend(name):
            loss = entmax_loss(leaf, y, alpha)
            loss.backward()
        values.append((loss.detach(), leaf.grad))
    torch.testing.assert_close(values[0][0], values[1][0], atol=1e-12, rtol=1e-12)
    torch.testing.assert_close(values[0][1], values[1][1], atol=1e-12, rtol=1e-12)


def test_threads_split_rows_and_agree_with_one_thread():
    z = np.random.default_rng(0).standard_normal((64, 2000)).astype(np.float32)
    for alpha in (1.5, 2.0, 1.4):
        p1, tau1, _ = entmax_kernels.forward(z, alpha, threads=1)
        p2, tau2, _ = entmax_kernels.forward(z, alpha, threads=2)
        np.testing.assert_array_equal(p1, p2)
        np.testing.assert_array_equal(tau1, tau2)
        g = np.ones_like(p1)
        np.testing.assert_array_equal(
            entmax_kernels.backward(p1, g, alpha, 1), entmax_kernels.backward(p1, g, alpha, 2)
        )


def test_dispatch_takes_the_kernels_only_for_cpu_float_rows():
    compiled = entmax_module._compiled
    assert compiled(torch.zeros(2, 3))
    assert compiled(torch.zeros(2, 3, dtype=torch.float64))
    assert not compiled(torch.zeros(2, 3, dtype=torch.float16))
    assert not compiled(torch.zeros(2, 3, device="meta"))  # stands in for a CUDA tensor
    with backend("torch"):
        assert not compiled(torch.zeros(2, 3))


def test_kernel_path_is_the_one_taken(monkeypatch):
    """A broken kernel must show: the public function really goes through it."""
    calls = []
    original = entmax_kernels.forward

    def spy(*args, **kwargs):
        calls.append(args[1])
        return original(*args, **kwargs)

    monkeypatch.setattr(entmax_kernels, "forward", spy)
    entmax(torch.randn(2, 5), 1.5)
    entmax(torch.randn(2, 5), torch.tensor(1.3))
    assert calls == [1.5, pytest.approx(1.3)]
    entmax(torch.randn(2, 5, dtype=torch.float16).float(), torch.tensor([[1.3], [1.6]]))
    assert len(calls) == 2  # a per-row α takes the torch path


def test_without_numba_the_torch_path_serves(monkeypatch):
    x = torch.randn(5, 80)
    expected = entmax(x, 1.5)
    monkeypatch.setattr(entmax_module, "_kernels", None)
    monkeypatch.setattr(entmax_module, "_backend", "torch")
    with pytest.raises(ValueError, match="needs numba"):
        set_backend("compiled")
    torch.testing.assert_close(entmax(x, 1.5), expected, atol=1e-6, rtol=1e-6)


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="must be one of"):
        set_backend("gpu")


def test_warm_up_compiles_every_kernel():
    entmax_kernels.warm_up()
    for kernel in (entmax_kernels._forward_serial, entmax_kernels._backward_serial):
        assert len(kernel.signatures) >= 2  # float32 and float64
