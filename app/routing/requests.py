"""The routing page's two figures as requests and answers: the encoder's attention over the
reader's cities, and what one REINFORCE step would do with tours sampled for them.

A figure's state is its request: the API's query, the figure's form fields and, under the
figure's key (`attn-…`, `rl-…`), the page address. Cities are written as on the TSP board
(`0.1,0.2;0.8,0.1`, or one `x, y` per line); cities, layers, heads and samples count from 1.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from app.compute import PricedRequest, pointer_cost
from app.numbers import JsonInt
from app.pointer.requests import MAX_INPUTS, MAX_SEED, MIN_POINTS, Coordinate, from_text
from app.pointer.requests import number_from_text as _number

MODEL = "attention-routing-tsp20"  # the served attention model the figures read
LAYERS, HEADS = 3, 8  # its encoder (models.attention_routing.Config)
MAX_ROLLOUTS = 64


# A city in the query as the schema states it: "x,y", each in [0, 1] with at most six decimals
# and no trailing zero, so that two different texts are two cities at least 1e-6 apart (the
# server refuses cities closer than 1e-9, models.tasks.tsp.validate_points). The server reads
# more (any float text, "x y", several cities a value split by ";" or new lines); the schema
# states a form every client can send, with `uniqueItems` meaning distinct cities.
COORDINATE_TEXT = r"(?:0|1|0\.[0-9]{0,5}[1-9])"
CITY_TEXT = rf"^{COORDINATE_TEXT},{COORDINATE_TEXT}(?!\n)$"


def cities_in_the_query(schema: dict[str, Any]) -> None:
    """The query's cities: one `points=x,y` per city (a nested list has no query form)."""
    schema.clear()
    schema.update(
        type="array",
        items={"type": "string", "pattern": CITY_TEXT},
        minItems=MIN_POINTS,
        maxItems=MAX_INPUTS,
        uniqueItems=True,
        description="distinct cities in the unit square, one `points=x,y` each",
        examples=[["0.15,0.2", "0.85,0.1", "0.5,0.45", "0.9,0.8", "0.2,0.85"]],
    )


class CitiesFigure(PricedRequest):
    model_config = ConfigDict(extra="forbid")

    points: list[tuple[Coordinate, Coordinate]] = Field(
        min_length=MIN_POINTS,
        max_length=MAX_INPUTS,
        description="distinct cities [x, y] in the unit square",
        examples=[[[0.15, 0.2], [0.85, 0.1], [0.5, 0.45], [0.9, 0.8], [0.2, 0.85]]],
        json_schema_extra=cities_in_the_query,
    )

    _text = field_validator("points", mode="before")(lambda value: from_text(value, pairs=True))

    def address(self, prefix: str) -> dict[str, str]:
        """The page address's keys for this state."""
        shown = {f"{prefix}-points": ";".join(f"{x:g},{y:g}" for x, y in self.points)}
        for name, value in self.model_dump(exclude={"points"}).items():
            shown[f"{prefix}-{name}"] = str(value)
        return shown


class AttentionFigure(CitiesFigure):
    layer: JsonInt = Field(LAYERS, ge=1, le=LAYERS, description="encoder layer, from 1")
    head: JsonInt = Field(1, ge=1, le=HEADS, description="attention head, from 1")
    city: JsonInt = Field(1, ge=1, le=MAX_INPUTS, description="the city whose reading is drawn")

    _numbers = field_validator("layer", "head", "city", mode="before")(_number)

    @model_validator(mode="after")
    def city_on_the_map(self) -> AttentionFigure:
        if self.city > len(self.points):
            raise ValueError(
                f"`city` must be one of the {len(self.points)} cities (1 to "
                f"{len(self.points)}); got {self.city}."
            )
        return self

    def cost(self) -> int:
        return pointer_cost(len(self.points), 1)


class ReinforceFigure(CitiesFigure):
    samples: JsonInt = Field(16, ge=1, le=MAX_ROLLOUTS, description="tours drawn from the policy")
    seed: JsonInt = Field(0, ge=0, le=MAX_SEED, description="the same seed draws the same tours")

    _numbers = field_validator("samples", "seed", mode="before")(_number)

    def cost(self) -> int:
        return pointer_cost(len(self.points), self.samples + 1)  # and the greedy rollout


class ModelInfo(BaseModel):
    name: str
    sha256: str


class AttentionAnswer(BaseModel):
    layer: int
    head: int
    city: int = Field(description="the city drawn, from 1")
    weights: list[list[float]] = Field(
        description="row i: how much city i + 1's head reads every city (each row sums to 1)"
    )
    model: ModelInfo


class Tour(BaseModel):
    order: list[int] = Field(description="city indices, from 0, in visiting order")
    length: float
    log_prob: float = Field(description="log-probability of the tour under the policy")


class SampledTour(Tour):
    advantage: float = Field(
        description="length − the baseline's length: the REINFORCE weight of this tour's "
        "log-probability gradient (negative: the update makes the tour more likely)"
    )


class ReinforceAnswer(BaseModel):
    baseline: Tour = Field(description="the greedy rollout: the baseline b(s)")
    samples: list[SampledTour] = Field(description="in the order drawn")
    model: ModelInfo
