"""Translation corpus v2: one-word labels, translator credits, corpus versions and how German
catalogs are taken out of a .deb. The catalogs are built here (see test_tasks_translation)."""

import shutil
import subprocess
from pathlib import Path

import pytest

from models.tasks import translation, translation_tokenizers
from models.tasks.translation import (
    CORPORA,
    SentencePair,
    clean_pair,
    extract_german_catalogs,
    is_german_catalog,
    is_label,
    pairs_from_catalogs,
    source_frequencies,
)
from tests.test_tasks_translation import write_mo


@pytest.mark.parametrize(
    ("source", "target", "kept"),
    [
        ("Cancel", "Abbrechen", SentencePair("Cancel", "Abbrechen")),
        ("_Cancel", "_Abbrechen", SentencePair("Cancel", "Abbrechen")),  # GTK accelerator
        ("&Open", "Ö&ffnen", SentencePair("Open", "Öffnen")),  # Qt accelerator
        ("OK", "OK", SentencePair("OK", "OK")),
        ("Open…", "Öffnen …", SentencePair("Open…", "Öffnen …")),
        ("Save...", "Speichern …", SentencePair("Save...", "Speichern …")),
        ("Read-only", "Schreibgeschützt", SentencePair("Read-only", "Schreibgeschützt")),
        ("Name:", "Name:", SentencePair("Name", "Name")),  # trailing colon, as for sentences
        ("Deselect", "Auswahl aufheben", SentencePair("Deselect", "Auswahl aufheben")),
    ],
)
def test_one_word_labels_are_kept_in_v2(source: str, target: str, kept: SentencePair) -> None:
    assert clean_pair(source, target, min_words=1) == kept
    assert clean_pair(source, target) is None  # v1 (min_words 2) keeps no single words


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("GtkWindow", "GtkWindow"),  # CamelCase: an identifier
        ("iPod", "iPod"),
        ("default:LTR", "default:LTR"),  # GTK's text direction, not a message
        ("gtk-ok2", "OK"),  # digits
        ("x86_64", "x86_64"),
        ("%s", "%s"),  # placeholder, as before
        ("<b>Bold</b>", "<b>Fett</b>"),  # markup, as before
        ("Help", "Zeigt die Hilfe zu diesem Programm an"),  # a description, not a label
        ("Open", ""),  # untranslated
    ],
)
def test_one_word_sources_that_are_not_labels_are_dropped(source: str, target: str) -> None:
    assert clean_pair(source, target, min_words=1) is None


def test_the_label_rule_itself() -> None:
    assert all(map(is_label, ["Cancel", "cancel", "URL", "E-mail", "Don't", "Quit!", "Open…"]))
    assert not any(map(is_label, ["PostScript", "Gtk2", "a.b", "foo_bar", "…", "-", "Open……"]))


@pytest.mark.parametrize(
    "msgid",
    [
        "translator-credits",
        "translator_credits",
        "Your names",
        "Your emails",
        "NAME OF TRANSLATORS",
    ],
)
def test_translator_credits_are_not_messages(msgid: str) -> None:
    names = "Max Mustermann, Erika Musterfrau"
    assert clean_pair(msgid, names, min_words=1) is None
    assert clean_pair(msgid, names) is None


def test_the_label_translator_credits_is_a_message() -> None:
    # v1's corpus holds it; dropping it would change v1's sha256
    assert clean_pair("Translator credits", "Übersetzung von") == SentencePair(
        "Translator credits", "Übersetzung von"
    )


def test_a_v2_catalog_keeps_labels_and_sentences(tmp_path: Path) -> None:
    directory = tmp_path / "de" / "LC_MESSAGES"
    directory.mkdir(parents=True)
    catalog = write_mo(
        directory / "app.mo",
        {
            "_Cancel": "_Abbrechen",
            "Open a new window": "Ein neues Fenster öffnen",
            "translator-credits": "Max Mustermann",
            "NAME OF TRANSLATORS\x04Your names": "Max Mustermann",
            "GtkButton": "GtkButton",
        },
    )
    assert pairs_from_catalogs([catalog], min_words=1) == [
        SentencePair("Cancel", "Abbrechen"),
        SentencePair("Open a new window", "Ein neues Fenster öffnen"),
    ]
    assert pairs_from_catalogs([catalog]) == [
        SentencePair("Open a new window", "Ein neues Fenster öffnen")
    ]


