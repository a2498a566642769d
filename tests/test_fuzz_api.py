"""Fuzzing the HTTP API from its own OpenAPI schema, and property tests on the validators.

Schemathesis generates requests for every operation in /openapi.json, valid and invalid, and
checks that no answer is a 5xx (bar the documented 503 of a model this checkout lacks) and every
answer matches the schema (status code, content type, body). CI runs a few examples per
operation; the full run is

    FUZZ_EXAMPLES=100 .venv/bin/python -m pytest tests/test_fuzz_api.py -q -s

(about 100 per operation and generation mode, over 1,000 requests; `-s` prints the count).
"""

from __future__ import annotations

import json
import logging
import math
import os
import string
from collections import Counter
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import jsonschema_rs
import numpy as np
import pytest
import schemathesis
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from app.entmax.requests import EntmaxRequest
from app.errors import error_sentence
from app.limits import RateLimiter
from app.observability import ACCESS_LOGGER
from app.pointer.requests import MAX_INPUTS, MIN_POINTS, PointsRequest, ValuesRequest
from app.routing.requests import CITY_TEXT, ReinforceFigure
from app.seq2seq.requests import (
    MAX_LEMMA_CHARS,
    MAX_SENTENCE_CHARS,
    MAX_SENTENCE_WORDS,
    InflectRequest,
    TranslateRequest,
)
from models.checkpoints import CHECKPOINT_DIR, read_manifest
from models.errors import InvalidInput
from models.pointer_run import SERVED as SERVED_POINTER
from models.pointer_run import decoders_of
from models.pointer_run import resolve as pointer_resolve
from models.seq2seq_run import SERVED as SERVED_SEQ2SEQ
from models.seq2seq_run import check_readable, lemma_as_learned
from models.seq2seq_run import resolve as seq2seq_resolve
from models.tasks.inflection import LANGUAGES
from models.tasks.inflection_vocab import InflectionVocab
from models.tasks.translation import entry_corpus
from models.tasks.translation_tokenizers import load_tokenizers
from models.tasks.tsp import validate_points

EXAMPLES_PER_OPERATION = int(os.environ.get("FUZZ_EXAMPLES", "6"))
REQUESTS: Counter[str] = Counter()


@schemathesis.check
def no_server_error(ctx: Any, response: Any, case: schemathesis.Case) -> None:
    """Like schemathesis' not_a_server_error, except for the documented 503 of a model that
    is not trained (or not verified) in this checkout: that is the promised answer, not a bug.
    The run's summary counts those 503s."""
    if response.status_code == 503 and "is unavailable" in response.text:
        return
    if response.status_code >= 500:
        raise AssertionError(f"server error {response.status_code}: {response.text[:300]}")


@schemathesis.check
def invalid_data_rejected(ctx: Any, response: Any, case: schemathesis.Case) -> None:
    """schemathesis' negative_data_rejection, with the body limit's 413 counted as the
    rejection it is: a generated invalid body over 64 KB is refused before it is parsed."""
    if response.status_code == 413:
        return
    negative_data_rejection(ctx, response, case)


CHECKS = [
    no_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    invalid_data_rejected,
]


def fuzzed_app() -> Any:
    """The site as served (content/ and checkpoints/), without the rate limit and with a
    generous compute deadline: a fuzzer is one very fast client whose largest requests may take
    over 2 s on a busy CI machine, and a 429 or a deadline 503 would hide the answers under
    test (tests/test_hardening_requests.py tests both limits)."""
    limits = {"PAPERTRACE_RATE_LIMIT": "0", "PAPERTRACE_COMPUTE_DEADLINE_S": "60"}
    os.environ.update(limits)
    try:
        from app.main import create_app

        return create_app()
    finally:
        for name in limits:
            del os.environ[name]


@pytest.fixture(scope="module")
def api_schema() -> Any:
    """Built when the fuzz test runs, not when the suite is collected: every test process
    collects this file, only one runs it (its app and strategies cost ~8 s of CPU)."""
    return schemathesis.openapi.from_asgi("/openapi.json", fuzzed_app())


schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.fixture(autouse=True)
def node_id_for_subtests(request: pytest.FixtureRequest) -> None:
    """schemathesis' lazy loader names each operation's subtest by rewriting the test node's
    `_nodeid`, which pytest 9 no longer keeps as an attribute: give it one to read."""
    request.node._nodeid = request.node.nodeid


@pytest.fixture(scope="module", autouse=True)
def report_request_count() -> Iterator[None]:
    """Prints how many requests the fuzzer sent, by status; the access log (one line per
    request) is quiet meanwhile."""
    access_log = logging.getLogger(ACCESS_LOGGER)
    level = access_log.level
    access_log.setLevel(logging.WARNING)
    yield
    access_log.setLevel(level)
    total = sum(REQUESTS.values())
    per_status = ", ".join(f"{status}: {n}" for status, n in sorted(REQUESTS.items()))
    print(f"\nschemathesis sent {total} requests ({per_status})")


@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_answers_within_its_schema(case: schemathesis.Case) -> None:
    response = case.call()
    REQUESTS[str(response.status_code)] += 1
    case.validate_response(response, checks=CHECKS)


# ---- property tests on the validators ----

JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda children: (
        st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=10), children, max_size=6)
    ),
    max_leaves=30,
)
REQUEST_MODELS: list[type[BaseModel]] = [
    EntmaxRequest,
    PointsRequest,
    ValuesRequest,
    InflectRequest,
    TranslateRequest,
]
FIELD_NAMES = ["scores", "alpha", "labels", "points", "values", "decoder", "beam_width"]
FIELD_NAMES += ["model", "lemma", "language", "features", "text", "inference_alpha"]


# pydantic's and Python's own words, which no sentence of ours passes on
FOREIGN_WORDING = [
    "Input should be",
    "Field required",
    "invalid literal",
    "should have",
    "Value error",
]
FOREIGN_WORDING += ["Extra inputs", "Unable to parse", "value is not a valid", "Exceeds the limit"]


@pytest.mark.parametrize("model", REQUEST_MODELS, ids=lambda m: m.__name__)
@given(payload=st.dictionaries(st.sampled_from(FIELD_NAMES), JSON_VALUES, max_size=6) | JSON_VALUES)
@settings(max_examples=100, deadline=None)
def test_every_rejection_becomes_a_sentence(model: type[BaseModel], payload: Any) -> None:
    """Whatever JSON arrives (an object of the fields or any other value), a request model
    either accepts it or each of its errors turns into a sentence of ours, for an API client
    and for a reader alike (the 422 handler never fails itself, and never passes on
    pydantic's wording)."""
    try:
        model.model_validate_json(json.dumps(payload))
    except ValidationError as exc:
        for error in exc.errors():
            for reader in (False, True):
                sentence = error_sentence(dict(error), reader=reader)
                assert isinstance(sentence, str) and len(sentence) > 3
                assert not any(words in sentence for words in FOREIGN_WORDING), sentence
                assert len(sentence) < 600, sentence


# ---- the schema states what the server enforces ----
# Schemathesis (above, and `schemathesis run … --checks all`) finds a disagreement between the
# schema and the server by chance; these state, for the limits that come from the trained models
# (which cells and letters a language has, which characters a sentence may use, which model
# takes which α and decoder), that a request the schema calls valid is one the server takes.


def validator(model: type[BaseModel]) -> Any:
    """The schema's validator as schemathesis uses it (jsonschema-rs: Rust's regex engine)."""
    return jsonschema_rs.validator_for(model.model_json_schema())


def inflection_accepts(payload: dict[str, Any]) -> bool:
    """What POST /api/seq2seq/inflect does with the lemma, language and cell before decoding."""
    try:
        request = InflectRequest.model_validate(payload)
        vocab = InflectionVocab.load()
        lemma, _ = lemma_as_learned(SimpleNamespace(vocab=vocab), request.language, request.lemma)
        vocab.encode_source(request.language, request.features, lemma)
    except (ValidationError, InvalidInput):
        return False
    return True


LEMMAS = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"]) | st.sampled_from("aAßéKİ \t"),
    max_size=44,
)


