"""Reference answers for the live seq2seq widgets: the lexicon's forms for an inflection cell and
the corpus translation of a sentence, each with the split it belongs to.

The web server has to say whether a model's answer is right without the data tools (lemminflect,
german-nouns, mlconjug3, a Debian mirror), so the data code writes what the lookup needs into two
compact files beside the checkpoints, and the server reads only those:

- ``seq2seq-inflect-reference.json.xz``: every (language, lemma, features) cell of the lexicon
  in ``models.tasks.inflection`` (all of it, not only the sampled training sets), the split of
  each lemma, and which cells each training set (``high``, ``medium``, ``full``) holds. A form
  is stored as an edit of its lemma (drop the last k letters, append a suffix), and the edits of
  a whole paradigm are stored once and shared by every lemma that inflects the same way, which
  takes 2.7 million cells from about 100 MB of text to a file of about 1 MB.
- ``seq2seq-translate-reference.json.xz``: every (source, target) pair of the translation
  corpus in ``models.tasks.translation``, by split, with the corpus sha256; one file per corpus
  version (``seq2seq-translate-v2-reference.json.xz`` for v2, the served models' corpus, is the
  one shipped), since a model's verdict must come from the very pairs and splits it was
  trained on.

Each file carries a format name and version, and is entered in checkpoints/manifest.json (family
``reference``) with its sha256, which the loader checks like a checkpoint's.

    python -m models.references inflection    # needs the [dev] extra (the lexicon packages)
    python -m models.references translation [--corpus v2]   # needs that corpus
"""

from __future__ import annotations

import argparse
import itertools
import json
import lzma
import re
import sys
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

from models.checkpoints import CHECKPOINT_DIR, sha256_file, update_manifest, verified_file

VERSION = 1
NAMES = {"inflection": "seq2seq-inflect-reference", "translation": "seq2seq-translate-reference"}
FORMATS = {
    "inflection": "papertrace-inflection-reference",
    "translation": "papertrace-translation-reference",
}
_EDIT = re.compile(r"(\d+)(\D*)")


def reference_name(task: str, corpus: str = "v1") -> str:
    """The manifest name of a task's reference file; translation has one per corpus version
    (v1's keeps the name it shipped with)."""
    if task == "translation" and corpus != "v1":
        return f"seq2seq-translate-{corpus}-reference"
    return NAMES[task]


# --- inflection ------------------------------------------------------------------------------


def form_edit(lemma: str, form: str) -> str:
    """`form` as an edit of `lemma`: how many final letters to drop, then what to append
    ("fight" -> "fought": "4ought"). Forms are letters only, so the count reads unambiguously."""
    keep = 0
    while keep < min(len(lemma), len(form)) and lemma[keep] == form[keep]:
        keep += 1
    return f"{len(lemma) - keep}{form[keep:]}"


def apply_edit(lemma: str, edit: str) -> str:
    drop, suffix = _EDIT.fullmatch(edit).groups()
    return lemma[: len(lemma) - int(drop)] + suffix


@dataclass(frozen=True)
class CellReference:
    """What the lexicon knows about one request: the lemma's split ("unseen" when the lexicon
    lacks the lemma), the cell's valid forms (None when it lacks the cell), and the training
    sets that hold this very cell."""

    split: str
    forms: tuple[str, ...] | None
    training_sets: frozenset[str]


class InflectionLexicon:
    """Lookup over the inflection reference file: (language, lemma, features) -> CellReference."""

    def __init__(self, document: dict) -> None:
        check_format(document, "inflection")
        self.training_sets: list[str] = document["training_sets"]
        self._languages: dict[str, dict] = document["languages"]
        for table in self._languages.values():
            table["lemmas"] = PackedMap(table["lemmas"].items())
        self._cell_index = {
            language: {features: i for i, features in enumerate(table["features"])}
            for language, table in self._languages.items()
        }

    def lookup(self, language: str, lemma: str, features: str) -> CellReference:
        table = self._languages.get(language)
        row = table["lemmas"].get(lemma) if table else None
        if row is None:
            return CellReference("unseen", None, frozenset())
        split, pattern, *held = row.split(" ")
        cell = self._cell_index[language].get(features)
        edits = dict(item.split(":") for item in table["patterns"][int(pattern)].split(" "))
        if cell is None or str(cell) not in edits:
            return CellReference(split, None, frozenset())
        forms = tuple(apply_edit(lemma, edit) for edit in edits[str(cell)].split("/"))
        sets = frozenset(name for name, cells in map(_held_cells, held) if cell in cells)
        return CellReference(split, forms, sets)


def _held_cells(item: str) -> tuple[str, set[int]]:
    name, cells = item.split(":")
    return name, {int(c) for c in cells.split(",")}


