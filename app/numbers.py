"""Number types and limits shared by the request schemas of every model family."""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from typing import Annotated, Any

from pydantic import BeforeValidator, Field


def _whole_float_to_int(value: Any) -> Any:
    """15.0 -> 15: JSON Schema counts a number with no fractional part as an integer, so the
    API takes it as one; 15.5, "15" and true are still refused (strict below)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# An integer field as the OpenAPI schema describes it (`type: integer`).
JsonInt = Annotated[int, BeforeValidator(_whole_float_to_int), Field(strict=True)]

# The most hypotheses a beam search may keep, for the pointer and the seq2seq models alike.
MAX_BEAM_WIDTH = 16


def float_bits(value: float) -> int:
    """`value`'s place in the order of floats: consecutive floats have consecutive places."""
    bits = struct.unpack("<q", struct.pack("<d", value))[0]
    return bits if bits >= 0 else -(bits & 0x7FFFFFFFFFFFFFFF)


def from_float_bits(place: int) -> float:
    bits = place if place >= 0 else (-place) | -0x8000000000000000
    return struct.unpack("<d", struct.pack("<q", bits))[0]


def accepted_range(
    value: float, accepts: Callable[[float], bool], reach: float = 1e-3
) -> tuple[float, float]:
    """The least and the greatest float around `value` that `accepts` takes, found by
    bisection over the floats (`accepts` takes an interval around `value` and nothing else
    within `reach`): a server's tolerance as a schema's minimum and maximum, exact to the last
    float, so that a client's boundary probes meet the same answer as the server gives."""

    def edge(outside: float) -> float:
        inside_place, outside_place = float_bits(value), float_bits(outside)
        while abs(outside_place - inside_place) > 1:
            middle = (inside_place + outside_place) // 2
            if accepts(from_float_bits(middle)):
                inside_place = middle
            else:
                outside_place = middle
        return from_float_bits(inside_place)

    return edge(value - reach), edge(value + reach)


def tolerated(values: Iterable[float], accepts: Callable[[float], bool]) -> dict[str, Any]:
    """A number schema for "one of these values, within what `accepts` tolerates"."""
    ranges = [accepted_range(value, accepts) for value in sorted(values)]
    return {"anyOf": [{"type": "number", "minimum": low, "maximum": high} for low, high in ranges]}
