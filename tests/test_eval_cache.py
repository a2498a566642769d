"""The evaluations' per-checkpoint results: decoded once per sha256 and key, again after a
retraining, never for a checkpoint that is not there."""

from __future__ import annotations

import pytest

from models import eval_cache


@pytest.fixture
def manifest(monkeypatch, tmp_path):
    entries = {"model-a": {"sha256": "a" * 64, "steps": 120, "wall_time_s": 3.5}}
    monkeypatch.setattr(eval_cache, "read_manifest", lambda folder: entries)
    monkeypatch.setattr(eval_cache, "EVAL_DIR", tmp_path)
    return entries


def counting_decoder(calls: list[str], value: float):
    def decode() -> dict:
        calls.append("decoded")
        return {"score": value}

    return decode


def test_a_checkpoint_is_decoded_once_per_key(manifest, tmp_path):
    calls = []
    first = eval_cache.cached_results("fam", "model-a", "10-x", counting_decoder(calls, 1.5), "w")
    again = eval_cache.cached_results("fam", "model-a", "10-x", counting_decoder(calls, 9.0), "w")
    assert calls == ["decoded"]
    assert first == again
    assert first["score"] == 1.5
    assert first["entry"] == {
        "wall_time_s": 3.5,
        "size_bytes": None,
        "steps": 120,
        "sha256": "a" * 64,
    }
    assert first["seconds"] >= 0
    assert (tmp_path / "fam" / f"model-a-{'a' * 16}-10-x.json").exists()
    other = eval_cache.cached_results("fam", "model-a", "20-x", counting_decoder(calls, 2.0), "w")
    assert other["score"] == 2.0 and calls == ["decoded", "decoded"]


def test_a_retrained_checkpoint_is_decoded_again(manifest):
    calls = []
    eval_cache.cached_results("fam", "model-a", "k", counting_decoder(calls, 1.0), "w")
    manifest["model-a"] = {"sha256": "b" * 64}
    result = eval_cache.cached_results("fam", "model-a", "k", counting_decoder(calls, 2.0), "w")
    assert result["score"] == 2.0 and calls == ["decoded", "decoded"]


def test_a_checkpoint_that_is_not_trained_gives_none(manifest, capsys):
    calls = []
    assert eval_cache.cached_results("fam", "model-b", "k", counting_decoder(calls, 1), "w") is None
    assert calls == []
    assert "model-b: no checkpoint, skipped" in capsys.readouterr().err
