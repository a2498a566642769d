"""try-this: two to four guided steps under a live figure. Each step is a link that opens the
page with the figure in a given state (the query keys the figure's script keeps in the
address, e.g. `entmax-alpha: 2`) and scrolls to it, and says what to look for there.

```widget
name: try-this
target: entmax-playground
steps:
  - do: Set α to 1 (softmax)
    set: {entmax-alpha: 1}
    look: every word keeps some probability.
```
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from app.widgets import WidgetEnv, WidgetError, register_widget

TARGET = re.compile(r"[a-z][a-z0-9-]{0,60}")
QUERY_KEY = re.compile(r"[a-z][a-z0-9._-]{0,40}")
MIN_STEPS, MAX_STEPS = 2, 4


@register_widget("try-this", pure=True)
def try_this_context(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
    target = params.get("target")
    if not isinstance(target, str) or not TARGET.fullmatch(target):
        raise WidgetError(
            "try-this needs `target:`, the id of the figure, e.g. pointer-board-hull."
        )
    steps = params.get("steps")
    if not isinstance(steps, list) or not MIN_STEPS <= len(steps) <= MAX_STEPS:
        raise WidgetError(f"try-this needs {MIN_STEPS} to {MAX_STEPS} `steps:`.")
    return {"target": target, "steps": [_step(i, step, target) for i, step in enumerate(steps)]}


def _step(index: int, step: Any, target: str) -> dict[str, str]:
    where = f"Step {index + 1} of try-this"
    if not isinstance(step, Mapping) or not {"do", "set", "look"} <= step.keys():
        raise WidgetError(f"{where} needs `do:`, `set:` and `look:`.")
    state = step["set"]
    if not isinstance(state, Mapping) or not all(QUERY_KEY.fullmatch(str(k)) for k in state):
        raise WidgetError(f"{where}: `set:` maps the figure's address keys to values.")
    query = urlencode({str(k): str(v) for k, v in state.items()})
    return {"do": str(step["do"]), "look": str(step["look"]), "href": f"?{query}#{target}"}
