"""Hand-made pointer answers for the board's and the result's view tests: a hull of three points
(the triangle below), a tour of the same three cities, and a sorting of any values."""

from __future__ import annotations

from models.pointer_run import (
    HullReference,
    HullResponse,
    PointerModelInfo,
    PointerStep,
    Reference,
    SortResponse,
    TspReference,
    TspResponse,
)

MODEL = PointerModelInfo(name="m", alpha=1.5, sha256="0" * 64)
TRIANGLE = [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)]  # drawn at (24, 376), (376, 376), (24, 24)


def step(distribution: list[float], chosen: int) -> PointerStep:
    return PointerStep(
        distribution=distribution,
        chosen=chosen,
        support_size=sum(p > 0 for p in distribution),
    )


def common(task: str, n: int, order: list[int], steps: list[PointerStep], valid: bool) -> dict:
    return {
        "task": task,
        "n": n,
        "decoder": "greedy",
        "beam_width": 1,
        "samples": 1,
        "best_of_k": None,
        "order": order,
        "steps": steps,
        "valid": valid,
        "correct": valid,
        "gap": 0.0,
        "model": MODEL,
        "server_ms": 1.0,
    }


def hull_answer(valid: bool = True) -> HullResponse:
    steps = [
        step([0.5, 0.5, 0.0, 0.0], 0),
        step([0.0, 1.0, 0.0, 0.0], 1),
        step([0.0, 0.0, 0.75, 0.25], 2),
        step([0.0, 0.0, 0.0, 1.0], 3),  # the end marker
    ]
    return HullResponse(
        **common("hull", 3, [0, 1, 2], steps, valid),
        end_index=3,
        area=0.5,
        reference=HullReference(order=[0, 1, 2], method="exact", optimal=True, area=0.5),
    )


def tsp_answer() -> TspResponse:
    steps = [step([1.0, 0.0, 0.0], 0), step([0.0, 0.0, 1.0], 2), step([0.0, 1.0, 0.0], 1)]
    return TspResponse(
        **common("tsp", 3, [0, 2, 1], steps, valid=False),
        length=3.41,
        reference=TspReference(order=[0, 1, 2], method="exact", optimal=True, length=3.41),
    )


def sort_answer(values: list[float], order: list[int]) -> SortResponse:
    n = len(values)
    steps = [step([1.0 if i == chosen else 0.0 for i in range(n)], chosen) for chosen in order]
    reference = sorted(range(n), key=lambda i: values[i])
    return SortResponse(
        **common("sort", n, order, steps, valid=True),
        rescaled=False,
        reference=Reference(order=reference, method="sorted", optimal=True),
    )
