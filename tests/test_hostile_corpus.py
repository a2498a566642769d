"""The hostile corpus (tests/hostile_corpus.py) against the site as served: no 5xx, and every
refusal a sentence of ours (issue 39, "No 500 from any input").

A refusal's sentence names the field and what to change; a widget's (`HX-Request`) counts list
items from 1, as the page does, and an API client's gives the JSON path and the count from 1.
No answer passes on pydantic's or Python's own wording, nor Starlette's bare status phrases.
One test per endpoint, each listing every probe that failed and why.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections import defaultdict
from collections.abc import Iterator

import httpx
import pytest
from fastapi.testclient import TestClient

from app.observability import ACCESS_LOGGER
from tests.hostile_corpus import HTMX, Probe, corpus

# Wording that is pydantic's, Python's or Starlette's, never ours.
FOREIGN_WORDING = [
    "Input should be",
    "invalid literal for int()",
    "Exceeds the limit",
    "set_int_max_str_digits",
    "Field required",
    "value is not a valid",
    "Value error,",
    "Extra inputs are not permitted",
    "String should have",
    "List should have",
    "Tuple should have",
    "Dictionary should have",
    "should be a valid",
    "validation error for",
    "could not convert string to float",
    "Traceback (most recent call last)",
    "Malformed range header",
    "Only support bytes range",
    "Range header:",
    "There was an error parsing the body",
    '{"detail":"Not Found"}',
    '{"detail":"Method Not Allowed"}',
]
# Starlette's default `detail`: a status's bare phrase is not a sentence.
BARE_PHRASES = {"Not Found", "Method Not Allowed", "Bad Request", "Range Not Satisfiable"}
# A sentence of ours says what to do: one of these words is in it.
REMEDY = re.compile(
    r"\b(must|needs?|give|remove|send|sends|takes?|use|choose|try|wait|ask|is not|are not|"
    r"only|at most|at least|one of|listed|change|move|type|write|answers|cannot|set|leave|"
    r"allowed)\b",
    re.IGNORECASE,
)
# Probes whose answer is still wrong, each with what is wrong and whose code says it; the test
# fails when one of them is answered right (then it leaves this list).
KNOWN: dict[str, str] = {
    "board: point 3 a unicode digit": "app.pointer.requests.from_text's sentence (“The board "
    "got a coordinate that is not a number”) does not say which point",
}
PROBES = corpus()
BY_FAMILY: dict[str, list[Probe]] = defaultdict(list)
for _probe in PROBES:
    BY_FAMILY[_probe.family].append(_probe)


def corpus_app():
    """The site as served, without the rate limit (the corpus is one fast client) and with a
    deadline generous enough for a busy test machine."""
    limits = {"PAPERTRACE_RATE_LIMIT": "0", "PAPERTRACE_COMPUTE_DEADLINE_S": "60"}
    saved = {name: os.environ.get(name) for name in limits}
    os.environ.update(limits)
    try:
        from app.main import create_app

        return create_app()
    finally:
        for name, value in saved.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value


@pytest.fixture(scope="module")
def site() -> Iterator[TestClient]:
    access_log = logging.getLogger(ACCESS_LOGGER)
    level = access_log.level
    access_log.setLevel(logging.WARNING)
    with TestClient(corpus_app(), raise_server_exceptions=False) as client:
        yield client
    access_log.setLevel(level)


def reader_words(field: str) -> list[str]:
    """How a widget's sentence may name `field`: its reader's name, or its own words."""
    from app.errors import READER_FIELDS, READER_ITEMS

    words = [field, field.replace("_", " ")]
    if field in READER_FIELDS:
        words.append(READER_FIELDS[field].removeprefix("the "))
    if field in READER_ITEMS:
        words.append(READER_ITEMS[field])
    return words


def problems(probe: Probe, answer: httpx.Response) -> list[str]:
    """What is wrong with `answer` to `probe`; empty when nothing is."""
    found: list[str] = []
    status, text = answer.status_code, answer.text
    if status >= 500 and not (status == 503 and "is unavailable" in text):
        found.append(f"status {status}: {text[:200]}")
    if probe.expect and status not in probe.expect:
        found.append(f"status {status}, expected one of {probe.expect}: {text[:200]}")
    for words in FOREIGN_WORDING:
        if words.lower() in text.lower():
            found.append(f"foreign wording {words!r}: {excerpt(text, words)}")
    if status == 503 and "retry-after" not in answer.headers:
        found.append("a 503 without Retry-After")
    if status == 416 and not re.fullmatch(r"bytes \*/\d+", answer.headers.get("content-range", "")):
        found.append(f"a 416 without Content-Range: bytes */size ({answer.headers})")
    if status < 400:
        return found
    if not answer.headers.get("content-type", "").startswith("application/json"):
        if probe.path.startswith("/api/") or status not in (404, 405):
            found.append(f"a {status} that is not JSON: {text[:200]}")
        return found
    try:
        detail = answer.json()["detail"]
    except (ValueError, KeyError, TypeError):
        return [*found, f"a {status} without a detail: {text[:200]}"]
    if not isinstance(detail, str):
        return [*found, f"a {status} whose detail is not a sentence: {text[:200]}"]
    found += sentence_problems(probe, detail)
    return found


def sentence_problems(probe: Probe, detail: str) -> list[str]:
    found = []
    if detail in BARE_PHRASES or len(detail) < 20:
        found.append(f"not a sentence: {detail!r}")
    if not detail.rstrip(")").endswith((".", "?")):
        found.append(f"does not end as a sentence: {detail!r}")
    if not REMEDY.search(detail):
        found.append(f"says nothing to do: {detail!r}")
    reader = probe.headers.get("HX-Request") == HTMX["HX-Request"]
    if probe.field is not None:
        names = reader_words(probe.field) if reader else [probe.field]
        if not any(name.lower() in detail.lower() for name in names):
            found.append(f"does not name {probe.field!r}: {detail!r}")
    if probe.item is not None and not re.search(rf"\b{probe.item + 1}\b", detail):
        found.append(f"does not count item {probe.item} from 1 ({probe.item + 1}): {detail!r}")
    if reader and re.search(r"`|\w\[\d", detail):
        found.append(f"a reader's sentence with a JSON path: {detail!r}")
    return found


def excerpt(text: str, words: str) -> str:
    at = text.lower().find(words.lower())
    return text[max(0, at - 80) : at + 120].replace("\n", " ")


def test_the_corpus_is_large_and_covers_every_endpoint() -> None:
    assert len(PROBES) >= 300
    families = set(BY_FAMILY)
    for endpoint in [
        "POST /api/pointer/hull",
        "POST /api/pointer/tsp",
        "POST /api/pointer/sort",
        "GET /api/pointer/hull/board/hull",
        "GET /api/pointer/models",
        "POST /api/entmax",
        "GET /api/entmax/figure",
        "POST /api/seq2seq/inflect",
        "POST /api/seq2seq/translate",
        "GET /api/seq2seq/inflect/figure",
        "GET /api/seq2seq/translate/figure",
        "GET /api/seq2seq/inflect/cells",
        "GET /api/seq2seq/options",
        "GET /api/routing/attention",
        "GET /api/routing/reinforce",
        "GET /papers/pointer-networks",
        "GET /papers/sparse-seq2seq",
        "GET /papers/attention-routing",
        "GET /static/css/site.css",
    ]:
        assert endpoint in families, endpoint


@pytest.mark.parametrize("family", sorted(BY_FAMILY), ids=lambda f: f[:70])
def test_no_server_error_and_every_refusal_is_our_sentence(site: TestClient, family: str) -> None:
    failures, known = [], []
    for probe in BY_FAMILY[family]:
        answer = site.request(**probe.request())
        found = problems(probe, answer)
        if probe.name in KNOWN:
            known += [probe.name] if found else []
            found = [] if found else [f"answered right now: remove it from KNOWN ({answer.text})"]
        failures += [f"{probe.name}: {problem}" for problem in found]
    assert not failures, "\n".join(failures[:40]) + f"\n({len(failures)} in all)"
    if known:
        pytest.xfail("; ".join(f"{name}: {KNOWN[name]}" for name in known))


if __name__ == "__main__":  # a quick report: python tests/test_hostile_corpus.py
    import collections
    import time

    logging.getLogger(ACCESS_LOGGER).setLevel(logging.WARNING)
    statuses: collections.Counter[int] = collections.Counter()
    failed = 0
    started = time.perf_counter()
    with TestClient(corpus_app(), raise_server_exceptions=False) as client:
        for probe in PROBES:
            answer = client.request(**probe.request())
            statuses[answer.status_code] += 1
            for problem in problems(probe, answer):
                failed += 1
                print(json.dumps(f"{probe.family} | {probe.name}: {problem}")[1:-1][:400])
    print(
        f"{len(PROBES)} probes, {failed} problems, statuses {dict(sorted(statuses.items()))}, "
        f"{time.perf_counter() - started:.0f} s"
    )
