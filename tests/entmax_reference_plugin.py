"""Pytest plugin: the `entmax` package's own tests (entmax==1.3), run against `models.entmax`.

The package has two implementations of each mapping: an exact sort-based one (`sparsemax`,
`entmax15`, `Sparsemax`, `Entmax15` and their losses) and a bisection one (`sparsemax_bisect`,
`entmax_bisect`, `SparsemaxBisect`, `EntmaxBisect` and their losses); its tests compare them with
each other. Loaded with `-p entmax_reference_plugin`, this module is imported before any of the
package's test modules, and replaces one of the two families by thin adapters over ours, so the
other family is the oracle:

- ENTMAX_REFERENCE_REPLACE=bisect: ours stand in for the bisection family;
- ENTMAX_REFERENCE_REPLACE=exact: ours stand in for the exact family.

It also deselects, with the reason for each, what does not apply to ours (α < 1, normmax and
budget, the package's top-k internals) and the cases that call only the family left in place.

ENTMAX_REFERENCE_BACKEND ("compiled" or "torch") picks `models.entmax.set_backend`, and
ENTMAX_REFERENCE_REPORT names a JSON file that receives the outcome counts and how many times
the compiled kernels ran, so the caller can tell which path the tests took.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import entmax
import entmax.activations
import entmax.losses
import entmax.root_finding
import pytest
from torch import Tensor, nn

from models import entmax as ours

# The package's "elementwise_mean" is the mean over the positions not ignored, as our "mean" is.
_REDUCTIONS = {"elementwise_mean": "mean", "sum": "sum", "none": "none"}


class _Mapping(nn.Module):
    """One of our mappings as a module along `dim`, as the package's classes are."""

    def __init__(self, mapping: Callable[..., Tensor], dim: int) -> None:
        super().__init__()
        self.mapping, self.dim = mapping, dim

    def forward(self, x: Tensor) -> Tensor:
        return self.mapping(x, dim=self.dim)


class _Loss(nn.Module):
    """One of our losses as a module, with the package's ignore_index and reduction names."""

    def __init__(self, loss: Callable[..., Tensor], ignore_index: int, reduction: str) -> None:
        super().__init__()
        self.loss, self.ignore_index = loss, ignore_index
        self.reduction = _REDUCTIONS[reduction]

    def forward(self, x: Tensor, target: Tensor) -> Tensor:
        return self.loss(x, target, ignore_index=self.ignore_index, reduction=self.reduction)


# Adapters. Ours are exact, so the package's knobs that trade accuracy or speed change nothing:
# `k` (how many entries to partial-sort first), `n_iter` (bisection steps) and `ensure_sum_one`
# (renormalise the bisection's result) are accepted and have no effect.


def _sparsemax(X, dim=-1, k=None):
    return ours.sparsemax(X, dim)


def _entmax15(X, dim=-1, k=None):
    return ours.entmax15(X, dim)


def _sparsemax_bisect(X, dim=-1, n_iter=50, ensure_sum_one=True):
    return ours.sparsemax(X, dim)


def _entmax_bisect(X, alpha=1.5, dim=-1, n_iter=50, ensure_sum_one=True):
    return ours.entmax(X, alpha, dim)


def _sparsemax_module(dim=-1, k=None):
    return _Mapping(ours.sparsemax, dim)


def _entmax15_module(dim=-1, k=None):
    return _Mapping(ours.entmax15, dim)


def _sparsemax_bisect_module(dim=-1, n_iter=None):
    return _Mapping(ours.sparsemax, dim)


def _entmax_bisect_module(alpha=1.5, dim=-1, n_iter=50):
    return _Mapping(functools.partial(ours.entmax, alpha=alpha), dim)


# The package's functional losses return one loss per row.


def _sparsemax_loss(X, target, k=None):
    return ours.sparsemax_loss(X, target, reduction="none")


def _entmax15_loss(X, target, k=None):
    return ours.entmax15_loss(X, target, reduction="none")


