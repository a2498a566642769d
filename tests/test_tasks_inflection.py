"""Inflection data from the real packages: tables, lemma-disjoint splits, counts, ambiguity."""

from collections import defaultdict
from pathlib import Path

import pytest
import torch

from models.seq2seq import Config, Seq2Seq
from models.tasks import inflection, inflection_recipe, inflection_serving, inflection_vocab
from models.tasks.inflection import build_splits, language_tables
from models.tasks.inflection_serving import Inflector
from models.tasks.inflection_vocab import InflectionVocab, InvalidInflectionInput


@pytest.fixture(scope="module")
def tables() -> dict[str, dict[tuple[str, str], tuple[str, ...]]]:
    """(lemma, features) -> forms for the fast-to-read languages."""
    return {
        language: {(e.lemma, e.features): e.forms for e in language_tables(language)}
        for language in ("en", "es", "ro")
    }


@pytest.fixture(scope="module")
def splits() -> dict[str, list[inflection.InflectionExample]]:
    return build_splits(("en", "ro"))


def test_english_irregular_and_ambiguous_cells(tables) -> None:
    en = tables["en"]
    assert en[("swim", "V;PST")] == ("swam",)
    assert en[("swim", "V;V.PTCP;PST")] == ("swum",)
    assert en[("mouse", "N;PL")] == ("mice",)
    assert en[("good", "ADJ;CMPR")] == ("better",)
    assert en[("dream", "V;PST")] == ("dreamed", "dreamt")  # both kept: real ambiguity


def test_spanish_imperfect_subjunctive_keeps_both_forms(tables) -> None:
    assert tables["es"][("hablar", "V;SBJV;PST;1;SG")] == ("hablara", "hablase")
    assert tables["es"][("tener", "V;IND;PST;PFV;3;SG")] == ("tuvo",)


def test_german_noun_table_keeps_both_plurals_and_starred_variants() -> None:
    wanted = {"Bogen", "Raum", "Oberlandesgericht"}
    german = {(e.lemma, e.features): e.forms for e in language_tables("de") if e.lemma in wanted}
    assert german[("Bogen", "N;NOM;PL")] == ("Bogen", "Bögen")
    assert german[("Bogen", "N;GEN;SG")] == ("Bogens",)
    # "genitiv singular*" and "dativ singular*" hold the variant of the same cell
    assert german[("Raum", "N;GEN;SG")] == ("Raumes", "Raums")
    assert german[("Raum", "N;DAT;SG")] == ("Raum", "Raume")
    assert german[("Oberlandesgericht", "N;GEN;SG")] == (
        "Oberlandesgerichtes",
        "Oberlandesgerichts",
    )


def test_romanian_verbs_with_an_empty_stored_root_get_their_stems(tables) -> None:
    ro = tables["ro"]
    assert ro[("alcătui", "V;IND;PRS;1;SG")] == ("alcătuiesc",)  # was the bare ending "esc"
    assert ro[("alcătui", "V;IND;PST;IPFV;3;PL")] == ("alcătuiau",)
    assert ro[("purta", "V;IND;PRS;1;SG")] == ("port",)  # a stored root that fits is kept
    assert ro[("adora", "V;IND;PRS;1;SG")] == ("ador",)  # an empty ending can be a real form


def test_impersonal_verbs_have_no_bare_root_cells(tables) -> None:
    ro, es = tables["ro"], tables["es"]
    assert ("abeceda", "V;IND;PRS;1;SG") not in ro  # was "abeced"
    assert ro[("abeceda", "V;IND;PRS;3;SG")] == ("abecedează",)
    assert ("amanecer", "V;IND;PRS;1;SG") not in es
    assert es[("amanecer", "V;IND;PRS;3;SG")] == ("amanece",)
    # the 657 verbs whose forms were bare endings made 8% of Romanian cells start with another
    # letter than their lemma; suppletive verbs (fi -> sunt) leave a few
    strangers = [key for key, forms in ro.items() if any(f[0] != key[0][0] for f in forms)]
    assert len(strangers) < 0.005 * len(ro), strangers[:5]


