"""Model cards (/papers/<slug>/models): every served checkpoint has one, and what a card says
comes from the manifest, its lineage and the results JSON."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app import model_cards
from app.main import create_app
from models import pointer_run, seq2seq_run
from models.checkpoints import ancestry
from models.pointer_run import is_attention_model

ROOT = Path(__file__).resolve().parent.parent
CHECKPOINTS = ROOT / "checkpoints"
MANIFEST = json.loads((CHECKPOINTS / "manifest.json").read_text())
SERVED = {
    "pointer-networks": [n for n in pointer_run.served_names() if not is_attention_model(n)],
    "attention-routing": [n for n in pointer_run.served_names() if is_attention_model(n)],
    "sparse-seq2seq": [
        *(name for names in seq2seq_run.SERVED.values() for name in names.values()),
        *seq2seq_run.COPY_SERVED.values(),
    ],
}


def results(source: str) -> dict:
    return json.loads((ROOT / "content" / "results" / f"{source}.json").read_text())


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    with TestClient(create_app()) as site:
        return {slug: site.get(f"/papers/{slug}/models").text for slug in SERVED}


def card_html(page: str, name: str) -> str:
    start = page.index(f'<section class="model-card" id="{name}"')
    end = page.find('<section class="model-card"', start + 1)
    return html.unescape(page[start : end if end != -1 else None])


@pytest.mark.parametrize("slug", sorted(SERVED))
def test_every_served_checkpoint_has_a_card(slug: str, pages: dict[str, str]) -> None:
    ids = re.findall(r'<section class="model-card" id="([^"]+)"', pages[slug])
    assert sorted(ids) == sorted(SERVED[slug])
    assert "widget-error" not in pages[slug]


@pytest.mark.parametrize("slug", sorted(SERVED))
def test_a_cards_training_numbers_are_the_manifests(slug: str, pages: dict[str, str]) -> None:
    for name in SERVED[slug]:
        entry, card = MANIFEST[name], card_html(pages[slug], name)
        assert entry["sha256"] in card and entry["command"] in card
        assert f"{entry['parameters']:,}" in card
        chain = [*ancestry(entry, CHECKPOINTS), entry]
        for run in chain:  # one row per run, with its steps and wall time
            assert f"<td>{run['steps']:,}</td>" in card, (name, run.get("checkpoint"))
            assert f"<td>{model_cards.minutes(run['wall_time_s'])}</td>" in card
        total = sum(run["steps"] for run in chain)
        assert f"{total:,} training steps in {len(chain)} run" in card


def test_the_rounds_of_a_replayed_model_read_from_its_lineage(pages: dict[str, str]) -> None:
    name = seq2seq_run.SERVED["inflection"][1.5]
    card = card_html(pages["sparse-seq2seq"], name)
    chain = [*reversed(ancestry(MANIFEST[name], CHECKPOINTS)), MANIFEST[name]]
    assert len(chain) > 2
    rows = re.findall(
        r"<tr><th scope=\"row\">(\d+)</th><td class=\"text-cell\"><code>([^<]+)", card
    )
    assert [checkpoint for _, checkpoint in rows] == [run.get("checkpoint", name) for run in chain]
    replay = chain[-1]["data"]["replay"]
    assert f"{replay['cells_wrong_before']:,} cells" in card


def test_a_cards_scores_are_its_rows_of_the_results(pages: dict[str, str]) -> None:
    """The served inflection model's row of inflection-full, and the served hull model's whole
    hull table, cell for cell."""
    inflection = results("seq2seq")["tables"]["inflection-full"]
    name = seq2seq_run.SERVED["inflection"][1.5]
    (row,) = [r for r in inflection["rows"] if (r[0], r[1]) == ("full + 8 replays", "1.5")]
    card = card_html(pages["sparse-seq2seq"], name)
    assert "".join(f"<td>{cell}</td>" for cell in row[1:]) in card
    hull = results("pointer")["tables"]["hull"]
    card = card_html(pages["pointer-networks"], pointer_run.SERVED["hull"][0])
    for row in hull["rows"]:
        assert "".join(f"<td>{cell}</td>" for cell in row[1:]) in card


def test_the_bindings_pick_only_the_checkpoints_own_rows() -> None:
    tables = results("seq2seq")["tables"]
    COPY = seq2seq_run.COPY_SERVED  # noqa: N806 (a table, as SERVED)
    for alpha, name in seq2seq_run.SERVED["translation"].items():
        found = model_cards.seq2seq_results("translation", name, MANIFEST[name], True, tables)
        copied = [("copy", [["generate only", f"{alpha:g}"]])] if alpha in COPY else []
        assert [(t.table_id, [r[:2] for r in t.rows]) for t in found] == [
            ("translation-live", [["big + replay", f"{alpha:g}"]]),
            *copied,
        ]
    for alpha, name in COPY.items():
        found = model_cards.seq2seq_results("translation", name, MANIFEST[name], False, tables)
        assert [(t.table_id, [r[:2] for r in t.rows]) for t in found] == [
            ("copy", [["copy", f"{alpha:g}"]])
        ]
    entmax = "pointer-sort-entmax15"
    found = model_cards.pointer_results(
        "sort", entmax, MANIFEST[entmax], False, results("pointer")["tables"]
    )
    assert [t.table_id for t in found] == ["sparse-pointer"]
    assert {row[0] for row in found[0].rows} == {"entmax15"}


def test_a_checkpoint_missing_from_the_manifest_is_named_not_carded() -> None:
    manifest = {k: v for k, v in MANIFEST.items() if k != "pointer-hull"}
    cards = model_cards.build_cards("pointer-networks", manifest, {}, CHECKPOINTS)
    assert "pointer-hull" not in {card.name for card in cards}
    assert model_cards.missing("pointer-networks", manifest) == ["pointer-hull"]


def test_every_board_links_to_its_models_card() -> None:
    with TestClient(create_app()) as site:
        for slug in ("pointer-networks", "attention-routing"):
            links = re.findall(
                r'class="pb-model-card" href="([^"#]+)#([^"]+)"', site.get(f"/papers/{slug}").text
            )
            assert links, slug
            for page, anchor in links:
                assert f'id="{anchor}"' in site.get(page).text, (slug, page, anchor)


def test_every_live_figure_links_to_its_card() -> None:
    answer = (ROOT / "templates/partials/seq2seq/result.html").read_text()
    assert 'href="/papers/sparse-seq2seq/models#{{ r.model.name }}"' in answer


def test_an_unknown_paper_has_no_cards() -> None:
    with TestClient(create_app()) as site:
        assert site.get("/papers/no-such-paper/models").status_code == 404


# --- the cards' computed words, on either side of each threshold ---------------------------------


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (None, "—"),
        (29, "0 min"),
        (3540, "59 min"),  # just under an hour: minutes only
        (3570, "1 h 00 min"),  # 59.5 minutes round to the hour
        (3600, "1 h 00 min"),
        (3660, "1 h 01 min"),
        (7260, "2 h 01 min"),
        (36000 + 59 * 60, "10 h 59 min"),
    ],
)
def test_wall_time_reads_in_minutes_below_an_hour_and_in_hours_from_it(
    seconds: float | None, shown: str
) -> None:
    assert model_cards.minutes(seconds) == shown


@pytest.mark.parametrize("slug", sorted(SERVED))
def test_a_cards_summary_counts_its_runs_in_the_right_number(
    slug: str, pages: dict[str, str]
) -> None:
    for name in SERVED[slug]:
        card = card_html(pages[slug], name)
        runs = len(ancestry(MANIFEST[name], CHECKPOINTS)) + 1
        words = "1 run," if runs == 1 else f"{runs} runs,"
        assert re.search(rf"training steps in {words} [^<]* of wall time in all\.", card), name
        assert ("This command runs the last step only" in card) is (runs > 1), name


@pytest.mark.parametrize(
    ("replay", "shown"),
    [
        (
            {"cells_wrong_before": 1234, "from": ["a"], "copies": 2},
            "1,234 cells that 1 earlier model got wrong, ×2 more",
        ),
        (
            {"cells_wrong_before": 1234, "from": ["a", "b", "c"], "copies": 4},
            "1,234 cells that 3 earlier models got wrong, ×4 more",
        ),
        (
            {"pairs_wrong_before": 56, "from": "a", "copies": 1},
            "56 pairs that 1 earlier model got wrong, ×1 more",
        ),
        (
            {"frequent_sources": 2000, "copies": 8, "how": "…"},
            "the 2,000 most frequent sources, ×8 more",
        ),
        (None, "—"),
    ],
)
def test_the_replay_column_says_cells_or_pairs_and_one_model_or_several(
    replay: dict | None, shown: str
) -> None:
    assert model_cards.replay_text({} if replay is None else {"replay": replay}) == shown


@pytest.mark.parametrize(
    ("name", "value", "shown"),
    [
        ("dev_accuracy", 0.955, "dev accuracy 95.5%"),  # a fraction: a percentage
        ("dev_accuracy", 1.0, "dev accuracy 100.0%"),  # exactly 1 is still a fraction
        ("dev_accuracy", 95.5, "dev accuracy 95.500"),  # already in percent: as it is
        ("greedy_gap", -0.004, "greedy gap -0.4%"),
        ("loss", 0.3, "loss 0.300"),  # not an accuracy, gap, area or failure rate
        ("examples", 12000, "examples 12,000"),
        ("decoder", "beam", "decoder beam"),
    ],
)
def test_a_metric_reads_as_a_percentage_only_when_it_is_a_fraction(
    name: str, value: object, shown: str
) -> None:
    assert model_cards.metric(name, value) == shown


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ([5, 5], "5"),
        ([5, 50], "5–50"),
        (["en", "de", "fr", "es"], "en, de, fr, es"),
        (["en", "de", "fr", "es", "it"], "5 pinned packages"),
        ({"train": 1200, "dev": 30}, "train 1,200 · dev 30"),
        (12345, "12,345"),
    ],
)
def test_a_data_field_reads_on_one_line(value: object, shown: str) -> None:
    assert model_cards.describe(value) == shown


def test_a_runs_batch_names_the_world_size_only_when_there_are_several_workers() -> None:
    entry = {"steps": 1000, "batch_size": 128, "optimizer": {"lr": 0.001}}
    assert model_cards.round_of(entry, "x").batch == "128"
    assert model_cards.round_of({**entry, "world_size": 4}, "x").batch == "4 × 128"
    assert model_cards.round_of({"steps": 1}, "x").batch == "—"
    assert model_cards.round_of(entry, "x").learning_rate == "0.001"


def test_the_differences_name_the_pointer_only_when_it_is_not_softmax() -> None:
    for name in SERVED["pointer-networks"]:
        entry = MANIFEST[name]
        rows = {aspect: ours for aspect, _, ours in model_cards.pointer_differences(entry)}
        pointer = entry["config"]["pointer"]
        assert ("pointer" in rows) is (pointer != "softmax"), name
        if pointer != "softmax":
            alpha = model_cards.MAPPINGS[pointer]
            assert rows["pointer"] == f"{pointer} (α = {alpha:g})"
            assert alpha > 1


def test_an_encoder_of_one_layer_is_singular() -> None:
    entry = MANIFEST[seq2seq_run.SERVED["inflection"][1.5]]
    for layers, words in ((1, "1 layer"), (2, "2 layers")):
        config = {**entry["config"], "encoder_layers": layers}
        what = dict(model_cards.seq2seq_what({**entry, "config": config}))
        assert what["encoder"] == f"bidirectional LSTM, {words}"


def test_the_copy_models_card_names_its_mechanism_and_its_parent(pages: dict[str, str]) -> None:
    """A copy model's card says how it copies and lists the generate-only rounds it was
    fine-tuned from before its own."""
    for name in seq2seq_run.COPY_SERVED.values():
        card = card_html(pages["sparse-seq2seq"], name)
        assert "one α-entmax over [vocabulary; source positions]" in card
        parent = MANIFEST[name]["init_from"]["checkpoint"]
        assert card.index(parent) < card.rindex(name)


def test_a_copy_model_that_cuts_numbers_from_symbols_says_so_on_its_card(
    pages: dict[str, str],
) -> None:
    for name in seq2seq_run.COPY_SERVED.values():
        split = MANIFEST[name]["config"].get("split_numbers", False)
        card = card_html(pages["sparse-seq2seq"], name)
        assert ("a piece that joins digits to other characters is cut" in card) is split, name
    assert MANIFEST[seq2seq_run.COPY_SERVED[1.5]]["config"]["split_numbers"] is True


def test_a_copy_model_that_follows_spans_says_so_on_its_card() -> None:
    from app.model_cards import seq2seq_what

    entry = dict(MANIFEST[seq2seq_run.COPY_SERVED[1.5]])
    for spans in (False, True):
        config = entry["config"] | {"copy_spans": spans}
        terms = dict(seq2seq_what(entry | {"config": config}))
        assert ("following a span" in terms) is spans
        if spans:
            assert "selective read" in terms["following a span"]
