"""What the pointer board prints under its drawing (app/pointer/views.py), for hand-made answers:
the heatmap's cells, tints and labels, the step line, the step table, the summary rows, the
decoder's words and the best-of-k bars."""

from __future__ import annotations

import pytest

from app.pointer.views import (
    best_of_k_rows,
    decoder_text,
    heatmap_view,
    mapping_label,
    position_labels,
    probability_text,
    result_context,
    step_rows,
    step_text,
    summary_rows,
)
from models.pointer_run import BestOfK
from tests.pointer_traces import TRIANGLE, hull_answer, sort_answer, tsp_answer


def cell(column: int, row: int) -> str:
    """A heatmap cell's path: 10 units a cell, the map starting at (35, 25)."""
    return f"M{35 + 10 * column} {25 + 10 * row}h9v9h-9z"


def test_the_heatmap_groups_cells_by_tint_and_hatches_exact_zeros() -> None:
    view = heatmap_view(hull_answer(), 2)
    # steps: [.5 .5 0 0], [0 1 0 0], [0 0 .75 .25], [0 0 0 1]; tint level = ceil(20 p)
    assert view["tints"] == [
        {"opacity": 0.34, "d": cell(3, 2)},  # 0.25
        {"opacity": 0.56, "d": cell(0, 0) + cell(1, 0)},  # 0.5
        {"opacity": 0.78, "d": cell(2, 2)},  # 0.75
        {"opacity": 1.0, "d": cell(1, 1) + cell(3, 3)},  # 1
    ]
    zeros = [(2, 0), (3, 0), (0, 1), (2, 1), (3, 1), (0, 2), (1, 2), (0, 3), (1, 3), (2, 3)]
    assert view["zeros"] == "".join(cell(c, r) for c, r in zeros)
    assert (view["width"], view["height"], view["width_px"]) == (75.0, 65.0, 180)
    assert (view["top"], view["row_label_x"]) == (25.0, 33.0)
    assert view["id"].startswith("pb-hm-") and len(view["id"]) == 14


def test_a_tiny_probability_still_gets_the_faintest_tint_not_the_hatch() -> None:
    answer = hull_answer()
    answer.steps[0].distribution = [0.999, 0.001, 0.0, 0.0]
    tints = heatmap_view(answer, None)["tints"]
    assert tints[0] == {"opacity": 0.164, "d": cell(1, 0)}  # level 1 of 20


def test_the_heatmap_outlines_the_step_and_puts_its_probabilities_in_the_tooltips() -> None:
    view = heatmap_view(hull_answer(), 2)
    assert view["current"] == {"y": 44.5}
    assert [(r["text"], r["y"], r["current"]) for r in view["row_labels"]] == [
        ("step 1", 32.5, False),
        ("step 2", 42.5, False),
        ("step 3", 52.5, True),
        ("step 4", 62.5, False),
    ]
    assert view["columns"][2] == {
        "index": 2,
        "x": 55.0,
        "label_x": 59.5,
        "label": "3",
        "title": "position 3: p = 0.750 at step 3",
    }
    assert view["columns"][3]["label"] == "END"
    first = heatmap_view(hull_answer(), 0)
    assert first["current"] == {"y": 24.5}
    assert first["columns"][0]["title"] == "position 1: p = 0.500 at step 1"
    for step in (None, 4, -1):  # no step, or none of this answer's
        view = heatmap_view(hull_answer(), step)
        assert view["current"] is None
        assert [c["title"] for c in view["columns"]] == [
            "position 1",
            "position 2",
            "position 3",
            "position END",
        ]


def test_a_crowded_heatmap_numbers_every_fifth_row_and_column() -> None:
    n = 31
    values = [i / n for i in range(n)]
    view = heatmap_view(sort_answer(values, list(range(n))), 7)
    labels = [c["label"] for c in view["columns"]]
    assert [i + 1 for i, label in enumerate(labels) if label] == [1, 5, 10, 15, 20, 25, 30, 31]
    assert [r["text"] for r in view["row_labels"]] == [
        "step 1",
        "step 5",
        "step 8",  # the outlined step, wherever it is
        "step 10",
        "step 15",
        "step 20",
        "step 25",
        "step 30",
    ]
    thirty = heatmap_view(sort_answer(values[:30], list(range(30))), None)
    assert all(c["label"] for c in thirty["columns"])  # 30 fit: every one numbered


