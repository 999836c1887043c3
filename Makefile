# The two commands a newcomer needs (see README): `make train` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[train,eval,dev,web,fast,rllib,onnx,docs,examples,jax]"
	touch $@

.PHONY: setup demo test test-fast train speed lint golden docs docs-build
setup: $(VENV)/.installed

demo: setup
	$(PY) -m c8env.tools.demo --players 2 --rules standard --seed 7

test: setup
	$(PY) -m pytest -q -n 2

# The same without the tests marked slow (Ray, the browser, wheel builds, training runs): about a minute.
test-fast: setup
	$(PY) -m pytest -q -n 2 -m "not slow"

train: setup
	$(PY) -m training.train --config configs/train/default.yaml

speed: setup
	$(PY) -m c8env.tools.speed engine

lint: setup
	$(VENV)/bin/ruff check c8env training tests examples

golden: setup
	$(PY) tests/golden/generate.py

# The documentation site (mkdocs.yml): `make docs` builds it and serves it at http://127.0.0.1:8000/, rebuilding
# on every change; `make docs-build` builds it once into site/, strictly (a warning fails it), as the tests do.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve

docs-build: setup
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict
