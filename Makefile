# Two commands do all the set-up on a fresh Debian/Ubuntu machine with Python >= 3.11:
#   make run   — environment + runtime dependencies, then serve http://127.0.0.1:8000
#   make test  — environment + test dependencies + Debian Chromium and nginx, then every test
# Stamp files in .venv skip reinstalls until pyproject.toml changes.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
TORCH := torch==2.13.0
HOST ?= 127.0.0.1
PORT ?= 8000
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

.PHONY: run serve deploy test lint bench mutate chromium nginx

run: $(VENV)/.runtime-installed
	$(PY) -m app.serve --host $(HOST) --port $(PORT)

# Behind nginx (README "Deploying"; deploy/papertrace@.service does the same under systemd):
# instance INSTANCE of deploy/nginx.conf's upstream, on its socket in SOCKET_DIR, with WORKERS
# workers and its metrics on 127.0.0.1:946<INSTANCE>. Run it as the app's user, e.g.
#   sudo -u papertrace make serve INSTANCE=2
SOCKET_DIR ?= /run/papertrace
INSTANCE ?= 1
WORKERS ?= 1
serve: $(VENV)/.runtime-installed
	$(PY) -m app.serve --uds $(SOCKET_DIR)/app-$(INSTANCE).sock --workers $(WORKERS) \
		--metrics-port 946$(INSTANCE) --metrics-dir $(SOCKET_DIR)/metrics-$(INSTANCE)

# deploy/nginx.conf as /etc/nginx/conf.d/papertrace.conf, serving static/ from this checkout;
# checked (nginx -t) before nginx reloads it.
NGINX_SITE ?= /etc/nginx/conf.d/papertrace.conf
deploy: nginx
	sed 's|root /srv/papertrace;|root $(CURDIR);|' deploy/nginx.conf | $(SUDO) tee $(NGINX_SITE) > /dev/null
	$(SUDO) nginx -t
	$(SUDO) systemctl reload nginx || $(SUDO) nginx -s reload

# Three pytest-xdist workers on this 2-core machine: a third of the suite's time is browser
# tests waiting on Chromium and the live server, so a third worker fills the cores while the
# others wait (measured: 1,661 tests 8 min 49 s with two workers, the CPU busy half the time).
# TEST_WORKERS=0 runs in one process. Each test file runs whole on one worker, so module
# fixtures (an app, nginx, a live server) are made once; each worker loads the shipped models
# once (tests/conftest.py), and the slowest files start first (tests/conftest.py).
# Bytecode is written even where PYTHONDONTWRITEBYTECODE is set (this machine sets it): pytest
# rewrites the asserts of its plugins' 350 modules (schemathesis, hypothesis, anyio) in each
# process that loads them and keeps the result only as bytecode. The main process writes it
# before its workers start, so they, and the servers tests start, read it (35 s of CPU a run).
TEST_WORKERS ?= 3
test: $(VENV)/.dev-installed chromium nginx
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

lint: $(VENV)/.dev-installed
	$(VENV)/bin/ruff check app models tests bench tools
	$(VENV)/bin/ruff format --check app models tests bench tools

bench: $(VENV)/.runtime-installed
	$(PY) bench/render.py

# Mutation testing with mutmut, not part of `make test` or CI (hours on 2 cores). Survivors go to
# build/mutmut/<target>/survivors.md. One module:  make mutate TARGETS=hull BUDGET_S=900
TARGETS ?=
BUDGET_S ?= 3600
mutate: $(VENV)/.dev-installed
	$(PY) tools/mutate.py $(TARGETS) --budget-s $(BUDGET_S)

$(PY):
	$(PYTHON) -m venv $(VENV)

# torch first, pinned, so the resolver never picks another build for the rest.
$(VENV)/.runtime-installed: pyproject.toml | $(PY)
	$(PIP) install "$(TORCH)"
	$(PIP) install -e .
	touch $@

$(VENV)/.dev-installed: pyproject.toml | $(PY)
	$(PIP) install "$(TORCH)"
	$(PIP) install -e ".[dev]"
	touch $@ $(VENV)/.runtime-installed

# The browser tests drive Debian's Chromium; Playwright never downloads a browser of its own.
chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
		$(SUDO) apt-get update && $(SUDO) apt-get install -y chromium; \
	fi

# tests/test_hardening_proxy.py runs the app behind Debian's nginx with deploy/nginx.conf.
nginx:
	@if [ ! -x /usr/sbin/nginx ]; then \
		$(SUDO) apt-get update && $(SUDO) apt-get install -y nginx; \
	fi
