"""One price list (issue 39): for every endpoint that runs a model, and the page renders, the CPU
time of its heaviest allowed request stays within a constant factor of its price in tokens.

The cases are bench/prices.py's (`.venv/bin/python bench/prices.py` prints the whole table);
here each endpoint's heaviest by price runs once, after its lightest as a warm-up. CPU is
`time.process_time()`: the process's own threads only, so the other work on a shared machine
does not count. Two bounds, both generous so a loaded 2-core machine does not trip them:
- no request takes more than MAX_MS_PER_TOKEN of CPU per token it is charged (app/compute.py
  calls a token about 40 ms; measured here 2-40 ms of CPU), so none costs more than its price;
- each endpoint's CPU per token is within SPREAD of the list's median, so no endpoint is
  priced out of line with the others (a page that runs nothing counts as one token).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from typing import Any

import pytest

from app.main import ROOT, served_checkpoints
from bench.prices import FAMILIES, Case, measuring_app, price, send
from models.checkpoints import read_manifest

pytestmark = pytest.mark.skipif(
    not set(served_checkpoints()) <= read_manifest(ROOT / "checkpoints").keys(),
    reason="the served checkpoints are not trained",
)

MAX_MS_PER_TOKEN = 80.0
SPREAD = 8.0


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with measuring_app() as site:
        yield site


def by_endpoint(cases: list[Case], app: Any) -> dict[str, list[tuple[int, Case]]]:
    endpoints: dict[str, list[tuple[int, Case]]] = {}
    for case in cases:
        endpoints.setdefault(case.endpoint, []).append((price(app, case), case))
    return endpoints


def test_every_endpoint_costs_about_what_it_is_priced(client: Any) -> None:
    cases = [case for family in FAMILIES.values() for case in family()]
    rows = []
    for endpoint, priced in by_endpoint(cases, client.app).items():
        priced.sort(key=lambda pair: pair[0])
        send(client, priced[0][1].fresh(90_000))  # warm-up: the endpoint's lightest
        tokens, heaviest = max(priced, key=lambda pair: pair[0])
        cpu_ms, status, _ = send(client, heaviest.fresh(90_001))
        assert status == 200, (endpoint, heaviest.label, status)
        rows.append((endpoint, heaviest.label, tokens, cpu_ms, cpu_ms / max(tokens, 1)))
    assert {row[0] for row in rows} >= {
        "POST /api/pointer/hull",
        "POST /api/pointer/tsp",
        "POST /api/pointer/sort",
        "GET /api/pointer/hull/board/{key}",
        "GET /api/pointer/tsp/board/{key}",
        "GET /api/pointer/sort/board/{key}",
        "POST /api/seq2seq/inflect",
        "POST /api/seq2seq/translate",
        "GET /api/seq2seq/inflect/figure",
        "GET /api/seq2seq/translate/figure",
        "POST /api/entmax",
        "GET /api/entmax/figure",
        "GET /api/routing/attention",
        "GET /api/routing/reinforce",
        "GET /papers/sparse-seq2seq",
        "GET /papers/attention-routing",
        "GET /papers/pointer-networks",
    }
    table = "\n".join(
        f"{endpoint} | {label} | {tokens} tokens | {cpu_ms:.0f} ms | {per:.1f} ms/token"
        for endpoint, label, tokens, cpu_ms, per in rows
    )
    median = statistics.median(row[4] for row in rows)
    over = [row for row in rows if row[4] > MAX_MS_PER_TOKEN]
    assert not over, f"costs more than its price:\n{table}"
    out_of_line = [row for row in rows if not median / SPREAD <= row[4] <= median * SPREAD]
    assert not out_of_line, f"priced out of line (median {median:.1f} ms/token):\n{table}"
