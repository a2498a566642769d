"""The training slider's view (app/learning.py) on a run record built by hand: the slider's
steps and position, the caption, the log-spaced curve coordinates and the marker."""

from __future__ import annotations

import math

import pytest

from app import learning
from app.learning import HEIGHT, PAD, WIDTH, learning_view, polyline, x_of, y_of

RUN = {
    "steps": 100,
    "schedule_steps": 4000,
    "snapshots": [
        {"step": 0, "loss": None, "metrics": {"accuracy_n20": 0.0}},
        {"step": 9, "loss": 2.0, "metrics": {"accuracy_n20": 0.25}},
        {"step": 99, "loss": 0.5, "metrics": {"accuracy_n20": 0.75}},
    ],
}


@pytest.fixture
def run_record(monkeypatch: pytest.MonkeyPatch) -> None:
    def record(recipe: str) -> dict | None:
        assert recipe is not None, "a figure without a run reads no record"
        return {"pointer-sort": RUN, "pointer-hull": LONG, "seq2seq-translate-a1.5": BLEU}.get(
            recipe
        )

    monkeypatch.setattr(learning, "snapshot_record", record)


LONG = {  # every tick's step, and a snapshot whose record lacks the metric
    "steps": 3000,
    "schedule_steps": 40000,
    "snapshots": [
        {"step": step, "loss": None, "metrics": {} if step == 100 else {"accuracy_n50": 0.5}}
        for step in (0, 10, 100, 1000, 3000)
    ],
}


BLEU = {  # a metric that is no share: BLEU, drawn up to its best value
    "steps": 7000,
    "schedule_steps": 7000,
    "snapshots": [
        {"step": 0, "loss": None, "metrics": {"dev_bleu_greedy": 0.0}},
        {"step": 70, "loss": 3.0, "metrics": {"dev_bleu_greedy": 2.5}},
        {"step": 7000, "loss": 1.0, "metrics": {"dev_bleu_greedy": 12.5}},
    ],
}


def test_steps_are_spread_by_their_logarithm() -> None:
    assert x_of(0, 99) == PAD
    assert x_of(99, 99) == WIDTH - PAD
    assert x_of(9, 99) == round(PAD + (WIDTH - 2 * PAD) * math.log(10) / math.log(100), 2)
    assert x_of(0, 0) == PAD  # a run of one step does not divide by zero
    assert y_of(0.0, 1.0) == HEIGHT - PAD and y_of(1.0, 1.0) == PAD
    assert y_of(0.5, 2.0) == round(HEIGHT - PAD - (HEIGHT - 2 * PAD) / 4, 2)
    assert y_of(3.0, 0.0) == HEIGHT - PAD
    assert x_of(1, 99) == 79.78 and y_of(1 / 3, 1.0) == 77.33  # two decimals
    assert x_of(1, 1) == WIDTH - PAD
    assert polyline([(1, 2), (3.5, 4)]) == "1,2 3.5,4"


def test_the_view_of_a_snapshot_on_the_figure(run_record: None) -> None:
    view = learning_view("pointer-sort", 9)
    assert view is not None
    assert (view["steps"], view["index"], view["on"]) == ([0, 9, 99], 1, True)
    assert (view["run_steps"], view["schedule_steps"], view["recipe"]) == (
        100,
        4000,
        "pointer-sort",
    )
    assert view["caption"] == (
        "Step 9 of 100: training loss 2.000; 25% exactly sorted at n = 20 (validation)."
    )
    assert view["marker"] == {"x": x_of(9, 99), "y": y_of(0.25, 1.0)}
    assert view["metric_line"] == polyline(
        [
            (x_of(0, 99), y_of(0.0, 1.0)),
            (x_of(9, 99), y_of(0.25, 1.0)),
            (x_of(99, 99), y_of(0.75, 1.0)),
        ]
    )
    assert view["loss_line"] == polyline(
        [(x_of(9, 99), y_of(2.0, 2.0)), (x_of(99, 99), y_of(0.5, 2.0))]
    )
    assert view["ticks"] == [{"x": x_of(0, 99), "text": "0"}, {"x": x_of(99, 99), "text": "99"}]
    assert view["counted"] == "exactly sorted at n = 20" and view["size"] == (WIDTH, HEIGHT, PAD)
    first = learning_view("pointer-sort", 0)
    assert first is not None and first["caption"].startswith("Step 0 of 100: no step yet; 0%")


def test_the_view_without_a_snapshot_or_a_run(run_record: None) -> None:
    off = learning_view("pointer-sort", None)
    assert off is not None and not off["on"] and off["index"] == 2
    assert off["marker"] is None and off["caption"] is None
    unkept = learning_view("pointer-sort", 5)  # a step the run did not keep draws no marker
    assert unkept is not None and not unkept["on"]
    assert learning_view("pointer-tsp", 9) is None
    assert learning_view(None, 9) is None


def test_every_tick_and_a_missing_metric(run_record: None) -> None:
    view = learning_view("pointer-hull", 100)
    assert view is not None
    assert [t["text"] for t in view["ticks"]] == ["0", "10", "100", "1,000", "3,000"]
    assert view["loss_line"] == ""  # no snapshot has a loss yet
    assert view["marker"] == {"x": x_of(100, 3000), "y": HEIGHT - PAD}  # no metric: drawn at 0
    assert view["caption"] == (
        "Step 100 of 3,000: no step yet; 0% exact hulls at n = 50 (validation)."
    )
    assert f"{x_of(100, 3000)},{HEIGHT - PAD}" in view["metric_line"]


def test_a_bleu_curve_is_drawn_up_to_its_best_and_read_as_a_number(run_record: None) -> None:
    view = learning_view("seq2seq-translate-a1.5", 70)
    assert view is not None
    assert (
        view["caption"]
        == "Step 70 of 7,000: training loss 3.000; 2.5 dev BLEU (greedy) (validation)."
    )
    assert view["marker"] == {"x": x_of(70, 7000), "y": y_of(2.5, 12.5)}
    assert view["metric_line"].endswith(f"{x_of(7000, 7000)},{PAD}")  # the best at the top
    shares = learning_view("pointer-sort", 99)
    assert shares is not None and shares["marker"]["y"] == y_of(0.75, 1.0)  # shares: up to 1
