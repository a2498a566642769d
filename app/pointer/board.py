"""The pointer board's figure, drawn on the server for every state: the page render, a form
submitted without script, and each htmx round trip all draw it here, so the browser never
draws the board itself (static/js/pointer-board.js only moves a dragged mark until the answer
comes).

What one drawing shows, for the decoder step being viewed: the inputs with their numbers
(app/pointer/board_labels.py), the exact answer (dashed), the model's whole answer and the part
of it chosen so far, a halo per input whose area is its pointer probability, and pointer arrows
from the decoder's last choice to every input with a nonzero probability, as wide as that
probability (none for an exact zero). Marks keep their ids from one step to the next, so htmx
carries their old attributes into the new drawing and CSS transitions animate the change.

Points use the unit square with y up; the sorting board puts the values on a line and the
model's output slots on a row below it, with a line from each value to the slot it went to.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from app.pointer.board_labels import (
    end_mark_boxes,
    place_end_mark,
    place_line_labels,
    place_point_labels,
)
from app.pointer.requests import PointerTrace, SortResponse
from app.pointer.views import (
    FRAME,
    HALO_MAX_R,
    PAD,
    POINT_R,
    board_xy,
    halo_radius,
    line_x,
    polygon_path,
    result_context,
    step_text,
)
from app.pointer.your_turn import your_turn

ZERO_HALO_R = POINT_R + 4  # the dotted ring of an exact zero
ARROW_MAX_WIDTH = 6.0  # stroke width of an arrow with probability 1
LINE_Y = 60.0  # sorting: the number line
SLOT_Y = 170.0  # sorting: the model's output slots
SLOT_DIGIT_WIDTH = 6.3  # the slots' 9 px numbers


def halo(key: str, index: int, x: float, y: float, p: float) -> dict[str, Any]:
    zero = p == 0.0
    radius = ZERO_HALO_R if zero else halo_radius(p, HALO_MAX_R)
    return {"id": f"pb-{key}-halo-{index}", "x": x, "y": y, "r": radius, "zero": zero}


def arrow(
    key: str, index: int, start: tuple[float, float], end: tuple[float, float], p: float
) -> dict[str, Any] | None:
    """A pointer arrow ending at the mark's rim; None for an exact zero or a point on itself."""
    dx, dy = end[0] - start[0], end[1] - start[1]
    length = math.hypot(dx, dy)
    if p == 0.0 or length <= POINT_R + 3:
        return None
    stop = (length - POINT_R - 3) / length
    tip = (round(start[0] + dx * stop, 2), round(start[1] + dy * stop, 2))
    return {
        "id": f"pb-{key}-arrow-{index}",
        "d": f"M{start[0]},{start[1]} L{tip[0]},{tip[1]}",
        "width": round(max(0.15, ARROW_MAX_WIDTH * p), 2),
        "p": p,
    }


def chosen_so_far(result: PointerTrace, step: int) -> list[int]:
    """Inputs chosen up to and including `step` (the end marker left out)."""
    return [s.chosen for s in result.steps[: step + 1] if s.chosen < result.n]


def point_marks(
    key: str, task: str, inputs: Sequence[Any], coords: list, spots: list
) -> list[dict[str, Any]]:
    noun = "Value" if task == "sort" else "Point"
    marks = []
    for i, ((x, y), spot) in enumerate(zip(coords, spots, strict=True)):
        value = f"{inputs[i]:g}" if task == "sort" else f"({inputs[i][0]:g}, {inputs[i][1]:g})"
        marks.append(
            {
                "id": f"pb-{key}-point-{i}",
                "index": i,
                "x": x,
                "y": y,
                "label": str(i + 1),
                "label_at": spot,
                "aria": f"{noun} {i + 1}: {value}. Arrow keys move it; Delete removes it.",
                "chosen": False,
            }
        )
    return marks


