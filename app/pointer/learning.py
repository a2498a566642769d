"""Watch it learn: a board's training slider over the snapshots of its task's training run
(models/snapshots.py, models.pointer_run.SNAPSHOTS), with the reader's inputs held fixed, and
the run's learning curves drawn on the server with the snapshot on the board marked.

The slider's position is the board's request field `snapshot` (a training step; none: the
trained model), so it is in the address like every other state, and the board decodes with the
snapshot's weights through the family's one flow. The curves are SVG like the board itself, so
the page loads no charting script and the drawing reads the same without script.
"""

from __future__ import annotations

import math
from typing import Any

from models import snapshots
from models.pointer_run import SNAPSHOTS, Task

WIDTH, HEIGHT, PAD = 400.0, 130.0, 28.0
# per task: the validation metric the curve draws, and what it counts
METRICS = {
    "hull": ("accuracy_n50", "exact hulls at n = 50"),
    "sort": ("accuracy_n20", "exactly sorted at n = 20"),
}


def x_of(step: int, last: int) -> float:
    """Log-spaced steps: the early fast changes get room."""
    return round(PAD + (WIDTH - 2 * PAD) * math.log1p(step) / math.log1p(max(last, 1)), 2)


def y_of(value: float, top: float) -> float:
    return round(HEIGHT - PAD - (HEIGHT - 2 * PAD) * value / top, 2) if top > 0 else HEIGHT - PAD


def polyline(points: list[tuple[float, float]]) -> str:
    return " ".join(f"{x},{y}" for x, y in points)


def learning_view(task: Task, snapshot: int | None) -> dict[str, Any] | None:
    """The slider, its caption and the curves for the board's task (None when its training
    kept no snapshots); `snapshot` is the request's step (None: the trained model)."""
    if task not in SNAPSHOTS:
        return None
    run = snapshots.record(SNAPSHOTS[task])
    if run is None:
        return None
    kept = run["snapshots"]
    steps = [entry["step"] for entry in kept]
    last = steps[-1]
    metric, counted = METRICS[task]
    losses = [entry["loss"] for entry in kept]
    top_loss = max((loss for loss in losses if loss is not None), default=1.0)
    index = steps.index(snapshot) if snapshot in steps else None
    current = kept[index] if index is not None else None
    view = {
        "recipe": SNAPSHOTS[task],
        "steps": steps,
        "index": len(steps) - 1 if index is None else index,
        "on": index is not None,
        "run_steps": run["steps"],
        "schedule_steps": run["schedule_steps"],
        "counted": counted,
        "loss_line": polyline(
            [
                (x_of(step, last), y_of(loss, top_loss))
                for step, loss in zip(steps, losses, strict=True)
                if loss is not None
            ]
        ),
        "metric_line": polyline(
            [(x_of(e["step"], last), y_of(e["metrics"].get(metric, 0.0), 1.0)) for e in kept]
        ),
        "ticks": [
            {"x": x_of(s, last), "text": f"{s:,}"} for s in steps if s in (0, 10, 100, 1000, last)
        ],
        "size": (WIDTH, HEIGHT, PAD),
        "marker": None,
        "caption": None,
    }
    if current is not None:
        value = current["metrics"].get(metric, 0.0)
        loss = "no step yet" if current["loss"] is None else f"training loss {current['loss']:.3f}"
        view["marker"] = {"x": x_of(current["step"], last), "y": y_of(value, 1.0)}
        view["caption"] = (
            f"Step {current['step']:,} of {run['steps']:,}: {loss}; {value:.0%} {counted} "
            "(validation)."
        )
    return view
