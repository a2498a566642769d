"""The one cache of model answers: the last few hundred, keyed by the checkpoints' version and the
request itself.

Stepping through a decode, replaying it, or rendering a page whose figure is its default asks
again for an answer computed a moment ago; a deterministic decode (every sampler is seeded) gives
the same trace, so the cache hands it back. The decode runs outside the lock: two threads asking
for the same new answer may both compute it, but no reader waits behind another's decode.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import asdict, is_dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from app.registry import ModelRegistry

T = TypeVar("T")
ANSWERS_KEPT = 256


def request_key(request: Any) -> Hashable:
    """A request's identity: its type and its fields (pydantic model or dataclass)."""
    if isinstance(request, BaseModel):
        fields = request.model_dump_json()
    elif is_dataclass(request):
        fields = json.dumps(asdict(request), sort_keys=True)
    else:
        raise TypeError(f"cannot key a {type(request).__name__}")
    return (type(request).__qualname__, fields)


class AnswerCache:
    def __init__(self, size: int = ANSWERS_KEPT) -> None:
        self.size = size
        self._answers: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, registry: ModelRegistry, request: Any, compute: Callable[[], T]) -> T:
        """`compute()`'s answer to `request`, or the one kept from a moment ago (same
        checkpoints: a training run that rewrites the manifest makes every key new)."""
        key = (registry.version(), request_key(request))
        with self._lock:
            if key in self._answers:
                self._answers.move_to_end(key)
                return self._answers[key]
        answer = compute()
        with self._lock:
            self._answers[key] = answer
            while len(self._answers) > self.size:
                self._answers.popitem(last=False)
        return answer


ANSWERS = AnswerCache()
