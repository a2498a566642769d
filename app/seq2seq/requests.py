"""The sparse seq2seq API contract: inflection and translation requests with their limits, the
answer around the family's decoding Trace (declared once, in models.seq2seq_run), the options
the widgets offer, and the widgets' figure requests: a task's request plus how the widget
chooses α and whether it compares (`InflectFigure`, `TranslateFigure`).

Limits that depend on a trained model (languages, feature cells, lemma characters, trained α
values, the characters a sentence may use) are checked by the family's entry point against the
checkpoints; the limits here are fixed. The OpenAPI schema states both: the model-dependent
ones are read from the checkpoints' vocabulary and tokenizers when the schema is built.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from app.compute import PricedRequest, text_cost
from app.numbers import MAX_BEAM_WIDTH, JsonInt, tolerated
from models.checkpoints import CHECKPOINT_DIR, read_manifest
from models.errors import InvalidInput
from models.seq2seq_run import (  # the Trace the API answers, declared with the family's run
    DEFAULT_ALPHA,
    SERVED,
    InflectionReference,
    InflectResponse,
    Seq2SeqModelInfo,
    Seq2SeqResponse,
    Task,
    TranslateResponse,
    TranslationReference,
    resolve,
)
from models.tasks.inflection import LANGUAGES
from models.tasks.inflection_vocab import InflectionVocab
from models.tasks.translation import entry_corpus
from models.tasks.translation_serving import normalised_sentence
from models.tasks.translation_tokenizers import MAX_SOURCE_CHARS as MAX_SENTENCE_CHARS
from models.tasks.translation_tokenizers import MAX_SOURCE_WORDS as MAX_SENTENCE_WORDS
from models.tasks.translation_tokenizers import load_tokenizers

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


def trained_alphas(task: Task) -> dict[str, Any]:
    """`alpha`'s schema: the trained values, each within the tolerance `resolve` allows."""

    def accepts(alpha: float) -> bool:
        try:
            resolve(task, alpha)
        except InvalidInput:
            return False
        return True

    return tolerated(SERVED[task], accepts)


# ---- the inflection cells and alphabets in the schema ----
# Which cells a language has and which characters its lemmas may use come from the trained
# vocabulary (checkpoints/seq2seq-inflect-vocab.json); the schema states them per language
# (one `oneOf` branch each), as models.tasks.inflection_vocab.encode_source enforces them.
def character_class(characters: list[str]) -> str:
    """A regex class for these characters, as ranges of code points."""
    codes = sorted(ord(ch) for ch in characters)
    spans: list[list[int]] = []
    for code in codes:
        if spans and code == spans[-1][1] + 1:
            spans[-1][1] = code
        else:
            spans.append([code, code])

    def escaped(code: int) -> str:
        if (chr(code).isalnum() and code < 0x80) or code > 0xFFFF:  # no regex syntax there
            return chr(code)
        return f"\\u{code:04x}"

    parts = [escaped(a) if a == b else f"{escaped(a)}-{escaped(b)}" for a, b in spans]
    return f"[{''.join(parts)}]"


# Whitespace as str.isspace() and str.strip() know it, spelled out: regex engines' `\s`
# differ (Rust's, which validates for schemathesis, leaves out U+001C-U+001F and U+0085).
SPACE = character_class([chr(code) for code in range(0x3001) if chr(code).isspace()])
NOT_SPACE = f"[^{SPACE[1:]}"
LEMMA_SHAPE = rf"^{SPACE}*{NOT_SPACE}{{1,{MAX_LEMMA_CHARS}}}{SPACE}*$"  # one word, once stripped


def lemma_characters(alphabet: str) -> list[str]:
    """The characters a lemma may hold for a language with this alphabet: its own, and, for a
    lower-case alphabet, every character whose lower case is in it (models.seq2seq_run.
    lemma_as_learned reads "Go" as "go")."""
    if any(ch.isupper() for ch in alphabet):
        return sorted(set(alphabet))
    known = set(alphabet)
    return [ch for ch, lower in lower_cases() if set(lower) <= known]


