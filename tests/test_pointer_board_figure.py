"""The pointer board's drawing (app/pointer/board.py) for hand-made answers: where each mark,
halo, arrow, path and sorting slot lands, checked against coordinates worked out by hand.

The board is 400 units square with a 24-unit margin, y up: (x, y) in the unit square is drawn at
(24 + 352·x, 376 − 352·y)."""

from __future__ import annotations

import pytest

from app.pointer.board import (
    ZERO_HALO_R,
    arrow,
    board_figure,
    chosen_so_far,
    halo,
    line_board,
    picks_layer,
    point_marks,
    points_board,
    slot_x,
    sort_rows,
)
from app.pointer.board_labels import place_end_mark
from app.pointer.views import FRAME, line_x
from tests.pointer_traces import TRIANGLE, hull_answer, sort_answer, tsp_answer

# --- the pieces -----------------------------------------------------------------------------------


def test_a_halos_area_grows_with_its_probability_and_an_exact_zero_gets_a_ring() -> None:
    assert halo("k", 2, 10.0, 20.0, 1.0) == {
        "id": "pb-k-halo-2",
        "x": 10.0,
        "y": 20.0,
        "r": 26.0,
        "zero": False,
    }
    assert halo("k", 0, 0.0, 0.0, 0.25)["r"] == 15.5  # 5 + 21·√0.25
    ring = halo("k", 0, 0.0, 0.0, 0.0)
    assert ring["zero"] is True and ring["r"] == ZERO_HALO_R == 9.0
    assert halo("k", 0, 0.0, 0.0, 1e-9)["zero"] is False  # tiny is not zero


def test_an_arrow_stops_at_the_marks_rim_and_is_as_wide_as_its_probability() -> None:
    # from (0, 0) to (30, 40): 50 long, it stops 8 short (the mark's radius and a gap)
    assert arrow("k", 1, (0.0, 0.0), (30.0, 40.0), 0.5) == {
        "id": "pb-k-arrow-1",
        "d": "M0.0,0.0 L25.2,33.6",
        "width": 3.0,
        "p": 0.5,
    }
    diagonal = arrow("k", 0, (0.0, 0.0), (10.0, 10.0), 0.12345)
    assert diagonal["d"] == "M0.0,0.0 L4.34,4.34"  # (√200 − 8)/√200 of the way, to 2 digits
    assert diagonal["width"] == 0.74  # 6 · 0.12345
    assert arrow("k", 0, (0.0, 0.0), (100.0, 0.0), 0.001)["width"] == 0.15  # visible at least
    assert arrow("k", 0, (5.0, 5.0), (105.0, 5.0), 1.0)["d"] == "M5.0,5.0 L97.0,5.0"


def test_no_arrow_for_an_exact_zero_or_a_mark_too_close_to_point_at() -> None:
    assert arrow("k", 0, (0.0, 0.0), (30.0, 40.0), 0.0) is None
    assert arrow("k", 0, (0.0, 0.0), (8.0, 0.0), 1.0) is None  # within the rim
    assert arrow("k", 0, (0.0, 0.0), (8.01, 0.0), 1.0) is not None


def test_the_path_so_far_leaves_out_the_end_marker() -> None:
    answer = hull_answer()
    assert chosen_so_far(answer, 0) == [0]
    assert chosen_so_far(answer, 1) == [0, 1]
    assert chosen_so_far(answer, 3) == [0, 1, 2]


def test_each_mark_is_numbered_from_one_and_says_what_it_holds() -> None:
    spots = [{"dx": 1}, {"dx": 2}]
    points = point_marks("k", "tsp", [(0.25, 0.5), (1.0, 0.0)], [(1.0, 2.0), (3.0, 4.0)], spots)
    assert points[1] == {
        "id": "pb-k-point-1",
        "index": 1,
        "x": 3.0,
        "y": 4.0,
        "label": "2",
        "label_at": {"dx": 2},
        "aria": "Point 2: (1, 0). Arrow keys move it; Delete removes it.",
        "chosen": False,
    }
    assert points[0]["aria"].startswith("Point 1: (0.25, 0.5).")
    values = point_marks("k", "sort", [0.5, 2.0], [(1.0, 60.0), (2.0, 60.0)], spots)
    assert [m["aria"].split(".")[0] for m in values] == ["Value 1: 0", "Value 2: 2"]
    assert values[0]["aria"].startswith("Value 1: 0.5.")


