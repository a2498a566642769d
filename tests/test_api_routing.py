"""The attention model's figures through the API and the page (app/routing/): the encoder's
attention of a layer and head, one REINFORCE step against the greedy rollout, their refusals,
and the page drawing the state in its address."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from models.tasks import tsp

CITIES = [[0.12, 0.18], [0.35, 0.82], [0.64, 0.12], [0.88, 0.55], [0.52, 0.47], [0.18, 0.6]]
TEXT = ";".join(f"{x},{y}" for x, y in CITIES)
PAGE = "/papers/attention-routing"


@pytest.fixture(scope="module")
def site() -> Iterator[TestClient]:
    with TestClient(create_app()) as client:
        yield client


def test_the_attention_of_each_layer_and_head_is_a_distribution_per_city(site: TestClient) -> None:
    answers = {}
    for layer, head in ((1, 1), (1, 2), (3, 1)):
        answer = site.get(
            "/api/routing/attention", params={"points": TEXT, "layer": layer, "head": head}
        )
        assert answer.status_code == 200, answer.text
        weights = answer.json()["weights"]
        assert len(weights) == len(CITIES) and all(len(row) == len(CITIES) for row in weights)
        assert all(abs(sum(row) - 1) < 2e-3 and min(row) >= 0 for row in weights)
        answers[layer, head] = weights
        assert answer.json()["model"]["name"] == "attention-routing-tsp20"
    assert answers[1, 1] != answers[1, 2] != answers[3, 1]  # each head reads its own way


def test_the_attention_follows_the_cities_when_they_are_relisted(site: TestClient) -> None:
    """Permutation equivariance: row i of the relisted answer is row order[i] of the first,
    its columns relisted the same way."""
    order = [3, 0, 5, 1, 4, 2]
    relisted = ";".join(f"{CITIES[i][0]},{CITIES[i][1]}" for i in order)
    first = site.get("/api/routing/attention", params={"points": TEXT}).json()["weights"]
    second = site.get("/api/routing/attention", params={"points": relisted}).json()["weights"]
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            assert second[i][j] == pytest.approx(first[a][b], abs=2e-4)


def test_a_reinforce_step_weighs_each_sample_by_its_advantage(site: TestClient) -> None:
    params = {"points": TEXT, "samples": 8, "seed": 3}
    answer = site.get("/api/routing/reinforce", params=params)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    baseline = body["baseline"]
    assert len(body["samples"]) == 8
    for sample in body["samples"]:
        assert sorted(sample["order"]) == list(range(len(CITIES)))
        assert sample["length"] == pytest.approx(tsp.tour_length(CITIES, sample["order"]), 1e-5)
        assert sample["advantage"] == pytest.approx(sample["length"] - baseline["length"])
    # the baseline is the model's greedy tour: the TSP API's, for the same model
    greedy = site.post(
        "/api/pointer/tsp", json={"points": CITIES, "model": "attention-routing-tsp20"}
    ).json()
    assert tsp.canonical_tour(baseline["order"]) == tsp.canonical_tour(greedy["order"])
    # the same seed draws the same tours, and more samples only add to them
    again = site.get("/api/routing/reinforce", params={**params, "samples": 12}).json()
    assert [s["order"] for s in again["samples"][:8]] == [s["order"] for s in body["samples"]]


@pytest.mark.parametrize(
    ("path", "params", "phrase"),
    [
        ("attention", {"points": TEXT, "city": 9}, "`city` must be one of the 6 cities"),
        ("attention", {"points": TEXT, "layer": 4}, "`layer` must be at most 3"),
        ("attention", {"points": TEXT, "head": 0}, "`head` must be at least 1"),
        ("attention", {"points": "0.1,0.2;0.1,0.2;0.5,0.9"}, "are the same point"),
        ("attention", {"points": "0.1,0.2"}, "at least 3"),
        ("reinforce", {"points": TEXT, "samples": 65}, "`samples` must be at most 64"),
        ("reinforce", {"points": TEXT, "samples": "lots"}, "`samples` must be a number"),
        ("reinforce", {"points": "0.1,0.2;0.5;0.9,0.9"}, "needs two numbers"),
        ("reinforce", {"points": TEXT, "colour": "red"}, "`colour` is not a field"),
    ],
)
def test_bad_figure_states_get_a_sentence(
    site: TestClient, path: str, params: dict, phrase: str
) -> None:
    answer = site.get(f"/api/routing/{path}", params=params)
    assert answer.status_code == 422
    assert phrase in answer.json()["detail"], answer.json()


def test_an_htmx_answer_is_the_figure_and_moves_the_address_to_it(site: TestClient) -> None:
    headers = {"HX-Request": "true", "HX-Current-URL": f"http://testserver{PAGE}?other=1"}
    params = {"points": TEXT, "layer": 2, "head": 5, "city": 4}
    answer = site.get("/api/routing/attention", params=params, headers=headers)
    assert answer.status_code == 200
    assert "Layer 2, head 5: city 4 reads" in answer.text
    url = answer.headers["HX-Replace-Url"]
    assert url.startswith(f"{PAGE}?other=1&attn-points=0.12,0.18;") and "attn-city=4" in url
    assert url.endswith("#routing-attention")


def test_the_page_draws_the_figures_state_in_its_address(site: TestClient) -> None:
    page = site.get(PAGE, params={"attn-points": TEXT, "attn-layer": 1, "attn-city": 3}).text
    assert "Layer 1, head 1: city 3 reads" in html.unescape(page)
    page = site.get(PAGE, params={"rl-points": TEXT, "rl-samples": 5, "rl-seed": 2}).text
    rows = re.search(r'class="routing-bars">.*?<tbody>(.*?)</tbody>', page, re.S)
    assert rows is not None and rows.group(1).count("<tr") == 5
    # an address it cannot draw shows the example, and says why
    page = html.unescape(site.get(PAGE, params={"attn-city": "99"}).text)
    assert "The city must be one of the 20 cities" in page and "shows its example instead" in page


def test_a_figure_sent_as_repeated_keys_is_priced_for_every_value() -> None:
    """`points=x,y&points=x,y…` reaches the route as a list; its price must count them all
    (a dict of the query would keep only the last one and price 100 cities as 1)."""
    from starlette.requests import Request

    from app.compute import pointer_cost, query_fields
    from app.routing.requests import ReinforceFigure

    cities = "&".join(f"points={i / 100:g},{(i * 37 % 100) / 100:g}" for i in range(100))
    request = Request({"type": "http", "query_string": f"{cities}&samples=64".encode()})
    assert ReinforceFigure.model_validate(query_fields(request)).cost() == pointer_cost(100, 65)


def test_a_routing_figure_costs_its_cities_times_the_tours_it_decodes() -> None:
    """The encoder figure decodes one greedy tour; the REINFORCE figure its samples and the
    greedy rollout: at 30 cities one more or one fewer tour changes the price."""
    from app.compute import pointer_cost
    from app.routing.requests import AttentionFigure, ReinforceFigure

    thirty = [[round(i / 31, 3), round((7 * i % 31) / 31, 3)] for i in range(1, 31)]
    assert AttentionFigure(points=thirty).cost() == pointer_cost(30, 1) == 1
    assert ReinforceFigure(points=thirty, samples=1).cost() == pointer_cost(30, 2) == 2


def test_the_query_form_of_the_cities_is_in_the_api_schema(site: TestClient) -> None:
    """A GET figure takes one `points=x,y` per city: the OpenAPI schema says so, with the
    limits the request model enforces."""
    from app.pointer.requests import MAX_INPUTS, MIN_POINTS
    from app.routing.requests import CITY_TEXT

    schema = site.get("/openapi.json").json()
    parameters = [
        parameter
        for path, methods in schema["paths"].items()
        if path.startswith("/api/routing/")
        for method in methods.values()
        for parameter in method.get("parameters", [])
        if parameter["name"] == "points"
    ]
    assert parameters
    for parameter in parameters:
        cities = parameter["schema"]
        assert cities["type"] == "array" and cities["uniqueItems"] is True
        assert cities["items"] == {"type": "string", "pattern": CITY_TEXT}
        assert (cities["minItems"], cities["maxItems"]) == (MIN_POINTS, MAX_INPUTS)
        assert cities["description"] == "distinct cities in the unit square, one `points=x,y` each"
        assert cities["examples"] == [["0.15,0.2", "0.85,0.1", "0.5,0.45", "0.9,0.8", "0.2,0.85"]]


def test_the_answer_is_the_chosen_layers_and_heads_attention_and_a_check_can_stop_reinforce():
    import numpy as np

    from app.routing import service
    from app.routing.requests import MODEL, AttentionFigure, ReinforceFigure
    from models import attention_routing
    from models.checkpoints import load_model
    from models.pointer_run import ServedPointer, four_digits

    model, entry = load_model(MODEL)
    served = ServedPointer.from_entry(MODEL, model, entry)  # what the registry's load gives
    points = [[0.1, 0.2], [0.8, 0.1], [0.5, 0.9], [0.3, 0.6]]
    expected = attention_routing.encoder_attention(model, np.array(points))
    for layer, head in ((2, 3), (3, 8), (1, 1)):
        figure = AttentionFigure(points=points, layer=layer, head=head, city=2)
        answer = service.attention(lambda name: served, figure)
        assert answer.weights == four_digits(expected[layer - 1, head - 1]).tolist()
        assert (answer.layer, answer.head, answer.city) == (layer, head, 2)

    def stop() -> None:
        raise RuntimeError("stopped")

    with pytest.raises(RuntimeError, match="stopped"):
        service.reinforce(lambda name: served, ReinforceFigure(points=points, samples=4), stop)
