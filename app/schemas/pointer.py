"""The pointer-network API contract: requests with their limits, and the responses.

Indices in requests and responses count from 0, as the code does; the deep-dive's prose and
the board's labels count from 1. For the hull, the end-of-output position has index n (one past
the last input) in each step's distribution and in `chosen`; `order` never contains it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.schemas.numbers import MAX_BEAM_WIDTH, JsonInt
from models.pointer import MAX_SAMPLES

MIN_POINTS = 3
MIN_VALUES = 2
MAX_INPUTS = 100
MAX_SEED = 2**31 - 1

# strict: JSON numbers only; `true` or "0.5" is a wrong type, not a number to coerce.
Coordinate = Annotated[float, Field(strict=True, ge=0.0, le=1.0, allow_inf_nan=False)]
Value = Annotated[float, Field(strict=True, ge=-1e9, le=1e9, allow_inf_nan=False)]
Task = Literal["hull", "tsp", "sort"]
# The pointer variants each kind of request may name (app.pointer_service.CHECKPOINTS has their
# checkpoints; a test keeps the two in step). Validation stays in the service, whose sentence
# names the choices; the schema lists them as an enum.
POINT_VARIANTS = ("softmax",)
VALUE_VARIANTS = ("softmax", "entmax15")


class PointerDecodeOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    decoder: Literal["greedy", "beam", "sample"] = Field(
        "greedy",
        description="greedy: the most probable input at each step; beam: beam search; sample: "
        "draw `samples` outputs from the pointer's distribution and keep the best (tsp: the "
        "shortest tour; hull: the simple polygon with the largest area; sort: the fewest "
        "neighbours out of order)",
    )
    beam_width: JsonInt = Field(
        8,
        ge=1,
        le=MAX_BEAM_WIDTH,
        description="hypotheses kept by beam search (beam only)",
    )
    samples: JsonInt = Field(
        64,
        ge=1,
        le=MAX_SAMPLES,
        description="outputs drawn by the sample decoder (sample only)",
    )
    seed: JsonInt = Field(
        0,
        ge=0,
        le=MAX_SEED,
        description="random seed of the sample decoder: the same seed draws the same samples",
    )
    model: str | None = Field(
        None,
        max_length=40,
        description="pointer variant: `softmax` (every task, the default) or `entmax15` (sort)",
        examples=["softmax"],
    )


class PointsRequest(PointerDecodeOptions):
    model: str | None = Field(
        None,
        description="pointer variant; leave it out for the default",
        json_schema_extra={"enum": [*POINT_VARIANTS, None]},
    )
    points: list[tuple[Coordinate, Coordinate]] = Field(
        min_length=MIN_POINTS,
        max_length=MAX_INPUTS,
        description="distinct points [x, y] in the unit square",
        json_schema_extra={"uniqueItems": True},
        examples=[[[0.15, 0.2], [0.85, 0.1], [0.5, 0.45], [0.9, 0.8], [0.2, 0.85]]],
    )

    @field_validator("points")
    @classmethod
    def distinct(cls, points: list[tuple[float, float]]) -> list[tuple[float, float]]:
        first_seen: dict[tuple[float, float], int] = {}
        for i, point in enumerate(points):
            if point in first_seen:
                raise ValueError(
                    f"Points {first_seen[point] + 1} and {i + 1} (counting from 1) are both "
                    f"({point[0]:g}, {point[1]:g}); move or remove one of them."
                )
            first_seen[point] = i
        return points


class ValuesRequest(PointerDecodeOptions):
    model: str | None = Field(
        None,
        description="pointer variant: `softmax` (the default) or `entmax15`, the sparse pointer",
        json_schema_extra={"enum": [*VALUE_VARIANTS, None]},
    )
    values: list[Value] = Field(
        min_length=MIN_VALUES,
        max_length=MAX_INPUTS,
        description="numbers to sort; ties are allowed",
        examples=[[0.62, 0.15, 0.87, 0.4, 0.05]],
    )


class PointerStep(BaseModel):
    distribution: list[float] = Field(
        description="pointer probabilities over the inputs (hull: then the end position)"
    )
    chosen: int = Field(description="index chosen at this step (hull: n means end)")
    support_size: int = Field(description="positions with nonzero probability")


class PointerModelInfo(BaseModel):
    name: str = Field(description="checkpoint name in checkpoints/manifest.json")
    variant: str
    pointer: str = Field(description="pointer mapping: softmax, entmax15 or sparsemax")
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
    decoder: Literal["greedy", "beam", "sample"]
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


class VariantInfo(BaseModel):
    variant: str
    checkpoint: str
    available: bool = Field(description="loaded and verified: requests for it will be served")
    reason: str | None = Field(None, description="why it cannot be served; null when available")


class TaskModels(BaseModel):
    task: Task
    variants: list[VariantInfo]
