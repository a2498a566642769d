"""The attention model's figures taken away (app/figure_export.py): their take-away blocks,
the scripts that print their answers, and their maps as self-contained SVG files."""

from __future__ import annotations

from typing import Any

from app import figure_export
from app.routing.requests import AttentionFigure, CitiesFigure

PREFIXES = {"attention": "attn", "reinforce": "rl"}


def name_of(figure: CitiesFigure) -> str:
    return "attention" if isinstance(figure, AttentionFigure) else "reinforce"


def what(figure: CitiesFigure, answer: Any) -> str:
    """The figure in a phrase, for its citation and caption."""
    cities = f"{len(figure.points)} cities"
    if isinstance(figure, AttentionFigure):
        return (
            f"encoder attention of city {figure.city}, layer {figure.layer}, head {figure.head}, "
            f"over {cities}"
        )
    return f"{figure.samples} tours sampled against the greedy-rollout baseline over {cities}"


def snippet(figure: CitiesFigure) -> str:
    """Python that asks the served attention model for the figure's answer and prints what
    the API's JSON has."""
    name = name_of(figure)
    fields = figure.model_dump(exclude={"points"}, exclude_defaults=True)
    options = "".join(f", {key}={figure_export.py(value)}" for key, value in fields.items())
    kind = type(figure).__name__
    points = figure_export.py(figure.points)
    call = f"service.{name}(\n    local_models(),\n    {kind}(points={points}{options}),\n)"
    if name == "attention":
        prints = [f'print("weights of city {figure.city}:", answer.weights[{figure.city - 1}])']
    else:
        prints = [
            'print("baseline:", answer.baseline.length)',
            'print("samples:", [(s.length, s.advantage) for s in answer.samples])',
        ]
    imports = ["from app.routing import service", f"from app.routing.requests import {kind}"]
    return figure_export.script(imports, [f"answer = {call}", *prints])


def routing_takeaway(
    page: figure_export.FigurePage | None, figure: CitiesFigure, answer: Any, figure_id: str
) -> figure_export.Takeaway | None:
    name = name_of(figure)
    return figure_export.takeaway(
        page,
        figure_id,
        figure.address(PREFIXES[name]),
        what(figure, answer),
        answer.model,
        snippet(figure),
        figure_export.export_route(
            f"/api/routing/{name}", {k[1:]: v for k, v in figure.address("").items()}
        ),
    )


LEGENDS = {
    "attention": [
        figure_export.Legend("", "the reading city", "dot", "routing-city is-focus"),
        figure_export.Legend("", "line width = attention weight", "line", "routing-lines"),
    ],
    "reinforce": [
        figure_export.Legend("routing-baseline", "greedy rollout (the baseline)"),
        figure_export.Legend("routing-best", "shortest sampled tour"),
    ],
}


def export_svg(
    templates: Any, page: figure_export.FigurePage | None, context: dict[str, Any]
) -> str:
    """The figure's map (`context`, the figure's view) as one SVG file, with a legend and a
    caption naming the paper, the checkpoint and its sha256, and the link."""
    figure, answer = context["figure"], context["answer"]
    name = name_of(figure)
    made = routing_takeaway(page, figure, answer, context["figure_id"])
    caption = [
        f"The attention model: {what(figure, answer)}.",
        *figure_export.credits(page, made, figure_export.made_by(answer.model)),
    ]
    drawing = templates.get_template(f"partials/routing/{name}-map.html").render(context)
    style = figure_export.standalone_style("css/routing.css", ".routing-")
    return figure_export.document(
        templates, style, [figure_export.Panel(drawing, 400, 400)], LEGENDS[name], caption
    )
