"""models.sparse_mapping, the α-entmax entry point the web layer calls, without HTTP."""

from __future__ import annotations

import math

import pytest

from models import sparse_mapping


def test_sparsemax_by_hand() -> None:
    # α = 2: p = [z − τ]_+ with Σ p = 1; the top two scores share the mass, the third is out.
    mapped = sparse_mapping.run([1.0, 0.5, -1.0], 2.0)
    assert mapped.probabilities == pytest.approx([0.75, 0.25, 0.0])
    assert mapped.probabilities[2] == 0.0
    assert mapped.support_size == 2
    assert mapped.tau == pytest.approx(0.25)
    assert mapped.score_threshold == pytest.approx(0.25)


def test_softmax_has_full_support_and_no_score_threshold() -> None:
    scores = [0.3, -2.0, 1.1]
    mapped = sparse_mapping.run(scores, 1.0)
    total = sum(math.exp(s) for s in scores)
    assert mapped.probabilities == pytest.approx([math.exp(s) / total for s in scores])
    assert mapped.support_size == 3
    assert mapped.tau == pytest.approx(math.log(total))
    assert mapped.score_threshold is None


def test_entmax15_threshold_separates_the_support() -> None:
    scores = [2.0, 1.4, 0.2, -0.5]
    mapped = sparse_mapping.run(scores, 1.5)
    inside = [s > mapped.score_threshold for s in scores]
    assert inside == [p > 0 for p in mapped.probabilities]
    assert mapped.support_size == sum(inside)
    assert sum(mapped.probabilities) == pytest.approx(1.0)


def test_family_curves_saturate_where_the_paper_says() -> None:
    figures = sparse_mapping.family_figures()
    assert len(figures.t) == sparse_mapping.CURVE_POINTS
    for curve in figures.curves:
        if curve.saturates_at is None:
            assert curve.alpha == 1.0
            assert all(0 < p < 1 for p in curve.p_first)
            continue
        assert curve.saturates_at == pytest.approx(1 / (curve.alpha - 1))
        for t, p in zip(figures.t, curve.p_first, strict=True):
            if t >= curve.saturates_at + 1e-9:
                assert p == 1.0
            if t <= -curve.saturates_at - 1e-9:
                assert p == 0.0
    side = sparse_mapping.SIMPLEX_GRID_SIDE
    for image in figures.simplex:
        assert sum(image.counts.values()) == side * side
        assert len(image.p) == side * side
