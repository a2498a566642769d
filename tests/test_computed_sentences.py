"""The sentences a page computes from an answer, read word for word on answers where ours is
below, equal to and above what it is compared with: the pointer board's headline and its
"beyond training" line (app/pointer/views.py, app/pointer/board.py), the seq2seq notes on words
and lemmas outside training and the verdict's split lines (models/seq2seq_run.py). A sentence
that names the wrong side ("shorter" for a longer tour, "occurs" for several words, "5 more"
for one) fails here, not only a sentence that is missing.

The results tables' takeaways are read the same way in tests/test_result_takeaways.py, and the
model cards' sentences in tests/test_model_cards.py.
"""

from __future__ import annotations

import pytest

from app.pointer.board import beyond_training
from app.pointer.views import headline, percent_text
from models import references, seq2seq_run
from models.checkpoints import CheckpointError
from models.pointer_run import HullResponse, SortResponse, TspResponse
from models.references import CellReference, InflectionLexicon
from models.seq2seq_run import (
    INFLECTION_MEANINGS,
    SERVED_CORPUS,
    TRANSLATION_MEANINGS,
    UNSEEN_WORDS_NAMED,
    InflectionReference,
    ServedCorpus,
    ServedSeq2Seq,
    inflection_reference,
    translation_reference,
    unseen_lemma_line,
    unseen_words_line,
)

# --- the pointer board -----------------------------------------------------------------------


def answer(task: str, n: int, **fields):
    """An answer as the board reads it (only the fields its sentences use)."""
    kind = {"hull": HullResponse, "tsp": TspResponse, "sort": SortResponse}[task]
    return kind.model_construct(task=task, n=n, **fields)


@pytest.mark.parametrize(
    ("task", "n", "trained", "line"),
    [
        (
            "hull",
            4,
            (5, 50),
            "Beyond training: the model learned on 5–50 points; this board has 4.",
        ),
        ("hull", 5, (5, 50), None),  # the smallest trained size is inside
        ("hull", 30, (5, 50), None),
        ("hull", 50, (5, 50), None),  # and so is the largest
        (
            "hull",
            51,
            (5, 50),
            "Beyond training: the model learned on 5–50 points; this board has 51.",
        ),
        (
            "tsp",
            21,
            (5, 20),
            "Beyond training: the model learned on 5–20 cities; this board has 21.",
        ),
        ("tsp", 4, (5, 20), "Beyond training: the model learned on 5–20 cities; this board has 4."),
        (
            "sort",
            11,
            (10, 10),
            "Beyond training: the model learned on 10 values; this board has 11.",
        ),
        ("sort", 9, (10, 10), "Beyond training: the model learned on 10 values; this board has 9."),
        ("sort", 10, (10, 10), None),
    ],
)
def test_the_beyond_training_line_says_when_n_is_outside_the_trained_sizes(
    task: str, n: int, trained: tuple[int, int], line: str | None
) -> None:
    assert beyond_training(answer(task, n), trained) == line


def test_without_an_answer_or_trained_sizes_there_is_no_beyond_line() -> None:
    assert beyond_training(None, (5, 50)) is None
    assert beyond_training(answer("hull", 100), None) is None


@pytest.mark.parametrize(
    ("gap", "words"),
    [
        (-0.0123, ", -1.23% against the reference"),  # shorter than the reference
        (-1e-9, ", 0.00% against the reference"),  # a tie up to rounding, never "-0.00%"
        (0.0, ", 0.00% against the reference"),
        (1e-9, ", 0.00% against the reference"),
        (0.0456, ", +4.56% against the reference"),
        (None, ""),
    ],
)
def test_the_tour_headline_signs_its_gap_to_the_reference(gap: float | None, words: str) -> None:
    line = headline(answer("tsp", 10, length=2.5, gap=gap))
    assert line == f"The model's tour has length 2.5000{words}."


def test_a_gap_is_a_percentage_with_two_decimals_and_its_sign_only_when_asked() -> None:
    assert percent_text(0.0456) == "4.56%"
    assert percent_text(-0.0456) == "-4.56%"
    assert percent_text(0.0456, signed=True) == "+4.56%"
    assert percent_text(-0.0456, signed=True) == "-4.56%"
    assert percent_text(-0.00004, signed=True) == "0.00%"


