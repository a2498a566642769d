"""`each_backend`: an autouse fixture that runs every test of the module importing it once on the
compiled kernels and once on the torch path, the two implementations behind models.entmax's
public functions. Without it a module tests only the default backend (the kernels, where numba
is installed), and the readable torch path goes untested. Each test also starts with the torch
path's cache of 1/rank vectors empty, so the code that fills it runs under every test, not only
under whichever ran first in the process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from models import entmax as entmax_module


@pytest.fixture(autouse=True, params=["torch", "compiled"])
def each_backend(request: pytest.FixtureRequest) -> Iterator[str]:
    entmax_module._INVERSE_RANKS.clear()
    if request.param == "compiled" and entmax_module._kernels is None:
        pytest.skip("the compiled backend needs numba")
    previous = entmax_module.set_backend(request.param)  # any other refusal is a failure
    yield request.param
    entmax_module.set_backend(previous)
