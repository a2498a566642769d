"""Running a coroutine from a synchronous test, in any test process."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any


def run_on_own_loop(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """`coroutine`'s result, run on an event loop in a thread of its own: a worker that has run
    a browser test keeps Playwright's sync API, and with it a running event loop, in its main
    thread, where `asyncio.run` refuses to start another."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
