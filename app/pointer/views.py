"""What the pointer templates show, prepared from a trace: preformatted numbers, 1-based labels
(the prose counts from 1) and SVG coordinates, so templates never compute. The board's figure
itself is drawn by app/pointer/board.py in the frame below (FRAME, PAD, the y axis pointing up,
halo area ∝ probability); the board's script reads the frame from the SVG to turn a click into
a point.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence
from typing import Any

from app.pointer.requests import (
    HullResponse,
    PointerResponse,
    PointerStep,
    SortResponse,
    TspResponse,
)

FRAME = 400  # SVG user units, square board
PAD = 24
POINT_R = 5.0
HALO_MAX_R = 26.0  # a probability of 1 draws this radius; area grows with probability


# The pointer mapping in words, by its α: the one place the board and the summary name it.
MAPPING_LABELS = {1.0: "softmax (dense)", 1.5: "1.5-entmax (sparse)", 2.0: "sparsemax (sparse)"}


def mapping_label(alpha: float) -> str:
    return MAPPING_LABELS.get(alpha, f"{alpha:g}-entmax")


def board_xy(x: float, y: float, frame: float = FRAME, pad: float = PAD) -> tuple[float, float]:
    """Unit-square point -> SVG position (y up, as on paper)."""
    span = frame - 2 * pad
    return round(pad + x * span, 2), round(frame - pad - y * span, 2)


def line_x(value: float, low: float, high: float, frame: float = FRAME) -> float:
    """Value on the sorting line [low, high] -> SVG x."""
    return round(PAD + (value - low) / (high - low) * (frame - 2 * PAD), 2)


def halo_radius(p: float, largest: float = HALO_MAX_R) -> float:
    return round(POINT_R + (largest - POINT_R) * math.sqrt(p), 2)


def probability_text(p: float) -> str:
    if p == 0.0:
        return "0"
    return f"{p:.3f}" if p >= 0.0005 else "<0.001"


def percent_text(fraction: float, signed: bool = False) -> str:
    """A fraction as a percentage with two decimals; a value that rounds to zero reads 0.00%,
    never -0.00% (a float gap of -1e-9 is a tie, not a loss)."""
    value = round(100 * fraction, 2) + 0.0  # + 0.0 turns -0.0 into 0.0
    return f"{value:+.2f}%" if signed and value != 0 else f"{value:.2f}%"


def position_labels(result: PointerResponse) -> list[str]:
    labels = [str(i + 1) for i in range(result.n)]
    return [*labels, "END"] if isinstance(result, HullResponse) else labels


def sequence_text(indices: Sequence[int], labels: Sequence[str]) -> str:
    return " → ".join(labels[i] for i in indices)


def headline(result: PointerResponse) -> str:
    if isinstance(result, HullResponse):
        k = len(result.order)
        if result.correct:
            return f"The model found the exact hull: {k} vertices, area {result.area:.4f}."
        if result.valid and result.gap is not None:
            return (
                f"The model's polygon is simple but not the hull: it covers "
                f"{100 * (1 - result.gap):.1f}% of the hull's area."
            )
        return f"The model's output ({k} vertices) is not a simple polygon."
    if isinstance(result, TspResponse):
        gap = (
            ""
            if result.gap is None
            else f", {percent_text(result.gap, signed=True)} against the reference"
        )
        return f"The model's tour has length {result.length:.4f}{gap}."
    if result.correct:
        return f"The model put all {result.n} values in ascending order."
    wrong = round((result.gap or 0.0) * result.n)
    return f"{wrong} of the {result.n} output positions hold the wrong value."


def summary_rows(result: PointerResponse, labels: Sequence[str]) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    gap = "—" if result.gap is None else percent_text(result.gap)
    if isinstance(result, HullResponse):
        rows += [
            ("Model", f"{sequence_text(result.order, labels)} · area {result.area:.4f}"),
            (
                "Exact hull (monotone chain)",
                f"{sequence_text(result.reference.order, labels)} · "
                f"area {result.reference.area:.4f}",
            ),
            ("Area missed", gap),
        ]
    elif isinstance(result, TspResponse):
        proof = "proven optimal" if result.reference.optimal else "not proven optimal"
        rows += [
            ("Model tour length", f"{result.length:.4f}"),
            (
                f"Reference: {result.reference.method}",
                f"{result.reference.length:.4f} ({proof})",
            ),
            ("Gap", gap),
        ]
    else:
        rows += [
            ("Model order", sequence_text(result.order, labels)),
            ("Sorted order", sequence_text(result.reference.order, labels)),
            ("Positions wrong", gap),
        ]
    supports = [step.support_size for step in result.steps]
    if len(supports) <= 25:
        rows.append(("Pointer support per step", ", ".join(map(str, supports))))
    else:
        rows.append(("Mean pointer support", f"{sum(supports) / len(supports):.1f} positions"))
    rows += [
        ("Decoder", decoder_text(result)),
        (
            "Checkpoint",
            f"{result.model.name} · {mapping_label(result.model.alpha)} pointer, "
            f"α = {result.model.alpha:g} · "
            f"sha256 {result.model.sha256[:12]}…",
        ),
        ("Server time", f"{result.server_ms:.1f} ms"),
    ]
    return rows


def decoder_text(result: PointerResponse) -> str:
    if result.decoder == "beam":
        return f"beam search, width {result.beam_width}"
    if result.decoder == "sample":
        return f"best of {result.samples} samples from the pointer's distribution"
    if result.decoder == "symmetric":
        return (
            f"symmetric: the shortest of {8 * result.n} greedy tours, one from each start city "
            "in each of the 8 rotations and reflections of the square"
        )
    return "greedy"


BEST_OF_K_MEASURES = {
    "tsp": ("shortest tour", "gap to the reference"),
    "hull": ("largest simple polygon's area", "hull area missed"),
    "sort": ("fewest neighbouring pairs out of order", "share of pairs out of order"),
}


def best_of_k_rows(result: PointerResponse) -> list[dict[str, Any]]:
    """The sample decoder's running best at k = 1, 2, 4, …, each with its distance from the
    exact (or reference) answer and a bar proportional to that distance (the longest bar is
    the largest distance shown)."""
    if not result.best_of_k:
        return []
    distances: list[float | None] = []
    for point in result.best_of_k:
        if point.value is None:
            distances.append(None)
        elif isinstance(result, TspResponse):
            distances.append(point.value / result.reference.length - 1)  # < 0: beat it
        elif isinstance(result, HullResponse):
            distances.append(max(0.0, 1 - point.value / result.reference.area))
        else:
            distances.append(point.value / max(1, result.n - 1))
    largest = max((d for d in distances if d is not None), default=0.0)
    largest = largest if largest > 0 else 1.0
    rows = []
    for point, distance in zip(result.best_of_k, distances, strict=True):
        if point.value is None:
            value = "no simple polygon yet"
        elif isinstance(result, SortResponse):
            value = f"{point.value:.0f}"
        else:
            value = f"{point.value:.4f}"
        rows.append(
            {
                "k": point.k,
                "value": value,
                "distance": "—" if distance is None else percent_text(distance, signed=True),
                "width": 0.0 if distance is None else round(100 * max(0.0, distance) / largest, 1),
                "missing": distance is None,
            }
        )
    return rows


def step_text(result: PointerResponse | None, step: int) -> str:
    """The line under the board's step slider."""
    if result is None:
        return "No decoding yet."
    current = result.steps[step]
    labels = position_labels(result)
    return (
        f"Step {step + 1} of {len(result.steps)}: chose {labels[current.chosen]} "
        f"(p = {probability_text(current.distribution[current.chosen])}; "
        f"support {current.support_size} of {len(labels)})"
    )


