"""The pointer family's one entry point: `run(request, load) -> PointerTrace`.

Plain Python in (a `PointerRequest`: the task, the inputs as lists, the decoder and the pointer's
α), one pydantic trace out, its probabilities rounded here and nowhere else. The JSON API returns
the trace as it is; the board's HTML is drawn from the same object. Scoring against the exact
(or best cheap) answer happens here too, through models/tasks.

Which checkpoints serve a task is written once, in SERVED; a request picks one by name
(`model`) or by its pointer's α, which comes from the recipe that trained it
(models/recipes.py, `Config.alpha`; the attention model of Kool et al., trained by
models/attention_routing_train.py, is a softmax policy, α = 1). `resolve` is the one place
that turns "no model, no α given" into the task's default.

A checkpoint is a Pointer Network (models/pointer.py: greedy, beam, sample) or the attention
model (models/attention_routing.py: greedy, sample, and `symmetric`, greedy from every start
city over the 8 symmetries of the unit square); both answer with the same Trace.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from models import attention_routing, snapshots
from models.attention_routing import AttentionModel
from models.errors import InvalidInput
from models.pointer import PointerNet, Trace, beam_search, best_of, greedy, sample
from models.tasks import hull, sort, tsp

Task = Literal["hull", "tsp", "sort"]
Decoder = Literal["greedy", "beam", "sample", "symmetric"]
TASKS: tuple[Task, ...] = ("hull", "tsp", "sort")

# task -> the checkpoints that serve it; the first is the task's default ("the trained α")
SERVED: dict[Task, tuple[str, ...]] = {
    "hull": ("pointer-hull",),
    "tsp": (
        "pointer-tsp-attention-rl2",
        "attention-routing-tsp20",
        "pointer-tsp",
        "attention-routing-tsp50",
    ),
    "sort": ("pointer-sort", "pointer-sort-entmax15"),
}


# task -> the recipe whose training was rerun keeping snapshots (models/snapshots.py): a
# request's `snapshot` (a training step) decodes with the weights that run had then
SNAPSHOTS: dict[Task, str] = {"hull": "pointer-hull", "sort": "pointer-sort", "tsp": "pointer-tsp"}


def snapshot_steps(task: Task) -> list[int]:
    """The training steps the task's snapshot run kept ([] when it has none)."""
    return snapshots.kept_steps(SNAPSHOTS.get(task))


def served_names() -> tuple[str, ...]:
    """Every checkpoint a pointer task serves: what start-up loads."""
    return tuple(name for names in SERVED.values() for name in names)


# Called between decoding steps; raises to stop the decode (app.compute.Budget.check).
Check = Callable[[], None] | None


class UnknownAlpha(InvalidInput):
    """An α no served checkpoint of the task was trained with (a reader's error)."""


class UnknownModel(InvalidInput):
    """A `model` that does not serve the task, or a decoder that model does not have."""


@cache
def trained_alpha(name: str) -> float:
    """The α of a served checkpoint's pointer (or of a snapshot's, "<recipe>@<step>"): its
    recipe's, or the attention model's softmax."""
    from models.recipes import RECIPES, get_recipe

    recipe = name.split("@")[0]
    return get_recipe(recipe).config.alpha if recipe in RECIPES else attention_routing.Config.alpha


def is_attention_model(name: str) -> bool:
    """Whether the checkpoint is Kool et al.'s attention model (it has no Pointer Network
    recipe; models/attention_routing_train.py trains it)."""
    from models.recipes import RECIPES

    return name.split("@")[0] not in RECIPES


@cache
def checkpoints(task: Task) -> dict[float, str]:
    """α -> the first checkpoint of the task trained with it, the default first."""
    served: dict[float, str] = {}
    for name in SERVED[task]:
        served.setdefault(trained_alpha(name), name)
    return served


def alpha_text(alpha: float) -> str:
    return f"{alpha:g}"


