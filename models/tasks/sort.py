"""Sorting numbers by pointing: the target is the input indices in ascending order of value.

The Pointer Networks paper has no sorting experiment; *Order Matters* (Vinyals, Bengio and
Kudlur, 2016) sorts floats with a pointer network, and it is the smallest task on which a
dense and a sparse pointer can be compared.
"""

import numpy as np

from models.tasks import InvalidInstance, check_finite, instance_rng


def random_values(rng: np.random.Generator, batch: int, n: int) -> np.ndarray:
    """Values uniform in [0, 1), shape (batch, n)."""
    return rng.random((batch, n))


def validate_values(values: np.ndarray) -> np.ndarray:
    """Return the values as a float array (n,), or raise InvalidInstance saying what is wrong."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1:
        raise InvalidInstance("Values must be a flat list of numbers.")
    check_finite(values, "value")
    if len(values) < 2:
        raise InvalidInstance(f"Sorting needs at least 2 values; got {len(values)}.")
    return values


def sorted_order(values: np.ndarray) -> list[int]:
    """Indices in ascending order of value; ties keep input order."""
    return [int(i) for i in np.argsort(validate_values(values), kind="stable")]


def is_sorted_output(values: np.ndarray, order: list[int]) -> bool:
    """Exact-sequence accuracy: every input used once and the values never decrease.

    Comparing values rather than indices makes tied values interchangeable.
    """
    values = np.asarray(values, dtype=np.float64)
    if sorted(order) != list(range(len(values))):
        return False
    return bool(np.all(np.diff(values[order]) >= 0))


def target_sequences(values: np.ndarray) -> np.ndarray:
    """Training targets for a batch (batch, n): ascending-order indices."""
    return np.argsort(values, axis=1, kind="stable")


def validation_set(n: int, count: int) -> np.ndarray:
    """Fixed validation values (count, n), from the validation stream."""
    return random_values(instance_rng("validation", 1, n), count, n)


def training_batch(rng: np.random.Generator, batch: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Fresh values (batch, n) and their ascending-order targets (batch, n)."""
    values = random_values(rng, batch, n)
    return values, target_sequences(values)
