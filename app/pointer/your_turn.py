"""Your turn on the hull and TSP boards: the reader picks the points in order, and the board
scores their answer against the model's and the exact one, step by step, and says who won.

The picks are the board's request field `mine` (point numbers from 1, in the order picked;
app/pointer/requests.py refuses a number off the board or picked twice), so a shared link
holds the reader's attempt like any other state. While the reader is still picking, the board
hides the model's and the exact answer (no peeking); once the answer is complete the three
stand side by side.

- TSP: complete when every city is picked; the closed tour's length against the model's tour
  and the reference (`reference.optimal` says whether it is proven optimal). Step k compares
  the open path through the first k picks with the model's first k cities.
- Hull: complete when the picks hold as many points as the exact hull has vertices; right when
  they are the exact hull's vertices in order around it (either direction, any start). Step k
  says whether the k-th pick is a vertex of the exact hull, beside the model's k-th choice.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from app.pointer.requests import HullResponse, PointerTrace, TspResponse

TIE = 1e-9  # tour lengths closer than this are the same length


def path_length(points: Sequence[Sequence[float]], order: Sequence[int], closed: bool) -> float:
    legs = list(zip(order, order[1:], strict=False))
    if closed and len(order) > 1:
        legs.append((order[-1], order[0]))
    return sum(math.dist(points[a], points[b]) for a, b in legs)


def same_cycle(a: Sequence[int], b: Sequence[int]) -> bool:
    """Whether `a` and `b` visit the same points around one cycle (any start, either way)."""
    if len(a) != len(b) or set(a) != set(b):
        return False
    if not a:
        return True
    start = b.index(a[0])
    turned = list(b[start:]) + list(b[:start])
    return list(a) == turned or list(a) == [turned[0], *reversed(turned[1:])]


def verdict(mine_wins: bool, model_wins: bool) -> str:
    if mine_wins and not model_wins:
        return "You win"
    if model_wins and not mine_wins:
        return "The model wins"
    return "A tie"


def tsp_score(points: Sequence[Sequence[float]], mine: list[int], result: TspResponse) -> dict:
    n = len(points)
    rows = [
        {
            "step": k + 1,
            "mine": mine[k] + 1,
            "mine_length": path_length(points, mine[: k + 1], False),
            "model": result.order[k] + 1 if k < len(result.order) else None,
            "model_length": path_length(points, result.order[: k + 1], False),
        }
        for k in range(len(mine))
    ]
    done = len(mine) == n
    score: dict[str, Any] = {"task": "tsp", "rows": rows, "done": done, "left": n - len(mine)}
    if done:
        yours = path_length(points, mine, True)
        best = result.reference.length
        score |= {
            "length": yours,
            "model_length": result.length,
            "reference_length": best,
            "optimal": result.reference.optimal,
            "gap": yours / best - 1,
            "model_gap": result.length / best - 1,
            "verdict": verdict(yours < result.length - TIE, result.length < yours - TIE),
        }
    return score


def hull_score(mine: list[int], result: HullResponse) -> dict:
    exact = list(result.reference.order)
    vertices = set(exact)
    rows = [
        {
            "step": k + 1,
            "mine": mine[k] + 1,
            "on_hull": mine[k] in vertices,
            "model": result.order[k] + 1 if k < len(result.order) else None,
            "model_on_hull": k < len(result.order) and result.order[k] in vertices,
        }
        for k in range(len(mine))
    ]
    done = len(mine) >= len(exact)
    score: dict[str, Any] = {
        "task": "hull",
        "rows": rows,
        "done": done,
        "left": max(0, len(exact) - len(mine)),
        "found": sum(row["on_hull"] for row in rows),
        "vertices": len(exact),
    }
    if done:
        right = same_cycle(mine, exact)
        score |= {
            "right": right,
            "model_right": result.correct,
            "verdict": verdict(right, result.correct),
        }
    return score


def picks(board: Any) -> list[int] | None:
    """The reader's picks on a board (from 1) when it is their turn, else None."""
    return list(board.mine) if getattr(board, "turn", False) else None


def your_turn(
    inputs: Sequence[Sequence[float]], mine: list[int], result: PointerTrace | None
) -> dict[str, Any] | None:
    """The reader's answer scored against the model's (picks from 1 in `mine`), or None when
    there is nothing to score."""
    if result is None or not mine:
        return None
    picks = [number - 1 for number in mine]
    if isinstance(result, TspResponse):
        return tsp_score(inputs, picks, result)
    if isinstance(result, HullResponse):
        return hull_score(picks, result)
    return None
