"""The evaluations' results per checkpoint, kept under data/eval/<family>/ by the checkpoint's
sha256: a table is rebuilt in seconds when only one of its models changed, and a retrained
model (a new sha256) is always decoded again."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from models.checkpoints import CHECKPOINT_DIR, read_manifest

EVAL_DIR = Path(__file__).resolve().parent.parent / "data" / "eval"


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def cached_results(
    family: str, name: str, key: str, decode: Callable[[], dict], what: str
) -> dict | None:
    """`decode()`'s results for checkpoint `name`, from the cache when this sha256 and `key`
    (the test set and its size) were decoded before; None when `name` is not trained. `what`
    names the work in the log ("decoding the copy test set")."""
    entry = read_manifest(CHECKPOINT_DIR).get(name)
    if entry is None:
        log(f"{name}: no checkpoint, skipped")
        return None
    cache = EVAL_DIR / family / f"{name}-{entry['sha256'][:16]}-{key}.json"
    if cache.exists():
        return json.loads(cache.read_text())
    log(f"{name}: {what}")
    started = time.time()
    results = decode()
    results["seconds"] = round(time.time() - started, 1)
    results["entry"] = {k: entry.get(k) for k in ("wall_time_s", "size_bytes", "steps", "sha256")}
    log(f"{name}: done in {results['seconds']} s")
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(results, ensure_ascii=False))
    return results
