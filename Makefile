# Two commands matter (see README): `make book` builds the book, `make test` runs every test.
# Both create .venv and install everything they need: pyproject.toml's pinned dependency groups
# (book + test = dev), hwlib itself editable with its grading extra, and package.json.
# `make release` runs the release workflow's steps (.github/workflows/release.yml) locally.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: book test venv vendor clean pdf unit lint timing edition dist autograders release lab

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q -U "pip>=25.1"      # --group (PEP 735 dependency groups) needs pip 25.1
	$(BIN)/pip install -q --group dev -e ".[grading]"
	touch $(STAMP)

venv: $(STAMP)

# MathJax (and other browser assets) come from the npm registry, never from a CDN at read time.
vendor: package.json package-lock.json
	npm ci --silent --no-audit --no-fund
	$(BIN)/python tools/vendor_assets.py

# Strict build: warnings are errors, every notebook executed, a cell error fails the build.
# HWLIB_EDITION=course make book: the course edition (tools/course_edition.py), staged in _build/course
# without solution notebooks, exercise sources, hidden checks or the worked answers of exercises;
# its pages land in _build/course/_build/html.
book: venv vendor
	rm -rf _build/html _build/jupyter_execute _build/.doctrees
ifeq ($(HWLIB_EDITION),course)
	$(BIN)/python tools/course_edition.py --out _build/course
	$(BIN)/jupyter-book build _build/course -W -n --keep-going
else
	$(BIN)/jupyter-book build . -W -n --keep-going
endif

# The whole book as one PDF: Debian's Chromium prints the single-page HTML (no LaTeX, nothing
# downloaded), built from the pages `make book` executed; the PDF is copied into _build/html,
# where the book's PDF button points (tools/build_pdf.py).
pdf: book
	rm -rf _build/singlehtml
	$(BIN)/jupyter-book build . --builder singlehtml -n --keep-going   # strictness: the html build above
	$(BIN)/python tools/build_pdf.py

# Tests run in parallel (pytest-xdist): one worker per CPU this process may use (set
# PYTEST_XDIST_AUTO_NUM_WORKERS to change it); each file on one worker, so a module fixture is built
# once (tests/conftest.py). Markers: `book` needs the built book, `slow` builds environments or runs
# notebooks in fresh kernels, `timing` depends on the machine's speed (left out everywhere but `make timing`).
XDIST := -n auto --dist loadfile
# The suite starts hundreds of Pythons (the CLI, graders, kernels): with PYTHONDONTWRITEBYTECODE set each
# compiles hwlib and pytest rewrites every test file again (make unit: 133 s of CPU with it set, 106 s without once bytecode exists).
test unit timing: export PYTHONDONTWRITEBYTECODE :=
# A recipe line naming $(MAKE) runs even under `make -n`; the tests run `make -n`, so test's recipe uses this.
SUBMAKE = $(MAKE) --no-print-directory

# Without Debian's Chromium the PDF is skipped here (and the browser tests skip and say why). The tests
# that need no book run while the book and PDF build (log: _build/pdf.log), then the ones that do.
test: export HWLIB_PDF_OPTIONAL := 1
test: lint venv vendor
	@mkdir -p _build
	@$(SUBMAKE) pdf > _build/pdf.log 2>&1 & built=$$!; \
	$(BIN)/python -m pytest -q $(XDIST) -m "not book and not timing"; first=$$?; \
	if ! wait $$built; then tail -n 80 _build/pdf.log; echo "make test: the book or PDF build failed (_build/pdf.log)"; exit 2; fi; \
	echo "make test: book and PDF built; the tests that need them:"; \
	$(BIN)/python -m pytest -q $(XDIST) -m "book and not timing"; second=$$?; \
	exit $$(( first > second ? first : second ))

# The fast loop for contributors: every test that needs no built book and builds no environment
# (markers `book` and `slow` left out; `make test` runs those too and is what must pass before a push).
unit: venv
	$(BIN)/python -m pytest -q -x -p no:cacheprovider $(XDIST) -m "not book and not slow and not timing"

# Lint and format check (ruff, pinned in pyproject's test group); `make test` runs it first, the
# check that every file derived from _config.yml and hwlib.__version__ is current (tools/edition.py),
# the type check of the formula modules (mypy; [tool.mypy] in pyproject lists them) and hwlib's
# declared layers (import-linter; [tool.importlinter] in pyproject). The same
# commands run before each commit with `.venv/bin/pre-commit install` (.pre-commit-config.yaml).
lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python tools/edition.py --check
	$(BIN)/mypy
	$(BIN)/lint-imports

# Rewrite what is derived from _config.yml (repository.url, html.baseurl) and the version: install
# cells, the intro's clone command, CITATION.cff, pyproject's URLs. Then `python tools/make_colab.py`.
edition: venv
	$(BIN)/python tools/edition.py

# --- release (the steps .github/workflows/release.yml runs; `make release` runs them here) ----------
DIST := _build/dist
RELEASE := _build/release

# sdist + wheel, checked with twine (metadata and README render).
dist: venv
	rm -rf $(DIST)
	$(BIN)/python -m build --sdist --wheel --outdir $(DIST) .
	$(BIN)/twine check --strict $(DIST)/*

# One Gradescope autograder zip per exercise, holding the wheel above (public checks only: an
# instructor adds hidden ones with `hwlib grade-package EX --checks DIR`).
autograders: dist
	rm -rf $(RELEASE)
	$(BIN)/python tools/release.py autograders --wheel-dir $(DIST) --out $(RELEASE)

# Everything a release attaches: wheel, sdist, the PDF, the autograder zips, and the site.
release: pdf autograders
	$(BIN)/python tools/release.py collect --dist $(DIST) --out $(RELEASE)

# Run the notebooks locally in JupyterLab (the pinned `lab` group).
lab: venv
	$(BIN)/pip install -q --group lab
	$(BIN)/jupyter lab chapters/

# Tests that depend on this machine's speed (marker `timing`), left out of the default suite.
timing: book
	$(BIN)/python -m pytest -q -m timing

clean:
	rm -rf _build
