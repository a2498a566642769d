"""Tasks the models are trained and measured on: instance generation, solvers, metrics.

One module per task (`hull`, `tsp`, `sort`). Each exposes the pieces the trainer, the
evaluation and the web API need: seeded instance generators, exact or classical solvers,
metrics, and input validation that raises `InvalidInstance` with a message written for readers.
"""

import numpy as np

from models.errors import InvalidInput


def instance_rng(purpose: str, *keys: int) -> np.random.Generator:
    """A generator for one stream of instances.

    Training, validation and test instances draw from streams whose seed sequences start
    with a different purpose tag, so the three sets are independent by construction.
    """
    tags = {"train": 1, "validation": 2, "test": 3}
    return np.random.default_rng(np.random.SeedSequence([tags[purpose], *keys]))


class InvalidInstance(InvalidInput):
    """Input a task cannot take (too few points, duplicates, NaN, …); the message is a sentence
    for the reader saying what to change. Any other error while solving is a fault of ours."""


def check_finite(values: np.ndarray, what: str) -> None:
    """Raise a reader-facing error if any entry is NaN or infinite."""
    if not np.all(np.isfinite(values)):
        raise InvalidInstance(f"Every {what} must be a finite number; found NaN or infinity.")
