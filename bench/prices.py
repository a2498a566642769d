"""One price list: every endpoint that runs a model, its heaviest allowed requests, their CPU
time beside their price in tokens.

    .venv/bin/python bench/prices.py                  # every case, 3 runs each (the median)
    .venv/bin/python bench/prices.py --runs 1 --only seq2seq page

A token is what app/compute.py calls about 40 ms of one core. For each case the request is
validated by its endpoint's request model and priced with its `cost()` (a page: the tokens its
render runs for the states in its address, app.widgets' `WidgetRenderer.plan`), then sent
through the app in-process (TestClient, after one warm-up run of the same request) and timed with
`time.process_time()`: the CPU of the whole process, every thread, so the background trainings
and other load on the machine do not count, but the HTTP layer, validation and drawing do.
Fragments are asked for as htmx does (`HX-Request`), so the drawing is measured too.

Columns: tokens (the price), CPU ms (median of `--runs`), ms per token (per the one token a
request always takes, for a page that runs nothing), and the bytes answered.
tests/test_prices.py asserts, per endpoint, that the CPU of its heaviest case is within a
constant factor of its price (HEAVIEST below is the list both read).
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
warnings.filterwarnings("ignore", message=".*httpx.*")

from bench.page_gate import LEMMA, POINTS, TEXT, VALUES  # noqa: E402

TOKEN_MS = 40.0  # app/compute.py: a token is about 40 ms of one core
MAX_POINTS = [[float(x) for x in p.split(",")] for p in POINTS.split(";")]
MAX_VALUES = [float(v) for v in VALUES.split(",")]
SENTENCE_512 = " ".join(f"w{i}" for i in range(512))
SCORES_512 = [round(((i * 37) % 101) / 25 - 2, 3) for i in range(512)]
HX = {"HX-Request": "true"}


@dataclass(frozen=True)
class Case:
    """One request: `endpoint` is the route as the API documents it; `schema` the request
    model that prices it (None: a page, priced by its plan; "door": priced by the door alone,
    one token, as an endpoint with no `cost()` is)."""

    endpoint: str
    label: str
    method: str
    path: str
    schema: Any = None
    body: dict[str, Any] | None = None
    params: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=lambda: dict(HX))
    extra: int = 0  # tokens the route adds to its request's price (a PNG's rasterising)

    def payload(self) -> dict[str, Any]:
        return self.body if self.body is not None else dict(self.params or {})

    def fresh(self, run: int) -> Case:
        """The same request with `run` as its seed where it has one: an answer the app keeps
        for a moment (a board's, app/answer_cache.py) would be measured, not computed."""
        if self.body is not None and "seed" in self.body:
            return replace(self, body={**self.body, "seed": run})
        if self.params is not None:
            seeds = [k for k in self.params if k == "seed" or k.endswith("-seed")]
            return replace(self, params={**self.params, **dict.fromkeys(seeds, str(run))})
        return self


def pointer_cases() -> Iterator[Case]:
    from app.pointer.requests import PointsBoard, PointsRequest, ValuesBoard, ValuesRequest

    decoders = (
        ("256 samples", {"decoder": "sample", "samples": 256}),
        ("beam 16", {"decoder": "beam", "beam_width": 16}),
        ("greedy", {"decoder": "greedy"}),
    )
    for task, field_name, inputs, models in (
        ("hull", "points", MAX_POINTS, (None,)),
        ("tsp", "points", MAX_POINTS, ("pointer-tsp", "attention-routing-tsp20")),
        ("sort", "values", MAX_VALUES, (None, "pointer-sort-entmax15")),
    ):
        for model in models:
            named = {"model": model} if model else {}
            offered = list(decoders)
            if model == "attention-routing-tsp20":
                offered = [("symmetric", {"decoder": "symmetric"}), *offered[::2]]
                offered = [d for d in offered if d[1]["decoder"] != "beam"]
            for label, decoder in offered:
                body = {field_name: inputs, **decoder, **named, "seed": 0}
                about = f"100 {field_name}, {label}" + (f", {model}" if model else "")
                schema = ValuesRequest if task == "sort" else PointsRequest
                yield Case(
                    f"POST /api/pointer/{task}",
                    about,
                    "POST",
                    f"/api/pointer/{task}",
                    schema,
                    body=body,
                )
                text = ";".join(
                    ",".join(f"{c:g}" for c in i) if isinstance(i, list) else f"{i:g}"
                    for i in inputs
                )
                params = {field_name: text, **{k: str(v) for k, v in decoder.items()}, **named}
                params["seed"] = "0"
                board = ValuesBoard if task == "sort" else PointsBoard
                yield Case(
                    f"GET /api/pointer/{task}/board/{{key}}",
                    about,
                    "GET",
                    f"/api/pointer/{task}/board/{task}",
                    board,
                    params=params,
                )


def seq2seq_cases() -> Iterator[Case]:
    from app.seq2seq.requests import (
        InflectFigure,
        InflectRequest,
        TranslateFigure,
        TranslateRequest,
    )

    lemma = {"lemma": LEMMA, "language": "en", "features": "V;PST"}
    yield Case(
        "POST /api/seq2seq/inflect",
        "40-character lemma, beam 16",
        "POST",
        "/api/seq2seq/inflect",
        InflectRequest,
        body={**lemma, "beam_width": 16},
    )
    yield Case(
        "POST /api/seq2seq/translate",
        "200 characters, beam 16",
        "POST",
        "/api/seq2seq/translate",
        TranslateRequest,
        body={"text": TEXT, "beam_width": 16},
    )
    for mode in ("trained", "inference"):
        compare = {"beam_width": "16", "compare": "1", "mode": mode}
        yield Case(
            "GET /api/seq2seq/inflect/figure",
            f"40 characters, beam 16, compare, {mode}",
            "GET",
            "/api/seq2seq/inflect/figure",
            InflectFigure,
            params={**lemma, **compare},
        )
        yield Case(
            "GET /api/seq2seq/translate/figure",
            f"200 characters, beam 16, compare, {mode}",
            "GET",
            "/api/seq2seq/translate/figure",
            TranslateFigure,
            params={"text": TEXT, **compare},
        )


def entmax_cases() -> Iterator[Case]:
    for alpha in (1.0, 1.5, 2.0, 10.0):
        yield Case(
            "POST /api/entmax",
            f"512 scores, α = {alpha:g}",
            "POST",
            "/api/entmax",
            "door",
            body={"scores": SCORES_512, "alpha": alpha},
        )
    scores = [f"{s:g}" for s in SCORES_512]  # one query value per score, as the form sends
    yield Case(
        "GET /api/entmax/figure",
        "512 words, α = 1.5",
        "GET",
        "/api/entmax/figure",
        "door",
        params={"text": SENTENCE_512, "scores": scores, "alpha": "1.5"},
    )


def routing_cases() -> Iterator[Case]:
    from app.routing.requests import AttentionFigure, ReinforceFigure

    yield Case(
        "GET /api/routing/attention",
        "100 cities",
        "GET",
        "/api/routing/attention",
        AttentionFigure,
        params={"points": POINTS, "city": "100"},
    )
    yield Case(
        "GET /api/routing/reinforce",
        "100 cities, 64 samples",
        "GET",
        "/api/routing/reinforce",
        ReinforceFigure,
        params={"points": POINTS, "samples": "64"},
    )


def page_cases() -> Iterator[Case]:
    """The heaviest state each page render runs (what its plan lets through: every figure at
    its allowance) and the heaviest address of issue 39, whose figures draw their examples."""
    from bench.page_gate import ROUTING, SEQ2SEQ

    for label, path in (("issue 39's heavy address", SEQ2SEQ), ("100 cities everywhere", ROUTING)):
        slug, _, address = path.partition("?")
        query = dict(parse_qsl(address))
        yield Case(
            f"GET {slug}",
            label,
            "GET",
            slug,
            None,
            params=query,
            headers={},
        )
    lemma = {"inflect.lemma": LEMMA, "inflect.language": "en", "inflect.features": "V;PST"}
    drawn = {
        **lemma,
        "inflect.beam_width": "10",
        "translate.text": TEXT,
        "translate.beam_width": "2",
        "entmax-text": SENTENCE_512,
    }
    yield Case(
        "GET /papers/sparse-seq2seq",
        "every figure's state at its allowance",
        "GET",
        "/papers/sparse-seq2seq",
        None,
        params=drawn,
        headers={},
    )
    boards = {f"{key}-points": POINTS for key in ("hull", "tsp")} | {"sort-values": VALUES}
    boards |= {f"{key}-seed": "0" for key in ("hull", "tsp", "sort")}
    yield Case(
        "GET /papers/pointer-networks",
        "3 boards × 100 inputs, greedy",
        "GET",
        "/papers/pointer-networks",
        None,
        params=boards,
        headers={},
    )


def export_cases() -> Iterator[Case]:
    """A figure taken away as PNG (app/figure_export.py: the figure's decode, its SVG and the
    SVG rendered on the server), the heaviest state of each family's figure."""
    from app.figure_export import PNG_TOKENS
    from app.pointer.requests import PointsBoard
    from app.routing.requests import AttentionFigure
    from app.seq2seq.requests import TranslateFigure

    compare = {"text": TEXT, "beam_width": "16", "compare": "1"}
    scores = [f"{s:g}" for s in SCORES_512]
    for endpoint, label, schema, params in (
        (
            "/api/pointer/hull/figure.png",
            "100 points, beam 16",
            PointsBoard,
            {"points": POINTS, "decoder": "beam", "beam_width": "16"},
        ),
        (
            "/api/seq2seq/translate/figure.png",
            "200 characters, beam 16, compare",
            TranslateFigure,
            compare,
        ),
        ("/api/routing/attention.png", "100 cities", AttentionFigure, {"points": POINTS}),
        (
            "/api/entmax/figure.png",
            "512 words",
            "door",
            {"text": SENTENCE_512, "scores": scores, "alpha": "1.5"},
        ),
    ):
        yield Case(
            f"GET {endpoint}",
            label,
            "GET",
            endpoint,
            schema,
            params=params,
            headers={},
            extra=PNG_TOKENS,
        )


FAMILIES: dict[str, Callable[[], Iterator[Case]]] = {
    "pointer": pointer_cases,
    "seq2seq": seq2seq_cases,
    "entmax": entmax_cases,
    "routing": routing_cases,
    "page": page_cases,
    "export": export_cases,
}


def price(app: Any, case: Case) -> int:
    """The case's tokens, from its request model (a page: its plan)."""
    if case.schema == "door":
        return 1 + case.extra
    if case.schema is not None:
        return case.schema.model_validate(case.payload()).cost() + case.extra
    from app.pages import page_tokens

    return page_tokens(app, case.path, case.params or {})


@contextmanager
def measuring_app() -> Iterator[Any]:
    """The site in-process with no rate limit and a deadline far off: this measures CPU, it
    enforces nothing."""
    settings = {
        "PAPERTRACE_RATE_LIMIT": "0",
        "PAPERTRACE_COMPUTE_DEADLINE_S": "120",
        "PAPERTRACE_COMPUTE_CAPACITY": "10000",
    }
    logging.disable(logging.CRITICAL)
    from fastapi.testclient import TestClient

    from app.main import create_app

    before = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        app = create_app()  # reads the settings once, here
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name)
            else:
                os.environ[name] = value
    try:
        with TestClient(app) as client:
            yield client
    finally:
        logging.disable(logging.NOTSET)


