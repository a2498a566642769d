"""Pointer networks behind the API: load the checkpoints, decode a validated request, and
score the answer against the exact (or best cheap) reference on the same input.

Routes and widget providers call `solve(registry, task, request)`; it returns the response
object that both the JSON API and the HTML fragments render. All geometry and scoring happen
here or in models/tasks; the browser only draws.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from app.schemas.pointer import (
    BestOfK,
    HullReference,
    HullResponse,
    PointerModelInfo,
    PointerResponse,
    PointerStep,
    PointsRequest,
    Reference,
    SortResponse,
    Task,
    TaskModels,
    TspReference,
    TspResponse,
    ValuesRequest,
    VariantInfo,
)
from app.services import ModelRegistry, register_loader
from models.checkpoints import load_model
from models.pointer import PointerNet, Trace, beam_search, best_of, greedy, sample
from models.tasks import InvalidInstance, hull, sort, tsp

# task -> pointer variant -> checkpoint name; the first variant is the default
CHECKPOINTS: dict[str, dict[str, str]] = {
    "hull": {"softmax": "pointer-hull"},
    "tsp": {"softmax": "pointer-tsp"},
    "sort": {"softmax": "pointer-sort", "entmax15": "pointer-sort-entmax15"},
}
# Called between decoding steps; raises to stop the decode (app.compute.Budget.check).
Check = Callable[[], None] | None


@dataclass(frozen=True)
class LoadedPointer:
    name: str
    model: PointerNet
    entry: dict[str, Any]

    def info(self, variant: str) -> PointerModelInfo:
        return PointerModelInfo(
            name=self.name,
            variant=variant,
            pointer=self.model.config.pointer,
            sha256=self.entry["sha256"],
            train_steps=self.entry.get("steps"),
        )


@register_loader("pointer")
def load_pointer(checkpoint_dir: Path, name: str, entry: dict[str, Any]) -> LoadedPointer:
    model, entry = load_model(name, checkpoint_dir)
    if not isinstance(model, PointerNet):
        raise TypeError(f"{name} is not a pointer network")
    return LoadedPointer(name, model, entry)


class UnknownVariant(ValueError):
    """A `model` value the task has no checkpoint for (a reader's error: 422)."""


# What `solve` raises for a request the reader can fix; its message is the 422's sentence.
# Any other ValueError is a fault of ours and must not be worded as the reader's.
READER_ERRORS = (UnknownVariant, InvalidInstance)


def checkpoint_name(task: Task, variant: str | None) -> tuple[str, str]:
    """(variant, checkpoint name) for a request's optional `model` field."""
    variants = CHECKPOINTS[task]
    variant = variant or next(iter(variants))
    if variant not in variants:
        allowed = " or ".join(f"“{v}”" for v in variants)
        raise UnknownVariant(
            f"There is no “{variant}” model for {task}; set `model` to {allowed}, "
            "or leave it out for the default."
        )
    return variant, variants[variant]


def task_models(registry: ModelRegistry, task: Task) -> TaskModels:
    """Which variants a task has and whether the registry can serve them (loaded and
    verified), with the reason when it cannot."""
    variants = []
    for variant, name in CHECKPOINTS[task].items():
        reason = registry.unavailable_reason(name)
        variants.append(
            VariantInfo(variant=variant, checkpoint=name, available=reason is None, reason=reason)
        )
    return TaskModels(task=task, variants=variants)


@dataclass(frozen=True)
class SampleScore:
    """How the sample decoder ranks outputs: `cost` (lower is better, inf for an output that
    cannot count) and `value`, the number the reader sees for a cost."""

    cost: Callable[[list[int]], float]
    value: Callable[[float], float | None] = lambda cost: cost


@dataclass(frozen=True)
class Decoded:
    trace: Trace
    beam_width: int  # 1 unless beam search
    samples: int  # 1 unless sampled
    best_of_k: list[BestOfK] | None  # sampled only


def hypotheses(request: PointsRequest | ValuesRequest) -> int:
    """How many outputs the decoder carries at once: its share of the compute budget."""
    return {"greedy": 1, "beam": request.beam_width, "sample": request.samples}[request.decoder]


def best_of_k_curve(running_best: list[float], score: SampleScore) -> list[BestOfK]:
    """The running best at k = 1, 2, 4, … and at the number drawn."""
    count = len(running_best)
    ks = sorted({1 << i for i in range(count.bit_length()) if 1 << i <= count} | {count})
    return [BestOfK(k=k, value=score.value(running_best[k - 1])) for k in ks]


def decode(
    model: PointerNet,
    inputs: np.ndarray,
    request: PointsRequest | ValuesRequest,
    score: SampleScore,
    check: Check = None,
) -> Decoded:
    """The model's output for one instance; `check` is called between decoding steps and
    raises to stop (see app.compute). The sample decoder keeps the sample `score` ranks best."""
    if request.decoder == "beam":
        trace = beam_search(model, inputs, width=request.beam_width, check=check)
        return Decoded(trace, request.beam_width, 1, None)
    if request.decoder == "sample":
        traces = sample(model, inputs, request.samples, seed=request.seed, check=check)
        best, running = best_of(traces, score.cost)
        return Decoded(best, 1, request.samples, best_of_k_curve(running, score))
    return Decoded(greedy(model, inputs[None], check)[0], 1, 1, None)


def four_digits(probs: np.ndarray) -> np.ndarray:
    """Round to 4 significant digits: short JSON, yet a tiny softmax probability stays
    nonzero, so only exact zeros (masked, or outside a sparse pointer's support) print as 0.
    Dividing the rounded integer by a power of ten gives the double nearest the decimal."""
    probs = probs.astype(np.float64)
    positive = probs > 0
    exponent = np.floor(np.log10(np.where(positive, probs, 1.0)))
    scale = 10.0 ** (3 - exponent)
    return np.where(positive, np.round(probs * scale) / scale, 0.0)


def steps_of(trace: Trace) -> list[PointerStep]:
    return [
        PointerStep(
            distribution=row,
            chosen=int(chosen),
            support_size=int(support),
        )
        for row, chosen, support in zip(
            four_digits(trace.distributions).tolist(),
            trace.chosen,
            trace.support_sizes,
            strict=True,
        )
    ]


def _common(
    task: Task,
    request: PointsRequest | ValuesRequest,
    loaded: LoadedPointer,
    variant: str,
    decoded: Decoded,
) -> dict[str, Any]:
    return {
        "task": task,
        "n": len(request.points if isinstance(request, PointsRequest) else request.values),
        "decoder": request.decoder,
        "beam_width": decoded.beam_width,
        "samples": decoded.samples,
        "best_of_k": decoded.best_of_k,
        "order": decoded.trace.order,
        "steps": steps_of(decoded.trace),
        "model": loaded.info(variant),
    }


def hull_score(points: np.ndarray) -> SampleScore:
    """Largest area among outputs that are simple polygons."""

    def cost(order: list[int]) -> float:
        if len(order) < 3 or not hull.is_simple_polygon(points, order):
            return math.inf
        return -round(hull.polygon_area(points, order), 12)  # a rotation is no better

    return SampleScore(cost, lambda cost: None if math.isinf(cost) else -cost)


def tsp_score(cities: np.ndarray) -> SampleScore:
    """Shortest tour (every sample is a valid tour: chosen cities are masked); rounded, so
    the same cycle drawn in reverse is not counted as an improvement."""

    def cost(order: list[int]) -> float:
        if not tsp.is_valid_tour(order, len(cities)):
            return math.inf
        return round(tsp.tour_length(cities, order), 12)

    return SampleScore(cost)


def sort_score(values: np.ndarray) -> SampleScore:
    """Fewest neighbouring pairs out of order in the output (0: sorted)."""
    return SampleScore(lambda order: float(np.sum(np.diff(values[order]) < 0)))


def solve_hull(
    loaded: LoadedPointer,
    variant: str,
    request: PointsRequest,
    started: float,
    check: Check = None,
) -> HullResponse:
    points = hull.validate_points(np.array(request.points))  # raises on collinear input
    exact = hull.convex_hull_order(points)
    exact_area = hull.polygon_area(points, exact)
    decoded = decode(loaded.model, points, request, hull_score(points), check)
    trace = decoded.trace
    simple = hull.is_simple_polygon(points, trace.order)
    area = hull.polygon_area(points, trace.order) if len(trace.order) >= 3 else 0.0
    return HullResponse(
        **_common("hull", request, loaded, variant, decoded),
        end_index=len(points),
        valid=simple,
        correct=hull.same_polygon(trace.order, exact),
        area=area,
        reference=HullReference(
            order=exact, method="monotone chain (exact)", optimal=True, area=exact_area
        ),
        gap=1.0 - area / exact_area if simple else None,
        server_ms=(time.perf_counter() - started) * 1000,
    )


@lru_cache(maxsize=256)
def tsp_reference(points: tuple[tuple[float, float], ...]) -> TspReference:
    """models.tasks.tsp.reference_tour for the request's cities, cached, because the board asks
    again for the same points when only the decoder changes."""
    cities = np.array(points)
    order, method, optimal = tsp.reference_tour(cities)
    return TspReference(
        order=order, method=method, optimal=optimal, length=tsp.tour_length(cities, order)
    )


def solve_tsp(
    loaded: LoadedPointer,
    variant: str,
    request: PointsRequest,
    started: float,
    check: Check = None,
) -> TspResponse:
    cities = tsp.validate_points(np.array(request.points))
    reference = tsp_reference(tuple(request.points))
    decoded = decode(loaded.model, cities, request, tsp_score(cities), check)
    trace = decoded.trace
    valid = tsp.is_valid_tour(trace.order, len(cities))
    length = tsp.tour_length(cities, trace.order)
    return TspResponse(
        **_common("tsp", request, loaded, variant, decoded),
        valid=valid,
        correct=valid and length <= reference.length * (1 + 1e-9),
        length=length,
        reference=reference,
        gap=length / reference.length - 1.0 if valid else None,
        server_ms=(time.perf_counter() - started) * 1000,
    )


def model_values(values: np.ndarray) -> tuple[np.ndarray, bool]:
    """The values the model reads: as given inside [0, 1] (its training range), otherwise
    mapped affinely into it, which keeps their order."""
    low, high = float(values.min()), float(values.max())
    if low >= 0.0 and high <= 1.0:
        return values, False
    if high == low:
        return np.full_like(values, 0.5), True
    return (values - low) / (high - low), True


def solve_sort(
    loaded: LoadedPointer,
    variant: str,
    request: ValuesRequest,
    started: float,
    check: Check = None,
) -> SortResponse:
    values = sort.validate_values(np.array(request.values))
    exact = sort.sorted_order(values)
    inputs, rescaled = model_values(values)
    decoded = decode(loaded.model, inputs, request, sort_score(values), check)
    trace = decoded.trace
    valid = sorted(trace.order) == list(range(len(values)))
    wrong = np.asarray(values[trace.order] != values[exact]) if valid else None
    return SortResponse(
        **_common("sort", request, loaded, variant, decoded),
        rescaled=rescaled,
        valid=valid,
        correct=sort.is_sorted_output(values, trace.order),
        reference=Reference(order=exact, method="stable sort (exact)", optimal=True),
        gap=float(wrong.mean()) if wrong is not None else None,
        server_ms=(time.perf_counter() - started) * 1000,
    )


SOLVERS = {"hull": solve_hull, "tsp": solve_tsp, "sort": solve_sort}


def solve(
    registry: ModelRegistry,
    task: Task,
    request: PointsRequest | ValuesRequest,
    check: Check = None,
) -> PointerResponse:
    """Decode one request with the task's model. Raises one of READER_ERRORS (with a sentence
    for the reader) on unusable input or an unknown variant, ModelUnavailable if the checkpoint is
    missing or corrupt; whatever `check` raises between decoding steps passes through."""
    variant, name = checkpoint_name(task, request.model)
    loaded: LoadedPointer = registry.get(name)
    started = time.perf_counter()  # after the one-time checkpoint load
    return SOLVERS[task](loaded, variant, request, started, check)
