"""A trained inflection model served: lemma + language + features -> the decoding Trace."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from models.checkpoints import CHECKPOINT_DIR, load_model
from models.seq2seq import Seq2Seq, Trace, decode
from models.tasks.inflection_vocab import InflectionVocab, max_output_length, source_symbols


class Inflector:
    """A trained inflection model with its symbols: lemma + language + features -> Trace."""

    def __init__(self, model: Seq2Seq, vocab: InflectionVocab, name: str = "") -> None:
        self.model, self.vocab, self.name = model, vocab, name

    @classmethod
    def load(cls, name: str, directory: Path = CHECKPOINT_DIR) -> Inflector:
        model, _ = load_model(name, directory)
        return cls(model, InflectionVocab.load(directory), name)

    def inflect(
        self,
        lemma: str,
        language: str,
        features: str,
        beam_width: int = 5,
        attn_alpha: float | None = None,
        out_alpha: float | None = None,
        check: Callable[[], None] | None = None,
    ) -> Trace:
        """The trace of one cell; `check` as in models.seq2seq.beam_search."""
        source = self.vocab.encode_source(language, features, lemma)
        return decode(
            self.model,
            source,
            source_symbols(language, features, lemma),
            self.vocab.target,
            "".join,
            width=beam_width,
            max_len=max_output_length(lemma),
            attn_alpha=attn_alpha,
            out_alpha=out_alpha,
            check=check,
        )


def inflection_options(directory: Path = CHECKPOINT_DIR) -> dict:
    """Languages, their feature sets and lemma characters, from the vocabulary saved with the
    checkpoints (no data build at serve time)."""
    vocab = InflectionVocab.load(directory)
    return {
        "languages": list(vocab.features),
        "features": vocab.features,
        "characters": vocab.characters,
    }
