"""`--init-from`: a run that starts from trained weights (a fine-tune) and says so."""

from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from models.checkpoints import ancestry, load_model, read_manifest
from models.train import train

TINY = "pointer-sort-tiny"


def _dirs(tmp_path: Path, name: str) -> list[str]:
    return ["--out", str(tmp_path / name), "--resume-dir", str(tmp_path / f"{name}-resume")]


def test_fine_tune_starts_from_the_given_weights(tmp_path: Path) -> None:
    parent = train([TINY, "--steps", "6", *_dirs(tmp_path, "parent")])
    weights = tmp_path / "parent" / f"{TINY}.safetensors"
    # a learning rate of 1e-12 leaves the weights where they started
    child = train(
        [TINY, "--steps", "1", "--lr", "1e-12", "--init-from", str(weights)]
        + _dirs(tmp_path, "child")
    )
    assert parent is not None and child is not None
    record = child["init_from"]
    assert record == {"checkpoint": TINY, "sha256": parent["sha256"]}  # a reference, not a copy
    assert read_manifest(tmp_path / "child")[TINY]["init_from"] == record
    assert ancestry(child, tmp_path / "parent") == [{"checkpoint": TINY, **parent}]
    before, after = load_file(weights), load_model(TINY, tmp_path / "child")[0].state_dict()
    for key, value in before.items():
        torch.testing.assert_close(after[key], value, atol=1e-9, rtol=0)


def test_a_fresh_run_records_no_init(tmp_path: Path) -> None:
    entry = train([TINY, "--steps", "1", *_dirs(tmp_path, "fresh")])
    assert entry is not None and entry["init_from"] is None


def test_weights_of_another_model_are_refused(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.safetensors"
    save_file({"embed.weight": torch.zeros(3, 3)}, wrong)
    with pytest.raises(SystemExit, match="does not fit"):
        train([TINY, "--steps", "1", "--init-from", str(wrong), *_dirs(tmp_path, "x")])
    with pytest.raises(SystemExit, match="no weights file"):
        train([TINY, "--steps", "1", "--init-from", str(tmp_path / "none.safetensors")])


def test_install_copies_a_run_into_the_checkpoint_directory(tmp_path: Path) -> None:
    from models.checkpoints import install_checkpoint

    entry = train([TINY, "--steps", "2", *_dirs(tmp_path, "run")])
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    installed = install_checkpoint(tmp_path / "run", TINY, shipped)
    assert entry is not None and installed["sha256"] == entry["sha256"]
    assert load_model(TINY, shipped)[1]["steps"] == 2
