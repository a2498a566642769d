"""The widget renderer on its own (app/widgets/__init__.py, WidgetRenderer): what a provider is
given (the page's check and page), which renders are kept and under what key, how a state in the
page address reaches a figure, and the error box of a name or template that is not there."""

from __future__ import annotations

import logging
from datetime import date
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from jinja2 import ChoiceLoader, DictLoader, Environment, FileSystemLoader

from app import widgets
from app.compute import ComputeStopped
from app.content import WidgetCall
from app.widgets import (
    AddressState,
    PageFigure,
    PagePlan,
    WidgetEnv,
    WidgetRenderer,
    WidgetSpec,
    url_state,
)

ROOT = Path(__file__).resolve().parent.parent
PROBE = (
    "{{ widget }}:{{ seen }}{% if params.page_figure %}:{{ params.page_figure.tokens }}{% endif %}"
)


class Provider:
    """A context provider that counts its calls and keeps the env it was given."""

    def __init__(self) -> None:
        self.calls: list[tuple[dict[str, Any], WidgetEnv]] = []

    def __call__(self, params: dict[str, Any], env: WidgetEnv) -> dict[str, Any]:
        self.calls.append((dict(params), env))
        return {"seen": len(self.calls)}


@pytest.fixture
def renderer(tmp_path: Path) -> WidgetRenderer:
    loader = ChoiceLoader(
        [
            DictLoader(
                {"partials/widgets/probe.html": PROBE, "partials/widgets/bare.html": "bare"}
            ),
            FileSystemLoader(ROOT / "templates"),
        ]
    )
    registry = SimpleNamespace(version=lambda: "models-v1")
    return WidgetRenderer(Environment(loader=loader), WidgetEnv(tmp_path, registry))  # type: ignore[arg-type]


def use(monkeypatch: pytest.MonkeyPatch, **specs: WidgetSpec) -> None:
    monkeypatch.setattr(widgets, "WIDGETS", {spec.name: spec for spec in specs.values()})


