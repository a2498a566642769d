"""The sparse seq2seq figures taken away (app/figure_export.py): their take-away blocks, the
scripts that print their answers, and their heatmaps as one self-contained SVG."""

from __future__ import annotations

from typing import Any

from app import figure_export
from app.seq2seq.requests import FigureOptions, InflectFigure
from app.seq2seq.service import HEATMAP_CELL_PX

PREFIX = {"inflection": "inflect", "translation": "translate"}
WIDGET_ID = {"inflection": "seq2seq-inflect", "translation": "seq2seq-translate"}


def responses(drawn: dict[str, Any]) -> list[Any]:
    """The answers a figure drew (`drawn`, app.seq2seq.widget.figure_view), one per column
    that has one."""
    views = [drawn["single"]] if drawn["single"] else [c["view"] for c in drawn["columns"] or []]
    return [view["result"] for view in views if view is not None]


def what(figure: FigureOptions) -> str:
    """The figure in a phrase, for its citation and caption."""
    if isinstance(figure, InflectFigure):
        asked = f"the {figure.language} lemma “{figure.lemma}” inflected for {figure.features}"
    else:
        asked = f"“{figure.text}” translated into German"
    columns = len(figure.columns())
    return asked + (f", {columns} models side by side" if columns > 1 else "")


def request_text(request: Any) -> str:
    fields = request.model_dump(exclude_defaults=True, exclude={"example"})
    fields = {**fields, "alpha": request.alpha, "beam_width": request.beam_width}
    options = ", ".join(f"{key}={figure_export.py(value)}" for key, value in fields.items())
    return f"{type(request).__name__}({options})"


def snippet(figure: FigureOptions) -> str:
    """Python that runs each column's request through the family's `run` with the served
    checkpoints and prints each answer's model and best hypothesis."""
    requests = figure.columns()
    kind = type(requests[0]).__name__
    imports = [f"from app.seq2seq.requests import {kind}", "from models.seq2seq_run import run"]
    prints = ['print(answer.model.name, "->", answer.hypotheses[0].text)']
    if len(requests) == 1:
        return figure_export.script(
            imports, [f"answer = run({request_text(requests[0])}, local_models())", *prints]
        )
    listed = "".join(f"    {request_text(request)},\n" for request in requests)
    lines = [
        f"requests = [\n{listed}]",
        "for request in requests:",
        "    answer = run(request, local_models())",
        *(f"    {line}" for line in prints),
    ]
    return figure_export.script(imports, lines)


def seq2seq_takeaway(
    page: figure_export.FigurePage | None, figure: FigureOptions, drawn: dict[str, Any]
) -> figure_export.Takeaway | None:
    answers = responses(drawn)
    if not answers:
        return None
    prefix = PREFIX[figure.TASK]
    fields = {k.removeprefix(f"{prefix}."): v for k, v in figure.address(prefix).items()}
    return figure_export.takeaway(
        page,
        WIDGET_ID[figure.TASK],
        figure.address(prefix),
        what(figure),
        answers[0].model,
        snippet(figure),
        figure_export.export_route(f"/api/seq2seq/{prefix}/figure", fields),
    )


LEGEND = [
    figure_export.Legend("s2s-cell", "weight > 0 (the darker, the larger)", "box"),
    figure_export.Legend("s2s-legend-zero", "exactly 0 (hatched)", "box"),
]
LEGEND_ZERO = ".s2s-legend-zero { fill: #ffffff; stroke: #6b7079; stroke-dasharray: 2 2 }"


def export_svg(
    templates: Any,
    page: figure_export.FigurePage | None,
    figure: FigureOptions,
    drawn: dict[str, Any],
) -> str:
    """Each column's heatmaps as one SVG file, headed by the column and its best answer, with
    a legend and a caption naming the paper, the checkpoints and their sha256, and the link."""
    made = seq2seq_takeaway(page, figure, drawn)
    heatmap = templates.get_template("partials/seq2seq/heatmap-svg.html")
    views = (
        [("", drawn["single"])]
        if drawn["single"]
        else [(c["title"] + ": ", c["view"]) for c in drawn["columns"] if c["view"] is not None]
    )
    panels = []
    for title, view in views:
        best = view["result"].hypotheses[0].text
        maps = [("Attention", view["heatmap"]), ("Pointer (copy)", view["pointer"])]
        for name, hm in maps:
            if hm is None:
                continue
            height = hm["height"] * HEATMAP_CELL_PX
            drawing = heatmap.render(hm=hm, what=f"{name} weights")
            panels.append(
                figure_export.Panel(drawing, hm["width_px"], height, f"{title}{name} — “{best}”")
            )
    models = {answer.model.name: answer.model for answer in responses(drawn)}
    caption = [
        f"Sparse seq2seq: {what(figure)}.",
        *figure_export.credits(
            page, made, "; ".join(figure_export.made_by(model) for model in models.values())
        ),
    ]
    style = figure_export.standalone_style("css/seq2seq.css", ".s2s-") + "\n" + LEGEND_ZERO
    return figure_export.document(templates, style, panels, LEGEND, caption)
