"""Attention seq2seq with sparse (alpha-entmax) attention and output, after Peters, Niculae and
Martins (ACL 2019), "Sparse Sequence-to-Sequence Models".

Read top to bottom:

1. ``Config`` and the two alpha-mappings: ``alpha_map`` turns scores into a distribution
   (alpha = 1 softmax, 1.5 entmax, 2 sparsemax), ``fenchel_young_loss`` is the matching loss.
2. ``Seq2Seq``: embeddings, a bidirectional LSTM encoder, an LSTM decoder with input feeding and
   global "general" attention (Luong et al. 2015, as in OpenNMT-py). Attention weights are
   ``alpha_map(scores, attn_alpha)``; the next-token distribution is
   ``alpha_map(logits, out_alpha)``.
3. ``beam_search``: the n-best with probabilities, plus whether the search was *exact*.
   A sparse output gives most continuations probability exactly 0, so the number of sequences
   with nonzero probability is finite and often tiny. The search is exact when no continuation
   with nonzero probability was ever pruned (and none was cut off by the length limit): then
   the beam found every sequence the model can produce, and their probabilities sum to 1.
4. ``Trace``: what decoding recorded for the best hypothesis at every step — the attention
   distribution over source tokens, the output distribution's nonzero entries, support sizes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import torch
from pydantic import BaseModel, Field
from torch import nn

from models.entmax import entmax, entmax_loss
from models.recipe import TrainDefaults

PAD, BOS, EOS, UNK = 0, 1, 2, 3
SPECIALS = ("<pad>", "<s>", "</s>", "<unk>")
OUTPUT_TOP = 20  # output entries recorded per step


@dataclass
class Config:
    src_vocab: int
    tgt_vocab: int
    emb_dim: int = 64
    hidden: int = 128  # decoder size; each encoder direction has hidden // 2
    dropout: float = 0.2  # on embeddings, decoder inputs and outputs, and between encoder layers
    attn_alpha: float = 1.5
    out_alpha: float = 1.5
    encoder_layers: int = 1  # stacked bidirectional LSTM layers


def alpha_map(scores: torch.Tensor, alpha: float, dim: int = -1) -> torch.Tensor:
    """alpha-entmax (1 softmax, 1.5 entmax, 2 sparsemax); -inf scores get exactly 0."""
    return entmax(scores, alpha, dim=dim)


def fenchel_young_loss(logits: torch.Tensor, target: torch.Tensor, alpha: float) -> torch.Tensor:
    """Mean Fenchel-Young loss over targets that are not -100 (alpha = 1: cross-entropy).

    On the CPU the entmax kernels give the distribution and the loss in one pass that reads
    little more than each row's support, so the full vocabulary costs about what softmax does.
    """
    keep = target != -100
    return entmax_loss(logits[keep], target[keep], alpha)


@dataclass
class DecoderState:
    h: torch.Tensor  # (k, hidden)
    c: torch.Tensor  # (k, hidden)
    feed: torch.Tensor  # (k, hidden): the previous attentional vector (input feeding)

    def select(self, rows: torch.Tensor) -> DecoderState:
        return DecoderState(self.h[rows], self.c[rows], self.feed[rows])


@dataclass
class Memory:
    """The encoded source, shared by every decoding step."""

    values: torch.Tensor  # (k, src_len, hidden)
    keys: torch.Tensor  # (k, src_len, hidden): W_a applied once, for "general" scores
    mask: torch.Tensor  # (k, src_len), True at real tokens

    def expand(self, k: int) -> Memory:
        return Memory(*(t.expand(k, *t.shape[1:]) for t in (self.values, self.keys, self.mask)))


class Seq2Seq(nn.Module):
    def __init__(self, config: Config) -> None:
        super().__init__()
        self.config = config
        c = config
        self.src_embed = nn.Embedding(c.src_vocab, c.emb_dim, padding_idx=PAD)
        self.tgt_embed = nn.Embedding(c.tgt_vocab, c.emb_dim, padding_idx=PAD)
        self.encoder = nn.LSTM(
            c.emb_dim,
            c.hidden // 2,
            num_layers=c.encoder_layers,
            batch_first=True,
            bidirectional=True,
            dropout=c.dropout if c.encoder_layers > 1 else 0.0,
        )
        self.decoder = nn.LSTMCell(c.emb_dim + c.hidden, c.hidden)
        self.attn_score = nn.Linear(c.hidden, c.hidden, bias=False)  # W_a in h_t^T W_a m_s
        self.attn_combine = nn.Linear(2 * c.hidden, c.hidden, bias=False)
        self.generator = nn.Linear(c.hidden, c.tgt_vocab)
        self.dropout = nn.Dropout(c.dropout)

    @classmethod
    def from_config(cls, config: dict) -> Seq2Seq:
        return cls(Config(**config))

    def encode(self, src: torch.Tensor, lengths: torch.Tensor) -> tuple[Memory, DecoderState]:
        """src (batch, src_len) padded with PAD, lengths (batch,) -> memory, initial state."""
        embedded = self.dropout(self.src_embed(src))  # (batch, src_len, emb)
        packed = nn.utils.rnn.pack_padded_sequence(
            embedded, lengths.cpu(), batch_first=True, enforce_sorted=False
        )
        outputs, (h, c) = self.encoder(packed)
        values, _ = nn.utils.rnn.pad_packed_sequence(
            outputs, batch_first=True, total_length=src.shape[1]
        )  # (batch, src_len, hidden)
        # The top layer's two directions' final states, side by side, start the decoder
        # (OpenNMT's brnn); h and c are (layers * 2, batch, hidden // 2).
        h0 = torch.cat([h[-2], h[-1]], dim=-1)  # (batch, hidden)
        c0 = torch.cat([c[-2], c[-1]], dim=-1)
        memory = Memory(values, self.attn_score(values), src != PAD)
        return memory, DecoderState(h0, c0, torch.zeros_like(h0))

    def step(
        self,
        prev: torch.Tensor,
        state: DecoderState,
        memory: Memory,
        attn_alpha: float | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, DecoderState]:
        """One decoder step: prev (k,) -> output logits (k, vocab), attention (k, src_len)."""
        alpha = self.config.attn_alpha if attn_alpha is None else attn_alpha
        x = torch.cat([self.tgt_embed(prev), state.feed], dim=-1)  # (k, emb + hidden)
        h, c = self.decoder(self.dropout(x), (state.h, state.c))
        # Broadcast-and-sum: on CPU much faster than bmm on many tiny matrices.
        scores = (memory.keys * h.unsqueeze(1)).sum(-1)  # (k, src_len)
        attention = alpha_map(scores.masked_fill(~memory.mask, float("-inf")), alpha)
        context = (attention.unsqueeze(-1) * memory.values).sum(1)  # (k, hidden)
        feed = torch.tanh(self.attn_combine(torch.cat([context, h], dim=-1)))  # (k, hidden)
        logits = self.generator(self.dropout(feed))  # (k, vocab)
        return logits, attention, DecoderState(h, c, feed)

    def teacher_forcing(
        self, src: torch.Tensor, lengths: torch.Tensor, tgt_in: torch.Tensor
    ) -> torch.Tensor:
        """Teacher forcing: tgt_in (batch, tgt_len), BOS first -> logits (batch, tgt_len, vocab)."""
        memory, state = self.encode(src, lengths)
        logits = []
        for t in range(tgt_in.shape[1]):
            step_logits, _, state = self.step(tgt_in[:, t], state, memory)
            logits.append(step_logits)
        return torch.stack(logits, dim=1)

    def forward(self, src: torch.Tensor, lengths: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        """Training loss: the output mapping's Fenchel-Young loss per target token.

        tgt (batch, tgt_len) holds each target's tokens, then EOS, then PAD.
        """
        bos = torch.full_like(tgt[:, :1], BOS)
        tgt_in = torch.cat([bos, tgt[:, :-1]], dim=1)  # (batch, tgt_len)
        logits = self.teacher_forcing(src, lengths, tgt_in)
        target = tgt.masked_fill(tgt == PAD, -100)
        return fenchel_young_loss(
            logits.reshape(-1, logits.shape[-1]), target.reshape(-1), self.config.out_alpha
        )


def pad_batch(sequences: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Token lists -> (batch, max_len) tensor padded with PAD, and lengths (batch,)."""
    lengths = torch.tensor([len(s) for s in sequences])
    batch = torch.full((len(sequences), int(lengths.max())), PAD, dtype=torch.long)
    for row, tokens in enumerate(sequences):
        batch[row, : len(tokens)] = torch.as_tensor(tokens, dtype=torch.long)
    return batch, lengths


