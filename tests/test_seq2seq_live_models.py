"""Which seq2seq models the live widgets and the API run: models.seq2seq_run.SERVED, written
once; start-up loads those and nothing else, and /readyz answers for them."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from app.main import ROOT, create_app
from models.checkpoints import read_manifest
from models.seq2seq_run import REFERENCES, SERVED, resolve, served_names
from tests.test_api_seq2seq import SENTENCE, SWIM, write_tiny_checkpoints


def test_every_task_and_alpha_is_answered_by_its_served_checkpoint(tmp_path: Path) -> None:
    write_tiny_checkpoints(tmp_path)
    with TestClient(create_app(checkpoint_dir=tmp_path)) as client:
        for task, path, body in (
            ("inflection", "inflect", SWIM),
            ("translation", "translate", SENTENCE),
        ):
            for alpha, name in SERVED[task].items():
                response = client.post(f"/api/seq2seq/{path}", json={**body, "alpha": alpha})
                assert response.status_code == 200, response.text
                assert response.json()["model"]["name"] == name
        options = client.get("/api/seq2seq/options").json()
        for task in SERVED:
            listed = {o["alpha"]: o["name"] for o in options[task]["models"]}
            assert listed == SERVED[task]  # one place decides


def test_a_manifest_model_that_is_not_served_never_answers(tmp_path: Path) -> None:
    """A table's model (paper protocol) loads only when the evaluation asks for it."""
    write_tiny_checkpoints(tmp_path)
    with TestClient(create_app(checkpoint_dir=tmp_path)) as client:
        loaded = set(client.app.state.registry.loaded())
        assert loaded == set(served_names())
        assert client.get("/readyz").json()["loaded"] == sorted(served_names())


def test_no_alpha_means_the_trained_default() -> None:
    assert resolve("inflection", None) == (1.5, SERVED["inflection"][1.5])
    assert resolve("translation", 2) == (2.0, SERVED["translation"][2.0])


def test_the_shipped_tree_has_every_served_checkpoint() -> None:
    manifest = read_manifest(ROOT / "checkpoints")
    for name in served_names():
        assert name in manifest, name
        assert (ROOT / "checkpoints" / manifest[name]["file"]).exists()
    assert set(REFERENCES.values()) <= set(manifest)
