"""seq2seq-inflect and seq2seq-translate: the live sparse seq2seq widgets.

One state drives both the page render and every htmx round trip: the form's fields (the
reader's input, beam, how α is chosen, compare) read from the form (`state_from_form`) or
from the page address (`state_from_url`, keys `inflect.*` / `translate.*`), decoded by
app.seq2seq.service and drawn by templates/partials/seq2seq/figure.html. So a shared link and a
form submitted without script show the same figure as the live widget. Every example button
carries the default model's answer with its verdict (✓ / ✗), so right and wrong answers are
both in view from the start.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from app.errors import error_sentence
from app.registry import ModelRegistry, ModelUnavailable
from app.seq2seq import service
from app.seq2seq.morphology_labels import feature_labels, language_name
from app.seq2seq.requests import (
    MAX_BEAM_WIDTH,
    MAX_INFERENCE_ALPHA,
    MIN_INFERENCE_ALPHA,
    InflectRequest,
    ModelOption,
    Task,
    TranslateRequest,
)
from app.widgets import WidgetEnv, WidgetError, register_widget
from models.errors import InvalidInput
from models.seq2seq_run import run

NEEDS = {"htmx", "js/hx-widgets.js", "js/seq2seq-widget.js", "css/seq2seq.css"}
ALPHA_NAMES = {1.0: "softmax", 1.5: "1.5-entmax", 2.0: "sparsemax"}
WIDGET_ID: dict[Task, str] = {"inflection": "seq2seq-inflect", "translation": "seq2seq-translate"}
URL_PREFIX: dict[Task, str] = {"inflection": "inflect", "translation": "translate"}
INPUTS: dict[Task, tuple[str, ...]] = {
    "inflection": ("lemma", "language", "features"),
    "translation": ("text",),
}
# Form field -> its key in the page address (after the widget's prefix).
ADDRESS_NAMES = {
    "beam_width": "beam",
    "mode": "mode",
    "alpha": "alpha",
    "inference_alpha": "ia",
    "base_alpha": "base",
    "compare": "compare",
}
STALE_NOTE = "The dimmed figure below is for the last input that worked."
EMPTY_NOTE = "Nothing is drawn until the input is fixed."


def format_alpha(alpha: float) -> str:
    return f"{round(alpha, 2):g}"


def alpha_name(alpha: float) -> str:
    return ALPHA_NAMES.get(alpha, f"{format_alpha(alpha)}-entmax")


@dataclass(frozen=True)
class WidgetState:
    """What the widget shows: the reader's input as typed, and how α is chosen."""

    task: Task
    inputs: dict[str, str]
    beam: str
    alpha: float  # the trained model's α (trained mode)
    inference: bool
    inference_alpha: str
    base_alpha: float  # the model an inference-time α is applied to
    compare: bool

    def readout(self) -> str:
        if self.inference:
            return (
                f"inference-time α = {format_alpha(_number(self.inference_alpha, 0.0))}, "
                f"applied to the model trained with α = {format_alpha(self.base_alpha)}"
            )
        return (
            f"α = {format_alpha(self.alpha)} ({alpha_name(self.alpha)}): the model trained with it"
        )

    def url_state(self) -> dict[str, str | None]:
        prefix = URL_PREFIX[self.task]
        state: dict[str, str | None] = {f"{prefix}.{k}": v for k, v in self.inputs.items()}
        values = {
            "beam_width": self.beam,
            "mode": "inference" if self.inference else "trained",
            "alpha": format_alpha(self.alpha),
            "inference_alpha": self.inference_alpha if self.inference else None,
            "base_alpha": format_alpha(self.base_alpha) if self.inference else None,
            "compare": "1" if self.compare else None,
        }
        for field, value in values.items():
            state[f"{prefix}.{ADDRESS_NAMES[field]}"] = value
        return state


def _number(raw: str | None, default: float) -> float:
    try:
        value = float(raw) if raw not in (None, "") else default
    except ValueError:
        return default
    return value if math.isfinite(value) else default


def _stop(alphas: list[float], raw: str | None, default: float) -> float:
    """The trained α named by `raw` (a value, as the address and the base menu write it)."""
    wanted = _number(raw, default)
    return next((a for a in alphas if math.isclose(a, wanted, abs_tol=1e-6)), default)


