"""A pointer board's state in the page address: the fields of its request (PointsBoard or
ValuesBoard, app/pointer/requests.py) under the board's key (its task unless the widget sets
`id:`), e.g. `hull-points=0.1,0.2;0.8,0.1&hull-decoder=beam&hull-beam_width=4&hull-step=2` or
`sort-values=0.6,0.1&sort-alpha=1.5`. The board's form has the same names, so a form
submitted without script, a shared link and the board's htmx round trips (pointer-board.js
sends the fields without the key) are read by the one model.

Links made before the fields were the address (`hull=0.1,0.2;…`, `hull-decoder=beam8|sample64`,
`hull-width`, `hull-k`) read as the fields they stood for; a board's next answer writes the
address anew without them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from app.pointer.requests import INPUTS, Board, PointsBoard

# the boards' ids: a board's task, or its `id:` when a page has two of a task (the routing
# page's attention model "am", Pointer Network "ptr" and LSTM Pointer Network "lstm")
BOARD_KEYS = ("hull", "tsp", "sort", "am", "ptr", "lstm")
FIELDS = tuple(PointsBoard.model_fields)  # decoder, beam_width, samples, seed, alpha, …, step
OLD_NAMES = {"width": "beam_width", "k": "samples"}
OLD_DECODER = re.compile(r"(beam|sample)(\d+)")
OLD_COUNTS = {"beam": "beam_width", "sample": "samples"}


def figure_id(key: str) -> str:
    """The board's element id, the `#fragment` its address ends in."""
    return f"pointer-board-{key}"


def url_keys(keys: Sequence[str] = BOARD_KEYS) -> set[str]:
    """Every address key the boards with these ids read: their fields and the old names."""
    names = {*FIELDS, "values", *OLD_NAMES}
    return {key for board in keys for key in (board, *(f"{board}-{name}" for name in names))}


def board_fields(task: str, key: str, query: Mapping[str, str]) -> dict[str, str] | None:
    """The board's request fields in the page address, its key stripped (the old names read
    as the fields they stood for), or None when the address says nothing about the board."""
    prefix, names = f"{key}-", {*FIELDS, *OLD_NAMES} - {"points"} | {INPUTS[task]}
    fields = {}
    for name, value in query.items():
        if name.startswith(prefix) and (field := name.removeprefix(prefix)) in names:
            fields[OLD_NAMES.get(field, field)] = value
    if key in query:  # the old inputs key
        fields.setdefault(INPUTS[task], query[key])
    if old := OLD_DECODER.fullmatch(fields.get("decoder", "")):
        fields["decoder"] = old[1]
        fields[OLD_COUNTS[old[1]]] = old[2]
    return fields or None


def address(key: str, board: Board) -> dict[str, str | None]:
    """The page address's keys for the board's state, the inputs first; the board's other
    keys (the old names, a field left out) removed."""
    if isinstance(board, PointsBoard):
        shown = {f"{key}-points": ";".join(f"{x:g},{y:g}" for x, y in board.points)}
    else:
        shown = {f"{key}-values": ",".join(f"{v:g}" for v in board.values)}
    for name, value in board.model_dump(exclude_none=True, exclude={"points", "values"}).items():
        if value is False or value == []:  # your turn off, no picks: nothing to say
            continue
        shown[f"{key}-{name}"] = text_of(value)
    return {name: None for name in sorted(url_keys([key])) if name not in shown} | shown


def text_of(value: Any) -> str:
    """A field's value as the address spells it: 1.5, 4, 1 (on), 3,1,4 (picks)."""
    if isinstance(value, bool):
        return "1"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def inputs_text(inputs: Sequence[Any]) -> str:
    """The inputs box's text: one point per line, or the values separated by commas."""
    if inputs and isinstance(inputs[0], (list, tuple)):
        return "".join(f"{x:g}, {y:g}\n" for x, y in inputs)
    return ", ".join(f"{v:g}" for v in inputs)
