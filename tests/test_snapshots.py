"""Watch it learn (models/snapshots.py, app/pointer/learning.py): the snapshot steps, the
compact weights, a rerun's record and its loading by name, the request's `snapshot` resolved
or refused, and, on the shipped snapshot runs, the board and the API decoding with them."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from fastapi.testclient import TestClient

from app.learning import learning_view
from app.main import create_app
from models import snapshots
from models.checkpoints import (
    CHECKPOINT_DIR,
    apply_snapshot,
    load_model,
    snapshot_entry,
    snapshot_record,
)
from models.errors import InvalidInput
from models.pointer_run import SERVED, SNAPSHOTS, resolve, snapshot_steps
from models.seq2seq_run import SNAPSHOTS as SEQ2SEQ_SNAPSHOTS

RECIPES = [*SNAPSHOTS.values(), *SEQ2SEQ_SNAPSHOTS.values()]
SHIPPED = {recipe: snapshot_record(recipe) for recipe in RECIPES}
needs_runs = pytest.mark.skipif(
    not all(SHIPPED.values()), reason="the snapshot runs are not in checkpoints/snapshots"
)


def test_snapshot_steps_start_at_zero_and_spread_log_wise() -> None:
    steps = snapshots.snapshot_steps(3000, 16)
    assert steps[0] == 0 and steps[-1] == 3000 and len(steps) == 16
    assert steps == sorted(set(steps))
    gaps = [b - a for a, b in zip(steps, steps[1:], strict=False)]
    assert gaps[0] < gaps[-1] / 100  # the early, fast changes get most of the snapshots
    assert snapshots.snapshot_steps(5, 16) == [0, 1, 2, 3, 4, 5]


def test_a_chain_of_snapshots_reads_back_within_half_a_step_of_each_change() -> None:
    """Each file holds a matrix row's change since the previous snapshot as read back, in 4-bit
    integers with a float16 scale; vectors as float16. Rounding does not add up along the run:
    every snapshot is within half a step of its own change's scale."""
    torch.manual_seed(0)
    shapes = {"w": (7, 5), "b": (5,), "e": (4, 3, 2)}
    trained = {name: torch.randn(shape) * 3 for name, shape in shapes.items()}
    read_back = {name: torch.zeros(shape) for name, shape in shapes.items()}
    for _ in range(6):
        kept = snapshots.encode(trained, read_back)
        assert kept["w"].dtype == torch.uint8 and kept["w"].shape == (7, 3)  # 5 columns, 2 a byte
        assert kept["b"].dtype == torch.float16 and set(kept) == {
            "w",
            "w.scale",
            "b",
            "e",
            "e.scale",
        }
        change = {n: (trained[n] - read_back[n]).reshape(shapes[n][0], -1) for n in ("w", "e")}
        read_back = apply_snapshot(read_back, kept)
        for name, rows in change.items():
            step = rows.abs().amax(dim=1) / snapshots.SNAPSHOT_LEVELS
            error = (read_back[name] - trained[name]).reshape(rows.shape).abs()
            assert (error <= step[:, None] * 0.51 + 1e-6).all()
            assert read_back[name].shape == trained[name].shape
        assert torch.allclose(read_back["b"], trained["b"], atol=1e-2)
        trained = {name: value + 0.05 * torch.randn_like(value) for name, value in trained.items()}


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A three-snapshot rerun of the sorting recipe in a folder of its own."""
    directory = tmp_path_factory.mktemp("checkpoints")
    snapshots.run("pointer-sort", 3, 3, directory / "snapshots")
    return directory


def test_a_rerun_records_its_snapshots_and_loads_them_by_name(tiny_run: Path) -> None:
    run = snapshot_record("pointer-sort", tiny_run / "snapshots")
    assert run is not None and run["steps"] == 3 and run["family"] == "pointer"
    assert [kept["step"] for kept in run["snapshots"]] == [0, 1, 3]
    assert run["snapshots"][0]["loss"] is None and run["snapshots"][2]["loss"] > 0
    assert "accuracy_n20" in run["snapshots"][2]["metrics"]
    model, entry = load_model("pointer-sort@3", tiny_run)
    assert entry["steps"] == 3 and entry["snapshot_of"] == "pointer-sort"
    first, _ = load_model("pointer-sort@0", tiny_run)
    changed = [
        not torch.equal(a, b)
        for a, b in zip(model.state_dict().values(), first.state_dict().values(), strict=True)
    ]
    assert any(changed)  # three steps of training moved the weights
    assert snapshot_entry("pointer-sort@2", tiny_run) is None
    assert snapshot_entry("pointer-hull@0", tiny_run) is None
    assert snapshot_entry("no name", tiny_run) is None


def test_a_snapshot_whose_file_changed_is_refused(tiny_run: Path, tmp_path: Path) -> None:
    import shutil

    copy = Path(shutil.copytree(tiny_run, tmp_path / "copy"))
    target = copy / "snapshots" / "pointer-sort" / "step-000001.safetensors"
    target.write_bytes(target.read_bytes()[:-1] + b"\0")
    with pytest.raises(ValueError, match="sha256"):
        load_model("pointer-sort@1", copy)


@needs_runs
def test_a_request_names_a_kept_step_or_is_told_which_exist() -> None:
    steps = snapshot_steps("hull")
    assert len(steps) >= 16 and steps[0] == 0
    assert resolve("hull", None, None, steps[5]) == (1.0, f"pointer-hull@{steps[5]}")
    with pytest.raises(InvalidInput, match="kept snapshots at steps 0, 1, "):
        resolve("hull", None, None, steps[-1] + 1)
    with pytest.raises(InvalidInput, match="kept no snapshots"):
        snapshots.named(None, 0, "tsp")
    with pytest.raises(InvalidInput, match="leave `model` out"):
        resolve("sort", None, "pointer-sort", 0)
    with pytest.raises(InvalidInput, match="trained at α = 1"):
        resolve("sort", 1.5, None, 0)


@pytest.fixture(scope="module")
def site() -> Iterator[TestClient]:
    with TestClient(create_app()) as client:
        # a snapshot's first load rebuilds its weights from the deltas: seconds on a busy
        # machine, past the 2 s compute deadline (tested in tests/test_hardening_requests.py)
        serving = client.app.state.serving
        client.app.state.serving = dataclasses.replace(serving, compute_deadline_s=60.0)
        yield client


@needs_runs
@pytest.mark.parametrize("task", sorted(SNAPSHOTS))
def test_the_api_and_the_board_decode_with_a_snapshot(site: TestClient, task: str) -> None:
    steps = snapshot_steps(task)  # type: ignore[arg-type]
    field, inputs = (
        ("values", [0.3, 0.9, 0.1, 0.6, 0.45])
        if task == "sort"
        else ("points", [[0.1, 0.1], [0.9, 0.15], [0.85, 0.9], [0.15, 0.8], [0.5, 0.5]])
    )
    listed = site.get("/api/pointer/models").json()
    assert next(t for t in listed if t["task"] == task)["snapshots"] == steps
    early, late = (
        site.post(f"/api/pointer/{task}", json={field: inputs, "snapshot": step}).json()
        for step in (steps[0], steps[-1])
    )
    assert early["model"]["name"] == f"{SNAPSHOTS[task]}@0"  # type: ignore[index]
    assert late["model"]["train_steps"] == steps[-1]
    assert early["steps"][0]["distribution"] != late["steps"][0]["distribution"]
    text = ";".join(f"{x},{y}" for x, y in inputs) if task != "sort" else "0.3,0.9,0.1,0.6,0.45"
    board = site.get(
        f"/api/pointer/{task}/board/{task}?{field}={text}&snapshot={steps[3]}",
        headers={"HX-Request": "true", "HX-Current-URL": "http://testserver/papers/x"},
    )
    assert f"Step {steps[3]:,} of" in board.text and 'id="pb-' in board.text
    assert f"{task}-snapshot={steps[3]}" in board.headers.get("HX-Replace-Url", "")
    off = site.get(f"/api/pointer/{task}/board/{task}?{field}={text}&snapshot=")
    assert off.status_code == 200
    assert off.json()["model"]["name"] == SERVED[task][0]  # type: ignore[index]  # the default


@needs_runs
def test_the_learning_view_marks_the_snapshot_on_the_board() -> None:
    steps = snapshot_steps("hull")
    view = learning_view("pointer-hull", steps[4])
    assert view is not None and view["on"] and view["index"] == 4 and view["marker"]
    assert view["caption"].startswith(f"Step {steps[4]:,} of ")
    off = learning_view("pointer-hull", None)
    assert off is not None and not off["on"] and off["marker"] is None
    assert learning_view(None, None) is None


@needs_runs
def test_the_shipped_runs_fit_their_storage_budget() -> None:
    """Issue 42: the snapshots add at most 40 MB to checkpoints/."""
    size = sum(p.stat().st_size for p in (CHECKPOINT_DIR / "snapshots").rglob("*") if p.is_file())
    assert size <= 40 * 2**20, size
    for recipe in RECIPES:
        run = json.loads((CHECKPOINT_DIR / "snapshots" / recipe / "snapshots.json").read_text())
        assert len(run["snapshots"]) >= 16


@needs_runs
def test_the_inflection_widget_decodes_with_a_snapshot(site: TestClient) -> None:
    """The reader's word through the α = 1.5 model's training: the API, the widget's figure
    (its caption names the step) and the page address; a comparison cannot watch one model."""
    steps = snapshots.kept_steps(SEQ2SEQ_SNAPSHOTS["inflection"])
    cell = {"lemma": "go", "language": "en", "features": "V;PST"}
    first, last = (
        site.post("/api/seq2seq/inflect", json={**cell, "snapshot": step}).json()
        for step in (steps[0], steps[-1])
    )
    assert first["model"]["name"] == f"seq2seq-inflect-full-a1.5@{steps[0]}"
    assert first["hypotheses"][0]["text"] != last["hypotheses"][0]["text"]
    refused = site.post("/api/seq2seq/inflect", json={**cell, "snapshot": steps[-1] + 1})
    assert refused.status_code == 422 and "kept snapshots at steps 0, 1" in refused.json()["detail"]
    query = f"lemma=go&language=en&features=V;PST&snapshot={steps[5]}"
    hx = {"HX-Request": "true", "HX-Current-URL": "http://testserver/papers/sparse-seq2seq"}
    figure = site.get(f"/api/seq2seq/inflect/figure?{query}", headers=hx)
    assert figure.status_code == 200 and f"Step {steps[5]:,} of" in figure.text
    assert f"inflect.snapshot={steps[5]}" in figure.headers["HX-Replace-Url"]
    both = site.get(f"/api/seq2seq/inflect/figure?{query}&compare=1", headers=hx)
    assert both.status_code == 422 and "Watching the model learn" in both.json()["detail"]
    page = site.get(f"/papers/sparse-seq2seq?inflect.snapshot={steps[5]}").text
    assert f"Step {steps[5]:,} of" in page and "data-learning-slider" in page


@needs_runs
def test_the_translation_widget_decodes_with_a_snapshot(site: TestClient) -> None:
    """The reader's sentence through the small α = 1.5 model's training; the copy model has no
    snapshots, so the two are refused together in a sentence."""
    steps = snapshots.kept_steps(SEQ2SEQ_SNAPSHOTS["translation"])
    options = site.get("/api/seq2seq/options").json()
    assert options["translation"]["snapshots"] == steps
    assert options["inflection"]["snapshots"] == snapshots.kept_steps(
        SEQ2SEQ_SNAPSHOTS["inflection"]
    )
    text = {"text": "Could not open the file."}
    first, last = (
        site.post("/api/seq2seq/translate", json={**text, "snapshot": step}).json()
        for step in (steps[0], steps[-1])
    )
    assert first["model"]["name"] == f"seq2seq-translate-a1.5@{steps[0]}"
    assert first["hypotheses"][0]["text"] != last["hypotheses"][0]["text"]
    copy = site.post(
        "/api/seq2seq/translate", json={**text, "snapshot": steps[-1], "copy_model": True}
    )
    assert copy.status_code == 422 and "leave `copy_model` out" in copy.json()["detail"]
    query = f"text=Could+not+open+the+file.&snapshot={steps[6]}"
    hx = {"HX-Request": "true", "HX-Current-URL": "http://testserver/papers/sparse-seq2seq"}
    figure = site.get(f"/api/seq2seq/translate/figure?{query}", headers=hx)
    assert figure.status_code == 200 and f"Step {steps[6]:,} of" in figure.text
    assert "dev BLEU (greedy)" in figure.text
    assert f"translate.snapshot={steps[6]}" in figure.headers["HX-Replace-Url"]
    page = site.get(f"/papers/sparse-seq2seq?translate.snapshot={steps[6]}").text
    assert f"Step {steps[6]:,} of" in page and page.count("data-learning-slider") == 2


def test_the_registry_keeps_the_most_recently_asked_snapshots_only(
    tiny_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Served models stay; snapshots beyond SNAPSHOTS_KEPT go, least recently asked first."""
    import shutil

    from app import registry as registry_module

    directory = Path(shutil.copytree(tiny_run, tmp_path / "checkpoints"))
    (directory / "manifest.json").write_text("{}")
    monkeypatch.setattr(registry_module, "SNAPSHOTS_KEPT", 2)
    registry_module.local_models(directory)  # registers the families' loaders
    models = registry_module.ModelRegistry(directory)
    first = models.get("pointer-sort@0")
    models.get("pointer-sort@1")
    assert models.get("pointer-sort@0") is first  # asked again: now the most recent
    models.get("pointer-sort@3")
    assert models.loaded() == ["pointer-sort@0", "pointer-sort@3"]
    assert models.get("pointer-sort@1") is not None  # loads again
    assert models.loaded() == ["pointer-sort@1", "pointer-sort@3"]


