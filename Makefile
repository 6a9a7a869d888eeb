# The README's two commands: `make run` (the web app) and `make test` (every check).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run serve-class test system-packages lint typecheck pytest bench bench-class golden mutation clean

$(STAMP): pyproject.toml
	@echo "Setting up $(VENV): the Python packages Fencing Lab needs (a few minutes the first time)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --progress-bar on -e '.[dev]'
	touch $(STAMP)

PORT ?= 8501
ADDRESS ?= 0.0.0.0

SERVER_FLAGS := --server.headless true --browser.gatherUsageStats false --server.fileWatcherType none --runner.postScriptGC false

run: $(STAMP)
	@echo "Starting the web app: it prints the address to open once it is up (Ctrl-C stops it)"
	$(BIN)/streamlit run webapp/app.py --server.address localhost --server.port $(PORT) $(SERVER_FLAGS)

# For a class on a network: listen on every interface (ADDRESS=…, PORT=… to change).
serve-class: $(STAMP)
	$(BIN)/streamlit run webapp/app.py --server.address $(ADDRESS) --server.port $(PORT) $(SERVER_FLAGS)

test: $(STAMP) system-packages lint typecheck pytest

# The Debian programs the real-part tests start (browser, spin, ZooKeeper, Redis, PostgreSQL,
# libfaketime), installed when missing and the machine allows it.
system-packages:
	.ci/system-packages

lint: $(STAMP)
	$(BIN)/ruff check model advise classroom proofs webapp fencing lab tests bench
	$(BIN)/ruff format --check model advise classroom proofs webapp fencing lab tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python bench/run.py

# The recorded figures (docs/golden.json) and the docs tables made from them.
golden: $(STAMP)
	$(BIN)/python -m fencing.golden

# Only the class benchmark: SESSIONS students at once against the real server (default 30).
SESSIONS ?= 30
bench-class: $(STAMP)
	$(BIN)/python bench/bench_class.py --sessions $(SESSIONS)

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
