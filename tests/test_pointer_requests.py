"""The pointer requests and boards (app/pointer/requests.py) on their own: distinct points, the
numbers an address or the board's text box spells, the reader's picks, and what each costs."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.compute import pointer_cost
from app.pointer.requests import (
    MAX_NUMBER_CHARS,
    PointsBoard,
    PointsRequest,
    ValuesBoard,
    ValuesRequest,
    from_text,
    number,
    number_from_text,
    picks_from_text,
)

SQUARE = [[0.1, 0.1], [0.9, 0.1], [0.9, 0.9], [0.1, 0.9]]


def refusal(model: type, **fields) -> str:
    with pytest.raises(ValidationError) as caught:
        model(**fields)
    return caught.value.errors()[0]["msg"]


def test_two_points_in_one_place_are_refused_by_their_numbers_from_one() -> None:
    points = [[0.5, 0.25], [0.1, 0.1], [0.5, 0.25]]
    assert refusal(PointsRequest, points=points) == (
        "Value error, Points 1 and 3 (counting from 1) are both (0.5, 0.25); move or remove "
        "one of them."
    )
    assert PointsRequest(points=SQUARE).inputs() == SQUARE


@pytest.mark.parametrize(
    ("decoder", "carried"), [("greedy", 1), ("beam", 3), ("sample", 16), ("symmetric", 4)]
)
def test_a_request_costs_its_inputs_times_the_outputs_it_carries(decoder: str, carried: int):
    request = PointsRequest(points=SQUARE, decoder=decoder, beam_width=3, samples=16)
    assert request.hypotheses(4) == carried
    assert request.cost() == pointer_cost(4, carried)
    values = ValuesRequest(values=[0.3, 0.1, 0.2], decoder=decoder, beam_width=3, samples=16)
    assert values.cost() == pointer_cost(3, values.hypotheses(3))
    assert values.inputs() == [0.3, 0.1, 0.2]


def test_a_typed_number_must_be_a_finite_number() -> None:
    assert number("1e3", "value") == 1000.0
    assert number(" -0.5", "coordinate") == -0.5
    for text in ("abc", "inf", "nan", ""):
        with pytest.raises(ValueError) as caught:
            number(text, "coordinate")
        assert str(caught.value) == f"The board got a coordinate that is not a number: “{text}”."


def test_points_are_read_from_an_address_or_one_pair_a_line() -> None:
    assert from_text("0.1,0.2;0.8,0.1", pairs=True) == [[0.1, 0.2], [0.8, 0.1]]
    assert from_text("0.1 0.2\n0.8, 0.1\n\n", pairs=True) == [[0.1, 0.2], [0.8, 0.1]]
    assert from_text(["0.1,0.2", "0.3,0.4"], pairs=True) == [[0.1, 0.2], [0.3, 0.4]]
    assert from_text("", pairs=True) == []  # a cleared board
    with pytest.raises(ValueError) as caught:
        from_text("0.1,0.2;\n0.5", pairs=True)  # the empty line still counts as a line
    assert str(caught.value) == "Point 2 (line 3) needs two numbers, x and y."
    with pytest.raises(ValueError) as caught:
        from_text("0.1,0.2,0.3", pairs=True)
    assert str(caught.value) == "Point 1 (line 1) needs two numbers, x and y."


def test_values_are_read_separated_by_commas_spaces_or_semicolons() -> None:
    assert from_text("0.6,0.1", pairs=False) == [0.6, 0.1]
    assert from_text("0.6 0.1;0.2,,", pairs=False) == [0.6, 0.1, 0.2]
    assert from_text(["3", "1 2"], pairs=False) == [3.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="a value that is not a number: “x”"):
        from_text("1,x", pairs=False)


def test_json_inputs_pass_as_they_are() -> None:
    for value in ([0.1, 0.2], [[0.1, 0.2]], [], None, 5, ["0.1", 2]):
        assert from_text(value, pairs=True) == value
        assert from_text(value, pairs=False) == value


def test_an_address_number_is_read_as_a_number_only_in_ascii_digits() -> None:
    assert number_from_text("4") == 4 and isinstance(number_from_text("4"), int)
    assert number_from_text("1.5") == 1.5
    assert number_from_text("1e2") == 100.0
    assert number_from_text("٣") == "٣"  # int() would read it as 3; the JSON API refuses it
    assert number_from_text("abc") == "abc"
    long = "1" * (MAX_NUMBER_CHARS + 1)
    assert number_from_text(long) == long
    assert number_from_text("1" * MAX_NUMBER_CHARS) == int("1" * MAX_NUMBER_CHARS)
    assert number_from_text(7) == 7 and number_from_text(None) is None


def test_a_board_reads_its_numbers_and_its_step_from_text() -> None:
    board = PointsBoard(
        points="0.1,0.1;0.9,0.1;0.5,0.9", step="2", beam_width="4", seed="9", alpha="1"
    )
    assert board.points == [(0.1, 0.1), (0.9, 0.1), (0.5, 0.9)]
    assert (board.step, board.beam_width, board.seed, board.alpha) == (2, 4, 9, 1.0)
    assert PointsBoard(points=[], snapshot="").snapshot is None  # the slider off
    assert PointsBoard(points=[], snapshot="300").snapshot == 300
    assert PointsBoard(points=[[0.5, 0.5]]).points == [(0.5, 0.5)]  # fewer than a decode needs
    values = ValuesBoard(values="0.3 0.1", samples="8", step="1")
    assert (values.values, values.samples, values.step) == ([0.3, 0.1], 8, 1)
    assert refusal(PointsBoard, points=[], step="0").startswith("Input should be greater than")


def test_the_readers_picks_are_read_from_text() -> None:
    assert picks_from_text("3,1,4") == [3, 1, 4]
    assert picks_from_text(" 3 ; 1 ") == [3, 1]
    assert picks_from_text("") == []
    assert picks_from_text(["2", "1,3"]) == [2, 1, 3]
    assert picks_from_text("2,x") == [2, "x"]  # the field then refuses "x"
    assert picks_from_text("٣") == ["٣"]
    assert picks_from_text([1, 2]) == [1, 2]


def test_a_pick_must_be_a_point_of_the_board_and_picked_once() -> None:
    board = {"points": "0.1,0.1;0.9,0.1;0.5,0.9", "turn": True}
    assert PointsBoard(**board, mine="3,1").mine == [3, 1]
    assert PointsBoard(**board, mine="1,2,3").mine == [1, 2, 3]
    for outside in ("4", "0"):
        assert refusal(PointsBoard, **board, mine=f"1,{outside}") == (
            f"Value error, Your answer picks point {outside}, but the board has 3 points; "
            "start your answer again."
        )
    assert refusal(PointsBoard, **board, mine="2,1,2") == (
        "Value error, Your answer picks point 2 twice; each point is picked once."
    )


# --- the schema's statement of which model, α and decoder go together ------------------------


def test_the_alpha_schema_takes_each_trained_alpha_or_null() -> None:
    from app.pointer.requests import alpha_schema
    from models.pointer_run import checkpoints, resolve, trained_alpha

    every = alpha_schema(("hull", "tsp"))["anyOf"]
    assert every[-1] == {"type": "null"}
    trained = sorted({a for task in ("hull", "tsp") for a in checkpoints(task)})
    assert len(every) - 1 == len(trained)
    for alpha, allowed in zip(trained, every, strict=False):
        assert allowed["type"] == "number"
        assert allowed["minimum"] < alpha < allowed["maximum"]  # with the server's tolerance
    sort = alpha_schema(("sort",))["anyOf"]
    assert len(sort) - 1 == len(checkpoints("sort")) == 2  # softmax and 1.5-entmax
    for task in ("tsp", "sort"):
        for name in checkpoints(task).values():
            (one, null) = alpha_schema((task,), name)["anyOf"]
            assert one["minimum"] < trained_alpha(name) < one["maximum"]
            assert resolve(task, one["maximum"], name) is not None
            assert null == {"type": "null"}


def test_the_decoding_schema_lists_each_model_with_its_alpha_and_decoders() -> None:
    from app.pointer.requests import alpha_schema, decoding_schema
    from models.pointer_run import SERVED, checkpoints, decoders_of

    schema: dict = {}
    decoding_schema("hull", "tsp")(schema)
    default, *models = schema["oneOf"]
    chosen_by_alpha = sorted(
        {
            d
            for task in ("hull", "tsp")
            for name in checkpoints(task).values()
            for d in decoders_of(name)
        }
    )
    assert default == {
        "properties": {"model": {"type": "null"}, "decoder": {"enum": chosen_by_alpha}}
    }
    names = list(dict.fromkeys([*SERVED["hull"], *SERVED["tsp"]]))
    assert [branch["properties"]["model"]["const"] for branch in models] == names
    for branch, name in zip(models, names, strict=True):
        assert branch["required"] == ["model"]
        assert branch["properties"]["decoder"] == {"enum": list(decoders_of(name))}
        assert branch["properties"]["alpha"] == alpha_schema(("hull", "tsp"), name)
    attention = [b for b in models if "symmetric" in b["properties"]["decoder"]["enum"]]
    assert attention, "the attention model offers the symmetric decoder"


def test_each_sorting_models_branch_takes_only_its_own_alpha() -> None:
    from app.pointer.requests import decoding_schema
    from models.pointer_run import SERVED, trained_alpha

    schema: dict = {}
    decoding_schema("sort")(schema)
    branches = {b["properties"]["model"]["const"]: b for b in schema["oneOf"][1:]}
    assert set(branches) == set(SERVED["sort"])
    alphas = {trained_alpha(name) for name in branches}
    assert alphas == {1.0, 1.5}  # two models, two α: each branch must name its own
    for name, branch in branches.items():
        (own, null) = branch["properties"]["alpha"]["anyOf"]
        assert own["minimum"] < trained_alpha(name) < own["maximum"]
        assert null == {"type": "null"}
