"""The inflection training recipe: one multilingual character-level model per α, on the
high, medium or full setting (see models/tasks/inflection.py for the data)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib.metadata import version

import numpy as np
import torch

from models.checkpoints import CHECKPOINT_DIR, load_model, read_manifest
from models.seq2seq import Seq2Seq, Seq2SeqRecipe, greedy_decode
from models.tasks.inflection import (
    DATA_DIR,
    FULL_CAP,
    LANGUAGES,
    PACKAGES,
    InflectionExample,
    load_full,
    load_splits,
    reproduction_sets,
    split_counts,
)
from models.tasks.inflection_vocab import VOCAB_FILE, InflectionVocab, max_output_length


def _training_pairs(
    examples: list[InflectionExample], vocab: InflectionVocab
) -> list[tuple[list[int], list[int]]]:
    return [
        (vocab.encode_source(e.language, e.features, e.lemma), vocab.encode_target(form))
        for e in examples
        for form in e.forms  # a cell with two valid forms gives two training pairs
    ]


def greedy_correct(
    model: Seq2Seq, vocab: InflectionVocab, examples: list[InflectionExample]
) -> list[bool]:
    """For each example, whether its greedy output is one of the valid forms."""
    correct = []
    for start in range(0, len(examples), 256):
        chunk = examples[start : start + 256]
        sources = [vocab.encode_source(e.language, e.features, e.lemma) for e in chunk]
        max_len = max(max_output_length(e.lemma) for e in chunk)
        for e, tokens in zip(chunk, greedy_decode(model, sources, max_len), strict=True):
            correct.append("".join(vocab.target[t] for t in tokens) in e.forms)
    return correct


def greedy_accuracy(
    model: Seq2Seq, vocab: InflectionVocab, examples: list[InflectionExample]
) -> float:
    """Share of examples whose greedy output is one of the valid forms."""
    return sum(greedy_correct(model, vocab, examples)) / max(1, len(examples))


@dataclass
class InflectionRecipe(Seq2SeqRecipe):
    """One multilingual character-level model per alpha (attention alpha = output alpha)."""

    name: str
    alpha: float
    setting: str = "high"  # which training set: high | medium | full
    steps: int = 20_000  # about 36 epochs of the high set
    time_budget_min: float | None = None  # equal step counts for every alpha
    emb_dim: int = 64
    hidden: int = 128
    dropout: float = 0.2
    encoder_layers: int = 1
    batch_size: int = 128
    validate_every: int = 1000
    lr: float = 2e-3
    # A second phase for the full setting: fine-tune a trained checkpoint (run with --init-from
    # its weights) on its training set with every cell that any checkpoint of `replay_from`
    # still gets wrong (greedy) repeated `replay_copies` more times, so that it learns what no
    # rule predicts. A later round names the earlier rounds' models too, or it forgets them.
    replay_from: tuple[str, ...] = ()
    replay_copies: int = 0
    family: str = "seq2seq"
    task: str = "inflection"

    def __post_init__(self) -> None:
        self.splits = load_splits()
        self.vocab = InflectionVocab.shared(self.splits["high"])
        if CHECKPOINT_DIR.exists():
            self.vocab.save(CHECKPOINT_DIR)
        warmup = min(200, self.steps // 10)
        self.set_up_model(len(self.vocab.source), len(self.vocab.target), self.lr, warmup)
        self.available: dict[str, int] | None = None  # full setting: cells before the cap
        if self.setting == "full":
            self.training, self.available = load_full(self.vocab)
            # Watch the model learn what it is taught: 1,000 cells of the reproduction sample.
            self._train_check = reproduction_sets(self.training)["sample"][:1000]
        else:
            self.training = self.splits[self.setting]
        self._pairs = _training_pairs(self.training, self.vocab)
        self._replay: dict | None = None
        if self.replay_from:
            mistakes = self._mistakes_of(self.replay_from)
            self._pairs += _training_pairs(mistakes, self.vocab) * self.replay_copies
            manifest = read_manifest()
            single = len(self.replay_from) == 1  # the first rounds' manifests kept this form
            self._replay = {
                "from": self.replay_from[0] if single else list(self.replay_from),
                "sha256": manifest[self.replay_from[0]]["sha256"]
                if single
                else [manifest[name]["sha256"] for name in self.replay_from],
                "cells_wrong_before": len(mistakes),
                "copies": self.replay_copies,
            }

    def _mistakes_of(self, names: tuple[str, ...]) -> list[InflectionExample]:
        """The training cells that any of the checkpoints `names` gets wrong (greedy)."""
        cells = hashlib.sha256(
            "\n".join(f"{e.language}\t{e.features}\t{e.lemma}" for e in self.training).encode()
        ).hexdigest()
        wrong = np.zeros(len(self.training), dtype=bool)
        for name in names:
            wrong |= ~self._greedy_correct_cached(name, cells)
        return [e for e, w in zip(self.training, wrong, strict=True) if w]

    def _greedy_correct_cached(self, name: str, cells: str) -> np.ndarray:
        """`greedy_correct` of checkpoint `name` on the training set (whose cells hash to
        `cells`), kept in data/ under both hashes: each later replay round (and a resumed run)
        decodes 279,000 cells once per source model otherwise, about 3 minutes each."""
        checkpoint = read_manifest()[name]["sha256"]
        path = DATA_DIR / "greedy-correct" / f"{name}-{checkpoint[:16]}-{cells[:16]}.npy"
        if path.exists():
            return np.load(path, allow_pickle=False)
        model, _entry = load_model(name)
        model.eval()
        with torch.no_grad():
            correct = np.array(greedy_correct(model, self.vocab, self.training), dtype=bool)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, correct, allow_pickle=False)
        return correct

    def validate(self, model: Seq2Seq) -> dict[str, float]:
        model.eval()
        metrics = {"dev_accuracy": round(greedy_accuracy(model, self.vocab, self.splits["dev"]), 4)}
        if self.setting == "full":
            metrics["train_accuracy"] = round(
                greedy_accuracy(model, self.vocab, self._train_check), 4
            )
        return metrics

    def data_description(self) -> dict:
        return {
            "source": "inflection tables from PyPI packages (English: lemminflect; German "
            "nouns: german-nouns; fr/es/it/pt/ro verbs: mlconjug3's Verbiste data)",
            "packages": {name: version(name) for name in PACKAGES},
            "setting": self.setting,
            "split": "by lemma (sha256 of language and lemma: 80/10/10)",
            "counts": split_counts(self.splits),
            "training_pairs": len(self._pairs),
            "vocab_file": VOCAB_FILE,
            **(self._full_description() if self.setting == "full" else {}),
            **({"replay": self._replay} if self._replay else {}),
        }

    def _full_description(self) -> dict:
        cells = {language: 0 for language in LANGUAGES}
        for example in self.training:
            cells[example.language] += 1
        return {
            "full": {
                "what": "every training-split cell of each language, capped at "
                f"{FULL_CAP:,} per language; a capped language keeps a sample drawn without "
                "replacement with weight 2 ** (wordfreq Zipf frequency of the lemma), so "
                "frequent lemmas are almost always in; cells with characters outside the "
                "shared vocabulary are left out",
                "cap_per_language": FULL_CAP,
                "cells_before_cap": self.available,
                "cells": cells,
                "wordfreq": version("wordfreq"),
            }
        }
