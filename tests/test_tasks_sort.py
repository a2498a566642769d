import numpy as np
import pytest

from models.tasks import sort


def test_sorted_order_and_accuracy() -> None:
    values = np.array([0.3, 0.1, 0.2])
    assert sort.sorted_order(values) == [1, 2, 0]
    assert sort.is_sorted_output(values, [1, 2, 0])
    assert not sort.is_sorted_output(values, [2, 1, 0])
    assert not sort.is_sorted_output(values, [1, 2])  # an input left out
    assert not sort.is_sorted_output(values, [1, 1, 0])  # an input used twice


def test_ties_are_interchangeable() -> None:
    values = np.array([0.5, 0.1, 0.5])
    assert sort.is_sorted_output(values, [1, 0, 2]) and sort.is_sorted_output(values, [1, 2, 0])


@pytest.mark.parametrize(
    ("values", "message"),
    [([0.5], "at least 2 values; got 1"), ([0.1, float("nan")], "finite"), ([[0.1, 0.2]], "flat")],
)
def test_degenerate_input_is_refused(values: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sort.sorted_order(np.array(values))


def test_training_batch() -> None:
    values, targets = sort.training_batch(np.random.default_rng(0), 4, 7)
    assert values.shape == (4, 7) and targets.shape == (4, 7)
    assert all(np.all(np.diff(v[t]) >= 0) for v, t in zip(values, targets, strict=True))
