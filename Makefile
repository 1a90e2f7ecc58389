# Two entry points for a fresh machine: `make run` (install + main job) and `make test` (install + tests).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# torch for the PPO agents. The pin takes the local CPU wheel where pip finds one (as on our CI machines);
# TORCH_INDEX=https://download.pytorch.org/whl/cpu takes it from PyTorch's CPU index instead. Where the
# pin cannot be installed at all, the newest CPU wheel of TORCH_CPU_INDEX is installed, so that
# `make install` works anywhere.
TORCH ?= torch==2.13.0
TORCH_INDEX ?=
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu

.PHONY: install run test test-slow lint bench bench-peers wheel browser

$(BIN)/truc: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q "$(TORCH)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) \
		|| $(BIN)/pip install -q torch --index-url $(TORCH_CPU_INDEX)
	$(BIN)/pip install -q -e ".[test,ppo,web]"
	touch $@

install: $(BIN)/truc

run: install
	$(BIN)/truc arena --config configs/arena/le_truc.yaml

# the web table's browser tests drive Debian's chromium (tests/test_web_browser.py): installed where we may
# (root with apt-get), else they are skipped; never a reason for `make test` to fail
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		{ DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 || \
		  { apt-get update -qq >/dev/null 2>&1 && \
		    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1; }; }; } || \
		echo "chromium could not be installed here: the browser tests will be skipped"

# the README's test command (fast suite: slow tests are excluded by pyproject's addopts); CI runs this target
test: install browser
	$(BIN)/ruff check . && $(BIN)/python -m pytest -q -n 2

test-slow: install
	$(BIN)/python -m pytest -q -m slow

lint: install
	$(BIN)/ruff check .

bench: install
	$(BIN)/truc bench

# the README's speed table: OpenSpiel, PettingZoo classic (rlcard) and pgx (JAX) beside Truc, per CPU-second
bench-peers: install
	$(BIN)/pip install -q -e ".[bench]"
	$(BIN)/truc bench --peers --seconds 3

wheel: install
	$(BIN)/python -m build --wheel --outdir dist .
