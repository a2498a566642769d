"""Every kind of request error, word for word: the sentence an API client gets (the field as a
JSON path, a list item counted from 1 beside it) and the one a reader of the page gets (the
field in the page's words). app/errors.py `error_sentence`."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from app.errors import error_sentence, reader_field, shown

BEAM = ("body", "beam_width")
POINT_X = ("body", "points", 2, 0)


def sentence(kind: str, loc: tuple = BEAM, value: Any = None, **ctx: Any) -> str:
    return error_sentence({"type": kind, "loc": loc, "input": value, "ctx": ctx})


def said_to_reader(kind: str, loc: tuple = BEAM, value: Any = None, **ctx: Any) -> str:
    return error_sentence({"type": kind, "loc": loc, "input": value, "ctx": ctx}, reader=True)


@pytest.mark.parametrize(
    ("kind", "value", "ctx", "api", "reader"),
    [
        (
            "greater_than_equal",
            0,
            {"ge": 1},
            "`beam_width` must be at least 1; got 0.",
            "The beam width must be at least 1; got 0.",
        ),
        (
            "greater_than",
            0,
            {"gt": 0.0},
            "`beam_width` must be greater than 0; got 0.",
            "The beam width must be greater than 0; got 0.",
        ),
        (
            "less_than_equal",
            99,
            {"le": 1e6},
            "`beam_width` must be at most 1000000; got 99.",
            "The beam width must be at most 1000000; got 99.",
        ),
        (
            "less_than",
            9,
            {"lt": 2.5},
            "`beam_width` must be less than 2.5; got 9.",
            "The beam width must be less than 2.5; got 9.",
        ),
        (
            "int_from_float",
            2.5,
            {},
            "`beam_width` must be a whole number; got 2.5.",
            "The beam width must be a whole number; got 2.5.",
        ),
        (
            "int_parsing",
            "five",
            {},
            "`beam_width` must be a number; got 'five'.",
            "The beam width must be a number; got 'five'.",
        ),
        (
            "multiple_of",
            3,
            {"multiple_of": 2.0},
            "`beam_width` must be a multiple of 2; got 3.",
            "The beam width must be a multiple of 2; got 3.",
        ),
        (
            "literal_error",
            "wide",
            {"expected": "'greedy' or 'beam'"},
            "`beam_width` must be 'greedy' or 'beam'; got 'wide'.",
            "The beam width must be 'greedy' or 'beam'; got 'wide'.",
        ),
        (
            "extra_forbidden",
            1,
            {},
            "`beam_width` is not a field this endpoint knows; remove it.",
            "The beam width is not a field this endpoint knows; remove it.",
        ),
        (
            "string_too_short",
            "",
            {"min_length": 1},
            "`beam_width` must have at least 1 characters.",
            "The beam width must have at least 1 characters.",
        ),
        (
            "bool_parsing",
            "maybe",
            {},
            "`beam_width` must be true or false (1 or 0 in an address); got 'maybe'.",
            "The beam width must be true or false (1 or 0 in an address); got 'maybe'.",
        ),
        (
            "finite_number",
            float("nan"),
            {},
            "`beam_width` must be a finite number, not nan.",
            "The beam width must be a finite number, not nan.",
        ),
        (
            "missing",
            None,
            {},
            "The request needs a `beam_width` field.",
            "Give the beam width.",
        ),
        (
            "dict_type",
            [1],
            {},
            "`beam_width` must be a JSON object; got [1].",
            "The beam width must be a JSON object; got [1].",
        ),
        (
            "list_type",
            7,
            {},
            "`beam_width` must be a list of values; got 7.",
            "The beam width must be a list; got 7.",
        ),
        (
            "tuple_type",
            7,
            {},
            "`beam_width` must be a pair of numbers [x, y]; got 7.",
            "The beam width must be two numbers, x and y; got 7.",
        ),
        (
            "something_new",
            7,
            {},
            "`beam_width` has a value this endpoint cannot use (7); /docs says what it takes.",
            "The beam width has a value this endpoint cannot use (7); /docs says what it takes.",
        ),
    ],
)
def test_each_kind_of_error_has_its_own_words_for_each_audience(
    kind: str, value: Any, ctx: dict, api: str, reader: str
) -> None:
    assert sentence(kind, BEAM, value, **ctx) == api
    assert said_to_reader(kind, BEAM, value, **ctx) == reader


def test_a_list_item_is_counted_from_one_beside_its_json_path() -> None:
    assert (
        sentence("less_than_equal", POINT_X, 1.5, le=1)
        == "`points[2][0]` must be at most 1; got 1.5 (point 3's x, counting from 1)."
    )
    assert said_to_reader("less_than_equal", POINT_X, 1.5, le=1) == (
        "Point 3's x must be at most 1; got 1.5."
    )
    y = ("body", "points", 0, 1)
    assert said_to_reader("float_type", y, "a") == "Point 1's y must be a number; got 'a'."
    # an item of a list the page has no noun for is "item k"
    assert sentence("int_type", ("body", "order", 4), "x") == (
        "`order[4]` must be a number; got 'x' (item 5, counting from 1)."
    )
    # the whole point, not a coordinate
    assert said_to_reader("tuple_type", ("body", "points", 1), 3) == (
        "Point 2 must be two numbers, x and y; got 3."
    )


def test_a_list_of_known_items_says_what_it_should_hold() -> None:
    assert sentence("list_type", ("body", "points"), "x") == (
        "`points` must be a list of [x, y] pairs, e.g. [[0.1, 0.2], [0.8, 0.1], [0.5, 0.9]]; "
        "got 'x'."
    )
    assert sentence("list_type", ("body", "values"), 3) == (
        "`values` must be a list of numbers, e.g. [0.6, 0.1, 0.9]; got 3."
    )
    assert said_to_reader("list_type", ("body", "values"), 3) == (
        "The list of values must be a list; got 3."
    )


@pytest.mark.parametrize(
    ("kind", "ctx", "value", "api"),
    [
        ("too_short", {"min_length": 3}, [1, 2], "`values` needs at least 3 items; it has 2."),
        (
            "too_short",
            {"min_length": 3, "actual_length": 1},
            5,
            "`values` needs at least 3 items; it has 1.",
        ),
        ("too_long", {"max_length": 2}, [1, 2, 3], "`values` takes at most 2 items; it has 3."),
        (
            "too_long",
            {"max_length": 2, "actual_length": 9},
            5,
            "`values` takes at most 2 items; it has 9.",
        ),
        (
            "string_too_long",
            {"max_length": 3},
            "abcd",
            "`values` must have at most 3 characters; it has 4.",
        ),
        (
            "string_too_long",
            {"max_length": 3},
            5,
            "`values` must have at most 3 characters; it has more.",
        ),
    ],
)
def test_a_length_error_gives_the_limit_and_the_count(
    kind: str, ctx: dict, value: Any, api: str
) -> None:
    assert sentence(kind, ("body", "values"), value, **ctx) == api


def test_the_body_itself_gets_sentences_about_the_body() -> None:
    body = ("body",)
    assert sentence("missing", body) == "The request needs a JSON body."
    assert sentence("json_invalid", body, error="Expecting value") == (
        "The request body is not valid JSON (Expecting value)."
    )
    assert sentence("json_invalid", body) == "The request body is not valid JSON (parse error)."
    assert sentence("json_type", body) == (
        "The request body must be JSON text: send an object of this endpoint's fields."
    )
    assert sentence("model_attributes_type", body, [1]) == (
        "The request body must be a JSON object of this endpoint's fields (/docs lists them); "
        "got [1]."
    )
    assert sentence("something_new", body, 1) == (
        "The request has a value this endpoint cannot use (1); /docs says what it takes."
    )


def test_a_validators_sentence_is_kept_and_put_in_the_readers_words() -> None:
    error = {
        "type": "value_error",
        "loc": ("body",),
        "msg": "Value error, `beam_width` exceeds `samples`.",
        "ctx": {"error": "`beam_width` must not exceed `samples`."},
    }
    assert error_sentence(error) == "`beam_width` must not exceed `samples`."
    assert error_sentence(error, reader=True) == (
        "The beam width must not exceed the number of samples."
    )
    plain = {"type": "value_error", "loc": ("body", "points", 1), "msg": "it repeats.", "ctx": {}}
    assert error_sentence(plain) == "it repeats."  # not counted from 1: it is the model's words
    assert error_sentence(plain, reader=True) == "It repeats."
    unknown_field = {"type": "value_error", "loc": (), "ctx": {"error": "`odd_thing` is off."}}
    assert error_sentence(unknown_field, reader=True) == "Odd thing is off."


def test_reader_fields_name_the_part_a_reader_sees() -> None:
    assert reader_field(("query", "beam_width")) == "the beam width"
    assert reader_field(("body", "labels", 0)) == "Word 1"
    assert reader_field(("body", "points", 4, 2)) == "Point 5"  # no third coordinate
    assert reader_field(("body", "text", 0)) == "the sentence"  # no items in a sentence
    assert reader_field(("body", "some_field")) == "some field"
    assert reader_field(("body",)) == ""


def test_a_refused_value_is_repeated_short() -> None:
    assert shown("a" * 38) == repr("a" * 38)  # 40 characters with its quotes
    long = "b" * 1000
    assert shown(long) == f"{repr(long)[:24]}… (1,000 characters)"
    listed = list(range(100))
    assert shown(listed) == f"{repr(listed)[:24]}… ({len(repr(listed)):,} characters)"


# --- the handlers, on an app of their own ----------------------------------------------------


class Pair(BaseModel):
    x: int
    y: int
    z: int = 0


@pytest.fixture  # one app per test: mutmut runs only the tests that called a function
def client():
    from fastapi import FastAPI, HTTPException
    from fastapi.exceptions import RequestValidationError
    from fastapi.testclient import TestClient

    from app.compute import BUSY_RETRY_AFTER_S, ComputeStopped
    from app.errors import install_error_handlers
    from app.registry import ModelUnavailable
    from models.errors import InvalidInput

    assert BUSY_RETRY_AFTER_S > 0
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/invalid")
    def invalid() -> None:
        raise InvalidInput("`beam_width` is too wide for `samples`.")

    @app.get("/stopped/{status}")
    def stopped(status: int) -> None:
        raise ComputeStopped(status, "The decode ran out of time.")

    @app.get("/unavailable")
    def unavailable() -> None:
        raise ModelUnavailable("pointer-x", "it is not trained yet")

    @app.get("/teapot")
    def teapot() -> None:
        raise HTTPException(418, "I am a teapot here.")

    @app.get("/crash")
    def crash() -> None:
        raise RuntimeError("secret internals")

    @app.get("/no-errors")
    def no_errors() -> None:
        raise RequestValidationError([])

    @app.post("/pair")
    def pair(body: Pair) -> None:
        return None

    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


def test_a_models_refusal_is_a_422_in_the_words_of_its_audience(client) -> None:
    api = client.get("/invalid")
    assert api.status_code == 422
    assert api.json() == {"detail": "`beam_width` is too wide for `samples`."}
    widget = client.get("/invalid", headers={"HX-Request": "true"})
    assert widget.json() == {"detail": "The beam width is too wide for the number of samples."}
    other = client.get("/invalid", headers={"HX-Request": "false"})
    assert other.json() == api.json()


def test_a_stopped_decode_answers_its_own_status_and_a_503_says_when_to_return(client) -> None:
    from app.compute import BUSY_RETRY_AFTER_S

    busy = client.get("/stopped/503")
    assert busy.status_code == 503
    assert busy.json() == {"detail": "The decode ran out of time."}
    assert busy.headers["Retry-After"] == str(BUSY_RETRY_AFTER_S)
    gone = client.get("/stopped/499")
    assert gone.status_code == 499 and "Retry-After" not in gone.headers


def test_an_unavailable_model_is_a_503_with_its_sentence(client) -> None:
    answer = client.get("/unavailable")
    assert answer.status_code == 503
    assert answer.json() == {
        "detail": "The model “pointer-x” is unavailable: it is not trained yet."
    }
    assert answer.headers["Retry-After"] == "60"


def request_to(path: str, method: str = "GET", headers: dict[str, str] | None = None):
    from starlette.requests import Request

    raw = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    scope = {"type": "http", "method": method, "path": path, "headers": raw, "query_string": b""}
    return Request(scope | {"server": ("testserver", 80), "scheme": "http", "root_path": ""})


def test_an_http_error_keeps_its_own_sentence_and_a_bare_phrase_gets_ours(client) -> None:
    from starlette.exceptions import HTTPException

    from app.compute import BUSY_RETRY_AFTER_S
    from app.errors import http_error, http_error_sentence

    teapot = client.get("/teapot")
    assert (teapot.status_code, teapot.json()) == (418, {"detail": "I am a teapot here."})
    long_path = "/no/such/" + "x" * 80
    assert http_error_sentence(request_to(long_path), HTTPException(404)) == (
        f"There is no endpoint at {long_path[:50]}…; the API's endpoints are listed at /docs "
        "(and in /openapi.json)."
    )
    exactly_60 = "/" + "y" * 59
    assert exactly_60 in http_error_sentence(request_to(exactly_60), HTTPException(404))
    assert http_error_sentence(request_to("/api/x"), HTTPException(400)) == (
        "The request to /api/x cannot be answered (bad request); see /docs."
    )
    assert http_error_sentence(request_to("/x"), HTTPException(499, "Client gone.")) == (
        "Client gone."
    )
    assert http_error_sentence(request_to("/x"), HTTPException(404, "No paper.")) == "No paper."
    busy = http_error(request_to("/x"), HTTPException(503, "Busy."))
    assert busy.status_code == 503 and busy.headers["Retry-After"] == str(BUSY_RETRY_AFTER_S)
    told = http_error(request_to("/x"), HTTPException(503, "Busy.", headers={"Retry-After": "7"}))
    assert told.headers["Retry-After"] == "7"
    plain = http_error(request_to("/x"), HTTPException(404))
    assert "retry-after" not in plain.headers and plain.status_code == 404


def test_a_body_json_cannot_read_is_a_422_that_says_why() -> None:
    from starlette.exceptions import HTTPException

    from app.errors import unparseable_body

    def answer(cause: BaseException | None, status: int = 400):
        exc = HTTPException(status, "There was an error parsing the body")
        exc.__cause__ = cause
        return unparseable_body(exc)

    bad_byte = UnicodeDecodeError("utf-8", b"ab\xff", 2, 3, "invalid start byte")
    assert answer(bad_byte).body == (
        b'{"detail":"The request body is not valid JSON: it is not UTF-8 text (byte 2)."}'
    )
    assert b"nested too deeply; send flat lists of numbers." in answer(RecursionError()).body
    digits = ValueError("Exceeds the limit (4300 digits) for integer string conversion")
    assert b"thousands of digits; send ordinary numbers." in answer(digits).body
    assert b"the server could not parse it." in answer(ValueError("other")).body
    assert answer(bad_byte).status_code == 422
    assert answer(None) is None and answer(bad_byte, status=404) is None


@pytest.mark.parametrize(
    ("content_type", "refused"),
    [
        (None, None),
        ("application/json", None),
        ("Application/JSON; charset=utf-8", None),
        ("application/problem+json", None),
        ("text/plain", "The request body is text/plain; this endpoint takes JSON"),
        ("", "The request body is of no type; this endpoint takes JSON"),
        (
            "application/x-www-form-urlencoded; charset=utf-8",
            "The request body is application/x-www-form-urlencoded; this endpoint takes JSON",
        ),
    ],
)
def test_a_body_sent_as_anything_but_json_is_a_415(
    content_type: str | None, refused: str | None
) -> None:
    import json

    from app.errors import not_json

    headers = {} if content_type is None else {"content-type": content_type}
    answer = not_json(request_to("/api/x", "POST", headers))
    if refused is None:
        assert answer is None
    else:
        assert answer.status_code == 415
        assert json.loads(answer.body)["detail"] == (
            f"{refused}: send it with `Content-Type: application/json`."
        )


def test_a_bug_is_a_500_naming_the_request_id_and_never_the_message(client, caplog) -> None:
    with caplog.at_level("ERROR", logger="papertrace.errors"):
        answer = client.get("/crash")
    (record,) = [r for r in caplog.records if r.name == "papertrace.errors"]
    assert record.getMessage() == "request_id=- unhandled RuntimeError on GET /crash"
    assert record.exc_info[1].args == ("secret internals",)
    assert answer.status_code == 500
    assert "secret" not in answer.text
    assert answer.json()["detail"] == (
        "The server failed on this request; it is logged under the X-Request-ID -. Try again later."
    )


@pytest.mark.parametrize("where", ["body", "query", "path", "header"])
def test_where_a_field_came_from_is_not_part_of_its_name(where: str) -> None:
    loc = (where, "values", 1)
    assert reader_field(loc) == "Value 2"
    assert sentence("int_type", loc, "x") == (
        "`values[1]` must be a number; got 'x' (value 2, counting from 1)."
    )
    assert reader_field((where, "beam_width")) == "the beam width"
    assert reader_field((where,)) == ""


def test_a_field_outside_a_list_or_a_sentence_without_a_full_stop_is_not_counted() -> None:
    from app.errors import counted_from_one

    assert counted_from_one("`beam_width` is off.", ("body", "beam_width")) == (
        "`beam_width` is off."
    )
    assert counted_from_one("`points[1]` is off", ("body", "points", 1)) == "`points[1]` is off"
    assert counted_from_one("`points[1]` is off.", ()) == "`points[1]` is off."
    assert counted_from_one("`a.b` is off.", ("body", "a", "b")) == "`a.b` is off."


def test_a_limit_reads_as_a_reader_writes_it() -> None:
    from app.errors import number_text

    assert number_text(1.0) == "1"
    assert number_text(-3.0) == "-3"
    assert number_text(2.5) == "2.5"
    assert number_text(999_999_999_999_999.0) == "999999999999999"
    assert number_text(1e15) == "1000000000000000.0"  # past this, written as Python writes it
    assert number_text(7) == "7" and number_text(None) == "None"


def test_a_field_path_is_written_as_json_paths_are() -> None:
    from app.errors import field_path

    assert field_path(("body", "points", 2, 0)) == "points[2][0]"
    assert field_path(("body", "model", "name")) == "model.name"
    assert field_path(("header", "x_token")) == "x_token"
    assert field_path(("points", 1)) == "points[1]"
    assert field_path(()) == ""


def test_an_error_without_a_place_or_words_still_gets_a_sentence() -> None:
    assert error_sentence({"type": "value_error", "loc": ("body",)}) == ""
    assert error_sentence({"type": "weird"}) == (
        "The request has a value this endpoint cannot use (None); /docs says what it takes."
    )
    assert error_sentence({}, reader=True) == (
        "The request has a value this endpoint cannot use (None); /docs says what it takes."
    )


def test_a_number_too_long_to_write_is_named_not_written() -> None:
    assert shown(10**5000) == "a number with thousands of digits"


def test_every_problem_after_the_first_is_counted(client) -> None:
    one = client.post("/pair", json={"x": "a", "y": 1})
    assert one.json() == {"detail": "`x` must be a number; got 'a'."}
    two = client.post("/pair", json={"x": "a", "y": "b"})
    assert two.json()["detail"].endswith("got 'a'. (1 more problem after that.)")
    three = client.post("/pair", json={"x": "a", "y": "b", "z": "c"})
    assert three.json()["detail"].endswith("got 'a'. (2 more problems after that.)")
    assert client.get("/no-errors").json() == {"detail": "The request is not valid."}


def test_a_405_names_the_methods_the_routes_answer_or_what_the_raiser_said() -> None:
    from fastapi import FastAPI
    from starlette.exceptions import HTTPException

    from app.errors import method_not_allowed

    bare = FastAPI()  # no route: a static mount's own Allow stands, or nothing
    request = request_to("/static/x", "PUT")
    request.scope["app"] = bare
    told = method_not_allowed(request, HTTPException(405, headers={"Allow": "GET, HEAD"}))
    assert told.headers["Allow"] == "GET, HEAD"
    assert told.body == b'{"detail":"PUT is not allowed here; this address answers GET, HEAD."}'
    silent = method_not_allowed(request, HTTPException(405))
    assert silent.headers["Allow"] == ""


def test_a_path_of_61_characters_is_cut_in_the_404_sentence() -> None:
    from starlette.exceptions import HTTPException

    from app.errors import http_error_sentence

    path = "/" + "z" * 60
    assert f"at {path[:50]}…;" in http_error_sentence(request_to(path), HTTPException(404))
    assert http_error_sentence(request_to("/x"), HTTPException(499, "")) == ""


def test_a_field_list_that_is_empty_names_nothing() -> None:
    assert reader_field(()) == ""