def resolve(
    task: Task, alpha: float | None, model: str | None = None, snapshot: int | None = None
) -> tuple[float, str]:
    """(α, checkpoint name) for a request's optional `model` and α; with neither, the task's
    default model; with a `snapshot` step, that snapshot of the task's snapshot run."""
    if snapshot is not None:
        return resolve_snapshot(task, alpha, model, snapshot)
    if model is not None:
        if model not in SERVED[task]:
            raise UnknownModel(
                f"No model called “{model}” serves the {task} task; set `model` to "
                f"{' or '.join(SERVED[task])}, or leave it out for the default."
            )
        if alpha is None or math.isclose(trained_alpha(model), alpha, abs_tol=1e-9):
            return trained_alpha(model), model
        raise UnknownAlpha(
            f"The model {model} has a pointer trained at α = {alpha_text(trained_alpha(model))}"
            f", not {alpha_text(alpha)}; leave `alpha` out or set it to that."
        )
    served = checkpoints(task)
    if alpha is None:
        return next(iter(served.items()))
    for trained, name in served.items():
        if math.isclose(trained, alpha, abs_tol=1e-9):
            return trained, name
    allowed = " or ".join(alpha_text(a) for a in served)
    raise UnknownAlpha(
        f"There is no {task} model with a pointer trained at α = {alpha_text(alpha)}; set "
        f"`alpha` to {allowed}, or leave it out for the trained default."
    )


def resolve_snapshot(
    task: Task, alpha: float | None, model: str | None, snapshot: int
) -> tuple[float, str]:
    name = snapshots.named(SNAPSHOTS.get(task), snapshot, task)
    if model is not None:
        raise snapshots.UnknownSnapshot(
            "A snapshot is of one training run; leave `model` out with it."
        )
    trained = trained_alpha(name)
    if alpha is not None and not math.isclose(alpha, trained, abs_tol=1e-9):
        raise UnknownAlpha(
            f"The {task} snapshots are of a pointer trained at α = {alpha_text(trained)}; "
            "leave `alpha` out or set it to that."
        )
    return trained, name


def hypotheses(decoder: Decoder, beam_width: int, samples: int, n: int) -> int:
    """How many outputs a decoder carries at once over n inputs: its share of the compute
    budget. Symmetric runs 8·n greedy rollouts of the attention model, whose steps share one
    encoding per image and cost about an eighth of a Pointer Network hypothesis's (measured
    by bench/pointer_api.py: 94 ms at n = 50, 0.7 s at n = 100), so it is priced as n."""
    return {"greedy": 1, "beam": beam_width, "sample": samples, "symmetric": n}[decoder]


@dataclass(frozen=True)
class PointerRequest:
    """One decode, in plain Python: inputs are [[x, y], …] points or […] values (sort)."""

    task: Task
    inputs: list[Any]
    decoder: Decoder = "greedy"
    beam_width: int = 8
    samples: int = 64
    seed: int = 0
    alpha: float | None = None
    model: str | None = None  # a checkpoint of SERVED[task]; None: chosen by α
    snapshot: int | None = None  # a step of the task's snapshot run (SNAPSHOTS); None: trained


@dataclass(frozen=True)
class ServedPointer:
    """A loaded checkpoint with what the trace reports about it."""

    name: str
    model: PointerNet | AttentionModel
    sha256: str
    train_steps: int | None = None
    alpha: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "alpha", self.model.config.alpha)

    @classmethod
    def from_entry(cls, name: str, model: Any, entry: dict[str, Any]) -> ServedPointer:
        if not isinstance(model, PointerNet | AttentionModel):
            raise TypeError(f"{name} is neither a pointer network nor an attention model")
        return cls(name, model, entry["sha256"], entry.get("steps"))


# ---- the trace: what the API returns and the HTML draws ----


class PointerStep(BaseModel):
    distribution: list[float] = Field(
        description="pointer probabilities over the inputs (hull: then the end position)"
    )
    chosen: int = Field(description="index chosen at this step (hull: n means end)")
    support_size: int = Field(description="positions with nonzero probability")


class PointerModelInfo(BaseModel):
    name: str = Field(description="checkpoint name in checkpoints/manifest.json")
    alpha: float = Field(
        description="α of the pointer mapping: 1 softmax (dense), 1.5 1.5-entmax, 2 sparsemax"
    )
    sha256: str
    train_steps: int | None = None


class Reference(BaseModel):
    order: list[int]
    method: str
    optimal: bool = Field(description="whether `order` is proven optimal / exact")


class HullReference(Reference):
    area: float


class TspReference(Reference):
    length: float


class BestOfK(BaseModel):
    k: int = Field(description="how many of the samples, in the order drawn")
    value: float | None = Field(
        description="the best among the first k samples: tsp, the shortest tour length; hull, "
        "the largest area of a simple output polygon (null while none is simple); sort, the "
        "fewest neighbouring pairs out of order"
    )


