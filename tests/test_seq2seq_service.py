"""The seq2seq family's entry point, without HTTP: a request in, one Trace out, rounded once."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.registry import ModelRegistry, ModelUnavailable
from app.seq2seq import service
from app.seq2seq.requests import InflectRequest, Seq2SeqResponse, TranslateRequest
from models.errors import InvalidInput
from models.seq2seq import Trace, six_digits
from models.seq2seq_run import SERVED, run
from tests.test_api_seq2seq import write_tiny_checkpoints


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> ModelRegistry:
    target = tmp_path_factory.mktemp("seq2seq-run")
    write_tiny_checkpoints(target)
    return ModelRegistry(target)


@pytest.mark.parametrize(
    "request_",
    [
        InflectRequest(lemma="walk", language="en", features="V;PST", beam_width=3),
        TranslateRequest(text="Permission denied", alpha=2.0, beam_width=2),
    ],
)
def test_run_returns_the_trace_the_json_and_the_figure_render(
    registry: ModelRegistry, request_: InflectRequest | TranslateRequest
) -> None:
    response = run(request_, registry.get)
    assert isinstance(response, Seq2SeqResponse) and isinstance(response, Trace)
    assert response.model.trained_output_alpha == request_.alpha == response.out_alpha
    assert 1 <= len(response.hypotheses) <= request_.beam_width
    assert response.covered_mass <= 1.0
    for step in response.steps:  # rounded once, in models.seq2seq.decode
        assert all(a == six_digits(a) for a in step.attention)
        assert all(e.probability == six_digits(e.probability) for e in step.output)
    # the figure is drawn from this very object
    view = service.result_view(response)["view"]
    assert view["result"] is response
    assert len(view["heatmap"]["rows"]) == len(response.steps)


def test_run_explains_what_it_cannot_take(registry: ModelRegistry) -> None:
    with pytest.raises(InvalidInput, match="never saw"):
        run(InflectRequest(lemma="w4lk", language="en", features="V;PST"), registry.get)
    with pytest.raises(InvalidInput, match="no inflection model trained"):
        run(InflectRequest(lemma="walk", language="en", features="V;PST", alpha=3.0), registry.get)


def test_run_says_which_model_is_missing(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match=SERVED["translation"][1.5]):
        run(TranslateRequest(text="Permission denied"), ModelRegistry(tmp_path).get)


def test_copied_spans_mark_the_pieces_the_pointer_wrote() -> None:
    """Runs of the best hypothesis by whether pointing had at least half of each step's mass;
    the end-of-sentence step is not a piece; a generate-only answer has no spans."""
    from types import SimpleNamespace

    from app.seq2seq.service import copied_spans

    def answer(masses: list[float | None]) -> SimpleNamespace:
        tokens = ["▁Server", "▁19", "2", ".", "1", "▁abgelehnt"]
        steps = [SimpleNamespace(copy_mass=m) for m in masses]
        return SimpleNamespace(hypotheses=[SimpleNamespace(tokens=tokens)], steps=steps)

    spans = copied_spans(answer([0.0, 0.9, 0.5, 0.7, 0.6, 0.49, 0.0]))
    assert spans == [
        {"text": "Server ", "copied": False},
        {"text": "192.1", "copied": True},
        {"text": " abgelehnt", "copied": False},
    ]
    assert copied_spans(answer([None] * 7)) is None
    assert copied_spans(answer([0.8] * 7)) == [{"text": "Server 192.1 abgelehnt", "copied": True}]