def test_the_step_line_says_what_was_chosen_with_what_probability_and_support() -> None:
    assert step_text(hull_answer(), 2) == "Step 3 of 4: chose 3 (p = 0.750; support 2 of 4)"
    assert step_text(hull_answer(), 3) == "Step 4 of 4: chose END (p = 1.000; support 1 of 4)"
    assert step_text(tsp_answer(), 0) == "Step 1 of 3: chose 1 (p = 1.000; support 1 of 3)"
    assert step_text(None, 0) == "No decoding yet."


@pytest.mark.parametrize(
    ("p", "text"),
    [
        (0.0, "0"),
        (1.0, "1.000"),
        (0.1234, "0.123"),
        (0.0006, "0.001"),
        (0.0005, "0.001"),
        (0.0004, "<0.001"),
    ],
)
def test_a_probability_reads_with_three_decimals_and_a_nonzero_never_reads_as_zero(
    p: float, text: str
) -> None:
    assert probability_text(p) == text


def test_the_step_table_has_a_row_per_step_and_a_cell_per_position() -> None:
    answer = hull_answer()
    rows = step_rows(answer, position_labels(answer))
    assert rows[2] == {
        "number": 3,
        "chosen": "3",
        "support": 2,
        "cells": [
            {"text": "0", "chosen": False, "zero": True},
            {"text": "0", "chosen": False, "zero": True},
            {"text": "0.750", "chosen": True, "zero": False},
            {"text": "0.250", "chosen": False, "zero": False},
        ],
    }
    assert [row["chosen"] for row in rows] == ["1", "2", "3", "END"]


def test_positions_are_numbered_from_one_and_a_hull_has_its_end() -> None:
    assert position_labels(hull_answer()) == ["1", "2", "3", "END"]
    assert position_labels(tsp_answer()) == ["1", "2", "3"]


def test_the_summary_of_a_hull() -> None:
    answer = hull_answer()
    assert summary_rows(answer, position_labels(answer)) == [
        ("Model", "1 → 2 → 3 · area 0.5000"),
        ("Exact hull (monotone chain)", "1 → 2 → 3 · area 0.5000"),
        ("Area missed", "0.00%"),
        ("Pointer support per step", "2, 1, 2, 1"),
        ("Decoder", "greedy"),
        ("Checkpoint", "m · 1.5-entmax (sparse) pointer, α = 1.5 · sha256 000000000000…"),
        ("Server time", "1.0 ms"),
    ]


def test_the_summary_of_a_tour_says_whether_its_reference_is_proven() -> None:
    answer = tsp_answer()
    rows = dict(summary_rows(answer, position_labels(answer)))
    assert rows["Model tour length"] == "3.4100"
    assert rows["Reference: exact"] == "3.4100 (proven optimal)"
    assert rows["Gap"] == "0.00%"
    unproven = answer.model_copy(
        update={"gap": None, "reference": answer.reference.model_copy(update={"optimal": False})}
    )
    rows = dict(summary_rows(unproven, position_labels(unproven)))
    assert rows["Reference: exact"] == "3.4100 (not proven optimal)"
    assert rows["Gap"] == "—"


def test_the_summary_of_a_long_sorting_gives_the_mean_support() -> None:
    values = [0.3, 0.1, 0.2]
    short = sort_answer(values, [1, 0, 2]).model_copy(update={"gap": 2 / 3})
    rows = summary_rows(short, position_labels(short))
    assert rows[:4] == [
        ("Model order", "2 → 1 → 3"),
        ("Sorted order", "2 → 3 → 1"),
        ("Positions wrong", "66.67%"),
        ("Pointer support per step", "1, 1, 1"),
    ]
    n = 26  # more steps than a list of supports can show
    long = sort_answer([i / n for i in range(n)], list(range(n)))
    assert dict(summary_rows(long, position_labels(long)))["Mean pointer support"] == (
        "1.0 positions"
    )
    twenty_five = sort_answer([i / 25 for i in range(25)], list(range(25)))
    assert "Pointer support per step" in dict(summary_rows(twenty_five, ["x"] * 25))


def test_each_decoder_is_named_with_its_size() -> None:
    answer = tsp_answer()
    assert decoder_text(answer) == "greedy"
    assert decoder_text(answer.model_copy(update={"decoder": "beam", "beam_width": 3})) == (
        "beam search, width 3"
    )
    assert decoder_text(answer.model_copy(update={"decoder": "sample", "samples": 16})) == (
        "best of 16 samples from the pointer's distribution"
    )
    assert decoder_text(answer.model_copy(update={"decoder": "symmetric"})) == (
        "symmetric: the shortest of 24 greedy tours, one from each start city in each of the "
        "8 rotations and reflections of the square"
    )