def inflection_document(
    cells: Iterable, training_sets: dict[str, list], packages: dict[str, str]
) -> dict:
    """The reference file's content from the lexicon's cells and the cells each training set
    holds (InflectionExample-like objects, the sets keyed by the manifest's data setting)."""
    from models.tasks.inflection import lemma_split

    held: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for name, examples in training_sets.items():
        for example in examples:
            held[(example.language, example.lemma, example.features)].append(name)
    paradigms: dict[str, dict[str, dict[str, set[str]]]] = defaultdict(lambda: defaultdict(dict))
    for cell in cells:
        paradigms[cell.language][cell.lemma].setdefault(cell.features, set()).update(cell.forms)
    languages = {}
    for language, lemmas in paradigms.items():
        features = sorted({f for paradigm in lemmas.values() for f in paradigm})
        index = {f: i for i, f in enumerate(features)}
        patterns: dict[str, int] = {}
        rows = {}
        for lemma, paradigm in sorted(lemmas.items()):
            pattern = " ".join(
                f"{index[f]}:" + "/".join(form_edit(lemma, form) for form in sorted(forms))
                for f, forms in sorted(paradigm.items(), key=lambda item: index[item[0]])
            )
            pattern_id = patterns.setdefault(pattern, len(patterns))
            sets: dict[str, list[int]] = defaultdict(list)
            for f in paradigm:
                for name in held.get((language, lemma, f), ()):
                    sets[name].append(index[f])
            row = [lemma_split(language, lemma), str(pattern_id)]
            row += [f"{name}:{','.join(map(str, sorted(sets[name])))}" for name in sorted(sets)]
            rows[lemma] = " ".join(row)
        languages[language] = {"features": features, "patterns": list(patterns), "lemmas": rows}
    return {
        "format": FORMATS["inflection"],
        "version": VERSION,
        "packages": packages,
        "split": "by lemma (sha256 of language and lemma: 80/10/10), from "
        "models.tasks.inflection.lemma_split",
        "training_sets": sorted(training_sets),
        "languages": languages,
    }


# --- translation -----------------------------------------------------------------------------


def normalise_source(text: str) -> str:
    """A typed sentence in the corpus's form: whitespace collapsed, a trailing colon dropped
    (as models.tasks.translation.clean_pair does to every source)."""
    text = " ".join(text.split())
    return text[:-1].rstrip() if text.endswith(":") else text


def matches_reference(hypothesis: str, references: Iterable[str]) -> bool:
    """The verdict, for both tasks: the hypothesis, whitespace collapsed, is one of the
    references (an inflection cell's valid forms, or a sentence's corpus translation)."""
    return " ".join(hypothesis.split()) in {" ".join(r.split()) for r in references}


@dataclass(frozen=True)
class SentenceReference:
    split: str
    text: str


class TranslationCorpus:
    """Lookup over the translation reference file: a source sentence -> its corpus translation."""

    def __init__(self, document: dict) -> None:
        check_format(document, "translation")
        self._pairs = PackedMap(  # a source listed in two splits keeps the last split's
            (source, f"{split}\t{target}")
            for split, pairs in document["pairs"].items()
            for source, target in pairs
        )

    def __len__(self) -> int:
        return len(self._pairs)

    def lookup(self, text: str) -> SentenceReference | None:
        found = self._pairs.get(normalise_source(text))
        return None if found is None else SentenceReference(*found.split("\t", 1))


class PackedMap:
    """A read-only str -> str mapping stored as two sorted UTF-8 buffers with offsets, found by
    binary search. A served worker keeps the reference files for its life: the translation
    corpus's 173,000 pairs take 15 MB this way, 61 MB as a dict of strings."""

    def __init__(self, items: Iterable[tuple[str, str]]) -> None:
        mapping = {key.encode(): value.encode() for key, value in items}  # the last one wins
        keys = sorted(mapping)
        self._keys, self._key_ends = _packed(keys)
        self._values, self._value_ends = _packed([mapping[key] for key in keys])

    def __len__(self) -> int:
        return len(self._key_ends)

    def get(self, key: str) -> str | None:
        wanted = key.encode()
        low, high = 0, len(self)
        while low < high:  # the first key >= wanted
            middle = (low + high) // 2
            if _item(self._keys, self._key_ends, middle) < wanted:
                low = middle + 1
            else:
                high = middle
        if low == len(self) or _item(self._keys, self._key_ends, low) != wanted:
            return None
        return _item(self._values, self._value_ends, low).decode()


def _packed(items: list[bytes]) -> tuple[bytes, array]:
    """The items as one buffer and the offset where each ends."""
    return b"".join(items), array("Q", itertools.accumulate(len(item) for item in items))


def _item(buffer: bytes, ends: array, index: int) -> bytes:
    return buffer[ends[index - 1] if index else 0 : ends[index]]


def translation_document(splits: dict[str, list], corpus_sha256: str) -> dict:
    return {
        "format": FORMATS["translation"],
        "version": VERSION,
        "corpus_sha256": corpus_sha256,
        "pairs": {name: [[p.source, p.target] for p in pairs] for name, pairs in splits.items()},
    }


# --- the files ---------------------------------------------------------------------------------


class ReferenceFormatError(ValueError):
    """A reference file of another kind or version than this code reads."""


