"""Translation data: gettext catalogs -> clean, deduplicated, disjoint EN->DE splits.

The real corpus needs a Debian mirror; these tests build small .mo files in the GNU binary
format themselves, so they run anywhere.
"""

import hashlib
import struct
from pathlib import Path

import pytest
import torch

from models.seq2seq import BOS, EOS, PAD, UNK, Config, Seq2Seq
from models.tasks import translation, translation_tokenizers
from models.tasks.translation import (
    SentencePair,
    clean_pair,
    dedupe_by_source,
    pairs_from_catalogs,
    read_catalog,
    split_pairs,
)
from models.tasks.translation_serving import InvalidTranslationInput, Translator
from models.tasks.translation_tokenizers import train_tokenizer

HEADER = "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=2; plural=(n != 1);\n"


def write_mo(path: Path, entries: dict[str, str]) -> Path:
    """A GNU .mo file: magic, counts, two (length, offset) tables, then NUL-ended strings."""
    entries = {"": HEADER, **entries}
    keys = sorted(entries)
    ids = [k.encode() for k in keys]
    strs = [entries[k].encode() for k in keys]
    n = len(keys)
    offset = 28 + 16 * n
    id_table, str_table, blob = [], [], b""
    for data, table in [(d, id_table) for d in ids] + [(d, str_table) for d in strs]:
        table.append((len(data), offset + len(blob)))
        blob += data + b"\0"
    header = struct.pack("<7I", 0x950412DE, 0, n, 28, 28 + 8 * n, 0, 0)
    tables = b"".join(struct.pack("<2I", *e) for e in id_table + str_table)
    path.write_bytes(header + tables + blob)
    return path


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    directory = tmp_path / "de" / "LC_MESSAGES"
    directory.mkdir(parents=True)
    return write_mo(
        directory / "demo.mo",
        {
            "Could not open the file.": "Die Datei konnte nicht geöffnet werden.",
            "_Save the document": "Dokument _speichern",
            "&Open Recent": "Zuletzt &geöffnet",
            "Enter a new password:": "Neues Passwort eingeben:",
            "Cannot read %s": "%s kann nicht gelesen werden",
            "Deleted {count} files": "{count} Dateien gelöscht",
            "Show <b>all</b> items": "<b>Alle</b> Einträge anzeigen",
            "Quit": "Beenden",
            "menu\x04Close the window": "Fenster schließen",
            "One file copied\x00Many files copied": "Eine Datei kopiert\x00Viele Dateien kopiert",
            "Line one\nLine two": "Zeile eins\nZeile zwei",
            "Untranslated entry here": "",
        },
    )


def test_read_catalog_uses_gettext_and_drops_context_and_plural_forms(catalog: Path) -> None:
    entries = dict(read_catalog(catalog))
    assert entries["Close the window"] == "Fenster schließen"  # msgctxt removed
    assert entries["One file copied"] == "Eine Datei kopiert"  # singular form only
    assert "" not in entries  # the header


def test_cleaning_keeps_plain_sentences_only(catalog: Path) -> None:
    pairs = {p.source: p.target for p in pairs_from_catalogs([catalog])}
    assert pairs == {
        "Could not open the file.": "Die Datei konnte nicht geöffnet werden.",
        "Save the document": "Dokument speichern",  # GTK accelerator removed
        "Open Recent": "Zuletzt geöffnet",  # Qt accelerator removed
        "Enter a new password": "Neues Passwort eingeben",  # trailing colon removed
        "Close the window": "Fenster schließen",
        "One file copied": "Eine Datei kopiert",
    }


@pytest.mark.parametrize(
    "source",
    [
        "%d of %s",
        "Value: %(name)s now",
        "Open {0} now",
        "Set $HOME here",
        "$(ARG1) does not exist.",  # LibreOffice's placeholders
        "Press <Ctrl> now",
    ],
)
def test_placeholders_and_markup_are_dropped(source: str) -> None:
    assert clean_pair(source, "irgendwas") is None


def test_word_limits() -> None:
    assert clean_pair("Quit", "Beenden") is None  # one word
    assert clean_pair(" ".join(["word"] * 25), "Wort") is not None
    assert clean_pair(" ".join(["word"] * 26), "Wort") is None


def test_dedupe_keeps_the_most_frequent_translation() -> None:
    pairs = [
        SentencePair("Save the file", "Datei speichern"),
        SentencePair("Save the file", "Die Datei sichern"),
        SentencePair("Save the file", "Datei speichern"),
        SentencePair("Open a file", "Datei öffnen"),
    ]
    assert dedupe_by_source(pairs) == [
        SentencePair("Open a file", "Datei öffnen"),
        SentencePair("Save the file", "Datei speichern"),
    ]


