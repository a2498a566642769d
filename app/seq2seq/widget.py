"""seq2seq-inflect and seq2seq-translate: the live sparse seq2seq widgets.

The figure's state is its request, app.seq2seq.requests.InflectFigure / TranslateFigure: the
form's fields, the query of GET /api/seq2seq/{inflect,translate}/figure and, under the
widget's prefix (`inflect.lemma`, `translate.compare`, ...), the page address, which the first
render validates with the same model. Addresses written before that (`inflect.beam`,
`inflect.ia`, `inflect.base`) still read: the model takes those keys under their field names.
So a shared link and a form submitted without script show the same figure as the live widget,
drawn by templates/partials/seq2seq/figure.html. Every example button carries the default
model's answer with its verdict (✓ / ✗), so right and wrong answers are both in view.

A page render prices the address's figure with its `cost()` before decoding it
(`seq2seq_address`, planned with the page by app.widgets): a figure too heavy for a page (even
greedy, a 200-character sentence draws half a megabyte, so there is no lighter decode) shows the
example with a sentence, and the form keeps the address's state for the sentence's button.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from app.errors import error_sentence
from app.learning import learning_view
from app.registry import ModelRegistry, ModelUnavailable
from app.seq2seq import service
from app.seq2seq.export import seq2seq_takeaway
from app.seq2seq.morphology_labels import feature_labels, language_name
from app.seq2seq.requests import (
    MAX_BEAM_WIDTH,
    MAX_INFERENCE_ALPHA,
    MIN_INFERENCE_ALPHA,
    OLD_ADDRESS_NAMES,
    CellsResponse,
    FigureOptions,
    InflectCells,
    InflectFigure,
    InflectionOptions,
    ModelOption,
    Seq2SeqDecodeOptions,
    Task,
    TranslateFigure,
    field_names,
)
from app.widgets import (
    AddressReader,
    AddressState,
    PageFigure,
    WidgetEnv,
    WidgetError,
    register_widget,
)
from models.errors import InvalidInput
from models.seq2seq_run import SERVED, SNAPSHOTS, run

NEEDS = {"htmx", "js/hx-widgets.js", "js/seq2seq-widget.js", "css/seq2seq.css"}
ALPHA_NAMES = {1.0: "softmax", 1.5: "1.5-entmax", 2.0: "sparsemax"}
WIDGET_ID: dict[Task, str] = {"inflection": "seq2seq-inflect", "translation": "seq2seq-translate"}
PREFIX: dict[Task, str] = {"inflection": "inflect", "translation": "translate"}
FIGURE: dict[Task, type[FigureOptions]] = {
    "inflection": InflectFigure,
    "translation": TranslateFigure,
}
# Fields a bad address shows as typed (the reader fixes them there); others take the default.
AS_TYPED = {"lemma", "language", "features", "text", "beam_width"}
NOTES = {
    "stale": "The dimmed figure below is for the last input that worked.",
    "empty": "Nothing is drawn until the input is fixed.",
}


def alpha_name(alpha: float) -> str:
    return ALPHA_NAMES.get(alpha, f"{alpha:g}-entmax")


def readout(figure: FigureOptions) -> str:
    copying = ""
    if getattr(figure, "copy_model", False):
        beside = getattr(figure, "copy_beside", False) and not figure.compare
        copying = ", through its copy model" + (" beside the generate-only one" if beside else "")
    return alpha_readout(figure) + copying


def alpha_readout(figure: FigureOptions) -> str:
    if figure.compare:
        alphas = service.format_alphas(list(SERVED[figure.TASK]))
        if figure.mode == "inference":
            return (
                f"inference-time α = {alphas} side by side, "
                f"applied to the model trained with α = {figure.base_alpha:g}"
            )
        return f"α = {alphas} side by side: each column the model trained with it"
    if figure.mode == "inference":
        return (
            f"inference-time α = {figure.inference_alpha:g}, "
            f"applied to the model trained with α = {figure.base_alpha:g}"
        )
    return f"α = {figure.alpha:g} ({alpha_name(figure.alpha)}): the model trained with it"


def column_title(request: Seq2SeqDecodeOptions) -> str:
    copying = ", copy model" if getattr(request, "copy_model", False) else ""
    return alpha_title(request) + copying


def alpha_title(request: Seq2SeqDecodeOptions) -> str:
    if request.inference_alpha is not None:
        return f"inference-time α = {request.inference_alpha:g} (trained with {request.alpha:g})"
    return f"α = {request.alpha:g} ({alpha_name(request.alpha)})"


def nearest_cell(features: str, cells: list[str]) -> str:
    """After a language change: the features if the new language has that cell, else its cell
    sharing the most UniMorph tags with them (the first such), so past tense stays past."""
    if features in cells or not cells:
        return features
    tags = set(features.split(";"))
    return max(cells, key=lambda cell: len(tags & set(cell.split(";"))))


def language_cells(options: InflectionOptions, asked: InflectCells) -> CellsResponse:
    """The features menu for a newly chosen language, with the cell nearest the one chosen so
    far; InvalidInput for a language the models do not know."""
    cells = options.features.get(asked.language)
    if cells is None:
        raise InvalidInput(
            f"Unknown language {asked.language!r}; allowed: {', '.join(options.languages)}."
        )
    chosen = nearest_cell(asked.features, cells)
    return CellsResponse(language=asked.language, features=cells, chosen=chosen)


def figure_view(
    registry: ModelRegistry, figure: FigureOptions, check: Callable[[], None] | None = None
) -> dict[str, Any]:
    """One result, or the compared columns (a column whose model cannot answer says why; if
    none can, the first reason is raised: InvalidInput or ModelUnavailable)."""
    requests = figure.columns()
    if len(requests) == 1:
        response = run(requests[0], registry.get, check)  # type: ignore[arg-type]
        return {"single": service.result_view(response)["view"], "columns": None}
    columns, failures = [], []
    for request in requests:
        try:
            response = run(request, registry.get, check)  # type: ignore[arg-type]
        except (InvalidInput, ModelUnavailable) as exc:
            failures.append(exc)
            columns.append({"title": column_title(request), "view": None, "error": reason(exc)})
        else:
            view = service.result_view(response, compact=True)["view"]
            columns.append({"title": column_title(request), "view": view, "error": None})
    if len(failures) == len(columns):
        raise failures[0]
    return {"single": None, "columns": columns}


def reason(exc: Exception) -> str:
    """What the reader sees instead of a figure the page cannot draw."""
    if isinstance(exc, ValidationError):
        return error_sentence(exc.errors()[0], reader=True)
    return exc.sentence if isinstance(exc, ModelUnavailable) else str(exc)


def address_figure(
    model: type[FigureOptions], default: dict[str, Any], fields: dict[str, str]
) -> tuple[FigureOptions, ValidationError | None]:
    """The figure a page address describes, over the default's fields. For a field that does
    not validate: the default's value, or the value as typed for a text box, and the error."""
    renamed = field_names(fields)
    try:
        return model.model_validate({**default, **renamed}), None
    except ValidationError as exc:
        bad = {str(error["loc"][0]) for error in exc.errors() if error["loc"]}
        kept = {key: value for key, value in renamed.items() if key not in bad}
        figure = model.model_validate({**default, **kept})
        typed = {key: renamed[key] for key in bad & AS_TYPED if key in renamed}
        return figure.model_copy(update=typed), exc