@given(
    lemma=LEMMAS,
    language=st.sampled_from(list(LANGUAGES) + ["xx"]),
    cell=st.sampled_from(["V;PST", "N;PL", "N;NOM;PL", "V;IND;PRS;1;SG", "ADJ;CMPR", "x"]),
)
@settings(max_examples=300, deadline=None)
def test_the_inflection_schema_takes_a_lemma_exactly_when_the_server_does(
    lemma: str, language: str, cell: str
) -> None:
    payload = {"lemma": lemma, "language": language, "features": cell}
    assert validator(InflectRequest).is_valid(payload) == inflection_accepts(payload), payload


@given(data=st.data())
@settings(max_examples=100, deadline=None)
def test_every_lemma_the_schema_describes_is_one_the_server_takes(data: st.DataObject) -> None:
    branch = data.draw(st.sampled_from(InflectRequest.model_json_schema()["oneOf"]))
    properties = branch["properties"]
    payload = {
        "language": properties["language"]["const"],
        "features": data.draw(st.sampled_from(properties["features"]["enum"])),
        "lemma": data.draw(st.from_regex(properties["lemma"]["pattern"])),
    }
    assert validator(InflectRequest).is_valid(payload)
    assert inflection_accepts(payload), payload


@given(data=st.data())
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
def test_every_sentence_the_schema_describes_is_one_the_models_read(data: st.DataObject) -> None:
    text_schema = TranslateRequest.model_json_schema()["properties"]["text"]
    text = data.draw(
        st.from_regex(text_schema["pattern"]).filter(lambda t: len(" ".join(t.split())) <= 200)
    )
    request = TranslateRequest(text=text)  # the sentence's size
    for source in sentence_tokenizers():
        check_readable(SimpleNamespace(source_sp=source), request.text)  # its characters


def sentence_tokenizers() -> list[Any]:
    manifest = read_manifest()
    names = SERVED_SEQ2SEQ["translation"].values()
    return [load_tokenizers(CHECKPOINT_DIR, entry_corpus(manifest[name]))[0] for name in names]


ALPHAS = [0.5, 1, 1 + 1e-7, 1 + 2e-6, 1.25, 1.5, 1.5 - 1e-9, 2, 2.0000011, 3]


def around(value: float) -> list[float]:
    """`value` and its neighbouring floats: where a schema's bound and a tolerance part."""
    return [math.nextafter(value, -math.inf), value, math.nextafter(value, math.inf)]


@pytest.mark.parametrize("task", ["inflection", "translation"])
def test_the_schema_takes_an_alpha_exactly_when_the_server_does(task: str) -> None:
    request = InflectRequest if task == "inflection" else TranslateRequest
    schema = request.model_json_schema()["properties"]["alpha"]
    bounds = [b[key] for b in schema["anyOf"] for key in ("minimum", "maximum")]
    for alpha in ALPHAS + [a for bound in bounds for a in around(bound)]:
        try:
            seq2seq_resolve(task, alpha)  # the trained α, within the server's tolerance
            served = True
        except InvalidInput:
            served = False
        assert jsonschema_rs.validator_for(schema).is_valid(alpha) == served, alpha


@pytest.mark.parametrize("model", [None, *SERVED_POINTER["sort"], "pointer-hull"])
@pytest.mark.parametrize("alpha", [None, 1.0, 1.5, 1 + 1e-9, 1 + 2e-9, 1.5 - 1e-12])
@pytest.mark.parametrize("decoder", ["greedy", "beam", "sample", "symmetric"])
def test_the_sort_schema_takes_a_model_alpha_and_decoder_exactly_when_the_server_does(
    model: str | None, alpha: float | None, decoder: str
) -> None:
    payload = {"values": [0.3, 0.1], "model": model, "alpha": alpha, "decoder": decoder}
    try:
        _, name = pointer_resolve("sort", alpha, model)
        served = decoder in decoders_of(name)
    except InvalidInput:
        served = False
    assert validator(ValuesRequest).is_valid(payload) == served, payload