def points_board(
    key: str, task: str, inputs: Sequence[Any], result: PointerTrace | None, step: int
) -> dict[str, Any]:
    coords = [board_xy(x, y) for x, y in inputs]
    end_xy = place_end_mark(coords, FRAME) if task == "hull" else None  # clear of the points
    reserved = end_mark_boxes(FRAME, end_xy) if end_xy is not None else []
    spots = place_point_labels(coords, FRAME, reserved)
    figure: dict[str, Any] = {
        "kind": "points",
        "marks": point_marks(key, task, inputs, coords, spots),
        "halos": [],
        "arrows": [],
        "end": None,
        "reference": "",
        "model": "",
        "progress": "",
    }
    if result is None:
        return figure
    current = result.steps[step]
    closed = task == "tsp" or result.valid
    figure["reference"] = polygon_path([coords[i] for i in result.reference.order], True)
    figure["model"] = polygon_path([coords[i] for i in result.order], closed)
    figure["progress"] = polygon_path([coords[i] for i in chosen_so_far(result, step)], False)
    previous = result.steps[step - 1].chosen if step > 0 else None
    if previous is not None and previous < result.n:
        start = coords[previous]
    else:  # the first step: from the centre of the points
        start = (
            round(sum(x for x, _ in coords) / len(coords), 2),
            round(sum(y for _, y in coords) / len(coords), 2),
        )
    targets = [*coords, end_xy] if end_xy is not None else coords
    for j, (target, p) in enumerate(zip(targets, current.distribution, strict=True)):
        figure["halos"].append(halo(key, j, *target, p))
        if (drawn := arrow(key, j, start, target, p)) is not None:
            figure["arrows"].append(drawn)
    if end_xy is not None:
        figure["end"] = {"x": end_xy[0], "y": end_xy[1], "chosen": current.chosen == result.n}
    for mark in figure["marks"]:
        mark["chosen"] = mark["index"] == current.chosen
    return figure


def slot_x(slot: int, n: int) -> float:
    return FRAME / 2 if n <= 1 else round(PAD + slot / (n - 1) * (FRAME - 2 * PAD), 2)


def sort_rows(xs: list[float], result: SortResponse, values: list[float], step: int) -> dict:
    """The output slots, the model's links to them and the exact order's links beneath. Many
    values crowd the slots: the circles shrink to their spacing, and a slot's number shows only
    where it clears the last one shown (every slot keeps it as a tooltip)."""
    n = len(values)
    top, bottom = LINE_Y + 8, SLOT_Y - 12
    spacing = slot_x(1, n) - slot_x(0, n) if n > 1 else FRAME
    radius = round(max(2.5, min(9.0, spacing / 2 - 0.5)), 2)
    exact = [
        {"x1": xs[i], "y1": top, "x2": slot_x(slot, n), "y2": bottom}
        for slot, i in enumerate(result.reference.order)
    ]
    sorted_values = [values[i] for i in result.reference.order]
    slots, shown_right = [], -math.inf
    for slot, i in enumerate(result.order):
        x = slot_x(slot, n)
        half = SLOT_DIGIT_WIDTH * len(str(i + 1)) / 2 + 1
        shown = x - half >= shown_right
        if shown:
            shown_right = x + half
        slots.append(
            {
                "x": x,
                "line_x": xs[i],
                "label": str(i + 1) if shown else "",
                "title": f"output {slot + 1}: input {i + 1}",
                "wrong": values[i] != sorted_values[slot],
                "done": slot <= step,
            }
        )
    return {"exact": exact, "slots": slots, "radius": radius, "top": top, "bottom": bottom}


def line_board(
    key: str, inputs: Sequence[float], result: SortResponse | None, step: int
) -> dict[str, Any]:
    values = [float(v) for v in inputs]
    low, high = min([0.0, *values]), max([1.0, *values])
    xs = [line_x(v, low, high) for v in values]
    spots = place_line_labels(xs, FRAME - 2 * PAD)
    figure: dict[str, Any] = {
        "kind": "line",
        "low": low,
        "high": high,
        "line_y": LINE_Y,
        "slot_y": SLOT_Y,
        "marks": point_marks(key, "sort", values, [(x, LINE_Y) for x in xs], spots),
        "ticks": [
            {"x": line_x(tick, low, high), "text": f"{tick:.3g}"}
            for tick in (low + (high - low) * t / 4 for t in range(5))
        ],
        "halos": [],
        "arrows": [],
        "rows": None,
    }
    if result is None:
        return figure
    current = result.steps[step]
    figure["rows"] = sort_rows(xs, result, values, step)
    start = (slot_x(step, len(values)), SLOT_Y - 12)
    for j, (x, p) in enumerate(zip(xs, current.distribution, strict=True)):
        figure["halos"].append(halo(key, j, x, LINE_Y, p))
        if (drawn := arrow(key, j, start, (x, LINE_Y), p)) is not None:
            figure["arrows"].append(drawn)
    for mark in figure["marks"]:
        mark["chosen"] = mark["index"] == current.chosen
    return figure


