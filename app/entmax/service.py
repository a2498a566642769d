"""The α playground and the family figures behind the API: models.sparse_mapping computes,
this module shapes the API response and caches the figures.

No checkpoint is involved: α-entmax is a fixed mapping, so there is nothing to register with the
model registry.
"""

from __future__ import annotations

from functools import lru_cache

from app.entmax.requests import EntmaxRequest, EntmaxResponse
from models import sparse_mapping
from models.sparse_mapping import FamilyFigures


def compute_entmax(request: EntmaxRequest) -> EntmaxResponse:
    """entmax_α(scores) with its threshold; the JSON API and the HTML fragment both show this."""
    mapped = sparse_mapping.run(request.scores, request.alpha)
    return EntmaxResponse(
        probabilities=mapped.probabilities,
        support_size=mapped.support_size,
        tau=mapped.tau,
        score_threshold=mapped.score_threshold,
    )


@lru_cache(maxsize=1)
def family_figures() -> FamilyFigures:
    """The two figures that introduce the family, computed once per process."""
    return sparse_mapping.family_figures()
