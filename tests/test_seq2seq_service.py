"""The seq2seq family's entry point, without HTTP: a request in, one Trace out, rounded once."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from app.registry import ModelRegistry, ModelUnavailable
from app.seq2seq import service
from app.seq2seq.requests import InflectRequest, Seq2SeqResponse, TranslateRequest
from models import seq2seq_run
from models.checkpoints import read_manifest
from models.errors import InvalidInput
from models.references import (
    InflectionLexicon,
    inflection_document,
    translation_document,
    write_reference,
)
from models.seq2seq import Trace, six_digits
from models.seq2seq_run import SERVED, run
from models.tasks.inflection_serving import Inflector
from models.tasks.translation import SentencePair
from models.tasks.translation_serving import CopyTranslator, Translator
from tests.conftest import FakeClock
from tests.test_api_seq2seq import write_tiny_checkpoints


class Stop(Exception):
    pass


def stop() -> None:
    """A step check (or loader) that stops the run."""
    raise Stop


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> ModelRegistry:
    target = tmp_path_factory.mktemp("seq2seq-run")
    write_tiny_checkpoints(target)
    return ModelRegistry(target)


@pytest.mark.parametrize(
    "request_",
    [
        InflectRequest(lemma="walk", language="en", features="V;PST", beam_width=3),
        TranslateRequest(text="Permission denied", alpha=2.0, beam_width=2),
    ],
)
def test_run_returns_the_trace_the_json_and_the_figure_render(
    registry: ModelRegistry, request_: InflectRequest | TranslateRequest
) -> None:
    response = run(request_, registry.get)
    assert isinstance(response, Seq2SeqResponse) and isinstance(response, Trace)
    assert response.model.trained_output_alpha == request_.alpha == response.out_alpha
    assert 1 <= len(response.hypotheses) <= request_.beam_width
    assert response.covered_mass <= 1.0
    for step in response.steps:  # rounded once, in models.seq2seq.decode
        assert all(a == six_digits(a) for a in step.attention)
        assert all(e.probability == six_digits(e.probability) for e in step.output)
    # the figure is drawn from this very object
    view = service.result_view(response)["view"]
    assert view["result"] is response
    assert len(view["heatmap"]["rows"]) == len(response.steps)


def test_run_explains_what_it_cannot_take(registry: ModelRegistry) -> None:
    with pytest.raises(InvalidInput, match="never saw"):
        run(InflectRequest(lemma="w4lk", language="en", features="V;PST"), registry.get)
    with pytest.raises(InvalidInput, match="no inflection model trained"):
        run(InflectRequest(lemma="walk", language="en", features="V;PST", alpha=3.0), registry.get)


def test_run_says_which_model_is_missing(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match=SERVED["translation"][1.5]):
        run(TranslateRequest(text="Permission denied"), ModelRegistry(tmp_path).get)


def test_copied_spans_mark_the_pieces_the_pointer_wrote() -> None:
    """Runs of the best hypothesis by whether pointing had at least half of each step's mass;
    the end-of-sentence step is not a piece; a generate-only answer has no spans."""
    from types import SimpleNamespace

    from app.seq2seq.service import copied_spans

    def answer(masses: list[float | None]) -> SimpleNamespace:
        tokens = ["▁Server", "▁19", "2", ".", "1", "▁abgelehnt"]
        steps = [SimpleNamespace(copy_mass=m) for m in masses]
        return SimpleNamespace(hypotheses=[SimpleNamespace(tokens=tokens)], steps=steps)

    spans = copied_spans(answer([0.0, 0.9, 0.5, 0.7, 0.6, 0.49, 0.0]))
    assert spans == [
        {"text": "Server ", "copied": False},
        {"text": "192.1", "copied": True},
        {"text": " abgelehnt", "copied": False},
    ]
    assert copied_spans(answer([None] * 7)) is None
    assert copied_spans(answer([0.8] * 7)) == [{"text": "Server 192.1 abgelehnt", "copied": True}]


# --- the verdict's typography line, the readability check and the copy model's choice ----------


@pytest.mark.parametrize(
    ("hypothesis", "answer", "line"),
    [
        (  # one variant each way round: the reference's mark first
            "Don't",
            "Don’t",
            "Only the typography differs: the reference writes “’” where the model wrote “'”.",
        ),
        (  # the plain mark also in the reference: the curly one still tells them apart
            "Don't",
            "Don’t 'x'",
            "Only the typography differs: the reference writes “’” where the model wrote “'”.",
        ),
        (  # the curly mark in both, the plain one in the model's only
            "Don’t 'x'",
            "Don’t ’x’",
            "Only the typography differs: the reference writes “’” where the model wrote “'”.",
        ),
        (  # the same marks on both sides, in other places: nothing to name
            "Don’t 'x'",
            "Don't ’x’",
            "Only the typography differs: the spacing around an ellipsis.",
        ),
        (
            'It\'s "x"',
            "It’s „x“",
            "Only the typography differs: the reference writes “’” where the model wrote “'”; "
            'and ““” where the model wrote “"”; and “„” where the model wrote “"”.',
        ),
        (
            "Speichern\u00a0...",
            "Speichern …",
            "Only the typography differs: the reference writes “…” where the model wrote “...”; "
            "and a space where the model wrote a non-breaking space.",
        ),
    ],
)
def test_the_typography_line_names_each_mark_the_reference_writes(
    hypothesis: str, answer: str, line: str
) -> None:
    assert seq2seq_run.typography_line(hypothesis, answer) == line


class Pieces:
    """A source tokenizer stand-in: fixed pieces, some of them unknown."""

    def __init__(self, pieces: list[str], unknown: set[str]) -> None:
        self.pieces, self.unknown = pieces, unknown

    def encode(self, text: str, out_type: type) -> list[str]:
        return self.pieces

    def piece_to_id(self, piece: str) -> int:
        return seq2seq_run.UNK if piece in self.unknown else 7


@pytest.mark.parametrize(
    ("pieces", "unknown", "sentence"),
    [
        (
            [],
            set(),
            "The sentence has nothing the model can read (only invisible or control "
            "characters); type some words.",
        ),
        (
            ["▁Open", "▁✓☃", "▁now", "▁☃"],
            {"▁✓☃", "▁☃"},
            "The sentence has characters the translation model never saw: ☃✓; remove or "
            "replace them.",
        ),
    ],
)
def test_an_unreadable_sentence_is_refused_with_what_to_change(
    pieces: list[str], unknown: set[str], sentence: str
) -> None:
    translator = SimpleNamespace(source_sp=Pieces(pieces, unknown))
    with pytest.raises(InvalidInput) as caught:
        seq2seq_run.check_readable(translator, "x")  # type: ignore[arg-type]
    assert str(caught.value) == sentence
    seq2seq_run.check_readable(SimpleNamespace(source_sp=Pieces(["▁Open"], set())), "Open")  # type: ignore[arg-type]


def test_a_copy_model_is_chosen_by_its_trained_alpha(monkeypatch: pytest.MonkeyPatch) -> None:
    assert seq2seq_run.copy_checkpoint(1.5) == "seq2seq-translate-copy-a1.5"
    assert seq2seq_run.copy_checkpoint(2.0) == "seq2seq-translate-copy-a2"
    served = {1.0: "seq2seq-translate-copy-a1", 1.5: "seq2seq-translate-copy-a1.5"}
    monkeypatch.setattr(seq2seq_run, "COPY_SERVED", served)
    with pytest.raises(InvalidInput) as caught:
        seq2seq_run.copy_checkpoint(2.0)
    assert str(caught.value) == (
        "There is no copy model trained with α = 2 (copy models: 1, 1.5); pick one of those α "
        "values, or leave `copy_model` out."
    )
    monkeypatch.setattr(seq2seq_run, "COPY_SERVED", {})
    with pytest.raises(InvalidInput, match=r"\(copy models: none yet\); pick one"):
        seq2seq_run.copy_checkpoint(1.5)


def test_a_model_that_names_no_corpus_trained_on_v1(monkeypatch: pytest.MonkeyPatch) -> None:
    served = SimpleNamespace(corpus=None)
    assert not seq2seq_run.on_served_corpus(served)  # type: ignore[arg-type]
    monkeypatch.setattr(seq2seq_run, "SERVED_CORPUS", "v1")
    assert seq2seq_run.on_served_corpus(served)  # type: ignore[arg-type]
    assert not seq2seq_run.on_served_corpus(SimpleNamespace(corpus="v2"))  # type: ignore[arg-type]


def test_a_translation_without_its_reference_file_is_still_an_answer(
    registry: ModelRegistry,
) -> None:
    def load(name: str) -> object:
        if name == seq2seq_run.REFERENCES["translation"]:
            raise ModelUnavailable(name, "not trained yet")
        return registry.get(name)

    response = run(TranslateRequest(text="Permission denied", beam_width=2), load)
    assert response.reference is None and response.hypotheses


def test_the_inference_alpha_and_the_check_reach_the_translator(registry: ModelRegistry) -> None:
    request = TranslateRequest(text="Permission denied", beam_width=2, inference_alpha=1.2)
    response = run(request, registry.get)
    assert (response.attn_alpha, response.out_alpha) == (1.2, 1.2)
    assert response.model.trained_output_alpha == 1.5
    assert response.model.inference_alpha == 1.2
    with pytest.raises(Stop):
        run(TranslateRequest(text="Permission denied"), registry.get, stop)


def test_a_translation_snapshot_is_loaded_by_its_step() -> None:
    asked: list[str] = []

    def load(name: str) -> object:
        asked.append(name)
        raise Stop

    step = seq2seq_run.snapshots.kept_steps(seq2seq_run.SNAPSHOTS["translation"])[0]
    with pytest.raises(Stop):
        run(TranslateRequest(text="Open", snapshot=step), load)
    assert asked == [f"{seq2seq_run.SNAPSHOTS['translation']}@{step}"]


@pytest.mark.parametrize(
    "request_",
    [
        InflectRequest(lemma="walk", language="en", features="V;PST", beam_width=2),
        TranslateRequest(text="Permission denied", beam_width=2),
    ],
)
def test_the_server_time_is_the_decode_in_milliseconds_to_two_places(
    registry: ModelRegistry,
    monkeypatch: pytest.MonkeyPatch,
    request_: InflectRequest | TranslateRequest,
) -> None:
    monkeypatch.setattr(seq2seq_run, "time", FakeClock(10.0, 10.2501234))  # 250.1234 ms
    assert run(request_, registry.get).server_ms == 250.12


# --- what `run` hands on: the reference, the notes, the α, the checkpoint asked for -------------


class Judged:
    """seq2seq_run.judge, recording the hypothesis each verdict was asked about."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, hypothesis: str, answers: Any) -> tuple[bool, str | None]:
        self.asked.append(hypothesis)
        return JUDGE(hypothesis, answers)


