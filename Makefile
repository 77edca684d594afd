# The two commands of the course: `make lab` (or `make lab-zh`, the Chinese edition) and `make test`.
# Both create .venv/ on first use and reinstall only when pyproject.toml changes.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Set TORCH_INDEX to PyTorch's CPU wheel index to get CPU-only torch on Linux (see README).
TORCH_INDEX ?=
INDEX_ARGS := $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX))
STAMP := $(VENV)/.installed
PORT ?= 8888
PYTEST_ARGS ?=
# JupyterLab refuses to run as root unless told; containers often run as root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: lab lab-zh zh-check test check venv clean bench site slides

venv: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python 3.10 or newer is needed; found " + sys.version.split()[0])'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check $(INDEX_ARGS) -e '.[test,site]' 2>&1 \
	  | { grep -v 'is ignored: it is neither a file nor a directory' || true; }
	@touch $@

# JupyterLab's own settings come from jupyter/lab-en or jupyter/lab-zh (overrides.json: the interface language,
# no news prompt, no update check); the server is told not to fetch news or check for updates either.
LAB_ARGS := --ServerApp.ip=127.0.0.1 --port=$(PORT) --ServerApp.root_dir=notebooks \
  --LabApp.news_url=None --LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate $(ROOT_FLAG)

lab: $(STAMP)
	$(BIN)/jupyter lab $(LAB_ARGS) --LabApp.app_settings_dir=$(CURDIR)/jupyter/lab-en \
	  --LabApp.default_url=/lab/tree/01_introduction.ipynb

# The Chinese edition, with JupyterLab's interface in Chinese (jupyterlab-language-pack-zh-CN), whatever the OS
# locale. Its user settings and workspaces live in build/lab-zh/, so a choice made there stays there.
lab-zh: $(STAMP)
	$(BIN)/jupyter lab $(LAB_ARGS) --LabApp.app_settings_dir=$(CURDIR)/jupyter/lab-zh \
	  --LabApp.user_settings_dir=$(CURDIR)/build/lab-zh/user-settings \
	  --LabApp.workspaces_dir=$(CURDIR)/build/lab-zh/workspaces \
	  --LabApp.default_url=/lab/tree/zh/01_introduction.ipynb

# The Chinese edition's checks alone (make test runs them too, in tests/test_zh_edition.py): stale catalog entries,
# to-dos, regeneration, code cells, parity, bold, English left; each problem says what to do.
zh-check: $(STAMP)
	$(BIN)/python scripts/zh_edition.py check

# `make test` also checks every notebook as if on another CPU (scripts/cpu_variants.py: PyTorch's
# non-vectorised kernels, one thread, other MKL/oneDNN/OpenBLAS kernels). OTHER_CPU=0 skips that run.
OTHER_CPU ?= 1

# ruff runs first: a lint error fails in seconds, before the notebooks run.
LINT_PATHS := attnlib scripts tests notebooks hub

# Both pytest runs use JOBS workers (pytest-xdist; JOBS=1: one process). --dist loadfile keeps each test file
# on one worker: a notebook's cells share its kernel, a browser test module its JupyterLab or site.
JOBS ?= 2
XDIST := $(if $(filter-out 0 1,$(JOBS)),-n $(JOBS) --dist loadfile)
# scripts/nbcache.py keeps each notebook's nbval execution in build/nbcache/, keyed by everything that decides
# its outputs (the notebook, attnlib, the installed packages, the CPU and its settings): a notebook whose key
# matches is compared from the kept outputs, without a kernel. NBCACHE=0 executes every notebook.
# --nbcache-site: the first pass's kernels run as the site builder's (live panels as their static bundles, the same
# text/plain) and the site tests' build reads those executions: each notebook runs once for both.
NBVAL_RUN := PYTHONPATH=scripts $(BIN)/python -m pytest $(XDIST) -p nbcache -p testcache --nbval --nbcache-site \
  --nbval-sanitize-with tests/nbval_sanitize.cfg

