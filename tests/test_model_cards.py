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
    "sparse-seq2seq": [name for names in seq2seq_run.SERVED.values() for name in names.values()],
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
    for alpha, name in seq2seq_run.SERVED["translation"].items():
        found = model_cards.seq2seq_results("translation", name, MANIFEST[name], True, tables)
        assert [(t.table_id, [r[:2] for r in t.rows]) for t in found] == [
            ("translation-live", [["big + replay", f"{alpha:g}"]])
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
