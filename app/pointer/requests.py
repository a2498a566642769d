"""The pointer-network API contract: requests with their limits, and the responses.

Indices in requests and responses count from 0, as the code does; the deep-dive's prose and
the board's labels count from 1. For the hull, the end-of-output position has index n (one past
the last input) in each step's distribution and in `chosen`; `order` never contains it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from app.compute import PricedRequest, pointer_cost
from app.numbers import MAX_BEAM_WIDTH, JsonInt, tolerated
from models.errors import InvalidInput
from models.pointer import MAX_SAMPLES
from models.pointer_run import (  # the responses are the family's trace, declared once
    SERVED,
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
    decoders_of,
    hypotheses,
    resolve,
    served_names,
    trained_alpha,
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
MAX_SNAPSHOT_STEP = 10**6  # a training step; the runs keep snapshots up to a few thousand
MAX_NUMBER_CHARS = 40  # a number in an address longer than this is not read as one

# strict: JSON numbers only; `true` or "0.5" is a wrong type, not a number to coerce.
Coordinate = Annotated[float, Field(strict=True, ge=0.0, le=1.0, allow_inf_nan=False)]
Value = Annotated[float, Field(strict=True, ge=-1e9, le=1e9, allow_inf_nan=False)]
# The α each kind of request may name, listed as an enum (models.pointer_run.checkpoints has
# them). Validation stays in models.pointer_run.resolve, whose sentence names the choices.
POINT_ALPHAS = sorted(set(checkpoints("hull")) | set(checkpoints("tsp")))
# Any served checkpoint's name; whether it serves the request's task is resolve's to say.
ServedName = Literal[*served_names()]
VALUE_ALPHAS = sorted(checkpoints("sort"))


class PointerDecodeOptions(PricedRequest):
    model_config = ConfigDict(extra="forbid")

    decoder: Literal["greedy", "beam", "sample", "symmetric"] = Field(
        "greedy",
        description="greedy: the most probable input at each step; beam: beam search; sample: "
        "draw `samples` outputs from the pointer's distribution and keep the best (tsp: the "
        "shortest tour; hull: the simple polygon with the largest area; sort: the fewest "
        "neighbours out of order); symmetric (the tsp attention model only): greedy from "
        "every start city in each of the 8 rotations and reflections of the unit square, the "
        "shortest tour",
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

    model: ServedName | None = Field(
        None,
        description="the checkpoint to decode with, one of the task's served models "
        "(GET /api/pointer/{task}/models); leave it out to choose by `alpha`",
        examples=[None],
    )

    snapshot: JsonInt | None = Field(
        None,
        ge=0,
        le=MAX_SNAPSHOT_STEP,
        description="a training step at which the task's model was kept (hull and sort: "
        "GET /api/pointer/{task}/models lists them): decode with the weights it had then; "
        "leave it out for the trained model",
    )

    def hypotheses(self, n: int) -> int:
        """How many outputs the decoder carries at once over n inputs: its share of the price."""
        return hypotheses(self.decoder, self.beam_width, self.samples, n)


def alpha_schema(tasks: tuple[Task, ...], model: str | None = None) -> dict[str, Any]:
    """`alpha`'s schema: the trained values (of `model`, or of any model of the tasks), each
    within the tolerance models.pointer_run.resolve allows, or null."""

    def accepts(alpha: float) -> bool:
        for task in tasks:
            try:
                resolve(task, alpha, model)
                return True
            except InvalidInput:
                pass
        return False

    trained = {trained_alpha(model)} if model else {a for t in tasks for a in checkpoints(t)}
    return {"anyOf": [*tolerated(trained, accepts)["anyOf"], {"type": "null"}]}


def decoding_schema(*tasks: Task) -> Callable[[dict[str, Any]], None]:
    """The schema's statement of which `model`, `alpha` and `decoder` go together for these
    tasks (models.pointer_run.resolve and decode enforce it): one `oneOf` branch without a
    model (the task's default for α, a Pointer Network) and one per served model, with the α
    it was trained at and the decoders it offers."""
    names = list(dict.fromkeys(name for task in tasks for name in SERVED[task]))
    defaults = [name for task in tasks for name in checkpoints(task).values()]
    chosen_by_alpha = sorted({decoder for name in defaults for decoder in decoders_of(name)})

    def extra(schema: dict[str, Any]) -> None:
        schema["oneOf"] = [
            {"properties": {"model": {"type": "null"}, "decoder": {"enum": chosen_by_alpha}}},
            *(
                {
                    "required": ["model"],
                    "properties": {
                        "model": {"const": name},
                        "alpha": alpha_schema(tasks, name),
                        "decoder": {"enum": list(decoders_of(name))},
                    },
                }
                for name in names
            ),
        ]

    return extra


class PointsRequest(PointerDecodeOptions):
    model_config = ConfigDict(json_schema_extra=decoding_schema("hull", "tsp"))

    alpha: float | None = Field(
        None,
        strict=True,
        allow_inf_nan=False,
        description="α of the pointer mapping; leave it out for the trained default",
        json_schema_extra=alpha_schema(("hull", "tsp")),
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

    def inputs(self) -> list[list[float]]:
        return [list(point) for point in self.points]

    def cost(self) -> int:
        return pointer_cost(len(self.points), self.hypotheses(len(self.points)))


class ValuesRequest(PointerDecodeOptions):
    model_config = ConfigDict(json_schema_extra=decoding_schema("sort"))

    alpha: float | None = Field(
        None,
        strict=True,
        allow_inf_nan=False,
        description="α of the pointer mapping: 1 softmax (the default) or 1.5, the sparse "
        "1.5-entmax pointer",
        json_schema_extra=alpha_schema(("sort",)),
    )
    values: list[Value] = Field(
        min_length=MIN_VALUES,
        max_length=MAX_INPUTS,
        description="numbers to sort; ties are allowed",
        examples=[[0.62, 0.15, 0.87, 0.4, 0.05]],
    )

    def inputs(self) -> list[float]:
        return list(self.values)

    def cost(self) -> int:
        return pointer_cost(len(self.values), self.hypotheses(len(self.values)))


def number(part: str, what: str) -> float:
    try:
        value = float(part)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ValueError(f"The board got a {what} that is not a number: “{part}”.")
    return value


def from_text(value: Any, pairs: bool) -> Any:
    """The address's `0.1,0.2;0.8,0.1` or the board's one `x, y` per line -> [[0.1, 0.2],
    [0.8, 0.1]] (`pairs`), `0.6,0.1` or `0.6 0.1` -> [0.6, 0.1]; a string, or the query's
    list of them. A JSON list of numbers passes as it is."""
    texts = [value] if isinstance(value, str) else value
    if not texts or not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        return value
    if not pairs:
        return [number(v, "value") for t in texts for v in re.split(r"[\s,;]+", t) if v]
    points: list[list[float]] = []
    lines = [line for text in texts for line in re.split(r"[;\n]", text)]
    for i, parts in enumerate(([v for v in re.split(r"[\s,]+", line) if v] for line in lines), 1):
        if parts and len(parts) != 2:
            raise ValueError(f"Point {len(points) + 1} (line {i}) needs two numbers, x and y.")
        if parts:
            points.append([number(v, "coordinate") for v in parts])
    return points


def number_from_text(value: Any) -> Any:
    """The address spells numbers as text: "4" -> 4, "1.5" -> 1.5; anything else as it is
    (the field's own validation then refuses it). Only ASCII digits count: Python's int() also
    reads "٣" as 3, which the JSON API refuses."""
    if not isinstance(value, str) or not value.isascii() or len(value) > MAX_NUMBER_CHARS:
        return value
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


class BoardFields(BaseModel):
    """What a board adds to its request: the decoder step it shows. The board's request reads
    its numbers from text as well (the page address, the board's form)."""

    step: int = Field(1, ge=1, description="the decoder step shown, counting from 1")

    _numbers = field_validator(
        "beam_width", "samples", "seed", "alpha", "step", mode="before", check_fields=False
    )(number_from_text)
    # the board's training slider sends its snapshot field empty when it is off
    _snapshot = field_validator("snapshot", mode="before", check_fields=False)(
        lambda value: None if value == "" else number_from_text(value)
    )


def picks_from_text(value: Any) -> Any:
    """The address's `3,1,4` (the reader's picks, from 1) -> [3, 1, 4], a string or the
    query's list of them; an empty text -> []; anything else as it is (the field's own
    validation then refuses it)."""
    texts = [value] if isinstance(value, str) else value
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        return value
    parts = [part for text in texts for part in re.split(r"[\s,;]+", text) if part]
    return [int(part) if part.isascii() and part.isdigit() else part for part in parts]


class PointsBoard(BoardFields, PointsRequest):
    """A hull or TSP board's state: its request and step, and the reader's own answer when it
    is their turn (`turn`, `mine`: app/pointer/your_turn.py scores it). It may hold fewer
    points than a decode needs (a cleared board, the first clicks); the board then says so."""

    points: list[tuple[Coordinate, Coordinate]] = Field(max_length=MAX_INPUTS)
    turn: bool = Field(False, description="the reader builds their own answer by picking points")
    mine: list[JsonInt] = Field(
        default_factory=list,
        max_length=MAX_INPUTS,
        description="the reader's answer so far: point numbers, from 1, in the order picked",
    )

    _text = field_validator("points", mode="before")(lambda value: from_text(value, pairs=True))
    _picks = field_validator("mine", mode="before")(picks_from_text)

    @model_validator(mode="after")
    def picks_on_the_board(self) -> PointsBoard:
        seen: set[int] = set()
        for number in self.mine:
            if not 1 <= number <= len(self.points):
                raise ValueError(
                    f"Your answer picks point {number}, but the board has {len(self.points)} "
                    "points; start your answer again."
                )
            if number in seen:
                raise ValueError(
                    f"Your answer picks point {number} twice; each point is picked once."
                )
            seen.add(number)
        return self


class ValuesBoard(BoardFields, ValuesRequest):
    """The sorting board's state: its request and step; it may hold fewer values than a
    decode needs."""

    values: list[Value] = Field(max_length=MAX_INPUTS)

    _text = field_validator("values", mode="before")(lambda value: from_text(value, pairs=False))


Board = PointsBoard | ValuesBoard
BOARDS: dict[str, type[PointsBoard] | type[ValuesBoard]] = {
    "hull": PointsBoard,
    "tsp": PointsBoard,
    "sort": ValuesBoard,
}
INPUTS = {"hull": "points", "tsp": "points", "sort": "values"}  # the field of each task's inputs


class VariantInfo(BaseModel):
    alpha: float = Field(description="α of the checkpoint's pointer mapping")
    checkpoint: str
    available: bool = Field(description="loaded and verified: requests for it will be served")
    reason: str | None = Field(None, description="why it cannot be served; null when available")


class TaskModels(BaseModel):
    task: Task
    variants: list[VariantInfo]
    snapshots: list[int] = Field(
        default_factory=list,
        description="training steps a request's `snapshot` may name (a rerun of the default "
        "model's recipe that kept its weights at these steps); empty when the task has none",
    )
