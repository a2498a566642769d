"""The reference files behind the widgets' verdicts (models/references.py): the paradigm
encoding round-trips, lookups answer every case (each split, unknown lemma, missing cell, a
sentence in and out of the corpus), the files are verified by sha256 and version, and the
shipped files agree with the data code and with the models they judge."""

from __future__ import annotations

import json
import lzma
import subprocess
import sys
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from models import references
from models.checkpoints import CHECKPOINT_DIR, CheckpointError, read_manifest
from models.references import (
    InflectionLexicon,
    ReferenceFormatError,
    TranslationCorpus,
    apply_edit,
    form_edit,
    inflection_document,
    load_reference,
    matches_reference,
    reference_name,
    translation_document,
    write_reference,
)
from models.seq2seq_run import REFERENCES, SERVED, SERVED_CORPUS
from models.tasks.inflection import InflectionExample, language_tables, lemma_split
from models.tasks.translation import SentencePair, entry_corpus

letters = st.text(alphabet="abcäöüßéz", min_size=1, max_size=12)


@given(lemma=letters, form=letters)
def test_a_form_is_an_edit_of_its_lemma(lemma: str, form: str) -> None:
    assert apply_edit(lemma, form_edit(lemma, form)) == form


def test_edits_keep_the_shared_prefix() -> None:
    assert form_edit("fight", "fought") == "4ought"
    assert form_edit("Standplatz", "Standplätze") == "3ätze"
    assert form_edit("walk", "walked") == "0ed"


def cell(language: str, lemma: str, features: str, *forms: str) -> InflectionExample:
    return InflectionExample(language, lemma, features, tuple(sorted(forms)))


CELLS = [
    cell("en", "walk", "V;PST", "walked"),
    cell("en", "walk", "V;PRS;3;SG", "walks"),
    cell("en", "talk", "V;PST", "talked"),
    cell("en", "talk", "V;PRS;3;SG", "talks"),
    cell("en", "dream", "V;PST", "dreamed", "dreamt"),
    cell("en", "vertex", "N;PL", "vertexes", "vertices"),
    cell("de", "Haus", "N;NOM;PL", "Häuser"),
]


@pytest.fixture(scope="module")
def lexicon() -> InflectionLexicon:
    training_sets = {"high": [CELLS[0], CELLS[4]], "medium": [CELLS[0]]}
    document = inflection_document(CELLS, training_sets, {"lemminflect": "test"})
    assert document["training_sets"] == ["high", "medium"]
    # walk and talk inflect alike: one paradigm shared by both lemmas
    assert len(document["languages"]["en"]["patterns"]) == 3
    lexicon = InflectionLexicon(document)
    # checked here, where it is built: a module's fixture runs in its first test only
    assert lexicon.training_sets == ["high", "medium"]
    return lexicon


def test_lookup_gives_every_form_and_the_lemmas_split(lexicon: InflectionLexicon) -> None:
    for example in CELLS:
        found = lexicon.lookup(example.language, example.lemma, example.features)
        assert found.forms == example.forms
        assert found.split == lemma_split(example.language, example.lemma)


def test_lookup_says_which_training_sets_hold_the_cell(lexicon: InflectionLexicon) -> None:
    assert lexicon.lookup("en", "walk", "V;PST").training_sets == {"high", "medium"}
    assert lexicon.lookup("en", "dream", "V;PST").training_sets == {"high"}
    assert lexicon.lookup("en", "walk", "V;PRS;3;SG").training_sets == set()


def test_an_unknown_lemma_is_unseen_and_a_missing_cell_has_no_forms(
    lexicon: InflectionLexicon,
) -> None:
    for language, lemma in (("en", "blorft"), ("xx", "walk"), ("en", "Walk")):
        found = lexicon.lookup(language, lemma, "V;PST")
        assert (found.split, found.forms, found.training_sets) == ("unseen", None, set())
    missing = lexicon.lookup("en", "vertex", "V;PST")
    assert missing.split == lemma_split("en", "vertex") and missing.forms is None
    assert missing.training_sets == frozenset()
    assert lexicon.lookup("en", "walk", "N;PL").forms is None  # a cell of another lemma


