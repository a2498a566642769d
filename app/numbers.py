"""Number types and limits shared by the request schemas of every model family."""

from __future__ import annotations

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
