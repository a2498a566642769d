"""The sparse seq2seq API: /api/seq2seq/inflect, /translate, /options, their htmx fragments,
their errors, and the widgets' first render.

Most tests serve tiny randomly initialised checkpoints written to a temporary folder with the
real vocabularies (checkpoints/seq2seq-inflect-vocab.json and the SentencePiece models), so they
are fast and do not depend on how well the shipped models trained; what they check (fields,
shapes, limits, α handling, support sizes) holds for any weights. The last class runs against
the shipped checkpoints when they are present.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import lemminflect
import pytest
import torch
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markupsafe import escape

from app.main import ROOT, create_app
from app.seq2seq import service as seq2seq_service
from models import seq2seq_run
from models.checkpoints import read_manifest, save_checkpoint, update_manifest
from models.copy_translation import CopyConfig, CopySeq2Seq
from models.references import load_reference
from models.seq2seq import Config, Seq2Seq
from models.seq2seq_run import COPY_SERVED, REFERENCES, SERVED, SERVED_CORPUS
from models.tasks.inflection import language_tables, lemma_split
from models.tasks.inflection_vocab import VOCAB_FILE, InflectionVocab
from models.tasks.translation_tokenizers import load_tokenizers, tokenizer_path

CHECKPOINTS = ROOT / "checkpoints"
GOLDEN = Path(__file__).parent / "golden"
ALPHAS = (1.0, 1.5, 2.0)
SWIM = {"lemma": "swim", "language": "en", "features": "V;PST"}
SENTENCE = {"text": "Could not open the file."}


def copy_vocabularies(target: Path) -> None:
    """The shipped vocabularies and the reference files the served models are judged by (with
    their manifest entries)."""
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(CHECKPOINTS / VOCAB_FILE, target / VOCAB_FILE)
    for language in ("en", "de"):
        shutil.copy(
            tokenizer_path(language, corpus=SERVED_CORPUS),
            tokenizer_path(language, target, SERVED_CORPUS),
        )
    shipped = read_manifest(CHECKPOINTS)
    for name in REFERENCES.values():
        shutil.copy(CHECKPOINTS / shipped[name]["file"], target / shipped[name]["file"])
        update_manifest(target, name, shipped[name])


def write_tiny_checkpoints(target: Path) -> None:
    """Seeded random seq2seq models under the served names, one per task and α, with the
    shipped vocabularies."""
    copy_vocabularies(target)
    vocab = InflectionVocab.load(target)
    source_sp, target_sp = load_tokenizers(target, SERVED_CORPUS)
    sizes = {
        "inflection": (len(vocab.source), len(vocab.target)),
        "translation": (source_sp.get_piece_size(), target_sp.get_piece_size()),
    }
    for task, (src_vocab, tgt_vocab) in sizes.items():
        for alpha in ALPHAS:
            torch.manual_seed(0)
            config = Config(src_vocab, tgt_vocab, emb_dim=16, hidden=32, dropout=0.0)
            config.attn_alpha = config.out_alpha = alpha
            entry = {"family": "seq2seq", "task": task, "config": asdict(config)}
            if task == "inflection" and alpha == 1.5:
                entry["data"] = {"setting": "high"}  # says which cells it "saw" (see below)
            if task == "translation":
                entry["data"] = {"corpus": SERVED_CORPUS}
            save_checkpoint(Seq2Seq(config), SERVED[task][alpha], entry, target)
            if task == "translation" and alpha in COPY_SERVED:
                entry = {**entry, "family": "seq2seq-copy"}
                model = CopySeq2Seq(CopyConfig(**asdict(config)))
                save_checkpoint(model, COPY_SERVED[alpha], entry, target)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("seq2seq-tiny")
    write_tiny_checkpoints(target)
    return target


@pytest.fixture(scope="module")
def api(tiny_dir: Path) -> Iterator[TestClient]:
    with TestClient(create_app(checkpoint_dir=tiny_dir)) as client:
        yield client


def post(api: TestClient, path: str, body: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    response = api.post(f"/api/seq2seq/{path}", json=body, **kwargs)
    assert response.status_code == 200, response.text
    return response.json()


def mean_support(result: dict[str, Any]) -> float:
    return sum(step["support_size"] for step in result["steps"]) / len(result["steps"])


# --- responses -------------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "body"), [("inflect", SWIM), ("translate", SENTENCE)])
def test_response_is_a_consistent_trace(
    api: TestClient, tiny_dir: Path, path: str, body: dict
) -> None:
    result = post(api, path, {**body, "alpha": 1.5, "beam_width": 5})
    hypotheses = result["hypotheses"]
    assert 1 <= len(hypotheses) <= 5
    probabilities = [h["probability"] for h in hypotheses]
    assert probabilities == sorted(probabilities, reverse=True)
    assert all(0 <= p <= 1 for p in probabilities)
    assert math.isclose(result["covered_mass"], min(1.0, sum(probabilities)), abs_tol=1e-5)
    vocab = result["model"]["output_vocab_size"]
    for step in result["steps"]:
        attention = step["attention"]
        assert len(attention) == len(result["source_tokens"])
        assert math.isclose(sum(attention), 1, abs_tol=1e-4)
        assert step["attention_support"] == sum(a > 0 for a in attention)
        output = [entry["probability"] for entry in step["output"]]
        assert 1 <= len(output) <= 20 and all(p > 0 for p in output)
        assert output == sorted(output, reverse=True)
        assert len(output) <= step["support_size"] <= vocab
    # one step per emitted token of the best hypothesis, the end-of-sequence token included
    best = hypotheses[0]["tokens"]
    assert len(result["steps"]) in (len(best), len(best) + 1)
    assert [step["token"] for step in result["steps"]][: len(best)] == best
    model = result["model"]
    manifest = read_manifest(tiny_dir)
    assert model["sha256"] == manifest[model["name"]]["sha256"]
    assert result["server_ms"] > 0


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize(
    ("path", "body", "task"),
    [("inflect", SWIM, "inflection"), ("translate", SENTENCE, "translation")],
)
def test_alpha_picks_the_model_trained_with_it(
    api: TestClient, alpha: float, path: str, body: dict, task: str
) -> None:
    model = post(api, path, {**body, "alpha": alpha})["model"]
    assert model["name"] == SERVED[task][alpha]
    assert model["attention_alpha"] == model["output_alpha"] == alpha
    assert model["trained_attention_alpha"] == model["trained_output_alpha"] == alpha
    assert model["inference_alpha"] is None and model["note"] is None


@pytest.mark.parametrize(("path", "body"), [("inflect", SWIM), ("translate", SENTENCE)])
def test_output_support_is_full_under_softmax_and_shrinks_under_sparsemax(
    api: TestClient, path: str, body: dict
) -> None:
    softmax = post(api, path, {**body, "alpha": 1})
    sparsemax = post(api, path, {**body, "alpha": 2})
    vocab = softmax["model"]["output_vocab_size"]
    assert all(step["support_size"] == vocab for step in softmax["steps"])
    assert all(
        step["attention_support"] == len(softmax["source_tokens"]) for step in softmax["steps"]
    )
    assert mean_support(sparsemax) < vocab


def test_softmax_weights_too_small_to_print_are_still_nonzero(tmp_path: Path) -> None:
    """Exact zeros are what the figures single out, so a tiny softmax weight must not round to 0.
    Scaled-up scores make softmax put nearly all its mass on one entry."""
    copy_vocabularies(tmp_path)
    vocab = InflectionVocab.load(tmp_path)
    torch.manual_seed(0)
    config = Config(len(vocab.source), len(vocab.target), emb_dim=16, hidden=32, dropout=0.0)
    config.attn_alpha = config.out_alpha = 1.0
    model = Seq2Seq(config)
    with torch.no_grad():
        model.attn_score.weight.mul_(400)
        model.generator.weight.mul_(400)
    entry = {"family": "seq2seq", "task": "inflection", "config": asdict(config)}
    save_checkpoint(model, SERVED["inflection"][1.0], entry, tmp_path)
    with TestClient(create_app(checkpoint_dir=tmp_path)) as client:
        result = post(client, "inflect", {**SWIM, "alpha": 1})
    attention = [a for step in result["steps"] for a in step["attention"]]
    output = [e["probability"] for step in result["steps"] for e in step["output"]]
    assert min(attention) < 1e-6 and min(output) < 1e-6  # the case that used to print as 0
    assert min(attention) > 0 and min(output) > 0


def test_inference_alpha_redecodes_the_chosen_model_and_says_so(api: TestClient) -> None:
    result = post(api, "inflect", {**SWIM, "alpha": 2, "inference_alpha": 1})
    model = result["model"]
    assert model["name"] == SERVED["inflection"][2.0]
    assert (model["attention_alpha"], model["output_alpha"]) == (1, 1)
    assert (model["trained_attention_alpha"], model["trained_output_alpha"]) == (2, 2)
    assert model["inference_alpha"] == 1
    assert "trained with α = 2" in model["note"]
    # softmax really was applied: every target type keeps nonzero probability
    assert all(step["support_size"] == model["output_vocab_size"] for step in result["steps"])
    same = post(api, "inflect", {**SWIM, "alpha": 1.5, "inference_alpha": 1.5})["model"]
    assert same["inference_alpha"] == 1.5 and same["note"] is None


def test_inference_alpha_moves_continuously(api: TestClient) -> None:
    supports = [
        mean_support(post(api, "translate", {**SENTENCE, "alpha": 1.5, "inference_alpha": a}))
        for a in (1.0, 1.3, 2.0)
    ]
    assert supports[0] > supports[1] > supports[2]


@pytest.mark.parametrize("width", [1, 3, 16])
def test_beam_width_bounds_the_n_best(api: TestClient, width: int) -> None:
    hypotheses = post(api, "inflect", {**SWIM, "beam_width": width})["hypotheses"]
    assert 1 <= len(hypotheses) <= width
    if width == 1:
        assert len(hypotheses) == 1


def test_lemma_and_sentence_whitespace_is_normalised(api: TestClient) -> None:
    padded = post(api, "inflect", {**SWIM, "lemma": "  swim "})
    assert padded["source_tokens"][-4:] == ["s", "w", "i", "m"]
    spaced = post(api, "translate", {"text": "  Could   not open\tthe file. "})
    assert spaced["source_tokens"] == post(api, "translate", SENTENCE)["source_tokens"]


# --- errors a reader can cause -----------------------------------------------------------------

INFLECT_ERRORS = [
    ({**SWIM, "lemma": ""}, "1-40 characters; it has 0"),
    ({**SWIM, "lemma": "a" * 41}, "1-40 characters; it has 41"),
    ({**SWIM, "lemma": "to swim"}, "one word"),
    ({**SWIM, "language": "xx"}, "Unknown language 'xx'; allowed: en, de, fr, es, it, pt, ro"),
    ({**SWIM, "features": "N;FOO"}, "allowed: ADJ;CMPR, ADJ;SPRL, N;PL"),
    ({**SWIM, "language": "de"}, "are not a cell of 'de'"),
    ({**SWIM, "lemma": "sw☃m"}, "never saw: ☃; allowed: abcdefghijklmnopqrstuvwxyz"),
    ({**SWIM, "alpha": 1.3}, "no inflection model trained with α = 1.3; pick one of 1, 1.5, 2"),
    ({**SWIM, "inference_alpha": 0.5}, "`inference_alpha` must be at least 1"),
    ({**SWIM, "inference_alpha": 2.5}, "`inference_alpha` must be at most 2"),
    ({**SWIM, "beam_width": 0}, "`beam_width` must be at least 1"),
    ({**SWIM, "beam_width": 17}, "`beam_width` must be at most 16"),
    ({**SWIM, "beam_width": "five"}, "beam_width"),
    ({"language": "en", "features": "V;PST"}, "needs a `lemma`"),
    ({**SWIM, "model": "big"}, "`model` is not a field"),
]

TRANSLATE_ERRORS = [
    ({"text": "   "}, "1-30 words and at most 200 characters; it has 0 words"),
    ({"text": " ".join(["word"] * 31)}, "it has 31 words"),
    ({"text": " ".join(["abcdefghij"] * 19)}, "it has 19 words and 208 characters"),
    ({"text": "Open the ☃ file"}, "never saw: ☃"),
    ({"text": "\u200b\ufeff"}, "nothing the model can read"),
    ({**SENTENCE, "alpha": 3}, "no translation model trained with α = 3; pick one of 1, 1.5, 2"),
    ({**SENTENCE, "beam_width": 99}, "`beam_width` must be at most 16"),
    ({}, "needs a `text`"),
]


@pytest.mark.parametrize(("body", "expected"), INFLECT_ERRORS)
def test_inflect_errors_are_422_sentences(api: TestClient, body: dict, expected: str) -> None:
    response = api.post("/api/seq2seq/inflect", json=body)
    assert response.status_code == 422, response.text
    assert expected in response.json()["detail"]


@pytest.mark.parametrize(("body", "expected"), TRANSLATE_ERRORS)
def test_translate_errors_are_422_sentences(api: TestClient, body: dict, expected: str) -> None:
    response = api.post("/api/seq2seq/translate", json=body)
    assert response.status_code == 422, response.text
    assert expected in response.json()["detail"]


@pytest.mark.parametrize("path", ["inflect", "translate"])
def test_a_body_that_is_not_json_is_a_422(api: TestClient, path: str) -> None:
    response = api.post(
        f"/api/seq2seq/{path}", content=b"lemma=swim", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422
    assert isinstance(response.json()["detail"], str)


def test_errors_are_json_sentences_for_htmx_too(api: TestClient) -> None:
    response = api.post(
        "/api/seq2seq/inflect", json={**SWIM, "language": "xx"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 422
    assert response.json()["detail"].startswith("Unknown language")


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lemma=st.text(max_size=45),
    language=st.sampled_from(["en", "de", "es", "EN", ""]),
    features=st.sampled_from(["V;PST", "N;NOM;PL", "V;SBJV;PST;1;SG", ";", "V;PST;"]),
    beam=st.integers(-2, 20),
)
def test_any_inflect_request_is_answered_or_explained(
    api: TestClient, lemma: str, language: str, features: str, beam: int
) -> None:
    body = {"lemma": lemma, "language": language, "features": features, "beam_width": beam}
    response = api.post("/api/seq2seq/inflect", json=body)
    assert response.status_code in (200, 422), response.text
    if response.status_code == 422:
        assert isinstance(response.json()["detail"], str)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(max_size=220))
def test_any_sentence_is_answered_or_explained(api: TestClient, text: str) -> None:
    response = api.post("/api/seq2seq/translate", json={"text": text, "beam_width": 2})
    assert response.status_code in (200, 422), response.text


@pytest.fixture
def empty_dir(tmp_path: Path) -> Path:
    """The vocabularies but no trained model."""
    copy_vocabularies(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("path", "body", "name"),
    [
        ("inflect", SWIM, SERVED["inflection"][1.5]),
        ("translate", SENTENCE, SERVED["translation"][1.5]),
    ],
)
def test_a_missing_model_is_a_503_that_says_how_to_train_it(
    empty_dir: Path, path: str, body: dict, name: str
) -> None:
    with TestClient(create_app(checkpoint_dir=empty_dir)) as client:
        response = client.post(f"/api/seq2seq/{path}", json=body)
        assert response.status_code == 503
        detail = response.json()["detail"]
        assert name in detail and f"python -m models.train {name}" in detail
        options = client.get("/api/seq2seq/options").json()
        assert not any(m["available"] for m in options["inflection"]["models"])
        page = client.get("/papers/sparse-seq2seq")
        assert page.status_code == 200
        for widget in ("seq2seq-inflect", "seq2seq-translate"):
            assert f'data-widget="{widget}"' in page.text  # the error box in its place
        assert "” is unavailable: " in page.text  # ModelUnavailable.sentence


def test_the_widget_starts_from_a_trained_alpha_while_others_are_missing(
    tiny_dir: Path, tmp_path: Path
) -> None:
    partial = tmp_path / "partial"
    shutil.copytree(tiny_dir, partial)
    manifest = read_manifest(partial)
    for name in (SERVED["inflection"][1.5], SERVED["inflection"][2.0]):
        del manifest[name]
    (partial / "manifest.json").write_text(json.dumps(manifest))
    with TestClient(create_app(checkpoint_dir=partial)) as client:
        html = client.get("/papers/sparse-seq2seq").text
    start = html.index('id="seq2seq-inflect"')
    block = html[start : html.index("</figure>", start)]
    assert 'data-alpha="1.0"' in block and SERVED["inflection"][1.0] in block
    assert block.count('class="s2s-stop-missing"') == 2


def test_a_corrupt_checkpoint_is_a_503(tiny_dir: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(tiny_dir, broken)
    weights = broken / f"{SERVED['inflection'][2.0]}.safetensors"
    weights.write_bytes(weights.read_bytes()[:-16] + bytes(16))
    with TestClient(create_app(checkpoint_dir=broken)) as client:
        response = client.post("/api/seq2seq/inflect", json={**SWIM, "alpha": 2})
        assert response.status_code == 503
        assert "does not match its manifest entry" in response.json()["detail"]
        assert client.post("/api/seq2seq/inflect", json={**SWIM, "alpha": 1}).status_code == 200
        models = client.get("/api/seq2seq/options").json()["inflection"]["models"]
        assert [m["available"] for m in models] == [True, True, False]


# --- options and examples --------------------------------------------------------------------


def test_options_list_languages_cells_alphas_and_examples(api: TestClient) -> None:
    options = api.get("/api/seq2seq/options").json()
    inflection, translation = options["inflection"], options["translation"]
    assert inflection["languages"] == ["en", "de", "fr", "es", "it", "pt", "ro"]
    assert "V;PST" in inflection["features"]["en"] and "N;NOM;PL" in inflection["features"]["de"]
    assert inflection["alphas"] == translation["alphas"] == [1.0, 1.5, 2.0]
    assert all(m["available"] and m["reason"] is None for m in inflection["models"])
    for example in inflection["examples"]:
        assert example["features"] in inflection["features"][example["language"]]
        assert set(example["lemma"]) <= set(inflection["characters"][example["language"]])
        post(api, "inflect", {k: example[k] for k in ("lemma", "language", "features")})
    for example in translation["examples"]:
        post(api, "translate", {"text": example["text"]})
    assert options["beam_width"] == [1, 16] and options["inference_alpha"] == [1.0, 2.0]


def test_inflection_examples_are_in_the_splits_they_claim_and_show_their_case() -> None:
    examples = {e.lemma: e for e in seq2seq_service.INFLECTION_EXAMPLES}
    assert lemma_split("en", "go") == "train"
    assert all(
        lemma_split(e.language, e.lemma) == "test" for e in examples.values() if e.lemma != "go"
    )
    # irregular English verbs, and a cell with two valid forms (lemminflect is the English source)
    assert lemminflect.getAllInflections("go", upos="VERB")["VBD"] == ("went",)
    assert lemminflect.getAllInflections("fight", upos="VERB")["VBD"] == ("fought",)
    assert set(lemminflect.getAllInflections("vertex", upos="NOUN")["NNS"]) == {
        "vertexes",
        "vertices",
    }
    for lemma, forms in (
        ("Standplatz", ("Standplätze",)),
        ("anteponer", ("antepusiera", "antepusiese")),
    ):
        example = examples[lemma]
        cell = next(
            e
            for e in language_tables(example.language)
            if e.lemma == lemma and e.features == example.features
        )
        assert cell.forms == forms


def test_translation_examples_are_in_the_splits_they_claim() -> None:
    """In the served models' corpus (v2)."""
    found = load_reference(read_manifest(CHECKPOINTS)[REFERENCES["translation"]])
    splits = {}
    for example in seq2seq_service.TRANSLATION_EXAMPLES:
        reference = found.lookup(example.text)
        splits[example.label] = reference.split if reference else None
    assert splits == {
        "Cancel (a label)": "train",
        "permission denied": "train",
        "property name": "test",
        "window size": "test",
        "delete files (not in the corpus)": None,
        "online accounts (12 words)": "test",
    }
    assert any(len(e.text.split()) == 12 for e in seq2seq_service.TRANSLATION_EXAMPLES)


