"""Subwords for the translation models: one SentencePiece model per language, trained on a
corpus version's training split and saved beside the checkpoints, and the lengths the models
take."""

from __future__ import annotations

import io
from pathlib import Path

import sentencepiece as spm

from models.checkpoints import CHECKPOINT_DIR
from models.seq2seq import BOS, EOS, PAD, UNK
from models.tasks.translation import SentencePair

VOCAB_SIZE = 4000  # per language
MAX_TOKENS = 64  # training pairs longer than this (either side) are skipped
MAX_SOURCE_WORDS, MAX_SOURCE_CHARS = 30, 200


def tokenizer_path(language: str, directory: Path = CHECKPOINT_DIR, corpus: str = "v1") -> Path:
    """v1's tokenizers keep their first names; a later corpus's carry its version."""
    version = "" if corpus == "v1" else f"{corpus}-"
    return directory / f"seq2seq-translate-{version}spm-{language}.model"


def train_tokenizer(sentences: list[str], vocab_size: int = VOCAB_SIZE) -> bytes:
    """A unigram SentencePiece model, deterministic: one thread, input in file order.

    Its ids 0-3 are the seq2seq specials (pad, bos, eos, unk)."""
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences),
        model_writer=model,
        vocab_size=vocab_size,
        model_type="unigram",
        character_coverage=1.0,
        pad_id=PAD,
        bos_id=BOS,
        eos_id=EOS,
        unk_id=UNK,
        num_threads=1,
        shuffle_input_sentence=False,
        minloglevel=2,
    )
    return model.getvalue()


def load_tokenizers(
    directory: Path = CHECKPOINT_DIR, corpus: str = "v1"
) -> tuple[spm.SentencePieceProcessor, spm.SentencePieceProcessor]:
    """(English, German) tokenizers saved beside the checkpoints."""
    return tuple(
        spm.SentencePieceProcessor(model_file=str(tokenizer_path(language, directory, corpus)))
        for language in ("en", "de")
    )


def ensure_tokenizers(
    train: list[SentencePair], directory: Path = CHECKPOINT_DIR, corpus: str = "v1"
) -> None:
    for language, texts in (("en", [p.source for p in train]), ("de", [p.target for p in train])):
        path = tokenizer_path(language, directory, corpus)
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(train_tokenizer(texts))
            tmp.replace(path)


def max_output_length(source_len: int) -> int:
    return 2 * source_len + 10
