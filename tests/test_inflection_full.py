"""The full inflection setting: the capped, frequency-weighted training set, the sets of training
cells a model must give back, and the evaluator's reproduction metric on a tiny model."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterator

import pytest
import torch

from models import evaluate_seq2seq as ev
from models.checkpoints import load_model, read_manifest
from models.seq2seq import Config, Seq2Seq, pad_batch
from models.seq2seq_run import SERVED
from models.tasks import inflection, inflection_recipe
from models.tasks.inflection import InflectionExample
from models.tasks.inflection_serving import Inflector
from models.tasks.inflection_vocab import InflectionVocab


def cell(language: str, lemma: str, features: str, *forms: str) -> InflectionExample:
    return InflectionExample(language, lemma, features, tuple(sorted(forms)))


@pytest.fixture(scope="module")
def english_vocab() -> InflectionVocab:
    return InflectionVocab.from_examples(inflection.build_splits(("en",))["high"])


def test_weighted_sample_is_deterministic_and_keeps_input_order() -> None:
    examples = [cell("en", f"word{i}", "N;PL", f"word{i}s") for i in range(50)]
    first = inflection.weighted_sample(random.Random("seed"), examples, 10)
    again = inflection.weighted_sample(random.Random("seed"), examples, 10)
    other = inflection.weighted_sample(random.Random("other"), examples, 10)
    assert first == again and first != other
    assert len(first) == len(set(first)) == 10  # without replacement
    assert first == sorted(first, key=examples.index)
    assert inflection.weighted_sample(random.Random("seed"), examples, 80) == examples


def test_weighted_sample_prefers_frequent_lemmas() -> None:
    """ "house" (Zipf about 5.5) against made-up words wordfreq has never seen (weight 1)."""
    assert inflection.lemma_weight("en", "house") > 30 * inflection.lemma_weight("en", "qzxv")
    examples = [cell("en", "house", "N;PL", "houses")]
    examples += [cell("en", f"qzx{chr(97 + i)}", "N;PL", "x") for i in range(20)]
    kept = Counter(
        "house" in {e.lemma for e in inflection.weighted_sample(random.Random(seed), examples, 3)}
        for seed in range(200)
    )
    # Unweighted, a given cell would be among 3 of 21 in about 14% of the draws.
    assert kept[True] > 180


def test_full_set_takes_every_training_cell_under_the_cap(english_vocab) -> None:
    full, available = inflection.build_full(english_vocab, ("en",), cap=10**6)
    assert len(full) == available["en"] > 20_000
    assert {inflection.lemma_split("en", e.lemma) for e in full} == {"train"}
    assert all(inflection.in_vocab(e, english_vocab) for e in full)
    capped, _ = inflection.build_full(english_vocab, ("en",), cap=2_000)
    assert len(capped) == 2_000 and set(capped) <= set(full)
    assert capped == inflection.build_full(english_vocab, ("en",), cap=2_000)[0]
    from wordfreq import zipf_frequency

    def mean_zipf(cells: list[InflectionExample]) -> float:
        return sum(zipf_frequency(e.lemma, "en") for e in cells) / len(cells)

    uniform = random.Random(0).sample(full, 2_000)
    assert abs(mean_zipf(uniform) - mean_zipf(full)) < 0.1
    assert mean_zipf(capped) > mean_zipf(uniform) + 0.5  # measured: 3.96 against 3.18


def test_in_vocab_rejects_unknown_characters_and_cells(english_vocab) -> None:
    assert inflection.in_vocab(cell("en", "go", "V;PST", "went"), english_vocab)
    assert not inflection.in_vocab(cell("en", "gø", "V;PST", "went"), english_vocab)
    assert not inflection.in_vocab(cell("en", "go", "V;PST", "wen7"), english_vocab)
    assert not inflection.in_vocab(cell("en", "go", "N;DAT;PL", "went"), english_vocab)


def test_regular_english_past_spellings() -> None:
    for lemma, form in [("walk", "walked"), ("bake", "baked"), ("cry", "cried"),
                        ("stop", "stopped"), ("panic", "panicked")]:  # fmt: skip
        assert form in inflection.regular_english_past(lemma)
    assert "played" in inflection.regular_english_past("play")
    assert "plaied" not in inflection.regular_english_past("play")
    assert "went" not in inflection.regular_english_past("go")


def test_irregular_sets_from_the_real_training_split(english_vocab) -> None:
    full, _ = inflection.build_full(english_vocab, ("en",), cap=10**6)
    sets = inflection.reproduction_sets(full)
    irregular = {(e.lemma, e.features): e.forms for e in sets["english-irregular-past"]}
    assert len(irregular) > 200
    assert irregular[("go", "V;PST")] == ("went",)
    assert irregular[("take", "V;V.PTCP;PST")] == ("taken",)
    assert ("walk", "V;PST") not in irregular
    assert ("dream", "V;PST") not in irregular  # dreamed is one of its forms
    assert len(sets["sample"]) == inflection.REPRODUCTION_SIZE
    assert set(sets["sample"]) <= set(full)
    assert sets["sample"] == inflection.reproduction_sets(list(full))["sample"]


def test_german_umlaut_plurals() -> None:
    cells = [
        cell("de", "Haus", "N;NOM;PL", "Häuser"),
        cell("de", "Haus", "N;DAT;SG", "Haus", "Hause"),
        cell("de", "Bogen", "N;NOM;PL", "Bogen", "Bögen"),
        cell("de", "Tür", "N;NOM;PL", "Türen"),  # the umlaut was already in the lemma
        cell("de", "Hund", "N;NOM;PL", "Hunde"),
    ]
    found = inflection.german_umlaut_plurals(cells)
    assert [e.lemma for e in found] == ["Haus", "Bogen"]


def test_german_umlaut_plurals_in_the_real_tables() -> None:
    german = [e for e in inflection.language_tables("de") if e.lemma in {"Haus", "Buch", "Maus"}]
    found = {(e.lemma, e.features) for e in inflection.german_umlaut_plurals(german)}
    assert ("Haus", "N;NOM;PL") in found and ("Buch", "N;DAT;PL") in found
    assert ("Haus", "N;GEN;SG") not in found


# --- the evaluator's metric on a tiny model ---------------------------------------------------

TAUGHT = [
    cell("en", "go", "V;PST", "went"),
    cell("en", "take", "V;PST", "took"),
    cell("en", "eat", "V;V.PTCP;PST", "eaten"),
    cell("de", "Haus", "N;NOM;PL", "Häuser"),
    cell("de", "Buch", "N;DAT;PL", "Büchern"),
]
NOT_TAUGHT = [cell("en", "walk", "V;PST", "walked")]


def tiny_inflector(train_steps: int) -> Inflector:
    vocab = InflectionVocab.from_examples(TAUGHT + NOT_TAUGHT)
    torch.manual_seed(0)
    model = Seq2Seq(Config(len(vocab.source), len(vocab.target), 16, 64, 0.0, 1.5, 1.5))
    pairs = inflection_recipe._training_pairs(TAUGHT, vocab)
    src, lengths = pad_batch([s for s, _ in pairs])
    tgt, _ = pad_batch([t for _, t in pairs])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(train_steps):
        loss = model(src, lengths, tgt)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return Inflector(model.eval(), vocab)


def test_reproduction_metric_sees_what_a_tiny_model_memorised() -> None:
    training = TAUGHT + NOT_TAUGHT
    untrained = ev.reproduction_records(tiny_inflector(0), training, TAUGHT)
    trained = ev.reproduction_records(tiny_inflector(150), training, TAUGHT)
    sets = Counter(r["set"] for r in trained)
    assert sets == {"sample": 6, "english-irregular-past": 3, "german-umlaut-plural": 2}
    assert sum(r["taught"] for r in trained) == 5 + 3 + 2  # walk is in the sample only
    before, after = (
        ev.reproduction_summary({"records": untrained}),
        ev.reproduction_summary({"records": trained}),
    )
    assert before["english-irregular-past"] == 0.0
    assert after["english-irregular-past"] == after["german-umlaut-plural"] == 1.0
    assert after["taught"] == 1.0
    assert after["sample"] >= 5 / 6  # walked was never taught; the five taught cells are right
    assert after["taught_share"] == pytest.approx(10 / 11)


def test_reproduction_summary_counts_per_set() -> None:
    records = [
        {"set": "sample", "correct": True, "taught": True},
        {"set": "sample", "correct": False, "taught": False},
        {"set": "english-irregular-past", "correct": False, "taught": True},
    ]
    summary = ev.reproduction_summary({"records": records})
    assert summary["sample"] == 0.5
    assert summary["english-irregular-past"] == 0.0
    assert summary["taught"] == 0.5 and summary["taught_share"] == pytest.approx(2 / 3)


def test_full_table_puts_full_models_first_beside_high(tmp_path, monkeypatch) -> None:
    def entry(hidden: int, full: bool) -> dict:
        data = {"setting": "full" if full else "high"}
        if full:
            data["full"] = {"cells": {"en": 3, "de": 4}, "cap_per_language": 4}
        return {"steps": 60_000, "config": {"hidden": hidden}, "data": data}

    manifest = {  # the widget's model at α = 1.5 (models.seq2seq_run.SERVED) and the table's
        SERVED["inflection"][1.5]: entry(256, full=True),
        "seq2seq-inflect-a1.5": entry(128, full=False),
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    monkeypatch.setattr(ev, "CHECKPOINT_DIR", tmp_path)

    def test_records(correct: list[bool], single: bool) -> dict:
        languages = ["en", "de"]
        return {
            "records": [
                {"language": languages[i % 2], "correct": c, "single": single, "exact": single}
                for i, c in enumerate(correct)
            ]
        }

    def copied(correct: bool) -> dict:
        sets = ["sample", "sample", "english-irregular-past", "german-umlaut-plural"]
        return {"records": [{"set": s, "correct": correct, "taught": True} for s in sets]}

    table = ev.full_table(
        {
            ("high", 1.5): test_records([True, False, True, False], single=False),
            ("full", 1.5): test_records([True, True, True, False], single=True),
        },
        {("high", 1.5): copied(False), ("full", 1.5): copied(True)},
    )
    assert table["rows"] == [
        ["full", "1.5", "75.0%", "100.0%", "100.0%", "100.0%", "100.0%", "100.0%", "100.0%"],
        ["high", "1.5", "50.0%", "0.0%", "0.0%", "0.0%", "0.0%", "0.0%", "0.0%"],
    ]
    assert "(2 cells)" in table["columns"][3] and "(1)" in table["columns"][4]
    assert "7 cells" in table["note"] and "hidden size 256" in table["note"]
    assert "model card" in table["note"]  # the rounds are told there, not in the table


REPLAY_SOURCES = ("seq2seq-inflect-a1", "seq2seq-inflect-a2")
REPLAY_CELLS = 1500  # the first cells of the medium set: each source gets some of them wrong


@pytest.fixture(scope="module")
def replay_setting(tmp_path_factory) -> Iterator[tuple]:
    """The medium recipe without replay (on the first REPLAY_CELLS cells of its set, so each
    source is decoded in seconds), a data directory the module's recipes share (a recipe that
    finds a source's decoding there reuses it, as a resumed run does), and the cells each
    source model decodes wrongly (greedy), found here apart from the recipe."""
    manifest = read_manifest()
    if not all(name in manifest for name in REPLAY_SOURCES):
        pytest.skip("the high models are not trained in this checkout")
    splits = inflection_recipe.load_splits()
    with pytest.MonkeyPatch.context() as patch:
        fewer = {**splits, "medium": splits["medium"][:REPLAY_CELLS]}
        patch.setattr(inflection_recipe, "load_splits", lambda: fewer)
        plain = inflection_recipe.InflectionRecipe("plain", 1.0, setting="medium", steps=10)
        assert len(plain.training) == REPLAY_CELLS
        wrong_by = {}
        for name in REPLAY_SOURCES:
            model, _ = load_model(name)
            with torch.no_grad():
                correct = inflection_recipe.greedy_correct(model, plain.vocab, plain.training)
            wrong_by[name] = {i for i, right in enumerate(correct) if not right}
        yield plain, tmp_path_factory.mktemp("replay-data"), wrong_by, manifest


def test_a_replay_recipe_repeats_exactly_the_cells_its_source_model_gets_wrong(
    replay_setting, monkeypatch
) -> None:
    """The replay phase's data: the training pairs, plus `replay_copies` more of each cell the
    named checkpoint decodes wrongly (greedy), recorded with the checkpoint's sha256. The
    decoding is kept on disk, so a second recipe (a resumed run, a later round) reuses it."""
    plain, data_dir, wrong_by, manifest = replay_setting
    source = REPLAY_SOURCES[0]
    monkeypatch.setattr(inflection_recipe, "DATA_DIR", data_dir)
    replayed = inflection_recipe.InflectionRecipe(
        "replayed", 1.0, setting="medium", steps=10, replay_from=(source,), replay_copies=3
    )
    wrong = wrong_by[source]
    assert 0 < len(wrong) < len(plain.training)
    extra = sum(len(plain.training[i].forms) for i in wrong) * 3
    assert len(replayed._pairs) == len(plain._pairs) + extra
    assert replayed._pairs[: len(plain._pairs)] == plain._pairs
    replay = replayed.data_description()["replay"]
    assert replay == {
        "from": source,
        "sha256": manifest[source]["sha256"],
        "cells_wrong_before": len(wrong),
        "copies": 3,
    }
    assert "replay" not in plain.data_description()

    def no_decoding(*args, **kwargs):
        raise AssertionError("the cached decoding was not used")

    monkeypatch.setattr(inflection_recipe, "greedy_correct", no_decoding)
    again = inflection_recipe.InflectionRecipe(
        "again", 1.0, setting="medium", steps=10, replay_from=(source,), replay_copies=3
    )
    assert again._pairs == replayed._pairs


def test_a_later_replay_round_repeats_what_any_of_its_sources_gets_wrong(
    replay_setting, monkeypatch
) -> None:
    """A second round repeats the cells that either the first model or the first round got
    wrong: repeating only the latest model's mistakes let it forget the earlier ones."""
    plain, data_dir, wrong_by, manifest = replay_setting
    monkeypatch.setattr(inflection_recipe, "DATA_DIR", data_dir)
    replayed = inflection_recipe.InflectionRecipe(
        "replayed", 1.0, setting="medium", steps=10, replay_from=REPLAY_SOURCES, replay_copies=2
    )
    first, second = (wrong_by[name] for name in REPLAY_SOURCES)
    union = first | second
    assert len(union) > max(len(first), len(second))  # each source adds cells of its own
    extra = sum(len(plain.training[i].forms) for i in union) * 2
    assert len(replayed._pairs) == len(plain._pairs) + extra
    replay = replayed.data_description()["replay"]
    assert replay["from"] == list(REPLAY_SOURCES) and replay["cells_wrong_before"] == len(union)
    assert replay["sha256"] == [manifest[name]["sha256"] for name in REPLAY_SOURCES]
