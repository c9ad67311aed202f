# Two commands do all set-up on a fresh machine with Python 3.11 and make: `make run`, `make test`.
# Python 3.11: python3.11 if it is on the PATH, else python3 (checked below).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
OUT    ?= out
# The BigQuery emulator for the tests, in a venv of its own (it wants pyarrow 26; we pin 25).
BQEMU  := .bqemu
# The package's bytecode, compiled where an editable install leaves the sources, as pip does for
# an installed wheel: Python only reads it. Where PYTHONDONTWRITEBYTECODE is set (CI images, this
# project's machines), every `mpg` command would otherwise compile its ~170 modules again, 0.07 s
# a start (docs/decisions.md, "Bytecode of an editable install"). A file edited later is compiled
# in memory at each start, as before, until `make bench` or a new environment compiles it again.
COMPILE = $(BIN)/python -m compileall -q mpg pipelines transforms sql schemas

.PHONY: run test test-fast test-installed bench lint sample clean chromium

$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null \
		|| { echo "error: Python 3.11 is needed; set PYTHON=/path/to/python3.11"; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]'
	$(COMPILE)
	touch $(STAMP)

$(BQEMU)/.installed: tests/support/bigquery/requirements.txt
	$(PYTHON) -m venv $(BQEMU)
	$(BQEMU)/bin/pip install --quiet -r tests/support/bigquery/requirements.txt
	touch $@

run: $(STAMP)
	$(BIN)/mpg run --traces data/sample_traces --out $(OUT)

# The report's browser test (tests/e2e/test_report_browser.py) drives Debian's chromium; a failed
# install stops `make test` here rather than letting the test fail later.
chromium:
	@command -v chromium >/dev/null || { \
		SUDO=$$(test "$$(id -u)" = 0 || echo sudo); \
		$$SUDO apt-get update && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }

# Two workers (the reference machine's cores), each taking whole test files so that a file's
# fleets are published once; the 15 slowest tests are printed so that their cost stays visible.
# Files go out in collection order, tests/e2e first (the longest files) and the unit tier's short
# ones last, to fill the end evenly; xdist's default hands out the files with the most tests
# first, which left a file of three long tests to start last, on one worker, 50 s after the other
# had finished.
WORKERS ?= 2
PYTEST  := $(BIN)/pytest -n $(WORKERS) --dist loadfile --no-loadscope-reorder --durations=15

test: $(STAMP) $(BQEMU)/.installed chromium
	$(BIN)/ruff check .
	$(PYTEST)

# The inner loop: the unit and pipeline tiers (tests/unit, tests/pipeline), under 90 seconds.
# The tier is the folder (tests/conftest.py); `make test` adds tests/e2e.
test-fast: $(STAMP)
	$(BIN)/ruff check .
	$(PYTEST) tests/unit tests/pipeline

# The installed-package tier (tests/installed): a wheel of this checkout in fresh virtual
# environments without extras, as users and Beam's workers install it (cached in .install-test/
# while the wheel is the same). Apart from make test: building the environments takes minutes.
test-installed: $(STAMP)
	$(BIN)/pytest tests/installed --durations=10

bench: $(STAMP)
	$(COMPILE)
	$(BIN)/python bench/run_bench.py

lint: $(STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

# Regenerates the committed sample fleet (deterministic: same seed, same bytes).
sample: $(STAMP)
	rm -rf data/sample_traces
	$(BIN)/mpg simulate --seed 7 --jobs 60 --days 3 --out data/sample_traces

clean:
	rm -rf $(VENV) $(BQEMU) $(OUT) .install-test .pytest_cache .ruff_cache
