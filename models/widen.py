"""Widen a trained Pointer Network without changing what it computes (after Net2Net: Chen,
Goodfellow and Shlens, 2016), so a wider model starts where the narrow one stopped.

Every hidden-sized axis of the network (the LSTM gates, the merges of the two encoder
directions, the attention layers, the learned vectors) grows from H to H' units. The old units
keep their weights and read nothing from the new ones (those weights start at zero), so their
values are exactly the old model's; the new units start as a freshly initialised model's. The
attention vectors `v` start at zero on the new units, so the scores, and with them every
distribution, are the old model's. None of the zeros sits where its gradient is zero: the new
units carry values, so the weights from them and the new entries of `v` learn from the first
step.
"""

import torch

from models.pointer import PointerNet


def _axis_map(size: int, old_hidden: int, new_hidden: int) -> torch.Tensor | None:
    """Where the old indices of an axis of `size` go in the widened axis; None for an axis
    that does not grow (the input coordinates). Hidden axes are k stacked blocks of H: 1 for a
    state, 2 for the two encoder directions, 4 for an LSTM's gates."""
    if size % old_hidden:
        return None
    blocks = size // old_hidden
    return torch.cat([b * new_hidden + torch.arange(old_hidden) for b in range(blocks)])


def widened_state(old: dict[str, torch.Tensor], model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The weights `old` of a narrower PointerNet, laid into `model`'s fresh weights.
    ValueError when `model` is not a wider PointerNet of the same shape otherwise."""
    fresh = model.state_dict()
    if not isinstance(model, PointerNet) or set(old) != set(fresh):
        raise ValueError("only a pointer network of the same architecture can be widened")
    old_hidden, new_hidden = old["go"].numel(), model.config.hidden
    if new_hidden <= old_hidden:
        raise ValueError(f"a model of {old_hidden} units cannot widen to {new_hidden}")
    widened = {}
    for name, new in fresh.items():
        value = new.clone()
        maps = [_axis_map(s, old_hidden, new_hidden) for s in old[name].shape]
        if name.endswith(".v"):
            value.zero_()  # the new units add nothing to the scores
        if value.dim() == 2 and maps[0] is not None and maps[1] is not None:
            value[maps[0][:, None], _new_units(value.shape[1], maps[1])] = 0.0
        index = tuple(
            torch.arange(s) if m is None else m for s, m in zip(old[name].shape, maps, strict=True)
        )
        value[torch.meshgrid(*index, indexing="ij")] = old[name]
        widened[name] = value
    return widened


def _new_units(size: int, old_positions: torch.Tensor) -> torch.Tensor:
    """The indices of an axis of `size` that are not among `old_positions`."""
    keep = torch.ones(size, dtype=torch.bool)
    keep[old_positions] = False
    return keep.nonzero()[:, 0][None, :]