# --- the verdict: the reference beside the answer ----------------------------------------------

# (lemma, features, split, forms): one English lemma per split, a cell with two forms
LEXICON_CASES = [
    ("go", "V;PST", "train", ["went"]),
    ("walk", "V;PST", "dev", ["walked"]),
    ("fight", "V;PST", "test", ["fought"]),
    ("vertex", "N;PL", "test", ["vertexes", "vertices"]),
]


@pytest.mark.parametrize(("lemma", "features", "split", "forms"), LEXICON_CASES)
def test_inflect_answers_with_the_lexicon_forms_split_and_verdict(
    api: TestClient, lemma: str, features: str, split: str, forms: list[str]
) -> None:
    body = {"lemma": lemma, "language": "en", "features": features, "alpha": 1}
    result = post(api, "inflect", body)
    reference = result["reference"]
    assert (reference["split"], reference["forms"]) == (split, forms)
    assert reference["correct"] == (result["hypotheses"][0]["text"] in forms)
    # the α = 1 tiny model names no training set, so only held-out words are known unseen
    seen = None if split == "train" else False
    assert reference["seen_in_training"] is seen
    assert reference["meaning"] == seq2seq_run.INFLECTION_MEANINGS[(split, seen)]


@pytest.mark.parametrize(
    ("lemma", "features", "seen"),
    [("go", "V;PST", True), ("go", "V;V.PTCP;PST", False), ("fight", "V;PST", False)],
)
def test_seen_in_training_follows_the_models_own_training_set(
    api: TestClient, lemma: str, features: str, seen: bool
) -> None:
    """The α = 1.5 tiny model's manifest entry says it trained on the high set, which holds
    go's past but not its past participle (models/references.py records each set's cells)."""
    body = {"lemma": lemma, "language": "en", "features": features, "alpha": 1.5}
    reference = post(api, "inflect", body)["reference"]
    assert reference["seen_in_training"] is seen
    split = lemma_split("en", lemma)
    assert reference["meaning"] == seq2seq_run.INFLECTION_MEANINGS[(split, seen)]