def board_figure(
    key: str,
    task: str,
    inputs: Sequence[Any],
    result: PointerTrace | None,
    step: int = 0,
    turn: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything the board's SVG shows at decoder step `step` (0-based, clamped); without a
    result (too few inputs, or inputs the model cannot take) the inputs alone. `turn`: the
    reader's picks and their score (app/pointer/your_turn.py), when it is their turn."""
    step = 0 if result is None else max(0, min(step, len(result.steps) - 1))
    if task == "sort":
        assert result is None or isinstance(result, SortResponse)
        figure = line_board(key, inputs, result, step)
    else:
        figure = points_board(key, task, inputs, result, step)
        figure |= picks_layer(task, figure, turn)
    return {**figure, "key": key, "step": step, "steps": 0 if result is None else len(result.steps)}


def picks_layer(task: str, figure: dict[str, Any], turn: dict[str, Any] | None) -> dict[str, Any]:
    """The reader's path through their picks, their picked marks, and whether the model's and
    the exact answer are hidden (the reader is still picking)."""
    if turn is None:
        return {"mine": "", "hiding": False}
    picks = turn["picks"]
    coords = [(mark["x"], mark["y"]) for mark in figure["marks"]]
    score = turn["score"]
    closed = task == "tsp" and score is not None and score["done"]
    for mark in figure["marks"]:
        mark["picked"] = mark["index"] in picks
        mark["aria"] = f"Point {mark['index'] + 1}. Enter picks it; Backspace undoes a pick."
    return {
        "mine": polygon_path([coords[i] for i in picks], closed),
        "hiding": score is None or not score["done"],
    }


NOUNS = {"hull": "points", "tsp": "cities", "sort": "values"}


def beyond_training(result: PointerTrace | None, trained: tuple[int, int] | None) -> str | None:
    """The line an answer gets when its n lies outside the sizes its model learned on."""
    if result is None or trained is None or trained[0] <= result.n <= trained[1]:
        return None
    sizes = f"{trained[0]}" if trained[0] == trained[1] else f"{trained[0]}–{trained[1]}"
    noun = NOUNS[result.task]
    return f"Beyond training: the model learned on {sizes} {noun}; this board has {result.n}."


def live_context(
    key: str,
    task: str,
    inputs: Sequence[Any],
    result: PointerTrace | None,
    error: str | None,
    step: int,
    note: str | None = None,
    trained: tuple[int, int] | None = None,
    mine: list[int] | None = None,
) -> dict[str, Any]:
    """Context of the board's live parts (templates/partials/pointer/live.html): the figure,
    the step line, the answer's details, the sentence when there is no answer, a line when
    the answer's n is outside the `trained` sizes (app/pointer/service.py trained_sizes), and
    the reader's own answer when it is their turn (`mine`: their picks, from 1; None when it
    is not their turn)."""
    turn = None
    if mine is not None:
        turn = {"picks": [n - 1 for n in mine], "score": your_turn(inputs, mine, result)}
    figure = board_figure(key, task, inputs, result, step, turn)
    context = {
        "key": key,
        "figure": figure,
        "step_text": step_text(result, figure["step"]),
        "error": error,
        "url_note": note,
        "beyond": beyond_training(result, trained),
        "result": result,
        "current_step": figure["step"],  # the details table marks its row
        "your_turn": turn and turn["score"],
        "turn": mine is not None,
    }
    return context | (result_context(result, figure["step"]) if result is not None else {})
