"""The pointer-network API contract: requests with their limits, and the responses.

Indices in requests and responses count from 0, as the code does; the deep-dive's prose and
the board's labels count from 1. For the hull, the end-of-output position has index n (one past
the last input) in each step's distribution and in `chosen`; `order` never contains it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.compute import PricedRequest, pointer_cost
from app.numbers import MAX_BEAM_WIDTH, JsonInt
from models.pointer import MAX_SAMPLES
from models.pointer_run import (  # the responses are the family's trace, declared once
    BestOfK,
    HullReference,
    HullResponse,
    PointerModelInfo,
    PointerResponse,
    PointerStep,
    PointerTrace,
    Reference,
    SortResponse,
    Task,
    TspReference,
    TspResponse,
    checkpoints,
    hypotheses,
)

__all__ = [
    "BestOfK",
    "HullReference",
    "HullResponse",
    "PointerModelInfo",
    "PointerResponse",
    "PointerStep",
    "PointerTrace",
    "Reference",
    "SortResponse",
    "Task",
    "TspReference",
    "TspResponse",
]

MIN_POINTS = 3
MIN_VALUES = 2
MAX_INPUTS = 100
MAX_SEED = 2**31 - 1

# strict: JSON numbers only; `true` or "0.5" is a wrong type, not a number to coerce.
Coordinate = Annotated[float, Field(strict=True, ge=0.0, le=1.0, allow_inf_nan=False)]
Value = Annotated[float, Field(strict=True, ge=-1e9, le=1e9, allow_inf_nan=False)]
# The α each kind of request may name, listed as an enum (models.pointer_run.checkpoints has
# them). Validation stays in models.pointer_run.resolve, whose sentence names the choices.
POINT_ALPHAS = sorted(set(checkpoints("hull")) | set(checkpoints("tsp")))
VALUE_ALPHAS = sorted(checkpoints("sort"))


class PointerDecodeOptions(PricedRequest):
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
    # strict: a JSON number only; `true` or "1.5" is a wrong type, not a number to coerce.
    alpha: float | None = Field(
        None,
        strict=True,
        allow_inf_nan=False,
        description="α of the pointer mapping, which picks the checkpoint trained with it: 1 "
        "softmax (every task, the default), 1.5 1.5-entmax (sort); leave it out for the "
        "task's trained default",
        examples=[1],
    )

    def hypotheses(self) -> int:
        """How many outputs the decoder carries at once: its share of the price."""
        return hypotheses(self.decoder, self.beam_width, self.samples)


class PointsRequest(PointerDecodeOptions):
    alpha: float | None = Field(
        None,
        strict=True,
        allow_inf_nan=False,
        description="α of the pointer mapping; leave it out for the trained default",
        json_schema_extra={"enum": [*POINT_ALPHAS, None]},
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

    def cost(self) -> int:
        return pointer_cost(len(self.points), self.hypotheses())


class ValuesRequest(PointerDecodeOptions):
    alpha: float | None = Field(
        None,
        strict=True,
        allow_inf_nan=False,
        description="α of the pointer mapping: 1 softmax (the default) or 1.5, the sparse "
        "1.5-entmax pointer",
        json_schema_extra={"enum": [*VALUE_ALPHAS, None]},
    )
    values: list[Value] = Field(
        min_length=MIN_VALUES,
        max_length=MAX_INPUTS,
        description="numbers to sort; ties are allowed",
        examples=[[0.62, 0.15, 0.87, 0.4, 0.05]],
    )

    def cost(self) -> int:
        return pointer_cost(len(self.values), self.hypotheses())


class VariantInfo(BaseModel):
    alpha: float = Field(description="α of the checkpoint's pointer mapping")
    checkpoint: str
    available: bool = Field(description="loaded and verified: requests for it will be served")
    reason: str | None = Field(None, description="why it cannot be served; null when available")


class TaskModels(BaseModel):
    task: Task
    variants: list[VariantInfo]