def test_a_sentence_is_found_after_the_corpus_normalisation() -> None:
    corpus = TranslationCorpus(
        translation_document(
            {
                "train": [SentencePair("Permission denied", "Keine Berechtigung")],
                "dev": [SentencePair("3 Stars", "3 Sterne")],
                "test": [SentencePair("The name of the property", "Der Name der Eigenschaft")],
            },
            "sha",
        )
    )
    assert corpus.lookup("Permission denied").split == "train"
    assert corpus.lookup("  Permission \t denied: ").text == "Keine Berechtigung"
    assert corpus.lookup("3 Stars").split == "dev"
    assert corpus.lookup("The name of the property").split == "test"
    assert corpus.lookup("permission denied") is None  # case matters, as in the corpus
    assert corpus.lookup("Could not open the file.") is None


def test_the_verdict_ignores_whitespace_only() -> None:
    assert matches_reference("Der  Name der Eigenschaft ", ["Der Name der Eigenschaft"])
    assert matches_reference("dreamt", ("dreamed", "dreamt"))
    assert not matches_reference("Dreamt", ("dreamed", "dreamt"))
    assert not matches_reference("", ("went",))


def test_a_written_file_is_verified_at_load(tmp_path: Path) -> None:
    document = translation_document({"train": [SentencePair("Open File", "Datei öffnen")]}, "x")
    name = reference_name("translation", "v2")
    entry = write_reference("translation", name, document, {"corpus": "v2"}, tmp_path)
    assert read_manifest(tmp_path)["seq2seq-translate-v2-reference"] == entry
    assert entry["command"] == "python -m models.references translation --corpus v2"
    assert entry["family"] == "reference" and entry["version"] == references.VERSION
    assert load_reference(entry, tmp_path).lookup("Open File").text == "Datei öffnen"

    path = tmp_path / entry["file"]
    path.write_bytes(path.read_bytes()[:-8] + bytes(8))
    with pytest.raises(CheckpointError, match="does not match its manifest entry"):
        load_reference(entry, tmp_path)


def test_a_file_of_another_version_is_refused(tmp_path: Path) -> None:
    document = {**translation_document({}, "x"), "version": references.VERSION + 1}
    entry = write_reference("translation", reference_name("translation"), document, {}, tmp_path)
    with pytest.raises(ReferenceFormatError, match="python -m models.references translation"):
        load_reference(entry, tmp_path)


# --- the shipped files -------------------------------------------------------------------------

SHIPPED = read_manifest(CHECKPOINT_DIR)
needs_shipped = pytest.mark.skipif(
    not set(REFERENCES.values()) <= SHIPPED.keys(),
    reason="the reference files are not built (python -m models.references inflection|translation)",
)


@needs_shipped
def test_the_shipped_lexicon_holds_every_english_cell() -> None:
    lexicon = load_reference(SHIPPED[REFERENCES["inflection"]])
    cells = list(language_tables("en"))
    assert len(cells) > 30_000
    for example in cells:
        found = lexicon.lookup("en", example.lemma, example.features)
        assert (found.forms, found.split) == (example.forms, lemma_split("en", example.lemma))


@needs_shipped
def test_the_shipped_files_describe_what_the_served_models_learned_from() -> None:
    inflection = SHIPPED[REFERENCES["inflection"]]
    translation = SHIPPED[REFERENCES["translation"]]
    for task, served in SERVED.items():
        for name in served.values():
            data = SHIPPED[name]["data"]
            if task == "inflection":
                assert data["packages"] == inflection["data"]["packages"], name
                assert data["setting"] in inflection["data"]["training_sets"], name
            else:  # the served models' corpus is the reference's
                assert entry_corpus(SHIPPED[name]) == SERVED_CORPUS, name
                assert data["corpus_sha256"] == translation["data"]["corpus_sha256"], name


@needs_shipped
def test_the_shipped_files_are_compact() -> None:
    for name in REFERENCES.values():
        entry = SHIPPED[name]
        assert entry["size_bytes"] < 3_000_000, name
        document = lzma.decompress((CHECKPOINT_DIR / entry["file"]).read_bytes())
        assert len(document) > 3 * entry["size_bytes"], name


@needs_shipped
def test_the_lookups_load_without_the_data_tools() -> None:
    """The server has no [dev] extra: with the lexicon packages unimportable, both files still
    load and answer."""
    script = (
        "import sys\n"
        "for name in ('lemminflect', 'german_nouns', 'mlconjug3', 'sacrebleu', 'wordfreq'):\n"
        "    sys.modules[name] = None\n"
        "from models.checkpoints import read_manifest\n"
        "from models.references import load_reference\n"
        "from models.seq2seq_run import REFERENCES\n"
        "manifest = read_manifest()\n"
        "lexicon = load_reference(manifest[REFERENCES['inflection']])\n"
        "corpus = load_reference(manifest[REFERENCES['translation']])\n"
        "print(lexicon.lookup('en', 'go', 'V;PST').forms, corpus.lookup('Open File').text)\n"
    )
    root = Path(__file__).resolve().parents[1]
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, check=True
    )
    assert run.stdout.strip() == "('went',) Datei öffnen"


