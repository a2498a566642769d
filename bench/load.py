"""Bounded load test against real uvicorn processes on 127.0.0.1, and the page-weight check.

    .venv/bin/python bench/load.py                      # 1 and 2 workers × 20 and 50 users
    .venv/bin/python bench/load.py --workers 2 --users 20 --duration 20
    .venv/bin/python bench/load.py --sizes              # deep-dive bytes on the wire, ± gzip
    .venv/bin/python bench/load.py --workers 2 --users 50 --behind-nginx  # through nginx
    .venv/bin/python bench/load.py --workers 1 --users 50 50 50 --instances 2 --kill-after 10
                                          # 2 instances behind nginx, one killed in each round
    .venv/bin/python bench/load.py --storm --duration 20  # 60 heavy requests on one worker
    .venv/bin/python bench/load.py --junk               # 5,000 made-up methods: /metrics size

Each simulated reader loops until the run's deadline: pick an action from a mix that follows a
reader's session (page views, static files, α sliders on /api/entmax, the pointer board, the
seq2seq widgets), send it, wait a think time, repeat. Half the API calls ask for the htmx
fragment (`HX-Request`), as the widgets do. The server runs with the rate limit off
(PAPERTRACE_RATE_LIMIT=0) because every simulated reader shares one address; its access log
stays on, as in production. Each configuration runs for `--duration` seconds (≤ 60) and stops
by itself; the server is stopped after it.

Reported per configuration: requests, throughput, p50/p95/p99 latency as the client saw it,
errors (any status other than 200) and dropped requests (connection errors or timeouts).
Targets: no errors, nothing dropped, p95 ≤ 250 ms at 20 users with 2 workers.

Behind nginx each `app.serve` instance listens on its own Unix socket (as deploy/nginx.conf has
them). With `--instances 2 --kill-after S`, S seconds into each round (each `--users` entry)
every process of the first instance is killed, as when a machine goes down, and it is started
again before the next round; the report counts what was lost and how much of it was in flight
(sent before the instance was gone, unanswered when it was killed). Target: nothing lost that
was not in flight, and no 502 but for a POST that instance held.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import multiprocessing
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script from anywhere: `bench` is a folder, not installed
from bench.nginx import Instance, running_nginx, start_instance  # noqa: E402

MAX_DURATION_S = 60.0
REQUEST_TIMEOUT_S = 30.0
PAPERS = ("/papers/pointer-networks", "/papers/sparse-seq2seq")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


SERVER_ENV = {"PAPERTRACE_RATE_LIMIT": "0", "OMP_NUM_THREADS": "1"}


@contextmanager
def server_process(
    workers: int, log_path: Path, *args: str
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`python -m app.serve --workers N *args` (uvicorn; see app/serve.py) on a free loopback
    port, until the block ends. Yields the URL to load and the server process (with one worker,
    the worker itself)."""
    port = free_port()
    env = {**os.environ, **SERVER_ENV}
    command = [sys.executable, "-m", "app.serve", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--workers", str(workers), *args]
    log_path.parent.mkdir(exist_ok=True)
    log_path.write_bytes(b"")
    with log_path.open("ab") as log:
        server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)
        try:
            wait_until_started(server, workers, log_path)
            yield f"http://127.0.0.1:{port}", server
        finally:
            server.terminate()
            server.wait(timeout=30)


@contextmanager
def uvicorn_server(workers: int, log_path: Path, *args: str) -> Iterator[str]:
    with server_process(workers, log_path, *args) as (url, _):
        yield url


INSTANCES_DIR = ROOT / "logs" / "bench-instances"


def start_proxied_instance(name: str, workers: int) -> Instance:
    """One `app.serve --uds` instance, its socket and log under logs/bench-instances/."""
    instance = start_instance(INSTANCES_DIR, name, "--workers", str(workers), env=SERVER_ENV)
    instance.wait_until_started(workers)
    return instance


