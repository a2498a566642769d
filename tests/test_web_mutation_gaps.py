"""Behaviour of the web layer that mutation testing (`make mutate`, tools/mutate.py) found
untested: each test is named for what a reader or a caller sees, not for the mutated line
(tools/mutation-survivors.md lists, per module, what these tests kill and what is equivalent).
"""

from __future__ import annotations

from app.pointer.requests import ValuesBoard
from app.pointer.url_state import address, board_fields, inputs_text

FIVE = "0.15,0.2;0.85,0.1;0.5,0.45;0.9,0.8;0.2,0.85"

# --- app/pointer/url_state.py ----------------------------------------------------------------


def test_a_board_reads_only_its_own_inputs_field_from_the_address() -> None:
    """A sorting board has values, not points: `sort-points` in an address (a hand-edited
    link, or one made for another board) is not read as its input, and a hull board does not
    read `hull-values`."""
    assert board_fields("sort", "sort", {"sort-points": FIVE}) is None
    assert board_fields("sort", "sort", {"sort-points": FIVE, "sort-values": "0.6,0.1"}) == {
        "values": "0.6,0.1"
    }
    assert board_fields("hull", "hull", {"hull-values": "0.6,0.1"}) is None
    assert board_fields("hull", "hull", {"hull-points": FIVE}) == {"points": FIVE}


def test_the_inputs_box_shows_values_separated_by_commas_and_points_one_per_line() -> None:
    assert inputs_text([0.6, 0.1, 0.25]) == "0.6, 0.1, 0.25"
    assert inputs_text([0.5]) == "0.5"
    assert inputs_text([(0.1, 0.2), (0.8, 0.15)]) == "0.1, 0.2\n0.8, 0.15\n"
    assert inputs_text([]) == ""
    # what the box shows reads back as the same board
    board = ValuesBoard.model_validate({"values": inputs_text([0.6, 0.1, 0.25])})
    assert board.values == [0.6, 0.1, 0.25]
    assert address("sort", board)["sort-values"] == "0.6,0.1,0.25"