def alpha_stops(models: list[ModelOption]) -> list[dict[str, Any]]:
    return [
        {
            "alpha": o.alpha,
            "label": f"{o.alpha:g}",
            "name": alpha_name(o.alpha),
            "available": o.available,
        }
        for o in models
    ]


def default_fields(options: Any) -> dict[str, Any]:
    """The figure's default: the first example, with the trained default α."""
    try:
        alpha = service.default_alpha(options.models)
    except ModelUnavailable as exc:
        raise WidgetError(exc.sentence, f"python -m models.train {exc.name}") from exc
    first = options.examples[0].model_dump(exclude={"label", "why"})
    return {**first, "alpha": alpha, "base_alpha": alpha, "inference_alpha": alpha}


def address_fields(task: Task, params: Mapping[str, Any]) -> dict[str, str]:
    prefix = f"{PREFIX[task]}."
    return {k.removeprefix(prefix): v for k, v in (params.get("url_state") or {}).items()}


def task_options(env: WidgetEnv, task: Task) -> Any:
    options = service.options(env.registry)
    return options.inflection if task == "inflection" else options.translation


def figure_state(figure: FigureOptions) -> AddressState:
    """A figure's state from the address, priced, in the reader's words; no lighter decode
    (even greedy, a long sentence's figure is over half a megabyte): a figure too heavy for
    the page shows the example."""
    if isinstance(figure, InflectFigure):
        source, noun = figure.lemma, "lemma"
    else:
        source, noun = getattr(figure, "text", ""), "sentence"
    compared = " with every trained α side by side" if figure.compare else ""
    return AddressState(
        state=figure,
        tokens=figure.cost(),
        asked=f"beam search (width {figure.beam_width}){compared} on a {len(source)}-character "
        f"{noun}",
        run=f"Run beam search (width {figure.beam_width})"
        + (" for every α" if figure.compare else ""),
        unrun="the example",
    )


def seq2seq_address(task: Task) -> AddressReader:
    def read(params: Mapping[str, Any], env: WidgetEnv) -> AddressState:
        """The figure's state in the page address, validated by its figure request over the
        default and priced (app.widgets plans the page with it)."""
        if not (fields := address_fields(task, params)):
            return AddressState()
        figure, problem = address_figure(
            FIGURE[task], default_fields(task_options(env, task)), fields
        )
        if problem is not None:
            return AddressState(problem=reason(problem))
        return figure_state(figure)

    return read