def test_a_source_counts_once_per_catalog_that_carries_it(tmp_path: Path) -> None:
    catalogs = [
        write_mo(tmp_path / f"{name}.mo", entries)
        for name, entries in {
            "a": {"_Cancel": "_Abbrechen", "Open a new window": "Ein neues Fenster öffnen"},
            "b": {"Cancel": "Abbrechen", "GtkButton": "GtkButton"},
            "c": {"&Cancel": "Ab&brechen", "Save the file": "Datei speichern"},
        }.items()
    ]
    assert source_frequencies(catalogs, min_words=1) == {
        "Cancel": 3,
        "Open a new window": 1,
        "Save the file": 1,
    }
    assert source_frequencies(catalogs) == {"Open a new window": 1, "Save the file": 1}


def test_corpus_versions() -> None:
    v1, v2 = CORPORA["v1"], CORPORA["v2"]
    assert v1.packages == translation.PINNED_PACKAGES and v1.min_words == 2
    assert v1.directory == translation.DATA_DIR  # the shipped models' corpus stays where it was
    assert v2.min_words == 1 and v2.directory != v1.directory
    assert set(v1.packages) < set(v2.packages)
    names = [name for name, _ in v2.packages]
    assert len(names) == len(set(names)) >= 200
    assert all(version for _, version in v2.packages)


def test_each_corpus_version_has_its_own_tokenizers(tmp_path: Path) -> None:
    v1 = translation_tokenizers.tokenizer_path("en", tmp_path)
    assert v1.name == "seq2seq-translate-spm-en.model"  # the shipped models' file name
    assert translation_tokenizers.tokenizer_path("en", tmp_path, "v1") == v1
    assert translation_tokenizers.tokenizer_path("de", tmp_path, "v2").name == (
        "seq2seq-translate-v2-spm-de.model"
    )


@pytest.mark.parametrize(
    ("member", "german"),
    [
        ("./usr/share/locale/de/LC_MESSAGES/app.mo", True),
        ("./usr/lib/libreoffice/program/resource/de/LC_MESSAGES/sw.mo", True),
        ("./usr/share/locale/de_AT/LC_MESSAGES/app.mo", False),
        ("./usr/share/locale/fr/LC_MESSAGES/app.mo", False),
        ("./usr/share/locale/de/LC_MESSAGES/app.po", False),
        ("./usr/share/locale/de/app.mo", False),
    ],
)
def test_which_members_are_german_catalogs(member: str, german: bool) -> None:
    assert is_german_catalog(member) is german


@pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="needs dpkg-deb")
def test_extract_takes_only_the_german_catalogs_out_of_a_deb(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        "Package: demo\nVersion: 1.0\nArchitecture: all\nMaintainer: t <t@example.org>\n"
        "Description: test\n"
    )
    for language in ("de", "fr"):
        directory = root / "usr" / "share" / "locale" / language / "LC_MESSAGES"
        directory.mkdir(parents=True)
        write_mo(directory / "demo.mo", {"Open the file": "Datei öffnen"})
    (root / "usr" / "share" / "locale" / "de" / "LC_MESSAGES" / "alias.mo").symlink_to("demo.mo")
    (root / "usr" / "share" / "doc").mkdir(parents=True)
    (root / "usr" / "share" / "doc" / "README").write_text("not a catalog")
    deb = tmp_path / "demo_1.0_all.deb"
    subprocess.run(
        ["dpkg-deb", "--root-owner-group", "--build", str(root), str(deb)],
        check=True,
        capture_output=True,
    )
    into = tmp_path / "extracted"
    into.mkdir()
    catalogs = extract_german_catalogs(deb, into)
    assert [p.relative_to(into).as_posix() for p in catalogs] == [
        "demo_1.0_all/usr/share/locale/de/LC_MESSAGES/demo.mo"  # no French, no link
    ]
    assert sorted(p.name for p in (into / "demo_1.0_all").rglob("*") if p.is_file()) == ["demo.mo"]
    assert extract_german_catalogs(deb, into) == catalogs  # cached: unpacked once
