"""Page renders with model state in the address: time, size, a crowd of them, worker memory.

    .venv/bin/python bench/page_gate.py                 # every page below
    .venv/bin/python bench/page_gate.py --repeats 5 --crowd 30 --pages seq2seq

One `app.serve` worker on a loopback port (its rate limit off: every request comes from
127.0.0.1, so the compute gate is what answers a crowd). Pages:
- seq2seq: issue 39's address, the heaviest the figures' limits allow (beam 16, every α
  compared, the longest texts), too heavy for a page: its figures show their examples;
- seq2seq-drawn: the same texts at what a page may run for each figure (beam 2 and 10,
  4 tokens each), which the page draws;
- routing: 100 points on every board and figure of the routing page, beam 16, 64 REINFORCE
  samples: the page runs what its allowance holds (12 tokens) and says so for the rest.
Measured for each:

- one page at a time: the time to the last byte (median of `--repeats`) and its size;
- `--crowd` of them at once: the answers by status, whether each refusal says when to come
  back (Retry-After), the median and slowest time;
- the worker's RSS after start-up, right after the crowd and 5 s later.

Targets (issue 39): the stateful seq2seq page (`seq2seq`) ≤ 300 ms and ≤ 400 KB; a crowd shed
like API calls (what does not fit the gate answered 429/503 with Retry-After and a sentence,
no model work for it); RSS after the crowds ≤ 1.2 × start-up.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlencode

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.load import percentile, rss_mb, server_process  # noqa: E402

TARGET_MS, TARGET_KB, TARGET_RSS = 300.0, 400.0, 1.2
WORDS = ("qzxkv", "wjrtp", "mbfhy", "gdlsn", "ckupe", "vyoaz")
TEXT = " ".join(WORDS[i % 6] + "abcdef"[i % 6] for i in range(30))[:200]  # 30 words, 200 chars
LEMMA = "overestimate" * 3 + "ably"  # 40 characters
POINTS = ";".join(f"{(i * 37 % 101) / 101:.3f},{(i * 59 % 103) / 103:.3f}" for i in range(100))
VALUES = ",".join(f"{(i * 37 % 101) / 101:.3f}" for i in range(100))

SEQ2SEQ = "/papers/sparse-seq2seq?" + urlencode(
    {
        "translate.text": TEXT,
        "translate.beam_width": "16",
        "translate.compare": "1",
        "inflect.lemma": LEMMA,
        "inflect.language": "en",
        "inflect.features": "V;PST",
        "inflect.beam_width": "16",
        "inflect.compare": "1",
    }
)
# The same page with every seq2seq figure's state at what a page may run (4 tokens each): the
# page draws them, so a crowd of these is what the gate has to shed.
SEQ2SEQ_DRAWN = "/papers/sparse-seq2seq?" + urlencode(
    {
        "translate.text": TEXT,
        "translate.beam_width": "2",
        "inflect.lemma": LEMMA,
        "inflect.language": "en",
        "inflect.features": "V;PST",
        "inflect.beam_width": "10",
    }
)
ROUTING = "/papers/attention-routing?" + urlencode(
    {
        **{
            f"{key}-{field}": value
            for key in ("am", "lstm", "ptr")
            for field, value in (
                ("points", POINTS),
                ("decoder", "beam"),
                ("beam_width", "16"),
                ("seed", "0"),
            )
        },
        "attn-points": POINTS,
        "attn-city": "100",
        "rl-points": POINTS,
        "rl-samples": "64",
        "rl-seed": "0",
    }
)
PAGES = {"seq2seq": SEQ2SEQ, "seq2seq-drawn": SEQ2SEQ_DRAWN, "routing": ROUTING}


async def one_page(
    client: httpx.AsyncClient, path: str, variant: int = 0
) -> tuple[int, float, int, bool]:
    """(status, ms to the last byte, bytes of HTML, Retry-After given). `variant` is the seed of
    every figure that has one, so no two requests of a crowd share an answer the app keeps for a
    moment (app/answer_cache.py)."""
    path = path.replace("-seed=0", f"-seed={variant}")
    started = time.perf_counter()
    response = await client.get(path)
    ms = (time.perf_counter() - started) * 1000
    return response.status_code, ms, len(response.content), "retry-after" in response.headers


async def measure(url: str, name: str, path: str, repeats: int, crowd: int, pid: int) -> None:
    headers = {"Accept-Encoding": "identity"}  # the page's own size, not gzip's
    limits = httpx.Limits(max_connections=crowd + 5)
    async with httpx.AsyncClient(base_url=url, timeout=120, headers=headers, limits=limits) as c:
        await one_page(c, path, 1000)  # warm: the paper parsed, the examples' answers kept
        alone = [await one_page(c, path, 1001 + i) for i in range(repeats)]
        before_mb = rss_mb(pid)
        started = time.perf_counter()
        answers = await asyncio.gather(*(one_page(c, path, i) for i in range(crowd)))
        crowd_s = time.perf_counter() - started
        after_mb = rss_mb(pid)
        await asyncio.sleep(5)
        settled_mb = rss_mb(pid)
    statuses = Counter(status for status, *_ in answers)
    refused = [a for a in answers if a[0] != 200]
    ms = [a[1] for a in answers]
    median_ms = statistics.median(a[1] for a in alone)
    kb = alone[-1][2] / 1024
    print(f"\n## {name}: GET {path[:90]}… ({len(path):,} characters)\n")
    print("| measure | value | target |\n|---|---|---|")
    print(
        f"| one at a time: median ms (of {repeats}), statuses | {median_ms:.0f}, "
        f"{sorted({a[0] for a in alone})} | ≤ {TARGET_MS:g} |"
    )
    print(f"| size of the HTML (KB) | {kb:.0f} | ≤ {TARGET_KB:g} |")
    print(f"| {crowd} at once: answers by status | {dict(sorted(statuses.items()))} | |")
    print(
        f"| {crowd} at once: refusals with Retry-After | "
        f"{sum(a[3] for a in refused)} of {len(refused)} | all |"
    )
    print(
        f"| {crowd} at once: p50 / slowest ms, all answered after | {percentile(ms, 50):.0f} / "
        f"{max(ms):.0f}, {crowd_s:.1f} s | |"
    )
    print(
        f"| worker RSS before / right after / 5 s after the crowd (MB) | {before_mb:.0f} / "
        f"{after_mb:.0f} / {settled_mb:.0f} | |"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--crowd", type=int, default=30)
    parser.add_argument("--pages", nargs="+", choices=sorted(PAGES), default=list(PAGES))
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    log = ROOT / "logs" / "bench-page-gate.log"
    with server_process(1, log) as (url, worker):
        httpx.get(f"{url}/healthz", timeout=30)
        start_mb = rss_mb(worker.pid)
        print(
            f"One worker, {os.cpu_count()} cores, load average before {load_before:.1f}; "
            f"worker RSS after start-up {start_mb:.0f} MB (target after a crowd ≤ "
            f"{TARGET_RSS * start_mb:.0f} MB)."
        )
        for name in args.pages:
            await measure(url, name, PAGES[name], args.repeats, args.crowd, worker.pid)
        end_mb = rss_mb(worker.pid)
    print(
        f"\nWorker RSS at the end: {end_mb:.0f} MB = {end_mb / start_mb:.2f} × start-up "
        f"(target ≤ {TARGET_RSS:g}); load average after {os.getloadavg()[0]:.1f}."
    )


if __name__ == "__main__":
    asyncio.run(main())
