"""The dense vs sparse TSP table (models/evaluate_pointer.py, `--tables sparse-tsp`), on the
shipped softmax TSP weights read once as softmax and once with a 1.5-entmax pointer (the
mapping has no parameters), so it runs before the sparse model is trained."""

from __future__ import annotations

from pathlib import Path

import pytest

import models.evaluate_pointer as ev
from app.main import ROOT
from models.checkpoints import load_model, read_manifest
from models.pointer import Config, PointerNet

SHIPPED = ROOT / "checkpoints"


@pytest.fixture
def both_pointers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if "pointer-tsp" not in read_manifest(SHIPPED):
        pytest.skip("needs the shipped TSP checkpoint")
    dense, entry = load_model("pointer-tsp", SHIPPED)
    sparse = PointerNet(Config(**{**entry["config"], "pointer": "entmax15"}))
    sparse.load_state_dict(dense.state_dict())
    sparse_entry = {**entry, "config": {**entry["config"], "pointer": "entmax15"}}
    models = {"pointer-tsp": (dense, entry), "pointer-tsp-entmax15": (sparse, sparse_entry)}
    monkeypatch.setattr(ev, "load_model", lambda name: models[name])
    monkeypatch.setattr(ev, "CACHE_DIR", tmp_path)


def test_sparse_tsp_table(both_pointers: None) -> None:
    table = ev.sparse_tsp_table(lambda task, n: 4)
    columns = table["columns"]
    assert len(table["rows"]) == 4 and all(len(row) == len(columns) for row in table["rows"])
    by_pointer = {(row[0], row[1]): row for row in table["rows"]}
    assert set(by_pointer) == {
        ("softmax", "10"),
        ("softmax", "20"),
        ("entmax15", "10"),
        ("entmax15", "20"),
    }
    support = columns.index("mean support size")
    distinct = columns.index(f"different tours in {ev.SAMPLES} samples")
    for n in ("10", "20"):
        dense, sparse = by_pointer[("softmax", n)], by_pointer[("entmax15", n)]
        # softmax gives every open city some probability; entmax gives most of them zero
        assert float(sparse[support]) < float(dense[support])
        assert 1 <= float(sparse[distinct]) <= float(dense[distinct]) <= ev.SAMPLES
        for row in (dense, sparse):
            greedy = float(row[columns.index("greedy (gap to reference)")].split()[0])
            best = float(row[columns.index(f"best of {ev.SAMPLES} samples")].split()[0])
            assert best <= greedy + 1e-9  # on four fixed instances
