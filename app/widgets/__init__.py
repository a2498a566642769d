"""Widgets: the named partials that ```widget blocks place into the prose.

A widget is `templates/partials/widgets/<name>.html`. If it needs data computed on the server
(a results table, a default figure from a trained model), a provider module (a family's
`app/<family>/widget.py`, or `app/widgets/results_table.py`, `app/widgets/try_this.py`)
registers a context provider for its name; templates never compute. A widget also declares the
scripts it needs (`needs`), so only pages that use plotly load plotly.

Whatever goes wrong inside one widget — unknown name, bad YAML, missing data, an exception —
renders a visible error box in its place; the page around it still renders.

A live figure's state in the page address (its `url_keys`) is priced before any work, for
every family in one place (`WidgetRenderer.plan`, below): the family's `address` reader
validates it with the figure's request model (`AddressState`), its `cost()` prices it, and
`allot` decides what the page render runs for it (`PageFigure`): the state itself when it fits
the figure's allowance and what is left of the page's, else its family's light request (a
pointer board: greedy) or the figure's example, with a sentence saying so and a button that
asks the API for the state. app/pages.py charges the plan's tokens through app.compute's door
(rate limit, gate, deadline, disconnect); a refused page draws every figure's example.
"""

from __future__ import annotations

import importlib
import json
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fastapi import HTTPException
from jinja2 import Environment, TemplateNotFound

from app.compute import CLIENT_CLOSED, ComputeStopped
from app.content import WidgetCall
from app.registry import ModelRegistry, without_paths

logger = logging.getLogger(__name__)

WIDGET_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")


class WidgetError(Exception):
    """Raised by a context provider with a sentence the reader sees in the error box,
    and, where one exists, the command that would fix it (e.g. the evaluation to run)."""

    def __init__(self, message: str, command: str | None = None) -> None:
        super().__init__(message)
        self.command = command


@dataclass(frozen=True)
class WidgetEnv:
    """What context providers may use: the results folder and the model registry; in a page
    render, `check` is the page's compute budget check (app.compute.Budget.check), which a
    provider passes to the model run of the address's state."""

    results_dir: Path
    registry: ModelRegistry
    check: Callable[[], None] | None = None
    # in a page render, the page the figures are on (app.figure_export.FigurePage): their
    # take-away blocks link and cite it
    page: Any = None


ContextProvider = Callable[[Mapping[str, Any], WidgetEnv], dict[str, Any]]


@dataclass(frozen=True)
class WidgetSpec:
    name: str
    context: ContextProvider | None = None
    # Library keys (see app.assets.SCRIPTS) or paths under static/, e.g. "js/board.js".
    needs: frozenset[str] = field(default_factory=frozenset)
    # True when the rendered widget depends only on its params and the trained models (not
    # on other files, such as results): its HTML is then computed once per distinct params
    # and reused until a training run rewrites checkpoints/manifest.json.
    pure: bool = False
    # Query parameters the widget's script writes to the page address (a shared figure);
    # the server render reads them too, as params["url_state"], so a shared link shows
    # the shared figure even without script.
    url_keys: frozenset[str] = field(default_factory=frozenset)
    # Reads a live figure's state from params["url_state"] before any work (AddressState);
    # every widget with url_keys that runs a model has one, and its provider draws what
    # params["page_figure"] (PageFigure) says.
    address: AddressReader | None = None


WIDGETS: dict[str, WidgetSpec] = {}


def register_widget(
    name: str,
    *,
    needs: Iterable[str] = (),
    pure: bool = False,
    url_keys: Iterable[str] = (),
    address: AddressReader | None = None,
) -> Callable[[ContextProvider], ContextProvider]:
    """Decorator: `@register_widget("pointer-board", needs={"plotly"})` on a provider.
    Pass `pure=True` if its output depends only on the params and the trained models, so it
    is rendered once (per params and manifest version), not on every request; `address`, the
    reader of its state in the page address (see AddressState), if it has `url_keys`."""

    def decorator(provider: ContextProvider) -> ContextProvider:
        keys = frozenset(url_keys)
        WIDGETS[name] = WidgetSpec(name, provider, frozenset(needs), pure, keys, address)
        return provider

    return decorator


# ---- a page render's figures: their states in the address, priced before any work ----

# What one figure's state may cost a page render, and all of a page's together, in tokens
# (app.compute). One figure: a greedy decode over the largest board (100 inputs, ~100 ms of
# CPU); a page: three of them. Measured by bench/prices.py and bench/page_gate.py.
PAGE_FIGURE_TOKENS = 4
PAGE_TOKENS = 12


