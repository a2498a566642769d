"""seq2seq-inflect and seq2seq-translate: the live sparse seq2seq widgets.

Each renders its controls and a first figure decoded on the server from the first example, so
the page shows a real result before any script runs; static/js/seq2seq-widget.js then redraws
from the API as the reader types or drags α. Every example button carries the default model's
answer with its verdict (✓ / ✗), so right and wrong answers are both in view from the start.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from app import seq2seq_service as service
from app.morphology_labels import feature_labels, language_name
from app.schemas.seq2seq import (
    MAX_BEAM_WIDTH,
    MAX_INFERENCE_ALPHA,
    MIN_INFERENCE_ALPHA,
    InflectRequest,
    ModelOption,
    Task,
    TranslateRequest,
)
from app.services import ModelUnavailable
from app.widgets import WidgetEnv, WidgetError, register_widget

NEEDS = {"js/seq2seq-widget.js", "css/seq2seq.css"}
ALPHA_NAMES = {1.0: "softmax", 1.5: "1.5-entmax", 2.0: "sparsemax"}


def json_block(value: BaseModel) -> str:
    """JSON for a <script type="application/json"> block: `<` escaped so no tag can close it."""
    return value.model_dump_json().replace("<", "\\u003c")


def alpha_stops(models: list[ModelOption]) -> list[dict[str, Any]]:
    return [
        {
            "alpha": option.alpha,
            "label": f"{option.alpha:g}",
            "name": ALPHA_NAMES.get(option.alpha, f"{option.alpha:g}-entmax"),
            "available": option.available,
        }
        for option in models
    ]


def common_context(models: list[ModelOption], task: Task) -> dict[str, Any]:
    try:
        alpha = service.default_alpha(models)
    except ModelUnavailable as exc:
        raise WidgetError(
            f"The {task} model is unavailable: {exc.reason}.",
            f"python -m models.train {service.NAME_PREFIX[task]}1.5",
        ) from exc
    stops = alpha_stops(models)
    compare = [a for a in service.COMPARE_ALPHAS if a in [s["alpha"] for s in stops]]
    return {
        "alpha": alpha,
        "stops": stops,
        "stop_index": [s["alpha"] for s in stops].index(alpha),
        "compare_alphas": compare,
        "compare_label": service.format_alphas(compare),
        "beam_max": MAX_BEAM_WIDTH,
        "inference_range": (MIN_INFERENCE_ALPHA, MAX_INFERENCE_ALPHA),
    }


def first_figure(env: WidgetEnv, request: InflectRequest | TranslateRequest) -> dict[str, Any]:
    try:
        response = service.cached_default(env.registry, request)
    except ModelUnavailable as exc:
        raise WidgetError(f"The model “{exc.name}” is unavailable: {exc.reason}.") from exc
    except service.InvalidSeq2SeqInput as exc:
        raise WidgetError(f"The default example does not fit the model: {exc}") from exc
    return service.result_view(response)


def example_answers(
    env: WidgetEnv, requests: list[InflectRequest] | list[TranslateRequest]
) -> list[dict[str, Any] | None]:
    """Per example: the default model's best answer and whether the reference accepts it (None
    when there is no reference), or None when the model cannot answer it."""
    answers: list[dict[str, Any] | None] = []
    for request in requests:
        try:
            response = service.cached_default(env.registry, request)
        except (ModelUnavailable, service.InvalidSeq2SeqInput):
            answers.append(None)
            continue
        reference = response.reference
        answers.append(
            {
                "text": response.hypotheses[0].text,
                "correct": None if reference is None else reference.correct,
            }
        )
    return answers


@register_widget("seq2seq-inflect", needs=NEEDS, pure=True)
def inflect_widget(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    options = service.options(env.registry).inflection
    if not options.languages:
        raise WidgetError(
            "The inflection vocabulary (checkpoints/seq2seq-inflect-vocab.json) is missing.",
            "python -m models.train seq2seq-inflect-a1.5",
        )
    context = common_context(options.models, "inflection")
    requests = [
        InflectRequest(
            lemma=example.lemma,
            language=example.language,
            features=example.features,
            alpha=context["alpha"],
        )
        for example in options.examples
    ]
    return {
        **context,
        **first_figure(env, requests[0]),
        "options": options,
        "options_json": json_block(options),
        "language_names": {code: language_name(code) for code in options.languages},
        "feature_labels": feature_labels(options.features),
        "request": requests[0],
        "example_answers": example_answers(env, requests),
    }


@register_widget("seq2seq-translate", needs=NEEDS, pure=True)
def translate_widget(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    options = service.options(env.registry).translation
    context = common_context(options.models, "translation")
    requests = [
        TranslateRequest(text=example.text, alpha=context["alpha"]) for example in options.examples
    ]
    return {
        **context,
        **first_figure(env, requests[0]),
        "options": options,
        "options_json": json_block(options),
        "request": requests[0],
        "example_answers": example_answers(env, requests),
    }