class PointerResponse(BaseModel):
    task: Task
    n: int
    decoder: Decoder
    beam_width: int = Field(description="1 unless beam search")
    samples: int = Field(description="outputs drawn by the sample decoder; 1 otherwise")
    best_of_k: list[BestOfK] | None = Field(
        description="sample decoder: the best so far at k = 1, 2, 4, … and at the number "
        "drawn; null for greedy and beam"
    )
    order: list[int] = Field(description="input indices in output order, no end marker")
    steps: list[PointerStep]
    valid: bool
    correct: bool = Field(
        description="hull: the same polygon as the exact hull; tsp: a tour no longer than the "
        "reference; sort: values in ascending order"
    )
    gap: float | None
    model: PointerModelInfo
    server_ms: float = Field(
        description="time to decode, solve the reference and score (the one-time checkpoint "
        "load excluded)"
    )


class HullResponse(PointerResponse):
    end_index: int = Field(description="index of the end position (= n)")
    area: float = Field(description="shoelace area of the output polygon")
    reference: HullReference
    gap: float | None = Field(
        description="1 − area / hull area for a simple output polygon; null otherwise"
    )


class TspResponse(PointerResponse):
    length: float = Field(description="length of the closed output tour")
    reference: TspReference
    gap: float | None = Field(description="length / reference length − 1")


class SortResponse(PointerResponse):
    rescaled: bool = Field(
        description="values outside [0, 1] were mapped affinely into it for the model "
        "(trained on [0, 1)); the order does not change"
    )
    reference: Reference
    gap: float | None = Field(description="share of output positions holding the wrong value")


PointerTrace = HullResponse | TspResponse | SortResponse


# ---- decoding and scoring ----


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


def best_of_k_curve(running_best: list[float], score: SampleScore) -> list[BestOfK]:
    """The running best at k = 1, 2, 4, … and at the number drawn."""
    count = len(running_best)
    ks = sorted({1 << i for i in range(count.bit_length()) if 1 << i <= count} | {count})
    return [BestOfK(k=k, value=score.value(running_best[k - 1])) for k in ks]


DECODERS = {
    PointerNet: ("greedy", "beam", "sample"),
    AttentionModel: ("greedy", "sample", "symmetric"),
}


def decoders_of(name: str) -> tuple[Decoder, ...]:
    """The decoders a served checkpoint offers (without loading it)."""
    return DECODERS[AttentionModel if is_attention_model(name) else PointerNet]


def decode(
    model: PointerNet | AttentionModel,
    inputs: np.ndarray,
    request: PointerRequest,
    score: SampleScore,
    check: Check = None,
) -> Decoded:
    """The model's output for one instance; `check` is called between decoding steps and
    raises to stop. The sample decoder keeps the sample `score` ranks best."""
    if request.decoder not in (offered := DECODERS[type(model)]):
        kind = "attention model" if isinstance(model, AttentionModel) else "Pointer Network"
        raise UnknownModel(
            f"The {kind} decodes {', '.join(offered)}, not {request.decoder}; choose one of "
            "those, or another `model`."
        )
    if isinstance(model, AttentionModel):
        return decode_attention(model, inputs, request, score, check)
    if request.decoder == "beam":
        trace = beam_search(model, inputs, width=request.beam_width, check=check)
        return Decoded(trace, request.beam_width, 1, None)
    if request.decoder == "sample":
        traces = sample(model, inputs, request.samples, seed=request.seed, check=check)
        best, running = best_of(traces, score.cost)
        return Decoded(best, 1, request.samples, best_of_k_curve(running, score))
    return Decoded(greedy(model, inputs[None], check)[0], 1, 1, None)


def decode_attention(
    model: AttentionModel,
    cities: np.ndarray,
    request: PointerRequest,
    score: SampleScore,
    check: Check,
) -> Decoded:
    if request.decoder == "sample":
        traces = attention_routing.sample_traces(
            model, cities, request.samples, request.seed, check
        )
        best, running = best_of(traces, score.cost)
        return Decoded(best, 1, request.samples, best_of_k_curve(running, score))
    if request.decoder == "symmetric":
        return Decoded(attention_routing.symmetric_trace(model, cities, check), 1, 1, None)
    return Decoded(attention_routing.greedy_trace(model, cities, check), 1, 1, None)


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
        PointerStep(distribution=row, chosen=int(chosen), support_size=int(support))
        for row, chosen, support in zip(
            four_digits(trace.distributions).tolist(),
            trace.chosen,
            trace.support_sizes,
            strict=True,
        )
    ]


