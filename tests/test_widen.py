"""Widening a pointer network keeps what it computes, and every new weight can learn."""

from dataclasses import replace

import pytest
import torch

from models.pointer import Config, PointerNet, pointer_loss
from models.widen import widened_state

HULL = Config(
    hidden=8, glimpse_residual=True, embedding_skip=True, end_position=True, input_order="x"
)
TSP = Config(hidden=8, glimpse_residual=True, embedding_skip=True)


def _widened(config: Config, hidden: int) -> tuple[PointerNet, PointerNet]:
    torch.manual_seed(0)
    narrow = PointerNet(config)
    wide = PointerNet(replace(config, hidden=hidden))
    wide.load_state_dict(widened_state(narrow.state_dict(), wide))
    return narrow, wide


def _batch(n: int = 7) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(1)
    points = torch.rand(4, n, 2, generator=generator)
    tours = torch.stack([torch.randperm(n, generator=generator) for _ in range(4)])
    return points, tours


@pytest.mark.parametrize("config", [HULL, TSP], ids=["hull", "tsp"])
@pytest.mark.parametrize("hidden", [12, 16, 24])
def test_the_widened_model_scores_as_the_narrow_one(config: Config, hidden: int) -> None:
    narrow, wide = _widened(config, hidden)
    points, tours = _batch()
    before, after = narrow(points, tours), wide(points, tours)
    assert torch.equal(torch.isfinite(before), torch.isfinite(after))
    finite = torch.isfinite(before)
    torch.testing.assert_close(after[finite], before[finite], atol=1e-5, rtol=1e-5)


def test_the_new_weights_get_gradients() -> None:
    _, wide = _widened(TSP, 16)
    points, tours = _batch()
    pointer_loss("softmax", wide(points, tours), tours).backward()
    assert wide.pointer.v.grad[8:].abs().min() > 0  # the new entries of v, zero at the start
    # the old encoder gates read the new units through weights that start at zero
    reads_new = wide.encoder.weight_hh_l0.grad[:8, 8:]
    assert wide.encoder.weight_hh_l0[:8, 8:].abs().max() == 0 and reads_new.abs().max() > 0


def test_only_a_wider_model_of_the_same_shape_is_accepted() -> None:
    narrow = PointerNet(TSP).state_dict()
    with pytest.raises(ValueError, match="cannot widen"):
        widened_state(narrow, PointerNet(replace(TSP, hidden=4)))
    with pytest.raises(ValueError, match="same architecture"):
        widened_state(narrow, PointerNet(replace(HULL, hidden=16)))