# --- the packed lookup and the small rules ------------------------------------------------------


@given(
    items=st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=30),
    probes=st.lists(st.text(max_size=6), max_size=20),
)
def test_the_packed_map_answers_as_a_dict_would(items: dict, probes: list) -> None:
    packed = references.PackedMap(items.items())
    assert len(packed) == len(items)
    for key, value in items.items():
        assert packed.get(key) == value
    for probe in probes:
        assert packed.get(probe) == items.get(probe)


def test_the_packed_map_keeps_the_last_value_and_finds_keys_at_either_end() -> None:
    packed = references.PackedMap([("b", "1"), ("d", "2"), ("b", "3"), ("ä", "4")])
    assert len(packed) == 3
    assert [packed.get(k) for k in ("a", "b", "c", "d", "e", "ä", "ö")] == [
        None,
        "3",
        None,
        "2",
        None,
        "4",
        None,
    ]
    assert references.PackedMap([]).get("x") is None


def test_a_sentence_is_looked_up_in_the_corpus_form_and_the_last_split_wins() -> None:
    document = translation_document(
        {
            "train": [SentencePair("Open File", "Datei öffnen")],
            "test": [SentencePair("Open File", "Datei aufmachen"), SentencePair("Ratio", "Quote")],
        },
        "x",
    )
    corpus = TranslationCorpus(document)
    assert len(corpus) == 2
    found = corpus.lookup("  Open   File : ")  # whitespace collapsed, a trailing colon dropped
    assert (found.split, found.text) == ("test", "Datei aufmachen")
    assert corpus.lookup("Ratio:").text == "Quote"
    assert corpus.lookup("Open") is None


def test_the_source_form_drops_only_a_trailing_colon() -> None:
    assert references.normalise_source(" Save  as: ") == "Save as"
    assert references.normalise_source("Save as :") == "Save as"
    assert references.normalise_source("Ratio: 1:2") == "Ratio: 1:2"
    assert references.normalise_source("") == ""


def test_each_reference_file_has_its_name() -> None:
    assert reference_name("inflection") == "seq2seq-inflect-reference"
    assert reference_name("inflection", "v2") == "seq2seq-inflect-reference"
    assert reference_name("translation") == "seq2seq-translate-reference"
    assert reference_name("translation", "v1") == "seq2seq-translate-reference"
    assert reference_name("translation", "v3") == "seq2seq-translate-v3-reference"


def test_an_edit_drops_letters_then_appends() -> None:
    assert apply_edit("fight", "4ought") == "fought"
    assert apply_edit("go", "0es") == "goes"
    assert apply_edit("Platz", "3ätze") == "Plätze"
    assert apply_edit("x", "1") == ""


def test_a_reference_file_of_another_kind_says_what_this_code_reads() -> None:
    with pytest.raises(ReferenceFormatError) as caught:
        references.check_format({"format": "other", "version": 3}, "inflection")
    assert str(caught.value) == (
        "The inflection reference file is 'other' version 3; this code reads "
        f"'papertrace-inflection-reference' version {references.VERSION}. Rebuild it: "
        "python -m models.references inflection"
    )
    references.check_format(
        {"format": "papertrace-translation-reference", "version": references.VERSION},
        "translation",
    )


def test_a_v1_file_is_built_by_the_command_without_a_corpus(tmp_path: Path) -> None:
    document = translation_document({}, "x")
    entry = write_reference("translation", "t", document, {"corpus": "v1"}, tmp_path)
    assert entry["command"] == "python -m models.references translation"
    assert entry["task"] == "translation" and entry["file"] == "t.json.xz"
    assert entry["format"] == "papertrace-translation-reference"
    assert (tmp_path / "t.json.xz").stat().st_mode & 0o777 == 0o644
    assert not list(tmp_path.glob(".*.tmp"))


# --- the build commands, on small stand-ins for the lexicon and the corpus ----------------------

TINY_CORPUS = {
    "train": [SentencePair("Open File", "Datei öffnen"), SentencePair("Quit", "Beenden")],
    "dev": [SentencePair("Save", "Speichern")],
    "test": [SentencePair("Close", "Schließen")],
}


