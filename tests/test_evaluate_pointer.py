"""The TSP result tables: the reference each row is measured against is a solver's tour,
never our model's own."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from models import evaluate_pointer as ev
from models.tasks import tsp

FAKE_ENTRY = {
    "parameters": 1,
    "config": {"hidden": 8, "pointer": "softmax"},
    "steps": 1,
    "batch_size": 1,
    "instances_seen": 1,
    "wall_time_s": 60.0,
}


def gap(cell: str) -> float:
    """'6.135 (+6.11%)' → 6.11."""
    match = re.fullmatch(r"[0-9.]+ \(([+-][0-9.]+)%\)", cell)
    assert match, cell
    return float(match.group(1))


@pytest.fixture
def weak_solvers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Solvers that are easy to beat: the identity tour and unimproved nearest neighbour; the
    'model' answers with nearest neighbour improved by 2-opt, which is never longer."""
    monkeypatch.setattr(ev, "CACHE_DIR", tmp_path)
    monkeypatch.setattr(ev, "load_model", lambda name: (name, FAKE_ENTRY))  # a stand-in
    monkeypatch.setattr(
        ev, "solver_tours", lambda points, n: np.tile(np.arange(n), (len(points), 1))
    )
    monkeypatch.setattr(
        ev,
        "classical_tours",
        lambda points: {name: [tsp.nearest_neighbour(p) for p in points] for name in BASELINES},
    )

    def model_tours(model: object, points: np.ndarray) -> dict[str, list]:
        improved = [tsp.two_opt(p, tsp.nearest_neighbour(p)) for p in points]
        names = ("greedy", "beam", "beam shortest", "sample shortest")
        return dict.fromkeys(names, improved)

    monkeypatch.setattr(ev, "model_tours", model_tours)

    # the models compared with a served self-attention one: unimproved nearest neighbour
    def lstm_tours(model: object, points: np.ndarray) -> list:
        assert model in ev.COMPARED_TSP  # only they have their greedy tours asked for apart
        return [tsp.nearest_neighbour(p) for p in points]

    monkeypatch.setattr(ev, "greedy_tours", lstm_tours)


BASELINES = (
    "nearest neighbour",
    "farthest insertion",
    "2-opt",
    "christofides",
    "christofides 2-opt",
)


@pytest.mark.usefixtures("weak_solvers")
def test_tsp_reference_is_the_best_solver_tour_and_never_ours() -> None:
    tables = ev.tsp_tables(lambda task, n: 4)
    columns = tables["tsp"]["columns"]
    for row in tables["tsp"]["rows"]:
        n = int(row[0])
        points = ev._test_set("tsp", n, 4)
        solver_best = [
            min(tsp.tour_length(p, np.arange(n)), tsp.tour_length(p, tsp.nearest_neighbour(p)))
            for p in points
        ]
        exact = n <= tsp.HELD_KARP_MAX_N  # (here the stand-in solver is not exact)
        assert row[columns.index("reference")] == (ev.HELD_KARP if exact else ev.BEST_SOLVER_TOUR)
        assert float(row[columns.index("reference length")]) == pytest.approx(
            np.mean(solver_best), abs=5e-4
        )
        # the model beats these solvers; a reference that included its tours could not say so
        assert gap(row[columns.index("ours greedy")]) < 0


@pytest.mark.usefixtures("weak_solvers")
def test_baselines_table_reports_the_same_reference() -> None:
    tables = ev.tsp_tables(lambda task, n: 3)
    main_reference = {row[0]: row[3] for row in tables["tsp"]["rows"]}
    baselines = tables["tsp-baselines"]
    column = baselines["columns"].index("reference")
    assert {row[0]: row[column] for row in baselines["rows"]} == main_reference


def test_solver_reference_is_the_shortest_solver_tour_per_instance() -> None:
    lengths = {"a": np.array([3.0, 1.0, 2.0]), "b": np.array([2.0, 4.0, 2.5])}
    assert ev.solver_reference(lengths).tolist() == [2.0, 1.0, 2.0]


def test_exact_rows_use_held_karp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(ev, "CACHE_DIR", tmp_path)
    points = ev._test_set("tsp", 8, 3)
    tours = ev.solver_tours(points, 8)
    for p, tour in zip(points, tours, strict=True):
        assert tsp.tour_length(p, tour) == pytest.approx(tsp.tour_length(p, tsp.held_karp(p)))
    assert (tmp_path / "tsp-reference-n8-3.npz").exists()  # cached for the next run


def lineage_dir(tmp_path: Path, *runs: dict) -> Path:
    """A checkpoint directory whose lineage holds `runs`, each fine-tuned from the one before."""
    lineage, parent = {}, None
    for index, run in enumerate(runs):
        sha = f"{index:064x}"
        lineage[sha] = {"checkpoint": "pointer-tsp", "sha256": sha, **run, "init_from": parent}
        parent = {"checkpoint": "pointer-tsp", "sha256": sha}
    (tmp_path / "lineage.json").write_text(json.dumps(lineage))
    return tmp_path


