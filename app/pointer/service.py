"""Pointer networks behind the web layer: the registry's loader for pointer checkpoints, and
`solve`, which turns a validated request (the API's, or a board's) into the family's plain
request and calls its one entry point (models.pointer_run.run). The routes and the board's
widget render what it returns, with the sizes its checkpoint learned on (`trained_sizes`).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from app.answer_cache import ANSWERS
from app.learning import learning_view
from app.pointer.requests import (
    MIN_POINTS,
    MIN_VALUES,
    PointerTrace,
    PointsRequest,
    TaskModels,
    ValuesRequest,
    VariantInfo,
)
from app.registry import ModelRegistry, register_loader
from models.checkpoints import ancestry, load_model
from models.errors import InvalidInput
from models.pointer_run import (
    SNAPSHOTS,
    Check,
    PointerRequest,
    ServedPointer,
    Task,
    checkpoints,
    run,
    snapshot_steps,
)


@register_loader("attention-routing")  # Kool et al.'s model answers with the same trace
@register_loader("pointer")
def load_pointer(checkpoint_dir: Path, name: str, entry: dict[str, Any]) -> ServedPointer:
    model, entry = load_model(name, checkpoint_dir)
    return ServedPointer.from_entry(name, model, entry)


def plain_request(task: Task, body: PointsRequest | ValuesRequest) -> PointerRequest:
    return PointerRequest(
        task=task,
        inputs=body.inputs(),
        decoder=body.decoder,
        beam_width=body.beam_width,
        samples=body.samples,
        seed=body.seed,
        alpha=body.alpha,
        model=body.model,
        snapshot=body.snapshot,
    )


def solve(
    registry: ModelRegistry,
    task: Task,
    body: PointsRequest | ValuesRequest,
    check: Check = None,
    remember: bool = False,
) -> PointerTrace:
    """Decode one validated request, or with `remember` give the answer to the same request
    a moment ago (a board asks again for it as the reader steps through the decode). Raises
    InvalidInput (with a sentence for the reader) for inputs the model cannot take, too few
    among them (a board may hold fewer than a decode needs), ModelUnavailable for a missing
    or corrupt checkpoint; whatever `check` raises between decoding steps passes through."""
    noun, least = ("values", MIN_VALUES) if task == "sort" else ("points", MIN_POINTS)
    if len(body.inputs()) < least:
        raise InvalidInput(f"Add at least {least} {noun}.")
    request = plain_request(task, body)
    if not remember:
        return run(request, registry.get, check)
    return ANSWERS.get(registry, request, lambda: run(request, registry.get, check))


def task_models(registry: ModelRegistry, task: Task) -> TaskModels:
    """Which α a task has checkpoints for and whether the registry can serve them (loaded
    and verified), with the reason when it cannot; the default first."""
    variants = []
    for alpha, name in checkpoints(task).items():
        reason = registry.unavailable_reason(name)
        variants.append(
            VariantInfo(alpha=alpha, checkpoint=name, available=reason is None, reason=reason)
        )
    return TaskModels(task=task, variants=variants, snapshots=snapshot_steps(task))


def trained_sizes(registry: ModelRegistry, name: str) -> tuple[int, int] | None:
    """The smallest and largest n the checkpoint learned on, the weights it was fine-tuned
    from included: each manifest entry's `data.n_range`, which its recipe wrote. None when
    the manifest names no sizes."""
    return _trained_sizes(registry, name, registry.version())


@lru_cache(maxsize=32)
def _trained_sizes(
    registry: ModelRegistry, name: str, version: tuple[int, int]
) -> tuple[int, int] | None:
    """`version` is the manifest's: a manifest a training run rewrote is read anew."""
    entry = registry.manifest().get(name)
    if entry is None:
        return None
    chain = [entry, *ancestry(entry, registry.checkpoint_dir)]
    ranges = [e["data"]["n_range"] for e in chain if "n_range" in (e.get("data") or {})]
    if not ranges:
        return None
    return min(low for low, _ in ranges), max(high for _, high in ranges)


def board_learning(task: Task, model: str | None, snapshot: int | None) -> dict[str, Any] | None:
    """The board's training slider (app/learning.py): on a board showing the task's default
    model; a board the page pins to a model (the routing page's) has none, since a snapshot is
    of one run and a request with both is refused."""
    return learning_view(SNAPSHOTS.get(task), snapshot) if model is None else None