@torch.inference_mode()
def greedy_decode(
    model: Seq2Seq, sources: Sequence[Sequence[int]], max_len: int
) -> list[list[int]]:
    """Batched argmax decoding (for validation during training); returns tokens without EOS."""
    src, lengths = pad_batch(sources)
    memory, state = model.encode(src, lengths)
    prev = torch.full((len(sources),), BOS, dtype=torch.long)
    outputs = torch.zeros((len(sources), 0), dtype=torch.long)
    done = torch.zeros(len(sources), dtype=torch.bool)
    for _ in range(max_len):
        logits, _, state = model.step(prev, state, memory)
        prev = logits.argmax(-1)  # the mode is the same for every alpha-entmax of the logits
        outputs = torch.cat([outputs, prev[:, None]], dim=1)
        done |= prev == EOS
        if done.all():
            break
    result = []
    for row in outputs.tolist():
        result.append(row[: row.index(EOS)] if EOS in row else row)
    return result


# --- beam search ------------------------------------------------------------------------------


@dataclass
class BeamHypothesis:
    tokens: list[int]  # without BOS / EOS
    log_prob: float
    finished: bool
    rows: list[int] = field(repr=False)  # the row it occupied in each step's beam


@dataclass
class BeamResult:
    hypotheses: list[BeamHypothesis]  # best first
    exact: bool
    covered_mass: float
    attention: list[torch.Tensor]  # per step of the best hypothesis: (src_len,)
    output: list[torch.Tensor]  # per step of the best hypothesis: (vocab,)