@dataclass(frozen=True)
class AddressState:
    """One figure's state in the page address, read by its family before any work. `state`
    is the figure's request, validated by its request model (None when the address says
    nothing about the figure, or says something that does not validate: `problem` is then the
    sentence why), `tokens` its `cost()`. `light` is a lighter request for the same figure
    that a page may run instead (a pointer board: greedy), None if the family has none, and
    `light_tokens` its cost. In the reader's words: `asked`, what the state asks for ("beam
    search (width 16) over 100 inputs"); `shown`, what `light` is ("greedy decoding"); `run`,
    the label of the button that asks the API for the state; `noun`, what the figure draws;
    `unrun`, what it shows when the page runs nothing for the state."""

    state: Any = None
    tokens: int = 0
    problem: str | None = None
    light: Any = None
    light_tokens: int = 0
    asked: str = ""
    shown: str = ""
    run: str | None = None
    noun: str = "figure"
    unrun: str = "the example"  # what the figure shows when the page runs nothing for it


AddressReader = Callable[[Mapping[str, Any], WidgetEnv], AddressState]


@dataclass(frozen=True)
class PageFigure:
    """What a page render runs for one figure: `drawn`, the request decoded (the address's
    state, its light request, or None: the figure's example, an answer kept from an earlier
    render), `tokens` its price; `note`, the sentence shown with the figure when it is not the
    address's state, and `run`, the label of the button beside it (shown by script,
    static/js/hx-widgets.js) that sends the state the widget's controls hold to the API."""

    address: AddressState = field(default_factory=AddressState)
    drawn: Any = None
    tokens: int = 0
    note: str | None = None
    run: str | None = None

    def instead(self, note: str) -> PageFigure:
        """Nothing run in place of what was to be drawn (the figure shows `unrun`), with
        `note` saying why."""
        return replace(self, drawn=None, tokens=0, note=note, run=self.address.run)


def allot(address: AddressState, room: int) -> PageFigure:
    """What a page render runs for `address`, with `room` tokens left of the page's
    allowance: the state if it fits that and the figure's, else the light request if that
    fits, else nothing (the figure shows `unrun`); the sentence says which and why."""
    room = min(room, PAGE_FIGURE_TOKENS)
    if address.state is None:
        return PageFigure(address)
    if address.tokens <= room:
        return PageFigure(address, address.state, address.tokens)
    heavy = f"This link asks for {address.asked}, too heavy to run while the page loads: "
    light = address.light is not None
    if light and address.light_tokens <= room:
        note = f"{heavy}the {address.noun} below is {address.shown} instead."
        return PageFigure(address, address.light, address.light_tokens, note, address.run)
    if address.tokens <= PAGE_FIGURE_TOKENS or (
        light and address.light_tokens <= PAGE_FIGURE_TOKENS
    ):
        note = (
            f"This link asks for {address.asked}, more than the page can run while it loads "
            f"after its other figures: the {address.noun} below shows {address.unrun} instead."
        )
    else:
        note = f"{heavy}the {address.noun} below shows {address.unrun} instead."
    return PageFigure(address, None, 0, note, address.run)


def refused_note(address: AddressState, refusal: HTTPException) -> str:
    """Why a figure shows its example when the page's door refused its state."""
    retry = (refusal.headers or {}).get("Retry-After", "1")
    if refusal.status_code == 429:
        who = "Your address has used its share of model requests for now"
    else:
        who = "The server is busy with other model requests"
    return (
        f"{who}, so this link's {address.asked} did not run while the page loaded: the "
        f"{address.noun} below shows {address.unrun}. Reload the page in {retry} s to try again."
    )


def stopped_note(address: AddressState) -> str:
    """Why a figure shows its example when its state's decode ran out of time."""
    return (
        f"This link's {address.asked} did not finish in time while the page loaded: the "
        f"{address.noun} below shows {address.unrun}."
    )


@dataclass(frozen=True)
class PagePlan:
    """A page render's figures with state in the address (by the id of their WidgetCall) and
    the compute budget's check they run under."""

    figures: Mapping[int, PageFigure] = field(default_factory=dict)
    check: Callable[[], None] | None = None
    page: Any = None  # app.figure_export.FigurePage of the page rendered

    @property
    def tokens(self) -> int:
        """What the page render runs: the price app/pages.py charges at the door."""
        return sum(figure.tokens for figure in self.figures.values())

    def refused(self, refusal: HTTPException) -> PagePlan:
        """Every figure that would run its state draws its example instead, saying why."""
        figures = {
            key: figure.instead(refused_note(figure.address, refusal)) if figure.tokens else figure
            for key, figure in self.figures.items()
        }
        return replace(self, figures=figures)

    def under(self, check: Callable[[], None]) -> PagePlan:
        return replace(self, check=check)


PROVIDER_MODULES = (
    "app.entmax.widget",
    "app.pointer.widget",
    "app.routing.widget",
    "app.widgets.results_table",
    "app.seq2seq.widget",
    "app.widgets.try_this",
)
"""The modules that register widgets, each on import. They import this module, so
`load_providers` imports them when the app is built, not this module at its top."""


def load_providers() -> None:
    """Import every module of `PROVIDER_MODULES`, so their widgets are registered."""
    for name in PROVIDER_MODULES:
        importlib.import_module(name)


