"""Morphological inflection data: (lemma, language, UniMorph-style features) -> inflected form.

The inflection tables come from three PyPI packages, read as data:

- English (``en``): lemminflect's lookup table, queried through ``getAllInflections`` for every
  lower-case lemma in its lexicon (verbs, noun plurals, adjective degrees);
- German (``de``): the noun tables (case x number) in german-nouns' ``nouns.csv``;
- French, Spanish, Italian, Portuguese, Romanian (``fr es it pt ro``): the Verbiste verb lists
  and conjugation templates shipped in mlconjug3 (form = verb root + template ending).
  Only simple (one-word) tenses are kept; compound tenses need an auxiliary.

Every (language, lemma, features) cell keeps *all* of its valid forms (``dreamed``/``dreamt``,
``hablara``/``hablase``, ``Bogen``/``Bögen``): that ambiguity is what a sparse output
distribution can show. Cells whose only form is the citation form itself are dropped.

Splits are by lemma (a stable hash of language and lemma: 80% train, 10% dev, 10% test), so no
lemma appears in two splits. From the training lemmas the "high" setting samples up to 10,000
cells per language and "medium" takes the first 1,000 of those (as in SIGMORPHON 2018). The
"full" setting, for the live widget's models, takes every training-split cell up to a cap per
language, drawn towards frequent lemmas (wordfreq) where a language has more.

The model's symbols are in inflection_vocab.py, the training recipe in inflection_recipe.py and
the served model in inflection_serving.py.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import random
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Protocol

LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "ro")
HIGH_SIZE = 10_000
MEDIUM_SIZE = 1_000
DEV_SIZE = 200
TEST_SIZE = 500
SEED = 2019
FULL_CAP = 40_000  # cells per language in the "full" setting (English has fewer)
REPRODUCTION_SIZE = 5_000
DATA_DIR = Path(__file__).resolve().parents[2] / "data" / "inflection"

_WORD = re.compile(r"^[^\W\d_]+$")  # letters only: drops multiword, hyphenated and broken forms
PERSONS = ("1;SG", "2;SG", "3;SG", "1;PL", "2;PL", "3;PL")


@dataclass(frozen=True)
class InflectionExample:
    language: str
    lemma: str
    features: str  # UniMorph-style, e.g. "V;IND;PST;PFV;3;SG"
    forms: tuple[str, ...]  # every valid form, sorted


def is_word(text: str) -> bool:
    return bool(_WORD.match(text))


# --- English: lemminflect -------------------------------------------------------------------

_ENGLISH_TAGS = {
    "VERB": {"VBD": "V;PST", "VBN": "V;V.PTCP;PST", "VBG": "V;V.PTCP;PRS", "VBZ": "V;PRS;3;SG"},
    "NOUN": {"NNS": "N;PL"},
    "ADJ": {"JJR": "ADJ;CMPR", "JJS": "ADJ;SPRL"},
}


def english_tables() -> Iterator[InflectionExample]:
    import lemminflect

    # The lexicon's lemma list: the keys of the lookup table getAllInflections reads.
    lexicon = lemminflect.Inflections()._getInflDict()
    for lemma in sorted(lexicon):
        if not (lemma.islower() and is_word(lemma)):
            continue
        tags = lexicon[lemma]
        for upos, tag_features in _ENGLISH_TAGS.items():
            if not any(tag in tags for tag in tag_features):
                continue
            inflections = lemminflect.getAllInflections(lemma, upos=upos)
            for tag, features in tag_features.items():
                forms = tuple(sorted({f for f in inflections.get(tag, ()) if is_word(f)}))
                if forms and forms != (lemma,):
                    yield InflectionExample("en", lemma, features, forms)


# --- German nouns: german-nouns -------------------------------------------------------------

_GERMAN_CASES = {"nominativ": "NOM", "genitiv": "GEN", "dativ": "DAT", "akkusativ": "ACC"}
_GERMAN_NUMBERS = {"singular": "SG", "plural": "PL"}


def german_tables() -> Iterator[InflectionExample]:
    path = resources.files("german_nouns").joinpath("nouns.csv")
    with path.open(encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        # Columns "genitiv singular", "... 1".."4", "... stark" etc. are forms of one cell;
        # "genitiv singular*" holds a variant (Raumes beside Raums), a form only of a cell
        # that another column fills.
        cell_columns: dict[str, list[int]] = defaultdict(list)
        variant_columns: dict[str, list[int]] = defaultdict(list)
        for index, name in enumerate(header):
            words = name.replace("*", "").split()
            if len(words) >= 2 and words[0] in _GERMAN_CASES and words[1] in _GERMAN_NUMBERS:
                features = f"N;{_GERMAN_CASES[words[0]]};{_GERMAN_NUMBERS[words[1]]}"
                (variant_columns if "*" in name else cell_columns)[features].append(index)
        seen: set[str] = set()
        for row in reader:
            lemma, pos = row[0], row[1]
            if "Substantiv" not in pos.split(",") or not is_word(lemma) or lemma in seen:
                continue
            seen.add(lemma)
            for features, columns in cell_columns.items():
                forms = {row[i] for i in columns if row[i] and is_word(row[i])}
                if forms and (features != "N;NOM;SG" or forms != {lemma}):
                    forms |= {row[i] for i in variant_columns[features] if is_word(row[i])}
                    yield InflectionExample("de", lemma, features, tuple(sorted(forms)))


# --- Romance verbs: mlconjug3's Verbiste data -----------------------------------------------

# (mood, tense) -> features; a list of 6 persons unless noted. Keys are matched lower-case.
_ROMANCE_FINITE = {
    "fr": {
        ("indicatif", "présent"): "V;IND;PRS",
        ("indicatif", "imparfait"): "V;IND;PST;IPFV",
        ("indicatif", "passé simple"): "V;IND;PST;PFV",
        ("indicatif", "futur"): "V;IND;FUT",
        ("conditionnel", "présent"): "V;COND",
        ("subjonctif", "présent"): "V;SBJV;PRS",
        ("subjonctif", "imparfait"): "V;SBJV;PST;IPFV",
    },
    "es": {
        ("indicativo", "indicativo presente"): "V;IND;PRS",
        ("indicativo", "indicativo pretérito imperfecto"): "V;IND;PST;IPFV",
        ("indicativo", "indicativo pretérito perfecto simple"): "V;IND;PST;PFV",
        ("indicativo", "indicativo futuro"): "V;IND;FUT",
        ("condicional", "condicional"): "V;COND",
        ("subjuntivo", "subjuntivo presente"): "V;SBJV;PRS",
        # The two imperfect subjunctives (-ra / -se) are one cell with two valid forms.
        ("subjuntivo", "subjuntivo pretérito imperfecto (1)"): "V;SBJV;PST",
        ("subjuntivo", "subjuntivo pretérito imperfecto (2)"): "V;SBJV;PST",
        ("subjuntivo", "subjuntivo futuro"): "V;SBJV;FUT",
    },
    "it": {
        ("indicativo", "indicativo presente"): "V;IND;PRS",
        ("indicativo", "indicativo imperfetto"): "V;IND;PST;IPFV",
        ("indicativo", "indicativo passato remoto"): "V;IND;PST;PFV",
        ("indicativo", "indicativo futuro semplice"): "V;IND;FUT",
        ("condizionale", "condizionale presente"): "V;COND",
        ("congiuntivo", "congiuntivo presente"): "V;SBJV;PRS",
        ("congiuntivo", "congiuntivo imperfetto"): "V;SBJV;PST;IPFV",
    },
    "pt": {
        ("indicativo", "indicativo presente"): "V;IND;PRS",
        ("indicativo", "indicativo pretérito imperfeito"): "V;IND;PST;IPFV",
        ("indicativo", "indicativo pretérito perfeito simples"): "V;IND;PST;PFV",
        ("indicativo", "indicativo pretérito mais-que-perfeito simples"): "V;IND;PST;PRF",
        ("indicativo", "indicativo futuro do presente simples"): "V;IND;FUT",
        ("condicional", "condicional futuro do pretérito simples"): "V;COND",
        ("conjuntivo", "conjuntivo / subjuntivo presente"): "V;SBJV;PRS",
        ("conjuntivo", "conjuntivo / subjuntivo pretérito imperfeito"): "V;SBJV;PST",
        ("conjuntivo", "conjuntivo / subjuntivo futuro simples"): "V;SBJV;FUT",
    },
    "ro": {
        ("prezent", "prezent"): "V;IND;PRS",
        ("imperfect", "imperfect"): "V;IND;PST;IPFV",
        ("perfect", "perfect simplu"): "V;IND;PST;PFV",
        ("mai", "mai mult ca perfect"): "V;IND;PST;PRF",
        ("conjunctiv", "conjunctiv prezent"): "V;SBJV;PRS",
    },
}

# (mood, tense) -> {slot index: features} for the non-finite and imperative rows.
_ROMANCE_SLOTS = {
    "fr": {
        ("imperatif", "imperatif présent"): {
            0: "V;POS;IMP;2;SG",
            1: "V;POS;IMP;1;PL",
            2: "V;POS;IMP;2;PL",
        },
        ("participe", "participe présent"): {0: "V.PTCP;PRS"},
        ("participe", "participe passé"): {
            0: "V.PTCP;PST;MASC;SG",
            1: "V.PTCP;PST;MASC;PL",
            2: "V.PTCP;PST;FEM;SG",
            3: "V.PTCP;PST;FEM;PL",
        },
    },
    "es": {
        ("imperativo", "imperativo"): {
            0: "V;POS;IMP;2;SG",
            1: "V;POS;IMP;3;SG",
            2: "V;POS;IMP;1;PL",
            3: "V;POS;IMP;2;PL",
            4: "V;POS;IMP;3;PL",
        },
        ("gerundio", "gerundio"): {0: "V.CVB;PRS"},
        ("participo", "participo"): {0: "V.PTCP;PST"},
    },
    "it": {
        ("infinito", "infinito / gerundio"): {2: "V.CVB;PRS"},
        ("participio", "participio"): {0: "V.PTCP;PRS", 1: "V.PTCP;PST"},
    },
    "pt": {
        ("gerúndio", "gerúndio"): {0: "V.CVB;PRS"},
        ("particípio", "particípio"): {0: "V.PTCP;PST"},
    },
    "ro": {
        ("gerunziu", "gerunziu"): {0: "V.CVB;PRS"},
        ("participiu", "participiu"): {0: "V.PTCP;PST"},
    },
}


def _fix_key(text: str) -> str:
    """Lower-case a Verbiste table key, undoing the UTF-8-read-as-Latin-1 damage in some files."""
    try:
        text = text.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        pass
    return text.lower()


def _read_verbiste(language: str, kind: str) -> dict:
    path = resources.files("mlconjug3").joinpath(f"data/conjug_manager/{kind}-{language}.json")
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def _verbiste_root(lemma: str, entry: dict) -> str:
    """The verb's root. A template is named "<model root>:<ending>"; where the stored root
    does not give back the lemma with that ending but the lemma ends in it, the root is the
    lemma less the ending. 666 verbs need it, 657 of them Romanian (alcătui, aflui, of the
    brăcui: template), whose empty stored root made every form a bare ending (alcătui -> "esc")."""
    root, ending = entry["root"], entry["template"].split(":", 1)[1]
    if root + ending != lemma and lemma.endswith(ending):
        return lemma[: len(lemma) - len(ending)]
    return root


def _missing_persons(table: dict, finite: dict[tuple[str, str], str]) -> set[int]:
    """The persons an impersonal verb's template leaves empty ("" or null) in the indicative
    imperfect, a tense whose ending is never empty otherwise (ro a ploua, es amanecer, pt
    nevar). Such a person's empty endings in the other finite tenses mark no form either (the
    bare root, "abeced"), so those cells are left out; an empty ending of any other person is
    a real form (ro ador)."""
    for mood, tenses in table.items():
        for tense, endings in tenses.items():
            if finite.get((_fix_key(mood), _fix_key(tense))) == "V;IND;PST;IPFV":
                return {person for person, ending in endings if not ending}
    return set()


def romance_tables(language: str) -> Iterator[InflectionExample]:
    verbs = _read_verbiste(language, "verbs")
    templates = _read_verbiste(language, "conjugation")
    finite, slots = _ROMANCE_FINITE[language], _ROMANCE_SLOTS[language]
    for lemma in sorted(verbs):
        if not is_word(lemma):
            continue
        root, template = _verbiste_root(lemma, verbs[lemma]), verbs[lemma]["template"]
        table = templates.get(template, {})
        missing = _missing_persons(table, finite)
        cells: dict[str, set[str]] = defaultdict(set)
        for mood, tenses in table.items():
            for tense, endings in tenses.items():
                key = (_fix_key(mood), _fix_key(tense))
                if isinstance(endings, str):  # a single non-finite form, e.g. "issant"
                    endings = [[0, endings]]
                if not endings:
                    continue
                if key in finite and len(endings) == len(PERSONS):
                    for person, ending in endings:
                        if ending is not None and (ending or person not in missing):
                            cells[f"{finite[key]};{PERSONS[person]}"].add(root + ending)
                elif key in slots:
                    for slot, ending in endings:
                        if ending is not None and slot in slots[key]:
                            cells[slots[key][slot]].add(root + ending)
        for features in sorted(cells):
            forms = tuple(sorted(f for f in cells[features] if is_word(f)))
            if forms:
                yield InflectionExample(language, lemma, features, forms)


def language_tables(language: str) -> Iterator[InflectionExample]:
    if language == "en":
        return english_tables()
    if language == "de":
        return german_tables()
    return romance_tables(language)


# --- splits -------------------------------------------------------------------------------


def lemma_split(language: str, lemma: str) -> str:
    """train / dev / test by a stable hash of (language, lemma): a lemma never crosses splits."""
    bucket = int(hashlib.sha256(f"{language}\t{lemma}".encode()).hexdigest(), 16) % 10
    return "test" if bucket == 0 else "dev" if bucket == 1 else "train"


def build_splits(languages: tuple[str, ...] = LANGUAGES) -> dict[str, list[InflectionExample]]:
    """{"high", "medium", "dev", "test"} -> examples, deterministic for a given package set."""
    splits: dict[str, list[InflectionExample]] = {"high": [], "medium": [], "dev": [], "test": []}
    for language in languages:
        by_split: dict[str, list[InflectionExample]] = defaultdict(list)
        for example in language_tables(language):
            by_split[lemma_split(language, example.lemma)].append(example)
        rng = random.Random(f"{SEED}-{language}")
        high = _sample(rng, by_split["train"], HIGH_SIZE)
        splits["high"] += high
        splits["medium"] += high[:MEDIUM_SIZE]
        splits["dev"] += _sample(rng, by_split["dev"], DEV_SIZE)
        splits["test"] += _sample(rng, by_split["test"], TEST_SIZE)
    return splits


def _sample(
    rng: random.Random, examples: list[InflectionExample], k: int
) -> list[InflectionExample]:
    return rng.sample(examples, min(k, len(examples)))


# --- the "full" setting: the whole training split, capped where a language is too big --------


def lemma_weight(language: str, lemma: str) -> float:
    """2 ** (wordfreq's Zipf frequency): 1 for a word wordfreq has never seen, about 30 for a
    word seen once per million words, about 500 for "go" or "Haus"."""
    from wordfreq import zipf_frequency

    return 2.0 ** zipf_frequency(lemma, language)


def weighted_sample(
    rng: random.Random, examples: list[InflectionExample], k: int
) -> list[InflectionExample]:
    """k examples without replacement, each cell drawn with probability growing with its lemma's
    frequency (Efraimidis and Spirakis: key u ** (1 / w), keep the k largest keys). Returned in
    the input order, so the sample depends only on the examples, k and the generator's seed."""
    if k >= len(examples):
        return list(examples)
    weights: dict[str, float] = {}
    keys = []
    for index, example in enumerate(examples):
        if example.lemma not in weights:
            weights[example.lemma] = lemma_weight(example.language, example.lemma)
        keys.append((rng.random() ** (1.0 / weights[example.lemma]), index))
    chosen = sorted(index for _, index in sorted(keys, reverse=True)[:k])
    return [examples[index] for index in chosen]


class Vocabulary(Protocol):
    """What the full setting needs of the model's symbols (models.tasks.inflection_vocab's
    InflectionVocab, which imports this module)."""

    features: dict[str, list[str]]
    target: list[str]
    characters: dict[str, str]


def in_vocab(example: InflectionExample, vocab: Vocabulary) -> bool:
    """Whether the shared vocabulary (built from the high set) can encode the cell: the full
    models share the high models' vocabulary file, so the lemma's and forms' characters must be
    in it."""
    if example.features not in vocab.features.get(example.language, ()):
        return False
    targets = set(vocab.target)
    return set(example.lemma) <= set(vocab.characters[example.language]) and all(
        set(form) <= targets for form in example.forms
    )


def build_full(
    vocab: Vocabulary, languages: tuple[str, ...] = LANGUAGES, cap: int = FULL_CAP
) -> tuple[list[InflectionExample], dict[str, int]]:
    """Every training-split cell of each language, or where a language has more than ``cap``
    cells a frequency-weighted sample of ``cap`` of them (see ``weighted_sample``); and how
    many cells each language had before the cap. Cells with a character outside the shared
    vocabulary are left out (a handful)."""
    full: list[InflectionExample] = []
    available: dict[str, int] = {}
    for language in languages:
        train = [
            e
            for e in language_tables(language)
            if lemma_split(language, e.lemma) == "train" and in_vocab(e, vocab)
        ]
        available[language] = len(train)
        full += weighted_sample(random.Random(f"{SEED}-{language}-full"), train, cap)
    return full, available


def load_full(
    vocab: Vocabulary, cache_dir: Path = DATA_DIR
) -> tuple[list[InflectionExample], dict[str, int]]:
    """``build_full``'s cells and counts, built once and cached under data/inflection/
    (full-<cap>.jsonl and full-<cap>.available.json)."""
    path = cache_dir / f"full-{FULL_CAP}.jsonl"
    counts_path = cache_dir / f"full-{FULL_CAP}.available.json"
    if not (path.exists() and counts_path.exists()):
        examples, available = build_full(vocab)
        cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with tmp.open("w", encoding="utf-8") as handle:
            for example in examples:
                handle.write(json.dumps(asdict(example), ensure_ascii=False) + "\n")
        counts_path.write_text(json.dumps(available) + "\n")
        tmp.replace(path)
    with path.open(encoding="utf-8") as handle:
        examples = [_example_from_json(line) for line in handle]
    return examples, json.loads(counts_path.read_text())


# --- what a model must reproduce from its own training set ----------------------------------

ENGLISH_PAST = ("V;PST", "V;V.PTCP;PST")


def regular_english_past(lemma: str) -> set[str]:
    """The spellings the regular -ed rule can give: walk+ed, bake+d, cry -> cried, stop+ped,
    panic+ked. A cell none of whose forms is one of these is irregular (go -> went)."""
    forms = {lemma + "ed", lemma + lemma[-1] + "ed", lemma + "ked"}
    if lemma.endswith("e"):
        forms.add(lemma + "d")
    if len(lemma) > 1 and lemma.endswith("y") and lemma[-2] not in "aeiou":
        forms.add(lemma[:-1] + "ied")
    return forms


def irregular_english_past(examples: list[InflectionExample]) -> list[InflectionExample]:
    """English past and past-participle cells the regular rule gets wrong."""
    return [
        e
        for e in examples
        if e.language == "en"
        and e.features in ENGLISH_PAST
        and not set(e.forms) & regular_english_past(e.lemma)
    ]


def _umlauts(word: str) -> int:
    return sum(ch in "äöüÄÖÜ" for ch in word)


def german_umlaut_plurals(examples: list[InflectionExample]) -> list[InflectionExample]:
    """German plural cells whose form gains an umlaut over the lemma (Haus -> Häuser)."""
    return [
        e
        for e in examples
        if e.language == "de"
        and e.features.endswith(";PL")
        and any(_umlauts(form) > _umlauts(e.lemma) for form in e.forms)
    ]


def reproduction_sets(
    training: list[InflectionExample], size: int = REPRODUCTION_SIZE
) -> dict[str, list[InflectionExample]]:
    """The training cells a model should give back: a fixed random sample, every irregular
    English past / participle, every German plural with umlaut."""
    rng = random.Random(f"{SEED}-reproduction")
    return {
        "sample": _sample(rng, training, size),
        "english-irregular-past": irregular_english_past(training),
        "german-umlaut-plural": german_umlaut_plurals(training),
    }


def load_splits(cache_dir: Path = DATA_DIR) -> dict[str, list[InflectionExample]]:
    """The splits, built once and cached as JSON lines under data/inflection/."""
    names = ("high", "medium", "dev", "test")
    if not all((cache_dir / f"{name}.jsonl").exists() for name in names):
        splits = build_splits()
        cache_dir.mkdir(parents=True, exist_ok=True)
        for name in names:  # written aside and renamed: two runs may build the cache at once
            tmp = cache_dir / f"{name}.{os.getpid()}.tmp"
            with tmp.open("w", encoding="utf-8") as handle:
                for example in splits[name]:
                    handle.write(json.dumps(asdict(example), ensure_ascii=False) + "\n")
            tmp.replace(cache_dir / f"{name}.jsonl")
    splits = {}
    for name in names:
        with (cache_dir / f"{name}.jsonl").open(encoding="utf-8") as handle:
            splits[name] = [_example_from_json(line) for line in handle]
    return splits


def _example_from_json(line: str) -> InflectionExample:
    row = json.loads(line)
    return InflectionExample(row["language"], row["lemma"], row["features"], tuple(row["forms"]))


def split_counts(splits: dict[str, list[InflectionExample]]) -> dict[str, dict[str, int]]:
    """{split: {language: number of cells}} — the table the deep-dive documents."""
    counts: dict[str, dict[str, int]] = {}
    for name, examples in splits.items():
        counts[name] = {language: 0 for language in LANGUAGES}
        for example in examples:
            counts[name][example.language] += 1
    return counts


# The packages the tables are read from (their versions go into the manifest).
PACKAGES = ("lemminflect", "german-nouns", "mlconjug3")