@contextmanager
def proxied_instances(count: int, workers: int) -> Iterator[tuple[str, list[Instance]]]:
    """`count` instances, each on its own socket, behind deploy/nginx.conf (its per-address
    rate limit off: every simulated reader is 127.0.0.1). Yields nginx's URL and the instances
    (a list the caller may update when it replaces one)."""
    INSTANCES_DIR.mkdir(parents=True, exist_ok=True)
    instances: list[Instance] = []
    try:
        for i in range(count):  # all start at once, then each is waited for
            args = ("--workers", str(workers))
            instances.append(
                start_instance(INSTANCES_DIR, f"instance-{i + 1}", *args, env=SERVER_ENV)
            )
        for instance in instances:
            instance.wait_until_started(workers)
        with tempfile.TemporaryDirectory() as folder:
            sockets = [instance.socket for instance in instances]
            with running_nginx(Path(folder), free_port(), sockets, rate_limit=False) as url:
                yield url, instances
    finally:
        for instance in instances:
            instance.stop()


def wait_until_started(server: subprocess.Popen[bytes], workers: int, log_path: Path) -> None:
    """Every worker logs "Application startup complete." once its lifespan (content parsed,
    models loaded and verified, plotly.js compressed) is done; wait for all of them."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"uvicorn exited with {server.returncode}; see {log_path}")
        if log_path.read_text(errors="replace").count("Application startup complete") >= workers:
            return
        time.sleep(0.3)
    raise RuntimeError(f"uvicorn's {workers} workers did not start within 180 s")


@dataclass(frozen=True)
class Action:
    name: str
    kind: str  # page | static | entmax | pointer | seq2seq
    weight: float
    build: Callable[[random.Random], tuple[str, str, Any]]  # -> (method, path, json body)


def random_points(rng: random.Random, low: int, high: int) -> list[list[float]]:
    n = rng.randint(low, high)
    points: set[tuple[float, float]] = set()
    while len(points) < n:
        points.add((round(rng.random(), 3), round(rng.random(), 3)))
    return [list(p) for p in points]


def reader_mix(
    options: dict[str, Any], pointer_tasks: list[str], static: list[str]
) -> list[Action]:
    """The actions a reader's browser sends, weighted by how often a session sends them."""
    actions = [
        Action("page: deep-dive", "page", 10, lambda r: ("GET", r.choice(PAPERS), None)),
        Action("page: library", "page", 3, lambda r: ("GET", "/", None)),
        Action("static: css/js", "static", 12, lambda r: ("GET", r.choice(static), None)),
        Action(
            "api: entmax slider",
            "entmax",
            30,
            lambda r: (
                "POST",
                "/api/entmax",
                {
                    "scores": [round(r.uniform(-2, 3), 2) for _ in range(r.randint(5, 12))],
                    "alpha": round(r.uniform(1, 3), 2),
                },
            ),
        ),
    ]
    for task, weight in (("hull", 8), ("tsp", 5), ("sort", 5)):
        if task not in pointer_tasks:
            continue
        if task == "sort":

            def build(r: random.Random) -> tuple[str, str, Any]:
                values = [round(r.random(), 3) for _ in range(r.randint(5, 20))]
                return "POST", "/api/pointer/sort", {"values": values}
        else:

            def build(r: random.Random, task: str = task) -> tuple[str, str, Any]:
                body = {"points": random_points(r, 5, 20)}
                if r.random() < 0.2:
                    body |= {"decoder": "beam", "beam_width": 4}
                return "POST", f"/api/pointer/{task}", body

        actions.append(Action(f"api: pointer {task}", "pointer", weight, build))

    inflection = options.get("inflection", {})
    alphas = [m["alpha"] for m in inflection.get("models", []) if m["available"]]
    examples = inflection.get("examples", [])
    if alphas and examples:

        def inflect(r: random.Random) -> tuple[str, str, Any]:
            example = r.choice(examples)
            body = {k: example[k] for k in ("lemma", "language", "features")}
            return "POST", "/api/seq2seq/inflect", body | {"alpha": r.choice(alphas)}

        actions.append(Action("api: seq2seq inflect", "seq2seq", 8, inflect))
    translation = options.get("translation", {})
    t_alphas = [m["alpha"] for m in translation.get("models", []) if m["available"]]
    sentences = [e["text"] for e in translation.get("examples", [])]
    if t_alphas and sentences:

        def translate(r: random.Random) -> tuple[str, str, Any]:
            body = {"text": r.choice(sentences), "alpha": r.choice(t_alphas)}
            return "POST", "/api/seq2seq/translate", body

        actions.append(Action("api: seq2seq translate", "seq2seq", 4, translate))
    return actions


