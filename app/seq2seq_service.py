"""The sparse seq2seq models behind the inflection and translation widgets.

Checkpoints are named `seq2seq-inflect-a<α>` and `seq2seq-translate-a<α>` (attention α = output
α); the request's `alpha` picks one of them. An `inference_alpha` re-decodes the chosen model
with another α on both mappings, and the response says so. Everything here runs in FastAPI's
threadpool (plain `def` endpoints), never on the event loop.
"""

from __future__ import annotations

import math
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.errors import ReaderError
from app.schemas.seq2seq import (
    DEFAULT_ALPHA,
    InflectionExample,
    InflectionOptions,
    InflectionReference,
    InflectRequest,
    InflectResponse,
    ModelOption,
    OptionsResponse,
    Seq2SeqModelInfo,
    Seq2SeqResponse,
    Task,
    TranslateRequest,
    TranslateResponse,
    TranslationExample,
    TranslationOptions,
    TranslationReference,
)
from app.services import ModelRegistry, ModelUnavailable, register_loader
from models import references
from models.references import InflectionLexicon, TranslationCorpus, matches_reference
from models.seq2seq import UNK, Trace
from models.tasks.inflection_serving import Inflector, inflection_options
from models.tasks.inflection_vocab import InvalidInflectionInput
from models.tasks.translation import entry_corpus
from models.tasks.translation_serving import InvalidTranslationInput, Translator

# The α values the deep-dive ships for each task; more appear when their checkpoints exist.
SHIPPED_ALPHAS = (1.0, 1.5, 2.0)
COMPARE_ALPHAS = SHIPPED_ALPHAS
NAME_PREFIX: dict[Task, str] = {
    "inflection": "seq2seq-inflect-a",
    "translation": "seq2seq-translate-a",
}
# Stronger models the widgets serve instead at the same α once the manifest has them, not the
# paper-protocol ones of the tables: the inflection models of the "full" setting (the whole
# training split) and the big translation models (corpus v2, 2-layer encoder, hidden 256), each
# after its latest replay round present (-replay, -replay2, ...; models/recipes.py).
LIVE_STEMS: dict[Task, str] = {
    "inflection": "seq2seq-inflect-full-a{alpha:g}",
    "translation": "seq2seq-translate-big-a{alpha:g}",
}


def latest_round(manifest: dict, stem: str) -> str | None:
    """`stem`'s latest replay round in the manifest, else `stem` itself, else None."""
    rounds = {}
    for name in manifest:
        found = re.fullmatch(re.escape(stem) + r"-replay(\d*)", name)
        if found:
            rounds[int(found[1] or 1)] = name
    if rounds:
        return rounds[max(rounds)]
    return stem if stem in manifest else None


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
    "unseen": "not in this model's corpus (v1): it never saw this sentence; the translation "
    "beside it comes from the larger corpus v2",
}
NEWEST_CORPUS = "v2"  # where a sentence outside an older model's corpus may still have a reference


class InvalidSeq2SeqInput(ReaderError):
    """A request a trained model cannot take; the message says what to change."""


@dataclass(frozen=True)
class ServedSeq2Seq:
    """A loaded checkpoint with what the response reports about it."""

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


@register_loader("seq2seq")
def load_seq2seq(checkpoint_dir: Path, name: str, entry: dict[str, Any]) -> ServedSeq2Seq:
    task = entry.get("task")
    if task == "inflection":
        runner: Inflector | Translator = Inflector.load(name, checkpoint_dir)
    elif task == "translation":
        runner = Translator.load(name, checkpoint_dir)
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


@register_loader("reference")
def load_reference(
    checkpoint_dir: Path, name: str, entry: dict[str, Any]
) -> InflectionLexicon | TranslationCorpus:
    return references.load_reference(entry, checkpoint_dir)


# --- which model a request means -------------------------------------------------------------


def model_names(registry: ModelRegistry, task: Task) -> dict[float, str]:
    """α -> checkpoint name: the shipped α values, and any other diagonal model in the manifest;
    at an α where the manifest has a LIVE_STEMS model, its latest round."""
    names = {alpha: f"{NAME_PREFIX[task]}{alpha:g}" for alpha in SHIPPED_ALPHAS}
    manifest = registry.manifest()
    for name, entry in manifest.items():
        config = entry.get("config") or {}
        if (
            entry.get("family") == "seq2seq"
            and re.fullmatch(rf"{re.escape(NAME_PREFIX[task])}\d+(\.\d+)?", name)
            and config.get("attn_alpha") == config.get("out_alpha")
            and isinstance(config.get("attn_alpha"), int | float)
        ):
            names[float(config["attn_alpha"])] = name
    for alpha in names:
        names[alpha] = latest_round(manifest, LIVE_STEMS[task].format(alpha=alpha)) or names[alpha]
    return dict(sorted(names.items()))


