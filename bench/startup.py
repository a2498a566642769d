"""Start-up cost of one worker: seconds from process start to /readyz answering 200, and the
worker's resident memory (RSS) then. `python bench/startup.py [--port 8765] [--runs 2]`.

It starts `python -m app.serve` on loopback, polls /readyz every 50 ms, reads VmRSS from
/proc, and stops the server; the numbers are printed as one JSON line per run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def one_run(port: int, timeout_s: float = 300.0) -> dict:
    started = time.monotonic()
    server = subprocess.Popen(
        [sys.executable, "-m", "app.serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        status = None
        while time.monotonic() - started < timeout_s:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=30) as r:
                    status = r.status
                    body = json.loads(r.read())
            except urllib.error.HTTPError as exc:
                status, body = exc.code, json.loads(exc.read())
            except OSError:
                time.sleep(0.05)
                continue
            if status == 200:
                break
            time.sleep(0.05)
        ready_s = time.monotonic() - started
        return {
            "ready_s": round(ready_s, 2),
            "status": status,
            "rss_mb": round(rss_mb(server.pid), 1),
            "models": len(body.get("loaded", [])),
        }
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    for _ in range(args.runs):
        print(json.dumps(one_run(args.port)), flush=True)


if __name__ == "__main__":
    main()
