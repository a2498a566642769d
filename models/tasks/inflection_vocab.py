"""The inflection model's symbols: a language tag, one symbol per feature and the lemma's
characters in; the form's characters out. The vocabulary was built from the high setting's
cells and is saved beside the checkpoints, so serving needs no data build; once saved, every
later model trains on that file (the checkpoints' embedding rows follow it), not on a rebuild."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

from models.checkpoints import CHECKPOINT_DIR
from models.errors import InvalidInput
from models.seq2seq import EOS, SPECIALS
from models.tasks.inflection import LANGUAGES, InflectionExample

VOCAB_FILE = "seq2seq-inflect-vocab.json"


class InvalidInflectionInput(InvalidInput):
    """A request the model cannot take; the message names what is wrong and what is allowed."""


def source_symbols(language: str, features: str, lemma: str) -> list[str]:
    """The model's input: a language tag, one symbol per feature, then the lemma's characters."""
    return [f"<{language}>", *(f"<{f}>" for f in features.split(";")), *lemma]


@dataclass
class InflectionVocab:
    source: list[str]  # specials, tags, characters
    target: list[str]  # specials, characters
    features: dict[str, list[str]]  # language -> feature strings seen in training
    characters: dict[str, str]  # language -> characters its lemmas may use

    @classmethod
    def from_examples(cls, examples: list[InflectionExample]) -> InflectionVocab:
        source, target = set(), set()
        features, characters = defaultdict(set), defaultdict(set)
        for e in examples:
            source.update(source_symbols(e.language, e.features, e.lemma))
            target.update(ch for form in e.forms for ch in form)
            features[e.language].add(e.features)
            characters[e.language].update(e.lemma)
        return cls(
            list(SPECIALS) + sorted(source),
            list(SPECIALS) + sorted(target),
            {lang: sorted(features[lang]) for lang in LANGUAGES},
            {lang: "".join(sorted(characters[lang])) for lang in LANGUAGES},
        )

    @classmethod
    def shared(
        cls, high: list[InflectionExample], directory: Path = CHECKPOINT_DIR
    ) -> InflectionVocab:
        """The vocabulary every inflection model shares: the saved file where there is one,
        else built from the high set (and saved by the first recipe that trains)."""
        if (directory / VOCAB_FILE).exists():
            return cls.load(directory)
        return cls.from_examples(high)

    @classmethod
    def load(cls, directory: Path = CHECKPOINT_DIR) -> InflectionVocab:
        return cls(**json.loads((directory / VOCAB_FILE).read_text(encoding="utf-8")))

    def save(self, directory: Path = CHECKPOINT_DIR) -> None:
        text = json.dumps(asdict(self), ensure_ascii=False, indent=1) + "\n"
        path = directory / VOCAB_FILE
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            tmp = directory / f".{VOCAB_FILE}.{id(self)}.tmp"
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)

    def encode_source(self, language: str, features: str, lemma: str) -> list[int]:
        """Symbol ids, or InvalidInflectionInput naming the unknown language/features/characters."""
        if language not in self.features:
            raise InvalidInflectionInput(
                f"Unknown language {language!r}; allowed: {', '.join(self.features)}."
            )
        if features not in self.features[language]:
            raise InvalidInflectionInput(
                f"Features {features!r} are not a cell of {language!r}; "
                f"allowed: {', '.join(self.features[language])}."
            )
        unknown = sorted({ch for ch in lemma if ch not in self.characters[language]})
        if unknown or not lemma:
            raise InvalidInflectionInput(
                f"Lemma {lemma!r} has characters the {language!r} model never saw: "
                f"{''.join(unknown) or '(empty lemma)'}; allowed: {self.characters[language]}."
            )
        index = {s: i for i, s in enumerate(self.source)}
        return [index[s] for s in source_symbols(language, features, lemma)]

    def encode_target(self, form: str) -> list[int]:
        index = {s: i for i, s in enumerate(self.target)}
        return [index[ch] for ch in form] + [EOS]


def max_output_length(lemma: str) -> int:
    return 2 * len(lemma) + 10