def widget_context(
    env: WidgetEnv, params: Mapping[str, Any], task: Task, options: Any
) -> dict[str, Any]:
    """Controls and figure for the default example, or for the figure the page address holds
    (what the page render runs for it, params["page_figure"]: the state, or nothing, when
    it is too heavy for the page, and the controls keep the state for the note's button)."""
    default = default_fields(options)
    alpha = default["alpha"]
    fields = address_fields(task, params)
    planned: PageFigure = params.get("page_figure") or PageFigure()
    figure, problem = address_figure(FIGURE[task], default, fields)
    drawn: dict[str, Any] = {"single": None, "columns": None}
    note, shown = None, figure
    try:
        if problem is not None:
            raise problem
        if fields and planned.drawn is not None:
            drawn, shown = figure_view(env.registry, planned.drawn, env.check), planned.drawn
        else:  # the default figure is decoded once per checkpoint
            note = planned.note if fields else None
            shown = FIGURE[task].model_validate(default)
            drawn["single"] = service.result_view(
                service.cached_default(env.registry, shown.columns()[0])  # type: ignore[arg-type]
            )["view"]
    except (ValidationError, InvalidInput, ModelUnavailable) as exc:
        if not fields:
            raise WidgetError(f"The default example cannot be drawn: {reason(exc)}") from exc
        problem = reason(exc)
    stops = alpha_stops(options.models)
    alphas = [stop["alpha"] for stop in stops]
    return {
        **controls(task, figure),
        "figure": drawn,
        "takeaway": seq2seq_takeaway(env.page, shown, drawn),
        "learning": learning(figure),
        "problem": problem,
        "page_note": note,
        "page_run": planned.run if note else None,
        "notes": NOTES,
        "alpha": alpha,
        "stops": stops,
        "slider": {"min": alphas[0], "max": alphas[-1], "step": min_gap(alphas)},
        "compare_label": service.format_alphas(alphas),
        "inference_range": (MIN_INFERENCE_ALPHA, MAX_INFERENCE_ALPHA),
        "options": options,
        "example_answers": example_answers(env, FIGURE[task], options.examples, alpha),
    }


def learning(figure: FigureOptions) -> dict[str, Any] | None:
    """The figure's training slider and curves (app/learning.py), for a task whose model's
    training kept snapshots (models.seq2seq_run.SNAPSHOTS)."""
    return learning_view(SNAPSHOTS.get(figure.TASK), getattr(figure, "snapshot", None))


def min_gap(alphas: list[float]) -> float:
    """The trained α slider's step: the values are evenly spaced (1, 1.5, 2)."""
    return min((b - a for a, b in zip(alphas, alphas[1:], strict=False)), default=1.0)


def names(task: Task) -> dict[str, str]:
    """The widget's id, address prefix and the endpoints its controls ask."""
    return {
        "widget_id": WIDGET_ID[task],
        "prefix": PREFIX[task],
        "endpoint": f"/api/seq2seq/{PREFIX[task]}/figure",
        "cells_endpoint": "/api/seq2seq/inflect/cells",
    }


def controls(task: Task, figure: FigureOptions) -> dict[str, Any]:
    """What the page's controls and every figure answer share."""
    return {
        **names(task),
        "state": figure,
        "readout": readout(figure),
        "beam_max": MAX_BEAM_WIDTH,
    }


def example_answers(
    env: WidgetEnv, model: type[FigureOptions], examples: list[Any], alpha: float
) -> list[dict[str, Any] | None]:
    """Per example: the default model's best answer and whether the reference accepts it (None
    when there is no reference), or None when the model cannot answer it."""
    answers: list[dict[str, Any] | None] = []
    for index in range(len(examples)):
        request = model.model_validate({"example": str(index), "alpha": alpha}).columns()[0]
        try:
            response = service.cached_default(env.registry, request)  # type: ignore[arg-type]
        except (ModelUnavailable, InvalidInput):
            answers.append(None)
            continue
        reference = response.reference
        correct = None if reference is None else reference.correct
        answers.append({"text": response.hypotheses[0].text, "correct": correct})
    return answers


def address_keys(task: Task) -> list[str]:
    names = [*FIGURE[task].model_fields, *OLD_ADDRESS_NAMES]
    return [f"{PREFIX[task]}.{name}" for name in names if name != "example"]


def task_widget(task: Task) -> Callable[[Callable[..., dict[str, Any]]], Any]:
    """Register a task's widget (its name, address keys and address reader from the task)."""
    return register_widget(
        WIDGET_ID[task],
        needs=NEEDS,
        pure=True,
        url_keys=address_keys(task),
        address=seq2seq_address(task),
    )


@task_widget("inflection")
def inflect_widget(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    options = service.options(env.registry).inflection
    if not options.languages:
        raise WidgetError(
            "The inflection vocabulary (checkpoints/seq2seq-inflect-vocab.json) is missing.",
            "python -m models.train seq2seq-inflect-a1.5",
        )
    return {**widget_context(env, params, "inflection", options), **inflection_labels(options)}


def inflection_labels(options: Any) -> dict[str, Any]:
    return {
        "language_names": {code: language_name(code) for code in options.languages},
        "feature_labels": feature_labels(options.features),
    }


@task_widget("translation")
def translate_widget(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    options = service.options(env.registry).translation
    return widget_context(env, params, "translation", options)
