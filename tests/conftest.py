"""Shared fixtures: the fixture papers, a TestClient over them, and a tiny checkpoint folder;
the shipped models and reference files loaded once per test process (see below).

Browser fixtures (live server, shared Chromium, tracked pages) live in tests/browser/conftest.py.
"""

from __future__ import annotations

import gc
import os
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.exceptions import StarletteDeprecationWarning

# Starlette's TestClient still wraps httpx and says so on import; the warning is not about us.
warnings.filterwarnings("ignore", category=StarletteDeprecationWarning)

from fastapi.testclient import TestClient  # noqa: E402

from app.main import ROOT, create_app  # noqa: E402
from app.registry import ModelRegistry  # noqa: E402
from models import references  # noqa: E402
from models.checkpoints import (  # noqa: E402
    CHECKPOINT_DIR,
    build_model,
    save_checkpoint,
    verified_file,
)

FIXTURE_CONTENT = Path(__file__).parent / "fixtures" / "content"
SHIPPED_CHECKPOINTS = (ROOT / "checkpoints").resolve()


class FakeClock:
    """A stand-in for the `time` module of code that times itself: perf_counter returns the
    readings given, in order (monkeypatch a module's `time` with it)."""

    def __init__(self, *readings: float) -> None:
        self.readings = iter(readings)

    def perf_counter(self) -> float:
        return next(self.readings)


# ---- the shipped checkpoints, loaded once per test process ----
# Dozens of tests start an app over checkpoints/ and each start-up loads and verifies every
# model in the manifest (seconds). A test process (each xdist worker) loads a shipped model once
# and hands the same object to every later app, for as long as neither the manifest nor any of
# the model's files changes. Other folders (a test's temporary copy it may break, the tiny
# checkpoints) load as the app always does, and so does everything while mutmut has a mutant
# active (`make mutate`: a mutant in the loading code must meet the tests).
_shipped_models: dict[tuple[Any, ...], Any] = {}
_load_from_files = ModelRegistry._load


def _file_stamps(directory: Path, name: str) -> tuple[tuple[str, int, int], ...]:
    paths = [directory / "manifest.json", *sorted(directory.glob(f"{name}.*"))]
    stamps = []
    for path in paths:
        try:
            stat = path.stat()
        except OSError:
            stamps.append((path.name, -1, -1))
        else:
            stamps.append((path.name, stat.st_mtime_ns, stat.st_size))
    return tuple(stamps)


def _mutant_active() -> bool:
    return bool(os.environ.get("MUTANT_UNDER_TEST"))


def _load_shipped_once(registry: ModelRegistry, name: str) -> Any:
    directory = Path(registry.checkpoint_dir).resolve()
    if directory != SHIPPED_CHECKPOINTS or _mutant_active():
        return _load_from_files(registry, name)
    key = (name, _file_stamps(directory, name))
    if key not in _shipped_models:
        _shipped_models[key] = _load_from_files(registry, name)  # a failure is not kept
    return _shipped_models[key]


ModelRegistry._load = _load_shipped_once  # type: ignore[method-assign]


# A reference file (the inflection lexicon, a translation corpus: a second or two to decompress
# and parse) is read once per test process and content: a file that matches the sha256 of its
# manifest entry has exactly the content the entry names, wherever it lies (tests copy the
# shipped ones into their own folders). A missing or corrupt file fails as it always does.
_references: dict[tuple[Any, ...], Any] = {}
_read_reference = references.load_reference


def _load_reference_once(entry: dict, directory: Path = CHECKPOINT_DIR, *lookup: type) -> Any:
    if _mutant_active():
        return _read_reference(entry, directory, *lookup)
    verified_file(entry, directory)
    key = (entry.get("task"), entry.get("format"), entry.get("version"), entry["sha256"], *lookup)
    if key not in _references:
        _references[key] = _read_reference(entry, directory, *lookup)
    return _references[key]


references.load_reference = _load_reference_once


# ---- the order files run in ----
# `make test` hands whole files to its workers in collection order (--no-loadscope-reorder:
# xdist would put the files with the most tests first, and its last files were the slowest
# ones with few tests, run by one worker while the others had finished). The slowest files go
# first; a file not listed keeps its place after them. Measured by test time per file (s,
# three workers, 2 cores): the order matters, the numbers only roughly.
SLOWEST_FILES = (
    "browser/test_seq2seq_widget.py",  # 66
    "browser/test_accessibility.py",  # 65
    "browser/test_site.py",  # 54
    "test_proxy_metrics.py",  # 54
    "test_prices.py",  # 44
    "test_hardening_proxy.py",  # 40
    "test_fuzz_api.py",  # 40
    "browser/test_pointer_board.py",  # 38
    "test_entmax_reference_suite.py",  # 34
    "test_hostile_corpus.py",  # 33
    "test_inflection_full.py",  # 30
    "test_hardening_requests.py",  # 30
    "test_entmax.py",  # 28
    "test_api_seq2seq.py",  # 28
    "test_figure_export.py",  # 25
    "browser/test_pointer_dead_ends.py",  # 25
    "test_copy_translation.py",  # 24
    "browser/test_reading.py",  # 23
)


def pytest_configure(config: pytest.Config) -> None:
    """Compile the entmax kernels into numba's disk cache once, in the main process, before any
    worker starts. On a fresh clone the cache is empty, and otherwise each of the three workers
    and each live server the browser tests start would compile them at the same moment: six
    45-second compiles on two cores, which left every live server silent past its 60 s wait."""
    if not hasattr(config, "workerinput"):
        from models.entmax import warm_up

        warm_up()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tests = Path(__file__).parent
    rank = {name: place for place, name in enumerate(SLOWEST_FILES)}

    def place(item: pytest.Item) -> int:
        return rank.get(Path(item.fspath).relative_to(tests).as_posix(), len(rank))

    items.sort(key=place)  # stable: within a file, and among the others, nothing moves


@pytest.fixture(autouse=True)
def collectable_after_each_test() -> Iterator[None]:
    """An app's start-up freezes every live object out of the garbage collector's reach (see
    app.serving.freeze_start_up_objects): right for a worker, which keeps them for its life, but
    a test session starts hundreds of apps, and what one test froze would never be collected."""
    yield
    gc.unfreeze()


@pytest.fixture
def fixture_content(tmp_path: Path) -> Path:
    """A writable copy of the fixture papers, for tests that edit or delete files."""
    target = tmp_path / "content"
    shutil.copytree(FIXTURE_CONTENT, target)
    return target


@pytest.fixture(scope="session")
def client() -> Iterator[TestClient]:
    """The site serving the fixture papers (see tests/fixtures/content) with the shipped
    checkpoints: one per test process, for tests that only read from it."""
    with TestClient(create_app(content_dir=FIXTURE_CONTENT)) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def tiny_checkpoints(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A manifest with one small untrained sort model: serving and integrity, not accuracy."""
    import torch

    directory = tmp_path_factory.mktemp("checkpoints")
    torch.manual_seed(0)
    model = build_model("pointer", {"input_dim": 1, "hidden": 8})
    entry = {"family": "pointer", "task": "sort", "config": model.config_dict(), "steps": 0}
    save_checkpoint(model, "pointer-sort", entry, directory)
    return directory


@pytest.fixture
def checkpoints(tiny_checkpoints: Path, tmp_path: Path) -> Path:
    """A copy of `tiny_checkpoints` each test may break."""
    return Path(shutil.copytree(tiny_checkpoints, tmp_path / "checkpoints"))
