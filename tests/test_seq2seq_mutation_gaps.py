"""Seq2seq decoding bugs the older tests let through, on toy models and the shipped checkpoints.

- A search cut off by `max_len` is not exact, whatever the beam held: its live hypotheses
  have nonzero probability and never finished.
"""

from __future__ import annotations

import pytest
import torch

from models.checkpoints import CHECKPOINT_DIR, read_manifest
from models.seq2seq import (
    EOS,
    Config,
    Seq2Seq,
    beam_search,
)


def shipped_ready(name: str) -> None:
    if name not in read_manifest(CHECKPOINT_DIR):
        pytest.skip(f"{name} is not trained in this checkout")


class ChainStub(Seq2Seq):
    """Sparsemax over fixed scores per previous token: BOS -> 4 -> 5 -> EOS, each with
    probability 1, so the one sequence with nonzero probability has 2 tokens and EOS."""

    NEXT = {1: 4, 4: 5, 5: EOS}

    def __init__(self) -> None:
        super().__init__(Config(7, 7, emb_dim=2, hidden=2, attn_alpha=2.0, out_alpha=2.0))

    def step(self, prev, state, memory, attn_alpha=None):  # type: ignore[no-untyped-def]
        logits = torch.zeros(len(prev), 7)
        for row, token in enumerate(prev.tolist()):
            logits[row, self.NEXT.get(token, EOS)] = 5.0
        attention = torch.ones(len(prev), memory.mask.shape[1]) / memory.mask.shape[1]
        return logits, attention, state


@pytest.mark.parametrize("max_len", [1, 2])
def test_a_search_cut_by_max_len_is_not_exact(max_len: int) -> None:
    result = beam_search(ChainStub(), [4], width=3, max_len=max_len)
    assert [h.tokens for h in result.hypotheses] == [[4, 5][:max_len]]
    assert not result.hypotheses[0].finished
    assert not result.exact


def test_the_same_search_with_room_to_finish_is_exact() -> None:
    result = beam_search(ChainStub(), [4], width=3, max_len=3)
    assert [h.tokens for h in result.hypotheses] == [[4, 5]]
    assert result.exact and result.hypotheses[0].finished
    assert result.covered_mass == pytest.approx(1.0)


def test_shipped_sparsemax_inflection_is_exact_only_when_not_cut() -> None:
    shipped_ready("seq2seq-inflect-a2")
    from models.tasks.inflection_serving import Inflector

    inflector = Inflector.load("seq2seq-inflect-a2")
    source = inflector.vocab.encode_source("en", "V;PST", "swim")
    full = beam_search(inflector.model, source, width=5, max_len=50)
    assert full.exact and all(h.finished for h in full.hypotheses)
    assert full.covered_mass == pytest.approx(1.0, abs=1e-5)
    longest = max(len(h.tokens) for h in full.hypotheses)
    for max_len in range(1, longest + 1):  # a length limit that cuts the longest hypothesis
        cut = beam_search(inflector.model, source, width=5, max_len=max_len)
        assert not cut.exact, max_len