def widget_needs(calls: Iterable[WidgetCall]) -> set[str]:
    needs: set[str] = set()
    for call in calls:
        spec = WIDGETS.get(call.name)
        if spec is not None and call.error is None:
            needs |= spec.needs
    return needs


MAX_URL_VALUE = 2000  # characters of one query value a widget sees


def url_state(spec: WidgetSpec | None, query: Mapping[str, str] | None) -> dict[str, str]:
    if spec is None or not query:
        return {}
    return {key: query[key][:MAX_URL_VALUE] for key in sorted(spec.url_keys) if key in query}


@dataclass(frozen=True)
class WidgetRenderer:
    templates: Environment
    env: WidgetEnv
    _pure_cache: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def plan(self, calls: Iterable[WidgetCall], query: Mapping[str, str] | None) -> PagePlan:
        """What a page render of `calls` runs for the figures' states in `query`, each read
        and priced before any work, in page order, within PAGE_TOKENS."""
        figures: dict[int, PageFigure] = {}
        room = PAGE_TOKENS
        for call in calls:
            spec = WIDGETS.get(call.name)
            state = url_state(spec, query)
            if state and spec is not None and spec.address is not None and not call.error:
                figure = figures[id(call)] = self._allot(call, spec, state, room)
                room -= figure.tokens
        return PagePlan(figures)

    def _allot(
        self, call: WidgetCall, spec: WidgetSpec, state: dict[str, str], room: int
    ) -> PageFigure:
        assert spec.address is not None
        try:
            address = spec.address({**call.params, "url_state": state}, self.env)
        except Exception:  # the widget's own render says what is wrong (an error box)
            return PageFigure()
        return allot(address, room)

    def __call__(
        self, call: WidgetCall, query: Mapping[str, str] | None = None, page: PagePlan | None = None
    ) -> str:
        """The widget's HTML; `query` is the page address's query, for widgets with url_keys,
        and `page` the page render's plan for their states (PagePlan; without one, each figure
        is planned alone)."""
        spec = WIDGETS.get(call.name)
        state = url_state(spec, query)
        if state:  # addresses vary without bound, so these renders are never cached
            params: dict[str, Any] = {**call.params, "url_state": state}
            if spec is not None and spec.address is not None and not call.error:
                figure = page.figures.get(id(call)) if page is not None else None
                if figure is None:
                    figure = self._allot(call, spec, state, PAGE_FIGURE_TOKENS)
                params["page_figure"] = figure
            return self._render(replace(call, params=params), spec, page)[0]
        if spec is None or not spec.pure:
            return self._render(call, spec, page)[0]
        version = self.env.registry.version()
        # a default figure's take-away links its page by path (app/figure_export.py): the
        # page's slug is all of the address the cached HTML depends on
        where = page.page.slug if page is not None and page.page is not None else None
        key = json.dumps([call.name, call.params, version, where], sort_keys=True, default=str)
        cached = self._pure_cache.get(key)
        if cached is not None:
            return cached
        html, ok = self._render(call, spec, page)
        if ok:  # a failure may be transient; only good figures are kept
            self._pure_cache[key] = html
        return html

    def _render(
        self, call: WidgetCall, spec: WidgetSpec | None, page: PagePlan | None = None
    ) -> tuple[str, bool]:
        """The widget's HTML, and whether it rendered (False: an error box). A decode of the
        address's state stopped by `check` past the deadline draws the figure's example with
        a sentence; a client gone stops the page (ComputeStopped passes through)."""
        if call.error:
            return self.error(call, call.error), False
        if not WIDGET_NAME.fullmatch(call.name):
            return self.error(call, f"“{call.name}” is not a widget name."), False
        try:
            template = self.templates.get_template(f"partials/widgets/{call.name}.html")
        except TemplateNotFound:
            return self.error(call, f"There is no widget called “{call.name}”."), False
        env = self.env
        if page is not None:
            env = replace(env, check=page.check or env.check, page=page.page)
        try:
            context = dict(call.params)
            if spec is not None and spec.context is not None:
                context.update(spec.context(call.params, env))
            return template.render(widget=call.name, params=call.params, **context), True
        except ComputeStopped as stop:
            figure = call.params.get("page_figure")
            if stop.status == CLIENT_CLOSED or not isinstance(figure, PageFigure):
                raise
            figure = figure.instead(stopped_note(figure.address))
            call = replace(call, params={**call.params, "page_figure": figure})
            return self._render(call, spec, page and replace(page, check=None))
        except WidgetError as exc:
            return self.error(call, str(exc), exc.command), False
        except Exception:
            logger.exception("widget %s failed with params %r", call.name, call.params)
            message = f"The widget “{call.name}” failed; the server log has the details."
            return self.error(call, message), False

    def error(self, call: WidgetCall, message: str, command: str | None = None) -> str:
        template = self.templates.get_template("partials/widgets/_error.html")
        return template.render(
            message=without_paths(message),  # readers never see where the server keeps files
            command=command,
            source=call.source,
            widget=call.name,
            inline=call.inline,
        )
