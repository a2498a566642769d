"""A pointer board taken away (app/figure_export.py): its take-away block, the snippet that
prints its answer, and the board drawn as one self-contained SVG with legend and caption."""

from __future__ import annotations

from typing import Any

from app import figure_export
from app.pointer.requests import Board, PointerTrace
from app.pointer.url_state import address, figure_id

TITLES = {"hull": "Convex hull", "tsp": "Travelling salesman", "sort": "Sorting"}
DECODERS = {  # formatted with the board's beam_width and samples
    "greedy": "greedy decoding",
    "beam": "beam search (width {beam_width})",
    "sample": "best of {samples} samples",
    "symmetric": "symmetric (8 · n greedy tours)",
}
LEGEND = (  # (the mark's class, what it means, its shape), as the board's own legend has them
    ("pb-model", "model's answer", "line"),
    ("pb-reference", "exact answer", "line"),
    ("pb-halo", "probability (halo area)", "dot"),
)


def decoder_name(board: Board) -> str:
    return DECODERS[board.decoder].format(beam_width=board.beam_width, samples=board.samples)


def decoding(board: Board, result: PointerTrace) -> str:
    return (
        f"{decoder_name(board)} over {len(board.inputs())} inputs by the model {result.model.name}"
    )


def what(task: str, board: Board, result: PointerTrace) -> str:
    """The figure in a phrase, for its citation."""
    return f"{TITLES[task].lower()}, {decoding(board, result)}"


def snippet(task: str, board: Board, result: PointerTrace) -> str:
    """Python that decodes the board's state with the checkpoint that answered and prints the
    answer's order and verdict, as the API's JSON has them."""
    options = [f"decoder={figure_export.py(board.decoder)}"]
    if board.decoder == "beam":
        options.append(f"beam_width={board.beam_width}")
    if board.decoder == "sample":
        options += [f"samples={board.samples}", f"seed={board.seed}"]
    # the checkpoint that answered, or the training snapshot it was (models/snapshots.py)
    chosen = (
        f"snapshot={board.snapshot}"
        if board.snapshot is not None
        else f"model={figure_export.py(result.model.name)}"
    )
    call = (
        f"run(\n    PointerRequest(\n        task={figure_export.py(task)},\n"
        f"        inputs={figure_export.py(board.inputs())},\n        {', '.join(options)},\n"
        f"        {chosen},\n    ),\n    local_models(),\n)"
    )
    return figure_export.script(
        ["from models.pointer_run import PointerRequest, run"],
        [f"answer = {call}", 'print("order:", answer.order)', 'print("correct:", answer.correct)'],
    )


def board_takeaway(
    page: figure_export.FigurePage | None,
    task: str,
    key: str,
    board: Board,
    result: PointerTrace | None,
) -> figure_export.Takeaway | None:
    if result is None:
        return None
    fields = {k.removeprefix(f"{key}-"): v for k, v in address(key, board).items()}
    return figure_export.takeaway(
        page,
        figure_id(key),
        address(key, board),
        what(task, board, result),
        result.model,
        snippet(task, board, result),
        figure_export.export_route(f"/api/pointer/{task}/figure", fields),
    )


def export_svg(
    templates: Any,
    page: figure_export.FigurePage | None,
    task: str,
    board: Board,
    result: PointerTrace,
    figure: dict[str, Any],
) -> str:
    """The board's drawing at its step (`figure`, app/pointer/board.py) as one SVG file, with
    the legend and a caption naming the paper, the checkpoint and its sha256, and the link."""
    made = board_takeaway(page, task, task, board, result)
    caption = [
        f"{TITLES[task]}: {decoding(board, result)}.",
        *figure_export.credits(page, made, figure_export.made_by(result.model)),
    ]
    drawing = templates.get_template("partials/pointer/board-svg.html").render(figure=figure)
    height = 220 if figure["kind"] == "line" else 400
    return figure_export.document(
        templates,
        figure_export.standalone_style("css/pointer.css", ".pb-"),
        [figure_export.Panel(drawing, 400, height)],
        [figure_export.Legend(mark, text, shape) for mark, text, shape in LEGEND],
        caption,
    )