def test_the_pointer_mapping_is_named_by_its_alpha() -> None:
    assert mapping_label(1.0) == "softmax (dense)"
    assert mapping_label(2.0) == "sparsemax (sparse)"
    assert mapping_label(1.25) == "1.25-entmax"


def test_best_of_k_bars_measure_the_distance_to_the_reference() -> None:
    curve = [BestOfK(k=1, value=3.751), BestOfK(k=2, value=3.41), BestOfK(k=4, value=3.3)]
    tour = tsp_answer().model_copy(update={"decoder": "sample", "best_of_k": curve})
    assert best_of_k_rows(tour) == [
        {"k": 1, "value": "3.7510", "distance": "+10.00%", "width": 100.0, "missing": False},
        {"k": 2, "value": "3.4100", "distance": "0.00%", "width": 0.0, "missing": False},
        {"k": 4, "value": "3.3000", "distance": "-3.23%", "width": 0.0, "missing": False},
    ]
    assert best_of_k_rows(tsp_answer()) == []  # greedy: no curve


def test_best_of_k_for_a_hull_waits_for_a_simple_polygon() -> None:
    curve = [BestOfK(k=1, value=None), BestOfK(k=2, value=0.4), BestOfK(k=4, value=0.5)]
    hull = hull_answer().model_copy(update={"decoder": "sample", "best_of_k": curve})
    assert best_of_k_rows(hull) == [
        {
            "k": 1,
            "value": "no simple polygon yet",
            "distance": "—",
            "width": 0.0,
            "missing": True,
        },
        {"k": 2, "value": "0.4000", "distance": "+20.00%", "width": 100.0, "missing": False},
        {"k": 4, "value": "0.5000", "distance": "0.00%", "width": 0.0, "missing": False},
    ]
    larger = [BestOfK(k=1, value=0.6)]  # a larger area than the hull's cannot be: no negative
    assert best_of_k_rows(hull.model_copy(update={"best_of_k": larger}))[0]["distance"] == "0.00%"


def test_best_of_k_for_sorting_counts_pairs_out_of_order() -> None:
    curve = [BestOfK(k=1, value=1.0), BestOfK(k=2, value=0.0)]
    values = [0.3, 0.1, 0.2]
    sorting = sort_answer(values, [1, 2, 0]).model_copy(
        update={"decoder": "sample", "best_of_k": curve}
    )
    assert best_of_k_rows(sorting) == [
        {"k": 1, "value": "1", "distance": "+50.00%", "width": 100.0, "missing": False},
        {"k": 2, "value": "0", "distance": "0.00%", "width": 0.0, "missing": False},
    ]
    perfect = sorting.model_copy(update={"best_of_k": [BestOfK(k=1, value=0.0)]})
    assert best_of_k_rows(perfect)[0]["width"] == 0.0  # nothing to scale by: no bar


def test_the_result_context_holds_every_part_the_template_prints() -> None:
    answer = hull_answer()
    context = result_context(answer, 1)
    assert context["result"] is answer
    assert context["data"] == answer.model_dump(mode="json")
    assert context["labels"] == ["1", "2", "3", "END"]
    assert context["headline"] == "The model found the exact hull: 3 vertices, area 0.5000."
    assert context["summary"][0] == ("Model", "1 → 2 → 3 · area 0.5000")
    assert context["rows"][1]["chosen"] == "2"
    assert context["heatmap"]["current"] == {"y": 34.5}
    assert context["sparse"] is True
    assert context["best_of_k"] == []
    assert context["best_of_k_measure"] == ("largest simple polygon's area", "hull area missed")
    dense = answer.model_copy(update={"model": answer.model.model_copy(update={"alpha": 1.0})})
    assert result_context(dense)["sparse"] is False
    assert result_context(tsp_answer())["best_of_k_measure"][0] == "shortest tour"


# --- the worked example and the drawing helpers ------------------------------------------------


def test_a_value_sits_on_the_line_in_proportion() -> None:
    from app.pointer.views import line_x

    assert line_x(0.5, 0.0, 1.0) == 200.0
    assert (line_x(-1.0, -1.0, 3.0), line_x(3.0, -1.0, 3.0)) == (24.0, 376.0)
    assert line_x(0.123, 0.0, 1.0) == 67.3  # 24 + 0.123 · 352 = 67.296
    assert line_x(0.5, 0.0, 1.0, frame=200) == 100.0


def test_a_path_is_moves_and_lines_closed_on_request() -> None:
    from app.pointer.views import polygon_path

    assert polygon_path([], True) == ""
    assert polygon_path([(1.0, 2.0)], False) == "M1.0,2.0"
    assert polygon_path([(1.0, 2.0), (3.5, 4.0)], True) == "M1.0,2.0 L3.5,4.0 Z"


