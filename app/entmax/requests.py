"""The α-entmax API contract: a score vector and α in, the distribution and its threshold out."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

MAX_SCORES = 512
MIN_ALPHA = 1.0
MAX_ALPHA = 10.0
# (α − 1)·score must stay far from float64 overflow for every α the API accepts.
MAX_ABS_SCORE = 1e6
MAX_LABEL_CHARS = 64

# strict: a string such as "1.5" is a wrong type, not a number to coerce.
Score = Annotated[
    float, Field(strict=True, allow_inf_nan=False, ge=-MAX_ABS_SCORE, le=MAX_ABS_SCORE)
]
Label = Annotated[str, Field(strict=True, max_length=MAX_LABEL_CHARS)]


class EntmaxRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scores: list[Score] = Field(
        min_length=1,
        max_length=MAX_SCORES,
        description=f"one finite score per item, |score| ≤ {MAX_ABS_SCORE:g}",
        examples=[[0.4, 1.2, 0.6, 0.9, 0.5, 2.2, 0.1]],
    )
    alpha: float = Field(
        strict=True,
        allow_inf_nan=False,
        ge=MIN_ALPHA,
        le=MAX_ALPHA,
        description="1 is softmax, 1.5 the paper's entmax, 2 sparsemax; larger is sparser",
        examples=[1.5],
    )
    labels: list[Label] | None = Field(
        None,
        max_length=MAX_SCORES,
        description="optional name for each score (e.g. its token); only the HTML fragment "
        "shows them",
        examples=[["the", "cat", "sat", "on", "the", "mat", "."]],
    )

    @model_validator(mode="after")
    def one_label_per_score(self) -> EntmaxRequest:
        if self.labels is not None and len(self.labels) != len(self.scores):
            raise ValueError(
                f"Send one label per score: there are {len(self.scores)} scores "
                f"but {len(self.labels)} labels."
            )
        return self


class EntmaxResponse(BaseModel):
    probabilities: list[float] = Field(
        description="entmax_α(scores); entries outside the support are exactly 0"
    )
    support_size: int = Field(description="how many probabilities are nonzero")
    tau: float = Field(
        description="the threshold τ in p_i = [(α − 1)·score_i − τ]_+^(1/(α − 1)); "
        "at α = 1, τ = log Σ exp(score)"
    )
    score_threshold: float | None = Field(
        description="τ / (α − 1): the scores above it are in the support; null at α = 1, "
        "where every score is"
    )