@dataclass
class Results:
    latencies_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    dropped: int = 0
    error_samples: list[str] = field(default_factory=list)
    # every request that did not get a 200: (method, started, ended, status or error name),
    # on time.monotonic()'s clock
    failures: list[tuple[str, float, float, int | str]] = field(default_factory=list)


async def reader(
    client: httpx.AsyncClient,
    actions: list[Action],
    rng: random.Random,
    deadline: float,
    think_s: tuple[float, float],
    results: Results,
) -> None:
    weights = [a.weight for a in actions]
    await asyncio.sleep(rng.uniform(0, think_s[1]))  # readers do not arrive in lockstep
    while time.monotonic() < deadline:
        action = rng.choices(actions, weights)[0]
        method, path, body = action.build(rng)
        headers = {"HX-Request": "true"} if body is not None and rng.random() < 0.5 else {}
        started = time.perf_counter()
        sent_at = time.monotonic()
        try:
            response = await client.request(method, path, json=body, headers=headers)
        except httpx.HTTPError as exc:
            results.dropped += 1
            results.error_samples.append(f"{action.name}: {type(exc).__name__}")
            results.failures.append((method, sent_at, time.monotonic(), type(exc).__name__))
        else:
            elapsed_ms = (time.perf_counter() - started) * 1000
            results.latencies_ms[action.kind].append(elapsed_ms)
            if response.status_code != 200:
                results.errors[action.kind] += 1
                results.error_samples.append(f"{action.name}: {response.status_code}")
                results.failures.append((method, sent_at, time.monotonic(), response.status_code))
        await asyncio.sleep(rng.uniform(*think_s))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))] if ordered else float("nan")


async def run_load(
    url: str,
    users: int,
    duration_s: float,
    think_s: tuple[float, float],
    seed: int,
    during: Callable[[], Awaitable[None]] | None = None,
) -> tuple[Results, float, list[Action]]:
    """`users` readers for `duration_s`; `during`, if given, runs beside them (a kill)."""
    limits = httpx.Limits(max_connections=users, max_keepalive_connections=users)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=REQUEST_TIMEOUT_S) as client:
        page = (await client.get(PAPERS[0])).text + (await client.get(PAPERS[1])).text
        static = sorted(set(re.findall(r'(?:src|href)="(/static/[^"]+\.(?:js|css))"', page)))
        static = [s for s in static if "plotly" not in s]  # browsers keep it a year (immutable)
        options = (await client.get("/api/seq2seq/options")).json()
        pointer_models = (await client.get("/api/pointer/models")).json()
        pointer_tasks = [
            m["task"] for m in pointer_models if any(v["available"] for v in m["variants"])
        ]
        actions = reader_mix(options, pointer_tasks, static)
        results = Results()
        started = time.monotonic()
        deadline = started + duration_s
        readers = [
            reader(client, actions, random.Random(seed + i), deadline, think_s, results)
            for i in range(users)
        ]
        await asyncio.gather(*readers, *([during()] if during else []))
        return results, time.monotonic() - started, actions


def summary_row(label: str, results: Results, wall_s: float) -> str:
    everything = [v for values in results.latencies_ms.values() for v in values]
    errors = sum(results.errors.values())
    return (
        f"| {label} | {len(everything) + results.dropped} | {len(everything) / wall_s:.1f} | "
        f"{percentile(everything, 50):.0f} | {percentile(everything, 95):.0f} | "
        f"{percentile(everything, 99):.0f} | {errors} | {results.dropped} |"
    )


def kind_rows(label: str, results: Results) -> list[str]:
    rows = []
    for kind, values in sorted(results.latencies_ms.items()):
        rows.append(
            f"| {label} | {kind} | {len(values)} | {percentile(values, 50):.0f} | "
            f"{percentile(values, 95):.0f} | {percentile(values, 99):.0f} | "
            f"{results.errors.get(kind, 0)} |"
        )
    return rows