def format_alphas(alphas: list[float]) -> str:
    return ", ".join(f"{alpha:g}" for alpha in alphas)


def served_model(registry: ModelRegistry, task: Task, alpha: float) -> ServedSeq2Seq:
    """The model trained with `alpha`; InvalidSeq2SeqInput for an α nobody trained,
    ModelUnavailable for one whose checkpoint is missing or broken."""
    names = model_names(registry, task)
    matches = [
        name for trained, name in names.items() if math.isclose(trained, alpha, abs_tol=1e-6)
    ]
    if not matches:
        raise InvalidSeq2SeqInput(
            f"There is no {task} model trained with α = {alpha:g}; pick one of "
            f"{format_alphas(list(names))}, or keep one of those and set `inference_alpha` "
            "to decode it with any α from 1 to 2."
        )
    return registry.get(matches[0])


# --- decoding ----------------------------------------------------------------------------------


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


def trace_response(
    task: Task,
    trace: Trace,
    info: Seq2SeqModelInfo,
    started: float,
    reference: InflectionReference | TranslationReference | None,
) -> InflectResponse | TranslateResponse:
    """The Trace as the API answers it: the same fields (already rounded by models.seq2seq),
    plus the task, the model, the time and the reference's verdict."""
    response_type = InflectResponse if task == "inflection" else TranslateResponse
    return response_type(
        **dict(trace),
        task=task,
        model=info,
        server_ms=round((time.perf_counter() - started) * 1000, 2),
        reference=reference,
    )


# --- the verdict: the reference answer beside the model's ------------------------------------


def reference_lookup(
    registry: ModelRegistry, task: Task, corpus: str = "v1"
) -> InflectionLexicon | TranslationCorpus | None:
    """The task's reference file (sha256-verified, loaded once; for translation, the one of the
    model's corpus), or None when it is missing or broken; the registry logs why, and /readyz
    lists it."""
    try:
        return registry.get(references.reference_name(task, corpus))
    except ModelUnavailable:
        return None


def inflection_reference(
    registry: ModelRegistry, served: ServedSeq2Seq, request: InflectRequest, best: str
) -> InflectionReference | None:
    lexicon = reference_lookup(registry, "inflection")
    if not isinstance(lexicon, InflectionLexicon):
        return None
    cell = lexicon.lookup(request.language, request.lemma, request.features)
    seen: bool | None = False  # dev, test and unknown lemmas are never trained on
    if cell.split == "train":
        recorded = served.training_set in lexicon.training_sets
        seen = served.training_set in cell.training_sets if recorded else None
    return InflectionReference(
        forms=None if cell.forms is None else list(cell.forms),
        split=cell.split,
        correct=None if cell.forms is None else matches_reference(best, cell.forms),
        seen_in_training=seen,
        meaning=INFLECTION_MEANINGS[(cell.split, seen)],
    )


def translation_reference(
    registry: ModelRegistry, served: ServedSeq2Seq, text: str, best: str
) -> TranslationReference | None:
    """The model's own corpus first (its split says what the model saw); a sentence outside it
    is judged by the newest corpus's translation, as unseen."""
    own = served.corpus or "v1"
    for version in dict.fromkeys((own, NEWEST_CORPUS)):
        if version != own and references.reference_name("translation", version) not in (
            registry.manifest()
        ):
            continue  # a server without that corpus's file: no fallback, and nothing to report
        corpus = reference_lookup(registry, "translation", version)
        found = corpus.lookup(text) if isinstance(corpus, TranslationCorpus) else None
        if found is not None:
            split = found.split if version == own else "unseen"
            return TranslationReference(
                text=found.text,
                split=split,
                correct=matches_reference(best, [found.text]),
                meaning=TRANSLATION_MEANINGS[split],
            )
    return None


def inflect(
    registry: ModelRegistry, request: InflectRequest, check: Callable[[], None] | None = None
) -> InflectResponse:
    """`check` is called between decoding steps and raises to stop (see app.compute)."""
    served = served_model(registry, "inflection", request.alpha)
    started = time.perf_counter()
    alpha = request.inference_alpha
    assert isinstance(served.runner, Inflector)
    try:
        trace = served.runner.inflect(
            request.lemma,
            request.language,
            request.features,
            request.beam_width,
            alpha,
            alpha,
            check,
        )
    except InvalidInflectionInput as exc:
        raise InvalidSeq2SeqInput(str(exc)) from exc
    reference = inflection_reference(registry, served, request, trace.hypotheses[0].text)
    return trace_response("inflection", trace, model_info(served, alpha), started, reference)


