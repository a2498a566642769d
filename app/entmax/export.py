"""The α-entmax playground taken away (app/figure_export.py): its take-away block, the script
that prints its probabilities, and its bars as one self-contained SVG. No checkpoint: the
figure is α-entmax itself, computed by models.entmax."""

from __future__ import annotations

from typing import Any

from markupsafe import escape

from app import figure_export
from app.entmax.requests import PlaygroundRequest

FIGURE_ID = "entmax-playground"
ROW = 22  # px per token in the exported bars


def what(figure: PlaygroundRequest) -> str:
    return f"{figure.alpha:g}-entmax of the scores of “{figure.text}”"


def snippet(figure: PlaygroundRequest) -> str:
    """Python that computes the playground's probabilities as the API does."""
    scores, alpha = figure_export.py(figure.scores), figure_export.py(figure.alpha)
    call = f"compute_entmax(EntmaxRequest(scores={scores}, alpha={alpha}))"
    return figure_export.script(
        [
            "from app.entmax.requests import EntmaxRequest",
            "from app.entmax.service import compute_entmax",
        ],
        [
            f"answer = {call}",
            'print("probabilities:", answer.probabilities)',
            'print("support:", answer.support_size)',
        ],
        models=False,
    )


def playground_takeaway(
    page: figure_export.FigurePage | None, figure: PlaygroundRequest
) -> figure_export.Takeaway | None:
    # the form's fields: one `scores` a word (the page address joins them with commas)
    fields = {"text": figure.text, "scores": [f"{s:.12g}" for s in figure.scores]}
    return figure_export.takeaway(
        page,
        FIGURE_ID,
        figure.address(),
        what(figure),
        None,
        snippet(figure),
        figure_export.export_route("/api/entmax/figure", fields | {"alpha": f"{figure.alpha:g}"}),
    )


def bars(view: dict[str, Any]) -> tuple[str, float]:
    """The probabilities as SVG bars, one row per token (the playground's own bars are HTML),
    and the drawing's height."""
    rows = []
    for i, (token, p) in enumerate(zip(view["labels"], view["result"].probabilities, strict=True)):
        y = 8 + i * ROW
        bar = (
            f'<rect class="entmax-svg-bar" x="120" y="{y}" width="{200 * p:.2f}" height="14"/>'
            if p > 0
            else f'<rect class="entmax-svg-zero" x="120" y="{y}" width="200" height="14"/>'
        )
        value = f"{p:.3g}" if p > 0 else "0"
        rows.append(
            f'<text class="entmax-svg-label" x="112" y="{y + 11}" text-anchor="end">'
            f"{escape(token)}</text>{bar}"
            f'<text class="entmax-svg-value" x="328" y="{y + 11}">{value}</text>'
        )
    height = 16 + ROW * len(rows)
    svg = f'<svg viewBox="0 0 400 {height}">{"".join(rows)}</svg>'
    return svg, height


# The playground's own bars are HTML (static/css/entmax.css); these are SVG, in the site's
# colours for probability, exact zeros and ink.
ink, probability, zero = (
    figure_export.site_variable(name) for name in ("--ink", "--mark-probability", "--mark-zero")
)
STYLE = (
    f".entmax-svg-bar {{ fill: {probability} }} "
    f".entmax-svg-zero {{ fill: none; stroke: {zero}; stroke-dasharray: 3 2 }} "
    f".entmax-svg-label, .entmax-svg-value {{ fill: {ink}; font-size: 11px }}"
)
LEGEND = [
    figure_export.Legend("entmax-svg-bar", "probability > 0 (bar length)", "box"),
    figure_export.Legend("entmax-svg-zero", "exactly 0", "box"),
]


def export_svg(templates: Any, page: figure_export.FigurePage | None, view: dict[str, Any]) -> str:
    figure = view["figure"]
    made = playground_takeaway(page, figure)
    result = view["result"]
    caption = [
        f"α-entmax: {what(figure)}: {result.support_size} of {len(result.probabilities)} "
        "tokens keep a nonzero probability.",
        *figure_export.credits(page, made, "Computed by models.entmax"),
    ]
    drawing, height = bars(view)
    return figure_export.document(
        templates, STYLE, [figure_export.Panel(drawing, 400, height)], LEGEND, caption
    )