def test_features_are_unimorph_style(tables) -> None:
    known = {
        "V", "N", "ADJ", "PST", "PRS", "FUT", "IND", "SBJV", "COND", "IMP", "POS", "IPFV", "PFV",
        "PRF", "V.PTCP", "V.CVB", "NFIN", "1", "2", "3", "SG", "PL", "NOM", "GEN", "DAT", "ACC",
        "CMPR", "SPRL", "MASC", "FEM",
    }  # fmt: skip
    for table in tables.values():
        for _, features in table:
            assert set(features.split(";")) <= known, features


def test_no_lemma_in_two_splits(splits) -> None:
    lemmas = defaultdict(set)
    for name, examples in splits.items():
        for e in examples:
            lemmas[name].add((e.language, e.lemma))
    assert not lemmas["high"] & lemmas["dev"]
    assert not lemmas["high"] & lemmas["test"]
    assert not lemmas["dev"] & lemmas["test"]
    for e in splits["test"]:
        assert inflection.lemma_split(e.language, e.lemma) == "test"


def test_counts_and_medium_is_a_subset_of_high(splits) -> None:
    counts = inflection.split_counts(splits)
    for language in ("en", "ro"):
        assert counts["high"][language] == inflection.HIGH_SIZE
        assert counts["medium"][language] == inflection.MEDIUM_SIZE
        assert counts["dev"][language] == inflection.DEV_SIZE
        assert counts["test"][language] == inflection.TEST_SIZE
    assert set(splits["medium"]) <= set(splits["high"])
    assert build_splits(("ro",))["test"] == [e for e in splits["test"] if e.language == "ro"]


def test_ambiguous_cells_are_kept_and_train_on_every_form(splits) -> None:
    ambiguous = [e for e in splits["high"] if len(e.forms) > 1]
    assert len(ambiguous) > 100
    vocab = InflectionVocab.from_examples(splits["high"])
    pairs = inflection_recipe._training_pairs(ambiguous[:10], vocab)
    assert len(pairs) == sum(len(e.forms) for e in ambiguous[:10])


def test_vocab_rejects_what_the_model_never_saw(splits, tmp_path: Path) -> None:
    vocab = InflectionVocab.from_examples(splits["high"])
    vocab.save(tmp_path)
    assert InflectionVocab.load(tmp_path) == vocab
    assert inflection_serving.inflection_options(tmp_path)["features"]["en"] == vocab.features["en"]
    with pytest.raises(InvalidInflectionInput, match="Unknown language 'xx'; allowed: en"):
        vocab.encode_source("xx", "V;PST", "swim")
    with pytest.raises(InvalidInflectionInput, match="not a cell of 'en'.*V;PST"):
        vocab.encode_source("en", "N;DAT;PL", "swim")
    with pytest.raises(InvalidInflectionInput, match="never saw: 7"):
        vocab.encode_source("en", "V;PST", "sw7m")
    ids = vocab.encode_source("en", "V;PST", "swim")
    assert [vocab.source[i] for i in ids] == ["<en>", "<V>", "<PST>", "s", "w", "i", "m"]


def test_inflector_trace(splits) -> None:
    vocab = InflectionVocab.from_examples(splits["high"])
    torch.manual_seed(0)
    config = Config(len(vocab.source), len(vocab.target), emb_dim=8, hidden=16)
    inflector = Inflector(Seq2Seq(config).eval(), vocab)
    trace = inflector.inflect("swim", "en", "V;PST", beam_width=3)
    assert trace.source_tokens == ["<en>", "<V>", "<PST>", "s", "w", "i", "m"]
    assert len(trace.steps) <= inflection_vocab.max_output_length("swim") + 1
    assert all(len(step.attention) == 7 for step in trace.steps)