def test_an_unknown_lemma_is_unseen_with_no_forms(api: TestClient) -> None:
    reference = post(api, "inflect", {**SWIM, "lemma": "blorft"})["reference"]
    assert reference == {
        "forms": None,
        "split": "unseen",
        "correct": None,
        "seen_in_training": False,
        "meaning": seq2seq_run.INFLECTION_MEANINGS[("unseen", False)],
    }
    lower_case = {"lemma": "haus", "language": "de", "features": "N;NOM;PL"}
    assert post(api, "inflect", lower_case)["reference"]["split"] == "unseen"  # German: Haus


def test_a_known_lemma_without_the_cell_has_a_split_but_no_forms(api: TestClient) -> None:
    reference = post(api, "inflect", {**SWIM, "lemma": "go", "features": "ADJ;CMPR"})["reference"]
    assert (reference["split"], reference["forms"], reference["correct"]) == ("train", None, None)


# (sentence as typed, split, corpus translation)
CORPUS_CASES = [
    ("Permission denied", "train", "Zugriff verweigert"),
    ("3 Stars", "dev", "3 Sterne"),
    ("The name of the property", "test", "Der Name der Eigenschaft"),
    ("  Permission   denied: ", "train", "Zugriff verweigert"),  # normalised as the corpus is
]


