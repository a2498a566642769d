"""The pointer-network API (/api/pointer/*): every task, option and error case, the golden
contract per endpoint, the htmx fragment, and the two widgets on the deep-dive.

The tests run against the shipped checkpoints in checkpoints/. Where one is missing (a fresh
clone before training), every pointer recipe is trained for a few steps into a temporary
folder instead: the contract does not depend on how well the model has learned.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import numpy as np
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.main import ROOT, create_app
from models.checkpoints import read_manifest
from models.pointer_run import SERVED
from models.tasks import hull, tsp

SHIPPED = ROOT / "checkpoints"
GOLDEN = Path(__file__).parent / "golden"
NAMES = sorted({name for names in SERVED.values() for name in names})
FIVE = [[0.15, 0.20], [0.85, 0.10], [0.50, 0.45], [0.90, 0.80], [0.20, 0.85]]
VALUES = [0.62, 0.15, 0.87, 0.40, 0.05]


def random_points(n: int, seed: int) -> list[list[float]]:
    return np.random.default_rng(seed).random((n, 2)).round(4).tolist()


@pytest.fixture(scope="session")
def checkpoint_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if all(name in read_manifest(SHIPPED) for name in NAMES):
        return SHIPPED
    from models.train import train

    out = tmp_path_factory.mktemp("pointer-checkpoints")
    for name in NAMES:
        options = ["--steps", "3", "--batch-size", "8", "--validate-every", "1000"]
        train([name, *options, "--out", str(out), "--resume-dir", str(out / "resume")])
    return out


@pytest.fixture(scope="module")
def api(checkpoint_dir: Path) -> Iterator[TestClient]:
    with TestClient(create_app(checkpoint_dir=checkpoint_dir)) as client:
        yield client


def post(api: TestClient, task: str, **body: Any) -> dict[str, Any]:
    response = api.post(f"/api/pointer/{task}", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def check_steps(result: dict[str, Any], positions: int, end: int | None) -> None:
    """The trace is self-consistent: order = choices without end, zeros counted right."""
    steps = result["steps"]
    assert steps, "a decoding has at least one step"
    chosen = [step["chosen"] for step in steps]
    assert result["order"] == [c for c in chosen if c != end]
    assert len(set(result["order"])) == len(result["order"]), "an input was chosen twice"
    for step in steps:
        distribution = step["distribution"]
        assert len(distribution) == positions
        assert all(p >= 0 for p in distribution)
        assert sum(distribution) == pytest.approx(1.0, abs=2e-3)
        assert step["support_size"] == sum(p > 0 for p in distribution)
        assert distribution[step["chosen"]] > 0
    # a chosen input is masked: exactly zero probability at every later step
    for i, c in enumerate(chosen[:-1]):
        assert all(step["distribution"][c] == 0 for step in steps[i + 1 :])


# ---- convex hull ----


def test_hull_greedy_on_the_worked_example(api: TestClient, checkpoint_dir: Path) -> None:
    result = post(api, "hull", points=FIVE)
    assert (result["task"], result["n"], result["decoder"], result["beam_width"]) == (
        "hull",
        5,
        "greedy",
        1,
    )
    assert result["end_index"] == 5
    check_steps(result, positions=6, end=5)
    assert result["reference"] == {
        "order": [0, 1, 3, 4],
        "method": "monotone chain (exact)",
        "optimal": True,
        "area": pytest.approx(hull.polygon_area(np.array(FIVE), [0, 1, 3, 4])),
    }
    order = result["order"]
    assert result["valid"] == hull.is_simple_polygon(np.array(FIVE), order)
    assert result["correct"] == hull.same_polygon(order, [0, 1, 3, 4])
    if result["valid"]:
        assert result["area"] == pytest.approx(hull.polygon_area(np.array(FIVE), order))
        assert result["gap"] == pytest.approx(1 - result["area"] / result["reference"]["area"])
    else:
        assert result["gap"] is None
    entry = read_manifest(checkpoint_dir)["pointer-hull"]
    assert result["model"] == {
        "name": "pointer-hull",
        "alpha": 1.0,
        "sha256": entry["sha256"],
        "train_steps": entry["steps"],
    }
    assert 0 < result["server_ms"] < 10_000


@pytest.mark.parametrize("width", [1, 4, 16])
def test_hull_beam(api: TestClient, width: int) -> None:
    points = random_points(20, seed=width)
    result = post(api, "hull", points=points, decoder="beam", beam_width=width)
    assert (result["decoder"], result["beam_width"]) == ("beam", width)
    check_steps(result, positions=21, end=20)
    assert result["reference"]["order"] == hull.convex_hull_order(np.array(points))


def test_greedy_ignores_the_beam_width(api: TestClient) -> None:
    result = post(api, "hull", points=FIVE, decoder="greedy", beam_width=12)
    assert result["beam_width"] == 1


def test_hull_at_the_size_limits(api: TestClient) -> None:
    small = post(api, "hull", points=[[0.1, 0.1], [0.9, 0.2], [0.4, 0.8]])
    assert small["reference"]["order"] == [0, 1, 2]
    large = post(api, "hull", points=random_points(100, seed=7))
    check_steps(large, positions=101, end=100)


def test_the_answer_does_not_depend_on_the_request_count(api: TestClient) -> None:
    """Same input, same answer: decoding is deterministic and nothing leaks between calls."""
    first = post(api, "hull", points=FIVE)
    post(api, "hull", points=random_points(30, seed=3))
    again = post(api, "hull", points=FIVE)
    assert again["steps"] == first["steps"]


# ---- travelling salesman ----


def test_tsp_small_is_held_karp(api: TestClient) -> None:
    points = random_points(8, seed=11)
    result = post(api, "tsp", points=points)
    check_steps(result, positions=8, end=None)
    assert sorted(result["order"]) == list(range(8)) and result["valid"]
    cities = np.array(points)
    optimal = tsp.tour_length(cities, tsp.brute_force(cities))
    reference = result["reference"]
    assert (reference["method"], reference["optimal"]) == ("Held–Karp (exact)", True)
    assert reference["length"] == pytest.approx(optimal)
    assert result["length"] == pytest.approx(tsp.tour_length(cities, result["order"]))
    assert result["gap"] == pytest.approx(result["length"] / optimal - 1)
    assert result["gap"] >= -1e-9, "nothing beats the optimum"
    assert result["correct"] == (result["gap"] <= 1e-9)


def test_tsp_beyond_held_karp_uses_a_heuristic(api: TestClient) -> None:
    n = tsp.HELD_KARP_MAX_N + 1
    points = random_points(n, seed=5)
    result = post(api, "tsp", points=points, decoder="beam", beam_width=8)
    check_steps(result, positions=n, end=None)
    reference = result["reference"]
    assert reference["optimal"] is False
    assert "2-opt" in reference["method"]
    assert sorted(reference["order"]) == list(range(n))
    cities = np.array(points)
    assert reference["length"] == pytest.approx(tsp.tour_length(cities, reference["order"]))
    # a 2-opt-polished tour is within a few percent of the optimum at this size
    assert reference["length"] <= 1.1 * tsp.tour_length(cities, tsp.held_karp(cities))


def test_tsp_accepts_collinear_cities(api: TestClient) -> None:
    result = post(api, "tsp", points=[[0.1, 0.1], [0.5, 0.5], [0.9, 0.9], [0.3, 0.3]])
    assert result["reference"]["length"] == pytest.approx(2 * 0.8 * 2**0.5)


# ---- sorting ----


@pytest.mark.parametrize("decoder", ["greedy", "beam"])
def test_sort_softmax(api: TestClient, decoder: str) -> None:
    result = post(api, "sort", values=VALUES, decoder=decoder, beam_width=4)
    check_steps(result, positions=5, end=None)
    assert result["reference"] == {
        "order": [4, 1, 3, 0, 2],
        "method": "stable sort (exact)",
        "optimal": True,
    }
    assert result["model"]["alpha"] == 1 and result["rescaled"] is False
    # masking leaves at most the inputs not yet chosen (a confident softmax may underflow to 0)
    assert all(s["support_size"] <= 5 - i for i, s in enumerate(result["steps"]))
    wrong = np.mean(np.array(VALUES)[result["order"]] != np.sort(VALUES))
    assert result["gap"] == pytest.approx(wrong)
    assert result["correct"] == (wrong == 0)


def test_sort_sparse_pointer(api: TestClient, checkpoint_dir: Path) -> None:
    result = post(api, "sort", values=VALUES, alpha=1.5)
    check_steps(result, positions=5, end=None)
    assert result["model"]["name"] == "pointer-sort-entmax15"
    assert result["model"]["alpha"] == 1.5
    sha = read_manifest(checkpoint_dir)["pointer-sort-entmax15"]["sha256"]
    assert result["model"]["sha256"] == sha
    assert all(1 <= s["support_size"] <= 5 - i for i, s in enumerate(result["steps"]))
    if checkpoint_dir == SHIPPED:  # the trained model is sparse; a 3-step stand-in need not be
        chosen = [s["chosen"] for s in result["steps"]]
        open_zeros = [
            i
            for i, s in enumerate(result["steps"])
            if any(p == 0 for j, p in enumerate(s["distribution"]) if j not in chosen[:i])
        ]
        assert open_zeros, "entmax15 gave every open input a nonzero probability"


def test_sort_rescales_values_outside_the_unit_interval(api: TestClient) -> None:
    result = post(api, "sort", values=[30, -2, 7.5, 7.5])
    assert result["rescaled"] is True
    assert result["reference"]["order"] == [1, 2, 3, 0]
    assert sorted(result["order"]) == [0, 1, 2, 3]


def test_sort_two_equal_values(api: TestClient) -> None:
    result = post(api, "sort", values=[0.5, 0.5])
    assert result["correct"] is True and result["gap"] == 0.0


# ---- errors a reader can cause: 422 with a sentence ----


NAN_BODY = '{"points": [[NaN, 0.1], [0.2, 0.3], [0.5, 0.5]]}'
INF_BODY = '{"values": [Infinity, 0.1]}'

BAD_REQUESTS = [
    ("hull", {"points": FIVE[:2]}, "at least 3"),
    ("tsp", {"points": random_points(101, seed=1)}, "at most 100"),
    ("hull", {"points": [*FIVE, FIVE[2]]}, "Points 3 and 6"),
    ("tsp", {"points": [[0.2, 0.2], [0.2, 0.2], [0.5, 0.9]]}, "Points 1 and 2"),
    ("hull", {"points": [[1.5, 0.2], *FIVE]}, "points[0][0]` must be at most 1"),
    ("tsp", {"points": [[0.2, -0.1], *FIVE]}, "points[0][1]` must be at least 0"),
    ("hull", {"points": [[0.1, 0.1], [0.5, 0.5], [0.9, 0.9]]}, "straight line"),
    ("hull", {"points": [[0.1, 0.2, 0.3], *FIVE]}, "points[0]"),
    ("hull", {"points": "five points"}, "points"),
    ("hull", {"values": VALUES}, "needs a `points` field"),
    ("hull", {"points": FIVE, "beam_width": 0}, "`beam_width` must be at least 1"),
    ("tsp", {"points": FIVE, "beam_width": 17}, "`beam_width` must be at most 16"),
    ("tsp", {"points": FIVE, "decoder": "sampling"}, "'greedy', 'beam', 'sample' or 'symmetric'"),
    ("hull", {"points": FIVE, "alpha": 1.5}, "set `alpha` to 1, or leave it out"),
    ("sort", {"values": VALUES, "alpha": 2}, "set `alpha` to 1 or 1.5"),
    ("sort", {"values": VALUES, "alpha": "1.5"}, "`alpha` must be a number"),
    ("sort", {"values": VALUES, "model": "entmax15"}, "`model` must be 'pointer-hull'"),
    ("hull", {"points": FIVE, "model": "attention-routing-tsp20"}, "set `model` to pointer-hull"),
    ("tsp", {"points": FIVE, "decoder": "symmetric"}, "Network decodes greedy, beam, sample, not"),
    (
        "tsp",
        {"points": FIVE, "decoder": "beam", "model": "attention-routing-tsp20"},
        "attention model decodes greedy, sample, symmetric, not beam",
    ),
    ("sort", {"values": [0.5]}, "at least 2"),
    ("sort", {"values": list(range(101))}, "at most 100"),
    ("sort", {"values": VALUES, "colour": "red"}, "`colour` is not a field"),
    ("sort", {"values": [1e12, 0.0]}, "at most 1000000000"),
]


@pytest.mark.parametrize(("task", "body", "phrase"), BAD_REQUESTS)
def test_bad_requests_get_a_sentence(api: TestClient, task: str, body: dict, phrase: str) -> None:
    response = api.post(f"/api/pointer/{task}", json=body)
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert isinstance(detail, str) and detail.endswith((".", ")")), detail
    assert phrase in detail


def test_an_internal_fault_is_a_500_not_a_sentence_for_the_reader(
    checkpoint_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only input the reader can fix is a 422; a ValueError from inside the decode is ours."""
    import models.pointer_run as pointer_service

    def broken_greedy(*args: object, **kwargs: object) -> object:
        raise ValueError("shapes (3,) and (4,) do not broadcast")

    monkeypatch.setattr(pointer_service, "greedy", broken_greedy)
    app = create_app(checkpoint_dir=checkpoint_dir)
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.post("/api/pointer/sort", json={"values": VALUES})
    assert response.status_code == 500
    assert "broadcast" not in response.text


