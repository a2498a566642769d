"""Watch it learn: a figure's training slider over the snapshots of its model's training run
(models/snapshots.py; each family's SNAPSHOTS names the recipe), with the reader's input held
fixed, and the run's learning curves drawn on the server with the snapshot on the figure marked.

The slider's position is the request field `snapshot` (a training step; none: the trained
model), so it is in the address like every other state, and the figure decodes with the
snapshot's weights through its family's one flow. The curves are SVG like the figures
themselves, so a page loads no charting script and the drawing reads the same without script
(templates/partials/widgets/learning.html; static/js/hx-widgets.js keeps the slider and the
request field in step).
"""

from __future__ import annotations

import math
from typing import Any

from models.checkpoints import snapshot_record

WIDTH, HEIGHT, PAD = 400.0, 130.0, 28.0
# per snapshot run (recipe): the validation metric the curve draws, what it counts, and how
# a value reads ("{:.0%}": a share; BLEU is a number)
METRICS = {
    "pointer-hull": ("accuracy_n50", "exact hulls at n = 50", "{:.0%}"),
    "pointer-sort": ("accuracy_n20", "exactly sorted at n = 20", "{:.0%}"),
    "pointer-tsp": ("gap_n20", "longer than the optimal tour at n = 20", "{:.0%}"),
    "seq2seq-inflect-full-a1.5": ("dev_accuracy", "right on the dev cells", "{:.0%}"),
    "seq2seq-translate-a1.5": ("dev_bleu_greedy", "dev BLEU (greedy)", "{:.1f}"),
}


def x_of(step: int, last: int) -> float:
    """Log-spaced steps: the early fast changes get room."""
    return round(PAD + (WIDTH - 2 * PAD) * math.log1p(step) / math.log1p(max(last, 1)), 2)


def y_of(value: float, top: float) -> float:
    return round(HEIGHT - PAD - (HEIGHT - 2 * PAD) * value / top, 2) if top > 0 else HEIGHT - PAD


def polyline(points: list[tuple[float, float]]) -> str:
    return " ".join(f"{x},{y}" for x, y in points)


def learning_view(recipe: str | None, snapshot: int | None) -> dict[str, Any] | None:
    """The slider, its caption and the curves of a figure whose model's training run is
    `recipe`'s (None when it kept no snapshots); `snapshot` is the request's step (None: the
    trained model)."""
    run = snapshot_record(recipe) if recipe else None
    if run is None:
        return None
    kept = run["snapshots"]
    steps = [entry["step"] for entry in kept]
    last = steps[-1]
    metric, counted, shown = METRICS[recipe]
    values = [entry["metrics"].get(metric, 0.0) for entry in kept]
    top = max(1.0, *values)  # shares in [0, 1]; BLEU up to its best
    index = steps.index(snapshot) if snapshot in steps else None
    current = kept[index] if index is not None else None
    view = {
        "recipe": recipe,
        "steps": steps,
        "index": len(steps) - 1 if index is None else index,
        "on": index is not None,
        "run_steps": run["steps"],
        "schedule_steps": run["schedule_steps"],
        "counted": counted,
        **curves(steps, [entry["loss"] for entry in kept], values, top),
        "ticks": [
            {"x": x_of(s, last), "text": f"{s:,}"} for s in steps if s in (0, 10, 100, 1000, last)
        ],
        "size": (WIDTH, HEIGHT, PAD),
        "marker": None,
        "caption": None,
    }
    if current is not None:
        value = values[index]
        loss = "no step yet" if current["loss"] is None else f"training loss {current['loss']:.3f}"
        view["marker"] = {"x": x_of(current["step"], last), "y": y_of(value, top)}
        view["caption"] = (
            f"Step {current['step']:,} of {run['steps']:,}: {loss}; {shown.format(value)} "
            f"{counted} (validation)."
        )
    return view


def curves(
    steps: list[int], losses: list[float | None], values: list[float], top: float
) -> dict[str, str]:
    """The two polylines: the training loss scaled to its largest value (a snapshot before
    any step has none), and the validation metric up to `top`."""
    last = steps[-1]
    top_loss = max((loss for loss in losses if loss is not None), default=1.0)
    kept_losses = [(s, loss) for s, loss in zip(steps, losses, strict=True) if loss is not None]
    return {
        "loss_line": polyline([(x_of(s, last), y_of(loss, top_loss)) for s, loss in kept_losses]),
        "metric_line": polyline(
            [(x_of(s, last), y_of(value, top)) for s, value in zip(steps, values, strict=True)]
        ),
    }
