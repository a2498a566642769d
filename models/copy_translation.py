r"""A copy-capable sparse translation model: at each step the decoder either generates a
vocabulary piece or points at a source position and emits that position's piece.

Read top to bottom:

1. ``fenchel_young_set_loss``: one α-entmax over the concatenated scores
   $s = [z^{\text{vocab}}; z^{\text{copy}}] \in \mathbb{R}^{V+S}$ (the pointer-softmax
   family), trained with the Fenchel–Young loss against the distribution $q$ that spreads the
   gold piece uniformly over its vocabulary entry (when it has one) and every source position
   holding the same piece:
   $$L_\alpha(s; q) = \Omega_\alpha^*(s) + \Omega_\alpha(q) - s^\top q, \qquad
   \nabla_s L = \alpha\text{-entmax}(s) - q,$$
   with $\Omega_\alpha(p) = (\sum_j p_j^\alpha - 1)/(\alpha(\alpha-1))$ ($\sum_j p_j\log p_j$
   at α = 1) and $\Omega^*_\alpha(s) = p^\top s - \Omega_\alpha(p)$, $p = \alpha\text{-entmax}(s)$.
   It is exact for every α: no gate, no log of a probability that a sparse map can make 0.
   It is zero exactly when $p = q$, i.e. (α > 1) the gold set's scores are equal and exceed
   every other score by $k^{1-\alpha}/(\alpha-1)$ for a gold set of size $k$.
2. Pieces as strings: the two languages have separate SentencePiece models, so the decoder
   emits piece *strings*. ``PieceKeys`` gives every string one integer key: its target
   vocabulary id when the vocabulary has it, else a per-source extended id ``V + i``, so a
   source piece the target vocabulary lacks can still be copied. ``target_pieces`` writes a
   training target in pieces: a target word that the source holds verbatim with the source's
   pieces (so it can be copied), the rest with the target tokenizer.
3. ``CopySeq2Seq``: the generate-only ``Seq2Seq`` (same parameter names, so a shipped
   checkpoint initialises it) plus a copy-attention projection $W_c$: copy score
   $z^{\text{copy}}_j = \tilde h_t^\top W_c m_j + b_c$ from the attentional vector
   $\tilde h_t$ (what the generator reads) and the encoder state $m_j$. A copied piece that the
   target vocabulary lacks is fed back as its source embedding through a fresh linear map.
4. Following a span (``copy_spans``): a name or a path is copied piece after piece, and a
   pointer that only knows which *piece* came last loses its place where the source repeats a
   piece (a path holds "/" once per folder, and going on after the wrong one skips one). As
   CopyNet's selective read (Gu et al., 2016), the next step's input adds
   $W_r \sum_j \rho_j m_j$, the encoder states of the positions the last piece came from
   ($\rho$: the copy mass of the positions holding that piece, renormalised; uniform over
   them where the step gave them none), and the gold set of a piece that continues a copied
   run is the next position of that run only (``aligned_positions``). $W_r$ starts at zero, so
   the fine-tune starts from the model it is initialised from.
5. Decoding over pieces: a piece's probability is the sum over its vocabulary entry and its
   source positions (``piece_probabilities``); greedy and beam search run over pieces, so two
   ways to emit one piece are one hypothesis, and the beam's exactness certificate counts
   pieces.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import sentencepiece as spm
import torch
from torch import nn

from models.entmax import entmax, entmax_loss
from models.seq2seq import BOS, EOS, PAD, UNK, Config, DecoderState, Memory, Seq2Seq, alpha_map

# --- 1. the loss --------------------------------------------------------------------------------


def tsallis_omega(p: torch.Tensor, alpha: float) -> torch.Tensor:
    """Ω_α(p) per row (the negative Tsallis entropy; Σ p log p at α = 1), 0 log 0 = 0."""
    if alpha == 1:
        return torch.special.xlogy(p, p).sum(-1)
    powered = torch.linalg.vecdot(p, p.sqrt()) if alpha == 1.5 else p.pow(alpha).sum(-1)
    return (powered - 1) / (alpha * (alpha - 1))


def uniform_omega(k: torch.Tensor, alpha: float) -> torch.Tensor:
    """Ω_α of the uniform distribution on k entries: (k^(1-α) - 1) / (α(α-1)), -log k at 1."""
    if alpha == 1:
        return -k.log()
    return (k.pow(1 - alpha) - 1) / (alpha * (alpha - 1))


def fenchel_young_set_loss(
    scores: torch.Tensor, gold: torch.Tensor, alpha: float, reduction: str = "mean"
) -> torch.Tensor:
    r"""The FY loss of α-entmax(scores) against q, the uniform distribution on each row's gold
    set. scores (rows, classes), -inf where masked; gold (rows, classes) bool, at least one
    True per row and never at a masked score. Gradient: α-entmax(scores) - q.

    Computed from the one-hot loss of models.entmax (whose compiled kernel reads little more
    than each row's support): with y any gold entry and Ω(e_y) = 0,
    $L(s; q) = L(s; e_y) + s_y - s^\top q + \Omega(q)$, and the gradients add up to p - q."""
    first = gold.to(torch.uint8).argmax(-1)  # (rows,): one gold entry per row
    k = gold.sum(-1).to(scores.dtype)  # (rows,)
    one_hot = entmax_loss(scores, first, alpha, reduction="none")
    gold_first = scores.gather(-1, first.unsqueeze(-1)).squeeze(-1)
    gold_mean = torch.where(gold, scores, 0.0).sum(-1) / k  # s^T q
    loss = one_hot + gold_first - gold_mean + uniform_omega(k, alpha)
    return loss.mean() if reduction == "mean" else loss


# --- 2. pieces as strings -----------------------------------------------------------------------


@dataclass
class PieceKeys:
    """One source's pieces keyed in the output space: key < V is a target vocabulary id; key
    V + i is the i-th piece of this source that the vocabulary lacks."""

    vocab_size: int
    source_keys: list[int]  # per source position
    extra: list[str] = field(default_factory=list)  # the out-of-vocabulary pieces, by i

    @classmethod
    def build(
        cls, source_pieces: Sequence[str], target_sp: spm.SentencePieceProcessor
    ) -> PieceKeys:
        keys = cls(target_sp.get_piece_size(), [])
        for piece in source_pieces:
            keys.source_keys.append(keys.key(piece, target_sp))
        return keys

    def key(self, piece: str, target_sp: spm.SentencePieceProcessor) -> int:
        """The piece's key; an unknown piece joins `extra`."""
        vocab_id = vocab_id_of(piece, target_sp)
        if vocab_id is not None:
            return vocab_id
        if piece not in self.extra:
            self.extra.append(piece)
        return self.vocab_size + self.extra.index(piece)

    @property
    def size(self) -> int:
        return self.vocab_size + len(self.extra)

    def piece(self, key: int, target_sp: spm.SentencePieceProcessor) -> str:
        if key < self.vocab_size:
            return target_sp.id_to_piece(key)
        return self.extra[key - self.vocab_size]


def source_pieces(text: str, sp: spm.SentencePieceProcessor, split_numbers: bool) -> list[str]:
    """The source's pieces. With `split_numbers`, a piece that joins digits to other characters
    is cut where digits meet non-digits, when every part is a piece of `sp`: the English
    tokenizer writes "20%" as "▁2" "0%", so no run of source pieces spells the "20" of the German
    "20 %"; cut, "▁2" "0" "%" does, and the pointer can copy the number whole."""
    pieces = sp.encode(text, out_type=str)
    if not split_numbers:
        return pieces
    out: list[str] = []
    for piece in pieces:
        parts = re.findall(r"▁?(?:\d+|[^\d▁]+)|▁", piece)
        known = len(parts) > 1 and all(vocab_id_of(part, sp) is not None for part in parts)
        out += parts if known else [piece]
    return out


def vocab_id_of(piece: str, sp: spm.SentencePieceProcessor) -> int | None:
    """The piece's id in `sp`'s vocabulary, or None (sp maps unknown strings to <unk>)."""
    i = sp.piece_to_id(piece)
    return i if i != UNK or piece == sp.id_to_piece(UNK) else None


def detokenize(pieces: Sequence[str]) -> str:
    """Pieces (SentencePiece strings, '▁' marking a word start) -> text."""
    return "".join(pieces).replace("▁", " ").strip()


MAX_RUN = 32  # source pieces one copied target word may span


def target_pieces(
    source_pieces: Sequence[str], target: str, target_sp: spm.SentencePieceProcessor
) -> list[str]:
    """The target as piece strings: a word the source holds verbatim in pieces that start a
    source word is written with those pieces; a word the source holds inside a source word gets
    the vocabulary's word-start piece '▁' and then the source pieces; every other word the
    target tokenizer's pieces."""
    runs: dict[str, list[str]] = {}
    for start in range(len(source_pieces)):
        text = ""
        for end in range(start, min(start + MAX_RUN, len(source_pieces))):
            if end > start and source_pieces[end].startswith("▁"):
                break
            text += source_pieces[end]
            runs.setdefault(text, list(source_pieces[start : end + 1]))
    out: list[str] = []
    for word in target.split():
        if "▁" + word in runs:
            out += runs["▁" + word]
        elif word in runs:
            out += ["▁", *runs[word]]
        else:
            out += target_sp.encode(word, out_type=str)
    return out


# --- 3. the model -------------------------------------------------------------------------------


@dataclass
class CopyMemory(Memory):
    copy_keys: torch.Tensor = None  # (k, src_len, hidden): W_c applied once
    source_embedded: torch.Tensor = None  # (k, src_len, emb): for feeding back copied pieces

    def expand(self, k: int) -> CopyMemory:
        tensors = (
            self.values,
            self.keys,
            self.mask,
            self.copy_keys,
            self.source_embedded,
        )
        return CopyMemory(*(t.expand(k, *t.shape[1:]) for t in tensors))


@dataclass
class CopyConfig(Config):
    split_numbers: bool = False  # the source's pieces cut between digits and others (source_pieces)
    copy_spans: bool = False  # the selective read and the span-following gold (module doc, 4.)


class CopySeq2Seq(Seq2Seq):
    """Seq2Seq whose every step scores the vocabulary and the source positions together."""

    config: CopyConfig

    @classmethod
    def from_config(cls, config: dict) -> CopySeq2Seq:
        return cls(CopyConfig(**config))

    def __init__(self, config: CopyConfig) -> None:
        super().__init__(config)
        c = config
        self.copy_score = nn.Linear(c.hidden, c.hidden, bias=False)  # W_c
        self.copy_bias = nn.Parameter(torch.zeros(()))  # b_c
        self.copy_input = nn.Linear(c.emb_dim, c.emb_dim)  # a copied OOV piece fed back
        if c.copy_spans:
            self.copy_read = nn.Linear(c.hidden, c.emb_dim, bias=False)  # W_r
            nn.init.zeros_(self.copy_read.weight)

    NEW_PARAMETERS = ("copy_score.weight", "copy_bias", "copy_input.weight", "copy_input.bias")
    SPAN_PARAMETERS = ("copy_read.weight",)

    def encode(self, src: torch.Tensor, lengths: torch.Tensor) -> tuple[CopyMemory, DecoderState]:
        memory, state = super().encode(src, lengths)
        copy = CopyMemory(
            memory.values,
            memory.keys,
            memory.mask,
            self.copy_score(memory.values),
            self.src_embed(src),
        )
        return copy, state

    def copy_step(
        self,
        prev_embedded: torch.Tensor,
        state: DecoderState,
        memory: CopyMemory,
        attn_alpha: float | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, DecoderState]:
        """One step from the previous piece's embedding (k, emb) -> scores (k, V + src_len)
        (-inf at padding), attention (k, src_len), the next state; `attn_alpha` None is the
        trained one."""
        x = torch.cat([prev_embedded, state.feed], dim=-1)  # (k, emb + hidden)
        h, c = self.decoder(self.dropout(x), (state.h, state.c))
        scores = (memory.keys * h.unsqueeze(1)).sum(-1)  # (k, src_len)
        alpha = self.config.attn_alpha if attn_alpha is None else attn_alpha
        attention = alpha_map(scores.masked_fill(~memory.mask, float("-inf")), alpha)
        context = (attention.unsqueeze(-1) * memory.values).sum(1)  # (k, hidden)
        feed = torch.tanh(self.attn_combine(torch.cat([context, h], dim=-1)))  # (k, hidden)
        dropped = self.dropout(feed)
        logits = self.generator(dropped)  # (k, V)
        copy = (memory.copy_keys * dropped.unsqueeze(1)).sum(-1) + self.copy_bias  # (k, src_len)
        copy = copy.masked_fill(~memory.mask, float("-inf"))
        return torch.cat([logits, copy], dim=-1), attention, DecoderState(h, c, feed)

    def embed_pieces(
        self,
        vocab_ids: torch.Tensor,
        copied_from: torch.Tensor,
        memory: CopyMemory,
        read: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Decoder inputs (k, emb): the target embedding of vocab_ids (k,), or, where
        copied_from (k,) is a source position (>= 0), the mapped source embedding there; with
        `copy_spans`, plus W_r of the encoder states weighted by `read` (k, src_len)."""
        embedded = self.tgt_embed(vocab_ids)
        copied = copied_from >= 0
        if bool(copied.any()):
            rows = torch.arange(len(vocab_ids))
            source = memory.source_embedded[rows, copied_from.clamp_min(0)]  # (k, emb)
            embedded = torch.where(copied[:, None], self.copy_input(source), embedded)
        if self.config.copy_spans and read is not None:
            embedded = embedded + self.copy_read(torch.bmm(read.unsqueeze(1), memory.values)[:, 0])
        return embedded

    def forward(self, batch: CopyBatch) -> torch.Tensor:
        """Teacher-forced mean FY set loss over the batch's target pieces."""
        memory, state = self.encode(batch.src, batch.lengths)
        bos = torch.full_like(batch.vocab_ids[:, 0], BOS)
        no_copy = torch.full_like(bos, -1)
        inputs = self.embed_pieces(bos, no_copy, memory)
        scores = []
        for t in range(batch.vocab_ids.shape[1]):
            step_scores, _, state = self.copy_step(inputs, state, memory)
            scores.append(step_scores)
            read = batch.read[:, t]
            inputs = self.embed_pieces(batch.vocab_ids[:, t], batch.copied_from[:, t], memory, read)
        scores = torch.stack(scores, dim=1)  # (batch, tgt_len, V + src_len)
        keep = batch.vocab_ids != PAD
        return fenchel_young_set_loss(scores[keep], batch.gold[keep], self.config.out_alpha)


# --- batches -------------------------------------------------------------------------------------


@dataclass
class CopyExampleIds:
    """One training pair in the model's terms."""

    src: list[int]  # source vocabulary ids
    target_keys: list[int]  # per target piece (then EOS)
    vocab_size: int
    positions: list[list[int]]  # per target key: the source positions in its gold set

    @classmethod
    def build(
        cls,
        source: str,
        target: str,
        source_sp: spm.SentencePieceProcessor,
        target_sp: spm.SentencePieceProcessor,
        split_numbers: bool = False,
        spans: bool = False,
    ) -> CopyExampleIds:
        pieces = source_pieces(source, source_sp, split_numbers)
        keys = PieceKeys.build(pieces, target_sp)
        target_keys = [keys.key(p, target_sp) for p in target_pieces(pieces, target, target_sp)]
        target_keys.append(EOS)
        return cls(
            [source_sp.piece_to_id(p) for p in pieces],
            target_keys,
            keys.vocab_size,
            aligned_positions(keys.source_keys, target_keys, spans),
        )


def aligned_positions(
    source_keys: Sequence[int], target_keys: Sequence[int], spans: bool
) -> list[list[int]]:
    """Per target key, the source positions holding it. With `spans`, a key that continues a
    run (the position after one the previous key was aligned to holds it) keeps only those
    next positions, so a run that starts ambiguous ("/" stands once per folder of a path)
    narrows to one place as it goes."""
    out: list[list[int]] = []
    previous: set[int] = set()
    for key in target_keys:
        holding = [j for j, source_key in enumerate(source_keys) if source_key == key]
        following = [j for j in holding if j - 1 in previous] if spans else []
        out.append(following or holding)
        previous = set(out[-1])
    return out


@dataclass
class CopyBatch:
    src: torch.Tensor  # (batch, src_len) source ids, PAD-padded
    lengths: torch.Tensor  # (batch,)
    vocab_ids: torch.Tensor  # (batch, tgt_len): the piece's vocabulary id, UNK if none, PAD after
    copied_from: torch.Tensor  # (batch, tgt_len): a source position holding an OOV piece, or -1
    gold: torch.Tensor  # (batch, tgt_len, V + src_len) bool: the gold set of each step
    read: torch.Tensor  # (batch, tgt_len, src_len): uniform over each piece's gold positions


def collate(examples: Sequence[CopyExampleIds]) -> CopyBatch:
    b = len(examples)
    vocab = examples[0].vocab_size
    s = max(len(e.src) for e in examples)
    t = max(len(e.target_keys) for e in examples)
    src = torch.full((b, s), PAD, dtype=torch.long)
    target_keys = torch.full((b, t), -2, dtype=torch.long)
    at_source = torch.zeros((b, t, s), dtype=torch.bool)
    for row, e in enumerate(examples):
        src[row, : len(e.src)] = torch.tensor(e.src)
        target_keys[row, : len(e.target_keys)] = torch.tensor(e.target_keys)
        for step, positions in enumerate(e.positions):
            at_source[row, step, positions] = True
    lengths = torch.tensor([len(e.src) for e in examples])
    real = target_keys >= 0
    in_vocab = real & (target_keys < vocab)
    vocab_ids = torch.where(in_vocab, target_keys, torch.where(real, UNK, PAD))
    first = at_source.float().argmax(-1)  # the first gold position of the piece
    copied_from = torch.where(real & ~in_vocab, first, -1)
    gold_vocab = torch.zeros((b, t, vocab), dtype=torch.bool)
    gold_vocab.scatter_(-1, vocab_ids.unsqueeze(-1), in_vocab.unsqueeze(-1))
    read = at_source / at_source.sum(-1, keepdim=True).clamp_min(1)
    gold = torch.cat([gold_vocab, at_source], -1)
    return CopyBatch(src, lengths, vocab_ids, copied_from, gold, read)


# --- 4. decoding over pieces ---------------------------------------------------------------------


def piece_probabilities(probs: torch.Tensor, keys: torch.Tensor, size: int) -> torch.Tensor:
    """probs (k, V + src_len) -> (k, size) per piece key: the vocabulary entry's mass plus that
    of every source position with the same key (keys (src_len,))."""
    vocab = probs.shape[1] - keys.shape[0]
    out = torch.zeros((probs.shape[0], size), dtype=probs.dtype)
    out[:, :vocab] = probs[:, :vocab]
    return out.index_add_(1, keys, probs[:, vocab:])


def batch_keys(
    source_pieces: Sequence[Sequence[str]], target_sp: spm.SentencePieceProcessor
) -> tuple[list[PieceKeys], torch.Tensor]:
    """Each source's PieceKeys and their source keys padded to (batch, src_len) with 0 (a
    padded position has probability 0, so adding it anywhere is harmless)."""
    keys = [PieceKeys.build(p, target_sp) for p in source_pieces]
    padded = torch.zeros((len(keys), max(len(p) for p in source_pieces)), dtype=torch.long)
    for row, k in enumerate(keys):
        padded[row, : len(k.source_keys)] = torch.tensor(k.source_keys)
    return keys, padded


def read_weights(
    chosen: torch.Tensor,
    source_keys: torch.Tensor,
    mask: torch.Tensor,
    copy_probs: torch.Tensor | None,
) -> torch.Tensor:
    """The selective read's ρ (k, src_len) for the chosen piece keys (k,): the copy mass
    (k, src_len) the choosing step gave the positions holding the piece, renormalised; uniform
    over those positions where it gave them none or at the first step (copy_probs None); all
    zero where the source lacks the piece."""
    holding = ((source_keys == chosen[:, None]) & mask).to(torch.float64)
    if copy_probs is not None:
        mass = holding * copy_probs
        holding = torch.where(mass.sum(-1, keepdim=True) > 0, mass, holding)
    return holding / holding.sum(-1, keepdim=True).clamp_min(1e-300)


def _inputs_for(
    model: CopySeq2Seq,
    chosen: torch.Tensor,
    source_keys: torch.Tensor,
    memory: CopyMemory,
    copy_probs: torch.Tensor | None,
) -> torch.Tensor:
    """Decoder inputs (k, emb) for the chosen piece keys (k,), source_keys (k, src_len), and
    the copy mass (k, src_len) of the step that chose them (None at the first step)."""
    in_vocab = chosen < model.config.tgt_vocab
    read = read_weights(chosen, source_keys, memory.mask, copy_probs)
    copied_from = torch.where(in_vocab, -1, read.argmax(-1))
    read = read.to(memory.values.dtype)
    return model.embed_pieces(torch.where(in_vocab, chosen, UNK), copied_from, memory, read)


@torch.inference_mode()
def greedy_decode_pieces(
    model: CopySeq2Seq,
    source_pieces: Sequence[Sequence[str]],
    source_sp: spm.SentencePieceProcessor,
    target_sp: spm.SentencePieceProcessor,
    max_len: int,
) -> list[list[str]]:
    """Batched greedy decoding: at every step the most probable piece, its mass summed over
    its vocabulary entry and its source positions; returns piece strings without EOS."""
    keys, source_keys = batch_keys(source_pieces, target_sp)
    src = torch.full(source_keys.shape, PAD, dtype=torch.long)
    for row, pieces in enumerate(source_pieces):
        src[row, : len(pieces)] = torch.tensor([source_sp.piece_to_id(p) for p in pieces])
    memory, state = model.encode(src, torch.tensor([len(p) for p in source_pieces]))
    vocab = model.config.tgt_vocab
    chosen = torch.full((len(keys),), BOS, dtype=torch.long)
    outputs, done = [], torch.zeros(len(keys), dtype=torch.bool)
    copy_probs = None
    for _ in range(max_len):
        inputs = _inputs_for(model, chosen, source_keys, memory, copy_probs)
        scores, _, state = model.copy_step(inputs, state, memory)
        # argmax of the piece mass needs the distribution, not just the scores
        probs = entmax(scores, model.config.out_alpha)  # (batch, V + src_len)
        copy_probs = probs[:, vocab:]
        per_piece = torch.zeros_like(probs)
        per_piece[:, :vocab] = probs[:, :vocab]
        per_piece.scatter_add_(1, source_keys, probs[:, vocab:])
        chosen = per_piece.argmax(-1)
        outputs.append(chosen)
        done |= chosen == EOS
        if bool(done.all()):
            break
    results = []
    for row, sequence in enumerate(torch.stack(outputs, 1).tolist()):
        sequence = sequence[: sequence.index(EOS)] if EOS in sequence else sequence
        results.append([keys[row].piece(key, target_sp) for key in sequence])
    return results


@dataclass(frozen=True)
class PieceStep:
    """What one decoding step of a hypothesis saw, in float64."""

    attention: torch.Tensor  # (src_len,) the attention over source positions
    pieces: torch.Tensor  # (keys,) each piece's probability: vocabulary entry + its positions
    copy: torch.Tensor  # (src_len,) the mass each source position got as a pointer

    @property
    def copy_mass(self) -> float:
        return float(self.copy.sum())


@dataclass
class PieceHypothesis:
    keys: list[int]
    log_prob: float
    finished: bool
    trail: list[PieceStep]  # one per step, the step that ended it included


@dataclass
class PieceBeamResult:
    hypotheses: list[PieceHypothesis]  # best first
    pieces: list[list[str]]  # per hypothesis
    exact: bool
    covered_mass: float
    keys: PieceKeys  # names every key of the steps' piece distributions

    @property
    def best(self) -> list[str]:
        return self.pieces[0]


@torch.inference_mode()
def beam_search_pieces(
    model: CopySeq2Seq,
    source_pieces: Sequence[str],
    source_sp: spm.SentencePieceProcessor,
    target_sp: spm.SentencePieceProcessor,
    width: int = 5,
    max_len: int = 50,
    attn_alpha: float | None = None,
    out_alpha: float | None = None,
    check: Callable[[], None] | None = None,
) -> PieceBeamResult:
    """Beam search over pieces for one source. As in models.seq2seq.beam_search, ``exact`` is
    True when no piece with nonzero probability was pruned and no live hypothesis was cut by
    max_len: then the n-best holds every piece sequence the model can produce. The certificate
    counts pieces, not vocabulary entries and positions: merged mass is one continuation.
    The α's default to the trained ones; `check` is called before every step and may raise to
    stop the decode."""
    out_alpha = model.config.out_alpha if out_alpha is None else out_alpha
    keys = PieceKeys.build(source_pieces, target_sp)
    src = torch.tensor([[source_sp.piece_to_id(p) for p in source_pieces]])
    memory, state = model.encode(src, torch.tensor([src.shape[1]]))
    source_keys = torch.tensor([keys.source_keys])  # (1, src_len)
    vocab = keys.vocab_size
    live = [PieceHypothesis([], 0.0, False, [])]
    finished: list[PieceHypothesis] = []
    exact = True
    chosen = torch.tensor([BOS])
    copy_probs = None  # (k, src_len): the copy mass of the step that chose each live key
    for _ in range(max_len):
        if check is not None:
            check()
        k = len(live)
        inputs = _inputs_for(model, chosen, source_keys.expand(k, -1), memory.expand(k), copy_probs)
        scores, attention, state = model.copy_step(inputs, state, memory.expand(k), attn_alpha)
        probs = entmax(scores.double(), out_alpha)  # (k, V + src_len)
        per_piece = piece_probabilities(probs, source_keys[0], keys.size)  # (k, pieces)
        top_p, top_key = per_piece.topk(min(width, per_piece.shape[1]), dim=-1)
        totals = torch.tensor([h.log_prob for h in live], dtype=torch.float64)[:, None]
        totals = totals + top_p.log()  # -inf where a piece has probability 0
        nonzero = int((per_piece > 0).sum())  # continuations: pieces, each counted once
        take = min(width - len(finished), nonzero)
        exact &= nonzero <= take
        best, index = totals.flatten().topk(take)
        survivors, rows = [], []
        for log_prob, flat in zip(best.tolist(), index.tolist(), strict=True):
            row, column = divmod(flat, top_p.shape[1])
            key, parent = int(top_key[row, column]), live[row]
            step = PieceStep(attention[row].double(), per_piece[row], probs[row, vocab:])
            trail = parent.trail + [step]
            if key == EOS:
                finished.append(PieceHypothesis(parent.keys, log_prob, True, trail))
            else:
                survivors.append(PieceHypothesis(parent.keys + [key], log_prob, False, trail))
                rows.append(row)
        if not survivors:
            live = []
            break
        state = state.select(torch.tensor(rows))
        copy_probs = probs[rows, vocab:]
        live = survivors
        chosen = torch.tensor([h.keys[-1] for h in live])
    if live:
        exact = False  # cut by max_len
    candidates = sorted(finished or live, key=lambda h: -h.log_prob)[:width]
    return PieceBeamResult(
        hypotheses=candidates,
        pieces=[[keys.piece(key, target_sp) for key in h.keys] for h in candidates],
        exact=exact,
        covered_mass=float(sum(math.exp(h.log_prob) for h in candidates)),
        keys=keys,
    )


def init_from_generate_only(model: CopySeq2Seq, state_dict: dict[str, torch.Tensor]) -> list[str]:
    """Load a generate-only Seq2Seq's weights into the shared parameters (or a copy model's
    into all of them, W_r left fresh where the copy model has none); returns the fresh
    parameter names, and fails if anything else is missing or unexpected."""
    result = model.load_state_dict(state_dict, strict=False)
    fresh = set(result.missing_keys)
    span = set(CopySeq2Seq.SPAN_PARAMETERS) if model.config.copy_spans else set()
    if result.unexpected_keys or fresh not in (set(), span, set(CopySeq2Seq.NEW_PARAMETERS) | span):
        raise ValueError(f"weights do not fit: {result}")
    return sorted(result.missing_keys)
