"""Plain-language names for the inflection widget: language names for ISO codes, and feature
cells in words ("V;SBJV;PST;IPFV;3;SG" → "3rd person singular subjunctive past imperfective").

The words cover every UniMorph code the lexicon uses (models/tasks/inflection.py builds the cells);
a code outside this table is shown as itself, so a new cell still reads, only less plainly.
"""

from __future__ import annotations

LANGUAGE_NAMES = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "pt": "Portuguese",
    "ro": "Romanian",
}

# Each code's words and its place in the phrase: person and number first, then mood, tense,
# aspect, and the non-finite form last ("feminine plural past participle").
_SLOTS: tuple[dict[str, str], ...] = (
    {"1": "1st person", "2": "2nd person", "3": "3rd person"},
    {"MASC": "masculine", "FEM": "feminine"},
    {"NOM": "nominative", "ACC": "accusative", "DAT": "dative", "GEN": "genitive"},
    {"SG": "singular", "PL": "plural"},
    {"POS": "affirmative"},
    {"IND": "indicative", "SBJV": "subjunctive", "COND": "conditional", "IMP": "imperative"},
    {"PRS": "present", "PST": "past", "FUT": "future"},
    {"IPFV": "imperfective", "PFV": "perfective", "PRF": "perfect"},
    {"V.PTCP": "participle", "V.CVB": "gerund"},
    {"CMPR": "comparative", "SPRL": "superlative"},
)
# Parts of speech are implied by the rest of the cell, so they add no words.
_PARTS_OF_SPEECH = frozenset({"V", "N", "ADJ"})
KNOWN_CODES = frozenset(code for slot in _SLOTS for code in slot) | _PARTS_OF_SPEECH


def language_name(code: str) -> str:
    return LANGUAGE_NAMES.get(code, code)


def feature_words(cell: str) -> str:
    """The cell in words; a bare tense ("V;PST") reads as "past tense"."""
    codes = [code for code in cell.split(";") if code]
    words = [slot[code] for slot in _SLOTS for code in codes if code in slot]
    unknown = [code for code in codes if code not in KNOWN_CODES]
    if len(words) == 1 and words[0] in _SLOTS[6].values():
        words.append("tense")
    if words == ["present", "gerund"]:
        words = ["gerund"]
    return " ".join(words + unknown) or cell


def feature_labels(cells: dict[str, list[str]]) -> dict[str, str]:
    """Every cell of every language, in words."""
    return {cell: feature_words(cell) for language in cells.values() for cell in language}