def _sparsemax_bisect_loss(X, target, n_iter=50):
    return ours.sparsemax_loss(X, target, reduction="none")


def _entmax_bisect_loss(X, target, alpha=1.5, n_iter=50):
    return ours.entmax_loss(X, target, alpha, reduction="none")


def _sparsemax_loss_module(k=None, ignore_index=-100, reduction="elementwise_mean"):
    return _Loss(ours.sparsemax_loss, ignore_index, reduction)


def _entmax15_loss_module(k=None, ignore_index=-100, reduction="elementwise_mean"):
    return _Loss(ours.entmax15_loss, ignore_index, reduction)


def _sparsemax_bisect_loss_module(n_iter=50, ignore_index=-100, reduction="elementwise_mean"):
    return _Loss(ours.sparsemax_loss, ignore_index, reduction)


def _entmax_bisect_loss_module(
    alpha=1.5, n_iter=50, ignore_index=-100, reduction="elementwise_mean"
):
    return _Loss(functools.partial(ours.entmax_loss, alpha=alpha), ignore_index, reduction)


REPLACEMENTS = {
    "exact": {
        entmax.activations: {
            "sparsemax": _sparsemax,
            "entmax15": _entmax15,
            "Sparsemax": _sparsemax_module,
            "Entmax15": _entmax15_module,
        },
        entmax.losses: {
            "sparsemax_loss": _sparsemax_loss,
            "entmax15_loss": _entmax15_loss,
            "SparsemaxLoss": _sparsemax_loss_module,
            "Entmax15Loss": _entmax15_loss_module,
        },
    },
    "bisect": {
        entmax.root_finding: {
            "sparsemax_bisect": _sparsemax_bisect,
            "entmax_bisect": _entmax_bisect,
            "SparsemaxBisect": _sparsemax_bisect_module,
            "EntmaxBisect": _entmax_bisect_module,
        },
        entmax.losses: {
            "sparsemax_bisect_loss": _sparsemax_bisect_loss,
            "entmax_bisect_loss": _entmax_bisect_loss,
            "SparsemaxBisectLoss": _sparsemax_bisect_loss_module,
            "EntmaxBisectLoss": _entmax_bisect_loss_module,
        },
    },
}

# Which of the package's tests to leave out, as (test file, test function, a part of the
# parameter id that must be present or None for every case), each group with its reason.
_NOT_APPLICABLE = [
    # normmax and the budget mapping are other families, not provided by models.entmax
    # (test_budget_grad_multiple_k, despite its name, calls normmax_bisect).
    ("test_root_finding.py", "test_normmax", None),
    ("test_root_finding.py", "test_normmax_grad", None),
    ("test_root_finding.py", "test_normmax_grad_multiple_alphas", None),
    ("test_root_finding.py", "test_budget_grad", None),
    ("test_root_finding.py", "test_budget_grad_multiple_k", None),
    ("test_losses.py", "test_non_neg", "NormmaxBisectLoss"),
    ("test_losses.py", "test_loss", "NormmaxBisectLoss"),
    ("test_losses.py", "test_index_ignored", "NormmaxBisectLoss"),
    # Our entmax is defined for α ≥ 1 and raises a ValueError below.
    ("test_root_finding.py", "test_entmax_grad", "0.2"),
    ("test_root_finding.py", "test_entmax_grad", "0.5"),
    ("test_root_finding.py", "test_entmax_grad", "0.75"),
    # Random per-row α drawn from 0.05 + 2.5·U(0, 1): almost every draw has some α < 1.
    ("test_root_finding.py", "test_entmax_correct_multiple_alphas", None),
    ("test_root_finding.py", "test_entmax_grad_multiple_alphas", None),
    ("test_root_finding.py", "test_arbitrary_dimension", None),
    ("test_root_finding.py", "test_arbitrary_dimension_grad", None),
    # The package's top-k internals, _entmax/_sparsemax_threshold_and_support: nothing of ours.
    ("test_topk.py", "test_entmax_topk", None),
    ("test_topk.py", "test_sparsemax_topk", None),
]

