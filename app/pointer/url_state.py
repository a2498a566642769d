"""A pointer board's state in the page address and in the board's form, read the same way, so that
a shared link, a form submitted without script and the board's htmx round trips all draw the
same figure.

The address keys (a board's key is its task unless the widget sets `id:`): `hull=0.1,0.2;0.8,0.1`
(points) or `sort=0.6,0.1,…` (values), `hull-decoder=greedy|beam8|sample64`, `sort-alpha=1.5` (the
pointer's α), `hull-step=3` (counted from 1). The form sends the same keys, except that its
inputs box holds one point per line and the beam width and sample count come as `hull-width`
and `hull-k` beside a bare `hull-decoder=beam`; `address` writes the short form back. Counts
outside their range are clamped and an α no checkpoint has is ignored. The page itself is not
rate limited the way the API is, so a decode too heavy for a page render is drawn greedily,
with a sentence saying so; the board's first round trip then runs the shared decoder.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.compute import pointer_cost
from app.pointer.requests import MAX_BEAM_WIDTH, MAX_INPUTS, MAX_SAMPLES
from models.pointer_run import hypotheses

BOARD_KEYS = ("hull", "tsp", "sort")  # the boards' default ids (a board's `id:` is its task)
FIELDS = ("decoder", "width", "k", "alpha", "step")
DECODER = re.compile(r"(greedy|beam|sample)(\d+)?")
DEFAULT_BEAM_WIDTH = 8
DEFAULT_SAMPLES = 64
# The heaviest decode a page render runs: greedy over the largest board the API accepts.
PAGE_MAX_TOKENS = pointer_cost(MAX_INPUTS, 1)
DECODER_NAMES = {"greedy": "greedy decoding", "beam": "beam search", "sample": "best of k samples"}


def url_keys(keys: Sequence[str] = BOARD_KEYS) -> set[str]:
    """Every address key the boards with these ids write."""
    return {key for board in keys for key in (board, *(f"{board}-{f}" for f in FIELDS))}


@dataclass(frozen=True)
class BoardState:
    inputs: Any  # points [[x, y], …] or values […], not yet validated
    decoder: str = "greedy"
    beam_width: int = DEFAULT_BEAM_WIDTH
    samples: int = DEFAULT_SAMPLES
    alpha: float | None = None  # None: the task's trained default
    step: int = 0  # 0-based; clamped to the decode's steps when drawn

    def hypotheses(self) -> int:
        return hypotheses(self.decoder, self.beam_width, self.samples)  # type: ignore[arg-type]

    def fits_the_page(self) -> bool:
        inputs = self.inputs if isinstance(self.inputs, list) else []
        return pointer_cost(len(inputs), self.hypotheses()) <= PAGE_MAX_TOKENS

    def request_fields(self) -> dict[str, Any]:
        """Decoder fields of the API request, as the script sends them."""
        fields: dict[str, Any] = {"decoder": self.decoder, "beam_width": self.beam_width}
        if self.decoder == "sample":
            fields["samples"] = self.samples
        if self.alpha is not None:
            fields["alpha"] = self.alpha
        return fields

    def decoder_label(self) -> str:
        count = {"beam": f" (width {self.beam_width})", "sample": f" (k = {self.samples})"}
        return DECODER_NAMES[self.decoder] + count.get(self.decoder, "")


def parse_inputs(task: str, text: str) -> list[Any]:
    """`0.1,0.2;0.8,0.1` or one `x, y` per line -> [[0.1, 0.2], [0.8, 0.1]]; `0.6,0.1` or
    `0.6 0.1` -> [0.6, 0.1] (sorting). Raises ValueError with a sentence for the reader when a
    part is not a number or a line does not hold one point."""
    what = "value" if task == "sort" else "coordinate"

    def number(part: str) -> float:
        try:
            value = float(part)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise ValueError(f"The board got a {what} that is not a number: “{part}”.")
        return value

    if task == "sort":
        return [number(part) for part in re.split(r"[\s,;]+", text) if part]
    points = []
    for line, pair in enumerate(re.split(r"[;\n]", text), start=1):
        parts = [part for part in re.split(r"[\s,]+", pair) if part]
        if not parts:
            continue
        if len(parts) != 2:
            raise ValueError(f"Point {len(points) + 1} (line {line}) needs two numbers, x and y.")
        points.append([number(part) for part in parts])
    return points


def inputs_text(task: str, inputs: Sequence[Any]) -> str:
    """The inputs box's text: one point per line, or the values separated by commas."""
    if task == "sort":
        return ", ".join(f"{v:g}" for v in inputs)
    return "".join(f"{x:g}, {y:g}\n" for x, y in inputs)


def address(key: str, task: str, state: BoardState) -> dict[str, str | None]:
    """The address keys for a state, in their short form (the form's own keys removed)."""
    counts = {"beam": state.beam_width, "sample": state.samples}
    if task == "sort":
        inputs = ",".join(f"{v:g}" for v in state.inputs)
    else:
        inputs = ";".join(f"{x:g},{y:g}" for x, y in state.inputs)
    return {
        key: inputs,
        f"{key}-decoder": f"{state.decoder}{counts.get(state.decoder, '')}",
        f"{key}-alpha": None if state.alpha is None else f"{state.alpha:g}",
        f"{key}-step": str(state.step + 1),
        f"{key}-width": None,
        f"{key}-k": None,
    }


def count(text: str, default: int, largest: int) -> int:
    return min(largest, max(1, int(text))) if text.isdigit() else default


def known_alpha(text: str, alphas: Sequence[float]) -> float | None:
    """The α the address names if a checkpoint has it, else None (the default)."""
    try:
        value = float(text)
    except ValueError:
        return None
    return next((alpha for alpha in alphas if math.isclose(alpha, value)), None)


def board_state(
    task: str, key: str, url_state: Mapping[str, str], alphas: Sequence[float]
) -> BoardState | None:
    """The board's state from the address, or None when the address says nothing about it."""
    mine = {name: url_state[name] for name in url_keys([key]) if name in url_state}
    if not mine:
        return None
    fields: dict[str, Any] = {"inputs": None}
    if key in mine:
        fields["inputs"] = parse_inputs(task, mine[key])
    fields["beam_width"] = count(mine.get(f"{key}-width", ""), DEFAULT_BEAM_WIDTH, MAX_BEAM_WIDTH)
    fields["samples"] = count(mine.get(f"{key}-k", ""), DEFAULT_SAMPLES, MAX_SAMPLES)
    match = DECODER.fullmatch(mine.get(f"{key}-decoder", ""))
    if match:
        fields["decoder"] = match[1]
        if match[2] and match[1] == "beam":
            fields["beam_width"] = count(match[2], DEFAULT_BEAM_WIDTH, MAX_BEAM_WIDTH)
        if match[2] and match[1] == "sample":
            fields["samples"] = count(match[2], DEFAULT_SAMPLES, MAX_SAMPLES)
    fields["alpha"] = known_alpha(mine.get(f"{key}-alpha", ""), alphas)
    step = mine.get(f"{key}-step", "")
    if step.isdigit() and int(step) > 0:
        fields["step"] = int(step) - 1
    return BoardState(**fields)