def common_fields(
    request: PointerRequest, served: ServedPointer, decoded: Decoded
) -> dict[str, Any]:
    return {
        "task": request.task,
        "n": len(request.inputs),
        "decoder": request.decoder,
        "beam_width": decoded.beam_width,
        "samples": decoded.samples,
        "best_of_k": decoded.best_of_k,
        "order": decoded.trace.order,
        "steps": steps_of(decoded.trace),
        "model": PointerModelInfo(
            name=served.name,
            alpha=served.alpha,
            sha256=served.sha256,
            train_steps=served.train_steps,
        ),
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


def hull_trace(
    request: PointerRequest, served: ServedPointer, started: float, check: Check
) -> HullResponse:
    points = hull.validate_points(np.array(request.inputs))  # raises on collinear input
    exact = hull.convex_hull_order(points)
    exact_area = hull.polygon_area(points, exact)
    decoded = decode(served.model, points, request, hull_score(points), check)
    order = decoded.trace.order
    simple = hull.is_simple_polygon(points, order)
    area = hull.polygon_area(points, order) if len(order) >= 3 else 0.0
    return HullResponse(
        **common_fields(request, served, decoded),
        end_index=len(points),
        valid=simple,
        correct=hull.same_polygon(order, exact),
        area=area,
        reference=HullReference(
            order=exact, method="monotone chain (exact)", optimal=True, area=exact_area
        ),
        gap=1.0 - area / exact_area if simple else None,
        server_ms=(time.perf_counter() - started) * 1000,
    )


@lru_cache(maxsize=256)
def tsp_reference(points: tuple[tuple[float, float], ...]) -> TspReference:
    """models.tasks.tsp.reference_tour for the cities, cached, because the board asks again
    for the same points when only the decoder changes."""
    cities = np.array(points)
    order, method, optimal = tsp.reference_tour(cities)
    return TspReference(
        order=order, method=method, optimal=optimal, length=tsp.tour_length(cities, order)
    )


def tsp_trace(
    request: PointerRequest, served: ServedPointer, started: float, check: Check
) -> TspResponse:
    cities = tsp.validate_points(np.array(request.inputs))
    reference = tsp_reference(tuple(tuple(point) for point in request.inputs))
    decoded = decode(served.model, cities, request, tsp_score(cities), check)
    order = decoded.trace.order
    valid = tsp.is_valid_tour(order, len(cities))
    length = tsp.tour_length(cities, order)
    return TspResponse(
        **common_fields(request, served, decoded),
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


def sort_trace(
    request: PointerRequest, served: ServedPointer, started: float, check: Check
) -> SortResponse:
    values = sort.validate_values(np.array(request.inputs))
    exact = sort.sorted_order(values)
    inputs, rescaled = model_values(values)
    decoded = decode(served.model, inputs, request, sort_score(values), check)
    order = decoded.trace.order
    valid = sorted(order) == list(range(len(values)))
    wrong = np.asarray(values[order] != values[exact]) if valid else None
    return SortResponse(
        **common_fields(request, served, decoded),
        rescaled=rescaled,
        valid=valid,
        correct=sort.is_sorted_output(values, order),
        reference=Reference(order=exact, method="stable sort (exact)", optimal=True),
        gap=float(wrong.mean()) if wrong is not None else None,
        server_ms=(time.perf_counter() - started) * 1000,
    )


TRACERS = {"hull": hull_trace, "tsp": tsp_trace, "sort": sort_trace}


def run(
    request: PointerRequest, load: Callable[[str], ServedPointer], check: Check = None
) -> PointerTrace:
    """Decode one request with the checkpoint its α names, scored against the exact answer.

    `load(name)` returns the loaded checkpoint (the web layer passes its registry). Raises
    InvalidInput, with a sentence for the reader, on unusable input or an α no checkpoint has;
    whatever `load` or `check` raise passes through."""
    _, name = resolve(request.task, request.alpha, request.model, request.snapshot)
    served = load(name)
    started = time.perf_counter()  # after the one-time checkpoint load
    return TRACERS[request.task](request, served, started, check)