@torch.inference_mode()
def beam_search(
    model: Seq2Seq,
    source: Sequence[int],
    width: int = 5,
    max_len: int = 50,
    attn_alpha: float | None = None,
    out_alpha: float | None = None,
    check: Callable[[], None] | None = None,
) -> BeamResult:
    """Beam search for one source, the beam as the batch dimension.

    Scores are exact log-probabilities (float64); continuations with probability 0 are never
    taken. ``exact`` is True when no nonzero-probability continuation was pruned and no live
    hypothesis was cut by ``max_len``: then ``hypotheses`` holds every sequence with nonzero
    probability. With a softmax output that essentially never happens. `check`, if given, is
    called before each step and raises to abandon the search (a deadline, a client gone).
    """
    out_alpha = model.config.out_alpha if out_alpha is None else out_alpha
    src, lengths = pad_batch([source])
    memory, state = model.encode(src, lengths)
    live = [BeamHypothesis([], 0.0, False, [])]
    finished: list[BeamHypothesis] = []
    attentions, outputs = [], []  # per step: (k, src_len), (k, vocab)
    exact = True
    for _ in range(max_len):
        if check is not None:
            check()
        k = len(live)
        prev = torch.tensor([h.tokens[-1] if h.tokens else BOS for h in live])
        logits, attention, state = model.step(prev, state, memory.expand(k), attn_alpha)
        probs = alpha_map(logits, out_alpha)  # (k, vocab)
        attentions.append(attention)
        outputs.append(probs)
        # Only each row's `width` most probable tokens can enter the beam.
        top_p, top_token = probs.topk(min(width, probs.shape[1]), dim=-1)  # (k, width)
        scores = torch.tensor([h.log_prob for h in live], dtype=torch.float64)[:, None]
        scores = scores + top_p.double().log()  # -inf where the probability is 0
        nonzero = int((probs > 0).sum())  # continuations with nonzero probability
        take = min(width - len(finished), nonzero)
        exact &= nonzero <= take
        best, index = scores.flatten().topk(take)
        survivors = []
        for log_prob, flat_index in zip(best.tolist(), index.tolist(), strict=True):
            row, column = divmod(flat_index, top_p.shape[1])
            token = int(top_token[row, column])
            parent = live[row]
            if token == EOS:
                finished.append(BeamHypothesis(parent.tokens, log_prob, True, parent.rows + [row]))
            else:
                survivors.append(
                    (
                        row,
                        BeamHypothesis(
                            parent.tokens + [token], log_prob, False, parent.rows + [row]
                        ),
                    )
                )
        # `take` leaves room for every finished hypothesis, so the beam never overfills: it ends
        # when no hypothesis is left alive, or at max_len.
        if not survivors:
            live = []
            break
        state = state.select(torch.tensor([row for row, _ in survivors]))
        live = [hypothesis for _, hypothesis in survivors]
    if live:
        exact = False  # cut by max_len
    candidates = sorted(finished or live, key=lambda h: -h.log_prob)[:width]
    top = candidates[0]
    return BeamResult(
        hypotheses=candidates,
        exact=exact,
        covered_mass=float(sum(math.exp(h.log_prob) for h in candidates)),
        attention=[attentions[t][row] for t, row in enumerate(top.rows)],
        output=[outputs[t][row] for t, row in enumerate(top.rows)],
    )


