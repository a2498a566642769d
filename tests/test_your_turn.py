"""Your turn's scoring (app/pointer/your_turn.py), on answers built by hand: who wins a tour,
when a hull is right, what a step row holds, and the request's refusals of bad picks."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from app.errors import error_sentence
from app.pointer.requests import PointsBoard
from app.pointer.your_turn import path_length, picks, same_cycle, verdict, your_turn
from models.pointer_run import HullResponse, TspResponse

SQUARE = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.5, 0.5]]
MODEL = {"name": "m", "alpha": 1.0, "sha256": "0" * 64}


def common(task: str, order: list[int]) -> dict:
    return {
        "task": task,
        "n": len(SQUARE),
        "decoder": "greedy",
        "beam_width": 1,
        "samples": 1,
        "best_of_k": None,
        "order": order,
        "steps": [],
        "valid": True,
        "gap": None,
        "model": MODEL,
        "server_ms": 1.0,
    }


def tsp(order: list[int], length: float) -> TspResponse:
    reference = {"order": [0, 1, 2, 4, 3], "method": "exact", "optimal": True, "length": 3.0}
    return TspResponse(**common("tsp", order), correct=False, length=length, reference=reference)


def hull(order: list[int], correct: bool) -> HullResponse:
    reference = {"order": [0, 1, 2, 3], "method": "exact", "optimal": True, "area": 1.0}
    return HullResponse(
        **common("hull", order), correct=correct, end_index=5, area=1.0, reference=reference
    )


def test_path_length_open_and_closed() -> None:
    assert path_length(SQUARE, [0, 1, 2], closed=False) == pytest.approx(2.0)
    assert path_length(SQUARE, [0, 1, 2], closed=True) == pytest.approx(2 + math.sqrt(2))
    assert path_length(SQUARE, [0, 1, 2, 3], closed=True) == pytest.approx(4.0)
    assert path_length(SQUARE, [0, 1], closed=True) == pytest.approx(2.0)  # there and back
    assert path_length(SQUARE, [2], closed=True) == 0.0
    assert path_length(SQUARE, [], closed=True) == 0.0


def test_same_cycle_allows_any_start_and_either_way_only() -> None:
    assert same_cycle([0, 1, 2, 3], [2, 3, 0, 1])
    assert same_cycle([0, 1, 2, 3], [0, 3, 2, 1])
    assert same_cycle([1, 0, 3, 2], [0, 1, 2, 3])
    assert not same_cycle([0, 2, 1, 3], [0, 1, 2, 3])  # a crossed polygon
    assert not same_cycle([0, 1, 2], [0, 1, 2, 3])
    assert not same_cycle([0, 1, 2, 4], [0, 1, 2, 3])
    assert not same_cycle([4, 1, 2, 3], [0, 1, 2, 3])  # starts at a point the hull lacks
    assert same_cycle([], [])


def test_verdicts() -> None:
    assert verdict(True, False) == "You win"
    assert verdict(False, True) == "The model wins"
    assert verdict(True, True) == verdict(False, False) == "A tie"


def test_a_tour_is_judged_only_when_every_city_is_picked() -> None:
    model = tsp([0, 1, 2, 3, 4], 4.0 + math.sqrt(0.5) - 1)
    half = your_turn(SQUARE, [1, 2, 3], model)
    assert half is not None and not half["done"] and half["left"] == 2
    assert "verdict" not in half
    assert [row["mine"] for row in half["rows"]] == [1, 2, 3]
    assert [row["model"] for row in half["rows"]] == [1, 2, 3]
    assert half["rows"][2]["mine_length"] == pytest.approx(2.0)
    assert half["rows"][0]["model_length"] == 0.0

    best = [1, 2, 3, 5, 4]  # the reference cycle: length 3 + 2·√0.5
    mine = your_turn(SQUARE, best, model)
    assert mine is not None and mine["done"] and mine["left"] == 0
    assert mine["length"] == pytest.approx(3 + math.sqrt(2))
    assert mine["verdict"] == "You win" if mine["length"] < model.length else "The model wins"
    assert mine["gap"] == pytest.approx(mine["length"] / 3.0 - 1)
    assert mine["model_gap"] == pytest.approx(model.length / 3.0 - 1)
    assert mine["optimal"] is True


def test_equal_tours_tie_and_a_longer_one_loses() -> None:
    square_tour = [1, 2, 3, 4, 5]  # around the square, then the centre, back to the start
    length = path_length(SQUARE, [n - 1 for n in square_tour], closed=True)
    same = your_turn(SQUARE, square_tour, tsp([0, 1, 2, 3, 4], length))
    assert same is not None and same["verdict"] == "A tie"
    worse = your_turn(SQUARE, [1, 3, 2, 4, 5], tsp([0, 1, 2, 3, 4], length))
    assert worse is not None and worse["verdict"] == "The model wins"
    better = your_turn(SQUARE, square_tour, tsp([0, 2, 1, 3, 4], length + 0.5))
    assert better is not None and better["verdict"] == "You win"


def test_a_hull_is_right_when_its_corners_go_around_the_exact_hull() -> None:
    right = your_turn(SQUARE, [2, 3, 4, 1], hull([0, 1, 2, 3], correct=False))
    assert right is not None and right["done"] and right["right"]
    assert right["verdict"] == "You win" and right["found"] == 4 and right["vertices"] == 4
    tie = your_turn(SQUARE, [1, 4, 3, 2], hull([0, 1, 2, 3], correct=True))
    assert tie is not None and tie["verdict"] == "A tie"
    wrong = your_turn(SQUARE, [1, 2, 5, 3], hull([0, 1, 2, 3], correct=True))
    assert wrong is not None and wrong["done"] and not wrong["right"]
    assert wrong["verdict"] == "The model wins" and wrong["found"] == 3
    assert [row["on_hull"] for row in wrong["rows"]] == [True, True, False, True]
    partial = your_turn(SQUARE, [1, 2], hull([0, 1, 2, 3], correct=True))
    assert partial is not None and not partial["done"] and partial["left"] == 2
    assert partial["rows"][1]["model"] == 2 and partial["rows"][1]["model_on_hull"]


def test_nothing_to_score_without_picks_or_an_answer() -> None:
    assert your_turn(SQUARE, [], tsp([0, 1, 2, 3, 4], 4.0)) is None
    assert your_turn(SQUARE, [1], None) is None


def test_picks_are_read_only_on_the_readers_turn() -> None:
    board = PointsBoard.model_validate({"points": "0,0;1,0;1,1", "turn": "1", "mine": "3, 1"})
    assert picks(board) == [3, 1]
    off = PointsBoard.model_validate({"points": "0,0;1,0;1,1", "mine": "3,1"})
    assert picks(off) is None
    listed = PointsBoard.model_validate({"points": "0,0;1,0;1,1", "mine": ["2", "3"]})
    assert listed.mine == [2, 3]


@pytest.mark.parametrize(
    ("mine", "sentence"),
    [
        ("4", "picks point 4, but the board has 3 points"),
        ("0", "picks point 0, but the board has 3 points"),
        ("2,2", "picks point 2 twice"),
        ("1,x", "Your pick 2 must be a number"),
    ],
)
def test_bad_picks_are_refused_with_a_sentence(mine: str, sentence: str) -> None:
    with pytest.raises(ValidationError) as refused:
        PointsBoard.model_validate({"points": "0,0;1,0;1,1", "turn": "1", "mine": mine})
    assert sentence in error_sentence(refused.value.errors()[0], reader=True)


def test_score_rows_and_summaries_in_full() -> None:
    """Every field of a step row and of the summary, on a tour and a hull."""
    model = tsp([0, 1, 2, 3, 4], 5.0)
    score = your_turn(SQUARE, [2, 1, 3, 4, 5], model)
    assert score is not None
    assert score["rows"][:2] == [
        {"step": 1, "mine": 2, "mine_length": 0.0, "model": 1, "model_length": 0.0},
        {"step": 2, "mine": 1, "mine_length": 1.0, "model": 2, "model_length": 1.0},
    ]
    assert {k: v for k, v in score.items() if k != "rows"} == {
        "task": "tsp",
        "done": True,
        "left": 0,
        "length": pytest.approx(2 + 2 * math.sqrt(2)),
        "model_length": 5.0,
        "reference_length": 3.0,
        "optimal": True,
        "gap": pytest.approx((2 + 2 * math.sqrt(2)) / 3 - 1),
        "model_gap": pytest.approx(5 / 3 - 1),
        "verdict": "You win",
    }
    short = hull([0, 1], correct=False)  # a model answer shorter than the reader's picks
    drawn = your_turn(SQUARE, [1, 2, 5, 4], short)
    assert drawn is not None and drawn["rows"] == [
        {"step": 1, "mine": 1, "on_hull": True, "model": 1, "model_on_hull": True},
        {"step": 2, "mine": 2, "on_hull": True, "model": 2, "model_on_hull": True},
        {"step": 3, "mine": 5, "on_hull": False, "model": None, "model_on_hull": False},
        {"step": 4, "mine": 4, "on_hull": True, "model": None, "model_on_hull": False},
    ]
    assert {k: v for k, v in drawn.items() if k != "rows"} == {
        "task": "hull",
        "done": True,
        "left": 0,
        "found": 3,
        "vertices": 4,
        "right": False,
        "model_right": False,
        "verdict": "A tie",
    }


def test_a_board_without_a_turn_has_no_picks() -> None:
    from app.pointer.requests import ValuesBoard

    assert picks(ValuesBoard(values=[0.3, 0.1])) is None


def test_a_tour_one_tie_width_shorter_still_ties() -> None:
    square_tour = [1, 2, 3, 4, 5]
    length = path_length(SQUARE, [n - 1 for n in square_tour], closed=True)
    close = your_turn(SQUARE, square_tour, tsp([0, 1, 2, 3, 4], length + 1e-12))
    assert close is not None and close["verdict"] == "A tie"