# --- the points board -----------------------------------------------------------------------------


def test_without_an_answer_the_board_shows_the_points_alone() -> None:
    figure = points_board("k", "hull", TRIANGLE, None, 0)
    assert [(m["x"], m["y"]) for m in figure["marks"]] == [
        (24.0, 376.0),
        (376.0, 376.0),
        (24.0, 24.0),
    ]
    assert figure["halos"] == figure["arrows"] == []
    assert figure["end"] is None
    assert figure["reference"] == figure["model"] == figure["progress"] == ""


def test_the_first_step_points_from_the_centre_of_the_points() -> None:
    figure = points_board("k", "hull", TRIANGLE, hull_answer(), 0)
    end = place_end_mark([(24.0, 376.0), (376.0, 376.0), (24.0, 24.0)], FRAME)
    assert figure["reference"] == "M24.0,376.0 L376.0,376.0 L24.0,24.0 Z"
    assert figure["model"] == "M24.0,376.0 L376.0,376.0 L24.0,24.0 Z"
    assert figure["progress"] == "M24.0,376.0"
    # one halo per input and one for the end marker, where the end mark stands
    assert [(h["x"], h["y"], h["zero"]) for h in figure["halos"]] == [
        (24.0, 376.0, False),
        (376.0, 376.0, False),
        (24.0, 24.0, True),
        (*end, True),
    ]
    centre = (141.33, 258.67)  # the mean of the three marks
    assert [a["d"].split(" ")[0] for a in figure["arrows"]] == [f"M{centre[0]},{centre[1]}"] * 2
    assert [a["id"] for a in figure["arrows"]] == ["pb-k-arrow-0", "pb-k-arrow-1"]
    assert [m["chosen"] for m in figure["marks"]] == [True, False, False]
    assert figure["end"] == {"x": end[0], "y": end[1], "chosen": False}


def test_later_steps_point_from_the_last_choice_and_the_end_mark_lights_when_chosen() -> None:
    second = points_board("k", "hull", TRIANGLE, hull_answer(), 1)
    assert second["progress"] == "M24.0,376.0 L376.0,376.0"
    assert [a["d"] for a in second["arrows"]] == ["M24.0,376.0 L368.0,376.0"]  # 8 short of it
    third = points_board("k", "hull", TRIANGLE, hull_answer(), 2)
    assert [a["d"].split(" ")[0] for a in third["arrows"]] == ["M376.0,376.0"] * 2
    assert [m["chosen"] for m in third["marks"]] == [False, False, True]
    last = points_board("k", "hull", TRIANGLE, hull_answer(), 3)
    assert last["end"]["chosen"] is True
    assert not any(m["chosen"] for m in last["marks"])
    assert last["arrows"][0]["d"].startswith("M24.0,24.0 ")  # from point 3 to the end mark


def test_a_tours_first_step_points_from_the_centre_not_from_its_last_city() -> None:
    figure = points_board("k", "tsp", TRIANGLE, tsp_answer(), 0)
    assert [a["d"].split(" ")[0] for a in figure["arrows"]] == ["M141.33,258.67"]


def test_a_points_number_keeps_clear_of_the_end_mark() -> None:
    # point 1 sits just below and left of the END mark: on the hull board its number goes to
    # its left; on a tour's board (no END mark) to its right, where it goes by default
    points = [(0.87, 0.92), (0.65, 0.39), (0.66, 0.15), (0.69, 0.46), (0.08, 0.74), (0.54, 0.13)]
    points.append((0.76, 0.48))
    hull = points_board("k", "hull", points, None, 0)
    tour = points_board("k", "tsp", points, None, 0)
    assert hull["marks"][0]["label_at"]["anchor"] == "end"
    assert tour["marks"][0]["label_at"]["anchor"] == "start"
    assert [m["label_at"] for m in hull["marks"][1:]] == [m["label_at"] for m in tour["marks"][1:]]


