"""The compiled kernels (models/entmax_kernels.py) against the torch path and the reference package.

The public functions take the kernels on CPU float tensors; `set_backend("torch")` gives the torch
path on the same inputs, so each test can compare the two.

Every test runs twice: with one torch thread, and with two, where the kernels split rows among
threads (`_forward_parallel` cuts the rows into one chunk per thread; `_backward_parallel` takes
them by `prange`). In the two-thread run the size below which the kernels stay serial is set to
0, so even a test's few rows take the threaded path, and the row counts are odd, so the chunks
are uneven: a chunking slip that leaves a row uncomputed, or computes one twice into another's
place, fails the comparisons.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager

import entmax as reference
import numba
import numpy as np
import pytest
import torch

import models.entmax as entmax_module
from models import entmax_kernels
from models.entmax import entmax, entmax_loss, entmax_with_tau, set_backend

ALPHAS = [1.01, 1.25, 1.33, 1.5, 1.75, 2.0, 2.5, 3.0]
WIDTHS = [1, 2, 3, 7, 8, 9, 30, 64, 65, 257, 1000, 4099]
TOL = {torch.float64: 1e-12, torch.float32: 2e-6}


@functools.cache
def parallel_available() -> bool:
    """Whether numba runs a parallel loop here on two threads or more (a thread-safe layer
    loads), probed apart from the kernels: a threaded kernel that fails must fail its tests,
    not pass for a machine without the layer."""
    if numba.config.NUMBA_NUM_THREADS < 2:
        return False

    @numba.njit(parallel=True)
    def probe(n):
        total = 0
        for i in numba.prange(n):
            total += i
        return total

    try:
        return probe(10) == 45
    except Exception:  # numba raises its own errors when no threading layer loads
        return False


def test_the_threaded_kernels_run_wherever_numba_runs_parallel_loops():
    """`_parallel_works` turns the threaded kernels off, with a warning, where no thread-safe
    layer loads; here one does, so a threaded kernel that cannot run is a failure."""
    if not parallel_available():
        pytest.skip("numba runs no parallel loop on two threads here")
    assert entmax_kernels._parallel_works()


@pytest.fixture(autouse=True, params=[1, 2], ids=["1-thread", "2-threads"])
def torch_threads(request, monkeypatch):
    """Each test with 1 and with 2 torch threads (the kernels follow torch's count); with 2,
    the threaded kernels take every input of more than one row."""
    threads = request.param
    if threads > 1 and not parallel_available():
        pytest.skip("the parallel kernels need two numba threads and a thread-safe layer")
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    if threads > 1:
        monkeypatch.setattr(entmax_kernels, "_PARALLEL_MIN_ENTRIES", 0)
    try:
        yield threads
    finally:
        torch.set_num_threads(previous)


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
        x = (torch.randn(7, width, generator=gen, dtype=torch.float64) * 3).to(dtype)
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
        "huge scale": torch.randn(5, 300, dtype=torch.float64).to(dtype) * 1e6,
        "tiny scale": torch.randn(5, 300, dtype=torch.float64).to(dtype) * 1e-7,
        "one finite entry": torch.tensor([[-torch.inf, 2.0, -torch.inf, -torch.inf]], dtype=dtype),
        "masked half": torch.cat(
            [torch.randn(3, 40, dtype=dtype), torch.full((3, 40), -torch.inf, dtype=dtype)], 1
        ),
        "spike over a plateau": torch.cat(
            [torch.full((3, 1), 10.0, dtype=dtype), torch.ones(3, 2000, dtype=dtype)], 1
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


@pytest.mark.parametrize("masked_row", [0, 1, 2])
@pytest.mark.parametrize("alpha", [1.5, 2.0, 1.3])
def test_all_masked_row_raises(alpha, masked_row):
    """Whichever row it is: with two threads the first, the chunk edge and the last row."""
    x = torch.randn(3, 70)
    x[masked_row] = -torch.inf
    with pytest.raises(ValueError, match="every score equal to -inf"):
        entmax(x, alpha)
    with pytest.raises(ValueError, match="every score equal to -inf"):
        entmax_loss(x, torch.zeros(3, dtype=torch.long), alpha)


@pytest.mark.parametrize("alpha", [1.2, 1.5, 2.0, 2.5])
@pytest.mark.parametrize("width", [8, 30, 100])
def test_gradcheck_on_the_kernel_path(alpha, width):
    """Rows of 100 exercise the blocks of the first pass (the torch path's pooling starts at 64)."""
    x = (torch.randn(3, width, dtype=torch.float64) * 2).requires_grad_()
    assert torch.autograd.gradcheck(lambda z: entmax(z, alpha), (x,), eps=1e-6, atol=1e-5)


@pytest.mark.parametrize("alpha", [1.33, 1.5, 2.0])
def test_kernel_backward_equals_torch_path_backward(alpha):
    x = torch.randn(17, 500, dtype=torch.float64) * 3
    w = torch.randn(17, 500, dtype=torch.float64)
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
    for shape in [(30,), (5, 30), (3, 3, 70)]:
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
    x = torch.randn(41, 300, dtype=torch.float64) * 2
    y = torch.randint(0, 300, (41,))
    values = []
    for name in ("compiled", "torch"):
        leaf = x.clone().requires_grad_()
        with backend(name):
            loss = entmax_loss(leaf, y, alpha)
            loss.backward()
        values.append((loss.detach(), leaf.grad))
    torch.testing.assert_close(values[0][0], values[1][0], atol=1e-12, rtol=1e-12)
    torch.testing.assert_close(values[0][1], values[1][1], atol=1e-12, rtol=1e-12)


def assert_same_up_to_summation_order(threaded: np.ndarray, serial: np.ndarray) -> None:
    """The threaded and the serial backward kernels are compiled apart, and the compiler may
    add a row's Σ g_j p̄_j in another order in each: a few units in the last place apart, never
    more (a row left uncomputed or computed twice is far more)."""
    eps = np.finfo(serial.dtype).eps
    np.testing.assert_allclose(threaded, serial, rtol=0, atol=8 * eps * np.abs(serial).max())


def test_threads_split_rows_and_agree_with_one_thread(torch_threads):
    """Above the size where the kernels go parallel by themselves (65 rows of 2,000: 130,000
    entries), two threads give every row exactly what one thread gives."""
    if not parallel_available():
        pytest.skip("the parallel kernels need two numba threads and a thread-safe layer")
    z = np.random.default_rng(0).standard_normal((65, 2000)).astype(np.float32)
    assert z.size >= 1 << 15  # entmax_kernels._PARALLEL_MIN_ENTRIES, unpatched
    for alpha in (1.5, 2.0, 1.4):
        p2, tau2, _ = entmax_kernels.forward(z, alpha, threads=2)  # first: fresh memory
        p1, tau1, _ = entmax_kernels.forward(z, alpha, threads=1)
        np.testing.assert_array_equal(p1, p2)
        np.testing.assert_array_equal(tau1, tau2)
        g = np.random.default_rng(1).standard_normal(p1.shape).astype(np.float32)
        assert_same_up_to_summation_order(
            entmax_kernels.backward(p1, g, alpha, 2), entmax_kernels.backward(p1, g, alpha, 1)
        )


@pytest.mark.parametrize("rows", [2, 3, 5, 7, 33])
@pytest.mark.parametrize("width", [5, 64, 301])
@pytest.mark.parametrize("alpha", [1.5, 2.0, 1.4])
def test_every_row_is_computed_once_whatever_the_split(monkeypatch, rows, width, alpha):
    """Row counts that two threads cannot share evenly, through the threaded kernels (forward,
    the loss's forward and backward), row for row against the serial kernels: a chunk that
    stops one row short, starts one late or overlaps its neighbour leaves a row of stale memory
    or a wrong masked count."""
    if not parallel_available():
        pytest.skip("the parallel kernels need two numba threads and a thread-safe layer")
    entmax_kernels.warm_up()  # its probe of the parallel kernels is not a launch to count
    monkeypatch.setattr(entmax_kernels, "_PARALLEL_MIN_ENTRIES", 0)
    launches = []
    parallel = entmax_kernels._forward_parallel

    def counted(*args):
        launches.append(args[-1])  # the number of chunks
        return parallel(*args)

    monkeypatch.setattr(entmax_kernels, "_forward_parallel", counted)
    backward_parallel = entmax_kernels._backward_parallel

    def counted_backward(*args):
        launches.append("backward")
        return backward_parallel(*args)

    monkeypatch.setattr(entmax_kernels, "_backward_parallel", counted_backward)
    gen = np.random.default_rng(rows * 1000 + width)
    z = gen.standard_normal((rows, width)) * 3
    target = gen.integers(0, width, rows)
    grad = gen.standard_normal((rows, width))
    p2, tau2, masked2 = entmax_kernels.forward(z, alpha, threads=2)
    q2, loss2, _ = entmax_kernels.fenchel_young(z, target, alpha, threads=2)
    assert launches == [2, 2]
    p1, tau1, masked1 = entmax_kernels.forward(z, alpha, threads=1)
    q1, loss1, _ = entmax_kernels.fenchel_young(z, target, alpha, threads=1)
    assert masked2 == masked1 == 0
    np.testing.assert_array_equal(p2, p1)
    np.testing.assert_array_equal(tau2, tau1)
    np.testing.assert_array_equal(q2, p1)
    np.testing.assert_array_equal(loss2, loss1)
    np.testing.assert_allclose(p2.sum(-1), np.ones(rows), atol=1e-12)
    assert_same_up_to_summation_order(
        entmax_kernels.backward(p1, grad, alpha, 2), entmax_kernels.backward(p1, grad, alpha, 1)
    )
    assert launches == [2, 2, "backward"]
    # every masked row is counted, wherever the chunks' edges fall
    z[::2] = -np.inf
    assert entmax_kernels.forward(z, alpha, threads=2)[2] == (rows + 1) // 2


@pytest.mark.parametrize("width", [2, 40_000])
def test_one_row_is_never_split_among_threads(monkeypatch, width):
    """Threads share rows, not the entries of a row: a single row, however wide, runs on the
    serial kernels even when two threads are asked for."""
    entmax_kernels.warm_up()  # its probe of the parallel kernels is not a launch to count
    launches = []
    monkeypatch.setattr(entmax_kernels, "_forward_parallel", lambda *a: launches.append(a))
    monkeypatch.setattr(entmax_kernels, "_backward_parallel", lambda *a: launches.append(a))
    z = np.random.default_rng(width).standard_normal((1, width))
    p, _, _ = entmax_kernels.forward(z, 1.5, threads=2)
    entmax_kernels.fenchel_young(z, np.zeros(1, np.int64), 1.5, threads=2)
    entmax_kernels.backward(p, np.ones_like(p), 1.5, threads=2)
    assert launches == []


@pytest.mark.parametrize("torch_threads", [2], indirect=True)
def test_threads_start_at_the_size_where_they_pay(monkeypatch, torch_threads):
    """Below `_PARALLEL_MIN_ENTRIES` a launch costs more than it saves: an input of one entry
    fewer runs serially on two threads' request, one of exactly that size is split."""
    entmax_kernels.warm_up()  # its probe of the parallel kernels is not a launch to count
    monkeypatch.setattr(entmax_kernels, "_PARALLEL_MIN_ENTRIES", 100)
    launches = []
    monkeypatch.setattr(entmax_kernels, "_forward_parallel", lambda *a: launches.append(a[-1]))
    monkeypatch.setattr(entmax_kernels, "_backward_parallel", lambda *a: launches.append("b"))
    small, enough = np.ones((2, 49)), np.ones((2, 50))
    for z in (small, enough):
        entmax_kernels.forward(z, 1.5, threads=2)
        entmax_kernels.backward(z, z, 1.5, threads=2)
    assert launches == [2, "b"]


@pytest.mark.parametrize("torch_threads", [2], indirect=True)
def test_a_callers_thread_count_is_a_ceiling(monkeypatch, torch_threads):
    """On a machine with more cores than a caller asks for, the kernels use what was asked
    (a server worker's share), not every core numba could start; nor more than there are
    rows, nor more than numba's pool."""
    entmax_kernels.warm_up()  # its probe of the parallel kernels is not a launch to count
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 8)
    asked = []
    monkeypatch.setattr(numba, "get_num_threads", lambda: asked[-1] if asked else 1)
    monkeypatch.setattr(numba, "set_num_threads", asked.append)
    launches = []
    monkeypatch.setattr(entmax_kernels, "_forward_parallel", lambda *a: launches.append(a[-1]))
    entmax_kernels.forward(np.ones((33, 5)), 1.5, threads=3)
    entmax_kernels.forward(np.ones((2, 5)), 1.5, threads=3)
    entmax_kernels.forward(np.ones((33, 5)), 1.5, threads=16)  # more than numba has
    entmax_kernels.forward(np.ones((33, 5)), 1.5, threads=8)  # the pool is already that size
    assert launches == [3, 2, 8, 8]
    assert asked == [3, 2, 8]


def test_the_two_thread_runs_take_the_threaded_kernels(torch_threads, monkeypatch):
    """The fixture's two-thread run really exercises `_forward_parallel` through the public
    functions (entmax, its loss and its backward), not the serial kernels."""
    entmax_kernels.warm_up()  # its probe of the parallel kernels is not a launch to count
    launches = []
    parallel = entmax_kernels._forward_parallel

    def counted(*args):
        launches.append(args[-1])
        return parallel(*args)

    monkeypatch.setattr(entmax_kernels, "_forward_parallel", counted)
    x = torch.randn(5, 30, dtype=torch.float64, requires_grad=True)
    entmax(x, 1.5).sum().backward()
    entmax_loss(x, torch.zeros(5, dtype=torch.long), 2.0)
    assert launches == ([2, 2] if torch_threads == 2 else [])


def test_without_a_thread_count_the_kernels_keep_to_one_thread(monkeypatch):
    """A caller that does not ask for threads (a server worker sharing its cores) gets the
    serial kernels, even on inputs large enough for a threaded launch."""
    entmax_kernels.warm_up()  # its probe of the parallel kernels is not a launch to count
    launches = []

    def refused(name):
        def launch(*args):
            launches.append(name)

        return launch

    monkeypatch.setattr(entmax_kernels, "_forward_parallel", refused("forward"))
    monkeypatch.setattr(entmax_kernels, "_backward_parallel", refused("backward"))
    z = np.random.default_rng(2).standard_normal((65, 2000))
    assert z.size >= 1 << 15  # entmax_kernels._PARALLEL_MIN_ENTRIES, unpatched
    for alpha in (1.5, 2.0, 1.4):
        p, _, _ = entmax_kernels.forward(z, alpha)
        q, loss, _ = entmax_kernels.fenchel_young(z, np.zeros(65, np.int64), alpha)
        entmax_kernels.backward(p, np.ones_like(p), alpha)
        np.testing.assert_array_equal(q, p)
        assert np.isfinite(loss).all()
    assert launches == []


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
