"""The sparse seq2seq API contract: inflection and translation requests with their limits, the
answer around the family's decoding Trace (declared once, in models.seq2seq_run), and the options
the widgets offer.

Limits that depend on a trained model (languages, feature cells, lemma characters, trained α
values) are checked by app.seq2seq.service against the checkpoints; the limits here are fixed.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.compute import PricedRequest, text_cost
from app.numbers import MAX_BEAM_WIDTH, JsonInt
from models.seq2seq_run import (  # the Trace the API answers, declared with the family's run
    DEFAULT_ALPHA,
    InflectionReference,
    InflectResponse,
    Seq2SeqModelInfo,
    Seq2SeqResponse,
    Task,
    TranslateResponse,
    TranslationReference,
)
from models.tasks.inflection import LANGUAGES
from models.tasks.translation_tokenizers import MAX_SOURCE_CHARS as MAX_SENTENCE_CHARS
from models.tasks.translation_tokenizers import MAX_SOURCE_WORDS as MAX_SENTENCE_WORDS

MAX_LEMMA_CHARS = 40
MIN_INFERENCE_ALPHA, MAX_INFERENCE_ALPHA = 1.0, 2.0
__all__ = [
    "DEFAULT_ALPHA",
    "InflectionReference",
    "InflectResponse",
    "Seq2SeqModelInfo",
    "Seq2SeqResponse",
    "Task",
    "TranslateResponse",
    "TranslationReference",
]


class Seq2SeqDecodeOptions(PricedRequest):
    model_config = ConfigDict(extra="forbid")

    # strict: JSON numbers only; `true` or "1.5" is a wrong type, not a number to coerce.
    alpha: float = Field(
        DEFAULT_ALPHA,
        strict=True,
        allow_inf_nan=False,
        description="picks the model trained with this α (attention and output); it must be "
        "one of the trained values listed by GET /api/seq2seq/options",
        examples=[1.5],
    )
    inference_alpha: float | None = Field(
        None,
        strict=True,
        ge=MIN_INFERENCE_ALPHA,
        le=MAX_INFERENCE_ALPHA,
        allow_inf_nan=False,
        description="decode the model chosen by `alpha` with this α applied to its attention "
        "and output scores instead of the α it was trained with (1 to 2)",
        examples=[1.8],
    )
    beam_width: JsonInt = Field(5, ge=1, le=MAX_BEAM_WIDTH, description="hypotheses kept per step")


class InflectRequest(Seq2SeqDecodeOptions):
    lemma: str = Field(
        description=f"the word to inflect, 1-{MAX_LEMMA_CHARS} characters", examples=["swim"]
    )
    language: str = Field(
        max_length=8,
        description="language code, e.g. en",
        examples=["en"],
        json_schema_extra={"enum": list(LANGUAGES)},  # the service says which, in a sentence
    )
    features: str = Field(
        max_length=80, description="UniMorph-style cell, e.g. V;PST", examples=["V;PST"]
    )

    @field_validator("lemma")
    @classmethod
    def lemma_length(cls, lemma: str) -> str:
        lemma = lemma.strip()
        if not 1 <= len(lemma) <= MAX_LEMMA_CHARS:
            raise ValueError(
                f"The lemma must have 1-{MAX_LEMMA_CHARS} characters; it has {len(lemma)}."
            )
        if any(ch.isspace() for ch in lemma):
            raise ValueError("The lemma must be one word, without spaces.")
        return lemma

    def cost(self) -> int:
        """Characters × beam width: the source length bounds the output's."""
        return text_cost(len(self.lemma), self.beam_width)


class TranslateRequest(Seq2SeqDecodeOptions):
    text: str = Field(
        description=f"an English sentence: 1-{MAX_SENTENCE_WORDS} words, at most "
        f"{MAX_SENTENCE_CHARS} characters",
        examples=["Could not open the file."],
    )

    @field_validator("text")
    @classmethod
    def sentence_size(cls, text: str) -> str:
        text = " ".join(text.split())
        words = len(text.split())
        if not 1 <= words <= MAX_SENTENCE_WORDS or len(text) > MAX_SENTENCE_CHARS:
            raise ValueError(
                f"The sentence must have 1-{MAX_SENTENCE_WORDS} words and at most "
                f"{MAX_SENTENCE_CHARS} characters; it has {words} words and {len(text)} "
                "characters."
            )
        return text

    def cost(self) -> int:
        return text_cost(len(self.text), self.beam_width)


class ModelOption(BaseModel):
    alpha: float
    name: str
    available: bool
    reason: str | None = Field(description="why the model cannot be served, if it cannot")


class InflectionExample(BaseModel):
    label: str
    lemma: str
    language: str
    features: str
    why: str


class TranslationExample(BaseModel):
    label: str
    text: str


class InflectionOptions(BaseModel):
    languages: list[str]
    features: dict[str, list[str]] = Field(description="the feature cells of each language")
    characters: dict[str, str] = Field(description="the characters a lemma may use, per language")
    alphas: list[float] = Field(description="the trained α values (attention = output)")
    models: list[ModelOption]
    examples: list[InflectionExample]
    max_lemma_chars: int = MAX_LEMMA_CHARS


class TranslationOptions(BaseModel):
    source_language: str = "en"
    target_language: str = "de"
    alphas: list[float]
    models: list[ModelOption]
    examples: list[TranslationExample] = Field(
        description="example sentences: from the test and training splits, and one the corpus "
        "lacks (each answer's `reference` says which)"
    )
    max_words: int = MAX_SENTENCE_WORDS
    max_chars: int = MAX_SENTENCE_CHARS


class OptionsResponse(BaseModel):
    inflection: InflectionOptions
    translation: TranslationOptions
    beam_width: tuple[int, int] = (1, MAX_BEAM_WIDTH)
    inference_alpha: tuple[float, float] = (MIN_INFERENCE_ALPHA, MAX_INFERENCE_ALPHA)