def step_rows(result: PointerResponse, labels: Sequence[str]) -> list[dict[str, Any]]:
    """The accessible table: one row per decoder step, one cell per position."""
    return [
        {
            "number": i + 1,
            "chosen": labels[step.chosen],
            "support": step.support_size,
            "cells": [
                {"text": probability_text(p), "chosen": j == step.chosen, "zero": p == 0.0}
                for j, p in enumerate(step.distribution)
            ],
        }
        for i, step in enumerate(result.steps)
    ]


CELL = 10  # heatmap user units per cell; a cell is drawn 9 wide, the rest is the gap
TINT_LEVELS = 20  # nonzero probabilities are drawn in this many tints (the table has the values)


def heatmap_columns(
    labels: Sequence[str], left: float, every: int, chosen: PointerStep | None, step: int | None
) -> list[dict[str, Any]]:
    """The heatmap's columns: a hover target each, numbered every `every`th, with the
    probability at the outlined step in its tooltip."""
    columns = []
    for c, label in enumerate(labels):
        title = f"position {label}"
        if chosen is not None and step is not None:
            title += f": p = {probability_text(chosen.distribution[c])} at step {step + 1}"
        shown = c == 0 or (c + 1) % every == 0 or c == len(labels) - 1
        x = left + c * CELL
        columns.append(
            {
                "index": c,
                "x": x,
                "label_x": x + 4.5,
                "label": label if shown else "",
                "title": title,
            }
        )
    return columns