# --- the trace: one result type for the family ---------------------------------------------------
# Pydantic models, so the JSON API (models.seq2seq_run extends Trace) and the HTML fragments
# render this very object; `decode` rounds it, once.


class OutputEntry(BaseModel):
    token: str
    probability: float


class Step(BaseModel):
    token: str = Field(description="the token the best hypothesis emitted at this step")
    attention: list[float] = Field(description="attention over the source tokens")
    attention_support: int = Field(description="source tokens with nonzero attention")
    output: list[OutputEntry] = Field(
        description="the output distribution's nonzero entries, most probable first "
        f"(top {OUTPUT_TOP})"
    )
    support_size: int = Field(description="target tokens with nonzero probability")
    copy_weights: list[float] | None = Field(
        None,
        description="a copy model's pointer: the mass each source token got to be emitted "
        "as it is (absent for a generate-only model)",
        exclude_if=lambda value: value is None,
    )
    copy_mass: float | None = Field(
        None,
        description="a copy model's share of this step's mass on source tokens rather than on "
        "the vocabulary (absent for a generate-only model)",
        exclude_if=lambda value: value is None,
    )


class Hypothesis(BaseModel):
    text: str
    tokens: list[str]
    probability: float


class Trace(BaseModel):
    source_tokens: list[str]
    hypotheses: list[Hypothesis] = Field(description="the n-best, most probable first")
    exact: bool = Field(description="the beam held every hypothesis with nonzero probability")
    covered_mass: float = Field(description="total probability of the n-best (at most 1)")
    steps: list[Step] = Field(
        description="for the best hypothesis, one per output token (EOS included)"
    )
    attn_alpha: float = Field(description="α of the attention mapping in this decoding")
    out_alpha: float = Field(description="α of the output mapping in this decoding")

    def to_dict(self) -> dict:
        return self.model_dump()


def six_digits(x: float) -> float:
    """Six significant digits: short JSON, yet a tiny nonzero weight never rounds to an exact 0
    (which sparse mappings give, and the figures draw differently)."""
    return float(f"{x:.6g}")


