"""What the seq2seq widgets draw from an answer (app/seq2seq/service.py), for hand-made answers:
the heatmap's layout and its caps, the copied spans, the n-best's marks, the step cards, and the
options' α choices."""

from __future__ import annotations

import pytest

from app.registry import ModelUnavailable
from app.seq2seq import service
from app.seq2seq.requests import ModelOption
from app.seq2seq.service import (
    COPIED,
    HEATMAP_MAX_COLUMNS,
    HEATMAP_MAX_ROWS,
    OUTPUT_SHOWN,
    STEP_CARDS_SHOWN,
    copied_spans,
    default_alpha,
    format_alphas,
    heatmap_view,
    hypothesis_marks,
    model_options,
    reference_answers,
    result_view,
)
from models.seq2seq import Hypothesis, OutputEntry, Step
from models.seq2seq_run import (
    COPY_SERVED,
    SERVED,
    InflectionReference,
    InflectResponse,
    Seq2SeqModelInfo,
    TranslateResponse,
    TranslationReference,
)

INFO = Seq2SeqModelInfo(
    name="m",
    sha256="0" * 64,
    attention_alpha=1.5,
    output_alpha=1.5,
    trained_attention_alpha=1.5,
    trained_output_alpha=1.5,
    inference_alpha=None,
    note=None,
    output_vocab_size=100,
)


ANSWERED = {"attn_alpha": 1.5, "out_alpha": 1.5, "model": INFO, "server_ms": 1.0}


def step(token: str, attention: list[float], copy: list[float] | None = None, support=2) -> Step:
    output = [OutputEntry(token=f"t{i}", probability=0.1) for i in range(support)]
    return Step(
        token=token,
        attention=attention,
        attention_support=sum(a > 0 for a in attention),
        output=output,
        support_size=support,
        copy_weights=copy,
        copy_mass=None if copy is None else sum(copy),
    )


def translation(steps: list[Step], tokens: list[str], reference=None, texts=("Hallo",)):
    hypotheses = [Hypothesis(text=t, tokens=tokens, probability=0.5) for t in texts]
    return TranslateResponse(
        source_tokens=["▁Open", "▁Libre", "Office"],
        hypotheses=hypotheses,
        exact=True,
        covered_mass=1.0,
        steps=steps,
        task="translation",
        reference=reference,
        **ANSWERED,
    )


def test_the_heatmap_lays_out_rows_of_output_and_columns_of_source_in_cell_units() -> None:
    answer = translation(
        [step("▁Öffnen", [0.7, 0.3, 0.0]), step("</s>", [0.0, 0.0, 1.0])], ["▁Öffnen"]
    )
    view = heatmap_view(answer)
    # labels: 7 characters of output (0.32 a character), 6 of source (turned 60°)
    left, top = 0.32 * 7 + 0.5, 0.32 * 0.87 * 6 + 0.5
    assert view["width"] == round(left + 3 + 0.32 * 0.5 * 6 + 0.3, 2)
    assert view["height"] == round(top + 2 + 0.1, 2)
    assert view["width_px"] == round((left + 3 + 0.32 * 0.5 * 6 + 0.3) * 26)
    assert view["columns"][1] == {"token": "▁Libre", "x": left + 1.5, "y": top - 0.2}
    first = view["rows"][0]
    assert (first["token"], first["x"], first["y"]) == ("▁Öffnen", left - 0.2, top + 0.5)
    assert first["cells"][0] == {
        "source": "▁Open",
        "x": left + 0.04,
        "y": top + 0.04,
        "p": 0.7,
        "opacity": 0.736,
    }
    assert [c["opacity"] for c in view["rows"][1]["cells"]] == [0.12, 0.12, 1.0]
    assert view["hidden_rows"] == view["hidden_columns"] == 0
    assert view["id"].startswith("s2s-") and len(view["id"]) == 12


def test_a_huge_answer_is_capped_and_says_how_much_it_left_out() -> None:
    source = [f"▁w{i}" for i in range(HEATMAP_MAX_COLUMNS + 3)]
    steps = [step("▁x", [1.0] + [0.0] * (len(source) - 1)) for _ in range(HEATMAP_MAX_ROWS + 2)]
    answer = translation(steps, ["▁x"]).model_copy(update={"source_tokens": source})
    view = heatmap_view(answer)
    assert len(view["rows"]) == HEATMAP_MAX_ROWS and len(view["columns"]) == HEATMAP_MAX_COLUMNS
    assert all(len(row["cells"]) == HEATMAP_MAX_COLUMNS for row in view["rows"])
    assert (view["hidden_rows"], view["hidden_columns"]) == (2, 3)


def test_a_copy_models_pointer_gets_a_heatmap_of_its_own() -> None:
    copying = [step("▁Libre", [0.2, 0.8, 0.0], copy=[0.0, 0.6, 0.0])]
    view = result_view(translation(copying, ["▁Libre"]))["view"]
    assert [c["p"] for c in view["pointer"]["rows"][0]["cells"]] == [0.0, 0.6, 0.0]
    assert [c["p"] for c in view["heatmap"]["rows"][0]["cells"]] == [0.2, 0.8, 0.0]
    generating = result_view(translation([step("▁a", [1.0, 0.0, 0.0])], ["▁a"]))["view"]
    assert generating["pointer"] is None