@needs_runs
def test_only_a_board_on_its_default_model_has_the_slider(site: TestClient) -> None:
    """The TSP board on the Pointer page decodes with the served default and offers the
    slider; the routing page's boards are pinned to a model, and a snapshot with a model is
    refused, so they offer none."""
    pointer = site.get("/papers/pointer-networks").text
    assert 'id="pointer-board-tsp-learning"' in pointer
    routing = site.get("/papers/attention-routing").text
    assert 'id="pointer-board-am"' in routing and 'id="pointer-board-lstm"' in routing
    assert "data-learning-slider" not in routing
    pinned = site.get(
        "/api/pointer/tsp/board/lstm?points=0.1,0.1;0.9,0.1;0.5,0.9;0.2,0.5&model=pointer-tsp",
        headers={"HX-Request": "true", "HX-Current-URL": "http://testserver/papers/x"},
    )
    assert pinned.status_code == 200 and "learning-figure" not in pinned.text


def test_a_snapshot_read_after_another_is_the_one_read_from_scratch(tiny_run: Path) -> None:
    """The loader starts from the run's last snapshot read back when it is earlier (a slider
    moving on); in any order the weights are those of reading every file from the first."""
    from models import checkpoints

    def weights(name: str) -> list[torch.Tensor]:
        return list(load_model(name, tiny_run)[0].state_dict().values())

    fresh = {}
    for name in ("pointer-sort@3", "pointer-sort@1", "pointer-sort@0"):
        checkpoints._last_read.clear()
        fresh[name] = weights(name)
    for name in ("pointer-sort@0", "pointer-sort@1", "pointer-sort@3", "pointer-sort@1"):
        assert all(torch.equal(a, b) for a, b in zip(weights(name), fresh[name], strict=True))
    folder = tiny_run / "snapshots" / "pointer-sort"
    step, sha, _ = checkpoints._last_read[folder]
    assert step == 1 and sha == snapshot_entry("pointer-sort@1", tiny_run)["sha256"]  # type: ignore[index]