JUDGE = seq2seq_run.judge


def test_an_inflection_reads_the_lemma_as_learned_and_carries_the_lexicons_verdict(
    registry: ModelRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    judged = Judged()
    monkeypatch.setattr(seq2seq_run, "judge", judged)
    request = InflectRequest(lemma="Talk", language="en", features="V;PST", beam_width=2)
    response = run(request, registry.get)
    assert (
        response.input_note == "Read “Talk” as “talk”: the en model learned lower-case words only."
    )
    assert response.reference is not None
    assert (response.reference.forms, response.reference.split) == (["talked"], "train")
    assert response.reference.seen_in_training is not None  # the model's setting was recorded
    assert judged.asked == [response.hypotheses[0].text]
    assert response.beyond_training is None  # a lemma of the lexicon

    unseen = run(InflectRequest(lemma="blorft", language="en", features="V;PST"), registry.get)
    assert unseen.reference is not None and unseen.reference.split == "unseen"
    assert unseen.beyond_training == (
        "Beyond training: “blorft” is not in our en lexicon, so the model never saw it; the "
        "answer applies what it learned from other words."
    )
    assert unseen.input_note is None


def test_a_translation_carries_the_corpus_verdict_and_its_unseen_words(
    registry: ModelRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    judged = Judged()
    monkeypatch.setattr(seq2seq_run, "judge", judged)
    response = run(TranslateRequest(text="Permission denied", beam_width=2), registry.get)
    corpus = registry.get(seq2seq_run.REFERENCES["translation"])
    assert response.reference is not None
    assert response.reference.text == corpus.lookup("Permission denied").text
    assert judged.asked == [response.hypotheses[0].text]
    assert response.beyond_training is None

    novel = run(TranslateRequest(text="Permission zqxwv denied", beam_width=1), registry.get)
    assert novel.beyond_training is not None and "“zqxwv” occurs in none" in novel.beyond_training


def test_the_typography_line_reaches_the_translation_reference(
    registry: ModelRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(seq2seq_run, "judge", lambda hypothesis, answers: (True, "a line"))
    response = run(TranslateRequest(text="Permission denied", beam_width=1), registry.get)
    assert response.reference is not None
    assert (response.reference.correct, response.reference.typography) == (True, "a line")


@pytest.mark.parametrize(
    ("fields", "name"),
    [({}, 1.5), ({"alpha": 1.0}, 1.0), ({"alpha": 2.0}, 2.0), ({"alpha": 2.0}, None)],
)
def test_a_copy_request_loads_the_copy_model_of_its_trained_alpha(
    registry: ModelRegistry,
    fields: dict[str, float],
    name: float | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[str] = []

    def load(checkpoint: str) -> Any:
        asked.append(checkpoint)
        return registry.get(checkpoint)

    request = TranslateRequest(text="Permission denied", copy_model=True, **fields)
    if name is None:  # had α = 2 no copy model
        served = {a: n for a, n in seq2seq_run.COPY_SERVED.items() if a != 2.0}
        monkeypatch.setattr(seq2seq_run, "COPY_SERVED", served)
        with pytest.raises(InvalidInput, match="no copy model trained with α = 2"):
            run(request, load)
        assert asked == []
    else:
        run(request, load)
        assert asked[0] == seq2seq_run.COPY_SERVED[name]


def test_the_inference_alpha_and_the_check_reach_the_inflector(registry: ModelRegistry) -> None:
    request = InflectRequest(lemma="talk", language="en", features="V;PST", inference_alpha=1.2)
    response = run(request, registry.get)
    assert (response.attn_alpha, response.out_alpha) == (1.2, 1.2)
    assert response.model.inference_alpha == 1.2 and response.model.note is not None
    with pytest.raises(Stop):
        run(InflectRequest(lemma="talk", language="en", features="V;PST"), registry.get, stop)


def test_an_inflection_snapshot_is_loaded_by_its_step() -> None:
    asked: list[str] = []

    def load(name: str) -> Any:
        asked.append(name)
        raise Stop

    recipe = seq2seq_run.SNAPSHOTS["inflection"]
    step = seq2seq_run.snapshots.kept_steps(recipe)[0]
    with pytest.raises(Stop):
        run(InflectRequest(lemma="talk", language="en", features="V;PST", snapshot=step), load)
    assert asked == [f"{recipe}@{step}"]


# --- the family's loaders, notes and verdicts, called directly ----------------------------------


def test_a_served_model_carries_what_its_manifest_says(registry: ModelRegistry) -> None:
    manifest = read_manifest(registry.checkpoint_dir)

    def served(name: str) -> seq2seq_run.ServedSeq2Seq:
        return seq2seq_run.load_served(registry.checkpoint_dir, name, manifest[name])

    inflector = served(SERVED["inflection"][1.5])
    assert (inflector.task, inflector.training_set, inflector.corpus) == (
        "inflection",
        "high",
        None,
    )
    assert isinstance(inflector.runner, Inflector)
    assert served(SERVED["inflection"][1.0]).training_set is None  # its entry names no setting
    translator = served(SERVED["translation"][1.5])
    assert (translator.task, translator.corpus) == ("translation", seq2seq_run.SERVED_CORPUS)
    assert type(translator.runner) is Translator
    assert isinstance(served(seq2seq_run.COPY_SERVED[1.5]).runner, CopyTranslator)
    with pytest.raises(ValueError, match="^seq2seq task 'parsing' has no widget$"):
        seq2seq_run.load_served(registry.checkpoint_dir, "x", {"task": "parsing"})


def test_the_reference_files_load_as_lookups(registry: ModelRegistry) -> None:
    manifest = read_manifest(registry.checkpoint_dir)
    directory = registry.checkpoint_dir
    name = seq2seq_run.REFERENCES["translation"]
    corpus = seq2seq_run.load_reference(directory, name, manifest[name])
    assert isinstance(corpus, seq2seq_run.ServedCorpus) and "permission" in corpus.training_words
    name = seq2seq_run.REFERENCES["inflection"]
    lexicon = seq2seq_run.load_reference(directory, name, manifest[name])
    assert isinstance(lexicon, InflectionLexicon)
    assert lexicon.lookup("en", "talk", "V;PST").forms == ("talked",)
    empty = seq2seq_run.ServedCorpus(
        translation_document({"test": [SentencePair("Open", "Öffnen")]}, "x")
    )
    assert empty.training_words == frozenset() and empty.unseen_words("Open") == ["Open"]


def test_every_served_checkpoint_and_reference_is_loaded_at_start_up() -> None:
    names = seq2seq_run.served_names()
    for name in [*SERVED["inflection"].values(), *SERVED["translation"].values()]:
        assert name in names
    assert set(seq2seq_run.COPY_SERVED.values()) | set(seq2seq_run.REFERENCES.values()) <= set(
        names
    )


@pytest.mark.parametrize(
    ("attn", "out", "asked", "note"),
    [
        (1.5, 1.5, None, None),
        (1.5, 1.5, 1.5, None),
        (
            1.5,
            1.5,
            2.0,
            "Inference-time α = 2 on attention and output: this model was trained with "
            "α = 1.5 (attention) and 1.5 (output), so these distributions are not the ones it "
            "learned.",
        ),
        (
            1.5,
            2.0,
            1.5,
            "Inference-time α = 1.5 on attention and output: this model was trained with "
            "α = 1.5 (attention) and 2 (output), so these distributions are not the ones it "
            "learned.",
        ),
    ],
)
def test_the_model_info_says_when_inference_alpha_is_not_the_trained_one(
    attn: float, out: float, asked: float | None, note: str | None
) -> None:
    served = SimpleNamespace(
        name="m", sha256="0" * 64, attn_alpha=attn, out_alpha=out, output_vocab_size=9
    )
    info = seq2seq_run.model_info(served, asked)  # type: ignore[arg-type]
    assert (info.attention_alpha, info.output_alpha) == (
        (attn, out) if asked is None else (asked, asked)
    )
    assert (info.inference_alpha, info.note) == (asked, note)


def test_the_verdict_sees_through_spacing_and_typography() -> None:
    assert seq2seq_run.spaced(" Datei \t  öffnen ") == "Datei öffnen"
    assert seq2seq_run.plain_typography("„Speichern“  …") == '"Speichern"...'
    assert seq2seq_run.plain_typography("Warte ...") == "Warte..."
    assert seq2seq_run.judge("Datei  öffnen", ["Datei öffnen"]) == (True, None)
    assert seq2seq_run.judge("Don't", ["Do", "Don’t"]) == (
        True,
        "Only the typography differs: the reference writes “’” where the model wrote “'”.",
    )
    assert seq2seq_run.judge("Dont", ["Don’t"]) == (False, None)


LETTERS = {"en": "abcdefghijklmnopqrstuvwxyz", "de": "AHSUahsuäö", "go": "go"}


@pytest.mark.parametrize(
    ("language", "lemma", "read", "note"),
    [
        ("en", "Go", "go", "Read “Go” as “go”: the en model learned lower-case words only."),
        ("en", "go", "go", None),
        ("de", "Haus", "Haus", None),  # an alphabet with capitals: case is the model's to read
        ("en", "Gö", "Gö", None),  # lower-cased, not all of it would be readable
        ("xx", "Go", "Go", None),  # no alphabet for the language
        ("go", "GO", "go", "Read “GO” as “go”: the go model learned lower-case words only."),
    ],
)
def test_a_lemma_is_lower_cased_only_for_a_lower_case_alphabet(
    language: str, lemma: str, read: str, note: str | None
) -> None:
    inflector = SimpleNamespace(vocab=SimpleNamespace(characters=LETTERS))
    assert seq2seq_run.lemma_as_learned(inflector, language, lemma) == (read, note)  # type: ignore[arg-type]


def test_the_loaders_read_the_folder_they_are_given(
    registry: ModelRegistry, tmp_path: Path
) -> None:
    manifest = read_manifest(registry.checkpoint_dir)
    name = SERVED["inflection"][1.5]
    tiny = seq2seq_run.load_served(registry.checkpoint_dir, name, manifest[name])
    assert tiny.runner.model.config.emb_dim == 16  # the test's model, not the shipped one
    name = SERVED["translation"][1.5]
    tiny = seq2seq_run.load_served(registry.checkpoint_dir, name, manifest[name])
    assert tiny.runner.model.config.emb_dim == 16
    pairs = {"train": [SentencePair("Open", "Öffnen")]}
    for task, document, kind in [
        ("translation", translation_document(pairs, "x"), seq2seq_run.ServedCorpus),
        ("inflection", inflection_document([], {}, {}), InflectionLexicon),
    ]:
        reference = seq2seq_run.REFERENCES[task]
        entry = write_reference(task, reference, document, {}, tmp_path)
        loaded = seq2seq_run.load_reference(tmp_path, reference, entry)
        assert type(loaded) is kind


def test_an_alpha_picks_its_model_within_rounding_and_an_unknown_one_is_refused() -> None:
    assert seq2seq_run.resolve("translation", 1.5000004) == (1.5, SERVED["translation"][1.5])
    with pytest.raises(InvalidInput) as caught:
        seq2seq_run.resolve("inflection", 3.0)
    assert str(caught.value) == (
        "There is no inflection model trained with α = 3; pick one of 1, 1.5, 2, or keep one of "
        "those and set `inference_alpha` to decode it with any α from 1 to 2."
    )
    with pytest.raises(InvalidInput, match="^The inflection model's training kept snapshots at "):
        seq2seq_run.model_name("inflection", None, 999_999)