def test_an_invalid_hull_is_drawn_open_and_a_tour_always_closed() -> None:
    assert not points_board("k", "hull", TRIANGLE, hull_answer(valid=False), 0)["model"].endswith(
        "Z"
    )
    tour = points_board("k", "tsp", TRIANGLE, tsp_answer(), 1)
    assert tour["model"] == "M24.0,376.0 L24.0,24.0 L376.0,376.0 Z"
    assert tour["end"] is None and len(tour["halos"]) == 3  # no end marker in a tour


# --- the sorting board ----------------------------------------------------------------------------


def test_slots_spread_evenly_along_the_row_and_one_slot_sits_in_the_middle() -> None:
    assert slot_x(0, 1) == 200.0
    assert [slot_x(s, 3) for s in range(3)] == [24.0, 200.0, 376.0]
    assert slot_x(1, 4) == 141.33  # 24 + 352/3, to 2 digits
    assert slot_x(0, 2) == 24.0 and slot_x(1, 2) == 376.0


def test_the_sorting_rows_link_each_value_to_its_slot_and_mark_the_wrong_ones() -> None:
    values = [0.3, 0.1, 0.2]
    answer = sort_answer(values, [1, 0, 2])  # the exact order is 1, 2, 0
    xs = [line_x(v, 0.0, 1.0) for v in values]
    rows = sort_rows(xs, answer, values, 1)
    assert (rows["top"], rows["bottom"], rows["radius"]) == (68.0, 158.0, 9.0)
    assert rows["exact"] == [
        {"x1": xs[1], "y1": 68.0, "x2": 24.0, "y2": 158.0},
        {"x1": xs[2], "y1": 68.0, "x2": 200.0, "y2": 158.0},
        {"x1": xs[0], "y1": 68.0, "x2": 376.0, "y2": 158.0},
    ]
    assert [(s["x"], s["line_x"], s["label"]) for s in rows["slots"]] == [
        (24.0, xs[1], "2"),
        (200.0, xs[0], "1"),
        (376.0, xs[2], "3"),
    ]
    assert [s["wrong"] for s in rows["slots"]] == [False, True, True]
    assert [s["done"] for s in rows["slots"]] == [True, True, False]
    assert rows["slots"][1]["title"] == "output 2: input 1"


def test_equal_values_in_either_order_are_not_wrong() -> None:
    values = [0.5, 0.5, 0.1]
    rows = sort_rows([1.0, 2.0, 3.0], sort_answer(values, [2, 1, 0]), values, 0)
    assert [s["wrong"] for s in rows["slots"]] == [False, False, False]


@pytest.mark.parametrize(("n", "radius"), [(1, 9.0), (2, 9.0), (30, 5.57), (40, 4.02), (100, 2.5)])
def test_crowded_slots_shrink_to_their_spacing(n: int, radius: float) -> None:
    values = [i / n for i in range(n)]
    rows = sort_rows([0.0] * n, sort_answer(values, list(range(n))), values, 0)
    assert rows["radius"] == radius


def test_a_slots_number_shows_only_where_it_clears_the_last_one_shown() -> None:
    n = 60
    values = [i / n for i in range(n)]
    rows = sort_rows([0.0] * n, sort_answer(values, list(range(n))), values, 0)
    shown = [(s["x"], s["label"]) for s in rows["slots"] if s["label"]]
    assert shown[0] == (24.0, "1") and 5 < len(shown) < n
    half = {label: 6.3 * len(label) / 2 + 1 for _, label in shown}
    for (x1, a), (x2, b) in zip(shown, shown[1:], strict=False):
        assert x2 - half[b] >= x1 + half[a]  # no two numbers overlap
    for index, slot in enumerate(rows["slots"]):
        if not slot["label"]:  # hidden only because it would have overlapped
            last_x, last = max((x, t) for x, t in shown if x < slot["x"])
            width = 6.3 * len(str(index + 1)) / 2 + 1
            assert slot["x"] - width < last_x + half[last]
        assert slot["title"] == f"output {index + 1}: input {index + 1}"