@functools.cache
def lower_cases() -> tuple[tuple[str, str], ...]:
    """(character, its lower case) for every character whose lower case is only letters."""
    every = (chr(code) for code in range(sys.maxunicode + 1) if not 0xD800 <= code <= 0xDFFF)
    return tuple((ch, ch.lower()) for ch in every if ch.lower().isalpha())


@functools.cache
def language_branches() -> tuple[dict[str, Any], ...]:
    """One schema branch per trained language: its code, its cells, its lemma characters;
    none when the vocabulary cannot be read (the service then refuses every lemma anyway)."""
    try:
        vocab = InflectionVocab.load()
    except (OSError, ValueError, TypeError):
        return ()

    def lemma(language: str) -> str:
        letters = character_class(lemma_characters(vocab.characters[language]))
        return rf"^{SPACE}*{letters}{{1,{MAX_LEMMA_CHARS}}}{SPACE}*$"

    return tuple(
        {
            "properties": {
                "language": {"const": language},
                "features": {"enum": cells},
                "lemma": {"pattern": lemma(language)},
            }
        }
        for language, cells in vocab.features.items()
    )


def inflection_schema(schema: dict[str, Any]) -> None:
    branches = language_branches()
    if branches:
        schema["oneOf"] = list(branches)


def alpha_field(task: str) -> Any:
    """The request's α, which picks the model trained with it for `task`."""
    return Field(
        DEFAULT_ALPHA,
        strict=True,
        allow_inf_nan=False,
        description="picks the model trained with this α (attention and output), one of the "
        "trained values (GET /api/seq2seq/options lists them)",
        examples=[1.5],
        json_schema_extra=trained_alphas(task),
    )


def snapshot_field(run: str) -> Any:
    """A request's training step: decode with the weights `run` training kept then."""
    return Field(
        None,
        ge=0,
        le=10**6,
        description=f"a training step at which {run} training run kept its weights "
        "(models/snapshots.py; GET /api/seq2seq/options lists the steps): decode with the "
        "model as it was then (`alpha` is then the run's); a step the run did not keep is "
        "refused with the steps it did; leave it out for the trained model",
    )


