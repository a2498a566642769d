"""Bounded work per model request: what a call costs, how much model work a worker runs at
once, how long a call may compute, and stopping when the reader has gone.

A route that runs a model takes `budget: Annotated[Budget, Depends(compute_budget(schema))]` and
runs the model inside `stops_answered(budget)`, passing `budget.check` down:

- the request's `cost()` (a PricedRequest) prices it in rate-limit tokens by its size, about
  40 ms of compute each (a beam-16 translation of 200 characters costs 32, 256 samples over 100
  points 81, a 5-point greedy hull 1); the client's rate limit is charged that much;
- the worker's `ComputeGate` holds at most `compute_capacity` tokens of work in flight; a call
  that does not fit gets 503 with `Retry-After` on the event loop at once, never queued and
  never given a thread, so a storm cannot pile up memory or latency, while light calls from
  other readers still fit beside a heavy one;
- the decoder calls `budget.check` between steps: past the deadline (2 s by default) or once
  the client has disconnected, it raises `ComputeStopped` and the thread is free again.

A page render whose address holds figures' states goes through the same door with
`page_budget` (app/pages.py): the tokens its figures will run (app.widgets'
`WidgetRenderer.plan`), the same rate limit, gate, deadline and disconnect watch; a refusal
comes back to the page instead of being raised, and the page answers it with its figures'
examples (no model work).

bench/prices.py measures every endpoint's heaviest allowed request against its price and
tests/test_prices.py keeps them in line: on this 2-core machine a token is 2-40 ms of CPU time
(7 for seq2seq, 25 for a greedy pointer decode, 2 for 256 samples over a hull), the 40 ms being
wall time at a load average of about 9.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Literal

from fastapi import HTTPException, Request
from pydantic import BaseModel

from app.limits import release_free_memory

# A token is about 40 ms of one core. Calibrated here (load average ≈ 9 on 2 cores): a pointer
# decode takes ~1.2 ms per input plus ~0.11 ms per input per hypothesis it carries (greedy 1,
# beam width, samples), so 100 points cost 122 ms greedy, 310 ms with beam 16, 2.5 s with 256
# samples; a beam-16 translation of 200 characters takes ~1.35 s.
POINTER_BASE_HYPOTHESES = 10  # an input's fixed cost, in hypotheses
POINTER_WORK_PER_TOKEN = 330  # inputs × hypotheses per token
TEXT_CHARS_PER_TOKEN = 100  # characters × beam width per token
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

    @property
    def headers(self) -> dict[str, str]:
        """A 503 (over time) says when to come back, as every 503 here does."""
        return {"Retry-After": str(BUSY_RETRY_AFTER_S)} if self.status == 503 else {}


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


TRIM_EVERY_S = 1.0  # at most one malloc_trim per second, when the gate falls idle


class ComputeGate:
    """At most `capacity` tokens of model work in flight in this worker (a call costs what it
    costs against the rate limit): many light calls at once, or a couple of the largest. A
    call that does not fit is refused at once; one larger than the whole capacity runs when
    nothing else does."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.in_flight = 0
        self._lock = threading.Lock()
        self._trimmed_at = 0.0

    @contextmanager
    def admit(self, tokens: int = 1) -> Iterator[None]:
        with self._lock:
            if self.in_flight and self.in_flight + tokens > self.capacity:
                raise HTTPException(
                    503,
                    "The server is busy with other model requests; "
                    f"try again in {BUSY_RETRY_AFTER_S} s.",
                    headers={"Retry-After": str(BUSY_RETRY_AFTER_S)},
                )
            self.in_flight += tokens
        try:
            yield
        finally:
            with self._lock:
                self.in_flight -= tokens
                idle = self.in_flight == 0 and time.monotonic() - self._trimmed_at > TRIM_EVERY_S
                if idle:
                    self._trimmed_at = time.monotonic()
            if idle:  # the last call of a burst: give its freed memory back
                release_free_memory()


class PricedRequest(BaseModel):
    """A request that knows its price: `cost()` is its tokens (about 40 ms of one core each),
    computed from the validated fields. Every route that runs a model takes one."""

    def cost(self) -> int:
        raise NotImplementedError


Source = Literal["body", "query"]


def query_fields(request: Request) -> dict[str, str | list[str]]:
    """The query as the route's request model reads it: a key given more than once is a list
    (`points=0.1,0.2&points=0.8,0.1`), so the price counts every value the route will get."""
    fields: dict[str, list[str]] = {}
    for key, value in request.query_params.multi_items():
        fields.setdefault(key, []).append(value)
    return {key: values[0] if len(values) == 1 else values for key, values in fields.items()}