def test_the_number_line_spans_zero_to_one_or_the_values_with_five_ticks() -> None:
    inside = line_board("k", [0.2, 0.5], None, 0)
    assert (inside["low"], inside["high"]) == (0.0, 1.0)
    assert [t["text"] for t in inside["ticks"]] == ["0", "0.25", "0.5", "0.75", "1"]
    assert [t["x"] for t in inside["ticks"]] == [24.0, 112.0, 200.0, 288.0, 376.0]
    wide = line_board("k", [-1.0, 3.0], None, 0)
    assert (wide["low"], wide["high"]) == (-1.0, 3.0)
    assert [t["text"] for t in wide["ticks"]] == ["-1", "0", "1", "2", "3"]
    assert [(m["x"], m["y"]) for m in wide["marks"]] == [(24.0, 60.0), (376.0, 60.0)]
    assert inside["rows"] is None and inside["halos"] == inside["arrows"] == []
    assert (inside["line_y"], inside["slot_y"], inside["kind"]) == (60.0, 170.0, "line")
    assert [m["id"] for m in inside["marks"]] == ["pb-k-point-0", "pb-k-point-1"]


def test_crowded_numbers_on_the_line_climb_into_rows_only_while_they_fit_the_line() -> None:
    # 27 numbers take 346.5 units side by side, within the 352-unit line: they may use the
    # three rows above it; 33 take 438.9, more than the line: one row, the rest crowded
    def rows_used(n: int) -> set[float]:
        figure = line_board("k", [i / (n - 1) for i in range(n)], None, 0)
        return {mark["label_at"]["y"] for mark in figure["marks"]}

    assert rows_used(27) == {44.0, 30.0}  # every other number one row up
    assert rows_used(28) == {44.0}  # 361.9 units: just past the line
    assert rows_used(33) == {44.0}


def test_the_sorting_pointer_starts_at_the_slot_being_filled() -> None:
    values = [0.3, 0.1, 0.2]
    figure = line_board("k", values, sort_answer(values, [1, 2, 0]), 1)
    assert [(h["x"], h["y"]) for h in figure["halos"]] == [(line_x(v, 0, 1), 60.0) for v in values]
    (pointer,) = figure["arrows"]  # only the chosen value has any probability
    assert pointer["id"] == "pb-k-arrow-2"
    assert pointer["d"].startswith("M200.0,158.0 ")
    assert [m["chosen"] for m in figure["marks"]] == [False, False, True]
    assert figure["rows"]["slots"][1]["done"] and not figure["rows"]["slots"][2]["done"]


# --- the whole figure ---------------------------------------------------------------------------


def test_the_step_is_clamped_to_the_answers_steps() -> None:
    answer = hull_answer()
    assert board_figure("k", "hull", TRIANGLE, answer, 99)["step"] == 3
    assert board_figure("k", "hull", TRIANGLE, answer, -5)["step"] == 0
    figure = board_figure("k", "hull", TRIANGLE, answer, 2)
    assert (figure["key"], figure["step"], figure["steps"], figure["kind"]) == ("k", 2, 4, "points")
    empty = board_figure("k", "hull", TRIANGLE, None, 7)
    assert (empty["step"], empty["steps"], empty["mine"], empty["hiding"]) == (0, 0, "", False)
    values = [0.3, 0.1]
    sorting = board_figure("k", "sort", values, sort_answer(values, [1, 0]), 5)
    assert (sorting["kind"], sorting["step"], sorting["steps"]) == ("line", 1, 2)
    assert "mine" not in sorting  # the reader's turn is on point boards only
    assert board_figure("k", "hull", TRIANGLE, answer)["step"] == 0  # the first step by default
    bare = board_figure("k", "sort", values, None, 3)
    assert (bare["kind"], bare["rows"], bare["steps"]) == ("line", None, 0)