def test_a_small_figure_scales_the_board_and_its_halos() -> None:
    from app.pointer.views import points_figure

    figure = points_figure(TRIANGLE, [0.5, 0.5, 0.0], 0, [0, 1], False, 200)
    # a 200-unit frame with a 12-unit margin: (x, y) at (12 + 176·x, 188 − 176·y)
    assert figure["frame"] == 200 and figure["point_r"] == 5.0
    assert figure["path"] == "M12.0,188.0 L188.0,188.0"
    assert figure["marks"][0] == {
        "x": 12.0,
        "y": 188.0,
        "label": "1",
        "p": "0.500",
        "halo": 10.66,  # 5 + (13 − 5)·√0.5: the halo's largest radius halves too
        "zero": False,
        "chosen": True,
    }
    assert figure["marks"][2]["zero"] is True and figure["marks"][2]["halo"] == 5.0
    plain = points_figure(TRIANGLE, None, None, [0, 1, 2], True)
    assert plain["path"] == "M24.0,376.0 L376.0,376.0 L24.0,24.0 Z"
    assert plain["marks"][1] == {
        "x": 376.0,
        "y": 376.0,
        "label": "2",
        "p": None,
        "halo": None,
        "zero": False,
        "chosen": False,
    }


def test_the_worked_example_shows_every_step_as_bars_and_a_small_board() -> None:
    from app.pointer.views import worked_example_context

    context = worked_example_context(TRIANGLE, hull_answer())
    first = context["steps"][0]
    assert (first["number"], first["chosen"], first["support"]) == (1, "P1", 2)
    assert first["bars"] == [
        {"label": "P1", "text": "0.500", "width": "50.0", "chosen": True, "zero": False},
        {"label": "P2", "text": "0.500", "width": "50.0", "chosen": False, "zero": False},
        {"label": "P3", "text": "0", "width": "0.0", "chosen": False, "zero": True},
        {"label": "END", "text": "0", "width": "0.0", "chosen": False, "zero": True},
    ]
    assert first["figure"]["path"] == "M12.0,188.0"
    assert [m["p"] for m in first["figure"]["marks"]] == ["0.500", "0.500", "0"]
    assert [m["chosen"] for m in first["figure"]["marks"]] == [True, False, False]
    last = context["steps"][3]
    assert last["chosen"] == "END" and last["bars"][3]["width"] == "100.0"
    assert last["figure"]["path"] == "M12.0,188.0 L188.0,188.0 L12.0,12.0 Z"  # closed at END
    assert not any(m["chosen"] for m in last["figure"]["marks"])
    assert context["steps"][2]["figure"]["path"] == "M12.0,188.0 L188.0,188.0 L12.0,12.0"
    assert context["output"] == context["reference"] == "P1 → P2 → P3 → END"
    assert (context["canonical"], context["correct"]) == (True, True)
    assert context["summary"][0] == ("Model", "P1 → P2 → P3 · area 0.5000")


def test_the_same_hull_from_another_vertex_is_correct_but_not_the_canonical_order() -> None:
    from app.pointer.views import worked_example_context

    answer = hull_answer()
    order = [1, 2, 0]
    steps = [
        s.model_copy(update={"chosen": c}) for s, c in zip(answer.steps, [*order, 3], strict=True)
    ]
    rotated = answer.model_copy(update={"order": order, "steps": steps})
    context = worked_example_context(TRIANGLE, rotated)
    assert context["output"] == "P2 → P3 → P1 → END"
    assert (context["canonical"], context["correct"]) == (False, True)


def test_a_point_is_placed_to_two_decimals_with_y_up() -> None:
    from app.pointer.views import board_xy

    assert board_xy(0.123456, 0.654321) == (67.46, 145.68)  # 67.456…, 145.679…
    assert board_xy(0.5, 0.5, frame=200, pad=12) == (100.0, 100.0)


def test_best_of_k_for_two_values_counts_their_one_pair() -> None:
    values = [0.3, 0.1]
    sorting = sort_answer(values, [0, 1]).model_copy(
        update={"decoder": "sample", "best_of_k": [BestOfK(k=1, value=1.0)]}
    )
    assert best_of_k_rows(sorting)[0]["distance"] == "+100.00%"


def test_best_of_k_without_any_simple_polygon_draws_no_bars() -> None:
    curve = [BestOfK(k=1, value=None), BestOfK(k=2, value=None)]
    hull = hull_answer().model_copy(update={"decoder": "sample", "best_of_k": curve})
    assert [(row["width"], row["missing"]) for row in best_of_k_rows(hull)] == [(0.0, True)] * 2