def test_a_model_note_names_every_run_a_fine_tune_started_from(tmp_path: Path) -> None:
    directory = lineage_dir(
        tmp_path, {"steps": 4183, "wall_time_s": 4200.0}, {"steps": 13409, "wall_time_s": 4200.0}
    )
    entry = {**FAKE_ENTRY, "init_from": {"checkpoint": "pointer-tsp", "sha256": f"{1:064x}"}}
    assert ev._model_note(entry, checkpoint_dir=directory).endswith(
        "1 min on one CPU thread; pointer softmax. Those steps fine-tuned a model trained for "
        "13,409 steps (70 min), itself fine-tuned from one trained for 4,183 steps (70 min) before."
    )
    assert "fine-tuned" not in ev._model_note(
        {**entry, "init_from": None}, checkpoint_dir=directory
    )


def test_a_model_note_names_the_encoder_and_the_processes() -> None:
    assert "hidden 8, an LSTM encoder, 1 steps of batch 1 " in ev._model_note(FAKE_ENTRY)
    config = {"hidden": 8, "pointer": "softmax", "encoder": "attention", "encoder_layers": 3}
    entry = {**FAKE_ENTRY, "config": {**config, "heads": 8}, "batch_size": 64, "world_size": 2}
    note = ev._model_note(entry)
    assert "a self-attention encoder (3 layers, 8 heads), 1 steps of batch 128 " in note
    assert "1 min in all, its last launch on 2 processes of one CPU thread each" in note


def test_a_fine_tunes_note_names_its_loss_and_the_runs_before(tmp_path: Path) -> None:
    directory = lineage_dir(tmp_path, {"steps": 27000, "wall_time_s": 9660.0})
    parent = {"checkpoint": "pointer-tsp", "sha256": f"{0:064x}"}
    entry = {**FAKE_ENTRY, "init_from": parent, "data": {"loss": "REINFORCE on tour length"}}
    assert ev._model_note(entry, checkpoint_dir=directory).endswith(
        " Those steps (REINFORCE on tour length) fine-tuned a model trained for 27,000 steps "
        "(161 min) before."
    )
    assert "Those steps fine-tuned" in ev._model_note(
        {**entry, "data": {}}, checkpoint_dir=directory
    )


@pytest.mark.usefixtures("weak_solvers")
def test_the_encoders_table_compares_with_the_lstm_on_the_same_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert "tsp-encoders" not in ev.tsp_tables(lambda task, n: 3)  # an LSTM model is served
    attention = {**FAKE_ENTRY, "config": {**FAKE_ENTRY["config"], "encoder": "attention"}}
    attention["config"] |= {"encoder_layers": 3, "heads": 8}
    entries = {"pointer-tsp-attention": attention, ev.LSTM_TSP: FAKE_ENTRY}
    monkeypatch.setattr(ev, "load_model", lambda name: (name, entries[name]))
    monkeypatch.setattr(ev, "SERVED", {"tsp": ("pointer-tsp-attention",)})
    tables = ev.tsp_tables(lambda task, n: 3)
    main, encoders = tables["tsp"], tables["tsp-encoders"]
    assert [row[0] for row in encoders["rows"]] == [str(n) for n in ev.TSP_SIZES]
    for row, main_row in zip(encoders["rows"], main["rows"], strict=True):
        assert row[2] == main_row[main["columns"].index("reference length")]
        assert row[4] == main_row[main["columns"].index("ours greedy")]
        assert gap(row[3]) >= gap(row[4])  # nearest neighbour vs its 2-opt improvement
    assert encoders["note"].startswith("LSTM encoder: 1 parameters")
    assert " Self-attention encoder (the TSP table's model): 1 parameters" in encoders["note"]


@pytest.mark.usefixtures("weak_solvers")
def test_a_served_reinforce_model_is_set_beside_the_labels_only_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attention = {**FAKE_ENTRY, "config": {**FAKE_ENTRY["config"], "encoder": "attention"}}
    attention["config"] |= {"encoder_layers": 3, "heads": 8}
    reinforced = {**attention, "data": {"loss": "REINFORCE on tour length"}}
    entries = {"rl": reinforced, ev.LABELS_TSP: attention, ev.LSTM_TSP: FAKE_ENTRY}
    monkeypatch.setattr(ev, "load_model", lambda name: (name, entries[name]))
    monkeypatch.setattr(ev, "SERVED", {"tsp": ("rl",)})
    encoders = ev.tsp_tables(lambda task, n: 3)["tsp-encoders"]
    assert encoders["columns"][3:] == [
        "LSTM encoder, greedy",
        "self-attention encoder, labels only, greedy",
        "self-attention encoder + REINFORCE, greedy",
    ]
    assert all(len(row) == 6 for row in encoders["rows"])
    assert " Self-attention encoder + REINFORCE (the TSP table's model): " in encoders["note"]