@pytest.mark.parametrize(
    ("task", "raw", "phrase"),
    [
        ("hull", NAN_BODY, "points[0][0]` must be a finite number"),
        ("sort", INF_BODY, "values[0]` must be a finite number"),
        ("tsp", '{"points": [[0.1, 0.2],', "not valid JSON"),
        ("sort", "", "needs a JSON body"),
    ],
)
def test_non_finite_and_broken_json(api: TestClient, task: str, raw: str, phrase: str) -> None:
    response = api.post(
        f"/api/pointer/{task}", content=raw, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422
    assert phrase in response.json()["detail"]


def test_a_missing_checkpoint_is_a_503_with_the_command(tmp_path: Path) -> None:
    with TestClient(create_app(checkpoint_dir=tmp_path)) as client:
        response = client.post("/api/pointer/tsp", json={"points": FIVE})
    assert response.status_code == 503
    detail = response.json()["detail"]
    name = SERVED["tsp"][0]
    assert detail.startswith(f"The model “{name}” is unavailable")
    assert f"python -m models.train {name}" in detail


def test_a_corrupt_checkpoint_is_a_503(tmp_path: Path, checkpoint_dir: Path) -> None:
    shutil.copy(checkpoint_dir / "manifest.json", tmp_path / "manifest.json")
    (tmp_path / "pointer-sort.safetensors").write_bytes(b"not the weights")
    with TestClient(create_app(checkpoint_dir=tmp_path)) as client:
        response = client.post("/api/pointer/sort", json={"values": VALUES})
    assert response.status_code == 503
    assert "does not match its manifest entry" in response.json()["detail"]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    task=st.sampled_from(["hull", "tsp", "sort"]),
    inputs=st.lists(st.tuples(st.floats(-0.5, 1.5), st.floats(-0.5, 1.5)), min_size=0, max_size=12),
    decoder=st.sampled_from(["greedy", "beam"]),
    width=st.integers(-2, 20),
)
def test_never_a_server_error(
    api: TestClient, task: str, inputs: list, decoder: str, width: int
) -> None:
    field = "values" if task == "sort" else "points"
    data = [x for x, _ in inputs] if task == "sort" else inputs
    body = {field: data, "decoder": decoder, "beam_width": width}
    response = api.post(f"/api/pointer/{task}", json=body)
    assert response.status_code in (200, 422), response.text
    if response.status_code == 422:
        assert isinstance(response.json()["detail"], str)


