"""The model registry: trained models loaded once per process, keyed by checkpoint name.

`checkpoints/manifest.json` says which family each checkpoint belongs to; a family's loader
(registered with `register_loader`, by the module that knows how to build that model) turns the
checkpoint into a ready model. Routes get the registry as a FastAPI dependency
(`registry: Registry`); widget context providers get it through `WidgetEnv`.

A missing or corrupt checkpoint raises `ModelUnavailable` with a sentence for the reader; the
widget or endpoint that asked reports it, and the rest of the site keeps working.
"""

from __future__ import annotations

import importlib
import json
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, Request

from models.checkpoints import SNAPSHOT_NAME, CheckpointError, snapshot_entry

logger = logging.getLogger(__name__)

# (checkpoint_dir, checkpoint name, its manifest entry) -> a model ready for inference
Loader = Callable[[Path, str, dict[str, Any]], Any]

LOADERS: dict[str, Loader] = {}


def register_loader(family: str) -> Callable[[Loader], Loader]:
    """Decorator: `@register_loader("pointer")` on the function that loads that family."""

    def decorator(loader: Loader) -> Loader:
        LOADERS[family] = loader
        return loader

    return decorator


# An absolute path in an error message ("/srv/app/checkpoints/x.safetensors"): readers see
# the file's name only, never where the server keeps it.
# (A relative path such as content/results/x.json is left alone: it says where to look.)
ABSOLUTE_PATH = re.compile(r"(?<![\w.~-])(?:/[^/\s'\"]+)+/([^/\s'\"]+)")


def without_paths(message: str) -> str:
    """`message` with every absolute path cut to its file name."""
    return ABSOLUTE_PATH.sub(r"\1", message)


def public_reason(message: str) -> str:
    """A failure as readers may see it: absolute paths cut to the file name, no final period
    (the sentences that quote a reason add their own)."""
    return without_paths(message).strip().rstrip(".")


class ModelUnavailable(CheckpointError):
    """A model that cannot be served: not trained yet, corrupt, or of an unknown family.
    `reason` is safe to show to readers (see `public_reason`)."""

    def __init__(self, name: str, reason: str) -> None:
        reason = public_reason(reason)
        super().__init__(f"model “{name}” is unavailable: {reason}")
        self.name = name
        self.reason = reason

    @property
    def sentence(self) -> str:
        """What a reader is told, wherever the model was asked for: the API, a widget, a page."""
        return f"The model “{self.name}” is unavailable: {self.reason}."


class ManifestUnreadable(RuntimeError):
    """checkpoints/manifest.json is missing or is not a JSON object of model entries."""


# Training snapshots kept loaded ("<recipe>@<step>", models/snapshots.py): one slider's sweep
# and then some; beyond it the least recently asked one goes (it loads again in milliseconds).
SNAPSHOTS_KEPT = 20


