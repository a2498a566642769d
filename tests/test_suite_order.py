"""The order `make test` hands files to its workers (tests/conftest.py): the slowest first."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tests.conftest import SLOWEST_FILES, pytest_collection_modifyitems

TESTS = Path(__file__).parent


def test_every_listed_file_exists_once() -> None:
    """A renamed or deleted file would silently lose its early start."""
    assert len(set(SLOWEST_FILES)) == len(SLOWEST_FILES)
    assert [name for name in SLOWEST_FILES if not (TESTS / name).is_file()] == []


def test_listed_files_go_first_in_their_order_and_the_rest_keep_theirs() -> None:
    names = ["test_a.py", SLOWEST_FILES[1], "test_b.py", SLOWEST_FILES[0], "test_c.py"]
    items = [SimpleNamespace(fspath=str(TESTS / name), name=name) for name in names]
    pytest_collection_modifyitems(items)  # type: ignore[arg-type]
    assert [item.name for item in items] == [
        SLOWEST_FILES[0],
        SLOWEST_FILES[1],
        "test_a.py",
        "test_b.py",
        "test_c.py",
    ]
