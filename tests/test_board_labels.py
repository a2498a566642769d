"""The pointer board's numbers never overlap: at n = 100, and for near-equal values on the
sorting line (app/pointer/board_labels.py; the browser twin is checked in tests/browser)."""

from __future__ import annotations

import random

from app.pointer.board_labels import (
    END_CLEARANCE,
    LINE_ROWS,
    box_distance,
    box_near_point,
    boxes_overlap,
    end_mark_boxes,
    end_spots,
    place_end_mark,
    place_line_labels,
    place_point_labels,
    text_box,
)
from app.pointer.views import FRAME, board_xy, line_x


def shown_point_boxes(coords, labels):
    return [
        text_box(x + spot["dx"], y + spot["dy"], spot["anchor"], str(i + 1))
        for i, ((x, y), spot) in enumerate(zip(coords, labels, strict=True))
        if not spot["crowded"]
    ]


def test_a_hundred_points_show_numbers_that_never_overlap_or_cover_a_point() -> None:
    rng = random.Random(7)
    coords = [board_xy(rng.random(), rng.random()) for _ in range(100)]
    labels = place_point_labels(coords, FRAME)
    boxes = shown_point_boxes(coords, labels)
    assert all(not boxes_overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
    assert not any(box_near_point(box, x, y) for box in boxes for x, y in coords)
    assert all(0 <= box[0] and box[2] <= FRAME and 0 <= box[1] and box[3] <= FRAME for box in boxes)
    crowded = sum(spot["crowded"] for spot in labels)
    assert 0 < crowded < 100  # thinned, not emptied
    assert not labels[0]["crowded"]


def test_numbers_keep_clear_of_the_end_mark() -> None:
    # a point just left of the END mark would put its number on the word
    labels = place_point_labels([(330.0, 52.0)], FRAME)
    assert labels[0]["anchor"] == "start"
    beside_end = place_point_labels([(330.0, 52.0)], FRAME, end_mark_boxes(FRAME))[0]
    assert beside_end["anchor"] == "end" and not beside_end["crowded"]


def test_a_few_spread_points_keep_the_usual_spot() -> None:
    coords = [board_xy(x, y) for x, y in [(0.15, 0.2), (0.85, 0.1), (0.5, 0.45), (0.2, 0.85)]]
    labels = place_point_labels(coords, FRAME)
    assert [(s["dx"], s["dy"], s["anchor"], s["crowded"]) for s in labels] == [
        (8, -8, "start", False)
    ] * 4


def test_a_number_that_would_leave_the_frame_goes_to_the_left() -> None:
    # x = 376 in a 385-unit frame: a number to the right would end at 392
    labels = place_point_labels([(376.0, 200.0), (100.0, 100.0)], 385)
    assert labels[0]["anchor"] == "end" and not labels[0]["crowded"]
    assert labels[1]["anchor"] == "start"


def test_near_equal_values_stack_their_numbers() -> None:
    values = [0.5, 0.501, 0.502, 0.9]
    labels = place_line_labels([line_x(v, 0.0, 1.0) for v in values])
    assert [spot["y"] for spot in labels] == [
        LINE_ROWS[0],
        LINE_ROWS[1],
        LINE_ROWS[2],
        LINE_ROWS[0],
    ]
    assert not any(spot["crowded"] for spot in labels)


def test_more_near_equal_values_than_rows_are_crowded() -> None:
    labels = place_line_labels([200.0 + 0.1 * i for i in range(len(LINE_ROWS) + 2)])
    assert [spot["crowded"] for spot in labels] == [False] * len(LINE_ROWS) + [True, True]


def test_the_end_mark_leaves_a_corner_its_points_crowd() -> None:
    assert place_end_mark([board_xy(0.2, 0.3)], FRAME) == end_spots(FRAME)[0]  # top right
    corner = [board_xy(x, y) for x, y in [(0.95, 0.95), (0.93, 0.9), (0.97, 0.92), (0.9, 0.97)]]
    spot = place_end_mark(corner, FRAME)
    assert spot == end_spots(FRAME)[1]  # the next spot, top left
    gaps = [box_distance(box, x, y) for box in end_mark_boxes(FRAME, spot) for x, y in corner]
    assert min(gaps) >= END_CLEARANCE


def test_a_crowded_board_moves_the_end_mark_no_closer_to_a_point() -> None:
    rng = random.Random(3)
    coords = [board_xy(rng.random(), rng.random()) for _ in range(100)]
    spot = place_end_mark(coords, FRAME)

    def gap(at: tuple[float, float]) -> float:
        return min(box_distance(b, x, y) for b in end_mark_boxes(FRAME, at) for x, y in coords)

    assert gap(spot) >= gap(end_spots(FRAME)[0])  # never closer to a point than the top right


def test_fifty_values_keep_their_numbers_in_one_row() -> None:
    """Fifty numbers cannot all sit side by side on the line: stacking them would build towers
    of numbers over the crowded stretches, so they keep to the lowest row."""
    rng = random.Random(1)
    labels = place_line_labels([line_x(rng.random(), 0.0, 1.0) for _ in range(50)])
    assert {spot["y"] for spot in labels} == {LINE_ROWS[0]}
    assert 10 <= sum(not spot["crowded"] for spot in labels) < 50
