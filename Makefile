# The README's two commands: `make run` (the web app) and `make test` (every check).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run serve-class test check system-packages lint typecheck pytest bench bench-class golden mutation clean

$(STAMP): pyproject.toml
	@echo "Setting up $(VENV): the Python packages Fencing Lab needs (a few minutes the first time)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --progress-bar on -e '.[dev]'
	touch $(STAMP)

PORT ?= 8501
ADDRESS ?= 0.0.0.0
WORKERS ?=

# One server process on this machine only (the served settings are in fencing/hall.py).
run: $(STAMP)
	@echo "Starting the web app: it prints the address to open once it is up (Ctrl-C stops it)"
	$(BIN)/python -m fencing.serve --address localhost --port $(PORT)

# For a class on a network: listen on every interface (ADDRESS=…, PORT=… to change).
# WORKERS=N: N server processes behind HAProxy, classes in PostgreSQL (docs/classes.md).
serve-class: $(STAMP) $(if $(WORKERS),system-packages)
	$(BIN)/python -m fencing.serve --address $(ADDRESS) --port $(PORT) $(if $(WORKERS),--workers $(WORKERS))

test: $(STAMP) system-packages lint typecheck pytest

# The inner loop: lint, types, and the model's and checker's quick tests (no services, no
# browser, nothing marked slow).
check: $(STAMP) lint typecheck
	$(BIN)/pytest -n auto -m "not slow and not browser and not realtime" --ignore=tests/lab --ignore=tests/app --ignore=tests/browser

# The Debian programs the real-part tests start (browser, spin, ZooKeeper, Redis, PostgreSQL,
# libfaketime, HAProxy), installed when missing and the machine allows it.
system-packages:
	.ci/system-packages

lint: $(STAMP)
	$(BIN)/ruff check model advise classroom proofs webapp fencing lab tests bench
	$(BIN)/ruff format --check model advise classroom proofs webapp fencing lab tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

# Every test: those on CPU in parallel, then the real-time runs of the live lab one at a time
# (a lease or a pause judged by the clock must not share a core with a model check).
pytest: $(STAMP)
	$(BIN)/pytest -n auto -m "not realtime"
	$(BIN)/pytest -m realtime

bench: $(STAMP)
	$(BIN)/python bench/run.py

# The recorded figures (docs/golden.json) and the docs tables made from them.
golden: $(STAMP)
	$(BIN)/python -m fencing.golden

# Only the class benchmark: SESSIONS students against the real server (default 30);
# WORKERS=N serves them with N processes behind the proxy, as `make serve-class WORKERS=N`.
SESSIONS ?= 30
bench-class: $(STAMP) $(if $(WORKERS),system-packages)
	$(BIN)/python bench/bench_class.py --sessions $(SESSIONS) $(if $(WORKERS),--workers $(WORKERS))

# Mutation testing of the model and the prover (long: not part of `make test`).
# MUTANTS narrows it to some modules, e.g. MUTANTS='model.rules.* model.terms.*'.
MUTANTS ?=
mutation: $(STAMP)
	$(BIN)/pip install --quiet mutmut
	rm -rf mutants
	$(BIN)/mutmut run --max-children 2 $(MUTANTS)
	$(BIN)/mutmut results

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache mutants