@pytest.mark.parametrize(
    ("fields", "line"),
    [
        (
            {"correct": True, "valid": True, "gap": 0.0, "order": [0, 1, 2], "area": 0.25},
            "The model found the exact hull: 3 vertices, area 0.2500.",
        ),
        (
            {"correct": False, "valid": True, "gap": 0.125, "order": [0, 1, 2], "area": 0.2},
            "The model's polygon is simple but not the hull: it covers 87.5% of the hull's area.",
        ),
        (
            {"correct": False, "valid": False, "gap": None, "order": [0, 2, 1, 3], "area": 0.0},
            "The model's output (4 vertices) is not a simple polygon.",
        ),
    ],
)
def test_the_hull_headline_tells_exact_short_and_invalid_apart(fields: dict, line: str) -> None:
    assert headline(answer("hull", 5, **fields)) == line


@pytest.mark.parametrize(
    ("correct", "gap", "line"),
    [
        (True, 0.0, "The model put all 8 values in ascending order."),
        (False, 0.25, "2 of the 8 output positions hold the wrong value."),
        (False, 1.0, "8 of the 8 output positions hold the wrong value."),
    ],
)
def test_the_sorting_headline_counts_the_wrong_positions(
    correct: bool, gap: float, line: str
) -> None:
    assert headline(answer("sort", 8, correct=correct, gap=gap)) == line


# --- seq2seq: what lies outside the training data --------------------------------------------

TRAINING_SOURCES = ["Open the file", "Save the file as", "Close all windows"]  # 9 words


def corpus(train: list[tuple[str, str]] | None = None, **splits) -> ServedCorpus:
    pairs = {"train": [list(p) for p in (train or [(s, s) for s in TRAINING_SOURCES])]}
    pairs |= {name: [list(p) for p in found] for name, found in splits.items()}
    return ServedCorpus(
        {
            "format": references.FORMATS["translation"],
            "version": references.VERSION,
            "corpus_sha256": "0" * 64,
            "pairs": pairs,
        }
    )


def served(corpus_version: str | None = SERVED_CORPUS, training_set: str | None = "high"):
    return ServedSeq2Seq(
        name="model",
        task="translation",
        sha256="",
        attn_alpha=1.5,
        out_alpha=1.5,
        runner=None,  # type: ignore[arg-type]  # the notes never decode
        training_set=training_set,
        corpus=corpus_version,
    )


def loads(reference: object):
    def load(name: str) -> object:
        if reference is None:
            raise CheckpointError(f"{name} is not loaded")
        return reference

    return load


WORDS = "qa qb qc qd qe qf qg qh".split()


@pytest.mark.parametrize(
    ("unseen", "named", "verb", "pronoun"),
    [
        (1, "“qa”", "occurs", "it"),
        (2, "“qa”, “qb”", "occur", "them"),
        (UNSEEN_WORDS_NAMED - 1, "“qa”, “qb”, “qc”, “qd”", "occur", "them"),
        (UNSEEN_WORDS_NAMED, "“qa”, “qb”, “qc”, “qd”, “qe”", "occur", "them"),
        (UNSEEN_WORDS_NAMED + 1, "“qa”, “qb”, “qc”, “qd”, “qe” and 1 more", "occur", "them"),
        (UNSEEN_WORDS_NAMED + 3, "“qa”, “qb”, “qc”, “qd”, “qe” and 3 more", "occur", "them"),
    ],
)
def test_the_unseen_words_note_names_five_counts_the_rest_and_agrees_in_number(
    unseen: int, named: str, verb: str, pronoun: str
) -> None:
    assert UNSEEN_WORDS_NAMED == 5
    text = "Open " + " ".join(WORDS[:unseen]) + " the FILE."  # seen words, in any case
    note = unseen_words_line(loads(corpus()), served(), text)
    assert note == (
        f"Beyond training: {named} {verb} in none of the 8 words of the sentences the model "
        f"trained on, so it may change or drop {pronoun}."
    )


def test_the_unseen_words_note_counts_the_training_words_with_separators() -> None:
    train = [(" ".join(f"w{i}-{j}" for j in range(100)), "x") for i in range(12)]  # 1,200
    note = unseen_words_line(loads(corpus(train)), served(), "w0-0 new")
    assert note is not None and "“new” occurs in none of the 1,200 words" in note


def test_a_word_repeated_is_named_once_and_a_seen_sentence_gets_no_note() -> None:
    note = unseen_words_line(loads(corpus()), served(), "qa qa Qb qa")
    assert note is not None and note.startswith("Beyond training: “qa”, “Qb” occur in none")
    assert unseen_words_line(loads(corpus()), served(), "Save the file as") is None


def test_no_unseen_words_note_without_the_corpus_or_for_a_model_of_another_corpus() -> None:
    assert unseen_words_line(loads(None), served(), "qa") is None
    assert unseen_words_line(loads(corpus()), served("v1"), "qa") is None
    assert unseen_words_line(loads(corpus()), served(None), "qa") is None  # before v2: v1


