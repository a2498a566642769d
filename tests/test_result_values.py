"""`{{source.table | row | column}}` in prose: one cell of a results file, quoted in a sentence."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.widgets import WidgetEnv, WidgetError
from app.widgets.results_table import result_value_context

RESULTS = {
    "tables": {
        "tsp": {
            "columns": ["tested n", "reference", "ours beam 8"],
            "rows": [
                ["5", "Held–Karp (exact)", "2.107 (+0.18%)"],
                ["50", "best solver tour", "6.135 (+6.11%)"],
            ],
        },
        "sparse": {
            "columns": ["pointer", "tested n", "support"],
            "rows": [
                ["softmax", "10", "6.00"],
                ["entmax15", "10", "1.02"],
                ["entmax15", "20", "1.05"],
            ],
        },
    }
}


FRONT_MATTER = """---
title: A Demo
authors: [A. Author]
venue: ICLR
year: 2020
arxiv: "2001.00001"
tldr: One line.
tags: [testing]
order: 1
---
"""


@pytest.fixture
def env(tmp_path: Path) -> WidgetEnv:
    (tmp_path / "demo.json").write_text(json.dumps(RESULTS), encoding="utf-8")
    return WidgetEnv(results_dir=tmp_path, registry=None)  # type: ignore[arg-type]


def value(path: str, env: WidgetEnv) -> str:
    return result_value_context({"path": path}, env)["value"]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("demo.tsp | 50 | ours beam 8", "6.135 (+6.11%)"),
        ("demo.tsp | 50 | ours beam 8 | main", "6.135"),
        ("demo.tsp | 50 | ours beam 8 | paren", "+6.11%"),
        ("demo.tsp | 5 | reference", "Held–Karp (exact)"),  # "5" is not a prefix of "50"
        ("demo.sparse | softmax | support", "6.00"),
        ("demo.sparse | entmax15, 20 | support", "1.05"),  # the leading cells tell rows apart
    ],
)
def test_a_value_is_the_cell_of_its_row_and_column(
    path: str, expected: str, env: WidgetEnv
) -> None:
    assert value(path, env) == expected


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("demo.tsp | 50", "needs a table, a row and a column"),
        ("demo | 50 | reference", "needs a table, a row and a column"),
        ("demo.tsp | 60 | reference", "has no row “60” (its rows start with 5, 50)"),
        ("demo.tsp | 50 | ours greedy", "has no column “ours greedy”"),
        ("demo.sparse | entmax15 | support", "add the next cells, e.g. “entmax15, 10”"),
        ("demo.tsp | 50 | reference | paren", "has no part in parentheses"),
        ("demo.tsp | 50 | ours beam 8 | gap", "“gap” is not a part of a cell"),
        ("demo.hull | 50 | accuracy", "has no table “hull”"),
        ("nowhere.tsp | 50 | reference", "content/results/nowhere.json has not been generated"),
        ("etc/passwd.tsp | 50 | reference", "is not a results file name"),
    ],
)
def test_a_value_that_cannot_be_found_says_what_to_change(
    path: str, message: str, env: WidgetEnv
) -> None:
    with pytest.raises(WidgetError, match=re.escape(message)):
        value(path, env)


def page(results: dict[str, Any], tmp_path: Path, sentence: str) -> str:
    content = tmp_path / "content"
    (content / "results").mkdir(parents=True)
    (content / "results" / "demo.json").write_text(json.dumps(results), encoding="utf-8")
    (content / "demo-paper.md").write_text(FRONT_MATTER + sentence, encoding="utf-8")
    with TestClient(create_app(content_dir=content)) as client:
        return client.get("/papers/demo-paper").text


def test_values_render_inside_the_sentence_and_follow_the_results_file(tmp_path: Path) -> None:
    html = page(RESULTS, tmp_path, "At 50 cities: {{demo.tsp | 50 | ours beam 8 | main}}.\n")
    assert (
        '<p>At 50 cities: <span class="result-value" title="Our result: '
        'content/results/demo.json, table “tsp”, row 50, column “ours beam 8”">6.135</span>.</p>'
    ) in html


def test_a_value_follows_its_results_file_when_it_is_regenerated(env: WidgetEnv) -> None:
    path = env.results_dir / "demo.json"
    assert value("demo.tsp | 50 | ours beam 8 | main", env) == "6.135"
    regenerated = json.loads(path.read_text())
    regenerated["tables"]["tsp"]["rows"][1][2] = "6.001 (+3.80%)"
    before = path.stat().st_mtime_ns
    path.write_text(json.dumps(regenerated), encoding="utf-8")
    os.utime(path, ns=(before + 1_000_000, before + 1_000_000))  # a coarse clock may not tick
    assert value("demo.tsp | 50 | ours beam 8 | main", env) == "6.001"


def test_a_broken_value_is_an_inline_error_not_a_box(tmp_path: Path) -> None:
    html = page(RESULTS, tmp_path, "At 60 cities: {{demo.tsp | 60 | ours beam 8}}, then more.\n")
    assert (
        '<span class="widget-error-inline" role="note" title="Table “tsp” has no row “60”' in html
    )
    assert ">{{demo.tsp | 60 | ours beam 8}}</span>, then more.</p>" in html
    assert 'class="widget-error"' not in html


# --- the results-table widget: a whole table, with the rows and columns a page picks ---------

from app.widgets.results_table import MAIN_TEXT_ROWS, results_table_context  # noqa: E402


def table(env: WidgetEnv, **params: Any) -> dict[str, Any]:
    return results_table_context({"source": "demo", **params}, env)


def test_a_table_shows_every_row_and_column_unless_the_page_picks_some(env: WidgetEnv) -> None:
    whole = table(env, table="sparse")
    assert whole["columns"] == ["pointer", "tested n", "support"]
    assert whole["rows"] == RESULTS["tables"]["sparse"]["rows"] and not whole["fold"]
    picked = table(
        env, table="sparse", rows=["entmax15, 20", "softmax"], columns=["support", "pointer"]
    )
    assert picked["columns"] == ["support", "pointer"]  # in the page's order
    assert picked["rows"] == [["1.05", "entmax15"], ["6.00", "softmax"]]
    assert (
        picked["table_id"] == "sparse"
        and picked["generated_by"] == "python -m models.evaluate demo"
    )


def test_a_long_table_folds(env: WidgetEnv) -> None:
    rows = [[str(k), "x"] for k in range(MAIN_TEXT_ROWS + 1)]
    long = {"tables": {"long": {"columns": ["n", "v"], "rows": rows}}, "generated_by": "make it"}
    (env.results_dir / "long.json").write_text(json.dumps(long), encoding="utf-8")
    shown = results_table_context({"source": "long", "table": "long"}, env)
    assert shown["fold"] and shown["generated_by"] == "make it"
    assert not results_table_context(
        {"source": "long", "table": "long", "rows": [str(k) for k in range(MAIN_TEXT_ROWS)]}, env
    )["fold"]


ROWS_LIST = 'results-table `rows:` is a list of row keys, e.g. ["full, 1.5"]'
COLUMNS_LIST = "results-table `columns:` is a list of column names"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"source": None, "table": "tsp"},
            "results-table needs `source:` (e.g. pointer or seq2seq)",
        ),
        (
            {"source": "../x", "table": "tsp"},
            "results-table needs `source:` (e.g. pointer or seq2seq)",
        ),
        (
            {"source": "demo", "table": None},
            "results-table needs `table:` (the table id in the results file)",
        ),
        ({"source": "demo", "table": "tsp", "rows": "50"}, ROWS_LIST),
        ({"source": "demo", "table": "tsp", "rows": ["50", 5]}, ROWS_LIST),
        ({"source": "demo", "table": "tsp", "columns": "reference"}, COLUMNS_LIST),
        ({"source": "demo", "table": "tsp", "columns": ["reference", 1]}, COLUMNS_LIST),
        (
            {"source": "demo", "table": "tsp", "columns": ["reference", "gap", "x"]},
            "Table “tsp” has no column “gap”.",
        ),
        (
            {"source": "demo", "table": "tsp", "rows": ["7"]},
            "Table “tsp” has no row “7” (its rows start with 5, 50).",
        ),
        (
            {"source": "demo", "table": "tsp", "rows": [""]},
            "Table “tsp” has no row “” (its rows start with 5, 50).",
        ),
        (
            {"source": "demo", "table": "hull"},
            "content/results/demo.json has no table “hull”; regenerate it.",
        ),
    ],
)
def test_a_table_the_page_asks_wrongly_for_says_what_to_change(
    params: dict[str, Any], message: str, env: WidgetEnv
) -> None:
    with pytest.raises(WidgetError) as caught:
        results_table_context(params, env)
    assert str(caught.value) == message
    if "regenerate" in message:
        assert caught.value.command == "python -m models.evaluate demo"


def test_a_value_names_the_columns_a_table_has(env: WidgetEnv) -> None:
    with pytest.raises(WidgetError) as caught:
        value("demo.tsp | 50 | gap", env)
    assert str(caught.value) == (
        "Table “tsp” has no column “gap” (its columns: “tested n”, “reference”, “ours beam 8”)."
    )
    (env.results_dir / "odd.json").write_text(
        json.dumps({"tables": {"t": {"rows": [["1"]]}}, "no": "tables"}), encoding="utf-8"
    )
    with pytest.raises(WidgetError, match=re.escape("has no column “x” (its columns: ).")):
        value("odd.t | 1 | x", env)
    (env.results_dir / "none.json").write_text(json.dumps({"other": 1}), encoding="utf-8")
    with pytest.raises(WidgetError, match=re.escape("none.json has no table “t”")):
        value("none.t | 1 | x", env)


def test_an_unreadable_results_file_names_itself_and_the_command(env: WidgetEnv) -> None:
    (env.results_dir / "broken.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(
        WidgetError, match=re.escape("content/results/broken.json is unreadable")
    ) as caught:
        value("broken.tsp | 50 | reference", env)
    assert caught.value.command == "python -m models.evaluate broken"
    with pytest.raises(WidgetError) as missing:
        value("absent.tsp | 50 | reference", env)
    assert missing.value.command == "python -m models.evaluate absent"


def test_a_results_file_is_parsed_once_per_version_on_disk(
    env: WidgetEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.widgets import results_table

    value("demo.tsp | 50 | reference", env)
    reads: list[Path] = []
    original = Path.read_text
    monkeypatch.setattr(
        Path, "read_text", lambda self, *a, **k: reads.append(self) or original(self, *a, **k)
    )
    assert value("demo.tsp | 50 | reference", env) == "best solver tour"
    assert reads == []  # the same version: not read again
    assert results_table._PARSED[env.results_dir / "demo.json"][1] == RESULTS


def test_a_table_without_rows_or_columns_shows_an_empty_table(env: WidgetEnv) -> None:
    (env.results_dir / "bare.json").write_text(json.dumps({"tables": {"t": {}}}), encoding="utf-8")
    shown = results_table_context({"source": "bare", "table": "t"}, env)
    assert shown["columns"] == [] and shown["rows"] == [] and shown["caption"] == ""
    with pytest.raises(WidgetError, match=re.escape("has no row “1” (its rows start with )")):
        results_table_context({"source": "bare", "table": "t", "rows": ["1"]}, env)
