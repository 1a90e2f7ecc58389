# Two entry points for a fresh machine: `make run` (install + main job) and `make test` (install + tests).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# torch for the PPO agents: this pin takes the CPU wheel where pip finds one locally (as on our CI
# machines); elsewhere pass e.g. TORCH_INDEX=https://download.pytorch.org/whl/cpu for a CPU build.
TORCH ?= torch==2.13.0
TORCH_INDEX ?=

.PHONY: install run test test-slow lint bench

$(BIN)/truc: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q "$(TORCH)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(BIN)/pip install -q -e ".[test,ppo]"
	touch $@

install: $(BIN)/truc

run: install
	$(BIN)/truc arena --config configs/arena.yaml

test: install
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q

test-slow: install
	$(BIN)/python -m pytest -q -m slow

lint: install
	$(BIN)/ruff check .

bench: install
	$(BIN)/truc bench
