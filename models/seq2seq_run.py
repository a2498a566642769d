"""The sparse seq2seq family's one entry point: `run(request, load, check) -> Trace`.

A validated request in (an inflection or a translation: the text, the trained α that picks the
model, an optional inference α, the beam width), one pydantic trace out: the n-best and the
per-step attention and output distributions (rounded once, in models.seq2seq), the model that
answered, and the reference's verdict beside the best hypothesis (the lexicon's forms, the
corpus translation). The JSON API returns it as it is; the widgets draw the same object.

Which checkpoint serves a task at an α is written once, in SERVED; `resolve` is the one place
that turns "no α given" into the trained default. `load` is the caller's way to a loaded
checkpoint (the web layer's model registry): it raises a CheckpointError for a missing or
corrupt one.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from models import references, snapshots
from models.checkpoints import CheckpointError
from models.errors import InvalidInput
from models.references import InflectionLexicon, TranslationCorpus
from models.seq2seq import UNK, Trace
from models.tasks.inflection_serving import Inflector
from models.tasks.translation import entry_corpus
from models.tasks.translation_serving import CopyTranslator, Translator

Task = Literal["inflection", "translation"]
TASKS: tuple[Task, ...] = ("inflection", "translation")
DEFAULT_ALPHA = 1.5  # the trained α a request without one gets: 1.5-entmax, the paper's pick

# task -> trained α (attention = output) -> the checkpoint that serves it: the inflection models
# of the "full" setting after their last replay round, the big translation models (corpus v2)
# after their replay phase (models/recipes.py; their model cards tell the rounds).
SERVED: dict[Task, dict[float, str]] = {
    "inflection": {
        1.0: "seq2seq-inflect-full-a1-replay6",
        1.5: "seq2seq-inflect-full-a1.5-replay8",
        2.0: "seq2seq-inflect-full-a2-replay6",
    },
    "translation": {
        1.0: "seq2seq-translate-big-a1-replay",
        1.5: "seq2seq-translate-big-a1.5-replay",
        2.0: "seq2seq-translate-big-a2-replay",
    },
}
# Translation's copy-capable models (models/copy_translation.py), by trained α: a request with
# `copy` gets the one at its α (each was fine-tuned from the generate-only model above).
COPY_SERVED: dict[float, str] = {
    1.0: "seq2seq-translate-copy-a1",
    1.5: "seq2seq-translate-copy-a1.5",
    2.0: "seq2seq-translate-copy-a2",
}
# task -> the recipe whose training was rerun keeping snapshots (models/snapshots.py): a
# request's `snapshot` (a training step) decodes with the weights that run had then. The
# translation run is of the small corpus-v1 model: sixteen snapshots of the served big model
# would not fit the snapshots' storage budget.
SNAPSHOTS: dict[Task, str] = {
    "inflection": "seq2seq-inflect-full-a1.5",
    "translation": "seq2seq-translate-a1.5",
}
# The reference files the verdicts read: the lexicon, and the corpus the served models learned.
SERVED_CORPUS = "v2"
REFERENCES: dict[Task, str] = {
    "inflection": references.reference_name("inflection"),
    "translation": references.reference_name("translation", SERVED_CORPUS),
}
# Loads a checkpoint (or reference file) by its manifest name; raises when it cannot.
Load = Callable[[str], Any]
Check = Callable[[], None] | None


def served_names() -> tuple[str, ...]:
    """Every checkpoint and reference file the family serves: what start-up loads."""
    models = [*(n for names in SERVED.values() for n in names.values()), *COPY_SERVED.values()]
    return (*models, *REFERENCES.values())


def resolve(task: Task, alpha: float | None) -> tuple[float, str]:
    """(trained α, checkpoint name) for a request's α; None means the task's default."""
    served = SERVED[task]
    if alpha is None:
        return DEFAULT_ALPHA, served[DEFAULT_ALPHA]
    for trained, name in served.items():
        if math.isclose(trained, alpha, abs_tol=1e-6):
            return trained, name
    raise InvalidInput(
        f"There is no {task} model trained with α = {alpha:g}; pick one of "
        f"{', '.join(f'{a:g}' for a in served)}, or keep one of those and set `inference_alpha` "
        "to decode it with any α from 1 to 2."
    )


def copy_checkpoint(alpha: float) -> str:
    """The copy model trained with `alpha` (a trained α, as `resolve` returns it)."""
    if alpha not in COPY_SERVED:
        trained = ", ".join(f"{a:g}" for a in COPY_SERVED) or "none yet"
        raise InvalidInput(
            f"There is no copy model trained with α = {alpha:g} (copy models: {trained}); "
            "pick one of those α values, or leave `copy_model` out."
        )
    return COPY_SERVED[alpha]


# --- the trace ---------------------------------------------------------------------------------


class Seq2SeqModelInfo(BaseModel):
    name: str = Field(description="checkpoint name in checkpoints/manifest.json")
    sha256: str
    attention_alpha: float = Field(description="α of the attention mapping in this decoding")
    output_alpha: float = Field(description="α of the output mapping in this decoding")
    trained_attention_alpha: float
    trained_output_alpha: float
    inference_alpha: float | None = Field(
        description="the α requested with `inference_alpha`, if any"
    )
    note: str | None = Field(
        description="set when this decoding used an α other than the one the model was trained with"
    )
    output_vocab_size: int = Field(description="target tokens the output distribution covers")


class Seq2SeqResponse(Trace):
    """The family's Trace (models.seq2seq: the n-best, the per-step attention and output
    distributions, rounded there once) with what the API adds around it."""

    task: Task
    model: Seq2SeqModelInfo
    server_ms: float = Field(description="time spent decoding, in milliseconds")
    input_note: str | None = Field(
        None,
        description="what was done to the input before decoding, in one line (a lemma "
        "lower-cased for a model whose alphabet is lower-case only); null when nothing was",
    )
    beyond_training: str | None = Field(
        None,
        description="one line naming what in the input lies outside the model's training "
        "data (a lemma our lexicon lacks, words no training sentence has); null when nothing "
        "does, or when the reference file that tells is not loaded",
    )


Split = Literal["train", "dev", "test"]


class InflectionReference(BaseModel):
    forms: list[str] | None = Field(
        description="every valid form of this (language, lemma, features) cell in the lexicon; "
        "null when the lexicon has no such cell"
    )
    split: Split | Literal["unseen"] = Field(
        description="the split the lemma belongs to; `unseen` when the lexicon lacks the lemma"
    )
    correct: bool | None = Field(
        description="whether the best hypothesis is one of `forms`; null when there are none"
    )
    seen_in_training: bool | None = Field(
        description="whether this very cell was a training example of the model that answered; "
        "null when the reference file does not record that model's training set"
    )
    meaning: str = Field(description="what the split means for this answer, in one line")


class TranslationReference(BaseModel):
    text: str = Field(description="the corpus's German translation of the (normalised) source")
    split: Split | Literal["unseen"] = Field(
        description="the split the source sentence belongs to in the model's own corpus; "
        "`unseen`: not in it, and `text` comes from the served models' corpus"
    )
    correct: bool = Field(
        description="whether the best hypothesis equals `text`, whitespace and typographic "
        "variants (… and ..., ’ and ', non-breaking spaces) made the same"
    )
    typography: str | None = Field(
        None,
        description="set when the best hypothesis matches `text` only once typographic "
        "variants are made the same: which ones differ, in one line",
    )
    meaning: str = Field(description="what the split means for this answer, in one line")


class InflectResponse(Seq2SeqResponse):
    reference: InflectionReference | None = Field(
        description="the lexicon's verdict on the best hypothesis; null only when the server "
        "has no lexicon file (see /readyz)"
    )


class TranslateResponse(Seq2SeqResponse):
    reference: TranslationReference | None = Field(
        description="the corpus translation and a verdict, when the normalised source sentence "
        "is in the served models' corpus; else null"
    )


# --- what a request is -------------------------------------------------------------------------


class DecodeOptions(Protocol):
    alpha: float | None
    inference_alpha: float | None
    beam_width: int


class InflectionInput(DecodeOptions, Protocol):
    lemma: str
    language: str
    features: str
    snapshot: int | None


class TranslationInput(DecodeOptions, Protocol):
    text: str
    copy_model: bool
    snapshot: int | None


# --- the served models -------------------------------------------------------------------------


@dataclass(frozen=True)
class ServedSeq2Seq:
    """A loaded checkpoint with what the trace reports about it."""

    name: str
    task: Task
    sha256: str
    attn_alpha: float
    out_alpha: float
    runner: Inflector | Translator
    training_set: str | None  # the manifest's data setting (high, medium, …), if it names one
    corpus: str | None  # translation: the corpus version it was trained on (v1 before v2 came)

    @property
    def output_vocab_size(self) -> int:
        return self.runner.model.config.tgt_vocab


def load_served(checkpoint_dir: Path, name: str, entry: dict[str, Any]) -> ServedSeq2Seq:
    """A seq2seq checkpoint ready to decode (the registry's loader for the family)."""
    task = entry.get("task")
    if task == "inflection":
        runner: Inflector | Translator = Inflector.load(name, checkpoint_dir)
    elif task == "translation":
        kind = CopyTranslator if entry["family"] == "seq2seq-copy" else Translator
        runner = kind.load(name, checkpoint_dir)
    else:
        raise ValueError(f"seq2seq task {task!r} has no widget")
    config = entry["config"]
    data = entry.get("data") or {}
    return ServedSeq2Seq(
        name,
        task,
        entry["sha256"],
        float(config["attn_alpha"]),
        float(config["out_alpha"]),
        runner,
        data.get("setting"),
        entry_corpus(entry) if task == "translation" else None,
    )


WORD_EDGES = "".join(chr(c) for c in range(33, 127) if not chr(c).isalnum()) + "…“”„‘’‚«»"


def word_key(word: str) -> str:
    """A word as the training-data check compares it: case and surrounding punctuation aside
    ("File." and "file" are one word; "192.168.0.1" stays itself; "..." is no word)."""
    return word.strip(WORD_EDGES).casefold()


class ServedCorpus(TranslationCorpus):
    """The corpus lookup, with the words of its training split's English side: every word a
    model trained on this corpus read (models.tasks.translation_tokenizers trains its
    tokenizer on the same split)."""

    def __init__(self, document: dict) -> None:
        super().__init__(document)
        sources = (source for source, _ in document["pairs"].get("train", ()))
        self.training_words = frozenset(
            key for source in sources for key in map(word_key, source.split()) if key
        )

    def unseen_words(self, text: str) -> list[str]:
        """The words of `text` that no training sentence has, once each, in order."""
        unseen = {word: None for word in text.split() if word_key(word)}
        return [word for word in unseen if word_key(word) not in self.training_words]


def load_reference(
    checkpoint_dir: Path, name: str, entry: dict[str, Any]
) -> InflectionLexicon | TranslationCorpus:
    """A reference file ready to look up (the registry's loader for the family "reference");
    the translation corpus also knows the words its training split holds."""
    return references.load_reference(entry, checkpoint_dir, ServedCorpus)


def model_info(served: ServedSeq2Seq, inference_alpha: float | None) -> Seq2SeqModelInfo:
    attn_alpha = served.attn_alpha if inference_alpha is None else inference_alpha
    out_alpha = served.out_alpha if inference_alpha is None else inference_alpha
    differs = not (
        math.isclose(attn_alpha, served.attn_alpha) and math.isclose(out_alpha, served.out_alpha)
    )
    note = None
    if differs:
        note = (
            f"Inference-time α = {inference_alpha:g} on attention and output: this model was "
            f"trained with α = {served.attn_alpha:g} (attention) and {served.out_alpha:g} "
            "(output), so these distributions are not the ones it learned."
        )
    return Seq2SeqModelInfo(
        name=served.name,
        sha256=served.sha256,
        attention_alpha=attn_alpha,
        output_alpha=out_alpha,
        trained_attention_alpha=served.attn_alpha,
        trained_output_alpha=served.out_alpha,
        inference_alpha=inference_alpha,
        note=note,
        output_vocab_size=served.output_vocab_size,
    )


# --- the verdict: the reference answer beside the model's ------------------------------------

# What a reference's split means for the answer beside it, in one line. Inflection's training
# split depends on whether the model that answered trained on this very cell (None: the
# reference file does not record that model's training set).
INFLECTION_MEANINGS: dict[tuple[str, bool | None], str] = {
    ("train", True): "seen in training: this very cell was one of the model's training examples",
    ("train", False): "training split, but this cell was not in the model's training sample: "
    "it never saw this form",
    ("train", None): "training split, but the reference file does not record whether this "
    "model trained on this very cell",
    ("dev", False): "held out (development split): the model never saw this word; this split "
    "only tracked training",
    ("test", False): "held out: the model never saw this word — this is the paper's test condition",
    ("unseen", False): "not in our lexicon: there is no reference form to check the answer against",
}
TRANSLATION_MEANINGS = {
    "train": "seen in training: this sentence and this translation were a training pair",
    "dev": "held out (development split): the model never trained on this sentence",
    "test": "held out: the model never saw this sentence — the condition of the BLEU table",
    "unseen": "not in this model's corpus: it never saw this sentence; the translation beside "
    f"it comes from corpus {SERVED_CORPUS}",
}


# Typographic variants the corpus mixes (its catalogs come from many translators), each with the
# plain form a verdict compares; an ellipsis is compared without the space some put before it.
TYPOGRAPHY = {
    "…": "...",
    "’": "'",
    "‘": "'",
    "‚": "'",
    "“": '"',
    "”": '"',
    "„": '"',
    "»": '"',
    "«": '"',
    "\u00a0": " ",
    "\u202f": " ",
    "\u2009": " ",
}
TYPOGRAPHY_NAMES = {
    " ": "a space",
    "\u00a0": "a non-breaking space",
    "\u202f": "a narrow non-breaking space",
    "\u2009": "a thin space",
}
ASCII_SPACE = re.compile(r"[ \t\r\n]+")


def spaced(text: str) -> str:
    """`text` with runs of ordinary whitespace as one space (a non-breaking one is typography)."""
    return ASCII_SPACE.sub(" ", text).strip()


def plain_typography(text: str) -> str:
    """`text` with every typographic variant in its plain form, whitespace collapsed."""
    plain = " ".join(text.translate(str.maketrans(TYPOGRAPHY)).split())
    return plain.replace(" ...", "...")


def judge(hypothesis: str, answers: Iterable[str]) -> tuple[bool, str | None]:
    """The verdict, for both tasks: whether `hypothesis` is one of `answers` (an inflection
    cell's forms, a sentence's corpus translation) with whitespace collapsed, or once
    typographic variants are made the same, and then, in one line, which variants differ."""
    answers = list(answers)
    if spaced(hypothesis) in {spaced(answer) for answer in answers}:
        return True, None
    plain = plain_typography(hypothesis)
    matched = next((a for a in answers if plain_typography(a) == plain), None)
    if matched is None:
        return False, None
    return True, typography_line(hypothesis, matched)


def typography_line(hypothesis: str, answer: str) -> str:
    """Which variants tell the two apart, the reference's first ("the reference writes “…”
    where the model wrote “...”")."""
    pairs = []
    for variant, plain in TYPOGRAPHY.items():
        for theirs, ours in ((variant, plain), (plain, variant)):
            differs = theirs not in hypothesis or ours not in answer
            if theirs in answer and ours in hypothesis and differs:
                pair = f"{typography_name(theirs)} where the model wrote {typography_name(ours)}"
                if pair not in pairs:
                    pairs.append(pair)
    if not pairs:  # only the space before an ellipsis
        return "Only the typography differs: the spacing around an ellipsis."
    return f"Only the typography differs: the reference writes {'; and '.join(pairs)}."


def typography_name(text: str) -> str:
    return TYPOGRAPHY_NAMES.get(text, f"“{text}”")


def reference_of(load: Load, name: str) -> Any:
    """The reference file `name`, or None when `load` cannot serve it (the registry logs why,
    and /readyz lists it): an answer without a verdict is still an answer."""
    try:
        return load(name)
    except CheckpointError:
        return None


def inflection_reference(
    load: Load, served: ServedSeq2Seq, request: InflectionInput, lemma: str, best: str
) -> InflectionReference | None:
    """The lexicon's verdict on `best` for the cell of `lemma` (the request's, as decoded)."""
    lexicon = reference_of(load, REFERENCES["inflection"])
    if not isinstance(lexicon, InflectionLexicon):
        return None
    cell = lexicon.lookup(request.language, lemma, request.features)
    seen: bool | None = False  # dev, test and unknown lemmas are never trained on
    if cell.split == "train":
        recorded = served.training_set in lexicon.training_sets
        seen = served.training_set in cell.training_sets if recorded else None
    return InflectionReference(
        forms=None if cell.forms is None else list(cell.forms),
        split=cell.split,
        correct=None if cell.forms is None else judge(best, cell.forms)[0],
        seen_in_training=seen,
        meaning=INFLECTION_MEANINGS[(cell.split, seen)],
    )


def on_served_corpus(served: ServedSeq2Seq) -> bool:
    """Whether the model trained on the corpus the reference file holds (models before v2 name
    no corpus: they trained on v1)."""
    return (served.corpus or "v1") == SERVED_CORPUS


def translation_reference(
    load: Load, served: ServedSeq2Seq, text: str, best: str
) -> TranslationReference | None:
    """The served corpus's translation; a model trained on another corpus never saw the
    sentence, whatever its split there."""
    corpus = reference_of(load, REFERENCES["translation"])
    found = corpus.lookup(text) if isinstance(corpus, TranslationCorpus) else None
    if found is None:
        return None
    split = found.split if on_served_corpus(served) else "unseen"
    correct, typography = judge(best, [found.text])
    return TranslationReference(
        text=found.text,
        split=split,
        correct=correct,
        typography=typography,
        meaning=TRANSLATION_MEANINGS[split],
    )


# --- what lies outside the training data -----------------------------------------------------

UNSEEN_WORDS_NAMED = 5


def unseen_lemma_line(
    reference: InflectionReference | None, lemma: str, language: str
) -> str | None:
    """The note for a lemma our lexicon lacks: no model here trained on it."""
    if reference is None or reference.split != "unseen":
        return None
    return (
        f"Beyond training: “{lemma}” is not in our {language} lexicon, so the model never saw "
        "it; the answer applies what it learned from other words."
    )


def unseen_words_line(load: Load, served: ServedSeq2Seq, text: str) -> str | None:
    """The note for words no training sentence of the model's corpus has (None when the
    corpus file is not loaded, or the model trained on another corpus)."""
    corpus = reference_of(load, REFERENCES["translation"])
    if not isinstance(corpus, ServedCorpus) or not on_served_corpus(served):
        return None
    unseen = corpus.unseen_words(text)
    if not unseen:
        return None
    named = ", ".join(f"“{word}”" for word in unseen[:UNSEEN_WORDS_NAMED])
    more = len(unseen) - UNSEEN_WORDS_NAMED
    if more > 0:
        named += f" and {more} more"
    one = len(unseen) == 1
    return (
        f"Beyond training: {named} {'occurs' if one else 'occur'} in none of the "
        f"{len(corpus.training_words):,} words of the sentences the model trained on, so it may "
        f"change or drop {'it' if one else 'them'}."
    )


# --- decoding ----------------------------------------------------------------------------------


def check_readable(translator: Translator, text: str) -> None:
    """InvalidInput unless the source tokenizer turns `text` into known pieces."""
    pieces = translator.source_sp.encode(text, out_type=str)
    if not pieces:
        raise InvalidInput(
            "The sentence has nothing the model can read (only invisible or control "
            "characters); type some words."
        )
    unknown = {
        ch
        for piece in pieces
        if translator.source_sp.piece_to_id(piece) == UNK
        for ch in piece.replace("▁", "")
    }
    if unknown:
        raise InvalidInput(
            "The sentence has characters the translation model never saw: "
            f"{''.join(sorted(unknown))}; remove or replace them."
        )


def lemma_as_learned(inflector: Inflector, language: str, lemma: str) -> tuple[str, str | None]:
    """The lemma the model can read, with a line saying what changed: lower-cased when the
    language's alphabet has no capitals and holds every lower-cased letter (the lexicon writes
    English words lower-case, so "Go" is the verb "go"); otherwise as typed, so a refusal names
    what was typed."""
    alphabet = inflector.vocab.characters.get(language, "")
    lowered = lemma.lower()
    lower_case_only = bool(alphabet) and not any(ch.isupper() for ch in alphabet)
    if lowered == lemma or not lower_case_only or not set(lowered) <= set(alphabet):
        return lemma, None
    return lowered, (
        f"Read “{lemma}” as “{lowered}”: the {language} model learned lower-case words only."
    )


def model_name(task: Task, alpha: float | None, snapshot: int | None) -> str:
    """The checkpoint that answers: the served one trained with `alpha`, or the task's
    snapshot run at the training step `snapshot`."""
    if snapshot is None:
        return resolve(task, alpha)[1]
    return snapshots.named(SNAPSHOTS[task], snapshot, task)


def inflect(request: InflectionInput, load: Load, check: Check = None) -> InflectResponse:
    served: ServedSeq2Seq = load(model_name("inflection", request.alpha, request.snapshot))
    started = time.perf_counter()
    alpha = request.inference_alpha
    assert isinstance(served.runner, Inflector)
    lemma, input_note = lemma_as_learned(served.runner, request.language, request.lemma)
    trace = served.runner.inflect(
        lemma, request.language, request.features, request.beam_width, alpha, alpha, check
    )
    reference = inflection_reference(load, served, request, lemma, trace.hypotheses[0].text)
    return InflectResponse(
        **dict(trace),
        task="inflection",
        model=model_info(served, alpha),
        server_ms=round((time.perf_counter() - started) * 1000, 2),
        input_note=input_note,
        beyond_training=unseen_lemma_line(reference, lemma, request.language),
        reference=reference,
    )


def translate(request: TranslationInput, load: Load, check: Check = None) -> TranslateResponse:
    if request.copy_model:
        name = copy_checkpoint(resolve("translation", request.alpha)[0])
    else:
        name = model_name("translation", request.alpha, request.snapshot)
    served: ServedSeq2Seq = load(name)
    started = time.perf_counter()
    alpha = request.inference_alpha
    assert isinstance(served.runner, Translator)
    check_readable(served.runner, request.text)
    trace = served.runner.translate(request.text, request.beam_width, alpha, alpha, check)
    reference = translation_reference(load, served, request.text, trace.hypotheses[0].text)
    return TranslateResponse(
        **dict(trace),
        task="translation",
        model=model_info(served, alpha),
        server_ms=round((time.perf_counter() - started) * 1000, 2),
        beyond_training=unseen_words_line(load, served, request.text),
        reference=reference,
    )


def run(
    request: InflectionInput | TranslationInput, load: Load, check: Check = None
) -> InflectResponse | TranslateResponse:
    """The family's one entry point, for the JSON API, the fragments and the page's first
    figure alike. Raises InvalidInput (a sentence for the reader) or whatever `load`
    raises for a checkpoint it cannot serve; `check` is called between decoding steps and
    raises to stop the decode."""
    if hasattr(request, "lemma"):
        return inflect(request, load, check)  # type: ignore[arg-type]
    return translate(request, load, check)  # type: ignore[arg-type]
