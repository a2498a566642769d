"""results-table: one table from content/results/<source>.json (written by models.evaluate)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from app.widgets import WidgetEnv, WidgetError, register_widget

SOURCE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")


@register_widget("results-table")
def results_table_context(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    source, table_id = params.get("source"), params.get("table")
    if not isinstance(source, str) or not SOURCE_NAME.fullmatch(source):
        raise WidgetError("results-table needs `source:` (e.g. pointer or seq2seq)")
    if not isinstance(table_id, str):
        raise WidgetError("results-table needs `table:` (the table id in the results file)")
    command = f"python -m models.evaluate {source}"
    path = env.results_dir / f"{source}.json"
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise WidgetError(
            f"No results yet: content/results/{source}.json has not been generated.", command
        ) from None
    except (OSError, json.JSONDecodeError) as exc:
        raise WidgetError(f"content/results/{source}.json is unreadable ({exc}).", command) from exc
    table = results.get("tables", {}).get(table_id)
    if table is None:
        raise WidgetError(
            f"content/results/{source}.json has no table “{table_id}”; regenerate it.", command
        )
    return {
        "table_id": table_id,
        "caption": table.get("caption", ""),
        "columns": table.get("columns", []),
        "rows": table.get("rows", []),
        "note": table.get("note"),
        "generated_by": results.get("generated_by", command),
        "generated_at": results.get("generated_at"),
    }