@pytest.mark.parametrize(("text", "split", "target"), CORPUS_CASES)
def test_translate_answers_with_the_corpus_translation_and_verdict(
    api: TestClient, text: str, split: str, target: str
) -> None:
    result = post(api, "translate", {"text": text})
    correct, typography = seq2seq_run.judge(result["hypotheses"][0]["text"], [target])
    assert result["reference"] == {
        "text": target,
        "split": split,
        "correct": correct,
        "typography": typography,
        "meaning": seq2seq_run.TRANSLATION_MEANINGS[split],
    }


def test_a_sentence_outside_the_corpus_has_no_reference(api: TestClient) -> None:
    assert post(api, "translate", {"text": "Delete the selected files"})["reference"] is None
    assert post(api, "translate", {"text": "Rename the selected window"})["reference"] is None


@pytest.mark.parametrize(
    ("hypothesis", "answers", "verdict"),
    [
        ("Speichern unter ...", ["Speichern unter …"], (True, "“…” where the model wrote “...”")),
        ("Speichern unter...", ["Speichern unter …"], (True, "“…” where the model wrote “...”")),
        ("Speichern unter ...", ["Speichern unter..."], (True, "spacing around an ellipsis")),
        ("Datei ’x’", ["Datei 'x'"], (True, "“'” where the model wrote “’”")),
        ("10\u00a0MB", ["10 MB"], (True, "a space where the model wrote a non-breaking space")),
        ("»Öffnen«", ["„Öffnen“"], (True, "Only the typography differs")),
        ("Der  Name ", ["Der Name"], (True, None)),  # spacing alone is no typography
        ("Speichern unter", ["Speichern unter …"], (False, None)),  # a missing ellipsis is not
        ("dreamt", ["dreamed", "dreamt"], (True, None)),
        ("Dreamt", ["dreamed", "dreamt"], (False, None)),
    ],
)
def test_the_verdict_sees_through_typography_and_says_so(
    hypothesis: str, answers: list[str], verdict: tuple[bool, str | None]
) -> None:
    correct, typography = seq2seq_run.judge(hypothesis, answers)
    assert correct is verdict[0]
    if verdict[1] is None:
        assert typography is None
    else:
        assert typography is not None and verdict[1] in typography, typography
        assert typography.startswith("Only the typography differs")


def test_a_lemma_is_lower_cased_with_a_note_when_the_alphabet_is_lower_case(
    api: TestClient,
) -> None:
    for typed in ("Go", "GO"):
        result = post(api, "inflect", {**SWIM, "lemma": typed})
        assert result["source_tokens"][-2:] == ["g", "o"]
        assert result["input_note"] == (
            f"Read “{typed}” as “go”: the en model learned lower-case words only."
        )
        assert result["reference"]["split"] == "train"  # the lexicon's "go"
    # German lemmas keep their capitals: its alphabet has them
    german = post(api, "inflect", {"lemma": "Standplatz", "language": "de", "features": "N;NOM;PL"})
    assert german["source_tokens"][-10:] == list("Standplatz") and german["input_note"] is None
    assert post(api, "inflect", {**SWIM, "lemma": "walk"})["input_note"] is None
    # a capital whose small letter the alphabet lacks too is refused as typed
    refused = api.post("/api/seq2seq/inflect", json={**SWIM, "lemma": "Ŵalk"})
    assert refused.status_code == 422
    assert refused.json()["detail"].startswith(
        "Lemma 'Ŵalk' has characters the 'en' model never saw: Ŵ;"
    )