def test_the_readers_turn_hides_the_answers_until_their_picks_are_done() -> None:
    figure = points_board("k", "tsp", TRIANGLE, tsp_answer(), 0)
    picking = picks_layer("tsp", figure, {"picks": [0, 2], "score": None})
    assert picking == {"mine": "M24.0,376.0 L24.0,24.0", "hiding": True}
    assert [m["picked"] for m in figure["marks"]] == [True, False, True]
    assert figure["marks"][1]["aria"] == "Point 2. Enter picks it; Backspace undoes a pick."
    unfinished = picks_layer("tsp", figure, {"picks": [0, 2], "score": {"done": False}})
    assert unfinished["hiding"] is True and not unfinished["mine"].endswith("Z")
    done = picks_layer("tsp", figure, {"picks": [0, 2, 1], "score": {"done": True}})
    assert done == {"mine": "M24.0,376.0 L24.0,24.0 L376.0,376.0 Z", "hiding": False}
    hull = picks_layer("hull", figure, {"picks": [0, 2, 1], "score": {"done": True}})
    assert not hull["mine"].endswith("Z")  # a hull's picks are a path, closed by its end mark


def test_the_live_parts_carry_the_answer_the_readers_turn_and_the_notes() -> None:
    from app.pointer.board import live_context
    from app.pointer.your_turn import your_turn

    answer = tsp_answer()
    context = live_context(
        "k", "tsp", TRIANGLE, answer, None, 1, note="An old link.", trained=(5, 20), mine=[1, 3]
    )
    assert context["figure"]["mine"] == "M24.0,376.0 L24.0,24.0"  # picks 1 and 3, from 1
    assert context["figure"]["hiding"] is True
    assert context["your_turn"] == your_turn(TRIANGLE, [1, 3], answer) is not None
    assert (context["turn"], context["url_note"], context["result"]) == (
        True,
        "An old link.",
        answer,
    )
    assert (
        context["beyond"] == "Beyond training: the model learned on 5–20 cities; this board has 3."
    )
    assert (context["key"], context["current_step"], context["error"]) == ("k", 1, None)
    plain = live_context("k", "tsp", TRIANGLE, answer, None, 9)
    assert (plain["turn"], plain["your_turn"], plain["figure"]["mine"]) == (False, None, "")
    assert plain["current_step"] == 2 and plain["beyond"] is None
    refused = live_context("k", "tsp", TRIANGLE, None, "Add a third city.", 0)
    assert refused["error"] == "Add a third city." and refused["figure"]["steps"] == 0
    assert refused["result"] is None and "headline" not in refused


def test_the_end_mark_keeps_clear_where_it_stands_not_where_it_usually_stands() -> None:
    # a point in the top right corner sends the END mark to the top left; the numbers keep
    # clear of it there, and the corner point keeps its number's usual place
    points = [(0.43, 0.76), (0.0, 0.45), (0.72, 0.23), (0.95, 0.9), (0.03, 0.03)]
    points += [(0.54, 0.94), (0.38, 0.22), (0.42, 0.03), (0.22, 0.44)]
    figure = points_board("k", "hull", points, None, 0)
    assert place_end_mark([(m["x"], m["y"]) for m in figure["marks"]], FRAME) == (44.0, 44.0)
    assert figure["marks"][3]["label_at"] == {
        "dx": 8,
        "dy": -8,
        "anchor": "start",
        "crowded": False,
    }


def test_the_whole_figure_draws_the_answer_and_the_readers_closed_tour() -> None:
    answer = tsp_answer()
    figure = board_figure(
        "k", "tsp", TRIANGLE, answer, 1, {"picks": [0, 2, 1], "score": {"done": True}}
    )
    assert figure["halos"] == points_board("k", "tsp", TRIANGLE, answer, 1)["halos"]
    assert figure["model"].endswith("Z") and figure["mine"].endswith("Z")
    values = [0.3, 0.1]
    line = board_figure("k", "sort", values, sort_answer(values, [1, 0]), 0)
    assert [h["id"] for h in line["halos"]] == ["pb-k-halo-0", "pb-k-halo-1"]