def state_from_form(
    task: Task, form: Mapping[str, str], alphas: list[float], default: WidgetState
) -> WidgetState:
    """The state the widget's form describes (field names as in the templates); an example
    button's `example` index replaces the reader's input with that example's."""
    inputs = {name: form.get(name, default.inputs[name]) for name in INPUTS[task]}
    examples = service.INFLECTION_EXAMPLES if task == "inflection" else service.TRANSLATION_EXAMPLES
    index = form.get("example", "")
    if index.isdigit() and int(index) < len(examples):
        inputs = {name: getattr(examples[int(index)], name) for name in INPUTS[task]}
    slider = form.get("alpha_index", "")
    alpha = alphas[int(slider)] if slider.isdigit() and int(slider) < len(alphas) else default.alpha
    return WidgetState(
        task,
        inputs,
        form.get("beam_width", default.beam),
        alpha,
        form.get("mode") == "inference",
        form.get("inference_alpha", default.inference_alpha),
        _stop(alphas, form.get("base_alpha"), default.base_alpha),
        form.get("compare") == "on",
    )


def nearest_cell(features: str, cells: list[str]) -> str:
    """After a language change: the features if the new language has that cell, else its cell
    sharing the most UniMorph tags with them (the first such), so past tense stays past."""
    if features in cells or not cells:
        return features
    tags = set(features.split(";"))
    return max(cells, key=lambda cell: len(tags & set(cell.split(";"))))


def state_from_url(
    task: Task, url_state: Mapping[str, str], alphas: list[float], default: WidgetState
) -> WidgetState:
    """The state a shared address describes; keys it lacks keep the default's values."""
    prefix = URL_PREFIX[task]

    def get(name: str, fallback: str) -> str:
        return url_state.get(f"{prefix}.{name}", fallback)

    return WidgetState(
        task,
        {name: get(name, value) for name, value in default.inputs.items()},
        get("beam", default.beam),
        _stop(alphas, get("alpha", ""), default.alpha),
        get("mode", "trained") == "inference",
        get("ia", default.inference_alpha),
        _stop(alphas, get("base", ""), default.base_alpha),
        get("compare", "") == "1",
    )


def requests_of(state: WidgetState, alphas: list[float]) -> list[tuple[str, BaseModel]]:
    """(column title, validated request) per figure: one, or one per compared α. Raises
    pydantic's ValidationError for a field the reader must change."""
    schema = InflectRequest if state.task == "inflection" else TranslateRequest
    fields: dict[str, Any] = dict(state.inputs)
    if state.beam != "":
        beam = _number(state.beam, math.nan)
        fields["beam_width"] = int(beam) if beam.is_integer() else state.beam
    base = state.base_alpha
    if state.compare:
        compared = [a for a in service.COMPARE_ALPHAS if a in alphas]
        if state.inference:
            return [
                (
                    f"inference-time α = {format_alpha(a)} (trained with {format_alpha(base)})",
                    schema(**fields, alpha=base, inference_alpha=a),
                )
                for a in compared
            ]
        return [
            (f"α = {format_alpha(a)} ({alpha_name(a)})", schema(**fields, alpha=a))
            for a in compared
        ]
    if state.inference:
        inference = _number(state.inference_alpha, math.nan)
        value: Any = inference if math.isfinite(inference) else state.inference_alpha
        return [("", schema(**fields, alpha=base, inference_alpha=value))]
    return [("", schema(**fields, alpha=state.alpha))]