def decode(
    model: Seq2Seq,
    source_ids: Sequence[int],
    source_tokens: list[str],
    target_vocab: Sequence[str],
    detokenize: Callable[[list[str]], str],
    width: int = 5,
    max_len: int = 50,
    attn_alpha: float | None = None,
    out_alpha: float | None = None,
    check: Callable[[], None] | None = None,
) -> Trace:
    """Beam search and the per-step record of the best hypothesis, as strings for the page;
    `check` as in `beam_search`."""
    attn_alpha = model.config.attn_alpha if attn_alpha is None else attn_alpha
    out_alpha = model.config.out_alpha if out_alpha is None else out_alpha
    result = beam_search(model, source_ids, width, max_len, attn_alpha, out_alpha, check)
    hypotheses = []
    for h in result.hypotheses:
        tokens = [target_vocab[i] for i in h.tokens]
        hypotheses.append(
            Hypothesis(text=detokenize(tokens), tokens=tokens, probability=math.exp(h.log_prob))
        )
    best = result.hypotheses[0]
    emitted = best.tokens + ([EOS] if best.finished else [])
    steps = []
    for token, attention, output in zip(emitted, result.attention, result.output, strict=True):
        support = int((output > 0).sum())
        top_p, top_i = output.topk(min(OUTPUT_TOP, support))
        steps.append(
            Step(
                token=target_vocab[token],
                attention=[six_digits(float(a)) for a in attention],
                attention_support=int((attention > 0).sum()),
                output=[
                    OutputEntry(token=target_vocab[i], probability=six_digits(p))
                    for p, i in zip(top_p.tolist(), top_i.tolist(), strict=True)
                ],
                support_size=support,
            )
        )
    return Trace(
        source_tokens=source_tokens,
        hypotheses=hypotheses,
        exact=result.exact,
        covered_mass=min(result.covered_mass, 1.0),  # float sums may pass 1 by an ulp
        steps=steps,
        attn_alpha=attn_alpha,
        out_alpha=out_alpha,
    )


# --- training batches ---------------------------------------------------------------------------


class Seq2SeqRecipe:
    """What every seq2seq recipe shares for `models.train`: the model from `self.config` and
    length-bucketed batches of `self._pairs` (source ids, target ids). Tasks add the data,
    validation and description."""

    config: Config
    _pairs: list

    def set_up_model(self, src_vocab: int, tgt_vocab: int, lr: float, warmup: int) -> None:
        """`config`, `defaults` and the optimizer note from the recipe's fields (emb_dim,
        hidden, dropout, encoder_layers, alpha, steps, batch_size, validate_every,
        time_budget_min): one α for attention and output."""
        self.config = Config(
            src_vocab=src_vocab,
            tgt_vocab=tgt_vocab,
            emb_dim=self.emb_dim,
            hidden=self.hidden,
            dropout=self.dropout,
            encoder_layers=self.encoder_layers,
            attn_alpha=self.alpha,
            out_alpha=self.alpha,
        )
        self.defaults = TrainDefaults(
            steps=self.steps,
            batch_size=self.batch_size,
            lr=lr,
            validate_every=self.validate_every,
            warmup=warmup,
            time_budget_min=self.time_budget_min,
        )
        self.optimizer_note = (
            "Adam with warm-up and cosine decay (the paper used OpenNMT-py's Adam)."
        )

    def build_model(self) -> Seq2Seq:
        return Seq2Seq(self.config)

    def batches(self, batch_size: int, seed: int, rank: int, start_step: int) -> Iterator:
        return length_bucketed_batches(self._pairs, batch_size, seed, rank, start_step)

    def loss(self, model: nn.Module, batch: tuple) -> torch.Tensor:
        src, lengths, tgt = batch
        return model(src, lengths, tgt)


def length_bucketed_batches(
    pairs: Sequence[tuple[list[int], list[int]]],
    batch_size: int,
    seed: int,
    rank: int,
    start_step: int,
) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """Infinite (src, src_lengths, tgt) batches of similar-length pairs, in seeded epochs.

    Each epoch shuffles the pairs with a generator seeded by (seed, rank, epoch), sorts windows
    of 50 batches by length (so padding is small), and shuffles the batch order; batch k
    therefore depends only on (seed, rank, k), and resuming at ``start_step`` replays nothing.
    """
    per_epoch = max(1, len(pairs) // batch_size)
    epoch, offset = divmod(start_step, per_epoch)
    while True:
        generator = torch.Generator().manual_seed((seed * 1_000_003 + rank) * 1_009 + epoch)
        order = torch.randperm(len(pairs), generator=generator).tolist()
        window = 50 * batch_size
        batches = []
        for start in range(0, per_epoch * batch_size, window):
            chunk = sorted(order[start : start + window], key=lambda i: len(pairs[i][0]))
            batches += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
        batches = [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]
        for indices in batches[offset:]:
            src, lengths = pad_batch([pairs[i][0] for i in indices])
            tgt, _ = pad_batch([pairs[i][1] for i in indices])
            yield src, lengths, tgt
        epoch, offset = epoch + 1, 0
