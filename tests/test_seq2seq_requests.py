"""The seq2seq requests and figure requests (app/seq2seq/requests.py) on their own: the lemma's and
the sentence's shapes in the schema, what a request accepts and refuses in which words, and how
a widget's figure turns into the requests of its columns and back into a page address."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from app.compute import text_cost
from app.seq2seq.requests import (
    INFLECTION_EXAMPLES,
    LEMMA_SHAPE,
    MAX_LEMMA_CHARS,
    MAX_SENTENCE_WORDS,
    InflectFigure,
    InflectRequest,
    TranslateFigure,
    TranslateRequest,
    character_class,
    field_names,
    lemma_characters,
    sentence_shape,
)
from models.seq2seq_run import SERVED

LEMMA = {"lemma": "swim", "language": "en", "features": "V;PST"}


def refusal(model: type, **fields) -> str:
    with pytest.raises(ValidationError) as caught:
        model(**fields)
    return caught.value.errors()[0]["msg"]


# --- the schema's shapes ---------------------------------------------------------------------


def test_a_character_class_joins_neighbouring_code_points_into_ranges() -> None:
    assert character_class(["c", "a", "b", "x", "Z"]) == "[Za-cx]"
    assert character_class(["-", "]"]) == "[\\u002d\\u005d]"  # regex syntax escaped
    assert character_class(["é", "ê"]) == "[\\u00e9-\\u00ea]"  # non-ASCII letters too
    assert character_class(["😀"]) == "[😀]"  # past U+FFFF: as is (no \\u escape reaches it)
    assert character_class(["a"]) == "[a]"
    assert character_class(["\uffff"]) == "[\\uffff]"  # the last code point \u reaches
    assert character_class([chr(0x10000)]) == f"[{chr(0x10000)}]"
    assert re.fullmatch(character_class(["a", "b", "d"]), "c") is None


def test_a_lower_case_alphabet_also_takes_the_capitals_that_lower_into_it() -> None:
    letters = lemma_characters("abc")
    assert {"a", "b", "c", "A", "B", "C"} <= set(letters)
    assert "d" not in letters and "D" not in letters
    assert lemma_characters("aBc") == ["B", "a", "c"]  # a cased alphabet: exactly its own
    assert {"a", "A"} <= set(lemma_characters("a"))  # an alphabet of one letter


def test_the_lemma_is_one_word_once_stripped() -> None:
    shape = re.compile(LEMMA_SHAPE)
    assert shape.match("swim") and shape.match("  swim\t")
    assert not shape.match("two words") and not shape.match("   ")
    assert shape.match("x" * MAX_LEMMA_CHARS) and not shape.match("x" * (MAX_LEMMA_CHARS + 1))


def test_a_sentence_is_one_to_the_most_words() -> None:
    shape = re.compile(sentence_shape("[a-z]"))
    most = " ".join(["w"] * MAX_SENTENCE_WORDS)
    assert shape.match("one") and shape.match(" two  words ") and shape.match(most)
    assert not shape.match(most + " w") and not shape.match(" ") and not shape.match("A")


# --- requests --------------------------------------------------------------------------------


def test_a_lemma_is_stripped_and_refused_in_words_when_empty_long_or_two_words() -> None:
    assert InflectRequest(**LEMMA | {"lemma": "  swim "}).lemma == "swim"
    assert refusal(InflectRequest, **LEMMA | {"lemma": " "}) == (
        f"Value error, The lemma must have 1-{MAX_LEMMA_CHARS} characters; it has 0."
    )
    long = "x" * (MAX_LEMMA_CHARS + 1)
    assert refusal(InflectRequest, **LEMMA | {"lemma": long}).endswith(
        f"it has {MAX_LEMMA_CHARS + 1}."
    )
    assert InflectRequest(**LEMMA | {"lemma": "x" * MAX_LEMMA_CHARS})
    assert refusal(InflectRequest, **LEMMA | {"lemma": "ice cream"}) == (
        "Value error, The lemma must be one word, without spaces."
    )


def test_alpha_is_a_json_number_not_text_or_a_flag() -> None:
    assert InflectRequest(**LEMMA, alpha=2.0).alpha == 2.0
    for wrong in ("1.5", True):
        with pytest.raises(ValidationError):
            InflectRequest(**LEMMA, alpha=wrong)


def test_a_request_costs_its_characters_times_its_beam() -> None:
    assert InflectRequest(**LEMMA, beam_width=3).cost() == text_cost(4, 3)
    sentence = TranslateRequest(text="Open  the file", beam_width=2)
    assert sentence.text == "Open the file"  # whitespace collapsed before counting
    assert sentence.cost() == text_cost(13, 2)


def test_training_snapshots_are_refused_with_the_copy_model() -> None:
    assert refusal(TranslateRequest, text="Open", snapshot=1000, copy_model=True) == (
        "Value error, The training snapshots are of a generate-only model; leave `copy_model` "
        "out with `snapshot`."
    )
    assert TranslateRequest(text="Open", snapshot=1000).snapshot == 1000
    assert TranslateRequest(text="Open", copy_model=True).copy_model is True


# --- the widgets' figures --------------------------------------------------------------------


def test_old_address_keys_are_read_under_their_field_names() -> None:
    assert field_names({"beam": "3", "ia": "1.2", "base": "2", "x": 1}) == {
        "beam_width": "3",
        "inference_alpha": "1.2",
        "base_alpha": "2",
        "x": 1,
    }
    assert field_names({"beam": "3", "beam_width": "4"}) == {"beam_width": "4"}  # its own wins
    assert InflectFigure(**LEMMA, beam="2").beam_width == 2


def test_an_example_button_brings_its_inputs_and_anything_else_is_ignored() -> None:
    example = INFLECTION_EXAMPLES[1]
    figure = InflectFigure(**LEMMA, example="1")
    assert (figure.lemma, figure.language, figure.features) == (
        example.lemma,
        example.language,
        example.features,
    )
    for ignored in ("²", "99", "-1", "1.0", 1):  # not an example's index as the form sends it
        assert InflectFigure(**LEMMA, example=ignored).lemma == "swim"
    last = str(len(INFLECTION_EXAMPLES) - 1)
    assert InflectFigure(**LEMMA, example=last).lemma == INFLECTION_EXAMPLES[-1].lemma
    assert "example" not in InflectFigure(**LEMMA, example="0").model_dump()


def test_a_figures_inputs_are_its_requests_fields_less_the_decoding_options() -> None:
    assert InflectFigure.inputs() == {"lemma", "language", "features", "snapshot"}
    assert TranslateFigure.inputs() == {"text", "copy_model", "snapshot"}


def test_one_column_or_one_per_trained_alpha() -> None:
    single = InflectFigure(**LEMMA, alpha=2.0, beam_width=3).columns()
    assert [(c.alpha, c.inference_alpha, c.beam_width, c.lemma) for c in single] == [
        (2.0, None, 3, "swim")
    ]
    compared = InflectFigure(**LEMMA, compare=True).columns()
    assert [c.alpha for c in compared] == list(SERVED["inflection"])
    assert all(type(c) is InflectRequest for c in compared)


def test_the_inference_mode_decodes_the_base_model_at_other_alphas() -> None:
    figure = InflectFigure(**LEMMA, mode="inference", base_alpha=2.0, inference_alpha=1.2)
    assert [(c.alpha, c.inference_alpha) for c in figure.columns()] == [(2.0, 1.2)]
    compared = InflectFigure(**LEMMA, mode="inference", base_alpha=1.5, compare=True).columns()
    assert [(c.alpha, c.inference_alpha) for c in compared] == [
        (1.5, a) for a in SERVED["inflection"]
    ]
    assert figure.cost() == text_cost(4, 5)
    assert InflectFigure(**LEMMA, compare=True).cost() == len(SERVED["inflection"]) * text_cost(
        4, 5
    )


def test_a_figures_address_reproduces_it_and_drops_what_is_off() -> None:
    trained = InflectFigure(**LEMMA, alpha=2.0, beam_width=3).address("inflect")
    assert trained == {
        "inflect.lemma": "swim",
        "inflect.language": "en",
        "inflect.features": "V;PST",
        "inflect.snapshot": None,
        "inflect.beam_width": "3",
        "inflect.mode": "trained",
        "inflect.alpha": "2",
        "inflect.inference_alpha": None,
        "inflect.base_alpha": None,
        "inflect.compare": None,
        "inflect.beam": None,
        "inflect.ia": None,
        "inflect.base": None,
    }
    inference = InflectFigure(
        **LEMMA, mode="inference", base_alpha=1.5, inference_alpha=1.25, compare=True
    ).address("x")
    assert (inference["x.inference_alpha"], inference["x.base_alpha"]) == ("1.25", "1.5")
    assert inference["x.compare"] == "1" and inference["x.mode"] == "inference"


def test_the_copy_model_can_stand_beside_the_generate_only_one() -> None:
    figure = TranslateFigure(text="Open LibreOffice", copy_model=True, copy_beside=True)
    assert [c.copy_model for c in figure.columns()] == [False, True]
    address = figure.address("translate")
    assert (address["translate.copy_model"], address["translate.copy_beside"]) == ("1", "1")
    alone = TranslateFigure(text="Open LibreOffice", copy_model=True)
    assert [c.copy_model for c in alone.columns()] == [True]
    assert alone.address("translate")["translate.copy_beside"] is None
    plain = TranslateFigure(text="Open").address("translate")
    assert plain["translate.copy_model"] is None and plain["translate.text"] == "Open"
    compared = TranslateFigure(text="Open", copy_model=True, copy_beside=True, compare=True)
    assert [c.copy_model for c in compared.columns()] == [True] * len(SERVED["translation"])
    beside_without_copy = TranslateFigure(text="Open", copy_beside=True)
    assert [c.copy_model for c in beside_without_copy.columns()] == [False]


def test_watching_a_model_learn_shows_one_model() -> None:
    assert InflectFigure(**LEMMA, snapshot="").snapshot is None  # the slider off
    assert InflectFigure(**LEMMA, snapshot="500").snapshot == 500
    assert refusal(InflectFigure, **LEMMA, snapshot=500, compare=True) == (
        "Value error, Watching the model learn shows one model as it trained; turn off the "
        "comparison, or untick Watch it learn."
    )
    assert refusal(InflectFigure, **LEMMA, snapshot=500, compare=True, mode="inference") == (
        "Value error, Watching the model learn shows one model as it trained; turn off the "
        "comparison and the inference-time α, or untick Watch it learn."
    )
    assert refusal(InflectFigure, **LEMMA, snapshot=500, mode="inference").endswith(
        "turn off the inference-time α, or untick Watch it learn."
    )
    assert InflectFigure(**LEMMA, compare=True).compare is True  # no snapshot: no refusal


# --- the schema built from the checkpoints -------------------------------------------------


def test_alphas_schema_lists_each_trained_value_with_the_tolerance_resolve_takes() -> None:
    from app.seq2seq.requests import trained_alphas
    from models.seq2seq_run import resolve

    for task in ("inflection", "translation"):
        ranges = trained_alphas(task)["anyOf"]
        assert [r["type"] for r in ranges] == ["number"] * len(SERVED[task])
        for trained, allowed in zip(sorted(SERVED[task]), ranges, strict=True):
            assert allowed["minimum"] < trained < allowed["maximum"]
            assert resolve(task, allowed["minimum"])[0] == trained
            assert resolve(task, allowed["maximum"])[0] == trained
            assert allowed["maximum"] - allowed["minimum"] < 1e-5


def test_the_inflection_schema_has_one_branch_per_language() -> None:
    from app.seq2seq.requests import inflection_schema, language_branches

    schema: dict = {"type": "object"}
    inflection_schema(schema)
    assert schema["oneOf"] == list(language_branches())
    english = next(b for b in schema["oneOf"] if b["properties"]["language"]["const"] == "en")
    assert "V;PST" in english["properties"]["features"]["enum"]
    assert re.match(english["properties"]["lemma"]["pattern"], " Swim ")
    assert not re.match(english["properties"]["lemma"]["pattern"], "swïm")


def test_the_sentence_schema_takes_the_characters_the_models_read() -> None:
    from app.seq2seq.requests import sentence_characters, sentence_schema

    schema: dict = {}
    sentence_schema(schema)
    assert schema["minLength"] == 1
    pattern = re.compile(schema["pattern"])
    assert pattern.match("Could not open the file.")
    assert "a" in sentence_characters() and "▁" not in sentence_characters()
    assert not pattern.match("Öffne ☃")  # a snowman is no piece of the tokenizer


def test_alpha_and_snapshot_fields_take_what_their_schema_says() -> None:
    from pydantic import create_model

    from app.seq2seq.requests import alpha_field, snapshot_field

    model = create_model(
        "Probe",
        alpha=(float, alpha_field("translation")),
        snapshot=(int | None, snapshot_field("x")),
    )
    probe = model()
    assert (probe.alpha, probe.snapshot) == (1.5, None)
    for wrong in ("1.5", float("inf"), float("nan")):
        with pytest.raises(ValidationError):
            model(alpha=wrong)
    assert model(snapshot=10**6).snapshot == 10**6
    assert model(snapshot=0).snapshot == 0  # step 0: the weights before training
    for outside in (-1, 10**6 + 1):
        with pytest.raises(ValidationError):
            model(snapshot=outside)
    schema = model.model_json_schema()["properties"]
    assert schema["alpha"]["examples"] == [1.5]
    assert schema["alpha"]["description"].startswith("picks the model trained with this α")
    assert len(schema["alpha"]["anyOf"]) == len(SERVED["translation"])
    assert schema["alpha"]["description"] == (
        "picks the model trained with this α (attention and output), one of the trained values "
        "(GET /api/seq2seq/options lists them)"
    )
    snapshot = schema["snapshot"]["description"]
    assert snapshot.startswith("a training step at which x training run kept its weights")
    for words in (
        "(models/snapshots.py; GET /api/seq2seq/options lists the steps)",
        "decode with the model as it was then (`alpha` is then the run's)",
        "a step the run did not keep is refused with the steps it did",
        "leave it out for the trained model",
    ):
        assert words in snapshot


def test_without_readable_tokenizers_a_sentence_is_any_words(monkeypatch) -> None:
    from app.seq2seq import requests

    monkeypatch.setattr(requests, "sentence_characters", lambda: None)
    schema: dict = {}
    requests.sentence_schema(schema)
    assert schema["pattern"] == sentence_shape()
    assert re.match(schema["pattern"], "Öffne ☃")