@dataclass
class Kill:
    """When every process of an instance was sent SIGKILL, and when they were all gone."""

    killed_at: float
    dead_at: float


async def kill_first(instances: list[Instance], delay_s: float, kills: list[Kill]) -> None:
    await asyncio.sleep(delay_s)
    killed_at = time.monotonic()
    await asyncio.to_thread(instances[0].kill)
    kills.append(Kill(killed_at, time.monotonic()))


def loss_row(label: str, results: Results, kill: Kill) -> str:
    """What a round lost, and how much of it the killed instance held when it died."""
    failures = results.failures
    held = [f for f in failures if f[1] <= kill.dead_at and f[2] >= kill.killed_at]
    requests = sum(len(v) for v in results.latencies_ms.values()) + results.dropped
    by_kind = Counter(f"{method} {outcome}" for method, _, _, outcome in failures)
    return (
        f"| {label} | {requests} | {len(failures)} | {len(held)} | {len(failures) - len(held)} | "
        f"{sum(f[3] == 502 for f in failures)} | {(kill.dead_at - kill.killed_at) * 1000:.0f} | "
        f"{dict(sorted(by_kind.items())) or '-'} |"
    )


def load_test(args: argparse.Namespace) -> None:
    think = (args.think_min, args.think_max)
    summary = [
        "| workers × users | requests | req/s | p50 ms | p95 ms | p99 ms | errors | dropped |",
        "|---|---|---|---|---|---|---|---|",
    ]
    detail = [
        "| workers × users | kind | requests | p50 ms | p95 ms | p99 ms | errors |",
        "|---|---|---|---|---|---|---|",
    ]
    losses = [
        "| round | requests | lost | lost in flight | lost otherwise | 502 | kill → gone ms | "
        "lost by method and status |",
        "|---|---|---|---|---|---|---|---|",
    ]
    samples: list[str] = []
    mix: list[Action] = []
    load_before = os.getloadavg()[0]
    behind_nginx = args.behind_nginx or args.instances > 1 or args.kill_after is not None
    for workers in args.workers:
        if behind_nginx:
            server = proxied_instances(args.instances, workers)
        else:
            log = ROOT / "logs" / "bench-load-server.log"
            server = without_instances(uvicorn_server(workers, log))
        with server as (url, instances):
            for round_index, users in enumerate(args.users):
                kills: list[Kill] = []
                during = None
                if args.kill_after is not None:
                    during = functools.partial(kill_first, instances, args.kill_after, kills)
                results, wall_s, mix = asyncio.run(
                    run_load(url, users, args.duration, think, args.seed, during)
                )
                label = f"{workers} × {users}"
                summary.append(summary_row(label, results, wall_s))
                detail.extend(kind_rows(label, results))
                samples += results.error_samples[:5]
                print(summary[-1], flush=True)
                if kills:
                    losses.append(loss_row(f"{round_index + 1}: {label}", results, kills[0]))
                    print(losses[-1], flush=True)
                    instances[0] = start_proxied_instance("instance-1", workers)
    total_weight = sum(a.weight for a in mix)
    where = "app.serve on 127.0.0.1"
    if behind_nginx:
        where = (
            f"{args.instances} app.serve instance{'s' if args.instances > 1 else ''} on Unix "
            "sockets behind nginx (deploy/nginx.conf)"
        )
    if args.kill_after is not None:
        where += f", the first killed {args.kill_after:g} s into each round and restarted after it"
    print(
        f"\nLoad test: {args.duration:g} s per row, think time "
        f"{think[0]:g}-{think[1]:g} s, {where}, rate limit off, seed {args.seed}; "
        f"{os.cpu_count()} CPU cores, load average before: {load_before:.1f}, "
        f"after: {os.getloadavg()[0]:.1f}.\n"
    )
    print("Mix: " + ", ".join(f"{a.name} {a.weight / total_weight:.0%}" for a in mix) + "\n")
    print("\n".join(summary) + "\n")
    if len(losses) > 2:
        print("\n".join(losses) + "\n")
    print("\n".join(detail))
    if samples:
        print("\nFirst errors: " + "; ".join(samples))


