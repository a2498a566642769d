"""A pointer board drawn by the server from the page address (app/pointer/url_state.py): a shared
link shows the shared points, decoder, model and step without script; a broken or too heavy
address says what the drawing shows instead."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.main import ROOT, create_app
from app.pointer.url_state import (
    BoardState,
    address,
    board_state,
    inputs_text,
    parse_inputs,
    url_keys,
)
from models.checkpoints import read_manifest
from models.pointer_run import SERVED

NAMES = {name for names in SERVED.values() for name in names}
PAGE = "/papers/pointer-networks"
FIVE = "0.15,0.2;0.85,0.1;0.5,0.45;0.9,0.8;0.2,0.85"


def test_the_keys_are_the_ones_the_script_writes() -> None:
    assert url_keys(["hull"]) == {
        "hull",
        "hull-decoder",
        "hull-width",
        "hull-k",
        "hull-alpha",
        "hull-step",
    }
    assert {"sort", "tsp-step"} <= url_keys()


def test_the_address_reads_as_the_script_reads_it() -> None:
    query = {
        "hull": "0.1,0.2;0.8,0.1;0.5,0.9;",
        "hull-decoder": "beam50",  # clamped to the widest beam, as the script does
        "hull-alpha": "1.7",  # no checkpoint has it: ignored
        "hull-step": "3",
        "tsp-step": "2",  # another board's
    }
    state = board_state("hull", "hull", query, [1.0, 1.5])
    assert state == BoardState([[0.1, 0.2], [0.8, 0.1], [0.5, 0.9]], "beam", 16, 64, None, 2)
    assert board_state("hull", "hull", {"tsp": FIVE}, [1.0]) is None
    sort = board_state("sort", "sort", {"sort-decoder": "sample300"}, [1.0])
    assert sort is not None and sort.inputs is None and sort.samples == 256
    assert parse_inputs("sort", "0.5, 1e3,") == [0.5, 1000.0]
    with pytest.raises(ValueError, match="coordinate that is not a number: “x”"):
        parse_inputs("hull", "0.1,x")


def test_the_form_reads_as_the_address_and_writes_it_short() -> None:
    """The board's form sends one point per line and the counts in fields of their own."""
    form = {
        "tsp": "0.1, 0.2\n0.8 0.1\n\n0.5,0.9\n",
        "tsp-decoder": "sample",
        "tsp-width": "3",
        "tsp-k": "999",
        "tsp-alpha": "1",
        "tsp-step": "4",
    }
    state = board_state("tsp", "tsp", form, [1.0])
    assert state == BoardState([[0.1, 0.2], [0.8, 0.1], [0.5, 0.9]], "sample", 3, 256, 1.0, 3)
    assert address("tsp", "tsp", state) == {
        "tsp": "0.1,0.2;0.8,0.1;0.5,0.9",
        "tsp-decoder": "sample256",
        "tsp-alpha": "1",
        "tsp-step": "4",
        "tsp-width": None,
        "tsp-k": None,
    }
    assert inputs_text("tsp", state.inputs) == "0.1, 0.2\n0.8, 0.1\n0.5, 0.9\n"
    assert parse_inputs("sort", "0.5 0.25;3") == [0.5, 0.25, 3.0]
    with pytest.raises(ValueError, match=r"Point 2 \(line 2\) needs two numbers"):
        parse_inputs("hull", "0.1, 0.2\n0.3\n")
    with pytest.raises(ValueError, match="not a number: “nan”"):
        parse_inputs("sort", "0.1, nan")


def test_only_a_light_decode_runs_while_the_page_loads() -> None:
    hundred = [[0.5, 0.5]] * 100
    assert BoardState(hundred).fits_the_page()
    assert not BoardState(hundred, "beam", beam_width=16).fits_the_page()
    assert BoardState(hundred[:10], "sample", samples=64).fits_the_page()


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


@needs_models
def test_a_shared_board_is_drawn_by_the_server(site: TestClient) -> None:
    points = "0.1,0.15;0.8,0.1;0.45,0.4;0.9,0.75;0.55,0.6;0.15,0.85"
    query = f"?hull={points}&hull-decoder=beam4&hull-step=2&sort=0.3,0.9,0.1&sort-alpha=1.5"
    figure = board(site.get(PAGE + query).text, "hull")
    assert figure.count('class="pb-point') == 6
    assert '<option value="beam" selected>' in figure
    assert 'value="4" data-beam-width' in figure
    assert 'value="2" data-step' in figure and "Step 2 of" in figure
    data = json.loads(re.search(r"data-result-json>(.*?)</script>", figure, re.S).group(1))
    assert (data["n"], data["decoder"], data["beam_width"]) == (6, "beam", 4)
    typed = re.search(r"<textarea[^>]*>(.*?)</textarea>", figure, re.S).group(1)
    assert parse_inputs("hull", typed) == parse_inputs("hull", points)
    assert parse_inputs("hull", config(figure)["example"]) != parse_inputs("hull", points)
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
    figure = board(site.get(f"{PAGE}?hull=0.1,0.2;0.5,x;0.9,0.1").text, "hull")
    assert "coordinate that is not a number: “x”. The board shows its example instead." in figure
    assert figure.count('class="pb-point') == 5
    outside = board(site.get(f"{PAGE}?hull=0.1,0.2;0.5,1.5;0.9,0.1").text, "hull")
    assert "The board shows its example instead." in outside
    assert "[1]" not in outside.split("data-url-note")[1][:300]  # the reader's words


@needs_models
def test_a_decode_too_heavy_for_the_page_is_drawn_greedily(site: TestClient) -> None:
    rng = random.Random(3)
    points = ";".join(f"{rng.random():.3f},{rng.random():.3f}" for _ in range(100))
    figure = board(site.get(f"{PAGE}?hull={points}&hull-decoder=beam16").text, "hull")
    assert "This drawing uses greedy decoding: beam search (width 16) over 100 inputs" in figure
    assert '<option value="greedy" selected>' in figure
    assert figure.count('class="pb-point') == 100
