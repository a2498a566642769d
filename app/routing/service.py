"""The routing figures' answers, from the served attention model (models/attention_routing.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from app.routing.requests import (
    MODEL,
    AttentionAnswer,
    AttentionFigure,
    ModelInfo,
    ReinforceAnswer,
    ReinforceFigure,
    SampledTour,
    Tour,
)
from models import attention_routing
from models.pointer_run import Check, four_digits
from models.tasks import tsp

Load = Callable[[str], Any]  # a checkpoint's name -> the loaded model (ModelRegistry.get)


def served(load: Load) -> tuple[attention_routing.AttentionModel, ModelInfo]:
    served = load(MODEL)  # raises ModelUnavailable, answered by app.errors
    return served.model, ModelInfo(name=served.name, sha256=served.sha256)


def attention(load: Load, figure: AttentionFigure) -> AttentionAnswer:
    model, info = served(load)
    cities = tsp.validate_points(np.array(figure.points))  # InvalidInput: the reader's error
    weights = attention_routing.encoder_attention(model, cities)[figure.layer - 1, figure.head - 1]
    rows = four_digits(weights).tolist()  # rounded as every pointer trace's probabilities
    return AttentionAnswer(
        layer=figure.layer, head=figure.head, city=figure.city, weights=rows, model=info
    )


def reinforce(load: Load, figure: ReinforceFigure, check: Check = None) -> ReinforceAnswer:
    model, info = served(load)
    cities = tsp.validate_points(np.array(figure.points))
    view = attention_routing.reinforce_view(model, cities, figure.samples, figure.seed, check)
    baseline = Tour(
        order=view.baseline.tour, length=view.baseline.length, log_prob=view.baseline.log_prob
    )
    samples = [
        SampledTour(order=s.tour, length=s.length, log_prob=s.log_prob, advantage=a)
        for s, a in zip(view.samples, view.advantages(), strict=True)
    ]
    return ReinforceAnswer(baseline=baseline, samples=samples, model=info)