def test_a_lemma_our_lexicon_lacks_gets_a_beyond_training_note(api: TestClient) -> None:
    blorft = post(api, "inflect", {**SWIM, "lemma": "blorft"})
    assert blorft["reference"]["split"] == "unseen"
    assert blorft["beyond_training"] == (
        "Beyond training: “blorft” is not in our en lexicon, so the model never saw it; "
        "the answer applies what it learned from other words."
    )
    assert post(api, "inflect", {**SWIM, "lemma": "walk"})["beyond_training"] is None


def test_words_no_training_sentence_has_get_a_beyond_training_note(api: TestClient) -> None:
    address = post(api, "translate", {"text": "Connection refused by server 192.168.0.1"})
    note = address["beyond_training"]
    assert note.startswith("Beyond training: “192.168.0.1” occurs in none of the ")
    assert note.endswith("so it may change or drop it.")
    for seen in ("Connection", "refused", "server"):
        assert seen not in note
    several = post(api, "translate", {"text": "Open qwzx.conf and blorfy it"})["beyond_training"]
    assert "“qwzx.conf”, “blorfy” occur in none" in several and "drop them" in several
    # case and the punctuation around a word do not make it new
    for text in ("Could not open the file.", "COULD NOT OPEN THE FILE!", "(Permission denied)"):
        assert post(api, "translate", {"text": text})["beyond_training"] is None, text


def test_the_notes_are_in_the_fragment(api: TestClient) -> None:
    body = {**SWIM, "lemma": "Blorft"}
    html = api.post("/api/seq2seq/inflect", json=body, headers={"HX-Request": "true"}).text
    assert "data-s2s-input-note>Read “Blorft” as “blorft”" in html
    assert "data-s2s-beyond>Beyond training: “blorft”" in html


def test_without_a_reference_file_the_answer_still_comes(tiny_dir: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    shutil.copytree(tiny_dir, bare)
    manifest = read_manifest(bare)
    for name in REFERENCES.values():
        (bare / manifest.pop(name)["file"]).unlink()
    (bare / "manifest.json").write_text(json.dumps(manifest))
    with TestClient(create_app(checkpoint_dir=bare)) as client:
        assert post(client, "inflect", SWIM)["reference"] is None
        html = client.post("/api/seq2seq/inflect", json=SWIM, headers={"HX-Request": "true"}).text
        assert "the lexicon file is not loaded" in html


def test_a_corrupt_reference_file_is_unavailable_not_trusted(
    tiny_dir: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "broken-reference"
    shutil.copytree(tiny_dir, broken)
    name = REFERENCES["inflection"]
    path = broken / read_manifest(broken)[name]["file"]
    path.write_bytes(path.read_bytes()[:-16] + bytes(16))
    with TestClient(create_app(checkpoint_dir=broken)) as client:
        assert post(client, "inflect", SWIM)["reference"] is None
        readiness = client.get("/readyz")
        assert readiness.status_code == 503
        assert "does not match its manifest entry" in readiness.json()["unavailable"][name]


def verdict_block(html: str) -> str:
    start = html.index("data-s2s-verdict")
    return html[start : html.index("</div>", start)]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("inflect", {**SWIM, "lemma": "go"}),
        ("inflect", {**SWIM, "lemma": "blorft"}),
        ("translate", {"text": "The name of the property"}),
        ("translate", SENTENCE),
    ],
)
def test_the_fragment_shows_the_same_verdict_as_the_json(
    api: TestClient, path: str, body: dict
) -> None:
    result = post(api, path, body)
    html = api.post(f"/api/seq2seq/{path}", json=body, headers={"HX-Request": "true"}).text
    block = verdict_block(html)
    reference = result["reference"]
    if reference is None:
        assert 'data-correct="none"' in block and "not in our corpus" in block
        return
    correct = reference["correct"]
    expected = "none" if correct is None else str(correct).lower()
    assert f'data-correct="{expected}"' in block
    assert f'data-split="{reference["split"]}"' in block
    assert escape(reference["meaning"]) in block
    if correct is not None:
        assert ("✓" in block) is correct and ("✗" in block) is not correct
    answers = reference["forms"] if path == "inflect" else [reference["text"]]
    for answer in answers or []:
        assert escape(answer) in block


def test_the_n_best_marks_every_answer_the_reference_accepts(api: TestClient) -> None:
    body = {"lemma": "vertex", "language": "en", "features": "N;PL", "beam_width": 16}
    result = post(api, "inflect", body)
    html = api.post("/api/seq2seq/inflect", json=body, headers={"HX-Request": "true"}).text
    nbest = html[html.index("s2s-nbest-list") : html.index("</ol>", html.index("s2s-nbest-list"))]
    valid = sum(h["text"] in result["reference"]["forms"] for h in result["hypotheses"])
    assert nbest.count('aria-label="right"') == valid
    assert nbest.count('aria-label="wrong"') == (not result["reference"]["correct"])


# --- htmx fragments and the page -----------------------------------------------------------