@pytest.mark.parametrize(
    ("split", "line"),
    [
        (
            "unseen",
            "Beyond training: “blorft” is not in our en lexicon, so the model never saw it; "
            "the answer applies what it learned from other words.",
        ),
        ("train", None),
        ("dev", None),
        ("test", None),
    ],
)
def test_the_unseen_lemma_note_is_only_for_a_lemma_the_lexicon_lacks(
    split: str, line: str | None
) -> None:
    reference = InflectionReference(
        forms=None, split=split, correct=None, seen_in_training=False, meaning=""
    )
    assert unseen_lemma_line(reference, "blorft", "en") == line
    assert unseen_lemma_line(None, "blorft", "en") is None


class OneCellLexicon(InflectionLexicon):
    """A lexicon that answers every lookup with one cell, and records some training sets."""

    def __init__(self, cell: CellReference, training_sets: list[str]) -> None:
        self.cell, self.training_sets = cell, training_sets

    def lookup(self, language: str, lemma: str, features: str) -> CellReference:
        return self.cell


class Request:
    language, features = "en", "V;PST"


@pytest.mark.parametrize(
    ("split", "cell_sets", "recorded", "seen"),
    [
        ("train", {"high"}, ["high", "low"], True),  # this very cell was a training example
        ("train", {"low"}, ["high", "low"], False),  # the split, not this model's sample
        ("train", {"high"}, ["low"], None),  # the file does not record this model's set
        ("dev", frozenset(), ["high"], False),
        ("test", frozenset(), ["high"], False),
    ],
)
def test_the_inflection_verdict_says_whether_this_model_saw_the_cell(
    split: str, cell_sets: set[str], recorded: list[str], seen: bool | None
) -> None:
    cell = CellReference(split, ("walked",), frozenset(cell_sets))
    lexicon = OneCellLexicon(cell, recorded)
    for best, correct in (("walked", True), ("walkt", False)):
        found = inflection_reference(loads(lexicon), served(), Request(), "walk", best)
        assert found is not None
        assert (found.split, found.seen_in_training, found.correct) == (split, seen, correct)
        assert found.meaning == INFLECTION_MEANINGS[(split, seen)]
    assert INFLECTION_MEANINGS[("train", True)].startswith("seen in training")
    assert "not in the model's training sample" in INFLECTION_MEANINGS[("train", False)]
    assert "does not record" in INFLECTION_MEANINGS[("train", None)]


def test_an_inflection_verdict_without_forms_judges_nothing() -> None:
    for split in ("unseen", "train"):
        lexicon = OneCellLexicon(CellReference(split, None, frozenset()), ["high"])
        found = inflection_reference(loads(lexicon), served(), Request(), "blorft", "x")
        assert found is not None and (found.forms, found.correct) == (None, None)
        assert found.meaning == INFLECTION_MEANINGS[(split, False)]
    assert inflection_reference(loads(None), served(), Request(), "walk", "walked") is None


@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_the_translation_verdict_tells_the_split_and_another_corpus_apart(split: str) -> None:
    reference = corpus(**({} if split == "train" else {split: [("Quit now", "Jetzt beenden")]}))
    text = "Open the file" if split == "train" else "Quit now"
    expected = "Open the file" if split == "train" else "Jetzt beenden"
    found = translation_reference(loads(reference), served(), text, expected)
    assert found is not None
    assert (found.split, found.correct, found.meaning) == (
        split,
        True,
        TRANSLATION_MEANINGS[split],
    )
    wrong = translation_reference(loads(reference), served(), text, expected + " bitte")
    assert wrong is not None and wrong.correct is False
    # the same sentence for a model of corpus v1: it never saw it, whatever the split here
    other = translation_reference(loads(reference), served("v1"), text, expected)
    assert other is not None and other.split == "unseen"
    assert other.meaning == TRANSLATION_MEANINGS["unseen"]
    assert f"from corpus {SERVED_CORPUS}" in other.meaning
    assert translation_reference(loads(reference), served(), "Never seen", "x") is None


def test_the_split_lines_name_seen_and_held_out_the_right_way_round() -> None:
    assert TRANSLATION_MEANINGS["train"].startswith("seen in training")
    for split in ("dev", "test"):
        assert TRANSLATION_MEANINGS[split].startswith("held out")
        assert INFLECTION_MEANINGS[(split, False)].startswith("held out")
    assert "the paper's test condition" in INFLECTION_MEANINGS[("test", False)]
    assert "BLEU table" in TRANSLATION_MEANINGS["test"]
    assert seq2seq_run.INFLECTION_MEANINGS[("unseen", False)].startswith("not in our lexicon")