def compute_budget(
    schema: type[BaseModel],
    source: Source = "body",
    extra: Callable[[Request], int] = lambda request: 0,
) -> Callable[[Request], AsyncIterator[Budget]]:
    """A FastAPI dependency for a route that takes `schema` from the JSON body or the query
    string, run on the event loop before the route gets a thread: it prices the request with
    its `cost()` (a request model that runs no model costs the door's one token) plus what
    `extra` adds for the route (an export's rasterising), charges the client's rate limit,
    takes that many tokens in the worker's gate (refusals are answered at once and cost no
    thread), and yields a fresh budget with a watcher that sets `client_gone` when the server
    reports the client's disconnect."""

    async def price(request: Request) -> int:
        try:
            if source == "body":
                parsed = schema.model_validate_json(await request.body())
            else:
                parsed = schema.model_validate(query_fields(request))
        except ValueError:  # FastAPI answers it with a 422 right after the dependencies
            return 1
        return (parsed.cost() if isinstance(parsed, PricedRequest) else 1) + extra(request)

    return priced_budget(price)


def priced_budget(
    price: Callable[[Request], Awaitable[int]],
) -> Callable[[Request], AsyncIterator[Budget]]:
    """`compute_budget` with the request's tokens from `price`."""

    async def dependency(request: Request) -> AsyncIterator[Budget]:
        tokens = await price(request)
        with _admitted(request, tokens, door=1) as budget:
            yield budget

    return dependency


@contextmanager
def _admitted(request: Request, tokens: int, door: int) -> Iterator[Budget]:
    """Charge the rate limit, take `tokens` in the gate, and hold a fresh budget with its
    disconnect watcher until the block ends; 429/503 (HTTPException) when refused. Runs on the
    event loop (the watcher is a task of it)."""
    _charge(request, tokens, door)
    with request.app.state.compute_gate.admit(tokens):
        budget = Budget(deadline_s=request.app.state.serving.compute_deadline_s)
        # FastAPI has read the whole body by now: the watcher is the only reader left.
        watcher = asyncio.create_task(_watch_disconnect(request, budget))
        try:
            yield budget
        finally:
            watcher.cancel()


@asynccontextmanager
async def page_budget(request: Request, tokens: int) -> AsyncIterator[Budget | HTTPException]:
    """The API's door for a page render that runs `tokens` of model work for the figures'
    states in its address (pages are not charged at app.limits.RateLimit, so every token is
    charged here): the budget to render under, or the refusal (429 or 503, its sentence and
    Retry-After) when the client's rate or the worker's gate has no room; the page then draws
    its figures' examples and answers with the refusal's status. A page with nothing to run
    takes no token, no room in the gate and no watcher."""
    deadline_s = request.app.state.serving.compute_deadline_s
    if tokens <= 0:
        yield Budget(deadline_s=deadline_s)
        return
    with ExitStack() as stack:
        admitted: Budget | HTTPException
        try:
            admitted = stack.enter_context(_admitted(request, tokens, door=0))
        except HTTPException as refusal:
            admitted = refusal
        yield admitted


def _charge(request: Request, tokens: int, door: int) -> None:
    """The door (app.limits.RateLimit, on /api/*) took `door` tokens; take the rest of the
    request's cost."""
    limiter = request.app.state.rate_limiter
    if limiter is None or tokens <= door:
        return
    client = request.client.host if request.client else "unknown"
    wait_s = limiter.acquire(client, tokens=tokens - door)
    if wait_s > 0:
        retry_after = max(1, math.ceil(wait_s))
        raise HTTPException(
            429,
            f"This request costs {tokens} requests' worth of the rate limit and your address "
            f"has used its share; wait {retry_after} s, or ask for less (a narrower beam, "
            "fewer inputs, a shorter text).",
            headers={"Retry-After": str(retry_after)},
        )


async def _watch_disconnect(request: Request, budget: Budget) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            budget.client_gone.set()
            return


@contextmanager
def stops_answered(budget: Budget) -> Iterator[Budget]:
    """Run a model call; a stop raised by `budget.check` inside becomes its HTTP answer."""
    try:
        yield budget
    except ComputeStopped as stop:
        raise HTTPException(stop.status, stop.detail, headers=stop.headers) from stop


def pointer_cost(inputs: int, hypotheses: int) -> int:
    """Tokens for a pointer decode over `inputs` points or values carrying `hypotheses`
    outputs at once (1 greedy, the beam width, or the number of samples)."""
    work = inputs * (POINTER_BASE_HYPOTHESES + hypotheses)
    return max(1, math.ceil(work / POINTER_WORK_PER_TOKEN))


def text_cost(chars: int, beam_width: int) -> int:
    """Tokens for a seq2seq decode of `chars` characters with `beam_width` hypotheses: the
    source length bounds the output length, and each step runs the whole beam."""
    return max(1, math.ceil(chars * beam_width / TEXT_CHARS_PER_TOKEN))