class ModelRegistry:
    """Loads each model once and keeps it. A model that fails to load (missing file, sha256
    mismatch, unknown family) is disabled with one log line, and that failure is remembered
    until the manifest or the weights file changes: readers' requests neither re-hash a corrupt
    file nor repeat the log line, and a checkpoint that appears later (a training run
    finishing) is picked up without a restart."""

    def __init__(self, checkpoint_dir: Path, served: tuple[str, ...] = ()) -> None:
        self.checkpoint_dir = checkpoint_dir
        # what start-up loads and /readyz answers for: the families' SERVED tables (and the
        # reference files their verdicts read); any other manifest model (a results table's)
        # loads when something asks for it
        self.served = served
        self._models: dict[str, Any] = {}
        self._snapshots: OrderedDict[str, Any] = OrderedDict()  # least recently asked first
        self._failures: dict[str, tuple[tuple[int, ...], ModelUnavailable]] = {}
        self._lock = threading.Lock()
        self._manifest_logged: tuple[int, int] | None = None

    def manifest(self) -> dict[str, dict[str, Any]]:
        """The manifest's entries; {} when it is missing or invalid (logged once per change of
        the file, see `manifest_problem`)."""
        try:
            return self._read_manifest()
        except ManifestUnreadable as exc:
            if self._manifest_logged != self.version():
                self._manifest_logged = self.version()
                logger.error("no models can be served: %s", exc)
            return {}

    def manifest_problem(self) -> str | None:
        """Why the manifest cannot be used, as a sentence; None when it can."""
        try:
            self._read_manifest()
        except ManifestUnreadable as exc:
            return str(exc)
        return None

    def _read_manifest(self) -> dict[str, dict[str, Any]]:
        path = self.checkpoint_dir / "manifest.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ManifestUnreadable(
                "checkpoints/manifest.json is missing; train a model (python -m models.train "
                "<recipe>) or copy the checkpoints directory"
            ) from None
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise ManifestUnreadable(
                f"checkpoints/manifest.json cannot be read: {public_reason(str(exc))}"
            ) from None
        if not isinstance(data, dict) or not all(isinstance(e, dict) for e in data.values()):
            raise ManifestUnreadable("checkpoints/manifest.json is not an object of model entries")
        return data

    def get(self, name: str) -> Any:
        with self._lock:
            if name in self._models:
                return self._models[name]
            if name in self._snapshots:
                self._snapshots.move_to_end(name)
                return self._snapshots[name]
            fingerprint = self._fingerprint(name)
            failure = self._failures.get(name)
            if failure is not None and failure[0] == fingerprint:
                raise failure[1]
            try:
                model = self._load(name)
            except ModelUnavailable as exc:
                self._failures[name] = (fingerprint, exc)
                logger.error("model %s disabled: %s", name, exc.reason)
                raise
            self._failures.pop(name, None)
            if SNAPSHOT_NAME.fullmatch(name):
                self._snapshots[name] = model
                while len(self._snapshots) > SNAPSHOTS_KEPT:
                    self._snapshots.popitem(last=False)
            else:
                self._models[name] = model
            return model

    def _load(self, name: str) -> Any:
        entry = self.manifest().get(name) or snapshot_entry(name, self.checkpoint_dir)
        if entry is None:
            raise ModelUnavailable(
                name, f"no checkpoint yet (train it with: python -m models.train {name})"
            )
        loader = LOADERS.get(str(entry.get("family")))
        if loader is None:
            raise ModelUnavailable(name, f"no loader for family {entry.get('family')!r}")
        try:
            return loader(self.checkpoint_dir, name, entry)
        except Exception as exc:
            raise ModelUnavailable(name, str(exc) or type(exc).__name__) from exc

    def version(self) -> tuple[int, int]:
        """Changes whenever a training run writes the manifest; caches of figures drawn by
        trained models key on it."""
        try:
            stat = (self.checkpoint_dir / "manifest.json").stat()
        except OSError:
            return (-1, -1)
        return (stat.st_mtime_ns, stat.st_size)

    def _fingerprint(self, name: str) -> tuple[int, ...]:
        """Changes when the manifest or the model's weights file is written or removed."""
        stamps: list[int] = []
        for path in (
            self.checkpoint_dir / "manifest.json",
            self.checkpoint_dir / f"{name}.safetensors",
        ):
            try:
                stat = path.stat()
                stamps += [stat.st_mtime_ns, stat.st_size]
            except OSError:
                stamps += [-1, -1]
        return tuple(stamps)

    def warm(self) -> None:
        """Load every served model now (start-up), so no reader waits for a load; a model that
        fails is disabled and logged, and the others still load."""
        for name in self.served:
            try:
                self.get(name)
            except ModelUnavailable:
                pass

    def unavailable_reason(self, name: str) -> str | None:
        """None when `name` is loaded and verified (loading it now if it has to), else why
        it cannot be served: availability as the API will find it, not as the files suggest."""
        try:
            self.get(name)
        except ModelUnavailable as exc:
            return exc.reason
        return None

    def readiness(self) -> tuple[list[str], dict[str, str]]:
        """(loaded models, {unavailable model: reason}) over the served models."""
        loaded, unavailable = [], {}
        for name in sorted(self.served):
            reason = self.unavailable_reason(name)
            if reason is None:
                loaded.append(name)
            else:
                unavailable[name] = reason
        return loaded, unavailable

    def loaded(self) -> list[str]:
        return sorted([*self._models, *self._snapshots])


# the modules that register the families' loaders (register_loader), each on import
LOADER_MODULES = ("app.pointer.service", "app.seq2seq.service")


def local_models(checkpoint_dir: Path = Path("checkpoints")) -> Callable[[str], Any]:
    """What a script passes a family's `run` as `load`: the checkpoints loaded as the server
    loads them (the figures' "Run it yourself" snippets, app/figure_export.py)."""
    for module in LOADER_MODULES:
        importlib.import_module(module)
    return ModelRegistry(checkpoint_dir).get


async def get_registry(request: Request) -> ModelRegistry:
    """FastAPI dependency: the registry created by `create_app` (async: read on the event loop,
    so a route refused by the compute gate or the rate limit never waits for a thread)."""
    return request.app.state.registry


# The one way a route asks for the registry: `def route(registry: Registry)`.
Registry = Annotated[ModelRegistry, Depends(get_registry)]
