"""The translation training recipe: one English -> German subword model per α on one corpus
version (models/tasks/translation.py) with that version's tokenizers."""

from __future__ import annotations

from dataclasses import dataclass

import sentencepiece as spm
import torch

from models.checkpoints import load_model, read_manifest
from models.references import matches_reference
from models.seq2seq import EOS, Seq2Seq, Seq2SeqRecipe, greedy_decode
from models.tasks.translation import (
    CORPORA,
    DEV_PERCENT,
    MAX_WORDS,
    TEST_PERCENT,
    SentencePair,
    build_corpus,
    corpus_sha256,
    frequent_training_pairs,
)
from models.tasks.translation_tokenizers import (
    MAX_TOKENS,
    ensure_tokenizers,
    load_tokenizers,
    max_output_length,
    tokenizer_path,
)


@dataclass
class TranslationRecipe(Seq2SeqRecipe):
    """English -> German subword model per alpha (attention alpha = output alpha), trained on
    one corpus version (``CORPORA``) with that version's tokenizers."""

    name: str
    alpha: float
    steps: int = 7_000
    time_budget_min: float | None = None  # equal step counts for every alpha
    emb_dim: int = 64
    hidden: int = 128
    encoder_layers: int = 1
    dropout: float = 0.2
    batch_size: int = 64
    lr: float = 2e-3
    warmup: int = 200
    validate_every: int = 1000
    corpus: str = "v1"
    # A second phase for a big model: fine-tune the trained checkpoint `replay_from` (run with
    # --init-from its weights) on its training set with those of the `replay_frequent` most
    # frequent training pairs it still gets wrong (greedy, word for word) repeated
    # `replay_copies` more times: the labels a reader types first must come back as taught.
    replay_from: str | None = None
    replay_frequent: int = 0
    replay_copies: int = 0
    family: str = "seq2seq"
    task: str = "translation"

    def __post_init__(self) -> None:
        self.splits = build_corpus(corpus=self.corpus)
        ensure_tokenizers(self.splits["train"], corpus=self.corpus)
        self.source_sp, self.target_sp = load_tokenizers(corpus=self.corpus)
        sizes = (self.source_sp.get_piece_size(), self.target_sp.get_piece_size())
        self.set_up_model(*sizes, self.lr, self.warmup)
        self._pairs = self._encoded(self.splits["train"])
        self._replay: dict | None = None
        if self.replay_from is not None:
            mistakes = self._mistakes_of(self.replay_from)
            self._pairs += self._encoded(mistakes) * self.replay_copies
            self._replay = {
                "from": self.replay_from,
                "sha256": read_manifest()[self.replay_from]["sha256"],
                "frequent_pairs_checked": self.replay_frequent,
                "pairs_wrong_before": len(mistakes),
                "copies": self.replay_copies,
            }

    def _encoded(self, pairs: list[SentencePair]) -> list[tuple[list[int], list[int]]]:
        encoded = []
        for pair in pairs:
            src = self.source_sp.encode(pair.source)
            tgt = self.target_sp.encode(pair.target) + [EOS]
            if len(src) <= MAX_TOKENS and len(tgt) <= MAX_TOKENS:
                encoded.append((src, tgt))
        return encoded

    def _mistakes_of(self, name: str) -> list[SentencePair]:
        """The frequent training pairs the checkpoint `name` does not give back (greedy)."""
        model, _entry = load_model(name)
        model.eval()
        pairs = frequent_training_pairs(self.corpus, self.replay_frequent)
        with torch.no_grad():
            found = greedy_translations(
                model, self.source_sp, self.target_sp, [p.source for p in pairs]
            )
        return [
            p for p, h in zip(pairs, found, strict=True) if not matches_reference(h, [p.target])
        ]

    def validate(self, model: Seq2Seq) -> dict[str, float]:
        model.eval()
        pairs = self.splits["dev"]
        hypotheses = greedy_translations(
            model, self.source_sp, self.target_sp, [p.source for p in pairs]
        )
        # sacrebleu is a training/evaluation dependency (the [dev] extra); the web app imports
        # this module for translating and must start without it.
        import sacrebleu

        bleu = sacrebleu.corpus_bleu(hypotheses, [[p.target for p in pairs]])
        return {"dev_bleu_greedy": round(bleu.score, 2)}

    def data_description(self) -> dict:
        version = CORPORA[self.corpus]
        labels = "; a one-word source must be a label" if version.min_words == 1 else ""
        return {
            "corpus": self.corpus,
            "source": "English msgid -> German msgstr from the de gettext catalogs of pinned "
            "Debian 12 packages (apt-get download, dpkg-deb --fsys-tarfile, "
            "gettext.GNUTranslations)",
            "packages": [f"{p}={v}" for p, v in version.packages],
            "filters": f"plain sentences, {version.min_words}-{MAX_WORDS} source words{labels}, "
            "no translator credits, deduped by source",
            "split": f"by sha256 of the source: {TEST_PERCENT}% test, {DEV_PERCENT}% dev, "
            "the rest train",
            "counts": {name: len(pairs) for name, pairs in self.splits.items()},
            "corpus_sha256": corpus_sha256(self.splits),
            "training_pairs": len(self._pairs),
            "tokenizers": [tokenizer_path(lang, corpus=self.corpus).name for lang in ("en", "de")],
            "vocab_size": {"en": self.config.src_vocab, "de": self.config.tgt_vocab},
            **({"replay": self._replay} if self._replay else {}),
        }


def greedy_translations(
    model: Seq2Seq,
    source_sp: spm.SentencePieceProcessor,
    target_sp: spm.SentencePieceProcessor,
    sentences: list[str],
) -> list[str]:
    out = []
    for start in range(0, len(sentences), 128):
        sources = [source_sp.encode(s)[:MAX_TOKENS] for s in sentences[start : start + 128]]
        max_len = max_output_length(max(len(s) for s in sources))
        out += [target_sp.decode(tokens) for tokens in greedy_decode(model, sources, max_len)]
    return out