@contextmanager
def without_instances(server: AbstractContextManager[str]) -> Iterator[tuple[str, list[Instance]]]:
    """A plain server's URL in the shape proxied_instances yields (no instances to kill)."""
    with server as url:
        yield url, []


# --storm: the largest translation request (30 nonsense words → ~140 subword pieces, beam 16,
# α = 1 → ~240 steps, HTML fragment), from 60 clients at once, on one worker ("A"). Meanwhile
# one prober asks A for /healthz every 50 ms, and 5 light readers use a second worker ("B").
STORM_CLIENTS = 60
STORM_WORDS = ("qzxkv", "wjrtp", "mbfhy", "gdlsn", "ckupe", "vyoaz")
STORM_TEXT = " ".join(STORM_WORDS[i % 6] + "abcdef"[i % 6] for i in range(30))[:200]
STORM_BODY = {"text": STORM_TEXT, "beam_width": 16, "alpha": 1.0}


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def probe_health(url: str, duration_s: float) -> list[float]:
    """/healthz every 50 ms for `duration_s`; milliseconds per answer (any status counts)."""
    latencies = []
    deadline = time.monotonic() + duration_s
    with httpx.Client(base_url=url, timeout=30) as client:
        while time.monotonic() < deadline:
            started = time.perf_counter()
            client.get("/healthz")
            latencies.append((time.perf_counter() - started) * 1000)
            time.sleep(0.05)
    return latencies