def send(client: Any, case: Case) -> tuple[float, int, int]:
    """(CPU ms, status, bytes) of one request."""
    started = time.process_time()
    if case.method == "POST":
        response = client.post(case.path, json=case.body, headers=case.headers)
    else:
        response = client.get(case.path, params=case.params, headers=case.headers)
    cpu_ms = (time.process_time() - started) * 1000
    return cpu_ms, response.status_code, len(response.content)


def measure(client: Any, case: Case, runs: int) -> tuple[float, int, int]:
    """(median CPU ms over `runs`, status, bytes), after one warm-up run; each run a new
    request (`Case.fresh`)."""
    send(client, case.fresh(10_000))
    answers = [send(client, case.fresh(run)) for run in range(runs)]
    return statistics.median(a[0] for a in answers), answers[-1][1], answers[-1][2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", nargs="+", choices=sorted(FAMILIES), default=list(FAMILIES))
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with measuring_app() as client:
        print(
            f"CPU per request (time.process_time, median of {args.runs} after a warm-up), "
            f"{os.cpu_count()} cores, load average {load_before:.1f}; a token is priced "
            f"as {TOKEN_MS:g} ms.\n"
        )
        print(
            "| endpoint | heaviest allowed request | tokens | CPU ms | ms per token | "
            "status | KB |\n|---|---|---|---|---|---|---|"
        )
        for family in args.only:
            for case in FAMILIES[family]():
                tokens = price(client.app, case)
                cpu_ms, status, size = measure(client, case, args.runs)
                print(
                    f"| {case.endpoint} | {case.label} | {tokens} | {cpu_ms:.0f} | "
                    f"{cpu_ms / max(tokens, 1):.0f} | {status} | {size / 1024:.0f} |",
                    flush=True,
                )
    print(f"\nLoad average after: {os.getloadavg()[0]:.1f}.")


if __name__ == "__main__":
    main()