def check_readable(translator: Translator, text: str) -> None:
    """InvalidSeq2SeqInput unless the source tokenizer turns `text` into known pieces."""
    pieces = translator.source_sp.encode(text, out_type=str)
    if not pieces:
        raise InvalidSeq2SeqInput(
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
        raise InvalidSeq2SeqInput(
            "The sentence has characters the translation model never saw: "
            f"{''.join(sorted(unknown))}; remove or replace them."
        )


def translate(
    registry: ModelRegistry, request: TranslateRequest, check: Callable[[], None] | None = None
) -> TranslateResponse:
    """`check` as in `inflect`."""
    served = served_model(registry, "translation", request.alpha)
    started = time.perf_counter()
    alpha = request.inference_alpha
    assert isinstance(served.runner, Translator)
    check_readable(served.runner, request.text)
    try:
        trace = served.runner.translate(request.text, request.beam_width, alpha, alpha, check)
    except InvalidTranslationInput as exc:
        raise InvalidSeq2SeqInput(str(exc)) from exc
    reference = translation_reference(registry, served, request.text, trace.hypotheses[0].text)
    return trace_response("translation", trace, model_info(served, alpha), started, reference)


def run(
    registry: ModelRegistry,
    request: InflectRequest | TranslateRequest,
    check: Callable[[], None] | None = None,
) -> InflectResponse | TranslateResponse:
    """The family's one entry point: a validated request in, its Trace (with the model, the
    time and the reference's verdict) out, for the JSON API, the fragments and the page's
    first figure alike. Raises InvalidSeq2SeqInput (a sentence for the reader) or
    ModelUnavailable; `check` as in `inflect`."""
    if isinstance(request, InflectRequest):
        return inflect(registry, request, check)
    return translate(registry, request, check)


# --- options and the widgets' default figures --------------------------------------------------


def model_options(registry: ModelRegistry, task: Task) -> list[ModelOption]:
    options = []
    for alpha, name in model_names(registry, task).items():
        try:
            registry.get(name)
        except ModelUnavailable as exc:
            options.append(ModelOption(alpha=alpha, name=name, available=False, reason=exc.reason))
        else:
            options.append(ModelOption(alpha=alpha, name=name, available=True, reason=None))
    return options


def options(registry: ModelRegistry) -> OptionsResponse:
    try:
        cells = inflection_options(registry.checkpoint_dir)
    except (OSError, ValueError, TypeError):
        cells = {"languages": [], "features": {}, "characters": {}}
    inflection_models = model_options(registry, "inflection")
    translation_models = model_options(registry, "translation")
    return OptionsResponse(
        inflection=InflectionOptions(
            **cells,
            alphas=[option.alpha for option in inflection_models],
            models=inflection_models,
            examples=list(INFLECTION_EXAMPLES),
        ),
        translation=TranslationOptions(
            alphas=[option.alpha for option in translation_models],
            models=translation_models,
            examples=list(TRANSLATION_EXAMPLES),
        ),
    )


def default_alpha(models: list[ModelOption]) -> float:
    """1.5 when that model is available, else the first available one."""
    available = [option.alpha for option in models if option.available]
    if not available:
        reasons = "; ".join(f"α = {o.alpha:g}: {o.reason}" for o in models)
        raise ModelUnavailable(models[0].name if models else "seq2seq", reasons)
    return DEFAULT_ALPHA if DEFAULT_ALPHA in available else available[0]


_default_cache: dict[tuple[str, str, str], InflectResponse | TranslateResponse] = {}
_default_lock = threading.Lock()


def cached_default(
    registry: ModelRegistry, request: InflectRequest | TranslateRequest
) -> InflectResponse | TranslateResponse:
    """The widget's first figure, decoded once per checkpoint (the page renders it each visit)."""
    task: Task = "inflection" if isinstance(request, InflectRequest) else "translation"
    served = served_model(registry, task, request.alpha)
    key = (served.name, served.sha256, request.model_dump_json())
    with _default_lock:
        if key not in _default_cache:
            _default_cache[key] = run(registry, request)
        return _default_cache[key]


# --- what the fragments draw ----------------------------------------------------------------

HEATMAP_CELL_PX = 26
LABEL_CHAR = 0.32  # width of one label character, in heatmap cells
OUTPUT_SHOWN = 8  # output entries drawn per step card (the response keeps up to 20)
# What a reader can take in; the rest is summarised in a sentence (the JSON has every number).
# Without these caps a 30-word sentence with beam 16 drew 140 × 237 cells: a 7 MB fragment.
HEATMAP_MAX_ROWS = 48  # output tokens
HEATMAP_MAX_COLUMNS = 48  # source tokens
STEP_CARDS_SHOWN = 40


def heatmap_view(response: Seq2SeqResponse) -> dict[str, Any]:
    """The attention heatmap's layout in cell units: rows are output steps, columns source
    tokens; a nonzero weight gets a tint of at least 0.12 so it never looks like an exact 0.
    At most HEATMAP_MAX_ROWS × HEATMAP_MAX_COLUMNS cells; `hidden_rows` and `hidden_columns`
    count what is left out."""
    source_tokens = response.source_tokens[:HEATMAP_MAX_COLUMNS]
    shown_steps = response.steps[:HEATMAP_MAX_ROWS]
    source_chars = max((len(token) for token in source_tokens), default=1)
    output_chars = max((len(step.token) for step in shown_steps), default=1)
    left = LABEL_CHAR * output_chars + 0.5
    top = LABEL_CHAR * 0.87 * source_chars + 0.5  # column labels are turned 60°
    width = left + len(source_tokens) + LABEL_CHAR * 0.5 * source_chars + 0.3
    height = top + len(shown_steps) + 0.1
    columns = [
        {"token": token, "x": left + col + 0.5, "y": top - 0.2}
        for col, token in enumerate(source_tokens)
    ]
    rows = [
        {
            "token": step.token,
            "x": left - 0.2,
            "y": top + row + 0.5,
            "cells": [
                {
                    "source": source_tokens[col],
                    "x": left + col + 0.04,
                    "y": top + row + 0.04,
                    "p": p,
                    "opacity": round(0.12 + 0.88 * p, 3),
                }
                for col, p in enumerate(step.attention[:HEATMAP_MAX_COLUMNS])
            ],
        }
        for row, step in enumerate(shown_steps)
    ]
    return {
        "id": f"s2s-{uuid.uuid4().hex[:8]}",
        "width": round(width, 2),
        "height": round(height, 2),
        "width_px": round(width * HEATMAP_CELL_PX),
        "columns": columns,
        "rows": rows,
        "hidden_rows": len(response.steps) - len(shown_steps),
        "hidden_columns": len(response.source_tokens) - len(source_tokens),
    }


def reference_answers(response: InflectResponse | TranslateResponse) -> list[str] | None:
    """The answers the reference accepts (an inflection cell's forms, a sentence's corpus
    translation), or None when there is no reference to judge by."""
    reference = response.reference
    if isinstance(reference, TranslationReference):
        return [reference.text]
    return reference.forms if reference is not None else None


def hypothesis_marks(response: InflectResponse | TranslateResponse) -> list[bool | None]:
    """For each n-best entry, whether the reference accepts it (None: nothing to judge by); the
    first is the response's `reference.correct`."""
    answers = reference_answers(response)
    return [
        None if answers is None else matches_reference(h.text, answers) for h in response.hypotheses
    ]


def result_view(
    response: InflectResponse | TranslateResponse, compact: bool = False
) -> dict[str, Any]:
    """Template context for templates/partials/seq2seq/result.html: the response as it is, plus
    the heatmap layout, the per-step summaries the figure prints and the n-best's marks."""
    steps = response.steps
    mean_attention = sum(s.attention_support for s in steps) / max(1, len(steps))
    mean_output = sum(s.support_size for s in steps) / max(1, len(steps))
    return {
        "view": {
            "result": response,
            "compact": compact,
            "heatmap": heatmap_view(response),
            "mean_attention_support": f"{mean_attention:.2f}".rstrip("0").rstrip("."),
            "mean_output_support": f"{mean_output:.2f}".rstrip("0").rstrip("."),
            "marks": hypothesis_marks(response),
            "steps": [
                {
                    "step": step,
                    "shown": step.output[:OUTPUT_SHOWN],
                    "more": step.support_size - len(step.output[:OUTPUT_SHOWN]),
                }
                for step in steps[:STEP_CARDS_SHOWN]
            ],
            "hidden_steps": max(0, len(steps) - STEP_CARDS_SHOWN),
        }
    }
