"""A trained translation model served: sentence -> the decoding Trace."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import sentencepiece as spm

from models.checkpoints import CHECKPOINT_DIR, load_model
from models.errors import InvalidInput
from models.seq2seq import Seq2Seq, Trace, decode
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
