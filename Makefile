# The README's two commands: `make run` (the web app) and `make test` (every check).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck pytest bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/streamlit run webapp/app.py --server.port 8501 --server.headless true --browser.gatherUsageStats false

test: $(STAMP) lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check model proofs webapp fencing lab tests bench
	$(BIN)/ruff format --check model proofs webapp fencing lab tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
