"""Widgets: the named partials that ```widget blocks place into the prose.

A widget is `templates/partials/widgets/<name>.html`. If it needs data computed on the server
(a results table, a default figure from a trained model), a provider module (a family's
`app/<family>/widget.py`, or `app/widgets/results_table.py`, `app/widgets/try_this.py`)
registers a context provider for its name; templates never compute. A widget also declares the
scripts it needs (`needs`), so only pages that use plotly load plotly.

Whatever goes wrong inside one widget — unknown name, bad YAML, missing data, an exception —
renders a visible error box in its place; the page around it still renders.
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

from jinja2 import Environment, TemplateNotFound

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
    """What context providers may use: the results folder and the model registry."""

    results_dir: Path
    registry: ModelRegistry


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


WIDGETS: dict[str, WidgetSpec] = {}


def register_widget(
    name: str, *, needs: Iterable[str] = (), pure: bool = False, url_keys: Iterable[str] = ()
) -> Callable[[ContextProvider], ContextProvider]:
    """Decorator: `@register_widget("pointer-board", needs={"plotly"})` on a provider.
    Pass `pure=True` if its output depends only on the params and the trained models, so it
    is rendered once (per params and manifest version), not on every request."""

    def decorator(provider: ContextProvider) -> ContextProvider:
        WIDGETS[name] = WidgetSpec(name, provider, frozenset(needs), pure, frozenset(url_keys))
        return provider

    return decorator


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

    def __call__(self, call: WidgetCall, query: Mapping[str, str] | None = None) -> str:
        """The widget's HTML; `query` is the page address's query, for widgets with url_keys."""
        spec = WIDGETS.get(call.name)
        state = url_state(spec, query)
        if state:  # addresses vary without bound, so these renders are never cached
            call = replace(call, params={**call.params, "url_state": state})
            return self._render(call, spec)[0]
        if spec is None or not spec.pure:
            return self._render(call, spec)[0]
        version = self.env.registry.version()
        key = json.dumps([call.name, call.params, version], sort_keys=True, default=str)
        cached = self._pure_cache.get(key)
        if cached is not None:
            return cached
        html, ok = self._render(call, spec)
        if ok:  # a failure may be transient; only good figures are kept
            self._pure_cache[key] = html
        return html

    def _render(self, call: WidgetCall, spec: WidgetSpec | None) -> tuple[str, bool]:
        """The widget's HTML, and whether it rendered (False: an error box)."""
        if call.error:
            return self.error(call, call.error), False
        if not WIDGET_NAME.fullmatch(call.name):
            return self.error(call, f"“{call.name}” is not a widget name."), False
        try:
            template = self.templates.get_template(f"partials/widgets/{call.name}.html")
        except TemplateNotFound:
            return self.error(call, f"There is no widget called “{call.name}”."), False
        try:
            context = dict(call.params)
            if spec is not None and spec.context is not None:
                context.update(spec.context(call.params, self.env))
            return template.render(widget=call.name, params=call.params, **context), True
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
