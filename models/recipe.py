"""What a training recipe is: the shape `models.train` runs and `models.recipes` registers.

A recipe is any object with:

    name: str                    the checkpoint name, e.g. "pointer-hull"
    family: str                  key of models.checkpoints.FAMILIES, e.g. "pointer"
    task: str                    e.g. "hull"
    config                       a dataclass; saved in the manifest, rebuilds the model
    defaults: TrainDefaults      steps, batch size, lr, clip, seed, validation period, budget
    build_model() -> nn.Module
    batches(batch_size, seed, rank, start_step) -> Iterator[batch]
        infinite and seeded; batch k depends only on (seed, rank, k), so resuming at step k
        needs no replay and each DDP rank sees different data
    loss(model, batch) -> scalar tensor      (model may be the DDP wrapper: call it, don't
                                              reach into it)
    validate(model) -> dict[str, float]      metrics on a fixed validation set
    data_description() -> dict               stored in the manifest
    optimizer_note: str (optional)           why the optimizer differs from the paper's

This module imports nothing from models/, so task modules can declare their recipes without
importing the training loop (which imports them through the registry).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import torch
from torch import nn


@dataclass
class TrainDefaults:
    steps: int
    batch_size: int
    lr: float
    clip: float = 2.0  # gradient-norm clip, as in the Pointer Networks paper
    seed: int = 1234
    validate_every: int = 500
    warmup: int = 100
    time_budget_min: float | None = None


class Recipe(Protocol):
    name: str
    family: str
    task: str
    config: Any
    defaults: TrainDefaults

    def build_model(self) -> nn.Module: ...
    def batches(self, batch_size: int, seed: int, rank: int, start_step: int) -> Any: ...
    def loss(self, model: nn.Module, batch: Any) -> torch.Tensor: ...
    def validate(self, model: nn.Module) -> dict[str, float]: ...
    def data_description(self) -> dict: ...
