"""Which inflection models the live widgets run: the full setting's where the manifest has
them, the paper-protocol high ones otherwise (app.seq2seq_service.model_names decides)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import torch
from fastapi.testclient import TestClient

from app.main import create_app
from models.checkpoints import save_checkpoint
from models.seq2seq import Config, Seq2Seq
from models.tasks.inflection_vocab import InflectionVocab
from tests.test_api_seq2seq import SWIM, write_tiny_checkpoints


def served_names(checkpoint_dir: Path) -> dict[float, str]:
    with TestClient(create_app(checkpoint_dir=checkpoint_dir)) as client:
        names = {}
        for alpha in (1.0, 1.5, 2.0):
            response = client.post("/api/seq2seq/inflect", json={**SWIM, "alpha": alpha})
            assert response.status_code == 200, response.text
            names[alpha] = response.json()["model"]["name"]
        listed = client.get("/api/seq2seq/options").json()["inflection"]["models"]
    assert {o["alpha"]: o["name"] for o in listed} == names  # one place decides
    return names


def test_full_models_serve_where_present_and_high_ones_elsewhere(tmp_path: Path) -> None:
    write_tiny_checkpoints(tmp_path)
    assert served_names(tmp_path) == {
        1.0: "seq2seq-inflect-a1",
        1.5: "seq2seq-inflect-a1.5",
        2.0: "seq2seq-inflect-a2",
    }
    vocab = InflectionVocab.load(tmp_path)
    torch.manual_seed(1)
    config = Config(len(vocab.source), len(vocab.target), emb_dim=16, hidden=48, dropout=0.0)
    entry = {"family": "seq2seq", "task": "inflection", "config": asdict(config)}
    entry["data"] = {"setting": "full"}
    save_checkpoint(Seq2Seq(config), "seq2seq-inflect-full-a1.5", entry, tmp_path)
    assert served_names(tmp_path) == {
        1.0: "seq2seq-inflect-a1",
        1.5: "seq2seq-inflect-full-a1.5",
        2.0: "seq2seq-inflect-a2",
    }
    # a replay phase (models.recipes) supersedes the model it started from
    save_checkpoint(Seq2Seq(config), "seq2seq-inflect-full-a1.5-replay", entry, tmp_path)
    assert served_names(tmp_path)[1.5] == "seq2seq-inflect-full-a1.5-replay"
    # and the latest round supersedes the earlier ones, by number, not by spelling
    for name in ("seq2seq-inflect-full-a1.5-replay10", "seq2seq-inflect-full-a1.5-replay9"):
        save_checkpoint(Seq2Seq(config), name, entry, tmp_path)
    assert served_names(tmp_path)[1.5] == "seq2seq-inflect-full-a1.5-replay10"
