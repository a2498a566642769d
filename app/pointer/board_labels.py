"""Where the pointer board writes each input's number, so that no two numbers overlap.

Points (hull, TSP): each number tries four spots around its point, up-right first, and takes the
first one that stays inside the frame and clears every point and every number placed before it.
Values on the sorting line: each number sits above its value, one row higher for each number
already there, while the numbers could all sit side by side on the line (up to 27 values);
past that, stacking only builds towers of numbers, so they keep to one row. A number that finds no
free spot is "crowded": drawn hidden, shown while its point is hovered or focused. Numbers are
placed in input order, so the low ones always show.

The hull board's END mark takes the first of a few spots along the frame's edges, the top right
first, that keeps clear of every point (`place_end_mark`), and the numbers keep clear of it.

The server draws every board (app/pointer/board.py), so this is the only copy of the rule.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

# The box Chromium measures (getBBox) for a number in the board's bold 11 px label font, in
# SVG units: 7.65 per digit, from 10.1 above the baseline to 2.5 below it.
CHAR_WIDTH = 7.7
ASCENT = 10.2
DESCENT = 2.6
MARGIN = 0.5
POINT_CLEARANCE = 6.0  # a number keeps this far from any point's centre
# (dx, dy, text-anchor) from the point to the number's baseline
POINT_SPOTS: tuple[tuple[float, float, str], ...] = (
    (8, -8, "start"),
    (-8, -8, "end"),
    (8, 16, "start"),
    (-8, 16, "end"),
)
LINE_ROWS = (44.0, 30.0, 16.0)  # baselines above the sorting line (at y = 60), lowest first
LINE_LENGTH = 352.0  # the sorting line's length in SVG units (app/pointer/views.py: 400 - 2 · 24)
END_INSET = 44.0  # the END mark's centre from the SVG's edge
END_CLEARANCE = 12.0  # the END mark keeps this far from any point's centre (a chosen mark is 7)

Box = tuple[float, float, float, float]  # left, top, right, bottom


def text_box(x: float, baseline: float, anchor: str, text: str) -> Box:
    width = CHAR_WIDTH * len(text)
    left = {"start": x, "middle": x - width / 2, "end": x - width}[anchor]
    return (
        left - MARGIN,
        baseline - ASCENT - MARGIN,
        left + width + MARGIN,
        baseline + DESCENT + MARGIN,
    )


def boxes_overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def box_distance(box: Box, x: float, y: float) -> float:
    nearest_x = min(max(x, box[0]), box[2])
    nearest_y = min(max(y, box[1]), box[3])
    return math.hypot(nearest_x - x, nearest_y - y)


def box_near_point(box: Box, x: float, y: float) -> bool:
    return box_distance(box, x, y) < POINT_CLEARANCE


def end_spots(frame: float) -> list[tuple[float, float]]:
    """Where the END mark may sit: the corners, then the middles of the edges, top right first."""
    near, far, middle = END_INSET, frame - END_INSET, frame / 2
    return [
        (far, near),
        (near, near),
        (far, far),
        (near, far),
        (middle, near),
        (far, middle),
        (middle, far),
        (near, middle),
    ]


def end_mark_boxes(frame: float, at: tuple[float, float] | None = None) -> list[Box]:
    """The hull board's END mark centred `at` (by default the top right spot): its dot and its
    word, which the numbers keep clear of."""
    x, y = at if at is not None else end_spots(frame)[0]
    return [(x - 6, y - 6, x + 6, y + 6), text_box(x, y + 4, "middle", "END")]


def place_end_mark(coords: Sequence[tuple[float, float]], frame: float) -> tuple[float, float]:
    """The first END spot whose mark keeps END_CLEARANCE from every point; when none does, the
    one farthest from its nearest point."""
    best, best_gap = end_spots(frame)[0], -math.inf
    for spot in end_spots(frame):
        boxes = end_mark_boxes(frame, spot)
        gap = min((box_distance(b, x, y) for b in boxes for x, y in coords), default=math.inf)
        if gap >= END_CLEARANCE:
            return spot
        if gap > best_gap:
            best, best_gap = spot, gap
    return best


def place_point_labels(
    coords: Sequence[tuple[float, float]], frame: float, reserved: Sequence[Box] = ()
) -> list[dict[str, Any]]:
    """For each point (SVG coordinates), its number's dx, dy, anchor and whether it is crowded;
    `reserved` boxes are kept clear too."""
    placed: list[Box] = list(reserved)
    labels = []
    for i, (x, y) in enumerate(coords):
        text = str(i + 1)
        spot = None
        for dx, dy, anchor in POINT_SPOTS:
            box = text_box(x + dx, y + dy, anchor, text)
            inside = box[0] >= 0 and box[1] >= 0 and box[2] <= frame and box[3] <= frame
            if (
                inside
                and not any(boxes_overlap(box, other) for other in placed)
                and not any(box_near_point(box, px, py) for px, py in coords)
            ):
                spot = (dx, dy, anchor)
                placed.append(box)
                break
        dx, dy, anchor = spot or POINT_SPOTS[0]
        labels.append({"dx": dx, "dy": dy, "anchor": anchor, "crowded": spot is None})
    return labels


def place_line_labels(xs: Sequence[float], length: float = LINE_LENGTH) -> list[dict[str, Any]]:
    """For each value's x on a sorting line `length` long, its number's baseline and whether it
    is crowded."""
    side_by_side = sum(CHAR_WIDTH * len(str(i + 1)) for i in range(len(xs))) <= length
    rows = LINE_ROWS if side_by_side else LINE_ROWS[:1]
    placed: list[Box] = []
    labels = []
    for i, x in enumerate(xs):
        text = str(i + 1)
        row = None
        for baseline in rows:
            box = text_box(x, baseline, "middle", text)
            if not any(boxes_overlap(box, other) for other in placed):
                row = baseline
                placed.append(box)
                break
        labels.append({"y": row if row is not None else LINE_ROWS[0], "crowded": row is None})
    return labels
