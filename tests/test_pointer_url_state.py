"""A pointer board drawn by the server from the page address (app/pointer/url_state.py): the
board's request fields under its key, read by the request model. A shared link shows the shared
points, decoder, model and step without script, a link made before the fields were the address
draws the same figure, and a broken or too heavy address says what the drawing shows instead."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from app.main import ROOT, create_app
from app.pointer.requests import PointsBoard, ValuesBoard
from app.pointer.url_state import address, board_fields, inputs_text, url_keys
from app.pointer.widget import board_state
from app.widgets import PAGE_FIGURE_TOKENS, allot
from models.checkpoints import read_manifest
from models.pointer_run import SERVED

NAMES = {name for names in SERVED.values() for name in names}
PAGE = "/papers/pointer-networks"
FIVE = "0.15,0.2;0.85,0.1;0.5,0.45;0.9,0.8;0.2,0.85"


def test_the_keys_are_the_request_fields_under_the_board_key() -> None:
    assert {
        "hull-points",
        "hull-decoder",
        "hull-beam_width",
        "hull-samples",
        "hull-seed",
        "hull-alpha",
        "hull-step",
    } <= url_keys(["hull"])
    assert {"hull", "hull-width", "hull-k"} <= url_keys(["hull"])  # links made before
    assert {"sort-values", "tsp-step"} <= url_keys()


def test_the_address_is_read_by_the_request_model() -> None:
    query = {
        "hull-points": "0.1,0.2;0.8,0.1;0.5,0.9;",
        "hull-decoder": "beam",
        "hull-beam_width": "16",
        "hull-alpha": "1",
        "hull-step": "3",
        "tsp-step": "2",  # another board's
        "hull-2-step": "4",  # a board whose id starts with this one's
    }
    fields = board_fields("hull", "hull", query)
    board = PointsBoard.model_validate(fields)
    assert board == PointsBoard(
        points=[(0.1, 0.2), (0.8, 0.1), (0.5, 0.9)],
        decoder="beam",
        beam_width=16,
        alpha=1.0,
        step=3,
    )
    assert board_fields("hull", "hull", {"tsp-points": FIVE}) is None
    sort = ValuesBoard.model_validate({"values": "0.5, 1e3,", "samples": "256"})
    assert sort.values == [0.5, 1000.0] and sort.samples == 256
    with pytest.raises(ValidationError, match="coordinate that is not a number: “x”"):
        PointsBoard.model_validate({"points": "0.1,x"})
    with pytest.raises(ValidationError, match="less than or equal to 16"):
        PointsBoard.model_validate({"points": FIVE, "beam_width": "50"})


def test_links_made_before_read_as_the_fields_they_stood_for() -> None:
    old = {"hull": FIVE, "hull-decoder": "beam4", "hull-alpha": "1", "hull-step": "2"}
    assert board_fields("hull", "hull", old) == {
        "points": FIVE,
        "decoder": "beam",
        "beam_width": "4",
        "alpha": "1",
        "step": "2",
    }
    form = {"sort": "0.6 0.1", "sort-decoder": "sample", "sort-k": "9", "sort-width": "3"}
    board = ValuesBoard.model_validate(board_fields("sort", "sort", form))
    assert (board.values, board.decoder, board.samples, board.beam_width) == (
        [0.6, 0.1],
        "sample",
        9,
        3,
    )


def test_the_form_reads_as_the_address_and_the_answer_writes_the_fields() -> None:
    """The board's form sends one point per line; the answer's address writes the fields."""
    form = {
        "tsp-points": "0.1, 0.2\n0.8 0.1\n\n0.5,0.9\n",
        "tsp-decoder": "sample",
        "tsp-beam_width": "3",
        "tsp-samples": "200",
        "tsp-alpha": "1",
        "tsp-step": "4",
    }
    board = PointsBoard.model_validate(board_fields("tsp", "tsp", form))
    assert board.points == [(0.1, 0.2), (0.8, 0.1), (0.5, 0.9)]
    assert address("tsp", board) == {
        "tsp": None,
        "tsp-width": None,
        "tsp-k": None,
        "tsp-model": None,
        "tsp-values": None,
        "tsp-turn": None,  # not the reader's turn: no picks in the address
        "tsp-mine": None,
        "tsp-snapshot": None,  # the trained model, no training snapshot
        "tsp-points": "0.1,0.2;0.8,0.1;0.5,0.9",
        "tsp-decoder": "sample",
        "tsp-beam_width": "3",
        "tsp-samples": "200",
        "tsp-seed": "0",
        "tsp-alpha": "1",
        "tsp-step": "4",
    }
    assert inputs_text(board.inputs()) == "0.1, 0.2\n0.8, 0.1\n0.5, 0.9\n"
    sort = ValuesBoard(values=[0.5, 0.25, 3.0])
    assert address("sort", sort)["sort-values"] == "0.5,0.25,3"
    assert address("sort", sort)["sort-alpha"] is None
    with pytest.raises(ValidationError, match=r"Point 2 \(line 2\) needs two numbers"):
        PointsBoard.model_validate({"points": "0.1, 0.2\n0.3\n"})
    with pytest.raises(ValidationError, match="not a number: “nan”"):
        ValuesBoard.model_validate({"values": "0.1, nan"})


def light_enough(board: PointsBoard) -> tuple[PointsBoard, str | None]:
    """What a page render decodes for a board alone (app.widgets.allot), and its note."""
    figure = allot(board_state(board), PAGE_FIGURE_TOKENS)
    return figure.drawn, figure.note


def test_only_a_light_decode_runs_while_the_page_loads() -> None:
    hundred = [(i / 100, 0.5) for i in range(100)]
    assert light_enough(PointsBoard(points=hundred))[1] is None
    heavy, note = light_enough(PointsBoard(points=hundred, decoder="beam", beam_width=16))
    assert heavy.decoder == "greedy" and note is not None
    assert light_enough(PointsBoard(points=hundred[:10], decoder="sample", samples=64))[1] is None


needs_models = pytest.mark.skipif(
    not NAMES <= read_manifest(Path(ROOT / "checkpoints")).keys(),
    reason="the pointer checkpoints are not trained",
)


@pytest.fixture(scope="module")
def site() -> Iterator[TestClient]:
    with TestClient(create_app()) as client:
        yield client


def board(html: str, key: str) -> str:
    start = html.index(f'id="pointer-board-{key}"')
    return html[start : html.index("</figure>", start)]


def config(figure: str) -> dict:
    block = re.search(r"data-board-config>(.*?)</script>", figure, re.S)
    assert block is not None
    return json.loads(block.group(1))


def read_points(text: str) -> list[tuple[float, float]]:
    return PointsBoard.model_validate({"points": text}).points


# A figure's take-away block links the address it was drawn at (tests/test_figure_export.py)
TAKE_AWAY = re.compile(r'<div class="take-away".*?</div>', re.S)


@needs_models
def test_a_link_made_before_draws_what_its_fields_draw(site: TestClient) -> None:
    points = "0.1,0.15;0.8,0.1;0.45,0.4;0.9,0.75;0.55,0.6;0.15,0.85"
    old = f"?hull={points}&hull-decoder=beam4&hull-step=2&sort=0.3,0.9,0.1&sort-alpha=1.5"
    new = (
        f"?hull-points={points}&hull-decoder=beam&hull-beam_width=4&hull-step=2"
        "&sort-values=0.3,0.9,0.1&sort-alpha=1.5"
    )
    before, after = site.get(PAGE + old).text, site.get(PAGE + new).text
    unique = re.compile(r"pb-hm-[0-9a-f]{8}")  # the heatmap's pattern id, new per drawing
    for key in ("hull", "sort", "tsp"):
        drawn = [unique.sub("", TAKE_AWAY.sub("", board(html, key))) for html in (before, after)]
        assert drawn[0] == drawn[1]
    assert board(after, "hull").count('class="pb-point') == 6


@needs_models
def test_a_shared_board_is_drawn_by_the_server(site: TestClient) -> None:
    points = "0.1,0.15;0.8,0.1;0.45,0.4;0.9,0.75;0.55,0.6;0.15,0.85"
    query = (
        f"?hull-points={points}&hull-decoder=beam&hull-beam_width=4&hull-step=2"
        "&sort-values=0.3,0.9,0.1&sort-alpha=1.5"
    )
    figure = board(site.get(PAGE + query).text, "hull")
    assert figure.count('class="pb-point') == 6
    assert '<option value="beam" selected>' in figure
    assert 'value="4" data-beam-width' in figure
    assert 'value="2" data-step' in figure and "Step 2 of" in figure
    data = json.loads(re.search(r"data-result-json>(.*?)</script>", figure, re.S).group(1))
    assert (data["n"], data["decoder"], data["beam_width"]) == (6, "beam", 4)
    typed = re.search(r"<textarea[^>]*>(.*?)</textarea>", figure, re.S).group(1)
    assert read_points(typed) == read_points(points)
    assert read_points(config(figure)["example"]) != read_points(points)
    assert re.search(r"data-url-note hidden>\s*</p>", figure)
    page = site.get(PAGE + query).text
    sort = board(page, "sort")
    assert 'value="1.5" checked' in sort and sort.count('class="pb-point') == 3
    sort_data = json.loads(re.search(r"data-result-json>(.*?)</script>", sort, re.S).group(1))
    assert sort_data["model"]["alpha"] == 1.5
    # a board the address does not name keeps its example
    assert board(page, "tsp").count('class="pb-point') == 5


@needs_models
def test_a_broken_shared_board_says_so_and_shows_the_example(site: TestClient) -> None:
    figure = board(site.get(f"{PAGE}?hull-points=0.1,0.2;0.5,x;0.9,0.1").text, "hull")
    assert "coordinate that is not a number: “x”. The board shows its example instead." in figure
    assert figure.count('class="pb-point') == 5
    outside = board(site.get(f"{PAGE}?hull-points=0.1,0.2;0.5,1.5;0.9,0.1").text, "hull")
    assert "The board shows its example instead." in outside
    assert "[1]" not in outside.split("data-url-note")[1][:300]  # the reader's words


@needs_models
def test_a_decode_too_heavy_for_the_page_is_drawn_greedily(site: TestClient) -> None:
    """It says so above the drawing, and the board keeps the address's decoder, so its next
    answer (the note's button, or any change) is the decoder the link asked for."""
    rng = random.Random(3)
    points = ";".join(f"{rng.random():.3f},{rng.random():.3f}" for _ in range(100))
    figure = board(
        site.get(f"{PAGE}?hull-points={points}&hull-decoder=beam&hull-beam_width=16").text, "hull"
    )
    note = "This link asks for beam search (width 16) over 100 inputs, too heavy to run while"
    assert note in figure
    assert figure.index(note) < figure.index("data-board-svg")
    assert ">Run beam search (width 16)</button>" in figure
    assert '<option value="beam" selected>' in figure
    assert 'value="16" data-beam-width' in figure
    data = json.loads(re.search(r"data-result-json>(.*?)</script>", figure, re.S).group(1))
    assert data["decoder"] == "greedy"
    assert figure.count('class="pb-point') == 100