class InflectRequest(Seq2SeqDecodeOptions):
    model_config = ConfigDict(json_schema_extra=inflection_schema)

    alpha: float = alpha_field("inflection")
    lemma: str = Field(
        description=f"the word to inflect: one word of 1-{MAX_LEMMA_CHARS} characters (spaces "
        "around it are dropped), in the language's alphabet (GET /api/seq2seq/options lists "
        "each language's characters)",
        examples=["swim"],
        # stated, not enforced by pydantic: lemma_length below says what is wrong in a sentence
        json_schema_extra={"minLength": 1, "pattern": LEMMA_SHAPE},
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
    snapshot: JsonInt | None = snapshot_field("the α = 1.5 inflection model's")

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


def sentence_shape(word: str = NOT_SPACE) -> str:
    """1-30 words of `word` characters, separated by whitespace (which the server collapses to
    single spaces)."""
    words = rf"{word}+(?:{SPACE}+{word}+){{0,{MAX_SENTENCE_WORDS - 1}}}"
    return rf"^{SPACE}*{words}{SPACE}*$"


@functools.cache
def sentence_characters() -> str | None:
    """The characters every served translation model reads as a piece of its own (its source
    tokenizer's one-character pieces, unchanged by its NFKC normalisation): what
    models.seq2seq_run.check_readable takes. None when a tokenizer cannot be read."""
    try:
        manifest = read_manifest()
        tokenizers = {
            load_tokenizers(CHECKPOINT_DIR, entry_corpus(manifest[name]))[0]
            for name in SERVED["translation"].values()
        }
    except (OSError, KeyError, ValueError, RuntimeError):
        return None
    known: set[str] | None = None
    for source in tokenizers:
        pieces = {
            piece
            for i in range(source.get_piece_size())
            if not (source.is_unknown(i) or source.is_control(i))
            and len(piece := source.id_to_piece(i)) == 1
            and piece != "▁"
            and not piece.isspace()
            and unicodedata.normalize("NFKC", piece) == piece
        }
        known = pieces if known is None else known & pieces
    return "".join(sorted(known or ()))


def sentence_schema(schema: dict[str, Any]) -> None:
    """The sentence's schema: its shape, in the characters the models read. (No maxLength: the
    server counts characters once whitespace is collapsed, which no JSON Schema keyword can
    count; a maxLength on the text as sent refuses sentences the server takes.)"""
    characters = sentence_characters()
    word = character_class(list(characters)) if characters else NOT_SPACE
    schema.update(minLength=1, pattern=sentence_shape(word))


class TranslateRequest(Seq2SeqDecodeOptions):
    alpha: float = alpha_field("translation")
    text: str = Field(
        description=f"an English sentence: 1-{MAX_SENTENCE_WORDS} words, at most "
        f"{MAX_SENTENCE_CHARS} characters once runs of whitespace are one space, in characters "
        "the models were trained on",
        examples=["Could not open the file."],
        # stated, not enforced by pydantic: normalised_sentence and the model's check say what
        # is wrong in a sentence
        json_schema_extra=sentence_schema,
    )

    copy_model: bool = Field(
        False,
        strict=True,  # JSON true/false only: 0 or "yes" is a wrong type, not a flag to coerce
        description="decode with the copy-capable model trained with `alpha`: at each step it "
        "generates a vocabulary piece or points at a source position and emits that piece "
        "(each step's `copy_weights` and `copy_mass` say how much went to pointing)",
    )
    snapshot: JsonInt | None = snapshot_field("the small α = 1.5 translation model's (corpus v1)")

    @model_validator(mode="after")
    def snapshots_are_generate_only(self) -> TranslateRequest:
        if self.snapshot is not None and self.copy_model:
            raise ValueError(
                "The training snapshots are of a generate-only model; leave `copy_model` out "
                "with `snapshot`."
            )
        return self

    @field_validator("text")
    @classmethod
    def sentence_size(cls, text: str) -> str:
        return normalised_sentence(text)  # InvalidInput is a ValueError: pydantic words it

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


# Lemmas that show the cases the deep-dive discusses, from the training split (go) and the
# held-out test split (the rest) of models.tasks.inflection.lemma_split; tests check the splits,
# the forms, and that the widget's first render shows a right and a wrong answer among them.
INFLECTION_EXAMPLES = (
    InflectionExample(
        label="go → past",
        lemma="go",
        language="en",
        features="V;PST",
        why="an irregular verb from the training split: went, not the regular-rule *goed",
    ),
    InflectionExample(
        label="fight → past",
        lemma="fight",
        language="en",
        features="V;PST",
        why="a held-out irregular verb: no rule gives fought, so a model that never saw it "
        "tends to say *fighted",
    ),
    InflectionExample(
        label="Standplatz → plural",
        lemma="Standplatz",
        language="de",
        features="N;NOM;PL",
        why="a German plural with umlaut: Standplätze",
    ),
    InflectionExample(
        label="vertex → plural",
        lemma="vertex",
        language="en",
        features="N;PL",
        why="a cell with two valid forms: vertexes and vertices",
    ),
    InflectionExample(
        label="anteponer → past subjunctive",
        lemma="anteponer",
        language="es",
        features="V;SBJV;PST;1;SG",
        why="Spanish keeps two past subjunctives: antepusiera and antepusiese",
    ),
)

# Sentences from the held-out test split of models.tasks.translation (split by source hash), one
# from the training split and one the corpus does not have; tests check which is which.
TRANSLATION_EXAMPLES = (
    TranslationExample(label="property name", text="The name of the property"),
    TranslationExample(label="Cancel (a label)", text="Cancel"),
    TranslationExample(label="permission denied", text="Permission denied"),
    TranslationExample(label="window size", text="Saving window size and position"),
    TranslationExample(label="delete files (not in the corpus)", text="Delete the selected files"),
    TranslationExample(
        label="online accounts (12 words)",
        text="Connect to your online accounts and decide what to use them for",
    ),
)


Mode = Literal["trained", "inference"]
# Page-address keys written before the figure request held the state -> its field names.
OLD_ADDRESS_NAMES = {"beam": "beam_width", "ia": "inference_alpha", "base": "base_alpha"}


def field_names(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with the old address keys under their field names (a field's own key wins)."""
    renamed = {OLD_ADDRESS_NAMES.get(key, key): value for key, value in data.items()}
    return {**renamed, **{key: data[key] for key in data if key not in OLD_ADDRESS_NAMES}}


class FigureOptions(BaseModel):
    """A widget's figure: its task's request (InflectRequest or TranslateRequest, combined
    below) plus how the widget chooses α and whether it compares. These are the widget's form
    fields, the query of GET /api/seq2seq/{inflect,translate}/figure and, under the widget's
    prefix (`inflect.`, `translate.`), its page-address keys. Numbers come as text here (a
    query string), so these fields parse it; the request built for each column is strict."""

    REQUEST: ClassVar[type[Seq2SeqDecodeOptions]]
    EXAMPLES: ClassVar[tuple[BaseModel, ...]]
    TASK: ClassVar[Task]

    mode: Mode = Field(
        "trained",
        description="trained: the model trained with `alpha`; "
        "inference: `inference_alpha` applied to the model trained with `base_alpha`",
    )
    alpha: float = Field(DEFAULT_ALPHA, allow_inf_nan=False)
    inference_alpha: float = Field(
        DEFAULT_ALPHA, ge=MIN_INFERENCE_ALPHA, le=MAX_INFERENCE_ALPHA, allow_inf_nan=False
    )
    base_alpha: float = Field(DEFAULT_ALPHA, allow_inf_nan=False)
    beam_width: int = Field(5, ge=1, le=MAX_BEAM_WIDTH)
    compare: bool = Field(False, description="one column per trained α")
    example: int | None = Field(None, exclude=True, description="an example button's index")

    @model_validator(mode="before")
    @classmethod
    def old_keys_and_examples(cls, data: Any) -> Any:
        """Old address keys under their field names; an example button's inputs."""
        if not isinstance(data, dict):
            return data
        data = field_names(data)
        index = data.get("example")
        # ASCII digits only: str.isdigit() also takes "²", which int() then refuses
        if (
            isinstance(index, str)
            and re.fullmatch(r"[0-9]{1,3}", index)
            and int(index) < len(cls.EXAMPLES)
        ):
            data |= cls.EXAMPLES[int(index)].model_dump(include=cls.inputs())
        else:
            data.pop("example", None)
        return data

    @classmethod
    def inputs(cls) -> set[str]:
        """The reader's input: the task request's fields less the decoding options."""
        return set(cls.REQUEST.model_fields) - set(Seq2SeqDecodeOptions.model_fields)

    def columns(self) -> list[Seq2SeqDecodeOptions]:
        """The request of each column: one, or one per trained α when comparing."""
        inputs = self.model_dump(
            include=set(self.REQUEST.model_fields) - {"alpha", "inference_alpha"}
        )
        compared = list(SERVED[self.TASK]) if self.compare else None
        if self.mode == "inference":
            return [
                self.REQUEST(**inputs, alpha=self.base_alpha, inference_alpha=a)
                for a in compared or [self.inference_alpha]
            ]
        return [self.REQUEST(**inputs, alpha=a) for a in compared or [self.alpha]]

    def cost(self) -> int:
        return sum(request.cost() for request in self.columns())

    def address(self, prefix: str) -> dict[str, str | None]:
        """The page-address keys that reproduce this figure (None removes a key)."""
        inference = self.mode == "inference"
        flags = {name for name in self.inputs() if isinstance(getattr(self, name), bool)}
        values: dict[str, str | None] = {
            **self.model_dump(include=self.inputs() - flags),
            **{name: "1" if getattr(self, name) else None for name in flags},
            "beam_width": str(self.beam_width),
            "mode": self.mode,
            "alpha": f"{self.alpha:g}",
            "inference_alpha": f"{self.inference_alpha:g}" if inference else None,
            "base_alpha": f"{self.base_alpha:g}" if inference else None,
            "compare": "1" if self.compare else None,
            **dict.fromkeys(OLD_ADDRESS_NAMES),
        }
        return {f"{prefix}.{name}": value for name, value in values.items()}


class LearningFigure(BaseModel):
    """A figure with the training slider (app/learning.py): `snapshot` as the form sends it,
    empty when the slider is off, and one model while it is on (the copy model, which kept no
    snapshots, is refused by TranslateRequest itself)."""

    snapshot: int | None = Field(None, ge=0, le=10**6)

    @field_validator("snapshot", mode="before")
    @classmethod
    def slider_off(cls, value: Any) -> Any:
        return None if value == "" else value

    @model_validator(mode="after")
    def one_model_while_learning(self) -> LearningFigure:
        others = {
            "the comparison": getattr(self, "compare", False),
            "the inference-time α": getattr(self, "mode", None) == "inference",
        }
        on = [name for name, set_ in others.items() if set_]
        if self.snapshot is not None and on:
            raise ValueError(
                f"Watching the model learn shows one model as it trained; turn off "
                f"{' and '.join(on)}, or untick Watch it learn."
            )
        return self


class InflectFigure(LearningFigure, FigureOptions, InflectRequest):
    REQUEST = InflectRequest
    EXAMPLES = INFLECTION_EXAMPLES
    TASK = "inflection"


class TranslateFigure(LearningFigure, FigureOptions, TranslateRequest):
    REQUEST = TranslateRequest
    EXAMPLES = TRANSLATION_EXAMPLES
    TASK = "translation"

    copy_model: bool = Field(False, description="the copy-capable model (a query's 1 or on)")
    copy_beside: bool = Field(
        False,
        description="with `copy_model` (and no α comparison): the generate-only model's answer "
        "in a column beside the copy model's",
    )

    def columns(self) -> list[Seq2SeqDecodeOptions]:
        """As FigureOptions', or the generate-only model's column, then the copy model's."""
        columns = super().columns()
        if not (self.copy_model and self.copy_beside) or self.compare:
            return columns
        return [columns[0].model_copy(update={"copy_model": False}), *columns]

    def address(self, prefix: str) -> dict[str, str | None]:
        beside = "1" if self.copy_beside else None
        return {**super().address(prefix), f"{prefix}.copy_beside": beside}


SNAPSHOTS_FIELD = Field(
    description="training steps a request's `snapshot` may name (a rerun of one recipe that "
    "kept its weights at these steps; models/snapshots.py)"
)


class InflectionOptions(BaseModel):
    languages: list[str]
    features: dict[str, list[str]] = Field(description="the feature cells of each language")
    characters: dict[str, str] = Field(description="the characters a lemma may use, per language")
    alphas: list[float] = Field(description="the trained α values (attention = output)")
    models: list[ModelOption]
    examples: list[InflectionExample]
    snapshots: list[int] = SNAPSHOTS_FIELD
    max_lemma_chars: int = MAX_LEMMA_CHARS


class InflectCells(BaseModel):
    """GET /api/seq2seq/inflect/cells: the features menu for a language, asked by the language
    menu on its own, so an input refused elsewhere (a lemma with a space) never keeps the old
    language's cells in the form."""

    model_config = ConfigDict(extra="forbid")

    language: str = Field(max_length=8, description="language code, e.g. de")
    features: str = Field(
        "",
        max_length=80,
        description="the cell chosen so far: kept when the language has it, else the language's "
        "cell sharing the most tags with it",
    )


class CellsResponse(BaseModel):
    language: str
    features: list[str] = Field(description="the language's feature cells")
    chosen: str = Field(description="the cell the menu selects")


class TranslationOptions(BaseModel):
    source_language: str = "en"
    target_language: str = "de"
    alphas: list[float]
    models: list[ModelOption]
    copy_models: list[ModelOption] = Field(
        description="the copy-capable models (`copy_model` in a request), by trained α"
    )
    examples: list[TranslationExample] = Field(
        description="example sentences: from the test and training splits, and one the corpus "
        "lacks (each answer's `reference` says which)"
    )
    snapshots: list[int] = SNAPSHOTS_FIELD
    max_words: int = MAX_SENTENCE_WORDS
    max_chars: int = MAX_SENTENCE_CHARS


class OptionsResponse(BaseModel):
    inflection: InflectionOptions
    translation: TranslationOptions
    beam_width: tuple[int, int] = (1, MAX_BEAM_WIDTH)
    inference_alpha: tuple[float, float] = (MIN_INFERENCE_ALPHA, MAX_INFERENCE_ALPHA)