def test_splits_are_disjoint_by_source_and_deterministic() -> None:
    pairs = [SentencePair(f"Sentence number {i} here", f"Satz Nummer {i}") for i in range(3000)]
    splits = split_pairs(pairs)
    sources = {name: {p.source for p in split} for name, split in splits.items()}
    assert not sources["train"] & sources["dev"]
    assert not sources["train"] & sources["test"]
    assert not sources["dev"] & sources["test"]
    assert sum(len(s) for s in splits.values()) == 3000
    assert 0.01 < len(splits["test"]) / 3000 < 0.03  # TEST_PERCENT = 2
    assert split_pairs(list(reversed(pairs)))["test"] == list(reversed(splits["test"]))
    # the digest covers every pair with its split, in order: the manifest records it
    lines = [f"{name}\t{p.source}\t{p.target}\n" for name in sorted(splits) for p in splits[name]]
    digest = translation.corpus_sha256(splits)
    assert digest == hashlib.sha256("".join(lines).encode()).hexdigest()
    retranslated = SentencePair(splits["test"][0].source, "anders")
    changed = {**splits, "test": [retranslated, *splits["test"][1:]]}
    assert translation.corpus_sha256(changed) != digest


def test_pinned_packages_have_exact_versions() -> None:
    names = [name for name, _ in translation.PINNED_PACKAGES]
    assert len(names) == len(set(names)) >= 20
    assert translation.deb_filename_glob("gawk", "1:5.2.1-2") == "gawk_1%3a5.2.1-2_*.deb"


def _sentences() -> list[str]:
    words = "open close save the file window document new old read write copy".split()
    return [" ".join(words[(i * k) % len(words)] for k in range(1, 6)) for i in range(300)]


def test_tokenizer_is_deterministic_with_seq2seq_specials(tmp_path: Path) -> None:
    first, second = train_tokenizer(_sentences(), 30), train_tokenizer(_sentences(), 30)
    assert first == second
    path = tmp_path / "t.model"
    path.write_bytes(first)
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(path))
    assert [sp.pad_id(), sp.bos_id(), sp.eos_id(), sp.unk_id()] == [PAD, BOS, EOS, UNK]


def test_translator_returns_a_trace_and_rejects_long_input(tmp_path: Path) -> None:
    import sentencepiece as spm

    for language in ("en", "de"):
        translation_tokenizers.tokenizer_path(language, tmp_path).write_bytes(
            train_tokenizer(_sentences(), 30)
        )
    source_sp, target_sp = (
        spm.SentencePieceProcessor(
            model_file=str(translation_tokenizers.tokenizer_path(lang, tmp_path))
        )
        for lang in ("en", "de")
    )
    torch.manual_seed(0)
    model = Seq2Seq(Config(30, 30, emb_dim=8, hidden=16, attn_alpha=1.5, out_alpha=1.5)).eval()
    translator = Translator(model, source_sp, target_sp)
    trace = translator.translate("open the new file", beam_width=3)
    assert trace.source_tokens == source_sp.encode("open the new file", out_type=str)
    assert all(len(step.attention) == len(trace.source_tokens) for step in trace.steps)
    assert 1 <= len(trace.hypotheses) <= 3
    with pytest.raises(InvalidTranslationInput, match="1-30 words"):
        translator.translate(" ".join(["file"] * 31))


# ---- translation cleaning: percent signs and mid-word accelerators ----


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("Download is 50% complete", "Download zu 50% abgeschlossen"),
        ("The battery is at 100%", "Der Akku ist bei 100%"),
        ("Zoom to 200%, then print", "Auf 200% vergrößern, dann drucken"),
        ("Used space (90%) is high", "Belegter Platz (90%) ist hoch"),
    ],
)
def test_a_percent_sign_after_a_number_is_kept(source: str, target: str) -> None:
    assert clean_pair(source, target) == SentencePair(source, target)


@pytest.mark.parametrize(
    ("source", "target", "expected"),
    [
        ("Open the _file", "Datei ö&ffnen", SentencePair("Open the file", "Datei öffnen")),
        (
            "Select A_ll items",
            "A&lle auswählen",
            SentencePair("Select All items", "Alle auswählen"),
        ),
        ("Sa~ve the page", "Seite speic~hern", SentencePair("Save the page", "Seite speichern")),
    ],
)
def test_a_mid_word_accelerator_is_removed(
    source: str, target: str, expected: SentencePair
) -> None:
    assert clean_pair(source, target) == expected


def test_an_ampersand_between_words_is_not_an_accelerator() -> None:
    pair = clean_pair("Copy & paste the text", "Text kopieren & einfügen")
    assert pair == SentencePair("Copy & paste the text", "Text kopieren & einfügen")