# ---- the htmx fragment and the model list ----


def test_htmx_gets_the_fragment_of_the_same_result(api: TestClient) -> None:
    as_json = post(api, "hull", points=FIVE)
    response = api.post("/api/pointer/hull", json={"points": FIVE}, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    html = response.text
    block = re.search(r"<script type=\"application/json\" data-result-json>(.*?)</script>", html)
    assert block is not None
    embedded = json.loads(block.group(1))
    assert embedded["steps"] == as_json["steps"]
    assert embedded["reference"] == as_json["reference"]
    assert html.count("data-step-row=") == len(as_json["steps"])
    assert "Exact hull (monotone chain)" in html
    assert '<th scope="col">END</th>' in html


def test_htmx_errors_stay_json(api: TestClient) -> None:
    response = api.post("/api/pointer/hull", json={"points": []}, headers={"HX-Request": "true"})
    assert response.status_code == 422
    assert "at least 3" in response.json()["detail"]


def test_model_list(api: TestClient) -> None:
    listed = {entry["task"]: entry["variants"] for entry in api.get("/api/pointer/models").json()}
    assert [v["alpha"] for v in listed["sort"]] == [1, 1.5]
    assert all(v["available"] for variants in listed.values() for v in variants)


# ---- golden contract: stable fields and the shape of everything else ----

GOLDEN_REQUESTS = {
    "hull": {"points": FIVE, "decoder": "greedy"},
    "tsp": {"points": FIVE, "decoder": "beam", "beam_width": 4},
    "sort": {"values": VALUES, "decoder": "greedy", "alpha": 1.5},
}
# values that do not depend on the trained weights
STABLE = ("task", "n", "decoder", "beam_width", "end_index", "rescaled", "reference")
NULLABLE = {"gap"}


def skeleton(value: Any, key: str = "") -> Any:
    """The JSON shape: types in place of values; lists by their first item."""
    if key in NULLABLE:
        return "number|null"
    if isinstance(value, dict):
        return {k: skeleton(v, k) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [skeleton(value[0])] if value else []
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "string" if isinstance(value, str) else "null"


def rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    return [rounded(v) for v in value] if isinstance(value, list) else value


@pytest.mark.parametrize("task", sorted(GOLDEN_REQUESTS))
def test_golden_contract(api: TestClient, task: str) -> None:
    request = GOLDEN_REQUESTS[task]
    result = post(api, task, **request)
    actual = {
        "endpoint": f"POST /api/pointer/{task}",
        "request": request,
        "stable": rounded({k: result[k] for k in STABLE if k in result}),
        "model": {k: result["model"][k] for k in ("name", "alpha")},
        "shape": skeleton(result),
    }
    path = GOLDEN / f"pointer_{task}.json"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert actual == json.loads(path.read_text(encoding="utf-8"))


# ---- the widgets on the deep-dive ----


@pytest.fixture(scope="module")
def deep_dive(checkpoint_dir: Path) -> str:
    with TestClient(create_app(checkpoint_dir=checkpoint_dir)) as client:
        response = client.get("/papers/pointer-networks")
    assert response.status_code == 200
    return response.text


def test_three_boards_have_their_own_ids_and_share_one_script(deep_dive: str) -> None:
    ids = re.findall(r'<figure[^>]* id="(pointer-board-[a-z-]+)"', deep_dive)
    assert ids == ["pointer-board-hull", "pointer-board-tsp", "pointer-board-sort"]
    all_ids = re.findall(r'\sid="([^"]+)"', deep_dive)
    duplicated = [i for i, group in itertools.groupby(sorted(all_ids)) if len(list(group)) > 1]
    assert duplicated == []
    assert deep_dive.count('src="/static/js/pointer-board.js"') == 1
    # the heatmaps are drawn by the server, one per board: the page needs no plotly
    assert "/plotly-" not in deep_dive
    assert deep_dive.count('class="pb-heatmap-svg"') == 3
    assert deep_dive.count('src="/static/vendor/htmx-') == 1
    assert deep_dive.count('href="/static/css/pointer.css"') == 1
    assert deep_dive.count('name="sort-alpha"') == 2  # softmax, 1.5-entmax
    widgets = deep_dive.split('class="widget pointer-')[1:]
    assert all("onclick" not in w and "style=" not in w.split("</figure>")[0] for w in widgets)


def test_boards_are_drawn_by_the_server(deep_dive: str) -> None:
    """Before any script runs, each board shows the default input and its decoding."""
    marker = 'data-pointer-board data-hx-widget data-task="'
    boards = [b.split("</figure>")[0] for b in deep_dive.split(marker)[1:]]
    assert [board.split('"')[0] for board in boards] == ["hull", "tsp", "sort"]
    for board in boards:
        assert board.count('class="pb-point') == 5
        assert "data-result-json" in board and "pb-summary" in board
    assert 'class="pb-reference" d="M' in boards[0]  # the exact hull, drawn
    assert "Exact hull (monotone chain)" in boards[0]
    assert "Held–Karp (exact)" in boards[1]


def test_worked_example_shows_every_step(deep_dive: str, api: TestClient) -> None:
    example = deep_dive.split('class="widget pointer-worked-example"')[1].split("</figure>")[0]
    result = post(api, "hull", points=FIVE)
    assert example.count('class="pwe-step"') == len(result["steps"])
    assert example.count("<tr") == 6 * len(result["steps"])  # P1..P5 and END per step
    assert "numbered from 1" in example
    assert "P1 → P2 → P4 → P5 → END" in example  # the canonical target, or the output itself


def test_a_missing_model_leaves_the_page_standing(tmp_path: Path) -> None:
    with TestClient(create_app(checkpoint_dir=tmp_path)) as client:
        response = client.get("/papers/pointer-networks")
    assert response.status_code == 200
    assert response.text.count('data-widget="pointer-board"') == 3
    assert response.text.count('data-widget="pointer-worked-example"') == 1
    assert "python -m models.train pointer-hull" in response.text


# ---- the board's htmx round trip ----


def board_get(api: TestClient, task: str, query: str, **headers: str) -> Any:
    return api.get(
        f"/api/pointer/{task}/board/{task}?{query}",
        headers={"HX-Request": "true", "HX-Current-URL": "http://x/papers/p?tsp-step=2", **headers},
    )


def test_the_board_answers_its_figure_and_the_parts_out_of_band(api: TestClient) -> None:
    points = "0.1, 0.15\n0.8, 0.1\n0.45, 0.4\n0.9, 0.75\n0.15, 0.85"
    query = f"points={points}&decoder=beam&beam_width=4&step=2"
    response = board_get(api, "hull", query.replace("\n", "%0A"))
    assert response.status_code == 200
    html = response.text
    assert html.lstrip().startswith('<svg class="pb-svg"')
    for part in ("pb-hull-note", "pb-hull-step-label", "pb-hull-error", "pb-hull-result"):
        assert f'id="{part}"' in html and "hx-swap-oob" in html.split(f'id="{part}"')[1][:80]
    data = json.loads(re.search(r"data-result-json>(.*?)</script>", html, re.S).group(1))
    assert (data["n"], data["decoder"], data["beam_width"]) == (5, "beam", 4)
    assert "Step 2 of" in html and 'data-drawn-step="1"' in html
    assert html.count('class="pb-point') == 5
    # the page address: the request's fields under the board's key, the other board's kept
    url = unquote(response.headers["HX-Replace-Url"])
    assert url.startswith("/papers/p?")
    assert "hull-points=0.1,0.15;0.8,0.1;0.45,0.4;0.9,0.75;0.15,0.85" in url
    assert "hull-decoder=beam&" in url and "hull-beam_width=4" in url and "hull-step=2" in url
    assert "tsp-step=2" in url and "hull-width" not in url and "hull=" not in url
    assert url.endswith("#pointer-board-hull")  # a shared link opens at the board
    # without htmx the same route answers the trace as JSON
    plain = api.get(f"/api/pointer/hull/board/hull?{query.replace(chr(10), '%0A')}").json()
    assert plain["order"] == data["order"] and plain["beam_width"] == 4


def test_the_heatmap_draws_every_probability_once_with_zeros_hatched(api: TestClient) -> None:
    """The server's heatmap: each (step, position) cell once, exact zeros in the hatched path,
    every nonzero one in the tint of its probability (never the zero look), the current step
    outlined and one hover column per position."""
    query = "values=0.62,0.15,0.87,0.4,0.05,0.33,0.71&alpha=1.5&step=3"
    html = board_get(api, "sort", query).text
    data = json.loads(re.search(r"data-result-json>(.*?)</script>", html, re.S).group(1))
    heatmap = html.split('class="pb-heatmap-svg"')[1].split("</svg>")[0]
    cell = r"M([\d.]+) ([\d.]+)h9v9h-9z"
    drawn: dict[tuple[float, float], float] = {}
    tint = r'class="pb-cell" fill-opacity="([\d.]+)" d="([^"]+)"'
    for opacity, path in re.findall(tint, heatmap):
        for x, y in re.findall(cell, path):
            assert (float(x), float(y)) not in drawn
            drawn[float(x), float(y)] = float(opacity)
    zero_path = re.search(r'class="pb-cell-zero"[^>]* d="([^"]+)"', heatmap)
    zeros = {(float(x), float(y)) for x, y in re.findall(cell, zero_path.group(1))}
    xs = sorted({x for x, _ in drawn.keys() | zeros})
    ys = sorted({y for _, y in drawn.keys() | zeros})
    steps = data["steps"]
    assert (len(ys), len(xs)) == (len(steps), data["n"])
    assert len(drawn) + len(zeros) == len(steps) * data["n"]
    for r, step in enumerate(steps):
        for c, p in enumerate(step["distribution"]):
            if p == 0:
                assert (xs[c], ys[r]) in zeros
            else:
                opacity = drawn[xs[c], ys[r]]
                assert 0.12 < opacity <= 1.0
                assert opacity == pytest.approx(0.12 + 0.88 * math.ceil(p * 20) / 20, abs=1e-3)
    assert zeros, "1.5-entmax sorting has exact zeros to hatch"
    assert re.search(r'class="pb-hm-row is-current"[^>]*>step 3<', heatmap)
    assert heatmap.count('class="pb-hm-current"') == 1
    assert heatmap.count('class="pb-hm-column"') == data["n"]


def test_the_board_draws_pointer_arrows_only_where_the_probability_is_not_zero(
    api: TestClient,
) -> None:
    html = board_get(api, "sort", "values=0.62,0.15,0.87,0.4,0.05&alpha=1.5&step=2").text
    data = json.loads(re.search(r"data-result-json>(.*?)</script>", html, re.S).group(1))
    step = data["steps"][1]
    arrows = re.findall(
        r'<path class="pb-arrow" id="pb-sort-arrow-(\d+)"[^>]*stroke-width="([\d.]+)"', html
    )
    assert [int(i) for i, _ in arrows] == [j for j, p in enumerate(step["distribution"]) if p > 0]
    widths = {int(i): float(w) for i, w in arrows}
    heaviest = max(widths, key=widths.get)
    assert step["distribution"][heaviest] == max(step["distribution"])


def test_a_board_that_cannot_be_decoded_still_draws_its_inputs(api: TestClient) -> None:
    few = board_get(api, "hull", "points=0.2,0.3;0.6,0.7")
    assert few.status_code == 200
    assert few.text.count('class="pb-point') == 2 and "Add at least 3 points." in few.text
    assert 'data-drawn-steps="0"' in few.text and "data-result-json" not in few.text
    line = board_get(api, "hull", "points=0.1,0.1;0.5,0.5;0.9,0.9")
    assert line.status_code == 200 and "straight line" in line.text
    assert line.text.count('class="pb-point') == 3
    # what the request model refuses is app/errors.py's 422, in the reader's words
    outside = board_get(api, "hull", "points=0.2,0.3;0.6,1.7;0.9,0.1")
    assert outside.status_code == 422
    assert outside.json()["detail"].startswith("Point 2's y must be at most 1")
    broken = board_get(api, "tsp", "points=0.2,0.3;0.6,x")
    assert broken.status_code == 422
    assert "not a number: “x”" in broken.json()["detail"]
    assert api.get("/api/pointer/tsp/board/tsp?points=0.2,0.3").status_code == 422  # JSON


def test_cities_too_close_to_measure_are_refused(api: TestClient) -> None:
    # schemathesis found these: distinct points whose tour has length 0 divided by zero (a 500)
    answer = api.post("/api/pointer/tsp", json={"points": [[0, 0], [5e-324, 0], [0, 5e-324]]})
    assert answer.status_code == 422
    assert "closer than" in answer.json()["detail"]


def test_a_board_over_the_input_limit_is_refused_before_any_drawing(api: TestClient) -> None:
    """2,500 points (a 44 KB address) once cost 11-13 CPU-seconds of label placement before the
    100-input check; the request model refuses them first: a short sentence, no figure."""
    rng = np.random.default_rng(0)
    points = ";".join(f"{x:.4f},{y:.4f}" for x, y in rng.random((2500, 2)))
    started = time.process_time()
    response = board_get(api, "hull", f"points={points}")
    spent = time.process_time() - started
    assert response.status_code == 422
    assert "at most 100" in response.json()["detail"]
    assert len(response.content) < 2_000
    assert spent < 0.5  # milliseconds of parsing, not seconds of drawing


def test_an_unknown_board_task_is_a_404_before_any_pricing(api: TestClient) -> None:
    response = api.get("/api/pointer/evil/board/x", headers={"HX-Request": "true"})
    assert response.status_code == 404


def test_a_board_answer_beyond_the_trained_sizes_says_so(api: TestClient) -> None:
    """One line, with the sizes from the recipe the checkpoint was trained by (its manifest
    entry's `data.n_range`); none inside them."""
    from models.recipes import get_recipe

    recipe = get_recipe(SERVED["hull"][0])
    many = ";".join(f"{x:.4f},{y:.4f}" for x, y in random_points(recipe.max_n + 10, 4))
    html = board_get(api, "hull", f"points={many}").text
    line = re.search(r'<p class="pb-beyond" id="pb-hull-beyond" data-beyond[^>]*>(.*?)</p>', html)
    assert line is not None and "hidden" not in line.group(0)
    assert line.group(1) == (
        f"Beyond training: the model learned on {recipe.min_n}–{recipe.max_n} points; "
        f"this board has {recipe.max_n + 10}."
    )
    inside = board_get(api, "hull", "points=0.1,0.15;0.8,0.1;0.45,0.4;0.9,0.75;0.15,0.85").text
    assert re.search(r'data-beyond hx-swap-oob="true" hidden></p>', inside)
