"""A trained translation model served: sentence -> the decoding Trace."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import sentencepiece as spm

from models.checkpoints import CHECKPOINT_DIR, load_model
from models.copy_translation import (
    CopySeq2Seq,
    PieceKeys,
    PieceStep,
    beam_search_pieces,
    detokenize,
    source_pieces,
)
from models.errors import InvalidInput
from models.seq2seq import (
    EOS,
    OUTPUT_TOP,
    Hypothesis,
    OutputEntry,
    Seq2Seq,
    Step,
    Trace,
    decode,
    six_digits,
)
from models.tasks.translation import entry_corpus
from models.tasks.translation_tokenizers import (
    MAX_SOURCE_CHARS,
    MAX_SOURCE_WORDS,
    load_tokenizers,
    max_output_length,
)


class InvalidTranslationInput(InvalidInput):
    """A sentence the model cannot take; the message says what is wrong."""


def normalised_sentence(text: str) -> str:
    """`text` with its whitespace collapsed, if its size is one the model takes; else
    InvalidTranslationInput saying what to change (the API's request checks with this too)."""
    text = " ".join(text.split())
    words = len(text.split())
    if not 1 <= words <= MAX_SOURCE_WORDS or len(text) > MAX_SOURCE_CHARS:
        raise InvalidTranslationInput(
            f"The sentence must have 1-{MAX_SOURCE_WORDS} words and at most "
            f"{MAX_SOURCE_CHARS} characters; it has {words} words and {len(text)} characters."
        )
    return text


class Translator:
    """A trained EN->DE model with its tokenizers: sentence -> Trace."""

    def __init__(
        self,
        model: Seq2Seq,
        source_sp: spm.SentencePieceProcessor,
        target_sp: spm.SentencePieceProcessor,
        name: str = "",
    ) -> None:
        self.model, self.source_sp, self.target_sp, self.name = model, source_sp, target_sp, name
        self.target_vocab = [target_sp.id_to_piece(i) for i in range(target_sp.get_piece_size())]

    @classmethod
    def load(cls, name: str, directory: Path = CHECKPOINT_DIR) -> Translator:
        """The checkpoint with the tokenizers its manifest entry names (its corpus's)."""
        model, entry = load_model(name, directory)
        return cls(model, *load_tokenizers(directory, entry_corpus(entry)), name)

    def translate(
        self,
        text: str,
        beam_width: int = 5,
        attn_alpha: float | None = None,
        out_alpha: float | None = None,
        check: Callable[[], None] | None = None,
    ) -> Trace:
        """The trace of one sentence; `check` as in models.seq2seq.beam_search."""
        text = normalised_sentence(text)
        pieces = self.source_sp.encode(text, out_type=str)
        ids = [self.source_sp.piece_to_id(p) for p in pieces]
        return decode(
            self.model,
            ids,
            pieces,
            self.target_vocab,
            self.target_sp.decode_pieces,
            width=beam_width,
            max_len=max_output_length(len(ids)),
            attn_alpha=attn_alpha,
            out_alpha=out_alpha,
            check=check,
        )


class CopyTranslator(Translator):
    """A copy-capable model (models/copy_translation.py): the same Trace, each step with the
    pointer's share beside the attention, its output distribution over pieces (a piece's
    vocabulary entry and the source positions holding it summed)."""

    model: CopySeq2Seq

    def translate(
        self,
        text: str,
        beam_width: int = 5,
        attn_alpha: float | None = None,
        out_alpha: float | None = None,
        check: Callable[[], None] | None = None,
    ) -> Trace:
        pieces = source_pieces(
            normalised_sentence(text), self.source_sp, self.model.config.split_numbers
        )
        attn = self.model.config.attn_alpha if attn_alpha is None else attn_alpha
        out = self.model.config.out_alpha if out_alpha is None else out_alpha
        result = beam_search_pieces(
            self.model,
            pieces,
            self.source_sp,
            self.target_sp,
            beam_width,
            max_output_length(len(pieces)),
            attn,
            out,
            check,
        )
        hypotheses = [
            Hypothesis(text=detokenize(tokens), tokens=tokens, probability=math.exp(h.log_prob))
            for h, tokens in zip(result.hypotheses, result.pieces, strict=True)
        ]
        best = result.hypotheses[0]
        emitted = best.keys + ([EOS] if best.finished else [])
        steps = [
            self._step(result.keys.piece(key, self.target_sp), step, result.keys)
            for key, step in zip(emitted, best.trail, strict=True)
        ]
        return Trace(
            source_tokens=pieces,
            hypotheses=hypotheses,
            exact=result.exact,
            covered_mass=min(result.covered_mass, 1.0),
            steps=steps,
            attn_alpha=attn,
            out_alpha=out,
        )

    def _step(self, token: str, step: PieceStep, keys: PieceKeys) -> Step:
        support = int((step.pieces > 0).sum())
        top_p, top_key = step.pieces.topk(min(OUTPUT_TOP, support))
        return Step(
            token=token,
            attention=[six_digits(float(a)) for a in step.attention],
            attention_support=int((step.attention > 0).sum()),
            output=[
                OutputEntry(token=keys.piece(key, self.target_sp), probability=six_digits(p))
                for p, key in zip(top_p.tolist(), top_key.tolist(), strict=True)
            ],
            support_size=support,
            copy_weights=[six_digits(float(c)) for c in step.copy],
            copy_mass=six_digits(step.copy_mass),
        )