def check_format(document: dict, task: str) -> None:
    found = (document.get("format"), document.get("version"))
    if found != (FORMATS[task], VERSION):
        raise ReferenceFormatError(
            f"The {task} reference file is {found[0]!r} version {found[1]!r}; this code reads "
            f"{FORMATS[task]!r} version {VERSION}. Rebuild it: python -m models.references {task}"
        )


def write_reference(task: str, name: str, document: dict, data: dict, directory: Path) -> dict:
    """Write the file atomically and enter it in the manifest as `name`; return the entry."""
    path = directory / f"{name}.json.xz"
    raw = json.dumps(document, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    tmp = directory / f".{path.name}.tmp"
    tmp.write_bytes(lzma.compress(raw.encode(), preset=9))
    tmp.chmod(0o644)
    tmp.replace(path)
    entry = {
        "family": "reference",
        "task": task,
        "format": FORMATS[task],
        "version": VERSION,
        "data": data,
        "command": f"python -m models.references {task}"
        + (f" --corpus {data['corpus']}" if data.get("corpus", "v1") != "v1" else ""),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "file": path.name,
        "size_bytes": path.stat().st_size,
        "sha256": sha256_file(path),
    }
    update_manifest(directory, name, entry)
    return entry


def load_reference(
    entry: dict,
    directory: Path = CHECKPOINT_DIR,
    translation_lookup: type[TranslationCorpus] = TranslationCorpus,
) -> InflectionLexicon | TranslationCorpus:
    """The lookup for a manifest entry of family "reference", after checking its sha256 (a
    translation corpus as `translation_lookup`, which may know more of it)."""
    document = json.loads(lzma.decompress(verified_file(entry, directory).read_bytes()))
    if entry.get("task") == "inflection":
        return InflectionLexicon(document)
    if entry.get("task") == "translation":
        return translation_lookup(document)
    raise ReferenceFormatError(f"No reference lookup for task {entry.get('task')!r}.")


def inflection_training_sets(data_dir: Path) -> dict[str, list]:
    """Setting -> the cells an InflectionRecipe of that setting trains on: the paper's high and
    medium sets, and the live widget's full set (seq2seq-inflect-full-a*)."""
    from models.tasks import inflection, inflection_vocab

    splits = inflection.load_splits(data_dir)
    vocab = inflection_vocab.InflectionVocab.shared(splits["high"])  # as the recipe has it
    full, _ = inflection.load_full(vocab, data_dir)
    return {"high": splits["high"], "medium": splits["medium"], "full": full}


def build_inflection(directory: Path = CHECKPOINT_DIR, data_dir: Path | None = None) -> dict:
    from models.tasks import inflection

    cells = (
        cell for language in inflection.LANGUAGES for cell in inflection.language_tables(language)
    )
    training_sets = inflection_training_sets(data_dir or inflection.DATA_DIR)
    packages = {name: version(name) for name in inflection.PACKAGES}
    document = inflection_document(cells, training_sets, packages)
    data = {
        "source": "every cell of the inflection lexicon (models.tasks.inflection.language_tables)",
        "packages": packages,
        "training_sets": document["training_sets"],
        "languages": {
            language: {
                "lemmas": dict(
                    sorted(Counter(r.split(" ", 1)[0] for r in table["lemmas"].values()).items())
                ),
                "features": len(table["features"]),
                "paradigms": len(table["patterns"]),
            }
            for language, table in document["languages"].items()
        },
    }
    return write_reference("inflection", NAMES["inflection"], document, data, directory)


def build_translation(
    directory: Path = CHECKPOINT_DIR, corpus_dir: Path | None = None, corpus: str = "v1"
) -> dict:
    from models.tasks import translation

    if corpus_dir is None:
        splits = translation.build_corpus(corpus=corpus)
    else:
        splits = translation.read_splits(corpus_dir)
    sha = translation.corpus_sha256(splits)
    data = {
        "source": "every pair of the translation corpus (models.tasks.translation.build_corpus)",
        "corpus": corpus,
        "corpus_sha256": sha,
        "counts": {name: len(pairs) for name, pairs in splits.items()},
    }
    document = translation_document(splits, sha)
    name = reference_name("translation", corpus)
    return write_reference("translation", name, document, data, directory)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m models.references")
    parser.add_argument("task", choices=sorted(NAMES))
    parser.add_argument(
        "--data", type=Path, help="the task's data folder, if not the default under data/"
    )
    parser.add_argument(
        "--corpus", default="v1", help="translation: the corpus version (models.tasks.translation)"
    )
    args = parser.parse_args(argv)
    if args.task == "inflection":
        entry = build_inflection(CHECKPOINT_DIR, args.data)
    else:
        entry = build_translation(CHECKPOINT_DIR, args.data, args.corpus)
    print(f"wrote {entry['file']}: {entry['size_bytes']:,} bytes, sha256 {entry['sha256']}")


if __name__ == "__main__":
    main(sys.argv[1:])
