"""app.errors' shared handlers and app.responses' one way to answer JSON or a fragment."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from fastapi import HTTPException, Request
from fastapi.testclient import TestClient
from pydantic import BaseModel

from app.assets import STATIC_DIR
from app.errors import error_sentence
from app.main import create_app
from app.registry import ModelUnavailable
from app.responses import page_url, respond
from models.errors import InvalidInput

FIXTURE_CONTENT = Path(__file__).parent / "fixtures" / "content"


class DomainError(InvalidInput):
    """Stands for a family's own error type for input its model cannot take."""


class Answer(BaseModel):
    value: int


@pytest.fixture()
def client(tiny_checkpoints: Path) -> TestClient:
    app = create_app(FIXTURE_CONTENT, tiny_checkpoints)

    @app.get("/test/reader")
    def reader() -> None:
        raise InvalidInput("Type a shorter word.")

    @app.get("/test/domain")
    def domain() -> None:
        raise DomainError("The points must be distinct.")

    @app.get("/test/bug")
    def bug() -> None:
        raise ValueError("an internal index went out of range")

    @app.get("/test/missing")
    def missing() -> None:
        raise ModelUnavailable("pointer-hull", "no checkpoint yet")

    @app.get("/api/test/bare")
    def bare() -> None:
        raise HTTPException(404)  # Starlette's "Not Found" and nothing else

    @app.get("/api/test/own")
    def own() -> None:
        raise HTTPException(404, "No board called “x”; the boards are hull, tsp and sort.")

    @app.get("/api/test/busy")
    def busy() -> None:
        raise HTTPException(503, "The server is busy; try again in 1 s.")

    @app.get("/test/answer")
    def answer(request: Request) -> object:
        result = Answer(value=3)
        return respond(
            request, result, "partials/widgets/result-value.html", {"value": "3"}, {"k": "3"}
        )

    return TestClient(app, raise_server_exceptions=False)


def test_a_reader_error_is_a_422_with_its_sentence(client: TestClient) -> None:
    answer = client.get("/test/reader")
    assert answer.status_code == 422
    assert answer.json() == {"detail": "Type a shorter word."}


def test_a_familys_own_kind_of_invalid_input_is_a_422(client: TestClient) -> None:
    answer = client.get("/test/domain")
    assert (answer.status_code, answer.json()["detail"]) == (422, "The points must be distinct.")


def test_any_other_value_error_is_a_500_logged_with_the_request_id(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="papertrace.errors"):
        answer = client.get("/test/bug", headers={"X-Request-ID": "abc123"})
    assert answer.status_code == 500
    assert "out of range" not in answer.text and "X-Request-ID" in answer.json()["detail"]
    logged = [r for r in caplog.records if r.name == "papertrace.errors"]
    assert logged and "request_id=abc123" in logged[0].getMessage()
    assert logged[0].exc_info is not None


def test_an_unavailable_model_is_a_503_with_the_reason(client: TestClient) -> None:
    answer = client.get("/test/missing")
    assert answer.status_code == 503
    assert answer.json()["detail"] == "The model “pointer-hull” is unavailable: no checkpoint yet."
    assert int(answer.headers["retry-after"]) > 0  # every 503 says when to come back


def test_every_503_says_when_to_come_back(client: TestClient) -> None:
    answer = client.get("/api/test/busy")
    assert answer.status_code == 503 and answer.headers["retry-after"] == "1"
    assert answer.json() == {"detail": "The server is busy; try again in 1 s."}


@pytest.mark.parametrize("path", ["/api/nothing", "/api", "/api/pointer/evil", "/api/test/bare"])
def test_an_address_under_api_that_nothing_answers_gets_a_json_sentence(
    client: TestClient, path: str
) -> None:
    answer = client.get(path)
    assert answer.status_code == 404
    assert answer.headers["content-type"] == "application/json"
    detail = answer.json()["detail"]
    assert detail.startswith(f"There is no endpoint at {path};") and "/docs" in detail
    assert "Not Found" not in answer.text


def test_a_404_with_its_own_sentence_keeps_it(client: TestClient) -> None:
    answer = client.get("/api/test/own")
    assert answer.json() == {"detail": "No board called “x”; the boards are hull, tsp and sort."}


def test_a_page_that_does_not_exist_is_still_the_404_page(client: TestClient) -> None:
    answer = client.get("/nothing")
    assert answer.status_code == 404 and answer.headers["content-type"].startswith("text/html")


# ---- every refusal in our words ----