def test_the_translation_command_writes_the_corpus_it_reads(tmp_path: Path) -> None:
    from models.tasks import translation

    corpus_dir, out = tmp_path / "corpus", tmp_path / "out"
    out.mkdir()
    translation.write_splits(TINY_CORPUS, corpus_dir)
    entry = references.build_translation(out, corpus_dir, corpus="v2")
    sha = translation.corpus_sha256(TINY_CORPUS)
    assert entry["data"] == {
        "source": "every pair of the translation corpus (models.tasks.translation.build_corpus)",
        "corpus": "v2",
        "corpus_sha256": sha,
        "counts": {"train": 2, "dev": 1, "test": 1},
    }
    assert entry["file"] == "seq2seq-translate-v2-reference.json.xz"
    assert read_manifest(out)["seq2seq-translate-v2-reference"] == entry
    corpus = load_reference(entry, out)
    assert isinstance(corpus, TranslationCorpus) and len(corpus) == 4
    assert (corpus.lookup("Close").split, corpus.lookup("Close").text) == ("test", "Schließen")


def test_without_a_folder_the_translation_command_builds_the_named_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from models.tasks import translation

    asked: list[str] = []

    def build_corpus(corpus: str) -> dict:
        asked.append(corpus)
        return TINY_CORPUS

    monkeypatch.setattr(translation, "build_corpus", build_corpus)
    entry = references.build_translation(tmp_path, corpus="v3")
    assert asked == ["v3"] and entry["data"]["corpus"] == "v3"
    assert entry["command"] == "python -m models.references translation --corpus v3"


def test_the_command_line_writes_into_the_checkpoint_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from models.tasks import translation

    translation.write_splits(TINY_CORPUS, tmp_path / "corpus")
    monkeypatch.setattr(references, "CHECKPOINT_DIR", tmp_path)
    references.main(["translation", "--data", str(tmp_path / "corpus"), "--corpus", "v2"])
    entry = read_manifest(tmp_path)["seq2seq-translate-v2-reference"]
    assert capsys.readouterr().out == (
        f"wrote seq2seq-translate-v2-reference.json.xz: {entry['size_bytes']:,} bytes, "
        f"sha256 {entry['sha256']}\n"
    )
    built: list[tuple] = []
    monkeypatch.setattr(references, "build_inflection", lambda *args: built.append(args) or entry)
    references.main(["inflection"])
    references.main(["inflection", "--data", str(tmp_path / "lexicon")])
    references.main(["translation", "--data", str(tmp_path / "corpus")])  # v1 by default
    assert built == [(tmp_path, None), (tmp_path, tmp_path / "lexicon")]
    assert "seq2seq-translate-reference" in read_manifest(tmp_path)
    with pytest.raises(SystemExit):
        references.main(["sentiment"])


EN_LEMMAS = ("walk", "talk", "dream", "vertex")


def test_the_inflection_command_records_each_languages_lexicon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from models.tasks import inflection

    monkeypatch.setattr(inflection, "LANGUAGES", ("en", "de"))
    monkeypatch.setattr(
        inflection, "language_tables", lambda language: [c for c in CELLS if c.language == language]
    )
    asked: list[Path] = []

    def training_sets(data_dir: Path) -> dict[str, list]:
        asked.append(data_dir)
        return {"high": [CELLS[0], CELLS[6]], "full": CELLS}

    monkeypatch.setattr(references, "inflection_training_sets", training_sets)
    entry = references.build_inflection(tmp_path, tmp_path / "data")
    assert asked == [tmp_path / "data"]
    assert entry["data"]["source"].startswith("every cell of the inflection lexicon")
    assert entry["data"]["training_sets"] == ["full", "high"]
    assert set(entry["data"]["packages"]) == set(inflection.PACKAGES)
    languages = entry["data"]["languages"]
    assert languages["en"] == {
        "lemmas": dict(sorted(Counter(lemma_split("en", lemma) for lemma in EN_LEMMAS).items())),
        "features": 3,
        "paradigms": 3,
    }
    assert languages["de"] == {
        "lemmas": {lemma_split("de", "Haus"): 1},
        "features": 1,
        "paradigms": 1,
    }
    lexicon = load_reference(entry, tmp_path)
    assert isinstance(lexicon, InflectionLexicon)
    assert lexicon.lookup("de", "Haus", "N;NOM;PL").training_sets == {"high", "full"}
    assert lexicon.lookup("en", "dream", "V;PST").forms == ("dreamed", "dreamt")

    monkeypatch.setattr(inflection, "DATA_DIR", tmp_path / "default")
    references.build_inflection(tmp_path)
    assert asked[-1] == tmp_path / "default"


