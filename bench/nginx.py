"""The deployed stack on loopback: app instances (`python -m app.serve --uds`, each on its own
socket) and deploy/nginx.conf in front of them, run by an unprivileged-style nginx, for the
proxy tests (tests/test_hardening_proxy.py, tests/test_proxy_*.py) and the load test
(bench/load.py --behind-nginx).

Only nginx's listen port, its root and its upstream instances change (a test's instances listen
on sockets in its own folder); a minimal main configuration around it keeps every file nginx
writes (pid, logs, temp files) in one folder.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
NGINX_CONF = ROOT / "deploy" / "nginx.conf"
RATE_LIMIT_LINE = "        limit_req zone=papertrace_api burst=40 nodelay;\n"
READ_TIMEOUT_LINE = "    proxy_read_timeout 10s;\n"
# The upstream's instances: one `server unix:…;` line each, all with the same parameters.
INSTANCE_LINES = re.compile(r"(?:    server unix:\S+ (?P<parameters>[^;\n]*);\n)+")
STARTUP_S = 180


@dataclass
class Instance:
    """One `app.serve` process (a supervisor and its workers, or a lone worker) in a session of
    its own, so that killing it kills all of them, as a machine that goes down would."""

    process: subprocess.Popen[bytes]
    socket: Path
    log: Path

    def wait_until_started(self, workers: int) -> None:
        """Every worker logs "Application startup complete." once its lifespan is done."""
        deadline = time.monotonic() + STARTUP_S
        while self.log.read_text(errors="replace").count("Application startup complete") < workers:
            if self.process.poll() is not None:
                raise RuntimeError(f"app.serve exited: {self.log.read_text()[-3000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"app.serve did not start within {STARTUP_S} s; see {self.log}")
            time.sleep(0.1)

    def workers(self) -> list[int]:
        """Process ids of the uvicorn workers (spawned children running spawn_main)."""
        pid = self.process.pid
        children = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        return [c for c in children if b"spawn_main" in Path(f"/proc/{c}/cmdline").read_bytes()]

    def client(self, **kwargs: Any) -> httpx.Client:
        """A client that talks to this instance's socket directly, as nginx does."""
        transport = httpx.HTTPTransport(uds=str(self.socket))
        return httpx.Client(transport=transport, base_url="http://papertrace", **kwargs)

    def kill(self) -> None:
        """SIGKILL to every process of the instance: nothing is finished or cleaned up."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()


def start_instance(
    folder: Path, name: str, *args: str, env: dict[str, str] | None = None
) -> Instance:
    """`python -m app.serve --uds <folder>/<name>.sock *args`, logging to <folder>/<name>.log;
    call `wait_until_started` before using it."""
    socket_path = folder / f"{name}.sock"
    log = folder / f"{name}.log"
    command = [sys.executable, "-m", "app.serve", "--uds", str(socket_path), *args]
    environment = {**os.environ, "OMP_NUM_THREADS": "1", **(env or {})}
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=out, stderr=out, start_new_session=True
        )
    return Instance(process, socket_path, log)


def nginx_binary() -> str | None:
    found = shutil.which("nginx")
    if found is None and Path("/usr/sbin/nginx").exists():
        found = "/usr/sbin/nginx"
    return found


def nginx_config(
    folder: Path,
    listen_port: int,
    sockets: Sequence[Path],
    rate_limit: bool = True,
    read_timeout_s: int | None = None,
) -> Path:
    """The main configuration file, written into `folder`, passing requests to the app
    instances listening on `sockets`. `rate_limit=False` drops the per-address limit (a load
    test's simulated readers all share 127.0.0.1); `read_timeout_s` shortens the 10 s an
    instance may take to answer (a test of nginx's 504 cannot wait that long)."""
    site = NGINX_CONF.read_text()
    instances = INSTANCE_LINES.search(site)
    if instances is None:
        raise ValueError("deploy/nginx.conf no longer lists its instances as `server unix:…;`")
    parameters = instances["parameters"]
    lines = "".join(f"    server unix:{path} {parameters};\n" for path in sockets)
    site = site[: instances.start()] + lines + site[instances.end() :]
    replacements = [
        ("listen 80;", f"listen 127.0.0.1:{listen_port};"),
        ("root /srv/papertrace;", f"root {ROOT};"),
    ]
    if not rate_limit:
        replacements.append((RATE_LIMIT_LINE, ""))
    if read_timeout_s is not None:
        replacements.append((READ_TIMEOUT_LINE, f"    proxy_read_timeout {read_timeout_s}s;\n"))
    for old, new in replacements:
        if old not in site:
            raise ValueError(f"deploy/nginx.conf no longer has `{old.strip()}`")
        site = site.replace(old, new)
    temp_paths = "\n".join(
        f"    {kind}_temp_path {folder / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    main = f"""
worker_processes 1;
pid {folder / "nginx.pid"};
error_log {folder / "nginx-error.log"} warn;
{"user root;" if os.geteuid() == 0 else ""}
events {{ worker_connections 1024; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log {folder / "nginx-access.log"};
{temp_paths}
{site}
}}
"""
    path = folder / "nginx.conf"
    path.write_text(main)
    return path


@contextmanager
def running_nginx(
    folder: Path,
    listen_port: int,
    sockets: Sequence[Path],
    rate_limit: bool = True,
    read_timeout_s: int | None = None,
    wait_for_app: bool = True,
) -> Iterator[str]:
    """nginx in the foreground until the block ends; yields its URL once it answers (with
    `wait_for_app`, once /healthz answers 200 through it)."""
    binary = nginx_binary()
    if binary is None:
        raise RuntimeError("nginx is not installed (apt-get install nginx)")
    config = nginx_config(folder, listen_port, sockets, rate_limit, read_timeout_s)
    command = [binary, "-p", str(folder), "-c", str(config), "-e", str(folder / "nginx-error.log")]
    check = subprocess.run([*command, "-t"], capture_output=True, text=True)
    if check.returncode != 0:
        raise RuntimeError(f"nginx -t failed: {check.stderr}")
    process = subprocess.Popen([*command, "-g", "daemon off;"])
    url = f"http://127.0.0.1:{listen_port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                status = httpx.get(f"{url}/healthz", timeout=2).status_code
                if status == 200 or not wait_for_app:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError((folder / "nginx-error.log").read_text())
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