def test_htmx_gets_the_figure_fragment(api: TestClient) -> None:
    body = {"lemma": "Standplatz", "language": "de", "features": "N;NOM;PL", "alpha": 2}
    json_result = post(api, "inflect", body)
    response = api.post("/api/seq2seq/inflect", json=body, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    html = response.text
    assert 'data-alpha="2.0"' in html and SERVED["inflection"][2.0] in html
    assert html.count('class="s2s-step"') == len(json_result["steps"])
    cells = len(json_result["steps"]) * len(json_result["source_tokens"])
    assert html.count("</title></rect>") == cells  # one titled rect per heatmap cell
    zeros = sum(a == 0 for step in json_result["steps"] for a in step["attention"])
    assert html.count(": exactly 0</title></rect>") == zeros > 0
    badge = "exact search" if json_result["exact"] else "not exact"
    assert badge in html
    compact = api.post(
        "/api/seq2seq/inflect?compact=1", json=body, headers={"HX-Request": "true"}
    ).text
    assert "s2s-result-compact" in compact and 'class="s2s-step"' not in compact


def test_the_note_is_in_the_fragment(api: TestClient) -> None:
    html = api.post(
        "/api/seq2seq/translate",
        json={**SENTENCE, "alpha": 1.5, "inference_alpha": 1.9},
        headers={"HX-Request": "true"},
    ).text
    assert "Inference-time α = 1.9" in html and 'role="note"' in html


def test_the_page_renders_both_widgets_with_a_first_figure(api: TestClient) -> None:
    html = api.get("/papers/sparse-seq2seq").text
    assert "/static/js/seq2seq-widget.js" in html and "/static/css/seq2seq.css" in html
    for widget, endpoint in (("seq2seq-inflect", "inflect"), ("seq2seq-translate", "translate")):
        start = html.index(f'id="{widget}"')
        block = html[start : html.index("</figure>", start)]
        assert f'hx-get="/api/seq2seq/{endpoint}/figure"' in block
        assert f'action="/api/seq2seq/{endpoint}/figure"' in block  # the form works without JS
        assert "data-s2s-result" in block and "s2s-heatmap-svg" in block
        assert "inference-time α" in block and "Compare α = 1, 1.5, 2" in block
    assert 'value="go"' in html  # the default inflection example
    assert "The name of the property</textarea>" in html


def test_each_example_button_carries_its_answers_verdict(api: TestClient) -> None:
    html = api.get("/papers/sparse-seq2seq").text
    widgets = (
        ("seq2seq-inflect", "inflect", seq2seq_service.INFLECTION_EXAMPLES),
        ("seq2seq-translate", "translate", seq2seq_service.TRANSLATION_EXAMPLES),
    )
    for widget, path, examples in widgets:
        start = html.index(f'id="{widget}"')
        block = html[start : html.index("</figure>", start)]
        group = block[block.index('class="s2s-examples"') :].split("</button>")[:-1]
        buttons = [button for button in group if 'class="s2s-example"' in button]
        assert len(buttons) == len(examples)
        for button, example in zip(buttons, examples, strict=True):
            body = example.model_dump(include={"lemma", "language", "features", "text"})
            reference = post(api, path, {**body, "alpha": 1.5})["reference"]
            correct = None if reference is None else reference["correct"]
            assert ("s2s-mark-right" in button) is (correct is True), button
            assert ("s2s-mark-wrong" in button) is (correct is False), button


# --- the widgets' figure requests: the form, the query and the page address ---------------

WALK_FORM = {
    "lemma": "walk",
    "language": "en",
    "features": "V;PST",
    "beam_width": "3",
    "mode": "trained",
    "alpha": "2",
    "inference_alpha": "1.5",
    "base_alpha": "1.5",
}
PAGE = "/papers/sparse-seq2seq"


def htmx_get(api: TestClient, path: str, params: dict, trigger: str = "lemma") -> Any:
    headers = {
        "HX-Request": "true",
        "HX-Trigger-Name": trigger,
        "HX-Current-URL": f"http://testserver{PAGE}?other=1",
    }
    return api.get(f"/api/seq2seq/{path}/figure", params=params, headers=headers)


def widget_block(html: str, widget: str) -> str:
    start = html.index(f'id="{widget}"')
    block = html[start : html.index("</figure>", start)]
    block = re.sub(r"decoded in [\d.]+ ms", "decoded in … ms", block)  # the time it took
    return re.sub(r"s2s-[0-9a-f]{8}", "s2s-ID", block)  # each heatmap's own id


def test_the_figure_route_reads_the_figure_request_from_the_query(api: TestClient) -> None:
    answer = htmx_get(api, "inflect", WALK_FORM)
    assert answer.status_code == 200, answer.text
    assert 'data-alpha="2.0"' in answer.text and "data-s2s-single" in answer.text
    assert 'hx-swap-oob="innerHTML">α = 2 (sparsemax)' in answer.text
    assert 'id="seq2seq-inflect-inputs"' not in answer.text  # the inputs stay as typed
    assert answer.headers["HX-Replace-Url"] == (
        f"{PAGE}?other=1&inflect.lemma=walk&inflect.language=en&inflect.features=V;PST"
        "&inflect.beam_width=3&inflect.mode=trained&inflect.alpha=2#seq2seq-inflect"
    )
    compared = htmx_get(api, "inflect", {**WALK_FORM, "compare": "on"}).text
    assert compared.count('class="s2s-compare-column"') == 3
    assert (
        "inflect.compare=1"
        in htmx_get(api, "inflect", {**WALK_FORM, "compare": "on"}).headers["HX-Replace-Url"]
    )


def test_an_example_button_brings_its_inputs(api: TestClient) -> None:
    answer = htmx_get(api, "translate", {"text": "", "example": "1"}, trigger="example")
    assert answer.status_code == 200, answer.text
    assert "Cancel</textarea>" in answer.text and 'hx-swap-oob="true"' in answer.text
    assert "translate.text=Cancel" in answer.headers["HX-Replace-Url"]


def test_a_figure_request_is_priced_by_its_columns(api: TestClient) -> None:
    from app.seq2seq.requests import InflectFigure

    single = InflectFigure.model_validate(WALK_FORM)
    compared = InflectFigure.model_validate({**WALK_FORM, "compare": "on"})
    assert compared.cost() == 3 * single.cost() == 3 * single.columns()[0].cost()


def test_a_new_language_brings_its_cells_whatever_the_lemma(api: TestClient) -> None:
    """The language menu asks for its features menu alone: a lemma refused at that moment
    ("walk up") is not part of the request, so it cannot keep the old language's cells."""
    cells = api.get("/api/seq2seq/inflect/cells", params={"language": "de", "features": "V;PST"})
    assert cells.status_code == 200, cells.text
    options = api.get("/api/seq2seq/options").json()["inflection"]["features"]
    assert cells.json() == {"language": "de", "features": options["de"], "chosen": "N;ACC;PL"}
    cell = {"language": "es", "features": "V;COND;1;PL"}  # from French: Spanish has it too
    assert api.get("/api/seq2seq/inflect/cells", params=cell).json()["chosen"] == "V;COND;1;PL"
    html = api.get(
        "/api/seq2seq/inflect/cells",
        params={"language": "es", "features": "V;PST"},
        headers={"HX-Request": "true", "HX-Current-URL": f"http://testserver{PAGE}"},
    )
    assert html.status_code == 200 and "HX-Replace-Url" not in html.headers
    text = html.text.strip()
    assert text.startswith('<select id="seq2seq-inflect-features" name="features"')
    # it asks for the figure itself once it is in, with the cell it chose
    assert 'hx-get="/api/seq2seq/inflect/figure" hx-trigger="change, load"' in text
    assert '<option value="V;SBJV;PST;3;SG">3rd person singular subjunctive past' in text
    assert text.count("selected") == 1
    unknown = api.get("/api/seq2seq/inflect/cells", params={"language": "xx"})
    assert unknown.status_code == 422
    assert unknown.json()["detail"].startswith("Unknown language 'xx'; allowed: en, de, fr")


def test_the_controls_never_cut_or_block_what_is_typed(api: TestClient) -> None:
    """No `maxlength` (the server refuses, in words) and `novalidate` (the browser's own
    checks never stop a request); a refusal's line sits under the inputs it comes from."""
    html = api.get(PAGE).text
    for widget in ("seq2seq-inflect", "seq2seq-translate"):
        block = widget_block(html, widget)
        assert "maxlength" not in block
        assert re.search(r"<form [^>]*novalidate", block)
        inputs_end = block.index("</div>", block.index(f'id="{widget}-inputs"'))
        assert inputs_end < block.index("data-s2s-status") < block.index('class="s2s-examples"')
    long = htmx_get(api, "inflect", {**WALK_FORM, "lemma": "a" * 200})
    assert long.status_code == 422
    assert long.json()["detail"] == "The lemma must have 1-40 characters; it has 200."


def test_compare_mode_says_the_slider_is_off(api: TestClient) -> None:
    compared = htmx_get(api, "inflect", {**WALK_FORM, "compare": "on"}).text
    assert 'hx-swap-oob="innerHTML">α = 1, 1.5, 2 side by side' in compared
    inference = {**WALK_FORM, "compare": "on", "mode": "inference", "base_alpha": "2"}
    assert (
        "inference-time α = 1, 1.5, 2 side by side, applied to the model trained with α = 2"
        in htmx_get(api, "inflect", inference).text
    )
    block = widget_block(api.get(PAGE).text, "seq2seq-inflect")
    assert block.count("data-s2s-compare-note") == 2  # one per α panel; the stylesheet shows it


def test_a_bad_form_value_is_a_422_in_the_readers_words(api: TestClient) -> None:
    answer = htmx_get(api, "inflect", {**WALK_FORM, "beam_width": "50"})
    assert answer.status_code == 422
    assert answer.json()["detail"].startswith("The beam width must be at most 16")


def test_without_script_the_form_lands_on_its_page(api: TestClient) -> None:
    answer = api.get(
        "/api/seq2seq/inflect/figure",
        params={**WALK_FORM, "example": "0"},
        headers={"referer": f"http://testserver{PAGE}"},
        follow_redirects=False,
    )
    assert answer.status_code == 303
    location = answer.headers["location"]
    assert location.endswith("#seq2seq-inflect") and "inflect.lemma=go" in location
    assert "example" not in location
    assert 'value="go"' in widget_block(api.get(location).text, "seq2seq-inflect")


# A figure's take-away block links the address it was drawn at (tests/test_figure_export.py)
TAKE_AWAY = re.compile(r'<div class="take-away".*?</div>', re.S)


def test_an_address_written_before_the_figure_request_draws_the_same_figure(
    api: TestClient,
) -> None:
    state = "inflect.lemma=walk&inflect.language=en&inflect.features=V;PST&inflect.mode=inference"
    old = api.get(f"{PAGE}?{state}&inflect.beam=3&inflect.ia=1.8&inflect.base=1").text
    new = api.get(
        f"{PAGE}?{state}&inflect.beam_width=3&inflect.inference_alpha=1.8&inflect.base_alpha=1"
    ).text
    block = TAKE_AWAY.sub("", widget_block(old, "seq2seq-inflect"))
    assert block == TAKE_AWAY.sub("", widget_block(new, "seq2seq-inflect"))
    assert "inference-time α = 1.8, applied to the model trained with α = 1" in block
    assert 'value="3" inputmode' in block and "data-s2s-single" in block
    compare = api.get(f"{PAGE}?translate.text=Cancel&translate.compare=1").text
    assert widget_block(compare, "seq2seq-translate").count('class="s2s-compare-column"') == 3


def test_a_bad_address_says_why_and_keeps_what_was_typed(api: TestClient) -> None:
    html = api.get(f"{PAGE}?inflect.lemma=walk&inflect.beam=50&inflect.alpha=2").text
    block = widget_block(html, "seq2seq-inflect")
    assert "The beam width must be at most 16" in block and "data-s2s-single" not in block
    assert 'value="walk"' in block and 'value="50" inputmode' in block
    assert 'value="2"\n' in block or 'value="2" ' in block  # α kept


# --- golden contracts ------------------------------------------------------------------------


def skeleton(value: Any) -> Any:
    """The JSON's shape: field names and types, with list items merged (they must agree)."""
    if isinstance(value, dict):
        return {key: skeleton(item) for key, item in value.items()}
    if isinstance(value, list):
        shapes = [skeleton(item) for item in value]
        assert all(shape == shapes[0] for shape in shapes), shapes
        return shapes[:1]
    if value is None:
        return "null"
    return {bool: "bool", int: "int", float: "float", str: "str"}[type(value)]


GOLDEN_REQUESTS = {
    "seq2seq_inflect": ("post", "/api/seq2seq/inflect", {**SWIM, "alpha": 1.5, "beam_width": 5}),
    "seq2seq_translate": (
        "post",
        "/api/seq2seq/translate",
        {"text": "The name of the property", "alpha": 2, "inference_alpha": 1.7},
    ),
    "seq2seq_options": ("get", "/api/seq2seq/options", None),
}


@pytest.mark.parametrize("name", sorted(GOLDEN_REQUESTS))
def test_golden_contract(api: TestClient, name: str) -> None:
    """Field names and types are the contract; set UPDATE_GOLDEN=1 to rewrite after a deliberate
    change."""
    method, path, body = GOLDEN_REQUESTS[name]
    response = api.request(method, path, json=body)
    assert response.status_code == 200, response.text
    shape = skeleton(response.json())
    path_golden = GOLDEN / f"{name}.json"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        golden = {"request": {"method": method.upper(), "path": path, "body": body}, "shape": shape}
        path_golden.write_text(json.dumps(golden, ensure_ascii=False, indent=1) + "\n")
    assert json.loads(path_golden.read_text())["shape"] == shape


# --- the shipped checkpoints -----------------------------------------------------------------

SHIPPED = seq2seq_run.served_names()
shipped_present = all(name in read_manifest(CHECKPOINTS) for name in SHIPPED)


@pytest.mark.skipif(
    not shipped_present, reason="the shipped seq2seq checkpoints are not trained yet"
)
class TestShippedCheckpoints:
    @pytest.fixture(scope="class")
    def shipped(self) -> Iterator[TestClient]:
        with TestClient(create_app(checkpoint_dir=CHECKPOINTS)) as client:
            yield client

    def test_every_shipped_model_answers(self, shipped: TestClient) -> None:
        for alpha in ALPHAS:
            inflected = post(shipped, "inflect", {**SWIM, "alpha": alpha})
            assert inflected["hypotheses"][0]["text"]
            translated = post(shipped, "translate", {**SENTENCE, "alpha": alpha})
            assert translated["hypotheses"][0]["text"]

    def test_exact_search_means_the_n_best_hold_all_the_mass(self, shipped: TestClient) -> None:
        exact = 0
        for example in seq2seq_service.INFLECTION_EXAMPLES:
            body = {"lemma": example.lemma, "language": example.language}
            result = post(shipped, "inflect", {**body, "features": example.features})
            if result["exact"]:
                exact += 1
                assert math.isclose(result["covered_mass"], 1, abs_tol=1e-4)
        assert exact >= 1  # the widget's "exact search" badge has something to show

    def test_the_verdict_on_trained_models(self, shipped: TestClient) -> None:
        walk = post(shipped, "inflect", {**SWIM, "lemma": "walk"})
        assert walk["hypotheses"][0]["text"] == "walked" and walk["reference"]["correct"] is True
        fight = post(shipped, "inflect", {**SWIM, "lemma": "fight"})
        reference = fight["reference"]
        assert (reference["split"], reference["forms"]) == ("test", ["fought"])
        assert reference["correct"] is (fight["hypotheses"][0]["text"] == "fought")

    def test_each_translation_model_is_judged_against_the_served_corpus(
        self, shipped: TestClient, tmp_path: Path
    ) -> None:
        """Every α serves a big model of corpus v2 (one-word labels, more catalogs), judged by
        v2's translation; a server without the model of an α says so instead of answering with
        another one."""
        for alpha in ALPHAS:
            big = post(shipped, "translate", {"text": "Permission denied", "alpha": alpha})
            assert big["model"]["name"] == SERVED["translation"][alpha]
            assert big["reference"]["text"] == "Zugriff verweigert"
            label = post(shipped, "translate", {"text": "Cancel", "alpha": alpha})
            best = label["hypotheses"][0]["text"]
            assert label["reference"]["split"] == "train"
            assert label["reference"]["correct"] is (best == "Abbrechen")
            if alpha == 1.5:
                assert best == "Abbrechen"
        missing = SERVED["translation"][2.0]
        for path in CHECKPOINTS.iterdir():
            if path.is_file() and path.name not in ("manifest.json", f"{missing}.safetensors"):
                (tmp_path / path.name).symlink_to(path)
        manifest = read_manifest(CHECKPOINTS)
        (tmp_path / "manifest.json").write_text(json.dumps(manifest))
        with TestClient(create_app(checkpoint_dir=tmp_path)) as client:
            response = client.post("/api/seq2seq/translate", json={**SENTENCE, "alpha": 2})
            assert response.status_code == 503
            assert response.json()["detail"].startswith(f"The model “{missing}” is unavailable")
            assert (
                post(client, "translate", {**SENTENCE, "alpha": 1.5})["model"]["name"]
                == (SERVED["translation"][1.5])
            )

    def test_the_default_examples_show_a_right_and_a_wrong_answer(
        self, shipped: TestClient
    ) -> None:
        """What each widget's example buttons show on first render (the default α)."""
        for path, examples in (
            ("inflect", seq2seq_service.INFLECTION_EXAMPLES),
            ("translate", seq2seq_service.TRANSLATION_EXAMPLES),
        ):
            verdicts = set()
            for example in examples:
                body = example.model_dump(include={"lemma", "language", "features", "text"})
                reference = post(shipped, path, body)["reference"]
                verdicts.add(None if reference is None else reference["correct"])
            assert {True, False} <= verdicts, path

    def test_an_answer_that_differs_only_in_typography_is_right_and_says_so(
        self, shipped: TestClient
    ) -> None:
        """The corpus writes "Speichern unter …"; the model, "Speichern unter ..."."""
        result = post(shipped, "translate", {"text": "Save as..."})
        assert result["hypotheses"][0]["text"] == "Speichern unter ..."
        reference = result["reference"]
        assert (reference["text"], reference["correct"]) == ("Speichern unter …", True)
        assert reference["typography"] == (
            "Only the typography differs: the reference writes “…” where the model wrote “...”."
        )

    def test_sparser_alpha_means_smaller_output_support(self, shipped: TestClient) -> None:
        example = seq2seq_service.INFLECTION_EXAMPLES[0]
        body = {"lemma": example.lemma, "language": example.language, "features": example.features}
        supports = [mean_support(post(shipped, "inflect", {**body, "alpha": a})) for a in ALPHAS]
        # separately trained models: both sparse ones far below softmax, in either order
        assert supports[0] > 10 * max(supports[1], supports[2])


@pytest.mark.parametrize("value", ["²", "٣", "1" * 5000, "-1", "1e400", "nan", ""])
@pytest.mark.parametrize(
    "path", ["/api/seq2seq/translate/figure", "/api/seq2seq/inflect/figure", "/api/entmax/figure"]
)
def test_hostile_numbers_in_a_figure_address_are_never_a_server_error(
    api: TestClient, path: str, value: str
) -> None:
    """Unicode digits, numbers of thousands of digits, not-a-number: a figure the reader can
    fix (422, our sentence) or the default, never a 500 or Python's own words."""
    for field in ("example", "beam_width", "alpha", "inference_alpha"):
        response = api.get(path, params={field: value}, headers={"HX-Request": "true"})
        assert response.status_code in (200, 422), (field, response.text)
        if response.status_code == 422:
            detail = response.json()["detail"]
            assert "invalid literal" not in detail and "sys.set_int_max_str_digits" not in detail


# --- the copy model ------------------------------------------------------------------------


def test_the_copy_model_answers_with_its_pointer(api: TestClient) -> None:
    """`copy_model` picks the α's copy model; each of its steps says how much mass went to
    pointing and at which source token, beside the attention. Generate-only steps have no
    such fields."""
    alpha = next(iter(COPY_SERVED))
    copied = post(api, "translate", {**SENTENCE, "alpha": alpha, "copy_model": True})
    assert copied["model"]["name"] == COPY_SERVED[alpha]
    for step in copied["steps"]:
        assert len(step["copy_weights"]) == len(copied["source_tokens"])
        assert all(weight >= 0 for weight in step["copy_weights"])
        assert math.isclose(step["copy_mass"], sum(step["copy_weights"]), abs_tol=1e-4)
        assert step["copy_mass"] <= 1 + 1e-6
    generated = post(api, "translate", {**SENTENCE, "alpha": alpha})
    assert generated["model"]["name"] == SERVED["translation"][alpha]
    assert all("copy_weights" not in step for step in generated["steps"])
    listed = api.get("/api/seq2seq/options").json()["translation"]["copy_models"]
    assert [(m["alpha"], m["name"], m["available"]) for m in listed] == [
        (a, name, True) for a, name in COPY_SERVED.items()
    ]


@pytest.mark.parametrize("flag", [0, 1, "true", None])
def test_copy_model_takes_json_true_or_false_only(api: TestClient, flag: object) -> None:
    """The schema says boolean; a 0 or "true" (found by the fuzzer, once accepted as a flag) is
    refused with a sentence that names the field, as every other wrong type is."""
    response = api.post("/api/seq2seq/translate", json={**SENTENCE, "copy_model": flag})
    assert response.status_code == 422
    assert "copy_model" in response.json()["detail"]


def test_a_copy_model_the_alpha_lacks_is_a_422_that_names_the_ones_there(
    api: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    alpha = ALPHAS[-1]
    served = {a: name for a, name in COPY_SERVED.items() if a != alpha}
    monkeypatch.setattr(seq2seq_run, "COPY_SERVED", served)
    response = api.post(
        "/api/seq2seq/translate", json={**SENTENCE, "alpha": alpha, "copy_model": True}
    )
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert f"no copy model trained with α = {alpha:g}" in detail
    assert ", ".join(f"{a:g}" for a in served) in detail and "`copy_model`" in detail
