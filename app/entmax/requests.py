"""The α-entmax API contract: a score vector and α in, the distribution and its threshold out;
and the playground's figure request (`PlaygroundRequest`): a sentence, its scores and α."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    ValidationError,
    model_validator,
)

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


@dataclass(frozen=True)
class Example:
    key: str
    title: str
    text: str
    scores: list[float]


EXAMPLES = (
    Example(
        "attention",
        "Attention: the decoder is about to write “tapis”",
        "the cat sat on the mat .",
        [0.2, 1.4, 0.5, 0.8, 0.3, 2.0, -0.5],
    ),
    Example(
        "next-word",
        "Output: the word after “I drank a cup of”",
        "tea coffee water milk soup ink sand",
        [3.0, 2.8, 2.2, 1.9, 1.2, -0.5, -1.5],
    ),
    Example(
        "ties",
        "Ties: equal scores keep equal shares at every α",
        "north south east west",
        [1.0, 1.0, 1.0, 1.0],
    ),
)
PLAYGROUND_PREFIX = "entmax-"  # the playground's page-address keys: entmax-text, entmax-scores, ...
SLIDER = {"min": 1.0, "max": 4.0, "step": 0.01}
# A query string's numbers are text: the playground's scores and α parse it.
TypedScore = Annotated[float, Field(allow_inf_nan=False, ge=-MAX_ABS_SCORE, le=MAX_ABS_SCORE)]


class PlaygroundRequest(EntmaxRequest):
    """The playground's figure: a sentence, one score per word (missing ones 0, extra ones
    dropped) and α on the slider; the words are the labels. These are the form's fields, the
    query of GET /api/entmax/figure and, under PLAYGROUND_PREFIX, the page address, whose
    scores are one comma-separated value. Without a sentence: the first example's, or the
    chosen `example`'s."""

    text: str = ""
    scores: list[TypedScore] = Field(min_length=1, max_length=MAX_SCORES)
    alpha: float = Field(1.5, ge=SLIDER["min"], le=SLIDER["max"], allow_inf_nan=False)
    example: str | None = Field(None, exclude=True)

    @model_validator(mode="wrap")
    @classmethod
    def one_score_per_word(
        cls, data: Any, handler: ModelWrapValidatorHandler[PlaygroundRequest]
    ) -> PlaygroundRequest:
        """One score per word; a score that does not validate is refused in the reader's
        terms: by its word, counted from 1 as the rows are."""
        data = cls.scores_for_words(data)
        try:
            return handler(data)
        except ValidationError as exc:
            words = data.get("labels", []) if isinstance(data, dict) else []
            sentence = next(filter(None, (score_refusal(e, words) for e in exc.errors())), None)
            if sentence is None:
                raise
            raise ValueError(sentence) from None

    @staticmethod
    def scores_for_words(data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "text" not in data:
            chosen = next((e for e in EXAMPLES if e.key == data.get("example")), EXAMPLES[0])
            data |= {"text": chosen.text, "scores": chosen.scores}
        text = data["text"] if isinstance(data["text"], str) else ""
        scores = data.get("scores", [])
        if isinstance(scores, str):  # the address: "0.2,1.4,0.5"
            scores = scores.split(",") if scores else []
        words = text.split()
        given = list(scores)[: len(words)]
        data["scores"] = given + [0.0] * (len(words) - len(given))
        data["labels"] = [word[:MAX_LABEL_CHARS] for word in words]
        return data

    def matching_example(self) -> Example | None:
        return next((e for e in EXAMPLES if (e.text, e.scores) == (self.text, self.scores)), None)

    def address(self) -> dict[str, str | None]:
        """The page-address keys that reproduce this figure."""
        return {
            f"{PLAYGROUND_PREFIX}text": self.text,
            f"{PLAYGROUND_PREFIX}scores": ",".join(f"{score:.12g}" for score in self.scores),
            f"{PLAYGROUND_PREFIX}alpha": f"{self.alpha:g}",
        }


def plain_number(value: float) -> str:
    """1e9 as "1,000,000,000": a reader's number, not a float's repr."""
    if value.is_integer() and abs(value) < 1e15:
        return f"{value:,.0f}"
    return f"{value:,.6g}"


def score_refusal(error: Any, words: list[str]) -> str | None:
    """A playground score's error as the reader sees the rows (the word, counted from 1; the
    limit in plain digits), or None for an error about something else."""
    loc, kind, value = error.get("loc", ()), error.get("type"), error.get("input")
    if loc == ("scores",) and kind == "too_long":
        return f"The sentence has {len(value)} words; the playground takes at most {MAX_SCORES}."
    if len(loc) != 2 or loc[0] != "scores" or not isinstance(loc[1], int):
        return None
    word = words[loc[1]] if loc[1] < len(words) else ""
    score = f"score of “{word}” (word {loc[1] + 1})"
    if kind == "greater_than_equal":
        limit = plain_number(-MAX_ABS_SCORE)
        return f"The {score} must be at least {limit}; it is {plain_number(float(value))}."
    if kind == "less_than_equal":
        limit = plain_number(MAX_ABS_SCORE)
        return f"The {score} must be at most {limit}; it is {plain_number(float(value))}."
    if kind == "finite_number":
        return f"The {score} must be a finite number, not {value}."
    if value in ("", None):
        return f"Give the {score} a number."
    return f"The {score} must be a number; got {value!r}."
