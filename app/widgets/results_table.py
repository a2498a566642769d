"""Results from content/results/<source>.json (written by models.evaluate): a whole table
(results-table), or one cell of one, quoted in a sentence (result-value, the `{{…}}` inline
directive of app.content)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.result_takeaways import takeaway
from app.widgets import WidgetEnv, WidgetError, register_widget

SOURCE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
# a cell such as "6.135 (+6.11%)": `| main` quotes "6.135", `| paren` quotes "+6.11%"
PARENTHESISED = re.compile(r"(.*?)\s*\((.*)\)")
CELL_PARTS = ("main", "paren")
# a page quotes one file many times per request: parse it once per version on disk
_PARSED: dict[Path, tuple[tuple[int, int], dict[str, Any]]] = {}
MAIN_TEXT_ROWS = 12  # a longer table folds into a <details> with a one-line summary
VALUE_SYNTAX = (
    "write {{source.table | row | column}}, optionally followed by | main or | paren, "
    "e.g. {{pointer.tsp | 50 | ours beam 8 | paren}}"
)


def _command(source: str) -> str:
    return f"python -m models.evaluate {source}"


def load_results(source: str, env: WidgetEnv) -> dict[str, Any]:
    if not SOURCE_NAME.fullmatch(source):
        raise WidgetError(f"“{source}” is not a results file name (e.g. pointer or seq2seq).")
    path = env.results_dir / f"{source}.json"
    try:
        stat = path.stat()
        version = (stat.st_mtime_ns, stat.st_size)
        cached = _PARSED.get(path)
        if cached is not None and cached[0] == version:
            return cached[1]
        results = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise WidgetError(
            f"No results yet: content/results/{source}.json has not been generated.",
            _command(source),
        ) from None
    except (OSError, json.JSONDecodeError) as exc:
        raise WidgetError(
            f"content/results/{source}.json is unreadable ({exc}).", _command(source)
        ) from exc
    _PARSED[path] = (version, results)
    return results


def find_table(results: Mapping[str, Any], source: str, table_id: str) -> dict[str, Any]:
    table = results.get("tables", {}).get(table_id)
    if table is None:
        raise WidgetError(
            f"content/results/{source}.json has no table “{table_id}”; regenerate it.",
            _command(source),
        )
    return table


@register_widget("results-table")
def results_table_context(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    source, table_id = params.get("source"), params.get("table")
    if not isinstance(source, str) or not SOURCE_NAME.fullmatch(source):
        raise WidgetError("results-table needs `source:` (e.g. pointer or seq2seq)")
    if not isinstance(table_id, str):
        raise WidgetError("results-table needs `table:` (the table id in the results file)")
    results = load_results(source, env)
    table = shown_rows(find_table(results, source, table_id), table_id, params.get("rows"))
    columns, rows = shown_columns(table, table_id, params.get("columns"))
    return {
        "table_id": table_id,
        "caption": table.get("caption", ""),
        "columns": columns,
        "rows": rows,
        "fold": len(rows) > MAIN_TEXT_ROWS,
        "note": table.get("note"),
        "takeaway": takeaway(source, table_id, table),
        "generated_by": results.get("generated_by", _command(source)),
        "generated_at": results.get("generated_at"),
    }


def shown_rows(table: dict[str, Any], table_id: str, keys: object) -> dict[str, Any]:
    """The table with only the rows `rows:` names (each a row key, as in a `{{…}}` value), in
    that order: a page shows the models it discusses; without `rows:`, every row."""
    if keys is None:
        return table
    if not isinstance(keys, list) or not all(isinstance(key, str) for key in keys):
        raise WidgetError('results-table `rows:` is a list of row keys, e.g. ["full, 1.5"]')
    return {**table, "rows": [find_row(table, table_id, key) for key in keys]}


def shown_columns(
    table: Mapping[str, Any], table_id: str, names: object
) -> tuple[list[str], list[list[str]]]:
    """The columns `columns:` names, in that order (so a wide table fits the page's column);
    without it, all of them. The takeaway still reads the whole table."""
    columns, rows = list(table.get("columns", [])), [list(r) for r in table.get("rows", [])]
    if names is None:
        return columns, rows
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise WidgetError("results-table `columns:` is a list of column names")
    unknown = [name for name in names if name not in columns]
    if unknown:
        raise WidgetError(f"Table “{table_id}” has no column “{unknown[0]}”.")
    keep = [columns.index(name) for name in names]
    return list(names), [[row[i] for i in keep] for row in rows]


def find_row(table: Mapping[str, Any], table_id: str, key: str) -> list[str]:
    """The one row whose leading cells, joined by ", ", read `key`: "50" names the row that
    starts with 50; "entmax15, 20" tells apart rows that share their first cell."""
    rows = table.get("rows", [])
    matches = [
        row for row in rows if any(", ".join(row[:k]) == key for k in range(1, len(row) + 1))
    ]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise WidgetError(
            f"Several rows of table “{table_id}” start with “{key}”; add the next cells, "
            f"e.g. “{', '.join(matches[0][:2])}”."
        )
    firsts = ", ".join(dict.fromkeys(str(row[0]) for row in rows if row))
    raise WidgetError(f"Table “{table_id}” has no row “{key}” (its rows start with {firsts}).")


def cell_value(table: Mapping[str, Any], table_id: str, row_key: str, column: str) -> str:
    columns = table.get("columns", [])
    if column not in columns:
        names = ", ".join(f"“{c}”" for c in columns)
        raise WidgetError(f"Table “{table_id}” has no column “{column}” (its columns: {names}).")
    return str(find_row(table, table_id, row_key)[columns.index(column)])


@register_widget("result-value")
def result_value_context(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    """`path` is "source.table | row | column", optionally "| main" or "| paren" after it."""
    fields = [field.strip() for field in str(params.get("path", "")).split("|")]
    if len(fields) not in (3, 4) or fields[0].count(".") != 1:
        raise WidgetError(f"A result value needs a table, a row and a column: {VALUE_SYNTAX}.")
    source, table_id = fields[0].split(".")
    row_key, column = fields[1], fields[2]
    part = fields[3] if len(fields) == 4 else None
    if part is not None and part not in CELL_PARTS:
        raise WidgetError(f"“{part}” is not a part of a cell: {VALUE_SYNTAX}.")
    table = find_table(load_results(source, env), source, table_id)
    value = cell_value(table, table_id, row_key, column)
    if part is not None:
        match = PARENTHESISED.fullmatch(value)
        if match is None:
            raise WidgetError(f"The cell “{value}” has no part in parentheses to split off.")
        value = match.group(1 + CELL_PARTS.index(part))
    return {
        "value": value,
        "provenance": f"Our result: content/results/{source}.json, table “{table_id}”, "
        f"row {row_key}, column “{column}”",
    }