def test_the_training_sets_are_the_papers_two_and_the_widgets_full_set(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from models.tasks import inflection, inflection_vocab

    splits = {"high": [CELLS[0]], "medium": [CELLS[1]], "low": [CELLS[2]]}
    seen: list = []
    monkeypatch.setattr(inflection, "load_splits", lambda d: seen.append(("splits", d)) or splits)
    monkeypatch.setattr(
        inflection_vocab.InflectionVocab,
        "shared",
        classmethod(lambda cls, high: seen.append(("vocab", high)) or "vocab"),
    )
    monkeypatch.setattr(
        inflection, "load_full", lambda vocab, d: seen.append(("full", vocab, d)) or (CELLS, {})
    )
    sets = references.inflection_training_sets(tmp_path)
    assert sets == {"high": [CELLS[0]], "medium": [CELLS[1]], "full": CELLS}
    assert seen == [("splits", tmp_path), ("vocab", [CELLS[0]]), ("full", "vocab", tmp_path)]


def test_the_file_is_compact_sorted_utf8_json_at_the_strongest_preset(tmp_path: Path) -> None:
    document = {"b": 1, "a": ["Datei öffnen", {"y": 2, "x": None}]}
    entry = write_reference("translation", "t", document, {"corpus": "v1"}, tmp_path)
    raw = '{"a":["Datei öffnen",{"x":null,"y":2}],"b":1}'.encode()
    assert (tmp_path / "t.json.xz").read_bytes() == lzma.compress(raw, preset=9)
    assert entry["data"] == {"corpus": "v1"}
    assert entry["size_bytes"] == (tmp_path / "t.json.xz").stat().st_size
    assert datetime.fromisoformat(entry["created_at"]).utcoffset() == timedelta(0)
    assert len(entry["created_at"]) == len("2026-12-07T14:00:00+00:00")


def test_the_documents_carry_their_provenance() -> None:
    document = inflection_document(CELLS[:2], {"high": CELLS[:2]}, {"lemminflect": "0.2.3"})
    assert document["packages"] == {"lemminflect": "0.2.3"}
    assert document["split"] == (
        "by lemma (sha256 of language and lemma: 80/10/10), from "
        "models.tasks.inflection.lemma_split"
    )
    row = document["languages"]["en"]["lemmas"]["walk"].split(" ")
    assert row[2:] == ["high:0,1"]  # both of walk's cells, by their place among the features
    assert translation_document({}, "abc")["corpus_sha256"] == "abc"


def test_the_command_line_explains_itself(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        references.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert text.startswith("usage: python -m models.references [-h] [--data DATA]")
    assert (
        "--data DATA the task's data folder, if not the default under data/ --corpus CORPUS "
        "translation: the corpus version (models.tasks.translation)"
    ) in text


def written(entry: dict, directory: Path) -> dict:
    return json.loads(lzma.decompress((directory / entry["file"]).read_bytes()))


def test_a_built_file_records_its_corpus_and_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from models.tasks import inflection, translation

    translation.write_splits(TINY_CORPUS, tmp_path / "corpus")
    entry = references.build_translation(tmp_path, tmp_path / "corpus")  # v1 by default
    assert entry["file"] == "seq2seq-translate-reference.json.xz"
    assert entry["data"]["corpus"] == "v1"
    sha = translation.corpus_sha256(TINY_CORPUS)
    assert written(entry, tmp_path)["corpus_sha256"] == sha

    monkeypatch.setattr(inflection, "LANGUAGES", ("de",))
    monkeypatch.setattr(inflection, "language_tables", lambda language: CELLS[6:])
    monkeypatch.setattr(references, "inflection_training_sets", lambda data_dir: {})
    entry = references.build_inflection(tmp_path, tmp_path)
    assert written(entry, tmp_path)["packages"] == entry["data"]["packages"]
    assert set(entry["data"]["packages"]) == set(inflection.PACKAGES)


def test_a_reference_file_of_an_unknown_task_is_refused(tmp_path: Path) -> None:
    entry = write_reference("translation", "t", translation_document({}, "x"), {}, tmp_path)
    with pytest.raises(ReferenceFormatError) as caught:
        load_reference({**entry, "task": "parsing"}, tmp_path)
    assert str(caught.value) == "No reference lookup for task 'parsing'."