FOREIGN = ["Input should be", "Field required", "should have", "Value error", "Unable to parse"]
# (pydantic error type, location, input, context): one of each kind a request here can meet
ERRORS = [
    ("model_attributes_type", ("body",), [1, 2], {}),
    ("dict_type", ("body", "x"), "a", {}),
    ("list_type", ("body", "points"), "0.1,0.2", {}),
    ("tuple_type", ("body", "points", 2), "0.1,0.2", {}),
    ("string_type", ("body", "text"), 3, {}),
    ("bool_parsing", ("query", "compare"), "maybe", {}),
    ("bool_type", ("body", "compare"), 3, {}),
    ("int_from_float", ("query", "step"), 0.5, {}),
    ("int_parsing_size", ("query", "beam_width"), "9" * 4301, {}),
    ("int_parsing", ("query", "beam_width"), "²", {}),
    ("float_parsing", ("query", "alpha"), "٣", {}),
    ("finite_number", ("body", "values", 1), float("nan"), {}),
    ("string_pattern_mismatch", ("path", "key"), "A" * 300, {"pattern": "^[a-z]+$"}),
    ("string_too_long", ("body", "labels", 0), "w" * 65, {"max_length": 64}),
    ("too_long", ("body", "points"), [[0, 0]] * 101, {"max_length": 100}),
    ("less_than_equal", ("body", "points", 2, 0), 1.5, {"le": 1.0}),
    ("literal_error", ("body", "decoder"), "evil", {"expected": "'greedy' or 'beam'"}),
    ("enum", ("body", "mode"), "evil", {"expected": "'trained' or 'inference'"}),
    ("extra_forbidden", ("body", "evil"), 1, {}),
    ("missing", ("body", "lemma"), {}, {}),
    ("json_type", ("body",), 3, {}),
    ("a_kind_of_error_pydantic_adds_later", ("body", "text"), "x" * 500, {}),
]


@pytest.mark.parametrize(("kind", "loc", "value", "ctx"), ERRORS, ids=[e[0] for e in ERRORS])
def test_every_kind_of_refusal_is_a_sentence_of_ours(
    kind: str, loc: tuple, value: object, ctx: dict
) -> None:
    error = {"type": kind, "loc": loc, "input": value, "ctx": ctx, "msg": "Input should be x"}
    api, reader = error_sentence(error), error_sentence(error, reader=True)
    for sentence in (api, reader):
        assert sentence.endswith((".", ".)")) and len(sentence) < 300, sentence
        assert not any(words in sentence for words in FOREIGN), sentence
    name = str(loc[1]) if len(loc) > 1 else ""
    assert f"`{name}" in api or not name, api  # the API names the field by its JSON path
    assert "`" not in reader and "_" not in reader.removeprefix("The "), reader


def test_an_item_is_counted_from_1_for_every_reader() -> None:
    error = {"type": "less_than_equal", "loc": ("body", "points", 2, 0), "input": 1.5}
    error["ctx"] = {"le": 1.0}
    assert error_sentence(error) == (
        "`points[2][0]` must be at most 1; got 1.5 (point 3's x, counting from 1)."
    )
    assert error_sentence(error, reader=True) == "Point 3's x must be at most 1; got 1.5."


def test_a_validators_sentence_speaks_the_pages_words_to_a_reader() -> None:
    sentence = "`city` must be one of the 5 cities (1 to 5); got 9."
    error = {"type": "value_error", "loc": ("query",), "ctx": {"error": sentence}}
    assert error_sentence(error) == sentence
    assert error_sentence(error, reader=True) == (
        "The city must be one of the 5 cities (1 to 5); got 9."
    )


# ---- a Range no byte of the file satisfies ----

SITE_CSS = "/static/css/site.css"


@pytest.mark.parametrize(
    "value",
    ["bytes=99999999-", "bytes=5-1", "bytes=abc-def", "bytes", "bytes=", "bytes=²-٣", "bytes=-0"]
    + ["bytes=" + "9" * 4301 + "-"],
)
def test_a_range_the_file_cannot_satisfy_is_a_416_sentence(client: TestClient, value: str) -> None:
    size = (STATIC_DIR / "css" / "site.css").stat().st_size
    answer = client.get(SITE_CSS, headers={"Range": value.encode()})
    assert answer.status_code == 416
    assert answer.headers["content-range"] == f"bytes */{size}"
    detail = answer.json()["detail"]
    assert detail.startswith("The Range header") and "leave" in detail and f"{size - 1}" in detail


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Range": "bytes=0-9"}, 206),
        ({"Range": "bytes=-10"}, 206),
        ({"Range": "bytes=0-1,5-9"}, 206),
        ({"Range": "items=0-9"}, 200),  # a unit the server does not know: ignored (RFC 9110)
        ({"Range": "bytes=99999999-", "If-Range": '"another version"'}, 200),
    ],
)
def test_a_range_the_file_can_satisfy_or_the_server_ignores(
    client: TestClient, headers: dict, status: int
) -> None:
    answer = client.get(SITE_CSS, headers=headers)
    assert answer.status_code == status
    if status == 200:
        assert answer.content == (STATIC_DIR / "css" / "site.css").read_bytes()


def test_json_without_htmx_and_a_fragment_with_it(client: TestClient) -> None:
    assert client.get("/test/answer").json() == {"value": 3}
    fragment = client.get(
        "/test/answer",
        headers={"HX-Request": "true", "HX-Current-URL": "http://x/papers/p?a=1&k=2#top"},
    )
    assert fragment.headers["content-type"].startswith("text/html")
    assert fragment.headers["HX-Replace-Url"] == "/papers/p?a=1&k=3"
    no_page = client.get("/test/answer", headers={"HX-Request": "true"})
    assert "HX-Replace-Url" not in no_page.headers


def test_page_url_sets_and_removes_keys_and_stays_on_this_site() -> None:
    assert page_url("https://evil.example/papers/x?a=1&b=2", {"b": None, "c": "é"}) == (
        "/papers/x?a=1&c=%C3%A9"
    )
    assert page_url("/papers/x", {"a": None}) == "/papers/x"
    assert page_url("not a url", {"a": "1"}) is None
