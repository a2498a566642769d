"""Pointer networks behind the web layer: the registry's loader for pointer checkpoints, and
`solve`, which turns a validated API request into the family's plain request and calls its one
entry point (models.pointer_run.run). The routes and the board's widget render what it returns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.schemas.pointer import PointerTrace, PointsRequest, TaskModels, ValuesRequest, VariantInfo
from app.services import ModelRegistry, register_loader
from models.checkpoints import load_model
from models.pointer_run import (
    READER_ERRORS,
    Check,
    PointerRequest,
    ServedPointer,
    Task,
    checkpoints,
    run,
)

__all__ = ["READER_ERRORS", "plain_request", "solve", "task_models"]


@register_loader("pointer")
def load_pointer(checkpoint_dir: Path, name: str, entry: dict[str, Any]) -> ServedPointer:
    model, entry = load_model(name, checkpoint_dir)
    return ServedPointer.from_entry(name, model, entry)


def plain_request(task: Task, body: PointsRequest | ValuesRequest) -> PointerRequest:
    inputs = body.values if isinstance(body, ValuesRequest) else [list(p) for p in body.points]
    return PointerRequest(
        task=task,
        inputs=inputs,
        decoder=body.decoder,
        beam_width=body.beam_width,
        samples=body.samples,
        seed=body.seed,
        alpha=body.alpha,
    )


def solve(
    registry: ModelRegistry,
    task: Task,
    body: PointsRequest | ValuesRequest,
    check: Check = None,
) -> PointerTrace:
    """Decode one validated request. Raises one of READER_ERRORS (with a sentence for the
    reader), ModelUnavailable for a missing or corrupt checkpoint; whatever `check` raises
    between decoding steps passes through."""
    return run(plain_request(task, body), registry.get, check)


def task_models(registry: ModelRegistry, task: Task) -> TaskModels:
    """Which α a task has checkpoints for and whether the registry can serve them (loaded
    and verified), with the reason when it cannot; the default first."""
    variants = []
    for alpha, name in checkpoints(task).items():
        reason = registry.unavailable_reason(name)
        variants.append(
            VariantInfo(alpha=alpha, checkpoint=name, available=reason is None, reason=reason)
        )
    return TaskModels(task=task, variants=variants)
