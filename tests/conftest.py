"""Shared fixtures: the fixture papers and a TestClient over them.

Browser fixtures (live server, shared Chromium, tracked pages) live in tests/browser/conftest.py.
"""

from __future__ import annotations

import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.exceptions import StarletteDeprecationWarning

# Starlette's TestClient still wraps httpx and says so on import; the warning is not about us.
warnings.filterwarnings("ignore", category=StarletteDeprecationWarning)

from fastapi.testclient import TestClient  # noqa: E402

from app.main import create_app  # noqa: E402

FIXTURE_CONTENT = Path(__file__).parent / "fixtures" / "content"


@pytest.fixture
def fixture_content(tmp_path: Path) -> Path:
    """A writable copy of the fixture papers, for tests that edit or delete files."""
    target = tmp_path / "content"
    shutil.copytree(FIXTURE_CONTENT, target)
    return target


@pytest.fixture
def client() -> Iterator[TestClient]:
    """The site serving the fixture papers (see tests/fixtures/content)."""
    with TestClient(create_app(content_dir=FIXTURE_CONTENT)) as test_client:
        yield test_client