def heatmap_view(result: PointerResponse, step: int | None) -> dict[str, Any]:
    """The heatmap of every step's distribution, drawn by the server (templates/partials/
    pointer/heatmap.html): rows are decoder steps, columns input positions. Cells of one tint
    share one path, so a 100 × 100 map stays a few hundred kilobytes; an exact zero is hatched,
    and any nonzero probability gets a tint of at least 0.12 so it never reads as a zero. Each
    column has a target for hovering, linked to the board's point; `step` is outlined."""
    labels = position_labels(result)
    rows, columns = len(result.steps), len(labels)
    left, top = 3.5 * CELL, 2.5 * CELL  # room for "step 12" and the column numbers
    tints: dict[int, list[str]] = {}
    zeros: list[str] = []
    for r, decoder_step in enumerate(result.steps):
        for c, p in enumerate(decoder_step.distribution):
            corner = f"M{left + c * CELL:g} {top + r * CELL:g}h9v9h-9z"
            if p > 0:
                tints.setdefault(math.ceil(p * TINT_LEVELS), []).append(corner)
            else:
                zeros.append(corner)
    every = 1 if max(rows, columns) <= 30 else 5  # label every 5th row and column when crowded
    chosen = result.steps[step] if step is not None and 0 <= step < rows else None
    return {
        "id": f"pb-hm-{uuid.uuid4().hex[:8]}",  # the hatch pattern's, unique on the page
        "width": left + columns * CELL,
        "height": top + rows * CELL,
        "width_px": round((left + columns * CELL) * 2.4),
        "top": top,
        "row_label_x": left - 2,
        "tints": [
            {"opacity": round(0.12 + 0.88 * level / TINT_LEVELS, 3), "d": "".join(path)}
            for level, path in sorted(tints.items())
        ],
        "zeros": "".join(zeros),
        "row_labels": [
            {"text": f"step {r + 1}", "y": top + r * CELL + 7.5, "current": r == step}
            for r in range(rows)
            if r == step or (r + 1) % every == 0 or r == 0
        ],
        "columns": heatmap_columns(labels, left, every, chosen, step),
        "current": None if chosen is None else {"y": top + step * CELL - 0.5},
    }


def result_context(result: PointerResponse, step: int | None = None) -> dict[str, Any]:
    """Context of templates/partials/pointer/result.html (the board's updatable part)."""
    labels = position_labels(result)
    return {
        "result": result,
        "data": result.model_dump(mode="json"),
        "heatmap": heatmap_view(result, step),
        "headline": headline(result),
        "summary": summary_rows(result, labels),
        "labels": labels,
        "rows": step_rows(result, labels),
        "sparse": result.model.alpha > 1,
        "best_of_k": best_of_k_rows(result),
        "best_of_k_measure": BEST_OF_K_MEASURES[result.task],
    }


def polygon_path(coords: Sequence[tuple[float, float]], closed: bool) -> str:
    if not coords:
        return ""
    path = "M" + " L".join(f"{x},{y}" for x, y in coords)
    return path + " Z" if closed else path


def points_figure(
    points: Sequence[Sequence[float]],
    distribution: Sequence[float] | None,
    chosen: int | None,
    path: Sequence[int],
    closed: bool,
    frame: float = FRAME,
) -> dict[str, Any]:
    """One board drawing: points with halos (probability at one step), a path through
    chosen points."""
    scale = frame / FRAME
    coords = [board_xy(x, y, frame, PAD * scale) for x, y in points]
    marks = []
    for i, (x, y) in enumerate(coords):
        p = distribution[i] if distribution is not None else None
        marks.append(
            {
                "x": x,
                "y": y,
                "label": str(i + 1),
                "p": None if p is None else probability_text(p),
                "halo": None if p is None else halo_radius(p, HALO_MAX_R * scale),
                "zero": p == 0.0,
                "chosen": i == chosen,
            }
        )
    return {
        "frame": frame,
        "marks": marks,
        "point_r": POINT_R,
        "path": polygon_path([coords[i] for i in path], closed),
    }


def worked_example_context(points: Sequence[Sequence[float]], result: HullResponse) -> dict:
    """Every step of the hull model on the worked example, as a small figure and bars."""
    end = result.end_index
    labels = [f"P{i + 1}" for i in range(end)] + ["END"]
    steps = []
    for i, step in enumerate(result.steps):
        so_far = [c for c in (s.chosen for s in result.steps[: i + 1]) if c != end]
        steps.append(
            {
                "number": i + 1,
                "chosen": labels[step.chosen],
                "support": step.support_size,
                "bars": [
                    {
                        "label": labels[j],
                        "text": probability_text(p),
                        "width": f"{100 * p:.1f}",
                        "chosen": j == step.chosen,
                        "zero": p == 0.0,
                    }
                    for j, p in enumerate(step.distribution)
                ],
                "figure": points_figure(
                    points, step.distribution[:end], step.chosen, so_far, step.chosen == end, 200
                ),
            }
        )
    chosen = [step.chosen for step in result.steps]
    target = [*result.reference.order, end]
    return {
        "steps": steps,
        "output": sequence_text(chosen, labels),
        "reference": sequence_text(target, labels),
        "canonical": chosen == target,
        "correct": result.correct,
        "summary": summary_rows(result, labels),
    }
