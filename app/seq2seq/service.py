"""The sparse seq2seq widgets' and API's web-side pieces: the registry's loaders for the
family, the options the widgets offer (languages, cells, trained α values, examples), the
widgets' first figures, and the views the fragments draw from a Trace.

Decoding itself is models.seq2seq_run.run, which the routes and widgets call with the
registry's `get` as the way to a loaded checkpoint. Everything here runs in FastAPI's
threadpool (plain `def` endpoints), never on the event loop.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from app.answer_cache import ANSWERS
from app.registry import ModelRegistry, ModelUnavailable, register_loader
from app.seq2seq.requests import (  # the examples are part of the options the API lists
    INFLECTION_EXAMPLES,
    TRANSLATION_EXAMPLES,
    InflectionOptions,
    InflectRequest,
    InflectResponse,
    ModelOption,
    OptionsResponse,
    Seq2SeqResponse,
    Task,
    TranslateRequest,
    TranslateResponse,
    TranslationOptions,
    TranslationReference,
)
from models import snapshots
from models.seq2seq import Step
from models.seq2seq_run import (
    COPY_SERVED,
    DEFAULT_ALPHA,
    SERVED,
    SNAPSHOTS,
    judge,
    load_reference,
    load_served,
    run,
)
from models.tasks.inflection_serving import inflection_options

register_loader("seq2seq")(load_served)
register_loader("seq2seq-copy")(load_served)
register_loader("reference")(load_reference)


def format_alphas(alphas: list[float]) -> str:
    return ", ".join(f"{alpha:g}" for alpha in alphas)


def model_options(registry: ModelRegistry, task: Task, copy: bool = False) -> list[ModelOption]:
    """Each trained α's model (or, with `copy`, translation's copy model) and whether it can
    be served."""
    options = []
    for alpha, name in (COPY_SERVED if copy else SERVED[task]).items():
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
            snapshots=snapshots.kept_steps(SNAPSHOTS["inflection"]),
        ),
        translation=TranslationOptions(
            alphas=[option.alpha for option in translation_models],
            models=translation_models,
            copy_models=model_options(registry, "translation", copy=True),
            examples=list(TRANSLATION_EXAMPLES),
            snapshots=snapshots.kept_steps(SNAPSHOTS["translation"]),
        ),
    )


def default_alpha(models: list[ModelOption]) -> float:
    """1.5 when that model is available, else the first available one."""
    available = [option.alpha for option in models if option.available]
    if not available:
        reasons = "; ".join(f"α = {o.alpha:g}: {o.reason}" for o in models)
        raise ModelUnavailable(models[0].name if models else "seq2seq", reasons)
    return DEFAULT_ALPHA if DEFAULT_ALPHA in available else available[0]


def cached_default(
    registry: ModelRegistry, request: InflectRequest | TranslateRequest
) -> InflectResponse | TranslateResponse:
    """The widget's first figure, decoded once per checkpoint (the page renders it each visit)."""
    return ANSWERS.get(registry, request, lambda: run(request, registry.get))


# --- what the fragments draw ----------------------------------------------------------------

HEATMAP_CELL_PX = 26
LABEL_CHAR = 0.32  # width of one label character, in heatmap cells
OUTPUT_SHOWN = 8  # output entries drawn per step card (the response keeps up to 20)
# What a reader can take in; the rest is summarised in a sentence (the JSON has every number).
# Without these caps a 30-word sentence with beam 16 drew 140 × 237 cells: a 7 MB fragment.
HEATMAP_MAX_ROWS = 48  # output tokens
HEATMAP_MAX_COLUMNS = 48  # source tokens
STEP_CARDS_SHOWN = 40


def heatmap_view(
    response: Seq2SeqResponse, weights: Callable[[Step], list[float]] = lambda s: s.attention
) -> dict[str, Any]:
    """A heatmap's layout in cell units (the attention's, or a copy model's pointer with
    `weights`): rows are output steps, columns source tokens; a nonzero weight gets a tint of
    at least 0.12 so it never looks like an exact 0. At most HEATMAP_MAX_ROWS ×
    HEATMAP_MAX_COLUMNS cells; `hidden_rows` and `hidden_columns` count what is left out."""
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
                for col, p in enumerate(weights(step)[:HEATMAP_MAX_COLUMNS])
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
    """For each n-best entry, whether the reference accepts it (None: nothing to judge by), by
    the verdict's own rule; the first is the response's `reference.correct`."""
    answers = reference_answers(response)
    return [None if answers is None else judge(h.text, answers)[0] for h in response.hypotheses]


COPIED = 0.5  # a piece is marked copied when pointing got at least this share of its step


def copied_spans(response: Seq2SeqResponse) -> list[dict[str, Any]] | None:
    """The best hypothesis as runs of text, each saying whether its pieces were mostly copied
    (pointed at in the source); None for a generate-only model."""
    best = response.hypotheses[0]
    masses = [step.copy_mass for step in response.steps[: len(best.tokens)]]
    if not masses or None in masses:
        return None
    spans: list[dict[str, Any]] = [{"text": "", "copied": False}]
    for piece, mass in zip(best.tokens, masses, strict=True):
        copied = mass >= COPIED
        text = piece.replace("▁", " ")
        if spans[-1]["copied"] != copied:
            if copied and text.startswith(" "):  # the space before a copied word is not copied
                spans[-1]["text"] += " "
                text = text[1:]
            spans.append({"text": "", "copied": copied})
        spans[-1]["text"] += text
    spans[0]["text"] = spans[0]["text"].lstrip()
    return [span for span in spans if span["text"]]


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
            "pointer": heatmap_view(response, lambda step: step.copy_weights or [])
            if steps and steps[0].copy_weights is not None
            else None,
            "mean_attention_support": f"{mean_attention:.2f}".rstrip("0").rstrip("."),
            "mean_output_support": f"{mean_output:.2f}".rstrip("0").rstrip("."),
            "marks": hypothesis_marks(response),
            "copied_spans": copied_spans(response),
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
