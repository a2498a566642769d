"""Bounded work per model request: how many model calls a worker runs at once, what a call
costs against the client's rate limit, how long it may compute, and stopping when the reader
has gone.

A route that runs a model takes `budget: ComputeBudget` (the `compute_budget` dependency) and wraps
the call in `model_call(request, budget, cost)`:

- the rate limiter charges `cost` tokens (one was taken at the door by app.limits.RateLimit):
  a beam-16 translation of 30 words costs as much as ~30 light requests;
- the worker's `ComputeGate` admits at most `max_concurrent` calls; one more is answered 503
  with `Retry-After` on the event loop at once, never queued and never given a thread, so a
  storm cannot pile up memory or latency;
- the decoder calls `budget.check` between steps: past the deadline (2 s by default) or once
  the client has disconnected, it raises `ComputeStopped` and the thread is free again.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, HTTPException, Request

# Work units (decoder steps × hypotheses, roughly) that cost one rate-limit token: a 5-point
# greedy hull or a 5-word greedy translation costs 1, the largest beam-16 requests ~25-32.
POINTER_WORK_PER_TOKEN = 64
TEXT_CHARS_PER_TOKEN = 100
# 503 answers for a full worker ask the client to come back after this many seconds.
BUSY_RETRY_AFTER_S = 1
# Status for a decode stopped because the client went away (nginx's name for it); nobody
# reads the answer, but the access log and metrics say what happened.
CLIENT_CLOSED = 499


class ComputeStopped(Exception):
    """Raised by `Budget.check` inside a decoder; carries the HTTP answer."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


@dataclass
class Budget:
    """One request's allowance: a deadline on the monotonic clock, and a flag the event loop
    sets when the client disconnects. `check` is safe to call from any thread."""

    deadline_s: float
    started: float = field(default_factory=time.monotonic)
    client_gone: threading.Event = field(default_factory=threading.Event)

    def check(self) -> None:
        if self.client_gone.is_set():
            raise ComputeStopped(CLIENT_CLOSED, "The client closed the connection.")
        if time.monotonic() - self.started > self.deadline_s:
            raise ComputeStopped(
                503,
                f"The model could not finish within {self.deadline_s:g} s; try a narrower "
                "beam, fewer inputs or a shorter text, or try again when the site is less busy.",
            )


class ComputeGate:
    """At most `max_concurrent` model calls in this worker; the next one is refused at once."""

    def __init__(self, max_concurrent: int) -> None:
        self.max_concurrent = max_concurrent
        self.in_flight = 0
        self._lock = threading.Lock()

    @contextmanager
    def admit(self) -> Iterator[None]:
        with self._lock:
            if self.in_flight >= self.max_concurrent:
                raise HTTPException(
                    503,
                    "The server is busy with other model requests; "
                    f"try again in {BUSY_RETRY_AFTER_S} s.",
                    headers={"Retry-After": str(BUSY_RETRY_AFTER_S)},
                )
            self.in_flight += 1
        try:
            yield
        finally:
            with self._lock:
                self.in_flight -= 1


async def compute_budget(request: Request) -> AsyncIterator[Budget]:
    """FastAPI dependency, run on the event loop before the route's thread is even asked for:
    a place in the worker's gate (503 at once when it is full: a refusal costs no thread), a
    fresh budget, and a watcher that sets `client_gone` when the server reports the client's
    disconnect. FastAPI has read the whole body before the dependencies run, so the watcher is
    the only reader of `receive`."""
    with request.app.state.compute_gate.admit():
        budget = Budget(deadline_s=request.app.state.serving.compute_deadline_s)
        watcher = asyncio.create_task(_watch_disconnect(request, budget))
        try:
            yield budget
        finally:
            watcher.cancel()


async def _watch_disconnect(request: Request, budget: Budget) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            budget.client_gone.set()
            return


# A route's parameter `budget: ComputeBudget` gets the request's budget.
ComputeBudget = Annotated[Budget, Depends(compute_budget)]


@contextmanager
def model_call(request: Request, budget: Budget, cost: int) -> Iterator[Budget]:
    """Charge the rate limit and run the block; a stop raised by `budget.check` inside becomes
    its HTTP answer. (The gate was passed in `compute_budget`.)"""
    limiter = request.app.state.rate_limiter
    if limiter is not None and cost > 1:
        client = request.client.host if request.client else "unknown"
        wait_s = limiter.acquire(client, tokens=cost - 1)
        if wait_s > 0:
            retry_after = max(1, math.ceil(wait_s))
            raise HTTPException(
                429,
                f"This request costs {cost} requests' worth of the rate limit and your address "
                f"has used its share; wait {retry_after} s, or ask for less (a narrower beam, "
                "fewer inputs, a shorter text).",
                headers={"Retry-After": str(retry_after)},
            )
    try:
        yield budget
    except ComputeStopped as stop:
        raise HTTPException(stop.status, stop.detail) from stop


def pointer_cost(inputs: int, hypotheses: int) -> int:
    """Tokens for a pointer decode over `inputs` points or values carrying `hypotheses`
    outputs at once (1 greedy, the beam width, or the number of samples)."""
    return max(1, math.ceil(inputs * hypotheses / POINTER_WORK_PER_TOKEN))


def text_cost(chars: int, beam_width: int) -> int:
    """Tokens for a seq2seq decode of `chars` characters with `beam_width` hypotheses: the
    source length bounds the output length, and each step runs the whole beam."""
    return max(1, math.ceil(chars * beam_width / TEXT_CHARS_PER_TOKEN))
