"""app.errors' shared handlers and app.responses' one way to answer JSON or a fragment."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from fastapi import Request
from fastapi.testclient import TestClient
from pydantic import BaseModel

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
