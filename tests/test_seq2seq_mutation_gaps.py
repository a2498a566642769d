"""Seq2seq decoding bugs the older tests let through, on toy models and the shipped checkpoints.

- A search cut off by `max_len` is not exact, whatever the beam held: its live hypotheses
  have nonzero probability and never finished.
"""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from models.checkpoints import CHECKPOINT_DIR, load_model, read_manifest
from models.seq2seq import (
    EOS,
    PAD,
    Config,
    Seq2Seq,
    beam_search,
    decode,
    length_bucketed_batches,
    pad_batch,
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


# ---- what mutation testing found next (tools/mutation-survivors.md, models/seq2seq.py) ----

# (name, teacher-forced loss of a padded batch, beam 3 token sequences and log-probabilities)
PINNED = [
    (
        "seq2seq-inflect-a1.5",
        3.797349452972412,
        [[43, 47, 34, 55], [34, 43, 49, 34], [38, 47, 34, 43, 49, 34]],
        [-1.913946, -1.942224, -3.117689],
    ),
    (
        "seq2seq-translate-big-a1.5",  # two encoder layers
        1.6531614065170288,
        [[14, 7], [13, 7], [805, 7]],
        [-3.078104, -3.121975, -4.043604],
    ),
]


@pytest.mark.parametrize(("name", "loss", "tokens", "log_probs"), PINNED)
def test_shipped_models_score_and_decode_as_recorded(
    name: str, loss: float, tokens: list, log_probs: list
) -> None:
    """The network's wiring (the encoder's direction and layers, its final states, padding
    left out of the loss) pinned on shipped checkpoints: any change moves these numbers."""
    shipped_ready(name)
    torch.set_num_threads(1)
    model, _ = load_model(name)
    src, lengths = pad_batch([[5, 6, 7, 8, 9], [10, 11], [12, 13, 14]])
    tgt, _ = pad_batch([[5, 6, EOS], [7, EOS], [8, 9, 10, 11, EOS]])
    with torch.no_grad():
        assert float(model(src, lengths, tgt)) == pytest.approx(loss, rel=1e-5)
    result = beam_search(model, [5, 6, 7, 8, 9], 3, 12)
    assert [h.tokens for h in result.hypotheses] == tokens
    assert [h.log_prob for h in result.hypotheses] == pytest.approx(log_probs, abs=1e-5)


def _untrained_decode(**options):  # type: ignore[no-untyped-def]
    torch.manual_seed(0)
    model = Seq2Seq(Config(9, 9, emb_dim=4, hidden=8, attn_alpha=2.0, out_alpha=2.0)).eval()
    with torch.no_grad():
        model.attn_score.weight.mul_(30)  # peaked scores: sparsemax leaves some at 0
    vocab = [str(i) for i in range(9)]
    source = [4, 5, 6, 7, 8, 4]
    return decode(model, source, list("abcdef"), vocab, " ".join, **options)


def test_decode_defaults_to_beam_5_and_50_steps() -> None:
    torch.manual_seed(0)
    model = Seq2Seq(Config(9, 9, emb_dim=4, hidden=8)).eval()  # softmax: nothing is ruled out
    with torch.no_grad():
        model.generator.bias[EOS] = -30.0  # ending is possible but never best
    trace = decode(model, [4, 5, 6], list("abc"), [str(i) for i in range(9)], " ".join)
    assert len(trace.hypotheses) == 5
    assert [len(h.tokens) for h in trace.hypotheses] == [50] * 5


def test_decode_reports_attention_support_as_the_nonzero_weights() -> None:
    trace = _untrained_decode()
    for step in trace.steps:
        assert step.attention_support == sum(a > 0 for a in step.attention)
    assert any(step.attention_support < 6 for step in trace.steps)  # sparsemax has zeros


def test_decode_passes_the_budget_check_to_the_search() -> None:
    class Stop(Exception):
        pass

    def check() -> None:
        raise Stop

    with pytest.raises(Stop):
        _untrained_decode(check=check)


def test_an_epoch_of_batches_holds_every_pair_once() -> None:
    pairs = [([4] * (1 + i % 7), [5, i % 50 + 3, EOS]) for i in range(32 * 60)]  # 60 batches
    batches = length_bucketed_batches(pairs, 32, seed=1, rank=0, start_step=0)
    seen = Counter()
    for _ in range(60):
        src, lengths, tgt = next(batches)
        for row in range(src.shape[0]):
            seen[(int(lengths[row]), tuple(tgt[row].tolist()))] += 1
    expected = Counter((len(s), tuple(t)) for s, t in pairs)
    assert seen == expected


def test_fresh_embeddings_keep_padding_at_zero() -> None:
    model = Seq2Seq(Config(9, 9, emb_dim=4, hidden=8))
    for embedding in (model.src_embed, model.tgt_embed):
        assert embedding.padding_idx == PAD
        assert torch.count_nonzero(embedding.weight[PAD]) == 0
