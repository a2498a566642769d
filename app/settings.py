"""Serving limits read from the environment once, when `create_app()` runs.

Every knob has a default that suits one small machine; the README's "Deploying" section lists
them. A value that does not parse stops start-up with a sentence naming the variable, rather than
serving with a limit nobody asked for.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass


def _number(env: Mapping[str, str], name: str, default: float, minimum: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"${name} must be a number, not {raw!r}.") from None
    if not value >= minimum:  # also rejects NaN
        raise ValueError(f"${name} must be at least {minimum:g}; it is {raw}.")
    return value


@dataclass(frozen=True)
class ServingSettings:
    # Bodies are JSON with at most a few hundred numbers; 64 KB leaves ample room.
    max_body_bytes: int = 64 * 1024
    # Per client IP on /api/*: a sustained rate and a burst. A slider drag sends at most one
    # request per animation frame while the previous one is in flight (≈ 20-60/s), and a
    # classroom may share one NAT address, so the defaults only stop a runaway client.
    rate_per_s: float = 50.0
    rate_burst: int = 200
    # Intra-op threads per worker: concurrent requests each run on their own thread, so more
    # than one torch thread per worker only makes them fight for the same cores (measured: TSP
    # n = 50 greedy 17 ms with one thread, several hundred ms with two on a busy CPU).
    torch_threads: int = 1
    # Origins allowed to call the API from other sites; empty means same-origin only.
    cors_origins: tuple[str, ...] = ()
    gzip_min_bytes: int = 1024
    # Model work one worker runs at once, in rate-limit tokens (app.compute): two of the
    # largest requests, or dozens of light ones; what does not fit gets 503 + Retry-After at
    # once. And the longest a model call may compute before it is stopped with a 503.
    compute_capacity: int = 64
    compute_deadline_s: float = 2.0
    # The port of app.serve's metrics listener (app.serve sets it): /metrics answers there only
    # and that port answers nothing else; 0 (app.serve without --metrics-port) turns /metrics
    # off. Unset, as under plain uvicorn or in tests, /metrics answers on every listener.
    metrics_port: int | None = None

    @property
    def rate_limited(self) -> bool:
        return self.rate_per_s > 0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ServingSettings:
        env = os.environ if env is None else env
        origins = env.get("PAPERTRACE_CORS_ORIGINS", "")
        return cls(
            max_body_bytes=int(_number(env, "PAPERTRACE_MAX_BODY_BYTES", cls.max_body_bytes, 1)),
            rate_per_s=_number(env, "PAPERTRACE_RATE_LIMIT", cls.rate_per_s, 0),
            rate_burst=int(_number(env, "PAPERTRACE_RATE_BURST", cls.rate_burst, 1)),
            torch_threads=int(_number(env, "PAPERTRACE_TORCH_THREADS", cls.torch_threads, 1)),
            cors_origins=tuple(o.strip() for o in origins.split(",") if o.strip()),
            gzip_min_bytes=int(_number(env, "PAPERTRACE_GZIP_MIN_BYTES", cls.gzip_min_bytes, 0)),
            compute_capacity=int(
                _number(env, "PAPERTRACE_COMPUTE_CAPACITY", cls.compute_capacity, 1)
            ),
            compute_deadline_s=_number(
                env, "PAPERTRACE_COMPUTE_DEADLINE_S", cls.compute_deadline_s, 0.05
            ),
            metrics_port=_port(env, "PAPERTRACE_METRICS_PORT"),
        )


def _port(env: Mapping[str, str], name: str) -> int | None:
    if not env.get(name, "").strip():
        return None
    port = _number(env, name, 0, 0)
    if port > 65535 or port != int(port):
        raise ValueError(f"${name} must be a port number (0-65535), not {env[name]!r}.")
    return int(port)