@given(
    cities=st.lists(st.from_regex(CITY_TEXT), min_size=MIN_POINTS, max_size=MAX_INPUTS, unique=True)
)
@settings(max_examples=100, deadline=None)
def test_every_city_list_the_routing_schema_describes_is_one_the_server_takes(
    cities: list[str],
) -> None:
    schema = ReinforceFigure.model_json_schema()["properties"]["points"]
    assert jsonschema_rs.validator_for(schema).is_valid(cities)
    figure = ReinforceFigure.model_validate({"points": cities})
    validate_points(np.array(figure.points))  # distinct, and far enough apart


COORDINATES = st.floats(0, 1, allow_nan=False).map(lambda v: round(v, 2))


@given(points=st.lists(st.tuples(COORDINATES, COORDINATES), min_size=3, max_size=100))
def test_points_are_accepted_exactly_when_distinct(points: list[tuple[float, float]]) -> None:
    distinct = len(set(points)) == len(points)
    try:
        PointsRequest(points=points)
        assert distinct
    except ValidationError as exc:
        assert not distinct
        assert "move or remove one of them" in error_sentence(dict(exc.errors()[0]))


WORDS = st.text(string.ascii_letters + "äöü", min_size=1, max_size=12)
SPACES = st.sampled_from([" ", "  ", "\t", "\n"])


@given(words=st.lists(WORDS, max_size=40), gap=SPACES)
def test_a_sentence_is_accepted_within_its_word_and_character_limits(
    words: list[str], gap: str
) -> None:
    text = gap.join(words)
    normalised = " ".join(words)
    fits = 1 <= len(words) <= MAX_SENTENCE_WORDS and len(normalised) <= MAX_SENTENCE_CHARS
    try:
        request = TranslateRequest(text=f" {text} ")
        assert fits and request.text == normalised
    except ValidationError:
        assert not fits


@given(lemma=st.text(string.ascii_letters + " \t", max_size=MAX_LEMMA_CHARS + 5))
def test_a_lemma_is_one_word_of_bounded_length(lemma: str) -> None:
    word = lemma.strip()
    fits = 1 <= len(word) <= MAX_LEMMA_CHARS and not any(c.isspace() for c in word)
    try:
        request = InflectRequest(lemma=lemma, language="en", features="V;PST")
        assert fits and request.lemma == word
    except ValidationError:
        assert not fits


@given(scores=st.integers(1, 20), labels=st.integers(0, 25))
def test_entmax_wants_one_label_per_score(scores: int, labels: int) -> None:
    try:
        EntmaxRequest(scores=[0.0] * scores, alpha=1.5, labels=["w"] * labels)
        assert labels == scores
    except ValidationError:
        assert labels != scores


# ---- property tests on the rate limiter ----

ARRIVALS = st.lists(
    st.tuples(st.floats(0, 2, allow_nan=False), st.sampled_from("ab")), min_size=1, max_size=200
)


@given(
    arrivals=ARRIVALS,
    rate=st.floats(0.5, 100, allow_nan=False),
    burst=st.integers(1, 50),
)
def test_no_client_gets_more_than_burst_plus_rate_times_elapsed(
    arrivals: list[tuple[float, str]], rate: float, burst: int
) -> None:
    now = [0.0]
    limiter = RateLimiter(rate, burst, clock=lambda: now[0])
    allowed: dict[str, list[float]] = {"a": [], "b": []}
    for gap, client in arrivals:
        now[0] += gap
        if limiter.acquire(client) == 0.0:
            allowed[client].append(now[0])
    for times in allowed.values():
        for i, start in enumerate(times):
            for j in range(i, len(times)):
                # requests allowed in [start, times[j]]
                assert j - i + 1 <= burst + rate * (times[j] - start) + 1e-6


@given(rate=st.floats(0.5, 100, allow_nan=False), burst=st.integers(1, 20))
def test_waiting_the_advertised_time_is_enough(rate: float, burst: int) -> None:
    now = [0.0]
    limiter = RateLimiter(rate, burst, clock=lambda: now[0])
    while (wait := limiter.acquire("a")) == 0.0:
        pass
    assume(wait > 0)
    now[0] += wait * (1 + 1e-9)
    assert limiter.acquire("a") == 0.0
