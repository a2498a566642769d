"""The inflection widget's plain labels: every language and every feature code the shipped
lexicon uses reads in words."""

from __future__ import annotations

import pytest

from app.seq2seq.morphology_labels import KNOWN_CODES, feature_labels, feature_words, language_name
from models.tasks.inflection import LANGUAGES
from models.tasks.inflection_serving import inflection_options


@pytest.mark.parametrize(
    ("cell", "words"),
    [
        ("V;PST", "past tense"),
        ("N;NOM;PL", "nominative plural"),
        ("V;SBJV;PST;IPFV;3;SG", "3rd person singular subjunctive past imperfective"),
        ("V.PTCP;PST;FEM;PL", "feminine plural past participle"),
        ("V;POS;IMP;2;SG", "2nd person singular affirmative imperative"),
        ("V.CVB;PRS", "gerund"),
        ("ADJ;SPRL", "superlative"),
        ("V;PRS;3;SG", "3rd person singular present"),
    ],
)
def test_cells_read_in_words(cell: str, words: str) -> None:
    assert feature_words(cell) == words


def test_an_unknown_code_is_kept_rather_than_dropped() -> None:
    assert feature_words("V;PST;EVID") == "past tense EVID"


def test_every_language_has_a_name() -> None:
    names = [language_name(code) for code in LANGUAGES]
    assert names == ["English", "German", "French", "Spanish", "Italian", "Portuguese", "Romanian"]


def test_every_code_the_shipped_lexicon_uses_has_words() -> None:
    try:
        cells = inflection_options()["features"]
    except OSError:
        pytest.skip("no inflection vocabulary in checkpoints/")
    used = {code for language in cells.values() for cell in language for code in cell.split(";")}
    assert used <= KNOWN_CODES
    labels = feature_labels(cells)
    for language in cells.values():
        words = [labels[cell] for cell in language]
        assert len(set(words)) == len(words), "two cells of one language read the same"
