"""Pointer networks behind the web layer: the registry's loader for pointer checkpoints, and
`solve`, which turns a validated API request into the family's plain request and calls its one
entry point (models.pointer_run.run). The routes and the board's widget render what it returns.

`solve_board` does the same for a board's state (its page address or its form): it validates
the inputs with the API's own schema, so the board's sentences are the API's in the reader's
terms, and keeps the last few answers, because stepping through a decode or replaying it asks
again for the same one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from app.answer_cache import ANSWERS
from app.errors import error_sentence
from app.pointer.requests import (
    MIN_POINTS,
    MIN_VALUES,
    PointerTrace,
    PointsRequest,
    TaskModels,
    ValuesRequest,
    VariantInfo,
)
from app.pointer.url_state import BoardState
from app.registry import ModelRegistry, register_loader
from models.checkpoints import load_model
from models.errors import InvalidInput
from models.pointer_run import (
    Check,
    PointerRequest,
    ServedPointer,
    Task,
    checkpoints,
    run,
)


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
    """Decode one validated request. Raises InvalidInput (with a sentence for the reader),
    ModelUnavailable for a missing or corrupt checkpoint; whatever `check` raises
    between decoding steps passes through."""
    return run(plain_request(task, body), registry.get, check)


def parse_request(task: Task, state: BoardState) -> PointsRequest | ValuesRequest:
    """The API request for a board's state; ValidationError as the API would raise it."""
    if task == "sort":
        return ValuesRequest(values=state.inputs, **state.request_fields())
    return PointsRequest(points=state.inputs, **state.request_fields())


def remembered(registry: ModelRegistry, request: PointerRequest, check: Check) -> PointerTrace:
    """`run`, or its answer to the same request a moment ago (same checkpoints)."""
    return ANSWERS.get(registry, request, lambda: run(request, registry.get, check))


def solve_board(
    registry: ModelRegistry, task: Task, state: BoardState, check: Check = None
) -> tuple[PointerTrace | None, str | None]:
    """(the answer, None), or (None, a sentence for the reader) when the board's inputs are
    too few or cannot be decoded. ModelUnavailable and whatever `check` raises pass through."""
    noun, least = ("values", MIN_VALUES) if task == "sort" else ("points", MIN_POINTS)
    if len(state.inputs) < least:
        return None, f"Add at least {least} {noun}."
    try:
        request = plain_request(task, parse_request(task, state))
        return remembered(registry, request, check), None
    except ValidationError as exc:
        return None, error_sentence(exc.errors()[0], reader=True)
    except InvalidInput as exc:
        return None, str(exc)


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