def test_copied_spans_split_the_best_answer_where_pointing_starts_and_stops() -> None:
    tokens = ["▁Öffnen", "▁Libre", "Office", "▁jetzt"]
    masses = [0.0, 0.9, COPIED, 0.2]
    steps = [
        step(t, [1.0, 0.0, 0.0], copy=[m, 0.0, 0.0]) for t, m in zip(tokens, masses, strict=True)
    ]
    steps.append(step("</s>", [1.0, 0.0, 0.0], copy=[0.0, 0.0, 0.0]))
    assert copied_spans(translation(steps, tokens)) == [
        {"text": "Öffnen ", "copied": False},  # the space before a copied word stays outside
        {"text": "LibreOffice", "copied": True},
        {"text": " jetzt", "copied": False},
    ]
    below = [step(t, [1.0, 0.0, 0.0], copy=[COPIED - 0.01, 0.0, 0.0]) for t in tokens]
    assert copied_spans(translation(below, tokens)) == [
        {"text": "Öffnen LibreOffice jetzt", "copied": False}
    ]
    first = [step(t, [1.0, 0.0, 0.0], copy=[1.0, 0.0, 0.0]) for t in ["▁Libre", "Office"]]
    assert copied_spans(translation(first, ["▁Libre", "Office"])) == [
        {"text": "LibreOffice", "copied": True}  # no empty span, no leading space
    ]
    generated = [step(t, [1.0, 0.0, 0.0]) for t in tokens]
    assert copied_spans(translation(generated, tokens)) is None


def test_each_hypothesis_is_marked_by_the_verdicts_own_rule() -> None:
    reference = TranslationReference(text="Hallo Welt", split="test", correct=True, meaning="")
    answer = translation(
        [step("▁Hallo", [1.0, 0.0, 0.0])],
        ["▁Hallo"],
        reference=reference,
        texts=("Hallo  Welt", "Hallo", "Hallo Welt"),
    )
    assert reference_answers(answer) == ["Hallo Welt"]
    assert hypothesis_marks(answer) == [True, False, True]
    unjudged = translation([step("▁a", [1.0, 0.0, 0.0])], ["▁a"], texts=("a", "b"))
    assert reference_answers(unjudged) is None
    assert hypothesis_marks(unjudged) == [None, None]


def inflection(forms: list[str] | None) -> InflectResponse:
    reference = InflectionReference(
        forms=forms, split="test", correct=None, seen_in_training=None, meaning=""
    )
    return InflectResponse(
        source_tokens=["s", "w", "i", "m"],
        hypotheses=[Hypothesis(text=t, tokens=list(t), probability=0.4) for t in ("swam", "swum")],
        exact=False,
        covered_mass=0.8,
        steps=[step("s", [1.0, 0.0, 0.0, 0.0], support=1)],
        task="inflection",
        reference=reference,
        **ANSWERED,
    )


def test_an_inflection_is_marked_against_every_valid_form() -> None:
    assert reference_answers(inflection(["swam"])) == ["swam"]
    assert hypothesis_marks(inflection(["swam"])) == [True, False]
    assert hypothesis_marks(inflection(["swam", "swum"])) == [True, True]
    assert reference_answers(inflection(None)) is None  # the lexicon lacks the cell


def test_the_step_cards_show_the_top_outputs_and_count_the_rest() -> None:
    many = [step("▁a", [1.0, 0.0, 0.0], support=OUTPUT_SHOWN + 5)] * (STEP_CARDS_SHOWN + 3)
    view = result_view(translation(many, ["▁a"]), compact=True)["view"]
    assert view["compact"] is True
    assert len(view["steps"]) == STEP_CARDS_SHOWN and view["hidden_steps"] == 3
    card = view["steps"][0]
    assert len(card["shown"]) == OUTPUT_SHOWN and card["more"] == 5
    few = result_view(translation([step("▁a", [1.0, 0.0, 0.0], support=2)], ["▁a"]))["view"]
    assert (few["steps"][0]["more"], few["hidden_steps"], few["compact"]) == (0, 0, False)


def test_the_mean_supports_are_written_without_trailing_zeros() -> None:
    steps = [step("▁a", [0.5, 0.5, 0.0], support=2), step("▁b", [1.0, 0.0, 0.0], support=1)]
    view = result_view(translation(steps, ["▁a", "▁b"]))["view"]
    assert (view["mean_attention_support"], view["mean_output_support"]) == ("1.5", "1.5")
    whole = result_view(translation([step("▁a", [0.5, 0.5, 0.0], support=3)], ["▁a"]))["view"]
    assert (whole["mean_attention_support"], whole["mean_output_support"]) == ("2", "3")
    thirds = [step("▁a", [1.0, 0.0, 0.0], support=1)] * 2 + [step("▁b", [1.0, 0.0, 0.0], support=2)]
    assert result_view(translation(thirds, ["▁a"]))["view"]["mean_output_support"] == "1.33"


