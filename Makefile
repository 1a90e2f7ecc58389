# Two entry points for a fresh machine: `make run` (install + main job) and `make test` (install + tests).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install run test test-slow lint bench

$(BIN)/truc: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q -e ".[test]"
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
	$(BIN)/python benchmarks/engine.py