def read_lightly(url: str, duration_s: float, readers: int = 5) -> list[tuple[int, float]]:
    """`readers` threads alternating small entmax and 5-point hull requests, 0.1 s apart."""
    answers: list[tuple[int, float]] = []
    deadline = time.monotonic() + duration_s

    def reader(seed: int) -> None:
        rng = random.Random(seed)
        with httpx.Client(base_url=url, timeout=30) as client:
            while time.monotonic() < deadline:
                if rng.random() < 0.5:
                    path = "/api/entmax"
                    body: dict[str, Any] = {
                        "scores": [rng.uniform(-2, 3) for _ in range(8)],
                        "alpha": 1.5,
                    }
                else:
                    path, body = "/api/pointer/hull", {"points": random_points(rng, 5, 5)}
                started = time.perf_counter()
                status = client.post(path, json=body).status_code
                answers.append((status, (time.perf_counter() - started) * 1000))
                time.sleep(0.1)

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(readers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


class RawHttpClient:
    """One keep-alive HTTP/1.1 connection on asyncio streams: a load generator a few times
    lighter than httpx, so that on a 2-core machine the storm's 60 clients leave the CPU to the
    server they are measuring. Reads responses with a Content-Length (all this app sends)."""

    def __init__(self, url: str) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.host, self.port = host, int(port)
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def post_json(self, path: str, body: bytes, headers: str = "") -> int:
        """POST and read the whole answer; its status (a connection the server closed is
        opened again)."""
        if self.streams is None:
            self.streams = await asyncio.open_connection(self.host, self.port)
        reader, writer = self.streams
        writer.write(
            f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n{headers}\r\n".encode()
            + body
        )
        await writer.drain()
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").lower()
        length = int(re.search(r"content-length: *(\d+)", head).group(1))
        await reader.readexactly(length)
        if "connection: close" in head:
            writer.close()
            self.streams = None
        return int(head.split()[1])

    def close(self) -> None:
        if self.streams is not None:
            self.streams[1].close()


async def storm(duration_s: float) -> None:
    load_before = os.getloadavg()[0]
    heavy: list[tuple[int, float]] = []  # (status, ms)
    log_a, log_b = ROOT / "logs" / "bench-storm-a.log", ROOT / "logs" / "bench-storm-b.log"
    with server_process(1, log_a) as (url_a, worker_a), server_process(1, log_b) as (url_b, _):
        httpx.get(f"{url_a}/healthz", timeout=30)
        idle_mb = rss_mb(worker_a.pid)
        deadline = time.monotonic() + duration_s
        body = json.dumps(STORM_BODY).encode()

        async def hammer() -> None:
            client = RawHttpClient(url_a)
            try:
                while time.monotonic() < deadline:
                    started = time.perf_counter()
                    status = await client.post_json(
                        "/api/seq2seq/translate", body, "HX-Request: true\r\n"
                    )
                    heavy.append((status, (time.perf_counter() - started) * 1000))
            finally:
                client.close()

        # The prober and the light readers run in their own processes: timed from the
        # hammering process's event loop, they would measure its queue, not the server.
        with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
            probed = pool.submit(probe_health, url_a, deadline - time.monotonic())
            lightly = pool.submit(read_lightly, url_b, deadline - time.monotonic())
            await asyncio.gather(*(hammer() for _ in range(STORM_CLIENTS)))
            health, light = probed.result(), lightly.result()
        peak_mb = rss_mb(worker_a.pid)
        await asyncio.sleep(5)
        settled_mb = rss_mb(worker_a.pid)
    statuses = defaultdict(int)
    for status, _ in heavy:
        statuses[status] += 1
    every_ms = [ms for _, ms in heavy] + health + [ms for _, ms in light]
    print(
        f"Storm: {STORM_CLIENTS} clients sending the largest translation request (HTML) to "
        f"worker A for {duration_s:g} s; /healthz on A every 50 ms; 5 light readers on worker B. "
        f"{os.cpu_count()} cores, load average before {load_before:.1f}, after "
        f"{os.getloadavg()[0]:.1f}.\n"
    )
    print("| measure | value |\n|---|---|")
    print(f"| heavy answers by status | {dict(sorted(statuses.items()))} |")
    ok_ms = [ms for status, ms in heavy if status == 200]
    refused_ms = [ms for status, ms in heavy if status != 200]
    print(f"| heavy 200 p50 / max ms | {percentile(ok_ms, 50):.0f} / {max(ok_ms, default=0):.0f} |")
    print(
        f"| heavy refused p50 / p99 ms | {percentile(refused_ms, 50):.0f} / "
        f"{percentile(refused_ms, 99):.0f} |"
    )
    print(
        f"| /healthz on A: n, p50 / p99 / max ms | {len(health)}, {percentile(health, 50):.0f} / "
        f"{percentile(health, 99):.0f} / {max(health, default=0):.0f} |"
    )
    light_ms = [ms for _, ms in light]
    light_errors = sum(status != 200 for status, _ in light)
    print(
        f"| light on B: n, p50 / p95 ms, errors | {len(light)}, {percentile(light_ms, 50):.0f} / "
        f"{percentile(light_ms, 95):.0f}, {light_errors} |"
    )
    print(f"| slowest answer of all (ms) | {max(every_ms, default=0):.0f} |")
    # The server's own clock (access log of A): time inside the app, without the queues of a
    # CPU shared with the clients.
    served = re.findall(r"path=(\S+) route=\S+ status=(\d+) ms=([\d.]+)", log_a.read_text())
    inside_health = [float(ms) for path, _, ms in served if path == "/healthz"]
    refused = [float(ms) for path, st, ms in served if path != "/healthz" and st == "503"]
    print(
        f"| in the app (A's access log): /healthz p99, 503 p50 / p99 ms | "
        f"{percentile(inside_health, 99):.1f}, {percentile(refused, 50):.0f} / "
        f"{percentile(refused, 99):.0f} |"
    )
    print(
        f"| worker A RSS idle / end of storm / 5 s later (MB) | {idle_mb:.0f} / {peak_mb:.0f} / "
        f"{settled_mb:.0f} |"
    )


async def junk_storm(count: int = 5000) -> None:
    """`count` requests with made-up methods and paths; /metrics size before and after."""
    rng = random.Random(0)
    metrics_port = free_port()
    metrics = f"http://127.0.0.1:{metrics_port}/metrics"
    log = ROOT / "logs" / "bench-junk-server.log"
    with uvicorn_server(1, log, "--metrics-port", str(metrics_port)) as url:
        limits = httpx.Limits(max_connections=20)
        async with httpx.AsyncClient(base_url=url, limits=limits, timeout=30) as client:
            for path in ("/", "/healthz", "/nope"):
                await client.get(path)
            await client.request("BREW", "/")
            await client.request("BREW", "/nope")
            before = len((await client.get(metrics)).content)
            statuses: dict[int, int] = defaultdict(int)
            gate = asyncio.Semaphore(20)

            async def junk(i: int) -> None:
                method = "X" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(8))
                async with gate:
                    response = await client.request(method, f"/junk/{i:x}")
                statuses[response.status_code] += 1

            started = time.perf_counter()
            await asyncio.gather(*(junk(i) for i in range(count)))
            wall_s = time.perf_counter() - started
            scrape_started = time.perf_counter()
            after = len((await client.get(metrics)).content)
            scrape_ms = (time.perf_counter() - scrape_started) * 1000
    print(
        f"Junk storm: {count:,} requests with made-up methods and paths in {wall_s:.1f} s "
        f"(answers {dict(statuses)}); /metrics {before:,} → {after:,} bytes "
        f"({after / before - 1:+.1%}), scrape {scrape_ms:.0f} ms; load average "
        f"{os.getloadavg()[0]:.1f}."
    )