test: $(STAMP)
	@echo "== ruff check $(LINT_PATHS) (configured in pyproject.toml) =="
	@$(BIN)/ruff check $(LINT_PATHS) || { echo "ruff found the problems above: fix them (many with '$(BIN)/ruff check --fix'), then run make test again"; exit 1; }
	status=0; \
	$(NBVAL_RUN) $(PYTEST_ARGS) || status=$$?; \
	if [ "$(OTHER_CPU)" != 0 ]; then \
	  echo "== The notebooks again, as on another CPU (an output that changes depends on the CPU) =="; \
	  $(BIN)/python scripts/nbval_other_cpu.py $(XDIST) $(PYTEST_ARGS) || status=$$?; \
	fi; \
	exit $$status

# The fast loop (issue 23): ruff, the unit tests (not the browser, hub or site-browser tests, not this file's
# command smoke test tests/test_commands.py, not tests/test_testcache.py's pytest runs), then strict nbval of only
# the notebooks whose inputs changed against main's merge-base, committed or not (scripts/changed_notebooks.py says
# which: any attnlib change means all).
# CHECK_BASE=<rev> compares with another commit; CHECK_NOTEBOOKS='a.ipynb b.ipynb' (or none) names them instead;
# CHECK_TESTS=<paths> runs other unit tests.
CHECK_BASE ?=
CHECK_TESTS ?= tests
CHECK_NOTEBOOKS ?=
CHECK_IGNORE := --ignore=tests/browser --ignore=tests/hub --ignore=tests/site_browser --ignore=tests/test_commands.py \
  --ignore=tests/test_testcache.py

check: $(STAMP)
	@echo "== ruff check $(LINT_PATHS) =="
	@$(BIN)/ruff check $(LINT_PATHS) || { echo "ruff found the problems above (many fix with '$(BIN)/ruff check --fix')"; exit 1; }
	@echo "== unit tests: $(CHECK_TESTS) (no browser, hub or site-browser tests) =="
	$(BIN)/python -m pytest -q -p no:cacheprovider $(XDIST) -m "not browser" $(CHECK_IGNORE) $(CHECK_TESTS)
	@notebooks='$(CHECK_NOTEBOOKS)'; \
	if [ -z "$$notebooks" ]; then \
	  notebooks=$$($(BIN)/python scripts/changed_notebooks.py $(if $(CHECK_BASE),--base '$(CHECK_BASE)')); fi; \
	if [ "$$notebooks" = none ]; then notebooks=; fi; \
	echo "== strict nbval of the notebooks whose inputs changed:" $${notebooks:-none} "=="; \
	if [ -n "$$notebooks" ]; then \
	  $(BIN)/python -m pytest -q -p no:cacheprovider $(XDIST) --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg $$notebooks; \
	fi

# Static edition (no kernel, no network): pages in build/site/ that link to the decks in build/slides/.
# NOTEBOOKS='notebooks/01_introduction.ipynb …' builds only those (and their Chinese twins); SITE_DIR and
# SLIDES_DIR choose the output folders.
NOTEBOOKS ?=
SITE_DIR ?= build/site
SLIDES_DIR ?= build/slides
site: $(STAMP)
	$(BIN)/python scripts/build_site.py --site $(SITE_DIR) --slides $(SLIDES_DIR) $(NOTEBOOKS)

# reveal.js decks for the classroom. Where /usr/bin/chromium exists, every slide is measured at 1280x720 and
# a slide that runs over continues on a new one.
slides: $(STAMP)
	$(BIN)/python scripts/build_site.py --slides $(SLIDES_DIR) $(NOTEBOOKS)

# The browser bench (key press on each notebook's main slider -> changed heatmap, in JupyterLab in Chromium)
# needs /usr/bin/chromium; without it that line says so and the target goes on. Every bench runs even when one
# misses a target (the exit status says one did). QUICK=1: a smoke run of each (seconds, numbers not meaningful).
QUICK ?=
BENCH_QUICK := $(if $(filter 1,$(QUICK)),--quick)
BROWSER_QUICK := $(if $(filter 1,$(QUICK)),--notebooks 01 --presses 2 --out build/browser/quick.json)
bench: $(STAMP)
	status=0; \
	$(BIN)/python -m attnlib.bench latency $(BENCH_QUICK) || status=$$?; \
	$(BIN)/python -m attnlib.bench complexity $(BENCH_QUICK) || status=$$?; \
	$(BIN)/python -m attnlib.bench browser $(BROWSER_QUICK) || test ! -x /usr/bin/chromium || status=$$?; \
	exit $$status

clean:
	rm -rf $(VENV) build
include hub/hub.mk