def test_a_pure_widget_is_rendered_once_per_params_models_and_page(
    renderer: WidgetRenderer, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = Provider()
    use(monkeypatch, probe=WidgetSpec("probe", provider, pure=True))
    first = renderer(WidgetCall("probe", {"a": 1, "b": 2}))
    assert first == "probe:1"
    assert renderer(WidgetCall("probe", {"b": 2, "a": 1})) == first  # the same params
    on_a = PagePlan(page=SimpleNamespace(slug="a-page"))
    on_b = PagePlan(page=SimpleNamespace(slug="b-page"))
    assert renderer(WidgetCall("probe", {"a": 1, "b": 2}), None, on_a) == "probe:2"
    assert renderer(WidgetCall("probe", {"a": 1, "b": 2}), None, on_b) == "probe:3"
    assert renderer(WidgetCall("probe", {"a": 1, "b": 2}), None, on_a) == "probe:2"
    assert renderer(WidgetCall("probe", {"when": date(2026, 12, 7)})) == "probe:4"
    assert len(provider.calls) == 4


def test_a_provider_is_given_the_pages_check_and_page(
    renderer: WidgetRenderer, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = Provider()
    use(
        monkeypatch,
        probe=WidgetSpec("probe", provider),
        kept=WidgetSpec("kept", provider, pure=True),
    )
    monkeypatch.setitem(
        renderer.templates.loader.loaders[0].mapping, "partials/widgets/kept.html", PROBE
    )  # type: ignore[attr-defined]

    def check() -> None:
        pass

    page = SimpleNamespace(slug="the-page")
    plan = PagePlan(check=check, page=page)
    renderer(WidgetCall("probe", {}), None, plan)
    renderer(WidgetCall("kept", {}), None, plan)
    assert [(env.check, env.page) for _, env in provider.calls] == [(check, page), (check, page)]


def test_a_template_without_a_provider_renders_from_its_params(
    renderer: WidgetRenderer, monkeypatch: pytest.MonkeyPatch
) -> None:
    use(monkeypatch)
    assert renderer(WidgetCall("bare", {"x": 1})) == "bare"


def test_a_name_or_template_that_is_not_there_gets_an_error_box(
    renderer: WidgetRenderer, monkeypatch: pytest.MonkeyPatch
) -> None:
    use(monkeypatch)
    bad = renderer(WidgetCall("Bad Name!", {}, source="name: Bad Name!"))
    assert "<p>“Bad Name!” is not a widget name.</p>" in bad
    assert 'data-widget="Bad Name!"' in bad and "name: Bad Name!" in bad
    missing = renderer(WidgetCall("no-such-widget", {}))
    assert "<p>There is no widget called “no-such-widget”.</p>" in missing


def test_a_state_in_the_address_reaches_the_figure_priced(
    renderer: WidgetRenderer, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = Provider()

    def reader(params: dict[str, Any], env: WidgetEnv) -> AddressState:
        return AddressState(state=params["url_state"], tokens=2)

    use(
        monkeypatch,
        probe=WidgetSpec("probe", provider, url_keys=frozenset({"p-x"}), address=reader),
        bare=WidgetSpec("bare", None, url_keys=frozenset({"b-x"})),
    )
    # planned alone (no page plan): the figure's own allowance
    assert renderer(WidgetCall("probe", {}), {"p-x": "1"}) == "probe:1:2"
    assert provider.calls[-1][0]["url_state"] == {"p-x": "1"}
    # a page plan's figure is the one drawn
    call = WidgetCall("probe", {})
    planned = PageFigure(AddressState(state="s", tokens=3), "s", 3)
    assert renderer(call, {"p-x": "1"}, PagePlan({id(call): planned})) == "probe:2:3"
    # a widget with address keys but no reader gets its state, and no price
    assert renderer(WidgetCall("bare", {}), {"b-x": "1"}) == "bare"


def test_only_a_widgets_own_address_keys_are_its_state() -> None:
    spec = WidgetSpec("probe", url_keys=frozenset({"p-x", "p-y"}))
    assert url_state(spec, {"p-x": "1", "other": "2"}) == {"p-x": "1"}
    assert url_state(None, {"p-x": "1"}) == {}
    assert url_state(spec, None) == {} and url_state(spec, {}) == {}
    assert url_state(spec, {"p-y": "y" * 5000}) == {"p-y": "y" * widgets.MAX_URL_VALUE}


def test_a_failed_figure_is_not_kept_and_its_failure_is_logged(
    renderer: WidgetRenderer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[int] = []

    def flaky(params: dict[str, Any], env: WidgetEnv) -> dict[str, Any]:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("the first time")
        return {"seen": len(calls)}

    use(monkeypatch, probe=WidgetSpec("probe", flaky, pure=True))
    with caplog.at_level(logging.ERROR, logger="app.widgets"):
        failed = renderer(WidgetCall("probe", {"a": 1}))
    assert "The widget “probe” failed; the server log has the details." in failed
    assert [r.getMessage() for r in caplog.records] == ["widget probe failed with params {'a': 1}"]
    assert renderer(WidgetCall("probe", {"a": 1})) == "probe:2"  # tried again, then kept
    assert renderer(WidgetCall("probe", {"a": 1})) == "probe:2"


def test_a_figure_stopped_by_the_deadline_is_drawn_again_without_the_check(
    renderer: WidgetRenderer, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[Any, Any]] = []

    def slow(params: dict[str, Any], env: WidgetEnv) -> dict[str, Any]:
        seen.append((env.check, env.page))
        if env.check is not None:
            raise ComputeStopped(503, "over time")
        return {"seen": params["page_figure"].note}

    def reader(params: dict[str, Any], env: WidgetEnv) -> AddressState:
        return AddressState(state="s", tokens=1, asked="a long decode", noun="board")

    use(monkeypatch, probe=WidgetSpec("probe", slow, url_keys=frozenset({"p-x"}), address=reader))

    def check() -> None:
        pass

    page = SimpleNamespace(slug="the-page")
    html = renderer(WidgetCall("probe", {}), {"p-x": "1"}, PagePlan(check=check, page=page))
    assert html == (
        "probe:This link's a long decode did not finish in time while the page loaded: the "
        "board below shows the example.:0"
    )
    assert seen == [(check, page), (None, page)]