def page_weight() -> None:
    """Bytes on the wire for each deep-dive with every stylesheet and script it loads, without
    and with gzip; plotly.js (cached for a year after the first visit) also shown apart."""
    rows = [
        "| page | files | identity bytes | gzip bytes | saved | without plotly.js |",
        "|---|---|---|---|---|---|",
    ]
    with uvicorn_server(1, ROOT / "logs" / "bench-load-server.log") as url:
        with httpx.Client(base_url=url, timeout=REQUEST_TIMEOUT_S) as client:
            for path in PAPERS:
                html = client.get(path).text
                assets = re.findall(r'(?:src|href)="(/static/[^"]+\.(?:js|css))"', html)
                urls = [path, *dict.fromkeys(assets)]
                sizes: dict[str, dict[str, int]] = {}
                for encoding in ("identity", "gzip"):
                    sizes[encoding] = {}
                    for asset in urls:
                        response = client.get(asset, headers={"Accept-Encoding": encoding})
                        response.raise_for_status()
                        sizes[encoding][asset] = response.num_bytes_downloaded
                total = {e: sum(sizes[e].values()) for e in sizes}
                rest = {e: sum(n for a, n in sizes[e].items() if "plotly" not in a) for e in sizes}
                rows.append(
                    f"| {path} | {len(urls)} | {total['identity']:,} | {total['gzip']:,} | "
                    f"{1 - total['gzip'] / total['identity']:.0%} | "
                    f"{rest['identity']:,} → {rest['gzip']:,} |"
                )
    print("\n".join(rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--users", type=int, nargs="+", default=[20, 50])
    parser.add_argument("--duration", type=float, default=25.0, help="seconds per row (≤ 60)")
    parser.add_argument("--think-min", type=float, default=0.25)
    parser.add_argument("--think-max", type=float, default=0.75)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sizes", action="store_true", help="page weight, ± gzip, then exit")
    parser.add_argument(
        "--behind-nginx", action="store_true", help="load the app through deploy/nginx.conf"
    )
    parser.add_argument(
        "--instances",
        type=int,
        default=1,
        help="app.serve instances behind nginx, each with --workers workers (implies "
        "--behind-nginx when more than one)",
    )
    parser.add_argument(
        "--kill-after",
        type=float,
        default=None,
        help="kill the first instance this many seconds into each round (behind nginx)",
    )
    parser.add_argument(
        "--storm", action="store_true", help="60 heavy requests on one worker, then exit"
    )
    parser.add_argument(
        "--junk", action="store_true", help="5,000 made-up methods: /metrics size, then exit"
    )
    args = parser.parse_args()
    if args.sizes:
        page_weight()
        return
    if args.storm:
        asyncio.run(storm(min(args.duration, MAX_DURATION_S)))
        return
    if args.junk:
        asyncio.run(junk_storm())
        return
    if not 0 < args.duration <= MAX_DURATION_S:
        parser.error(f"--duration must be in (0, {MAX_DURATION_S:g}] seconds")
    if args.kill_after is not None and not (0 < args.kill_after < args.duration):
        parser.error("--kill-after must fall inside the round (0 < S < --duration)")
    if args.kill_after is not None and args.instances < 2:
        parser.error("--kill-after needs --instances 2 or more: the survivors take the traffic")
    load_test(args)


if __name__ == "__main__":
    main()