# Cases that call only the family this run leaves in place: the package testing itself, with
# nothing of ours involved (the bisection ones take most of a minute).
_ONLY_THEIRS = {
    "exact": [
        ("test_root_finding.py", "test_sparsemax_grad", None),
        ("test_root_finding.py", "test_entmax_grad", None),
        ("test_mask.py", "test_mask", "sparsemax_bisect"),
        ("test_mask.py", "test_mask", "entmax_bisect"),
        ("test_mask.py", "test_mask_alphas", None),
        *[
            ("test_losses.py", test, loss)
            for test in ("test_non_neg", "test_loss", "test_index_ignored")
            for loss in ("SparsemaxBisectLoss", "EntmaxBisectLoss")
        ],
    ],
    "bisect": [
        ("test_root_finding.py", "test_budget", None),  # budget_bisect against their sparsemax
        *[("test_mask.py", "test_mask", f"func{i}") for i in range(4)],  # their modules
        *[
            ("test_losses.py", test, loss)
            for test in ("test_non_neg", "test_loss", "test_index_ignored")
            for loss in ("SparsemaxLoss", "Loss1", "Entmax15Loss", "Loss3")  # Loss1, 3: k=5
        ],
        ("test_topk.py", "test_mapping", None),
    ],
}


def _matches(item: pytest.Item, rules: list[tuple[str, str, str | None]]) -> bool:
    callspec = getattr(item, "callspec", None)
    param_parts = set(callspec.id.split("-")) if callspec else set()
    return any(
        item.path.name == file
        and item.originalname == function
        and (part is None or part in param_parts)
        for file, function, part in rules
    )


_kernel_calls = {"forward": 0, "backward": 0}


def _count_kernel_calls() -> None:
    """Wrap the compiled kernels' entry points so the report can say whether they ran."""
    kernels = ours._kernels
    if kernels is None:  # numba missing: nothing can call them
        return
    for name in _kernel_calls:
        kernel = getattr(kernels, name)

        def counted(*args, _kernel=kernel, _name=name):
            _kernel_calls[_name] += 1
            return _kernel(*args)

        setattr(kernels, name, counted)


def _side() -> str:
    side = os.environ.get("ENTMAX_REFERENCE_REPLACE", "")
    if side not in REPLACEMENTS:
        raise pytest.UsageError(f"set ENTMAX_REFERENCE_REPLACE to one of {sorted(REPLACEMENTS)}")
    return side


def pytest_configure(config: pytest.Config) -> None:
    imported = [name for name in sys.modules if name.startswith("entmax.test_")]
    if imported:  # `from entmax.x import name` would already hold the package's own functions
        raise pytest.UsageError(f"load this plugin with -p, before {imported} are imported")
    ours.set_backend(os.environ.get("ENTMAX_REFERENCE_BACKEND", "compiled"))
    for module, names in REPLACEMENTS[_side()].items():
        for name, replacement in names.items():
            assert hasattr(module, name), f"{module.__name__} has no {name} to replace"
            replacement.__name__ = name  # parametrised test ids read as in the package
            setattr(module, name, replacement)
            if hasattr(entmax, name):  # the package re-exports it at the top level
                setattr(entmax, name, replacement)
    _count_kernel_calls()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rules = _NOT_APPLICABLE + _ONLY_THEIRS[_side()]
    left_out = [item for item in items if _matches(item, rules)]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if not _matches(item, rules)]


def pytest_terminal_summary(terminalreporter) -> None:
    report = os.environ.get("ENTMAX_REFERENCE_REPORT")
    if not report:
        return
    outcomes = {key: len(items) for key, items in terminalreporter.stats.items() if key}
    Path(report).write_text(json.dumps({"outcomes": outcomes, "kernel_calls": _kernel_calls}))