def figure_view(
    registry: ModelRegistry,
    state: WidgetState,
    alphas: list[float],
    check: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """The figure for `state`: one result, or the compared columns (a column whose model
    cannot answer says why; if none can, the first reason is raised). Raises ValidationError,
    InvalidInput or ModelUnavailable for a single figure."""
    requests = requests_of(state, alphas)
    if not state.compare:
        response = run(requests[0][1], registry.get, check)  # type: ignore[arg-type]
        return {"single": service.result_view(response)["view"], "columns": None}
    columns, failures = [], []
    for title, request in requests:
        try:
            response = run(request, registry.get, check)  # type: ignore[arg-type]
        except (InvalidInput, ModelUnavailable) as exc:
            failures.append(exc)
            columns.append({"title": title, "view": None, "error": _reason(exc)})
        else:
            view = service.result_view(response, compact=True)["view"]
            columns.append({"title": title, "view": view, "error": None})
    if len(failures) == len(columns):
        raise failures[0]
    return {"single": None, "columns": columns}


def _reason(exc: Exception) -> str:
    if isinstance(exc, ModelUnavailable):
        return exc.sentence
    return str(exc)


def problem_of(exc: Exception) -> str:
    """What the reader sees instead of a figure the page cannot draw."""
    if isinstance(exc, ValidationError):
        return error_sentence(exc.errors()[0], reader=True)
    return _reason(exc)


# --- the page's first render -------------------------------------------------------------------


def json_block(value: BaseModel) -> str:
    """JSON for a <script type="application/json"> block: `<` escaped so no tag can close it."""
    return value.model_dump_json().replace("<", "\\u003c")


def alpha_stops(models: list[ModelOption]) -> list[dict[str, Any]]:
    return [
        {
            "alpha": option.alpha,
            "label": f"{option.alpha:g}",
            "name": alpha_name(option.alpha),
            "available": option.available,
        }
        for option in models
    ]


def default_state(task: Task, models: list[ModelOption], inputs: dict[str, str]) -> WidgetState:
    """The first example with the default model; ModelUnavailable when no α can answer."""
    alpha = service.default_alpha(models)
    return WidgetState(task, inputs, "5", alpha, False, f"{alpha:g}", alpha, False)


def widget_context(
    env: WidgetEnv, params: Mapping[str, Any], task: Task, options: Any, example_requests: list
) -> dict[str, Any]:
    """Controls and figure for the default example, or for the state the page address holds."""
    alphas = [option.alpha for option in options.models]
    first = options.examples[0]
    try:
        default = default_state(task, options.models, {n: getattr(first, n) for n in INPUTS[task]})
    except ModelUnavailable as exc:
        raise WidgetError(exc.sentence, f"python -m models.train {exc.name}") from exc
    url_state = params.get("url_state") or {}
    state = state_from_url(task, url_state, alphas, default) if url_state else default
    problem, figure = None, {"single": None, "columns": None}
    try:
        if url_state:
            figure = figure_view(env.registry, state, alphas)
        else:  # the default figure is decoded once per checkpoint
            request = requests_of(state, alphas)[0][1]
            figure["single"] = service.result_view(
                service.cached_default(env.registry, request)  # type: ignore[arg-type]
            )["view"]
    except (ValidationError, InvalidInput, ModelUnavailable) as exc:
        if not url_state:
            raise WidgetError(f"The default example cannot be drawn: {problem_of(exc)}") from exc
        problem = problem_of(exc)
    stops = alpha_stops(options.models)
    compare = [a for a in service.COMPARE_ALPHAS if a in alphas]
    return {
        "widget_id": WIDGET_ID[task],
        "endpoint": f"/api/seq2seq/{URL_PREFIX[task]}/figure",
        "state": state,
        "figure": figure,
        "problem": problem,
        "notes": {"stale": STALE_NOTE, "empty": EMPTY_NOTE},
        "alpha": default.alpha,
        "readout": state.readout(),
        "stops": stops,
        "stop_index": alphas.index(state.alpha),
        "compare_label": service.format_alphas(compare),
        "beam_max": MAX_BEAM_WIDTH,
        "inference_range": (MIN_INFERENCE_ALPHA, MAX_INFERENCE_ALPHA),
        "options": options,
        "example_answers": example_answers(env, example_requests(default.alpha)),
    }


def example_answers(env: WidgetEnv, requests: list[BaseModel]) -> list[dict[str, Any] | None]:
    """Per example: the default model's best answer and whether the reference accepts it (None
    when there is no reference), or None when the model cannot answer it."""
    answers: list[dict[str, Any] | None] = []
    for request in requests:
        try:
            response = service.cached_default(env.registry, request)  # type: ignore[arg-type]
        except (ModelUnavailable, InvalidInput):
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


def address_keys(task: Task) -> list[str]:
    names = [*INPUTS[task], *ADDRESS_NAMES.values()]
    return [f"{URL_PREFIX[task]}.{name}" for name in names]


@register_widget("seq2seq-inflect", needs=NEEDS, pure=True, url_keys=address_keys("inflection"))
def inflect_widget(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    options = service.options(env.registry).inflection
    if not options.languages:
        raise WidgetError(
            "The inflection vocabulary (checkpoints/seq2seq-inflect-vocab.json) is missing.",
            "python -m models.train seq2seq-inflect-a1.5",
        )

    def example_requests(alpha: float) -> list[BaseModel]:
        return [
            InflectRequest(lemma=e.lemma, language=e.language, features=e.features, alpha=alpha)
            for e in options.examples
        ]

    context = widget_context(env, params, "inflection", options, example_requests)
    return {
        **context,
        "language_names": {code: language_name(code) for code in options.languages},
        "feature_labels": feature_labels(options.features),
    }


@register_widget("seq2seq-translate", needs=NEEDS, pure=True, url_keys=address_keys("translation"))
def translate_widget(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    options = service.options(env.registry).translation

    def example_requests(alpha: float) -> list[BaseModel]:
        return [TranslateRequest(text=e.text, alpha=alpha) for e in options.examples]

    return widget_context(env, params, "translation", options, example_requests)


def form_state(
    registry: ModelRegistry, task: Task, form: Mapping[str, str]
) -> tuple[WidgetState, list[float]]:
    """For the figure route: the state the form describes, and the trained α values."""
    models = service.model_options(registry, task)
    alphas = [option.alpha for option in models]
    examples = service.INFLECTION_EXAMPLES if task == "inflection" else service.TRANSLATION_EXAMPLES
    default = default_state(task, models, {n: getattr(examples[0], n) for n in INPUTS[task]})
    return state_from_form(task, form, alphas, default), alphas
