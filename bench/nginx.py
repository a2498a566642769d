"""deploy/nginx.conf run by an unprivileged-style nginx on loopback, for the proxy test
(tests/test_hardening_proxy.py) and the load test (bench/load.py --behind-nginx).

Only the listen port, the upstream port and the root change; a minimal main configuration
around it keeps every file nginx writes (pid, logs, temp files) in one folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
NGINX_CONF = ROOT / "deploy" / "nginx.conf"
RATE_LIMIT_LINE = "        limit_req zone=papertrace_api burst=40 nodelay;\n"


def nginx_binary() -> str | None:
    found = shutil.which("nginx")
    if found is None and Path("/usr/sbin/nginx").exists():
        found = "/usr/sbin/nginx"
    return found


def nginx_config(folder: Path, listen_port: int, app_port: int, rate_limit: bool = True) -> Path:
    """The main configuration file, written into `folder`. `rate_limit=False` drops the
    per-address limit: a load test's simulated readers all share 127.0.0.1."""
    site = NGINX_CONF.read_text()
    replacements = [
        ("listen 80;", f"listen 127.0.0.1:{listen_port};"),
        ("server 127.0.0.1:8000 ", f"server 127.0.0.1:{app_port} "),
        ("root /srv/papertrace;", f"root {ROOT};"),
    ]
    if not rate_limit:
        replacements.append((RATE_LIMIT_LINE, ""))
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
    folder: Path, listen_port: int, app_port: int, rate_limit: bool = True
) -> Iterator[str]:
    """nginx in the foreground until the block ends; yields its URL once /healthz answers."""
    binary = nginx_binary()
    if binary is None:
        raise RuntimeError("nginx is not installed (apt-get install nginx)")
    config = nginx_config(folder, listen_port, app_port, rate_limit)
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
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
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