def test_alphas_are_listed_as_a_reader_writes_them() -> None:
    assert format_alphas([1.0, 1.5, 2.0]) == "1, 1.5, 2"


def option(alpha: float, available: bool) -> ModelOption:
    reason = None if available else "it is not trained yet"
    return ModelOption(alpha=alpha, name=f"m{alpha:g}", available=available, reason=reason)


def test_the_widget_opens_at_one_point_five_or_the_first_model_that_serves() -> None:
    assert default_alpha([option(1.0, True), option(1.5, True), option(2.0, True)]) == 1.5
    assert default_alpha([option(1.0, False), option(1.5, False), option(2.0, True)]) == 2.0
    assert default_alpha([option(1.0, True), option(1.5, False), option(2.0, True)]) == 1.0
    with pytest.raises(ModelUnavailable) as caught:
        default_alpha([option(1.0, False), option(2.0, False)])
    assert caught.value.sentence == (
        "The model “m1” is unavailable: α = 1: it is not trained yet; α = 2: it is not trained yet."
    )


class Registry:
    """The one thing model_options asks of the registry: a model, or why not."""

    def __init__(self, broken: set[str]) -> None:
        self.broken = broken

    def get(self, name: str):
        if name in self.broken:
            raise ModelUnavailable(name, "its file is missing")
        return object()


def test_each_trained_alpha_is_offered_with_whether_it_serves(monkeypatch) -> None:
    monkeypatch.setattr(service, "SERVED", {"translation": {1.0: "a", 1.5: "b"}})
    monkeypatch.setattr(service, "COPY_SERVED", {1.5: "c"})
    options = model_options(Registry({"b"}), "translation")
    assert [(o.alpha, o.name, o.available, o.reason) for o in options] == [
        (1.0, "a", True, None),
        (1.5, "b", False, "its file is missing"),
    ]
    copies = model_options(Registry(set()), "translation", copy=True)
    assert [(o.alpha, o.name, o.available) for o in copies] == [(1.5, "c", True)]


def test_without_an_inflection_vocabulary_the_options_offer_no_language(tmp_path) -> None:
    from app.seq2seq.service import options

    registry = Registry({"m"})
    registry.checkpoint_dir = tmp_path  # no vocabulary file there
    offered = options(registry)
    assert (offered.inflection.languages, offered.inflection.features) == ([], {})
    assert offered.inflection.characters == {}
    assert [m.alpha for m in offered.inflection.models] == list(SERVED["inflection"])
    assert [m.alpha for m in offered.translation.copy_models] == list(COPY_SERVED)


def test_with_no_model_at_all_the_family_is_unavailable() -> None:
    with pytest.raises(ModelUnavailable) as caught:
        default_alpha([])
    assert caught.value.sentence == "The model “seq2seq” is unavailable: ."


def test_an_answer_with_no_source_still_lays_out() -> None:
    answer = translation([step("</s>", [])], ["</s>"]).model_copy(update={"source_tokens": []})
    view = heatmap_view(answer)
    assert view["columns"] == [] and view["rows"][0]["cells"] == []
    top = 0.32 * 0.87 * 1 + 0.5  # as if the source had a one-character label
    assert view["rows"][0]["y"] == top + 0.5


def test_the_result_view_carries_the_copied_spans() -> None:
    tokens = ["▁Libre", "Office"]
    steps = [step(t, [1.0, 0.0, 0.0], copy=[1.0, 0.0, 0.0]) for t in tokens]
    answer = translation(steps, tokens)
    assert result_view(answer)["view"]["copied_spans"] == copied_spans(answer) is not None


def test_every_cell_of_the_heatmap_sits_in_its_row_and_column() -> None:
    answer = translation(
        [step("▁ab", [0.123, 0.877, 0.0]), step("▁c", [0.0, 0.5, 0.5])], ["▁ab"]
    ).model_copy(update={"source_tokens": ["▁Open", "▁x", "y"]})
    view = heatmap_view(answer)
    left, top = 0.32 * 3 + 0.5, 0.32 * 0.87 * 5 + 0.5  # "▁ab" and "▁Open" are the longest
    assert view["height"] == 3.99  # top + 2 rows + 0.1 = 3.992, to 2 decimals
    assert view["width"] == round(left + 3 + 0.32 * 0.5 * 5 + 0.3, 2)
    second = view["rows"][1]
    assert second["y"] == top + 1.5
    assert [(c["x"], c["y"]) for c in second["cells"]] == [
        (left + col + 0.04, top + 1 + 0.04) for col in range(3)
    ]
    assert view["rows"][0]["cells"][0]["opacity"] == 0.228  # 0.12 + 0.88 · 0.123 = 0.22824
    assert [c["x"] for c in view["columns"]] == [left + 0.5, left + 1.5, left + 2.5]


def test_an_answer_with_no_steps_lays_out_an_empty_map() -> None:
    view = heatmap_view(translation([], ["▁a"]))
    assert view["rows"] == [] and len(view["columns"]) == 3
    assert view["columns"][0]["x"] == 0.32 * 1 + 0.5 + 0.5  # as if one one-character label
